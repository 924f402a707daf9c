//! The discovery tools through the call path, over catalog-300 (300 tools
//! of two plugins, catalog-300-a and -b) served to every tenant and `hello` served to tenant `acme` alone: a
//! search ranks only what its caller may see, a found tool is called at
//! once, and nothing hidden by permission or tenant is ever named, in an
//! answer, a description or an error.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_audit::{AuditEvent, AuditSink, Effect, SinkFuture};
use toolhost_catalog::{Catalog, Catalogs, LoadOptions};
use toolhost_discovery::{DESCRIBE_TOOL, Discovery, FIND_TOOLS, MAX_CANDIDATES};
use toolhost_fixtures::{CATALOG_300_A, CATALOG_300_B, Fixture, HELLO};
use toolhost_invoke::{Answer, CallRequest, InvokeError, Toolhost};
use toolhost_policy::{FixedGrants, Grants};
use toolhost_runtime::{Runtime, RuntimeConfig};
use toolhost_types::{Principal, PrincipalKind};

struct Discard;

impl AuditSink for Discard {
    fn record_with<'a>(&'a self, _: &'a AuditEvent, _: &'a [Effect]) -> SinkFuture<'a> {
        Box::pin(async { Ok(()) })
    }
}

async fn catalog(fixtures: &[Fixture], runtime: &Runtime) -> Arc<Catalog> {
    let dir = tempfile::tempdir().expect("temp dir");
    for f in fixtures {
        toolhost_catalog::pin(Path::new(f.manifest), Path::new(f.component), dir.path())
            .expect("pins");
    }
    let loaded = Catalog::load_dir(dir.path(), runtime, &LoadOptions::default()).await;
    let errors: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
    assert!(errors.is_empty(), "{errors:?}");
    Arc::new(loaded.catalog)
}

/// A host whose every principal holds `permissions`: catalog-300 for
/// every tenant, catalog-300 and hello for `acme`.
async fn host(permissions: &[&str]) -> Toolhost {
    let runtime = Arc::new(Runtime::new(RuntimeConfig::default()).expect("runtime"));
    let everyone = catalog(&[CATALOG_300_A, CATALOG_300_B], &runtime).await;
    let acme = catalog(&[CATALOG_300_A, CATALOG_300_B, HELLO], &runtime).await;
    let grants = Grants::new(
        false,
        permissions.iter().map(|p| p.parse().expect("a permission")),
    );
    let host = Toolhost::new(
        everyone.clone(),
        Arc::new(FixedGrants(grants)),
        runtime,
        Arc::new(Discard),
    );
    let describe = Arc::new(
        |t: &toolhost_invoke::Tool, version: &str| json!({"name": t.spec().name.as_str(), "description": t.spec().description, "catalogVersion": version}),
    );
    let host = (toolhost_discovery::host_tools(describe).into_iter())
        .try_fold(host, Toolhost::with_host_tool)
        .expect("no name collides");
    host.serve_catalogs(Catalogs::new(
        everyone,
        BTreeMap::from([("acme".into(), acme)]),
    ));
    host
}

fn person(tenant: &str) -> Principal {
    Principal {
        subject: "u1".into(),
        kind: PrincipalKind::User,
        name: "ada".into(),
        tenant: tenant.into(),
        client_id: "app".into(),
        scopes: vec!["mcp".into()],
        session: "s".into(),
    }
}

async fn call(
    host: &Toolhost,
    who: &Principal,
    tool: &str,
    args: Value,
) -> Result<Value, InvokeError> {
    let answer = host
        .call(who, CallRequest::new(tool, args), &CancellationToken::new())
        .await?;
    match answer {
        Answer::Output(out) => Ok(out.structured),
        _ => panic!("{tool} answers an output"),
    }
}

