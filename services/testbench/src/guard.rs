//! The gate in front of every `/api` route: the bearer token (401; the
//! identity provider's for the person when one is required, see
//! [`crate::provider`]), the host's identity assertion when one is
//! required (401, see [`crate::authority`]), then the request is counted under its route
//! template, then `X-Tenant` (400), and the projects the caller may see.
//!
//! axum is built here without its `matched-path` feature, so each route is
//! registered through [`Guarded`], which layers the guard with the route's
//! own `METHOD /template` key.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::handler::Handler;
use axum::http::{HeaderMap, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};

use crate::authority::Sees;
use crate::error::ApiError;
use crate::handle::Handle;

/// The caller's tenant, from `X-Tenant`, for handlers behind the guard.
#[derive(Clone, Debug)]
pub(crate) struct Tenant(pub(crate) String);

/// Builds a router whose every route is guarded and counted.
pub(crate) struct Guarded {
    handle: Handle,
    router: Router<Handle>,
}

#[derive(Clone)]
struct Gate {
    handle: Handle,
    route: Arc<str>,
}

impl Guarded {
    pub(crate) fn new(handle: &Handle) -> Guarded {
        Guarded {
            handle: handle.clone(),
            router: Router::new(),
        }
    }

    pub(crate) fn get<H: Handler<T, Handle>, T: 'static>(
        self,
        path: &'static str,
        handler: H,
    ) -> Guarded {
        self.route("GET", path, get(handler))
    }

    pub(crate) fn post<H: Handler<T, Handle>, T: 'static>(
        self,
        path: &'static str,
        handler: H,
    ) -> Guarded {
        self.route("POST", path, post(handler))
    }

    pub(crate) fn into_router(self) -> Router<Handle> {
        self.router
    }

    fn route(self, method: &str, path: &'static str, endpoint: MethodRouter<Handle>) -> Guarded {
        let gate = Gate {
            handle: self.handle.clone(),
            route: format!("{method} {path}").into(),
        };
        let endpoint = endpoint.route_layer(middleware::from_fn_with_state(gate, check));
        Guarded {
            handle: self.handle,
            router: self.router.route(path, endpoint),
        }
    }
}

async fn check(State(gate): State<Gate>, mut req: Request, next: Next) -> Response {
    let mut person = None;
    match gate.handle.provider_check() {
        None if !authorized(req.headers(), gate.handle.token()) => {
            return ApiError::Unauthorized.into_response();
        }
        None => {}
        Some((check, keys)) => {
            let verified = keys.verify_provider_token(&check, req.headers()).await;
            let Some(token) = verified else {
                return ApiError::Unauthorized.into_response();
            };
            person = Some(token.sub.clone());
            gate.handle.accepted_token(token);
        }
    }
    let tenant = tenant(req.headers());
    let person = match gate.handle.assertion_check() {
        None if person.is_some() => person,
        None => None,
        Some(check) => {
            let keys = gate.handle.keys();
            let verified = keys.verify(&check, req.headers(), tenant.as_deref()).await;
            let Some(asserted) = verified else {
                return ApiError::Unauthorized.into_response();
            };
            let person = asserted.sub.clone();
            gate.handle.accepted(asserted);
            Some(person)
        }
    };
    gate.handle.with(|s| s.counters.hit(&gate.route));
    match tenant {
        Some(tenant) => {
            let hidden = gate.handle.with(|s| s.store.hidden_from(person.as_deref()));
            req.extensions_mut().insert(Tenant(tenant));
            req.extensions_mut().insert(Sees::new(hidden));
            next.run(req).await
        }
        None => ApiError::MissingTenant.into_response(),
    }
}

fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let bearer = given.and_then(|v| v.strip_prefix("Bearer "));
    // An empty configured token would let `Bearer ` in: refuse everyone instead.
    !token.is_empty() && bearer.is_some_and(|b| same(b.as_bytes(), token.as_bytes()))
}

/// Compares without stopping at the first difference, so the time taken
/// does not tell a caller how much of the token it guessed.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn tenant(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("x-tenant")?.to_str().ok()?.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(*name, value.parse().expect("a valid header value"));
        }
        h
    }

    #[test]
    fn only_the_exact_bearer_token_is_authorized() {
        let ok = |v: &str| authorized(&headers(&[("authorization", v)]), "s3cret");
        assert!(ok("Bearer s3cret"));
        assert!(
            !ok("Bearer s3cre") && !ok("Bearer s3cret2") && !ok("s3cret") && !ok("Basic s3cret")
        );
        assert!(!authorized(&HeaderMap::new(), "s3cret"));
        assert!(!authorized(&headers(&[("authorization", "Bearer ")]), ""));
    }

    #[test]
    fn a_blank_tenant_is_no_tenant() {
        assert_eq!(
            tenant(&headers(&[("x-tenant", " demo ")])).as_deref(),
            Some("demo")
        );
        assert_eq!(tenant(&headers(&[("x-tenant", "  ")])), None);
    }
}
