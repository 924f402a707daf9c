//! Request bounds end to end (issue 8): the real binary, one limit set low
//! per test. Arguments on the bound run; one past it is refused with
//! `LIMIT_EXCEEDED` naming the limit and its value, and the store gains
//! nothing but the call's audit row (`limit_rejected`). Arguments off the
//! tool's input schema are refused by the host (`INVALID_ARGUMENTS`, the
//! validator's message), before the plugin could answer them itself.

mod support;

use std::collections::BTreeMap;

use serde_json::{Value, json};
use support::{Server, python3};

/// A stateless `tools/call` of `tool` on /mcp with the harness's service
/// token; the JSON-RPC result.
fn call(server: &Server, tool: &str, arguments: Value) -> Value {
    support::bench::call(server, server.token(), tool, arguments)["result"].clone()
}

/// Runs `python3 -c SCRIPT DATABASE`; its stdout.
fn python(server: &Server, script: &str) -> String {
    python3(script, &[&server.database_path().to_string_lossy()])
}

/// Rows per table of the server's store. `rate_counters` is left out: it
/// counts requests at the HTTP edge per time window (a window that starts,
/// or a purge, moves its row count whatever the call does). So is
/// `audit_anchors`: the host anchors its audit chains about once a second,
/// whenever they moved, not with the call.
fn rows(server: &Server) -> BTreeMap<String, u64> {
    let script = "import sqlite3, sys\n\
        c = sqlite3.connect(sys.argv[1])\n\
        names = [r[0] for r in c.execute(\"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT IN ('rate_counters', 'audit_anchors')\")]\n\
        for n in names: print(n, c.execute(f'SELECT COUNT(*) FROM \"{n}\"').fetchone()[0])";
    python(server, script)
        .lines()
        .map(|l| {
            let (table, n) = l.split_once(' ').expect("table count");
            (table.to_owned(), n.parse().expect("a count"))
        })
        .collect()
}

/// The newest audit row: tool, outcome, error code.
fn last_audit(server: &Server) -> String {
    let script = "import sqlite3, sys\n\
        r = sqlite3.connect(sys.argv[1]).execute('SELECT tool, outcome, error_code FROM audit ORDER BY id DESC LIMIT 1').fetchone()\n\
        print(*r)";
    python(server, script)
}

/// Calls `tool` and checks it ran.
fn runs(server: &Server, tool: &str, arguments: Value) {
    let result = call(server, tool, arguments.clone());
    assert_eq!(
        result["isError"],
        json!(false),
        "{tool} {arguments}: {result}"
    );
}

/// Calls `tool` and checks it was refused with `code` and a message
/// holding each of `says`, and that the store gained exactly one row: the
/// call's audit row, with `outcome`. The error, for more checks.
fn refused(
    server: &Server,
    (tool, arguments): (&str, Value),
    (code, says): (&str, &[&str]),
    outcome: &str,
) -> Value {
    let before = rows(server);
    let result = call(server, tool, arguments.clone());
    let error = &result["structuredContent"]["error"];
    assert_eq!(
        (&result["isError"], &error["code"]),
        (&json!(true), &json!(code)),
        "{tool} {arguments}: {result}"
    );
    let message = error["message"].as_str().expect("a message");
    for part in says {
        assert!(message.contains(part), "{part:?} not in {message:?}");
    }
    let mut expected = before;
    *expected.get_mut("audit").expect("an audit table") += 1;
    assert_eq!(rows(server), expected, "only the audit row is new");
    assert_eq!(last_audit(server), format!("{tool} {outcome} {code}"));
    error.clone()
}

/// On the bound runs; one past it is refused, naming `limit` and its value.
fn bound(flag: (&str, &str), tool: &str, on: Value, over: Value, limit: &str, says: &str) {
    let server = Server::start_with(&[toolhost_fixtures::HELLO], &[flag.0, flag.1]);
    runs(&server, tool, on);
    let value = format!("{limit} is {}", flag.1);
    refused(
        &server,
        (tool, over),
        ("LIMIT_EXCEEDED", &[&value, says]),
        "limit_rejected",
    );
}

#[test]
fn json_depth_on_the_bound_runs_and_one_level_deeper_is_refused() {
    bound(
        ("--max-json-depth", "2"),
        "add",
        json!({"numbers": [1, 2]}),
        json!({"numbers": [[1]]}),
        "max_json_depth",
        "$.numbers[0] is nested 3 levels deep",
    );
}

#[test]
fn array_length_on_the_bound_runs_and_one_item_more_is_refused() {
    bound(
        ("--max-array-len", "3"),
        "add",
        json!({"numbers": [1, 2, 3]}),
        json!({"numbers": [1, 2, 3, 4]}),
        "max_array_len",
        "$.numbers has 4 items",
    );
}

#[test]
fn object_length_on_the_bound_runs_and_one_member_more_is_refused() {
    bound(
        ("--max-object-len", "2"),
        "greet",
        json!({"name": "Ada", "language": "fr"}),
        json!({"name": "Ada", "language": "fr", "mood": "cheerful"}),
        "max_object_len",
        "$ has 3 members",
    );
}

#[test]
fn string_bytes_on_the_bound_run_and_one_byte_more_is_refused() {
    // Bytes, not characters: "é" is two.
    bound(
        ("--max-string-bytes", "8"),
        "greet",
        json!({"name": "éééé"}),
        json!({"name": "éééé!"}),
        "max_string_bytes",
        "$.name is 9 bytes",
    );
}

#[test]
fn argument_bytes_on_the_bound_run_and_one_byte_more_is_refused() {
    let text = |n: usize| json!({"text": "w".repeat(n)});
    // `{"text":""}` is 11 bytes of compact JSON.
    assert_eq!(text(53).to_string().len(), 64);
    bound(
        ("--max-argument-bytes", "64"),
        "word_stats",
        text(53),
        text(54),
        "max_argument_bytes",
        "$ is 65 bytes",
    );
}

#[test]
fn arguments_off_the_schema_are_refused_by_the_host_before_the_plugin_sees_them() {
    let server = Server::start(&[toolhost_fixtures::HELLO]);
    runs(&server, "greet", json!({"name": "Ada"}));
    // The plugin's own deserializer would say "invalid type: integer `42`…".
    let wrong_type = refused(
        &server,
        ("greet", json!({"name": 42})),
        (
            "INVALID_ARGUMENTS",
            &["$.name: want string, but got number"],
        ),
        "error",
    );
    assert!(!wrong_type.to_string().contains("invalid type"));
    // The plugin would answer "top is 101, at most 100" itself: had it
    // run, that would be the message.
    let over_max = refused(
        &server,
        ("word_stats", json!({"text": "a b", "top": 101})),
        ("INVALID_ARGUMENTS", &["$.top: "]),
        "error",
    );
    assert!(!over_max.to_string().contains("top is 101"), "{over_max}");
}
