//! The MCP conformance suite (`@modelcontextprotocol/conformance server`)
//! against the real `toolhost serve` with the conformance profile
//! (plugins/conformance) pinned, once per protocol era:
//!
//! * `--spec-version 2025-11-25`: the initialize handshake and sessions;
//! * `--spec-version 2026-07-28`: stateless requests with per-request `_meta`.
//!
//! Each run is `--suite all` (pending scenarios included: the host may pass
//! what the suite's own fixture cannot). Every scenario, and every check,
//! must pass except those in [`EXPECTED_FAILURES`], each of which names the
//! host feature it waits for. An expected failure that passes fails the test
//! too, so the list never goes stale: remove the entry when the feature lands.
//!
//! The Tasks extension's scenarios (`tasks-*`, SEP-2663) are dropped by any
//! `--spec-version` run, so they run one by one, by name, against the
//! conformance-tasks profile (plugins/conformance-tasks), judged the same
//! way against [`TASK_EXPECTED_FAILURES`].

mod support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use support::{AuthProxy, Server, Tools};

/// The handshake era: `initialize`, `Mcp-Session-Id`.
const SESSION: &str = "2025-11-25";
/// The stateless era: `server/discover`, per-request `_meta`.
const STATELESS: &str = "2026-07-28";
const BOTH: &[&str] = &[SESSION, STATELESS];

/// One known failure: a whole scenario, or one check as `scenario:check-id`
/// (the suite's own baseline syntax), in the eras where it fails, with the
/// feature the host (or the plugin contract) lacks.
struct Expected {
    entry: &'static str,
    eras: &'static [&'static str],
    needs: &'static str,
}

const fn expect(
    entry: &'static str,
    eras: &'static [&'static str],
    needs: &'static str,
) -> Expected {
    Expected { entry, eras, needs }
}

/// Every scenario or check the suite is expected to fail, and why: the one
/// list (the lead records it). Keep it sorted by feature.
#[rustfmt::skip]
const EXPECTED_FAILURES: &[Expected] = &[
    // The tool and prompt lists change only by a reviewed catalog decision,
    // never by a tool call; the listen stream's notifications are tested in
    // e2e_catalog.
    expect("server-stateless:sep-2575-server-sends-tools-list-changed-on-subscription", &[STATELESS], "a tool that changes the tool list (test_trigger_tool_change), which no plugin may be"),
    expect("server-stateless:sep-2575-server-sends-prompts-list-changed-on-subscription", &[STATELESS], "a tool that changes the prompt list, which no plugin may be (prompts change with the reviewed catalog, like tools)"),
];

/// The Tasks extension's scenarios that are not run, and why.
const TASK_SCENARIOS_SKIPPED: &[(&str, &str)] = &[(
    "tasks-status-notifications",
    "skipped upstream (its harness awaits the subscriptions/listen rewrite): one SKIPPED check",
)];

/// Every task scenario or check expected to fail, and why: what the host
/// (or the plugin contract) lacks. The scenarios run at 2026-07-28 only.
#[rustfmt::skip]
const TASK_EXPECTED_FAILURES: &[Expected] = &[];

/// One era's run of the suite, judged.
struct EraRun {
    era: &'static str,
    summary: String,
    /// Entries that failed without being expected, with the failing checks.
    unexpected: Vec<String>,
    /// Expected entries that passed (remove them).
    stale: Vec<String>,
    /// The suite's own verdict disagreed (it exits non-zero on either).
    suite_failed: Option<String>,
}

