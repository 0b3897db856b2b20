/**
 * A change request's apply is one audit entry; the events derived from it are what its direct writes would raise: a
 * kill-switch `targeting.changed` per switch moved, a `rollout.started` per rollout started, then the request's own
 * `change_request.applied` — after the rules writes' `targeting.changed`.
 */
import { describe, expect, it } from "vitest";
import { eventsOfChange } from "./change-events.js";

const ENTITY = { kind: "change-request", id: "cr_1", environmentId: "env_1", appId: "app_1" };

describe("events of a change request's apply", () => {
  it("raises the kill switch and the rollout start it carried, in order after the rules writes", () => {
    const rollout = { rolloutId: "ro_1", step: 0, percent: 10, before: [{ a: 1 }], after: [{ a: 2 }] };
    const audit = {
      action: "change-request.apply",
      entity: ENTITY,
      details: {
        features: [
          { feature: "huddle", targetingVersion: 3, configVersion: 0, enabled: { from: false, to: true }, enabledVersion: 2 },
          { feature: "calls", targetingVersion: 4, configVersion: 0, rolloutId: "ro_1", rollout },
          { feature: "quiet", targetingVersion: 1, configVersion: 1 },
        ],
      },
    };
    const write = { environmentId: "env_1", featureKey: "calls", kind: "targeting" as const, fromVersion: 3, toVersion: 4, before: [{ a: 1 }], after: [{ a: 2 }] };
    const events = eventsOfChange(audit, [write]);
    expect(events.map((event) => [event.type, event.featureKey])).toEqual([
      ["targeting.changed", "calls"],
      ["targeting.changed", "huddle"],
      ["rollout.started", "calls"],
      ["change_request.applied", null],
    ]);
    expect(events[1]).toMatchObject({ appId: "app_1", environmentId: "env_1", before: { enabled: false }, after: { enabled: true }, details: { killSwitch: true, changeRequestId: "cr_1" } });
    expect(events[2]).toMatchObject({ before: rollout.before, after: rollout.after, details: { rolloutId: "ro_1", percent: 10, changeRequestId: "cr_1" } });
  });

  it("raises only the request's transition when it moved no switch and started no rollout", () => {
    const audit = { action: "change-request.apply", entity: ENTITY, details: { features: [{ feature: "quiet", targetingVersion: 1, configVersion: 1 }] } };
    expect(eventsOfChange(audit, []).map((event) => event.type)).toEqual(["change_request.applied"]);
  });
});
