//! Request counters: how many authenticated `/api` requests each route
//! received, and how many writes succeeded. Tests read them to prove the
//! host's caches (one `GET /api/projects` per conversation) and refusals
//! (nothing written).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A snapshot of the counters, as `GET /_test/counters` answers it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Keyed by method and route template, e.g.
    /// `GET /api/projects/{id}/applications`. Only requests that passed the
    /// token check count, whatever they answered afterwards.
    pub requests: BTreeMap<String, u64>,
    /// Successful `POST`s under `/api`: rows, executions or a batch of
    /// draft tests created (one each), and dispositions recorded.
    pub writes: u64,
}

impl Counters {
    /// The count for one `METHOD /route/{template}` key; 0 if never hit.
    pub fn requests_to(&self, route: &str) -> u64 {
        self.requests.get(route).copied().unwrap_or(0)
    }

    /// Every request counted, across routes.
    pub fn total(&self) -> u64 {
        self.requests.values().sum()
    }

    pub(crate) fn hit(&mut self, route: &str) {
        *self.requests.entry(route.to_owned()).or_default() += 1;
    }
}
