//! Names are owned: each tool name, prompt name and resource URI space the
//! host serves belongs to one plugin. A revision claiming what another
//! active plugin serves is refused (at intake, and again when it is
//! approved or rolled back to), unless its manifest declares it takes that
//! name from that plugin (`takes_from`), a breaking transfer the reviewer
//! approves explicitly. The `toolhost` URI scheme is the host's own.
//!
//! A resource claims its URI's origin (`hello://py` for
//! `hello://py/greetings`): a plugin answers for every URI under the
//! origins it serves, so another's resource or template there could not
//! answer first. A URI without an authority, or a template whose authority
//! is a variable, claims its whole scheme.

use std::collections::BTreeSet;
use std::fmt;

use toolhost_review::Capabilities;

use crate::{CatalogStore, CatalogStoreError, LoadedPlugin, RevisionState};

/// URI schemes the host answers itself: no plugin resource may use them.
pub const RESERVED_SCHEMES: [&str; 1] = ["toolhost"];

/// One thing a plugin answers for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Claim {
    /// A tool name.
    Tool(String),
    /// A prompt name.
    Prompt(String),
    /// Every URI under `scheme://authority`.
    Origin {
        /// The scheme, in lower case.
        scheme: String,
        /// The authority, as written.
        authority: String,
    },
    /// Every URI of a scheme.
    Scheme(String),
}

impl Claim {
    /// What a resource at `uri` (or a template) claims.
    pub fn of_uri(uri: &str) -> Claim {
        let (scheme, rest) = uri.split_once(':').unwrap_or((uri, ""));
        let scheme = scheme.to_ascii_lowercase();
        let Some(after) = rest.strip_prefix("//") else {
            return Claim::Scheme(scheme);
        };
        let authority = after.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.is_empty() || authority.contains('{') || scheme.contains('{') {
            return Claim::Scheme(scheme);
        }
        Claim::Origin {
            scheme,
            authority: authority.to_owned(),
        }
    }

    /// Whether two plugins could not both hold these.
    pub fn overlaps(&self, other: &Claim) -> bool {
        use Claim::*;
        match (self, other) {
            (Tool(a), Tool(b)) | (Prompt(a), Prompt(b)) => a == b,
            (Scheme(a), Scheme(b)) => a == b,
            (Scheme(s), Origin { scheme, .. }) | (Origin { scheme, .. }, Scheme(s)) => s == scheme,
            (Origin { .. }, Origin { .. }) => self == other,
            _ => false,
        }
    }

    /// The URI scheme it is in, for a resource's claim.
    pub fn scheme(&self) -> Option<&str> {
        match self {
            Claim::Origin { scheme, .. } | Claim::Scheme(scheme) => Some(scheme),
            _ => None,
        }
    }
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Claim::Tool(t) => write!(f, "tool {t:?}"),
            Claim::Prompt(p) => write!(f, "prompt {p:?}"),
            Claim::Origin { scheme, authority } => {
                write!(f, "the URIs under {scheme}://{authority}")
            }
            Claim::Scheme(s) => write!(f, "every {s}: URI"),
        }
    }
}

/// What one plugin claims, each with the subject of its revision that
/// claims it (`"tool greet"`, `"prompt NAME"`, `"resource NAME"`).
#[derive(Debug, Clone, Default)]
pub struct Claims(Vec<(String, Claim)>);

impl Claims {
    /// What a revision's capabilities claim.
    pub fn of(caps: &Capabilities) -> Claims {
        let tools = caps
            .tools
            .keys()
            .map(|t| (format!("tool {t}"), Claim::Tool(t.clone())));
        let prompts =
            (caps.prompts.keys()).map(|p| (format!("prompt {p}"), Claim::Prompt(p.clone())));
        let uris = (caps.uris.iter()).map(|(n, uri)| (format!("resource {n}"), Claim::of_uri(uri)));
        Claims(tools.chain(prompts).chain(uris).collect())
    }

