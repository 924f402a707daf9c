//! The console at real volume (issue 45), in headless Chromium against the
//! real binary: 250 audit rows, 150 runs and 120 authoring sessions, more
//! than a page of each, paged to the last page and back with no row
//! missed or shown twice; a
//! runs filter finds a run older than the first page; a tenant admin adds
//! a user with a password on the People page, who then signs in through
//! the sign-in form, and sets another's password; the host's operators
//! see every tenant on the Tenants page, and no other tenant's admin does;
//! 61 users page by name and are found by the start of a name, 61
//! service clients page newest first, only the tenant's own, and 102
//! tenants page by name.
//!
//! The rows are real: each is a call over MCP (a run queued by
//! `start_exploration` is a run row and an audit row; a `greet` an audit
//! row). No worker runs them (`--run-workers 0`), so every run stays
//! queued and the list holds still while it is paged.

mod support;

use std::collections::HashSet;

use serde_json::{Value, json};
use support::bench::answer;
use support::browser::Browser;
use support::console::{
    acme_admin, add_user, cli, id, no_console_errors, only_refusals, photograph,
};
use support::oauth::user_token;
use support::{DEMO_PASSWORD, Server};
use toolhost_fixtures::HELLO;

/// Runs queued, and `greet` calls made besides (one audit row each).
const RUNS: usize = 150;
const GREETS: usize = 100;

