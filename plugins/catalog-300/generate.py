#!/usr/bin/env python3
"""Writes tools.json and the manifests of catalog-300-a and catalog-300-b.

A business suite of 15 domains, 4 kinds of thing each, 5 actions on each
kind: 300 tools, the shape of a large real catalog (many near-namesakes,
CRUD verbs everywhere), for progressive discovery's tests and its
evaluation set (host/discovery/tests/evaluation.rs). The first 8 domains
are plugin catalog-300-a, the other 7 catalog-300-b (a host serves at
most 256 tools of one plugin). Run it from anywhere; it rewrites
tools.json next to itself and ../catalog-300-{a,b}/toolhost.toml. Tags
carry the words people use that the names do not (vacation for leave
requests), as a plugin author would.
"""
import json
import os

# domain: (permission resource, [(singular, plural, tags, fields, filters)])
DOMAINS = {
    "crm": ("crm", [
        ("contact", "contacts", ["person", "customer", "people"], ["email", "phone", "company"], ["company", "owner"]),
        ("account", "accounts", ["company", "customer", "organisation"], ["industry", "owner", "address"], ["industry", "owner"]),
        ("lead", "leads", ["prospect", "sales"], ["source", "score", "email"], ["source", "score"]),
        ("opportunity", "opportunities", ["deal", "pipeline", "sales"], ["amount", "stage", "close_date"], ["stage", "owner"]),
    ]),
    "billing": ("billing", [
        ("invoice", "invoices", ["bill", "invoicing", "charge"], ["customer", "amount", "due_date"], ["customer", "status"]),
        ("payment", "payments", ["charge", "card", "transaction"], ["invoice", "amount", "method"], ["customer", "method"]),
        ("refund", "refunds", ["money-back", "reimburse", "chargeback"], ["payment", "amount", "reason"], ["customer", "reason"]),
        ("subscription", "subscriptions", ["plan", "recurring", "renewal"], ["customer", "plan", "renews_on"], ["plan", "status"]),
    ]),
    "helpdesk": ("helpdesk", [
        ("ticket", "tickets", ["issue", "support", "case", "complaint"], ["subject", "priority", "requester"], ["status", "priority"]),
        ("ticket_comment", "ticket comments", ["reply", "note", "support"], ["ticket", "body", "public"], ["ticket", "author"]),
        ("sla_policy", "SLA policies", ["service-level", "response-time"], ["priority", "response_hours", "resolve_hours"], ["priority"]),
        ("support_queue", "support queues", ["inbox", "routing", "team"], ["name", "agents", "channel"], ["channel"]),
    ]),
    "hr": ("hr", [
        ("employee", "employees", ["staff", "person", "people", "worker"], ["name", "department", "manager"], ["department", "manager"]),
        ("leave_request", "leave requests", ["vacation", "holiday", "time-off", "absence", "pto", "sick"], ["employee", "start_date", "end_date"], ["employee", "status"]),
        ("payroll_run", "payroll runs", ["salary", "wages", "pay"], ["period", "pay_date", "currency"], ["period"]),
        ("job_posting", "job postings", ["hiring", "vacancy", "recruiting", "opening"], ["title", "department", "location"], ["department", "location"]),
    ]),
    "inventory": ("inventory", [
        ("product", "products", ["item", "sku", "catalog"], ["sku", "price", "category"], ["category"]),
        ("stock_level", "stock levels", ["quantity", "on-hand", "availability"], ["product", "warehouse", "quantity"], ["warehouse", "product"]),
        ("warehouse", "warehouses", ["depot", "storage", "location"], ["name", "address", "capacity"], ["region"]),
        ("purchase_order", "purchase orders", ["po", "procurement", "supplier", "reorder"], ["supplier", "product", "quantity"], ["supplier", "status"]),
    ]),
    "shipping": ("shipping", [
        ("shipment", "shipments", ["parcel", "package", "delivery", "tracking"], ["order", "carrier", "destination"], ["carrier", "status"]),
        ("carrier", "carriers", ["courier", "logistics"], ["name", "service_level", "account_number"], ["service_level"]),
        ("shipping_label", "shipping labels", ["postage", "print"], ["shipment", "format", "weight"], ["shipment"]),
        ("delivery_route", "delivery routes", ["driver", "stops", "route"], ["driver", "stops", "date"], ["driver", "date"]),
    ]),
    "calendar": ("calendar", [
        ("event", "events", ["meeting", "appointment", "schedule"], ["title", "start", "attendees"], ["attendee", "date"]),
        ("meeting_room", "meeting rooms", ["room", "space", "booking"], ["name", "capacity", "floor"], ["floor", "capacity"]),
        ("availability", "availabilities", ["free-busy", "free", "busy"], ["person", "from", "to"], ["person"]),
        ("reminder", "reminders", ["alert", "notification", "nudge"], ["message", "remind_at", "person"], ["person"]),
    ]),
    "docs": ("docs", [
        ("document", "documents", ["file", "doc", "page"], ["title", "folder", "content"], ["folder", "owner"]),
        ("folder", "folders", ["directory", "drive"], ["name", "parent", "sharing"], ["parent"]),
        ("template", "templates", ["boilerplate", "form"], ["name", "body", "category"], ["category"]),
        ("signature_request", "signature requests", ["e-signature", "sign", "esign"], ["document", "signers", "deadline"], ["status", "signer"]),
    ]),
    "devops": ("devops", [
        ("deployment", "deployments", ["release", "deploy", "rollout", "ship"], ["service", "version", "environment"], ["service", "environment"]),
        ("build", "builds", ["ci", "pipeline", "compile"], ["repository", "branch", "commit"], ["repository", "branch"]),
        ("incident", "incidents", ["outage", "pager", "on-call", "downtime"], ["service", "severity", "summary"], ["severity", "status"]),
        ("feature_flag", "feature flags", ["toggle", "switch", "experiment"], ["key", "enabled", "rollout_percent"], ["environment"]),
    ]),
    "analytics": ("analytics", [
        ("report", "reports", ["summary", "figures"], ["name", "query", "schedule"], ["owner"]),
        ("dashboard", "dashboards", ["charts", "panel", "overview"], ["name", "widgets", "audience"], ["owner"]),
        ("metric", "metrics", ["kpi", "measure", "number"], ["name", "formula", "unit"], ["unit"]),
        ("data_export", "data exports", ["csv", "download", "extract"], ["dataset", "format", "destination"], ["dataset"]),
    ]),
    "marketing": ("marketing", [
        ("campaign", "campaigns", ["promotion", "newsletter", "blast"], ["name", "channel", "budget"], ["channel", "status"]),
        ("mailing_list", "mailing lists", ["subscribers", "audience", "email-list"], ["name", "opt_in", "owner"], ["owner"]),
        ("segment", "segments", ["cohort", "audience", "targeting"], ["name", "rules", "size"], ["rules"]),
        ("coupon", "coupons", ["discount", "promo-code", "voucher"], ["code", "percent_off", "expires_on"], ["status"]),
    ]),
    "security": ("security", [
        ("user_account", "user accounts", ["login", "user", "identity"], ["username", "email", "roles"], ["role", "status"]),
        ("api_key", "API keys", ["token", "credential", "secret"], ["owner", "scopes", "expires_on"], ["owner"]),
        ("audit_log", "audit log entries", ["activity", "trail", "history"], ["actor", "action", "target"], ["actor", "action"]),
        ("access_review", "access reviews", ["permissions", "certification", "entitlement"], ["reviewer", "scope", "due_date"], ["reviewer", "status"]),
    ]),
    "finance": ("finance", [
        ("expense", "expenses", ["receipt", "reimbursement", "spend", "claim"], ["employee", "amount", "category"], ["employee", "category"]),
        ("budget", "budgets", ["allocation", "forecast", "spend-limit"], ["department", "amount", "period"], ["department", "period"]),
        ("ledger_entry", "ledger entries", ["journal", "accounting", "bookkeeping"], ["account", "debit", "credit"], ["account", "period"]),
        ("tax_rate", "tax rates", ["vat", "sales-tax", "gst"], ["region", "rate", "category"], ["region"]),
    ]),
    "legal": ("legal", [
        ("contract", "contracts", ["agreement", "nda", "msa"], ["counterparty", "value", "expires_on"], ["counterparty", "status"]),
        ("matter", "legal matters", ["case", "dispute", "litigation", "lawsuit"], ["client", "practice_area", "lead_counsel"], ["client", "status"]),
        ("clause", "clauses", ["provision", "term", "wording"], ["title", "text", "category"], ["category"]),
        ("compliance_check", "compliance checks", ["gdpr", "regulation", "policy", "kyc"], ["subject", "regulation", "result"], ["regulation", "result"]),
    ]),
    "projects": ("projects", [
        ("project", "projects", ["initiative", "programme"], ["name", "owner", "deadline"], ["owner", "status"]),
        ("task", "tasks", ["todo", "work-item", "assignment", "chore"], ["title", "assignee", "due_date"], ["assignee", "status"]),
        ("milestone", "milestones", ["deadline", "phase", "goal"], ["project", "name", "target_date"], ["project"]),
        ("timesheet", "timesheets", ["hours", "time-tracking", "logged-time"], ["person", "week", "hours"], ["person", "week"]),
    ]),
}

