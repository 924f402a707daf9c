//! A real browser for the console's end-to-end tests: headless Chromium
//! driven over WebDriver (`chromedriver`, Debian's `chromium-driver`,
//! installed by `make e2e-tools`) with `fantoccini`.
//!
//! [`Browser`] is synchronous like the rest of the harness: it owns a small
//! runtime and blocks on each WebDriver command. It starts its own
//! chromedriver on a free port of 127.0.0.1 and one session, reads the
//! page's console log (every `SEVERE` entry: script errors, failed loads,
//! Content-Security-Policy violations), and writes screenshots under
//! `target/console-screenshots/`. The session and the driver end when it is
//! dropped.

use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use super::{Answer, Server, exchange_full, repo};

/// The WebDriver server (Debian `chromium-driver`).
const CHROMEDRIVER: &str = "chromedriver";
/// The browser (Debian `chromium`).
const CHROMIUM: &str = "/usr/bin/chromium";
/// How to get both.
const INSTALL: &str = "run `make e2e-tools` (it installs chromium and chromium-driver)";
/// Headless, as root in a container (no sandbox, no GPU, a small /dev/shm),
/// at a desktop size until a screenshot asks for another.
const CHROMIUM_ARGS: [&str; 5] = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
];
/// The height of the window between screenshots.
const WINDOW_HEIGHT: u32 = 900;
/// The tallest screenshot: a page longer than this is cut (no console
/// page comes near it; a runaway one should not fill the disk).
const MAX_SHOT_HEIGHT: u32 = 8000;
/// How long chromedriver may take to answer `/status`, and a page or an
/// element to appear: generous for a loaded two-core CI machine.
const PATIENCE: Duration = Duration::from_secs(20);

/// One headless Chromium session and the chromedriver serving it.
pub struct Browser {
    client: Option<Client>,
    driver: Child,
    /// The chromedriver's port on 127.0.0.1.
    port: u16,
    session: String,
    /// The console's base, `http://127.0.0.1:PORT` of the server last visited.
    base: String,
    rt: tokio::runtime::Runtime,
}

impl Browser {
    /// Starts chromedriver and a session. Panics naming how to install
    /// them when they are missing.
    pub fn start() -> Browser {
        let port = free_port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {CHROMEDRIVER}: {e}; {INSTALL}"));
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let mut browser = Browser {
            client: None,
            driver,
            port,
            session: String::new(),
            base: String::new(),
            rt,
        };
        browser.wait_for_driver();
        let client = browser.block(connect(&format!("http://127.0.0.1:{port}")));
        browser.session = browser
            .block(client.session_id())
            .expect("the session id")
            .expect("a session");
        browser.client = Some(client);
        browser
    }

