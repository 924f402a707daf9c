//! Labels that tell same-named candidates apart (seed 003: "the label
//! appends a distinguishing detail … `Acme Holdings · #2`").

use std::collections::HashMap;

use crate::scope::Entity;

/// The separator between a name and what distinguishes it.
const SEP: &str = " · ";

/// One label per entity, in order: the name when it is unique among
/// `entities`; else the name and its detail (if it has one and no namesake
/// shares it), else the name and `#id`.
pub(crate) fn labels(entities: &[&Entity]) -> Vec<String> {
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for e in entities {
        *by_name.entry(e.name.to_lowercase()).or_default() += 1;
    }
    entities
        .iter()
        .map(|e| {
            if by_name[&e.name.to_lowercase()] == 1 {
                return e.name.clone();
            }
            let shared_detail = |d: &String| {
                entities.iter().any(|o| {
                    o.id != e.id
                        && o.name.eq_ignore_ascii_case(&e.name)
                        && o.detail.as_ref() == Some(d)
                })
            };
            match &e.detail {
                Some(d) if !shared_detail(d) => format!("{}{SEP}{d}", e.name),
                _ => format!("{}{SEP}#{}", e.name, e.id),
            }
        })
        .collect()
}
