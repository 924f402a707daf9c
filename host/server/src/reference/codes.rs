//! `docs/reference/errors.md`: every stable error code the host's error
//! enums give, read from their `code()` methods: each string a method
//! returns, with what leads its match to it (the variant an arm names, or
//! the method an arm's guard or an `if` asks) and that item's doc.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{doc, source};

/// What leads a `code()` method to a code: a variant `Type::Variant` its
/// match arm names, or a method its guard or `if` calls.
#[derive(Clone)]
enum Step {
    Variant(String, String),
    Method(String),
}

/// Where a code comes from, and what that is.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Origin {
    path: String,
    doc: String,
}

/// One crate's documented items: enums (their docs and their variants')
/// and methods (by name, `None` where several types have one), and the
/// names it imports from other crates of the host.
#[derive(Default)]
struct Crate {
    name: String,
    enums: BTreeMap<String, (String, BTreeMap<String, String>)>,
    methods: BTreeMap<String, Option<(String, String)>>,
    imports: BTreeMap<String, String>,
}

/// The Rust files under `dir`, in a stable order.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every crate under `host/` (`toolhost_<dir>`) with its parsed sources.
fn sources() -> Vec<(String, Vec<syn::File>)> {
    let root = super::repo();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("host"))
        .expect("host/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let name = dir.file_name().expect("a name").to_string_lossy();
            let mut files = Vec::new();
            rust_files(&dir.join("src"), &mut files);
            let parsed = files
                .iter()
                .map(|f| {
                    source(
                        &f.strip_prefix(&root)
                            .expect("in the repo")
                            .to_string_lossy(),
                    )
                })
                .collect();
            (format!("toolhost_{}", name.replace('-', "_")), parsed)
        })
        .collect()
}

/// The documented items of one crate's files.
fn index(name: &str, files: &[syn::File]) -> Crate {
    let mut krate = Crate {
        name: name.to_owned(),
        ..Crate::default()
    };
    for item in files.iter().flat_map(|f| &f.items) {
        match item {
            syn::Item::Enum(e) => {
                let variants = e.variants.iter();
                let variants = variants.map(|v| (v.ident.to_string(), doc(&v.attrs)));
                krate
                    .enums
                    .insert(e.ident.to_string(), (doc(&e.attrs), variants.collect()));
            }
            syn::Item::Impl(imp) => {
                let ty = type_name(&imp.self_ty);
                for f in imp.items.iter().filter_map(|i| match i {
                    syn::ImplItem::Fn(f) => Some(f),
                    _ => None,
                }) {
                    let entry = (format!("{ty}::{}()", f.sig.ident), doc(&f.attrs));
                    let slot = krate.methods.entry(f.sig.ident.to_string());
                    slot.and_modify(|m| *m = None).or_insert(Some(entry));
                }
            }
            syn::Item::Use(u) => imports(&u.tree, None, &mut krate.imports),
            _ => {}
        }
    }
    krate
}

/// The names a `use` of another host crate brings in, and that crate.
fn imports(tree: &syn::UseTree, from: Option<&str>, out: &mut BTreeMap<String, String>) {
    match tree {
        syn::UseTree::Path(p) => {
            let first = p.ident.to_string();
            let from = from.or_else(|| first.starts_with("toolhost_").then_some(first.as_str()));
            if let Some(krate) = from {
                imports(&p.tree, Some(krate), out);
            }
        }
        syn::UseTree::Name(n) => {
            if let Some(krate) = from {
                out.insert(n.ident.to_string(), krate.to_owned());
            }
        }
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| imports(t, from, out)),
        _ => {}
    }
}

fn type_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().expect("a type").ident.to_string(),
        _ => String::new(),
    }
}

/// The body of each inherent `code(&self) -> &str` method, with its type.
fn code_methods(files: &[syn::File]) -> Vec<(String, &syn::Block)> {
    let mut methods = Vec::new();
    for item in files.iter().flat_map(|f| &f.items) {
        let syn::Item::Impl(imp) = item else { continue };
        if imp.trait_.is_some() {
            continue;
        }
        for i in &imp.items {
            if let syn::ImplItem::Fn(f) = i
                && f.sig.ident == "code"
                && matches!(&f.sig.output, syn::ReturnType::Type(_, t) if matches!(**t, syn::Type::Reference(_)))
            {
                methods.push((type_name(&imp.self_ty), &f.block));
            }
        }
    }
    methods
}

/// The variants a pattern names, outermost first.
fn variants(pat: &syn::Pat, out: &mut Vec<Step>) {
    let mut path = |p: &syn::Path| {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let [.., ty, variant] = segs.as_slice() {
            out.push(Step::Variant(ty.clone(), variant.clone()));
        }
    };
    match pat {
        syn::Pat::TupleStruct(p) => {
            path(&p.path);
            p.elems.iter().for_each(|e| variants(e, out));
        }
        syn::Pat::Struct(p) => {
            path(&p.path);
            p.fields.iter().for_each(|f| variants(&f.pat, out));
        }
        syn::Pat::Path(p) => path(&p.path),
        syn::Pat::Reference(p) => variants(&p.pat, out),
        syn::Pat::Paren(p) => variants(&p.pat, out),
        syn::Pat::Ident(syn::PatIdent {
            subpat: Some((_, sub)),
            ..
        }) => variants(sub, out),
        _ => {}
    }
}

