//! Keyset paging for the console's long lists (audit rows, runs): a page
//! is its filters and a cursor in the query string, so its address is
//! stable and can be shared, and the store seeks to the cursor in an
//! index instead of counting the rows before it.
//!
//! `before=<key>` is the page of rows older than `key` (the last row of
//! the page before it); `after=<key>` the page of rows newer than `key`
//! (the first row of the page after it), still shown newest first.
//! Neither: the newest rows. A page links the pages beside it when there
//! are any, with the same filters.

use serde::{Deserialize, Serialize};

/// Where a page starts, as its address says.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub(crate) struct Cursor {
    /// Rows older than this key.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub before: String,
    /// Rows newer than this key.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub after: String,
}

impl Cursor {
    /// Which way the page reads from its cursor: toward newer rows only
    /// for `after` (with no `before`).
    pub(crate) fn toward_newer(&self) -> bool {
        !self.after.trim().is_empty() && self.before.trim().is_empty()
    }

    /// Whether the page is the newest (no cursor at all).
    pub(crate) fn is_first(&self) -> bool {
        self.after.trim().is_empty() && self.before.trim().is_empty()
    }
}

/// What a page shows of the pages beside it: the query strings of the
/// newer and the older page, when there is one.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Pager {
    /// The page before it, toward the newest rows.
    pub newer: Option<String>,
    /// The page after it, toward the oldest rows.
    pub older: Option<String>,
}

/// The neighbours of a page read from `cursor`, whose rows (newest first)
/// run from key `first` to key `last`; `more` says whether the store had
/// a row beyond the page in the direction it read (it reads one more
/// than it shows), and `beyond` whether there is one the other way.
pub(crate) struct Read<'a> {
    /// The cursor the page was read from.
    pub cursor: &'a Cursor,
    /// The key of its first (newest) and last (oldest) rows; `None`: empty.
    pub ends: Option<(String, String)>,
    /// A row lies past the page in the direction it was read.
    pub more: bool,
    /// A row lies past the page the other way.
    pub beyond: bool,
}

impl Pager {
    /// The links of the page `read` describes, each keeping `filters`
    /// (name and value pairs; empty values are left out).
    pub(crate) fn of(read: &Read<'_>, filters: &[(&str, &str)]) -> Pager {
        let Some((first, last)) = &read.ends else {
            // An empty page past either end: back to the newest rows.
            return Pager {
                newer: (!read.cursor.is_first()).then(|| query(filters, None)),
                older: None,
            };
        };
        let (newer, older) = if read.cursor.toward_newer() {
            (read.more, read.beyond)
        } else {
            (read.beyond, read.more)
        };
        Pager {
            newer: newer.then(|| query(filters, Some(("after", first)))),
            older: older.then(|| query(filters, Some(("before", last)))),
        }
    }
}

/// `filters` (their non-empty values) and `cursor` as a query string,
/// percent-encoded.
pub(crate) fn query(filters: &[(&str, &str)], cursor: Option<(&str, &str)>) -> String {
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in filters {
        if !value.trim().is_empty() {
            q.append_pair(name, value.trim());
        }
    }
    if let Some((name, key)) = cursor {
        q.append_pair(name, key);
    }
    q.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(before: &str, after: &str) -> Cursor {
        Cursor {
            before: before.into(),
            after: after.into(),
        }
    }

    fn read(c: &Cursor, ends: Option<(&str, &str)>, more: bool, beyond: bool) -> Pager {
        let read = Read {
            cursor: c,
            ends: ends.map(|(a, b)| (a.into(), b.into())),
            more,
            beyond,
        };
        Pager::of(&read, &[("tool", "run by tag&x"), ("outcome", "")])
    }

    #[test]
    fn each_page_links_its_neighbours_with_the_filters_and_only_when_they_exist() {
        let newest = Cursor::default();
        assert_eq!(
            read(&newest, Some(("300", "201")), true, false),
            Pager {
                newer: None,
                older: Some("tool=run+by+tag%26x&before=201".into()),
            }
        );
        let middle = cursor("201", "");
        assert_eq!(
            read(&middle, Some(("200", "101")), true, true),
            Pager {
                newer: Some("tool=run+by+tag%26x&after=200".into()),
                older: Some("tool=run+by+tag%26x&before=101".into()),
            }
        );
        let oldest = cursor("101", "");
        let p = read(&oldest, Some(("100", "1")), false, true);
        assert!(p.newer.is_some() && p.older.is_none(), "{p:?}");
        // Back toward the newest: `more` is about newer rows now.
        let back = cursor("", "200");
        let p = read(&back, Some(("300", "201")), false, true);
        assert_eq!(p.newer, None);
        assert_eq!(p.older.as_deref(), Some("tool=run+by+tag%26x&before=201"));
    }

    #[test]
    fn an_empty_page_past_an_end_links_back_to_the_newest() {
        let p = read(&cursor("1", ""), None, false, false);
        assert_eq!(p.newer.as_deref(), Some("tool=run+by+tag%26x"));
        assert_eq!(p.older, None);
        assert_eq!(
            read(&Cursor::default(), None, false, false),
            Pager::default()
        );
    }
}
