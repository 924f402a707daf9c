//! The catalog's semantic version, and how a diff's [`Bump`] moves it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::Bump;

/// The catalog's semantic version "MAJOR.MINOR.PATCH".
///
/// Written and read only in that form: three decimal numbers without signs,
/// spaces, leading zeros or pre-release and build suffixes, so that text and
/// value map one to one. Serde uses the same text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CatalogVersion {
    /// Bumped when a caller may break.
    pub major: u64,
    /// Bumped when callers gain something.
    pub minor: u64,
    /// Bumped for any other change.
    pub patch: u64,
}

impl CatalogVersion {
    /// A new catalog's version, 1.0.0.
    pub const INITIAL: CatalogVersion = CatalogVersion {
        major: 1,
        minor: 0,
        patch: 0,
    };

    /// Major → (major+1).0.0, Minor → major.(minor+1).0, Patch → …patch+1, None → unchanged.
    ///
    /// A component already at `u64::MAX` stays there (saturates) rather than
    /// wrapping to a lower version.
    pub fn bump(self, bump: Bump) -> CatalogVersion {
        let CatalogVersion {
            major,
            minor,
            patch,
        } = self;
        match bump {
            Bump::None => self,
            Bump::Patch => CatalogVersion {
                major,
                minor,
                patch: patch.saturating_add(1),
            },
            Bump::Minor => CatalogVersion {
                major,
                minor: minor.saturating_add(1),
                patch: 0,
            },
            Bump::Major => CatalogVersion {
                major: major.saturating_add(1),
                minor: 0,
                patch: 0,
            },
        }
    }
}

impl fmt::Display for CatalogVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Text that is not a catalog version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "catalog version {text:?} is not MAJOR.MINOR.PATCH (three decimal numbers, no leading zeros)"
)]
pub struct VersionError {
    /// The refused text.
    pub text: String,
}

impl FromStr for CatalogVersion {
    type Err = VersionError;

    fn from_str(text: &str) -> Result<Self, VersionError> {
        let parts: Vec<Option<u64>> = text.split('.').map(number).collect();
        match parts.as_slice() {
            [Some(major), Some(minor), Some(patch)] => Ok(CatalogVersion {
                major: *major,
                minor: *minor,
                patch: *patch,
            }),
            _ => Err(VersionError {
                text: text.to_owned(),
            }),
        }
    }
}

/// One component: ASCII digits, no leading zero, fitting a `u64`.
fn number(part: &str) -> Option<u64> {
    let digits = !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    let canonical = part == "0" || !part.starts_with('0');
    if digits && canonical {
        part.parse().ok()
    } else {
        None
    }
}

impl Serialize for CatalogVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CatalogVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u64, minor: u64, patch: u64) -> CatalogVersion {
        CatalogVersion {
            major,
            minor,
            patch,
        }
    }

    #[test]
    fn a_bump_moves_the_version_as_semver_says() {
        let rows = [
            (v(1, 2, 3), Bump::None, v(1, 2, 3)),
            (v(1, 2, 3), Bump::Patch, v(1, 2, 4)),
            (v(1, 2, 3), Bump::Minor, v(1, 3, 0)),
            (v(1, 2, 3), Bump::Major, v(2, 0, 0)),
            (CatalogVersion::INITIAL, Bump::Minor, v(1, 1, 0)),
            (v(u64::MAX, 0, 0), Bump::Major, v(u64::MAX, 0, 0)),
        ];
        for (from, bump, want) in rows {
            assert_eq!(from.bump(bump), want, "{from} {bump:?}");
        }
        assert_eq!(CatalogVersion::INITIAL, v(1, 0, 0));
    }

    #[test]
    fn a_version_reads_back_what_it_writes() {
        for text in ["1.0.0", "0.0.0", "10.20.30", "18446744073709551615.0.1"] {
            let parsed: CatalogVersion = text.parse().expect("a version");
            assert_eq!(parsed.to_string(), text);
            let json = serde_json::to_string(&parsed).expect("serializes");
            assert_eq!(json, format!("\"{text}\""));
            let back: CatalogVersion = serde_json::from_str(&json).expect("reads back");
            assert_eq!(back, parsed);
        }
        assert!(
            v(1, 10, 0) > v(1, 9, 9),
            "versions order numerically, not as text"
        );
    }

    #[test]
    fn anything_but_three_plain_numbers_is_refused_naming_the_text() {
        let bad = [
            "",
            "1",
            "1.2",
            "1.2.3.4",
            "v1.2.3",
            "01.2.3",
            "1.02.3",
            "1.2.-3",
            "+1.2.3",
            "1.2.3-beta",
            "1.2.3+build",
            " 1.2.3",
            "1.2.3 ",
            "a.b.c",
            "1..3",
            "١.٢.٣",
            "18446744073709551616.0.0",
        ];
        for text in bad {
            let e = text.parse::<CatalogVersion>().expect_err(text);
            assert_eq!(e.text, text);
            assert!(e.to_string().contains(&format!("{text:?}")), "{e}");
        }
        let e = serde_json::from_str::<CatalogVersion>("\"1.2\"").expect_err("refused");
        assert!(e.to_string().contains("\"1.2\""), "{e}");
        assert!(
            serde_json::from_str::<CatalogVersion>("123").is_err(),
            "a number is not a version"
        );
    }
}
