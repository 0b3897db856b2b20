/**
 * A guarded rollout survives kill -9 (API.md §17): its state, its step and the step's exposures are in the store
 * (the rollout record and the exposure projection, both committed with what they derive from), so a service killed
 * mid-step starts again on the same data dir with the rollout in the same step and carries it to the end.
 */
import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import { seededRandom, sendRound, type Traffic } from "../support/rollouts.js";
import { makeDataDir, NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const EVERYONE = [{ filter: { type: "constant", value: true } }];
const SAME_RATES: Traffic = { rates: { error: { exposed: 0.3, control: 0.3 } }, plan: () => "pro" };

describe(`a rollout across kill -9 (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  it("resumes from its step with the step's exposures, then completes", { timeout: 180_000 }, async () => {
    const dataDir = makeDataDir();
    let server: TestServer | undefined;
    try {
      server = await startServer({ dataDir });
      const admin = (method: string, path: string, body?: unknown) => request(server!.url, method, path, { token: server!.adminToken, ...(body !== undefined ? { body } : {}) });
      const keys = await createApp(server.url, server.adminToken);
      const env = `/admin/environments/${keys.production.id}`;
      await admin("PUT", `/admin/apps/${keys.app.id}/features/survivor`, { name: "survivor" });
      await admin("PUT", `${env}/features/survivor/targeting`, { rules: EVERYONE });
      const started = await admin("POST", `${env}/features/survivor/rollouts`, {
        steps: [20, 50, 100],
        stepSeconds: 1,
        minExposures: 40,
        guards: [{ event: "error", direction: "lower_is_better", maxRelativeChange: 0.1 }],
      });
      expect(started.status).toBe(200);
      const path = `${env}/features/survivor/rollouts/${started.body.rollout.id}`;
      const random = seededRandom(99);
      let rollout = started.body.rollout;
      // Bounded by time, not rounds: on a fast twin rounds take tens of milliseconds, and the 1 s step must pass.
      for (let round = 0, until = Date.now() + 60_000; rollout.step === 0 && Date.now() < until; round++) {
        await sendRound(server, keys.production.secretKey, "survivor", SAME_RATES, 150, random, `before-${round}`);
        rollout = (await admin("GET", path)).body.rollout;
        if (rollout.step === 0) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(rollout).toMatchObject({ state: "running", step: 1, percent: 50 });
      // Some traffic in the second step, then its exposures as the service answers them (everything acknowledged).
      await sendRound(server, keys.production.secretKey, "survivor", SAME_RATES, 30, random, "mid-step");
      const beforeKill = (await admin("GET", path)).body.rollout;
      expect(beforeKill.step).toBe(1);
      expect(beforeKill.steps[1].exposures.exposed + beforeKill.steps[1].exposures.control).toBeGreaterThan(0);
      await server.kill();

      server = await startServer({ dataDir });
      const afterRestart = (await admin("GET", path)).body.rollout;
      expect(afterRestart).toMatchObject({ state: "running", step: 1, percent: 50 });
      expect(afterRestart.steps[0]).toEqual(beforeKill.steps[0]);
      expect(afterRestart.steps[1].startedAt).toBe(beforeKill.steps[1].startedAt);
      expect(afterRestart.steps[1].exposures).toEqual(beforeKill.steps[1].exposures);
      expect(afterRestart.transitions).toEqual(beforeKill.transitions);
      // The SDKs serve the second step's rules.
      const served = (await request(server.url, "GET", "/features?key=survivor", { token: keys.production.secretKey })).body.features[0];
      expect(served.targeting.rules[0].filter.filters[1]).toMatchObject({ type: "rolloutPercentage", partialRolloutThreshold: 50_000 });

      for (let round = 0, until = Date.now() + 60_000; rollout.state === "running" && Date.now() < until; round++) {
        await sendRound(server, keys.production.secretKey, "survivor", SAME_RATES, 150, random, `after-${round}`);
        rollout = (await admin("GET", path)).body.rollout;
        if (rollout.state === "running") await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(rollout.state).toBe("completed");
      expect(rollout.transitions.map((each: { action: string }) => each.action)).toEqual(["rollout.started", "rollout.advanced", "rollout.completed"]);
    } finally {
      await server?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