#[test]
fn conformance_suite_server_scenarios_pass() {
    let tools = Tools::require();
    let server = Server::start(&[toolhost_fixtures::CONFORMANCE]);
    let suite = tools
        .node_modules
        .join("@modelcontextprotocol/conformance/dist/index.js");

    // The suite cannot send a bearer token: a proxy adds the harness's.
    let proxy = AuthProxy::start(&tools, &server);
    let runs: Vec<EraRun> = BOTH
        .iter()
        .map(|era| run_era(&tools, &server, &proxy.url, &suite, era))
        .collect();

    let mut report = String::new();
    for run in &runs {
        writeln!(
            report,
            "== conformance suite, --spec-version {}\n{}",
            run.era, run.summary
        )
        .ok();
    }
    println!("{report}");
    println!("expected failures (needs a host feature):");
    for e in EXPECTED_FAILURES {
        println!("  [{}] {}: {}", e.eras.join(", "), e.entry, e.needs);
    }

    let mut problems = String::new();
    for run in &runs {
        for u in &run.unexpected {
            writeln!(problems, "[{}] UNEXPECTED FAILURE {u}", run.era).ok();
        }
        for s in &run.stale {
            writeln!(
                problems,
                "[{}] NOW PASSES {s}: remove it from EXPECTED_FAILURES in tests/e2e_conformance.rs",
                run.era
            )
            .ok();
        }
        if let Some(why) = &run.suite_failed {
            writeln!(problems, "[{}] the suite itself failed: {why}", run.era).ok();
        }
    }
    assert!(
        problems.is_empty(),
        "conformance suite:\n{problems}\n{report}\n--- toolhost serve log (tail)\n{}",
        tail(&server.log(), 80)
    );
}

#[test]
fn conformance_task_scenarios_run_by_name() {
    let tools = Tools::require();
    let server = Server::start_with(&[toolhost_fixtures::CONFORMANCE_TASKS], &[]);
    let suite = tools
        .node_modules
        .join("@modelcontextprotocol/conformance/dist/index.js");
    // Following a task needs only the tool's scope; cancelling it also
    // needs the runs' (the harness's own token has only the tools').
    let token = server.service_token("mcp conformance:run explorations:run");
    let proxy = AuthProxy::start_with_token(&tools, &server, &token);
    let invocation = Invocation {
        tools: &tools,
        server: &server,
        url: &proxy.url,
        suite: &suite,
    };
    let expected: Vec<&Expected> = TASK_EXPECTED_FAILURES.iter().collect();

    // One scenario at a time (each leaves a cancelled or finished run), with
    // its own entries as the suite's baseline.
    let mut scenarios = BTreeMap::new();
    let mut report = String::new();
    let mut problems = String::new();
    for name in task_scenarios(&tools, &suite) {
        let dir = results_dir(&["conformance", "tasks", &name]);
        let mine: Vec<&Expected> = expected
            .iter()
            .copied()
            .filter(|e| e.entry.split(':').next() == Some(name.as_str()))
            .collect();
        let (summary, ran, run) = invocation.run(&dir, &mine, &["--scenario", &name]);
        writeln!(report, "== conformance suite, --scenario {name}\n{summary}").ok();
        let (unexpected, stale) = judge(&ran, &mine);
        if !ran.contains_key(&name) {
            writeln!(problems, "[{name}] NO RESULTS: {}", suite_verdict(&run)).ok();
        } else if !run.ok() && unexpected.is_empty() && stale.is_empty() {
            let why = suite_verdict(&run);
            writeln!(problems, "[{name}] the suite itself failed: {why}").ok();
        }
        scenarios.extend(ran);
    }
    println!("{report}");
    println!("expected failures (needs a host feature):");
    for e in TASK_EXPECTED_FAILURES {
        println!("  {}: {}", e.entry, e.needs);
    }
    for (name, why) in TASK_SCENARIOS_SKIPPED {
        println!("  not run: {name}: {why}");
    }

    let (unexpected, stale) = judge(&scenarios, &expected);
    for u in &unexpected {
        writeln!(problems, "UNEXPECTED FAILURE {u}").ok();
    }
    for s in &stale {
        writeln!(
            problems,
            "NOW PASSES {s}: remove it from TASK_EXPECTED_FAILURES in tests/e2e_conformance.rs"
        )
        .ok();
    }
    assert!(
        problems.is_empty(),
        "conformance task scenarios:\n{problems}\n{report}\n--- toolhost serve log (tail)\n{}",
        tail(&server.log(), 80)
    );
}

/// The suite's server scenarios of the Tasks extension (`tasks-*`), as its
/// `list --server` names them, but those in [`TASK_SCENARIOS_SKIPPED`].
fn task_scenarios(tools: &Tools, suite: &Path) -> Vec<String> {
    let mut cmd = Command::new(&tools.node);
    cmd.arg(suite)
        .args(["list", "--server"])
        .env("NO_COLOR", "1");
    let run = support::run(&mut cmd, Duration::from_secs(60));
    assert!(
        run.ok(),
        "conformance list --server: {}\n{}",
        run.verdict(),
        run.stderr
    );
    let names: Vec<String> = run
        .stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with("tasks-"))
        .filter(|n| !TASK_SCENARIOS_SKIPPED.iter().any(|(s, _)| s == n))
        .map(str::to_owned)
        .collect();
    assert!(!names.is_empty(), "no tasks-* scenario in:\n{}", run.stdout);
    names
}