/// The first method a condition calls (`e.is_busy()` → `is_busy`).
fn asks(cond: &syn::Expr) -> Option<Step> {
    match cond {
        syn::Expr::MethodCall(m) => asks(&m.receiver).or(Some(Step::Method(m.method.to_string()))),
        syn::Expr::Unary(u) => asks(&u.expr),
        syn::Expr::Paren(p) => asks(&p.expr),
        _ => None,
    }
}

/// A code and the steps that lead to it, innermost last.
type Found = Vec<(String, Vec<Step>)>;

/// Each string literal `expr` evaluates to or returns.
fn returned(expr: &syn::Expr, steps: &[Step], out: &mut Found) {
    let with = |more: &[Step]| [steps, more].concat();
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => out.push((s.value(), steps.to_vec())),
        syn::Expr::Match(m) => {
            for arm in &m.arms {
                let guard = arm.guard.as_ref().and_then(|(_, g)| asks(g));
                let cases: Vec<&syn::Pat> = match &arm.pat {
                    syn::Pat::Or(or) => or.cases.iter().collect(),
                    pat => vec![pat],
                };
                for pat in cases {
                    let mut named = Vec::new();
                    variants(pat, &mut named);
                    named.extend(guard.clone());
                    returned(&arm.body, &with(&named), out);
                }
            }
        }
        syn::Expr::Block(b) => block(&b.block, steps, out),
        syn::Expr::If(i) => {
            let asked: Vec<Step> = asks(&i.cond).into_iter().collect();
            block(&i.then_branch, &with(&asked), out);
            if let Some((_, e)) = &i.else_branch {
                returned(e, steps, out);
            }
        }
        syn::Expr::Return(syn::ExprReturn { expr: Some(e), .. }) => returned(e, steps, out),
        syn::Expr::Paren(p) => returned(&p.expr, steps, out),
        _ => {}
    }
}

fn block(b: &syn::Block, steps: &[Step], out: &mut Found) {
    for stmt in &b.stmts {
        if let syn::Stmt::Expr(e, _) = stmt {
            returned(e, steps, out);
        }
    }
}

/// Every code with the places it comes from.
fn codes() -> BTreeMap<String, Vec<Origin>> {
    let sources = sources();
    let crates: Vec<Crate> = sources.iter().map(|(n, f)| index(n, f)).collect();
    // The crate that defines `ty` as seen from `from`: itself, the crate it
    // imports `ty` from, or the only crate defining it.
    let home = |from: &Crate, ty: &str| -> Option<&Crate> {
        let defines = |c: &&Crate| c.enums.contains_key(ty);
        if from.enums.contains_key(ty) {
            return crates.iter().find(|c| c.name == from.name);
        }
        if let Some(name) = from.imports.get(ty) {
            return crates.iter().find(|c| &c.name == name).filter(defines);
        }
        let mut all = crates.iter().filter(defines);
        all.next().filter(|_| all.next().is_none())
    };
    let mut codes: BTreeMap<String, Vec<Origin>> = BTreeMap::new();
    for ((_, files), krate) in sources.iter().zip(&crates) {
        for (ty, body) in code_methods(files) {
            let mut found = Vec::new();
            block(body, &[], &mut found);
            for (code, steps) in found {
                let origin = steps
                    .iter()
                    .rev()
                    .find_map(|step| match step {
                        Step::Variant(t, v) => {
                            let t = if t == "Self" { &ty } else { t };
                            let c = home(krate, t)?;
                            let doc = c.enums.get(t)?.1.get(v)?.clone();
                            Some(Origin {
                                path: format!("{}::{t}::{v}", c.name),
                                doc,
                            })
                        }
                        Step::Method(m) => {
                            let (path, doc) = krate.methods.get(m)?.clone()?;
                            Some(Origin {
                                path: format!("{}::{path}", krate.name),
                                doc,
                            })
                        }
                    })
                    .unwrap_or_else(|| Origin {
                        path: format!("{}::{ty}", krate.name),
                        doc: krate
                            .enums
                            .get(&ty)
                            .map(|e| e.0.clone())
                            .unwrap_or_default(),
                    });
                let origins = codes.entry(code).or_default();
                if !origins.contains(&origin) {
                    origins.push(origin);
                }
            }
        }
    }
    codes.values_mut().for_each(|o| o.sort());
    codes
}

fn render() -> String {
    let mut page = String::from(
        "# Error codes\n\n\
         A tool call, prompt or resource that fails answers a normal result with `isError: true` \
         and `structuredContent.error = {code, message}`; intake, reviews and the command line \
         refuse with the same codes. The codes are stable: a client may act on them. This page \
         is every code the host's error enums give (their `code()` methods), each with what \
         gives it. [Answers and errors](../clients/answers.md) says how they reach a client, \
         with the HTTP and JSON-RPC errors of requests that address nothing valid.\n",
    );
    for (code, origins) in codes() {
        page.push_str(&format!("\n## `{code}`\n\n"));
        for o in origins {
            let doc = if o.doc.is_empty() {
                String::new()
            } else {
                format!(": {}", o.doc)
            };
            page.push_str(&format!("- `{}`{doc}\n", o.path));
        }
    }
    page
}

#[test]
fn the_error_code_reference_is_every_code_of_the_error_enums() {
    let rendered = render();
    for code in [
        "INVALID_ARGUMENTS",
        "NAME_TAKEN",
        "TIMEOUT",
        "UNSIGNED",
        "GATE_PENDING",
    ] {
        assert!(
            rendered.contains(&format!("## `{code}`")),
            "{code} is missing"
        );
    }
    super::check("docs/reference/errors.md", &rendered);
}
