//! Catalog decisions: a review approved or rejected, a rollback, a
//! signer's revisions withdrawn. Each is worked out here from what the
//! store holds (the revision, the active one, the capability diff, the
//! catalog's version) into one [`CatalogEffect`] and the audit event that
//! records it; the caller writes both in one transaction
//! (`AuditSink::record_with`). Nothing here writes.

use std::time::SystemTime;

use serde_json::json;
use toolhost_audit::{
    AudienceChange, AuditEvent, CatalogEffect, PinChange, RevisionMove, argument_digest,
};
use toolhost_review::{
    Audience, AudienceError, Capabilities, CatalogVersion, Diff, diff, valid_tenant,
};

use crate::claims::{ClaimError, check_against_active};
use crate::{CatalogStore, CatalogStoreError, Revision, RevisionState};

/// Who decides, as the audit trail names them.
#[derive(Debug, Clone)]
pub struct Decider {
    /// The person (a user's id, or an operator's name at the console).
    pub principal: String,
    /// Their tenant (`(operator)` for the command line).
    pub tenant: String,
    /// The OAuth client they decided through, if any.
    pub client_id: Option<String>,
    /// Whether policy lets a submitter approve their own revision.
    pub may_approve_own: bool,
}

/// A review's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Activate the revision. Refused when it takes names from another
    /// plugin: that needs [`Verdict::ApproveTransfers`].
    Approve,
    /// Activate the revision and the transfers of names its diff shows:
    /// the other plugin stops serving them.
    ApproveTransfers,
    /// Refuse it for good.
    Reject,
}

impl Verdict {
    /// Whether it activates the revision.
    pub fn approves(self) -> bool {
        self != Verdict::Reject
    }
}

/// Why a decision cannot be made. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// No such revision.
    #[error("no plugin revision {0}")]
    NotFound(String),
    /// It is not in the state the decision needs.
    #[error("revision {id} is {state}, not {wanted}")]
    WrongState {
        /// The revision.
        id: String,
        /// Its state now.
        state: RevisionState,
        /// The state the decision needs.
        wanted: RevisionState,
    },
    /// The submitter may not approve their own revision.
    #[error("{principal} submitted revision {id} and may not approve it: another reviewer must")]
    SelfApproval {
        /// The revision.
        id: String,
        /// Who tried.
        principal: String,
    },
    /// A decision needs a reason.
    #[error("a reason is required")]
    ReasonRequired,
    /// The revision claims what another active plugin serves.
    #[error("revision {id}: {source}")]
    Claimed {
        /// The revision.
        id: String,
        /// What it claims, and who serves it.
        source: ClaimError,
    },
    /// The revision takes names from other plugins, and the approval did
    /// not say it approves the transfers.
    #[error(
        "revision {id} takes {} from other plugins: approve the transfers explicitly (the other plugin stops serving them)",
        .transfers.join(", ")
    )]
    TransfersNotApproved {
        /// The revision.
        id: String,
        /// Each transfer: `tool greet from hello`.
        transfers: Vec<String>,
    },
    /// The audience or tenant named cannot be one.
    #[error(transparent)]
    Audience(#[from] AudienceError),
    /// A pin names a revision that was never served (or was pulled).
    #[error("revision {id} is {state}: a tenant is pinned only to a revision that was served")]
    NotServable {
        /// The revision.
        id: String,
        /// Its state now.
        state: RevisionState,
    },
    /// A pin names a revision its tenant is not in the audience of.
    #[error("revision {id} is served to {audience}, not to tenant {tenant:?}")]
    NotInAudience {
        /// The revision.
        id: String,
        /// The tenant.
        tenant: String,
        /// Who it is served to.
        audience: Audience,
    },
    /// There is no pin to remove.
    #[error("tenant {tenant:?} is not pinned to a revision of {plugin:?}")]
    NotPinned {
        /// The tenant.
        tenant: String,
        /// The plugin.
        plugin: String,
    },
    /// Nothing to roll back to.
    #[error("plugin {0:?} has no earlier approved revision to roll back to")]
    NothingToRollBack(String),
    /// Stored data does not read back.
    #[error("revision {id}: {detail}")]
    Corrupt {
        /// The revision.
        id: String,
        /// What does not parse.
        detail: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] CatalogStoreError),
}

