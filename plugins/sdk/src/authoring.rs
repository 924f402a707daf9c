//! The `authoring` export: the objects a plugin authors in its domain (a
//! project's test plan…), each kind implemented by one [`Author`].
//!
//! The host owns authoring: sessions, proposals, their diffs, reviews and
//! promotion. A plugin says what its objects mean: a subject's
//! [`Current`] state, whether a proposal is valid (the normalized proposal,
//! or every [`Problem`]), and what promoting it would [`Change`]. Promotion
//! is a call of the kind's `promoted_by` tool with the normalized proposal
//! as its arguments, so make [`Author::Normalized`] that tool's arguments
//! type: the two cannot drift apart.
//!
//! A plugin that authors passes an `fn() -> Authoring` to
//! [`export_plugin!`](crate::export_plugin) (`authoring = my_authoring`);
//! every other plugin exports [`Authoring::none`] without saying so.
//!
//! ```no_run
//! # use toolhost_sdk::prelude::*;
//! # use toolhost_sdk::authoring::{Author, Authoring, AuthoringKind, Change, Current, Problem};
//! #[derive(Serialize, Deserialize)]
//! struct Notes { lines: Vec<String> }
//!
//! struct NoteBooks;
//!
//! impl Author for NoteBooks {
//!     type Current = Notes;
//!     type Normalized = Notes;
//!
//!     fn current(&self, _ctx: &Ctx, subject: i64) -> Result<Current<Notes>, ToolError> {
//!         let notes: Notes = backend::get("nb", &format!("/books/{subject}"))?.ok()?.json()?;
//!         Ok(Current::new(format!("{}", notes.lines.len()), notes))
//!     }
//!
//!     fn validate(&self, _ctx: &Ctx, _current: &Notes, proposal: &serde_json::Value)
//!         -> Result<Notes, Vec<Problem>> {
//!         serde_json::from_value(proposal.clone())
//!             .map_err(|e| vec![Problem::whole(e.to_string())])
//!     }
//!
//!     fn diff(&self, _ctx: &Ctx, current: &Notes, normalized: &Notes)
//!         -> Result<Vec<Change>, ToolError> {
//!         let new = normalized.lines.iter().filter(|l| !current.lines.contains(l));
//!         Ok(new.map(|l| Change::added(l, l)).collect())
//!     }
//! }
//!
//! fn authoring() -> Authoring {
//!     Authoring::new(
//!         AuthoringKind::new("note_book", "A book's notes.")
//!             .subject_kind("book")
//!             .promoted_by("write_notes"),
//!         NoteBooks,
//!     )
//! }
//! ```
//!
//! The host runs each function in a fresh sandbox: `current` with GET and
//! HEAD backend requests only, `validate` and `diff` with no backend at
//! all (keep them pure). It refuses a kind's `current` body, normalized
//! proposal or change that is not JSON, and bounds how many problems and
//! changes it accepts.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::bindings::exports::toolhost::plugin::authoring::CurrentState;
pub use crate::bindings::exports::toolhost::plugin::authoring::{
    AuthoringKind, Change, ChangeOp, Problem,
};
use crate::{Ctx, ToolError};

/// A subject's current state: a `version` that changes whenever the state
/// does (the host compares it to see whether the subject moved under a
/// proposal; opaque, 1–256 bytes) and the state itself, which the host
/// hands back to [`Author::validate`] and [`Author::diff`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Current<T> {
    /// Changes whenever `body` does.
    pub version: String,
    /// The state.
    pub body: T,
}

impl<T> Current<T> {
    /// `body` at `version`.
    pub fn new(version: impl Into<String>, body: T) -> Self {
        Current {
            version: version.into(),
            body,
        }
    }
}

/// One kind of authored object: how to read a subject's state, check a
/// proposal, and tell what promoting it changes.
///
/// A value that does not serialize to JSON (a map with non-string keys) is
/// a bug in the plugin: the SDK panics on it, which the host sees as a trap.
pub trait Author {
    /// The state `current` reads: the host keeps it as JSON and passes it
    /// back, so it must deserialize from what it serializes to.
    type Current: Serialize + DeserializeOwned;
    /// The normalized proposal: exactly the arguments of the kind's
    /// `promoted_by` tool (use that tool's arguments type).
    type Normalized: Serialize + DeserializeOwned;

    /// The state of `subject` (an entity id of the kind's subject kind) for
    /// `ctx.tenant`. Backend requests other than GET and HEAD are refused.
    fn current(&self, ctx: &Ctx, subject: i64) -> Result<Current<Self::Current>, ToolError>;

    /// The normalized proposal, or every problem found (each with a JSON
    /// pointer into `proposal`). Pure: the host grants no backend here.
    fn validate(
        &self,
        ctx: &Ctx,
        current: &Self::Current,
        proposal: &Value,
    ) -> Result<Self::Normalized, Vec<Problem>>;

