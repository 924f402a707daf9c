//! Conversions between the 0.1.0 and the current generated types. They are
//! the same records under two versioned names, so each conversion is field
//! by field; [`Convert`] carries them through lists, options, tuples and
//! results.

use super::bindings::exports::toolhost::plugin::{
    authoring as old_authoring, entities as old_entities,
};
use super::bindings::toolhost::plugin as old;
use crate::bindings::exports::toolhost::plugin::{authoring, entities};
use crate::bindings::toolhost::plugin as new;

/// A value of one contract version as the other's.
pub(crate) trait Convert<T> {
    fn convert(self) -> T;
}

macro_rules! same {
    ($($t:ty),*) => {$(
        impl Convert<$t> for $t {
            fn convert(self) -> $t {
                self
            }
        }
    )*};
}
same!(String, bool, u8, u16, u32, u64, i64, f64);

impl<A: Convert<B>, B> Convert<Vec<B>> for Vec<A> {
    fn convert(self) -> Vec<B> {
        self.into_iter().map(Convert::convert).collect()
    }
}

impl<A: Convert<B>, B> Convert<Option<B>> for Option<A> {
    fn convert(self) -> Option<B> {
        self.map(Convert::convert)
    }
}

impl<A: Convert<C>, B: Convert<D>, C, D> Convert<(C, D)> for (A, B) {
    fn convert(self) -> (C, D) {
        (self.0.convert(), self.1.convert())
    }
}

impl<A: Convert<C>, B: Convert<D>, C, D> Convert<Result<C, D>> for Result<A, B> {
    fn convert(self) -> Result<C, D> {
        self.map(Convert::convert).map_err(Convert::convert)
    }
}

/// A record with the same fields in both versions.
macro_rules! record {
    ($from:ty => $to:path { $($field:ident),* $(,)? }) => {
        impl Convert<$to> for $from {
            fn convert(self) -> $to {
                $to { $($field: self.$field.convert()),* }
            }
        }
    };
}

/// An enum or variant with the same cases in both versions (each case with
/// no payload or one).
macro_rules! cases {
    ($from:ident => $to:ident { $($case:ident $(($p:ident))?),* $(,)? }) => {
        impl Convert<$to> for $from {
            fn convert(self) -> $to {
                match self {
                    $($from::$case $(($p))? => $to::$case $(($p.convert()))?),*
                }
            }
        }
    };
}

// The imports' arguments, 0.1.0 → current.
use new::backend::{Method as NewMethod, Request as NewRequest};
use new::log::Level as NewLevel;
use new::resolver::{Pin as NewPin, Query as NewQuery};
use old::backend::{Method as OldMethod, Request as OldRequest};
use old::log::Level as OldLevel;
use old::resolver::{Pin as OldPin, Query as OldQuery};

cases!(OldLevel => NewLevel { Trace, Debug, Info, Warn, Error });
record!(OldPin => NewPin { kind, id });
record!(OldQuery => NewQuery { kind, field, value, pins, within, question });
cases!(OldMethod => NewMethod { Get, Head, Post, Put, Patch, Delete });
record!(OldRequest => NewRequest { backend, method, path, headers, body });

// The imports' results, current → 0.1.0.
use new::artifacts::ArtifactInfo as NewArtifactInfo;
use new::backend::{Error as NewBackendError, Response as NewResponse};
use new::checkpoint::CheckpointInfo as NewCheckpointInfo;
use new::resolver::{
    Candidate as NewCandidate, Clarification as NewClarification, Reason as NewReason,
    Resolved as NewResolved,
};
use old::artifacts::ArtifactInfo as OldArtifactInfo;
use old::backend::{Error as OldBackendError, Response as OldResponse};
use old::checkpoint::CheckpointInfo as OldCheckpointInfo;
use old::resolver::{
    Candidate as OldCandidate, Clarification as OldClarification, Reason as OldReason,
    Resolved as OldResolved,
};

record!(NewResolved => OldResolved { id, name });
cases!(NewReason => OldReason { Ambiguous, NotFound, MissingRequired });
record!(NewCandidate => OldCandidate { id, name, label });
record!(NewClarification => OldClarification { reason, ask_user, candidates, scoped_by, field });
record!(NewResponse => OldResponse { status, headers, body });
cases!(NewBackendError => OldBackendError {
    NotDeclared(x), Refused(x), Timeout, TooLarge, Unavailable(x)
});
record!(NewCheckpointInfo => OldCheckpointInfo { id, version, state, disposition, outcome });
record!(NewArtifactInfo => OldArtifactInfo { uri, sha256, size });

// The exports' arguments, current → 0.1.0.
record!(new::types::CallContext => old::types::CallContext { call_id, tenant, principal });

// The exports' answers, 0.1.0 → current.
use new::types::{
    Annotations as NewAnnotations, CallPlan as NewCallPlan, Permission as NewPermission,
    Risk as NewRisk, Target as NewTarget, ToolError as NewToolError, ToolOutput as NewToolOutput,
    ToolSpec as NewToolSpec,
};
use old::types::{
    Annotations as OldAnnotations, CallPlan as OldCallPlan, Permission as OldPermission,
    Risk as OldRisk, Target as OldTarget, ToolError as OldToolError, ToolOutput as OldToolOutput,
    ToolSpec as OldToolSpec,
};

record!(OldPermission => NewPermission { resource, action });
cases!(OldRisk => NewRisk { Low, Medium, High });
record!(OldAnnotations => NewAnnotations { read_only, destructive, idempotent, open_world });
record!(OldToolSpec => NewToolSpec {
    name, title, description, input_schema, output_schema, annotations, permission, risk, mutating
});
record!(OldTarget => NewTarget { kind, id, name, tags });
record!(OldCallPlan => NewCallPlan { targets, risk, summary });
cases!(OldToolError => NewToolError {
    UnknownTool(x), InvalidArguments(x), NotFound(x), Failed(x)
});

/// A 0.1.0 answer has no content blocks.
impl Convert<NewToolOutput> for OldToolOutput {
    fn convert(self) -> NewToolOutput {
        NewToolOutput {
            structured: self.structured,
            text: self.text,
            content: Vec::new(),
        }
    }
}

record!(old_entities::Parent => entities::Parent { kind, id });
record!(old_entities::Entity => entities::Entity { id, name, tenant, parents, detail });

use authoring::{
    AuthoringKind as NewKind, Change as NewChange, ChangeOp as NewChangeOp,
    CurrentState as NewCurrentState, Problem as NewProblem,
};
use old_authoring::{
    AuthoringKind as OldKind, Change as OldChange, ChangeOp as OldChangeOp,
    CurrentState as OldCurrentState, Problem as OldProblem,
};

record!(OldKind => NewKind { name, description, subject_kind, promoted_by });
record!(OldCurrentState => NewCurrentState { version, body });
record!(OldProblem => NewProblem { path, message });
cases!(OldChangeOp => NewChangeOp { Added, Changed, Removed });
record!(OldChange => NewChange { op, item, before, after });