impl DecideError {
    /// A stable code for clients.
    pub fn code(&self) -> &'static str {
        match self {
            DecideError::NotFound(_) => "NOT_FOUND",
            DecideError::WrongState { .. } => "ALREADY_DECIDED",
            DecideError::SelfApproval { .. } => "SELF_APPROVAL",
            DecideError::ReasonRequired => "INVALID_ARGUMENTS",
            DecideError::Claimed { source, .. } => source.code(),
            DecideError::TransfersNotApproved { .. } => "TRANSFER_NOT_APPROVED",
            DecideError::NothingToRollBack(_) => "NOT_FOUND",
            DecideError::Audience(_) => "INVALID_ARGUMENTS",
            DecideError::NotServable { .. } => "NOT_SERVABLE",
            DecideError::NotInAudience { .. } => "NOT_IN_AUDIENCE",
            DecideError::NotPinned { .. } => "NOT_FOUND",
            DecideError::Corrupt { .. } | DecideError::Store(_) => "INTERNAL",
        }
    }
}

/// A decision ready to write: the audit event and the effect, together.
#[derive(Debug, Clone)]
pub struct Decision {
    /// The row that records it.
    pub event: AuditEvent,
    /// What it changes.
    pub effect: CatalogEffect,
    /// The capability diff it was decided on (against the active revision).
    pub diff: Option<Diff>,
}

/// The revision's capabilities as intake computed them.
pub fn capabilities_of(rev: &Revision) -> Result<Capabilities, DecideError> {
    serde_json::from_str(&rev.capabilities).map_err(|e| DecideError::Corrupt {
        id: rev.id.clone(),
        detail: format!("capabilities: {e}"),
    })
}

/// The active revision of `plugin`, if any.
pub async fn active(
    store: &dyn CatalogStore,
    plugin: &str,
) -> Result<Option<Revision>, CatalogStoreError> {
    let mut active = store
        .revisions(Some(plugin), Some(RevisionState::Active))
        .await?;
    Ok(active.pop())
}

/// The capability diff of `rev` against its plugin's active revision.
pub async fn review_diff(store: &dyn CatalogStore, rev: &Revision) -> Result<Diff, DecideError> {
    let proposed = capabilities_of(rev)?;
    let current = match active(store, &rev.plugin).await? {
        Some(a) if a.id != rev.id => Some(capabilities_of(&a)?),
        _ => None,
    };
    Ok(diff(current.as_ref(), &proposed))
}