    /// What a loaded plugin claims.
    pub fn of_loaded(loaded: &LoadedPlugin) -> Claims {
        let p = &loaded.plugin;
        let tools = (p.tools().iter())
            .map(|t| (format!("tool {}", t.name), Claim::Tool(t.name.to_string())));
        let prompts = (p.prompts().iter())
            .map(|x| (format!("prompt {}", x.name), Claim::Prompt(x.name.clone())));
        let resources =
            (p.resources().iter()).map(|r| (format!("resource {}", r.name), Claim::of_uri(&r.uri)));
        let templates = (p.resource_templates().iter()).map(|t| {
            (
                format!("resource {}", t.name),
                Claim::of_uri(&t.uri_template),
            )
        });
        Claims(
            tools
                .chain(prompts)
                .chain(resources)
                .chain(templates)
                .collect(),
        )
    }

    /// Only the claims of `subject`.
    pub fn only(self, subject: &str) -> Claims {
        Claims(self.0.into_iter().filter(|(s, _)| s == subject).collect())
    }

    /// These but the claims of `subjects`.
    pub fn without(self, subjects: &BTreeSet<String>) -> Claims {
        Claims(
            self.0
                .into_iter()
                .filter(|(s, _)| !subjects.contains(s))
                .collect(),
        )
    }

    /// Each `(subject, claim)`.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Claim)> {
        self.0.iter().map(|(s, c)| (s.as_str(), c))
    }

    /// The first of these that overlaps one of `other`'s:
    /// `(subject here, claim here, subject there)`.
    pub fn overlap<'a>(&'a self, other: &'a Claims) -> Option<(&'a str, &'a Claim, &'a str)> {
        self.iter().find_map(|(subject, claim)| {
            let (there, _) = other.iter().find(|(_, c)| c.overlaps(claim))?;
            Some((subject, claim, there))
        })
    }

    /// Whether `subject`'s claim overlaps any of `other`'s.
    pub fn subject_overlaps(&self, subject: &str, other: &Claims) -> bool {
        self.iter()
            .filter(|(s, _)| *s == subject)
            .any(|(_, c)| other.iter().any(|(_, o)| o.overlaps(c)))
    }

    /// The subjects of `other` whose claims overlap these.
    pub fn overlapped_in<'a>(&self, other: &'a Claims) -> BTreeSet<&'a str> {
        (other.iter())
            .filter(|(_, c)| self.iter().any(|(_, mine)| mine.overlaps(c)))
            .map(|(s, _)| s)
            .collect()
    }
}

/// A revision claims what another plugin serves. Nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "plugin {plugin:?} claims {claim} ({subject}), which plugin {owner:?} serves ({owner_subject}): \
     a name has one owner; to move it, declare `takes_from = {owner:?}` on {subject} and have the transfer approved"
)]
pub struct NameTaken {
    /// The plugin whose revision claims it.
    pub plugin: String,
    /// Its subject that claims it (`"tool greet"`).
    pub subject: String,
    /// What is claimed.
    pub claim: String,
    /// The plugin that serves it.
    pub owner: String,
    /// The owner's subject that serves it.
    pub owner_subject: String,
}

/// A revision declares it takes a name from a plugin that does not serve
/// it. Nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "plugin {plugin:?} declares it takes {subject} from {from:?}, which serves nothing it claims"
)]
pub struct NothingToTake {
    /// The plugin whose revision declares it.
    pub plugin: String,
    /// The subject (`"tool greet"`).
    pub subject: String,
    /// The plugin named.
    pub from: String,
}

/// Why a revision's claims cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    /// Another plugin serves it.
    #[error(transparent)]
    Taken(Box<NameTaken>),
    /// A declared transfer names a plugin that does not serve it.
    #[error(transparent)]
    NothingToTake(Box<NothingToTake>),
}

