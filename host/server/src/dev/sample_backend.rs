//! `toolhost dev`'s sample backend: a loopback HTTP server that answers a
//! backend the project's manifest declares (`[backends.NAME]`) from the
//! fixture file `backends/NAME.json` beside the manifest, so a tool that
//! talks to a backend runs in the author's loop before any backend exists.
//!
//! The fixture lists routes; the first whose method and path match answers:
//!
//! ```json
//! {"routes": [
//!   {"method": "GET", "path": "/projects", "json": [{"id": 1, "name": "shop"}]},
//!   {"method": "GET", "path": "/projects/*", "json": {"id": 1, "name": "shop"}},
//!   {"method": "POST", "path": "/projects/*/runs", "status": 201, "json": {"run": 7}}
//! ]}
//! ```
//!
//! `*` matches one path segment; a route's path without `?` ignores the
//! query. A route answers `json` (as `application/json`) or `text`, with
//! `status` (200) and `headers`. No route matches: 404 with a JSON body
//! naming the request. The file is read on every request, so an edit is
//! answered at once; a fixture that does not parse is a 500 naming why.

use std::collections::BTreeMap;
use std::path::PathBuf;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use serde::Deserialize;

/// A fixture file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixture {
    routes: Vec<Route>,
}

/// One answer and the requests it answers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Route {
    method: String,
    path: String,
    #[serde(default = "ok")]
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    json: Option<serde_json::Value>,
    #[serde(default)]
    text: Option<String>,
}

fn ok() -> u16 {
    200
}

impl Route {
    fn matches(&self, method: &str, path: &str, query: Option<&str>) -> bool {
        if !self.method.eq_ignore_ascii_case(method) {
            return false;
        }
        let (want_path, want_query) = match self.path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (self.path.as_str(), None),
        };
        if want_query.is_some() && want_query != query {
            return false;
        }
        let want: Vec<&str> = want_path.split('/').collect();
        let got: Vec<&str> = path.split('/').collect();
        want.len() == got.len()
            && want
                .iter()
                .zip(&got)
                .all(|(w, g)| *w == "*" && !g.is_empty() || w == g)
    }
}

/// Why a fixture answered nothing it meant to.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FixtureError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a fixture: {source}")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: route {index}: {detail}")]
    Route {
        path: PathBuf,
        index: usize,
        detail: String,
    },
}

fn load(path: &PathBuf) -> Result<Fixture, FixtureError> {
    let text = std::fs::read(path).map_err(|source| FixtureError::Read {
        path: path.clone(),
        source,
    })?;
    let fixture: Fixture = serde_json::from_slice(&text).map_err(|source| FixtureError::Parse {
        path: path.clone(),
        source,
    })?;
    for (index, route) in fixture.routes.iter().enumerate() {
        let bad = |detail: &str| FixtureError::Route {
            path: path.clone(),
            index,
            detail: detail.to_owned(),
        };
        if !route.path.starts_with('/') {
            return Err(bad("a path starts with /"));
        }
        if route.json.is_some() && route.text.is_some() {
            return Err(bad("a route answers json or text, not both"));
        }
        if StatusCode::from_u16(route.status).is_err() {
            return Err(bad("status is not an HTTP status"));
        }
        for (name, value) in &route.headers {
            if HeaderName::try_from(name.as_str()).is_err()
                || HeaderValue::try_from(value.as_str()).is_err()
            {
                return Err(bad("a header that is not HTTP"));
            }
        }
    }
    Ok(fixture)
}

/// The answer `fixture` (the file at `path`) gives to `req`.
async fn answer(State(path): State<PathBuf>, req: Request) -> Response {
    let fixture = match load(&path) {
        Ok(f) => f,
        Err(e) => return json(StatusCode::INTERNAL_SERVER_ERROR, &error(e.to_string())),
    };
    let method = req.method().as_str();
    let uri = req.uri();
    let Some(route) = fixture
        .routes
        .iter()
        .find(|r| r.matches(method, uri.path(), uri.query()))
    else {
        let why = format!("{}: no route for {method} {uri}", path.display());
        return json(StatusCode::NOT_FOUND, &error(why));
    };
    let status = StatusCode::from_u16(route.status).unwrap_or(StatusCode::OK);
    let mut response = match (&route.json, &route.text) {
        (Some(value), _) => json(status, value),
        (None, Some(text)) => text_response(status, text.clone()),
        (None, None) => text_response(status, String::new()),
    };
    for (name, value) in &route.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::try_from(name.as_str()),
            HeaderValue::try_from(value.as_str()),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

fn error(message: String) -> serde_json::Value {
    serde_json::json!({ "error": message })
}

fn json(status: StatusCode, value: &serde_json::Value) -> Response {
    let mut response = Response::new(Body::from(value.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn text_response(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}

/// Serves the fixture at `path` on a free loopback port; returns its base
/// URL. The server lives as long as the runtime.
pub(crate) async fn serve(path: PathBuf) -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let app = axum::Router::new().fallback(answer).with_state(path);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!(error = %e, "the dev sample backend stopped");
        }
    });
    Ok(url)
}

