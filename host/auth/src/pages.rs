//! The server-rendered pages of the browser flow: login, consent, and the
//! error page for requests that cannot be redirected back to a client.
//! Every interpolated value is HTML-escaped.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

/// What the login page shows.
pub(crate) struct LoginPage<'a> {
    /// Where the form posts: `/oauth/login` in an authorization request,
    /// `/oauth/signin` for the host's own pages.
    pub action: &'a str,
    pub pending: &'a str,
    pub csrf: &'a str,
    /// The client asking, in an authorization request; `None` when the
    /// person signs in to one of the host's own pages.
    pub client_name: Option<&'a str>,
    pub error: Option<&'a str>,
    /// The single-sign-on providers: (name, label).
    pub providers: Vec<(&'a str, &'a str)>,
    /// Whether the password form is shown.
    pub password: bool,
}

/// What the consent page shows.
pub(crate) struct ConsentPage<'a> {
    pub pending: &'a str,
    pub csrf: &'a str,
    pub client_name: &'a str,
    pub redirect_host: &'a str,
    pub username: &'a str,
    pub scopes: &'a str,
}

pub(crate) fn login(status: StatusCode, p: &LoginPage<'_>) -> Response {
    let error = p
        .error
        .map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", escape(e)))
        .unwrap_or_default();
    let providers: String = p
        .providers
        .iter()
        .map(|(name, label)| {
            format!(
                "<p><a href=\"/oauth/sso/{}/start?pending={}\">Sign in with {}</a></p>\n",
                escape(name),
                escape(p.pending),
                escape(label)
            )
        })
        .collect();
    let lead = match p.client_name {
        Some(client) => format!(
            "<p><strong>{}</strong> wants to use your tools.</p>",
            escape(client)
        ),
        None => "<p>Sign in to continue.</p>".to_owned(),
    };
    let form = if p.password {
        format!(
            "<form method=\"post\" action=\"{action}\">\n\
             <input type=\"hidden\" name=\"pending\" value=\"{pending}\">\n\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\n\
             <label>Username <input name=\"username\" autocomplete=\"username\" required autofocus></label>\n\
             <label>Password <input name=\"password\" type=\"password\" autocomplete=\"current-password\" required></label>\n\
             <button type=\"submit\">Sign in</button>\n</form>\n",
            action = escape(p.action),
            pending = escape(p.pending),
            csrf = escape(p.csrf),
        )
    } else if p.providers.is_empty() {
        "<p>Password sign-in is turned off and no single-sign-on provider is configured.</p>\n"
            .to_owned()
    } else {
        String::new()
    };
    let body = format!("<h1>Sign in</h1>\n{lead}\n{error}{form}{providers}");
    page(status, "Sign in", &body)
}

pub(crate) fn consent(p: &ConsentPage<'_>) -> Response {
    let body = format!(
        "<h1>Allow access?</h1>\n<p>Signed in as <strong>{user}</strong>.</p>\n\
         <p><strong>{client}</strong> (returning to <code>{host}</code>) asks for: <code>{scopes}</code>. \
         It will be able to list and call the tools your roles allow, as you.</p>\n\
         <form method=\"post\" action=\"/oauth/consent\">\n\
         <input type=\"hidden\" name=\"pending\" value=\"{pending}\">\n\
         <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\n\
         <button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button>\n\
         <button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button>\n</form>",
        user = escape(p.username),
        client = escape(p.client_name),
        host = escape(p.redirect_host),
        scopes = escape(p.scopes),
        pending = escape(p.pending),
        csrf = escape(p.csrf),
    );
    page(StatusCode::OK, "Allow access", &body)
}

pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    let body = format!(
        "<h1>Cannot continue</h1>\n<p class=\"error\" role=\"alert\">{}</p>\n\
         <p>Start again from your application.</p>",
        escape(message)
    );
    page(status, "Error", &body)
}

/// `page` with `Retry-After: secs`, when there is a wait to tell.
pub(crate) fn retry_after(mut page: Response, secs: Option<u64>) -> Response {
    if let Some(secs) = secs {
        page.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    page
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\"><title>{} · toolhost</title>\
         <style>body{{font-family:sans-serif;max-width:28rem;margin:3rem auto}}label{{display:block;margin:.5rem 0}}\
         .error{{color:#a00}}</style></head>\n<body>\n{body}\n</body></html>\n",
        escape(title)
    );
    let mut r = (status, Html(html)).into_response();
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
        ),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

/// HTML-escapes text for element content and quoted attributes: the one
/// escape of every server-rendered page, the host's own pages included.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">'&"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;"
        );
    }
}