/// The ids of the rows of the list shown (`tbody tr`), in page order.
fn row_ids(browser: &Browser) -> Vec<String> {
    let ids =
        browser.execute("return Array.from(document.querySelectorAll('tbody tr')).map(r => r.id)");
    ids.as_array()
        .unwrap_or_else(|| panic!("row ids: {ids}"))
        .iter()
        .map(|i| i.as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The address of the pager's link `rel` (`next`: older, `prev`: newer),
/// if the page has one.
fn link(browser: &Browser, rel: &str) -> Option<String> {
    let href = browser.execute(&format!(
        "const a = document.querySelector('nav.pager a[rel={rel}]'); return a ? a.getAttribute('href') : null"
    ));
    href.as_str().map(str::to_owned)
}

/// Follows the pager's `rel` link: the address it went to.
fn follow(browser: &Browser, rel: &str) -> String {
    let href = link(browser, rel).unwrap_or_else(|| panic!("no {rel} link:\n{}", browser.text()));
    browser.click(&format!("nav.pager a[rel={rel}]"));
    browser.wait_for_path(&href);
    href
}

/// Pages from the page shown to the oldest and back to the newest: the
/// rows of each page, oldest-ward, and checks that going back shows the
/// same pages. Each address is stable: opened again, it shows its page.
fn page_through(browser: &mut Browser, server: &Server, what: &str) -> Vec<Vec<String>> {
    let mut pages = vec![row_ids(browser)];
    let mut addresses = vec![browser.path()];
    assert!(
        link(browser, "prev").is_none(),
        "{what}: nothing newer than the newest"
    );
    while link(browser, "next").is_some() {
        addresses.push(follow(browser, "next"));
        pages.push(row_ids(browser));
        no_console_errors(browser, &format!("{what}: page {}", pages.len()));
    }
    let mut back = vec![row_ids(browser)];
    while link(browser, "prev").is_some() {
        follow(browser, "prev");
        back.insert(0, row_ids(browser));
    }
    assert_eq!(
        back, pages,
        "{what}: the same pages, paged back to the newest"
    );
    let middle = &addresses[1];
    browser.goto(server, middle);
    assert_eq!(
        row_ids(browser),
        pages[1],
        "{what}: {middle} shows its page again"
    );
    pages
}

/// Every row of `pages` once: their ids, in order.
fn once_each(pages: &[Vec<String>], what: &str) -> Vec<String> {
    let all: Vec<String> = pages.iter().flatten().cloned().collect();
    let distinct: HashSet<&String> = all.iter().collect();
    assert_eq!(distinct.len(), all.len(), "{what}: a row shown twice");
    all
}

/// Queues `RUNS` runs as demo, the oldest of `word_stats`, the rest of
/// `greet`, and makes `GREETS` calls: their run ids, oldest first.
fn seeded(server: &Server, token: &str) -> Vec<String> {
    let mut runs = Vec::new();
    for i in 0..RUNS {
        let (tool, arguments) = if i == 0 {
            ("word_stats", json!({"text": "a needle in a haystack"}))
        } else {
            ("greet", json!({"name": format!("run {i}")}))
        };
        let started = answer(
            server,
            token,
            "start_exploration",
            json!({"tool": tool, "arguments": arguments}),
        );
        let run = started["run_id"]
            .as_str()
            .unwrap_or_else(|| panic!("a run: {started}"));
        runs.push(run.to_owned());
    }
    for i in 0..GREETS {
        answer(server, token, "greet", json!({"name": format!("call {i}")}));
    }
    runs
}

#[test]
fn audit_rows_and_runs_page_to_the_end_and_back_and_a_filter_finds_an_old_run() {
    let server = Server::start_with(
        &[HELLO],
        &[
            "--run-workers",
            "0",
            "--runs-per-tenant",
            "1000",
            "--runs-per-principal",
            "1000",
            // 250 calls in seconds, 150 of them writes: more than a
            // person's agent makes in a minute, and none of the test.
            "--rate-limit-per-principal",
            "10000",
            "--rate-limit-writes",
            "10000",
        ],
    );
    let demo = user_token(&server, "demo", DEMO_PASSWORD);
    let runs = seeded(&server, &demo);
    let audit_rows = cli(
        &server,
        &["audit", "search", "--tenant", "demo", "--limit", "100000"],
    )
    .lines()
    .skip(1)
    .count();
    assert!(audit_rows >= RUNS + GREETS, "{audit_rows} rows");

    let mut browser = Browser::start();
    browser.sign_in(&server, "demo", DEMO_PASSWORD);

    // The audit trail: 100 a page, to the oldest row and back.
    browser.goto(&server, "/admin/audit");
    let pages = page_through(&mut browser, &server, "audit");
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert!(
        pages.len() >= 3 && sizes[..sizes.len() - 1].iter().all(|n| *n == 100),
        "{sizes:?}"
    );
    let rows = once_each(&pages, "audit");
    assert_eq!(rows.len(), audit_rows, "every row of demo's, once");
    photograph(&browser, "audit-paged");

    // A search pages too, keeping its filters: the 100 greets and the
    // greet runs' rows are `start_exploration`'s and `greet`'s.
    browser.goto(&server, "/admin/audit?tool=start_exploration");
    let started = once_each(&page_through(&mut browser, &server, "a search"), "a search");
    assert_eq!(started.len(), RUNS, "each run's row");
    let address = browser.path();
    assert!(
        address.contains("tool=start_exploration&before="),
        "the filter is kept: {address}"
    );

    // The runs: 50 a page, newest first, to the oldest and back.
    browser.goto(&server, "/admin/runs");
    let pages = page_through(&mut browser, &server, "runs");
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [50, 50, 50]);
    let paged_runs = once_each(&pages, "runs");
    let mut sorted = paged_runs.clone();
    sorted.sort();
    let mut queued = runs.clone();
    queued.sort();
    assert_eq!(sorted, queued, "every run once");
    photograph(&browser, "runs-paged");
    no_console_errors(&browser, "paging the runs");

    // The oldest run, 149 runs back, is found by its tool.
    browser.goto(&server, "/admin/runs");
    assert_eq!(browser.count(&id(&runs[0])), 0, "not on the first page");
    browser.fill("#filter-tool", "word");
    browser.click("form.filters button[type=submit]");
    browser.wait_for_path("/admin/runs?state=&plugin=&tool=word");
    assert_eq!(
        row_ids(&browser),
        [runs[0].clone()],
        "the one run of word_stats"
    );
    assert!(browser.find_text(&id(&runs[0])).contains("word_stats"));
    no_console_errors(&browser, "filtering the runs");

    // Over MCP, list_explorations pages the same rows.
    let listed = answer(&server, &demo, "list_explorations", json!({"limit": 100}));
    let next = listed["next_cursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let rest = answer(
        &server,
        &demo,
        "list_explorations",
        json!({"limit": 100, "before": next}),
    );
    let ids = |v: &Value| -> Vec<String> {
        v["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(|r| r["run_id"].as_str().expect("an id").to_owned())
            .collect()
    };
    let mut both = ids(&listed);
    both.extend(ids(&rest));
    assert_eq!(both, paged_runs, "the same runs in the same order");
    assert_eq!(rest["next_cursor"], Value::Null, "the last page");
}

#[test]
fn a_tenant_admin_adds_a_user_who_signs_in_and_sets_another_users_password() {
    let server = Server::start(&[]);
    cli(&server, &["role", "add", "approvers", "--tenant", "demo"]);
    let vic = add_user(&server, "vic", "demo");

    // demo administers the demo tenant: People adds wes, an approver.
    let mut admin = Browser::start();
    admin.sign_in(&server, "demo", DEMO_PASSWORD);
    admin.goto(&server, "/admin/people");
    admin.fill("#new-username", "wes");
    admin.fill("#new-password", "a long enough password");
    admin.select("#new-role", "approvers");
    admin.click("form.add-user button[type=submit]");
    admin.wait_for_path("/admin/people?done=added");
    assert!(admin.find_text(".notice").starts_with("The user is added"));
    let wes = admin.find_text(&id("user-wes"));
    assert!(
        wes.contains("approvers") && wes.contains("enabled"),
        "{wes}"
    );
    no_console_errors(&admin, "adding wes");

    // A taken name is refused, and nothing is added.
    admin.fill("#new-username", "vic");
    admin.fill("#new-password", "another long password");
    admin.click("form.add-user button[type=submit]");
    admin.wait_for(|b| b.count(".error") > 0, "the refusal");
    assert!(
        admin.find_text(".error").contains("taken"),
        "{}",
        admin.text()
    );
    assert_eq!(admin.count(&id("user-vic")), 1);
    only_refusals(&admin, 409, "adding a taken name");

    // vic's password, set by the admin.
    admin.goto(&server, "/admin/people");
    let form = "form[action=\"/admin/people/users/vic/password\"]";
    admin.click(&format!("{} summary", id("user-vic")));
    admin.fill(
        &format!("{form} input[name=password]"),
        "vic's new password",
    );
    admin.click(&format!("{form} button[type=submit]"));
    admin.wait_for_path("/admin/people?done=password-set");
    no_console_errors(&admin, "setting vic's password");

    // Each change is an audit row of demo's, through the console; no row
    // holds a password.
    admin.goto(&server, "/admin/audit?client=toolhost-console");
    let rows = admin.texts("tbody tr[id^=\"call-\"]");
    for tool in ["add_user", "set_password"] {
        assert!(
            rows.iter()
                .any(|r| r.contains(tool) && r.contains("executed")),
            "no {tool} row: {rows:#?}"
        );
    }
    assert!(!admin.text().contains("long enough password"));

    // wes signs in with the password the admin set; so does vic, with his new one.
    let mut wes = Browser::start();
    wes.sign_in(&server, "wes", "a long enough password");
    assert_eq!(
        wes.count("nav a[href=\"/admin/approvals\"]"),
        0,
        "approvers permit nothing yet"
    );
    no_console_errors(&wes, "wes's inbox");
    drop(wes);
    let mut vics = Browser::start();
    vics.sign_in(&server, "vic", "vic's new password");
    drop(vics);
    assert_ne!(vic, "vic's new password");

    // demo's admins are the host's operators (demo is the operator
    // tenant): Tenants lists every tenant with its people; acme's admin
    // has no such page.
    let ada = acme_admin(&server);
    admin.goto(&server, "/admin/tenants");
    let demo = admin.find_text(&id("tenant-demo"));
    assert!(demo.contains("operators"), "{demo}");
    let acme = admin.find_text(&id("tenant-acme"));
    assert!(
        acme.starts_with("acme\t1\t0\t0") || acme.contains("acme 1 0 0"),
        "{acme:?}"
    );
    no_console_errors(&admin, "the tenants page");
    admin.sign_out();
    admin.sign_in(&server, "ada", &ada);
    assert_eq!(admin.count("nav a[href=\"/admin/tenants\"]"), 0);
    assert_eq!(admin.fetch("/admin/tenants").status, 403);
}

/// Users and service clients added to demo: more than a page of each.
const PEOPLE: usize = 60;

/// Tenants added besides demo and acme: with them, more than a page.
const TENANTS: usize = 100;

#[test]
fn users_service_clients_and_tenants_page_to_the_end_and_back_and_a_name_typed_finds_its_user() {
    let server = Server::start(&[]);
    cli(&server, &["role", "add", "approvers", "--tenant", "demo"]);
    for i in 0..PEOPLE {
        add_user(&server, &format!("person-{i:02}"), "demo");
        let name = format!("robot {i:02}");
        cli(
            &server,
            &["client", "add-service", &name, "--tenant", "demo"],
        );
    }
    // Another tenant's people and service client, never on demo's pages.
    acme_admin(&server);
    let added = cli(
        &server,
        &["client", "add-service", "acme robot", "--tenant", "acme"],
    );
    let acme_robot = added
        .lines()
        .find_map(|l| l.strip_prefix("client_id: "))
        .unwrap_or_else(|| panic!("a client id: {added}"))
        .trim()
        .to_owned();

    let mut admin = Browser::start();
    admin.sign_in(&server, "demo", DEMO_PASSWORD);
    admin.goto(&server, "/admin/people");
    let pages = page_through(&mut admin, &server, "users");
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [50, 11]);
    let users = once_each(&pages, "users");
    let mut expected: Vec<String> = (0..PEOPLE).map(|i| format!("user-person-{i:02}")).collect();
    expected.push("user-demo".into());
    expected.sort();
    assert_eq!(users, expected, "demo's users, by name, and nobody else");
    photograph(&admin, "people-paged");
    no_console_errors(&admin, "paging the users");

    // The start of a name finds its users, past the first page.
    admin.goto(&server, "/admin/people");
    admin.fill("#find", "person-5");
    admin.click("form[role=search] button[type=submit]");
    admin.wait_for_path("/admin/people?find=person-5");
    let found: Vec<String> = (50..60).map(|i| format!("user-person-{i}")).collect();
    assert_eq!(row_ids(&admin), found);
    // A role given by a name typed: someone the first page does not show.
    let grant = "form[action=\"/admin/people/roles/approvers/grant\"]";
    admin.fill(&format!("{grant} input[name=username]"), "person-59");
    admin.click(&format!("{grant} button[type=submit]"));
    admin.wait_for_path("/admin/people?done=granted");
    admin.goto(&server, "/admin/people?find=person-59");
    assert!(admin.find_text(&id("user-person-59")).contains("approvers"));
    // acme's user is no name to give a demo role to.
    admin.fill(&format!("{grant} input[name=username]"), "ada");
    admin.click(&format!("{grant} button[type=submit]"));
    admin.wait_for(|b| b.count(".error") > 0, "the refusal");
    assert!(
        admin.find_text(".error").contains("no user"),
        "{}",
        admin.text()
    );
    only_refusals(&admin, 404, "granting to another tenant's user");

    // The service clients, newest first, a page at a time; one revoked
    // from the second page.
    admin.goto(&server, "/admin/people/clients");
    let pages = page_through(&mut admin, &server, "service clients");
    // Demo's robots and the harness's own client (`e2e`, the oldest).
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [50, 11]);
    let clients = once_each(&pages, "service clients");
    assert!(
        !clients.contains(&format!("client-{acme_robot}")),
        "demo's service clients, not acme's"
    );
    photograph(&admin, "clients-paged");
    no_console_errors(&admin, "paging the service clients");
    let oldest = clients[clients.len() - 2].clone();
    let client_id = oldest.strip_prefix("client-").expect("a client row");
    admin.goto(&server, "/admin/people/clients");
    follow(&admin, "next");
    let revoke = format!("form[action=\"/admin/people/clients/{client_id}/revoke\"] button");
    admin.click(&revoke);
    admin.wait_for_path("/admin/people/clients?done=client-revoked");
    assert!(
        admin
            .find_text(".notice")
            .starts_with("The client is revoked")
    );
    let listed = cli(&server, &["client", "list"]);
    let row = listed
        .lines()
        .find(|l| l.contains(client_id))
        .unwrap_or_else(|| panic!("{client_id} listed: {listed}"));
    assert!(row.contains("revoked"), "{row}");

    // More tenants than a page: the operators' list pages by name both ways.
    for i in 0..TENANTS {
        cli(&server, &["tenant", "add", &format!("t{i:03}")]);
    }
    admin.goto(&server, "/admin/tenants");
    let pages = page_through(&mut admin, &server, "tenants");
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [100, 2]);
    let mut expected: Vec<String> = (0..TENANTS).map(|i| format!("tenant-t{i:03}")).collect();
    expected.extend(["tenant-acme".into(), "tenant-demo".into()]);
    expected.sort();
    assert_eq!(once_each(&pages, "tenants"), expected);
    no_console_errors(&admin, "paging the tenants");
}