/// Checks the fixture at `path` now, so a broken one is told at start.
pub(crate) fn check(path: &PathBuf) -> Result<(), FixtureError> {
    load(path).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(text: &str) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().expect("a temp dir");
        let path = tmp.path().join("shop.json");
        std::fs::write(&path, text).expect("write");
        (tmp, path)
    }

    async fn get(url: &str, method: &str) -> (u16, Option<String>, String) {
        let client = reqwest::Client::new();
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
        let r = client.request(method, url).send().await.expect("answered");
        let status = r.status().as_u16();
        let kind = r
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap_or_default().to_owned());
        (status, kind, r.text().await.expect("a body"))
    }

    #[tokio::test]
    async fn routes_answer_by_method_and_path_and_an_unknown_one_is_a_named_404() {
        let (_tmp, path) = fixture(
            r#"{"routes": [
                {"method": "GET", "path": "/projects", "json": [{"id": 1}]},
                {"method": "GET", "path": "/projects/*", "json": {"id": 1}, "headers": {"x-seen": "yes"}},
                {"method": "POST", "path": "/projects/*/runs", "status": 201, "text": "started"},
                {"method": "GET", "path": "/search?q=shop", "json": ["shop"]}
            ]}"#,
        );
        let base = serve(path).await.expect("serves");
        let (status, kind, body) = get(&format!("{base}/projects?page=2"), "GET").await;
        assert_eq!(
            (status, kind.as_deref(), body.as_str()),
            (200, Some("application/json"), r#"[{"id":1}]"#)
        );
        let client = reqwest::Client::new();
        let one = client
            .get(format!("{base}/projects/7"))
            .send()
            .await
            .expect("answered");
        assert_eq!(one.headers()["x-seen"], "yes");
        let (status, _, body) = get(&format!("{base}/projects/7/runs"), "POST").await;
        assert_eq!((status, body.as_str()), (201, "started"));
        assert_eq!(get(&format!("{base}/search?q=shop"), "GET").await.0, 200);
        assert_eq!(get(&format!("{base}/search?q=bank"), "GET").await.0, 404);
        assert_eq!(
            get(&format!("{base}/projects//runs"), "POST").await.0,
            404,
            "* is one segment, not none"
        );
        let (status, _, body) = get(&format!("{base}/projects"), "DELETE").await;
        assert_eq!(status, 404);
        assert!(body.contains("no route for DELETE /projects"), "{body}");
    }

    #[tokio::test]
    async fn an_edit_is_answered_at_once_and_a_broken_fixture_is_a_500_naming_why() {
        let (_tmp, path) =
            fixture(r#"{"routes": [{"method": "GET", "path": "/a", "text": "one"}]}"#);
        let base = serve(path.clone()).await.expect("serves");
        assert_eq!(get(&format!("{base}/a"), "GET").await.2, "one");
        std::fs::write(
            &path,
            r#"{"routes": [{"method": "GET", "path": "/a", "text": "two"}]}"#,
        )
        .expect("write");
        assert_eq!(get(&format!("{base}/a"), "GET").await.2, "two");
        std::fs::write(&path, r#"{"routes": [{"method": "GET", "path": "a"}]}"#).expect("write");
        let (status, _, body) = get(&format!("{base}/a"), "GET").await;
        assert_eq!(status, 500);
        assert!(body.contains("route 0: a path starts with /"), "{body}");
        assert!(matches!(
            check(&path),
            Err(FixtureError::Route { index: 0, .. })
        ));
        std::fs::write(&path, "{").expect("write");
        assert!(matches!(check(&path), Err(FixtureError::Parse { .. })));
    }
}
