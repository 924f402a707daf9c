//! The token endpoint's grants (RFC 6749 §4.1.3, §6, §4.4, and RFC 7523's
//! JWT-bearer grant with an identity assertion, `grant/identity.rs`) and
//! client authentication (§2.3). Every refusal is the RFC's error and writes
//! nothing, except where revoking is the point (a replayed code or refresh
//! token revokes its whole family).

mod identity;

pub use identity::JWT_BEARER_GRANT;

use serde::Serialize;
use toolhost_types::PrincipalKind;

use crate::dpop::{self, DpopError, Expected};
use crate::error::OAuthError;
use crate::params::Params;
use crate::pkce;
use crate::scope::Scopes;
use crate::secret;
use crate::server::{AuthServer, now, secs};
use crate::store::{Client, ClientKind, CodeRedemption, Family, RefreshToken};

/// A successful token response (RFC 6749 §5.1).
#[derive(Debug, Clone, Serialize)]
pub struct TokenResponse {
    /// The JWT access token.
    pub access_token: String,
    /// `DPoP` for a token bound to the proof's key, else `Bearer`.
    pub token_type: &'static str,
    /// Seconds until the access token expires.
    pub expires_in: i64,
    /// The granted scopes.
    pub scope: String,
    /// The next refresh token (authorization code and refresh grants).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
}

/// `invalid_client` for an id that names no usable client.
fn unknown_client() -> OAuthError {
    OAuthError::invalid_client("unknown, revoked or expired client")
}

/// Client credentials from an `Authorization: Basic` header.
#[derive(Debug, Clone)]
pub struct BasicCredentials {
    /// The client id (form-decoded).
    pub client_id: String,
    /// The secret (form-decoded).
    pub secret: String,
}

impl AuthServer {
    /// Handles one token request; `dpop` are its `DPoP` headers (RFC 9449:
    /// with one valid proof, the tokens issued are bound to its key).
    pub async fn token(
        &self,
        params: &Params,
        basic: Option<BasicCredentials>,
        dpop: &[&str],
    ) -> Result<TokenResponse, OAuthError> {
        let client = self.authenticate_client(params, basic).await?;
        let endpoint_toolset = self.check_resource(params)?;
        let proof = self.token_proof(dpop).await?;
        let jkt = proof.as_ref().map(|p| p.jkt.as_str());
        let response = match params.require("grant_type")? {
            "authorization_code" => self.redeem_code(&client, params, jkt).await,
            "refresh_token" => self.refresh(&client, params, jkt).await,
            "client_credentials" => {
                (self.client_credentials(&client, params, endpoint_toolset, jkt)).await
            }
            identity::JWT_BEARER_GRANT => {
                (self.identity_assertion_grant(&client, params, jkt)).await
            }
            other => Err(OAuthError::unsupported_grant_type(format!(
                "grant_type {other} is not supported (authorization_code, refresh_token, client_credentials, {} are)",
                identity::JWT_BEARER_GRANT
            ))),
        }?;
        if let Err(e) = self.store.touch_client(&client.client_id, now()).await {
            tracing::warn!(error = %e, "recording client use");
        }
        Ok(response)
    }

    /// The token request's DPoP proof, checked (RFC 9449 §5), if it sent one.
    async fn token_proof(&self, headers: &[&str]) -> Result<Option<dpop::Proof>, OAuthError> {
        let refused = |e: DpopError| match e {
            DpopError::Unavailable => OAuthError::from(&e),
            e => OAuthError::invalid_dpop_proof(e.to_string()),
        };
        let Some(proof) = dpop::one(headers).map_err(refused)? else {
            return Ok(None);
        };
        let url = format!("{}/oauth/token", self.config.issuer);
        let expected = Expected {
            method: "POST",
            url: &url,
            access_token: None,
        };
        self.dpop(proof, &expected, None, now())
            .await
            .map(Some)
            .map_err(refused)
    }

