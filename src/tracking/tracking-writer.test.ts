import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { useTempLmdbStore } from "../../test/support/temp-lmdb.js";
import { ServiceError } from "../errors/catalogue.js";
import { FeatureRepository } from "../features/feature-repository.js";
import type { FeatureRecord } from "../features/feature-records.js";
import { parseTrackingCall, type TrackingCall } from "../schemas/tracking.js";
import { prefixRange, TABLES, type KvStore } from "../storage/kv.js";
import { LmdbStore } from "../storage/lmdb-store.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import { applyTrackingTogether } from "../../bench/support/apply-together.js";
import { applyTracking, canShareTransaction, recordEvaluations, type TrackingRequest, type TrackingResult } from "../../bench/support/direct-tracking.js";
import { evaluationRow } from "./tracking-writer.js";
import { TrackingReader } from "./reader.js";
import type { EventRecord } from "./tracking-records.js";

// Analytics and survey state derive from tracking only where they are registered, as every serving thread does.

const T0 = Date.UTC(2024, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();

let store: KvStore;
const temp = useTempLmdbStore("switchyard-tracking-");
let reader: TrackingReader;
let envId: string;
let otherEnvId: string;
let appId: string;
let huddle: FeatureRecord;
let archived: FeatureRecord;

beforeEach(async () => {
  store = temp.store;
  reader = new TrackingReader(store);
  const issued = await new TenancyRepository(store).createApp("Acme");
  appId = issued.app.id;
  envId = issued.environments[0]!.id;
  otherEnvId = issued.environments[1]!.id;
  const features = new FeatureRepository(store);
  huddle = (await features.putFeature(appId, "huddle", {}))!;
  archived = (await features.putFeature(appId, "old", {}))!;
  await features.archiveFeature(appId, "old");
});

/** One request as the HTTP layer makes it: parse, then apply. */
async function track(call: TrackingCall, body: unknown, receivedAt = T0, environmentId = envId): Promise<TrackingResult> {
  const parsed = parseTrackingCall(call, body);
  if (!parsed.ok) throw new Error(`invalid body: ${JSON.stringify(parsed.issues)}`);
  return applyTracking(store, environmentId, parsed.items, receivedAt);
}

async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}

function rawEvents(environmentId = envId): EventRecord[] {
  return [...store.table<"events", EventRecord>("events").range(prefixRange(environmentId))].map((entry) => entry.value);
}

function everythingStored(environmentId = envId) {
  return {
    user: reader.getUser(environmentId, "u1"),
    events: reader.listEvents(environmentId, undefined, 1000).events,
    featureEvents: reader.listFeatureEvents(environmentId, undefined, 1000).featureEvents,
    feedback: reader.listFeedback(environmentId, undefined, 1000).feedback,
    promptEvents: reader.listPromptEvents(environmentId, undefined, 1000).promptEvents,
  };
}

