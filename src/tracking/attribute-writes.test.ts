import { describe, expect, it } from "vitest";
import { AttributeWrites, mayChangeAttributes } from "./attribute-writes.js";

/** A projection whose catching up the test decides. */
function fakeProjection() {
  let release: (() => void) | undefined;
  let fail: ((error: Error) => void) | undefined;
  let behind = true;
  const caughtUp = () =>
    behind
      ? new Promise<void>((resolve, reject) => {
          release = () => {
            behind = false;
            resolve();
          };
          fail = reject;
        })
      : undefined;
  return { caughtUp, catchUp: () => release!(), fail: (error: Error) => fail!(error), fallBehind: () => (behind = true) };
}

describe("AttributeWrites", () => {
  it("makes no evaluation wait while no user or company call is pending in its environment", () => {
    const projection = fakeProjection();
    const writes = new AttributeWrites(projection.caughtUp, 60_000);
    expect(writes.projected("env_a")).toBeUndefined();
    writes.acknowledged("env_b");
    expect(writes.projected("env_a")).toBeUndefined();
  });

  it("waits for the projection of an acknowledged call, then no longer", async () => {
    const projection = fakeProjection();
    const writes = new AttributeWrites(projection.caughtUp, 60_000);
    writes.acknowledged("env_a");
    let done = false;
    const waiting = writes.projected("env_a")!.then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    projection.catchUp();
    await waiting;
    expect(done).toBe(true);
    projection.fallBehind();
    expect(writes.projected("env_a")).toBeUndefined();
  });

  it("keeps a call acknowledged during a wait pending after that wait", async () => {
    const projection = fakeProjection();
    const writes = new AttributeWrites(projection.caughtUp, 60_000);
    writes.acknowledged("env_a");
    const first = writes.projected("env_a")!;
    writes.acknowledged("env_a");
    projection.catchUp();
    await first;
    projection.fallBehind();
    expect(writes.projected("env_a")).toBeInstanceOf(Promise);
  });

  it("answers, never rejects, when the projection refuses the wait or passes the bound", async () => {
    const refusing = fakeProjection();
    const writes = new AttributeWrites(refusing.caughtUp, 60_000);
    writes.acknowledged("env_a");
    const refused = writes.projected("env_a")!;
    refusing.fail(new Error("PROJECTION_BEHIND"));
    await expect(refused).resolves.toBeUndefined();

    const stuck = new AttributeWrites(() => new Promise<void>(() => {}), 0);
    stuck.acknowledged("env_a");
    await expect(stuck.projected("env_a")).resolves.toBeUndefined();
  });
});

describe("mayChangeAttributes", () => {
  const body = (value: unknown) => Buffer.from(JSON.stringify(value));
  it("is true for user and company calls and for a bulk holding either type, false for events alone", () => {
    expect(mayChangeAttributes("user", null)).toBe(true);
    expect(mayChangeAttributes("company", body({ companyId: "c" }))).toBe(true);
    expect(mayChangeAttributes("bulk", body([{ type: "event", event: "e", userId: "u", companyId: "c" }]))).toBe(false);
    expect(mayChangeAttributes("bulk", body([{ type: "event", event: "e", userId: "u" }, { type: "company", companyId: "c" }]))).toBe(true);
    expect(mayChangeAttributes("bulk", body([{ type: "user", userId: "u" }]))).toBe(true);
    expect(mayChangeAttributes("event", body({ event: "user", userId: "u" }))).toBe(false);
    expect(mayChangeAttributes("feature-events", body([{ action: "check" }]))).toBe(false);
  });
});
