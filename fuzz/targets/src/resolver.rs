//! The resolver's inputs: what a caller passes for an argument that names
//! a thing, and the pins and narrowing around it.

use std::sync::OnceLock;

use toolhost_resolver::{Entity, MAX_CANDIDATES, Pin, Query, resolve, scope};

/// The resolver's snapshot in these targets: projects of two tenants (a
/// name in both), environments under projects, namesakes told apart by a
/// detail or by id, names that differ only in non-ASCII case, a name that
/// reads like another's label, and more rows than a question offers. Ids
/// are unique.
fn resolver_snapshot() -> &'static [Entity] {
    static SNAPSHOT: OnceLock<Vec<Entity>> = OnceLock::new();
    SNAPSHOT.get_or_init(|| {
        let mut rows = vec![
            Entity::new(1, "payments", "acme"),
            Entity::new(2, "auth", "acme"),
            Entity::new(3, "Payments Legacy", "acme").with_detail("legacy"),
            Entity::new(4, "payments", "globex"),
            Entity::new(11, "dev", "acme").child_of("project", 1),
            Entity::new(12, "staging", "acme").child_of("project", 1),
            Entity::new(13, "dev", "acme").child_of("project", 2),
            Entity::new(14, "prod", "globex").child_of("project", 4),
            Entity::new(21, "Ann", "acme").with_detail("ann@acme.example"),
            Entity::new(22, "ann", "acme").with_detail("ann@acme.example"),
            Entity::new(23, "Émile", "acme").with_detail("emile@acme.example"),
            Entity::new(24, "émile", "acme").with_detail("emile@acme.example"),
            Entity::new(25, "İstanbul", "acme"),
            Entity::new(26, "ANN · #22", "acme"),
        ];
        rows.extend((0..30).map(|i| Entity::new(100 + i, &format!("svc-{i:02}"), "acme")));
        rows
    })
}

/// A resolver input as `key: value` lines, in any order: `tenant`,
/// `kind` (the argument is named the same; `project` if absent), `value`
/// (absent: the caller passed nothing), `within` (ids, space-separated),
/// `pin` (`kind=id`, one a line), `question`.
fn resolver_input(text: &str) -> (String, Vec<Pin>, Query) {
    let mut tenant = String::new();
    let mut pins = Vec::new();
    let mut query = Query::new("project", "project", None);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(": ") else {
            continue;
        };
        match key {
            "tenant" => tenant = value.into(),
            "kind" => (query.kind, query.field) = (value.into(), value.into()),
            "value" => query.value = Some(value.into()),
            "within" => {
                query.within = Some(value.split(' ').filter_map(|id| id.parse().ok()).collect());
            }
            "pin" => pins.extend(value.split_once('=').and_then(|(kind, id)| {
                let name = format!("{kind} {id}");
                id.parse().ok().map(|id| Pin {
                    kind: kind.into(),
                    id,
                    name,
                })
            })),
            "question" => query.question = Some(value.into()),
            _ => {}
        }
    }
    (tenant, pins, query)
}

/// Whether every pin that reaches `e` (it has a parent of the pin's kind)
/// names one of its parents.
fn pins_allow(e: &Entity, pins: &[Pin]) -> bool {
    pins.iter().all(|pin| {
        let mut linked = e.parents.iter().filter(|p| p.kind == pin.kind).peekable();
        linked.peek().is_none() || linked.any(|p| p.id == pin.id)
    })
}

/// A character that ends a line somewhere a question is shown: a control
/// character (`\n`, `\r`, NEL, …) or Unicode's line and paragraph
/// separators, which are not control characters.
fn breaks_a_line(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// The resolver (see [`resolver_input`]): any tenant, name or id,
/// narrowing, pins and question over a fixed snapshot resolve or ask
/// without a panic. A resolved id is an entity of the caller's tenant
/// that every pin allows, among the plugin's narrowing if it gave one; a
/// question is about the argument asked, on one line, and offers at most
/// [`MAX_CANDIDATES`] entities, each the caller's to choose, and no two
/// labelled alike, case aside (a person picks one by its label).
pub fn resolver_query(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (tenant, pins, query) = resolver_input(&text);
    let snapshot = resolver_snapshot();
    let choosable = |id| {
        snapshot
            .iter()
            .any(|e| e.id == id && e.tenant == tenant && pins_allow(e, &pins))
    };
    match resolve(&scope(snapshot, &tenant, &pins), &query) {
        Ok(id) => {
            assert!(choosable(id), "{text:?} resolved to {id}");
            let within = query.within.as_ref();
            assert!(within.is_none_or(|w| w.contains(&id)), "{text:?}: {id}");
        }
        Err(question) => {
            assert!(question.candidates.len() <= MAX_CANDIDATES, "{text:?}");
            for c in &question.candidates {
                assert!(choosable(c.id), "{text:?} offered {}", c.id);
            }
            let mut labels: Vec<String> = question
                .candidates
                .iter()
                .map(|c| c.label.to_lowercase())
                .collect();
            labels.sort();
            labels.dedup();
            assert_eq!(labels.len(), question.candidates.len(), "{text:?}");
            let line = &question.ask_user;
            assert!(!line.chars().any(breaks_a_line), "{line:?}");
            assert_eq!(question.field, query.field);
        }
    }
}
