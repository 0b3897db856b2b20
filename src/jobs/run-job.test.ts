import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { FeatureRepository } from "../features/feature-repository.js";
import { LmdbStore } from "../storage/lmdb-store.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import type { TrackingCall } from "../schemas/tracking.js";
import type { EvaluateJob, TrackJob } from "./protocol.js";
import { createJobContext, type JobContext } from "./job-context.js";
import { runJobs } from "./run-job.js";

let dir: string;
let store: LmdbStore;
let context: JobContext;
let envId: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "switchyard-jobs-"));
  store = new LmdbStore({ path: dir, durability: "commit" });
  context = createJobContext(store);
  const issued = await new TenancyRepository(store).createApp("Acme");
  envId = issued.environments[0]!.id;
  const features = new FeatureRepository(store);
  await features.putFeature(issued.app.id, "huddle", {});
  await features.putFeature(issued.app.id, "dark", {});
  await features.putRules(envId, "huddle", "targeting", [{ filter: { type: "constant", value: true } }]);
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const job = (call: TrackingCall, body: string): TrackJob => ({
  kind: "track",
  environmentId: envId,
  call,
  body: Buffer.from(body),
  contentType: "application/json",
  receivedAt: Date.UTC(2024, 0, 1),
});

const enabled = (query: string): EvaluateJob => ({
  kind: "evaluate",
  environmentId: envId,
  minFlagStateVersion: 0,
  query,
  onlyEnabled: true,
  attributeEpoch: 0,
  attributeCacheMs: 0,
});

it("answers /features/enabled after its evaluate events are stored with the batch's tracking writes", async () => {
  const answers = await runJobs(
    context,
    [enabled("context.user.id=u1"), job("event", '{"event":"opened","userId":"u1"}'), enabled("context.user.id=u2"), enabled("context.user.__proto__.admin=1")],
    (error) => {
      throw error;
    },
  );
  expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 400]);
  // Evaluation answers come as bytes, tracking answers as text.
  expect(Object.keys(JSON.parse(Buffer.from(answers[0]!.body).toString()).features)).toEqual(["huddle"]);
  const stored = context.tracking.listFeatureEvents(envId, undefined, 10).featureEvents;
  expect(stored.map((event) => [event.key, event.action, event.evalResult, (event.evalContext as { user: { id: string } }).user.id])).toEqual([
    ["huddle", "evaluate", true, "u1"],
    ["huddle", "evaluate", true, "u2"],
  ]);
  expect(context.tracking.listEvents(envId, undefined, 10).events).toHaveLength(1);
});

it("answers every job of a batch in order, the bad ones alone, and stores the good ones", async () => {
  const faults: unknown[] = [];
  const answers = await runJobs(
    context,
    [
      job("event", '{"event":"opened","userId":"u1"}'),
      job("event", '{"event":'),
      job("feedback", '{"userId":"u1","key":"huddle","score":4}'),
      job("user", '{"userId":"u2","attributes":{"plan":"pro"}}'),
      job("event", '{"event":"","userId":"u3"}'),
      job("bulk", '[{"type":"event","event":"a","userId":"u2"},{"type":"event","event":"b","userId":"u2"}]'),
    ],
    (error) => faults.push(error),
  );
  expect(answers.map((answer) => answer.status)).toEqual([200, 400, 200, 200, 400, 200]);
  expect(JSON.parse(answers[2]!.body as string)).toMatchObject({ success: true, feedbackId: expect.any(String) });
  expect(JSON.parse(answers[4]!.body as string).error.validationErrors[0].path).toBe("event");
  expect(faults).toEqual([]);
  const events = context.tracking.listEvents(envId, undefined, 10).events;
  expect(events.map((event) => `${event.userId}:${event.event}`)).toEqual(["u1:opened", "u2:a", "u2:b"]);
  expect(context.tracking.getUserAttributes(envId, "u2")).toEqual({ plan: "pro" });
  expect(context.tracking.listFeedback(envId, undefined, 10).feedback).toHaveLength(1);
});
