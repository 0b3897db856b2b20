import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseTrackingCall, type TrackingCall, type TrackingItem } from "./tracking.js";
import { FEATURE_EVENT_ACTIONS, MAX_ATTRIBUTES, MAX_BULK_ITEMS, parseIsoDateTime } from "./tracking-fields.js";

function items(call: TrackingCall, body: unknown): TrackingItem[] {
  const result = parseTrackingCall(call, body);
  if (!result.ok) throw new Error(`expected success, got ${JSON.stringify(result.issues)}`);
  return result.items;
}

function issues(call: TrackingCall, body: unknown): { path: string; message: string }[] {
  const result = parseTrackingCall(call, body);
  if (result.ok) throw new Error(`expected issues, got ${JSON.stringify(result.items)}`);
  return result.issues;
}

function paths(call: TrackingCall, body: unknown): string[] {
  return issues(call, body).map((issue) => issue.path);
}

const ok = (call: TrackingCall, body: unknown) => parseTrackingCall(call, body).ok;
const s = (length: number, char = "a") => char.repeat(length);

const feedback = { userId: "u1", featureId: "ft1", score: 3 };
const prompt = { action: "shown", featureId: "ft1", promptId: s(10), userId: "u1", promptedQuestion: "How?" };

describe("identifiers", () => {
  it("accepts non-empty strings and finite numbers, stored as strings", () => {
    expect(items("user", { userId: "abc" })[0]).toMatchObject({ type: "user", userId: "abc" });
    expect(items("user", { userId: 42 })[0]).toMatchObject({ userId: "42" });
    expect(items("user", { userId: 0 })[0]).toMatchObject({ userId: "0" });
    expect(items("user", { userId: -1.5 })[0]).toMatchObject({ userId: "-1.5" });
  });

  it("holds 256 characters, not 257", () => {
    expect(ok("user", { userId: s(256) })).toBe(true);
    expect(paths("user", { userId: s(257) })).toEqual(["userId"]);
    expect(ok("company", { companyId: s(256) })).toBe(true);
    expect(paths("company", { companyId: s(257) })).toEqual(["companyId"]);
  });

  it("refuses empty strings, U+0000, non-finite numbers and other types", () => {
    expect(issues("user", { userId: "" })).toEqual([{ path: "userId", message: "must not be empty" }]);
    expect(paths("user", { userId: "a\u0000b" })).toEqual(["userId"]);
    expect(paths("user", { userId: Number.NaN })).toEqual(["userId"]);
    expect(paths("user", { userId: Number.POSITIVE_INFINITY })).toEqual(["userId"]);
    for (const bad of [true, null, {}, [], ["a"]]) expect(paths("user", { userId: bad })).toEqual(["userId"]);
  });

  it("reports a missing required field plainly", () => {
    expect(issues("user", {})).toEqual([{ path: "userId", message: "is required" }]);
    expect(issues("company", { userId: "u" })).toEqual([{ path: "companyId", message: "is required" }]);
  });

  it("refuses a body that is not an object", () => {
    for (const body of [null, 3, "x", [], undefined]) expect(paths("user", body)).toEqual([""]);
  });

  it("accepts any generated valid id", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ minLength: 1, maxLength: 256 }).filter((id) => !id.includes("\u0000")),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
        ),
        (id) => {
          const [item] = items("user", { userId: id });
          expect(item).toMatchObject({ userId: String(id) });
        },
      ),
    );
  });
});

