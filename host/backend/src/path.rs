//! Where a plugin's path may lead: always under its backend's base URL.
//!
//! The URL is built by concatenating the base and the path, then parsed
//! again and compared with the base. Never `Url::join`: it resolves the path
//! as a reference, so `//evil.example/x` would change the host.

use url::Url;

/// Longest path a plugin may send, query included. Longer is refused, not
/// cut: a cut path names a different resource.
pub const MAX_PATH: usize = 2048;

/// A backend's base URL, checked once at start-up.
#[derive(Debug, Clone)]
pub(crate) struct Base {
    url: Url,
    /// The URL as text without a trailing `/`, ready for a path to follow.
    prefix: String,
}

impl Base {
    /// Accepts an `http`/`https` URL with a host and no userinfo, query or
    /// fragment; the error is the rule broken.
    pub(crate) fn new(url: &Url) -> Result<Base, &'static str> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err("must use http or https");
        }
        if url.host().is_none() {
            return Err("must name a host");
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("must not carry userinfo; configure a credential instead");
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err("must not have a query or fragment");
        }
        let prefix = url.as_str().trim_end_matches('/').to_owned();
        Ok(Base {
            url: url.clone(),
            prefix,
        })
    }

    /// The URL for a plugin's path, or why it is refused (a message safe
    /// to show the plugin: it never includes the base URL).
    pub(crate) fn join(&self, path: &str) -> Result<Url, String> {
        check(path)?;
        let joined = Url::parse(&format!("{}{path}", self.prefix))
            .map_err(|_| "path does not form a valid URL".to_owned())?;
        if !self.contains(&joined) {
            return Err("path leaves the backend's base URL".to_owned());
        }
        Ok(joined)
    }

    /// Same scheme, host and port as the base, no userinfo or fragment, and
    /// a path at or under the base path.
    fn contains(&self, url: &Url) -> bool {
        let base_path = self.url.path().trim_end_matches('/');
        let under = url
            .path()
            .strip_prefix(base_path)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        url.scheme() == self.url.scheme()
            && url.host() == self.url.host()
            && url.port_or_known_default() == self.url.port_or_known_default()
            && url.username().is_empty()
            && url.password().is_none()
            && url.fragment().is_none()
            && under
    }
}

/// The rules on the path text itself, before any URL is parsed.
fn check(path: &str) -> Result<(), String> {
    if path.len() > MAX_PATH {
        return Err(format!("path is longer than {MAX_PATH} bytes"));
    }
    if !path.starts_with('/') || path.starts_with("//") {
        return Err("path must start with exactly one '/'".to_owned());
    }
    if path.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("path contains whitespace or a control character".to_owned());
    }
    for (needle, what) in [("\\", "'\\'"), ("@", "'@'"), ("://", "'://'"), ("#", "'#'")] {
        if path.contains(needle) {
            return Err(format!("path contains {what}"));
        }
    }
    let route = path.split_once('?').map_or(path, |(route, _query)| route);
    route.split('/').try_for_each(check_segment)
}

/// A segment must not be `.` or `..`, nor hide `/`, `\` or a control
/// character behind percent-encoding, since the backend will decode it.
fn check_segment(segment: &str) -> Result<(), String> {
    let decoded = percent_decode(segment)
        .ok_or_else(|| "path contains a malformed percent-escape".to_owned())?;
    if decoded == b"." || decoded == b".." {
        return Err("path contains a '.' or '..' segment".to_owned());
    }
    if decoded
        .iter()
        .any(|b| matches!(b, b'/' | b'\\') || b.is_ascii_control())
    {
        return Err("path contains an encoded '/', '\\' or control character".to_owned());
    }
    Ok(())
}

/// Decodes `%XX` escapes; `None` for a `%` not followed by two hex digits.
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b != b'%' {
            out.push(b);
            continue;
        }
        let hi = char::from(bytes.next()?).to_digit(16)?;
        let lo = char::from(bytes.next()?).to_digit(16)?;
        out.push(u8::try_from(hi * 16 + lo).expect("two hex digits fit a byte"));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(url: &str) -> Base {
        Base::new(&url.parse().expect("valid URL")).expect("acceptable base")
    }

    #[test]
    fn paths_are_appended_to_the_base_keeping_its_prefix_and_the_query() {
        let cases = [
            ("http://127.0.0.1:8081", "/x", "http://127.0.0.1:8081/x"),
            (
                "http://127.0.0.1:8081/",
                "/x?a=1&b=%2F",
                "http://127.0.0.1:8081/x?a=1&b=%2F",
            ),
            (
                "http://127.0.0.1:8081/base",
                "/x/y",
                "http://127.0.0.1:8081/base/x/y",
            ),
            (
                "http://127.0.0.1:8081/base/",
                "/",
                "http://127.0.0.1:8081/base/",
            ),
            (
                "https://api.example/v1",
                "/a%20b",
                "https://api.example/v1/a%20b",
            ),
        ];
        for (base_url, path, want) in cases {
            let got = base(base_url).join(path).expect(path);
            assert_eq!(got.as_str(), want, "{base_url} + {path}");
        }
    }

    #[test]
    fn paths_that_could_leave_the_base_are_refused() {
        let b = base("http://127.0.0.1:8081/base");
        let refused = [
            "",
            "x",
            "//evil.example/x",
            "http://evil/x",
            "/../x",
            "/a/../b",
            "/a/./b",
            "/.",
            "/a/%2e%2e/b",
            "/a/%2E%2e",
            "/a/.%2e/b",
            "/a%2fb",
            "/a%2F..",
            "/a%5cb",
            "/a%00",
            "\\x",
            "/a\\b",
            "/a@b",
            "/x?u=http://evil",
            "/a#frag",
            "/a b",
            "/a\tb",
            "/a\nb",
            "/a\u{a0}b",
            "/a%zz",
            "/a%2",
        ];
        for path in refused {
            assert!(b.join(path).is_err(), "{path:?} was accepted");
        }
        assert!(b.join(&format!("/{}", "a".repeat(MAX_PATH))).is_err());
    }

    #[test]
    fn bases_with_other_schemes_userinfo_or_a_query_are_refused() {
        for url in [
            "ftp://127.0.0.1/",
            "file:///etc",
            "http://bob:pw@127.0.0.1/",
            "http://bob@127.0.0.1/",
            "http://127.0.0.1/?a=1",
            "http://127.0.0.1/#x",
        ] {
            assert!(
                Base::new(&url.parse().expect("valid URL")).is_err(),
                "{url}"
            );
        }
    }

    #[test]
    fn percent_escapes_decode_and_malformed_ones_do_not() {
        assert_eq!(percent_decode("a%2Fb%2e").as_deref(), Some(&b"a/b."[..]));
        assert_eq!(percent_decode("%g0"), None);
        assert_eq!(percent_decode("%"), None);
    }
}
