// A real OpenID provider (npm `oidc-provider`, panva's) on 127.0.0.1, for
// the single sign-on tests: toolhost signs its users in through it with the
// authorization code flow (PKCE S256 required, nonce, client_secret_basic or
// client_secret_post) and reads their email and groups from the ID token.
//
//   node oidc_provider.mjs --config FILE   → prints `{"issuer":"http://127.0.0.1:PORT"}`
//
// FILE is JSON:
//   {"port": 0,                                   // 0: any free port
//    "clients": [{"client_id": "toolhost", "client_secret": "…",
//                 "redirect_uris": ["http://127.0.0.1:P/oauth/sso/corp/callback"]}],
//    "accounts_file": "/path/accounts.json",
//    "keys_file": "/path/jwks-private.json"}      // optional; else a fresh RSA key
// A client entry may carry any other client metadata oidc-provider knows
// (e.g. "application_type": "native" lets a loopback redirect_uri differ
// in port only). The accounts file,
//   {"alice": {"password": "…", "sub": "alice-sub-1", "name": "Alice",
//              "email": "alice@example.com", "email_verified": true,
//              "groups": ["tool-admins", "staff"]}}
// (`sub` and `name` default to the key) is re-read at every login and every
// claims lookup, so a test may edit it between sign-ins. Scopes: openid,
// email (email, email_verified), profile (preferred_username = the account's
// key, name), groups (groups); the claims go into the ID token itself
// (conformIdTokenClaims: false).
//
// The sign-in page is our own (devInteractions off): GET /interaction/UID is
// a form posting `username` and `password` to /interaction/UID/login; on
// success login and consent (every requested scope and claim) are finished
// at once, so the browser goes straight back to the redirect_uri. A consent
// prompt on its own (a second authorization with a live session) is granted
// the same way without a page. The one stdout line comes once listening;
// everything else (oidc-provider's notices included) goes to stderr. Runs
// until killed.
//
// Token exchange (RFC 8693) for toolhost's token-exchange backends, with
// `"token_exchange": {"trust_file": "/path/trust.json"}` in the config and
// a client whose grant_types include
// urn:ietf:params:oauth:grant-type:token-exchange. The trust file, read at
// every exchange (the test writes it once toolhost has its port),
//   {"issuer": "http://127.0.0.1:H", "jwks_uri": "http://127.0.0.1:H/.well-known/backend-assertion-jwks.json",
//    "audiences": ["https://testbench.example"]}
// names the host whose subject tokens (EdDSA, typ toolhost-assertion+jwt,
// aud this provider's issuer, sub an account's subject here) are trusted,
// and the audiences tokens may be issued for. The answer is an RS256
// access token (typ at+jwt, RFC 9068) of this provider's own key: sub the
// person, aud the audience asked for, client_id the authenticated client,
// act {sub: that client, act: {sub: the subject token's act.sub}} (the host
// acting now, the MCP client before it), 300 s.
//
// The same grant issues identity assertion grants (ID-JAGs, MCP's
// enterprise-managed authorization) when requested_token_type is
// urn:ietf:params:oauth:token-type:id-jag: the subject token is an ID token
// this provider issued to the requesting client, and the trust file's
//   "id_jag": {"audience": "http://127.0.0.1:H", "clients": {"agent": "<its client id at H>"}}
// names the authorization server it may be for and each client's id there.
// The answer (token_type N_A) is an RS256 JWT of typ oauth-id-jag+jwt: iss
// this provider, sub and the account's email and preferred_username, aud
// the audience, resource and scope as asked, client_id the mapped id, 300 s.
//
// OAuth resources (RFC 8707), for toolhost's connection backends, with
//   "resources": {"https://testbench.example": {"scope": "testbench.read", "ttl": 35}}
// in the config: an authorization request naming one of them (resource=…,
// scope=…) gets an RS256 JWT access token (typ at+jwt, RFC 9068: sub the
// account, aud the resource, client_id, scope, jti) living `ttl` seconds;
// a client whose grant_types include refresh_token also gets a refresh
// token, which the refresh_token grant redeems for a new access token.
// Each refresh token issued is written to stderr
// (`oidc_provider: issued refresh token VALUE`).
const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import { parseArgs } from "node:util";

// oidc-provider prints its notices with console.info (stdout): keep stdout
// for the one line the test reads.
console.info = console.log = (...args) => console.error(...args);

