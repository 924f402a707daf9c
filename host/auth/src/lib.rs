//! OAuth 2.1 for `/mcp`: the host is both the Authorization Server (metadata,
//! registration, authorize with login and consent, token, revocation, JWKS)
//! and the Resource Server (the bearer check that turns a token into a live
//! [`Principal`](toolhost_types::Principal)).
//!
//! - [`AuthServer`] holds the state; [`router`] serves the authorization
//!   server; [`require_bearer`] guards `/mcp`.
//! - Access tokens carry identity only; [`require_bearer`] re-reads the
//!   grant, the client and the user from the store on every request, so a
//!   revocation or a disabled account takes effect on the next request.
//! - The store contract ([`AuthStore`]) lives here; `storage` implements it.
//! - [`dpop`]: sender-constrained tokens (RFC 9449). A token request with
//!   a proof gets tokens bound to the proof's key; the bearer check then
//!   takes such a token only as `Authorization: DPoP` with a fresh proof by
//!   that key for the request ([`AuthServer::authenticate_request`]), each
//!   proof spent once in the store, whichever replica sees it.
//! - [`assertion`]: the identity assertions the host sends to backends
//!   that ask who acts, signed with a key ring of their own
//!   ([`KeyPurpose::BackendAssertion`]) and published at their own JWKS.
//! - The host's own pages (the admin console) read the browser's web
//!   session with [`AuthServer::web_user`] and sign people in through
//!   [`sign_in_path`]; they live under `/admin`, where the session's
//!   second cookie goes (the first stays under `/oauth`).

pub mod admin;
pub mod assertion;
mod authorize;
mod bearer;
pub mod cimd;
pub mod client_assertion;
pub mod client_metadata;
mod config;
pub mod dpop;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod grant;
pub mod jwt_crypto;
pub mod keys;
mod metadata;
mod pages;
mod params;
mod password;
mod per_source;
pub mod pkce;
mod routes;
pub mod scope;
pub mod secret;
mod server;
mod sso;
pub mod store;
mod token;
pub mod upstream;
mod verified;
mod web;

pub use bearer::{BearerError, Presented, require_bearer};
pub use config::AuthConfig;
pub use error::OAuthError;
pub use grant::TokenResponse;
pub use keys::KeyError;
pub use routes::{ClientAddr, router};
pub use server::AuthServer;
pub use sso::callback_url as sso_callback_url;
pub use store::{
    AuthCode, AuthEvent, AuthStore, AuthStoreError, Client, ClientKind, ClientOrigin,
    CodeRedemption, ConnectionAttempt, EVENT_RETENTION, Family, KeyPurpose, LiveGrant,
    PendingAuthorization, PersonConnection, RefreshToken, SigningKey, SsoAttempt, SsoLink,
    StoreFuture, Tenant, User, WebSession,
};
pub use token::{AccessClaims, Confirmation, TokenError};
pub use web::{WebUser, sign_in_path};
