//! Who holds how many of the host's connections: a cap on open connections
//! in all and a share per source, checked as each connection is accepted.
//!
//! Without a cap, a peer with no credentials could open connections until
//! the process runs out of file descriptors: `accept` then fails for
//! everyone (EMFILE) and `/healthz` stops answering. Here a connection over
//! the cap is answered `503` with `Retry-After` at once and closed, before
//! anything of it is read; one source (an IPv4 address, or an IPv6 /64,
//! which one subscriber usually holds whole) may hold a share of the cap
//! and no more, so others are served while it holds its share. A trusted
//! proxy (`--trusted-proxy`) carries many clients on its connections and
//! has no share of its own: the total still bounds it.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex};

use crate::forwarded::TrustedProxies;

/// The most open connections by default: a large share of the process's
/// file-descriptor limit (the rest is for the store, the plugin cache and
/// the log), and no more than a host serves well.
pub const MAX_CONNECTIONS_CEILING: usize = 16_384;
/// Connections kept back from the descriptor limit for everything else.
const RESERVED_DESCRIPTORS: usize = 64;
/// The smallest cap the defaults choose, however low the descriptor limit.
const MIN_CONNECTIONS: usize = 16;
/// A source's default share of the cap: a quarter, so four sources each at
/// their share still leave room for nobody else only when the host is
/// already full.
const SOURCE_SHARE_DIVISOR: usize = 4;

/// How many connections the host keeps open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionCaps {
    /// Open connections in all.
    pub total: usize,
    /// Open connections from one source.
    pub per_source: usize,
}

impl ConnectionCaps {
    /// The defaults for a process allowed `descriptors` open files: three
    /// quarters of them less a reserve, at most [`MAX_CONNECTIONS_CEILING`];
    /// a quarter of that per source.
    pub fn for_descriptors(descriptors: usize) -> ConnectionCaps {
        let total = (descriptors.saturating_sub(RESERVED_DESCRIPTORS) / 4 * 3)
            .clamp(MIN_CONNECTIONS, MAX_CONNECTIONS_CEILING);
        ConnectionCaps {
            total,
            per_source: (total / SOURCE_SHARE_DIVISOR).max(1),
        }
    }

    /// The defaults for this process (its soft `RLIMIT_NOFILE`, read from
    /// `/proc/self/limits`; 1024 where that cannot be read).
    pub fn for_this_process() -> ConnectionCaps {
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
        ConnectionCaps::for_descriptors(soft_open_files(&limits).unwrap_or(1024))
    }
}

/// The soft "Max open files" of a `/proc/<pid>/limits` text.
fn soft_open_files(limits: &str) -> Option<usize> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let soft = line
        .trim_start_matches("Max open files")
        .split_whitespace()
        .next()?;
    match soft {
        "unlimited" => Some(usize::MAX),
        n => n.parse().ok(),
    }
}

/// The source a connection is counted against: an IPv4 address, or the /64
/// of an IPv6 one (an IPv4-mapped IPv6 address counts as its IPv4 address).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Source(IpAddr);

impl Source {
    /// The source `ip` belongs to.
    pub fn of(ip: IpAddr) -> Source {
        match ip {
            IpAddr::V4(v4) => Source(IpAddr::V4(v4)),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Source(IpAddr::V4(v4)),
                None => {
                    let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                    Source(IpAddr::V6(Ipv6Addr::from(prefix)))
                }
            },
        }
    }
}

#[derive(Default)]
struct Open {
    total: usize,
    by_source: HashMap<Source, usize>,
}

/// The open connections, counted. Cheap to clone (clones share the count).
#[derive(Clone)]
pub struct Connections {
    caps: ConnectionCaps,
    unshared: Arc<TrustedProxies>,
    open: Arc<Mutex<Open>>,
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The host holds [`ConnectionCaps::total`] connections.
    Full,
    /// The source holds its [`ConnectionCaps::per_source`].
    SourceShare,
}

/// One admitted connection; dropping it (when the connection closes)
/// gives its place back.
pub struct Admitted {
    open: Arc<Mutex<Open>>,
    source: Option<Source>,
}

