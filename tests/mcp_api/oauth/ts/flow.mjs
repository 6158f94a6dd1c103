// MCP authorization with the official MCP TypeScript SDK client (tests/mcp_api/oauth/
// test_ts_client.py runs it): connect → 401 → discovery → registration → the person's sign-in
// and consent (answered here with fetch, as a browser would) → finishAuth → tools/list and
// tools/call → a refused access token makes the SDK refresh, then the call again.
//
// usage: node flow.mjs <mcp url> <username> <password>   → one JSON line on stdout
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [, , serverUrl, username, password] = process.argv;
const CALLBACK = "http://127.0.0.1:9/callback";

class Provider {
  constructor() {
    this.saved = {};
    this.authorizationUrl = null;
  }
  get redirectUrl() { return CALLBACK; }
  get clientMetadata() {
    return {
      client_name: "TS Agent",
      redirect_uris: [CALLBACK],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() { return this.saved.client; }
  saveClientInformation(info) { this.saved.client = info; }
  tokens() { return this.saved.tokens; }
  saveTokens(tokens) { this.saved.tokens = tokens; }
  redirectToAuthorization(url) { this.authorizationUrl = url; }
  saveCodeVerifier(verifier) { this.saved.verifier = verifier; }
  codeVerifier() { return this.saved.verifier; }
}

// A browser, as far as Cairn's sign-in and consent pages need one: cookies and forms.
const jar = new Map();
async function visit(url, init = {}) {
  const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const response = await fetch(url, { ...init, redirect: "manual", headers: { ...(init.headers || {}), cookie } });
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const at = pair.indexOf("=");
    jar.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return response;
}
const csrf = (html) => html.match(/name="csrfmiddlewaretoken" value="([^"]+)"/)[1];
const post = (url, fields) => visit(url, {
  method: "POST",
  body: new URLSearchParams(fields),
  headers: { "content-type": "application/x-www-form-urlencoded", referer: url },
});

async function person(authorizationUrl) {
  const url = authorizationUrl.toString();
  let page = await visit(url);
  if (page.status === 302 && page.headers.get("location").includes("/accounts/login/")) {
    const login = new URL(page.headers.get("location"), url).toString();
    const form = await (await visit(login)).text();
    const next = new URL(login).searchParams.get("next");
    page = await post(login, { login: username, password, next, csrfmiddlewaretoken: csrf(form) });
    page = await visit(new URL(page.headers.get("location"), url).toString());
  }
  const consent = await page.text();
  const answer = await post(url, { access: "write", reach: "all", decision: "allow", csrfmiddlewaretoken: csrf(consent) });
  const back = new URL(answer.headers.get("location"));
  return { code: back.searchParams.get("code"), iss: back.searchParams.get("iss") };
}

const provider = new Provider();
const client = new Client({ name: "cairn-ts-test", version: "1.0.0" });
let signedIn = null;
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  signedIn = await person(provider.authorizationUrl);
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
  await transport.finishAuth(signedIn.code);
  await client.connect(transport);
}
const tools = await client.listTools();
const written = await client.callTool({
  name: "upsert",
  arguments: { project: "launch", title: "Written from TypeScript", body: "Through the TS SDK." },
});
const first = provider.saved.tokens;
// The access token stops working (as when it expires): the SDK refreshes and goes on.
provider.saved.tokens = { ...first, access_token: "cairn_expired-in-this-test" };
const found = await client.callTool({ name: "search", arguments: { query: "TypeScript" } });
const second = provider.saved.tokens;
await client.close();
console.log(JSON.stringify({
  signedIn,
  clientId: provider.saved.client.client_id,
  tools: tools.tools.map((t) => t.name),
  writtenError: Boolean(written.isError),
  found: found.content.map((c) => c.text).join("\n"),
  refreshed: second.refresh_token !== first.refresh_token && second.access_token !== first.access_token,
}));
