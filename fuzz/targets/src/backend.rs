//! Outbound HTTP: the URL a plugin's path leads to under its backend.

use toolhost_backend::MAX_PATH;
use url::Url;

/// Backend base URLs in these targets, picked by the first byte (`'0'`
/// the first): an origin with a port, a path with a trailing `/`, IPv6
/// with a two-segment path, a percent-encoded path, a default port
/// spelled out.
const BASES: [&str; 5] = [
    "http://127.0.0.1:8081",
    "https://api.example/v1/",
    "http://[::1]:9000/base/path",
    "https://api.example:8443/a%20b",
    "http://crm.internal:80/api",
];

/// The backend path builder (SSRF and traversal): a plugin's path, after
/// the first byte (see [`BASES`]), joined to its backend's base. Any path
/// is refused or joined without a panic; a joined one is at most
/// [`MAX_PATH`] bytes and leads to the base's scheme, host and port,
/// without userinfo or fragment, at or under the base's path, through
/// segments that decode (as the backend will) to neither `.` nor `..` nor
/// anything holding `/` or `\`.
pub fn backend_path(data: &[u8]) {
    let Some((&pick, path)) = data.split_first() else {
        return;
    };
    let Ok(path) = std::str::from_utf8(path) else {
        return;
    };
    let base = BASES[usize::from(pick.wrapping_sub(b'0')) % BASES.len()];
    let base = Url::parse(base).expect("a valid base URL");
    let Ok(url) = toolhost_backend::fuzzing::join(&base, path) else {
        return;
    };
    assert!(path.len() <= MAX_PATH, "{} bytes joined", path.len());
    let origin = |u: &Url| {
        (
            u.scheme().to_owned(),
            u.host_str().map(str::to_owned),
            u.port_or_known_default(),
        )
    };
    assert_eq!(origin(&url), origin(&base), "{path:?} led to {url}");
    assert!(
        url.username().is_empty() && url.password().is_none() && url.fragment().is_none(),
        "{path:?} led to {url}"
    );
    let rest = url
        .path()
        .strip_prefix(base.path().trim_end_matches('/'))
        .filter(|rest| rest.is_empty() || rest.starts_with('/'));
    let Some(rest) = rest else {
        panic!("{path:?} led to {url}, outside {base}");
    };
    for segment in rest.split('/').skip(1) {
        let decoded = percent_decoded(segment);
        assert!(
            decoded != b"." && decoded != b".." && !decoded.iter().any(|b| b"/\\".contains(b)),
            "{path:?} led to {url}: segment {segment:?}"
        );
    }
}

/// `%XX` escapes decoded once; anything else (a stray `%` too) as it is.
fn percent_decoded(segment: &str) -> Vec<u8> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = match bytes.get(i..i + 3) {
            Some([b'%', hi, lo]) if hi.is_ascii_hexdigit() && lo.is_ascii_hexdigit() => {
                std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
            }
            _ => None,
        };
        match escape {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    out
}
