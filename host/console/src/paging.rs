//! Keyset paging for the console's long lists (audit rows, runs,
//! sessions, users, service clients): a page is its filters and a cursor
//! in the query string, so its address is stable and can be shared, and
//! the store seeks to the cursor in an index instead of counting the rows
//! before it.
//!
//! In a newest-first list, `before=<key>` is the page of rows older than
//! `key` (the last row of the page before it); `after=<key>` the page of
//! rows newer than `key` (the first row of the page after it), still shown
//! newest first. In a list by name, `after=<name>` is the page of the
//! names after it, `before=<name>` of those before it. Neither: the first
//! page. A page links the pages beside it when there are any, with the
//! same filters.

use std::future::Future;

use serde::{Deserialize, Serialize};
use toolhost_storage::PageFrom;
use toolhost_types::keep_page;

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
    /// Where a page of a list by name starts: `after` a name, `before`
    /// one, or at the first name.
    pub(crate) fn by_name(&self) -> PageFrom<String> {
        match (self.before.trim(), self.after.trim()) {
            ("", "") => PageFrom::Start,
            (before, "") => PageFrom::Before(before.to_owned()),
            (_, after) => PageFrom::After(after.to_owned()),
        }
    }

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
/// page before and the page after, when there is one (in a newest-first
/// list, the newer and the older page).
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Pager {
    /// The page before it, toward the list's start (the newest rows).
    pub newer: Option<String>,
    /// The page after it, toward the list's end (the oldest rows).
    pub older: Option<String>,
}

/// The names of a list's two cursors in its pages' addresses.
pub(crate) struct Params {
    /// The one a link to the page before carries (its first row's key).
    pub back: &'static str,
    /// The one a link to the page after carries (its last row's key).
    pub forward: &'static str,
}

/// A list newest first (audit rows, runs, sessions): the page before is
/// `after` the key (newer), the page after `before` it (older).
pub(crate) const NEWEST_FIRST: Params = Params {
    back: "after",
    forward: "before",
};

/// A list in name order (users): the page before is `before` the key,
/// the page after `after` it.
pub(crate) const BY_NAME: Params = Params {
    back: "before",
    forward: "after",
};

/// The neighbours of a page whose rows (in the list's order) run from key
/// `first` to key `last`; `more` says whether the store had a row beyond
/// the page in the direction it read (it reads one more than it shows),
/// and `beyond` whether there is one the other way.
pub(crate) struct Read {
    /// The page was read backward from its cursor (toward the list's start).
    pub backward: bool,
    /// The page is the list's first: read from no cursor.
    pub from_start: bool,
    /// The key of its first and last rows; `None`: empty.
    pub ends: Option<(String, String)>,
    /// A row lies past the page in the direction it was read.
    pub more: bool,
    /// A row lies past the page the other way.
    pub beyond: bool,
}

impl Read {
    /// A page read from `cursor` of a newest-first list.
    pub(crate) fn from(cursor: &Cursor) -> Read {
        Read {
            backward: cursor.toward_newer(),
            from_start: cursor.is_first(),
            ends: None,
            more: false,
            beyond: false,
        }
    }
}

impl Pager {
    /// The links of the page `read` describes of a newest-first list,
    /// each keeping `filters` (name and value pairs; empty values are left
    /// out).
    pub(crate) fn of(read: &Read, filters: &[(&str, &str)]) -> Pager {
        Pager::linked(read, filters, &NEWEST_FIRST)
    }