impl ClaimError {
    /// A stable code for clients.
    pub fn code(&self) -> &'static str {
        match self {
            ClaimError::Taken(_) => "NAME_TAKEN",
            ClaimError::NothingToTake(_) => "INVALID_PLUGIN",
        }
    }
}

/// Checks `caps` (a revision of `caps.plugin`) against what every other
/// active plugin serves: each overlap must be a declared transfer from
/// that plugin, and each transfer it declares anew must take something.
/// `Ok` changes nothing; the store is only read.
pub async fn check_against_active(
    store: &dyn CatalogStore,
    caps: &Capabilities,
) -> Result<Result<(), ClaimError>, CatalogStoreError> {
    let active = store.revisions(None, Some(RevisionState::Active)).await?;
    let mine = Claims::of(caps);
    let mut own_active_takes = None;
    let mut others = Vec::new();
    for rev in active {
        let Ok(theirs) = serde_json::from_str::<Capabilities>(&rev.capabilities) else {
            tracing::error!(revision = %rev.id, "an active revision's capabilities do not read back; its names are not checked");
            continue;
        };
        if rev.plugin == caps.plugin {
            own_active_takes = Some(theirs.takes);
        } else {
            others.push((rev.plugin, Claims::of(&theirs), theirs.takes));
        }
    }
    Ok(judge(caps, &mine, &others, own_active_takes.as_ref()))
}