    /// Polls chromedriver's `/status` until it is ready.
    fn wait_for_driver(&mut self) {
        let started = Instant::now();
        loop {
            if let Ok((200, status)) = driver_request(self.port, "GET", "/status", "")
                && status["value"]["ready"] == json!(true)
            {
                return;
            }
            if let Ok(Some(status)) = self.driver.try_wait() {
                panic!("{CHROMEDRIVER} exited at start: {status}");
            }
            assert!(
                started.elapsed() < PATIENCE,
                "{CHROMEDRIVER} not ready after {PATIENCE:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn block<T>(&self, f: impl Future<Output = T>) -> T {
        self.rt.block_on(f)
    }

    fn client(&self) -> &Client {
        self.client.as_ref().expect("the session is open")
    }

    /// Signs `user` in through the real sign-in form: `/admin` sends the
    /// browser to `/oauth/signin?return_to=%2Fadmin`, which returns it to
    /// the inbox once the form is sent.
    pub fn sign_in(&mut self, server: &Server, user: &str, password: &str) {
        self.goto(server, "/admin");
        assert_eq!(
            self.path(),
            "/oauth/signin?return_to=%2Fadmin",
            "/admin sends a stranger to sign in"
        );
        self.fill("input[name=username]", user);
        self.fill("input[name=password]", password);
        self.click("form button[type=submit]");
        self.wait_for_path("/admin");
        let signed_in = self.find_text("header .who");
        assert!(
            signed_in.starts_with(user),
            "signed in as {user}, the header says {signed_in:?}"
        );
    }

    /// Signs out with the console's own button; the browser lands on
    /// the sign-in page.
    pub fn sign_out(&mut self) {
        self.click("form.signout button[type=submit]");
        self.wait_for(
            |b| b.path().starts_with("/oauth/signin"),
            "the sign-in page",
        );
    }

    /// Opens `path` of `server` (and waits for it to load).
    pub fn goto(&mut self, server: &Server, path: &str) {
        self.base = server.url.trim_end_matches("/mcp").to_owned();
        let url = format!("{}{path}", self.base);
        self.block(self.client().goto(&url))
            .unwrap_or_else(|e| panic!("open {url}: {e}"));
    }

    /// The path and query of the page shown.
    pub fn path(&self) -> String {
        let url = self
            .block(self.client().current_url())
            .expect("the current URL");
        match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        }
    }

    /// Waits until the page shown is `path` (with its query).
    pub fn wait_for_path(&self, path: &str) {
        self.wait_for(|b| b.path() == path, path);
    }

    /// Polls `ready` until it holds, for at most [`PATIENCE`].
    pub fn wait_for(&self, mut ready: impl FnMut(&Browser) -> bool, what: &str) {
        let started = Instant::now();
        while !ready(self) {
            assert!(
                started.elapsed() < PATIENCE,
                "waited {PATIENCE:?} for {what}; at {}:\n{}",
                self.path(),
                self.text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The page's visible text (`document.body.innerText`).
    pub fn text(&self) -> String {
        self.execute("return document.body ? document.body.innerText : ''")
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The visible text of the first element matching `css`.
    pub fn find_text(&self, css: &str) -> String {
        let found = self.find(css);
        self.block(found.text())
            .unwrap_or_else(|e| panic!("the text of {css}: {e}"))
    }

    /// How many elements match `css`.
    pub fn count(&self, css: &str) -> usize {
        self.block(self.client().find_all(Locator::Css(css)))
            .unwrap_or_else(|e| panic!("find {css}: {e}"))
            .len()
    }

    /// Types `text` into the (first) field matching `css`.
    pub fn fill(&self, css: &str, text: &str) {
        let field = self.find(css);
        self.block(field.send_keys(text))
            .unwrap_or_else(|e| panic!("type into {css}: {e}"));
    }

    /// Chooses the option labelled `label` in the (first) `<select>`
    /// matching `css`, as a person clicking it would.
    pub fn select(&self, css: &str, label: &str) {
        let field = self.find(css);
        self.block(field.select_by_label(label))
            .unwrap_or_else(|e| panic!("choose {label:?} in {css}: {e}"));
    }

    /// The visible text of every element matching `css`, in page order.
    pub fn texts(&self, css: &str) -> Vec<String> {
        let found = self
            .block(self.client().find_all(Locator::Css(css)))
            .unwrap_or_else(|e| panic!("find {css}: {e}"));
        found
            .iter()
            .map(|e| {
                self.block(e.text())
                    .unwrap_or_else(|e| panic!("the text of {css}: {e}"))
            })
            .collect()
    }

    /// Clicks the (first) element matching `css`.
    pub fn click(&self, css: &str) {
        let target = self.find(css);
        self.block(target.click())
            .unwrap_or_else(|e| panic!("click {css}: {e}"));
    }

    fn find(&self, css: &str) -> fantoccini::elements::Element {
        let wait = self.client().wait().at_most(PATIENCE);
        self.block(wait.for_element(Locator::Css(css)))
            .unwrap_or_else(|e| panic!("no {css} at {}: {e}\n{}", self.path(), self.text()))
    }

    /// Runs `script` (a function body; `return` its value) in the page.
    pub fn execute(&self, script: &str) -> Value {
        self.block(self.client().execute(script, Vec::new()))
            .unwrap_or_else(|e| panic!("execute {script}: {e}"))
    }

    /// The browser log's `SEVERE` entries since the last call (the log is
    /// read once): uncaught script errors, resources that failed to load
    /// (the console serves its own icon, so not even `/favicon.ico`),
    /// Content-Security-Policy violations. Each as `source: message`.
    pub fn console_errors(&self) -> Vec<String> {
        let path = format!("/session/{}/se/log", self.session);
        let body = json!({"type": "browser"}).to_string();
        let (status, log) = driver_request(self.port, "POST", &path, &body)
            .unwrap_or_else(|e| panic!("the browser log: {e}"));
        assert_eq!(status, 200, "the browser log: {log}");
        log["value"]
            .as_array()
            .unwrap_or_else(|| panic!("no entries in the browser log: {log}"))
            .iter()
            .filter(|entry| entry["level"] == "SEVERE")
            .map(|entry| {
                format!(
                    "{}: {}",
                    entry["source"].as_str().unwrap_or("?"),
                    entry["message"].as_str().unwrap_or("?")
                )
            })
            .collect()
    }

    /// `path` of the page's server fetched with this browser's cookies,
    /// outside the browser: for what a page cannot show (its status).
    pub fn fetch(&self, path: &str) -> Answer {
        let cookies = self
            .block(self.client().get_all_cookies())
            .expect("the page's cookies");
        let cookie = cookies
            .iter()
            .map(|c| format!("{}={}", c.name(), c.value()))
            .collect::<Vec<_>>()
            .join("; ");
        exchange_full(&self.base, "GET", path, &[("Cookie", &cookie)], "")
    }

    /// A PNG of the page shown, `width` CSS pixels wide and as tall as the
    /// page (up to [`MAX_SHOT_HEIGHT`]), written to
    /// `target/console-screenshots/<name>-<width>.png`; its path. The
    /// window keeps `width` afterwards (at its usual height).
    pub fn screenshot(&self, name: &str, width: u32) -> PathBuf {
        let client = self.client();
        self.block(client.set_window_size(width, WINDOW_HEIGHT))
            .expect("resize the window");
        // [viewport width, what the window adds to the viewport's height, page height]
        let sizes = self.execute(
            "return [window.innerWidth, window.outerHeight - window.innerHeight, \
             document.documentElement.scrollHeight]",
        );
        let size = |i: usize| {
            sizes[i]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or_else(|| panic!("window sizes: {sizes}"))
        };
        assert_eq!(size(0), width, "the page is laid out {width} px wide");
        // Headless Chromium's window still has a frame above the page.
        let page = size(2).min(MAX_SHOT_HEIGHT);
        self.block(client.set_window_size(width, page + size(1)))
            .expect("resize the window to the page");
        let png = self.block(client.screenshot()).expect("a screenshot");
        self.block(client.set_window_size(width, WINDOW_HEIGHT))
            .expect("resize the window back");
        let path = shots_dir().join(format!("{name}-{width}.png"));
        std::fs::write(&path, &png).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            // Closing the session ends Chromium; the driver goes next.
            let close = async { tokio::time::timeout(PATIENCE, client.close()).await };
            let _ = self.rt.block_on(close);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// A session of the chromedriver at `url`: headless Chromium with its
/// browser log kept at every level.
async fn connect(url: &str) -> Client {
    let capabilities = json!({
        "browserName": "chrome",
        "goog:chromeOptions": {"binary": CHROMIUM, "args": CHROMIUM_ARGS},
        "goog:loggingPrefs": {"browser": "ALL"},
    })
    .as_object()
    .expect("capabilities are an object")
    .clone();
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(url)
        .await
        .unwrap_or_else(|e| panic!("a Chromium session at {url}: {e}; {INSTALL}"))
}

/// One exchange with the chromedriver on `port`: its status and JSON.
/// (chromedriver keeps connections open, so the body is read by its
/// `Content-Length`, not to the end.)
fn driver_request(port: u16, method: &str, path: &str, body: &str) -> Result<(u16, Value), String> {
    let mut stream =
        TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    stream
        .set_read_timeout(Some(PATIENCE))
        .map_err(|e| e.to_string())?;
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("write: {e}"))?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .map_err(|e| format!("read: {e}"))?;
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status line: {line:?}"))?;
    let mut length = 0;
    loop {
        line.clear();
        reader
            .read_line(&mut line)
            .map_err(|e| format!("read: {e}"))?;
        let Some((name, value)) = line.trim_end().split_once(':') else {
            break;
        };
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse().map_err(|e| format!("{line:?}: {e}"))?;
        }
    }
    let mut answer = vec![0; length];
    reader
        .read_exact(&mut answer)
        .map_err(|e| format!("read the body: {e}"))?;
    let json = serde_json::from_slice(&answer)
        .map_err(|e| format!("not JSON ({e}): {}", String::from_utf8_lossy(&answer)))?;
    Ok((status, json))
}

/// A port of 127.0.0.1 free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// `target/console-screenshots/`, made if missing.
pub fn shots_dir() -> PathBuf {
    let dir = repo().join("target/console-screenshots");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    dir
}
