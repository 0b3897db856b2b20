import { beforeEach, describe, expect, it } from "vitest";
import { useTempLmdbStore } from "../../test/support/temp-lmdb.js";
import { ServiceError } from "../errors/catalogue.js";
import { FeatureRepository } from "../features/feature-repository.js";
import { parseTrackingCall, type TrackingCall } from "../schemas/tracking.js";
import type { KvStore } from "../storage/kv.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import { applyTracking } from "../../bench/support/direct-tracking.js";
import { MAX_LIST_LIMIT } from "../storage/cursor.js";
import { TrackingReader } from "./reader.js";

// Analytics and survey state derive from tracking only where they are registered, as every serving thread does.

const T0 = Date.UTC(2024, 5, 1);

let store: KvStore;
const temp = useTempLmdbStore("switchyard-reader-");
let reader: TrackingReader;
let envId: string;

beforeEach(async () => {
  store = temp.store;
  reader = new TrackingReader(store);
  const issued = await new TenancyRepository(store).createApp("Acme");
  envId = issued.environments[0]!.id;
  await new FeatureRepository(store).putFeature(issued.app.id, "huddle", {});
});

async function track(call: TrackingCall, body: unknown, receivedAt = T0) {
  const parsed = parseTrackingCall(call, body);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return applyTracking(store, envId, parsed.items, receivedAt);
}

function expectInvalidQuery(read: () => unknown, path: string): void {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe("INVALID_QUERY");
    expect((error as ServiceError).validationErrors?.[0]?.path).toBe(path);
    return;
  }
  throw new Error("expected INVALID_QUERY");
}

describe("users and companies", () => {
  it("are undefined when absent, or for ids that could never be stored", () => {
    expect(reader.getUser(envId, "nobody")).toBeUndefined();
    expect(reader.getCompany(envId, "nothing")).toBeUndefined();
    expect(reader.getUserAttributes(envId, "nobody")).toBeUndefined();
    expect(reader.getCompanyAttributes(envId, "nothing")).toBeUndefined();
    expect(reader.getUser(envId, "")).toBeUndefined();
    expect(reader.getUser(envId, "a\u0000b")).toBeUndefined();
    expect(reader.getCompany(envId, "a\u0000b")).toBeUndefined();
  });

  it("list memberships in id order", async () => {
    for (const companyId of ["c3", "c1", "c2"]) await track("company", { companyId, userId: "u1" });
    for (const userId of ["u9", "u2"]) await track("company", { companyId: "c1", userId });
    expect(reader.getUser(envId, "u1")?.companyIds).toEqual(["c1", "c2", "c3"]);
    expect(reader.getCompany(envId, "c1")?.userIds).toEqual(["u1", "u2", "u9"]);
  });

  it("do not confuse an id with one it prefixes", async () => {
    await track("company", { companyId: "c1", userId: "u1" });
    await track("company", { companyId: "c2", userId: "u10" });
    expect(reader.getUser(envId, "u1")?.companyIds).toEqual(["c1"]);
    expect(reader.getCompany(envId, "c1")?.userIds).toEqual(["u1"]);
  });
});

describe("paging", () => {
  beforeEach(async () => {
    for (let index = 0; index < 25; index++) await track("event", { event: `e${index}`, userId: "u1" }, T0 + index);
  });

  it("walks a log in append order: after, limit, next, then an empty page that keeps next", () => {
    const seen: string[] = [];
    let after: string | undefined;
    const pageSizes: number[] = [];
    for (;;) {
      const page = reader.listEvents(envId, after, 10);
      pageSizes.push(page.events.length);
      if (page.events.length === 0) {
        expect(page.next).toBe(after);
        break;
      }
      expect(page.next).toBe(page.events.at(-1)!.cursor);
      seen.push(...page.events.map((event) => event.event));
      after = page.next;
    }
    expect(pageSizes).toEqual([10, 10, 5, 0]);
    expect(seen).toEqual(Array.from({ length: 25 }, (_, index) => `e${index}`));
  });

  it("resumes after new appends from the last next", async () => {
    const { next } = reader.listEvents(envId, undefined, 100);
    expect(reader.listEvents(envId, next, 100).events).toEqual([]);
    await track("event", { event: "late", userId: "u1" });
    const page = reader.listEvents(envId, next, 100);
    expect(page.events.map((event) => event.event)).toEqual(["late"]);
    expect(Number(page.next)).toBeGreaterThan(Number(next));
  });

  it("gives cursors that strictly increase", () => {
    const cursors = reader.listEvents(envId, undefined, 100).events.map((event) => Number(event.cursor));
    for (let index = 1; index < cursors.length; index++) expect(cursors[index]).toBeGreaterThan(cursors[index - 1]!);
  });

  it("from an empty log answers an empty page whose next starts from the beginning", () => {
    const empty = reader.listPromptEvents(envId, undefined, 10);
    expect(empty).toEqual({ promptEvents: [], next: "0" });
    expect(reader.listEvents(envId, empty.next, 3).events.map((event) => event.event)).toEqual(["e0", "e1", "e2"]);
  });

  it("refuses cursors it did not issue and bad limits with INVALID_QUERY", () => {
    for (const bad of ["", "abc", "-1", "1.5", "01", " 1", "99999999999999999"]) {
      expectInvalidQuery(() => reader.listEvents(envId, bad, 10), "after");
    }
    for (const bad of [0, -1, 1.5, Number.NaN]) expectInvalidQuery(() => reader.listEvents(envId, undefined, bad), "limit");
  });

  it(`lowers a limit over ${MAX_LIST_LIMIT}`, async () => {
    const many = Array.from({ length: MAX_LIST_LIMIT + 10 }, (_, index) => ({ type: "event", event: `b${index}`, userId: "u1" }));
    await track("bulk", many);
    expect(reader.listEvents(envId, undefined, 5000).events).toHaveLength(MAX_LIST_LIMIT);
  });

  it("pages feedback, an update reappearing after what was already seen", async () => {
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      const { feedbackIds } = await track("feedback", { userId: `u${index}`, key: "huddle", score: 3 });
      ids.push(feedbackIds[0]!);
    }
    const first = reader.listFeedback(envId, undefined, 3);
    expect(first.feedback.map((item) => item.feedbackId)).toEqual(ids.slice(0, 3));
    await track("feedback", { userId: "u0", key: "huddle", feedbackId: ids[0], comment: "more" });
    const rest = reader.listFeedback(envId, first.next, 10);
    expect(rest.feedback.map((item) => item.feedbackId)).toEqual([ids[3], ids[4], ids[0]]);
    expect(rest.feedback.at(-1)).toMatchObject({ score: 3, comment: "more" });
    // One entry per feedback overall.
    expect(reader.listFeedback(envId, undefined, 100).feedback.map((item) => item.feedbackId)).toEqual([ids[1], ids[2], ids[3], ids[4], ids[0]]);
  });
});
