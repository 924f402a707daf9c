//! [`scope`]: what a caller may choose from. The tenancy floor first (rows
//! of another tenant are dropped whatever the plugin returned), then every
//! pin that reaches the kind through parent links.

use std::collections::BTreeMap;

/// An entity id as the backend mints it.
pub type Id = i64;

/// A parent link: this entity belongs to `kind` `id` (an environment to a
/// project, a scenario to a project).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parent {
    /// The parent's kind.
    pub kind: String,
    /// The parent's id.
    pub id: Id,
}

/// One row of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    /// Its id.
    pub id: Id,
    /// Its display name (not unique).
    pub name: String,
    /// The tenant the row belongs to.
    pub tenant: String,
    /// Its ancestors; none for instance-shared entities.
    pub parents: Vec<Parent>,
    /// Something that tells namesakes apart (an email, a code), if any.
    pub detail: Option<String>,
}

impl Entity {
    /// An entity with no parents and no detail.
    pub fn new(id: Id, name: &str, tenant: &str) -> Self {
        Entity {
            id,
            name: name.into(),
            tenant: tenant.into(),
            parents: Vec::new(),
            detail: None,
        }
    }

    /// The same entity, belonging to `kind` `id`.
    pub fn child_of(mut self, kind: &str, id: Id) -> Self {
        self.parents.push(Parent {
            kind: kind.into(),
            id,
        });
        self
    }

    /// The same entity, with a detail for labels.
    pub fn with_detail(mut self, detail: &str) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

/// An entity already chosen in this call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// Its kind (`project`).
    pub kind: String,
    /// Its id.
    pub id: Id,
    /// Its name, echoed in `scoped_by`.
    pub name: String,
}

/// A snapshot cut down for one caller and one set of pins, in id order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scope<'a> {
    /// What the caller may choose from.
    pub entities: Vec<&'a Entity>,
    /// The pins that narrowed it: kind → pinned name.
    pub scoped_by: BTreeMap<String, String>,
    /// Rows of another tenant the floor dropped (a violation to log).
    pub dropped: usize,
}

/// Cuts `snapshot` to `tenant`'s rows that every applicable pin allows. A
/// pin applies when an entity has a parent of the pin's kind: then that
/// parent must be the pinned one. Instance-shared entities (no parent of
/// that kind) are not narrowed by it, and the pin is not reported in
/// `scoped_by` unless it narrowed something.
pub fn scope<'a>(snapshot: &'a [Entity], tenant: &str, pins: &[Pin]) -> Scope<'a> {
    let mut out = Scope::default();
    for e in snapshot {
        if e.tenant != tenant {
            out.dropped += 1;
            continue;
        }
        let mut allowed = true;
        for pin in pins {
            let linked: Vec<&Parent> = e.parents.iter().filter(|p| p.kind == pin.kind).collect();
            if linked.is_empty() {
                continue;
            }
            out.scoped_by.insert(pin.kind.clone(), pin.name.clone());
            allowed &= linked.iter().any(|p| p.id == pin.id);
        }
        if allowed {
            out.entities.push(e);
        }
    }
    out.entities.sort_by_key(|e| e.id);
    out
}
