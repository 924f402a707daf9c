"""A headless "browser" for toolhost's OAuth sign-in and consent pages.

    .venv/bin/python tests/e2e/oauth_browser.py --url AUTHORIZATION_URL \
        --username demo --password-env TOOLHOST_DEMO_PASSWORD [--follow-final]
    .venv/bin/python tests/e2e/oauth_browser.py --url AUTHORIZATION_URL \
        --sso-label Corp --sso-username alice --sso-password-env IDP_PASSWORD

It does what a person does in a browser, with an `httpx2` client holding a
cookie jar (`toolhost_browser`, then `toolhost_session`, both on path /oauth):

1. GET the authorization URL;
2. follow redirects that stay on the authorization server's origin (the 303
   from sign-in to consent), never the one that leaves it;
3. on the sign-in page, submit its form (every hidden input kept) with the
   username and password;
4. on the consent page, submit its form with `decision=allow`;
5. stop at the first redirect away from the server: the client's
   redirect_uri with `code`, `state` and `iss`.

With single sign-on (`sso=SsoLogin(label, username, password)`, or
`--sso-label`), step 3 instead follows the sign-in page's link
`Sign in with LABEL` (toolhost's /oauth/sso/NAME/start), which redirects to
an OpenID provider; from then on redirects are followed across exactly two
origins, the server's and that provider's. The provider's login form (the
one with `username` and `password` on its origin) gets the SSO username and
password; its redirect back lands on toolhost's callback, and consent and
the final redirect go on as above. Both servers may share 127.0.0.1: cookies
do not tell ports apart, so theirs must differ in name or path (they do:
toolhost's live on /oauth).

`authorize()` returns that final location without following it. The CLI
prints it on stdout; with `--follow-final` it also GETs it, for a client
whose callback server must see the code (the conformance suite's, on
127.0.0.1:PORT/callback). The password comes from an environment variable so
it never appears on a command line. Exits 1 with the reason on any failure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx2

# Sign-in, consent and the odd same-origin hop: more means a loop.
MAX_STEPS = 8
# With single sign-on: the start link, the provider's authorization endpoint,
# its login form and the hops back to toolhost's callback come on top.
SSO_MAX_STEPS = 16
TIMEOUT_SECONDS = 30.0


class BrowserError(Exception):
    """The pages did not lead to a redirect back to the client."""


@dataclass(frozen=True)
class SsoLogin:
    """Sign in through the OpenID provider behind the sign-in page's link
    `Sign in with {label}`, as `username` with `password` at the provider."""

    label: str
    username: str
    password: str

    def link_text(self) -> str:
        return f"Sign in with {self.label}"


@dataclass
class Form:
    """One `<form>`: where it posts and the fields a browser would send."""

    method: str
    action: str
    # (name, type, value) of every named <input>, hidden ones included.
    inputs: list[tuple[str, str, str]] = field(default_factory=list)
    # (name, value) of every named submit <button>.
    buttons: list[tuple[str, str]] = field(default_factory=list)

    def names(self) -> set[str]:
        return {name for name, _, _ in self.inputs} | {name for name, _ in self.buttons}

    def fields(self) -> dict[str, str]:
        """The inputs a submit sends (buttons excluded: only the pressed one goes)."""
        return {name: value for name, kind, value in self.inputs if kind not in ("submit", "button")}


class FormParser(HTMLParser):
    """Collects the forms and links of a page, plus its visible text for error messages."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        # (href, text with whitespace collapsed) of every <a href>.
        self.links: list[tuple[str, str]] = []
        self.text: list[str] = []
        self._form: Form | None = None
        self._link: tuple[str, list[str]] | None = None  # the open <a href>: href, text so far
        self._skip = 0  # inside <style>/<script>

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v or "") for k, v in attrs}
        if tag in ("style", "script"):
            self._skip += 1
        elif tag == "form":
            self._form = Form(method=a.get("method", "get").lower(), action=a.get("action", ""))
            self.forms.append(self._form)
        elif self._form is not None and "name" in a:
            if tag == "input":
                self._form.inputs.append((a["name"], a.get("type", "text").lower(), a.get("value", "")))
            elif tag == "button" and a.get("type", "submit").lower() == "submit":
                self._form.buttons.append((a["name"], a.get("value", "")))
        if tag == "a" and "href" in a:
            self._link = (a["href"], [])

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script"):
            self._skip = max(0, self._skip - 1)
        elif tag == "form":
            self._form = None
        elif tag == "a" and self._link is not None:
            href, text = self._link
            self.links.append((href, " ".join(" ".join(text).split())))
            self._link = None

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.text.append(data.strip())
            if self._link is not None:
                self._link[1].append(data)


def parse_page(html: str) -> FormParser:
    parser = FormParser()
    parser.feed(html)
    parser.close()
    return parser


def origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def describe(response: httpx2.Response) -> str:
    """Status, URL and the page's visible text, for an error message."""
    text = " ".join(parse_page(response.text).text) if "html" in response.headers.get("content-type", "") else response.text
    return f"{response.status_code} from {response.request.method} {response.request.url}: {text[:500]}"


