//! Names to ids, through the host's `resolver` import.
//!
//! A tool argument that names a thing takes a [`NameOrId`]; the tool builds
//! a [`Query`] for it and calls [`resolve`], which answers the thing
//! ([`Resolved`]: its id and its name) or, when the host cannot tell which
//! thing was meant, a [`ToolError`] to propagate with `?`:
//!
//! ```no_run
//! # use toolhost_sdk::prelude::*;
//! # fn f(project: Option<NameOrId>, environment: Option<NameOrId>) -> Result<(), ToolError> {
//! let project = resolve(Query::new("project", "project", project))?;
//! let environment = resolve(
//!     Query::new("environment", "environment", environment)
//!         .pin("project", project.id)
//!         .question("Which environment? Available: {names}."),
//! )?;
//! log::info!("running in {} of {}", environment.name, project.name);
//! # Ok(()) }
//! ```
//!
//! The name is the one the caller's tenant sees in the host's snapshot:
//! answer with it rather than asking the backend again, which would cost a
//! request per call for what the snapshot already holds.
//!
//! The host resolves over snapshots of this plugin's
//! [`entities`](crate::entities) export, for the kinds the tool's manifest
//! entry declares in `resolves = [...]`: a `kind` not declared there cannot
//! be resolved. It never guesses: several matches, none, or an absent value
//! become a clarification (a question with candidates), which replaces the
//! call's answer whatever the tool returns next, and after which the host
//! refuses the call's side-effecting backend requests. So on an `Err`, stop
//! and return it: `?` is the whole protocol.

use crate::bindings::toolhost::plugin::resolver::{self as wit, Clarification, Pin};
use crate::{NameOrId, ToolError};

/// What a query resolved to: the entity's id and its name as the caller's
/// tenant sees it, taken from the same snapshot the host matched against
/// (so as fresh as the conversation's snapshot of that kind, no fresher).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The entity's id, as the backend mints it.
    pub id: i64,
    /// Its name, for answers and plan targets.
    pub name: String,
}

impl From<wit::Resolved> for Resolved {
    fn from(r: wit::Resolved) -> Self {
        Resolved {
            id: r.id,
            name: r.name,
        }
    }
}

/// One argument to resolve: which kind of thing, which argument, what the
/// caller passed, and how to narrow. Built with [`Query::new`] and the
/// builder methods; resolved with [`resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    kind: String,
    field: String,
    value: Option<String>,
    pins: Vec<(String, i64)>,
    within: Option<Vec<i64>>,
    question: Option<String>,
}

impl Query {
    /// Resolves `value`, what the caller passed for the argument `field`,
    /// to an entity of `kind` (a kind the plugin's entities export lists
    /// and the tool's manifest entry declares).
    ///
    /// `None` (the caller omitted the argument) becomes a `missing-required`
    /// clarification listing everything in scope, unless [`within`](Query::within)
    /// names exactly one id, which is then the answer.
    pub fn new(kind: impl Into<String>, field: impl Into<String>, value: Option<NameOrId>) -> Self {
        Query {
            kind: kind.into(),
            field: field.into(),
            value: value.map(|v| v.to_value()),
            pins: Vec::new(),
            within: None,
            question: None,
        }
    }

    /// Narrows by an entity this call already chose: every candidate with a
    /// parent of `kind` must have `id` as that parent (a pinned project
    /// narrows its scenarios; instance-shared entities stay candidates).
    pub fn pin(mut self, kind: impl Into<String>, id: i64) -> Self {
        self.pins.push((kind.into(), id));
        self
    }

    /// [`pin`](Query::pin) when `id` is `Some`, nothing otherwise: for an
    /// optional argument that was resolved only when given.
    pub fn pin_opt(self, kind: impl Into<String>, id: Option<i64>) -> Self {
        match id {
            Some(id) => self.pin(kind, id),
            None => self,
        }
    }

    /// The plugin's own narrowing: only these ids would advance the call
    /// (the projects that have tests with a tag). With an absent value, one
    /// id is the answer and several are asked about as ambiguous.
    pub fn within(mut self, ids: impl IntoIterator<Item = i64>) -> Self {
        self.within = Some(ids.into_iter().collect());
        self
    }