describe("/user", () => {
  it("creates a user with firstSeen and lastSeen at receivedAt when no timestamp is sent", async () => {
    await track("user", { userId: "u1", attributes: { name: "Ann" } }, T0);
    expect(reader.getUser(envId, "u1")).toEqual({
      id: "u1",
      attributes: { name: "Ann" },
      firstSeen: iso(T0),
      lastSeen: iso(T0),
      companyIds: [],
    });
  });

  it("merges attributes over the stored ones", async () => {
    await track("user", { userId: "u1", attributes: { name: "Ann", plan: "free", nested: { a: 1 } } });
    await track("user", { userId: "u1", attributes: { plan: "pro", seats: 3 } }, T0 + 1);
    await track("user", { userId: "u1" }, T0 + 2);
    expect(reader.getUserAttributes(envId, "u1")).toEqual({ name: "Ann", plan: "pro", seats: 3, nested: { a: 1 } });
  });

  it("keeps numeric ids as strings", async () => {
    await track("user", { userId: 42 });
    expect(reader.getUser(envId, "42")?.id).toBe("42");
  });

  it("uses the call's timestamp and never moves lastSeen backwards", async () => {
    await track("user", { userId: "u1", timestamp: iso(T0 + 5000) }, T0 + 9000);
    expect(reader.getUser(envId, "u1")).toMatchObject({ firstSeen: iso(T0 + 5000), lastSeen: iso(T0 + 5000) });
    // An older call arriving late still merges its attributes and can move firstSeen back.
    await track("user", { userId: "u1", timestamp: T0 + 1000, attributes: { late: true } }, T0 + 10_000);
    expect(reader.getUser(envId, "u1")).toMatchObject({
      firstSeen: iso(T0 + 1000),
      lastSeen: iso(T0 + 5000),
      attributes: { late: true },
    });
    await track("user", { userId: "u1", timestamp: T0 + 7000 }, T0 + 11_000);
    expect(reader.getUser(envId, "u1")?.lastSeen).toBe(iso(T0 + 7000));
  });

  it("with context.active false stores attributes but leaves lastSeen alone", async () => {
    await track("user", { userId: "u1", attributes: { a: 1 } }, T0);
    await track("user", { userId: "u1", attributes: { b: 2 }, context: { active: false } }, T0 + 60_000);
    expect(reader.getUser(envId, "u1")).toMatchObject({ attributes: { a: 1, b: 2 }, lastSeen: iso(T0) });
  });

  it("with context.active false on a new user stores it never seen active", async () => {
    await track("user", { userId: "u1", attributes: { a: 1 }, context: { active: false } }, T0);
    expect(reader.getUser(envId, "u1")).toMatchObject({ attributes: { a: 1 }, firstSeen: iso(T0), lastSeen: null });
    await track("user", { userId: "u1" }, T0 + 1);
    expect(reader.getUser(envId, "u1")?.lastSeen).toBe(iso(T0 + 1));
  });
});

describe("/company", () => {
  it("upserts the company with merged attributes", async () => {
    await track("company", { companyId: "c1", attributes: { name: "Acme", hasSlackEnabled: false } }, T0);
    await track("company", { companyId: "c1", attributes: { hasSlackEnabled: true } }, T0 + 1);
    expect(reader.getCompany(envId, "c1")).toEqual({
      id: "c1",
      attributes: { name: "Acme", hasSlackEnabled: true },
      firstSeen: iso(T0),
      lastSeen: iso(T0 + 1),
      userIds: [],
    });
    expect(reader.getCompanyAttributes(envId, "c1")).toEqual({ name: "Acme", hasSlackEnabled: true });
  });

  it("with userId associates the user, touching the user's lastSeen but not its attributes", async () => {
    await track("user", { userId: "u1", attributes: { name: "Ann" } }, T0);
    await track("company", { companyId: "c1", userId: "u1", attributes: { name: "Acme" } }, T0 + 10);
    expect(reader.getUser(envId, "u1")).toMatchObject({ attributes: { name: "Ann" }, lastSeen: iso(T0 + 10), companyIds: ["c1"] });
    expect(reader.getCompany(envId, "c1")).toMatchObject({ attributes: { name: "Acme" }, userIds: ["u1"] });
  });

  it("creates the user it names when unknown", async () => {
    await track("company", { companyId: "c1", userId: "u9" }, T0);
    expect(reader.getUser(envId, "u9")).toEqual({ id: "u9", attributes: {}, firstSeen: iso(T0), lastSeen: iso(T0), companyIds: ["c1"] });
  });

  it("with context.active false associates but leaves both lastSeen alone", async () => {
    await track("company", { companyId: "c1", userId: "u1" }, T0);
    await track("company", { companyId: "c2", userId: "u1", context: { active: false } }, T0 + 5);
    expect(reader.getUser(envId, "u1")).toMatchObject({ lastSeen: iso(T0), companyIds: ["c1", "c2"] });
    expect(reader.getCompany(envId, "c2")).toMatchObject({ lastSeen: null, userIds: ["u1"] });
  });

  it("keeps many users and companies apart", async () => {
    await track("bulk", [
      { type: "company", companyId: "c1", userId: "u1" },
      { type: "company", companyId: "c1", userId: "u2" },
      { type: "company", companyId: "c2", userId: "u2" },
    ]);
    expect(reader.getCompany(envId, "c1")?.userIds).toEqual(["u1", "u2"]);
    expect(reader.getCompany(envId, "c2")?.userIds).toEqual(["u2"]);
    expect(reader.getUser(envId, "u2")?.companyIds).toEqual(["c1", "c2"]);
  });
});

