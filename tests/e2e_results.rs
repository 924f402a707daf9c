//! What leaves the host as an answer (issue 8), end to end through the
//! real binary: an answer over the inline limit comes back as a resource
//! link with its size and SHA-256, `resources/read` returns the same bytes
//! to a reader of the same tenant holding the tool's permission and
//! not-found to anyone else (on SQLite and on PostgreSQL); an answer that
//! would carry a credential is withheld as `SECRET_EXPOSURE`, and the
//! credential is in neither the store nor the log; a JSON-RPC error a
//! plugin raises answers the call as that error (issue 44), audited as
//! `PROTOCOL_ERROR`, but never with the host's own codes or a credential.

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::bench::{BACKEND_TOKEN, Backend, call, post_at, request_at, serve_on};
use support::{PgSchema, Server, python3};
use toolhost_fixtures::{Fixture, HELLO, T_LIMITS_HUGE_OUTPUT, T_PROTOCOL_RAISE};

/// Five MiB of answer data: over the default inline limit (1 MiB).
const FIVE_MIB: usize = 5 << 20;

/// A JWT-shaped credential that is nobody's: header, payload, signature.
const FOREIGN_JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJlMmUtbGVhayIsImlhdCI6MTc2NDQ2MDgwMH0.bm90LWEtcmVhbC1zaWduYXR1cmUtYnV0LXNoYXBlZA";

/// The huge-output fixture with an 8 MiB output budget (its own manifest
/// allows 1 MiB, to prove the budget), so a 5 MiB answer is legitimate.
fn huge_output(dir: &Path) -> Fixture {
    let manifest = std::fs::read_to_string(T_LIMITS_HUGE_OUTPUT.manifest).expect("manifest");
    let manifest = manifest.replace("output = \"1 MiB\"", "output = \"8 MiB\"");
    assert!(
        manifest.contains("8 MiB"),
        "the fixture's budget line moved"
    );
    let path = dir.join("huge-output.toml");
    std::fs::write(&path, manifest).expect("write the manifest");
    Fixture {
        manifest: Box::leak(path.display().to_string().into_boxed_str()),
        ..T_LIMITS_HUGE_OUTPUT
    }
}

/// A stateless `resources/read` of `uri` with `token`: the JSON-RPC answer.
fn read_resource(server: &Server, token: &str, uri: &str) -> Value {
    request_at(
        &server.url,
        token,
        "resources/read",
        uri,
        json!({"uri": uri}),
    )
}

/// SHA-256 of the file at `path`, lower-case hex, by Python's hashlib (the
/// test does not trust the host's own digest code to check the host).
fn sha256(path: &Path) -> String {
    let script =
        "import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],'rb').read()).hexdigest())";
    python3(script, &[&path.to_string_lossy()])
}

