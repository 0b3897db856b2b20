/**
 * Issue 16 over real HTTP, on either twin: first owner, sign-in and sessions (cookie attributes, no fixation, CSRF,
 * sign-out, expiry), throttled sign-in, members, API tokens, password resets, and no password or token in the
 * server's output or in any answer after the one that created it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, createToken, PASSWORD, sessionCookieOf, signIn, signInReply, type Session } from "../support/accounts.js";
import { request } from "../support/http.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const twin = NATIVE_MODE === "0" ? "native-free" : "native";

describe(`accounts (${twin} twin)`, () => {
  let server: TestServer;
  let owner: Session;
  const stderr: string[] = [];
  /** Every password and secret handed out: none may appear in the server's output, nor in a later answer. */
  const secrets = new Set<string>([PASSWORD]);
  const later: string[] = [];

  beforeAll(async () => {
    server = await startServer({ env: { ...ACCOUNT_TEST_ENV, SWITCHYARD_SIGNIN_MAX_FAILURES: "3", SWITCHYARD_SIGNIN_MAX_FAILURES_PER_ADDRESS: "1000" } });
    server.process.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
  });
  afterAll(async () => {
    await server.stop();
  });

  const remember = (...values: string[]) => values.forEach((value) => secrets.add(value));
  const keep = <T extends { body: unknown }>(reply: T): T => {
    later.push(JSON.stringify(reply.body));
    return reply;
  };

  it("creates the first owner with the admin token", async () => {
    expect((await request(server.url, "GET", "/admin/setup")).body).toEqual({ success: true, hasOwner: false, adminTokenEnabled: true });
    // Without a credential, and with a password too short, nothing is created.
    expect((await request(server.url, "POST", "/admin/members", { body: { email: "o@x.test", role: "owner", password: PASSWORD } })).status).toBe(401);
    const short = await request(server.url, "POST", "/admin/members", { token: server.adminToken, body: { email: "o@x.test", role: "owner", password: "short" } });
    expect(short.status).toBe(400);
    expect(short.body.error.validationErrors[0].path).toBe("password");
    const created = await createMember(server.url, server.adminToken, "Owner@X.test", "owner");
    expect(created).toMatchObject({ email: "owner@x.test", role: "owner", name: "owner" });
    expect(JSON.stringify(created)).not.toMatch(/password|scrypt|salt/);
    expect((await request(server.url, "GET", "/admin/setup")).body.hasOwner).toBe(true);
    const duplicate = await request(server.url, "POST", "/admin/members", { token: server.adminToken, body: { email: "owner@x.test", role: "viewer", password: PASSWORD } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.code).toBe("CONFLICT");
  });

  it("signs in with an HttpOnly, SameSite=Strict cookie and a CSRF token, Secure only behind TLS", async () => {
    const reply = await signInReply(server.url, "owner@x.test", PASSWORD);
    expect(reply.status).toBe(200);
    const cookie = reply.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^switchyard_session=[A-Za-z0-9]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=\d+$/);
    expect(reply.headers.get("cache-control")).toBe("no-store");
    expect(reply.body.member).toMatchObject({ email: "owner@x.test", role: "owner" });
    expect(reply.body.member.lastSignInAt).not.toBeNull();
    expect(typeof reply.body.csrfToken).toBe("string");
    owner = { cookie: sessionCookieOf(reply.headers)!, csrfToken: reply.body.csrfToken, memberId: reply.body.member.id };
    remember(owner.cookie);
    const tls = await signInReply(server.url, "owner@x.test", PASSWORD, { "x-forwarded-proto": "https" });
    expect(tls.headers.get("set-cookie")).toMatch(/; Secure$/);
    remember(sessionCookieOf(tls.headers)!);
    const me = keep(await asSession(server.url, owner, "GET", "/admin/session"));
    expect(me.body).toMatchObject({ member: { id: owner.memberId }, role: "owner", csrfToken: owner.csrfToken, actor: { kind: "member", id: owner.memberId } });
  });

  it("answers a wrong password and an unknown email alike, and records both", async () => {
    const wrongPassword = await signInReply(server.url, "owner@x.test", "not the password at all");
    const unknownEmail = await signInReply(server.url, "nobody@x.test", PASSWORD);
    const malformedEmail = await signInReply(server.url, "not an email", PASSWORD);
    for (const reply of [wrongPassword, unknownEmail, malformedEmail]) {
      expect(reply.status).toBe(401);
      expect(reply.headers.get("set-cookie")).toBeNull();
    }
    expect(unknownEmail.body).toEqual(wrongPassword.body);
    expect(malformedEmail.body).toEqual(wrongPassword.body);
    expect(wrongPassword.body.error.code).toBe("INVALID_CREDENTIALS");
    const failures = await request(server.url, "GET", "/admin/audit?entity=session&order=oldest", { token: server.adminToken });
    const failed = failures.body.entries.filter((entry: { action: string }) => entry.action === "session.sign-in-failed");
    expect(failed.map((entry: { details: { email: string } }) => entry.details.email)).toEqual(["owner@x.test", "nobody@x.test", "not an email"]);
    expect(failed[0].actor).toEqual({ kind: "anonymous", id: "anonymous" });
  });

  it("slows brute force: past the failures allowed for an account, even the right password gets 429", async () => {
    await createMember(server.url, server.adminToken, "target@x.test", "viewer");
    for (let attempt = 0; attempt < 3; attempt++) expect((await signInReply(server.url, "target@x.test", `guess number ${attempt}`)).status).toBe(401);
    const blocked = await signInReply(server.url, "target@x.test", PASSWORD);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe("RATE_LIMITED");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(blocked.headers.get("set-cookie")).toBeNull();
    // Other accounts are unaffected.
    expect((await signInReply(server.url, "owner@x.test", PASSWORD)).status).toBe(200);
  });

  it("gives every sign-in a new session id and ends the one the browser came with (no fixation)", async () => {
    const first = await signIn(server.url, "owner@x.test");
    const planted = { cookie: first.cookie };
    const second = await signInReply(server.url, "owner@x.test", PASSWORD, { cookie: `switchyard_session=${planted.cookie}` });
    const fresh = sessionCookieOf(second.headers)!;
    expect(fresh).not.toBe(first.cookie);
    remember(first.cookie, fresh);
    expect((await asSession(server.url, first, "GET", "/admin/apps")).status).toBe(401);
    expect((await asSession(server.url, { ...first, cookie: fresh }, "GET", "/admin/apps")).status).toBe(200);
    // A made-up cookie is never adopted either.
    const invented = await signInReply(server.url, "owner@x.test", PASSWORD, { cookie: "switchyard_session=attackerChosenValue0123456789012345678901234" });
    expect(sessionCookieOf(invented.headers)).not.toBe("attackerChosenValue0123456789012345678901234");
    remember(sessionCookieOf(invented.headers)!);
  });

  it("refuses cookie writes without the CSRF token, with a wrong one, or from a foreign Origin", async () => {
    const body = { name: "csrf" };
    const noToken = await asSession(server.url, owner, "POST", "/admin/apps", body, { "x-csrf-token": "" });
    expect(noToken.status).toBe(403);
    expect(noToken.body.error.code).toBe("CSRF_REJECTED");
    const wrongToken = await asSession(server.url, owner, "POST", "/admin/apps", body, { "x-csrf-token": "a".repeat(43) });
    expect(wrongToken.body.error.code).toBe("CSRF_REJECTED");
    const foreign = await asSession(server.url, owner, "POST", "/admin/apps", body, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe("CSRF_REJECTED");
    const nullOrigin = await asSession(server.url, owner, "POST", "/admin/apps", body, { origin: "null" });
    expect(nullOrigin.body.error.code).toBe("CSRF_REJECTED");
    // The service's own origin, or none, with the token: accepted.
    expect((await asSession(server.url, owner, "POST", "/admin/apps", body, { origin: server.url })).status).toBe(200);
    expect((await asSession(server.url, owner, "POST", "/admin/apps", body)).status).toBe(200);
    // Reads need no token; sign-in from a foreign page is refused (login CSRF).
    expect((await asSession(server.url, owner, "GET", "/admin/apps", undefined, { origin: "https://evil.example" })).status).toBe(200);
    const foreignSignIn = await signInReply(server.url, "owner@x.test", PASSWORD, { origin: "https://evil.example" });
    expect(foreignSignIn.status).toBe(403);
    expect(foreignSignIn.headers.get("set-cookie")).toBeNull();
    // The admin token as a Bearer is not a browser credential: no CSRF token needed.
    expect((await request(server.url, "POST", "/admin/apps", { token: server.adminToken, body, headers: { origin: "https://evil.example" } })).status).toBe(200);
  });

  it("signs out: the cookie is cleared and the session stops at once", async () => {
    const session = await signIn(server.url, "owner@x.test");
    remember(session.cookie);
    const out = await asSession(server.url, session, "DELETE", "/admin/session");
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toMatch(/^switchyard_session=; .*Max-Age=0/);
    expect((await asSession(server.url, session, "GET", "/admin/session")).status).toBe(401);
  });

  it("issues personal API tokens shown once, acting with the member's role; read-only ones only read", async () => {
    const editor = await createMember(server.url, server.adminToken, "editor@x.test", "editor");
    const session = await signIn(server.url, editor.email);
    remember(session.cookie);
    const full = await asSession(server.url, session, "POST", "/admin/tokens", { name: "ci" });
    expect(full.status).toBe(200);
    expect(full.body.secret).toMatch(/^sya_[A-Za-z0-9]{43}$/);
    expect(full.body.token).toEqual({ id: expect.stringMatching(/^tok_/), name: "ci", readOnly: false, createdAt: expect.any(String), lastUsedAt: null, memberId: editor.id, expiresAt: null, oauthClient: null });
    const readOnly = await createToken(server.url, session, "dashboards", true);
    remember(full.body.secret, readOnly.secret);

    const created = await request(server.url, "POST", "/admin/apps", { token: full.body.secret, body: { name: "by token" } });
    expect(created.status).toBe(200);
    expect((await request(server.url, "POST", "/admin/members", { token: full.body.secret, body: { email: "x@x.test", role: "viewer", password: PASSWORD } })).status).toBe(403);
    expect((await request(server.url, "GET", "/admin/apps", { token: readOnly.secret })).status).toBe(200);
    const refused = await request(server.url, "POST", "/admin/apps", { token: readOnly.secret, body: { name: "nope" } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("FORBIDDEN");
    expect((await request(server.url, "POST", "/admin/tokens", { token: readOnly.secret, body: { name: "escalate" } })).status).toBe(403);
    // Management credentials are of the wrong kind on the front-facing API.
    expect((await request(server.url, "GET", "/features", { token: full.body.secret })).status).toBe(403);

    // Listed without secrets, with the time of last use; the member sees their own, an owner everyone's.
    const mine = keep(await asSession(server.url, session, "GET", "/admin/tokens"));
    expect(mine.body.tokens.map((token: { name: string }) => token.name)).toEqual(["ci", "dashboards"]);
    expect(mine.body.tokens[0].lastUsedAt).not.toBeNull();
    const all = keep(await asSession(server.url, owner, "GET", "/admin/tokens"));
    expect(all.body.tokens.length).toBeGreaterThanOrEqual(2);
    const other = await createMember(server.url, server.adminToken, "other@x.test", "editor");
    const otherSession = await signIn(server.url, other.email);
    remember(otherSession.cookie);
    expect((await asSession(server.url, otherSession, "GET", "/admin/tokens")).body.tokens).toEqual([]);
    expect((await asSession(server.url, otherSession, "DELETE", `/admin/tokens/${full.body.token.id}`)).status).toBe(404);

    // Revoked: stops at once.
    expect((await asSession(server.url, session, "DELETE", `/admin/tokens/${full.body.token.id}`)).status).toBe(200);
    const revoked = await request(server.url, "GET", "/admin/apps", { token: full.body.secret });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe("UNAUTHORIZED");
  });

  it("manages members: roles take effect at once, the last owner stays, a removed member's credentials stop", async () => {
    const member = await createMember(server.url, server.adminToken, "changing@x.test", "viewer");
    const session = await signIn(server.url, member.email);
    const token = await createToken(server.url, session, "t");
    remember(session.cookie, token.secret);
    expect((await asSession(server.url, session, "POST", "/admin/apps", { name: "v" })).status).toBe(403);
    const promoted = await asSession(server.url, owner, "PATCH", `/admin/members/${member.id}`, { role: "editor", name: "Changed" });
    expect(promoted.body.member).toMatchObject({ role: "editor", name: "Changed" });
    expect((await asSession(server.url, session, "POST", "/admin/apps", { name: "e" })).status).toBe(200);
    // Editors do not manage members.
    expect((await asSession(server.url, session, "PATCH", `/admin/members/${member.id}`, { role: "owner" })).status).toBe(403);

    const demoteLast = await asSession(server.url, owner, "PATCH", `/admin/members/${owner.memberId}`, { role: "viewer" });
    expect(demoteLast.status).toBe(409);
    expect(demoteLast.body.error.code).toBe("CONFLICT");
    expect((await asSession(server.url, owner, "DELETE", `/admin/members/${owner.memberId}`)).status).toBe(409);
    expect((await asSession(server.url, owner, "PATCH", `/admin/members/${member.id}`, {})).status).toBe(400);

    expect((await asSession(server.url, owner, "DELETE", `/admin/members/${member.id}`)).status).toBe(200);
    expect((await asSession(server.url, session, "GET", "/admin/apps")).status).toBe(401);
    expect((await request(server.url, "GET", "/admin/apps", { token: token.secret })).status).toBe(401);
    const listed = keep(await request(server.url, "GET", "/admin/members", { token: server.adminToken }));
    expect(listed.body.members.map((entry: { email: string }) => entry.email)).not.toContain("changing@x.test");
  });

  it("resets a password with a one-time link an owner hands over", async () => {
    const member = await createMember(server.url, server.adminToken, "forgetful@x.test", "viewer");
    const before = await signIn(server.url, member.email);
    remember(before.cookie);
    const issued = await asSession(server.url, owner, "POST", `/admin/members/${member.id}/password-reset`);
    expect(issued.status).toBe(200);
    expect(issued.headers.get("cache-control")).toBe("no-store");
    const { token, link, expiresAt } = issued.body.reset;
    remember(token);
    expect(token).toMatch(/^syr_[A-Za-z0-9]{43}$/);
    // In the fragment: never sent to a server, never in a Referer.
    expect(link).toBe(`${server.url}/dashboard/#/reset-password?token=${token}`);
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    const newPassword = "a brand new passphrase";
    remember(newPassword);
    const weak = await request(server.url, "POST", "/admin/password-reset", { body: { token, password: "short" } });
    expect(weak.status).toBe(400);
    const done = await request(server.url, "POST", "/admin/password-reset", { body: { token, password: newPassword } });
    expect(done.status).toBe(200);
    expect(done.body.member.email).toBe(member.email);
    // Used once; sessions of the old password end; the new password works, the old does not.
    const again = await request(server.url, "POST", "/admin/password-reset", { body: { token, password: newPassword } });
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe("INVALID_CREDENTIALS");
    expect((await asSession(server.url, before, "GET", "/admin/session")).status).toBe(401);
    expect((await signInReply(server.url, member.email, PASSWORD)).status).toBe(401);
    remember((await signIn(server.url, member.email, newPassword)).cookie);
  });

  it("keeps every password and secret out of the server's output and out of later answers", async () => {
    const audit = keep(await request(server.url, "GET", "/admin/audit?limit=1000", { token: server.adminToken }));
    expect(audit.body.entries.length).toBeGreaterThan(10);
    keep(await request(server.url, "GET", "/admin/members", { token: server.adminToken }));
    // Output written so far; stop() flushes anything pending when the suite ends, this checks what is there now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const output = [...server.output, ...stderr].join("\n");
    expect(output.length).toBeGreaterThan(0);
    const leaked = [...secrets].filter((secret) => output.includes(secret));
    expect(leaked).toEqual([]);
    const answers = later.join("\n");
    expect([...secrets].filter((secret) => answers.includes(secret))).toEqual([]);
    // Digests are not in answers either.
    expect(answers).not.toMatch(/"digest"|"password"|"hash"/);
  });
});

describe(`session expiry (${twin} twin)`, () => {
  // Limits long next to a loaded CI machine's pauses: a scrypt sign-in there has taken over a second.
  const IDLE_MS = 2_000;
  const ABSOLUTE_MS = 5_000;
  const USE_EVERY_MS = 300;

  it("ends a session left idle past SWITCHYARD_SESSION_IDLE_MS, and any session past SWITCHYARD_SESSION_ABSOLUTE_MS", async () => {
    const server = await startServer({ env: { ...ACCOUNT_TEST_ENV, SWITCHYARD_SESSION_IDLE_MS: String(IDLE_MS), SWITCHYARD_SESSION_ABSOLUTE_MS: String(ABSOLUTE_MS) } });
    try {
      await createMember(server.url, server.adminToken, "short@x.test", "editor");
      const idle = await signIn(server.url, "short@x.test");
      expect((await asSession(server.url, idle, "GET", "/admin/session")).status).toBe(200);
      const idleUsedAt = Date.now();
      // The busy session is used every 300 ms, well within the idle limit: it outlives the idle one, then meets the
      // absolute limit, counted from before its sign-in began (the session starts no earlier).
      const busyStartedAt = Date.now();
      const busy = await signIn(server.url, "short@x.test");
      let idleStatus: number | undefined;
      let busyExpiredAfter: number | undefined;
      while (busyExpiredAfter === undefined) {
        await new Promise((resolve) => setTimeout(resolve, USE_EVERY_MS));
        const reply = await asSession(server.url, busy, "GET", "/admin/session");
        if (reply.status === 401) busyExpiredAfter = Date.now() - busyStartedAt;
        else expect(reply.status).toBe(200);
        if (idleStatus === undefined && Date.now() - idleUsedAt > IDLE_MS + USE_EVERY_MS) idleStatus = (await asSession(server.url, idle, "GET", "/admin/apps")).status;
      }
      expect(idleStatus).toBe(401);
      expect(busyExpiredAfter).toBeGreaterThanOrEqual(ABSOLUTE_MS);
      const expired = await asSession(server.url, busy, "GET", "/admin/apps");
      expect(expired.body.error).toMatchObject({ code: "UNAUTHORIZED", message: "The session has expired; sign in again." });
    } finally {
      await server.stop();
    }
  });
});
