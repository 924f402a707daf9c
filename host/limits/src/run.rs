//! The budget of an exploration run: a call's budget with time in minutes,
//! plus how many artifacts it may keep and their bytes.

use std::time::Duration;

use bytesize::ByteSize;
use serde::{Deserialize, Serialize};

use crate::{BudgetOverride, CallBudget, LimitError};

/// What one exploration run may spend, all of it enforced by the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunBudget {
    /// The sandbox budget of the run's one call: wall time, memory,
    /// output, log and host calls.
    #[serde(with = "call_budget")]
    pub call: CallBudget,
    /// Artifacts the run may keep.
    pub artifacts: u32,
    /// Their total bytes.
    pub artifact_bytes: ByteSize,
}

impl RunBudget {
    /// The defaults: ten minutes, room for a few hundred backend reads.
    pub const DEFAULT: RunBudget = RunBudget {
        call: CallBudget {
            timeout: Duration::from_secs(600),
            memory: ByteSize::mib(128),
            host_calls: 10_000,
            ..CallBudget::DEFAULT
        },
        artifacts: 16,
        artifact_bytes: ByteSize::mib(16),
    };

    /// The most a manifest's `run` table may ask for.
    pub const CEILING: RunBudget = RunBudget {
        call: CallBudget {
            timeout: Duration::from_secs(3600),
            memory: ByteSize::mib(512),
            host_calls: 100_000,
            ..CallBudget::CEILING
        },
        artifacts: 256,
        artifact_bytes: ByteSize::mib(256),
    };

    /// The most a run of an unreviewed draft (a workspace proposal's
    /// component, perhaps unsigned) may spend, whatever its manifest asks:
    /// two minutes and the defaults' memory and counts, so a draft holds
    /// a shared run worker for a fifth of a reviewed run's default time.
    pub const DRAFT_CEILING: RunBudget = RunBudget {
        call: CallBudget {
            timeout: Duration::from_secs(120),
            ..RunBudget::DEFAULT.call
        },
        artifacts: RunBudget::DEFAULT.artifacts,
        artifact_bytes: RunBudget::DEFAULT.artifact_bytes,
    };

    /// This budget with each spending limit (time, memory, output, log,
    /// host calls, artifacts and their bytes) at most `cap`'s. What a
    /// component needs to instantiate (instances, tables) is kept.
    pub fn at_most(&self, cap: &RunBudget) -> RunBudget {
        let (c, m) = (&self.call, &cap.call);
        RunBudget {
            call: CallBudget {
                timeout: c.timeout.min(m.timeout),
                memory: c.memory.min(m.memory),
                output: c.output.min(m.output),
                log: c.log.min(m.log),
                host_calls: c.host_calls.min(m.host_calls),
                ..*c
            },
            artifacts: self.artifacts.min(cap.artifacts),
            artifact_bytes: self.artifact_bytes.min(cap.artifact_bytes),
        }
    }

    /// The defaults with a manifest's `run = { … }` applied, each value
    /// checked against `ceiling` (and refused at zero).
    pub fn with_override(&self, o: &RunOverride, ceiling: &RunBudget) -> Result<Self, LimitError> {
        let call = BudgetOverride {
            timeout: o.timeout,
            memory: o.memory,
            output: o.output,
            host_calls: o.host_calls,
            ..BudgetOverride::default()
        };
        let call = self.call.with_override(&call, &ceiling.call)?;
        let artifacts = pick("artifacts", self.artifacts, o.artifacts, ceiling.artifacts)?;
        let artifact_bytes = pick(
            "artifact_bytes",
            self.artifact_bytes,
            o.artifact_bytes,
            ceiling.artifact_bytes,
        )?;
        Ok(RunBudget {
            call,
            artifacts,
            artifact_bytes,
        })
    }
}

fn pick<T: PartialOrd + Default + Copy + std::fmt::Display>(
    name: &'static str,
    default: T,
    requested: Option<T>,
    ceiling: T,
) -> Result<T, LimitError> {
    match requested {
        None => Ok(default),
        Some(v) if v > ceiling => Err(LimitError::AboveCeiling {
            name,
            value: v.to_string(),
            ceiling: ceiling.to_string(),
        }),
        Some(v) if v == T::default() => Err(LimitError::Zero { name }),
        Some(v) => Ok(v),
    }
}