    /// The one-line question the clarification asks; `{names}` becomes the
    /// candidates' labels, which the host fills in (the plugin never sees
    /// them). Default: the host's generic "Which {kind}? Available: {names}."
    pub fn question(mut self, question: impl Into<String>) -> Self {
        self.question = Some(question.into());
        self
    }

    fn into_wit(self) -> wit::Query {
        wit::Query {
            kind: self.kind,
            field: self.field,
            value: self.value,
            pins: (self.pins.into_iter())
                .map(|(kind, id)| Pin { kind, id })
                .collect(),
            within: self.within,
            question: self.question,
        }
    }
}

/// The entity `query` names (its id and name), or the clarification as a
/// [`ToolError::Failed`] `"needs clarification: <the question>"`.
///
/// Propagate that error with `?` and do nothing else: the host has already
/// recorded the clarification and answers the call with it (the reason,
/// the question, the candidates), whatever the tool returns. An id given as
/// digits is checked like a name: an id outside the caller's tenant or the
/// pins is answered exactly like one that exists nowhere.
///
/// Outside wasm (native unit tests) there is no host: every query fails.
pub fn resolve(query: Query) -> Result<Resolved, ToolError> {
    let query = query.into_wit();
    #[cfg(target_arch = "wasm32")]
    return wit::resolve(&query)
        .map(Resolved::from)
        .map_err(clarification_error);
    #[cfg(not(target_arch = "wasm32"))]
    {
        drop(query);
        Err(ToolError::Failed(
            "the resolver is only available inside the toolhost".into(),
        ))
    }
}

/// The error a tool propagates after a clarification. Its text is what a
/// host that did not intercept it would show; the real answer is the host's.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn clarification_error(c: Clarification) -> ToolError {
    ToolError::Failed(format!("needs clarification: {}", c.ask_user))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::toolhost::plugin::resolver::Reason;

    #[test]
    fn a_query_carries_pins_within_and_question_into_the_wit_record() {
        let q = Query::new("environment", "env", Some(NameOrId::Id(12)))
            .pin("project", 1)
            .pin_opt("team", None)
            .pin_opt("owner", Some(3))
            .within([12, 13])
            .question("Which one? {names}")
            .into_wit();
        assert_eq!((q.kind.as_str(), q.field.as_str()), ("environment", "env"));
        assert_eq!(q.value.as_deref(), Some("12"));
        let pins: Vec<_> = q.pins.iter().map(|p| (p.kind.as_str(), p.id)).collect();
        assert_eq!(pins, [("project", 1), ("owner", 3)]);
        assert_eq!(q.within, Some(vec![12, 13]));
        assert_eq!(q.question.as_deref(), Some("Which one? {names}"));
    }

    #[test]
    fn an_absent_value_stays_absent_and_nothing_narrows_by_default() {
        let q = Query::new("project", "project", None).into_wit();
        assert_eq!((q.value, q.within, q.question), (None, None, None));
        assert!(q.pins.is_empty());
    }

    #[test]
    fn a_clarification_becomes_a_failed_error_quoting_the_question() {
        let c = Clarification {
            reason: Reason::MissingRequired,
            ask_user: "Which environment? Available: dev, prod.".into(),
            candidates: Vec::new(),
            scoped_by: Vec::new(),
            field: "environment".into(),
        };
        assert_eq!(
            clarification_error(c),
            ToolError::Failed(
                "needs clarification: Which environment? Available: dev, prod.".into()
            )
        );
    }

    #[test]
    fn a_resolved_record_keeps_its_id_and_name() {
        let r = Resolved::from(wit::Resolved {
            id: 12,
            name: "staging".into(),
        });
        assert_eq!(
            r,
            Resolved {
                id: 12,
                name: "staging".into()
            }
        );
    }

    #[test]
    fn outside_wasm_resolving_fails_instead_of_trapping() {
        let err = resolve(Query::new("project", "project", None)).expect_err("no host");
        assert!(matches!(err, ToolError::Failed(_)), "{err:?}");
    }
}