const { default: Provider, errors } = await import("oidc-provider");
const jose = await import("jose");

const { values: argv } = parseArgs({ options: { config: { type: "string" } } });
if (!argv.config) {
  console.error("oidc_provider: usage: node oidc_provider.mjs --config FILE");
  process.exit(2);
}
const config = JSON.parse(fs.readFileSync(argv.config, "utf8"));
if (!config.accounts_file || !Array.isArray(config.clients)) {
  console.error("oidc_provider: the config needs accounts_file and clients");
  process.exit(2);
}

/** The accounts file, read afresh: {username: {password, sub, email, …}}. */
function readAccounts() {
  return JSON.parse(fs.readFileSync(config.accounts_file, "utf8"));
}

/** [username, account] whose subject is `sub`, from the file as it is now. */
function accountBySub(sub) {
  return Object.entries(readAccounts()).find(([name, a]) => (a.sub ?? name) === sub);
}

/** RFC 7638 thumbprint of an RSA public key, the `kid` of a key without one. */
function thumbprint({ e, n }) {
  return crypto.hash("sha256", JSON.stringify({ e, kty: "RSA", n }), "base64url");
}

function signingKeys() {
  if (config.keys_file) {
    const { keys } = JSON.parse(fs.readFileSync(config.keys_file, "utf8"));
    return keys.map((k) => ({ kid: k.kid ?? thumbprint(k), ...k }));
  }
  const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = privateKey.export({ format: "jwk" });
  return [{ ...jwk, kid: thumbprint(jwk), alg: "RS256", use: "sig" }];
}