/// What `tools/list` shows `who` at `threshold`.
async fn host_listing_under(host: &Toolhost, who: &Principal, threshold: usize) -> Vec<String> {
    let discovery = Discovery {
        threshold,
        ..Discovery::default()
    };
    let listing = host.list(who).await.expect("lists");
    (discovery.listed(listing.tools).iter())
        .map(|t| t.spec().name.to_string())
        .collect()
}

fn names(found: &Value) -> Vec<String> {
    (found["candidates"].as_array().expect("candidates").iter())
        .map(|c| c["name"].as_str().expect("a name").to_owned())
        .collect()
}

#[tokio::test]
async fn a_search_finds_a_tool_the_list_left_out_and_the_tool_is_called_at_once() {
    let host = host(&["billing:*", "crm:*", "hr:*"]).await;
    let who = person("globex");
    let listing = host.list(&who).await.expect("lists");
    let listed: Vec<String> = (Discovery::default().listed(listing.tools).iter())
        .map(|t| t.spec().name.to_string())
        .collect();
    assert_eq!(
        listed,
        [DESCRIBE_TOOL, FIND_TOOLS],
        "60 visible tools: the core set (none visible) and discovery"
    );

    let found = call(
        &host,
        &who,
        FIND_TOOLS,
        json!({"query": "bill a customer: a new invoice"}),
    )
    .await
    .expect("found");
    assert_eq!(names(&found)[0], "billing_create_invoice", "{found}");
    assert!(
        found["scoped_by"]
            .as_object()
            .expect("scoped_by")
            .is_empty()
    );
    let described = call(
        &host,
        &who,
        DESCRIBE_TOOL,
        json!({"name": "billing_create_invoice"}),
    )
    .await
    .expect("described");
    assert_eq!(described["tool"]["name"], "billing_create_invoice");

    // The core set the operator named stays listed, where the caller may see it.
    let core = Discovery {
        core: vec!["billing_get_invoice".into(), "legal_get_contract".into()],
        ..Discovery::default()
    };
    let listing = host.list(&who).await.expect("lists");
    let listed: Vec<String> = (core.listed(listing.tools).iter())
        .map(|t| t.spec().name.to_string())
        .collect();
    assert_eq!(listed, ["billing_get_invoice", DESCRIBE_TOOL, FIND_TOOLS]);

    // A catalog at the threshold is listed whole, without the discovery tools.
    let few = host_listing_under(&host, &who, 60).await;
    assert_eq!(few.len(), 60, "{few:?}");
    assert!(!few.iter().any(|n| n == FIND_TOOLS || n == DESCRIBE_TOOL));

    let done = call(
        &host,
        &who,
        "billing_create_invoice",
        json!({"customer": "Acme", "amount": "10"}),
    )
    .await
    .expect("called");
    assert_eq!(done["tool"], "billing_create_invoice", "{done}");
}

#[tokio::test]
async fn a_search_answers_in_the_resolvers_shape_pinned_capped_and_never_picked() {
    let host = host(&["billing:*", "crm:*"]).await;
    let who = person("globex");
    let found = call(
        &host,
        &who,
        FIND_TOOLS,
        json!({"query": "invoice", "limit": 25}),
    )
    .await
    .expect("found");
    assert_eq!(
        found["reason"], "ambiguous",
        "five invoice tools fit about as well: {found}"
    );
    assert!(
        found["ask_user"]
            .as_str()
            .expect("a question")
            .starts_with("Which tool for \"invoice\"?")
    );
    assert!(names(&found).len() <= MAX_CANDIDATES);
    let pinned = call(
        &host,
        &who,
        FIND_TOOLS,
        json!({"query": "customer", "tag": "invoicing", "limit": 25}),
    )
    .await
    .expect("found");
    assert_eq!(pinned["scoped_by"], json!({"tag": "invoicing"}));
    assert!(names(&pinned).iter().all(|n| n.starts_with("billing_") && n.ends_with("invoice") || n.ends_with("invoices")), "{pinned}");
    let none = call(
        &host,
        &who,
        FIND_TOOLS,
        json!({"query": "teleport a unicorn"}),
    )
    .await
    .expect("answered");
    assert_eq!(
        (none["reason"].as_str(), names(&none).len()),
        (Some("not_found"), 0)
    );
    let too_many = call(&host, &who, FIND_TOOLS, json!({"query": "x", "limit": 26})).await;
    assert!(
        matches!(too_many, Err(InvokeError::InvalidArguments { .. })),
        "{too_many:?}"
    );
}

