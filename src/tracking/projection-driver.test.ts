/**
 * The projection driver's promises, with a real LMDB store and steps the test releases by hand: a read waits for
 * what was appended before it and no longer; past the read bound it is a retryable 503; tracking is refused while
 * the oldest unprojected call is older than the lag bound, and admitted again once projected.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { useTempLmdbStore } from "../../test/support/temp-lmdb.js";
import { ServiceError } from "../errors/catalogue.js";
import { LmdbStore } from "../storage/lmdb-store.js";
import { AppendTally } from "./append-tally.js";
import { ProjectionDriver } from "./projection-driver.js";
import type { ProjectionStep } from "./projector.js";
import { appendToTrackingLog, lastAppended, trackingLogStore } from "./tracking-log-table.js";

let store: LmdbStore;
const temp = useTempLmdbStore("switchyard-driver-");
/** Steps asked for and not yet answered: the test answers them. */
let pending: { resolve(step: ProjectionStep): void }[];
let driver: ProjectionDriver | undefined;

beforeEach(async () => {
  store = temp.store;
  pending = [];
});

afterEach(async () => {
  driver?.stop();
});

function start(limits: { maxLagMs: number; readWaitMs: number }, tally = new AppendTally()): ProjectionDriver {
  driver = new ProjectionDriver(
    {
      store,
      tally,
      step: () => new Promise<ProjectionStep>((resolve) => pending.push({ resolve })),
      onProjected: () => undefined,
      onFault: (error) => {
        throw error;
      },
      ...limits,
    },
    { position: 0, appended: 0 },
  );
  return driver;
}

async function append(): Promise<number> {
  return trackingLogStore(store).write(() => appendToTrackingLog(store, [{ environmentId: "env", receivedAt: Date.now(), items: [], feedbackIds: [] }]));
}

/** Answers the oldest step asked for as having projected up to `position` of `appended`. */
function answerStep(position: number, appended = position): void {
  const step = pending.shift();
  expect(step, "a step was asked for").toBeDefined();
  step!.resolve({ position, appended, records: position, requests: position, items: position, changed: [], oldestUnprojectedAt: null });
}

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

it("lets a read through at once while nothing was appended", () => {
  expect(start({ maxLagMs: 1_000, readWaitMs: 1_000 }).caughtUp()).toBeUndefined();
});

it("holds a read until the projection reached what was appended before it, and not longer", async () => {
  const gate = start({ maxLagMs: 1_000, readWaitMs: 5_000 });
  await append();
  gate.appended();
  let done = false;
  const read = gate.caughtUp()!.then(() => (done = true));
  await tick(20);
  expect(done).toBe(false);
  // Appended after the read began: the read does not wait for it.
  await append();
  expect(lastAppended(store)).toBe(2);
  answerStep(1, 1);
  await read;
  expect(done).toBe(true);
  expect(gate.status()).toMatchObject({ position: 1, backlog: 1 });
});

it("answers a read that waited past the bound with a retryable 503", async () => {
  const gate = start({ maxLagMs: 60_000, readWaitMs: 30 });
  await append();
  gate.appended();
  const error = await gate.caughtUp()!.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ServiceError);
  expect(error).toMatchObject({ code: "PROJECTION_BEHIND", retryAfterSeconds: 1 });
});

it("refuses tracking while the oldest unprojected call is older than the lag bound, and admits it once projected", async () => {
  // Bounds long next to a loaded CI machine's pauses (27 ms passed there between an append and the next line).
  const gate = start({ maxLagMs: 250, readWaitMs: 5_000 });
  await append();
  gate.appended();
  expect(() => gate.admit(true)).not.toThrow();
  await tick(300);
  expect(() => gate.admit(true)).toThrow(expect.objectContaining({ code: "PROJECTION_BEHIND" }));
  expect(gate.status().lagMs).toBeGreaterThanOrEqual(250);
  // The step was asked for at once (nothing had run yet): answering it catches the projection up.
  answerStep(1);
  await tick();
  expect(() => gate.admit(true)).not.toThrow();
  expect(gate.status()).toMatchObject({ lagMs: 0, backlog: 0 });
  expect(gate.caughtUp()).toBeUndefined();
});

it("holds tracking while the projection is behind by more than a fifth of the bound, and lets it on once a step caught up", async () => {
  // Past a fifth of the bound (200 ms) after 300 ms, and within it however long the machine pauses short of 700 ms.
  const gate = start({ maxLagMs: 1_000, readWaitMs: 5_000 });
  await append();
  gate.appended();
  await tick(300);
  expect(gate.admit(false), "a single call is not held").toBeUndefined();
  const held = gate.admit(true);
  expect(held, "held, not refused: the lag is past a fifth of the bound and within it").toBeInstanceOf(Promise);
  let admitted = false;
  void held!.then(() => (admitted = true));
  await tick(10);
  expect(admitted).toBe(false);
  answerStep(1);
  await held;
  expect(gate.admit(true)).toBeUndefined();
});

it("refuses held tracking once a step ends with the projection past the lag bound", async () => {
  // Held after 300 ms (past a fifth of the 1 s bound, within it), refused once the step ends 1.1 s after the appends.
  const gate = start({ maxLagMs: 1_000, readWaitMs: 5_000 });
  const firstAt = Date.now();
  await append();
  await append();
  gate.appended();
  await tick(300);
  const held = gate.admit(true)!;
  expect(held).toBeInstanceOf(Promise);
  const outcome = held.then(
    () => "admitted",
    (error: unknown) => error,
  );
  await tick(800);
  // The step projected the first record only; the second, as old as the first, is past the bound.
  pending.shift()!.resolve({ position: 1, appended: 2, records: 1, requests: 1, items: 1, changed: [], oldestUnprojectedAt: firstAt });
  expect(await outcome).toMatchObject({ code: "PROJECTION_BEHIND", retryAfterSeconds: 1 });
});

it("makes a read wait for evaluate events whose append was started before it and not yet committed", async () => {
  const tally = new AppendTally();
  const gate = start({ maxLagMs: 1_000, readWaitMs: 5_000 }, tally);
  const slot = tally.claim();
  slot.started();
  let done = false;
  const read = gate.caughtUp()!.then(() => (done = true));
  await tick(20);
  expect(done).toBe(false);
  // The append commits; the read now needs a step that covers it.
  await append();
  slot.finished();
  await tick(20);
  answerStep(1);
  await read;
  expect(done).toBe(true);
});
