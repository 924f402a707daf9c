//! Budgets: how much one call may spend, and how far a plugin's manifest may
//! move that; and request bounds: how large a call's arguments may be.
//!
//! This room owns the numbers and the rules that combine them (default,
//! manifest override, host ceiling), and the pure check of arguments
//! against [`RequestLimits`]. It runs nothing: the `runtime` enforces a
//! [`CallBudget`] inside the sandbox, and `invoke` refuses a call whose
//! arguments breach a bound before any plugin code runs. Pure code.
//!
//! ```
//! use toolhost_limits::{BudgetOverride, CallBudget};
//! let tight: BudgetOverride = toml::from_str("timeout = \"250ms\"").expect("valid");
//! let budget = CallBudget::DEFAULT.with_override(&tight, &CallBudget::CEILING).expect("within ceiling");
//! assert_eq!(budget.timeout.as_millis(), 250);
//!
//! use toolhost_limits::{MAX_ARRAY_LEN, RequestLimits};
//! let limits = RequestLimits { max_array_len: 2, ..RequestLimits::DEFAULT };
//! let breach = limits.check(&serde_json::json!({"ids": [1, 2, 3]})).expect_err("three ids");
//! assert_eq!((breach.limit, breach.value, breach.path.as_str()), (MAX_ARRAY_LEN, 3, "$.ids"));
//! ```

mod budget;
mod request;
mod run;

pub use budget::{BudgetOverride, CallBudget, LimitError};
pub use bytesize::ByteSize;
pub use request::{
    LimitBreach, MAX_ARGUMENT_BYTES, MAX_ARRAY_LEN, MAX_JSON_DEPTH, MAX_OBJECT_LEN,
    MAX_STRING_BYTES, PathStep, RequestLimits, describe, json_path,
};
pub use run::{RunBudget, RunOverride, TaskUse};
