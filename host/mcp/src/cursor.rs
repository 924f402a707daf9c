//! Opaque `tools/list` cursors over the name-ordered catalog.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Tools per `tools/list` page. Small enough that a large catalog pages,
/// large enough that a typical one comes in one reply.
pub(crate) const PAGE_SIZE: usize = 100;

/// The cursor that resumes after the tool named `last`.
pub(crate) fn after(last: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("after:{last}"))
}

/// The tool name a cursor resumes after, or `None` if it is not ours.
pub(crate) fn parse(cursor: &str) -> Option<String> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    String::from_utf8(bytes)
        .ok()?
        .strip_prefix("after:")
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_round_trips_and_a_foreign_one_is_refused() {
        assert_eq!(parse(&after("greet")), Some("greet".into()));
        assert_eq!(parse("not-a-cursor!"), None);
        assert_eq!(parse(&URL_SAFE_NO_PAD.encode("before:x")), None);
    }
}