    /// A tenant that requires DPoP (`toolhost tenant dpop NAME required`)
    /// gets no token without a proof, for its people and its services.
    async fn check_tenant_dpop(&self, tenant: &str, jkt: Option<&str>) -> Result<(), OAuthError> {
        if jkt.is_some() {
            return Ok(());
        }
        let required = (self.store.tenant_requires_dpop(tenant))
            .await
            .map_err(|e| OAuthError::from(&e))?;
        if required {
            return Err(OAuthError::invalid_dpop_proof(format!(
                "tenant {tenant} requires DPoP-bound tokens: send a DPoP proof with the token request"
            )));
        }
        Ok(())
    }

    /// RFC 8707: a `resource` parameter, if sent, must be our `/mcp` URI
    /// or one toolset's endpoint under it, whose name it answers (a code
    /// or a refresh carries the binding its authorization made; a
    /// service's token is bound to it).
    pub(crate) fn check_resource<'p>(
        &self,
        params: &'p Params,
    ) -> Result<Option<&'p str>, OAuthError> {
        match params.get("resource") {
            None => Ok(None),
            Some(r) => self.config.toolset_of_resource(r).ok_or_else(|| {
                OAuthError::invalid_target(format!(
                    "this server issues tokens only for {} and its toolsets' endpoints",
                    self.config.resource()
                ))
            }),
        }
    }

    /// RFC 6749 §2.3: a public client names itself; others prove who they
    /// are by exactly one method: their secret (Basic or form) or, for a
    /// service client with registered keys, a signed assertion (RFC 7523,
    /// [`client_assertion`]), which is then the only way.
    pub(crate) async fn authenticate_client(
        &self,
        params: &Params,
        basic: Option<BasicCredentials>,
    ) -> Result<Client, OAuthError> {
        let methods = [
            basic.is_some(),
            params.get("client_secret").is_some(),
            params.get("client_assertion_type").is_some()
                || params.get("client_assertion").is_some(),
        ];
        if methods.iter().filter(|m| **m).count() > 1 {
            return Err(OAuthError::invalid_request(
                "use one client authentication method: Basic, client_secret or client_assertion",
            ));
        }
        if methods[2] {
            return self.assertion_client(params).await;
        }
        let (client_id, presented) = match basic {
            Some(b) => {
                if params.get("client_id").is_some_and(|id| id != b.client_id) {
                    return Err(OAuthError::invalid_request(
                        "client_id differs from the Basic credentials",
                    ));
                }
                (b.client_id, Some(b.secret))
            }
            None => (
                params.require("client_id")?.to_owned(),
                params.get("client_secret").map(str::to_owned),
            ),
        };
        let client = self
            .usable_client(&client_id)
            .await?
            .ok_or_else(unknown_client)?;
        if client.kind == ClientKind::Service
            && self.client_keys(&client.client_id).await?.is_some()
        {
            return Err(OAuthError::invalid_client(
                "this client authenticates with a signed assertion (private_key_jwt), not a secret",
            ));
        }
        match (&client.secret_hash, presented) {
            (None, None) => Ok(client),
            (None, Some(_)) => Err(OAuthError::invalid_client(
                "this client is public and has no secret",
            )),
            (Some(_), None) => Err(OAuthError::invalid_client(
                "client authentication is required",
            )),
            (Some(hash), Some(s)) if secret::same(hash, &secret::digest(&s)) => Ok(client),
            (Some(_), Some(_)) => Err(OAuthError::invalid_client("wrong client secret")),
        }
    }

    /// The service client a `client_assertion` proves, spent once; each
    /// refusal is `invalid_client` and a `client.assertion.refused` event.
    async fn assertion_client(&self, params: &Params) -> Result<Client, OAuthError> {
        use crate::client_assertion::{self as ca, ClientAssertionError};
        if params.require("client_assertion_type")? != ca::ASSERTION_TYPE {
            return Err(OAuthError::invalid_client(format!(
                "client_assertion_type must be {}",
                ca::ASSERTION_TYPE
            )));
        }
        let assertion = params.require("client_assertion")?;
        let client_id =
            ca::claimed_client(assertion).map_err(|e| OAuthError::invalid_client(e.to_string()))?;
        if params.get("client_id").is_some_and(|id| id != client_id) {
            return Err(OAuthError::invalid_client(
                ClientAssertionError::Subject.to_string(),
            ));
        }
        let client = self
            .usable_client(&client_id)
            .await?
            .ok_or_else(unknown_client)?;
        let checked = async {
            let jwks = match self.client_keys(&client.client_id).await? {
                Some(jwks) if client.kind == ClientKind::Service => jwks,
                _ => {
                    return Err(OAuthError::invalid_client(
                        ClientAssertionError::NoKeys.to_string(),
                    ));
                }
            };
            let token_endpoint = format!("{}/oauth/token", self.config.issuer);
            let audiences = [self.config.issuer.as_str(), token_endpoint.as_str()];
            let now = now();
            let verified = ca::verify(assertion, &client.client_id, &jwks, &audiences, now)
                .map_err(|e| OAuthError::invalid_client(e.to_string()))?;
            let key = ca::replay_key(&client.client_id, &verified.jti);
            let fresh = self
                .store
                .spend_jwt(&key, verified.remember_until, now)
                .await;
            match fresh {
                Ok(true) => Ok(()),
                Ok(false) => Err(OAuthError::invalid_client(
                    ClientAssertionError::Replayed.to_string(),
                )),
                Err(e) => {
                    tracing::error!(error = %e, "recording a client assertion");
                    Err(OAuthError::from(&e))
                }
            }
        };
        match checked.await {
            Ok(()) => Ok(client),
            Err(refused) => {
                let detail = format!("client assertion refused: {}", refused.description);
                self.refusal_event("client.assertion.refused", &client.client_id, detail)
                    .await;
                Err(refused)
            }
        }
    }

    /// The client's registered public keys (a JWK Set), if any.
    async fn client_keys(&self, client_id: &str) -> Result<Option<String>, OAuthError> {
        self.store
            .client_keys(client_id)
            .await
            .map_err(|e| OAuthError::from(&e))
    }

    async fn redeem_code(
        &self,
        client: &Client,
        params: &Params,
        jkt: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        if client.kind == ClientKind::Service {
            return Err(OAuthError::unauthorized_client(
                "service clients use client_credentials",
            ));
        }
        let code = params.require("code")?;
        let redirect_uri = params.require("redirect_uri")?;
        let verifier = params
            .get("code_verifier")
            .ok_or_else(|| OAuthError::invalid_grant("code_verifier is required (PKCE)"))?;
        let code = match self
            .store
            .redeem_code(&secret::digest(code), now())
            .await
            .map_err(|e| OAuthError::from(&e))?
        {
            CodeRedemption::Redeemed(code) => code,
            CodeRedemption::Unknown => {
                return Err(OAuthError::invalid_grant("unknown authorization code"));
            }
            CodeRedemption::Replayed { family_id } => {
                self.revoke_for_replay(&family_id, &client.client_id, "authorization code")
                    .await;
                return Err(OAuthError::invalid_grant(
                    "authorization code already used; the tokens it minted are revoked",
                ));
            }
        };
        // The code is spent from here on: a failed check burns it.
        if code.client_id != client.client_id {
            return Err(OAuthError::invalid_grant(
                "the code was issued to another client",
            ));
        }
        // Times are whole seconds: `>` keeps a code alive for at least its
        // TTL (`>=` gave one issued late in a second as little as 1 ms).
        if now() > code.expires_at {
            return Err(OAuthError::invalid_grant("authorization code expired"));
        }
        if code.redirect_uri != redirect_uri {
            return Err(OAuthError::invalid_grant(
                "redirect_uri differs from the authorization request",
            ));
        }
        if !pkce::verify(verifier, &code.code_challenge) {
            return Err(OAuthError::invalid_grant(
                "code_verifier does not match the code_challenge",
            ));
        }
        // RFC 9449 §10: a code bound to a DPoP key goes only to a proof by it.
        if let Some(bound) = code.dpop_jkt.as_deref()
            && jkt != Some(bound)
        {
            return Err(OAuthError::invalid_dpop_proof(
                "the authorization request bound this code to another DPoP key (dpop_jkt)",
            ));
        }
        let user = self
            .store
            .user_by_id(&code.user_id)
            .await
            .map_err(|e| OAuthError::from(&e))?;
        let user = user.filter(|u| !u.disabled).ok_or_else(|| {
            OAuthError::invalid_grant("the user who approved this code is disabled")
        })?;
        self.check_tenant_dpop(&user.tenant, jkt).await?;
        let family = Family {
            id: code.family_id.clone(),
            client_id: client.client_id.clone(),
            subject: code.user_id.clone(),
            subject_kind: PrincipalKind::User,
            scope: code.scope.clone(),
            created_at: now(),
            revoked_at: None,
        };
        self.insert_family(&family).await?;
        let binding = Binding::for_client(client, jkt);
        self.issue(&family, &code.scope, &code.resource, true, binding)
            .await
    }

    async fn refresh(
        &self,
        client: &Client,
        params: &Params,
        jkt: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        let presented = params.require("refresh_token")?;
        let old = self
            .store
            .refresh_token(&secret::digest(presented))
            .await
            .map_err(|e| OAuthError::from(&e))?
            .filter(|t| t.client_id == client.client_id)
            .ok_or_else(|| OAuthError::invalid_grant("unknown refresh token"))?;
        if old.used_at.is_some() {
            self.revoke_for_replay(&old.family_id, &client.client_id, "refresh token")
                .await;
            return Err(OAuthError::invalid_grant(
                "refresh token already used; the whole grant is revoked",
            ));
        }
        if now() >= old.expires_at {
            return Err(OAuthError::invalid_grant("refresh token expired"));
        }
        check_refresh_binding(old.dpop_jkt.as_deref(), jkt)?;
        let grant = self
            .store
            .live_grant(&old.family_id)
            .await
            .map_err(|e| OAuthError::from(&e))?
            .filter(|g| {
                g.family.revoked_at.is_none() && g.client_revoked_at.is_none() && !g.disabled
            })
            .ok_or_else(|| OAuthError::invalid_grant("the grant was revoked"))?;
        if now() >= grant.family.created_at + secs(self.config.grant_max_age) {
            return Err(OAuthError::invalid_grant(
                "the grant has reached the host's grant_max_age: sign in again",
            ));
        }
        self.check_tenant_dpop(&grant.tenant, jkt).await?;
        let scope = narrowed(
            &scopes(&old.scope)?,
            params.get("scope"),
            "was not granted; a refresh can only narrow",
        )?;
        let next = secret::token(secret::REFRESH_TOKEN);
        let rotated = RefreshToken {
            token_hash: secret::digest(&next),
            family_id: old.family_id.clone(),
            client_id: client.client_id.clone(),
            scope: old.scope.clone(),
            resource: old.resource.clone(),
            expires_at: self.refresh_expiry(grant.family.created_at),
            used_at: None,
            // Once bound, always bound; an unbound one binds to the first
            // key a public client proves.
            dpop_jkt: (old.dpop_jkt.clone())
                .or_else(|| Binding::for_client(client, jkt).refresh.map(str::to_owned)),
        };
        let won = self
            .store
            .rotate_refresh(&old.token_hash, &rotated, now())
            .await
            .map_err(|e| OAuthError::from(&e))?;
        if !won {
            return Err(OAuthError::invalid_grant(
                "refresh token already used by a concurrent request",
            ));
        }
        let scope = scope.to_string();
        let (access_token, expires_in) = self.mint_access(
            &grant.family.subject,
            &client.client_id,
            &old.family_id,
            &scope,
            jkt,
        );
        Ok(TokenResponse {
            access_token,
            token_type: token_type(jkt),
            expires_in,
            scope,
            refresh_token: Some(next),
        })
    }

    async fn client_credentials(
        &self,
        client: &Client,
        params: &Params,
        endpoint_toolset: Option<&str>,
        jkt: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        if client.kind != ClientKind::Service {
            return Err(OAuthError::unauthorized_client(
                "only service clients may use client_credentials",
            ));
        }
        if let Some(tenant) = &client.tenant {
            self.check_tenant_dpop(tenant, jkt).await?;
        }
        // Asking for the first-party scopes alone (`mcp`: what an MCP
        // client's SDK reads off the resource's challenge and asks for)
        // asks for access, not for less: the service gets its whole set.
        // Naming permission scopes narrows it.
        let asked = params.get("scope").filter(|asked| {
            !asked
                .split_whitespace()
                .all(|s| crate::scope::FIRST_PARTY.contains(&s))
        });
        let scope = narrowed(
            &scopes(&client.scope)?,
            asked,
            "is not in this service's scope set",
        )?;
        let scope = match endpoint_toolset {
            Some(name) => scope.with_toolset(name),
            None => scope,
        };
        let family = Family {
            id: secret::random(16),
            client_id: client.client_id.clone(),
            subject: client.client_id.clone(),
            subject_kind: PrincipalKind::Service,
            scope: scope.to_string(),
            created_at: now(),
            revoked_at: None,
        };
        self.grant_without_refresh(&family, client, jkt).await
    }

    /// Stores `family` and mints its access token, with no refresh token
    /// (client credentials, an identity assertion: the client asks again).
    async fn grant_without_refresh(
        &self,
        family: &Family,
        client: &Client,
        jkt: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        self.insert_family(family).await?;
        let binding = Binding::for_client(client, jkt);
        let resource = self.config.resource();
        self.issue(family, &family.scope, &resource, false, binding)
            .await
    }

    /// Stores a new grant's family, before its first tokens are minted.
    async fn insert_family(&self, family: &Family) -> Result<(), OAuthError> {
        self.store
            .insert_family(family)
            .await
            .map_err(|e| OAuthError::from(&e))
    }

    /// When a refresh token made now for a grant made at `granted_at`
    /// expires: after the refresh lifetime, never past the grant's
    /// `grant_max_age`.
    fn refresh_expiry(&self, granted_at: i64) -> i64 {
        let unused = now() + secs(self.config.refresh_ttl);
        unused.min(granted_at + secs(self.config.grant_max_age))
    }

    /// Mints the access token (and a first refresh token) of a new grant.
    async fn issue(
        &self,
        family: &Family,
        scope: &str,
        resource: &str,
        with_refresh: bool,
        binding: Binding<'_>,
    ) -> Result<TokenResponse, OAuthError> {
        let refresh_token = if with_refresh {
            let token = secret::token(secret::REFRESH_TOKEN);
            let record = RefreshToken {
                token_hash: secret::digest(&token),
                family_id: family.id.clone(),
                client_id: family.client_id.clone(),
                scope: scope.into(),
                resource: resource.into(),
                expires_at: self.refresh_expiry(family.created_at),
                used_at: None,
                dpop_jkt: binding.refresh.map(str::to_owned),
            };
            self.store
                .insert_refresh(&record)
                .await
                .map_err(|e| OAuthError::from(&e))?;
            Some(token)
        } else {
            None
        };
        let (access_token, expires_in) = self.mint_access(
            &family.subject,
            &family.client_id,
            &family.id,
            scope,
            binding.access,
        );
        Ok(TokenResponse {
            access_token,
            token_type: token_type(binding.access),
            expires_in,
            scope: scope.into(),
            refresh_token,
        })
    }

    /// A code or refresh token came back after use: someone holds a copy,
    /// so everything minted from that grant dies.
    async fn revoke_for_replay(&self, family_id: &str, client_id: &str, what: &str) {
        match self.store.revoke_family(family_id, now()).await {
            Ok(_) => {
                self.event(
                    "family.revoked.replay",
                    Some(client_id),
                    None,
                    None,
                    format!("{what} replayed; grant {family_id} revoked"),
                )
                .await;
            }
            Err(e) => tracing::error!(error = %e, "revoking a replayed grant"),
        }
    }
}