    /// What promoting `normalized` would change relative to `current`.
    /// Pure: the host grants no backend here.
    fn diff(
        &self,
        ctx: &Ctx,
        current: &Self::Current,
        normalized: &Self::Normalized,
    ) -> Result<Vec<Change>, ToolError>;
}

/// An [`Author`] with its types erased to the JSON text the WIT carries.
trait Erased {
    fn current(&self, ctx: &Ctx, subject: i64) -> Result<CurrentState, ToolError>;
    fn validate(&self, ctx: &Ctx, current: &str, proposal: &str) -> Result<String, Vec<Problem>>;
    fn diff(&self, ctx: &Ctx, current: &str, normalized: &str) -> Result<Vec<Change>, ToolError>;
}

impl<A: Author> Erased for A {
    fn current(&self, ctx: &Ctx, subject: i64) -> Result<CurrentState, ToolError> {
        let current = Author::current(self, ctx, subject)?;
        Ok(CurrentState {
            version: current.version,
            body: json("a current state", &current.body),
        })
    }

    fn validate(&self, ctx: &Ctx, current: &str, proposal: &str) -> Result<String, Vec<Problem>> {
        let current: A::Current = serde_json::from_str(current).map_err(|e| {
            vec![Problem::whole(format!(
                "the current state does not parse: {e}"
            ))]
        })?;
        let proposal: Value = serde_json::from_str(proposal)
            .map_err(|e| vec![Problem::whole(format!("the proposal is not JSON: {e}"))])?;
        let normalized = Author::validate(self, ctx, &current, &proposal)?;
        Ok(json("a normalized proposal", &normalized))
    }

    fn diff(&self, ctx: &Ctx, current: &str, normalized: &str) -> Result<Vec<Change>, ToolError> {
        let invalid = |what: &str, e: serde_json::Error| {
            ToolError::InvalidArguments(format!("{what} does not parse: {e}"))
        };
        let current: A::Current =
            serde_json::from_str(current).map_err(|e| invalid("the current state", e))?;
        let normalized: A::Normalized =
            serde_json::from_str(normalized).map_err(|e| invalid("the normalized proposal", e))?;
        Author::diff(self, ctx, &current, &normalized)
    }
}

/// The kinds a plugin authors, each with its [`Author`].
#[derive(Default)]
pub struct Authoring {
    kinds: Vec<(AuthoringKind, Box<dyn Erased>)>,
}

impl Authoring {
    /// No kinds: the plugin authors nothing (the default).
    pub fn none() -> Self {
        Authoring::default()
    }

    /// One kind, authored by `author`.
    pub fn new(kind: AuthoringKind, author: impl Author + 'static) -> Self {
        Authoring::none().kind(kind, author)
    }

    /// One more kind, authored by `author`.
    pub fn kind(mut self, kind: AuthoringKind, author: impl Author + 'static) -> Self {
        self.kinds.push((kind, Box::new(author)));
        self
    }

    /// The kinds, in the plugin's order. Panics (the host refuses the
    /// plugin) on a duplicate name or a kind without its subject kind or
    /// promoting tool, as `describe` does on two tools of one name.
    pub(crate) fn kinds(self) -> Vec<AuthoringKind> {
        let kinds: Vec<AuthoringKind> = self.kinds.into_iter().map(|(k, _)| k).collect();
        for (i, k) in kinds.iter().enumerate() {
            if kinds[..i].iter().any(|o| o.name == k.name) {
                panic!("the authoring kind {:?} is listed twice", k.name);
            }
            if k.subject_kind.is_empty() || k.promoted_by.is_empty() {
                panic!(
                    "the authoring kind {:?} needs .subject_kind(kind) and .promoted_by(tool)",
                    k.name
                );
            }
        }
        kinds
    }

    /// `current`, or `invalid-arguments` for a kind not listed.
    pub(crate) fn current(
        &self,
        ctx: &Ctx,
        kind: &str,
        subject: i64,
    ) -> Result<CurrentState, ToolError> {
        self.author(kind)
            .map_err(ToolError::InvalidArguments)?
            .current(ctx, subject)
    }

    /// `validate`, or one whole-proposal problem for a kind not listed.
    pub(crate) fn validate(
        &self,
        ctx: &Ctx,
        kind: &str,
        current: &str,
        proposal: &str,
    ) -> Result<String, Vec<Problem>> {
        self.author(kind)
            .map_err(|m| vec![Problem::whole(m)])?
            .validate(ctx, current, proposal)
    }

