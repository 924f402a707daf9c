//! Which request headers a plugin may send; the host sets the rest.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// Most headers a plugin may send. An API call needs a handful
/// (content type, accept, an idempotency key); 32 leaves room.
pub const MAX_HEADERS: usize = 32;

/// Most bytes of header names and values a plugin may send; well under the
/// 8–16 KiB that common servers accept for a whole request head.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

/// The header that carries the caller's tenant; only the host sets it.
pub const TENANT_HEADER: &str = "x-tenant";

/// Headers the host never takes from a plugin: credentials and identity
/// (the host adds its own), and the ones that frame or route the request,
/// which the HTTP client sets.
const DROPPED: [&str; 16] = [
    "authorization",
    crate::ASSERTION_HEADER,
    "proxy-authorization",
    "cookie",
    "host",
    TENANT_HEADER,
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "forwarded",
    "expect",
];

/// Headers the host must control, so the operator cannot name them as the
/// credential header either.
pub(crate) fn host_controlled(name: &HeaderName) -> bool {
    let controlled = [
        TENANT_HEADER,
        crate::ASSERTION_HEADER,
        "host",
        "content-length",
        "transfer-encoding",
    ];
    controlled.contains(&name.as_str()) || hop_by_hop(name)
}

fn hop_by_hop(name: &HeaderName) -> bool {
    let hop = [
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "upgrade",
    ];
    hop.contains(&name.as_str())
}

/// The plugin's headers as the client will send them, minus the dropped
/// ones and the backend's credential header. The error says why the set
/// is refused: too many, too large, or a name or value that is not valid
/// HTTP (a line break, say).
pub(crate) fn outbound(
    plugin: &[(String, String)],
    credential: Option<&HeaderName>,
) -> Result<HeaderMap, String> {
    if plugin.len() > MAX_HEADERS {
        return Err(format!("more than {MAX_HEADERS} headers"));
    }
    let size: usize = plugin.iter().map(|(n, v)| n.len() + v.len()).sum();
    if size > MAX_HEADER_BYTES {
        return Err(format!("headers are larger than {MAX_HEADER_BYTES} bytes"));
    }
    let mut map = HeaderMap::new();
    for (name, value) in plugin {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("invalid header name {name:?}"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("invalid value for header {:?}", name.as_str()))?;
        if !dropped(&name, credential) {
            map.append(name, value);
        }
    }
    Ok(map)
}

fn dropped(name: &HeaderName, credential: Option<&HeaderName>) -> bool {
    DROPPED.contains(&name.as_str())
        || name.as_str().starts_with("x-forwarded-")
        || credential == Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn credentials_identity_and_framing_headers_are_dropped_in_any_case() {
        let sent = pairs(&[
            ("Authorization", "Bearer mine"),
            ("COOKIE", "a=b"),
            ("X-Tenant", "other"),
            ("X-Toolhost-Assertion", "forged"),
            ("Host", "evil"),
            ("X-Forwarded-For", "1.2.3.4"),
            ("Transfer-Encoding", "chunked"),
            ("X-Api-Key", "guess"),
            ("Content-Type", "application/json"),
            ("Accept", "a"),
            ("accept", "b"),
        ]);
        let key = HeaderName::from_static("x-api-key");
        let map = outbound(&sent, Some(&key)).expect("valid headers");
        let mut names: Vec<_> = map.keys().map(|k| k.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["accept", "content-type"]);
        assert_eq!(map.get_all("accept").iter().count(), 2);
    }

    #[test]
    fn invalid_too_many_or_too_large_headers_are_refused() {
        let refused = [
            pairs(&[("bad name", "v")]),
            pairs(&[("x-a", "line\r\nbreak")]),
            pairs(&[("", "v")]),
            vec![("x-a".to_owned(), "v".to_owned()); MAX_HEADERS + 1],
            vec![("x-a".to_owned(), "v".repeat(MAX_HEADER_BYTES))],
        ];
        for headers in refused {
            assert!(outbound(&headers, None).is_err(), "{headers:?}");
        }
    }

    #[test]
    fn the_host_keeps_control_of_tenant_host_and_framing_headers() {
        let names = [
            "x-tenant",
            "x-toolhost-assertion",
            "host",
            "content-length",
            "connection",
        ];
        for name in names {
            assert!(host_controlled(&HeaderName::from_static(name)), "{name}");
        }
        assert!(!host_controlled(&HeaderName::from_static("x-api-key")));
    }
}
