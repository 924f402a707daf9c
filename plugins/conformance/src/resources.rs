//! The conformance suite's resources (`resources-*` scenarios).

use toolhost_sdk::prelude::*;
use toolhost_sdk::resources::Contents;

use crate::RED_PIXEL_PNG;

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
