//! The running backend's shared state, and the [`Handle`] tests hold to read
//! counters and change the data without going through HTTP.

use std::sync::{Arc, Mutex, PoisonError};

use crate::authority::{Asserted, AssertionCheck, Keys};
use crate::counters::Counters;
use crate::execution::Advance;
use crate::provider::{ProviderCheck, ProviderToken};
use crate::seed::{Seed, SeedError};
use crate::store::Store;

/// A handle on one backend's state; clones share it.
#[derive(Clone)]
pub struct Handle {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle").finish_non_exhaustive()
    }
}

struct Shared {
    token: String,
    seed: Seed,
    advance: Advance,
    test_api: bool,
    /// Whether requests must carry the host's identity assertion.
    check: Mutex<Option<AssertionCheck>>,
    keys: Keys,
    /// Whether the bearer token must be the identity provider's.
    provider_check: Mutex<Option<ProviderCheck>>,
    provider_keys: Keys,
    state: Mutex<State>,
}

/// Most assertions [`Handle::assertions`] keeps: the latest, for tests.
const KEPT_ASSERTIONS: usize = 1000;

/// What a request may change, under one lock so a reset is atomic.
pub(crate) struct State {
    pub(crate) store: Store,
    pub(crate) counters: Counters,
    /// The assertions accepted, oldest first (at most [`KEPT_ASSERTIONS`]).
    pub(crate) asserted: Vec<Asserted>,
    /// The provider tokens accepted, oldest first (at most [`KEPT_ASSERTIONS`]).
    pub(crate) exchanged: Vec<ProviderToken>,
}

impl Handle {
    pub(crate) fn new(config: crate::Config) -> Handle {
        let state = State {
            store: Store::new(config.seed.clone()),
            counters: Counters::default(),
            asserted: Vec::new(),
            exchanged: Vec::new(),
        };
        let shared = Shared {
            token: config.token,
            seed: config.seed,
            advance: config.advance,
            test_api: config.test_api,
            check: Mutex::default(),
            keys: Keys::default(),
            provider_check: Mutex::default(),
            provider_keys: Keys::default(),
            state: Mutex::new(state),
        };
        Handle {
            shared: Arc::new(shared),
        }
    }

    /// A snapshot of the request counters.
    pub fn counters(&self) -> Counters {
        self.with(|s| s.counters.clone())
    }

    /// Counters to zero, data back to the configured seed, executions
    /// cleared (numbering restarts at `ex-1`), leak mode off.
    pub fn reset(&self) {
        let seed = self.shared.seed.clone();
        self.with(|s| {
            *s = State {
                store: Store::new(seed),
                counters: Counters::default(),
                asserted: Vec::new(),
                exchanged: Vec::new(),
            }
        });
    }

    /// Leak mode: reads skip the tenant predicate and return every
    /// tenant's rows. Off by default and after [`Handle::reset`].
    pub fn set_leak(&self, on: bool) {
        self.with(|s| s.store.set_leak(on));
    }

    /// Replaces the data with `seed` (checked first; nothing changes on
    /// error), clearing executions and counters. Leak mode is kept. A later
    /// [`Handle::reset`] returns to the configured seed, not this one.
    pub fn load(&self, seed: Seed) -> Result<(), SeedError> {
        seed.check()?;
        self.with(|s| {
            let mut store = Store::new(seed);
            store.set_leak(s.store.leaking());
            *s = State {
                store,
                counters: Counters::default(),
                asserted: Vec::new(),
                exchanged: Vec::new(),
            };
        });
        Ok(())
    }

    /// From now on every `/api` request must carry the host's identity
    /// assertion (`X-Toolhost-Assertion`), verified against the host's
    /// JWKS as `check` says, else it is a 401; projects with `people` are
    /// then seen by those people only. Kept across [`Handle::reset`].
    pub fn require_assertions(&self, check: AssertionCheck) {
        *self
            .shared
            .check
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(check);
    }

    /// The identity assertions accepted since the start or the last reset,
    /// oldest first (the latest thousand).
    pub fn assertions(&self) -> Vec<Asserted> {
        self.with(|s| s.asserted.clone())
    }

    pub(crate) fn assertion_check(&self) -> Option<AssertionCheck> {
        (self
            .shared
            .check
            .lock()
            .unwrap_or_else(PoisonError::into_inner))
        .clone()
    }

    pub(crate) fn keys(&self) -> &Keys {
        &self.shared.keys
    }

    /// From now on every `/api` request's bearer token must be an access
    /// token the identity provider issued for this backend, verified as
    /// `check` says (the static token no longer suffices), else it is a
    /// 401; projects with `people` are then seen by those people only, by
    /// the provider's subject for them. Kept across [`Handle::reset`].
    pub fn require_provider_tokens(&self, check: ProviderCheck) {
        let mut kept = (self.shared.provider_check.lock()).unwrap_or_else(PoisonError::into_inner);
        *kept = Some(check);
    }

    /// The provider tokens accepted since the start or the last reset,
    /// oldest first (the latest thousand).
    pub fn provider_tokens(&self) -> Vec<ProviderToken> {
        self.with(|s| s.exchanged.clone())
    }

    pub(crate) fn provider_check(&self) -> Option<(ProviderCheck, &Keys)> {
        let check = (self.shared.provider_check.lock()).unwrap_or_else(PoisonError::into_inner);
        check.clone().map(|c| (c, &self.shared.provider_keys))
    }

    /// Keeps an accepted provider token for [`Handle::provider_tokens`].
    pub(crate) fn accepted_token(&self, token: ProviderToken) {
        self.with(|s| {
            if s.exchanged.len() == KEPT_ASSERTIONS {
                s.exchanged.remove(0);
            }
            s.exchanged.push(token);
        });
    }

    /// Keeps an accepted assertion for [`Handle::assertions`].
    pub(crate) fn accepted(&self, asserted: Asserted) {
        self.with(|s| {
            if s.asserted.len() == KEPT_ASSERTIONS {
                s.asserted.remove(0);
            }
            s.asserted.push(asserted);
        });
    }

    pub(crate) fn token(&self) -> &str {
        &self.shared.token
    }

    pub(crate) fn advance(&self) -> Advance {
        self.shared.advance
    }

    pub(crate) fn test_api(&self) -> bool {
        self.shared.test_api
    }

    /// Runs `f` under the lock. A panic in another request cannot leave the
    /// state half-written (every change is one assignment or push), so a
    /// poisoned lock is still used.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let mut state = self
            .shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f(&mut state)
    }
}
