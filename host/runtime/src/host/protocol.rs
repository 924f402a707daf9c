//! `toolhost:plugin/protocol`: a plugin ends its call with a JSON-RPC
//! error instead of a tool result.
//!
//! `raise` never returns to the guest: the import traps with a
//! [`ProtocolStop`] carrying the error, and the sandbox's trap mapping
//! turns it into [`CallError::Protocol`](crate::CallError::Protocol), which
//! the MCP edge answers as the request's JSON-RPC error. The rules keep the
//! host's own errors its own: a code in the range JSON-RPC reserves, or in
//! the block the host takes for its own codes, is refused as a contract
//! breach, but for -32602 (invalid params), which a plugin may mean as much
//! as the host does.

use std::ops::RangeInclusive;

use toolhost_secrets::Scanner;

use super::HostCallMeter;
use crate::bindings::toolhost::plugin::protocol::Host;
use crate::error::ContractBreach;

/// Longest message a raised error carries; longer ones are cut (at a
/// character boundary). An error message is a sentence for a person, not a
/// channel for data.
pub const MAX_PROTOCOL_MESSAGE: usize = 1024;

/// The codes that are the host's, which a plugin may not raise: JSON-RPC
/// 2.0 reserves -32768..=-32000 for the protocol and its implementations
/// (the host's -32603, -32050, -32021, -32002…), and the host takes
/// -31999..=-31000 for codes of its own (-31001 `LIMIT_EXCEEDED`, -31002
/// `RATE_LIMITED`, -31003 `STREAM_NOT_FOUND`, and room for more). A plugin's
/// error with one of them could pass for the host's.
pub const HOST_JSONRPC_CODES: RangeInclusive<i32> = -32768..=-31000;

/// JSON-RPC's "invalid params", the one code of [`HOST_JSONRPC_CODES`] a
/// plugin may raise: the arguments are as much the tool's to judge as the
/// host's.
pub const JSONRPC_INVALID_PARAMS: i32 = -32602;

/// Why a call stopped at `raise`: the JSON-RPC error the plugin chose,
/// checked, cut and redacted (a trap the sandbox turns into an answer).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the plugin raised JSON-RPC error {code}")]
pub(crate) struct ProtocolStop {
    pub(crate) code: i32,
    pub(crate) message: String,
}

/// The protocol capability of one call.
pub(crate) struct ProtocolCapability {
    meter: HostCallMeter,
    scanner: Scanner,
}

impl ProtocolCapability {
    /// A capability charging `meter` and redacting messages with `scanner`.
    pub(crate) fn new(meter: HostCallMeter, scanner: Scanner) -> Self {
        Self { meter, scanner }
    }

    /// The stop `raise(code, message)` ends the call with, or the breach a
    /// reserved code is.
    fn stop(&self, code: i32, message: &str) -> Result<ProtocolStop, ContractBreach> {
        if HOST_JSONRPC_CODES.contains(&code) && code != JSONRPC_INVALID_PARAMS {
            return Err(ContractBreach(format!(
                "raised JSON-RPC error code {code}, which is the host's: a plugin raises \
                 {JSONRPC_INVALID_PARAMS} or a code outside {}..={}",
                HOST_JSONRPC_CODES.start(),
                HOST_JSONRPC_CODES.end()
            )));
        }
        // Redact before cutting: a cut could split a secret into a piece
        // the scanner no longer recognises.
        let message = cut(self.scanner.redact(message).into_owned());
        Ok(ProtocolStop { code, message })
    }
}

/// `message`, at most [`MAX_PROTOCOL_MESSAGE`] bytes, cut at a character
/// boundary.
fn cut(mut message: String) -> String {
    if message.len() > MAX_PROTOCOL_MESSAGE {
        let mut end = MAX_PROTOCOL_MESSAGE;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
    }
    message
}

impl Host for ProtocolCapability {
    /// Always an error: the trap that ends the instance, carrying the
    /// [`ProtocolStop`], a [`ContractBreach`], or the host-call breach.
    fn raise(&mut self, code: i32, message: String) -> wasmtime::Result<()> {
        self.meter.charge()?;
        match self.stop(code, &message) {
            Ok(stop) => Err(stop.into()),
            Err(breach) => Err(breach.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Breach;

    fn protocol(calls: u32) -> ProtocolCapability {
        ProtocolCapability::new(HostCallMeter::new(calls), Scanner::new())
    }

    /// What `raise(code, message)` traps with: the stop, or the breach's text.
    fn raised(code: i32, message: &str) -> Result<ProtocolStop, String> {
        let err = protocol(1)
            .raise(code, message.into())
            .expect_err("raise never returns");
        match err.downcast_ref::<ProtocolStop>() {
            Some(stop) => Ok(stop.clone()),
            None => Err(err
                .downcast_ref::<ContractBreach>()
                .expect("a stop or a breach")
                .0
                .clone()),
        }
    }

    #[test]
    fn an_application_code_or_invalid_params_ends_the_call_with_that_error() {
        for code in [-30000, -30999, -32769, 0, 1001, i32::MIN, i32::MAX, -32602] {
            let stop = raised(code, "no such job").expect("allowed");
            assert_eq!(stop.code, code);
            assert_eq!(stop.message, "no such job");
        }
    }

    #[test]
    fn a_code_of_the_hosts_is_a_contract_breach() {
        for code in [
            -32768, -32700, -32603, -32601, -32050, -32021, -32002, -32000, -31003, -31001, -31000,
        ] {
            let breach = raised(code, "looks like the host").expect_err("refused");
            assert!(breach.contains(&code.to_string()), "{breach}");
        }
    }

    #[test]
    fn a_long_message_is_cut_at_a_character_boundary() {
        let stop = raised(-30000, &"é".repeat(MAX_PROTOCOL_MESSAGE)).expect("allowed");
        assert_eq!(stop.message.len(), MAX_PROTOCOL_MESSAGE);
        assert!(stop.message.chars().all(|c| c == 'é'));
        let odd = format!("a{}", "é".repeat(MAX_PROTOCOL_MESSAGE));
        assert_eq!(
            raised(-30000, &odd).expect("allowed").message.len(),
            MAX_PROTOCOL_MESSAGE - 1
        );
    }

    #[test]
    fn a_secret_in_the_message_is_redacted_even_past_the_cut() {
        let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
        let stop = raised(-30000, &format!("backend refused token {token}")).expect("allowed");
        assert!(!stop.message.contains(token), "{}", stop.message);
        assert!(stop.message.contains("[redacted:"), "{}", stop.message);
        // A secret straddling the cut leaves no recognisable prefix behind.
        let padded = format!("{}{token}", "x ".repeat(MAX_PROTOCOL_MESSAGE / 2 - 10));
        let stop = raised(-30000, &padded).expect("allowed");
        assert!(!stop.message.contains("ghp_"), "{}", stop.message);
    }

    #[test]
    fn raising_is_a_host_call() {
        let mut p = protocol(0);
        let err = p.raise(-30000, "x".into()).expect_err("over budget");
        assert_eq!(
            err.downcast_ref::<Breach>(),
            Some(&Breach::HostCalls { limit: 0 })
        );
    }
}
