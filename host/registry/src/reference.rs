//! `oci://HOST[:PORT]/REPO:TAG` and `oci://HOST[:PORT]/REPO@sha256:HEX`,
//! parsed once into a [`Reference`]; nothing downstream reads the text.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

use toolhost_types::Digest;

use crate::RegistryError;

/// The scheme every reference is written with.
pub const SCHEME: &str = "oci://";

/// Longest tag the OCI distribution spec allows.
const MAX_TAG: usize = 128;

/// Where a release lives in a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    registry: String,
    repository: String,
    target: Target,
}

/// What a reference names inside its repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A tag: movable, so a pull resolves it once and goes on by digest.
    Tag(String),
    /// A manifest digest: the only form a pull trusts.
    Digest(Digest),
}

impl Reference {
    /// Parses `oci://HOST[:PORT]/REPO:TAG` or `oci://HOST[:PORT]/REPO@sha256:HEX`.
    /// A reference must name a tag or a digest (no implicit `latest`); the
    /// repository follows the OCI name grammar (lowercase path components).
    pub fn parse(text: &str) -> Result<Reference, RegistryError> {
        let refuse = |why: &str| RegistryError::InvalidReference {
            text: text.to_owned(),
            why: why.to_owned(),
        };
        let rest = text
            .strip_prefix(SCHEME)
            .ok_or_else(|| refuse("it does not start with oci://"))?;
        let (registry, path) = rest
            .split_once('/')
            .ok_or_else(|| refuse("it names no repository"))?;
        if !valid_registry(registry) {
            return Err(refuse("the registry is not HOST or HOST:PORT"));
        }
        let (repository, target) = split_target(path).ok_or_else(|| {
            refuse("it names no tag or digest (write REPO:TAG or REPO@sha256:HEX)")
        })?;
        if !valid_repository(repository) {
            return Err(refuse(
                "the repository is not lowercase OCI path components",
            ));
        }
        let target = match target {
            Split::Tag(tag) if valid_tag(tag) => Target::Tag(tag.to_owned()),
            Split::Tag(_) => return Err(refuse("the tag is not [A-Za-z0-9_][A-Za-z0-9._-]*")),
            Split::Digest(d) => Target::Digest(parse_digest(d).ok_or_else(|| {
                refuse("the digest is not sha256: and 64 lowercase hex characters")
            })?),
        };
        Ok(Reference {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            target,
        })
    }

    /// `HOST:PORT` as written.
    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// The repository path (`authors/hello`).
    pub fn repository(&self) -> &str {
        &self.repository
    }

    /// The tag or digest.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The same repository at manifest `digest`.
    pub fn pinned(&self, digest: Digest) -> Reference {
        Reference {
            target: Target::Digest(digest),
            ..self.clone()
        }
    }

    /// The same repository at `tag`.
    pub(crate) fn tagged(&self, tag: String) -> Reference {
        Reference {
            target: Target::Tag(tag),
            ..self.clone()
        }
    }

    /// Whether the registry is on this machine (`localhost`, 127.0.0.0/8,
    /// `[::1]`): the only registries spoken to over plain HTTP.
    pub fn is_loopback(&self) -> bool {
        let Some((host, _)) = split_host_port(&self.registry) else {
            return false;
        };
        host.eq_ignore_ascii_case("localhost")
            || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }

    /// The reference in oci-client's terms.
    pub(crate) fn to_oci(&self) -> oci_client::Reference {
        let (registry, repository) = (self.registry.clone(), self.repository.clone());
        match &self.target {
            Target::Tag(tag) => oci_client::Reference::with_tag(registry, repository, tag.clone()),
            Target::Digest(d) => {
                oci_client::Reference::with_digest(registry, repository, format!("sha256:{d}"))
            }
        }
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        match &self.target {
            Target::Tag(tag) => write!(f, ":{tag}"),
            Target::Digest(d) => write!(f, "@sha256:{d}"),
        }
    }
}

enum Split<'a> {
    Tag(&'a str),
    Digest(&'a str),
}

/// `REPO@DIGEST` or `REPO:TAG` (a tag never contains `/`, so the last `:`
/// after the last `/` starts it).
fn split_target(path: &str) -> Option<(&str, Split<'_>)> {
    if let Some((repo, digest)) = path.split_once('@') {
        return Some((repo, Split::Digest(digest)));
    }
    let last = path.rfind('/').map_or(0, |i| i + 1);
    let colon = last + path[last..].find(':')?;
    Some((&path[..colon], Split::Tag(&path[colon + 1..])))
}

/// `sha256:` and 64 lowercase hex characters.
pub(crate) fn parse_digest(text: &str) -> Option<Digest> {
    let hex = text.strip_prefix("sha256:")?;
    let lower = hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    lower.then(|| hex.parse().ok()).flatten()
}

/// `HOST` (an IPv6 address without its brackets) and the port, if any.
fn split_host_port(registry: &str) -> Option<(&str, Option<&str>)> {
    if let Some(v6) = registry.strip_prefix('[') {
        let (ip, rest) = v6.split_once(']')?;
        ip.parse::<Ipv6Addr>().ok()?;
        let port = match rest {
            "" => None,
            r => Some(r.strip_prefix(':')?),
        };
        return Some((ip, port));
    }
    Some(match registry.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (registry, None),
    })
}