impl Connections {
    /// Counts against `caps`; peers in `unshared` (trusted proxies) count
    /// only against the total.
    pub fn new(caps: ConnectionCaps, unshared: TrustedProxies) -> Connections {
        Connections {
            caps,
            unshared: Arc::new(unshared),
            open: Arc::default(),
        }
    }

    /// Admits a connection from `peer`, or says which cap it would break.
    pub fn admit(&self, peer: IpAddr) -> Result<Admitted, Refused> {
        let source = (!self.unshared.trusts(peer)).then(|| Source::of(peer));
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.total >= self.caps.total {
            return Err(Refused::Full);
        }
        if let Some(source) = source {
            let held = open.by_source.entry(source).or_default();
            if *held >= self.caps.per_source {
                return Err(Refused::SourceShare);
            }
            *held += 1;
        }
        open.total += 1;
        Ok(Admitted {
            open: self.open.clone(),
            source,
        })
    }

    /// Connections open now.
    #[cfg(test)]
    fn open(&self) -> usize {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).total
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.total -= 1;
        if let Some(source) = self.source
            && let Some(held) = open.by_source.get_mut(&source)
        {
            *held -= 1;
            if *held == 0 {
                open.by_source.remove(&source);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    #[test]
    fn a_source_is_an_ipv4_address_or_an_ipv6_slash_64() {
        assert_eq!(
            Source::of(ip("2001:db8:1:2::7")),
            Source::of(ip("2001:db8:1:2:ffff::1"))
        );
        assert_ne!(
            Source::of(ip("2001:db8:1:2::7")),
            Source::of(ip("2001:db8:1:3::7"))
        );
        assert_eq!(
            Source::of(ip("::ffff:10.0.0.1")),
            Source::of(ip("10.0.0.1"))
        );
        assert_ne!(Source::of(ip("10.0.0.1")), Source::of(ip("10.0.0.2")));
    }

    #[test]
    fn a_source_past_its_share_is_refused_while_another_is_admitted_and_closing_gives_back() {
        let caps = ConnectionCaps {
            total: 5,
            per_source: 2,
        };
        let c = Connections::new(caps, TrustedProxies::default());
        let first = c.admit(ip("10.0.0.1")).expect("first");
        let _second = c.admit(ip("10.0.0.1")).expect("second");
        assert_eq!(c.admit(ip("10.0.0.1")).err(), Some(Refused::SourceShare));
        let _other = c.admit(ip("10.0.0.2")).expect("another source");
        drop(first);
        let _again = c.admit(ip("10.0.0.1")).expect("a place given back");
        assert_eq!(c.open(), 3);
    }

    #[test]
    fn the_total_bounds_every_source_and_a_trusted_proxy_has_no_share_of_its_own() {
        let caps = ConnectionCaps {
            total: 3,
            per_source: 1,
        };
        let proxy = TrustedProxies::parse(&["10.9.0.0/16".into()]).expect("a range");
        let c = Connections::new(caps, proxy);
        let held: Vec<_> = (0..3)
            .map(|_| c.admit(ip("10.9.0.5")).expect("the proxy, past a share"))
            .collect();
        assert_eq!(c.admit(ip("10.0.0.1")).err(), Some(Refused::Full));
        drop(held);
        assert_eq!(c.open(), 0);
    }

    #[test]
    fn the_defaults_follow_the_descriptor_limit() {
        assert_eq!(
            ConnectionCaps::for_descriptors(256),
            ConnectionCaps {
                total: 144,
                per_source: 36
            }
        );
        assert_eq!(ConnectionCaps::for_descriptors(10).total, MIN_CONNECTIONS);
        assert_eq!(
            ConnectionCaps::for_descriptors(usize::MAX).total,
            MAX_CONNECTIONS_CEILING
        );
        let limits = "Limit  Soft Limit  Hard Limit  Units\nMax open files            20000                20000                files\n";
        assert_eq!(soft_open_files(limits), Some(20000));
    }
}