    /// `diff`, or `invalid-arguments` for a kind not listed.
    pub(crate) fn diff(
        &self,
        ctx: &Ctx,
        kind: &str,
        current: &str,
        normalized: &str,
    ) -> Result<Vec<Change>, ToolError> {
        self.author(kind)
            .map_err(ToolError::InvalidArguments)?
            .diff(ctx, current, normalized)
    }

    fn author(&self, kind: &str) -> Result<&dyn Erased, String> {
        match self.kinds.iter().find(|(k, _)| k.name == kind) {
            Some((_, author)) => Ok(author.as_ref()),
            None => {
                let names: Vec<&str> = self.kinds.iter().map(|(k, _)| k.name.as_str()).collect();
                Err(format!(
                    "this plugin authors no kind {kind:?} (it authors {names:?})"
                ))
            }
        }
    }
}

impl AuthoringKind {
    /// A kind named `name` (1–64 of `[a-z0-9_]`, e.g. `test_plan`) that
    /// `description` explains. Name its subject kind and promoting tool
    /// with [`subject_kind`](Self::subject_kind) and
    /// [`promoted_by`](Self::promoted_by): both are required.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        AuthoringKind {
            name: name.into(),
            description: description.into(),
            subject_kind: String::new(),
            promoted_by: String::new(),
        }
    }

    /// The entity kind a session's subject names (one the plugin's
    /// entities export lists, e.g. `project`).
    pub fn subject_kind(mut self, kind: impl Into<String>) -> Self {
        self.subject_kind = kind.into();
        self
    }

    /// The plugin's tool whose call, with the normalized proposal as its
    /// arguments, promotes a proposal. The host refuses the plugin unless
    /// it describes that tool.
    pub fn promoted_by(mut self, tool: impl Into<String>) -> Self {
        self.promoted_by = tool.into();
        self
    }
}

impl Problem {
    /// A problem at `path`, a JSON pointer into the proposal
    /// (`/tests/3/name`; escape object keys with [`escape`]).
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            path: path.into(),
            message: message.into(),
        }
    }

    /// A problem of the proposal as a whole (the empty pointer).
    pub fn whole(message: impl Into<String>) -> Self {
        Problem::new("", message)
    }
}

impl Change {
    /// `item` is new; `after` is what it will be.
    pub fn added(item: impl Into<String>, after: &impl Serialize) -> Self {
        Change::of(ChangeOp::Added, item, None, Some(json("a change", after)))
    }

    /// `item` changes from `before` to `after`.
    pub fn changed(
        item: impl Into<String>,
        before: &impl Serialize,
        after: &impl Serialize,
    ) -> Self {
        let (before, after) = (json("a change", before), json("a change", after));
        Change::of(ChangeOp::Changed, item, Some(before), Some(after))
    }

    /// `item` goes away; `before` is what it was.
    pub fn removed(item: impl Into<String>, before: &impl Serialize) -> Self {
        Change::of(
            ChangeOp::Removed,
            item,
            Some(json("a change", before)),
            None,
        )
    }

    fn of(
        op: ChangeOp,
        item: impl Into<String>,
        before: Option<String>,
        after: Option<String>,
    ) -> Self {
        Change {
            op,
            item: item.into(),
            before,
            after,
        }
    }
}