describe("entity updates (the live tail's log of /user and /company calls)", () => {
  it("appends each /user and /company item as sent, in order, also from a bulk; events append none", async () => {
    await track("user", { userId: "u1", attributes: { a: 1 } }, T0);
    await track("company", { companyId: "c1", attributes: { plan: "pro" }, timestamp: iso(T0 - 1000) }, T0 + 1);
    await track("bulk", [
      { type: "company", companyId: "c2", userId: "u1" },
      { type: "user", userId: "u2", context: { active: false } },
      { type: "event", event: "opened", userId: "u1" },
    ], T0 + 2);
    const page = reader.listEntityUpdates(envId, undefined, 100);
    expect(page.updates.map(({ cursor: _cursor, ...update }) => update)).toEqual([
      { type: "user", userId: "u1", companyId: null, attributes: { a: 1 }, active: true, timestamp: iso(T0), receivedAt: iso(T0) },
      { type: "company", userId: null, companyId: "c1", attributes: { plan: "pro" }, active: true, timestamp: iso(T0 - 1000), receivedAt: iso(T0 + 1) },
      { type: "company", userId: "u1", companyId: "c2", attributes: null, active: true, timestamp: iso(T0 + 2), receivedAt: iso(T0 + 2) },
      { type: "user", userId: "u2", companyId: null, attributes: null, active: false, timestamp: iso(T0 + 2), receivedAt: iso(T0 + 2) },
    ]);
    expect(reader.listEntityUpdates(envId, page.next, 100).updates).toEqual([]);
    expect(reader.listEntityUpdates(otherEnvId, undefined, 100).updates).toEqual([]);
  });
});

describe("/event", () => {
  it("appends the event and touches the user", async () => {
    await track("event", { event: "clicked", userId: "u1", attributes: { button: "ok" } }, T0 + 3);
    expect(reader.listEvents(envId, undefined, 10).events).toEqual([
      {
        cursor: expect.any(String),
        event: "clicked",
        userId: "u1",
        companyId: null,
        attributes: { button: "ok" },
        timestamp: iso(T0 + 3),
        receivedAt: iso(T0 + 3),
      },
    ]);
    expect(reader.getUser(envId, "u1")).toMatchObject({ attributes: {}, firstSeen: iso(T0 + 3), lastSeen: iso(T0 + 3) });
  });

  it("keeps the sent timestamp apart from receivedAt, and event attributes off the user", async () => {
    await track("event", { event: "e", userId: "u1", timestamp: T0, attributes: { x: 1 } }, T0 + 99);
    const [event] = reader.listEvents(envId, undefined, 10).events;
    expect(event).toMatchObject({ timestamp: iso(T0), receivedAt: iso(T0 + 99) });
    expect(reader.getUserAttributes(envId, "u1")).toEqual({});
  });

  it("with companyId associates the user and touches the company", async () => {
    await track("event", { event: "e", userId: "u1", companyId: "c1" }, T0 + 7);
    expect(reader.getUser(envId, "u1")?.companyIds).toEqual(["c1"]);
    expect(reader.getCompany(envId, "c1")).toMatchObject({ lastSeen: iso(T0 + 7), userIds: ["u1"] });
    expect(rawEvents()[0]).toMatchObject({ companyId: "c1", countsForCompanyId: "c1" });
  });

  it("without companyId counts for the company the user was most recently associated with", async () => {
    await track("company", { companyId: "c1", userId: "u1" }, T0);
    await track("company", { companyId: "c2", userId: "u1" }, T0 + 10);
    await track("event", { event: "e", userId: "u1" }, T0 + 20);
    expect(rawEvents()[0]).toMatchObject({ companyId: null, countsForCompanyId: "c2" });
    expect(reader.getCompany(envId, "c2")?.lastSeen).toBe(iso(T0 + 20));
    expect(reader.getCompany(envId, "c1")?.lastSeen).toBe(iso(T0));
    // The event's own companyId makes that company the most recent one.
    await track("event", { event: "e", userId: "u1", companyId: "c1" }, T0 + 30);
    await track("event", { event: "e", userId: "u1" }, T0 + 40);
    expect(rawEvents().map((event) => event.countsForCompanyId)).toEqual(["c2", "c1", "c1"]);
  });

  it("an association carrying an older timestamp does not become the most recent", async () => {
    await track("company", { companyId: "c1", userId: "u1", timestamp: T0 + 100 }, T0 + 100);
    await track("company", { companyId: "c2", userId: "u1", timestamp: T0 + 50 }, T0 + 200);
    await track("event", { event: "e", userId: "u1" }, T0 + 300);
    expect(rawEvents()[0]?.countsForCompanyId).toBe("c1");
    expect(reader.getUser(envId, "u1")?.companyIds).toEqual(["c1", "c2"]);
  });

  it("from a user with no company counts for none", async () => {
    await track("event", { event: "e", userId: "loner" });
    expect(rawEvents()[0]?.countsForCompanyId).toBeNull();
    expect(reader.getUser(envId, "loner")?.companyIds).toEqual([]);
  });

  it("with context.active false is stored but moves no lastSeen", async () => {
    await track("event", { event: "e", userId: "u1", companyId: "c1" }, T0);
    await track("event", { event: "e", userId: "u1", companyId: "c1", context: { active: false } }, T0 + 50);
    expect(reader.listEvents(envId, undefined, 10).events).toHaveLength(2);
    expect(reader.getUser(envId, "u1")?.lastSeen).toBe(iso(T0));
    expect(reader.getCompany(envId, "c1")?.lastSeen).toBe(iso(T0));
  });
});

