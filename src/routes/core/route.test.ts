import { describe, expect, it } from "vitest";
import type { ApiRequest, ApiResponse } from "../../http/types.js";
import { digestKey } from "../../tenancy/identifiers.js";
import type { KeyIndex } from "../../tenancy/key-index.js";
import { createApiCore } from "./core.js";
import { RateLimiter } from "./rate-limiter.js";
import { environmentOf, type RouteSpec } from "./route.js";
import { Router } from "./router.js";

const PUBLISHABLE_KEY = "pub_production_0123456789abcdefghijklmnopqrstuv";

/** A bare API core over one key and two routes that read the principal's environment. */
function coreWith(lines: string[]) {
  const keys = { resolve: (secret: string) => (secret === PUBLISHABLE_KEY ? { kind: "publishable", appId: "app", environmentId: "env", digest: "" } : undefined) } as unknown as KeyIndex;
  const services = {
    auth: { keys, adminTokenDigest: digestKey("adm_not_used_here_0123456789abcdefghijkl"), management: { isManagementCredential: () => false } },
    log: { info: () => {}, error: (message: string) => lines.push(message) },
    rateLimits: { perKey: new RateLimiter(0), perAddress: new RateLimiter(0) },
    isDraining: () => false,
  };
  const router = new Router<RouteSpec<typeof services>>();
  const answerEnvironment = ({ principal }: { principal: Parameters<typeof environmentOf>[0] }): ApiResponse => ({ status: 200, body: JSON.stringify(environmentOf(principal)) });
  router.add("GET", "/scoped", { access: "environment", bodyLimit: 0, cors: false, handle: answerEnvironment });
  // A route table mistake: a public route that reads an environment.
  router.add("GET", "/misconfigured", { access: "public", bodyLimit: 0, cors: false, handle: answerEnvironment });
  const core = createApiCore(services as never, router as never);
  return async (path: string, headers: Record<string, string> = {}) => {
    const request: ApiRequest = { method: "GET", path, query: "", headers, body: null, remoteAddress: () => "127.0.0.1" };
    return (await core.decide("GET", path).handle(request)) as ApiResponse;
  };
}

describe("environmentOf", () => {
  it("gives an environment-scoped route its key's app and environment", async () => {
    const call = coreWith([]);
    const answer = await call("/scoped", { authorization: `Bearer ${PUBLISHABLE_KEY}` });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body as string)).toEqual({ appId: "app", environmentId: "env" });
  });

  it("answers a route table mistake with a logged 500, not a 403 that would blame the caller's credential", async () => {
    const lines: string[] = [];
    const answer = await coreWith(lines)("/misconfigured");
    // API.md §2: 403 is for a credential of the wrong kind, which authentication answers before any handler runs;
    // a handler that finds no environment is a server fault.
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body as string).error.code).toBe("INTERNAL");
    expect(lines).toEqual(["request failed"]);
  });
});
