//! Canonical JSON: the one text form digests are taken of.
//!
//! The form is RFC 8785 (the JSON Canonicalization Scheme, JCS), written
//! by `serde_json_canonicalizer`: object keys sorted by their UTF-16 code
//! units, no insignificant whitespace, strings with the fewest escapes,
//! and numbers as ECMAScript writes a double. So anyone holding a value
//! re-derives its digest with any JCS implementation.
//!
//! JCS reads every number as a double. A value holding an integer that a
//! double cannot hold exactly (beyond ±2^53, say a 64-bit id) would lose
//! digits, and two different values would share a text and a digest: a
//! gate bound to one call's arguments would pass for another's. Such a
//! value is written instead exactly as it is (`serde_json`'s form, keys
//! sorted by their bytes, every digit kept). The two forms never meet:
//! that text holds an integer no double has, which JCS never writes.

use serde_json::Value;

/// `v` as canonical JSON text: RFC 8785 when every number in it is one a
/// double holds exactly, else its exact form (see the module docs).
pub fn canonical_json(v: &Value) -> String {
    if holds_only_doubles(v) {
        serde_json_canonicalizer::to_string(v).expect("a JSON value serializes")
    } else {
        exact_json(v)
    }
}

/// Whether every number in `v` is a double, or an integer a double holds
/// exactly.
fn holds_only_doubles(v: &Value) -> bool {
    match v {
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i as f64 as i128 == i128::from(i),
            (None, Some(u)) => u as f64 as u128 == u128::from(u),
            (None, None) => true,
        },
        Value::Array(items) => items.iter().all(holds_only_doubles),
        Value::Object(map) => map.values().all(holds_only_doubles),
        Value::Null | Value::Bool(_) | Value::String(_) => true,
    }
}

/// `v` with its object keys sorted by their bytes, no whitespace, and
/// every number as parsed: the form of a value JCS would round.
fn exact_json(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            let fields: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), exact_json(v)))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(exact_json).collect();
            format!("[{}]", items.join(","))
        }
        scalar => scalar.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let v = json!({"b": {"y": 1, "x": [true, null]}, "a": "s"});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":"s","b":{"x":[true,null],"y":1}}"#
        );
    }

    #[test]
    fn numbers_and_keys_are_written_as_rfc_8785_writes_them() {
        // RFC 8785's own examples: numbers as ECMAScript writes a double,
        // keys in UTF-16 order (U+1D11E, a surrogate pair, sorts before
        // U+FB33 though its UTF-8 bytes sort after).
        let v: Value = serde_json::from_str(
            r#"{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001,1.0,-0.0]}"#,
        )
        .expect("JSON");
        assert_eq!(
            canonical_json(&v),
            r#"{"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27,1,0]}"#
        );
        let keys = json!({"\u{fb33}": 1, "\u{1d11e}": 2, "a": 3});
        assert_eq!(
            canonical_json(&keys),
            "{\"a\":3,\"\u{1d11e}\":2,\"\u{fb33}\":1}"
        );
        assert_eq!(
            canonical_json(&json!("\u{7}\u{1f}\n\"\\/é")),
            r#""\u0007\u001f\n\"\\/é""#
        );
    }

    #[test]
    fn integers_a_double_cannot_hold_keep_every_digit_and_never_collide() {
        let (one, two) = (
            json!({"id": 9007199254740993u64}),
            json!({"id": 9007199254740992u64}),
        );
        assert_eq!(canonical_json(&one), r#"{"id":9007199254740993}"#);
        assert_eq!(canonical_json(&two), r#"{"id":9007199254740992}"#);
        assert_ne!(canonical_json(&one), canonical_json(&two));
        let negative = json!([-9007199254740993i64, {"b": 1, "a": 2}]);
        assert_eq!(
            canonical_json(&negative),
            r#"[-9007199254740993,{"a":2,"b":1}]"#
        );
        // Within a double's reach, integers are JCS's.
        assert_eq!(
            canonical_json(&json!(9007199254740992u64)),
            "9007199254740992"
        );
    }
}