def words(s):
    return s.replace("_", " ")


def a(s):
    """`s` with its indefinite article."""
    return ("an " if s[0] in "aeiou" else "a ") + s

def arg(name, kind="string"):
    return name, {"type": kind, "description": f"The {words(name)}."}

def tools():
    out = []
    for i, (domain, (resource, kinds)) in enumerate(DOMAINS.items()):
        plugin = "catalog-300-a" if i < 8 else "catalog-300-b"
        for singular, plural, tags, fields, filters in kinds:
            s, p = words(singular), plural
            base_tags = [domain] + tags
            fl = ", ".join(words(f) for f in filters)
            fs = ", ".join(words(f) for f in fields)
            actions = [
                ("list", f"List {p}", f"Lists {p} in {domain}, filtered by {fl}; newest first, paged.",
                 [arg(f) for f in filters] + [arg("limit", "integer")], False),
                ("get", f"Show {a(s)}", f"Shows one {s} by id or name, with its {fs} and history.",
                 [arg("id")], False),
                ("create", f"Create {a(s)}", f"Creates a new {s} in {domain} from its {fs}.",
                 [arg(f) for f in fields], True),
                ("update", f"Update {a(s)}", f"Changes an existing {s}: any of its {fs}.",
                 [arg("id")] + [arg(f) for f in fields], True),
                ("delete", f"Delete {a(s)}", f"Deletes {a(s)} for good (archived {p} stay readable in the audit trail).",
                 [arg("id"), arg("reason")], True),
            ]
            for verb, title, description, args, mutating in actions:
                name = f"{domain}_{verb}_{singular}" if verb != "list" else f"{domain}_list_{plural.lower().replace(' ', '_')}"
                out.append({
                    "plugin": plugin,
                    "name": name,
                    "title": title,
                    "description": description,
                    "permission": f"{resource}:{'write' if mutating else 'read'}",
                    "mutating": mutating,
                    "tags": sorted(set(base_tags)),
                    "arguments": dict(args),
                })
    assert len(out) == 300, len(out)
    assert len({t["name"] for t in out}) == 300
    return out

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ts = tools()
    with open(os.path.join(here, "tools.json"), "w") as f:
        json.dump(ts, f, indent=1)
        f.write("\n")
    for plugin in ("catalog-300-a", "catalog-300-b"):
        component = plugin.replace("-", "_") + ".wasm"
        lines = [
            "# Generated by ../catalog-300/generate.py with tools.json: do not edit.",
            "[plugin]",
            f'name = "{plugin}"',
            'version = "0.1.0"',
            'description = "Half of a business suite of 300 tools, for progressive discovery\'s tests."',
            f'component = "{component}"',
            "",
        ]
        for t in (t for t in ts if t["plugin"] == plugin):
            lines.append(f"[tools.{t['name']}]")
            lines.append(f'permission = "{t["permission"]}"')
            lines.append("tags = [" + ", ".join(f'"{g}"' for g in t["tags"]) + "]")
            lines.append("")
        with open(os.path.join(here, "..", plugin, "toolhost.toml"), "w") as f:
            f.write("\n".join(lines))


if __name__ == "__main__":
    main()
