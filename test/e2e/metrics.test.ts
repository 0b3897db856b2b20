import { describe, expect, it } from "vitest";
import { useAppServer } from "../support/app-server.js";
import { request } from "../support/http.js";
import { NATIVE_MODE } from "../support/server.js";

/** Prometheus text format: `name{labels} value` lines, `# HELP` / `# TYPE` comments. */
function samples(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    values.set(match[1]!, Number(match[2]));
  }
  return values;
}

describe("GET /metrics", () => {
  const fixture = useAppServer();

  it("answers Prometheus text with per-route counts and latencies, evaluation and tracking counts, queue and pool", async () => {
    const { server, keys } = fixture;
    const publishable = keys.production.publishableKey;
    for (let index = 0; index < 3; index++) {
      expect((await request(server.url, "GET", `/features/evaluated?publishableKey=${publishable}&context.user.id=u${index}`)).status).toBe(200);
    }
    expect((await request(server.url, "POST", "/event", { token: publishable, body: { event: "clicked", userId: "u1" } })).status).toBe(200);
    expect((await request(server.url, "POST", "/event", { token: publishable, body: { userId: "u1" } })).status).toBe(400);

    const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.adminToken}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toContain("# TYPE switchyard_http_request_duration_seconds histogram");
    const values = samples(text);
    expect(values.get('switchyard_http_requests_total{method="GET",route="/features/evaluated",status="2xx"}')).toBe(3);
    expect(values.get('switchyard_http_requests_total{method="POST",route="/event",status="2xx"}')).toBe(1);
    expect(values.get('switchyard_http_requests_total{method="POST",route="/event",status="4xx"}')).toBe(1);
    expect(values.get('switchyard_http_request_duration_seconds_count{method="GET",route="/features/evaluated"}')).toBe(3);
    expect(values.get('switchyard_http_request_duration_seconds_bucket{method="GET",route="/features/evaluated",le="+Inf"}')).toBe(3);
    expect(values.get('switchyard_evaluation_requests_total{route="/features/evaluated"}')).toBe(3);
    expect(values.get("switchyard_tracking_requests_total")).toBeGreaterThanOrEqual(1);
    expect(values.get("switchyard_tracking_batches_total")).toBeGreaterThanOrEqual(1);
    expect(values.get("switchyard_queue_depth")).toBe(0);
    const utilization = values.get("switchyard_pool_utilization")!;
    expect(utilization).toBeLessThanOrEqual(1);
    // The pool's workers count the time they ran the evaluations above (inline, as the native-free twin runs them: 0).
    const pooled = NATIVE_MODE === "1" && (process.env.SWITCHYARD_WORKERS ?? "1") !== "0";
    if (pooled) expect(utilization).toBeGreaterThan(0);
    else expect(utilization).toBe(0);
    expect(values.has("switchyard_process_cpu_seconds_total")).toBe(true);
    // Concrete paths never become labels: tracking keys and ids stay out of the text.
    expect(text).not.toContain(publishable);
  });

  it("is protected like the management API", async () => {
    const { server, keys } = fixture;
    expect((await request(server.url, "GET", "/metrics")).status).toBe(401);
    expect((await request(server.url, "GET", "/metrics", { token: keys.production.secretKey })).status).toBe(403);
  });
});
