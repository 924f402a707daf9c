//! A run that asks its client for input: what it waits on, what it was
//! answered, and the bounds on both.
//!
//! A run's guest asks through the `client` import exactly as a stateless
//! call does: each request under a key the plugin chooses. A run has no
//! open request to answer on, so an attempt whose guest asked what has no
//! answer yet ends there; the run waits `input_required` with the requests
//! (the task's `inputRequests`), the client answers them by key
//! (`tasks/update`), and once every one is answered the run is queued again
//! and its guest runs from the start with the answers. Only a run started
//! by a client that can answer (a task of a 2026-07-28 request) may ask:
//! [`RunClient`].

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Most times one run may stop to ask; the next ask fails it.
pub const MAX_INPUT_ROUNDS: usize = 8;
/// Most answers one run keeps (over all its rounds).
pub const MAX_INPUT_ANSWERS: usize = 64;
/// Longest answer, as JSON, in bytes.
pub const MAX_INPUT_ANSWER_BYTES: usize = 64 * 1024;
/// How long a run waits for its client's answers before it times out.
pub const INPUT_WAIT: Duration = Duration::from_secs(10 * 60);

/// What the client that started a run can answer: what its request
/// declared. A run without it cannot ask.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunClient {
    /// Form elicitation.
    pub elicitation: bool,
    /// `sampling/createMessage`.
    pub sampling: bool,
    /// `roots/list`.
    pub roots: bool,
}

/// A run's input: the requests it waits on and the answers it was given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInput {
    /// The requests waiting for an answer, by the plugin's key:
    /// `{"method", "params"}` each (the task's `inputRequests`).
    #[serde(default)]
    pub pending: BTreeMap<String, Value>,
    /// The client's answers so far, by key, handed to the guest's `ask`.
    #[serde(default)]
    pub answers: BTreeMap<String, Value>,
    /// The attempts that ended asking (each raised the run's attempts by
    /// one: asking spends none).
    #[serde(default)]
    pub asked_in: Vec<u32>,
}

/// Why a client's answers were not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// An answer is larger than [`MAX_INPUT_ANSWER_BYTES`].
    #[error("the answer to {key:?} is {bytes} bytes; at most {MAX_INPUT_ANSWER_BYTES} are kept")]
    TooLarge {
        /// Its key.
        key: String,
        /// Its size as JSON.
        bytes: usize,
    },
    /// The run would keep more than [`MAX_INPUT_ANSWERS`] answers.
    #[error("a run keeps at most {MAX_INPUT_ANSWERS} answers")]
    TooMany,
}

impl RunInput {
    /// Starts waiting on `requests` (the guest's questions without a
    /// fitting answer) after attempt `attempt`: an answer it had for one
    /// of them did not fit, so it is dropped and asked again.
    pub fn ask(&mut self, requests: BTreeMap<String, Value>, attempt: u32) {
        for key in requests.keys() {
            self.answers.remove(key);
        }
        self.pending = requests;
        self.asked_in.push(attempt);
    }

    /// Whether the run asked as often as it may.
    pub fn rounds_spent(&self) -> bool {
        self.asked_in.len() >= MAX_INPUT_ROUNDS
    }

    /// Takes the answers among `responses` to pending requests; keys not
    /// pending (unknown, or answered already) are ignored. Returns how
    /// many were taken. Nothing is taken if any taken one is too large or
    /// they would be too many.
    pub fn answer(&mut self, responses: &BTreeMap<String, Value>) -> Result<usize, InputError> {
        let fitting: Vec<(&String, &Value)> = responses
            .iter()
            .filter(|(k, _)| self.pending.contains_key(*k))
            .collect();
        for (key, value) in &fitting {
            let bytes = value.to_string().len();
            if bytes > MAX_INPUT_ANSWER_BYTES {
                return Err(InputError::TooLarge {
                    key: (*key).clone(),
                    bytes,
                });
            }
        }
        if self.answers.len() + fitting.len() > MAX_INPUT_ANSWERS {
            return Err(InputError::TooMany);
        }
        for (key, value) in &fitting {
            self.pending.remove(*key);
            self.answers.insert((*key).clone(), (*value).clone());
        }
        Ok(fitting.len())
    }

    /// Whether every request the run asked is answered.
    pub fn is_answered(&self) -> bool {
        self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn asked(keys: &[&str]) -> RunInput {
        let mut input = RunInput::default();
        let requests = keys
            .iter()
            .map(|k| ((*k).to_owned(), json!({"method": "elicitation/create"})))
            .collect();
        input.ask(requests, 1);
        input
    }

    #[test]
    fn answers_are_taken_for_pending_keys_only_and_a_partial_answer_keeps_the_rest_waiting() {
        let mut input = asked(&["a", "b"]);
        let responses = BTreeMap::from([
            ("a".to_owned(), json!({"action": "accept"})),
            ("zz".to_owned(), json!({"action": "accept"})),
        ]);
        assert_eq!(input.answer(&responses), Ok(1));
        assert!(!input.is_answered());
        assert_eq!(input.pending.keys().collect::<Vec<_>>(), ["b"]);
        // Answered already: ignored, the first answer stands.
        let again = BTreeMap::from([("a".to_owned(), json!({"action": "decline"}))]);
        assert_eq!(input.answer(&again), Ok(0));
        assert_eq!(input.answers["a"], json!({"action": "accept"}));
        let rest = BTreeMap::from([("b".to_owned(), json!({"action": "cancel"}))]);
        assert_eq!(input.answer(&rest), Ok(1));
        assert!(input.is_answered());
    }

    #[test]
    fn an_oversized_answer_takes_nothing_and_asking_again_drops_the_unfitting_answer() {
        let mut input = asked(&["a", "b"]);
        let big = "x".repeat(MAX_INPUT_ANSWER_BYTES);
        let responses = BTreeMap::from([
            ("a".to_owned(), json!({"action": "accept"})),
            ("b".to_owned(), json!({"content": big})),
        ]);
        assert!(matches!(
            input.answer(&responses),
            Err(InputError::TooLarge { .. })
        ));
        assert!(input.answers.is_empty());
        assert_eq!(input.pending.len(), 2);

        let ok = BTreeMap::from([("a".to_owned(), json!({"action": "accept"}))]);
        input.answer(&ok).expect("fits");
        input.ask(BTreeMap::from([("a".to_owned(), json!({}))]), 2);
        assert!(
            input.answers.is_empty(),
            "asked again: its answer did not fit"
        );
        assert_eq!(input.asked_in, [1, 2]);
    }

    #[test]
    fn a_run_asks_at_most_eight_rounds() {
        let mut input = RunInput::default();
        for n in 1..=u32::try_from(MAX_INPUT_ROUNDS).expect("small") {
            assert!(!input.rounds_spent());
            input.ask(BTreeMap::from([(format!("k{n}"), json!({}))]), n);
        }
        assert!(input.rounds_spent());
    }
}
