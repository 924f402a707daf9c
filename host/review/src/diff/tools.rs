//! The tools part of the diff: declared renames, then each tool's own
//! changes in [`What`]'s order.

use std::collections::{BTreeMap, BTreeSet};

use crate::capabilities::ToolCapabilities;
use crate::change::What;
use crate::schema;
use crate::texts::changed_texts;

type Tools = BTreeMap<String, ToolCapabilities>;

/// Every tool's changes, by name; a renamed tool sits at its new name.
pub(super) fn tools(old: &Tools, new: &Tools, out: &mut Vec<What>) {
    let renames = renames(old, new);
    let retired: BTreeSet<&str> = renames.values().map(|(from, _)| *from).collect();
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let others: BTreeSet<&str> = new.keys().map(String::as_str).collect();
    for name in names {
        match (old.get(name), new.get(name), renames.get(name.as_str())) {
            (Some(a), Some(b), _) => tool(name, a, b, &others, out),
            (None, Some(b), Some((from, a))) => {
                out.push(What::ToolRenamed {
                    from: (*from).to_owned(),
                    to: name.clone(),
                });
                tool(name, a, b, &others, out);
            }
            (None, Some(b), None) => {
                out.push(What::ToolAdded { tool: name.clone() });
                texts(name, None, b, &others, out);
            }
            (Some(_), None, _) if retired.contains(name.as_str()) => {}
            (Some(_), None, _) => out.push(What::ToolRemoved { tool: name.clone() }),
            (None, None, _) => {} // every name comes from one of the two maps
        }
    }
}

/// The declared renames: new name → (old name, the old tool).
fn renames<'a>(
    old: &'a Tools,
    new: &'a Tools,
) -> BTreeMap<&'a str, (&'a str, &'a ToolCapabilities)> {
    let mut found = BTreeMap::new();
    let mut claimed = BTreeSet::new();
    for (name, tool) in new.iter().filter(|(name, _)| !old.contains_key(*name)) {
        let Some((from, was)) = tool.replaces.as_ref().and_then(|r| old.get_key_value(r)) else {
            continue;
        };
        if !new.contains_key(from) && claimed.insert(from) {
            found.insert(name.as_str(), (from.as_str(), was));
        }
    }
    found
}

/// One tool's changes, in [`What`]'s order.
fn tool(
    name: &str,
    a: &ToolCapabilities,
    b: &ToolCapabilities,
    others: &BTreeSet<&str>,
    out: &mut Vec<What>,
) {
    let tool = || name.to_owned();
    if let Some((class, details)) = schema::input(&a.input_schema, &b.input_schema) {
        out.push(What::InputSchema {
            tool: tool(),
            class,
            details,
        });
    }
    if let Some((class, details)) =
        schema::output(a.output_schema.as_ref(), b.output_schema.as_ref())
    {
        out.push(What::OutputSchema {
            tool: tool(),
            class,
            details,
        });
    }
    if a.permission != b.permission {
        out.push(What::Permission {
            tool: tool(),
            from: a.permission.clone(),
            to: b.permission.clone(),
        });
    }
    if a.mutating != b.mutating {
        out.push(What::Mutating {
            tool: tool(),
            from: a.mutating,
            to: b.mutating,
        });
    }
    if a.risk != b.risk {
        out.push(What::ToolRisk {
            tool: tool(),
            from: a.risk.clone(),
            to: b.risk.clone(),
        });
    }
    if a.risk_floor != b.risk_floor {
        out.push(What::RiskFloor {
            tool: tool(),
            from: a.risk_floor.clone(),
            to: b.risk_floor.clone(),
        });
    }
    for kind in b.resolves.difference(&a.resolves) {
        out.push(What::ResolvesAdded {
            tool: tool(),
            kind: kind.clone(),
        });
    }
    for kind in a.resolves.difference(&b.resolves) {
        out.push(What::ResolvesRemoved {
            tool: tool(),
            kind: kind.clone(),
        });
    }
    texts(name, Some(a), b, others, out);
}

