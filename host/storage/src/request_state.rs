//! The keys MRTR request states are sealed with, and the states already
//! answered, shared by every replica on the store (`request_state_keys`,
//! `request_state_spent`, migration 0015).
//!
//! Keys are per day (a bucket of [`KEY_PERIOD`]): the key of today and of
//! tomorrow exist as soon as any replica asks, made by whichever replica asks
//! first (`ON CONFLICT DO NOTHING`: every replica reads the same bytes). A
//! replica seals with today's key and opens with yesterday's, today's and
//! tomorrow's, so a replica whose clock is a little ahead, or which reloaded
//! its keys just before midnight, still opens what the others seal. A state
//! lives minutes; keys older than yesterday are deleted.

use crate::connect::{execute, fetch_all};
use crate::fields::Fields as _;
use crate::{StorageError, Store};

/// How long one sealing key is the active one, in seconds.
pub const KEY_PERIOD: i64 = 24 * 3600;

const MAKE_KEY: &str = "INSERT INTO request_state_keys (bucket, key, created_at) \
     VALUES ($1, $2, $3) ON CONFLICT (bucket) DO NOTHING";
const DROP_OLD_KEYS: &str = "DELETE FROM request_state_keys WHERE bucket < $1";
const KEYS: &str = "SELECT bucket, key FROM request_state_keys WHERE bucket >= $1 ORDER BY bucket";
const SPEND: &str = "INSERT INTO request_state_spent (nonce, expires_at) VALUES ($1, $2) \
     ON CONFLICT (nonce) DO NOTHING";
const PURGE_SPENT: &str = "DELETE FROM request_state_spent WHERE expires_at < $1";

/// The keys a replica seals and opens request states with at one time.
#[derive(Clone, PartialEq, Eq)]
pub struct RequestStateKeys {
    /// The key id states are sealed with now.
    pub active: String,
    /// Every key id that may open a state, with its 32 bytes.
    pub keys: Vec<(String, Vec<u8>)>,
}

impl std::fmt::Debug for RequestStateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|(kid, _)| kid.as_str()).collect();
        f.debug_struct("RequestStateKeys")
            .field("active", &self.active)
            .field("keys", &ids)
            .finish()
    }
}

fn kid(bucket: i64) -> String {
    format!("rs{bucket}")
}

impl Store {
    /// The request-state keys at `now` (unix seconds), making today's and
    /// tomorrow's if no replica has yet, and forgetting those older than
    /// yesterday and the spent states that have expired.
    pub async fn request_state_keys(&self, now: i64) -> Result<RequestStateKeys, StorageError> {
        let today = now.div_euclid(KEY_PERIOD);
        for bucket in [today, today + 1] {
            let mut key = [0u8; 32];
            getrandom::fill(&mut key).map_err(|e| StorageError::Query {
                operation: "make a request-state key",
                message: e.to_string(),
            })?;
            execute!(&self.pools, MAKE_KEY, bucket, key.to_vec(), now)
                .map_err(StorageError::query("make a request-state key"))?;
        }
        execute!(&self.pools, DROP_OLD_KEYS, today - 1)
            .map_err(StorageError::query("drop old request-state keys"))?;
        execute!(&self.pools, PURGE_SPENT, now)
            .map_err(StorageError::query("purge spent request states"))?;
        let keys = fetch_all!(
            &self.pools,
            |row| Ok((kid(row.int("bucket")?), row.bytes("key")?)),
            KEYS,
            today - 1
        )
        .map_err(StorageError::query("read request-state keys"))?;
        Ok(RequestStateKeys {
            active: kid(today),
            keys,
        })
    }

    /// Spends the request state `nonce` (remembered until `expires_at`,
    /// unix seconds): true for the first answer on any replica, false for
    /// every later one. The database decides a race.
    pub async fn spend_request_state(
        &self,
        nonce: &str,
        expires_at: i64,
    ) -> Result<bool, StorageError> {
        let added = execute!(&self.pools, SPEND, nonce, expires_at)
            .map_err(StorageError::query("spend a request state"))?;
        Ok(added == 1)
    }
}
