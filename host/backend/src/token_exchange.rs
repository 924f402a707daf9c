//! Token exchange for the person (RFC 8693, issue 46): a backend that
//! trusts the organisation's identity provider gets, on each person's
//! calls, a token that provider issued for that person and that backend.
//!
//! This room owns when a token is asked for (the backend's
//! [`BackendAuth::TokenExchange`](crate::BackendAuth)), who may have one
//! (people, never services), the header it travels in, and the cache that
//! keeps each person's token until shortly before it expires. It does not
//! own the exchange itself: an [`Exchanger`] does (the host's is
//! `toolhost_sso::PersonTokens`, which speaks to the provider's token
//! endpoint with a subject token the host signs).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use reqwest::header::HeaderValue;

use crate::{BackendError, Identity};

/// Most tokens (and remembered refusals) one host keeps at once, over
/// every backend and person: with tokens of at most 8 KiB, 32 MiB at
/// worst. Past it, expired ones go first, then the one closest to
/// expiring: a flood of people costs exchanges, never memory.
pub const MAX_EXCHANGED: usize = 4_096;

/// How long a refusal (no sign-in at the provider, the provider's no, or
/// its silence) is remembered for one person, client and backend: a
/// plugin that asks in a loop gets the same answer without a new
/// exchange, store read or log line.
pub const REFUSAL_MEMORY: Duration = Duration::from_secs(10);

/// How long before its expiry a token stops being reused: a request sent
/// with it then still has this long (or half its life, if that is
/// shorter) before the backend would refuse it.
pub const EXCHANGE_MARGIN: Duration = Duration::from_secs(60);

/// A token with less reusable life than this is used for the one request
/// and not kept.
const MIN_KEPT: Duration = Duration::from_secs(5);

/// What the operator asks the provider for, per backend
/// (`[backends.NAME] exchange_provider`, `exchange_audience`,
/// `exchange_scope`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenExchange {
    /// The `[sso.NAME]` provider that issues the backend's tokens.
    pub provider: String,
    /// The RFC 8693 `audience`: how the provider knows the backend.
    pub audience: String,
    /// The scope asked for, if any (space-separated).
    pub scope: Option<String>,
}

/// A token the provider issued for one person and one backend.
pub struct Exchanged {
    /// The access token, sent as `Authorization: Bearer`.
    pub token: String,
    /// Its lifetime as the provider stated it (`expires_in`).
    pub expires_in: Duration,
}

impl fmt::Debug for Exchanged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exchanged")
            .field("expires_in", &self.expires_in)
            .finish_non_exhaustive()
    }
}

/// Why no token could be had. The words of `Refused` and `Unavailable`
/// are for the log; the plugin is told less.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExchangeError {
    /// The person has never signed in through the provider, so the host
    /// knows no identity of theirs the provider would recognise.
    #[error("the person has no sign-in through {provider:?}")]
    NotLinked {
        /// The provider.
        provider: String,
    },
    /// The provider refused (its error code), or its answer is not a
    /// token the host can send.
    #[error("refused: {0}")]
    Refused(String),
    /// The provider could not be reached or answered a server error.
    #[error("unavailable: {0}")]
    Unavailable(String),
}

/// The exchange's future.
pub type ExchangeFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Exchanged, ExchangeError>> + Send + 'a>>;

/// Exchanges who acts for a token of the provider `spec` names, for the
/// backend `spec.audience` names.
pub trait Exchanger: Send + Sync {
    /// One exchange at the provider; never called for a service.
    fn exchange<'a>(&'a self, who: &'a Identity, spec: &'a TokenExchange) -> ExchangeFuture<'a>;
}

/// Whose token it is: the backend, the tenant, the person and the client
/// acting for them (the token names that client).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    backend: String,
    tenant: String,
    subject: String,
    client_id: String,
}

impl Key {
    fn of(backend: &str, who: &Identity) -> Self {
        Key {
            backend: backend.to_owned(),
            tenant: who.tenant.clone(),
            subject: who.subject.clone(),
            client_id: who.client_id.clone(),
        }
    }
}

struct Kept {
    /// The `Authorization` value, or the refusal to repeat.
    answer: Result<HeaderValue, BackendError>,
    until: Instant,
}

/// Each person's exchanged tokens, by backend and client, until shortly
/// before they expire; at most [`MAX_EXCHANGED`].
#[derive(Default)]
pub(crate) struct ExchangedTokens {
    kept: Mutex<HashMap<Key, Kept>>,
}