/// Runs the suite at `era` with its baseline, and judges every scenario's checks.
fn run_era(tools: &Tools, server: &Server, url: &str, suite: &Path, era: &'static str) -> EraRun {
    // Kept after the run (target/tmp/conformance/ERA) for a look at checks.json.
    let dir = results_dir(&["conformance", era]);
    let expected: Vec<&Expected> = EXPECTED_FAILURES
        .iter()
        .filter(|e| e.eras.contains(&era))
        .collect();
    let invocation = Invocation {
        tools,
        server,
        url,
        suite,
    };
    let (summary, scenarios, run) =
        invocation.run(&dir, &expected, &["--suite", "all", "--spec-version", era]);
    let (unexpected, stale) = judge(&scenarios, &expected);
    let suite_failed =
        (!run.ok() && unexpected.is_empty() && stale.is_empty()).then(|| suite_verdict(&run));
    EraRun {
        era,
        summary,
        unexpected,
        stale,
        suite_failed,
    }
}

/// `target/tmp/<parts…>`, emptied: kept after the run for a look at checks.json.
fn results_dir(parts: &[&str]) -> PathBuf {
    let dir = parts.iter().fold(
        Path::new(env!("CARGO_TARGET_TMPDIR")).to_path_buf(),
        |d, p| d.join(p),
    );
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create the conformance results dir");
    dir
}

/// The suite's `server` command against one server, through one URL.
struct Invocation<'a> {
    tools: &'a Tools,
    server: &'a Server,
    url: &'a str,
    /// `@modelcontextprotocol/conformance/dist/index.js`.
    suite: &'a Path,
}

impl Invocation<'_> {
    /// Runs `conformance server --url … ARGS` in `dir`, with `expected` as
    /// its baseline (`dir/expected-failures.yml`) and its results in
    /// `dir/results`; its log goes to `dir/suite.log`. Returns the suite's
    /// summary, every scenario that ran with its checks, and how it ended.
    fn run(
        &self,
        dir: &Path,
        expected: &[&Expected],
        args: &[&str],
    ) -> (String, BTreeMap<String, Vec<Check>>, support::Run) {
        let baseline = dir.join("expected-failures.yml");
        // The suite wants a list, even an empty one.
        let mut yaml = String::from(if expected.is_empty() {
            "server: []\n"
        } else {
            "server:\n"
        });
        for e in expected {
            writeln!(yaml, "  - {} # needs {}", e.entry, e.needs).ok();
        }
        fs::write(&baseline, yaml).expect("write the baseline");
        let results = dir.join("results");
        let home = dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());

        let mut cmd = Command::new(&self.tools.node);
        cmd.arg(self.suite)
            .args(["server", "--url", self.url])
            .args(args)
            .arg("--expected-failures")
            .arg(&baseline)
            .arg("--output-dir")
            .arg(&results);
        cmd.env(
            "HOME",
            self.server.scratch(&format!("home-conformance-{home}")),
        )
        .env("NO_COLOR", "1")
        .env("FORCE_COLOR", "0")
        .current_dir(dir);
        let run = support::run(&mut cmd, Duration::from_secs(900));
        fs::write(
            dir.join("suite.log"),
            format!("{}\n{}", run.stdout, run.stderr),
        )
        .ok();

        let summary = match summary_of(&run.stdout) {
            Some(summary) => format!("{summary}\n(results: {})", dir.display()),
            None => format!(
                "(no summary; results: {})\n{}\n{}",
                dir.display(),
                tail(&run.stdout, 60),
                tail(&run.stderr, 60)
            ),
        };
        (summary, read_results(&results), run)
    }
}

/// The suite's summary: from `=== SUMMARY ===` to the end after several
/// scenarios; after one alone, its checks up to the `Passed: …` line.
fn summary_of(stdout: &str) -> Option<&str> {
    if let Some(at) = stdout.find("=== SUMMARY ===") {
        return Some(stdout[at..].trim_end());
    }
    let checks = &stdout[stdout.find("Checks:")?..];
    let passed = checks.find("\nPassed: ")? + 1;
    let end = checks[passed..]
        .find('\n')
        .map_or(checks.len(), |e| passed + e);
    Some(&checks[..end])
}

