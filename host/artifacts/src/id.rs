//! Artifact ids and their URIs.

use std::fmt;

/// The scheme and authority of every artifact URI.
pub const URI_PREFIX: &str = "toolhost://artifacts/";

/// Names one artifact: 128 random bits as 32 lower-case hex characters.
/// Unguessable, though guessing one would not be enough: every read is
/// checked against the reader's tenant and permission.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArtifactId(String);

impl ArtifactId {
    /// A new random id.
    pub fn new() -> Self {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the OS random source is available");
        ArtifactId(hex::encode(bytes))
    }

    /// `id` if it is one this host could have minted.
    pub fn parse(id: &str) -> Option<Self> {
        let well_formed = id.len() == 32
            && id
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        well_formed.then(|| ArtifactId(id.to_owned()))
    }

    /// The id a URI `toolhost://artifacts/<id>` names; `None` for any
    /// other URI.
    pub fn from_uri(uri: &str) -> Option<Self> {
        uri.strip_prefix(URI_PREFIX).and_then(Self::parse)
    }

    /// This artifact's URI.
    pub fn uri(&self) -> String {
        format!("{URI_PREFIX}{}", self.0)
    }

    /// The 32 hex characters.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for ArtifactId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for ArtifactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ArtifactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArtifactId({})", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_and_round_trip_through_their_uri() {
        let (a, b) = (ArtifactId::new(), ArtifactId::new());
        assert_ne!(a, b);
        assert_eq!(ArtifactId::from_uri(&a.uri()), Some(a.clone()));
        assert_eq!(ArtifactId::parse(a.as_str()), Some(a));
    }

    #[test]
    fn only_well_formed_ids_parse() {
        for bad in [
            "",
            "0123",
            "0123456789ABCDEF0123456789abcdef",
            "0123456789abcdef0123456789abcdeg",
            "0123456789abcdef0123456789abcdef0",
            "../../../../etc/passwd/0123456789",
        ] {
            assert_eq!(ArtifactId::parse(bad), None, "{bad:?}");
        }
        let id = "0123456789abcdef0123456789abcdef";
        assert!(ArtifactId::parse(id).is_some());
        assert_eq!(ArtifactId::from_uri(&format!("file:///{id}")), None);
        assert_eq!(
            ArtifactId::from_uri(&format!("toolhost://other/{id}")),
            None
        );
    }
}
