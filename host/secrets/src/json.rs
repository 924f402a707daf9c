//! Scanning a JSON value: every string and every object key in it.

use serde_json::Value;

use crate::kind::SecretKind;
use crate::scanner::Scanner;

impl Scanner {
    /// The kind of the first finding in any string or object key inside `v`,
    /// in document order (an object's keys before its values).
    ///
    /// The walk uses an explicit stack, not recursion, so any depth is
    /// safe. Each string is scanned on its own: a secret split across two
    /// strings is not found. Numbers, booleans and null are not scanned.
    pub fn find_in_json(&self, v: &Value) -> Option<SecretKind> {
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) => {
                    if let Some(hit) = self.find(s) {
                        return Some(hit.kind);
                    }
                }
                Value::Array(items) => stack.extend(items.iter().rev()),
                Value::Object(map) => {
                    if let Some(hit) = map.keys().find_map(|k| self.find(k)) {
                        return Some(hit.kind);
                    }
                    stack.extend(map.values().rev());
                }
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
        None
    }
}