/// Approves or rejects the pending revision `id`. An approval serves it
/// to `audience` (every tenant, or the tenants it names).
pub async fn review(
    store: &dyn CatalogStore,
    id: &str,
    verdict: Verdict,
    audience: &Audience,
    who: &Decider,
    reason: &str,
) -> Result<Decision, DecideError> {
    if reason.trim().is_empty() {
        return Err(DecideError::ReasonRequired);
    }
    let rev = store
        .revision(id)
        .await?
        .ok_or_else(|| DecideError::NotFound(id.to_owned()))?;
    if rev.state != RevisionState::PendingReview {
        return Err(DecideError::WrongState {
            id: id.to_owned(),
            state: rev.state,
            wanted: RevisionState::PendingReview,
        });
    }
    let review = Some((who.principal.clone(), reason.to_owned()));
    if verdict == Verdict::Reject {
        let state = store.catalog_state().await?;
        let moves = vec![step(
            &rev.id,
            RevisionState::PendingReview,
            RevisionState::Rejected,
            review,
        )];
        let unchanged = Served {
            generation: state.generation,
            version: state.version,
            changes: false,
        };
        return Ok(decision(
            who,
            "decide_plugin_review",
            &rev,
            reason,
            unchanged,
            moves,
            None,
        ));
    }
    if rev.submitted_by == who.principal && !who.may_approve_own {
        return Err(DecideError::SelfApproval {
            id: id.to_owned(),
            principal: who.principal.clone(),
        });
    }
    let current = active(store, &rev.plugin).await?;
    let d = review_diff(store, &rev).await?;
    let transfers = d.transfers();
    if !transfers.is_empty() && verdict != Verdict::ApproveTransfers {
        let transfers = (transfers.into_iter())
            .map(|(subject, from)| format!("{subject} from {from}"))
            .collect();
        return Err(DecideError::TransfersNotApproved {
            id: id.to_owned(),
            transfers,
        });
    }
    claims_free(store, &rev).await?;
    let (served, moves) = activation(
        store,
        current.as_ref(),
        &rev,
        RevisionState::PendingReview,
        review,
        &d,
    )
    .await?;
    let mut decided = decision(
        who,
        "decide_plugin_review",
        &rev,
        reason,
        served,
        moves,
        Some(d),
    );
    decided.effect.audience = Some(AudienceChange {
        revision: rev.id.clone(),
        tenants: audience.stored(),
    });
    Ok(decided)
}

/// Holds `tenant` to revision `id` of its plugin (`Some`), or lets it
/// follow the catalog again (`None`, for `plugin`): the tenant is served
/// that revision, whatever becomes active for the others. Only a revision
/// that was served (active now, or replaced) and whose audience includes
/// the tenant may be pinned.
pub async fn pin(
    store: &dyn CatalogStore,
    tenant: &str,
    plugin: &str,
    id: Option<&str>,
    who: &Decider,
    reason: &str,
) -> Result<Decision, DecideError> {
    if reason.trim().is_empty() {
        return Err(DecideError::ReasonRequired);
    }
    valid_tenant(tenant)?;
    let (rev, operation) = match id {
        Some(id) => (pinnable(store, tenant, plugin, id).await?, "pin_plugin"),
        None => {
            let pins = store.pins().await?;
            let pinned = (pins.into_iter())
                .find(|p| p.tenant == tenant && p.plugin == plugin)
                .ok_or_else(|| DecideError::NotPinned {
                    tenant: tenant.to_owned(),
                    plugin: plugin.to_owned(),
                })?;
            let rev = store
                .revision(&pinned.revision)
                .await?
                .ok_or_else(|| DecideError::NotFound(pinned.revision.clone()))?;
            (rev, "unpin_plugin")
        }
    };
    let nothing = Diff {
        changes: Vec::new(),
        bump: toolhost_review::Bump::None,
    };
    let (generation, version) = next_version(store, &nothing).await?;
    let served = Served {
        generation,
        version: version.to_string(),
        changes: true,
    };
    let mut decided = decision(who, operation, &rev, reason, served, Vec::new(), None);
    decided.effect.pins.push(PinChange {
        tenant: tenant.to_owned(),
        plugin: plugin.to_owned(),
        revision: id.map(str::to_owned),
        by: who.principal.clone(),
    });
    Ok(decided)
}

/// Revision `id` of `plugin`, if `tenant` may be pinned to it.
async fn pinnable(
    store: &dyn CatalogStore,
    tenant: &str,
    plugin: &str,
    id: &str,
) -> Result<Revision, DecideError> {
    let rev = store
        .revision(id)
        .await?
        .filter(|r| r.plugin == plugin)
        .ok_or_else(|| DecideError::NotFound(format!("{id} of plugin {plugin}")))?;
    let served_once = match rev.state {
        RevisionState::Active => true,
        RevisionState::Approved => rev.activated_at_ms.is_some(),
        _ => false,
    };
    if !served_once {
        return Err(DecideError::NotServable {
            id: rev.id,
            state: rev.state,
        });
    }
    if !rev.audience.includes(tenant) {
        return Err(DecideError::NotInAudience {
            id: rev.id,
            tenant: tenant.to_owned(),
            audience: rev.audience,
        });
    }
    Ok(rev)
}

