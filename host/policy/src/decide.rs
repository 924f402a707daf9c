//! [`decide`]: the one decision behind listing and calling.

use std::collections::BTreeSet;

use toolhost_types::{Permission, Principal, PrincipalKind, Risk};

use crate::operators::host_level;
use crate::toolsets::Within;

/// What the caller is doing with the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Seeing it in `tools/list`.
    List,
    /// Calling it.
    Call,
}

/// The answer for one (principal, tool, use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Not listed: the principal lacks the permission.
    Hidden,
    /// Listed, or callable.
    Allowed,
    /// Callable after a person approves this invocation (its risk is high).
    Gated,
    /// The call is refused: the principal lacks the permission (a stale
    /// client catalog); no plugin code runs.
    Denied,
}

impl Decision {
    /// True when the tool appears in the list / the call may proceed (maybe
    /// through a gate).
    pub fn permits(self) -> bool {
        matches!(self, Decision::Allowed | Decision::Gated)
    }
}

/// A principal's standing in its tenant, read live: whether one of its
/// roles is an admin role, the union of its roles' permissions, and
/// whether its tenant is the host's operator tenant (only there are
/// host-level permissions held: see [`Operators`](crate::Operators)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    admin: bool,
    permissions: BTreeSet<Permission>,
    operator: bool,
    /// The toolsets the principal's token binds it to, if any.
    within: Option<Within>,
}

impl Grants {
    /// Grants from an admin flag and permissions.
    pub fn new(admin: bool, permissions: impl IntoIterator<Item = Permission>) -> Self {
        Grants {
            admin,
            permissions: permissions.into_iter().collect(),
            operator: false,
            within: None,
        }
    }

    /// These grants, narrowed to the toolsets of `within` (see
    /// [`Within`]); `None` leaves them whole.
    pub fn narrowed(mut self, within: Option<Within>) -> Self {
        self.within = within;
        self
    }

    /// The toolsets these grants are narrowed to, if any.
    pub fn within(&self) -> Option<&Within> {
        self.within.as_ref()
    }

    /// Whether plugin `plugin`'s prompts and resources are within the
    /// toolsets these grants are narrowed to: always when they are not
    /// narrowed; else when the toolsets take the plugin whole, or
    /// `has_tool_within` (one of its tools is within them).
    pub fn reaches_plugin(&self, plugin: &str, has_tool_within: impl FnOnce() -> bool) -> bool {
        match &self.within {
            None => true,
            Some(w) => w.names_plugin(plugin) || has_tool_within(),
        }
    }

    /// Whether a tool called `name` of `plugin` tagged `tags` is within
    /// the toolsets these grants are narrowed to (always, when they are
    /// not narrowed). Outside them a tool is hidden from listing and not
    /// found by a call, whatever the permissions say.
    pub fn reaches_tool(&self, name: &str, plugin: Option<&str>, tags: &[String]) -> bool {
        self.within
            .as_ref()
            .is_none_or(|w| w.includes(name, plugin, tags))
    }

    /// These grants, held in the operator tenant (`true`) or not.
    pub(crate) fn operating(mut self, operator: bool) -> Self {
        self.operator = operator;
        self
    }

    /// No role at all.
    pub fn none() -> Self {
        Grants::default()
    }

    /// True if an admin role is among them (an admin of its tenant, which
    /// makes nobody an operator of the host).
    pub fn is_admin(&self) -> bool {
        self.admin
    }

    /// True if they are held in the host's operator tenant (whose admins
    /// are the host's operators).
    pub fn is_operator(&self) -> bool {
        self.operator
    }

    /// True if `required` is granted exactly, or by `resource:*`, or by an
    /// admin role; a host-level permission only in the operator tenant.
    pub fn allows(&self, required: &Permission) -> bool {
        self.reaches(required)
            && (self.admin || self.permissions.iter().any(|p| covers(p, required)))
    }

