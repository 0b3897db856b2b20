import { describe, expect, it } from "vitest";
import type { Job } from "../protocol.js";
import { packJobs, unpackJobs } from "./job-packing.js";

describe("job packing", () => {
  it("gives back every job as it was, through the structured clone, in order", () => {
    const jobs: Job[] = [
      { kind: "evaluate", environmentId: "env_a", minFlagStateVersion: 3, query: "context.user.id=u1", onlyEnabled: false, attributeEpoch: 2, attributeCacheMs: 1000 },
      { kind: "evaluate", environmentId: "env_b", minFlagStateVersion: 0, query: "", onlyEnabled: true, attributeEpoch: 0, attributeCacheMs: 0, encoding: "br", compressMinBytes: 32768 },
      { kind: "track", environmentId: "env_a", call: "event", body: new Uint8Array([123, 125]), contentType: "application/json", receivedAt: 1_700_000_000_000 },
      {
        kind: "evaluate",
        environmentId: "env_a",
        minFlagStateVersion: 3,
        query: "",
        onlyEnabled: false,
        attributeEpoch: 2,
        attributeCacheMs: 1000,
        ofrep: { flagKey: "huddle:config", publishableKey: "pub_x", body: new Uint8Array([1, 2, 3]), contentType: "application/json" },
      },
      { kind: "evaluate", environmentId: "env_a", minFlagStateVersion: 3, query: "", onlyEnabled: false, attributeEpoch: 2, attributeCacheMs: 1000, ofrep: { body: null, contentType: undefined } },
    ];
    const unpacked = unpackJobs(structuredClone(packJobs(jobs)));
    expect(unpacked).toEqual(jobs);
    // No property appears that the job did not have (a worker reads `job.ofrep !== undefined`, `job.encoding`).
    expect(Object.keys(unpacked[0]!)).toEqual(Object.keys(jobs[0]!));
    expect("flagKey" in (unpacked[4] as { ofrep: object }).ofrep).toBe(false);
  });
});
