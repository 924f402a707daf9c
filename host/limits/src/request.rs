//! Request bounds: how deep, how wide and how long a call's arguments may
//! be. Checked by the call path before any plugin code sees them, and
//! before the tool's schema is (the validator recurses over the value too).

use std::fmt::Write as _;
use std::io;

use bytesize::ByteSize;
use serde::Deserialize;
use serde_json::Value;

use crate::LimitError;

/// `max_json_depth`: nesting of arrays and objects.
pub const MAX_JSON_DEPTH: &str = "max_json_depth";
/// `max_array_len`: items in any one array.
pub const MAX_ARRAY_LEN: &str = "max_array_len";
/// `max_object_len`: members of any one object.
pub const MAX_OBJECT_LEN: &str = "max_object_len";
/// `max_string_bytes`: UTF-8 bytes of any one string or object key.
pub const MAX_STRING_BYTES: &str = "max_string_bytes";
/// `max_argument_bytes`: the arguments as compact JSON.
pub const MAX_ARGUMENT_BYTES: &str = "max_argument_bytes";

/// The bounds on one call's arguments. Configuration spells each field as
/// the limit's name (`max_depth` is `max_json_depth`), every key optional,
/// unknown keys refused. The request body as a whole is bounded earlier,
/// at the HTTP edge (`max_request_bytes`, 4 MiB by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RequestLimits {
    /// Levels of nested arrays and objects; the arguments object itself is
    /// level 1.
    #[serde(rename = "max_json_depth")]
    pub max_depth: u32,
    /// Items in any one array.
    pub max_array_len: u32,
    /// Members of any one object.
    pub max_object_len: u32,
    /// UTF-8 bytes of any one string, object keys included.
    pub max_string_bytes: ByteSize,
    /// Bytes of the arguments serialized as compact JSON: what the plugin
    /// must parse inside its memory budget.
    pub max_argument_bytes: ByteSize,
}

impl RequestLimits {
    /// The defaults, and why.
    pub const DEFAULT: RequestLimits = RequestLimits {
        // Tool arguments are records of a few levels (a filter holding a
        // list of conditions is 3 or 4). 32 is generous for any schema a
        // person writes, and keeps every recursive consumer (the schema
        // validator, the guest's deserializer) far from its stack's end;
        // serde_json's own parser stops at 128.
        max_depth: 32,
        // Lists a model writes or pastes: ids to act on, rows to import.
        // 10,000 covers batch operations while bounding the per-item work
        // of validation and of the plugin.
        max_array_len: 10_000,
        // Arguments name their fields (a handful); free-form maps such as
        // labels or headers hold tens. 1,000 leaves room for both while
        // bounding hashing and `patternProperties` work per object.
        max_object_len: 1_000,
        // The longest legitimate argument is a document to analyse: 1 MiB
        // is some 150,000 words, a quarter of the request-body bound.
        max_string_bytes: ByteSize::mib(1),
        // A plugin holds its arguments two or three times over (text,
        // parsed value, its own types) in a 64 MiB memory; 2 MiB leaves
        // that headroom and sits under the 4 MiB request-body bound.
        max_argument_bytes: ByteSize::mib(2),
    };

    /// Refuses a zero bound: it would refuse every call (even `{}` is one
    /// level deep and two bytes long).
    pub fn validate(&self) -> Result<(), LimitError> {
        let zero = [
            (MAX_JSON_DEPTH, u64::from(self.max_depth)),
            (MAX_ARRAY_LEN, u64::from(self.max_array_len)),
            (MAX_OBJECT_LEN, u64::from(self.max_object_len)),
            (MAX_STRING_BYTES, self.max_string_bytes.as_u64()),
            (MAX_ARGUMENT_BYTES, self.max_argument_bytes.as_u64()),
        ]
        .into_iter()
        .find(|(_, v)| *v == 0);
        match zero {
            Some((name, _)) => Err(LimitError::Zero { name }),
            None => Ok(()),
        }
    }

