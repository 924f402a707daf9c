//! The conformance suite's prompts (`prompts-*` scenarios, and the
//! input-required round on a prompt).

use serde_json::json;
use toolhost_sdk::client::{self, Elicitation};
use toolhost_sdk::prelude::*;

use crate::RED_PIXEL_PNG;

pub fn prompts() -> Vec<Prompt> {
    let prompt = |p: Prompt| p.permission("conformance", "run");
    vec![
        prompt(Prompt::new(
            "test_simple_prompt",
            "A prompt without arguments (scenario prompts-get-simple).",
            |_ctx, _args| Ok(vec![Message::user("This is a simple prompt for testing.")]),
        )),
        prompt(
            Prompt::new(
                "test_prompt_with_arguments",
                "A prompt with two arguments (scenario prompts-get-with-args).",
                |_ctx, args| {
                    let (a, b) = (
                        args.get("arg1").unwrap_or(""),
                        args.get("arg2").unwrap_or(""),
                    );
                    Ok(vec![Message::user(format!(
                        "Prompt with arguments: arg1='{a}', arg2='{b}'"
                    ))])
                },
            )
            .argument("arg1", "First test argument", true)
            .argument("arg2", "Second test argument", true),
        ),
        prompt(
            Prompt::new(
                "test_prompt_with_embedded_resource",
                "A prompt embedding a resource (scenario prompts-get-embedded-resource).",
                |_ctx, args| {
                    let uri = args.get("resourceUri").unwrap_or("test://resource");
                    Ok(vec![
                        Message::user(Content::embedded_text(
                            uri,
                            "text/plain",
                            "Embedded resource content for testing.",
                        )),
                        Message::user("Please process the embedded resource above."),
                    ])
                },
            )
            .argument("resourceUri", "URI of the resource to embed", true),
        ),
        prompt(Prompt::new(
            "test_prompt_with_image",
            "A prompt with an image (scenario prompts-get-with-image).",
            |_ctx, _args| {
                Ok(vec![
                    Message::user(Content::image("image/png", RED_PIXEL_PNG)),
                    Message::user("Please analyze the image above."),
                ])
            },
        )),
        prompt(Prompt::new(
            "test_input_required_result_prompt",
            "A prompt that asks the person first (scenario input-required-result-non-tool-request).",
            |_ctx, _args| {
                let form = json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]});
                let asked =
                    client::elicit("user_context", "What context should the prompt use?", &form)
                        .map_err(|e| ToolError::Failed(e.to_string()))?;
                let context = match asked {
                    Elicitation::Accept(c) => c["context"].as_str().unwrap_or_default().to_owned(),
                    _ => "none".to_owned(),
                };
                Ok(vec![Message::user(format!("Use this context: {context}"))])
            },
        )),
    ]
}
