//! `toolhost:plugin/resolver`: the host's progressive narrowing, over the
//! snapshots the call path fetched before the call (the sandbox never
//! re-enters a plugin to fetch them).
//!
//! The first question a call asks becomes its answer: it is kept here, and
//! from then on the call may not have side effects (see [`Quiet`]).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use toolhost_resolver::{Clarification, Entity, Pin, Query, Reason, resolve, scope};

use super::HostCallMeter;
use crate::bindings::toolhost::plugin::resolver as wit;
use crate::error::ContractBreach;

/// The entity snapshots one call may resolve over: kind → rows. The call
/// path fetches them (once per conversation) for the kinds the tool's
/// manifest entry declares.
pub type Snapshots = BTreeMap<String, Arc<[Entity]>>;

/// Whether the call may still have side effects. Shared by the imports of
/// one call: set while planning or listing entities, and once the call has
/// asked a question (its answer will be the question, so nothing it does
/// after may change anything).
#[derive(Debug, Clone, Default)]
pub(crate) struct Quiet(Arc<AtomicBool>);

impl Quiet {
    pub(crate) fn new(on: bool) -> Self {
        Self(Arc::new(AtomicBool::new(on)))
    }
    pub(crate) fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The resolver capability of one call.
pub(crate) struct ResolverCapability {
    plugin: String,
    tenant: String,
    snapshots: Arc<Snapshots>,
    meter: HostCallMeter,
    quiet: Quiet,
    /// The first question asked; it replaces the call's answer.
    pub(crate) pending: Option<Clarification>,
}

impl ResolverCapability {
    pub(crate) fn new(
        plugin: &str,
        tenant: &str,
        snapshots: Arc<Snapshots>,
        meter: HostCallMeter,
        quiet: Quiet,
    ) -> Self {
        Self {
            plugin: plugin.into(),
            tenant: tenant.into(),
            snapshots,
            meter,
            quiet,
            pending: None,
        }
    }

    fn rows(&self, kind: &str) -> Result<&Arc<[Entity]>, ContractBreach> {
        self.snapshots.get(kind).ok_or_else(|| {
            ContractBreach(format!(
                "resolves kind {kind:?}, which the tool's manifest entry does not declare in `resolves`"
            ))
        })
    }

    /// A pin with its name, for `scoped_by`: the name as the caller's
    /// tenant sees it, or the id when that kind is not in the snapshots.
    fn pin(&self, p: wit::Pin) -> Pin {
        let name = self
            .snapshots
            .get(&p.kind)
            .and_then(|rows| {
                rows.iter()
                    .find(|e| e.id == p.id && e.tenant == self.tenant)
            })
            .map_or_else(|| p.id.to_string(), |e| e.name.clone());
        Pin {
            kind: p.kind,
            id: p.id,
            name,
        }
    }
}

impl wit::Host for ResolverCapability {
    fn resolve(
        &mut self,
        q: wit::Query,
    ) -> wasmtime::Result<Result<wit::Resolved, wit::Clarification>> {
        self.meter.charge()?;
        let rows = Arc::clone(self.rows(&q.kind)?);
        let pins: Vec<Pin> = q.pins.into_iter().map(|p| self.pin(p)).collect();
        let scoped = scope(&rows, &self.tenant, &pins);
        if scoped.dropped > 0 {
            tracing::warn!(plugin = %self.plugin, kind = %q.kind, dropped = scoped.dropped,
                "tenancy violation: a snapshot held rows of another tenant; dropped before matching");
        }
        let query = Query {
            kind: q.kind,
            field: q.field,
            value: q.value,
            within: q.within,
            question: q.question,
        };
        match resolve(&scoped, &query) {
            Ok(id) => {
                let name = scoped
                    .entities
                    .iter()
                    .find(|e| e.id == id)
                    .map_or_else(String::new, |e| e.name.clone());
                Ok(Ok(wit::Resolved { id, name }))
            }
            Err(c) => {
                self.quiet.set();
                let answer = wit_clarification(&c);
                self.pending.get_or_insert(c);
                Ok(Err(answer))
            }
        }
    }
}

fn wit_clarification(c: &Clarification) -> wit::Clarification {
    wit::Clarification {
        reason: match c.reason {
            Reason::Ambiguous => wit::Reason::Ambiguous,
            Reason::NotFound => wit::Reason::NotFound,
            Reason::MissingRequired => wit::Reason::MissingRequired,
        },
        ask_user: c.ask_user.clone(),
        candidates: c
            .candidates
            .iter()
            .map(|c| wit::Candidate {
                id: c.id,
                name: c.name.clone(),
                label: c.label.clone(),
            })
            .collect(),
        scoped_by: c
            .scoped_by
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        field: c.field.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::toolhost::plugin::resolver::Host;

    fn capability(snapshots: Snapshots) -> (ResolverCapability, Quiet) {
        let quiet = Quiet::new(false);
        let cap = ResolverCapability::new(
            "testbench",
            "acme",
            Arc::new(snapshots),
            HostCallMeter::new(10),
            quiet.clone(),
        );
        (cap, quiet)
    }

    fn query(kind: &str, value: Option<&str>) -> wit::Query {
        wit::Query {
            kind: kind.into(),
            field: kind.into(),
            value: value.map(Into::into),
            pins: Vec::new(),
            within: None,
            question: None,
        }
    }

    fn projects() -> Snapshots {
        let rows: Arc<[Entity]> = vec![
            Entity::new(1, "payments", "acme"),
            Entity::new(2, "auth", "acme"),
            Entity::new(7, "payments", "globex"),
        ]
        .into();
        BTreeMap::from([("project".to_owned(), rows)])
    }

    #[test]
    fn a_name_resolves_to_its_id_and_the_call_may_still_act() {
        let (mut cap, quiet) = capability(projects());
        let answer = cap
            .resolve(query("project", Some("auth")))
            .expect("no trap");
        assert!(matches!(answer, Ok(wit::Resolved { id: 2, ref name }) if name == "auth"));
        assert!(cap.pending.is_none() && !quiet.is_set());
    }

    #[test]
    fn the_first_question_is_kept_and_the_call_goes_quiet() {
        let (mut cap, quiet) = capability(projects());
        let first = cap.resolve(query("project", None)).expect("no trap");
        let Err(c) = first else { panic!("asks") };
        assert_eq!(c.reason, wit::Reason::MissingRequired);
        let names: Vec<_> = c.candidates.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["payments", "auth"],
            "never the other tenant's namesake"
        );
        let _ = cap
            .resolve(query("project", Some("nothing")))
            .expect("no trap");
        assert_eq!(
            cap.pending.as_ref().map(|c| c.reason),
            Some(Reason::MissingRequired)
        );
        assert!(quiet.is_set());
    }

    #[test]
    fn an_undeclared_kind_ends_the_call_as_a_contract_breach() {
        let (mut cap, _) = capability(projects());
        let e = cap
            .resolve(query("pipeline", Some("x")))
            .expect_err("traps");
        let breach = e.downcast_ref::<ContractBreach>().expect("typed");
        assert!(breach.0.contains("pipeline"), "{breach}");
    }

    #[test]
    fn a_pin_is_named_as_the_callers_tenant_sees_it() {
        let (cap, _) = capability(projects());
        let pin = cap.pin(wit::Pin {
            kind: "project".into(),
            id: 7,
        });
        assert_eq!(pin.name, "7", "another tenant's row lends no name");
        let pin = cap.pin(wit::Pin {
            kind: "project".into(),
            id: 1,
        });
        assert_eq!(pin.name, "payments");
    }
}