    /// Checks `args` against every bound: the shape first, depth-first
    /// with members in the order the value holds them (the first breach
    /// found is the one reported, with its path), then the whole size.
    pub fn check(&self, args: &Value) -> Result<(), LimitBreach> {
        Walk {
            limits: self,
            path: Vec::new(),
        }
        .value(args, 1)?;
        let mut size = Counter(0);
        serde_json::to_writer(&mut size, args).expect("counting bytes cannot fail");
        breach_if(
            MAX_ARGUMENT_BYTES,
            size.0,
            self.max_argument_bytes.as_u64(),
            &[],
        )
    }
}

impl Default for RequestLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Arguments over one bound: which, by how much, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(self.limit, self.value, self.max, &self.path))]
pub struct LimitBreach {
    /// The limit's name, e.g. [`MAX_ARRAY_LEN`].
    pub limit: &'static str,
    /// What the arguments measure there (for depth: the level reached,
    /// one past the bound).
    pub value: u64,
    /// The bound in force.
    pub max: u64,
    /// Where, e.g. `$.items[3].name` (`$`: the arguments themselves). An
    /// over-long key is reported at its member; long keys are shortened.
    pub path: String,
}

/// A breach as one sentence, e.g. `$.items has 4 items; max_array_len is 3`.
pub fn describe(limit: &str, value: u64, max: u64, path: &str) -> String {
    let measure = match limit {
        MAX_JSON_DEPTH => format!("is nested {value} levels deep"),
        MAX_ARRAY_LEN => format!("has {value} items"),
        MAX_OBJECT_LEN => format!("has {value} members"),
        _ => format!("is {value} bytes"),
    };
    format!("{path} {measure}; {limit} is {max}")
}

/// One step from the arguments down to a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStep<'v> {
    /// An object's member.
    Key(&'v str),
    /// An array's item.
    Index(usize),
}

/// The depth-first walk, keeping the path to the current value.
struct Walk<'l, 'v> {
    limits: &'l RequestLimits,
    path: Vec<PathStep<'v>>,
}

impl<'v> Walk<'_, 'v> {
    fn value(&mut self, v: &'v Value, depth: u32) -> Result<(), LimitBreach> {
        let l = self.limits;
        match v {
            Value::String(s) => self.at_most(MAX_STRING_BYTES, s.len(), l.max_string_bytes),
            Value::Array(items) => {
                self.at_most(MAX_JSON_DEPTH, depth, l.max_depth)?;
                self.at_most(MAX_ARRAY_LEN, items.len(), l.max_array_len)?;
                for (i, item) in items.iter().enumerate() {
                    self.path.push(PathStep::Index(i));
                    self.value(item, depth + 1)?;
                    self.path.pop();
                }
                Ok(())
            }
            Value::Object(members) => {
                self.at_most(MAX_JSON_DEPTH, depth, l.max_depth)?;
                self.at_most(MAX_OBJECT_LEN, members.len(), l.max_object_len)?;
                for (key, item) in members {
                    self.path.push(PathStep::Key(key));
                    self.at_most(MAX_STRING_BYTES, key.len(), l.max_string_bytes)?;
                    self.value(item, depth + 1)?;
                    self.path.pop();
                }
                Ok(())
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
        }
    }

    fn at_most(
        &self,
        limit: &'static str,
        value: impl TryInto<u64>,
        max: impl Into<Bound>,
    ) -> Result<(), LimitBreach> {
        let value = value.try_into().unwrap_or(u64::MAX);
        breach_if(limit, value, max.into().0, &self.path)
    }
}

/// A bound as a number, whichever type configuration holds it in.
struct Bound(u64);

impl From<u32> for Bound {
    fn from(n: u32) -> Self {
        Bound(n.into())
    }
}

impl From<ByteSize> for Bound {
    fn from(b: ByteSize) -> Self {
        Bound(b.as_u64())
    }
}

fn breach_if(
    limit: &'static str,
    value: u64,
    max: u64,
    path: &[PathStep],
) -> Result<(), LimitBreach> {
    if value <= max {
        return Ok(());
    }
    Err(LimitBreach {
        limit,
        value,
        max,
        path: json_path(path),
    })
}