/// The suite's own verdict, when it failed though the judging did not.
fn suite_verdict(run: &support::Run) -> String {
    format!(
        "{}\n{}\n{}",
        run.verdict(),
        tail(&run.stdout, 40),
        tail(&run.stderr, 40)
    )
}

/// One check of a scenario's `checks.json`.
struct Check {
    id: String,
    /// SUCCESS, FAILURE, WARNING, SKIPPED or INFO.
    status: String,
    message: String,
}

impl Check {
    /// What the suite's baseline logic counts as failing: a MUST that
    /// failed, or a SHOULD (`WARNING`).
    fn fails(&self) -> bool {
        self.status == "FAILURE" || self.status == "WARNING"
    }
}

/// Judges the scenarios as the suite's `--expected-failures` does:
/// FAILURE and WARNING both fail; an entry for a whole scenario excuses all
/// of it; a `scenario:check` entry excuses that check alone. Returns the
/// unexpected failures and the stale entries (expected to fail but passing,
/// or naming a scenario that did not run).
fn judge(
    scenarios: &BTreeMap<String, Vec<Check>>,
    expected: &[&Expected],
) -> (Vec<String>, Vec<String>) {
    let mut unexpected = Vec::new();
    for (scenario, checks) in scenarios {
        if expected.iter().any(|e| e.entry == scenario) {
            continue;
        }
        let mut line = String::new();
        for c in checks.iter().filter(|c| c.fails()) {
            let entry = format!("{scenario}:{}", c.id);
            if !expected.iter().any(|e| e.entry == entry) {
                write!(line, "\n    {} {}: {}", c.status, c.id, c.message).ok();
            }
        }
        if !line.is_empty() {
            unexpected.push(format!("{scenario}:{line}"));
        }
    }
    let mut stale = Vec::new();
    for e in expected {
        let (scenario, check) = match e.entry.split_once(':') {
            Some((s, c)) => (s, Some(c)),
            None => (e.entry, None),
        };
        let Some(checks) = scenarios.get(scenario) else {
            stale.push(format!("{} (the scenario did not run)", e.entry));
            continue;
        };
        let passes = match check {
            None => !checks.iter().any(Check::fails),
            // Absent or skipped is tolerated (a failed prerequisite stops a scenario early).
            Some(id) => {
                let mine: Vec<&Check> = checks.iter().filter(|c| c.id == id).collect();
                !mine.is_empty()
                    && !mine.iter().any(|c| c.fails())
                    && mine.iter().any(|c| c.status == "SUCCESS")
            }
        };
        if passes {
            stale.push(format!("{} ({})", e.entry, e.needs));
        }
    }
    (unexpected, stale)
}

/// Every scenario that ran (`results/server-<scenario>-<timestamp>/checks.json`)
/// with its checks; a missing or unreadable `checks.json` is one failed check.
fn read_results(results: &Path) -> BTreeMap<String, Vec<Check>> {
    let mut out: BTreeMap<String, Vec<Check>> = BTreeMap::new();
    let Ok(entries) = fs::read_dir(results) else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(scenario) = scenario_of(&name) else {
            continue;
        };
        let path = entry.path().join("checks.json");
        let checks: Vec<Check> = match fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Vec<Value>>(&b).ok())
        {
            Some(checks) => checks
                .iter()
                .map(|c| Check {
                    id: c["id"].as_str().unwrap_or("?").to_owned(),
                    status: c["status"].as_str().unwrap_or("?").to_owned(),
                    message: c["errorMessage"].as_str().unwrap_or("").to_owned(),
                })
                .collect(),
            None => vec![Check {
                id: "(checks.json)".into(),
                status: "FAILURE".into(),
                message: format!("{} is missing or not JSON", path.display()),
            }],
        };
        out.entry(scenario.to_owned()).or_default().extend(checks);
    }
    out
}