    /// False for a host-level permission outside the operator tenant,
    /// whatever the roles or scopes say.
    fn reaches(&self, required: &Permission) -> bool {
        self.operator || !host_level(required)
    }
}

/// True if the granted permission covers the required one: the same, or the
/// same resource with action `*`.
fn covers(granted: &Permission, required: &Permission) -> bool {
    granted.resource() == required.resource()
        && (granted.action() == required.action() || granted.action() == "*")
}

/// Whether one of a service principal's scopes, read as a permission,
/// covers `required` (`mcp`, a toolset binding and any other
/// non-permission scope are skipped: `toolset:crm` narrows, and never
/// permits what a permission of that name would).
///
/// A scope is compared as text, never parsed: one whose resource and
/// action equal `required`'s (or whose action is `*`) is a well-formed
/// permission, since `required` is one, and nothing else can cover it.
/// A listing decides every tool of a catalog this way, so the decision
/// allocates nothing.
fn scope_allows(scopes: &[String], required: &Permission) -> bool {
    scopes
        .iter()
        .filter(|s| !s.starts_with(crate::TOOLSET_SCOPE))
        .filter_map(|s| s.rsplit_once(':'))
        .any(|(resource, action)| {
            resource == required.resource() && (action == required.action() || action == "*")
        })
}