/// The claims of `caps` against `others` (plugin, its claims, its takes).
fn judge(
    caps: &Capabilities,
    mine: &Claims,
    others: &[(String, Claims, std::collections::BTreeMap<String, String>)],
    own_active_takes: Option<&std::collections::BTreeMap<String, String>>,
) -> Result<(), ClaimError> {
    for (owner, theirs, their_takes) in others {
        for (subject, claim) in mine.iter() {
            let Some((owner_subject, _)) = theirs.iter().find(|(_, c)| c.overlaps(claim)) else {
                continue;
            };
            let taken_from_me = their_takes.get(owner_subject) == Some(&caps.plugin);
            let i_take = caps.takes.get(subject) == Some(owner);
            if i_take && !taken_from_me {
                continue;
            }
            return Err(ClaimError::Taken(Box::new(NameTaken {
                plugin: caps.plugin.clone(),
                subject: subject.to_owned(),
                claim: claim.to_string(),
                owner: owner.clone(),
                owner_subject: owner_subject.to_owned(),
            })));
        }
    }
    for (subject, from) in &caps.takes {
        let already = own_active_takes.is_some_and(|t| t.get(subject) == Some(from));
        let serves = (others.iter())
            .any(|(owner, theirs, _)| owner == from && mine.subject_overlaps(subject, theirs));
        if !already && !serves {
            return Err(ClaimError::NothingToTake(Box::new(NothingToTake {
                plugin: caps.plugin.clone(),
                subject: subject.clone(),
                from: from.clone(),
            })));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn a_uri_claims_its_origin_and_a_variable_authority_its_scheme() {
        let rows = [
            (
                "hello://py/greetings",
                Claim::Origin {
                    scheme: "hello".into(),
                    authority: "py".into(),
                },
            ),
            (
                "HELLO://py",
                Claim::Origin {
                    scheme: "hello".into(),
                    authority: "py".into(),
                },
            ),
            (
                "test://template/{id}/data",
                Claim::Origin {
                    scheme: "test".into(),
                    authority: "template".into(),
                },
            ),
            ("db://{table}/schema", Claim::Scheme("db".into())),
            ("urn:isbn:1", Claim::Scheme("urn".into())),
            (
                "toolhost://artifacts/{artifact}",
                Claim::Origin {
                    scheme: "toolhost".into(),
                    authority: "artifacts".into(),
                },
            ),
        ];
        for (uri, want) in rows {
            assert_eq!(Claim::of_uri(uri), want, "{uri}");
        }
        let scheme = Claim::Scheme("hello".into());
        assert!(scheme.overlaps(&Claim::of_uri("hello://py/x")));
        assert!(!Claim::of_uri("hello://js/x").overlaps(&Claim::of_uri("hello://py/x")));
        assert!(!Claim::Tool("greet".into()).overlaps(&Claim::Prompt("greet".into())));
    }

    fn caps(plugin: &str, tools: &[&str], uris: &[(&str, &str)]) -> Capabilities {
        let mut c: Capabilities = serde_json::from_value(serde_json::json!({
            "plugin": plugin, "version": "1", "signer": null, "tools": {}, "backends": {},
            "limits": {}, "high_risk_tags": [], "imports": [], "entity_kinds": [],
        }))
        .expect("capabilities");
        let tool: toolhost_review::ToolCapabilities = serde_json::from_value(serde_json::json!({
            "permission": "p:read", "description": "d", "input_schema": {}, "output_schema": null,
            "risk": "low", "risk_floor": null, "mutating": false, "resolves": [], "replaces": null,
        }))
        .expect("a tool");
        for t in tools {
            c.tools.insert((*t).into(), tool.clone());
        }
        for (n, u) in uris {
            c.uris.insert((*n).into(), (*u).into());
        }
        c
    }

    fn others(list: &[&Capabilities]) -> Vec<(String, Claims, BTreeMap<String, String>)> {
        (list.iter())
            .map(|c| (c.plugin.clone(), Claims::of(c), c.takes.clone()))
            .collect()
    }

    #[test]
    fn a_claim_on_another_plugins_name_is_refused_naming_both_unless_declared_taken() {
        let hello = caps("hello", &["greet", "add"], &[]);
        let hello_py = caps(
            "hello-py",
            &["py_greet"],
            &[("greetings", "hello://py/greetings")],
        );
        let all = others(&[&hello, &hello_py]);
        let mut newcomer = caps("acme-greeter", &["greet"], &[]);
        let got = judge(&newcomer, &Claims::of(&newcomer), &all, None).expect_err("taken");
        let ClaimError::Taken(t) = &got else {
            panic!("{got:?}")
        };
        assert_eq!(
            (t.owner.as_str(), t.subject.as_str()),
            ("hello", "tool greet")
        );
        assert!(got.to_string().contains("acme-greeter") && got.to_string().contains("hello"));

        let uri = caps("acme-greeter", &["wave"], &[("mine", "hello://py/other")]);
        let got = judge(&uri, &Claims::of(&uri), &all, None).expect_err("origin taken");
        assert!(
            matches!(&got, ClaimError::Taken(t) if t.owner == "hello-py"),
            "{got:?}"
        );

        newcomer.takes.insert("tool greet".into(), "hello".into());
        judge(&newcomer, &Claims::of(&newcomer), &all, None).expect("a declared transfer");

        newcomer
            .takes
            .insert("tool greet".into(), "hello-py".into());
        let got = judge(&newcomer, &Claims::of(&newcomer), &all, None).expect_err("wrong owner");
        assert_eq!(got.code(), "NAME_TAKEN");

        let mut idle = caps("acme-greeter", &["wave"], &[]);
        idle.takes.insert("tool wave".into(), "hello".into());
        let got = judge(&idle, &Claims::of(&idle), &all, None).expect_err("nothing to take");
        assert!(matches!(got, ClaimError::NothingToTake(_)), "{got:?}");
    }

    #[test]
    fn a_name_taken_away_is_refused_to_the_plugin_it_was_taken_from() {
        let mut taker = caps("acme-greeter", &["greet"], &[]);
        taker.takes.insert("tool greet".into(), "hello".into());
        let hello_again = caps("hello", &["greet", "add"], &[]);
        let got = judge(
            &hello_again,
            &Claims::of(&hello_again),
            &others(&[&taker]),
            None,
        )
        .expect_err("greet is acme-greeter's now");
        assert!(
            matches!(&got, ClaimError::Taken(t) if t.owner == "acme-greeter"),
            "{got:?}"
        );
    }
}
