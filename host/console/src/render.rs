//! Templates and the headers every console page carries.
//!
//! The templates are compiled into the binary and rendered by minijinja
//! with HTML auto-escaping: every value from a plugin, a tool argument or a
//! person is text on the page. The pages load one stylesheet and one small
//! script from `/admin/static/`, so the Content-Security-Policy allows no
//! inline script or style at all.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use minijinja::value::Serde;
use minijinja::{Environment, Error, ErrorKind, Value};
use serde::Serialize;

/// The policy of every console page: nothing but this origin's stylesheet,
/// script and forms; never framed.
pub const CSP: &str = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; \
                       form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The templates, by name.
const TEMPLATES: [(&str, &str); 17] = [
    ("layout.html", include_str!("../templates/layout.html")),
    ("macros.html", include_str!("../templates/macros.html")),
    ("error.html", include_str!("../templates/error.html")),
    ("inbox.html", include_str!("../templates/inbox.html")),
    (
        "approvals.html",
        include_str!("../templates/approvals.html"),
    ),
    (
        "checkpoints.html",
        include_str!("../templates/checkpoints.html"),
    ),
    ("reviews.html", include_str!("../templates/reviews.html")),
    ("catalog.html", include_str!("../templates/catalog.html")),
    ("runs.html", include_str!("../templates/runs.html")),
    (
        "authoring.html",
        include_str!("../templates/authoring.html"),
    ),
    ("people.html", include_str!("../templates/people.html")),
    ("clients.html", include_str!("../templates/clients.html")),
    ("audit.html", include_str!("../templates/audit.html")),
    ("tenants.html", include_str!("../templates/tenants.html")),
    ("toolsets.html", include_str!("../templates/toolsets.html")),
    (
        "connections.html",
        include_str!("../templates/connections.html"),
    ),
    ("connect.html", include_str!("../templates/connect.html")),
];

/// The console's templates, parsed once.
pub struct Templates {
    env: Environment<'static>,
}

impl Templates {
    /// Parses every template; a template that does not parse is a bug of
    /// this crate (the unit tests render each one).
    pub fn new() -> Result<Self, Error> {
        let mut env = Environment::new();
        // `.html` templates escape for HTML (minijinja's default, stated).
        env.set_auto_escape_callback(minijinja::default_auto_escape_callback);
        env.add_filter("when", when);
        for (name, source) in TEMPLATES {
            env.add_template(name, source)?;
        }
        Ok(Self { env })
    }

    /// `name` rendered with `context`.
    pub fn render(&self, name: &str, context: &impl Serialize) -> Result<String, Error> {
        self.env
            .get_template(name)?
            .render(Value::from(Serde(context)))
    }
}

/// `when`: a time as RFC 3339 UTC (seconds), from RFC 3339 text or unix
/// milliseconds. The page's script shows it in the viewer's zone; without
/// the script it reads as UTC.
fn when(value: Value) -> Result<String, Error> {
    if let Some(ms) = value.as_i64() {
        let ms = u64::try_from(ms).unwrap_or(0);
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
        return Ok(humantime::format_rfc3339_seconds(at).to_string());
    }
    match value.as_str() {
        Some(s) => match humantime::parse_rfc3339_weak(s) {
            Ok(at) => Ok(humantime::format_rfc3339_seconds(at).to_string()),
            Err(_) => Ok(s.to_owned()),
        },
        None if value.is_none() || value.is_undefined() => Ok(String::new()),
        None => Err(Error::new(
            ErrorKind::InvalidOperation,
            "`when` takes RFC 3339 text or unix milliseconds",
        )),
    }
}

/// `body` as a page with the console's headers: never cached, never
/// framed, no inline script, no referrer.
pub fn page(status: StatusCode, body: String) -> Response {
    secured((status, Html(body)).into_response())
}

/// `r` with the console's security headers.
pub fn secured(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// A redirect to `location` (a path of this host).
pub fn see_other(location: &str) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    secured(r)
}

/// The stylesheet and the script, served from the binary.
pub mod assets {
    use axum::http::{HeaderValue, header};
    use axum::response::{IntoResponse, Response};

    /// `/admin/static/console.css`.
    pub async fn stylesheet() -> Response {
        asset(
            "text/css; charset=utf-8",
            include_str!("../assets/console.css"),
        )
    }

    /// `/admin/static/console.js`.
    pub async fn script() -> Response {
        asset(
            "text/javascript; charset=utf-8",
            include_str!("../assets/console.js"),
        )
    }

    /// `/admin/static/favicon.svg` (without it a browser asks for
    /// `/favicon.ico`, which the host does not serve).
    pub async fn icon() -> Response {
        asset("image/svg+xml", include_str!("../assets/favicon.svg"))
    }

    fn asset(kind: &'static str, body: &'static str) -> Response {
        let mut r = (
            [(header::CONTENT_TYPE, HeaderValue::from_static(kind))],
            body,
        )
            .into_response();
        let h = r.headers_mut();
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=300"),
        );
        h.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        r
    }
}
