/**
 * Issue 21, editors that send no header: the MCP SDK client's own OAuth support (an OAuthClientProvider) meets the
 * 401, discovers the protected-resource and authorization-server metadata, registers itself, and sends a real
 * Chromium to the sign-in page, where a member signs in and approves. The token it receives lists and creates flags
 * as that member, appears in the member's token list with its expiry, and stops working once revoked there; a token
 * past its lifetime stops working too. Denial, a wrong password and a wrong PKCE verifier are refused.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, PASSWORD, signIn } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { connectMcp } from "../support/mcp.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** The editor's side of the redirect: a loopback server that hands over the query it is called back with. */
async function callbackServer(): Promise<{ url: string; next(): Promise<URLSearchParams>; close(): void }> {
  let waiting: ((params: URLSearchParams) => void) | undefined;
  const server: Server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html" }).end("<p>You can close this window.</p>");
    waiting?.(new URL(req.url!, "http://127.0.0.1").searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => new Promise((resolve) => (waiting = resolve)),
    close: () => server.close(),
  };
}

/** An editor's OAuth state, kept in memory; the browser step is whatever `openBrowser` does with the URL. */
class EditorProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  constructor(
    private readonly redirect: string,
    private readonly openBrowser: (url: URL) => Promise<void>,
  ) {}
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "Test Editor", redirect_uris: [this.redirect], grant_types: ["authorization_code"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.client = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  async redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
    await this.openBrowser(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe(`MCP OAuth sign-in (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let browser: Browser;
  let callback: Awaited<ReturnType<typeof callbackServer>>;
  let keys: Awaited<ReturnType<typeof createApp>>;
  const mcpUrl = () => `${server.url}/api/mcp`;

  /** Signs in on the approval page in Chromium and presses `button`; resolves with the editor's callback query. */
  async function approveInBrowser(url: URL, email: string, password: string, button: "approve" | "deny" = "approve"): Promise<URLSearchParams> {
    const page = await browser.newPage();
    try {
      await page.goto(url.toString());
      await page.getByLabel("Email").fill(email);
      await page.getByLabel("Password").fill(password);
      const called = callback.next();
      await page.locator(`button[value=${button}]`).click();
      return await called;
    } finally {
      await page.close();
    }
  }

  beforeAll(async () => {
    server = await startServer({ env: { ...ACCOUNT_TEST_ENV } });
    keys = await createApp(server.url, server.adminToken, "Editors");
    await createMember(server.url, server.adminToken, "ada@oauth.test", "editor");
    await createMember(server.url, server.adminToken, "vic@oauth.test", "viewer");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    callback = await callbackServer();
  });

  afterAll(async () => {
    await browser?.close();
    callback?.close();
    await server?.stop();
  });

  it("publishes the protected-resource and authorization-server metadata", async () => {
    const resource = await request(server.url, "GET", "/.well-known/oauth-protected-resource/api/mcp");
    expect(resource.body).toMatchObject({ resource: mcpUrl(), authorization_servers: [server.url] });
    const metadata = await request(server.url, "GET", "/.well-known/oauth-authorization-server");
    expect(metadata.body).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/api/mcp/oauth/authorize`,
      token_endpoint: `${server.url}/api/mcp/oauth/token`,
      registration_endpoint: `${server.url}/api/mcp/oauth/register`,
      code_challenge_methods_supported: ["S256"],
    });
  });

  it("runs the SDK client's flow through a real sign-in; the token acts as the member until revoked", async () => {
    let query: URLSearchParams | undefined;
    const provider = new EditorProvider(callback.url, async (url) => {
      query = await approveInBrowser(url, "ada@oauth.test", PASSWORD);
    });
    await expect(connectMcp(mcpUrl(), { authProvider: provider })).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toMatch(/^mcp_/);
    expect(provider.authorizationUrl!.searchParams.get("code_challenge_method")).toBe("S256");
    expect(query!.get("state")).toBe(provider.authorizationUrl!.searchParams.get("state"));
    const code = query!.get("code")!;
    expect(code).toBeTruthy();

    // What an editor does next: finish the flow on the transport that met the 401, then connect again.
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    await new StreamableHTTPClientTransport(new URL(mcpUrl()), { authProvider: provider }).finishAuth(code);
    expect(provider.saved).toMatchObject({ token_type: expect.stringMatching(/^bearer$/i), expires_in: 30 * 86_400 });
    const accessToken = provider.saved!.access_token;

    const mcp = await connectMcp(mcpUrl(), { authProvider: provider });
    const created = await mcp.call("create_flag", { appId: keys.app.id, key: "from-the-editor" });
    expect(created.isError, created.text).toBe(false);
    const flags = await mcp.call("list_flags", { appId: keys.app.id });
    expect(flags.value.flags.map((flag: { key: string }) => flag.key)).toEqual(["from-the-editor"]);
    await mcp.close();

    // The member's token list shows it, with its expiry and the editor; the audit log says who approved.
    const session = await signIn(server.url, "ada@oauth.test");
    const listed = (await asSession(server.url, session, "GET", "/admin/tokens")).body.tokens;
    expect(listed).toEqual([expect.objectContaining({ name: "Test Editor (MCP)", readOnly: false, oauthClient: { id: provider.client!.client_id, name: "Test Editor" } })]);
    expect(Date.parse(listed[0].expiresAt) - Date.parse(listed[0].createdAt)).toBe(30 * 86_400_000);
    const audit = (await request(server.url, "GET", "/admin/audit?limit=1000", { token: server.adminToken })).body.entries;
    const actions = audit.map((entry: { action: string; actor: { kind: string; email?: string } }) => `${entry.action}:${entry.actor.kind}:${entry.actor.email ?? ""}`);
    expect(actions).toEqual(expect.arrayContaining(["oauth.approve:member:ada@oauth.test", "token.create:member:ada@oauth.test", "feature.create:token:ada@oauth.test"]));

    // A code works once.
    const again = await request(server.url, "POST", "/api/mcp/oauth/token", {
      rawBody: new URLSearchParams({ grant_type: "authorization_code", code, code_verifier: provider.verifier, client_id: provider.client!.client_id, redirect_uri: callback.url }).toString(),
      contentType: "application/x-www-form-urlencoded",
    });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");

    // Revoked in the token list: the editor is out at once.
    expect((await asSession(server.url, session, "DELETE", `/admin/tokens/${listed[0].id}`)).status).toBe(200);
    const refused = await fetch(mcpUrl(), {
      method: "POST",
      headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("acts with the member's role: a viewer's editor reads but cannot write", async () => {
    let query: URLSearchParams | undefined;
    const provider = new EditorProvider(callback.url, async (url) => {
      query = await approveInBrowser(url, "vic@oauth.test", PASSWORD);
    });
    await expect(connectMcp(mcpUrl(), { authProvider: provider })).rejects.toBeInstanceOf(UnauthorizedError);
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    await new StreamableHTTPClientTransport(new URL(mcpUrl()), { authProvider: provider }).finishAuth(query!.get("code")!);
    const mcp = await connectMcp(mcpUrl(), { authProvider: provider });
    expect((await mcp.call("list_flags", { appId: keys.app.id })).isError).toBe(false);
    const write = await mcp.call("create_flag", { appId: keys.app.id, key: "viewer-flag" });
    expect(write.isError).toBe(true);
    expect(write.text).toMatch(/^FORBIDDEN: The viewer role cannot do this/);
    await mcp.close();
  });

  it("sends a denial back to the editor, and keeps a wrong password on the page", async () => {
    let query: URLSearchParams | undefined;
    const provider = new EditorProvider(callback.url, async (url) => {
      query = await approveInBrowser(url, "ada@oauth.test", "", "deny");
    });
    await expect(connectMcp(mcpUrl(), { authProvider: provider })).rejects.toBeInstanceOf(UnauthorizedError);
    expect(query!.get("error")).toBe("access_denied");
    expect(query!.get("code")).toBeNull();

    const page = await browser.newPage();
    try {
      await page.goto(provider.authorizationUrl!.toString());
      await page.getByLabel("Email").fill("ada@oauth.test");
      await page.getByLabel("Password").fill("not the password at all");
      const [response] = await Promise.all([page.waitForResponse((candidate) => candidate.request().method() === "POST"), page.locator("button[value=approve]").click()]);
      expect(response.status()).toBe(401);
      await expect(page.getByRole("alert").textContent()).resolves.toBe("The email or password is not valid.");
    } finally {
      await page.close();
    }
  });

  it("refuses a wrong PKCE verifier, unknown clients and bad redirect URIs", async () => {
    const registered = await request(server.url, "POST", "/api/mcp/oauth/register", { body: { client_name: "Raw", redirect_uris: [callback.url] } });
    expect(registered.status).toBe(201);
    const clientId = registered.body.client_id as string;
    expect((await request(server.url, "POST", "/api/mcp/oauth/register", { body: { redirect_uris: ["javascript:alert(1)"] } })).body.error).toBe("invalid_redirect_uri");
    expect((await request(server.url, "POST", "/api/mcp/oauth/register", { body: { redirect_uris: ["http://evil.example/cb"] } })).body.error).toBe("invalid_redirect_uri");

    const verifier = "v".repeat(64);
    const { createHash } = await import("node:crypto");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const authorize = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: callback.url, code_challenge: challenge, code_challenge_method: "S256", state: "s1" });
    const form = new URLSearchParams({ ...Object.fromEntries(authorize), email: "ada@oauth.test", password: PASSWORD, decision: "approve" });
    const approved = await fetch(`${server.url}/api/mcp/oauth/authorize`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url }, body: form.toString() });
    expect(approved.status).toBe(302);
    const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
    const exchange = (extra: Record<string, string>) =>
      request(server.url, "POST", "/api/mcp/oauth/token", {
        rawBody: new URLSearchParams({ grant_type: "authorization_code", code, client_id: clientId, redirect_uri: callback.url, ...extra }).toString(),
        contentType: "application/x-www-form-urlencoded",
      });
    expect((await exchange({ code_verifier: "w".repeat(64) })).body.error).toBe("invalid_grant");
    expect((await exchange({ code_verifier: verifier })).status).toBe(200);

    // A foreign page cannot post the form; unknown clients and unregistered redirect URIs get a page, not a redirect.
    const foreign = await fetch(`${server.url}/api/mcp/oauth/authorize`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://evil.example" }, body: form.toString() });
    expect(foreign.status).toBe(403);
    const unknown = await fetch(`${server.url}/api/mcp/oauth/authorize?${new URLSearchParams({ ...Object.fromEntries(authorize), client_id: "mcp_nope" })}`, { redirect: "manual" });
    expect(unknown.status).toBe(400);
    const elsewhere = await fetch(`${server.url}/api/mcp/oauth/authorize?${new URLSearchParams({ ...Object.fromEntries(authorize), redirect_uri: "http://127.0.0.1:1/other" })}`, { redirect: "manual" });
    expect(elsewhere.status).toBe(400);
    const noPkce = await fetch(`${server.url}/api/mcp/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: callback.url, state: "s2" })}`, { redirect: "manual" });
    expect(noPkce.status).toBe(302);
    expect(new URL(noPkce.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
  });
});

describe(`MCP OAuth token lifetime (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ env: { ...ACCOUNT_TEST_ENV, SWITCHYARD_OAUTH_TOKEN_TTL_MS: "1500" } });
    await createMember(server.url, server.adminToken, "ada@oauth.test", "editor");
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("stops accepting an issued token once it has expired", async () => {
    const redirectUri = "http://127.0.0.1:9/callback";
    const clientId = (await request(server.url, "POST", "/api/mcp/oauth/register", { body: { client_name: "Short", redirect_uris: [redirectUri] } })).body.client_id;
    const verifier = "k".repeat(50);
    const { createHash } = await import("node:crypto");
    const form = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      email: "ada@oauth.test",
      password: PASSWORD,
      decision: "approve",
    });
    const approved = await fetch(`${server.url}/api/mcp/oauth/authorize`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form.toString() });
    const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
    const issued = await request(server.url, "POST", "/api/mcp/oauth/token", {
      rawBody: new URLSearchParams({ grant_type: "authorization_code", code, client_id: clientId, code_verifier: verifier }).toString(),
      contentType: "application/x-www-form-urlencoded",
    });
    expect(issued.body.expires_in).toBe(1);
    const token = issued.body.access_token as string;
    expect((await request(server.url, "GET", "/admin/tokens", { token })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const expired = await request(server.url, "GET", "/admin/tokens", { token });
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toBe("The API token has expired.");
  });
});
