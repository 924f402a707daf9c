//! Budgets: how much one call may spend, and how far a plugin's manifest may
//! move that.
//!
//! This room owns the numbers and the rule that combines them (default,
//! manifest override, host ceiling). It does not enforce anything: the
//! `runtime` enforces a [`CallBudget`] inside the sandbox. Pure code.
//!
//! ```
//! use toolhost_limits::{BudgetOverride, CallBudget};
//! let tight: BudgetOverride = toml::from_str("timeout = \"250ms\"").expect("valid");
//! let budget = CallBudget::DEFAULT.with_override(&tight, &CallBudget::CEILING).expect("within ceiling");
//! assert_eq!(budget.timeout.as_millis(), 250);
//! ```

mod budget;

pub use budget::{BudgetOverride, CallBudget, LimitError};
pub use bytesize::ByteSize;
