//! The per-call budget of a sandboxed plugin call.

use std::time::Duration;

use bytesize::ByteSize;
use serde::Deserialize;

/// Everything one plugin call may spend. Each field has a default (a safe
/// number for a JSON-in, JSON-out tool), a reason, and a host ceiling that no
/// manifest can exceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallBudget {
    /// Wall-clock time for the guest's own execution (epoch deadline) and
    /// for the call as a whole.
    pub timeout: Duration,
    /// Linear memory, per memory (a Rust guest has exactly one).
    pub memory: ByteSize,
    /// Core instances a component may create while instantiating.
    pub instances: u32,
    /// Tables a component may create.
    pub tables: u32,
    /// Elements in any one table.
    pub table_elements: u32,
    /// Bytes of the tool's answer (structured JSON plus text) and of its error text.
    pub output: ByteSize,
    /// Bytes of log lines the call may write through the `log` import.
    pub log: ByteSize,
    /// Host imports the call may invoke (log lines, later resolver and backend calls).
    pub host_calls: u32,
}

impl CallBudget {
    /// The defaults, and why.
    pub const DEFAULT: CallBudget = CallBudget {
        // Tools are thin clients of internal systems: 10 s covers a slow
        // backend; a spinning guest is cut off well before a client gives up.
        timeout: Duration::from_secs(10),
        // JSON in, JSON out: 64 MiB leaves room for parsing several MiB of
        // JSON while bounding a runaway allocator.
        memory: ByteSize::mib(64),
        // A Rust component instantiates ~4–8 core instances; 32 is roomy.
        instances: 32,
        // Rust components use one or two tables.
        tables: 8,
        // Function tables of real guests hold hundreds to a few thousand entries.
        table_elements: 20_000,
        // Above the MCP inline limit the host stores answers as artifacts;
        // 8 MiB bounds host memory per call while allowing those.
        output: ByteSize::mib(8),
        // Logs are for diagnostics, not data: 64 KiB is hundreds of lines.
        log: ByteSize::kib(64),
        // A call that makes a thousand host calls is looping.
        host_calls: 1_000,
    };

    /// The host's ceilings: the most any manifest may ask for unless the
    /// operator's configuration says otherwise.
    pub const CEILING: CallBudget = CallBudget {
        timeout: Duration::from_secs(120),
        memory: ByteSize::mib(256),
        instances: 64,
        tables: 32,
        table_elements: 200_000,
        output: ByteSize::mib(32),
        log: ByteSize::mib(1),
        host_calls: 100_000,
    };

    /// This budget with a manifest's overrides applied, refusing any value
    /// above `ceiling` (and any zero, which would make every call fail).
    pub fn with_override(
        &self,
        o: &BudgetOverride,
        ceiling: &CallBudget,
    ) -> Result<CallBudget, LimitError> {
        Ok(CallBudget {
            timeout: pick(
                "timeout",
                self.timeout,
                o.timeout,
                ceiling.timeout,
                fmt_duration,
            )?,
            memory: pick("memory", self.memory, o.memory, ceiling.memory, fmt_bytes)?,
            instances: pick(
                "instances",
                self.instances,
                o.instances,
                ceiling.instances,
                fmt_num,
            )?,
            tables: pick("tables", self.tables, o.tables, ceiling.tables, fmt_num)?,
            table_elements: pick(
                "table_elements",
                self.table_elements,
                o.table_elements,
                ceiling.table_elements,
                fmt_num,
            )?,
            output: pick("output", self.output, o.output, ceiling.output, fmt_bytes)?,
            log: pick("log", self.log, o.log, ceiling.log, fmt_bytes)?,
            host_calls: pick(
                "host_calls",
                self.host_calls,
                o.host_calls,
                ceiling.host_calls,
                fmt_num,
            )?,
        })
    }
}

fn fmt_duration(d: Duration) -> String {
    format!("{d:?}")
}
fn fmt_bytes(b: ByteSize) -> String {
    b.display().iec().to_string()
}
fn fmt_num(n: u32) -> String {
    n.to_string()
}