/// `server-tools-list-2026-11-30T03-03-00-862Z` → `tools-list`.
fn scenario_of(dir: &str) -> Option<&str> {
    let rest = dir.strip_prefix("server-")?;
    // The timestamp is `YYYY-MM-DDTHH-MM-SS-mmmZ`, 24 characters.
    let cut = rest.len().checked_sub(25)?;
    let (scenario, stamp) = rest.split_at(cut);
    (stamp.starts_with('-') && stamp.ends_with('Z') && stamp.contains('T')).then_some(scenario)
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[test]
fn scenario_names_come_out_of_result_dirs() {
    assert_eq!(
        scenario_of("server-tools-list-2026-11-30T03-03-00-862Z"),
        Some("tools-list")
    );
    assert_eq!(
        scenario_of("server-server-stateless-2026-11-30T03-03-00-862Z"),
        Some("server-stateless")
    );
    assert_eq!(scenario_of("results.json"), None);
}

#[test]
fn judging_follows_the_suites_baseline_rules() {
    let check = |id: &str, status: &str| Check {
        id: id.into(),
        status: status.into(),
        message: format!("{id} {status}"),
    };
    let scenarios = BTreeMap::from([
        (
            "a".to_owned(),
            vec![check("a-1", "SUCCESS"), check("a-2", "WARNING")],
        ),
        (
            "b".to_owned(),
            vec![check("b-1", "FAILURE"), check("b-2", "FAILURE")],
        ),
        (
            "c".to_owned(),
            vec![check("c-1", "SUCCESS"), check("c-2", "SKIPPED")],
        ),
        ("d".to_owned(), vec![check("d-1", "SUCCESS")]),
    ]);
    let entries = [
        expect("b", BOTH, "x"),
        expect("c:c-1", BOTH, "x"),
        expect("c:c-2", BOTH, "x"),
        expect("d", BOTH, "x"),
        expect("e", BOTH, "x"),
    ];
    let expected: Vec<&Expected> = entries.iter().collect();
    let (unexpected, stale) = judge(&scenarios, &expected);
    assert_eq!(unexpected, ["a:\n    WARNING a-2: a-2 WARNING"]);
    assert_eq!(
        stale,
        ["c:c-1 (x)", "d (x)", "e (the scenario did not run)"]
    );
}

/// The conformance plugin's prompts and resources need `conformance:run`:
/// a caller without it lists none of them, and getting or reading one
/// answers exactly as for one that does not exist.
#[test]
fn prompts_and_resources_are_hidden_from_a_caller_without_their_permission() {
    use support::bench::{get_prompt, listed_extras, read_resource};
    let server = Server::start(&[toolhost_fixtures::CONFORMANCE]);
    let allowed = server.token().to_owned();
    let other = server.service_token("mcp hello:read");
    let [prompts, resources, _] = listed_extras(&server.url, &allowed);
    assert!(prompts >= 5 && resources >= 2, "{prompts} {resources}");
    assert_eq!(listed_extras(&server.url, &other), [0, 0, 0]);
    let hidden = read_resource(&server.url, &other, "test://static-text");
    let missing = read_resource(&server.url, &allowed, "test://no-such-resource");
    assert!(hidden.contains("not found"), "{hidden}");
    assert_eq!(
        hidden.replace("static-text", "X"),
        missing.replace("no-such-resource", "X"),
        "a forbidden resource reads as a missing one"
    );
    let hidden = get_prompt(&server.url, &other, "test_simple_prompt");
    assert!(hidden.contains("PROMPT_NOT_FOUND"), "{hidden}");
    let shown = get_prompt(&server.url, &allowed, "test_simple_prompt");
    assert!(shown.contains("simple prompt for testing"));
}

/// A tool served only as a task (`run = { task = "required" }`) refuses a
/// stateless call without the Tasks extension with -32021 naming it, and
/// never runs; a caller who may not see the tool gets the call path's own
/// refusal, as for any tool it may not use, not that it needs a task.
#[test]
fn a_task_only_tool_refuses_a_client_without_the_extension_unless_hidden_from_it() {
    let server = Server::start_with(&[toolhost_fixtures::CONFORMANCE_TASKS], &[]);
    let token = server.service_token("mcp conformance:run explorations:run");
    let params = serde_json::json!({"name": "failing_job", "arguments": {}});
    let answer = support::bench::post_at(
        &server.url,
        &token,
        "tools/call",
        "failing_job",
        params.clone(),
    );
    let v: Value = serde_json::from_str(answer.body.trim()).expect("JSON");
    assert_eq!(v["error"]["code"], -32021, "{v}");
    let needs = &v["error"]["data"]["requiredCapabilities"]["extensions"];
    assert!(needs.get("io.modelcontextprotocol/tasks").is_some(), "{v}");
    let runs = server.admin(&["runs", "list"]);
    let listed = String::from_utf8_lossy(&runs.stdout).into_owned();
    assert!(
        !listed.contains("failing_job"),
        "nothing was queued: {listed}"
    );

    let hidden = server.service_token("mcp");
    let answer = support::bench::post_at(&server.url, &hidden, "tools/call", "failing_job", params);
    let v: Value = serde_json::from_str(answer.body.trim()).expect("JSON");
    assert!(
        v["error"].is_null(),
        "a tool the caller may not use says nothing of tasks: {v}"
    );
    let code = &v["result"]["structuredContent"]["error"]["code"];
    assert!(
        code == "PERMISSION_DENIED" || code == "TOOL_NOT_FOUND",
        "the call path's own refusal: {v}"
    );
}

/// A stateless request declaring the Tasks extension and form elicitation,
/// as `token`: its JSON answer (`Mcp-Name` is `name`).
fn tasks_request(server: &Server, token: &str, method: &str, name: &str, params: Value) -> Value {
    let mut params = params;
    let mut request = support::bench::Stateless::new(token, method, name, Value::Null);
    params["_meta"] = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
    });
    request.body =
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
            .to_string();
    let answer = support::exchange_full(
        &server.url,
        "POST",
        "/mcp",
        &request.headers(),
        &request.body,
    );
    serde_json::from_str(answer.body.trim())
        .unwrap_or_else(|e| panic!("{method}: {e}: {}", answer.body))
}