// Listen first: the issuer names the port.
const server = http.createServer();
await new Promise((resolve) => server.listen(config.port ?? 0, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const keys = signingKeys();
const provider = new Provider(issuer, {
  clients: config.clients.map((c) => ({
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_basic", // _post is accepted too
    ...c,
  })),
  jwks: { keys },
  // Signed cookies; never `secure` on plain http (oidc-provider sets that
  // only when the request is https).
  cookies: { keys: [crypto.randomBytes(32).toString("base64url")] },
  features: {
    devInteractions: { enabled: false },
    // RFC 8707 resources of the config's "resources" (an OAuth resource
    // such as toolhost's connection backends): JWT access tokens (RFC 9068)
    // whose aud is the resource; any other resource is refused.
    resourceIndicators: {
      enabled: true,
      useGrantedResource: async () => true,
      async getResourceServerInfo(_ctx, indicator) {
        const resource = (config.resources ?? {})[indicator];
        if (!resource) throw new errors.InvalidTarget();
        return {
          scope: resource.scope,
          audience: indicator,
          accessTokenTTL: resource.ttl ?? 3600,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        };
      },
    },
  },
  // A client allowed the refresh_token grant gets a refresh token with its
  // code (oidc-provider's default asks for offline_access besides).
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  pkce: { required: () => true }, // S256 is the only method oidc-provider knows
  scopes: ["openid", "email", "profile", "groups"],
  claims: {
    openid: ["sub"],
    email: ["email", "email_verified"],
    profile: ["preferred_username", "name"],
    groups: ["groups"],
  },
  // Claims of the granted scopes in the ID token, not only at userinfo.
  conformIdTokenClaims: false,
  // Seconds; set so the defaults' "you SHOULD change" notices stay quiet.
  // An access token for a resource lives as long as the resource says.
  ttl: {
    AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 3600,
    AuthorizationCode: 60,
    IdToken: 3600,
    Interaction: 3600,
    Session: 86400,
    Grant: 86400,
  },
  async findAccount(_ctx, sub) {
    if (!accountBySub(sub)) return undefined;
    return {
      accountId: sub,
      async claims() {
        const found = accountBySub(sub); // again: the file may have changed
        if (!found) return { sub };
        const [username, a] = found;
        return {
          sub,
          email: a.email,
          email_verified: a.email_verified,
          preferred_username: username,
          name: a.name ?? username,
          groups: a.groups ?? [],
        };
      },
    };
  },
  renderError(ctx, out) {
    ctx.type = "html";
    ctx.body = page("Sign-in failed", `<p id="error">${esc(out.error)}: ${esc(out.error_description ?? "")}</p>`);
  },
});
if (config.token_exchange) {
  const params = ["audience", "resource", "scope", "requested_token_type", "subject_token", "subject_token_type"];
  provider.registerGrantType(TOKEN_EXCHANGE, exchange, params);
}

/** The token exchange grant: the host's subject token for a person's access
 * token of one audience. oidc-provider has authenticated the client and
 * checked that it may use this grant. */
async function exchange(ctx) {
  const trust = JSON.parse(fs.readFileSync(config.token_exchange.trust_file, "utf8"));
  const { params, client } = ctx.oidc;
  if (params.requested_token_type === ID_JAG) return idJag(ctx, trust);
  if (params.subject_token_type !== "urn:ietf:params:oauth:token-type:jwt") {
    throw new errors.InvalidRequest("subject_token_type must be a JWT");
  }
  if (params.requested_token_type && params.requested_token_type !== "urn:ietf:params:oauth:token-type:access_token") {
    throw new errors.InvalidRequest("only access tokens are issued");
  }
  if (!trust.audiences.includes(params.audience)) throw new errors.InvalidTarget("unknown audience");
  let subject;
  try {
    const jwks = jose.createRemoteJWKSet(new URL(trust.jwks_uri));
    ({ payload: subject } = await jose.jwtVerify(params.subject_token, jwks, {
      issuer: trust.issuer,
      audience: issuer,
      typ: "toolhost-assertion+jwt",
      algorithms: ["EdDSA"],
      maxTokenAge: "2m",
    }));
  } catch (e) {
    console.error(`oidc_provider: subject token refused: ${e.code ?? e.message}`);
    throw new errors.InvalidGrant("the subject token is not trusted");
  }
  if (!accountBySub(subject.sub)) throw new errors.InvalidGrant("unknown subject");
  const act = { sub: client.clientId, ...(subject.act?.sub ? { act: { sub: subject.act.sub } } : {}) };
  const claims = { client_id: client.clientId, act, ...(params.scope ? { scope: params.scope } : {}) };
  const token = await signed(claims, "at+jwt", subject.sub, params.audience);
  console.error(`oidc_provider: exchanged a token of ${subject.sub} for ${params.audience}, acting ${JSON.stringify(act)}`);
  ctx.body = {
    access_token: token,
    issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
    token_type: "Bearer",
    expires_in: 300,
  };
}

/** `claims` signed by this provider's first key as a JWT of `typ` for
 * `sub` and `aud`, with iss, iat, a 300 s exp and a random jti. */
async function signed(claims, typ, sub, aud) {
  const key = keys[0];
  return new jose.SignJWT(claims)
    .setProtectedHeader({ alg: key.alg ?? "RS256", kid: key.kid, typ })
    .setIssuer(issuer)
    .setSubject(sub)
    .setAudience(aud)
    .setIssuedAt()
    .setExpirationTime("300s")
    .setJti(crypto.randomUUID())
    .sign(await jose.importJWK(key, key.alg ?? "RS256"));
}

/** An ID-JAG for the person of an ID token this provider issued to the client. */
async function idJag(ctx, trust) {
  const { params, client } = ctx.oidc;
  if (params.subject_token_type !== ID_TOKEN) throw new errors.InvalidRequest("subject_token_type must be an ID token");
  const hostClient = trust.id_jag?.clients?.[client.clientId];
  if (!hostClient || params.audience !== trust.id_jag.audience) {
    throw new errors.InvalidTarget("no identity assertion grants for this client and audience");
  }
  let person;
  try {
    const publicPart = ({ kty, n, e, crv, x, y, kid, alg }) =>
      Object.fromEntries(Object.entries({ kty, n, e, crv, x, y, kid, alg }).filter(([, v]) => v !== undefined));
    const publicKeys = keys.map(publicPart);
    ({ payload: person } = await jose.jwtVerify(params.subject_token, jose.createLocalJWKSet({ keys: publicKeys }), {
      issuer,
      audience: client.clientId,
    }));
  } catch (e) {
    console.error(`oidc_provider: ID token refused: ${e.code ?? e.message}`);
    throw new errors.InvalidGrant("the ID token is not one this provider issued to this client");
  }
  const found = accountBySub(person.sub);
  if (!found) throw new errors.InvalidGrant("unknown subject");
  const [username, account] = found;
  const claims = {
    client_id: hostClient,
    email: account.email,
    email_verified: account.email_verified,
    preferred_username: username,
    ...(params.resource ? { resource: params.resource } : {}),
    ...(params.scope ? { scope: params.scope } : {}),
  };
  const grant = await signed(claims, "oauth-id-jag+jwt", person.sub, params.audience);
  console.error(`oidc_provider: issued an ID-JAG of ${person.sub} for ${params.audience} (client ${hostClient})`);
  ctx.body = { access_token: grant, issued_token_type: ID_JAG, token_type: "N_A", expires_in: 300 };
}

provider.on("server_error", (_ctx, err) => console.error("oidc_provider: server_error:", err));

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title, body) {
  return `<!doctype html><html><head><meta charset="utf-8"></head>`
    + `<body><h1>${esc(title)}</h1>${body}</body></html>`;
}

function loginForm(uid, error) {
  return page(
    "Corporate sign-in",
    (error ? `<p id="error">${esc(error)}</p>` : "")
      + `<form method="post" action="/interaction/${esc(uid)}/login">`
      + `<label>Username <input name="username" autocomplete="username"></label>`
      + `<label>Password <input type="password" name="password" autocomplete="current-password"></label>`
      + `<button type="submit">Sign in</button></form>`,
  );
}

function send(res, status, html) {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(html);
}

function failed(res, status, message) {
  send(res, status, page("Sign-in failed", `<p id="error">${esc(message)}</p>`));
}

async function readForm(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** A grant of everything the authorization request asks for: its scopes
 * (openid, email, …), plus whatever a consent prompt lists as missing. */
async function grantAll(details, accountId) {
  const { params, prompt } = details;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId, clientId: params.client_id });
  grant.addOIDCScope(String(params.scope ?? "openid"));
  if (prompt.details?.missingOIDCClaims) grant.addOIDCClaims(prompt.details.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(prompt.details?.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(" "));
  }
  return grant.save();
}