fn large_answers_become_artifacts(database_url: Option<&str>) {
    let dir = tempfile::tempdir().expect("temp");
    let server = Server::start_on(&[huge_output(dir.path())], &[], database_url);

    // Under the inline limit: inline, as ever.
    let small = call(&server, server.token(), "huge", json!({"bytes": 1000}));
    let structured = &small["result"]["structuredContent"];
    assert_eq!(
        structured["data"].as_str().map(str::len),
        Some(1000),
        "{small}"
    );

    // Over it: a reference, twice (as structured content and as a resource link).
    let big = call(&server, server.token(), "huge", json!({"bytes": FIVE_MIB}));
    let result = &big["result"];
    assert_eq!(result["isError"], json!(false), "{big}");
    let artifact = &result["structuredContent"]["artifact"];
    let uri = artifact["uri"]
        .as_str()
        .expect("an artifact uri")
        .to_owned();
    assert!(uri.starts_with("toolhost://artifacts/"), "{artifact}");
    let expected_size = FIVE_MIB + r#"{"data":""}"#.len();
    assert_eq!(artifact["size"], json!(expected_size), "{artifact}");
    assert_eq!(artifact["mime_type"], json!("application/json"));
    let link = result["content"]
        .as_array()
        .and_then(|c| c.iter().find(|b| b["type"] == "resource_link"))
        .unwrap_or_else(|| panic!("no resource_link in {result}"));
    assert_eq!(link["uri"], json!(uri));
    assert_eq!(link["size"], json!(expected_size));
    let answer_len = serde_json::to_string(&big).expect("json").len();
    assert!(
        answer_len < 4096,
        "the reference is small: {answer_len} bytes"
    );

    // The owner's tenant and permission: the bytes, matching the digest.
    let read = read_resource(&server, server.token(), &uri);
    let contents = &read["result"]["contents"][0];
    assert_eq!(
        contents["uri"],
        json!(uri),
        "{}",
        &read.to_string()[..300.min(read.to_string().len())]
    );
    let text = contents["text"].as_str().expect("text contents");
    assert_eq!(text.len(), expected_size);
    let read_back = dir.path().join("read-back.json");
    std::fs::write(&read_back, text).expect("write the bytes read");
    assert_eq!(json!(sha256(&read_back)), artifact["sha256"]);
    let data: Value = serde_json::from_str(text).expect("the stored answer is its JSON");
    assert_eq!(data["data"].as_str().map(str::len), Some(FIVE_MIB));

    // Another tenant, a reader without the tool's permission, a made-up
    // id: all the same not-found.
    let acme = server.service_client_in("acme", "mcp fixture:run").1;
    let unpermitted = server.service_token("mcp hello:read");
    let made_up = "toolhost://artifacts/0123456789abcdef0123456789abcdef";
    for (who, token, uri) in [
        ("another tenant", acme.as_str(), uri.as_str()),
        ("no permission", unpermitted.as_str(), uri.as_str()),
        ("made-up id", server.token(), made_up),
        ("not an artifact uri", server.token(), "file:///etc/passwd"),
    ] {
        let refused = read_resource(&server, token, uri);
        // Resource not found: −32602 for 2026-07-28 peers (−32002 before).
        assert_eq!(refused["error"]["code"], json!(-32602), "{who}: {refused}");
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert_eq!(
            message,
            format!("resource {uri:?} not found"),
            "{who}: the same words for every refusal"
        );
        assert!(refused.get("result").is_none(), "{who}: {refused}");
    }

    // One audit row per call, and the trail still verifies.
    let out = server.admin(&["audit", "verify"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_large_answer_is_an_artifact_its_tenant_reads_back_on_sqlite() {
    large_answers_become_artifacts(None);
}

#[test]
fn a_large_answer_is_an_artifact_its_tenant_reads_back_on_postgres() {
    let schema = PgSchema::create("artifacts");
    large_answers_become_artifacts(Some(&schema.url));
}

/// Every file of the server's SQLite store (the database and its WAL).
fn store_bytes(server: &Server) -> Vec<u8> {
    let db = server.database_path();
    let mut bytes = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let path = format!("{}{suffix}", db.display());
        if let Ok(b) = std::fs::read(&path) {
            bytes.extend(b);
        }
    }
    assert!(!bytes.is_empty(), "no store at {}", db.display());
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// The blocks of `result.content` of `kind`.
fn blocks<'a>(result: &'a Value, kind: &str) -> Vec<&'a Value> {
    let content = result["content"].as_array().map(Vec::as_slice);
    content
        .unwrap_or_default()
        .iter()
        .filter(|b| b["type"] == kind)
        .collect()
}

#[test]
fn content_blocks_are_sent_inline_kept_as_artifacts_when_large_and_scanned() {
    let dir = tempfile::tempdir().expect("temp");
    let server = Server::start_on(&[huge_output(dir.path())], &[], None);

    // Small: the image and the embedded resource inline, after the text.
    let small = call(
        &server,
        server.token(),
        "huge_image",
        json!({"bytes": 100, "note": "hi"}),
    );
    let result = &small["result"];
    assert_eq!(
        result["structuredContent"],
        json!({"bytes": 100}),
        "{small}"
    );
    let kinds: Vec<&str> = (result["content"].as_array().expect("content").iter())
        .map(|b| b["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(kinds, ["text", "image", "resource"], "{small}");
    let image = blocks(result, "image")[0];
    assert_eq!(image["mimeType"], json!("image/png"));
    let decoded = python3(
        "import base64,sys; d=base64.b64decode(sys.argv[1]); print(len(d), d[:4] == b'\\x89PNG')",
        &[image["data"].as_str().expect("base64 data")],
    );
    assert_eq!(decoded, "100 True", "{image}");
    let embedded = &blocks(result, "resource")[0]["resource"];
    assert_eq!(
        (embedded["uri"].clone(), embedded["text"].clone()),
        (json!("fixture://note"), json!("hi"))
    );

    // Over the inline limit: the image is kept as an artifact and linked,
    // the rest stays inline.
    let bytes = 3 << 20;
    let big = call(
        &server,
        server.token(),
        "huge_image",
        json!({"bytes": bytes, "note": "hi"}),
    );
    let result = &big["result"];
    assert_eq!(
        result["structuredContent"],
        json!({"bytes": bytes}),
        "{big}"
    );
    assert!(blocks(result, "image").is_empty(), "no inline image");
    assert_eq!(blocks(result, "resource").len(), 1, "the note stays inline");
    let link = blocks(result, "resource_link")[0];
    let uri = link["uri"].as_str().expect("a uri").to_owned();
    assert!(uri.starts_with("toolhost://artifacts/"), "{link}");
    assert_eq!(
        (link["mimeType"].clone(), link["size"].clone()),
        (json!("image/png"), json!(bytes))
    );
    let answer_len = serde_json::to_string(&big).expect("json").len();
    assert!(answer_len < 4096, "the answer is small: {answer_len} bytes");
    let read = read_resource(&server, server.token(), &uri);
    let contents = &read["result"]["contents"][0];
    let blob = contents["blob"]
        .as_str()
        .expect("binary contents are a blob");
    let path = dir.path().join("image.b64");
    std::fs::write(&path, blob).expect("write");
    let script = "import base64,hashlib,sys; d=base64.b64decode(open(sys.argv[1]).read()); \
                  print(len(d), d[:4] == b'\\x89PNG', hashlib.sha256(d).hexdigest())";
    let digest = link["description"]
        .as_str()
        .unwrap_or_default()
        .trim_start_matches("sha256:");
    assert_eq!(
        python3(script, &[&path.to_string_lossy()]),
        format!("{bytes} True {digest}")
    );

    // A credential in a block withholds the whole answer.
    let leaky = call(
        &server,
        server.token(),
        "huge_image",
        json!({"bytes": 10, "note": FOREIGN_JWT}),
    );
    let error = &leaky["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], json!("SECRET_EXPOSURE"), "{leaky}");
    assert!(!leaky.to_string().contains(FOREIGN_JWT), "{leaky}");
}

#[test]
fn an_answer_carrying_a_credential_is_withheld_and_stored_nowhere() {
    let backend = Backend::start();
    let (server, demo) = serve_on(&backend, &[HELLO], &["--log", "debug"], None);
    let host_token = format!("thrt_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v");
    let own_access_token = server.token().to_owned();
    let secrets = [
        ("backend_secret", BACKEND_TOKEN.to_owned()),
        ("jwt", FOREIGN_JWT.to_owned()),
        ("jwt", own_access_token.clone()),
        ("host_token", host_token.clone()),
    ];
    for (kind, secret) in &secrets {
        let answer = call(&server, server.token(), "greet", json!({"name": secret}));
        let result = &answer["result"];
        assert_eq!(result["isError"], json!(true), "{kind}: {answer}");
        let error = &result["structuredContent"]["error"];
        assert_eq!(error["code"], json!("SECRET_EXPOSURE"), "{kind}: {answer}");
        assert!(
            error["message"].as_str().is_some_and(|m| m.contains(kind)),
            "the refusal names the kind: {answer}"
        );
        assert!(
            !answer.to_string().contains(secret.as_str()),
            "{kind}: echoed back"
        );
    }
    // A write whose plan would show one is stopped before it acts.
    let named = json!({"project": "payments", "name": format!("Smoke {FOREIGN_JWT}")});
    let answer = call(&server, &demo, "create_api_scenario", named);
    let error = &answer["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], json!("SECRET_EXPOSURE"), "{answer}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("the call was stopped before"),
        "{answer}"
    );
    assert_eq!(backend.writes(), 0, "nothing ran");
    // A write whose answer would carry one ran: the caller is told so, and
    // a retry with its idempotency key answers the same without running.
    let tagged = json!({"project": "payments", "name": "Smoke",
        "tags": ["smoke", host_token], "idempotency_key": "k-secret"});
    for attempt in 0..2 {
        let answer = call(&server, &demo, "create_api_scenario", tagged.clone());
        let error = &answer["result"]["structuredContent"]["error"];
        assert_eq!(
            error["code"],
            json!("SECRET_EXPOSURE"),
            "attempt {attempt}: {answer}"
        );
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("the tool ran"),
            "attempt {attempt}: {answer}"
        );
        assert!(
            !answer.to_string().contains(&host_token),
            "attempt {attempt}: echoed"
        );
    }
    assert_eq!(backend.writes(), 1, "one side effect for both attempts");
    // A failure's message keeps its code; a credential in it is redacted.
    let refused = json!({"project": "payments", "name": "Smoke", "tags": [FOREIGN_JWT]});
    let answer = call(&server, &demo, "create_api_scenario", refused);
    let error = &answer["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], json!("TOOL_FAILED"), "{answer}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("[redacted:jwt]"), "{answer}");
    assert!(!answer.to_string().contains(FOREIGN_JWT), "{answer}");
    // A clean greeting still passes.
    let fine = call(&server, server.token(), "greet", json!({"name": "Ada"}));
    assert_eq!(fine["result"]["isError"], json!(false), "{fine}");
    // A tool *name* is stored in the audit row: a secret there is redacted.
    let unknown = call(&server, server.token(), FOREIGN_JWT, json!({}));
    assert_eq!(
        unknown["result"]["structuredContent"]["error"]["code"],
        json!("TOOL_NOT_FOUND")
    );

    // Each refusal is audited as an error with its code.
    let out = server.admin(&["audit", "search", "--tool", "greet", "--outcome", "error"]);
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        listed.matches("SECRET_EXPOSURE").count(),
        secrets.len(),
        "{listed}"
    );
    let writes = ["audit", "search", "--tool", "create_api_scenario"];
    let listed = String::from_utf8_lossy(&server.admin(&writes).stdout).into_owned();
    assert_eq!(listed.matches("SECRET_EXPOSURE").count(), 3, "{listed}");

    let store = store_bytes(&server);
    let log = server.log();
    assert!(
        log.contains("tool call"),
        "the debug log records the calls: {log}"
    );
    for (kind, secret) in secrets.iter().chain([&("jwt", FOREIGN_JWT.to_owned())]) {
        assert!(!contains(&store, secret), "{kind}: found in the store");
        assert!(!log.contains(secret.as_str()), "{kind}: found in the log");
    }
    let out = server.admin(&["audit", "verify"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A stateless `tools/call` of the protocol fixture's `raise`: the
/// JSON-RPC answer, whatever its HTTP status.
fn raise(server: &Server, code: i32, message: &str) -> Value {
    let params = json!({"name": "raise", "arguments": {"code": code, "message": message}});
    let answer = post_at(&server.url, server.token(), "tools/call", "raise", params);
    serde_json::from_str(answer.body.trim()).unwrap_or_else(|e| panic!("{e}: {}", answer.body))
}

/// A plugin that raises a JSON-RPC error (`protocol.raise`) answers the
/// `tools/call` with that error, not a tool result, and the call's audit
/// row says `PROTOCOL_ERROR`. A code of the host's (-32603 internal,
/// -32021 missing capability, -31001 limit exceeded) is refused as a
/// contract violation, a tool result like any failure, so a plugin cannot pass for
/// the host; a credential in the message is redacted and stored nowhere.
#[test]
fn a_raised_json_rpc_error_answers_the_call_but_never_as_the_host_nor_with_a_secret() {
    let server = Server::start(&[T_PROTOCOL_RAISE]);
    let answer = raise(&server, -30000, "no such job");
    assert!(answer.get("result").is_none(), "{answer}");
    let error = &answer["error"];
    assert_eq!(error["code"], json!(-30000), "{answer}");
    assert_eq!(error["message"], json!("no such job"), "{answer}");
    assert_eq!(error["data"], json!({"code": "PROTOCOL_ERROR"}), "{answer}");

    let leaky = raise(&server, -32602, &format!("refused {FOREIGN_JWT}"));
    assert_eq!(leaky["error"]["code"], json!(-32602), "{leaky}");
    let message = leaky["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("[redacted:jwt]"), "{leaky}");
    assert!(!leaky.to_string().contains(FOREIGN_JWT), "{leaky}");

    for code in [-32603, -32021, -31001] {
        let forged = raise(&server, code, "internal error");
        assert!(forged.get("error").is_none(), "{code}: {forged}");
        assert_eq!(forged["result"]["isError"], json!(true), "{forged}");
        let error = &forged["result"]["structuredContent"]["error"];
        assert_eq!(error["code"], json!("CONTRACT_VIOLATION"), "{forged}");
    }

    let out = server.admin(&["audit", "search", "--tool", "raise", "--outcome", "error"]);
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(listed.matches("PROTOCOL_ERROR").count(), 2, "{listed}");
    assert_eq!(listed.matches("CONTRACT_VIOLATION").count(), 3, "{listed}");
    assert!(
        !contains(&store_bytes(&server), FOREIGN_JWT),
        "in the store"
    );
    assert!(!server.log().contains(FOREIGN_JWT), "in the log");
}
