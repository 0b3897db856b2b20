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
   * §4): it may lag by at most the evaluation cache bound (SWITCHYARD_EVALUATION_CACHE_MS, 1 s here). Asks until
   * the answer comes, and fails if that takes longer than the bound.
   */
  const evaluatesWithinBound = async (query: () => string, expected: boolean) => {
    const deadline = Date.now() + 1_000;
    let answer = await evaluate(query());
    while (answer !== expected && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      answer = await evaluate(query());
    }
    expect(answer).toBe(expected);
  };
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
    await evaluatesWithinBound(() => query, true);
    expect((await track("/bulk", [{ type: "company", companyId: "fresh-co", attributes: { plan: "free" } }])).status).toBe(200);
    await evaluatesWithinBound(() => query, false);
  });

  it("sees a tracked attribute within the bound in a context it has not answered before (remembered attributes)", async () => {
    // Every query differs, so no remembered answer applies; the company's stored attributes are read each time.
    expect(await evaluate("context.company.id=attr-co&context.other.n=1")).toBe(false);
    expect(await evaluate("context.company.id=attr-co&context.other.n=2")).toBe(false);
    expect((await track("/company", { companyId: "attr-co", attributes: { plan: "pro" } })).status).toBe(200);
    await evaluatesWithinBound(() => `context.company.id=attr-co&context.other.n=${3 + probe++}`, true);
    expect((await track("/user", { userId: "nobody-yet" })).status).toBe(200);
    expect((await track("/company", { companyId: "attr-co", attributes: { plan: "free" } })).status).toBe(200);
    await evaluatesWithinBound(() => `context.company.id=attr-co&context.other.n=${1000 + probe++}`, false);
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