/// The DPoP key a new grant's tokens are bound to.
#[derive(Debug, Clone, Copy)]
struct Binding<'a> {
    /// The access token's `cnf.jkt`.
    access: Option<&'a str>,
    /// The refresh token's: a public client's only (RFC 9449 §5; a
    /// confidential client's refresh token is already bound to its secret).
    refresh: Option<&'a str>,
}

impl<'a> Binding<'a> {
    fn for_client(client: &Client, jkt: Option<&'a str>) -> Self {
        Binding {
            access: jkt,
            refresh: jkt.filter(|_| client.kind == ClientKind::Public),
        }
    }
}

/// RFC 9449 §5: a bound refresh token is used only with a proof by its key.
fn check_refresh_binding(bound: Option<&str>, proved: Option<&str>) -> Result<(), OAuthError> {
    match (bound, proved) {
        (None, _) => Ok(()),
        (Some(_), None) => Err(OAuthError::invalid_dpop_proof(
            "this refresh token is bound to a DPoP key: send a DPoP proof by that key",
        )),
        (Some(b), Some(p)) if b == p => Ok(()),
        (Some(_), Some(_)) => Err(OAuthError::invalid_dpop_proof(
            DpopError::OtherKey.to_string(),
        )),
    }
}

/// The `token_type` of an access token bound to `jkt`, or not.
fn token_type(jkt: Option<&str>) -> &'static str {
    if jkt.is_some() { "DPoP" } else { "Bearer" }
}

