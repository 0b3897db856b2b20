/**
 * Online backup and offline restore (API.md §13.1) through the real parts: a service on LMDB taking a tracking
 * stream while `switchyard backup` streams `GET /admin/backup`, `switchyard restore` into a fresh dir, a second
 * service started on it and compared with the original over HTTP; refusals (roles, non-empty dir, cut-short,
 * altered and foreign files), and a download cut short by the server leaving no file behind.
 */
import { createServer, type Server } from "node:http";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, PASSWORD, asSession, createMember, createToken, signIn } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { runNode } from "../support/run-node.js";
import { CLI, NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const cli = (args: string[], env: Record<string, string> = {}) => runNode([CLI, ...args], { env: { PATH: process.env.PATH ?? "", ...env } });

describe(`online backup, offline restore (${NATIVE_MODE === "0" ? "native-free log store" : "LMDB"})`, () => {
  let original: TestServer;
  let restored: TestServer | undefined;
  let app: Awaited<ReturnType<typeof createApp>>;
  let work: string;
  let backupFile: string;
  let restoredDir: string;
  let apiToken: string;
  let oldSecretKey: string;
  let ackedBeforeBackup: string[] = [];
  let featuresAtBackup: unknown;
  let evaluatedAtBackup: unknown;
  const evaluatedQuery = "/features/evaluated?context.company.id=acme&context.user.id=u-1";
  const admin = (server: TestServer, method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });

  /** Every item of a paged §6 log, following `next` until an empty page. */
  async function everything(server: TestServer, path: string, field: string): Promise<unknown[]> {
    const items: unknown[] = [];
    for (let after = ""; ; ) {
      const page = (await admin(server, "GET", `${path}?limit=1000${after ? `&after=${encodeURIComponent(after)}` : ""}`)).body;
      if (page[field].length === 0) return items;
      items.push(...page[field]);
      after = page.next;
    }
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "switchyard-backup-test-"));
    backupFile = join(work, "store.backup");
    restoredDir = join(work, "restored");
    original = await startServer({ env: ACCOUNT_TEST_ENV });
    app = await createApp(original.url, original.adminToken, "Backed up");
    await admin(original, "PUT", `/admin/apps/${app.app.id}/features/huddle`, { description: "Huddles" });
    await admin(original, "PUT", `/admin/environments/${app.production.id}/features/huddle/targeting`, { rules: [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }] });
    await admin(original, "PUT", `/admin/environments/${app.production.id}/features/huddle/config`, { variants: [{ filter: { type: "constant", value: true }, key: "blue", payload: { n: 1 } }] });
    // A rotated-away key must stay revoked in the restored service.
    oldSecretKey = app.production.secretKey;
    app.production.secretKey = (await admin(original, "POST", `/admin/environments/${app.production.id}/keys/rotate`, { kind: "secret" })).body.key;
    await createMember(original.url, original.adminToken, "owner@example.com", "owner");
    await createMember(original.url, original.adminToken, "editor@example.com", "editor");
    apiToken = (await createToken(original.url, await signIn(original.url, "owner@example.com"), "ci")).secret;
    const track = (path: string, body: unknown) => request(original.url, "POST", path, { token: app.production.secretKey, body });
    expect((await track("/company", { companyId: "acme", userId: "u-1", attributes: { plan: "pro", seats: 12 } })).status).toBe(200);
    expect((await track("/user", { userId: "u-1", attributes: { email: "u1@example.com" } })).status).toBe(200);
    expect((await track("/feedback", { userId: "u-1", key: "huddle", score: 5, comment: "great" })).status).toBe(200);
    expect((await track("/features/events", { action: "check", key: "huddle", evalResult: true })).status).toBe(200);
  });
  afterAll(async () => {
    await restored?.stop();
    await original?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("takes a backup under a steady tracking stream; everything acknowledged before it began is in it", async () => {
    const acked: { id: string; at: number }[] = [];
    let streaming = true;
    const stream = (async () => {
      for (let n = 0; streaming; n++) {
        const id = `e-${n}`;
        const reply = await request(original.url, "POST", "/event", { token: app.production.secretKey, body: { event: id, userId: `stream-${n % 50}`, companyId: "acme" } });
        if (reply.status === 200) acked.push({ id, at: Date.now() });
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 300));
    featuresAtBackup = (await request(original.url, "GET", "/features", { token: app.production.secretKey })).body;
    evaluatedAtBackup = (await request(original.url, "GET", evaluatedQuery, { token: app.production.publishableKey })).body;
    const startedAt = Date.now();
    ackedBeforeBackup = acked.filter((item) => item.at < startedAt).map((item) => item.id);
    const backup = await cli(["backup", "--out", backupFile, "--url", original.url], { SWITCHYARD_TOKEN: apiToken });
    await new Promise((resolve) => setTimeout(resolve, 200));
    streaming = false;
    await stream;
    expect(backup.code, backup.stderr).toBe(0);
    const answer = JSON.parse(backup.stdout);
    expect(answer).toEqual({ success: true, file: backupFile, bytes: readFileSync(backupFile).length });
    expect(existsSync(`${backupFile}.partial`)).toBe(false);
    expect(ackedBeforeBackup.length).toBeGreaterThan(10);
    // The service kept answering while it streamed: the stream went on acknowledging after the backup began.
    expect(acked.filter((item) => item.at >= startedAt).length).toBeGreaterThan(0);
    expect(readdirSync(original.dataDir).filter((name) => name.startsWith(".backup"))).toEqual([]);
    const entries = (await admin(original, "GET", "/admin/audit?limit=1000&order=oldest")).body.entries;
    expect(entries.at(-1)).toMatchObject({ action: "backup.create", entity: { kind: "store", id: null }, actor: { kind: "token" } });
  });

  it("restores offline into an empty dir; a service on it answers as the original did, with its keys, members, tokens and tracked data", async () => {
    const restore = await cli(["restore", backupFile, "--data-dir", restoredDir]);
    expect(restore.code, restore.stderr).toBe(0);
    expect(JSON.parse(restore.stdout)).toEqual({ success: true, dataDir: restoredDir, bytes: readFileSync(backupFile).length });
    restored = await startServer({ dataDir: restoredDir, env: { ...ACCOUNT_TEST_ENV, SWITCHYARD_ADMIN_TOKEN: "adm_restored_0123456789abcdefghijklmnopqrstuv" } });
    expect((await request(restored.url, "GET", "/features", { token: app.production.secretKey })).body).toEqual(featuresAtBackup);
    expect((await request(restored.url, "GET", evaluatedQuery, { token: app.production.publishableKey })).body).toEqual(evaluatedAtBackup);
    expect((evaluatedAtBackup as { remoteContextUsed: boolean }).remoteContextUsed).toBe(true);
    expect((await request(restored.url, "GET", "/features", { token: oldSecretKey })).status).toBe(401);
    expect((await request(restored.url, "GET", "/admin/apps", { token: apiToken })).status).toBe(200);
    expect((await signIn(restored.url, "owner@example.com", PASSWORD)).memberId).toMatch(/./);

    const base = `/admin/environments/${app.production.id}`;
    const restoredEvents = (await everything(restored, `${base}/events`, "events")) as { event: string }[];
    const restoredIds = new Set(restoredEvents.map((event) => event.event));
    for (const id of ackedBeforeBackup) expect(restoredIds.has(id), id).toBe(true);
    // Same fields, same order: the restored log is the original's up to the backup's point.
    const originalEvents = await everything(original, `${base}/events`, "events");
    expect(originalEvents.slice(0, restoredEvents.length)).toEqual(restoredEvents);
    for (const [path, field] of [["feedback", "feedback"], ["feature-events", "featureEvents"]] as const) {
      expect(await everything(restored, `${base}/${path}`, field)).toEqual(await everything(original, `${base}/${path}`, field));
    }
    expect((await admin(restored, "GET", `${base}/companies/acme`)).body.company.attributes).toEqual({ plan: "pro", seats: 12 });
    expect((await admin(restored, "GET", `${base}/users/u-1`)).body).toEqual((await admin(original, "GET", `${base}/users/u-1`)).body);
  });

  it("refuses a non-empty dir, and a cut-short, altered or foreign file, before writing anything", async () => {
    const busy = join(work, "busy");
    mkdirSync(busy);
    writeFileSync(join(busy, "keep.txt"), "mine");
    const intoBusy = await cli(["restore", backupFile, "--data-dir", busy]);
    expect(intoBusy.code).not.toBe(0);
    expect(intoBusy.stderr).toContain(busy);
    expect(readdirSync(busy)).toEqual(["keep.txt"]);

    // A running service's data dir is never empty: restore refuses it and the service goes on.
    const beforeRestore = readdirSync(original.dataDir).sort();
    const intoLive = await cli(["restore", backupFile, "--data-dir", original.dataDir]);
    expect(intoLive.code).not.toBe(0);
    expect(readdirSync(original.dataDir).sort()).toEqual(beforeRestore);
    expect((await request(original.url, "GET", "/features", { token: app.production.secretKey })).status).toBe(200);

    const bytes = readFileSync(backupFile);
    const cases: [string, Buffer, RegExp][] = [
      ["cut.backup", bytes.subarray(0, Math.floor(bytes.length / 2)), /cut short/],
      ["nearly.backup", bytes.subarray(0, bytes.length - 1), /cut short|altered/],
      ["altered.backup", Buffer.concat([bytes.subarray(0, 5000), Buffer.from([bytes[5000]! ^ 0xff]), bytes.subarray(5001)]), /altered/],
      ["foreign.backup", Buffer.from("PK\u0003\u0004 not ours at all, but long enough to have a trailer ..............................."), /not a Switchyard backup/],
    ];
    for (const [name, content, message] of cases) {
      const file = join(work, name);
      writeFileSync(file, content);
      const target = join(work, `target-${name}`);
      const refused = await cli(["restore", file, "--data-dir", target]);
      expect(refused.code, name).not.toBe(0);
      expect(refused.stderr, name).toMatch(message);
      expect(existsSync(target), name).toBe(false);
      expect(readdirSync(work).filter((entry) => entry.startsWith(`target-${name}`)), name).toEqual([]);
    }
    const empty = join(work, "empty");
    mkdirSync(empty);
    const refusedEmpty = await cli(["restore", join(work, "cut.backup"), "--data-dir", empty]);
    expect(refusedEmpty.code).not.toBe(0);
    expect(readdirSync(empty)).toEqual([]);
  });

  it("carries a generated admin token over, as the data dir held it", async () => {
    // Without SWITCHYARD_ADMIN_TOKEN the service generates one into its data dir (an undefined value is not passed on).
    const unset = { SWITCHYARD_ADMIN_TOKEN: undefined as unknown as string };
    const generated = await startServer({ env: unset });
    const dir = join(work, "generated-restored");
    try {
      const token = readFileSync(join(generated.dataDir, "admin-token"), "utf8").trim();
      const file = join(work, "generated.backup");
      const backup = await cli(["backup", "--out", file, "--url", generated.url], { SWITCHYARD_TOKEN: token });
      expect(backup.code, backup.stderr + backup.stdout).toBe(0);
      expect((await cli(["restore", file, "--data-dir", dir])).code).toBe(0);
      expect(readFileSync(join(dir, "admin-token"), "utf8").trim()).toBe(token);
      expect(statSync(join(dir, "admin-token")).mode & 0o777).toBe(0o600);
      const again = await startServer({ dataDir: dir, env: unset });
      try {
        expect((await request(again.url, "GET", "/admin/apps", { token })).status).toBe(200);
      } finally {
        await again.stop();
      }
    } finally {
      await generated.stop();
    }
  });

  it("is for owners and the admin token only; an owner's session downloads it as an attachment", async () => {
    const editor = await signIn(original.url, "editor@example.com");
    expect((await asSession(original.url, editor, "GET", "/admin/backup")).status).toBe(403);
    const owner = await signIn(original.url, "owner@example.com");
    const readOnly = await createToken(original.url, owner, "read only", true);
    const refusedToken = await request(original.url, "GET", "/admin/backup", { token: readOnly.secret });
    expect(refusedToken.status).toBe(403);
    expect(refusedToken.body.error.code).toBe("FORBIDDEN");
    expect((await request(original.url, "GET", "/admin/backup", { token: app.production.secretKey })).status).toBe(403);
    expect((await request(original.url, "GET", "/admin/backup")).status).toBe(401);
    const response = await fetch(`${original.url}/admin/backup`, { headers: { cookie: `switchyard_session=${owner.cookie}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/octet-stream");
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="switchyard-\d{8}T\d{6}Z\.backup"$/);
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.subarray(0, 20).toString("latin1")).toBe("SWITCHYARD-BACKUP/1\n");
  });

  it("a client that goes away mid-stream leaves nothing behind in the data dir", async () => {
    const controller = new AbortController();
    const response = await fetch(`${original.url}/admin/backup`, { headers: { authorization: `Bearer ${original.adminToken}` }, signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.read().catch(() => undefined);
    const deadline = Date.now() + 5_000;
    while (readdirSync(original.dataDir).some((name) => name.startsWith(".backup")) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readdirSync(original.dataDir).filter((name) => name.startsWith(".backup"))).toEqual([]);
    expect((await request(original.url, "GET", "/health")).status).toBe(200);
  });

  it("switchyard backup keeps no file when the stream is cut short", async () => {
    const whole = readFileSync(backupFile);
    const cutting: Server = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/octet-stream" });
      response.end(whole.subarray(0, whole.length - 100));
    });
    await new Promise<void>((resolve) => cutting.listen(0, "127.0.0.1", resolve));
    try {
      const port = (cutting.address() as { port: number }).port;
      const out = join(work, "cut-download.backup");
      const run = await cli(["backup", "--out", out, "--url", `http://127.0.0.1:${port}`], { SWITCHYARD_TOKEN: "sya_whatever" });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/not whole/);
      expect(existsSync(out)).toBe(false);
      expect(existsSync(`${out}.partial`)).toBe(false);
    } finally {
      cutting.close();
    }
  });
});