describe("/feedback", () => {
  it("creates a feedback and answers its id", async () => {
    const { feedbackIds } = await track("feedback", { userId: "u1", companyId: "c1", key: "huddle", score: 4, source: "sdk" }, T0);
    expect(feedbackIds).toHaveLength(1);
    expect(feedbackIds[0]).toMatch(/^fb_/);
    expect(reader.listFeedback(envId, undefined, 10).feedback).toEqual([
      {
        cursor: expect.any(String),
        feedbackId: feedbackIds[0],
        userId: "u1",
        companyId: "c1",
        countsForCompanyId: "c1",
        featureId: huddle.id,
        key: "huddle",
        score: 4,
        comment: null,
        question: null,
        promptedQuestion: null,
        promptId: null,
        source: "sdk",
        timestamp: iso(T0),
        receivedAt: iso(T0),
      },
    ]);
  });

  it("resolves the key from a featureId", async () => {
    await track("feedback", { userId: "u1", featureId: huddle.id, comment: "nice" });
    expect(reader.listFeedback(envId, undefined, 10).feedback[0]).toMatchObject({ featureId: huddle.id, key: "huddle" });
  });

  it("score then comment with the returned id makes one feedback with both", async () => {
    const widget = { userId: "u1", featureId: huddle.id, question: "How do you like it?", source: "widget" };
    const { feedbackIds } = await track("feedback", { ...widget, score: 5 }, T0);
    const first = reader.listFeedback(envId, undefined, 10);
    const again = await track("feedback", { ...widget, feedbackId: feedbackIds[0], score: 5, comment: "Love it" }, T0 + 1000);
    expect(again.feedbackIds).toEqual(feedbackIds);
    const { feedback } = reader.listFeedback(envId, undefined, 10);
    expect(feedback).toHaveLength(1);
    expect(feedback[0]).toMatchObject({
      feedbackId: feedbackIds[0],
      score: 5,
      comment: "Love it",
      question: "How do you like it?",
      source: "widget",
      timestamp: iso(T0),
      receivedAt: iso(T0 + 1000),
    });
    // The update moved it after everything a pager has seen.
    expect(Number(feedback[0]!.cursor)).toBeGreaterThan(Number(first.feedback[0]!.cursor));
    expect(reader.listFeedback(envId, first.next, 10).feedback.map((item) => item.feedbackId)).toEqual(feedbackIds);
  });

  it("keeps the fields an update does not send", async () => {
    const { feedbackIds } = await track("feedback", {
      userId: "u1",
      companyId: "c1",
      key: "huddle",
      score: 2,
      comment: "meh",
      promptId: "prompt-0001",
      promptedQuestion: "Well?",
      timestamp: T0 - 5,
    });
    await track("feedback", { userId: "u1", key: "huddle", feedbackId: feedbackIds[0], score: 3 }, T0 + 5);
    expect(reader.listFeedback(envId, undefined, 10).feedback[0]).toMatchObject({
      companyId: "c1",
      score: 3,
      comment: "meh",
      promptId: "prompt-0001",
      promptedQuestion: "Well?",
      timestamp: iso(T0 - 5),
    });
  });

  it("answers NOT_FOUND for an unknown feedbackId, naming the field, and stores nothing", async () => {
    const error = await rejection(track("feedback", { userId: "u1", key: "huddle", feedbackId: "fb_nope", score: 1 }));
    expect(error.code).toBe("NOT_FOUND");
    expect(error.validationErrors).toEqual([{ path: "feedbackId", message: expect.any(String) }]);
    expect(reader.listFeedback(envId, undefined, 10).feedback).toEqual([]);
  });

  it("does not find a feedback of another environment", async () => {
    const { feedbackIds } = await track("feedback", { userId: "u1", key: "huddle", score: 1 }, T0, otherEnvId);
    const error = await rejection(track("feedback", { userId: "u1", key: "huddle", feedbackId: feedbackIds[0], comment: "x" }));
    expect(error.code).toBe("NOT_FOUND");
  });

  it("answers UNKNOWN_FEATURE naming the field for a feature that does not exist or is archived", async () => {
    for (const [body, path] of [
      [{ key: "nope" }, "key"],
      [{ featureId: "ftNope" }, "featureId"],
      [{ key: "old" }, "key"],
      [{ featureId: archived.id }, "featureId"],
      [{ featureId: huddle.id, key: "other" }, "key"],
    ] as const) {
      const error = await rejection(track("feedback", { userId: "u1", score: 1, ...body }));
      expect(error.code).toBe("UNKNOWN_FEATURE");
      expect(error.status).toBe(400);
      expect(error.validationErrors).toEqual([{ path, message: expect.any(String) }]);
    }
    expect(reader.listFeedback(envId, undefined, 10).feedback).toEqual([]);
  });

  it("in a bulk, a bad reference names each item and stores nothing from the request", async () => {
    const error = await rejection(
      track("bulk", [
        { type: "user", userId: "u1" },
        { type: "event", event: "e", userId: "u1" },
        { type: "feedback", userId: "u1", key: "nope", score: 1 },
        { type: "feedback", userId: "u1", key: "huddle", score: 1 },
        { type: "feedback", userId: "u1", featureId: "ftNope", score: 1 },
      ]),
    );
    expect(error.code).toBe("UNKNOWN_FEATURE");
    expect(error.validationErrors?.map((issue) => issue.path)).toEqual(["2.key", "4.featureId"]);
    expect(everythingStored()).toEqual({ user: undefined, events: [], featureEvents: [], feedback: [], promptEvents: [] });
  });

  it("answers one id per feedback item of a bulk, in order", async () => {
    const { feedbackIds } = await track("bulk", [
      { type: "feedback", userId: "u1", key: "huddle", score: 1 },
      { type: "user", userId: "u1" },
      { type: "feedback", userId: "u2", key: "huddle", comment: "hi" },
    ]);
    expect(feedbackIds).toHaveLength(2);
    expect(reader.listFeedback(envId, undefined, 10).feedback.map((item) => item.feedbackId)).toEqual(feedbackIds);
  });
});