/// The scopes a request asks for (all of `allowed` when it names none),
/// with every toolset binding of `allowed`, or `invalid_scope` naming what
/// it asked beyond `allowed` and `why` not.
fn narrowed(allowed: &Scopes, asked: Option<&str>, why: &str) -> Result<Scopes, OAuthError> {
    let Some(asked) = asked else {
        return Ok(allowed.clone());
    };
    let asked = Scopes::parse(asked).map_err(OAuthError::invalid_scope)?;
    let extra = asked.missing_from(allowed);
    if !extra.is_empty() {
        return Err(OAuthError::invalid_scope(format!(
            "scope {} {why}",
            extra.join(" ")
        )));
    }
    // Asking for less never drops a toolset binding.
    Ok(asked.keeping_toolsets(allowed))
}

fn scopes(stored: &str) -> Result<Scopes, OAuthError> {
    Scopes::parse(stored).map_err(|e| {
        tracing::error!(error = %e, "a stored scope does not parse");
        OAuthError::server_error()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_refresh_token_needs_a_proof_by_its_key() {
        let refused = |bound, proved| check_refresh_binding(bound, proved).map_err(|e| e.code);
        assert_eq!(refused(None, None), Ok(()));
        assert_eq!(
            refused(None, Some("k1")),
            Ok(()),
            "an unbound one takes any"
        );
        assert_eq!(refused(Some("k1"), Some("k1")), Ok(()));
        assert_eq!(refused(Some("k1"), None), Err("invalid_dpop_proof"));
        assert_eq!(refused(Some("k1"), Some("k2")), Err("invalid_dpop_proof"));
    }

    #[test]
    fn only_a_public_clients_refresh_token_is_bound() {
        let client = |kind| Client {
            client_id: "c".into(),
            secret_hash: None,
            kind,
            origin: crate::store::ClientOrigin::Admin,
            name: "c".into(),
            redirect_uris: vec![],
            scope: "mcp".into(),
            tenant: None,
            owner: None,
            created_at: 0,
            last_used_at: None,
            revoked_at: None,
            refresh_at: None,
        };
        for (kind, refresh) in [
            (ClientKind::Public, Some("k")),
            (ClientKind::Confidential, None),
            (ClientKind::Service, None),
        ] {
            let binding = Binding::for_client(&client(kind), Some("k"));
            assert_eq!(
                (binding.access, binding.refresh),
                (Some("k"), refresh),
                "{kind:?}"
            );
            assert_eq!(token_type(binding.access), "DPoP");
        }
        assert_eq!(token_type(None), "Bearer");
    }
}
