//! The authoring workspace (DESIGN.md "Authoring workspace", seed 002
//! MCPX-FR-022..025): agents author through sessions the host owns.
//!
//! This room owns what the workspace *is*: the ids it mints
//! ([`SessionId`], [`ProposalId`], [`UploadHandle`], [`PromotionId`]),
//! what a session authors ([`Subject`]), the rows it keeps
//! ([`Session`], [`Proposal`], [`RunLink`], [`Promotion`], [`Upload`]),
//! the rules that keep caller authority out of proposals while their
//! data stays data ([`refuse_authority`], [`refuse_unhandled_files`],
//! [`refuse_declared`]), what one principal may hold in uploads
//! ([`UploadQuota`]), the mutation written with an audit row
//! ([`WorkspaceEffect`]) and the store that reads them back
//! ([`WorkspaceStore`]). It decides nothing about plugins: the
//! authoring service (`toolhost_authoring`) validates, diffs and promotes (through the catalog, or through the
//! plugin's `authoring` export and promoting tool); `storage` keeps the
//! rows on SQLite and PostgreSQL.
//!
//! Every mutation names the session version it read and an idempotency
//! key: the store moves the version by compare-and-set in the audit row's
//! transaction, so of two mutations against one version exactly one is
//! written, and a replay finds its first answer under its key.
//!
//! ```
//! use toolhost_workspace::{Subject, refuse_authority};
//! use toolhost_secrets::Scanner;
//!
//! let subject: Subject = "testbench/test_plan:payments".parse().unwrap();
//! assert_eq!(subject.plugin().as_str(), "testbench");
//! let step = serde_json::json!({"steps": ["open https://shop.example/login"]});
//! assert!(refuse_authority(&step, &Scanner::new()).is_ok());
//! let key = serde_json::json!({"api_key": "k-123"});
//! assert!(refuse_authority(&key, &Scanner::new()).is_err());
//! ```

mod authority;
mod effect;
mod id;
mod page;
mod quota;
mod records;
mod store;
mod subject;

pub use authority::{
    AUTHORITY_KEYWORD, AuthorityKind, AuthorityRefusal, refuse_authority, refuse_declared,
    refuse_unhandled_files,
};
pub use effect::{Binding, Mutation, SessionChange, WorkspaceEffect};
pub use id::{PromotionId, ProposalId, SessionId, UploadHandle};
pub use page::{SessionKey, SessionsFrom};
pub use quota::{HeldUploads, QuotaExceeded, UploadQuota};
pub use records::{
    ArrivingUpload, BoundObject, Promotion, PromotionState, Proposal, RunLink, Session,
    SessionState, SessionView, Upload, UploadKind,
};
pub use store::{
    ArrivingState, ChunkKept, PartKept, UploadChunk, UploadPart, WorkspaceFuture, WorkspaceStore,
    WorkspaceStoreError,
};
pub use subject::{MAX_OBJECT_CHARS, Subject, SubjectError};
