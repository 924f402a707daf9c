//! The console's pages, what each needs, and the navigation built from
//! them: a page the viewer may not use is absent from it.

use serde::Serialize;

use crate::viewer::{AUDIT_PERMISSION, Viewer};

/// One page of the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// Everything waiting for this person.
    Inbox,
    /// Approval gates.
    Approvals,
    /// Human checkpoints of runs.
    Checkpoints,
    /// Plugin revisions to review, and the catalog: the operators'.
    Reviews,
    /// The revisions that affect the viewer's tenant, read only.
    Catalog,
    /// Exploration runs.
    Runs,
    /// Authoring sessions, read-only.
    Authoring,
    /// The tenant's users and roles.
    People,
    /// The tenant's service clients.
    Clients,
    /// The tenant's toolsets.
    Toolsets,
    /// People's own connections to backends: everyone's own (a tenant
    /// admin's: the tenant's).
    Connections,
    /// Every tenant of the host, with what each holds: the operators'.
    Tenants,
    /// The audit trail.
    Audit,
}

/// Every page, in navigation order.
pub const ALL: [Page; 13] = [
    Page::Inbox,
    Page::Approvals,
    Page::Checkpoints,
    Page::Reviews,
    Page::Catalog,
    Page::Runs,
    Page::Authoring,
    Page::People,
    Page::Clients,
    Page::Toolsets,
    Page::Connections,
    Page::Tenants,
    Page::Audit,
];

impl Page {
    /// Its address.
    pub fn path(self) -> &'static str {
        match self {
            Page::Inbox => "/admin",
            Page::Approvals => "/admin/approvals",
            Page::Checkpoints => "/admin/checkpoints",
            Page::Reviews => "/admin/reviews",
            Page::Catalog => "/admin/catalog",
            Page::Runs => "/admin/runs",
            Page::Authoring => "/admin/authoring",
            Page::People => "/admin/people",
            Page::Clients => "/admin/people/clients",
            Page::Toolsets => "/admin/toolsets",
            Page::Connections => "/admin/connections",
            Page::Tenants => "/admin/tenants",
            Page::Audit => "/admin/audit",
        }
    }

    /// Its name in the navigation and the title.
    pub fn label(self) -> &'static str {
        match self {
            Page::Inbox => "Inbox",
            Page::Approvals => "Approvals",
            Page::Checkpoints => "Checkpoints",
            Page::Reviews => "Plugin reviews",
            Page::Catalog => "Catalog",
            Page::Runs => "Runs",
            Page::Authoring => "Authoring",
            Page::People => "People",
            Page::Clients => "Service clients",
            Page::Toolsets => "Toolsets",
            Page::Connections => "Connections",
            Page::Tenants => "Tenants",
            Page::Audit => "Audit",
        }
    }

    /// Whether `viewer` may open it: the host tool behind it is listed for
    /// them, or (no tool behind it) their roles grant it. Plugin reviews
    /// are the operators' (`catalog:review` is held in the operator tenant
    /// only); the catalog's changes are any tenant's to read. Tenants are
    /// the host operators' (an admin of the operator tenant).
    pub fn open_to(self, viewer: &Viewer) -> bool {
        match self {
            Page::Inbox => true,
            Page::Approvals => viewer.may_use("list_pending_approvals"),
            Page::Checkpoints => viewer.may_use("list_checkpoints"),
            Page::Reviews => viewer.may_use("list_plugin_reviews"),
            Page::Catalog => viewer.may_use("list_catalog_changes"),
            Page::Runs => viewer.may_use("list_explorations"),
            Page::Authoring => viewer.may_use("list_authoring_sessions"),
            Page::People => viewer.is_tenant_admin(),
            Page::Clients => viewer.is_tenant_admin(),
            Page::Toolsets => viewer.may_use("list_toolsets"),
            Page::Connections => true,
            Page::Tenants => viewer.is_host_operator(),
            Page::Audit => viewer.granted(AUDIT_PERMISSION),
        }
    }
}

/// One entry of the navigation.
#[derive(Debug, Serialize)]
pub struct NavItem {
    /// Where it goes.
    pub href: &'static str,
    /// What it says.
    pub label: &'static str,
    /// How many things there wait for the viewer, when that is counted.
    pub count: Option<usize>,
    /// Whether it is the page shown.
    pub current: bool,
}

/// How many things wait on the pages that count them.
#[derive(Debug, Default, Clone, Copy)]
pub struct Waiting {
    /// Pending gates.
    pub approvals: Option<usize>,
    /// Waiting checkpoints.
    pub checkpoints: Option<usize>,
    /// Revisions pending review.
    pub reviews: Option<usize>,
}

impl Waiting {
    fn of(self, page: Page) -> Option<usize> {
        match page {
            Page::Approvals => self.approvals,
            Page::Checkpoints => self.checkpoints,
            Page::Reviews => self.reviews,
            Page::Inbox => {
                let all = [self.approvals, self.checkpoints, self.reviews];
                Some(all.iter().flatten().sum())
            }
            _ => None,
        }
    }
}

/// The navigation `viewer` sees on `current`, with `waiting` counts.
pub fn nav(viewer: &Viewer, current: Page, waiting: Waiting) -> Vec<NavItem> {
    ALL.into_iter()
        .filter(|p| p.open_to(viewer))
        .map(|p| NavItem {
            href: p.path(),
            label: p.label(),
            count: waiting.of(p).filter(|n| *n > 0),
            current: p == current,
        })
        .collect()
}