describe("timestamps", () => {
  it("accepts ISO 8601 date-times with and without offsets, and epoch milliseconds", () => {
    const at = (timestamp: unknown) => (items("user", { userId: "u", timestamp })[0] as { timestamp: number }).timestamp;
    expect(at("2024-03-01T12:00:00Z")).toBe(Date.UTC(2024, 2, 1, 12));
    expect(at("2024-03-01T12:00:00.123Z")).toBe(Date.UTC(2024, 2, 1, 12, 0, 0, 123));
    expect(at("2024-03-01T12:00:00.123456Z")).toBe(Date.UTC(2024, 2, 1, 12, 0, 0, 123));
    expect(at("2024-03-01T12:00:00+02:00")).toBe(Date.UTC(2024, 2, 1, 10));
    expect(at("2024-03-01T12:00:00-0130")).toBe(Date.UTC(2024, 2, 1, 13, 30));
    expect(at("2024-03-01T12:00")).toBe(Date.UTC(2024, 2, 1, 12));
    expect(at("2024-02-29T00:00:00Z")).toBe(Date.UTC(2024, 1, 29));
    expect(at(1_700_000_000_000)).toBe(1_700_000_000_000);
    expect(at(1_700_000_000_000.7)).toBe(1_700_000_000_000);
    expect(at(0)).toBe(0);
    expect(at(new Date("2024-05-05T05:05:05.555Z").toISOString())).toBe(Date.UTC(2024, 4, 5, 5, 5, 5, 555));
  });

  it("is absent when not sent or null", () => {
    expect(items("user", { userId: "u" })[0]).toMatchObject({ timestamp: undefined });
    expect(items("user", { userId: "u", timestamp: null })[0]).toMatchObject({ timestamp: undefined });
  });

  it("refuses invalid dates and other forms", () => {
    for (const bad of [
      "2024-02-30T00:00:00Z",
      "2023-02-29T00:00:00Z",
      "2024-13-01T00:00:00Z",
      "2024-01-01T24:00:00Z",
      "2024-01-01T12:60:00Z",
      "2024-01-01T12:00:60Z",
      "2024-01-01T12:00:00+24:00",
      "2024-01-01",
      "yesterday",
      "",
      "1700000000000",
      Number.NaN,
      Number.POSITIVE_INFINITY,
      8.64e15 + 1,
      true,
      {},
    ]) {
      expect(paths("event", { event: "e", userId: "u", timestamp: bad }), String(bad)).toEqual(["timestamp"]);
    }
  });

  it("agrees with Date.parse on every date-time toISOString produces", () => {
    fc.assert(
      fc.property(fc.date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }), (date) => {
        expect(parseIsoDateTime(date.toISOString())).toBe(date.getTime());
      }),
    );
  });
});

describe("context and attributes", () => {
  it("reads context.active, which must be a boolean when sent", () => {
    expect(items("user", { userId: "u", context: { active: false } })[0]).toMatchObject({ active: false });
    expect(items("user", { userId: "u", context: { active: true } })[0]).toMatchObject({ active: true });
    expect(items("user", { userId: "u", context: {} })[0]).toMatchObject({ active: true });
    expect(items("user", { userId: "u", context: { other: 1 } })[0]).toMatchObject({ active: true });
    expect(items("user", { userId: "u" })[0]).toMatchObject({ active: true });
    for (const bad of ["false", 0, null]) expect(paths("user", { userId: "u", context: { active: bad } })).toEqual(["context.active"]);
    expect(paths("user", { userId: "u", context: "x" })).toEqual(["context"]);
  });

  it("accepts any JSON values", () => {
    const attributes = { a: 1, b: "x", c: null, d: [1, { e: true }], f: { g: { h: "i" } } };
    expect(items("user", { userId: "u", attributes })[0]).toMatchObject({ attributes });
  });

  it(`holds ${MAX_ATTRIBUTES} attributes, not ${MAX_ATTRIBUTES + 1}`, () => {
    const many = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`a${index}`, index]));
    expect(ok("company", { companyId: "c", attributes: many(MAX_ATTRIBUTES) })).toBe(true);
    expect(paths("company", { companyId: "c", attributes: many(MAX_ATTRIBUTES + 1) })).toEqual(["attributes"]);
  });

  it("holds names of 1..256 characters", () => {
    expect(ok("user", { userId: "u", attributes: { [s(256)]: 1 } })).toBe(true);
    expect(paths("user", { userId: "u", attributes: { [s(257)]: 1 } })).toEqual([`attributes.${s(257)}`]);
    expect(paths("user", { userId: "u", attributes: { "": 1 } })).toEqual(["attributes."]);
  });

  it("refuses names that reach a prototype, each reported", () => {
    const attributes = JSON.parse('{"__proto__": {"admin": true}, "constructor": 1, "prototype": 2, "fine": 3}');
    expect(paths("event", { event: "e", userId: "u", attributes })).toEqual([
      "attributes.__proto__",
      "attributes.constructor",
      "attributes.prototype",
    ]);
  });

  it("refuses attributes that are not an object", () => {
    for (const bad of [[], [1], "x", 1, true]) expect(paths("user", { userId: "u", attributes: bad })).toEqual(["attributes"]);
    expect(items("user", { userId: "u", attributes: null })[0]).toMatchObject({ attributes: undefined });
  });
});

