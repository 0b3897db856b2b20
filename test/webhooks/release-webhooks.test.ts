/**
 * The release flow heard through webhooks (API.md §15–§17 meeting §16), end to end on a standalone service: real
 * receivers on 127.0.0.1 (allowed through SWITCHYARD_WEBHOOK_ALLOW), every delivery checked with the `standardwebhooks`
 * verifier. A guarded rollout started through a change request and driven by the official node SDK's traffic is heard
 * step by step in order, each step with its targeting diff; a scheduled rollout start that conflicts is heard
 * suspended; the kill switch (direct and through a request) and a promotion raise `targeting.changed`; feedback
 * through `/feedback` and the tracking API raises `feedback.created`. Nothing is sent anywhere but 127.0.0.1.
 */
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { seededRandom, sendRound } from "../support/rollouts.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";
import { startReceiver, type ReceivedRequest, type WebhookReceiver } from "../support/webhook-receiver.js";

const EVERYONE = [{ filter: { type: "constant", value: true } }];
const PRO = [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }];
const ROLLOUT_EVENTS = ["rollout.started", "rollout.advanced", "rollout.paused", "rollout.rolled_back", "rollout.completed"];

interface HeardEvent {
  type: string;
  data: { environment: { id: string } | null; feature: { key: string } | null; before: unknown; after: unknown; diff: { added: string[]; removed: string[]; changed: string[] }; details?: Record<string, unknown> };
}

