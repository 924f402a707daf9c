//! Who acts, as a backend that keeps its own row authority is told: a
//! signed identity assertion per backend request (issue 46).
//!
//! This room owns when an assertion is sent (the backend's
//! [`BackendAuth`](crate::BackendAuth)), which header carries it, and the
//! per-call cache that signs once per call per backend. It does not own the
//! signing key, the claims or the token format: an [`Asserter`] does (the
//! host's is `toolhost_auth::assertion::Assertions`, with its own key ring
//! and JWKS).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header::HeaderValue;

use crate::BackendError;

/// The header that carries the assertion. The host drops it from every
/// request a plugin makes, to any backend, and sets it itself where the
/// operator asked for it.
pub const ASSERTION_HEADER: &str = "x-toolhost-assertion";

/// How long one call reuses a backend's assertion before signing a new
/// one. An assertion lives 60 s at most; reusing it for half of that
/// leaves every request at least 30 s of validity, for the exchange and
/// a little clock skew, while a call's many requests cost one signature.
pub const ASSERTION_REUSE: Duration = Duration::from_secs(30);

/// The identity of one call: who acts, for which tenant, through which
/// client, in which tool. Built by the call path from the principal it
/// admitted; the plugin never sees or chooses any of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The person's user id, or a service client's id.
    pub subject: String,
    /// `user` or `service`: a service acts as itself, never as a person.
    pub kind: &'static str,
    /// The caller's tenant.
    pub tenant: String,
    /// The OAuth client acting for the subject (RFC 8693's `act`).
    pub client_id: String,
    /// The tool called.
    pub tool: String,
    /// The call's id: the one its audit row carries.
    pub call_id: String,
}

/// Signs an assertion that `who` acts, for the backend `audience`. The
/// host's implementation holds its own key ring; an error is the words for
/// the log (the plugin is told only that the identity could not be sent).
pub trait Asserter: Send + Sync {
    /// A compact JWS, valid for at most 60 s.
    fn assert(&self, who: &Identity, audience: &str) -> Result<String, String>;
}

/// One call's identity and the assertions signed for it so far, by
/// backend. Cheap to clone (an `Arc`): every request of the call shares
/// it, so each backend's assertion is signed once and reused for
/// [`ASSERTION_REUSE`].
///
/// `Debug` shows the identity, never an assertion.
#[derive(Clone)]
pub struct Acting {
    inner: Arc<Inner>,
}

struct Inner {
    who: Identity,
    signed: Mutex<HashMap<String, (Instant, HeaderValue)>>,
}

impl Acting {
    /// The call of `who`, nothing signed yet.
    pub fn new(who: Identity) -> Self {
        Acting {
            inner: Arc::new(Inner {
                who,
                signed: Mutex::default(),
            }),
        }
    }

    /// Who acts.
    pub fn identity(&self) -> &Identity {
        &self.inner.who
    }

    /// The assertion for `backend` as a header value: the one signed for
    /// this call if it is younger than [`ASSERTION_REUSE`], else a new one.
    pub fn header(
        &self,
        backend: &str,
        asserter: &dyn Asserter,
    ) -> Result<HeaderValue, BackendError> {
        let mut signed = self.inner.signed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, value)) = signed.get(backend)
            && at.elapsed() < ASSERTION_REUSE
        {
            return Ok(value.clone());
        }
        let token = asserter.assert(&self.inner.who, backend).map_err(|e| {
            tracing::error!(error = %e, backend, "signing an identity assertion failed");
            unsendable(backend)
        })?;
        let mut value = HeaderValue::from_str(&token).map_err(|_| unsendable(backend))?;
        value.set_sensitive(true);
        signed.insert(backend.to_owned(), (Instant::now(), value.clone()));
        Ok(value)
    }
}

impl fmt::Debug for Acting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Acting")
            .field("identity", &self.inner.who)
            .finish_non_exhaustive()
    }
}

/// The caller's identity could not be signed or sent to `backend`.
pub(crate) fn unsendable(backend: &str) -> BackendError {
    BackendError::Refused(format!(
        "backend {backend:?} is told who acts, and this call's identity cannot be sent"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts signatures; the token names the audience and the count.
    #[derive(Default)]
    struct Counting(AtomicUsize);

    impl Asserter for Counting {
        fn assert(&self, who: &Identity, audience: &str) -> Result<String, String> {
            let n = self.0.fetch_add(1, Ordering::Relaxed);
            Ok(format!("{audience}.{}.{n}", who.subject))
        }
    }

    fn person() -> Identity {
        Identity {
            subject: "u_ann".into(),
            kind: "user",
            tenant: "demo".into(),
            client_id: "client-1".into(),
            tool: "list_projects".into(),
            call_id: "call-1".into(),
        }
    }

    #[test]
    fn one_call_signs_once_per_backend_and_reuses_it() {
        let signer = Counting::default();
        let acting = Acting::new(person());
        let first = acting.header("crm", &signer).expect("signed");
        assert_eq!(acting.header("crm", &signer).expect("reused"), first);
        let other = acting.header("billing", &signer).expect("signed");
        assert_ne!(other, first);
        assert_eq!(signer.0.load(Ordering::Relaxed), 2);
        assert_eq!(first.to_str().expect("text"), "crm.u_ann.0");
        assert!(first.is_sensitive());
    }

    /// A call's many requests to one backend cost one signature: the
    /// rest reuse it (a lock, a map lookup and a reference count). Its
    /// cost is a benchmark's to measure, never a test's clock.
    #[test]
    fn a_calls_many_requests_to_one_backend_cost_one_signature() {
        let (signer, acting) = (Counting::default(), Acting::new(person()));
        let first = acting.header("crm", &signer).expect("signed");
        for _ in 0..1_000 {
            assert_eq!(acting.header("crm", &signer).expect("reused"), first);
        }
        assert_eq!(signer.0.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_failed_signature_refuses_the_request_without_the_reason() {
        struct Broken;
        impl Asserter for Broken {
            fn assert(&self, _: &Identity, _: &str) -> Result<String, String> {
                Err("the key ring is empty".into())
            }
        }
        let err = Acting::new(person())
            .header("crm", &Broken)
            .expect_err("refused");
        assert!(
            matches!(&err, BackendError::Refused(m) if !m.contains("ring")),
            "{err}"
        );
    }

    #[test]
    fn debug_shows_the_identity_not_the_assertions() {
        let acting = Acting::new(person());
        acting.header("crm", &Counting::default()).expect("signed");
        let shown = format!("{acting:?}");
        assert!(
            shown.contains("u_ann") && !shown.contains("crm.u_ann"),
            "{shown}"
        );
    }
}