describe("user, company and event bodies", () => {
  it("normalise to items", () => {
    expect(items("user", { userId: "u", attributes: { a: 1 }, timestamp: 5 })).toEqual([
      { type: "user", userId: "u", attributes: { a: 1 }, timestamp: 5, active: true, path: "" },
    ]);
    expect(items("company", { companyId: 7, userId: 8 })).toEqual([
      { type: "company", companyId: "7", userId: "8", attributes: undefined, timestamp: undefined, active: true, path: "" },
    ]);
    expect(items("event", { event: "clicked", userId: "u", companyId: "c", context: { active: false } })).toEqual([
      {
        type: "event",
        event: "clicked",
        userId: "u",
        companyId: "c",
        attributes: undefined,
        timestamp: undefined,
        active: false,
        path: "",
      },
    ]);
  });

  it("ignore unknown fields", () => {
    expect(ok("user", { userId: "u", somethingElse: [1, 2] })).toBe(true);
  });

  it("limit event names to 1..255 characters", () => {
    expect(ok("event", { event: "e", userId: "u" })).toBe(true);
    expect(ok("event", { event: s(255), userId: "u" })).toBe(true);
    expect(paths("event", { event: s(256), userId: "u" })).toEqual(["event"]);
    expect(paths("event", { event: "", userId: "u" })).toEqual(["event"]);
    expect(paths("event", { event: 3, userId: "u" })).toEqual(["event"]);
    expect(paths("event", { userId: "u" })).toEqual(["event"]);
    expect(paths("event", { event: "e" })).toEqual(["userId"]);
  });

  it("report every issue of one body", () => {
    expect(paths("event", { event: "", userId: "", companyId: true, timestamp: "no", context: { active: 1 } })).toEqual([
      "event",
      "userId",
      "companyId",
      "timestamp",
      "context.active",
    ]);
  });
});

describe("feedback", () => {
  it("normalises a full body", () => {
    const body = {
      feedbackId: "fb_1",
      userId: 1,
      companyId: 2,
      featureId: "ft1",
      key: "k",
      score: 5,
      comment: "good",
      question: "q?",
      promptedQuestion: "pq?",
      promptId: s(10),
      source: "widget",
      timestamp: 1000,
    };
    expect(items("feedback", body)).toEqual([{ ...body, type: "feedback", userId: "1", companyId: "2", path: "" }]);
  });

  it("requires userId, featureId or key, and score or comment", () => {
    expect(paths("feedback", { featureId: "f", score: 1 })).toEqual(["userId"]);
    expect(issues("feedback", { userId: "u", score: 1 })).toEqual([{ path: "featureId", message: "featureId or key is required" }]);
    expect(issues("feedback", { userId: "u", featureId: "f" })).toEqual([{ path: "score", message: "score or comment is required" }]);
    expect(ok("feedback", { userId: "u", key: "k", comment: "c" })).toBe(true);
    expect(ok("feedback", { userId: "u", key: "k", score: 1, featureId: null })).toBe(true);
  });

  it("reads an empty comment as absent (the widget sends one with a bare score)", () => {
    expect(items("feedback", { ...feedback, comment: "" })[0]).toMatchObject({ comment: undefined, score: 3 });
    expect(paths("feedback", { userId: "u", featureId: "f", comment: "" })).toEqual(["score"]);
  });

  it("limits every field", () => {
    const cases: [string, unknown, unknown][] = [
      ["featureId", s(1), ""],
      ["featureId", s(14), s(15)],
      ["key", s(1), ""],
      ["key", s(255), s(256)],
      ["score", 1, 0],
      ["score", 5, 6],
      ["score", 3, 2.5],
      ["score", 4, "4"],
      ["comment", s(1), 7],
      ["comment", s(4000), s(4001)],
      ["question", s(1), ""],
      ["question", s(256), s(257)],
      ["promptedQuestion", s(1), ""],
      ["promptedQuestion", s(256), s(257)],
      ["promptId", s(10), s(9)],
      ["promptId", s(40), s(41)],
      ["source", "manual", "email"],
      ["feedbackId", s(256), s(257)],
      ["feedbackId", "fb_x", ""],
      ["companyId", 5, ""],
    ];
    for (const [field, good, bad] of cases) {
      expect(ok("feedback", { ...feedback, [field]: good }), `${field} = ${String(good).slice(0, 20)}`).toBe(true);
      expect(paths("feedback", { ...feedback, [field]: bad }), `${field} = ${String(bad).slice(0, 20)}`).toEqual([field]);
    }
    for (const source of ["sdk", "widget", "prompt", "manual"]) expect(ok("feedback", { ...feedback, source })).toBe(true);
  });
});

