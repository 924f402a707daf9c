//! Content blocks: what a tool's answer may carry beside its structured
//! result (0.2.0), as the host sees them once checked at the boundary.
//!
//! Each block is counted against the call's output budget with the rest of
//! the answer; the call path scans them for secrets and keeps a large one
//! as an artifact. Bytes travel raw from the plugin and are base64-encoded
//! only where JSON needs it (MCP, a stored idempotent answer).

use serde::{Deserialize, Serialize};

use crate::bindings::toolhost::plugin::types as wit;

/// Most blocks one answer may carry: past it an answer is a flood.
pub const MAX_CONTENT_BLOCKS: usize = 64;
/// Longest MIME type, URI, or resource name accepted, in bytes.
pub const MAX_CONTENT_FIELD: usize = 2048;

/// One MCP content block of a tool's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// A text block.
    Text {
        /// The text.
        text: String,
    },
    /// An image, `image/*`.
    Image {
        /// Its MIME type.
        mime_type: String,
        /// Its bytes.
        #[serde(with = "base64_bytes")]
        data: Vec<u8>,
    },
    /// An audio clip, `audio/*`.
    Audio {
        /// Its MIME type.
        mime_type: String,
        /// Its bytes.
        #[serde(with = "base64_bytes")]
        data: Vec<u8>,
    },
    /// A resource named by URI, not sent.
    ResourceLink(ResourceLink),
    /// A resource's contents, sent.
    Resource {
        /// The resource's URI.
        uri: String,
        /// Its MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its contents.
        body: ResourceBody,
    },
}

/// A link to a resource (MCP `resource_link`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceLink {
    /// Where it is.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// An embedded resource's contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceBody {
    /// UTF-8 text.
    Text(String),
    /// Bytes.
    Blob(#[serde(with = "base64_bytes")] Vec<u8>),
}

impl ContentBlock {
    /// The bytes it adds to an answer, as the output budget counts them.
    pub fn size(&self) -> usize {
        match self {
            ContentBlock::Text { text } => text.len(),
            ContentBlock::Image { mime_type, data } | ContentBlock::Audio { mime_type, data } => {
                mime_type.len() + data.len()
            }
            ContentBlock::ResourceLink(l) => {
                let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
                l.uri.len() + l.name.len() + opt(&l.title) + opt(&l.description) + 8
            }
            ContentBlock::Resource {
                uri,
                mime_type,
                body,
            } => uri.len() + mime_type.as_ref().map_or(0, String::len) + body.len(),
        }
    }

    /// Its payload, when it is one the host may keep as an artifact
    /// instead (media and embedded resources): the bytes and their MIME type.
    pub fn payload(&self) -> Option<(&[u8], &str)> {
        match self {
            ContentBlock::Image { mime_type, data } | ContentBlock::Audio { mime_type, data } => {
                Some((data, mime_type))
            }
            ContentBlock::Resource {
                mime_type, body, ..
            } => {
                let mime = mime_type.as_deref().unwrap_or(match body {
                    ResourceBody::Text(_) => "text/plain; charset=utf-8",
                    ResourceBody::Blob(_) => "application/octet-stream",
                });
                Some((body.bytes(), mime))
            }
            ContentBlock::Text { .. } | ContentBlock::ResourceLink(_) => None,
        }
    }

