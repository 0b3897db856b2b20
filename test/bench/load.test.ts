/** The load generator's pieces that need no server: the wrk script and the reading of wrk's output. */
import { describe, expect, it } from "vitest";
import { parseWrkOutput, parseWrkText, wrkScript } from "../../bench/support/load.js";
import { median, spread } from "../../bench/support/stats.js";

const WRK_TEXT = `Running 1s test @ http://127.0.0.1:40123
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.26ms    3.22ms  33.71ms   95.40%
    Req/Sec     2.03k   730.44     3.27k    60.00%
  Latency Distribution
     50%  314.00us
     75%  600.00us
     90%    2.92ms
     99%   20.89ms
  2029 requests in 1.00s, 6.20MB read
  Socket errors: connect 0, read 1, write 0, timeout 2
  Non-2xx or 3xx responses: 4
Requests/sec:   2025.21
Transfer/sec:      6.19MB
`;

describe("wrk output", () => {
  it("reads the text report", () => {
    const result = parseWrkText(WRK_TEXT);
    expect(result.rps).toBeCloseTo(2025.21);
    expect(result.requests).toBe(2029);
    expect(result.durationSeconds).toBeCloseTo(1);
    expect(result.latencyMs.p50).toBeCloseTo(0.314);
    expect(result.latencyMs.p90).toBeCloseTo(2.92);
    expect(result.latencyMs.p99).toBeCloseTo(20.89);
    expect(result.latencyMs.max).toBeCloseTo(33.71);
    expect(result.errors).toBe(7);
  });

  it("prefers the script's exact result line", () => {
    const line = 'BENCH_JSON {"requests":2000,"duration_us":2000000,"errors":1,"status_errors":2,"p50":500.0,"p90":900.0,"p99":4000.0,"max":9000.0,"mean":700.0}';
    const result = parseWrkOutput(`${WRK_TEXT}${line}\n`);
    expect(result.rps).toBe(1000);
    expect(result.latencyMs).toEqual({ p50: 0.5, p90: 0.9, p99: 4, max: 9, mean: 0.7 });
    expect(result.errors).toBe(3);
    expect(result.acknowledged).toBe(1998);
    expect(result.refused).toBe(0);
  });

  it("reads the refusals the script counted", () => {
    const line = 'BENCH_JSON {"requests":50,"duration_us":1000000,"errors":0,"status_errors":5,"refused":4,"p50":500.0,"p90":900.0,"p99":4000.0,"max":9000.0,"mean":700.0}';
    const result = parseWrkOutput(line);
    expect(result).toMatchObject({ requests: 50, errors: 5, acknowledged: 45, refused: 4 });
  });
});

describe("wrk script", () => {
  it("embeds requests as Lua long strings that cannot clash with their content", () => {
    const script = wrkScript({
      baseUrl: "http://127.0.0.1:1",
      connections: 1,
      durationSeconds: 1,
      requests: [{ method: "POST", path: "/bulk", headers: { "Content-Type": "application/json" }, body: '[{"a":"]=]"}]' }],
    });
    expect(script).toContain('[==[[{"a":"]=]"}]]==]');
    // "[[" would open a long string inside a table constructor.
    expect(script).toContain("{[ [=[Content-Type]=] ]=[=[application/json]=]}");
    expect(script).not.toContain("delay =");
  });

  it("reads bodies (to count PROJECTION_BEHIND refusals) only when asked", () => {
    const base = { baseUrl: "http://127.0.0.1:1", connections: 1, durationSeconds: 1, requests: [{ method: "POST" as const, path: "/bulk", headers: {} }] };
    expect(wrkScript(base)).not.toContain("response = function");
    const counting = wrkScript({ ...base, countRefusals: true });
    expect(counting).toContain("response = function(status, headers, body)");
    expect(counting).toContain('string.find(body, "PROJECTION_BEHIND", 1, true)');
    // Each thread's count is read back in done() through the thread objects setup() kept.
    expect(counting).toContain('thread:get("refused")');
  });

  it("paces requests only when a rate is given", () => {
    const script = wrkScript({ baseUrl: "http://127.0.0.1:1", connections: 1, durationSeconds: 1, rate: 500, requests: [{ method: "GET", path: "/", headers: {} }] });
    expect(script).toContain("local interval = 1000 / 500");
    expect(script).toContain("delay = function()");
  });
});

describe("statistics", () => {
  it("takes medians and spreads", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(spread([90, 100, 110])).toEqual({ min: 90, max: 110, percent: 20 });
    expect(spread([5]).percent).toBe(0);
  });
});
