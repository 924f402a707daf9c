//! The `protocol` import against the real sandbox, through the
//! `t-protocol-raise` fixture: a raised JSON-RPC error ends the call as
//! [`CallError::Protocol`] (the plugin's answer, not a breach), a code of
//! the host's (JSON-RPC's reserved range, the host's own block) is a
//! contract violation, the message
//! arrives cut and redacted, and the plugin serves the next call.

use serde_json::{Value, json};
use toolhost_fixtures::T_PROTOCOL_RAISE;
use toolhost_limits::CallBudget;
use toolhost_runtime::{
    CallContext, CallError, HOST_JSONRPC_CODES, MAX_PROTOCOL_MESSAGE, Plugin, Runtime,
    RuntimeConfig,
};
use toolhost_secrets::Scanner;

async fn plugin(rt: &Runtime) -> Plugin {
    let name = T_PROTOCOL_RAISE.name.parse().expect("a plugin name");
    (rt.load(name, &T_PROTOCOL_RAISE.bytes()).await)
        .expect("the fixture loads")
        .0
}

/// `tool` called with `args` under `ctx`: its structured answer, or why not.
async fn call(
    rt: &Runtime,
    p: &Plugin,
    ctx: &CallContext,
    tool: &str,
    args: Value,
) -> Result<Value, CallError> {
    let reply = rt
        .call(p, ctx, tool, &args.to_string(), &CallBudget::DEFAULT)
        .await?;
    Ok(reply.into_output().expect("no questions").structured)
}

/// What `raise` with `code` and `message` ends in.
async fn raise(rt: &Runtime, p: &Plugin, ctx: &CallContext, code: i32, message: &str) -> CallError {
    let args = json!({"code": code, "message": message});
    let err = call(rt, p, ctx, "raise", args)
        .await
        .expect_err("raise never answers");
    let pong = call(rt, p, ctx, "ping", json!({})).await;
    assert_eq!(
        pong,
        Ok(json!({"pong": true})),
        "the plugin serves right after"
    );
    err
}

#[tokio::test]
async fn a_raised_error_ends_the_call_as_the_plugins_own_protocol_error() {
    let rt = Runtime::new(RuntimeConfig::default()).expect("runtime builds");
    let p = plugin(&rt).await;
    let ctx = CallContext::new("tenant-a", "alice");
    for code in [-30000, 1001, -32602, -32769, -30999] {
        let err = raise(&rt, &p, &ctx, code, "no such job").await;
        let message = "no such job".to_owned();
        assert_eq!(err, CallError::Protocol { code, message });
        assert_eq!(err.code(), "PROTOCOL_ERROR");
        assert!(!err.is_breach(), "the plugin's answer, not the sandbox's");
    }
}

#[tokio::test]
async fn a_code_of_the_hosts_is_a_contract_violation() {
    let rt = Runtime::new(RuntimeConfig::default()).expect("runtime builds");
    let p = plugin(&rt).await;
    let ctx = CallContext::new("tenant-a", "alice");
    for code in [
        -32603, -32021, -32050, -32002, -32700, -32000, -32768, -31001, -31000,
    ] {
        assert!(HOST_JSONRPC_CODES.contains(&code));
        let err = raise(&rt, &p, &ctx, code, "internal error").await;
        assert_eq!(err.code(), "CONTRACT_VIOLATION", "{code}: {err}");
        assert!(err.to_string().contains(&code.to_string()), "{err}");
    }
}

#[tokio::test]
async fn a_raised_message_is_redacted_with_the_calls_scanner_and_cut() {
    let rt = Runtime::new(RuntimeConfig::default()).expect("runtime builds");
    let p = plugin(&rt).await;
    let operator_secret = "operator-backend-token-5678";
    let scanner = Scanner::new().with_secret(operator_secret);
    let ctx = CallContext::new("tenant-a", "alice").with_scanner(scanner);
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJlMmUifQ.c2lnbmF0dXJl";
    let leaky = format!("refused {jwt} and {operator_secret}");
    let CallError::Protocol { message, .. } = raise(&rt, &p, &ctx, -30000, &leaky).await else {
        panic!("a protocol error");
    };
    assert!(
        !message.contains(jwt) && !message.contains(operator_secret),
        "{message}"
    );
    assert!(message.contains("[redacted:jwt]"), "{message}");
    let long = "é".repeat(MAX_PROTOCOL_MESSAGE);
    let CallError::Protocol { message, .. } = raise(&rt, &p, &ctx, -30000, &long).await else {
        panic!("a protocol error");
    };
    assert_eq!(message.len(), MAX_PROTOCOL_MESSAGE);
}
