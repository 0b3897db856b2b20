import { beforeAll, describe, expect, it } from "vitest";
import { useAppServer } from "../support/app-server.js";
import { request } from "../support/http.js";

// Repeated evaluations may be answered from memory; these check that no change made through the service is missed.
describe("evaluation answers stay fresh", () => {
  const app = useAppServer();
  const evaluate = (query: string) =>
    request(app.server.url, "GET", `/features/evaluated?${query}`, { token: app.keys.production.publishableKey }).then((reply) => reply.body.features.pro?.isEnabled);
  const setRules = (rules: unknown[]) =>
    request(app.server.url, "PUT", `/admin/environments/${app.keys.production.id}/features/pro/targeting`, { token: app.server.adminToken, body: { rules } });
  const track = (path: string, body: unknown) => request(app.server.url, "POST", path, { token: app.keys.production.secretKey, body });

  /**
   * Remote context reads what is projected from the tracking log, which follows the 200 of a tracking call (API.md
   * §4); an evaluation in an environment with a user or company call acknowledged and not yet projected waits for
   * that projection (src/tracking/attribute-writes.ts), so the very next request sees what was tracked.
   */
  const evaluatesAtOnce = async (query: string, expected: boolean) => expect(await evaluate(query), query).toBe(expected);
  let probe = 0;

  beforeAll(async () => {
    await request(app.server.url, "PUT", `/admin/apps/${app.keys.app.id}/features/pro`, { token: app.server.adminToken, body: {} });
    await setRules([{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }]);
  });

  it("sees a company attribute tracked after the same context was evaluated", async () => {
    const query = "context.company.id=fresh-co";
    expect(await evaluate(query)).toBe(false);
    expect(await evaluate(query)).toBe(false);
    expect((await track("/company", { companyId: "fresh-co", attributes: { plan: "pro" } })).status).toBe(200);
    await evaluatesAtOnce(query, true);
    expect((await track("/bulk", [{ type: "company", companyId: "fresh-co", attributes: { plan: "free" } }])).status).toBe(200);
    await evaluatesAtOnce(query, false);
  });

  it("sees a tracked attribute at once in a context it has not answered before (remembered attributes)", async () => {
    // Every query differs, so no remembered answer applies; the company's stored attributes are read each time.
    expect(await evaluate("context.company.id=attr-co&context.other.n=1")).toBe(false);
    expect(await evaluate("context.company.id=attr-co&context.other.n=2")).toBe(false);
    expect((await track("/company", { companyId: "attr-co", attributes: { plan: "pro" } })).status).toBe(200);
    await evaluatesAtOnce(`context.company.id=attr-co&context.other.n=${3 + probe++}`, true);
    expect((await track("/user", { userId: "nobody-yet" })).status).toBe(200);
    expect((await track("/company", { companyId: "attr-co", attributes: { plan: "free" } })).status).toBe(200);
    await evaluatesAtOnce(`context.company.id=attr-co&context.other.n=${1000 + probe++}`, false);
  });

  it("uses every company tracked just before, whichever call carried it, with nothing between the two requests", async () => {
    for (let round = 0; round < 10; round++) {
      const byCompany = `now-co-${round}`;
      expect((await track("/company", { companyId: byCompany, attributes: { plan: "pro" } })).status).toBe(200);
      await evaluatesAtOnce(`context.company.id=${byCompany}`, true);
      const byBulk = `bulk-co-${round}`;
      const bulk = [{ type: "event", event: "opened", userId: `u-${round}` }, { type: "company", companyId: byBulk, userId: `u-${round}`, attributes: { plan: "pro" } }];
      expect((await track("/bulk", bulk)).status).toBe(200);
      await evaluatesAtOnce(`context.company.id=${byBulk}`, true);
      const answer = await request(app.server.url, "GET", `/features/evaluated?context.company.id=${byBulk}`, { token: app.keys.production.publishableKey });
      expect(answer.body.remoteContextUsed).toBe(true);
    }
  });

  it("sees a targeting change at once", async () => {
    const query = "context.company.id=rules-co&context.company.plan=pro";
    expect(await evaluate(query)).toBe(true);
    await setRules([{ filter: { type: "constant", value: false } }]);
    expect(await evaluate(query)).toBe(false);
    await setRules([{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }]);
    expect(await evaluate(query)).toBe(true);
  });
});
