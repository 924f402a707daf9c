//! The rows the workspace keeps: sessions, proposals, the runs linked to a
//! session, promotions and uploads. Plain data: the authoring service
//! decides what goes in them, `storage` keeps them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{PromotionId, ProposalId, SessionId, Subject, UploadHandle};

/// Defines a state enum stored by its snake_case name.
macro_rules! stored_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            /// Every value, in lifecycle order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s)
                    .ok_or_else(|| format!(concat!("{:?} is not a ", stringify!($name)), s))
            }
        }
    };
}

stored_enum!(
    /// Where a session is in its life.
    SessionState {
        /// Proposals, explorations and promotions are accepted.
        Open => "open",
        /// A proposal was promoted: the session's work is with review (a
        /// plugin revision) or done (a domain object). It takes no more
        /// mutations.
        Promoted => "promoted",
        /// Closed by a co-author: its work is done without a promotion (or
        /// elsewhere). Kept as the record it is; it takes no more
        /// mutations, and its runs end as they would.
        Closed => "closed",
        /// Given up by a co-author: it takes no more mutations, and its runs
        /// not yet over were cancelled with it.
        Abandoned => "abandoned",
    }
);

stored_enum!(
    /// Where a promotion is.
    PromotionState {
        /// A plugin revision submitted for review: a reviewer's approval
        /// activates it, nothing else does.
        PendingReview => "pending_review",
        /// The promoting tool's call waits for a person's approval (its
        /// gate); promote again with the gate id once it is confirmed.
        AwaitingApproval => "awaiting_approval",
        /// The promoting tool ran and answered.
        Promoted => "promoted",
    }
);

stored_enum!(
    /// What an upload holds.
    UploadKind {
        /// A WebAssembly component.
        Component => "component",
        /// A plugin manifest (TOML).
        Manifest => "manifest",
        /// A signature over component and manifest (a DSSE envelope or a
        /// Sigstore bundle, JSON).
        Signature => "signature",
    }
);

/// A session as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// Its id.
    pub id: SessionId,
    /// The tenant it belongs to: nobody else's principals see it.
    pub tenant: String,
    /// Who opened it.
    pub owner: String,
    /// What it authors.
    pub subject: Subject,
    /// What the subject resolved to when the session was bound: the
    /// entity's id and name (a domain object), or the plugin's active
    /// revision (a plugin; `None` for a first revision).
    pub bound_to: Option<BoundObject>,
    /// The subject's version when the session was bound (the active
    /// revision id, or the plugin's version of the object); promotion
    /// refuses if it moved.
    pub subject_version: String,
    /// The compare-and-set version: 1 when opened, +1 per mutation.
    pub version: i64,
    /// Its state.
    pub state: SessionState,
    /// Unix milliseconds.
    pub created_at_ms: i64,
    /// Unix milliseconds of the last mutation.
    pub updated_at_ms: i64,
}

/// The entity a session's subject resolved to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoundObject {
    /// Its id (the backend's, as text).
    pub id: String,
    /// Its name.
    pub name: String,
}

/// A proposal: a typed body the host validated, with the diff it computed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proposal {
    /// Its id.
    pub id: ProposalId,
    /// The session it belongs to.
    pub session: SessionId,
    /// Its place in the session, from 1.
    pub number: i64,
    /// Who proposed it.
    pub author: String,
    /// The body as proposed (handles, never bytes or paths).
    pub body: Value,
    /// SHA-256 the host computed over what the body stands for (the
    /// uploads' bytes, or the normalized object): never the caller's.
    pub digest: String,
    /// What validation found (`valid`, whether it is signed, the
    /// normalized object, the runs cited as evidence).
    pub validation: Value,
    /// The diff against the subject as bound (a list of changes).
    pub diff: Value,
    /// The subject's version the session was bound to when the proposal
    /// was made, which its diff is against: once the session is rebound,
    /// an older proposal is not promoted (propose it again).
    pub subject_version: String,
    /// Unix milliseconds.
    pub created_at_ms: i64,
}

/// A run of the session (started with `start_exploration` bound to it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunLink {
    /// The session.
    pub session: SessionId,
    /// The run (`run_…`).
    pub run_id: String,
    /// The proposal whose candidate it ran, if it ran one.
    pub proposal: Option<ProposalId>,
    /// Unix milliseconds.
    pub linked_at_ms: i64,
}

/// A promotion of one proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Promotion {
    /// Its id.
    pub id: PromotionId,
    /// The session.
    pub session: SessionId,
    /// The proposal promoted.
    pub proposal: ProposalId,
    /// Who promoted it.
    pub promoted_by: String,
    /// Where it is.
    pub state: PromotionState,
    /// The catalog revision it submitted (a plugin subject).
    pub revision_id: Option<String>,
    /// The gate the promoting tool's call waits on (a domain subject).
    pub gate_id: Option<String>,
    /// The promoting tool's answer once it ran (a domain subject).
    pub result: Option<Value>,
    /// Unix milliseconds.
    pub created_at_ms: i64,
    /// Unix milliseconds of its last change.
    pub updated_at_ms: i64,
}

/// An upload, without its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upload {
    /// Its handle.
    pub handle: UploadHandle,
    /// The tenant it belongs to.
    pub tenant: String,
    /// Who uploaded it: only they may name it in a proposal.
    pub owner: String,
    /// What it holds.
    pub kind: UploadKind,
    /// Its size in bytes.
    pub size: u64,
    /// SHA-256 of its bytes, computed by the host.
    pub sha256: String,
    /// Unix milliseconds.
    pub created_at_ms: i64,
    /// When it is dropped unless a proposal names it (unix milliseconds).
    pub expires_at_ms: i64,
}

/// An upload whose bytes are arriving: stored in parts as they come, never
/// read until it is finished as an [`Upload`] with its size and digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrivingUpload {
    /// Its handle, given to the caller only once it is finished.
    pub handle: UploadHandle,
    /// The tenant it belongs to.
    pub tenant: String,
    /// Who is uploading it.
    pub owner: String,
    /// What it will hold.
    pub kind: UploadKind,
    /// Unix milliseconds.
    pub created_at_ms: i64,
}

/// Everything a session holds, as one read returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionView {
    /// The session.
    pub session: Session,
    /// Its proposals, oldest first.
    pub proposals: Vec<Proposal>,
    /// Its runs, oldest first.
    pub runs: Vec<RunLink>,
    /// Its promotions, oldest first.
    pub promotions: Vec<Promotion>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_through_their_stored_names() {
        for s in SessionState::ALL {
            assert_eq!(s.as_str().parse::<SessionState>(), Ok(*s));
        }
        for s in PromotionState::ALL {
            assert_eq!(s.as_str().parse::<PromotionState>(), Ok(*s));
        }
        for k in UploadKind::ALL {
            assert_eq!(k.as_str().parse::<UploadKind>(), Ok(*k));
        }
        assert!("ended".parse::<SessionState>().is_err());
        assert_eq!(
            serde_json::to_value(PromotionState::AwaitingApproval).expect("serializes"),
            "awaiting_approval"
        );
    }
}
