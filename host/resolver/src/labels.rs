//! Labels that tell same-named candidates apart (seed 003: "the label
//! appends a distinguishing detail … `Acme Holdings · #2`").
//!
//! A person picks a candidate by its label, so no two labels may read the
//! same, case aside: names are compared as the resolver matches them
//! (`str::to_lowercase`, Unicode-aware), and a label that still reads like
//! another (a name that looks like a label, "Acme · #2") falls back to the
//! id, which is unique.

use std::collections::HashMap;

use crate::scope::Entity;

/// The separator between a name and what distinguishes it.
const SEP: &str = " · ";

/// One label per entity, in order: the name when it is unique among
/// `entities`; else the name and its detail (if it has one and no namesake
/// shares it), else the name and `#id`. Any label that reads like another
/// (case aside) becomes the name and `#id`.
pub(crate) fn labels(entities: &[&Entity]) -> Vec<String> {
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for e in entities {
        *by_name.entry(e.name.to_lowercase()).or_default() += 1;
    }
    let mut labels: Vec<String> = entities
        .iter()
        .map(|e| first_choice(e, entities, &by_name))
        .collect();
    // Each pass turns at least one label into its id form, or ends: at most
    // one pass per entity. Two id forms end in different ids, so they differ.
    loop {
        let mut seen: HashMap<String, usize> = HashMap::new();
        for label in &labels {
            *seen.entry(label.to_lowercase()).or_default() += 1;
        }
        let mut changed = false;
        for (label, e) in labels.iter_mut().zip(entities) {
            if seen[&label.to_lowercase()] > 1 {
                let by_id = by_id(e);
                if *label != by_id {
                    *label = by_id;
                    changed = true;
                }
            }
        }
        if !changed {
            return labels;
        }
    }
}

/// The label `e` gets before labels are compared with each other.
fn first_choice(e: &Entity, entities: &[&Entity], by_name: &HashMap<String, usize>) -> String {
    let name = e.name.to_lowercase();
    if by_name[&name] == 1 {
        return e.name.clone();
    }
    let shared_detail = |d: &String| {
        entities
            .iter()
            .any(|o| o.id != e.id && o.name.to_lowercase() == name && o.detail.as_ref() == Some(d))
    };
    match &e.detail {
        Some(d) if !shared_detail(d) => format!("{}{SEP}{d}", e.name),
        _ => by_id(e),
    }
}

fn by_id(e: &Entity) -> String {
    format!("{}{SEP}#{}", e.name, e.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labelled(entities: &[Entity]) -> Vec<String> {
        labels(&entities.iter().collect::<Vec<_>>())
    }

    #[test]
    fn unique_names_stand_alone_and_namesakes_get_their_detail_or_id() {
        let entities = [
            Entity::new(1, "Acme", "t").with_detail("acme.com"),
            Entity::new(2, "acme", "t").with_detail("acme.org"),
            Entity::new(3, "ACME", "t").with_detail("acme.org"),
            Entity::new(4, "Globex", "t"),
        ];
        assert_eq!(
            labelled(&entities),
            ["Acme · acme.com", "acme · #2", "ACME · #3", "Globex"]
        );
    }

    #[test]
    fn a_name_that_reads_like_another_label_falls_back_to_ids() {
        let entities = [
            Entity::new(2, "Acme", "t"),
            Entity::new(3, "Acme", "t"),
            Entity::new(9, "acme · #2", "t"),
        ];
        assert_eq!(
            labelled(&entities),
            ["Acme · #2", "Acme · #3", "acme · #2 · #9"]
        );
    }

    #[test]
    fn a_name_that_reads_like_a_detail_label_falls_back_to_ids() {
        let entities = [
            Entity::new(1, "Acme", "t").with_detail("EU"),
            Entity::new(2, "Acme", "t").with_detail("US"),
            Entity::new(3, "Acme · eu", "t"),
        ];
        assert_eq!(
            labelled(&entities),
            ["Acme · #1", "Acme · US", "Acme · eu · #3"]
        );
    }

    #[test]
    fn namesakes_are_found_beyond_ascii_case() {
        let entities = [
            Entity::new(1, "Ärzte", "t").with_detail("Berlin"),
            Entity::new(2, "ärzte", "t").with_detail("Berlin"),
        ];
        assert_eq!(labelled(&entities), ["Ärzte · #1", "ärzte · #2"]);
    }

    #[test]
    fn labels_never_read_alike() {
        let names = [
            "a",
            "A",
            "a · #1",
            "a · x",
            "A · X",
            "a · #2 · #3",
            "ä",
            "Ä",
        ];
        let details = [None, Some("x"), Some("X"), Some("#1")];
        let mut entities = Vec::new();
        let mut id = 0;
        for name in names {
            for detail in details {
                id += 1;
                let e = Entity::new(id, name, "t");
                entities.push(match detail {
                    Some(d) => e.with_detail(d),
                    None => e,
                });
            }
        }
        let labels = labelled(&entities);
        let mut folded: Vec<String> = labels.iter().map(|l| l.to_lowercase()).collect();
        folded.sort();
        folded.dedup();
        assert_eq!(folded.len(), labels.len(), "{labels:?}");
    }
}
