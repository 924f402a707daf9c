//! Who is looking at the console, and what they may use: read live on
//! every request from the same rules the MCP surface applies.
//!
//! A page is shown to a person only when the host tool behind it would be
//! listed for them over MCP ([`Toolhost::list`]), so one set of roles
//! decides both surfaces. The pages with no host tool behind them (the
//! audit trail, people and clients) need a permission of their own, or an
//! admin role, read through the same host (so with the same standing: a
//! host-level permission only in the operator tenant).

use std::collections::BTreeSet;

use toolhost_auth::WebUser;
use toolhost_invoke::{InvokeError, Toolhost};
use toolhost_policy::Grants;
use toolhost_types::{Permission, Principal, PrincipalKind};

/// The client id the console's calls carry (a web session is no OAuth
/// grant); audit rows of the console's calls name it.
pub const CONSOLE_CLIENT: &str = "toolhost-console";

/// Reading the audit trail of one's tenant needs this permission (or an
/// admin role).
pub const AUDIT_PERMISSION: &str = "audit:read";

/// A signed-in person and what they may use, as of this request.
pub struct Viewer {
    /// Their web session.
    pub user: WebUser,
    /// Them as a principal of the host's calls.
    pub principal: Principal,
    /// The host tools (and plugin tools) listed for them now.
    tools: BTreeSet<String>,
    grants: Grants,
}

impl Viewer {
    /// `user`'s standing now: the tools `host` lists for them and their
    /// grants as `host` reads them.
    pub async fn read(user: WebUser, host: &Toolhost) -> Result<Self, InvokeError> {
        let principal = Principal {
            subject: user.subject.clone(),
            kind: PrincipalKind::User,
            name: user.username.clone(),
            tenant: user.tenant.clone(),
            client_id: CONSOLE_CLIENT.into(),
            scopes: Vec::new(),
            session: "web".into(),
        };
        let tools = host
            .list(&principal)
            .await?
            .tools
            .iter()
            .map(|t| t.spec().name.to_string())
            .collect();
        let grants = host.host().grants(&principal).await?;
        Ok(Self {
            user,
            principal,
            tools,
            grants,
        })
    }

    /// Whether `tool` is listed for them (so they may call it).
    pub fn may_use(&self, tool: &str) -> bool {
        self.tools.contains(tool)
    }

    /// Whether their roles grant `permission` (an admin role grants all of
    /// their tenant's; a host-level one only in the operator tenant).
    pub fn granted(&self, permission: &str) -> bool {
        permission
            .parse::<Permission>()
            .is_ok_and(|p| self.grants.allows(&p))
    }

    /// Whether one of their roles is an admin role of their tenant.
    pub fn is_tenant_admin(&self) -> bool {
        self.grants.is_admin()
    }

    /// Whether they are one of the host's operators: an admin of the
    /// operator tenant (`operator_tenant`), who sees every tenant.
    pub fn is_host_operator(&self) -> bool {
        self.grants.is_admin() && self.grants.is_operator()
    }

    /// Their tenant.
    pub fn tenant(&self) -> &str {
        &self.user.tenant
    }
}