/// Authoring sessions opened over MCP.
const SESSIONS: usize = 120;

#[test]
fn authoring_sessions_page_to_the_end_and_back_as_list_authoring_sessions_pages_them() {
    let server = Server::start_with(
        &[HELLO],
        &[
            "--rate-limit-per-principal",
            "10000",
            "--rate-limit-writes",
            "10000",
        ],
    );
    let demo = user_token(&server, "demo", DEMO_PASSWORD);
    let mut opened = Vec::new();
    for _ in 0..SESSIONS {
        let s = answer(
            &server,
            &demo,
            "create_authoring_session",
            json!({"subject": "plugin:hello"}),
        );
        opened.push(s["session_id"].as_str().expect("a session").to_owned());
    }

    let mut browser = Browser::start();
    browser.sign_in(&server, "demo", DEMO_PASSWORD);
    browser.goto(&server, "/admin/authoring");
    let pages = page_through(&mut browser, &server, "authoring");
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [50, 50, 20]);
    let shown = once_each(&pages, "authoring");
    let (mut every, mut all) = (shown.clone(), opened.clone());
    every.sort();
    all.sort();
    assert_eq!(every, all, "every session once");
    photograph(&browser, "authoring-paged");
    no_console_errors(&browser, "paging the sessions");

    // Over MCP, the same order a page at a time by the answers' cursors.
    let mut listed = Vec::new();
    let mut args = json!({"limit": 100});
    loop {
        let page = answer(&server, &demo, "list_authoring_sessions", args);
        for s in page["sessions"].as_array().expect("sessions") {
            listed.push(s["session_id"].as_str().expect("an id").to_owned());
        }
        match page["older"].as_str() {
            Some(older) => args = json!({"limit": 100, "before": older}),
            None => break,
        }
    }
    assert_eq!(listed, shown, "the same sessions in the same order");
}
