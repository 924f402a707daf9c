//! Task status notifications (`notifications/tasks`, SEP-2663): a
//! 2026-07-28 `subscriptions/listen` stream that names task ids in its
//! filter (`notifications.taskIds`) is told each of those tasks as it is
//! now, then again on each change, until it is over or the client cancels
//! the stream.
//!
//! rmcp's filter type has no `taskIds` yet, so the edge reads them from
//! the request ([`accepted_task_ids`], put in the request's extensions as
//! [`ListenTasks`]) and writes the accepted ones into the stream's
//! acknowledgement; this room sends the notifications on the stream.
//!
//! A task is read from the store, so a task running on any replica is
//! followed from any other. Each reading is the caller's own `tasks/get`:
//! a task the caller may not see (someone else's, unknown, expired or no
//! longer permitted) is told nothing, the same whichever the reason.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{
    DetailedTask, GetMeta, ServerNotification, TaskStatusNotification, TaskStatusNotificationParams,
};
use rmcp::service::SubscriptionContext;
use serde_json::Value;
use toolhost_runs::RunId;
use toolhost_types::Principal;

use crate::handler::McpServer;
use crate::tasks;

/// Most task ids one listen stream follows.
pub const MAX_LISTENED_TASKS: usize = 32;

/// How often a followed task is read (half the poll interval a task
/// tells its client, so a notification is never later than a poll).
const READ_EVERY: Duration = Duration::from_millis(500);

/// The task ids a `subscriptions/listen` request named that its stream
/// follows, as the edge accepted them ([`accepted_task_ids`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListenTasks(pub Vec<String>);

/// The task ids a listen stream accepts of those `requested`: each
/// well-formed task id once, in the order named, up to
/// [`MAX_LISTENED_TASKS`]. Whether the caller may see a task is not
/// asked here (the answer would tell who may): a task they may not see is
/// followed and told nothing.
pub fn accepted_task_ids<'a>(requested: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut accepted: Vec<String> = Vec::new();
    for id in requested {
        if accepted.len() == MAX_LISTENED_TASKS {
            break;
        }
        if RunId::parse(id).is_some() && !accepted.iter().any(|a| a == id) {
            accepted.push(id.to_owned());
        }
    }
    accepted
}

/// Tells `who`'s listen stream each task of `ids` as it is, then each
/// change, until every task is over or the stream is cancelled.
pub(crate) async fn tell(
    server: &McpServer,
    who: &Principal,
    ids: Vec<String>,
    context: &SubscriptionContext,
) {
    // What was last told of each task still followed.
    let mut told: BTreeMap<String, Option<Value>> = ids.into_iter().map(|id| (id, None)).collect();
    let mut every = tokio::time::interval(READ_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !told.is_empty() {
        tokio::select! {
            () = context.cancelled() => return,
            _ = every.tick() => {}
        }
        let mut over = Vec::new();
        for (id, last) in &mut told {
            let (task, terminal) = match server.task_as_seen(who, id).await {
                Seen::Now(task, terminal) => (task, terminal),
                Seen::Never => {
                    over.push(id.clone());
                    continue;
                }
                Seen::NotNow => continue,
            };
            if terminal {
                over.push(id.clone());
            }
            let now = serde_json::to_value(&task).ok();
            if *last == now {
                continue;
            }
            *last = now;
            let mut notification = ServerNotification::TaskStatusNotification(
                TaskStatusNotification::new(TaskStatusNotificationParams::new(task)),
            );
            notification
                .get_meta_mut()
                .set_subscription_id(context.sink().id().clone());
            let peer = &context.request_context().peer;
            if let Err(e) = peer.send_notification(notification).await {
                tracing::debug!(error = %e, "a subscription ended");
                return;
            }
        }
        for id in over {
            told.remove(&id);
        }
    }
    // Every task is over: the stream stays open for what else it asked.
    context.cancelled().await;
}

/// One reading of a followed task.
enum Seen {
    /// As `tasks/get` answers it now, and whether it is over.
    Now(DetailedTask, bool),
    /// Not the caller's to see (or unknown, or expired): followed no more.
    Never,
    /// Not read this time (the store did not answer): read again later.
    NotNow,
}

impl McpServer {
    /// Task `id` as `who`'s `tasks/get` would answer it now.
    async fn task_as_seen(&self, who: &Principal, id: &str) -> Seen {
        match self.run_for(who, id).await {
            Ok(run) => match tasks::detailed(&run, self.run_retention()) {
                Ok(detailed) => Seen::Now(detailed, run.state.is_terminal()),
                Err(_) => Seen::NotNow,
            },
            Err(e) if e.code() == "RUN_NOT_FOUND" => Seen::Never,
            Err(_) => Seen::NotNow,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_accepts_each_well_formed_task_id_once_within_bounds() {
        let id = |i: usize| format!("run_{i:032x}");
        let mut requested: Vec<String> = vec![
            id(1),
            "not-a-task".into(),
            id(1),
            format!("{}0", id(2)),
            "run_ABCDEF00000000000000000000000000".into(),
        ];
        requested.extend((2..100).map(id));
        let accepted = accepted_task_ids(requested.iter().map(String::as_str));
        assert_eq!(accepted.len(), MAX_LISTENED_TASKS);
        assert_eq!(accepted[0], id(1));
        assert_eq!(accepted[1], id(2));
        assert_eq!(accepted[MAX_LISTENED_TASKS - 1], id(MAX_LISTENED_TASKS));
        assert!(accepted_task_ids([]).is_empty());
    }
}