/// A manifest tool's `run = { timeout = "10m", … }`: the tool is an
/// exploration run (a call queues it), and these are its budget's
/// overrides, each optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunOverride {
    /// The run's time, e.g. `"10m"` (default 10 min, ceiling 1 h).
    #[serde(default, with = "humantime_serde")]
    pub timeout: Option<Duration>,
    /// Linear memory, e.g. `"128 MiB"` (default 128 MiB, ceiling 512 MiB).
    pub memory: Option<ByteSize>,
    /// The run's answer, e.g. `"1 MiB"` (default 8 MiB, ceiling 32 MiB).
    pub output: Option<ByteSize>,
    /// Host imports over the whole run (default 10 000, ceiling 100 000).
    pub host_calls: Option<u32>,
    /// Artifacts it may keep (default 16, ceiling 256).
    pub artifacts: Option<u32>,
    /// Their total bytes, e.g. `"16 MiB"` (default 16 MiB, ceiling 256 MiB).
    pub artifact_bytes: Option<ByteSize>,
    /// `"required"`: the tool is served only as a task (2026-07-28 Tasks
    /// extension); a client that did not declare the extension is refused
    /// with -32021 before anything runs. `"optional"` (default): a client
    /// without it is answered with the run, or waits for it.
    #[serde(default)]
    pub task: TaskUse,
}

/// Whether a run tool must be called as a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskUse {
    /// As a task, or not.
    #[default]
    Optional,
    /// Only as a task.
    Required,
}

/// The call budget as a receipt shows it: every number spelled out.
mod call_budget {
    use std::time::Duration;

    use bytesize::ByteSize;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::CallBudget;

    #[derive(Serialize, Deserialize)]
    struct Wire {
        timeout_ms: u64,
        memory: u64,
        instances: u32,
        tables: u32,
        table_elements: u32,
        output: u64,
        log: u64,
        host_calls: u32,
    }

    pub(super) fn serialize<S: Serializer>(b: &CallBudget, s: S) -> Result<S::Ok, S::Error> {
        Wire {
            timeout_ms: u64::try_from(b.timeout.as_millis()).unwrap_or(u64::MAX),
            memory: b.memory.as_u64(),
            instances: b.instances,
            tables: b.tables,
            table_elements: b.table_elements,
            output: b.output.as_u64(),
            log: b.log.as_u64(),
            host_calls: b.host_calls,
        }
        .serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CallBudget, D::Error> {
        let w = Wire::deserialize(d)?;
        Ok(CallBudget {
            timeout: Duration::from_millis(w.timeout_ms),
            memory: ByteSize::b(w.memory),
            instances: w.instances,
            tables: w.tables,
            table_elements: w.table_elements,
            output: ByteSize::b(w.output),
            log: ByteSize::b(w.log),
            host_calls: w.host_calls,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> RunOverride {
        toml::from_str(text).expect("a valid run table")
    }

    #[test]
    fn a_run_table_moves_the_run_defaults_within_the_ceiling() {
        let b = RunBudget::DEFAULT
            .with_override(
                &parse("timeout = \"2m\"\nartifacts = 4"),
                &RunBudget::CEILING,
            )
            .expect("within the ceiling");
        assert_eq!(b.call.timeout, Duration::from_secs(120));
        assert_eq!(b.artifacts, 4);
        assert_eq!(b.artifact_bytes, RunBudget::DEFAULT.artifact_bytes);
        assert_eq!(b.call.memory, ByteSize::mib(128));
    }

    #[test]
    fn a_draft_spends_at_most_the_draft_ceiling_and_keeps_what_it_asked_below_it() {
        let asked = RunBudget::DEFAULT
            .with_override(
                &parse("timeout = \"1h\"\nmemory = \"512 MiB\"\nartifacts = 2"),
                &RunBudget::CEILING,
            )
            .expect("within the ceiling");
        let draft = asked.at_most(&RunBudget::DRAFT_CEILING);
        assert_eq!(draft.call.timeout, Duration::from_secs(120));
        assert_eq!(draft.call.memory, RunBudget::DEFAULT.call.memory);
        assert_eq!(draft.artifacts, 2, "below the cap stays as asked");
        assert_eq!(draft.call.instances, asked.call.instances);
    }

    #[test]
    fn over_the_ceiling_or_zero_is_refused_by_name() {
        let e = RunBudget::DEFAULT
            .with_override(&parse("timeout = \"2h\""), &RunBudget::CEILING)
            .expect_err("above");
        assert!(e.to_string().contains("timeout"), "{e}");
        let e = RunBudget::DEFAULT
            .with_override(&parse("artifacts = 0"), &RunBudget::CEILING)
            .expect_err("zero");
        assert_eq!(e, LimitError::Zero { name: "artifacts" });
        assert!(toml::from_str::<RunOverride>("fuel = 1").is_err());
    }

    #[test]
    fn a_budget_survives_its_receipt_form() {
        let json = serde_json::to_string(&RunBudget::DEFAULT).expect("serializes");
        assert!(json.contains("\"timeout_ms\":600000"), "{json}");
        let back: RunBudget = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, RunBudget::DEFAULT);
    }
}
