//! [`NameOrId`]: what a caller passes for an argument that names a thing.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// An argument that names a thing (a project, an environment…): a name, or
/// the thing's id as an integer.
///
/// Deserializes from a JSON string or a JSON integer (serde `untagged`);
/// its JSON Schema is `anyOf [string, integer]`. Whether a string of digits
/// is an id or a name is the host's resolver's decision, not this type's:
/// `"12"` stays a [`NameOrId::Name`] here and travels to the resolver as
/// the same digits as `12` would. Pass it to
/// [`Query::new`](crate::resolve::Query::new); tools should not interpret
/// it themselves.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum NameOrId {
    /// The caller passed an integer.
    Id(i64),
    /// The caller passed a string: a name, part of one, or digits.
    Name(String),
}

impl NameOrId {
    /// The text the resolver's WIT `value` carries: the name as given, or
    /// the id's decimal digits.
    pub fn to_value(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for NameOrId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameOrId::Id(id) => write!(f, "{id}"),
            NameOrId::Name(name) => f.write_str(name),
        }
    }
}

impl From<i64> for NameOrId {
    fn from(id: i64) -> Self {
        NameOrId::Id(id)
    }
}

impl From<&str> for NameOrId {
    fn from(name: &str) -> Self {
        NameOrId::Name(name.to_owned())
    }
}

impl From<String> for NameOrId {
    fn from(name: String) -> Self {
        NameOrId::Name(name)
    }
}

impl JsonSchema for NameOrId {
    /// Inline: each argument's own `description` then sits beside the
    /// `anyOf`, where clients read it, rather than behind a `$ref`.
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "NameOrId".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                { "type": "string" },
                { "type": "integer" }
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_strings_both_deserialize_and_keep_their_form() {
        let parse = |s: &str| serde_json::from_str::<NameOrId>(s).expect("fits");
        assert_eq!(parse("12"), NameOrId::Id(12));
        assert_eq!(parse("\"12\""), NameOrId::Name("12".into()));
        assert_eq!(parse("\"payments\""), NameOrId::from("payments"));
        assert!(serde_json::from_str::<NameOrId>("1.5").is_err());
        assert!(serde_json::from_str::<NameOrId>("null").is_err());
    }

    #[test]
    fn the_wit_value_of_an_id_is_its_digits_and_of_a_name_the_name() {
        assert_eq!(NameOrId::Id(-7).to_value(), "-7");
        assert_eq!(NameOrId::Id(204).to_value(), "204");
        assert_eq!(NameOrId::from("Login flow").to_value(), "Login flow");
    }

    #[test]
    fn the_schema_is_any_of_string_and_integer() {
        let schema = serde_json::to_value(schemars::schema_for!(NameOrId)).expect("JSON");
        assert_eq!(
            schema["anyOf"],
            serde_json::json!([{ "type": "string" }, { "type": "integer" }])
        );
    }
}
