//! The console's approvals page end to end over plain HTTP (seed 002: the
//! web page is another renderer of the same gate rows): a person signs in
//! at `/admin/approvals`, sees the tenant's pending gates and confirms one
//! with a reason; MCP sees the decision at once and the retry runs once.
//! A gate denied over MCP shows as denied on the page, and a stale form
//! for it is refused with `GATE_DECIDED`. Without a sign-in the page
//! redirects to it; without the CSRF token a form is refused; the person
//! who raised a gate sees `SELF_APPROVAL`. The page's old address,
//! `/oauth/approvals`, redirects to it. (tests/e2e_console.rs drives the
//! whole console in a real browser.)

mod support;

use serde_json::{Value, json};
use support::bench::{Backend, answer, serve};
use support::oauth::{Browser, add_ann, encode, hidden_fields, user_token};
use support::{Answer, DEMO_PASSWORD, Server};

const PAGE: &str = "/admin/approvals";

/// Opens a gate: `run_by_tag` of `project`'s smoke tests on prod.
fn open_gate(server: &Server, token: &str, project: &str) -> (String, Value) {
    let args = run(project);
    let v = answer(server, token, "run_by_tag", args.clone());
    let id = v["approval_required"]["gate_id"]
        .as_str()
        .unwrap_or_else(|| panic!("approval_required: {v}"));
    (id.to_owned(), args)
}

fn run(project: &str) -> Value {
    json!({"tags": ["smoke"], "environment": "prod", "project": project})
}

/// A browser signed in as `user` through the page's redirect to sign-in.
fn signed_in(server: &Server, user: &str, password: &str) -> Browser {
    let mut browser = Browser::default();
    let away = browser.send(server, "GET", PAGE, None);
    assert_eq!(away.status, 303, "{}", away.body);
    let login_path = away.header("location").expect("to sign-in").to_owned();
    assert_eq!(login_path, "/oauth/signin?return_to=%2Fadmin%2Fapprovals");
    let login = browser.send(server, "GET", &login_path, None);
    let back = browser.sign_in(server, &login, user, password);
    assert_eq!(back.header("location"), Some(PAGE));
    browser
}

fn page(server: &Server, browser: &mut Browser) -> Answer {
    let page = browser.send(server, "GET", PAGE, None);
    assert_eq!(page.status, 200, "{}", page.body);
    page
}

/// `gate` on the page, if it is listed: its card while pending, its
/// table row once decided.
fn row<'a>(html: &'a str, gate: &str) -> Option<&'a str> {
    for (open, close) in [
        ("<article class=\"card\" id=", "</article>"),
        ("<tr id=", "</tr>"),
    ] {
        if let Some(start) = html.find(&format!("{open}\"{gate}\"")) {
            let end = html[start..].find(close)? + start;
            return Some(&html[start..end]);
        }
    }
    None
}

/// The decision form of `gate` on `html`: its action and hidden fields.
fn form_of(html: &str, gate: &str) -> Option<(String, Vec<(String, String)>)> {
    let action = format!("{PAGE}/{gate}");
    let start = html.find(&format!("action=\"{action}\""))?;
    let end = html[start..].find("</form>")? + start;
    Some((action, hidden_fields(&html[start..end])))
}

/// Posts `form` with `decision` and `reason`.
fn post(
    server: &Server,
    browser: &mut Browser,
    (action, hidden): &(String, Vec<(String, String)>),
    decision: &str,
    reason: &str,
) -> Answer {
    let mut fields = hidden.clone();
    fields.push(("decision".into(), decision.into()));
    fields.push(("reason".into(), reason.into()));
    let body = fields
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&");
    browser.send(server, "POST", action, Some(&body))
}

/// The gate `id` as `list_pending_approvals` shows it to `token`.
fn listed(server: &Server, token: &str, id: &str) -> Value {
    let all = answer(
        server,
        token,
        "list_pending_approvals",
        json!({"filter": {"state": "all"}}),
    );
    let gates = all["gates"].as_array().expect("gates");
    gates
        .iter()
        .find(|g| g["gate_id"] == id)
        .unwrap_or_else(|| panic!("{id} not listed: {all}"))
        .clone()
}