describe("feature events", () => {
  const event = { action: "check", key: "k", evalResult: true };

  it("accept one object or an array, paths by index", () => {
    expect(items("feature-events", event)).toHaveLength(1);
    expect(items("feature-events", [event, { ...event, action: "evaluate" }])).toHaveLength(2);
    expect(items("feature-events", [])).toEqual([]);
    expect(paths("feature-events", [event, event, { ...event, action: "nope" }])).toEqual(["2.action"]);
  });

  it("take every action; evalResult is a boolean for the non-config ones", () => {
    for (const action of FEATURE_EVENT_ACTIONS) {
      const config = action.endsWith("-config");
      expect(ok("feature-events", { action, key: "k", evalResult: config ? { key: "v", payload: 1 } : false }), action).toBe(true);
      expect(ok("feature-events", { action, key: "k" }), action).toBe(config);
    }
    expect(issues("feature-events", { action: "evaluate", key: "k", evalResult: "true" })).toEqual([
      { path: "evalResult", message: "must be a boolean for action evaluate" },
    ]);
  });

  it("take {key, payload}, either null or missing, for config actions", () => {
    const result = (evalResult: unknown) =>
      (items("feature-events", { action: "check-config", key: "k", evalResult })[0] as { evalResult: unknown }).evalResult;
    expect(result({ key: "v1", payload: { a: 1 } })).toEqual({ key: "v1", payload: { a: 1 } });
    expect(result({ key: null, payload: null })).toEqual({ key: null, payload: null });
    expect(result({})).toEqual({ key: null, payload: null });
    expect(result({ key: "v", payload: false })).toEqual({ key: "v", payload: false });
    expect(result(null)).toBeUndefined();
    expect(paths("feature-events", { action: "evaluate-config", key: "k", evalResult: true })).toEqual(["evalResult"]);
    expect(paths("feature-events", { action: "evaluate-config", key: "k", evalResult: { key: 5 } })).toEqual(["evalResult"]);
  });

  it("limit the key to 1..255 and check the optional fields", () => {
    expect(ok("feature-events", { ...event, key: s(255) })).toBe(true);
    expect(paths("feature-events", { ...event, key: s(256) })).toEqual(["key"]);
    expect(paths("feature-events", { ...event, key: "" })).toEqual(["key"]);
    expect(ok("feature-events", { ...event, targetingVersion: 0, evalRuleResults: [true, false], evalMissingFields: ["a.b"] })).toBe(true);
    expect(paths("feature-events", { ...event, targetingVersion: -1 })).toEqual(["targetingVersion"]);
    expect(paths("feature-events", { ...event, targetingVersion: 1.5 })).toEqual(["targetingVersion"]);
    expect(paths("feature-events", { ...event, evalRuleResults: [1] })).toEqual(["evalRuleResults.0"]);
    expect(paths("feature-events", { ...event, evalMissingFields: "a" })).toEqual(["evalMissingFields"]);
    expect(paths("feature-events", { ...event, evalContext: [] })).toEqual(["evalContext"]);
  });

  it("keep evalContext as sent, nested or flattened, meta included", () => {
    const nested = { user: { id: "u" }, company: { id: "c" }, other: {}, meta: { sdk: "x" } };
    const flat = { "user.id": "u", "company.id": "c" };
    expect(items("feature-events", { ...event, evalContext: nested })[0]).toMatchObject({ evalContext: nested });
    expect(items("feature-events", { ...event, evalContext: flat })[0]).toMatchObject({ evalContext: flat });
  });
});