/// One JSON-pointer reference token (RFC 6901): `~` as `~0`, `/` as `~1`,
/// so an object key such as `a/b` becomes the path segment `a~1b`.
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// `value` as JSON text. Panics when it does not serialize (see [`Author`]).
fn json(what: &str, value: &impl Serialize) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|e| panic!("{what} does not serialize to JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Words {
        words: Vec<String>,
    }

    /// Authors a list of words: a proposal is a list of non-blank words.
    struct WordLists;

    impl Author for WordLists {
        type Current = Words;
        type Normalized = Words;

        fn current(&self, ctx: &Ctx, subject: i64) -> Result<Current<Words>, ToolError> {
            let words = vec![ctx.tenant.clone(), subject.to_string()];
            Ok(Current::new("v1", Words { words }))
        }

        fn validate(&self, _: &Ctx, _: &Words, proposal: &Value) -> Result<Words, Vec<Problem>> {
            let words: Vec<String> = serde_json::from_value(proposal["words"].clone())
                .map_err(|e| vec![Problem::new("/words", e.to_string())])?;
            let blank = words
                .iter()
                .enumerate()
                .filter(|(_, w)| w.trim().is_empty());
            let problems: Vec<Problem> = blank
                .map(|(i, _)| Problem::new(format!("/words/{i}"), "blank"))
                .collect();
            match problems.is_empty() {
                true => Ok(Words { words }),
                false => Err(problems),
            }
        }

        fn diff(&self, _: &Ctx, current: &Words, new: &Words) -> Result<Vec<Change>, ToolError> {
            let added = new.words.iter().filter(|w| !current.words.contains(w));
            Ok(added.map(|w| Change::added(w, w)).collect())
        }
    }

    fn authoring() -> Authoring {
        Authoring::new(
            AuthoringKind::new("word_list", "A list of words.")
                .subject_kind("book")
                .promoted_by("write_words"),
            WordLists,
        )
    }

    fn ctx() -> Ctx {
        Ctx::new("c1", "demo", "alice")
    }

    #[test]
    fn none_authors_nothing_and_refuses_every_kind_naming_it() {
        assert!(Authoring::none().kinds().is_empty());
        let err = Authoring::none().current(&ctx(), "test_plan", 1);
        assert!(
            matches!(&err, Err(ToolError::InvalidArguments(m)) if m.contains("\"test_plan\"")),
            "{err:?}"
        );
        let problems = Authoring::none()
            .validate(&ctx(), "test_plan", "{}", "{}")
            .expect_err("no kinds");
        assert_eq!(problems[0].path, "");
        assert!(
            Authoring::none()
                .diff(&ctx(), "test_plan", "{}", "{}")
                .is_err()
        );
    }

    #[test]
    fn current_serializes_the_body_and_keeps_the_version() {
        let state = authoring().current(&ctx(), "word_list", 7).expect("listed");
        assert_eq!(
            (state.version.as_str(), state.body.as_str()),
            ("v1", r#"{"words":["demo","7"]}"#)
        );
    }

    #[test]
    fn validate_answers_the_normalized_json_or_the_authors_problems() {
        let cases: [(&str, Result<&str, Vec<&str>>); 4] = [
            (r#"{"words":["a"]}"#, Ok(r#"{"words":["a"]}"#)),
            (r#"{"words":["a"," "]}"#, Err(vec!["/words/1"])),
            (r#"{"words":3}"#, Err(vec!["/words"])),
            ("not json", Err(vec![""])),
        ];
        let current = r#"{"words":[]}"#;
        for (proposal, want) in cases {
            let got = authoring().validate(&ctx(), "word_list", current, proposal);
            let got = got
                .as_deref()
                .map_err(|ps| ps.iter().map(|p| p.path.as_str()).collect::<Vec<_>>());
            assert_eq!(got, want, "{proposal}");
        }
    }

    #[test]
    fn a_current_state_of_another_shape_is_a_whole_proposal_problem() {
        let problems = authoring()
            .validate(&ctx(), "word_list", r#"{"lines":[]}"#, r#"{"words":[]}"#)
            .expect_err("not Words");
        assert_eq!(problems.len(), 1);
        assert!(problems[0].path.is_empty() && problems[0].message.contains("current"));
    }

    #[test]
    fn diff_parses_both_sides_and_answers_the_authors_changes() {
        let changes = authoring()
            .diff(
                &ctx(),
                "word_list",
                r#"{"words":["a"]}"#,
                r#"{"words":["a","b"]}"#,
            )
            .expect("diffs");
        assert_eq!(changes.len(), 1);
        assert_eq!(
            (changes[0].op, changes[0].item.as_str()),
            (ChangeOp::Added, "b")
        );
        assert_eq!(
            (changes[0].before.as_deref(), changes[0].after.as_deref()),
            (None, Some("\"b\""))
        );
        let err = authoring().diff(&ctx(), "word_list", "{}", r#"{"words":[]}"#);
        assert!(
            matches!(err, Err(ToolError::InvalidArguments(_))),
            "{err:?}"
        );
    }

    #[test]
    fn change_builders_carry_json_on_the_sides_they_have() {
        let changed = Change::changed("Cart", &json!({"tags": ["a"]}), &json!({"tags": []}));
        assert_eq!(changed.op, ChangeOp::Changed);
        assert_eq!(changed.before.as_deref(), Some(r#"{"tags":["a"]}"#));
        let removed = Change::removed("Cart", &json!(1));
        assert_eq!(
            (removed.op, removed.before.as_deref(), removed.after),
            (ChangeOp::Removed, Some("1"), None)
        );
    }

    #[test]
    fn pointer_tokens_escape_tilde_before_slash() {
        assert_eq!(escape("a/b~c"), "a~1b~0c");
        assert_eq!(escape("~1"), "~01");
    }

    #[test]
    #[should_panic(expected = "listed twice")]
    fn kinds_refuse_a_duplicate() {
        authoring()
            .kind(
                AuthoringKind::new("word_list", "again")
                    .subject_kind("book")
                    .promoted_by("write_words"),
                WordLists,
            )
            .kinds();
    }

    #[test]
    #[should_panic(expected = "promoted_by")]
    fn kinds_refuse_a_kind_without_its_promoting_tool() {
        Authoring::new(
            AuthoringKind::new("word_list", "w").subject_kind("book"),
            WordLists,
        )
        .kinds();
    }
}