/// Makes the most recently active earlier revision of `plugin` active again.
pub async fn rollback(
    store: &dyn CatalogStore,
    plugin: &str,
    who: &Decider,
    reason: &str,
) -> Result<Decision, DecideError> {
    if reason.trim().is_empty() {
        return Err(DecideError::ReasonRequired);
    }
    let current = active(store, plugin).await?;
    let mut earlier = store
        .revisions(Some(plugin), Some(RevisionState::Approved))
        .await?;
    earlier.retain(|r| r.activated_at_ms.is_some());
    earlier.sort_by_key(|r| std::cmp::Reverse(r.activated_at_ms));
    let target = earlier
        .into_iter()
        .next()
        .ok_or_else(|| DecideError::NothingToRollBack(plugin.to_owned()))?;
    let current_caps = current.as_ref().map(capabilities_of).transpose()?;
    let d = diff(current_caps.as_ref(), &capabilities_of(&target)?);
    claims_free(store, &target).await?;
    let (served, moves) = activation(
        store,
        current.as_ref(),
        &target,
        RevisionState::Approved,
        None,
        &d,
    )
    .await?;
    Ok(decision(
        who,
        "rollback_plugin",
        &target,
        reason,
        served,
        moves,
        Some(d),
    ))
}

/// Whether what `rev` claims is free of every other active plugin's
/// names now (or declared taken from them): checked at intake, and again
/// here, since another plugin may have been activated since.
async fn claims_free(store: &dyn CatalogStore, rev: &Revision) -> Result<(), DecideError> {
    let caps = capabilities_of(rev)?;
    check_against_active(store, &caps)
        .await?
        .map_err(|source| DecideError::Claimed {
            id: rev.id.clone(),
            source,
        })
}

/// `target` (now `from`) made active: the active revision (if any) steps
/// down, keeping the tools `d` retires listed until the next minor
/// version, and retirements that version ends are cleared.
async fn activation(
    store: &dyn CatalogStore,
    current: Option<&Revision>,
    target: &Revision,
    from: RevisionState,
    review: Option<(String, String)>,
    d: &Diff,
) -> Result<(Served, Vec<RevisionMove>), DecideError> {
    let (generation, version) = next_version(store, d).await?;
    let mut moves = Vec::new();
    if let Some(old) = current {
        moves.push(replaced(old, d, version));
    }
    moves.push(step(&target.id, from, RevisionState::Active, review));
    moves.extend(expired_retirements(store, version, &[&target.id]).await?);
    let served = Served {
        generation,
        version: version.to_string(),
        changes: true,
    };
    Ok((served, moves))
}

/// Withdraws every active or pending revision `signer` vouched for (its
/// key was revoked): their tools disappear at once, with no deprecation.
/// `None` when the signer vouched for nothing served or pending.
pub async fn withdraw_signed_by(
    store: &dyn CatalogStore,
    signer: &str,
    who: &Decider,
    reason: &str,
) -> Result<Option<Decision>, DecideError> {
    let mut moves = Vec::new();
    let mut first = None;
    for from in [
        RevisionState::Active,
        RevisionState::PendingReview,
        RevisionState::Approved,
    ] {
        for rev in store.revisions(None, Some(from)).await? {
            if rev.signer.as_deref() == Some(signer) {
                moves.push(step(&rev.id, from, RevisionState::Withdrawn, None));
                first.get_or_insert(rev);
            }
        }
    }
    let Some(rev) = first else {
        return Ok(None);
    };
    let state = store.catalog_state().await?;
    let version = parse_version(&state.version)?.bump(toolhost_review::Bump::Major);
    let served = Served {
        generation: state.generation,
        version: version.to_string(),
        changes: true,
    };
    Ok(Some(decision(
        who,
        "revoke_signer",
        &rev,
        reason,
        served,
        moves,
        None,
    )))
}

