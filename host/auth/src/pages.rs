//! The server-rendered pages of the browser flow: login, consent, and the
//! error page for requests that cannot be redirected back to a client.
//! Rendered by minijinja from the templates in `templates/`, compiled into
//! the binary, with HTML auto-escaping: every value is text on the page.

use std::sync::LazyLock;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use minijinja::Environment;
use serde_json::{Value, json};

/// What the login page shows.
pub(crate) struct LoginPage<'a> {
    /// Where the form posts: `/oauth/login` in an authorization request,
    /// `/oauth/signin` for the host's own pages (a path of the host's own,
    /// written as it is).
    pub action: &'static str,
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
    /// The toolsets the request binds the client to (none: all the
    /// person's tools, unless they pick one of `toolsets`).
    pub bound: Vec<&'a str>,
    /// The toolsets of the person's tenant to pick from, when the request
    /// binds to none.
    pub toolsets: &'a [String],
}

/// The templates, parsed once.
static PAGES: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    env.set_auto_escape_callback(minijinja::default_auto_escape_callback);
    for (name, source) in [
        ("page.html", include_str!("../templates/page.html")),
        ("login.html", include_str!("../templates/login.html")),
        ("consent.html", include_str!("../templates/consent.html")),
        ("error.html", include_str!("../templates/error.html")),
    ] {
        env.add_template(name, source)
            .expect("the sign-in templates parse (their tests render each)");
    }
    env
});

pub(crate) fn login(status: StatusCode, p: &LoginPage<'_>) -> Response {
    let providers: Vec<Value> = (p.providers.iter())
        .map(|(name, label)| json!({"name": name, "label": label}))
        .collect();
    let context = json!({
        "action": p.action,
        "pending": p.pending,
        "csrf": p.csrf,
        "client_name": p.client_name,
        "error": p.error,
        "providers": providers,
        "password": p.password,
    });
    page(status, "login.html", context)
}

pub(crate) fn consent(p: &ConsentPage<'_>) -> Response {
    let context = json!({
        "pending": p.pending,
        "csrf": p.csrf,
        "client_name": p.client_name,
        "redirect_host": p.redirect_host,
        "username": p.username,
        "scopes": p.scopes,
        "bound": p.bound,
        "toolsets": p.toolsets,
    });
    page(StatusCode::OK, "consent.html", context)
}

pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    page(status, "error.html", json!({"message": message}))
}

/// `page` with `Retry-After: secs`, when there is a wait to tell.
pub(crate) fn retry_after(mut page: Response, secs: Option<u64>) -> Response {
    if let Some(secs) = secs {
        page.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    page
}

/// Template `name` rendered with `context`, with the headers of every
/// sign-in page: never cached, never framed, no script.
fn page(status: StatusCode, name: &str, context: Value) -> Response {
    let html = PAGES
        .get_template(name)
        .and_then(|t| t.render(minijinja::Value::from(minijinja::value::Serde(&context))))
        .unwrap_or_else(|e| {
            tracing::error!(error = %e, name, "rendering a sign-in page");
            "<!doctype html><title>Error · toolhost</title><p>Internal error.</p>".into()
        });
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

#[cfg(test)]
mod tests {
    use axum::body::to_bytes;

    use super::*;

    async fn html(page: Response) -> String {
        let bytes = to_bytes(page.into_body(), 1 << 20).await.expect("body");
        String::from_utf8(bytes.to_vec()).expect("utf-8")
    }

    const HOSTILE: &str = "<script>alert('x')</script>\"&";

    #[tokio::test]
    async fn every_value_is_text_on_the_page_and_forms_post_where_they_should() {
        let sign_in = LoginPage {
            action: "/oauth/login",
            pending: "p1",
            csrf: "c1",
            client_name: Some(HOSTILE),
            error: Some(HOSTILE),
            providers: vec![("corp", HOSTILE)],
            password: true,
        };
        let consent = ConsentPage {
            pending: "p1",
            csrf: "c1",
            client_name: HOSTILE,
            redirect_host: HOSTILE,
            username: HOSTILE,
            scopes: HOSTILE,
            bound: vec![],
            toolsets: &[HOSTILE.to_owned()],
        };
        let pages = [
            html(login(StatusCode::OK, &sign_in)).await,
            html(super::consent(&consent)).await,
            html(error(StatusCode::BAD_REQUEST, HOSTILE)).await,
        ];
        for page in &pages {
            assert!(!page.contains("<script>"), "{page}");
            assert!(page.contains("&lt;script&gt;"), "{page}");
        }
        assert!(pages[0].contains("action=\"/oauth/login\""), "{}", pages[0]);
        assert!(pages[0].contains("name=\"pending\" value=\"p1\""));
        assert!(pages[0].contains("Sign in with &lt;script&gt;"));
        assert!(pages[1].contains("action=\"/oauth/consent\""));
        assert!(pages[1].contains("name=\"csrf\" value=\"c1\""));
    }

    #[tokio::test]
    async fn without_passwords_or_providers_the_login_page_says_why() {
        let off = LoginPage {
            action: "/oauth/signin",
            pending: "p",
            csrf: "c",
            client_name: None,
            error: None,
            providers: Vec::new(),
            password: false,
        };
        let page = html(login(StatusCode::OK, &off)).await;
        assert!(page.contains("Password sign-in is turned off"), "{page}");
        assert!(!page.contains("<form"), "{page}");
    }
}
