//! Run ids: `run_` and 128 random bits.

use std::fmt;

/// Names one run: `run_` and 32 lower-case hex characters of OS
/// randomness. Unguessable, and never enough on its own: every read is
/// checked against the reader's tenant and identity.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunId(String);

const PREFIX: &str = "run_";

impl RunId {
    /// A new random id.
    pub fn new() -> Self {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the OS random source is available");
        RunId(format!("{PREFIX}{}", hex::encode(bytes)))
    }

    /// `id` if it is one this host could have minted.
    pub fn parse(id: &str) -> Option<Self> {
        let hex = id.strip_prefix(PREFIX)?;
        let well_formed = hex.len() == 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        well_formed.then(|| RunId(id.to_owned()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for RunId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RunId({})", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_and_parse_back_and_nothing_else_parses() {
        let (a, b) = (RunId::new(), RunId::new());
        assert_ne!(a, b);
        assert_eq!(RunId::parse(a.as_str()), Some(a.clone()));
        for bad in [
            "",
            "run_",
            "run_XYZ",
            "abc",
            &a.as_str()[4..],
            &format!("{a}0"),
        ] {
            assert_eq!(RunId::parse(bad), None, "{bad:?}");
        }
    }
}