/// `tasks/get` of `task` as `token` until `status` (10 s at most).
fn task_until(server: &Server, token: &str, task: &str, status: &str) -> Value {
    let params = serde_json::json!({"taskId": task});
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let got = tasks_request(server, token, "tasks/get", task, params.clone());
        if got["result"]["status"] == status {
            return got["result"].clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "task {task} never became {status}: {got}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_task_waits_for_its_starters_answers_and_no_one_else_answers_it() {
    let server = Server::start_with(&[toolhost_fixtures::CONFORMANCE_TASKS], &[]);
    let scope = "mcp conformance:run explorations:run";
    let (alice, mallory) = (server.service_token(scope), server.service_token(scope));
    let call = serde_json::json!({"name": "confirm_delete", "arguments": {"filename": "a.txt"}});
    let created = tasks_request(&server, &alice, "tools/call", "confirm_delete", call);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();

    let waiting = task_until(&server, &alice, &task, "input_required");
    let asked = &waiting["inputRequests"]["confirm"];
    assert_eq!(asked["method"], "elicitation/create", "{waiting}");

    // Another principal of the tenant can neither read nor answer it.
    let accept = serde_json::json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let update = serde_json::json!({"taskId": task, "inputResponses": accept});
    let foreign = tasks_request(&server, &mallory, "tasks/update", &task, update.clone());
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
    let peek = tasks_request(
        &server,
        &mallory,
        "tasks/get",
        &task,
        serde_json::json!({"taskId": task}),
    );
    assert_eq!(peek["error"]["code"], -32602, "{peek}");
    // An answer over 64 KiB takes nothing.
    let huge = serde_json::json!({"taskId": task, "inputResponses": {"confirm": {
        "action": "accept", "content": {"confirm": true, "pad": "x".repeat(70 * 1024)}}}});
    let refused = tasks_request(&server, &alice, "tasks/update", &task, huge);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let still = task_until(&server, &alice, &task, "input_required");
    assert!(still["inputRequests"].get("confirm").is_some(), "{still}");

    // Its starter's answer resumes it: the run runs again with it.
    let acked = tasks_request(&server, &alice, "tasks/update", &task, update);
    assert_eq!(acked["result"]["resultType"], "complete", "{acked}");
    let done = task_until(&server, &alice, &task, "completed");
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(text, "Deleted a.txt (confirmed).", "{done}");
    let receipt = &done["result"]["structuredContent"]["receipt"];
    let ended: Vec<&str> = receipt["attempts"]
        .as_array()
        .expect("attempts")
        .iter()
        .filter_map(|a| a["ended"].as_str())
        .collect();
    assert_eq!(ended, ["input_required", "finished"], "{receipt}");
}

/// An open `subscriptions/listen` stream as `token`, declaring the Tasks
/// extension and naming `tasks` (read raw: its events arrive as they are
/// sent).
struct Listen {
    stream: std::net::TcpStream,
    read: String,
}

impl Listen {
    fn open(server: &Server, token: &str, tasks: &[&str]) -> Listen {
        use std::io::Write as _;
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities":
                    {"extensions": {"io.modelcontextprotocol/tasks": {}}},
            },
            "notifications": {"taskIds": tasks},
        }})
        .to_string();
        let authority = server.url.trim_start_matches("http://");
        let authority = authority.split('/').next().unwrap_or(authority);
        let mut stream = std::net::TcpStream::connect(authority).expect("connect");
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream
            .write_all(head.as_bytes())
            .expect("send the listen request");
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .expect("timeout");
        Listen {
            stream,
            read: String::new(),
        }
    }

    /// The JSON-RPC messages sent so far on the stream.
    fn messages(&self) -> Vec<Value> {
        self.read
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }

    /// Reads until a message passes `done`, or `wait` passes: the messages.
    fn until(&mut self, wait: Duration, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        use std::io::Read as _;
        let deadline = std::time::Instant::now() + wait;
        let mut buf = [0u8; 8192];
        while std::time::Instant::now() < deadline {
            if self.messages().iter().any(&done) {
                break;
            }
            match self.stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => self.read.push_str(&String::from_utf8_lossy(&buf[..n])),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => panic!("the listen stream failed: {e}"),
            }
        }
        self.messages()
    }
}

