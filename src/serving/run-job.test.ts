import { beforeEach, expect, it, vi } from "vitest";
import { AppendTally } from "../tracking/append-tally.js";
import { runProjectionStep } from "../tracking/projector.js";
import { useTempLmdbStore } from "../../test/support/temp-lmdb.js";
import { FeatureRepository } from "../features/feature-repository.js";
import { LmdbStore } from "../storage/lmdb-store.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import type { TrackingCall } from "../schemas/tracking.js";
import type { EvaluateJob, TrackJob } from "./protocol.js";
import { createJobContext, type JobContext } from "./job-context.js";
import { runJob, runJobs } from "./run-job.js";
import { lastAppended, projectedUpTo, trackingLogRecords } from "../tracking/tracking-log-table.js";

let store: LmdbStore;
const temp = useTempLmdbStore("switchyard-jobs-");
let context: JobContext;
let envId: string;

beforeEach(async () => {
  store = temp.store;
  context = createJobContext(store);
  const issued = await new TenancyRepository(store).createApp("Acme");
  envId = issued.environments[0]!.id;
  const features = new FeatureRepository(store);
  await features.putFeature(issued.app.id, "huddle", {});
  await features.putFeature(issued.app.id, "dark", {});
  await features.putRules(envId, "huddle", "targeting", [{ filter: { type: "constant", value: true } }]);
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

/** One projection step, as the projector runs it; answers what it reported. */
function project(): Promise<{ position: number; appended: number; items: number }> {
  return runProjectionStep(context.store, 10_000, (error) => {
    throw error;
  }, context.projections);
}

it("logs /features/enabled's evaluate events with the batch's tracking call in one record, projected later", async () => {
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
  // Acknowledged = logged: one record holds the tracking call and both evaluations, and nothing is projected yet.
  const records = [...trackingLogRecords(store, 0)];
  expect(records.map((record) => record.requests.map((request) => (request.evaluations ? "evaluations" : request.items[0]!.type)))).toEqual([["evaluations", "event", "evaluations"]]);
  expect(context.tracking.listFeatureEvents(envId, undefined, 10).featureEvents).toEqual([]);
  expect(await project()).toMatchObject({ position: 1, appended: 1, items: 3 });
  expect(projectedUpTo(store)).toBe(1);
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
  expect(lastAppended(store)).toBe(1);
  expect(await project()).toMatchObject({ position: 1, appended: 1, items: 5 });
  const events = context.tracking.listEvents(envId, undefined, 10).events;
  expect(events.map((event) => `${event.userId}:${event.event}`)).toEqual(["u1:opened", "u2:a", "u2:b"]);
  expect(context.tracking.getUserAttributes(envId, "u2")).toEqual({ plan: "pro" });
  // The id answered before projection is the one the projection stored.
  expect(context.tracking.listFeedback(envId, undefined, 10).feedback.map((feedback) => feedback.feedbackId)).toEqual([JSON.parse(answers[2]!.body as string).feedbackId]);
});

it("answers an evaluation-only batch without waiting for its append, which still commits, counted in flight until then", async () => {
  const tally = new AppendTally();
  context = createJobContext(store, tally);
  const answers = await runJobs(context, [enabled("context.user.id=u9")], (error) => {
    throw error;
  });
  expect(answers[0]!.status).toBe(200);
  // Answered: the events are held (HOLD_MS) and then appended; reads and shutdown wait on the tally meanwhile.
  expect(tally.inFlight()).toBe(true);
  expect(lastAppended(store)).toBe(0);
  await vi.waitFor(() => expect(tally.inFlight()).toBe(false));
  expect(lastAppended(store)).toBe(1);
  await project();
  expect(context.tracking.listFeatureEvents(envId, undefined, 10).featureEvents.map((event) => event.key)).toEqual(["huddle"]);
});

it("appends the evaluate events of batches that come close together as one record, taken along by a tracking call", async () => {
  const tally = new AppendTally();
  context = createJobContext(store, tally);
  const fail = (error: unknown) => {
    throw error;
  };
  for (const user of ["u1", "u2", "u3"]) await runJobs(context, [enabled(`context.user.id=${user}`)], fail);
  await vi.waitFor(() => expect(tally.inFlight()).toBe(false));
  expect([...trackingLogRecords(store, 0)].map((record) => record.requests.length)).toEqual([3]);

  // Held events go ahead of a later batch's acknowledged call, in its append: the log keeps the order of arrival.
  await runJobs(context, [enabled("context.user.id=u4")], fail);
  const [tracked] = await runJobs(context, [job("event", '{"event":"opened","userId":"u5"}')], fail);
  expect(tracked!.status).toBe(200);
  expect(tally.inFlight()).toBe(false);
  const second = [...trackingLogRecords(store, 1)].map((record) => record.requests.map((request) => (request.evaluations ? "evaluations" : request.items[0]!.type)));
  expect(second).toEqual([["evaluations", "event"]]);
  await project();
  expect(context.tracking.listFeatureEvents(envId, undefined, 10).featureEvents.map((event) => (event.evalContext as { user: { id: string } }).user.id)).toEqual(["u1", "u2", "u3", "u4"]);
});
