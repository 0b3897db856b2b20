/**
 * Guarded rollouts (API.md §17) through the real service on 127.0.0.1, with the official node SDK as the client: it
 * evaluates the feature locally from the rules each step wrote (sending its `check` events) and tracks the guards'
 * events at a rate that depends on what it saw. A/A rollouts complete every step; twice the error rate for the
 * exposed is rolled back to exactly the rules from before; a real conversion lift completes; bad input is refused
 * naming the field; a hand edit pauses the rollout; the approval policy holds a start.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, createToken, signIn, type Session } from "../support/accounts.js";
import { connectMcp } from "../support/mcp.js";
import { createApp, request } from "../support/http.js";
import { seededRandom, sendRound, type Traffic } from "../support/rollouts.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const EVERYONE = [{ filter: { type: "constant", value: true } }];
const PRO_ONLY = [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }, { filter: { type: "context", field: "company.id", operator: "IS", values: ["vip"] } }];

describe(`guarded rollouts (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const env = () => `/admin/environments/${keys.production.id}`;
  const rollouts = (feature: string) => `${env()}/features/${feature}/rollouts`;

  async function feature(key: string, rules: unknown[]): Promise<void> {
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/${key}`, { name: key })).status).toBe(200);
    expect((await admin("PUT", `${env()}/features/${key}/targeting`, { rules })).status).toBe(200);
  }

  /**
   * Sends rounds of traffic until the rollout leaves `running` (or a minute passed); answers the rollout then. Bounded
   * by time, not rounds: on a fast twin rounds take tens of milliseconds, and the 1 s steps must still pass.
   */
  async function drive(key: string, rolloutId: string, traffic: Traffic, seed: number, unitsPerRound: number, timeoutMs = 60_000) {
    const random = seededRandom(seed);
    for (let round = 0, until = Date.now() + timeoutMs; Date.now() < until; round++) {
      await sendRound(server, keys.production.secretKey, key, traffic, unitsPerRound, random, `${key}-${round}`);
      const { body } = await admin("GET", `${rollouts(key)}/${rolloutId}`);
      if (body.rollout.state !== "running") return body.rollout;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return (await admin("GET", `${rollouts(key)}/${rolloutId}`)).body.rollout;
  }

  beforeAll(async () => {
    server = await startServer({ env: ACCOUNT_TEST_ENV });
    keys = await createApp(server.url, server.adminToken);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  for (const seed of [1, 2]) {
    it(`an A/A rollout walks every step and completes with the bare targeting (seed ${seed})`, { timeout: 120_000 }, async () => {
      const key = `same-${seed}`;
      await feature(key, EVERYONE);
      const started = await admin("POST", rollouts(key), {
        steps: [20, 50, 100],
        stepSeconds: 1,
        minExposures: 40,
        attribute: "company.id",
        guards: [
          { event: "error", direction: "lower_is_better", maxRelativeChange: 0.1 },
          { event: "converted", direction: "higher_is_better", maxRelativeChange: 0.1, alpha: 0.05 },
        ],
      });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      expect(started.body.rollout).toMatchObject({ state: "running", step: 0, percent: 20 });
      const rollout = await drive(key, started.body.rollout.id, { rates: { error: { exposed: 0.3, control: 0.3 }, converted: { exposed: 0.2, control: 0.2 } }, plan: () => "pro" }, seed, 150);
      expect(rollout.state, JSON.stringify(rollout)).toBe("completed");
      expect(rollout.steps.map((step: { startedAt: string | null }) => step.startedAt !== null)).toEqual([true, true, true]);
      expect(rollout.transitions.map((transition: { action: string }) => transition.action)).toEqual(["rollout.started", "rollout.advanced", "rollout.completed"]);
      for (const step of rollout.steps.slice(0, 2)) {
        expect(step.exposures.exposed).toBeGreaterThanOrEqual(40);
        expect(step.exposures.control).toBeGreaterThanOrEqual(40);
      }
      const served = (await admin("GET", `${env()}/features/${key}`)).body;
      expect(served.targeting.rules).toEqual(EVERYONE);
      const history = (await admin("GET", `${env()}/features/${key}/history`)).body;
      const targetingVersions = history.versions.filter((entry: { kind: string }) => entry.kind === "targeting");
      expect(targetingVersions.filter((entry: { rolloutId?: string }) => entry.rolloutId === rollout.id)).toHaveLength(3);
    });
  }

  it("rolls back an exposed group with twice the error rate in the first steps, to exactly the rules from before", { timeout: 120_000 }, async () => {
    const key = "doubles-errors";
    await feature(key, PRO_ONLY);
    const before = (await admin("GET", `${env()}/features/${key}`)).body.targeting;
    const started = await admin("POST", rollouts(key), { steps: [20, 40, 60, 80, 100], stepSeconds: 1, minExposures: 40, guards: [{ event: "error", direction: "lower_is_better", maxRelativeChange: 0.1 }], onBreach: "rollback" });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    // The step's rules: each rule from before ANDed with the share on the feature's key.
    const firstStep = (await admin("GET", `${env()}/features/${key}`)).body.targeting.rules;
    expect(firstStep).toEqual(
      PRO_ONLY.map((rule) => ({ filter: { type: "group", operator: "and", filters: [rule.filter, { type: "rolloutPercentage", key, partialRolloutAttribute: "company.id", partialRolloutThreshold: 20_000 }] } })),
    );
    const rollout = await drive(key, started.body.rollout.id, { rates: { error: { exposed: 0.6, control: 0.3 } }, plan: (random) => (random() < 0.7 ? "pro" : "free") }, 11, 200);
    expect(rollout.state, JSON.stringify(rollout)).toBe("rolled_back");
    expect(rollout.step).toBeLessThanOrEqual(1);
    expect(rollout.reason).toMatch(/^Guard breached: error/);
    expect(rollout.guards[0].breached).toBe(true);
    expect(rollout.guards[0].interval[0]).toBeGreaterThan(0.1);
    const after = (await admin("GET", `${env()}/features/${key}`)).body.targeting;
    expect(after.rules).toEqual(before.rules);
    expect(after.version).toBeGreaterThan(before.version);
    const audit = (await admin("GET", `/admin/audit?entity=rollout&limit=100`)).body.entries.filter((entry: { details: { rolloutId?: string } }) => entry.details.rolloutId === rollout.id);
    const rolledBack = audit.find((entry: { action: string }) => entry.action === "rollout.rolled_back");
    expect(rolledBack.details).toMatchObject({ rolloutId: rollout.id, automatic: true, after: before.rules });
    expect(rolledBack.details.guards[0]).toMatchObject({ event: "error", breached: true });
    expect(audit.map((entry: { action: string }) => entry.action)).toContain("rollout.started");
  });

  it("completes a higher_is_better conversion guard with a real lift", { timeout: 120_000 }, async () => {
    const key = "lifts-conversions";
    await feature(key, EVERYONE);
    const started = await admin("POST", rollouts(key), { steps: [20, 50, 100], stepSeconds: 1, minExposures: 40, guards: [{ event: "converted", direction: "higher_is_better", maxRelativeChange: 0.1 }] });
    expect(started.status).toBe(200);
    const rollout = await drive(key, started.body.rollout.id, { rates: { converted: { exposed: 0.45, control: 0.3 } }, plan: () => "pro" }, 21, 150);
    expect(rollout.state, JSON.stringify(rollout)).toBe("completed");
    expect((await admin("GET", `${env()}/features/${key}`)).body.targeting.rules).toEqual(EVERYONE);
  });

  it("starts and reads a rollout through the MCP tools, as the token's member", async () => {
    await feature("agent-rollout", EVERYONE);
    await createMember(server.url, server.adminToken, "agent-owner@example.com", "editor");
    const token = await createToken(server.url, await signIn(server.url, "agent-owner@example.com"), "agent");
    const mcp = await connectMcp(`${server.url}/api/mcp`, { token: token.secret });
    try {
      const started = await mcp.call("start_rollout", { environmentId: keys.production.id, key: "agent-rollout", steps: [10, 100], stepSeconds: 3600, guards: [{ event: "error", direction: "lower_is_better", maxRelativeChange: 0.2 }] });
      expect(started.value.rollout).toMatchObject({ state: "running", step: 0, percent: 10, feature: "agent-rollout" });
      const read = await mcp.call("get_rollout", { environmentId: keys.production.id, key: "agent-rollout" });
      expect(read.value.rollout.id).toBe(started.value.rollout.id);
      expect(read.value.rollout.guards).toEqual([expect.objectContaining({ event: "error", estimate: null, interval: null, breached: false })]);
      const bad = await mcp.call("start_rollout", { environmentId: keys.production.id, key: "agent-rollout", steps: [50, 10], stepSeconds: 1 });
      expect(bad.isError).toBe(true);
      expect(bad.text).toMatch(/steps/);
      const entry = (await admin("GET", `/admin/audit?entity=rollout&limit=100`)).body.entries.find((each: { details: { rolloutId?: string } }) => each.details.rolloutId === started.value.rollout.id);
      expect(entry.actor).toMatchObject({ kind: "token" });
    } finally {
      await mcp.close();
    }
  });

  describe("bad input and conflicts", () => {
    it("refuses bad steps and fields, naming the path, and writes nothing", async () => {
      await feature("bad-input", EVERYONE);
      const version = (await admin("GET", `${env()}/features/bad-input`)).body.targeting.version;
      const cases: [unknown, string][] = [
        [{ steps: [5, 5, 100], stepSeconds: 1 }, "steps"],
        [{ steps: [10, 5, 100], stepSeconds: 1 }, "steps"],
        [{ steps: [0, 50], stepSeconds: 1 }, "steps.0"],
        [{ steps: [50, 101], stepSeconds: 1 }, "steps.1"],
        [{ steps: [], stepSeconds: 1 }, "steps"],
        [{ stepSeconds: 0 }, "stepSeconds"],
        [{}, "stepSeconds"],
        [{ stepSeconds: 1, attribute: "company.name" }, "attribute"],
        [{ stepSeconds: 1, guards: [{ event: "error", direction: "sideways", maxRelativeChange: 0.1 }] }, "guards.0.direction"],
        [{ stepSeconds: 1, guards: [{ event: "error", direction: "lower_is_better", maxRelativeChange: -1 }] }, "guards.0.maxRelativeChange"],
        [{ stepSeconds: 1, guards: [{ event: "error", direction: "lower_is_better", maxRelativeChange: 0.1, alpha: 2 }] }, "guards.0.alpha"],
        [{ stepSeconds: 1, onBreach: "explode" }, "onBreach"],
      ];
      for (const [body, path] of cases) {
        const reply = await admin("POST", rollouts("bad-input"), body);
        expect(reply.status, JSON.stringify(body)).toBe(400);
        expect(reply.body.error.validationErrors.map((issue: { path: string }) => issue.path), JSON.stringify(body)).toContain(path);
      }
      expect((await admin("GET", rollouts("bad-input"))).body.rollouts).toEqual([]);
      expect((await admin("GET", `${env()}/features/bad-input`)).body.targeting.version).toBe(version);
      expect((await admin("POST", rollouts("no-such-feature"), { stepSeconds: 1 })).status).toBe(404);
      expect((await admin("GET", `${rollouts("bad-input")}/ro_nothing`)).status).toBe(404);
    });

    it("warns of a guard on an event never tracked, allows one active rollout per feature, and refuses a feature with no rules", async () => {
      const started = await admin("POST", rollouts("bad-input"), { steps: [10, 100], stepSeconds: 3600, guards: [{ event: "never-seen-event", direction: "lower_is_better", maxRelativeChange: 0.1 }] });
      expect(started.status).toBe(200);
      expect(started.body.warnings).toEqual([{ path: "guards.0.event", message: expect.stringContaining("never-seen-event") }]);
      const second = await admin("POST", rollouts("bad-input"), { stepSeconds: 1 });
      expect(second.status).toBe(409);
      expect(second.body.error.code).toBe("CONFLICT");
      expect(second.body.error.message).toContain(started.body.rollout.id);
      expect((await admin("GET", rollouts("bad-input"))).body.rollouts).toHaveLength(1);
      expect((await admin("POST", `${rollouts("bad-input")}/${started.body.rollout.id}/cancel`)).body.rollout.state).toBe("cancelled");
      // Cancelled: no longer active, so another may start; cancel leaves the step's rules in place.
      expect((await admin("GET", `${env()}/features/bad-input`)).body.targeting.rules[0].filter.type).toBe("group");
      expect((await admin("POST", `${rollouts("bad-input")}/${started.body.rollout.id}/resume`)).status).toBe(409);

      expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/untargeted`, { name: "untargeted" })).status).toBe(200);
      const none = await admin("POST", rollouts("untargeted"), { stepSeconds: 1 });
      expect(none.status).toBe(409);
      expect(none.body.error.message).toMatch(/no targeting rules/);
    });

    it("pauses and resumes by hand; a hand edit of the targeting pauses it and says why; resuming then is refused", async () => {
      await feature("hand-edited", EVERYONE);
      const { rollout } = (await admin("POST", rollouts("hand-edited"), { steps: [10, 100], stepSeconds: 3600 })).body;
      const paused = await admin("POST", `${rollouts("hand-edited")}/${rollout.id}/pause`, { reason: "looking into a report" });
      expect(paused.body.rollout).toMatchObject({ state: "paused", reason: "looking into a report" });
      expect((await admin("POST", `${rollouts("hand-edited")}/${rollout.id}/pause`)).status).toBe(409);
      expect((await request(server.url, "POST", `${rollouts("hand-edited")}/${rollout.id}/resume`, { token: server.adminToken })).body.rollout.state).toBe("running");
      expect((await admin("PUT", `${env()}/features/hand-edited/targeting`, { rules: PRO_ONLY })).status).toBe(200);
      let current = rollout;
      for (let tries = 0; tries < 50 && current.state === "running"; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        current = (await admin("GET", `${rollouts("hand-edited")}/${rollout.id}`)).body.rollout;
      }
      expect(current.state).toBe("paused");
      expect(current.reason).toMatch(/edited by hand/);
      const resumed = await admin("POST", `${rollouts("hand-edited")}/${rollout.id}/resume`);
      expect(resumed.status).toBe(409);
      expect(resumed.body.error.message).toMatch(/edited by hand/);
      // The hand edit stays what is served.
      expect((await admin("GET", `${env()}/features/hand-edited`)).body.targeting.rules).toEqual(PRO_ONLY);
    });

    it("obeys the approval policy: an editor's start is a change request, started when applied; an owner may bypass with a reason", async () => {
      await feature("governed", EVERYONE);
      await feature("governed-now", EVERYONE);
      await createMember(server.url, server.adminToken, "owner@example.com", "owner");
      await createMember(server.url, server.adminToken, "editor@example.com", "editor");
      const owner: Session = await signIn(server.url, "owner@example.com");
      const editor: Session = await signIn(server.url, "editor@example.com");
      expect((await asSession(server.url, owner, "PUT", `${env()}/policy`, { requireApproval: true })).status).toBe(200);
      try {
        const proposed = await asSession(server.url, editor, "POST", rollouts("governed"), { steps: [10, 100], stepSeconds: 3600, comment: "first tenth" });
        expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
        expect(proposed.body.rollout).toBeNull();
        expect(proposed.body.changeRequest).toMatchObject({ state: "open", changes: [{ feature: "governed", rollout: { steps: [10, 100], stepSeconds: 3600 } }] });
        // Nothing started, nothing written, until the request is approved and applied.
        expect((await admin("GET", rollouts("governed"))).body.rollouts).toEqual([]);
        const versionBefore = (await admin("GET", `${env()}/features/governed`)).body.targeting.version;
        const requestPath = `${env()}/change-requests/${proposed.body.changeRequest.id}`;
        expect((await asSession(server.url, editor, "POST", `${requestPath}/apply`)).status).toBe(409);
        expect((await asSession(server.url, owner, "POST", `${requestPath}/reviews`, { decision: "approve" })).body.changeRequest.state).toBe("approved");
        const applied = await asSession(server.url, editor, "POST", `${requestPath}/apply`);
        expect(applied.status, JSON.stringify(applied.body)).toBe(200);
        const started = (await admin("GET", `${rollouts("governed")}/${proposed.body.rolloutId}`)).body.rollout;
        expect(started).toMatchObject({ state: "running", step: 0, percent: 10, createdBy: { kind: "member" } });
        const targeting = (await admin("GET", `${env()}/features/governed`)).body.targeting;
        expect(targeting.version).toBe(versionBefore + 1);
        expect(targeting.rules[0].filter.filters[1]).toMatchObject({ type: "rolloutPercentage", key: "governed", partialRolloutThreshold: 10_000 });
        const history = (await admin("GET", `${env()}/features/governed/history`)).body.versions;
        expect(history.at(-1)).toMatchObject({ rolloutId: proposed.body.rolloutId, changeRequestId: proposed.body.changeRequest.id });
        // A second proposal while it runs is refused at once.
        expect((await asSession(server.url, editor, "POST", rollouts("governed"), { stepSeconds: 1 })).status).toBe(409);

        const held = await asSession(server.url, editor, "POST", `${rollouts("governed-now")}?bypass=true&reason=urgent`, { stepSeconds: 1 });
        expect(held.status).toBe(409);
        expect(held.body.error.code).toBe("APPROVAL_REQUIRED");
        const bypassed = await asSession(server.url, owner, "POST", `${rollouts("governed-now")}?bypass=true&reason=${encodeURIComponent("incident follow-up")}`, { steps: [5, 100], stepSeconds: 3600 });
        expect(bypassed.status, JSON.stringify(bypassed.body)).toBe(200);
        const entry = (await admin("GET", `/admin/audit?entity=rollout&limit=100`)).body.entries.find((each: { action: string; details: { rolloutId?: string } }) => each.action === "rollout.started" && each.details.rolloutId === bypassed.body.rollout.id);
        expect(entry.details).toMatchObject({ bypass: true, reason: "incident follow-up" });
        // Pausing, like turning a feature off, never waits for approval.
        expect((await asSession(server.url, editor, "POST", `${rollouts("governed-now")}/${bypassed.body.rollout.id}/pause`)).status).toBe(200);
      } finally {
        await asSession(server.url, owner, "PUT", `${env()}/policy`, { requireApproval: false });
      }
    });
  });
});