async def authorize(
    url: str,
    username: str,
    password: str,
    *,
    client: httpx2.AsyncClient | None = None,
    decision: str = "allow",
    sso: SsoLogin | None = None,
) -> str:
    """Signs in and consents at `url` (an authorization request); returns the
    final redirect away from the authorization server, unfollowed.

    `client` may be passed to keep a browser session (its cookies) across
    calls; by default a fresh one is used, as a fresh browser would. With
    `sso` the sign-in goes through the OpenID provider behind the page's
    `Sign in with {sso.label}` link, as `sso.username`; `username` and
    `password` are then unused (toolhost's own form is not submitted).
    """
    if client is None:
        async with httpx2.AsyncClient(timeout=TIMEOUT_SECONDS, follow_redirects=False) as fresh:
            return await authorize(url, username, password, client=fresh, decision=decision, sso=sso)

    server = origin(url)
    # With `sso`: the provider's origin, where the start link's redirects lead.
    provider: tuple[str, str] | None = None
    sso_started = False
    signed_in = False
    steps = MAX_STEPS if sso is None else SSO_MAX_STEPS
    response = await client.get(url, follow_redirects=False)
    for _ in range(steps):
        if response.is_redirect:
            location = urljoin(str(response.request.url), response.headers["location"])
            if sso_started and provider is None and origin(location) != server:
                provider = origin(location)
            if origin(location) not in (server, provider):
                return location
            # A browser turns 302/303 after a POST into a GET; the pages only use 303 and 302.
            response = await client.get(location, follow_redirects=False)
            continue

        page = parse_page(response.text) if "html" in response.headers.get("content-type", "") else None
        forms = page.forms if page else []
        login = next((f for f in forms if {"username", "password"} <= f.names()), None)
        consent = next((f for f in forms if "decision" in f.names()), None)
        if sso is not None and login is not None and origin(str(response.request.url)) == server:
            # toolhost's sign-in page: take the single sign-on link, not the form.
            if sso_started:
                raise BrowserError(f"signing in with {sso.label!r} led back to the sign-in page: {describe(response)}")
            link = next((href for href, text in page.links if text == sso.link_text()), None) if page else None
            if link is None:
                raise BrowserError(f"the sign-in page has no link {sso.link_text()!r}: {describe(response)}")
            response = await client.get(urljoin(str(response.request.url), link), follow_redirects=False)
            sso_started = True
        elif login is not None:
            # toolhost's own form or, with `sso`, the provider's.
            user, secret = (username, password) if sso is None else (sso.username, sso.password)
            if signed_in:
                raise BrowserError(f"sign-in as {user!r} was refused: {describe(response)}")
            data = login.fields() | {"username": user, "password": secret}
            response = await submit(client, response, login, data)
            signed_in = True
        elif consent is not None:
            offered = [value for name, value in consent.buttons if name == "decision"]
            if decision not in offered:
                raise BrowserError(f"the consent form offers {offered}, not {decision!r}: {describe(response)}")
            response = await submit(client, response, consent, consent.fields() | {"decision": decision})
        else:
            raise BrowserError(f"neither a redirect nor a sign-in or consent form: {describe(response)}")
    raise BrowserError(f"no redirect back to the client after {steps} steps; last: {describe(response)}")


async def submit(client: httpx2.AsyncClient, page: httpx2.Response, form: Form, data: dict[str, str]) -> httpx2.Response:
    """Submits `form` of `page` the way a browser does (urlencoded)."""
    target = urljoin(str(page.request.url), form.action or str(page.request.url))
    if origin(target) != origin(str(page.request.url)):
        raise BrowserError(f"the form posts to another origin: {target}")
    if form.method != "post":
        raise BrowserError(f"the form uses method {form.method!r}, expected post: {target}")
    return await client.post(target, data=data, follow_redirects=False)


async def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--url", required=True, help="the authorization request URL")
    args.add_argument("--username", help="required unless --sso-label")
    args.add_argument("--password-env", help="environment variable holding the password; required unless --sso-label")
    args.add_argument("--decision", default="allow", choices=["allow", "deny"])
    args.add_argument("--follow-final", action="store_true", help="also GET the final location")
    args.add_argument("--sso-label", help="sign in through the link 'Sign in with SSO_LABEL' instead")
    args.add_argument("--sso-username", help="the OpenID provider's username; required with --sso-label")
    args.add_argument(
        "--sso-password-env", help="environment variable holding the provider password; required with --sso-label"
    )
    opts = args.parse_args()
    needed = ["username", "password_env"] if opts.sso_label is None else ["sso_username", "sso_password_env"]
    missing = ["--" + name.replace("_", "-") for name in needed if getattr(opts, name) is None]
    if missing:
        args.error(f"the following arguments are required: {', '.join(missing)}")

    password_env = opts.password_env if opts.sso_label is None else opts.sso_password_env
    password = os.environ.get(password_env)
    if not password:
        print(f"oauth_browser: ${password_env} is not set", file=sys.stderr)
        return 1
    sso = None if opts.sso_label is None else SsoLogin(opts.sso_label, opts.sso_username, password)
    try:
        if sso is None:
            final = await authorize(opts.url, opts.username, password, decision=opts.decision)
        else:
            final = await authorize(opts.url, "", "", decision=opts.decision, sso=sso)
        print(final, flush=True)
        if opts.follow_final:
            async with httpx2.AsyncClient(timeout=TIMEOUT_SECONDS) as client:
                answer = await client.get(final, follow_redirects=False)
            print(f"oauth_browser: GET final location -> {answer.status_code}", file=sys.stderr)
            if answer.status_code >= 400:
                print(f"oauth_browser: the callback answered {describe(answer)}", file=sys.stderr)
                return 1
    except (BrowserError, httpx2.HTTPError) as e:
        print(f"oauth_browser: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