/// A DNS name or an IP address, and an optional non-zero port.
fn valid_registry(registry: &str) -> bool {
    let Some((host, port)) = split_host_port(registry) else {
        return false;
    };
    let label =
        |l: &str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let host_ok = host.parse::<Ipv6Addr>().is_ok() || host.split('.').all(label);
    let port_ok = port.is_none_or(|p| p.parse::<u16>().is_ok_and(|p| p > 0));
    host_ok && port_ok
}

/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*` components joined by `/`.
fn valid_repository(repo: &str) -> bool {
    let component = |c: &str| {
        let b = c.as_bytes();
        let alnum = |x: &u8| x.is_ascii_lowercase() || x.is_ascii_digit();
        !b.is_empty()
            && b.first().is_some_and(alnum)
            && b.last().is_some_and(alnum)
            && b.iter()
                .all(|x| alnum(x) || matches!(x, b'.' | b'_' | b'-'))
            && !c.contains("..")
            && !c.contains("___")
            && !c.contains(".-")
            && !c.contains("-.")
    };
    repo.split('/').all(component)
}

/// `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`
fn valid_tag(tag: &str) -> bool {
    let b = tag.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_TAG
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter()
            .all(|x| x.is_ascii_alphanumeric() || matches!(x, b'.' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

    #[test]
    fn a_tag_reference_parses_into_registry_repository_and_tag() {
        let r = Reference::parse("oci://127.0.0.1:5000/authors/hello:0.2.0").expect("valid");
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "authors/hello");
        assert_eq!(r.target(), &Target::Tag("0.2.0".into()));
        assert_eq!(r.to_string(), "oci://127.0.0.1:5000/authors/hello:0.2.0");
    }

    #[test]
    fn a_digest_reference_round_trips_and_pinning_replaces_a_tag() {
        let text = format!("oci://ghcr.io/acme/tools/hello@sha256:{HEX}");
        let r = Reference::parse(&text).expect("valid");
        assert_eq!(r.to_string(), text);
        let tagged = Reference::parse("oci://ghcr.io/acme/tools/hello:v1").expect("valid");
        assert_eq!(tagged.pinned(Digest::of(b"hello")), r);
    }

    #[test]
    fn references_that_are_not_oci_or_name_nothing_are_refused_naming_the_text() {
        for (text, why) in [
            ("https://ghcr.io/acme/hello:1", "oci://"),
            ("oci://ghcr.io", "no repository"),
            ("oci://ghcr.io/acme/hello", "no tag or digest"),
            ("oci://ghcr.io/Acme/hello:1", "lowercase"),
            ("oci://ghcr.io/acme//hello:1", "lowercase"),
            ("oci://ghcr.io/acme/hello:-x", "tag"),
            ("oci://ghcr.io/acme/hello@sha256:abc", "digest"),
            (
                &format!("oci://ghcr.io/acme/hello@sha256:{}", HEX.to_uppercase()),
                "digest",
            ),
            (&format!("oci://ghcr.io/acme/hello@sha512:{HEX}"), "digest"),
            ("oci://ghcr.io:0/acme/hello:1", "HOST:PORT"),
            ("oci://gh cr.io/acme/hello:1", "HOST:PORT"),
            ("oci://[::1/acme/hello:1", "HOST:PORT"),
        ] {
            let err = Reference::parse(text).expect_err(text);
            assert_eq!(err.code(), "INVALID_REFERENCE", "{text}");
            let shown = err.to_string();
            assert!(
                shown.contains(text) && shown.contains(why),
                "{text}: {shown}"
            );
        }
    }

    #[test]
    fn only_loopback_registries_are_loopback() {
        for (text, loopback) in [
            ("oci://127.0.0.1:5000/a:1", true),
            ("oci://127.8.9.10/a:1", true),
            ("oci://localhost:5000/a:1", true),
            ("oci://[::1]:5000/a:1", true),
            ("oci://128.0.0.1:5000/a:1", false),
            ("oci://10.0.0.1:5000/a:1", false),
            ("oci://localhost.example.com/a:1", false),
            ("oci://ghcr.io/a:1", false),
        ] {
            let r = Reference::parse(text).expect(text);
            assert_eq!(r.is_loopback(), loopback, "{text}");
        }
    }
}
