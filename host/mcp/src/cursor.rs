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

/// The name a paginated request resumes after: none without a cursor,
/// invalid params for a cursor that is not ours.
pub(crate) fn resume_after(
    request: Option<rmcp::model::PaginatedRequestParams>,
) -> Result<Option<String>, rmcp::model::ErrorData> {
    match request.and_then(|r| r.cursor) {
        Some(c) => parse(&c)
            .map(Some)
            .ok_or_else(|| rmcp::model::ErrorData::invalid_params("invalid cursor", None)),
        None => Ok(None),
    }
}

/// The tool name a cursor resumes after, or `None` if it is not ours.
pub(crate) fn parse(cursor: &str) -> Option<String> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    String::from_utf8(bytes)
        .ok()?
        .strip_prefix("after:")
        .map(str::to_owned)
}

/// The page after `after` of `names` (in ascending order): the index
/// range of its items, and the cursor of the next page if there is one.
pub(crate) fn page<'a>(
    names: impl Iterator<Item = &'a str>,
    after: Option<&str>,
    size: usize,
) -> (std::ops::Range<usize>, Option<String>) {
    let names: Vec<&str> = names.collect();
    let start = after.map_or(0, |a| names.partition_point(|n| *n <= a));
    let end = (start + size).min(names.len());
    let next = (end < names.len() && end > start).then(|| self::after(names[end - 1]));
    (start..end, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks every page of `names` the way a client would.
    fn walk(names: &[String], size: usize) -> Vec<Vec<String>> {
        let mut pages = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let after = cursor.as_deref().map(|c| parse(c).expect("our own cursor"));
            let (range, next) = page(names.iter().map(String::as_str), after.as_deref(), size);
            pages.push(names[range].to_vec());
            match next {
                Some(n) => cursor = Some(n),
                None => return pages,
            }
        }
    }

    #[test]
    fn pages_cover_every_tool_once_in_order() {
        let names: Vec<String> = (0..250).map(|i| format!("tool_{i:03}")).collect();
        let pages = walk(&names, PAGE_SIZE);
        assert_eq!(
            pages.iter().map(Vec::len).collect::<Vec<_>>(),
            [100, 100, 50]
        );
        assert_eq!(pages.concat(), names);
    }

    #[test]
    fn an_exact_multiple_ends_without_an_empty_page_and_a_small_list_is_one_page() {
        let names: Vec<String> = (0..200).map(|i| format!("t{i:03}")).collect();
        assert_eq!(walk(&names, 100).len(), 2);
        assert_eq!(walk(&names[..3], 100), [names[..3].to_vec()]);
        assert_eq!(walk(&[], 100), [Vec::<String>::new()]);
    }

    #[test]
    fn a_cursor_past_a_removed_tool_resumes_at_the_next_name() {
        let names = ["a", "c", "d"].map(String::from);
        let (range, _) = page(names.iter().map(String::as_str), Some("b"), 10);
        assert_eq!(&names[range], ["c", "d"]);
    }

    #[test]
    fn a_cursor_round_trips_and_a_foreign_one_is_refused() {
        assert_eq!(parse(&after("greet")), Some("greet".into()));
        assert_eq!(parse("not-a-cursor!"), None);
        assert_eq!(parse(&URL_SAFE_NO_PAD.encode("before:x")), None);
    }
}