/// Decides whether `who` may see (`Use::List`) or call (`Use::Call`) a tool
/// needing `required`, whose invocation carries `risk`.
///
/// People are judged by their live roles (an admin role allows everything
/// of its tenant's); service principals by their token's scopes, with
/// `grants` saying only whether their tenant is the operator tenant. A
/// host-level permission is held in the operator tenant only. Missing
/// permission hides on list and denies on call. Risk never hides: a
/// permitted call at high risk is `Gated`.
pub fn decide(
    who: &Principal,
    grants: &Grants,
    required: &Permission,
    risk: Risk,
    use_: Use,
) -> Decision {
    let permitted = match who.kind {
        PrincipalKind::User => grants.allows(required),
        PrincipalKind::Service => grants.reaches(required) && scope_allows(&who.scopes, required),
    };
    match (permitted, use_) {
        (false, Use::List) => Decision::Hidden,
        (false, Use::Call) => Decision::Denied,
        (true, Use::Call) if risk == Risk::High => Decision::Gated,
        (true, _) => Decision::Allowed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(kind: PrincipalKind, scopes: &[&str]) -> Principal {
        Principal {
            subject: "s".into(),
            kind,
            name: "n".into(),
            tenant: "acme".into(),
            client_id: "c".into(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            session: "f".into(),
        }
    }

    fn perm(s: &str) -> Permission {
        s.parse().expect("a permission")
    }

    #[test]
    fn narrowed_grants_reach_the_plugins_their_toolsets_take_or_hold_a_tool_of() {
        let crm = crate::Toolset {
            name: "crm".into(),
            plugins: ["crm-core".to_owned()].into(),
            tools: ["greet".to_owned()].into(),
            ..crate::Toolset::default()
        };
        let whole = Grants::none();
        assert!(whole.reaches_plugin("anything", || false));
        assert!(whole.reaches_tool("anything", Some("any"), &[]));
        let narrowed = Grants::none().narrowed(Some(Within::new(vec!["crm".into()], vec![crm])));
        assert!(narrowed.reaches_plugin("crm-core", || false), "taken whole");
        assert!(
            narrowed.reaches_plugin("hello", || true),
            "one of its tools is in"
        );
        assert!(!narrowed.reaches_plugin("hello", || false));
        assert!(narrowed.reaches_tool("greet", Some("hello"), &[]));
        assert!(!narrowed.reaches_tool("farewell", Some("hello"), &[]));
    }

    #[test]
    fn a_scope_compared_as_text_covers_exactly_what_it_would_parsed() {
        let scopes = [
            "mcp",
            "crm:*",
            "crm:read",
            "crm:deals:*",
            "CRM:read",
            "crm:",
            ":read",
            "crm:re ad",
            "crm::read",
            "*:*",
            "toolset:crm",
            "crm:read:",
        ];
        let required = [
            "crm:read",
            "crm:write",
            "crm:deals:close",
            "crm:deals:*",
            "billing:read",
            "toolset:crm",
        ];
        for scope in scopes {
            for needed in required {
                let needed = perm(needed);
                let parsed = !scope.starts_with(crate::TOOLSET_SCOPE)
                    && scope
                        .parse::<Permission>()
                        .is_ok_and(|p| covers(&p, &needed));
                assert_eq!(
                    scope_allows(&[scope.to_owned()], &needed),
                    parsed,
                    "scope {scope:?} for {needed}"
                );
            }
        }
    }

    #[test]
    fn the_decision_table() {
        let user = principal(PrincipalKind::User, &["mcp"]);
        let analyst = Grants::new(false, [perm("report:view"), perm("dataset:*")]);
        let admin = Grants::new(true, []);
        let service = principal(PrincipalKind::Service, &["mcp", "report:view"]);
        let submitter = principal(PrincipalKind::Service, &["mcp", "catalog:submit"]);
        let bound = principal(PrincipalKind::Service, &["mcp", "toolset:crm"]);
        let operator = Grants::new(true, []).operating(true);
        let in_ops = Grants::none().operating(true);
        use Decision::*;
        use Use::*;
        let rows: &[(&Principal, &Grants, &str, Risk, Use, Decision)] = &[
            (&user, &analyst, "report:view", Risk::Low, List, Allowed),
            (&user, &analyst, "report:view", Risk::Low, Call, Allowed),
            (&user, &analyst, "report:edit", Risk::Low, List, Hidden),
            (&user, &analyst, "report:edit", Risk::Low, Call, Denied),
            (
                &user,
                &analyst,
                "dataset:refresh",
                Risk::Medium,
                Call,
                Allowed,
            ),
            (
                &user,
                &analyst,
                "dataset:lineage:refresh",
                Risk::Low,
                List,
                Hidden,
            ),
            // Risk never hides; it gates a permitted call.
            (&user, &analyst, "report:view", Risk::High, List, Allowed),
            (&user, &analyst, "report:view", Risk::High, Call, Gated),
            (&user, &admin, "anything:at-all", Risk::Low, List, Allowed),
            (
                &user,
                &Grants::none(),
                "report:view",
                Risk::Low,
                List,
                Hidden,
            ),
            // Services: scopes only; a user's roles never apply.
            (&service, &admin, "report:view", Risk::Low, Call, Allowed),
            // A toolset binding is no permission, whatever it is named.
            (
                &bound,
                &Grants::none(),
                "toolset:crm",
                Risk::Low,
                Call,
                Denied,
            ),
            (&service, &admin, "report:edit", Risk::Low, List, Hidden),
            (&service, &admin, "report:edit", Risk::Low, Call, Denied),
            // The catalog is the operators': another tenant's admin, or its
            // service scoped for it, holds nothing of it.
            (&user, &admin, "catalog:review", Risk::Low, List, Hidden),
            (&user, &admin, "catalog:review", Risk::Low, Call, Denied),
            (&user, &operator, "catalog:review", Risk::Low, Call, Allowed),
            (
                &submitter,
                &Grants::none(),
                "catalog:submit",
                Risk::Low,
                Call,
                Denied,
            ),
            (
                &submitter,
                &in_ops,
                "catalog:submit",
                Risk::Low,
                Call,
                Allowed,
            ),
            (
                &submitter,
                &in_ops,
                "catalog:review",
                Risk::Low,
                Call,
                Denied,
            ),
        ];
        for (who, grants, required, risk, use_, want) in rows {
            assert_eq!(
                decide(who, grants, &perm(required), *risk, *use_),
                *want,
                "{:?} {required} {risk} {use_:?}",
                who.kind
            );
        }
    }
}