describe("feature and prompt events", () => {
  it("appends feature events, one or many", async () => {
    await track("feature-events", { action: "check", key: "huddle", evalResult: true, targetingVersion: 3 }, T0);
    await track(
      "feature-events",
      [
        { action: "evaluate", key: "huddle", evalResult: false, evalContext: { user: { id: "u1" } }, evalRuleResults: [false], evalMissingFields: ["company.id"] },
        { action: "check-config", key: "huddle", evalResult: {} },
      ],
      T0 + 1,
    );
    expect(reader.listFeatureEvents(envId, undefined, 10).featureEvents).toEqual([
      {
        cursor: expect.any(String),
        action: "check",
        key: "huddle",
        targetingVersion: 3,
        evalContext: null,
        evalResult: true,
        evalRuleResults: null,
        evalMissingFields: null,
        receivedAt: iso(T0),
      },
      {
        cursor: expect.any(String),
        action: "evaluate",
        key: "huddle",
        targetingVersion: null,
        evalContext: { user: { id: "u1" } },
        evalResult: false,
        evalRuleResults: [false],
        evalMissingFields: ["company.id"],
        receivedAt: iso(T0 + 1),
      },
      {
        cursor: expect.any(String),
        action: "check-config",
        key: "huddle",
        targetingVersion: null,
        evalContext: null,
        evalResult: { key: null, payload: null },
        evalRuleResults: null,
        evalMissingFields: null,
        receivedAt: iso(T0 + 1),
      },
    ]);
  });

  it("recordEvaluations appends one evaluation's events, each its own entry to readers", async () => {
    await track("feature-events", { action: "check", key: "a", evalResult: true }, T0);
    const evaluation = (keys: string[]) => {
      const events = keys.map((key, index) => ({ key, targetingVersion: index + 1, evalResult: true, evalRuleResults: [true], evalMissingFields: [] }));
      // Rows may come encoded or as arrays.
      const rows = events.map((event, index) => (index % 2 === 0 ? evaluationRow(event) : [event.key, event.targetingVersion, true, [true], []]));
      return { action: "evaluate" as const, evalContext: { user: { id: "u1" }, company: { id: "acme" } }, results: events, rows };
    };
    await recordEvaluations(store, envId, evaluation(["a", "b", "c"]), T0 + 1);
    await recordEvaluations(store, envId, evaluation(["d"]), T0 + 2);
    const all = reader.listFeatureEvents(envId, undefined, 10);
    expect(all.featureEvents.map((event) => [event.cursor, event.action, event.key, event.targetingVersion])).toEqual([
      ["1", "check", "a", null],
      ["2", "evaluate", "a", 1],
      ["3", "evaluate", "b", 2],
      ["4", "evaluate", "c", 3],
      ["5", "evaluate", "d", 1],
    ]);
    expect(all.featureEvents[2]).toMatchObject({ evalContext: { user: { id: "u1" }, company: { id: "acme" } }, receivedAt: iso(T0 + 1) });
    // Pages start and stop inside a group as they would between single entries.
    expect(reader.listFeatureEvents(envId, "2", 2).featureEvents.map((event) => event.cursor)).toEqual(["3", "4"]);
    expect(reader.listFeatureEvents(envId, "1", 1)).toMatchObject({ featureEvents: [{ cursor: "2" }], next: "2" });
    expect(reader.listFeatureEvents(envId, "4", 10).featureEvents.map((event) => event.key)).toEqual(["d"]);
    expect(reader.listFeatureEvents(envId, "5", 10)).toEqual({ featureEvents: [], next: "5" });
  });

  it("appends prompt events", async () => {
    const body = { action: "shown", featureId: huddle.id, promptId: "prompt-0001", userId: 5, promptedQuestion: "How is it?" };
    await track("prompt-event", body, T0);
    expect(reader.listPromptEvents(envId, undefined, 10)).toEqual({
      promptEvents: [{ cursor: "1", ...body, userId: "5", receivedAt: iso(T0) }],
      next: "1",
    });
  });
});

