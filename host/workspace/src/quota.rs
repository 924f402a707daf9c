//! What one principal may hold in uploads: [`UploadQuota`], checked
//! against what it holds ([`HeldUploads`]) before an upload's body is read
//! and again as its bytes arrive. Pure: the store reads what is held and
//! repeats the check in its own statements (see `storage`'s workspace
//! module for the race that leaves).

/// The most uploads, and bytes across them, one principal (a tenant's
/// subject) may hold at once. Only uploads no proposal names count: an
/// arriving one with the bytes in so far, a finished one until it expires.
/// An upload a proposal names is kept as long as its session and counts no
/// more; proposals are bounded by the write rate, not by this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadQuota {
    /// Most uploads held at once.
    pub uploads: u64,
    /// Most bytes across them.
    pub bytes: u64,
}

impl UploadQuota {
    /// 64 uploads and 256 MiB: a principal authoring several plugins at
    /// once keeps a component, a manifest and a signature for each of a
    /// few dozen revisions (eight 32 MiB components at most), while one
    /// principal can hold no more than a quarter of a GiB of the store.
    pub const DEFAULT: UploadQuota = UploadQuota {
        uploads: 64,
        bytes: 256 * 1024 * 1024,
    };

    /// Whether `held` may grow by one upload of `declared` bytes.
    pub fn admits_another(&self, held: HeldUploads, declared: u64) -> Result<(), QuotaExceeded> {
        if held.uploads.saturating_add(1) > self.uploads {
            return Err(QuotaExceeded::Uploads {
                limit: self.uploads,
            });
        }
        self.admits_bytes(held, declared)
    }

    /// Whether `held` may grow by `more` bytes.
    pub fn admits_bytes(&self, held: HeldUploads, more: u64) -> Result<(), QuotaExceeded> {
        if held.bytes.saturating_add(more) > self.bytes {
            return Err(QuotaExceeded::Bytes {
                limit: self.bytes,
                held: held.bytes,
            });
        }
        Ok(())
    }
}

impl Default for UploadQuota {
    fn default() -> Self {
        UploadQuota::DEFAULT
    }
}

/// What one principal holds now in uploads that count against its quota.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeldUploads {
    /// Uploads arriving or finished, unexpired, that no proposal names.
    pub uploads: u64,
    /// Their bytes (an arriving one's so far).
    pub bytes: u64,
}

/// Which quota an upload would break. Nothing of it is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QuotaExceeded {
    /// The count.
    #[error(
        "a principal holds at most {limit} uploads no proposal names (max_uploads_per_principal); \
         name them in a proposal or wait until they expire"
    )]
    Uploads {
        /// The bound.
        limit: u64,
    },
    /// The bytes.
    #[error(
        "a principal holds at most {limit} bytes of uploads no proposal names \
         (max_upload_bytes_per_principal); {held} are held already"
    )]
    Bytes {
        /// The bound.
        limit: u64,
        /// What was held before this upload.
        held: u64,
    },
}

impl QuotaExceeded {
    /// The configuration key of the quota: `max_uploads_per_principal` or
    /// `max_upload_bytes_per_principal`.
    pub fn key(&self) -> &'static str {
        match self {
            QuotaExceeded::Uploads { .. } => "max_uploads_per_principal",
            QuotaExceeded::Bytes { .. } => "max_upload_bytes_per_principal",
        }
    }

    /// The bound that was reached.
    pub fn limit(&self) -> u64 {
        match self {
            QuotaExceeded::Uploads { limit } | QuotaExceeded::Bytes { limit, .. } => *limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUOTA: UploadQuota = UploadQuota {
        uploads: 2,
        bytes: 100,
    };

    fn held(uploads: u64, bytes: u64) -> HeldUploads {
        HeldUploads { uploads, bytes }
    }

    #[test]
    fn another_upload_is_admitted_up_to_the_count_and_the_bytes_and_no_further() {
        let cases = [
            (held(0, 0), 100, Ok(())),
            (held(1, 60), 40, Ok(())),
            (
                held(1, 60),
                41,
                Err(QuotaExceeded::Bytes {
                    limit: 100,
                    held: 60,
                }),
            ),
            (held(2, 0), 0, Err(QuotaExceeded::Uploads { limit: 2 })),
            (
                held(0, 0),
                u64::MAX,
                Err(QuotaExceeded::Bytes {
                    limit: 100,
                    held: 0,
                }),
            ),
        ];
        for (h, declared, want) in cases {
            assert_eq!(
                QUOTA.admits_another(h, declared),
                want,
                "{h:?} + {declared}"
            );
        }
    }

    #[test]
    fn arriving_bytes_are_admitted_while_the_total_stays_within_the_bound() {
        assert_eq!(QUOTA.admits_bytes(held(2, 99), 1), Ok(()));
        let over = QUOTA.admits_bytes(held(2, 99), 2).expect_err("over");
        assert_eq!(
            (over.key(), over.limit()),
            ("max_upload_bytes_per_principal", 100)
        );
    }
}
