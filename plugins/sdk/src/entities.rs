//! The `entities` export: the things a plugin's tools take names of, listed
//! so the host's resolver can narrow over them.
//!
//! A plugin whose tools resolve names passes an `fn() -> Entities` to
//! [`export_plugin!`](crate::export_plugin) (`entities = my_entities`); every
//! other plugin exports [`Entities::none`] without saying so.
//!
//! ```no_run
//! # use toolhost_sdk::prelude::*;
//! # #[derive(Deserialize)] struct Project { id: i64, name: String, tenant: String }
//! fn entities() -> Entities {
//!     Entities::new(["project"], |_ctx, _kind| {
//!         let rows: Vec<Project> = backend::get("tb", "/api/projects")?.ok()?.json()?;
//!         Ok(rows.into_iter().map(|p| Entity::new(p.id, p.name, p.tenant)).collect())
//!     })
//! }
//! ```
//!
//! The host calls `snapshot` once per conversation, tenant and kind (for the
//! kinds a tool's manifest entry declares in `resolves`), in its own sandbox
//! that allows only GET and HEAD backend requests; it drops every entity
//! whose `tenant` is not the caller's, so report the tenant the backend
//! said, never `ctx.tenant` in its place.

use crate::bindings::exports::toolhost::plugin::entities::{Entity, Parent};
use crate::{Ctx, ToolError};

type SnapshotFn = Box<dyn Fn(&Ctx, &str) -> Result<Vec<Entity>, ToolError>>;

/// The kinds a plugin lists and the function that lists one of them.
pub struct Entities {
    kinds: Vec<String>,
    snapshot: SnapshotFn,
}

impl Entities {
    /// No kinds: `kinds` is empty and every `snapshot` is
    /// [`ToolError::InvalidArguments`] naming the kind.
    pub fn none() -> Self {
        Entities::new(Vec::<String>::new(), |_, _| Ok(Vec::new()))
    }

    /// `kinds` (deterministic, no duplicates), each listed by `snapshot`,
    /// which receives the caller and one of `kinds`: the SDK answers any
    /// other kind with [`ToolError::InvalidArguments`] before calling it.
    pub fn new<K, F>(kinds: impl IntoIterator<Item = K>, snapshot: F) -> Self
    where
        K: Into<String>,
        F: Fn(&Ctx, &str) -> Result<Vec<Entity>, ToolError> + 'static,
    {
        Entities {
            kinds: kinds.into_iter().map(Into::into).collect(),
            snapshot: Box::new(snapshot),
        }
    }

    /// The kinds, in the plugin's order. Panics (the host refuses the
    /// plugin) on a duplicate, as `describe` does on two tools of one name.
    pub(crate) fn kinds(self) -> Vec<String> {
        for (i, k) in self.kinds.iter().enumerate() {
            if self.kinds[..i].contains(k) {
                panic!("the entity kind {k:?} is listed twice");
            }
        }
        self.kinds
    }

    /// Every entity of `kind`, or `invalid-arguments` for a kind not listed.
    pub(crate) fn snapshot(&self, ctx: &Ctx, kind: &str) -> Result<Vec<Entity>, ToolError> {
        if !self.kinds.iter().any(|k| k == kind) {
            return Err(ToolError::InvalidArguments(format!(
                "this plugin lists no entities of kind {kind:?} (it lists {:?})",
                self.kinds
            )));
        }
        (self.snapshot)(ctx, kind)
    }
}

impl Entity {
    /// An entity with its backend `id`, display `name`, and the `tenant`
    /// the backend says it belongs to; no parents (instance-shared) and no
    /// detail yet.
    pub fn new(id: i64, name: impl Into<String>, tenant: impl Into<String>) -> Self {
        Entity {
            id,
            name: name.into(),
            tenant: tenant.into(),
            parents: Vec::new(),
            detail: None,
        }
    }

    /// Adds a parent: this entity belongs to `kind` `id` (a scenario to its
    /// project), so pinning that parent narrows to it.
    pub fn child_of(mut self, kind: impl Into<String>, id: i64) -> Self {
        self.parents.push(Parent {
            kind: kind.into(),
            id,
        });
        self
    }

    /// What tells it apart from same-named entities in the host's labels
    /// (`"Login flow · payments"`): a parent's name, an email, a code.
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx::new("c1", "demo", "alice")
    }

    #[test]
    fn none_lists_no_kinds_and_refuses_every_snapshot_naming_the_kind() {
        assert!(Entities::none().kinds().is_empty());
        let err = Entities::none()
            .snapshot(&ctx(), "project")
            .expect_err("no kinds");
        assert!(
            matches!(&err, ToolError::InvalidArguments(m) if m.contains("\"project\"")),
            "{err:?}"
        );
    }

    #[test]
    fn a_snapshot_runs_only_for_listed_kinds_and_sees_the_kind() {
        let e = Entities::new(["project", "scenario"], |ctx: &Ctx, kind: &str| {
            Ok(vec![Entity::new(1, kind, ctx.tenant.clone())])
        });
        let got = e.snapshot(&ctx(), "scenario").expect("listed");
        assert_eq!(
            (got[0].name.as_str(), got[0].tenant.as_str()),
            ("scenario", "demo")
        );
        assert!(e.snapshot(&ctx(), "pipeline").is_err());
    }

    #[test]
    fn the_entity_builder_records_parents_and_detail() {
        let e = Entity::new(204, "Login flow", "demo")
            .child_of("project", 1)
            .detail("payments");
        assert_eq!(
            (e.id, e.parents[0].kind.as_str(), e.parents[0].id),
            (204, "project", 1)
        );
        assert_eq!(e.detail.as_deref(), Some("payments"));
    }

    #[test]
    #[should_panic(expected = "listed twice")]
    fn kinds_refuse_a_duplicate() {
        Entities::new(["project", "project"], |_, _| Ok(Vec::new())).kinds();
    }
}