impl ExchangedTokens {
    /// The `Authorization` value for `who` at `backend`: the kept one, or
    /// a new one from `exchanger`. Two calls of one person at once may
    /// both exchange; the later answer is kept.
    pub(crate) async fn header(
        &self,
        backend: &str,
        who: &Identity,
        spec: &TokenExchange,
        exchanger: &dyn Exchanger,
    ) -> Result<HeaderValue, BackendError> {
        if who.kind != "user" {
            return Err(BackendError::Refused(format!(
                "backend {backend:?} acts for people (token exchange): a service client \
                 is never given a person's token"
            )));
        }
        let key = Key::of(backend, who);
        if let Some(answer) = self.kept(&key) {
            return answer;
        }
        let exchanged = match exchanger.exchange(who, spec).await {
            Ok(exchanged) => exchanged,
            Err(e) => {
                let refused = refusal(backend, spec, e);
                self.keep(key, Err(refused.clone()), REFUSAL_MEMORY);
                return Err(refused);
            }
        };
        let mut value = HeaderValue::from_str(&format!("Bearer {}", exchanged.token))
            .map_err(|_| refusal(backend, spec, ExchangeError::Refused("not a header".into())))?;
        value.set_sensitive(true);
        let reusable =
            (exchanged.expires_in).saturating_sub(EXCHANGE_MARGIN.min(exchanged.expires_in / 2));
        if reusable >= MIN_KEPT {
            self.keep(key, Ok(value.clone()), reusable);
        }
        Ok(value)
    }