describe(`release flow webhooks (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  const receivers: WebhookReceiver[] = [];
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });

  /** A fresh app with one feature targeted at everyone, and a webhook on it to a fresh receiver: each test hears only its own. */
  async function world(events: string[], feature = "huddle") {
    const keys = await createApp(server.url, server.adminToken, `Release ${receivers.length}`);
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/${feature}`, { name: feature })).status).toBe(200);
    expect((await admin("PUT", `/admin/environments/${keys.production.id}/features/${feature}/targeting`, { rules: EVERYONE })).status).toBe(200);
    const sink = await startReceiver();
    receivers.push(sink);
    const created = await admin("POST", `/admin/apps/${keys.app.id}/webhooks`, { url: `${sink.url}/hook`, events, environments: [keys.production.id] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const verifier = new Webhook(created.body.secret);
    /** Every delivery so far, verified (a forged or unsigned one throws here). */
    const heard = (received: ReceivedRequest[] = sink.received) => received.map((each) => verifier.verify(each.body, each.headers) as HeardEvent);
    return { keys, sink, heard, env: `/admin/environments/${keys.production.id}` };
  }

  beforeAll(async () => {
    server = await startServer({ env: { ...ACCOUNT_TEST_ENV, SWITCHYARD_WEBHOOK_ALLOW: "127.0.0.1/32", SWITCHYARD_WEBHOOK_RETRY_BASE_MS: "100" } });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    for (const each of receivers) await each.close();
  });

  it("hears a rollout started through a change request step by step, in order, signed, each step with its targeting diff", { timeout: 120_000 }, async () => {
    const { keys, sink, heard, env } = await world([...ROLLOUT_EVENTS, "targeting.changed", "change_request.applied"]);
    expect((await admin("PUT", `${env}/policy`, { requireApproval: true, minApprovals: 1, allowSelfApproval: true })).status).toBe(200);
    const proposed = await admin("POST", `${env}/features/huddle/rollouts`, { steps: [20, 50, 100], stepSeconds: 1, minExposures: 20 });
    expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
    expect(proposed.body).toMatchObject({ rollout: null, changeRequest: { state: "open" } });
    const requestPath = `${env}/change-requests/${proposed.body.changeRequest.id}`;
    expect((await admin("POST", `${requestPath}/reviews`, { decision: "approve" })).body.changeRequest.state).toBe("approved");
    expect((await admin("POST", `${requestPath}/apply`)).status).toBe(200);

    const random = seededRandom(7);
    let rollout: { state: string } = { state: "running" };
    // Rounds of traffic until the driver (once a second, 1 s steps) has walked every step, or a minute passed.
    for (let round = 0, until = Date.now() + 60_000; rollout.state === "running" && Date.now() < until; round++) {
      await sendRound(server, keys.production.secretKey, "huddle", { rates: {}, plan: () => "pro" }, 120, random, `hook-${round}`);
      rollout = (await admin("GET", `${env}/features/huddle/rollouts/${proposed.body.rolloutId}`)).body.rollout;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(rollout.state).toBe("completed");

    const events = heard(await sink.waitFor(7));
    expect(events.map((event) => event.type)).toEqual([
      "targeting.changed",
      "rollout.started",
      "change_request.applied",
      "targeting.changed",
      "rollout.advanced",
      "targeting.changed",
      "rollout.completed",
    ]);
    const started = events[1]!;
    expect(started.data).toMatchObject({ environment: { id: keys.production.id }, feature: { key: "huddle" }, details: { rolloutId: proposed.body.rolloutId, changeRequestId: proposed.body.changeRequest.id, step: 0, percent: 20 } });
    // Each step's targeting diff: the share filter's threshold moves (20 → 50 %), then the bare targeting is back.
    const threshold = (rules: unknown) => (rules as { filter: { filters?: { partialRolloutThreshold?: number }[] } }[])[0]!.filter.filters?.[1]?.partialRolloutThreshold;
    const steps = events.filter((event) => event.type === "targeting.changed");
    expect(steps.map((event) => [threshold(event.data.before), threshold(event.data.after)])).toEqual([
      [undefined, 20_000],
      [20_000, 50_000],
      [50_000, undefined],
    ]);
    for (const step of steps) expect([...step.data.diff.added, ...step.data.diff.removed, ...step.data.diff.changed].length).toBeGreaterThan(0);
    expect(steps[1]!.data.diff.changed).toContain("0.filter.filters.1.partialRolloutThreshold");
    // The transitions carry the same before/after as the step they wrote.
    expect(events[4]!.data).toMatchObject({ before: steps[1]!.data.before, after: steps[1]!.data.after, details: { step: 1, percent: 50 } });
    expect(events[6]!.data).toMatchObject({ after: EVERYONE, details: { step: 2, percent: 100 } });
    // Nothing more trails in: one event per transition.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(sink.received).toHaveLength(7);
  });

  it("hears a rollout rolled back when its guard breaches: the rollback's event carries the rules written back", { timeout: 120_000 }, async () => {
    const { keys, sink, heard, env } = await world([...ROLLOUT_EVENTS, "targeting.changed"]);
    const started = await admin("POST", `${env}/features/huddle/rollouts`, { steps: [20, 40, 60, 80, 100], stepSeconds: 1, minExposures: 40, guards: [{ event: "error", direction: "lower_is_better", maxRelativeChange: 0.1 }] });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const random = seededRandom(11);
    let rollout: { state: string } = { state: "running" };
    for (let round = 0, until = Date.now() + 60_000; rollout.state === "running" && Date.now() < until; round++) {
      await sendRound(server, keys.production.secretKey, "huddle", { rates: { error: { exposed: 0.6, control: 0.3 } }, plan: () => "pro" }, 200, random, `breach-${round}`);
      rollout = (await admin("GET", `${env}/features/huddle/rollouts/${started.body.rollout.id}`)).body.rollout;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(rollout.state).toBe("rolled_back");
    const count = 2 * (rollout as unknown as { transitions: unknown[] }).transitions.length;
    const events = heard(await sink.waitFor(count));
    const types = events.map((event) => event.type);
    // Each transition after the step it wrote; the last two are the rollback's rules and the rollback.
    expect(types[0]).toBe("targeting.changed");
    expect(types[1]).toBe("rollout.started");
    expect(types.slice(-2)).toEqual(["targeting.changed", "rollout.rolled_back"]);
    expect(types.filter((type) => type.startsWith("rollout.")).every((type) => ["rollout.started", "rollout.advanced", "rollout.rolled_back"].includes(type))).toBe(true);
    const rolledBack = events.at(-1)!;
    expect(rolledBack.data).toMatchObject({ feature: { key: "huddle" }, after: EVERYONE, details: { rolloutId: started.body.rollout.id, automatic: true } });
    expect((rolledBack.data.details as { guards: { breached: boolean }[] }).guards[0]!.breached).toBe(true);
    expect(events.at(-2)!.data.after).toEqual(EVERYONE);
  });

  it("hears a scheduled rollout start suspended when the rules changed before its time", { timeout: 30_000 }, async () => {
    const { sink, heard, env } = await world(["change_request.suspended", "change_request.scheduled", "rollout.started"]);
    expect((await admin("PUT", `${env}/policy`, { requireApproval: true, minApprovals: 1, allowSelfApproval: true })).status).toBe(200);
    const proposed = await admin("POST", `${env}/features/huddle/rollouts`, { steps: [10, 100], stepSeconds: 60 });
    const requestPath = `${env}/change-requests/${proposed.body.changeRequest.id}`;
    // An owner's bypass moves the targeting the request was based on (an edit without changes keeps its base): at its
    // time the start conflicts, however slowly the calls below run.
    expect((await admin("PUT", `${env}/features/huddle/targeting?bypass=true`, { rules: PRO, reason: "hotfix" })).status).toBe(200);
    const scheduledAt = new Date(Date.now() + 1_500).toISOString();
    expect((await admin("PUT", requestPath, { scheduledAt })).status).toBe(200);
    expect(["scheduled", "suspended"]).toContain((await admin("POST", `${requestPath}/reviews`, { decision: "approve" })).body.changeRequest.state);
    const events = heard(await sink.waitFor(2, 10_000));
    expect(events.map((event) => event.type)).toEqual(["change_request.scheduled", "change_request.suspended"]);
    expect(events[1]!.data.details).toMatchObject({ changeRequestId: proposed.body.changeRequest.id });
    const request = (await admin("GET", requestPath)).body.changeRequest;
    expect(request).toMatchObject({ state: "suspended" });
    expect(request.suspendedReason).toContain("huddle (now targeting version 2");
    expect((await admin("GET", `${env}/features/huddle/rollouts`)).body.rollouts).toEqual([]);
  });

  it("hears the kill switch (direct and through a request) and a promotion as targeting.changed", { timeout: 30_000 }, async () => {
    const { keys, sink, heard, env } = await world(["targeting.changed"]);
    expect((await admin("PUT", `${env}/features/huddle/enabled`, { enabled: false })).body.changed).toBe(true);
    const proposed = await admin("POST", `${env}/change-requests`, { title: "Back on", changes: [{ feature: "huddle", enabled: true }] });
    expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
    expect((await admin("POST", `${env}/change-requests/${proposed.body.changeRequest.id}/apply`)).status).toBe(200);
    // Development gets other rules, promoted to production: one targeting write there.
    expect((await admin("PUT", `/admin/environments/${keys.development.id}/features/huddle/targeting`, { rules: PRO })).status).toBe(200);
    const promoted = await admin("POST", `/admin/environments/${keys.development.id}/features/huddle/promote`, { to: keys.production.id });
    expect(promoted.body).toMatchObject({ outcome: "written", wrote: ["targeting"] });
    const events = heard(await sink.waitFor(3));
    expect(events.map((event) => [event.type, event.data.environment?.id, event.data.feature?.key])).toEqual([
      ["targeting.changed", keys.production.id, "huddle"],
      ["targeting.changed", keys.production.id, "huddle"],
      ["targeting.changed", keys.production.id, "huddle"],
    ]);
    expect(events[0]!.data).toMatchObject({ before: { enabled: true }, after: { enabled: false }, details: { killSwitch: true } });
    expect(events[1]!.data).toMatchObject({ before: { enabled: false }, after: { enabled: true }, details: { killSwitch: true, changeRequestId: proposed.body.changeRequest.id } });
    expect(events[2]!.data).toMatchObject({ before: EVERYONE, after: PRO });
    // The development write itself is not this webhook's (it names production only).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sink.received).toHaveLength(3);
  });

  it("hears feedback sent through /feedback and through the tracking API", { timeout: 30_000 }, async () => {
    const { keys, sink, heard } = await world(["feedback.created"]);
    const direct = await request(server.url, "POST", "/feedback", { token: keys.production.publishableKey, body: { userId: "u1", key: "huddle", score: 4, comment: "handy" } });
    expect(direct.status, JSON.stringify(direct.body)).toBe(200);
    const tracked = await request(server.url, "POST", `/${keys.app.trackingKey}/feedback`, { body: { userId: "u2", key: "huddle", score: 2, comment: "slow" } });
    expect(tracked.status, JSON.stringify(tracked.body)).toBe(200);
    const events = heard(await sink.waitFor(2));
    expect(events.map((event) => [event.type, event.data.environment?.id, event.data.feature?.key])).toEqual([
      ["feedback.created", keys.production.id, "huddle"],
      ["feedback.created", keys.production.id, "huddle"],
    ]);
    expect(events.map((event) => event.data.after)).toEqual([
      expect.objectContaining({ feedbackId: direct.body.feedbackId, score: 4, comment: "handy", userId: "u1" }),
      expect.objectContaining({ score: 2, comment: "slow", userId: "u2" }),
    ]);
  });
});