/// Keys longer than this are shortened in paths: a path names a place,
/// and an over-long key must not make the error as long as itself.
const KEY_SHOWN: usize = 32;

/// A path as breaches report it: `$`, then `.name` for plain keys,
/// `["a b"]` for others (shortened past 32 characters), `[3]` for items.
pub fn json_path(path: &[PathStep]) -> String {
    let mut out = String::from("$");
    for step in path {
        match step {
            PathStep::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
            PathStep::Key(k) if plain(k) => {
                let _ = write!(out, ".{k}");
            }
            PathStep::Key(k) => {
                let shown: String = k.chars().take(KEY_SHOWN).collect();
                let ellipsis = if shown.len() < k.len() { "…" } else { "" };
                let quoted = serde_json::to_string(&shown).expect("a string serializes");
                let _ = write!(
                    out,
                    "[{}{ellipsis}\"]",
                    quoted.strip_suffix('"').unwrap_or(&quoted)
                );
            }
        }
    }
    out
}

/// A key that reads unambiguously after a dot: an identifier, not too long.
fn plain(key: &str) -> bool {
    let mut chars = key.chars();
    key.len() <= KEY_SHOWN
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Counts the bytes written to it, storing none.
struct Counter(u64);

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Defaults, with `limit` set to `max` (bytes for the byte limits).
    fn with(limit: &str, max: u32) -> RequestLimits {
        let mut l = RequestLimits::DEFAULT;
        match limit {
            MAX_JSON_DEPTH => l.max_depth = max,
            MAX_ARRAY_LEN => l.max_array_len = max,
            MAX_OBJECT_LEN => l.max_object_len = max,
            MAX_STRING_BYTES => l.max_string_bytes = ByteSize::b(max.into()),
            MAX_ARGUMENT_BYTES => l.max_argument_bytes = ByteSize::b(max.into()),
            _ => panic!("no limit {limit}"),
        }
        l
    }

    fn breach(limit: &'static str, value: u64, max: u64, path: &str) -> LimitBreach {
        LimitBreach {
            limit,
            value,
            max,
            path: path.into(),
        }
    }

    #[test]
    fn each_limit_admits_its_bound_and_refuses_one_more_naming_where() {
        // (limit, bound, just under or at, just over, the breach)
        let cases = [
            (
                MAX_JSON_DEPTH,
                3,
                json!({"a": [{"b": 1}]}),
                json!({"a": [{"b": [1]}]}),
                breach(MAX_JSON_DEPTH, 4, 3, "$.a[0].b"),
            ),
            (
                MAX_ARRAY_LEN,
                3,
                json!({"items": [1, 2, 3]}),
                json!({"items": [1, 2, 3, 4]}),
                breach(MAX_ARRAY_LEN, 4, 3, "$.items"),
            ),
            (
                MAX_OBJECT_LEN,
                2,
                json!({"a": {"x": 1, "y": 2}}),
                json!({"a": {"x": 1, "y": 2, "z": 3}}),
                breach(MAX_OBJECT_LEN, 3, 2, "$.a"),
            ),
            (
                MAX_STRING_BYTES,
                6,
                json!({"s": [{"n": "ééé"}]}),
                json!({"s": [{"n": "éééa"}]}),
                breach(MAX_STRING_BYTES, 7, 6, "$.s[0].n"),
            ),
            (
                MAX_ARGUMENT_BYTES,
                12,
                json!({"t": "abcd"}),
                json!({"t": "abcde"}),
                breach(MAX_ARGUMENT_BYTES, 13, 12, "$"),
            ),
        ];
        for (limit, max, under, over, expected) in cases {
            let limits = with(limit, max);
            assert_eq!(limits.check(&under), Ok(()), "{limit}: {under}");
            assert_eq!(limits.check(&over), Err(expected), "{limit}: {over}");
        }
    }

    #[test]
    fn the_arguments_object_is_the_first_level() {
        let one = with(MAX_JSON_DEPTH, 1);
        assert_eq!(one.check(&json!({"a": 1, "b": "x"})), Ok(()));
        assert_eq!(
            one.check(&json!({"a": []})),
            Err(breach(MAX_JSON_DEPTH, 2, 1, "$.a"))
        );
    }

    #[test]
    fn object_keys_are_strings_too() {
        let err = with(MAX_STRING_BYTES, 4)
            .check(&json!({"long": {"abcde": 1}}))
            .expect_err("a 5-byte key");
        assert_eq!(err, breach(MAX_STRING_BYTES, 5, 4, "$.long.abcde"));
    }

    #[test]
    fn paths_quote_odd_keys_and_shorten_long_ones() {
        let limits = with(MAX_ARRAY_LEN, 1);
        let long = "k".repeat(100);
        let long_key: Value = [(long.clone(), json!([1, 2]))].into_iter().collect();
        let cases = [
            (json!({"a b": [1, 2]}), r#"$["a b"]"#.to_owned()),
            (json!({"0": [1, 2]}), r#"$["0"]"#.to_owned()),
            (json!({"q\"": [1, 2]}), r#"$["q\""]"#.to_owned()),
            (long_key, format!("$[\"{}…\"]", &long[..32])),
            (json!({"x": [[1, 2]]}), "$.x[0]".to_owned()),
        ];
        for (args, path) in cases {
            let err = limits.check(&args).expect_err("an array of two");
            assert_eq!(err.path, path, "{args}");
        }
    }

    #[test]
    fn the_first_breach_in_document_order_is_reported() {
        let err = with(MAX_ARRAY_LEN, 1)
            .check(&json!({"a": [1], "b": [1, 2], "c": [1, 2, 3]}))
            .expect_err("b and c are too long");
        assert_eq!(err.path, "$.b");
    }

    #[test]
    fn shape_is_reported_before_the_whole_size() {
        let mut limits = with(MAX_STRING_BYTES, 4);
        limits.max_argument_bytes = ByteSize::b(4);
        let err = limits.check(&json!({"t": "abcde"})).expect_err("both");
        assert_eq!(err.limit, MAX_STRING_BYTES);
    }

    #[test]
    fn a_breach_reads_as_a_sentence_naming_the_limit_and_its_value() {
        let cases = [
            (
                MAX_JSON_DEPTH,
                "$.a is nested 4 levels deep; max_json_depth is 3",
            ),
            (MAX_ARRAY_LEN, "$.a has 4 items; max_array_len is 3"),
            (MAX_OBJECT_LEN, "$.a has 4 members; max_object_len is 3"),
            (MAX_STRING_BYTES, "$.a is 4 bytes; max_string_bytes is 3"),
        ];
        for (limit, text) in cases {
            assert_eq!(breach(limit, 4, 3, "$.a").to_string(), text);
        }
    }

    #[test]
    fn defaults_admit_ordinary_arguments() {
        let args = json!({"query": "open incidents", "filters": [{"field": "state", "in": ["new", "open"]}], "limit": 50});
        assert_eq!(RequestLimits::DEFAULT.check(&args), Ok(()));
        assert_eq!(RequestLimits::DEFAULT.validate(), Ok(()));
    }

    #[test]
    fn configuration_names_each_limit_and_refuses_zero_and_unknown_keys() {
        let l: RequestLimits =
            toml::from_str("max_json_depth = 8\nmax_string_bytes = \"64 KiB\"").expect("valid");
        assert_eq!((l.max_depth, l.max_string_bytes), (8, ByteSize::kib(64)));
        assert_eq!(l.max_array_len, RequestLimits::DEFAULT.max_array_len);

        let zero: RequestLimits = toml::from_str("max_object_len = 0").expect("parses");
        assert_eq!(
            zero.validate(),
            Err(LimitError::Zero {
                name: MAX_OBJECT_LEN
            })
        );
        let err = toml::from_str::<RequestLimits>("max_depth = 8").expect_err("unknown key");
        assert!(err.to_string().contains("max_depth"), "{err}");
    }
}
