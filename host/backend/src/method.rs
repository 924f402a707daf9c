//! The HTTP methods a plugin may use, and which of them are safe.

/// The methods the `backend` WIT interface offers. No `CONNECT`, `TRACE` or
/// `OPTIONS`: a plugin talks to an API, not to the transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `GET`: safe.
    Get,
    /// `HEAD`: safe; the response body is always empty.
    Head,
    /// `POST`: may have side effects.
    Post,
    /// `PUT`: may have side effects.
    Put,
    /// `PATCH`: may have side effects.
    Patch,
    /// `DELETE`: may have side effects.
    Delete,
}

impl Method {
    /// Whether the method is safe in the RFC 9110 sense (no side effects
    /// intended): only these pass while [`crate::Access::safe_only`] is set.
    /// A backend that changes state on `GET` defeats this; the rule is about
    /// what the plugin asks for, not what the backend does.
    pub fn is_safe(self) -> bool {
        matches!(self, Method::Get | Method::Head)
    }

    /// The method's name on the wire, upper case.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    /// The same method as the HTTP client spells it.
    pub(crate) fn to_http(self) -> reqwest::Method {
        match self {
            Method::Get => reqwest::Method::GET,
            Method::Head => reqwest::Method::HEAD,
            Method::Post => reqwest::Method::POST,
            Method::Put => reqwest::Method::PUT,
            Method::Patch => reqwest::Method::PATCH,
            Method::Delete => reqwest::Method::DELETE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Method; 6] = [
        Method::Get,
        Method::Head,
        Method::Post,
        Method::Put,
        Method::Patch,
        Method::Delete,
    ];

    #[test]
    fn only_get_and_head_are_safe() {
        let safe: Vec<_> = ALL.into_iter().filter(|m| m.is_safe()).collect();
        assert_eq!(safe, [Method::Get, Method::Head]);
    }

    #[test]
    fn names_match_the_client_spelling() {
        for method in ALL {
            assert_eq!(method.as_str(), method.to_http().as_str());
        }
    }
}