fn pick<T: PartialOrd + Default + Copy>(
    name: &'static str,
    default: T,
    requested: Option<T>,
    ceiling: T,
    show: fn(T) -> String,
) -> Result<T, LimitError> {
    let Some(v) = requested else {
        return Ok(default);
    };
    if v > ceiling {
        return Err(LimitError::AboveCeiling {
            name,
            value: show(v),
            ceiling: show(ceiling),
        });
    }
    if v == T::default() {
        return Err(LimitError::Zero { name });
    }
    Ok(v)
}

/// A manifest's `[limits]` table: each key optional, unknown keys refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetOverride {
    /// The call's time, e.g. `"250ms"`, `"30s"` (default 10 s, ceiling 120 s).
    #[serde(default, with = "humantime_serde")]
    pub timeout: Option<Duration>,
    /// Linear memory, e.g. `"32 MiB"` (default 64 MiB, ceiling 256 MiB).
    pub memory: Option<ByteSize>,
    /// Core instances the component creates (default 32, ceiling 64).
    pub instances: Option<u32>,
    /// Tables the component creates (default 8, ceiling 32).
    pub tables: Option<u32>,
    /// Elements in any one table (default 20 000, ceiling 200 000).
    pub table_elements: Option<u32>,
    /// The answer's bytes, e.g. `"1 MiB"` (default 8 MiB, ceiling 32 MiB).
    pub output: Option<ByteSize>,
    /// Log lines' bytes, e.g. `"16 KiB"` (default 64 KiB, ceiling 1 MiB).
    pub log: Option<ByteSize>,
    /// Host imports per call (default 1000, ceiling 100 000).
    pub host_calls: Option<u32>,
}

/// Why a budget override was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// The manifest asked for more than the host allows.
    #[error("limit {name} = {value} is above the host ceiling {ceiling}")]
    AboveCeiling {
        /// The limit's key.
        name: &'static str,
        /// The requested value.
        value: String,
        /// The ceiling in force.
        ceiling: String,
    },
    /// A zero budget would fail every call.
    #[error("limit {name} must be above zero")]
    Zero {
        /// The limit's key.
        name: &'static str,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> BudgetOverride {
        toml::from_str(text).expect("valid override")
    }

    #[test]
    fn no_override_keeps_the_defaults() {
        let b = CallBudget::DEFAULT.with_override(&BudgetOverride::default(), &CallBudget::CEILING);
        assert_eq!(b, Ok(CallBudget::DEFAULT));
    }

    #[test]
    fn an_override_replaces_only_its_own_keys() {
        let b = CallBudget::DEFAULT
            .with_override(
                &parse("memory = \"16 MiB\"\nhost_calls = 5"),
                &CallBudget::CEILING,
            )
            .expect("within ceiling");
        assert_eq!(b.memory, ByteSize::mib(16));
        assert_eq!(b.host_calls, 5);
        assert_eq!(b.timeout, CallBudget::DEFAULT.timeout);
    }

    #[test]
    fn an_override_above_the_ceiling_is_refused_naming_the_value() {
        let err = CallBudget::DEFAULT
            .with_override(&parse("memory = \"1 GiB\""), &CallBudget::CEILING)
            .expect_err("above ceiling");
        let text = err.to_string();
        assert!(
            text.contains("memory") && text.contains("1.0 GiB"),
            "{text}"
        );
    }

    #[test]
    fn a_zero_override_is_refused() {
        let err = CallBudget::DEFAULT
            .with_override(&parse("timeout = \"0s\""), &CallBudget::CEILING)
            .expect_err("zero");
        assert_eq!(err, LimitError::Zero { name: "timeout" });
    }

    #[test]
    fn unknown_limit_keys_are_refused() {
        let err = toml::from_str::<BudgetOverride>("fuel = 3").expect_err("unknown key");
        assert!(err.to_string().contains("fuel"), "{err}");
    }

    #[test]
    fn defaults_sit_within_the_ceiling() {
        let c = CallBudget::CEILING;
        let d = CallBudget::DEFAULT;
        assert!(d.timeout <= c.timeout && d.memory <= c.memory && d.output <= c.output);
        assert!(d.log <= c.log && d.host_calls <= c.host_calls && d.instances <= c.instances);
        assert!(d.tables <= c.tables && d.table_elements <= c.table_elements);
    }
}