/// A `subscriptions/listen` stream naming tasks (SEP-2663's
/// `notifications.taskIds`) has them in its acknowledgement and is told
/// each task as it is, then each change, up to its end, with the stream's
/// subscription id. Another principal naming the same task is acknowledged
/// alike and told nothing of it.
#[test]
fn a_listen_stream_is_told_of_its_tasks_and_of_no_one_elses() {
    let server = Server::start_with(&[toolhost_fixtures::CONFORMANCE_TASKS], &[]);
    let scope = "mcp conformance:run explorations:run";
    let (alice, mallory) = (server.service_token(scope), server.service_token(scope));
    let call = serde_json::json!({"name": "slow_compute",
        "arguments": {"seconds": 2, "label": "listened"}});
    let created = tasks_request(&server, &alice, "tools/call", "slow_compute", call);
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();

    let mut theirs = Listen::open(&server, &mallory, &[&task]);
    let mut mine = Listen::open(&server, &alice, &[&task, "not-a-task", &task]);
    let is_ack = |m: &Value| m["method"] == "notifications/subscriptions/acknowledged";
    let told = mine.until(Duration::from_secs(20), |m| {
        m["method"] == "notifications/tasks" && m["params"]["status"] == "completed"
    });
    let ack = told.iter().find(|m| is_ack(m)).expect("an acknowledgement");
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        serde_json::json!([task]),
        "{ack}"
    );
    let statuses: Vec<&Value> = told
        .iter()
        .filter(|m| m["method"] == "notifications/tasks")
        .map(|m| &m["params"])
        .collect();
    let names: Vec<&str> = statuses
        .iter()
        .filter_map(|p| p["status"].as_str())
        .collect();
    assert_eq!(
        names.first(),
        Some(&"working"),
        "told as it is first: {told:?}"
    );
    assert_eq!(names.last(), Some(&"completed"), "{told:?}");
    for p in &statuses {
        assert_eq!(p["taskId"], task.as_str(), "{p}");
        assert_eq!(
            p["_meta"]["io.modelcontextprotocol/subscriptionId"], 1,
            "{p}"
        );
    }
    let done = statuses.last().expect("the end");
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("listened"), "the result inlined: {done}");

    let seen = theirs.until(Duration::from_secs(2), |m| {
        m["method"] == "notifications/tasks"
    });
    assert!(seen.iter().any(is_ack), "acknowledged alike: {seen:?}");
    assert!(
        !seen.iter().any(|m| m["method"] == "notifications/tasks"),
        "told nothing of another's task: {seen:?}"
    );
}