/// The catalog's generation now, and its version after a change of `d`
/// (at least a patch: what is served changed).
async fn next_version(
    store: &dyn CatalogStore,
    d: &Diff,
) -> Result<(i64, CatalogVersion), DecideError> {
    let state = store.catalog_state().await?;
    let bump = d.bump.max(toolhost_review::Bump::Patch);
    Ok((state.generation, parse_version(&state.version)?.bump(bump)))
}

fn parse_version(v: &str) -> Result<CatalogVersion, DecideError> {
    v.parse().map_err(|e| DecideError::Corrupt {
        id: "catalog_state".into(),
        detail: format!("version: {e}"),
    })
}

/// The active revision stepping down: approved (a rollback target), still
/// listing the tools `d` retires until the next minor version.
fn replaced(old: &Revision, d: &Diff, version: CatalogVersion) -> RevisionMove {
    let retired = d.retired();
    let retired = (!retired.is_empty()).then(|| {
        let until = version.bump(toolhost_review::Bump::Minor);
        (
            serde_json::to_string(&retired).expect("retired tools always serialize"),
            until.to_string(),
        )
    });
    RevisionMove {
        revision: old.id.clone(),
        from: RevisionState::Active.as_str().into(),
        to: RevisionState::Approved.as_str().into(),
        review: None,
        retired,
    }
}

/// Clears the retired tools of revisions whose deprecation ends at or
/// before `version` (the builder stops listing them anyway; this keeps the
/// rows honest). `skip`: revisions the decision already moves.
async fn expired_retirements(
    store: &dyn CatalogStore,
    version: CatalogVersion,
    skip: &[&str],
) -> Result<Vec<RevisionMove>, DecideError> {
    let mut moves = Vec::new();
    for rev in store.served().await? {
        let Some((_, until)) = &rev.retired else {
            continue;
        };
        if skip.contains(&rev.id.as_str()) || rev.state == RevisionState::Active {
            continue;
        }
        if parse_version(until)? <= version {
            moves.push(step(&rev.id, rev.state, rev.state, None));
        }
    }
    Ok(moves)
}

fn step(
    id: &str,
    from: RevisionState,
    to: RevisionState,
    review: Option<(String, String)>,
) -> RevisionMove {
    RevisionMove {
        revision: id.to_owned(),
        from: from.as_str().into(),
        to: to.as_str().into(),
        review,
        retired: None,
    }
}

/// What a decision does to the catalog served: the generation it was made
/// against, the version after it, and whether what is served changes.
struct Served {
    generation: i64,
    version: String,
    changes: bool,
}

fn decision(
    who: &Decider,
    operation: &str,
    rev: &Revision,
    reason: &str,
    served: Served,
    moves: Vec<RevisionMove>,
    diff: Option<Diff>,
) -> Decision {
    let at = SystemTime::now();
    let at_ms = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let args = json!({
        "revision": rev.id,
        "moves": moves.iter().map(|m| json!([m.revision, m.from, m.to])).collect::<Vec<_>>(),
        "reason": reason,
    });
    let event = AuditEvent {
        at,
        client_id: who.client_id.clone(),
        plugin: Some(rev.plugin.clone()),
        catalog_version: Some(served.version.clone()),
        plugin_digest: Some(rev.component_digest),
        ..AuditEvent::new(
            &who.tenant,
            &who.principal,
            operation,
            argument_digest(&args),
        )
    };
    let effect = CatalogEffect {
        changes_served: served.changes,
        expected_generation: served.generation,
        version: served.version,
        at_ms,
        moves,
        audience: None,
        pins: Vec::new(),
    };
    Decision {
        event,
        effect,
        diff,
    }
}