describe("prompt events", () => {
  it("normalise and limit every field", () => {
    expect(items("prompt-event", { ...prompt, userId: 9 })).toEqual([{ ...prompt, userId: "9", type: "prompt-event", path: "" }]);
    for (const action of ["received", "shown", "dismissed"]) expect(ok("prompt-event", { ...prompt, action })).toBe(true);
    const cases: [string, unknown, unknown][] = [
      ["action", "shown", "clicked"],
      ["featureId", s(14), s(15)],
      ["featureId", s(1), ""],
      ["promptId", s(10), s(9)],
      ["promptId", s(40), s(41)],
      ["promptedQuestion", s(256), s(257)],
      ["promptedQuestion", s(1), ""],
      ["userId", s(256), s(257)],
    ];
    for (const [field, good, bad] of cases) {
      expect(ok("prompt-event", { ...prompt, [field]: good }), field).toBe(true);
      expect(paths("prompt-event", { ...prompt, [field]: bad }), field).toEqual([field]);
    }
    expect(paths("prompt-event", { action: "shown" })).toEqual(["featureId", "promptId", "userId", "promptedQuestion"]);
  });
});

describe("bulk", () => {
  const good = [
    { type: "user", userId: "u" },
    { type: "company", companyId: "c", userId: "u" },
    { type: "event", event: "e", userId: "u" },
    { type: "feedback", ...feedback },
    { type: "feature-flag-event", action: "evaluate", key: "k", evalResult: true },
    { type: "prompt-event", ...prompt },
  ];

  it("accepts every item type, each with its index as path", () => {
    const parsed = items("bulk", good);
    expect(parsed.map((item) => item.type)).toEqual(["user", "company", "event", "feedback", "feature-flag-event", "prompt-event"]);
    expect(parsed.map((item) => item.path)).toEqual(["0", "1", "2", "3", "4", "5"]);
    expect(items("bulk", [])).toEqual([]);
  });

  it("reports every bad item with its index, not just the first", () => {
    const body = [
      ...good,
      { type: "user" },
      { type: "teleport", userId: "u" },
      { userId: "u" },
      "user",
      { type: "event", event: "", userId: "" },
      { type: "feedback", userId: "u", featureId: "f" },
    ];
    expect(issues("bulk", body)).toEqual([
      { path: "6.userId", message: "is required" },
      { path: "7.type", message: expect.stringContaining("unknown item type") },
      { path: "8.type", message: expect.stringContaining("is required") },
      { path: "9", message: "must be an object" },
      { path: "10.event", message: "must not be empty" },
      { path: "10.userId", message: "must not be empty" },
      { path: "11.score", message: "score or comment is required" },
    ]);
  });

  it("must be an array", () => {
    expect(paths("bulk", { type: "user", userId: "u" })).toEqual([""]);
  });

  it(`holds ${MAX_BULK_ITEMS} items, not one more`, () => {
    const item = { type: "event", event: "e", userId: "u" };
    expect(items("bulk", Array.from({ length: MAX_BULK_ITEMS }, () => item))).toHaveLength(MAX_BULK_ITEMS);
    expect(paths("bulk", Array.from({ length: MAX_BULK_ITEMS + 1 }, () => item))).toEqual([""]);
  });

  it("names a nested field below the item index", () => {
    expect(paths("bulk", [{ type: "user", userId: "u", attributes: { constructor: 1 } }])).toEqual(["0.attributes.constructor"]);
  });
});

describe("never throws", () => {
  it("on any JSON value, for any call", () => {
    const calls: TrackingCall[] = ["user", "company", "event", "feedback", "feature-events", "bulk", "prompt-event"];
    fc.assert(
      fc.property(fc.constantFrom(...calls), fc.jsonValue(), (call, body) => {
        const result = parseTrackingCall(call, body);
        expect(typeof result.ok).toBe("boolean");
      }),
    );
  });
});
