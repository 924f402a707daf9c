//! `GET /api/_pace?ms=N`: answers `{"waited_ms": N}` after waiting N ms.
//!
//! A test's clock, not test-platform data: an exploration run that paces
//! its steps with it takes seconds, long enough to watch, cancel or
//! restart, while every one of its requests still shows in the counters
//! (the guard counts a request when it arrives, before the wait). The wait
//! holds no lock, so other requests are served meanwhile.

use std::time::Duration;

use axum::Json;
use axum::extract::Query;
use axum::extract::rejection::QueryRejection;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

/// The longest one request waits, in milliseconds. Five seconds keeps a
/// single request under any sane client or host timeout; a longer pause is
/// several requests, each of them counted.
pub(crate) const MAX_PACE_MS: u64 = 5_000;

/// `?ms=N`; no `ms` waits nothing.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PaceQuery {
    ms: u64,
}

/// The answer: how long the request actually waited.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Paced {
    waited_ms: u64,
}

/// How long a request asking for `ms` waits: `ms`, at most [`MAX_PACE_MS`].
pub(crate) fn wait_for(ms: u64) -> Duration {
    Duration::from_millis(ms.min(MAX_PACE_MS))
}

/// Waits, then says how long. A non-numeric `ms` is 400.
pub(crate) async fn pace(
    query: Result<Query<PaceQuery>, QueryRejection>,
) -> Result<Json<Paced>, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let wait = wait_for(q.ms);
    tokio::time::sleep(wait).await;
    let waited_ms = u64::try_from(wait.as_millis()).expect("at most MAX_PACE_MS");
    Ok(Json(Paced { waited_ms }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_waits_what_it_asks_for_up_to_the_cap() {
        for (asked, waits) in [
            (0, 0),
            (1, 1),
            (4_999, 4_999),
            (5_000, 5_000),
            (5_001, 5_000),
        ] {
            assert_eq!(wait_for(asked), Duration::from_millis(waits), "{asked}");
        }
        assert_eq!(wait_for(u64::MAX), Duration::from_millis(MAX_PACE_MS));
    }
}
