//! Form parameters of OAuth requests: each at most once (RFC 6749 §3.1,
//! §3.2: "parameters MUST NOT be included more than once").

use std::collections::HashMap;

use crate::error::OAuthError;

/// The longest parameter value accepted (a refresh token, a verifier and
/// a redirect URI are all far shorter).
pub const MAX_VALUE: usize = 4096;

/// Parsed `application/x-www-form-urlencoded` (or query) parameters.
#[derive(Debug, Clone, Default)]
pub struct Params(HashMap<String, String>);

impl Params {
    /// Parses a form body or query string; a repeated or oversized
    /// parameter is `invalid_request`. Empty values count as absent
    /// (RFC 6749 §3.1).
    pub fn parse(input: &[u8]) -> Result<Params, OAuthError> {
        let mut map = HashMap::new();
        for (name, value) in url::form_urlencoded::parse(input) {
            if value.len() > MAX_VALUE {
                return Err(OAuthError::invalid_request(format!(
                    "parameter {name} is longer than {MAX_VALUE} bytes"
                )));
            }
            if value.is_empty() {
                continue;
            }
            if map.insert(name.to_string(), value.to_string()).is_some() {
                return Err(OAuthError::invalid_request(format!(
                    "parameter {name} appears more than once"
                )));
            }
        }
        Ok(Params(map))
    }

    /// The parameter's value, if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The parameter's value, or `invalid_request` naming it.
    pub fn require(&self, name: &str) -> Result<&str, OAuthError> {
        self.get(name)
            .ok_or_else(|| OAuthError::invalid_request(format!("parameter {name} is required")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_parameters_are_refused() {
        let e = Params::parse(b"code=a&code=b").expect_err("repeated");
        assert_eq!(e.code, "invalid_request");
        let p = Params::parse(b"code=a&state=&x=%20y").expect("valid");
        assert_eq!(p.get("code"), Some("a"));
        assert_eq!(p.get("state"), None);
        assert_eq!(p.get("x"), Some(" y"));
        assert!(p.require("grant_type").is_err());
    }
}