#[tokio::test]
async fn nothing_hidden_by_permission_or_tenant_is_named_in_an_answer_a_description_or_an_error() {
    let host = host(&["billing:read", "hello:read", "hr:read"]).await;
    let (globex, acme) = (person("globex"), person("acme"));
    // Every tool of every tenant's catalog, and what each caller may see:
    // hello is acme's alone (globex's principal holds its permission, yet
    // never hears of it); writes and every other domain are hidden by
    // permission from both.
    let every: Vec<String> = (host.catalogs().all())
        .flat_map(|c| {
            c.tools()
                .map(|t| t.spec().name.to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let queries = [
        "greet someone by name",
        "add numbers",
        "count the words of a text",
        "create an invoice",
        "book time off",
        "run payroll",
        "delete an employee",
        "open a support ticket",
        "refund",
        "word stats",
        "hello",
        "hr",
        "crm",
        "vacation",
        "list",
    ];
    for who in [&globex, &acme] {
        let visible: Vec<String> = (host.list(who).await.expect("lists").tools.iter())
            .map(|t| t.spec().name.to_string())
            .collect();
        assert_eq!(visible.iter().any(|n| n == "greet"), who.tenant == "acme");
        assert!(
            !visible
                .iter()
                .any(|n| n.starts_with("crm_") || n.starts_with("hr_create"))
        );
        let hidden: Vec<&String> = every.iter().filter(|n| !visible.contains(n)).collect();
        for q in queries {
            for pin in [
                json!({}),
                json!({"plugin": "hello"}),
                json!({"plugin": "catalog-300-a"}),
                json!({"tag": "hr"}),
            ] {
                let mut args = json!({"query": q, "limit": 25});
                args.as_object_mut()
                    .expect("an object")
                    .extend(pin.as_object().expect("an object").clone());
                let found = call(&host, who, FIND_TOOLS, args).await.expect("answered");
                for name in names(&found) {
                    assert!(
                        visible.contains(&name),
                        "{} found hidden {name} for {q:?}",
                        who.tenant
                    );
                }
                // Not in any word of the answer but the caller's own echoed query.
                let told = format!("{} {}", found["candidates"], found["ask_user"]).replace(q, "");
                let words: Vec<&str> = told
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .collect();
                for name in &hidden {
                    assert!(
                        !words.contains(&name.as_str()),
                        "{} heard of {name} for {q:?}: {told}",
                        who.tenant
                    );
                }
            }
        }
    }
    // A hidden tool is described exactly as one that exists nowhere.
    let unknown = call(
        &host,
        &globex,
        DESCRIBE_TOOL,
        json!({"name": "no_such_tool"}),
    )
    .await
    .expect_err("not found");
    for (who, name) in [
        (&globex, "greet"),
        (&globex, "hr_create_leave_request"),
        (&acme, "crm_get_contact"),
    ] {
        let e = call(&host, who, DESCRIBE_TOOL, json!({"name": name}))
            .await
            .expect_err("not found");
        assert_eq!(e.code(), unknown.code(), "{name}");
        assert_eq!(
            e.to_string().replace(name, "no_such_tool"),
            unknown.to_string(),
            "{name}"
        );
    }
    let seen = call(&host, &acme, DESCRIBE_TOOL, json!({"name": "greet"}))
        .await
        .expect("acme sees greet");
    assert_eq!(seen["tool"]["name"], "greet");
}