/** Our interaction routes; `null` when the request is not one of them. */
async function interaction(req, res) {
  const url = new URL(req.url, issuer);
  const match = /^\/interaction\/([^/]+)(\/login)?$/.exec(url.pathname);
  if (!match) return null;
  const [, uid, login] = match;

  let details;
  try {
    details = await provider.interactionDetails(req, res);
  } catch (e) {
    if (e instanceof errors.SessionNotFound) return failed(res, 400, e.error_description ?? e.message);
    throw e;
  }
  if (details.uid !== uid) return failed(res, 400, "interaction mismatch");

  if (details.prompt.name === "login") {
    if (!login) {
      if (req.method !== "GET") return failed(res, 405, "method not allowed");
      return send(res, 200, loginForm(uid));
    }
    if (req.method !== "POST") return failed(res, 405, "method not allowed");
    const form = await readForm(req);
    const username = form.get("username") ?? "";
    const accounts = readAccounts();
    const account = Object.hasOwn(accounts, username) ? accounts[username] : undefined;
    if (!account || typeof account.password !== "string" || account.password !== (form.get("password") ?? "")) {
      console.error(`oidc_provider: sign-in refused for ${JSON.stringify(username)}`);
      return send(res, 401, loginForm(uid, "Wrong username or password."));
    }
    const accountId = account.sub ?? username;
    // Login and consent in one: no consent page.
    const grantId = await grantAll(details, accountId);
    console.error(`oidc_provider: ${JSON.stringify(username)} signed in as ${accountId} for ${details.params.client_id}`);
    const result = { login: { accountId }, consent: { grantId } };
    return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
  }

  if (details.prompt.name === "consent") {
    // Granted without asking, on GET or on a late POST alike.
    const grantId = await grantAll(details, details.session.accountId);
    const consent = details.grantId ? {} : { grantId };
    return provider.interactionFinished(req, res, { consent }, { mergeWithLastSubmission: true });
  }

  return failed(res, 400, `unexpected prompt ${details.prompt.name}`);
}

// Each refresh token issued (an opaque token's value is its jti), for the
// tests that look for it where it must never be.
provider.on("refresh_token.saved", (token) => {
  console.error(`oidc_provider: issued refresh token ${token.jti}`);
});

const callback = provider.callback();
server.on("request", async (req, res) => {
  try {
    if ((await interaction(req, res)) === null) callback(req, res);
  } catch (e) {
    console.error("oidc_provider: interaction failed:", e);
    if (!res.headersSent) failed(res, 500, e.message);
    else res.end();
  }
});

process.on("SIGTERM", () => process.exit(0));
console.error(`oidc_provider: serving ${issuer} (accounts ${config.accounts_file})`);
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
