//! The ids the workspace mints: random, prefixed, and checked on the way
//! back in, so a caller can only name what the host issued.

use std::fmt;

/// Defines an id type minted as `<prefix><32 lower-case hex digits>`.
macro_rules! minted_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// The prefix every id of this kind starts with.
            pub const PREFIX: &'static str = $prefix;

            /// A new random id (128 bits from the OS).
            pub fn new() -> Self {
                $name(mint($prefix))
            }

            /// `id` if it is one this host could have minted.
            pub fn parse(id: &str) -> Option<Self> {
                well_formed(id, $prefix).then(|| $name(id.to_owned()))
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self.0)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                $name::parse(&text).ok_or_else(|| {
                    serde::de::Error::custom(format!(
                        concat!("{:?} is not a ", stringify!($name), " ({}…)"),
                        text, $prefix
                    ))
                })
            }
        }
    };
}

minted_id!(
    /// An authoring session (`ws_…`).
    SessionId,
    "ws_"
);
minted_id!(
    /// A proposal in a session (`prop_…`).
    ProposalId,
    "prop_"
);
minted_id!(
    /// An upload the host keeps for a proposal to name (`upl_…`): the only
    /// way bytes reach a proposal.
    UploadHandle,
    "upl_"
);
minted_id!(
    /// A promotion of a proposal (`promo_…`).
    PromotionId,
    "promo_"
);

impl PromotionId {
    /// The id of the promotion of `proposal`: one per proposal, the same
    /// on every attempt, so a promotion retried after a lost race goes on
    /// under the idempotency key it started with and never acts twice.
    pub fn of(proposal: &ProposalId) -> Self {
        let digest = toolhost_types::Digest::of(proposal.as_str().as_bytes()).to_string();
        PromotionId(format!("{}{}", Self::PREFIX, &digest[..32]))
    }
}

fn mint(prefix: &str) -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    format!("{prefix}{}", hex::encode(bytes))
}

fn well_formed(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix).is_some_and(|hex| {
        hex.len() == 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_ids_parse_back_and_nothing_else_parses() {
        let (a, b) = (SessionId::new(), SessionId::new());
        assert_ne!(a, b);
        assert_eq!(SessionId::parse(a.as_str()), Some(a.clone()));
        let upload = UploadHandle::new();
        for bad in [
            "",
            "ws_",
            "ws_XYZ",
            "/etc/passwd",
            "https://example.com/x.wasm",
            upload.as_str(),
            &a.as_str().to_uppercase(),
            &format!("{a}0"),
        ] {
            assert_eq!(SessionId::parse(bad), None, "{bad:?}");
        }
        assert!(ProposalId::new().as_str().starts_with("prop_"));
        assert!(PromotionId::new().as_str().starts_with("promo_"));
        let p = ProposalId::new();
        let promotion = PromotionId::of(&p);
        assert_eq!(
            PromotionId::parse(promotion.as_str()),
            Some(promotion.clone())
        );
        assert_eq!(PromotionId::of(&p), promotion);
        assert_ne!(PromotionId::of(&ProposalId::new()), promotion);
    }

    #[test]
    fn ids_serialize_as_strings_and_refuse_foreign_text() {
        let id = UploadHandle::new();
        let json = serde_json::to_string(&id).expect("serializes");
        assert_eq!(json, format!("\"{id}\""));
        assert_eq!(serde_json::from_str::<UploadHandle>(&json).ok(), Some(id));
        assert!(serde_json::from_str::<UploadHandle>("\"./component.wasm\"").is_err());
    }
}
