//! A credential that cannot be printed by accident.

use std::fmt;

/// An operator-supplied credential for a backend.
///
/// `Debug` and `Display` print `[redacted]`, so a config dumped into a log or
/// an error message never carries it. The only way to the value is
/// [`Secret::expose`], which the client calls when it builds the header and
/// the redactor calls when it scrubs a response. No `PartialEq`: nothing
/// should compare secrets outside those two places.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential. An empty string is accepted here and refused by
    /// [`crate::Backends::new`], which knows which backend it belongs to.
    pub fn new(value: String) -> Self {
        Secret(value)
    }

    /// The credential itself. Call sites are few on purpose; grep for them.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// What a secret prints as, and what replaces it in a backend's response.
pub const REDACTED: &str = "[redacted]";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_never_show_the_value() {
        let secret = Secret::new("hunter2".to_owned());
        assert_eq!(format!("{secret:?}"), "[redacted]");
        assert_eq!(format!("{secret}"), "[redacted]");
        assert_eq!(secret.expose(), "hunter2");
    }
}
