//! The client's address behind a load balancer. A request whose peer is a
//! configured trusted proxy (`trusted_proxies`, addresses or CIDR ranges)
//! is from the address its `X-Forwarded-For` names: the rightmost hop that
//! is not itself a trusted proxy (anything left of it could be forged by
//! the client). From any other peer the header is ignored. What the
//! authorization server limits per source address (sign-ins,
//! registrations) and records in its events is this address.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use ipnet::IpNet;
use toolhost_auth::ClientAddr;

/// The proxies whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Parses `10.0.0.5`, `10.0.0.0/8`, `::1`…
    pub fn parse(items: &[String]) -> anyhow::Result<TrustedProxies> {
        let nets = items
            .iter()
            .map(|s| {
                let s = s.trim();
                s.parse::<IpNet>()
                    .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        anyhow::anyhow!(
                            "trusted proxy {s:?} is neither an address nor a CIDR range"
                        )
                    })
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(TrustedProxies(nets))
    }

    /// No proxy is trusted: the peer is the client (`serve` then adds no
    /// layer).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True if `ip` is one of the trusted proxies.
    pub(crate) fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client behind `peer`, given the `X-Forwarded-For` values.
    fn client(&self, peer: IpAddr, forwarded: &[&str]) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        let hops = forwarded.iter().flat_map(|v| v.split(',')).rev();
        for hop in hops {
            match hop.trim().parse::<IpAddr>() {
                Ok(ip) => {
                    client = ip;
                    if !self.trusts(ip) {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
        client
    }
}

/// Puts the request's [`ClientAddr`] into its extensions (only layered
/// when some proxy is trusted).
pub async fn client_addr(
    State(trusted): State<Arc<TrustedProxies>>,
    mut req: Request,
    next: Next,
) -> Response {
    if let Some(peer) = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
    {
        let forwarded: Vec<&str> = req
            .headers()
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        let client = trusted.client(peer, &forwarded);
        req.extensions_mut().insert(ClientAddr(client));
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    #[test]
    fn only_a_trusted_proxy_is_believed_and_only_up_to_the_first_untrusted_hop() {
        let trusted =
            TrustedProxies::parse(&["127.0.0.1".into(), "10.0.0.0/8".into()]).expect("parses");
        let peer = ip("127.0.0.1");
        assert_eq!(trusted.client(peer, &["203.0.113.7"]), ip("203.0.113.7"));
        // A client's own forged entry stays left of the real one.
        assert_eq!(
            trusted.client(peer, &["1.2.3.4, 203.0.113.7, 10.1.2.3"]),
            ip("203.0.113.7")
        );
        assert_eq!(
            trusted.client(peer, &["1.2.3.4", "203.0.113.7"]),
            ip("203.0.113.7")
        );
        // Not from a trusted proxy: the header is the client's own words.
        assert_eq!(
            trusted.client(ip("198.51.100.9"), &["203.0.113.7"]),
            ip("198.51.100.9")
        );
        // No header, or garbage in it: the nearest address known.
        assert_eq!(trusted.client(peer, &[]), peer);
        assert_eq!(trusted.client(peer, &["not-an-ip"]), peer);
        assert!(TrustedProxies::parse(&["10.0.0.0/33".into()]).is_err());
    }
}