describe("requests", () => {
  it("a bulk with one bad item among many is refused whole, every issue reported, nothing stored", () => {
    const body = Array.from({ length: 50 }, (_, index) => ({ type: "event", event: `e${index}`, userId: `u${index}` })) as unknown[];
    body[7] = { type: "event", event: "", userId: "u" };
    body[30] = { type: "user" };
    body[44] = { type: "spaceship" };
    const parsed = parseTrackingCall("bulk", body);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues.map((issue) => issue.path)).toEqual(["7.event", "30.userId", "44.type"]);
    // The HTTP layer answers 400 without calling applyTracking: nothing reached the store.
    expect(reader.listEvents(envId, undefined, 1000).events).toEqual([]);
  });

  it("a bulk applies every item type in one transaction", async () => {
    await track("bulk", [
      { type: "user", userId: "u1", attributes: { a: 1 } },
      { type: "company", companyId: "c1", userId: "u1" },
      { type: "event", event: "e", userId: "u1" },
      { type: "feedback", userId: "u1", key: "huddle", score: 5 },
      { type: "feature-flag-event", action: "check-is-enabled", key: "huddle", evalResult: true },
      { type: "prompt-event", action: "received", featureId: huddle.id, promptId: "prompt-0001", userId: "u1", promptedQuestion: "Q" },
    ]);
    const stored = everythingStored();
    expect(stored.user).toMatchObject({ attributes: { a: 1 }, companyIds: ["c1"] });
    expect(stored.events).toHaveLength(1);
    expect(stored.feedback).toHaveLength(1);
    expect(stored.featureEvents).toHaveLength(1);
    expect(stored.promptEvents).toHaveLength(1);
    expect(rawEvents()[0]?.countsForCompanyId).toBe("c1");
  });

  it("an empty bulk stores nothing and succeeds", async () => {
    await expect(track("bulk", [])).resolves.toEqual({ feedbackIds: [] });
  });

  it("keeps environments apart", async () => {
    await track("user", { userId: "u1", attributes: { env: "one" } });
    await track("event", { event: "e", userId: "u1" }, T0, otherEnvId);
    expect(reader.getUserAttributes(otherEnvId, "u1")).toEqual({});
    expect(reader.listEvents(envId, undefined, 10).events).toEqual([]);
    expect(reader.listEvents(otherEnvId, undefined, 10).events).toHaveLength(1);
  });

  it("many concurrent requests are all stored, with strictly increasing cursors", async () => {
    const requests = Array.from({ length: 200 }, (_, index) => {
      const userId = `u${index % 17}`;
      switch (index % 4) {
        case 0:
          return track("event", { event: `e${index}`, userId, companyId: `c${index % 5}` }, T0 + index);
        case 1:
          return track("bulk", [
            { type: "event", event: `e${index}a`, userId },
            { type: "event", event: `e${index}b`, userId },
            { type: "feature-flag-event", action: "check", key: "huddle", evalResult: true },
          ], T0 + index);
        case 2:
          return track("feedback", { userId, key: "huddle", score: 1 + (index % 5) }, T0 + index);
        default:
          return track("feature-events", { action: "evaluate", key: `k${index}`, evalResult: false }, T0 + index);
      }
    });
    const results = await Promise.all(requests);
    const events = reader.listEvents(envId, undefined, 1000).events;
    expect(events).toHaveLength(50 + 2 * 50);
    const cursors = events.map((event) => Number(event.cursor));
    for (let index = 1; index < cursors.length; index++) expect(cursors[index]).toBeGreaterThan(cursors[index - 1]!);
    expect(new Set(events.map((event) => event.event)).size).toBe(150);
    // A bulk's items stay together, in request order.
    const positions = new Map(events.map((event, position) => [event.event, position]));
    for (let index = 1; index < 200; index += 4) expect(positions.get(`e${index}b`)).toBe(positions.get(`e${index}a`)! + 1);
    expect(reader.listFeatureEvents(envId, undefined, 1000).featureEvents).toHaveLength(100);
    const feedbackIds = results.flatMap((result) => result.feedbackIds);
    expect(new Set(feedbackIds).size).toBe(50);
    expect(reader.listFeedback(envId, undefined, 1000).feedback.map((item) => item.feedbackId).sort()).toEqual([...feedbackIds].sort());
  });

  it("a request refused inside the shared transaction leaves the others of that commit stored", async () => {
    const { feedbackIds } = await track("feedback", { userId: "u1", key: "huddle", score: 1 });
    const updateParsed = parseTrackingCall("feedback", { userId: "u1", key: "huddle", feedbackId: feedbackIds[0], comment: "c" });
    if (!updateParsed.ok) throw new Error("unexpected");
    // Archive the feature in the same event-loop turn: the update passes the early check, then the check inside
    // the transaction (which sees the archive) refuses it; the neighbouring writes still commit.
    const features = new FeatureRepository(store);
    const outcomes = await Promise.allSettled([
      features.archiveFeature(appId, "huddle"),
      applyTracking(store, envId, updateParsed.items, T0 + 1),
      track("event", { event: "neighbour", userId: "u2" }, T0 + 1),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const refused = (outcomes[1] as PromiseRejectedResult).reason as ServiceError;
    expect(refused.code).toBe("UNKNOWN_FEATURE");
    expect(reader.listEvents(envId, undefined, 10).events.map((event) => event.event)).toEqual(["neighbour"]);
    expect(reader.listFeedback(envId, undefined, 10).feedback[0]?.comment).toBeNull();
  });
});

describe("requests sharing one transaction", () => {
  /** Everything in every table, key by key. */
  function dump(target: KvStore): Record<string, unknown> {
    const all: Record<string, unknown> = {};
    for (const name of TABLES) for (const entry of target.table(name).range({})) all[`${name}/${entry.key}`] = entry.value;
    return all;
  }

  function parsed(call: TrackingCall, body: unknown) {
    const result = parseTrackingCall(call, body);
    if (!result.ok) throw new Error(`invalid body: ${JSON.stringify(result.issues)}`);
    return result.items;
  }

  it("store exactly what the same requests applied one after another store", async () => {
    const requests: TrackingRequest[] = Array.from({ length: 40 }, (_, index) => {
      const environmentId = index % 3 === 0 ? "env-b" : "env-a";
      const userId = `u${index % 7}`;
      const receivedAt = T0 + index * 1000;
      const items =
        index % 5 === 0
          ? parsed("company", { companyId: `c${index % 4}`, userId, attributes: { plan: `p${index}` } })
          : index % 5 === 1
            ? parsed("user", { userId, attributes: { n: index }, context: { active: index % 2 === 0 } })
            : index % 5 === 2
              ? parsed("feature-events", [{ action: "check", key: "huddle", evalResult: true, evalContext: { user: { id: userId } } }])
              : parsed("event", { event: `e${index}`, userId, ...(index % 2 === 0 ? { companyId: `c${index % 3}` } : {}) });
      return { environmentId, items, receivedAt };
    });
    const sequentialDir = await mkdtemp(join(tmpdir(), "switchyard-tracking-seq-"));
    const sequential = new LmdbStore({ path: sequentialDir, durability: "commit" });
    try {
      for (const request of requests) await applyTracking(sequential, request.environmentId, request.items, request.receivedAt);
      // This store also holds the app the other tests use; only what the requests added is compared.
      const before = dump(store);
      const outcomes = await applyTrackingTogether(store, requests);
      expect(outcomes.every((outcome) => outcome.status === "fulfilled")).toBe(true);
      const together = Object.fromEntries(Object.entries(dump(store)).filter(([key]) => !(key in before)));
      expect(Object.keys(together).length).toBeGreaterThan(50);
      expect(together).toEqual(dump(sequential));
    } finally {
      await sequential.close();
      await rm(sequentialDir, { recursive: true, force: true });
    }
  });

  it("when the shared transaction fails, each request is retried alone and only the failing one is refused", async () => {
    const event = (userId: string): TrackingRequest => ({ environmentId: envId, items: parsed("event", { event: "e", userId }), receivedAt: T0 });
    // Feedback cannot share a transaction: it throws there, then fails alone on its archived feature.
    const doomed: TrackingRequest = { environmentId: envId, items: parsed("feedback", { userId: "u9", key: "old", score: 3 }), receivedAt: T0 };
    const outcomes = await applyTrackingTogether(store, [event("u1"), doomed, event("u2")]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: "UNKNOWN_FEATURE" });
    expect(reader.listEvents(envId, undefined, 10).events.map((stored) => stored.userId)).toEqual(["u1", "u2"]);
    expect(reader.listFeedback(envId, undefined, 10).feedback).toEqual([]);
    expect(canShareTransaction(doomed.items)).toBe(false);
    expect(canShareTransaction(event("u3").items)).toBe(true);
  });
});
