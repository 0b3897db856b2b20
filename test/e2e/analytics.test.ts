/**
 * Company-level analytics over HTTP (docs/ANALYTICS.md), on a hand-built history whose answers are worked out below.
 *
 * Window: 2024-03-01 .. 2024-03-31 (30 days); its last quarter starts at 2024-03-23T12:00Z. N = 2 unless set.
 * Features: export (usage events: export, export-csv, export-pdf), huddle (huddle), reports (never used).
 *
 * | company  | how its export usage arrives                                                  | days in window     | state    |
 * |----------|-------------------------------------------------------------------------------|--------------------|----------|
 * | acme     | u1 (associated by /company), no companyId; Mar 2 ×3 (one export-pdf), Mar 25  | 2, last Mar 25     | retained |
 * | globex   | u3 with companyId, export-csv Mar 3, 10, 23 11:59:59.999; Feb 28 and Mar 31 out | 3, last < quarter | churned  |
 * | hooli    | u5 before moving to wayne: Mar 5                                              | 1                  | tried    |
 * | initech  | u6 with companyId: Mar 28; Feb 15 out of the window                           | 1                  | tried    |
 * | stark    | u4 with companyId: Mar 20, Mar 23 12:00:00.000 (exactly the quarter's start)  | 2                  | retained |
 * | umbrella | created by /company, never used                                               | 0                  | none     |
 * | wayne    | u5 after moving: Mar 6, Mar 26                                                | 2                  | retained |
 * u9 has no company: their usage and feedback are left out of company-level results (feedback still counts overall).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import { CLI, startServer, type TestServer } from "../support/server.js";

const run = promisify(execFile);
const WINDOW = "from=2024-03-01&to=2024-03-31";
const NO_SCORE = { count: 0, average: null };

describe("analytics API over HTTP", () => {
  let server: TestServer;
  let admin: string;
  let keys: Awaited<ReturnType<typeof createApp>>;
  let base: string;
  const adminCall = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: admin, body });
  const get = (path: string) => adminCall("GET", path);
  const post = async (path: string, body: unknown) => {
    const reply = await request(server.url, "POST", path, { token: keys.production.publishableKey, body });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  };
  const event = (userId: string, name: string, timestamp: string, companyId?: string) => post("/event", { event: name, userId, timestamp, ...(companyId ? { companyId } : {}) });
  const summary = async (query = WINDOW) => {
    const reply = await get(`${base}/features?${query}`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  };
  const featureOf = (answer: Record<string, any>, key: string) => answer.features.find((feature: { key: string }) => feature.key === key);

  beforeAll(async () => {
    server = await startServer();
    admin = server.adminToken;
    keys = await createApp(server.url, admin);
    base = `/admin/environments/${keys.production.id}/analytics`;
    for (const [key, usageEvents] of [["export", ["export-csv", "export-pdf"]], ["huddle", []], ["reports", []]] as const) {
      expect((await adminCall("PUT", `/admin/apps/${keys.app.id}/features/${key}`, { usageEvents })).status).toBe(200);
    }

    await post("/company", { companyId: "acme", userId: "u1", timestamp: "2024-02-01T00:00:00Z" });
    await post("/company", { companyId: "umbrella", timestamp: "2024-02-01T00:00:00Z" });
    await post("/company", { companyId: "hooli", userId: "u5", timestamp: "2024-02-02T00:00:00Z" });
    // acme through u1's association; out of order; three events on Mar 2 are one day.
    await event("u1", "export", "2024-03-25T10:00:00Z");
    await event("u1", "export", "2024-03-02T08:00:00Z");
    await event("u1", "export", "2024-03-02T09:00:00Z");
    await event("u1", "export-pdf", "2024-03-02T20:00:00Z");
    await event("u1", "huddle", "2024-03-04T12:00:00Z");
    await event("u1", "unrelated", "2024-03-05T12:00:00Z");
    // globex: the last use is a millisecond before the last quarter; two events fall outside the window.
    await event("u3", "export-csv", "2024-03-03T10:00:00Z", "globex");
    await event("u3", "export-csv", "2024-03-10T10:00:00Z", "globex");
    await event("u3", "export-csv", "2024-03-23T11:59:59.999Z", "globex");
    await event("u3", "export", "2024-02-29T23:59:59.999Z", "globex");
    await event("u3", "export", "2024-03-31T00:00:00.000Z", "globex");
    // stark: the last use is exactly at the start of the last quarter.
    await event("u4", "export", "2024-03-20T10:00:00Z", "stark");
    await event("u4", "export", "2024-03-23T12:00:00.000Z", "stark");
    await event("u6", "export", "2024-03-28T10:00:00Z", "initech");
    await event("u6", "export", "2024-02-15T10:00:00Z", "initech");
    // u5 uses export for hooli, gives feedback there, then moves to wayne: later events count for wayne.
    await event("u5", "export", "2024-03-05T10:00:00Z");
    const hooliFeedback = await post("/feedback", { userId: "u5", key: "export", score: 2, timestamp: "2024-03-05T13:00:00Z" });
    await post("/company", { companyId: "wayne", userId: "u5", timestamp: "2024-03-05T12:00:00Z" });
    await event("u5", "export", "2024-03-06T10:00:00Z");
    await event("u5", "export", "2024-03-26T10:00:00Z");
    // Updated after the move (comment only): still hooli's, still scored 2.
    await post("/feedback", { userId: "u5", key: "export", feedbackId: hooliFeedback.feedbackId, comment: "better now" });
    // u9 has no company.
    for (const day of ["10", "20", "28"]) await event("u9", "export", `2024-03-${day}T10:00:00Z`);

    // Satisfaction of export: acme 5 (scored 2, then updated to 5), globex 4, hooli 2, u9 1 (overall only).
    const acmeFeedback = await post("/feedback", { userId: "u1", key: "export", score: 2, timestamp: "2024-03-10T10:00:00Z" });
    await post("/feedback", { userId: "u1", key: "export", feedbackId: acmeFeedback.feedbackId, score: 5 });
    await post("/feedback", { userId: "u3", companyId: "globex", key: "export", score: 4, timestamp: "2024-03-11T10:00:00Z" });
    await post("/feedback", { userId: "u9", key: "export", score: 1, timestamp: "2024-03-12T10:00:00Z" });
    await post("/feedback", { userId: "u4", key: "export", score: 3, timestamp: "2024-02-01T10:00:00Z" }); // outside
    await post("/feedback", { userId: "u6", key: "export", comment: "no score", timestamp: "2024-03-12T10:00:00Z" });

    // Exposure of huddle, received now: acme (twice), globex (flattened), wayne (through u5). Not: a false result,
    // a config check, a user without a company.
    await post("/features/events", [
      { action: "check", key: "huddle", evalResult: true, evalContext: { company: { id: "acme" } } },
      { action: "evaluate", key: "huddle", evalResult: true, evalContext: { "company.id": "globex", "user.id": "u1" } },
      { action: "check", key: "huddle", evalResult: true, evalContext: { user: { id: "u5" } } },
      { action: "check", key: "huddle", evalResult: false, evalContext: { company: { id: "initech" } } },
      { action: "check-config", key: "huddle", evalResult: { key: "a", payload: null }, evalContext: { company: { id: "stark" } } },
      { action: "check", key: "huddle", evalResult: true, evalContext: { user: { id: "u9" } } },
      { action: "evaluate", key: "huddle", evalResult: true, evalContext: { company: { id: "acme" } } },
    ]);
  });

  afterAll(async () => {
    await server.stop();
  });

  it("summarises adoption, satisfaction and exposure per feature", async () => {
    const answer = await summary();
    expect(answer).toEqual({
      success: true,
      from: "2024-03-01T00:00:00.000Z",
      to: "2024-03-31T00:00:00.000Z",
      features: [
        { key: "export", name: "export", companies: { none: 1, tried: 2, retained: 3, churned: 1, adopted: 4 }, satisfaction: { count: 4, average: 3 }, exposure: { companies: 0 } },
        { key: "huddle", name: "huddle", companies: { none: 6, tried: 1, retained: 0, churned: 0, adopted: 0 }, satisfaction: NO_SCORE, exposure: { companies: 0 } },
        { key: "reports", name: "reports", companies: { none: 7, tried: 0, retained: 0, churned: 0, adopted: 0 }, satisfaction: NO_SCORE, exposure: { companies: 0 } },
      ],
    });
  });

  it("counts exposure from true evaluate/check events in the window they were received", async () => {
    const day = 86_400_000;
    const from = new Date(Date.now() - day).toISOString().slice(0, 10);
    const to = new Date(Date.now() + 2 * day).toISOString().slice(0, 10);
    const answer = await summary(`from=${from}&to=${to}`);
    expect(featureOf(answer, "huddle").exposure).toEqual({ companies: 3 });
    expect(featureOf(answer, "export").exposure).toEqual({ companies: 0 });
  });

  it("lists every company's standing with a feature, paged in companyId order", async () => {
    const pages: Record<string, any>[] = [];
    let after = "";
    do {
      const reply = await get(`${base}/features/export/companies?${WINDOW}&limit=3${after ? `&after=${after}` : ""}`);
      expect(reply.status).toBe(200);
      pages.push(reply.body);
      after = reply.body.next ?? "";
    } while (after);
    expect(pages.map((page) => page.companies.map((row: { companyId: string }) => row.companyId))).toEqual([
      ["acme", "globex", "hooli"],
      ["initech", "stark", "umbrella"],
      ["wayne"],
    ]);
    expect(pages.map((page) => page.next)).toEqual(["hooli", "umbrella", null]);
    expect(pages[0]).toMatchObject({ success: true, from: "2024-03-01T00:00:00.000Z", to: "2024-03-31T00:00:00.000Z" });
    expect(pages.flatMap((page) => page.companies)).toEqual([
      { companyId: "acme", state: "retained", usageDays: 2, lastUsedAt: "2024-03-25T10:00:00.000Z", satisfaction: { count: 1, average: 5 } },
      { companyId: "globex", state: "churned", usageDays: 3, lastUsedAt: "2024-03-23T11:59:59.999Z", satisfaction: { count: 1, average: 4 } },
      { companyId: "hooli", state: "tried", usageDays: 1, lastUsedAt: "2024-03-05T10:00:00.000Z", satisfaction: { count: 1, average: 2 } },
      { companyId: "initech", state: "tried", usageDays: 1, lastUsedAt: "2024-03-28T10:00:00.000Z", satisfaction: NO_SCORE },
      { companyId: "stark", state: "retained", usageDays: 2, lastUsedAt: "2024-03-23T12:00:00.000Z", satisfaction: NO_SCORE },
      { companyId: "umbrella", state: "none", usageDays: 0, lastUsedAt: null, satisfaction: NO_SCORE },
      { companyId: "wayne", state: "retained", usageDays: 2, lastUsedAt: "2024-03-26T10:00:00.000Z", satisfaction: NO_SCORE },
    ]);
    expect((await get(`${base}/features/nope/companies?${WINDOW}`)).status).toBe(404);
    expect((await get(`${base}/features/export/companies?${WINDOW}&limit=0`)).status).toBe(400);
  });

  it("shows one company's standing with every feature", async () => {
    const reply = await get(`${base}/companies/acme?${WINDOW}`);
    expect(reply.body).toEqual({
      success: true,
      from: "2024-03-01T00:00:00.000Z",
      to: "2024-03-31T00:00:00.000Z",
      features: [
        { key: "export", name: "export", state: "retained", usageDays: 2, lastUsedAt: "2024-03-25T10:00:00.000Z", satisfaction: { count: 1, average: 5 } },
        { key: "huddle", name: "huddle", state: "tried", usageDays: 1, lastUsedAt: "2024-03-04T12:00:00.000Z", satisfaction: NO_SCORE },
        { key: "reports", name: "reports", state: "none", usageDays: 0, lastUsedAt: null, satisfaction: NO_SCORE },
      ],
    });
    expect((await get(`${base}/companies/nobody?${WINDOW}`)).status).toBe(404);
  });

  it("refuses bad windows with 400", async () => {
    for (const query of ["from=yesterday", "to=2024-13-01", "from=2024-03-10&to=2024-03-01", "from=2024-03-01T10:00:00Z&to=2024-03-01T10:00:00Z", "from=1990-01-01&to=2024-01-01"]) {
      const reply = await get(`${base}/features?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.body.error.code).toBe("INVALID_QUERY");
    }
    expect((await get(`${base}/companies/acme?from=nope`)).status).toBe(400);
  });

  it("defaults to the 30 days up to today", async () => {
    const answer = await summary("");
    const to = Date.parse(answer.to);
    expect(to % 86_400_000).toBe(0);
    expect(to - Date.parse(answer.from)).toBe(30 * 86_400_000);
    expect(to > Date.now() && to <= Date.now() + 86_400_000).toBe(true);
  });

  it("applies the environment's retention days", async () => {
    expect((await get(`${base}/settings`)).body).toEqual({ success: true, settings: { retentionDays: 2 } });
    expect((await adminCall("PUT", `${base}/settings`, { retentionDays: 0 })).status).toBe(400);
    expect((await adminCall("PUT", `${base}/settings`, { retentionDays: 3 })).body).toEqual({ success: true, settings: { retentionDays: 3 } });
    // Only globex used export on 3 days, all before the last quarter.
    expect(featureOf(await summary(), "export").companies).toEqual({ none: 1, tried: 5, retained: 0, churned: 1, adopted: 1 });
    await adminCall("PUT", `${base}/settings`, { retentionDays: 2 });
    expect(featureOf(await summary(), "export").companies).toEqual({ none: 1, tried: 2, retained: 3, churned: 1, adopted: 4 });
  });

  it("counts a feature's new usage events at once, without a rebuild", async () => {
    await adminCall("PUT", `/admin/apps/${keys.app.id}/features/huddle`, { usageEvents: ["export-csv"] });
    try {
      expect(featureOf(await summary(), "huddle").companies).toEqual({ none: 5, tried: 1, retained: 0, churned: 1, adopted: 1 });
      const globex = (await get(`${base}/companies/globex?${WINDOW}`)).body.features.find((row: { key: string }) => row.key === "huddle");
      expect(globex).toMatchObject({ state: "churned", usageDays: 3 });
    } finally {
      await adminCall("PUT", `/admin/apps/${keys.app.id}/features/huddle`, { usageEvents: [] });
    }
  });

  it("rebuilds the aggregates from the logs to the same answers", async () => {
    const before = await summary();
    const page = (await get(`${base}/features/export/companies?${WINDOW}&limit=1000`)).body;
    const rebuilt = await adminCall("POST", `${base}/rebuild`);
    expect(rebuilt.status).toBe(200);
    expect(rebuilt.body.rebuilt).toMatchObject({ events: 21, featureEvents: 7, feedback: 6 });
    expect(await summary()).toEqual(before);
    expect((await get(`${base}/features/export/companies?${WINDOW}&limit=1000`)).body).toEqual(page);
  });

  it("prints tables from the CLI", async () => {
    const env = { ...process.env, SWITCHYARD_ADMIN_TOKEN: admin };
    const args = ["--url", server.url, "--from", "2024-03-01", "--to", "2024-03-31"];
    const features = await run(process.execPath, [CLI, "analytics", "features", keys.production.id, ...args], { env });
    expect(features.stdout).toContain("window 2024-03-01T00:00:00.000Z .. 2024-03-31T00:00:00.000Z");
    expect(features.stdout).toMatch(/^export\s+export\s+1\s+2\s+3\s+1\s+4\s+4\s+3\s+0$/m);
    const companies = await run(process.execPath, [CLI, "analytics", "feature", keys.production.id, "export", ...args], { env });
    expect(companies.stdout).toMatch(/^globex\s+churned\s+3\s+2024-03-23T11:59:59.999Z\s+1\s+4$/m);
    expect(companies.stdout.match(/^(acme|globex|hooli|initech|stark|umbrella|wayne)\s/gm)).toHaveLength(7);
    const company = await run(process.execPath, [CLI, "analytics", "company", keys.production.id, "umbrella", ...args], { env });
    expect(company.stdout).toMatch(/^reports\s+reports\s+none\s+0\s+-\s+0\s+-$/m);
  });
});
