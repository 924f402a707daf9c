//! Log lines through the host's `log` import.
//!
//! The host tags each line with the plugin and the call, and counts it
//! against the call's log budget (bytes) and host-call budget: a line past
//! either ends the call with a trap. Log for diagnostics, not data.
//!
//! Each level is both a function taking a `&str` and a `format!`-style macro:
//! `log::info("ready")`, `log::info!("{n} rows")`.
//!
//! Outside wasm (unit tests of tool functions on the build machine) lines go
//! to stderr instead.

pub use crate::bindings::toolhost::plugin::log::Level;

/// Records one line at `level`.
pub fn log(level: Level, message: &str) {
    #[cfg(target_arch = "wasm32")]
    crate::bindings::toolhost::plugin::log::log(level, message);
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[{level:?}] {message}");
}

/// Records one line at [`Level::Trace`].
pub fn trace(message: &str) {
    log(Level::Trace, message);
}

/// Records one line at [`Level::Debug`].
pub fn debug(message: &str) {
    log(Level::Debug, message);
}

/// Records one line at [`Level::Info`].
pub fn info(message: &str) {
    log(Level::Info, message);
}

/// Records one line at [`Level::Warn`].
pub fn warn(message: &str) {
    log(Level::Warn, message);
}

/// Records one line at [`Level::Error`].
pub fn error(message: &str) {
    log(Level::Error, message);
}

#[doc(hidden)]
#[macro_export]
macro_rules! __log_trace {
    ($($arg:tt)*) => { $crate::log::trace(&::std::format!($($arg)*)) };
}
#[doc(hidden)]
#[macro_export]
macro_rules! __log_debug {
    ($($arg:tt)*) => { $crate::log::debug(&::std::format!($($arg)*)) };
}
#[doc(hidden)]
#[macro_export]
macro_rules! __log_info {
    ($($arg:tt)*) => { $crate::log::info(&::std::format!($($arg)*)) };
}
#[doc(hidden)]
#[macro_export]
macro_rules! __log_warn {
    ($($arg:tt)*) => { $crate::log::warn(&::std::format!($($arg)*)) };
}
#[doc(hidden)]
#[macro_export]
macro_rules! __log_error {
    ($($arg:tt)*) => { $crate::log::error(&::std::format!($($arg)*)) };
}

pub use crate::{
    __log_debug as debug, __log_error as error, __log_info as info, __log_trace as trace,
    __log_warn as warn,
};
