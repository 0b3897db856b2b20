/**
 * `@bucketco/tracking-sdk` 2.4.0, Bucket's older tracking client, in Node against a real Switchyard: it posts to
 * `<host>/<key>/{user,company,event,feedback}` — Switchyard's tracking API, with the app's tracking key as its key —
 * and everything it sends must reach the stored data as the newer SDKs' calls do.
 */
import bucket from "@bucketco/tracking-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRequest, createApp } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";
import { listAll } from "./fixtures.js";

describe("@bucketco/tracking-sdk 2.4.0 against Switchyard", () => {
  let server: TestServer;
  let app: Awaited<ReturnType<typeof createApp>>;
  let featureId: string;

  beforeAll(async () => {
    server = await startServer();
    app = await createApp(server.url, server.adminToken, "Legacy tracking");
    featureId = (await adminRequest(server, "PUT", `/admin/apps/${app.app.id}/features/export`, {})).body.feature.id;
    // In Node the SDK keeps no session user and offers no live satisfaction: every call names its user.
    bucket.init(app.app.trackingKey, { host: server.url, persistUser: false, feedback: { enableLiveSatisfaction: false } });
  });
  afterAll(async () => {
    bucket.reset();
    await server?.stop();
  });

  const environment = () => app.production.id;

  it("stores users, companies and their association", async () => {
    expect((await bucket.user("legacy-user", { name: "Tess", plan: "pro" })).status).toBe(200);
    expect((await bucket.company("legacy-co", { name: "Acme", seats: 12 }, "legacy-user")).status).toBe(200);
    const user = (await adminRequest(server, "GET", `/admin/environments/${environment()}/users/legacy-user`)).body.user;
    expect(user).toMatchObject({ id: "legacy-user", attributes: { name: "Tess", plan: "pro" }, companyIds: ["legacy-co"] });
    const company = (await adminRequest(server, "GET", `/admin/environments/${environment()}/companies/legacy-co`)).body.company;
    expect(company).toMatchObject({ id: "legacy-co", attributes: { name: "Acme", seats: 12 }, userIds: ["legacy-user"] });
  });

  it("stores events with their attributes and company", async () => {
    expect((await bucket.track("report-exported", { format: "csv" }, "legacy-user", "legacy-co")).status).toBe(200);
    expect((await bucket.track("report-opened", null, "legacy-user")).status).toBe(200);
    const events = await listAll(server.url, server.adminToken, environment(), "events", "events");
    expect(events).toContainEqual(expect.objectContaining({ event: "report-exported", userId: "legacy-user", companyId: "legacy-co", attributes: { format: "csv" } }));
    expect(events).toContainEqual(expect.objectContaining({ event: "report-opened", userId: "legacy-user", companyId: null }));
  });

  it("stores feedback, and updates it by feedbackId as its widget does", async () => {
    const first = await bucket.feedback({ featureId, userId: "legacy-user", companyId: "legacy-co", score: 4 });
    expect(first.status).toBe(200);
    const { feedbackId } = (await first.json()) as { feedbackId: string };
    expect(feedbackId).toEqual(expect.any(String));
    const second = await bucket.feedback({ feedbackId, featureId, userId: "legacy-user", comment: "Exports are quick" });
    expect(second.status).toBe(200);
    const feedback = await listAll(server.url, server.adminToken, environment(), "feedback", "feedback");
    expect(feedback.filter((entry) => entry.feedbackId === feedbackId)).toEqual([
      expect.objectContaining({ featureId, key: "export", userId: "legacy-user", companyId: "legacy-co", score: 4, comment: "Exports are quick", source: "sdk" }),
    ]);
    const analytics = (await adminRequest(server, "GET", `/admin/environments/${environment()}/analytics/features`)).body.features;
    expect(analytics.find((feature: { key: string }) => feature.key === "export").satisfaction).toEqual({ count: 1, average: 4 });
  });

  it("is refused with a 401 for an unknown tracking key, like the newer SDKs' calls", async () => {
    bucket.init("trk_unknown0000000000000000000000", { host: server.url, persistUser: false, feedback: { enableLiveSatisfaction: false } });
    try {
      expect((await bucket.track("x", null, "legacy-user")).status).toBe(401);
    } finally {
      bucket.init(app.app.trackingKey, { host: server.url, persistUser: false, feedback: { enableLiveSatisfaction: false } });
    }
  });
});