#[test]
fn a_gate_confirmed_on_the_page_runs_once_and_one_denied_over_mcp_shows_there() {
    let backend = Backend::start();
    let (server, demo) = serve(&backend, &[]);
    let password = add_ann(&server);
    let ann_token = user_token(&server, "ann", &password);
    let (gate, args) = open_gate(&server, &demo, "payments");

    let mut ann = signed_in(&server, "ann", &password);
    let shown = page(&server, &mut ann);
    assert_eq!(shown.header("x-frame-options"), Some("DENY"));
    assert_eq!(shown.header("cache-control"), Some("no-store"));
    assert!(
        shown.header("content-security-policy").is_some_and(
            |c| c.contains("default-src 'none'") && c.contains("frame-ancestors 'none'")
        ),
        "{:?}",
        shown.headers
    );
    let pending = row(&shown.body, &gate).unwrap_or_else(|| panic!("{gate}: {}", shown.body));
    for seen in [
        "run_by_tag",
        "environment",
        "<span class=\"tag\">prod</span>",
        "high",
        "demo",
        "pending",
    ] {
        assert!(pending.contains(seen), "{seen} not in {pending}");
    }
    let form = form_of(&shown.body, &gate).expect("a decision form");

    // High risk: confirming needs a reason; then it is confirmed.
    let no_reason = post(&server, &mut ann, &form, "confirm", "");
    assert_eq!(no_reason.status, 400);
    assert!(
        no_reason.body.contains("REASON_REQUIRED"),
        "{}",
        no_reason.body
    );
    let done = post(&server, &mut ann, &form, "confirm", "release window");
    assert_eq!(done.status, 303, "{}", done.body);
    let location = done
        .header("location")
        .expect("back to the page")
        .to_owned();
    assert_eq!(location, format!("{PAGE}?decided={gate}"));
    let after = ann.send(&server, "GET", &location, None);
    assert_eq!(after.status, 200, "{}", after.body);
    assert!(after.body.contains("is now confirmed"), "{}", after.body);
    let decided = row(&after.body, &gate).expect("in recent decisions");
    assert!(
        decided.contains("confirmed")
            && decided.contains("release window")
            && decided.contains("ann <span class=\"muted\">(you)</span>"),
        "{decided}"
    );
    assert!(
        form_of(&after.body, &gate).is_none(),
        "a decided gate has no form"
    );

    // MCP sees it at once, and the requester's retry runs once.
    let over_mcp = listed(&server, &ann_token, &gate);
    assert_eq!(over_mcp["state"], "confirmed", "{over_mcp}");
    assert_eq!(over_mcp["reason"], "release window");
    let mut retry = args.clone();
    retry["gate_id"] = json!(gate);
    answer(&server, &demo, "run_by_tag", retry);
    assert_eq!(
        backend.writes(),
        2,
        "one batch: the two payments smoke scenarios"
    );

    // The other way: a gate open on the page, denied over MCP.
    let (other, _) = open_gate(&server, &demo, "auth");
    let stale = form_of(&page(&server, &mut ann).body, &other).expect("a form for the new gate");
    let denied = answer(
        &server,
        &ann_token,
        "decide_approval",
        json!({"gate_id": other, "decision": "deny", "reason": "freeze"}),
    );
    assert_eq!(denied["state"], "denied");
    let now = page(&server, &mut ann);
    let shown = row(&now.body, &other).expect("in recent decisions");
    assert!(
        shown.contains("denied") && shown.contains("freeze"),
        "{shown}"
    );
    assert!(form_of(&now.body, &other).is_none(), "its form is gone");
    // The stale tab's form is refused with the MCP tool's code.
    let late = post(&server, &mut ann, &stale, "confirm", "too late");
    assert_eq!(late.status, 409, "{}", late.body);
    assert!(late.body.contains("GATE_DECIDED"), "{}", late.body);
    assert_eq!(listed(&server, &ann_token, &other)["state"], "denied");
    assert_eq!(backend.writes(), 2);
}

#[test]
fn the_page_needs_a_sign_in_its_own_csrf_token_and_another_person() {
    let backend = Backend::start();
    let (server, demo) = serve(&backend, &[]);
    let (gate, _) = open_gate(&server, &demo, "payments");

    // Not signed in: the page and its forms send the browser to sign in.
    let mut stranger = Browser::default();
    let post_away = stranger.send(
        &server,
        "POST",
        &format!("{PAGE}/{gate}"),
        Some("decision=deny"),
    );
    assert_eq!(post_away.status, 303);
    let login_path = "/oauth/signin?return_to=%2Fadmin%2Fapprovals";
    assert_eq!(post_away.header("location"), Some(login_path));
    // A wrong password signs nobody in; nor does a return path off the page's scope.
    let login = stranger.send(&server, "GET", login_path, None);
    let wrong = stranger.submit(
        &server,
        &login,
        &[("username", "demo"), ("password", "nope")],
    );
    assert_eq!(wrong.status, 401, "{}", wrong.body);
    let off = stranger.send(
        &server,
        "GET",
        "/oauth/signin?return_to=https%3A%2F%2Fevil.example%2F",
        None,
    );
    assert_eq!(off.status, 400);
    assert_eq!(stranger.send(&server, "GET", PAGE, None).status, 303);
    // The old address moved here, for bookmarks and stale forms alike.
    let old = stranger.send(&server, "GET", "/oauth/approvals", None);
    assert_eq!(old.status, 308);
    assert_eq!(old.header("location"), Some(PAGE));
    let old_form = stranger.send(
        &server,
        "POST",
        &format!("/oauth/approvals/{gate}"),
        Some("decision=deny"),
    );
    assert_eq!(old_form.status, 308);
    assert_eq!(
        old_form.header("location"),
        Some(&*format!("{PAGE}/{gate}"))
    );

    // Signed in as the requester.
    let mut requester = signed_in(&server, "demo", DEMO_PASSWORD);
    let shown = page(&server, &mut requester);
    let form = form_of(&shown.body, &gate).expect("a decision form");
    // Without (or with another session's) CSRF token: refused, nothing decided.
    let bare = (form.0.clone(), Vec::new());
    let forged = post(&server, &mut requester, &bare, "deny", "x");
    assert_eq!(forged.status, 403, "{}", forged.body);
    assert!(
        !forged.body.contains("SELF_APPROVAL"),
        "refused before any rule"
    );
    let other_session = (form.0.clone(), vec![("csrf".to_owned(), "A".repeat(64))]);
    assert_eq!(
        post(&server, &mut requester, &other_session, "deny", "x").status,
        403
    );
    // Their own gate: another person must decide it.
    let own = post(&server, &mut requester, &form, "confirm", "mine");
    assert_eq!(own.status, 403, "{}", own.body);
    assert!(own.body.contains("SELF_APPROVAL"), "{}", own.body);
    assert_eq!(listed(&server, &demo, &gate)["state"], "pending");
    assert_eq!(backend.writes(), 0);
}