    /// Every text in it a secret could hide in (bytes read as UTF-8, lossily).
    pub fn texts(&self) -> Vec<std::borrow::Cow<'_, str>> {
        use std::borrow::Cow;
        let lossy = |b: &'_ [u8]| String::from_utf8_lossy(b).into_owned();
        match self {
            ContentBlock::Text { text } => vec![Cow::Borrowed(text.as_str())],
            ContentBlock::Image { mime_type, data } | ContentBlock::Audio { mime_type, data } => {
                vec![Cow::Borrowed(mime_type.as_str()), Cow::Owned(lossy(data))]
            }
            ContentBlock::ResourceLink(l) => [
                Some(&l.uri),
                Some(&l.name),
                l.title.as_ref(),
                l.description.as_ref(),
                l.mime_type.as_ref(),
            ]
            .into_iter()
            .flatten()
            .map(|s| Cow::Borrowed(s.as_str()))
            .collect(),
            ContentBlock::Resource {
                uri,
                mime_type,
                body,
            } => {
                let mut texts = vec![Cow::Borrowed(uri.as_str())];
                texts.extend(mime_type.as_deref().map(Cow::Borrowed));
                texts.push(match body {
                    ResourceBody::Text(t) => Cow::Borrowed(t.as_str()),
                    ResourceBody::Blob(b) => Cow::Owned(lossy(b)),
                });
                texts
            }
        }
    }
}

impl ResourceBody {
    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            ResourceBody::Text(t) => t.as_bytes(),
            ResourceBody::Blob(b) => b,
        }
    }

    fn len(&self) -> usize {
        self.bytes().len()
    }
}

/// The blocks a plugin answered, checked: at most [`MAX_CONTENT_BLOCKS`],
/// every MIME type of the form `type/subtype` (an image's `image/…`, an
/// audio clip's `audio/…`), every URI with a scheme, every field at most
/// [`MAX_CONTENT_FIELD`] bytes, and a link's name not blank.
pub(crate) fn checked(blocks: Vec<wit::ContentBlock>) -> Result<Vec<ContentBlock>, String> {
    if blocks.len() > MAX_CONTENT_BLOCKS {
        return Err(format!(
            "{} content blocks, more than {MAX_CONTENT_BLOCKS}",
            blocks.len()
        ));
    }
    blocks
        .into_iter()
        .enumerate()
        .map(|(i, b)| block(b).map_err(|e| format!("content block {i}: {e}")))
        .collect()
}

fn block(b: wit::ContentBlock) -> Result<ContentBlock, String> {
    Ok(match b {
        wit::ContentBlock::Text(text) => ContentBlock::Text { text },
        wit::ContentBlock::Image(m) => ContentBlock::Image {
            mime_type: mime(m.mime_type, Some("image"))?,
            data: m.data,
        },
        wit::ContentBlock::Audio(m) => ContentBlock::Audio {
            mime_type: mime(m.mime_type, Some("audio"))?,
            data: m.data,
        },
        wit::ContentBlock::ResourceLink(l) => {
            if l.name.trim().is_empty() {
                return Err("a resource link's name is blank".into());
            }
            let field = |s: Option<String>, what| s.map(|s| bounded(s, what)).transpose();
            ContentBlock::ResourceLink(ResourceLink {
                uri: uri(l.uri)?,
                name: bounded(l.name, "name")?,
                title: field(l.title, "title")?,
                description: l.description,
                mime_type: l.mime_type.map(|m| mime(m, None)).transpose()?,
                size: l.size,
            })
        }
        wit::ContentBlock::Embedded(r) => ContentBlock::Resource {
            uri: uri(r.uri)?,
            mime_type: r.mime_type.map(|m| mime(m, None)).transpose()?,
            body: match r.body {
                wit::ResourceBody::Text(t) => ResourceBody::Text(t),
                wit::ResourceBody::Blob(b) => ResourceBody::Blob(b),
            },
        },
    })
}

fn bounded(s: String, what: &str) -> Result<String, String> {
    if s.len() > MAX_CONTENT_FIELD {
        return Err(format!(
            "its {what} is {} bytes, more than {MAX_CONTENT_FIELD}",
            s.len()
        ));
    }
    Ok(s)
}

/// A MIME type `type/subtype` (parameters allowed), of `kind` when given.
fn mime(m: String, kind: Option<&str>) -> Result<String, String> {
    let m = bounded(m, "MIME type")?;
    let essence = m.split(';').next().unwrap_or_default().trim();
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    let ok = match essence.split_once('/') {
        Some((t, sub)) => token(t) && token(sub) && kind.is_none_or(|k| t.eq_ignore_ascii_case(k)),
        None => false,
    };
    if !ok {
        let want = kind.map_or(String::from("type/subtype"), |k| format!("{k}/…"));
        return Err(format!("MIME type {m:?} is not {want}"));
    }
    Ok(m)
}