    fn kept(&self, key: &Key) -> Option<Result<HeaderValue, BackendError>> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        (kept.get(key))
            .filter(|k| k.until > Instant::now())
            .map(|k| k.answer.clone())
    }

    /// Keeps `answer` for `key` for `life`, within [`MAX_EXCHANGED`].
    fn keep(&self, key: Key, answer: Result<HeaderValue, BackendError>, life: Duration) {
        let now = Instant::now();
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= MAX_EXCHANGED && !kept.contains_key(&key) {
            kept.retain(|_, k| k.until > now);
            if kept.len() >= MAX_EXCHANGED {
                let soonest = kept.iter().min_by_key(|(_, k)| k.until);
                if let Some(soonest) = soonest.map(|(key, _)| key.clone()) {
                    kept.remove(&soonest);
                }
            }
        }
        let until = now + life;
        kept.insert(key, Kept { answer, until });
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.kept.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// What the plugin is told when no token could be had; the provider's
/// own words go to the log only.
fn refusal(backend: &str, spec: &TokenExchange, e: ExchangeError) -> BackendError {
    let provider = &spec.provider;
    match e {
        ExchangeError::NotLinked { .. } => BackendError::Refused(format!(
            "backend {backend:?} acts for people signed in through {provider:?}: sign in \
             with it once, then call again"
        )),
        ExchangeError::Refused(reason) => {
            tracing::warn!(backend, provider, %reason, "token exchange refused");
            BackendError::Refused(format!(
                "the identity provider {provider:?} did not give a token for backend {backend:?}"
            ))
        }
        ExchangeError::Unavailable(reason) => {
            tracing::warn!(backend, provider, %reason, "token exchange failed");
            BackendError::Unavailable(format!("the identity provider {provider:?} did not answer"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts exchanges; the token names the person, the client and the count.
    struct Counting {
        n: AtomicUsize,
        expires_in: Duration,
    }

    impl Counting {
        fn lasting(expires_in: Duration) -> Self {
            Counting {
                n: AtomicUsize::new(0),
                expires_in,
            }
        }
    }

    impl Exchanger for Counting {
        fn exchange<'a>(&'a self, who: &'a Identity, _: &'a TokenExchange) -> ExchangeFuture<'a> {
            let n = self.n.fetch_add(1, Ordering::Relaxed);
            let token = format!("{}.{}.{n}", who.subject, who.client_id);
            let expires_in = self.expires_in;
            Box::pin(async move { Ok(Exchanged { token, expires_in }) })
        }
    }

    fn person(subject: &str) -> Identity {
        Identity {
            subject: subject.into(),
            kind: "user",
            tenant: "demo".into(),
            client_id: "client-1".into(),
            tool: "list_projects".into(),
            call_id: "call-1".into(),
        }
    }

    fn spec() -> TokenExchange {
        TokenExchange {
            provider: "corp".into(),
            audience: "https://crm.example".into(),
            scope: None,
        }
    }

    fn run<T>(f: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(f)
    }

    /// `who`'s token at `backend`, asked for on a runtime of its own.
    fn ask(
        tokens: &ExchangedTokens,
        backend: &str,
        who: &Identity,
        exchanger: &dyn Exchanger,
    ) -> Result<HeaderValue, BackendError> {
        run(tokens.header(backend, who, &spec(), exchanger))
    }

    #[test]
    fn each_person_has_their_own_token_kept_across_calls() {
        let tokens = ExchangedTokens::default();
        let exchanger = Counting::lasting(Duration::from_secs(300));
        let ann = ask(&tokens, "crm", &person("ann"), &exchanger).expect("a token");
        assert_eq!(ann.to_str().expect("text"), "Bearer ann.client-1.0");
        assert!(ann.is_sensitive());
        let again = ask(&tokens, "crm", &person("ann"), &exchanger).expect("kept");
        assert_eq!(again, ann, "a later call of ann reuses hers");
        let bob = ask(&tokens, "crm", &person("bob"), &exchanger).expect("a token");
        assert_eq!(bob.to_str().expect("text"), "Bearer bob.client-1.1");
        let other_client = Identity {
            client_id: "client-2".into(),
            ..person("ann")
        };
        let through = ask(&tokens, "crm", &other_client, &exchanger).expect("a token");
        assert_ne!(through, ann, "the token names its client");
        let other_backend = ask(&tokens, "billing", &person("ann"), &exchanger);
        assert_ne!(other_backend.expect("a token"), ann);
        assert_eq!(exchanger.n.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn a_short_lived_token_is_used_once_and_not_kept() {
        let tokens = ExchangedTokens::default();
        let exchanger = Counting::lasting(Duration::from_secs(8));
        for _ in 0..2 {
            ask(&tokens, "crm", &person("ann"), &exchanger).expect("a token");
        }
        assert_eq!(exchanger.n.load(Ordering::Relaxed), 2);
        assert_eq!(tokens.len(), 0);
    }

    #[test]
    fn a_service_never_gets_a_token() {
        let (tokens, exchanger) = (
            ExchangedTokens::default(),
            Counting::lasting(Duration::from_secs(300)),
        );
        let service = Identity {
            kind: "service",
            ..person("svc-nightly")
        };
        let err = ask(&tokens, "crm", &service, &exchanger).expect_err("refused");
        assert!(
            matches!(&err, BackendError::Refused(m) if m.contains("service")),
            "{err}"
        );
        assert_eq!(exchanger.n.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn the_plugin_learns_what_to_do_not_the_providers_words() {
        struct Failing(ExchangeError);
        impl Exchanger for Failing {
            fn exchange<'a>(&'a self, _: &'a Identity, _: &'a TokenExchange) -> ExchangeFuture<'a> {
                let e = self.0.clone();
                Box::pin(async move { Err(e) })
            }
        }
        let asked = |e: ExchangeError| {
            let failing = Failing(e);
            let tokens = ExchangedTokens::default();
            ask(&tokens, "crm", &person("ann"), &failing).expect_err("no token")
        };
        let unlinked = asked(ExchangeError::NotLinked {
            provider: "corp".into(),
        });
        assert!(
            matches!(&unlinked, BackendError::Refused(m) if m.contains("sign in")),
            "{unlinked}"
        );
        let refused = asked(ExchangeError::Refused(
            "invalid_grant: subject sub-9".into(),
        ));
        assert!(
            matches!(&refused, BackendError::Refused(m) if !m.contains("sub-9")),
            "{refused}"
        );
        let down = asked(ExchangeError::Unavailable(
            "connection refused 10.1.2.3".into(),
        ));
        assert!(
            matches!(&down, BackendError::Unavailable(m) if !m.contains("10.1")),
            "{down}"
        );
    }

    #[test]
    fn a_refusal_is_repeated_for_a_while_without_asking_again() {
        /// Refuses, counting the times it was asked.
        #[derive(Default)]
        struct Refusing(AtomicUsize);
        impl Exchanger for Refusing {
            fn exchange<'a>(&'a self, _: &'a Identity, _: &'a TokenExchange) -> ExchangeFuture<'a> {
                self.0.fetch_add(1, Ordering::Relaxed);
                Box::pin(async { Err(ExchangeError::Refused("invalid_grant".into())) })
            }
        }
        let (tokens, refusing) = (ExchangedTokens::default(), Refusing::default());
        let first = ask(&tokens, "crm", &person("ann"), &refusing).expect_err("refused");
        for _ in 0..100 {
            let again = ask(&tokens, "crm", &person("ann"), &refusing).expect_err("refused");
            assert_eq!(again, first);
        }
        assert_eq!(refusing.0.load(Ordering::Relaxed), 1, "asked once");
        ask(&tokens, "crm", &person("bob"), &refusing).expect_err("bob's own answer");
        assert_eq!(refusing.0.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn the_kept_tokens_are_bounded() {
        let tokens = ExchangedTokens::default();
        let value = HeaderValue::from_static("Bearer t");
        for i in 0..MAX_EXCHANGED + 50 {
            let who = person(&format!("p{i}"));
            tokens.keep(
                Key::of("crm", &who),
                Ok(value.clone()),
                Duration::from_secs(300),
            );
        }
        assert_eq!(tokens.len(), MAX_EXCHANGED);
        let newest = person(&format!("p{}", MAX_EXCHANGED + 49));
        assert!(
            tokens.kept(&Key::of("crm", &newest)).is_some(),
            "the newest stays"
        );
    }
}
