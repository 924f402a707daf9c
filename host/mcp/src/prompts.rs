//! `prompts/list`, `prompts/get` and `completion/complete` over the
//! prompts plugins export: host values as MCP values, and a get that needs
//! the client's input answered `input_required` (2026-07-28) with the
//! request state sealed as a call's is.

use std::collections::BTreeMap;

use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ErrorData, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Prompt, PromptArgument, PromptMessage, Reference, Role,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use toolhost_invoke::{InvokeError, PromptAnswer, PromptRef};
use toolhost_runtime::{CallError, PromptRole};

use crate::ask::{Asker, Retry};
use crate::{client, convert};

/// A prompt as `prompts/list` shows it.
pub(crate) fn prompt(p: &PromptRef) -> Prompt {
    let s = &p.spec;
    let arguments: Vec<PromptArgument> = (s.arguments.iter())
        .map(|a| {
            let mut arg = PromptArgument::new(a.name.clone());
            arg.description = a.description.clone();
            arg.required = Some(a.required);
            arg
        })
        .collect();
    let mut prompt = Prompt::new(s.name.clone(), Some(s.description.clone()), Some(arguments));
    prompt.title = s.title.clone();
    prompt
}

/// The binding of a prompt's request state: what a call's would be, for
/// the pseudo-tool `prompt:NAME`.
fn binding(name: &str) -> String {
    format!("prompt:{name}")
}

/// `prompts/get`: the prompt, an MRTR round, or a JSON-RPC error (an
/// unknown prompt, arguments that do not fit, what the plugin failed with,
/// redacted).
pub(crate) async fn get(
    host: &toolhost_invoke::Toolhost,
    asker: &Asker,
    who: &toolhost_types::Principal,
    request: GetPromptRequestParams,
    ctx: &RequestContext<RoleServer>,
) -> Result<GetPromptResponse, ErrorData> {
    let mut arguments = BTreeMap::new();
    for (k, v) in request.arguments.clone().unwrap_or_default() {
        let Value::String(v) = v else {
            return Err(ErrorData::invalid_params(
                format!("prompt argument {k:?} is not a string"),
                None,
            ));
        };
        arguments.insert(k, v);
    }
    let bound = binding(&request.name);
    let args = json!(arguments);
    let retry = match &request.request_state {
        Some(state) => {
            asker
                .retry(who, &bound, &args, state, request.input_responses.as_ref())
                .await?
        }
        None => Retry {
            inputs: request.input_responses.clone().unwrap_or_default(),
            ..Retry::default()
        },
    };
    let link = client::link(ctx, retry.inputs.clone());
    match host
        .get_prompt(who, &request.name, &arguments, Some(link))
        .await
    {
        Ok(PromptAnswer::Prompt(p)) => {
            let messages = (p.messages.into_iter())
                .map(|m| {
                    let role = match m.role {
                        PromptRole::User => Role::User,
                        PromptRole::Assistant => Role::Assistant,
                    };
                    PromptMessage::new(role, convert::content_block(m.content))
                })
                .collect();
            let mut result = GetPromptResult::new(messages);
            result.description = p.description;
            Ok(GetPromptResponse::Complete(result))
        }
        Ok(PromptAnswer::NeedsInput(requests)) => {
            let asked = asker.plugin_inputs(who, &bound, &args, requests, &retry)?;
            Ok(GetPromptResponse::InputRequired(asked))
        }
        Err(e) => Err(failure(&e, host.scanner(), &request.name)),
    }
}

/// A failed get as a JSON-RPC error: invalid params for what the client
/// can fix (the prompt or its arguments), -32021 for a capability it did
/// not declare, the host's internal and unavailable errors as for any
/// request, the plugin's own failure with its code, redacted, and a
/// JSON-RPC error the plugin raised as it raised it.
fn failure(e: &InvokeError, scanner: &toolhost_secrets::Scanner, name: &str) -> ErrorData {
    if let Some(raised) = convert::raised(e, scanner) {
        return raised;
    }
    match e {
        InvokeError::PromptNotFound { .. } => {
            ErrorData::invalid_params(e.to_string(), Some(json!({"code": e.code(), "name": name})))
        }
        InvokeError::InvalidArguments { .. } => {
            ErrorData::invalid_params(e.to_string(), Some(json!({"code": e.code()})))
        }
        InvokeError::Call(CallError::MissingClientCapability { capability }) => {
            client::missing_capability(capability)
        }
        e if e.is_internal() || e.store_unavailable().is_some() => {
            convert::rpc_failure(e, "getting a prompt")
        }
        e => ErrorData::internal_error(
            scanner.redact(&e.to_string()).into_owned(),
            Some(json!({"code": e.code()})),
        ),
    }
}

/// `completion/complete`: a prompt argument's or a resource template
/// variable's completions.
pub(crate) async fn complete(
    host: &toolhost_invoke::Toolhost,
    who: &toolhost_types::Principal,
    request: CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let arg = &request.argument;
    let (completed, name) = match &request.r#ref {
        Reference::Prompt(prompt) => {
            let done = host.complete_prompt_argument(who, &prompt.name, &arg.name, &arg.value);
            (done.await, prompt.name.as_str())
        }
        Reference::Resource(template) => {
            let done = host.complete_template_variable(who, &template.uri, &arg.name, &arg.value);
            (done.await, template.uri.as_str())
        }
        // A reference kind this host does not know completes nothing.
        _ => return Ok(CompleteResult::new(CompletionInfo::default())),
    };
    match completed {
        Ok((values, total)) => {
            let more = total > values.len();
            let mut info = CompletionInfo::new(values).unwrap_or_default();
            info.total = Some(u32::try_from(total).unwrap_or(u32::MAX));
            info.has_more = Some(more);
            Ok(CompleteResult::new(info))
        }
        Err(e) => Err(failure(&e, host.scanner(), name)),
    }
}