/// A URI with a scheme (`scheme:…`, RFC 3986's scheme characters).
fn uri(u: String) -> Result<String, String> {
    let u = bounded(u, "URI")?;
    let scheme = u.split_once(':').map(|(s, _)| s).unwrap_or_default();
    let ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    if !ok || u.chars().any(char::is_whitespace) {
        return Err(format!("URI {u:?} has no scheme or holds whitespace"));
    }
    Ok(u)
}

mod base64_bytes {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn media(mime: &str) -> wit::Media {
        wit::Media {
            mime_type: mime.into(),
            data: vec![1, 2, 3],
        }
    }

    fn link(uri: &str, name: &str) -> wit::ContentBlock {
        wit::ContentBlock::ResourceLink(wit::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        })
    }

    #[test]
    fn well_formed_blocks_pass_and_keep_their_order() {
        let blocks = vec![
            wit::ContentBlock::Text("hi".into()),
            wit::ContentBlock::Image(media("image/png")),
            wit::ContentBlock::Audio(media("audio/wav")),
            link("https://example.test/a", "a"),
            wit::ContentBlock::Embedded(wit::EmbeddedResource {
                uri: "test://r".into(),
                mime_type: Some("text/plain; charset=utf-8".into()),
                body: wit::ResourceBody::Text("body".into()),
            }),
        ];
        let out = checked(blocks).expect("valid");
        assert_eq!(out.len(), 5);
        assert!(matches!(out[1], ContentBlock::Image { .. }));
        assert_eq!(
            out[4].payload(),
            Some((&b"body"[..], "text/plain; charset=utf-8"))
        );
    }

    #[test]
    fn malformed_blocks_are_refused_naming_the_block() {
        let cases: Vec<(wit::ContentBlock, &str)> = vec![
            (
                wit::ContentBlock::Image(media("audio/wav")),
                "is not image/…",
            ),
            (wit::ContentBlock::Audio(media("wav")), "is not audio/…"),
            (wit::ContentBlock::Image(media("image/")), "is not image/…"),
            (link("no scheme here", "a"), "has no scheme"),
            (link("1http://x", "a"), "has no scheme"),
            (link("https://x", "  "), "name is blank"),
            (
                link(&format!("x:{}", "a".repeat(MAX_CONTENT_FIELD)), "a"),
                "more than",
            ),
        ];
        for (block, want) in cases {
            let err =
                checked(vec![wit::ContentBlock::Text("ok".into()), block]).expect_err("refused");
            assert!(err.starts_with("content block 1: "), "{err}");
            assert!(err.contains(want), "{err} should say {want}");
        }
        let flood = vec![wit::ContentBlock::Text(String::new()); MAX_CONTENT_BLOCKS + 1];
        assert!(
            checked(flood)
                .expect_err("a flood")
                .contains("more than 64")
        );
    }

    #[test]
    fn blocks_round_trip_through_json_with_bytes_in_base64() {
        let blocks = vec![
            ContentBlock::Image {
                mime_type: "image/png".into(),
                data: vec![0, 255, 7],
            },
            ContentBlock::Resource {
                uri: "test://b".into(),
                mime_type: None,
                body: ResourceBody::Blob(vec![9; 5]),
            },
        ];
        let json = serde_json::to_value(&blocks).expect("serializes");
        assert_eq!(json[0]["data"], "AP8H");
        let back: Vec<ContentBlock> = serde_json::from_value(json).expect("deserializes");
        assert_eq!(back, blocks);
    }

    #[test]
    fn binary_bytes_are_scanned_as_text() {
        let b = ContentBlock::Audio {
            mime_type: "audio/wav".into(),
            data: b"RIFF secret=abc".to_vec(),
        };
        assert!(b.texts().iter().any(|t| t.contains("secret=abc")));
    }
}