    /// The links of the page `read` describes, its cursors named by
    /// `params`, each keeping `filters`.
    pub(crate) fn linked(read: &Read, filters: &[(&str, &str)], params: &Params) -> Pager {
        let Some((first, last)) = &read.ends else {
            // An empty page past either end: back to the first rows.
            return Pager {
                newer: (!read.from_start).then(|| query(filters, None)),
                older: None,
            };
        };
        let (before, after) = if read.backward {
            (read.more, read.beyond)
        } else {
            (read.beyond, read.more)
        };
        Pager {
            newer: before.then(|| query(filters, Some((params.back, first)))),
            older: after.then(|| query(filters, Some((params.forward, last)))),
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

/// A page of a list read from `from`, at most `shown` rows, in the list's
/// order: `read(from, limit)` reads rows from a place (the store seeks
/// it), `key` is a row's place. It reads one row more than it shows, and,
/// from a cursor, asks for one row the other way: whether there are pages
/// on either side. The rows, and what [`Pager::linked`] needs of them.
pub(crate) async fn read_page<T, K, E, Fut>(
    from: &PageFrom<K>,
    shown: u32,
    key: impl Fn(&T) -> K,
    read: impl Fn(PageFrom<K>, u32) -> Fut,
) -> Result<(Vec<T>, Read), E>
where
    K: Clone + ToString,
    Fut: Future<Output = Result<Vec<T>, E>>,
{
    let backward = matches!(from, PageFrom::Before(_));
    let mut rows = read(from.clone(), shown.saturating_add(1)).await?;
    let more = keep_page(&mut rows, shown as usize, backward);
    let ends = rows.first().zip(rows.last()).map(|(f, l)| (key(f), key(l)));
    let beyond = match (&ends, from) {
        (Some((first, last)), PageFrom::After(_) | PageFrom::Before(_)) => {
            let other = if backward {
                PageFrom::After(last.clone())
            } else {
                PageFrom::Before(first.clone())
            };
            !read(other, 1).await?.is_empty()
        }
        _ => false,
    };
    let read = Read {
        backward,
        from_start: matches!(from, PageFrom::Start),
        ends: ends.map(|(f, l)| (f.to_string(), l.to_string())),
        more,
        beyond,
    };
    Ok((rows, read))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ready;

    fn cursor(before: &str, after: &str) -> Cursor {
        Cursor {
            before: before.into(),
            after: after.into(),
        }
    }

    fn read(c: &Cursor, ends: Option<(&str, &str)>, more: bool, beyond: bool) -> Pager {
        let read = Read {
            ends: ends.map(|(a, b)| (a.into(), b.into())),
            more,
            beyond,
            ..Read::from(c)
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

    /// The names `a`…`z` as a store would page them.
    fn letters(from: PageFrom<char>, limit: u32) -> std::future::Ready<Result<Vec<char>, ()>> {
        let all: Vec<char> = ('a'..='z').collect();
        let limit = limit as usize;
        let rows = match from {
            PageFrom::Start => all.into_iter().take(limit).collect(),
            PageFrom::After(k) => all.into_iter().filter(|c| *c > k).take(limit).collect(),
            PageFrom::Before(k) => {
                let before: Vec<char> = all.into_iter().filter(|c| *c < k).collect();
                before[before.len().saturating_sub(limit)..].to_vec()
            }
        };
        std::future::ready(Ok(rows))
    }

    #[test]
    fn a_page_read_from_either_side_of_a_cursor_knows_its_neighbours() {
        let page = |from: PageFrom<char>| {
            let (rows, read) = ready(read_page(&from, 10, |c: &char| *c, letters)).expect("a page");
            let pager = Pager::linked(&read, &[("find", "")], &BY_NAME);
            (rows.into_iter().collect::<String>(), pager)
        };
        let (first, pager) = page(PageFrom::Start);
        assert_eq!(first, "abcdefghij");
        assert_eq!(
            (pager.newer, pager.older.as_deref()),
            (None, Some("after=j"))
        );
        let (middle, pager) = page(PageFrom::After('j'));
        assert_eq!(middle, "klmnopqrst");
        assert_eq!(pager.newer.as_deref(), Some("before=k"));
        assert_eq!(pager.older.as_deref(), Some("after=t"));
        let (last, pager) = page(PageFrom::After('t'));
        assert_eq!((last.as_str(), pager.older), ("uvwxyz", None));
        let (back, pager) = page(PageFrom::Before('k'));
        assert_eq!(back, "abcdefghij", "read backward, in the list's order");
        assert_eq!(
            (pager.newer, pager.older.as_deref()),
            (None, Some("after=j"))
        );
        let (short, pager) = page(PageFrom::Before('e'));
        assert_eq!(short, "abcd");
        assert!(pager.newer.is_none() && pager.older.is_some(), "{pager:?}");
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
