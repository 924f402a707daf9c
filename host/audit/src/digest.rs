//! Canonical JSON and the argument digest.

use serde_json::Value;
use toolhost_types::Digest;
pub use toolhost_types::canonical_json;

/// The SHA-256 of the canonical JSON of a call's arguments.
pub fn argument_digest(args: &Value) -> Digest {
    Digest::of(canonical_json(args).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn different_arguments_have_different_digests() {
        assert_ne!(
            argument_digest(&json!({"a": 1})),
            argument_digest(&json!({"a": 2}))
        );
        assert_ne!(
            argument_digest(&json!([1, 2])),
            argument_digest(&json!([2, 1]))
        );
    }
}
