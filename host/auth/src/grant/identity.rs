//! The identity assertion authorization grant: MCP's enterprise-managed
//! authorization. The organisation's identity provider issues an ID-JAG
//! (`typ` `oauth-id-jag+jwt`) for a person, this host and a client; the
//! client presents it here with RFC 7523's JWT-bearer grant and gets an
//! access token for that person without a consent page.
//!
//! Only a single-sign-on provider the operator trusts for it
//! (`[sso.NAME] id_jag = true`) vouches, with its own keys and its account
//! linking ([`UpstreamIdentity::verify_assertion_grant`]). The host checks
//! the rest: a confidential client that authenticated, its id in the
//! assertion, the assertion spent once across replicas, an enabled local
//! user, and a scope within the client's, the assertion's and what was
//! asked. The person's rights stay their live roles. No refresh token is
//! issued: the client asks the provider for a new assertion, so a person
//! the provider stops vouching for gets no new token.

use serde::Deserialize;
use toolhost_types::PrincipalKind;

use super::{narrowed, scopes};
use crate::error::OAuthError;
use crate::params::Params;
use crate::scope::Scopes;
use crate::secret;
use crate::server::{AuthServer, now};
use crate::store::{Client, ClientKind, Family, User};
use crate::upstream::{AssertedGrant, GrantExpect, UpstreamError};

/// RFC 7523 §2.1's grant type.
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// How long after its `exp` an assertion's `jti` is remembered (the
/// providers' clock skew).
const REMEMBER_PAST_EXPIRY: i64 = 60;

impl AuthServer {
    /// The JWT-bearer grant with an ID-JAG: a token for the person it
    /// names; each refusal is an OAuth error and an `id_jag.refused` event.
    pub(super) async fn identity_assertion_grant(
        &self,
        client: &Client,
        params: &Params,
        jkt: Option<&str>,
    ) -> Result<super::TokenResponse, OAuthError> {
        let checked = async {
            let (provider, grant, user) = self.asserted(client, params).await?;
            let scope = self.asserted_scope(client, params, grant.scope.as_deref())?;
            Ok::<_, OAuthError>((provider, grant, user, scope))
        };
        let (provider, grant, user, scope) = match checked.await {
            Ok(checked) => checked,
            Err(refused) => {
                let detail = format!("identity assertion refused: {}", refused.description);
                self.refusal_event("id_jag.refused", &client.client_id, detail)
                    .await;
                return Err(refused);
            }
        };
        let record = |kind: &'static str, detail: String| {
            crate::sso::record(
                self,
                kind,
                Some(&client.client_id),
                Some(&user),
                None,
                detail,
                true,
            )
        };
        for (kind, detail) in &grant.signed_in.changes {
            record(kind, format!("{provider}: {detail}")).await;
        }
        self.check_tenant_dpop(&user.tenant, jkt).await?;
        let family = Family {
            id: secret::random(16),
            client_id: client.client_id.clone(),
            subject: user.id.clone(),
            subject_kind: PrincipalKind::User,
            scope: scope.to_string(),
            created_at: now(),
            revoked_at: None,
        };
        let detail = format!(
            "{provider}: {:?} (subject {:?}) by identity assertion",
            user.username, grant.signed_in.subject
        );
        record("id_jag.granted", detail).await;
        self.grant_without_refresh(&family, client, jkt).await
    }

    /// The provider's name, the verified assertion and its enabled user.
    async fn asserted(
        &self,
        client: &Client,
        params: &Params,
    ) -> Result<(String, AssertedGrant, User), OAuthError> {
        if client.kind != ClientKind::Confidential {
            return Err(OAuthError::unauthorized_client(
                "identity assertion grants are for confidential clients",
            ));
        }
        let assertion = params.require("assertion")?;
        #[derive(Deserialize)]
        struct Issuer {
            iss: String,
        }
        let issuer = jsonwebtoken::dangerous::insecure_decode::<Issuer>(assertion)
            .map(|d| d.claims.iss)
            .map_err(|_| OAuthError::invalid_grant("the assertion is not a JWT with an issuer"))?;
        let provider = self
            .sso
            .providers
            .iter()
            .find(|p| p.assertion_issuer() == Some(issuer.as_str()))
            .ok_or_else(|| {
                OAuthError::invalid_grant(
                    "no identity provider trusted for identity assertion grants issued this assertion",
                )
            })?;
        let resource = self.config.resource();
        let expect = GrantExpect {
            audience: &self.config.issuer,
            resource: &resource,
            client_id: &client.client_id,
            now: now(),
        };
        let grant = provider
            .verify_assertion_grant(assertion, expect)
            .await
            .map_err(|e| match e {
                UpstreamError::Unavailable(why) => {
                    tracing::warn!(
                        provider = provider.name(),
                        why,
                        "verifying an identity assertion"
                    );
                    OAuthError::server_error()
                }
                refused => OAuthError::invalid_grant(refused.to_string()),
            })?;
        let key = secret::digest(&format!("id-jag.{issuer}.{}", grant.jti));
        let until = grant.expires_at.saturating_add(REMEMBER_PAST_EXPIRY);
        match self.store.spend_jwt(&key, until, now()).await {
            Ok(true) => {}
            Ok(false) => {
                return Err(OAuthError::invalid_grant(
                    "this identity assertion was used before",
                ));
            }
            Err(e) => return Err(OAuthError::from(&e)),
        }
        let user = self
            .store
            .user_by_name(&grant.signed_in.username)
            .await
            .map_err(|e| OAuthError::from(&e))?
            .filter(|u| !u.disabled)
            .ok_or_else(|| OAuthError::invalid_grant("the person is not an enabled user"))?;
        Ok((provider.name().to_owned(), grant, user))
    }

    /// What was asked (all of the client's set if nothing was), within the
    /// client's set and the assertion's `scope` if it carries one.
    fn asserted_scope(
        &self,
        client: &Client,
        params: &Params,
        most: Option<&str>,
    ) -> Result<Scopes, OAuthError> {
        let asked = narrowed(
            &scopes(&client.scope)?,
            params.get("scope"),
            "is not in this client's scope set",
        )?;
        if let Some(most) = most {
            let most = Scopes::parse(most).map_err(OAuthError::invalid_scope)?;
            let beyond = asked.missing_from(&most);
            if !beyond.is_empty() {
                return Err(OAuthError::invalid_scope(format!(
                    "scope {} is beyond the identity assertion's",
                    beyond.join(" ")
                )));
            }
        }
        Ok(asked)
    }
}
