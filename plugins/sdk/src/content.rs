//! Content blocks: images, audio, links and embedded resources a tool's
//! answer carries beside its structured result (MCP content), added with
//! [`Output::with_content`](crate::Output::with_content).
//!
//! ```
//! use toolhost_sdk::prelude::*;
//!
//! # const PNG: &[u8] = b"\x89PNG";
//! fn chart(_ctx: &Ctx, _args: ()) -> Result<Output<()>, ToolError> {
//!     Ok(Output::new(())
//!         .with_text("The weekly chart.")
//!         .with_content(Content::image("image/png", PNG)))
//! }
//! ```
//!
//! The host counts every block against the call's output budget, refuses an
//! answer carrying a credential, and keeps a block too large to send inline
//! as an artifact, sending a link to it instead.

use crate::bindings::toolhost::plugin::types as wit;

/// One content block.
#[derive(Debug, Clone, PartialEq)]
pub struct Content(pub(crate) wit::ContentBlock);

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content(wit::ContentBlock::Text(text.into()))
    }

    /// An image: its MIME type (`image/png`…) and bytes.
    pub fn image(mime_type: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        Content(wit::ContentBlock::Image(media(mime_type, data)))
    }

    /// An audio clip: its MIME type (`audio/wav`…) and bytes.
    pub fn audio(mime_type: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        Content(wit::ContentBlock::Audio(media(mime_type, data)))
    }

    /// A link to a resource at `uri`, named `name`. Add what else is known
    /// with [`Link`]'s methods.
    pub fn link(uri: impl Into<String>, name: impl Into<String>) -> Link {
        Link(wit::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        })
    }

    /// A resource's text, embedded.
    pub fn embedded_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Content(wit::ContentBlock::Embedded(wit::EmbeddedResource {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: wit::ResourceBody::Text(text.into()),
        }))
    }

    /// A resource's bytes, embedded.
    pub fn embedded_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl Into<Vec<u8>>,
    ) -> Self {
        Content(wit::ContentBlock::Embedded(wit::EmbeddedResource {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: wit::ResourceBody::Blob(bytes.into()),
        }))
    }
}

/// A resource link being built; it is a [`Content`] block as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Link(wit::ResourceLink);

impl Link {
    /// A display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.0.title = Some(title.into());
        self
    }

    /// What the resource is.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.0.description = Some(description.into());
        self
    }

    /// Its MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.0.mime_type = Some(mime_type.into());
        self
    }

    /// Its size in bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.0.size = Some(size);
        self
    }
}

impl From<Link> for Content {
    fn from(link: Link) -> Self {
        Content(wit::ContentBlock::ResourceLink(link.0))
    }
}

fn media(mime_type: impl Into<String>, data: impl Into<Vec<u8>>) -> wit::Media {
    wit::Media {
        mime_type: mime_type.into(),
        data: data.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_keeps_what_it_was_given() {
        let c: Content = Content::link("test://a", "a")
            .title("A")
            .mime_type("text/plain")
            .size(3)
            .into();
        let wit::ContentBlock::ResourceLink(l) = c.0 else {
            panic!("a link")
        };
        assert_eq!(
            (l.uri.as_str(), l.title.as_deref(), l.size),
            ("test://a", Some("A"), Some(3))
        );
    }
}
