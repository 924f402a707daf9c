//! The conformance suite's resources (`resources-*` scenarios).

use toolhost_sdk::prelude::*;
use toolhost_sdk::resources::Contents;

use crate::{RED_PIXEL_PNG, Text};

/// The resource the subscription scenarios watch.
pub const WATCHED: &str = "test://watched-resource";

/// Arguments of `test_touch_watched_resource`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TouchArgs {
    /// The resource that changed: one of this plugin's, or a URI matching
    /// its template (default: test://watched-resource).
    #[serde(default)]
    uri: Option<String>,
}

/// `test_touch_watched_resource`: tells a resource's subscribers it
/// changed; the host's refusal (a URI not this plugin's) is the tool's
/// error.
pub fn touch_watched(_ctx: &Ctx, args: TouchArgs) -> Result<Output<Text>, ToolError> {
    let uri = args.uri.as_deref().unwrap_or(WATCHED);
    toolhost_sdk::resources::updated(uri).map_err(ToolError::Failed)?;
    Ok(crate::text(&format!("{uri} updated")))
}

pub fn resources() -> Resources {
    Resources::new()
        .resource(
            Resource::text(
                "test://static-text",
                "static_text",
                "A static text resource (scenario resources-read-text).",
                "text/plain",
                |_ctx| Ok("This is the content of the static text resource.".to_owned()),
            )
            .permission("conformance", "run"),
        )
        .resource(
            Resource::new(
                "test://static-binary",
                "static_binary",
                "A static binary resource, a PNG (scenario resources-read-binary).",
                |_ctx| Ok(Contents::blob("test://static-binary", "image/png", RED_PIXEL_PNG)),
            )
            .mime_type("image/png")
            .permission("conformance", "run"),
        )
        .resource(
            Resource::text(
                WATCHED,
                "watched_resource",
                "A resource to subscribe to (scenarios resources-subscribe and \
                 resources-unsubscribe); test_touch_watched_resource tells of a change.",
                "text/plain",
                |_ctx| Ok("Watched resource content.".to_owned()),
            )
            .permission("conformance", "run"),
        )
        .template(
            Template::new(
                "test://template/{id}/data",
                "template_data",
                "Data by id (scenario resources-templates-read).",
                |_ctx, vars| {
                    let id = vars.get("id").unwrap_or_default();
                    let data = serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                    Ok(Contents::text(format!("test://template/{id}/data"), "application/json", data.to_string()))
                },
            )
            .mime_type("application/json")
            .permission("conformance", "run"),
        )
}