/// The tool's model-facing strings, with its description, that differ
/// from `a`'s (`None`: a new tool, every string is new).
fn texts(
    name: &str,
    a: Option<&ToolCapabilities>,
    b: &ToolCapabilities,
    others: &BTreeSet<&str>,
    out: &mut Vec<What>,
) {
    let with_description = |t: &ToolCapabilities| {
        let mut texts = t.texts.clone();
        texts.insert("description".into(), t.description.clone());
        texts
    };
    let others: BTreeSet<&str> = others.iter().copied().filter(|t| *t != name).collect();
    let (a, b) = (
        a.map(with_description).unwrap_or_default(),
        with_description(b),
    );
    changed_texts(&format!("tool {name}"), &a, &b, &others, out);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::fixtures::*;
    use crate::{Bump, Effect, Retired, SchemaClass, What, diff};
    use Effect::{Narrows, Neutral, Widens};

    #[test]
    fn tool_changes_are_judged_by_the_rules() {
        let greet = || s("greet");
        let schema = |class, detail: &str| (class, vec![s(detail)]);
        check(vec![
            (
                "identical revisions have no changes",
                keep,
                keep,
                vec![],
                Bump::None,
            ),
            (
                "one tool added shows exactly the added tool and what the model reads of it",
                keep,
                |c| drop(c.tools.insert(s("wave"), a_tool())),
                wave_added(),
                Bump::Minor,
            ),
            (
                "a tool removed narrows and bumps major",
                keep,
                |c| drop(c.tools.remove("greet")),
                vec![change(
                    What::ToolRemoved { tool: greet() },
                    Narrows,
                    Bump::Major,
                )],
                Bump::Major,
            ),
            (
                "a declared rename is one neutral major change",
                keep,
                |c| {
                    let mut t = c.tools.remove("greet").expect("greet");
                    t.replaces = Some(s("greet"));
                    c.tools.insert(s("salute"), t);
                },
                vec![change(
                    What::ToolRenamed {
                        from: greet(),
                        to: s("salute"),
                    },
                    Neutral,
                    Bump::Major,
                )],
                Bump::Major,
            ),
            (
                "a renamed tool is compared with the old one under its new name",
                keep,
                |c| {
                    let mut t = c.tools.remove("greet").expect("greet");
                    t.replaces = Some(s("greet"));
                    t.description = s("Salutes someone.");
                    c.tools.insert(s("salute"), t);
                },
                vec![
                    change(
                        What::ToolRenamed {
                            from: greet(),
                            to: s("salute"),
                        },
                        Neutral,
                        Bump::Major,
                    ),
                    text(
                        "tool salute",
                        "description",
                        Some("Greets someone."),
                        Some("Salutes someone."),
                    ),
                ],
                Bump::Major,
            ),
            (
                "when two tools replace the same one, the first by name renames it",
                keep,
                |c| {
                    let mut t = c.tools.remove("greet").expect("greet");
                    t.replaces = Some(s("greet"));
                    c.tools.insert(s("hi"), t.clone());
                    c.tools.insert(s("salute"), t);
                },
                vec![
                    change(
                        What::ToolRenamed {
                            from: s("greet"),
                            to: s("hi"),
                        },
                        Neutral,
                        Bump::Major,
                    ),
                    change(What::ToolAdded { tool: s("salute") }, Widens, Bump::Minor),
                    text("tool salute", "description", None, Some("Greets someone.")),
                ],
                Bump::Major,
            ),
            (
                "a replaces naming a tool the active revision lacks is just an added tool",
                keep,
                |c| add_wave_replacing(c, "nope"),
                wave_added(),
                Bump::Minor,
            ),
            (
                "a replaces naming a tool that stays is just an added tool",
                keep,
                |c| add_wave_replacing(c, "greet"),
                wave_added(),
                Bump::Minor,
            ),
            (
                "an optional input field added bumps minor",
                keep,
                |c| greet_mut(c).input_schema["properties"]["greeting"] = json!({"type": "string"}),
                vec![{
                    let (class, details) = schema(
                        SchemaClass::Additive,
                        "property `greeting`: added (optional)",
                    );
                    change(
                        What::InputSchema {
                            tool: greet(),
                            class,
                            details,
                        },
                        Neutral,
                        Bump::Minor,
                    )
                }],
                Bump::Minor,
            ),
            (
                "a required input field added bumps major",
                keep,
                |c| {
                    let t = greet_mut(c);
                    t.input_schema["properties"]["greeting"] = json!({"type": "string"});
                    t.input_schema["required"] = json!(["name", "greeting"]);
                },
                vec![{
                    let (class, details) = schema(
                        SchemaClass::Breaking,
                        "property `greeting`: added (required)",
                    );
                    change(
                        What::InputSchema {
                            tool: greet(),
                            class,
                            details,
                        },
                        Neutral,
                        Bump::Major,
                    )
                }],
                Bump::Major,
            ),
            (
                "an output property removed is breaking",
                keep,
                |c| greet_mut(c).output_schema = Some(json!({"type": "object"})),
                vec![{
                    let (class, details) =
                        (SchemaClass::Breaking, vec![s("property `text`: removed")]);
                    change(
                        What::OutputSchema {
                            tool: greet(),
                            class,
                            details,
                        },
                        Neutral,
                        Bump::Major,
                    )
                }],
                Bump::Major,
            ),
            (
                "a description change is neutral, shown old to new, and needs review",
                keep,
                |c| greet_mut(c).description = s("Says hello."),
                vec![text(
                    "tool greet",
                    "description",
                    Some("Greets someone."),
                    Some("Says hello."),
                )],
                Bump::Patch,
            ),
            (
                "a permission change widens: who can see the tool changes",
                keep,
                |c| greet_mut(c).permission = s("hello:write"),
                vec![change(
                    What::Permission {
                        tool: greet(),
                        from: s("hello:read"),
                        to: s("hello:write"),
                    },
                    Widens,
                    Bump::Patch,
                )],
                Bump::Patch,
            ),
            (
                "a tool that starts mutating widens",
                keep,
                |c| greet_mut(c).mutating = true,
                vec![change(
                    What::Mutating {
                        tool: greet(),
                        from: false,
                        to: true,
                    },
                    Widens,
                    Bump::Patch,
                )],
                Bump::Patch,
            ),
            (
                "a tool that stops mutating narrows",
                |c| greet_mut(c).mutating = true,
                |c| greet_mut(c).mutating = false,
                vec![change(
                    What::Mutating {
                        tool: greet(),
                        from: true,
                        to: false,
                    },
                    Narrows,
                    Bump::Patch,
                )],
                Bump::Patch,
            ),
            (
                "a lowered tool risk widens",
                |c| greet_mut(c).risk = s("high"),
                |c| greet_mut(c).risk = s("low"),
                vec![change(
                    What::ToolRisk {
                        tool: greet(),
                        from: s("high"),
                        to: s("low"),
                    },
                    Widens,
                    Bump::Patch,
                )],
                Bump::Patch,
            ),
            (
                "a raised tool risk narrows",
                keep,
                |c| greet_mut(c).risk = s("medium"),
                vec![change(
                    What::ToolRisk {
                        tool: greet(),
                        from: s("low"),
                        to: s("medium"),
                    },
                    Narrows,
                    Bump::Patch,
                )],
                Bump::Patch,
            ),
            (
                "a risk floor removed widens",
                |c| greet_mut(c).risk_floor = Some(s("high")),
                |c| greet_mut(c).risk_floor = None,
                risk_floor(Some(s("high")), None, Widens),
                Bump::Patch,
            ),
            (
                "a risk floor lowered widens",
                |c| greet_mut(c).risk_floor = Some(s("high")),
                |c| greet_mut(c).risk_floor = Some(s("medium")),
                risk_floor(Some(s("high")), Some(s("medium")), Widens),
                Bump::Patch,
            ),
            (
                "a risk floor added narrows",
                keep,
                |c| greet_mut(c).risk_floor = Some(s("low")),
                risk_floor(None, Some(s("low")), Narrows),
                Bump::Patch,
            ),
            (
                "a risk floor raised narrows",
                |c| greet_mut(c).risk_floor = Some(s("low")),
                |c| greet_mut(c).risk_floor = Some(s("high")),
                risk_floor(Some(s("low")), Some(s("high")), Narrows),
                Bump::Patch,
            ),
            (
                "a resolved kind added widens and one removed narrows",
                keep,
                |c| greet_mut(c).resolves = set(["scenario"]),
                vec![
                    change(
                        What::ResolvesAdded {
                            tool: greet(),
                            kind: s("scenario"),
                        },
                        Widens,
                        Bump::Patch,
                    ),
                    change(
                        What::ResolvesRemoved {
                            tool: greet(),
                            kind: s("project"),
                        },
                        Narrows,
                        Bump::Patch,
                    ),
                ],
                Bump::Patch,
            ),
        ]);
    }

    #[test]
    fn dropped_tools_are_retired_with_their_replacement_if_renamed() {
        let mut proposed = hello();
        let mut salute = proposed.tools.remove("greet").expect("greet");
        salute.replaces = Some(s("greet"));
        proposed.tools.insert(s("salute"), salute);
        let renamed = diff(Some(&hello()), &proposed);
        assert_eq!(
            renamed.retired(),
            [Retired {
                tool: s("greet"),
                replacement: Some(s("salute"))
            }]
        );

        proposed.tools.remove("salute");
        proposed.tools.insert(s("wave"), a_tool());
        let removed = diff(Some(&hello()), &proposed);
        assert_eq!(removed.bump, Bump::Major);
        assert_eq!(
            removed.retired(),
            [Retired {
                tool: s("greet"),
                replacement: None
            }]
        );
    }
}
