import { describe, expect, it } from "vitest";
import { EvaluationCache } from "./evaluation-cache.js";

const answer = (body: string) => ({ status: 200, body, headers: {} });

/** The cache keeps an answer from the second computation of its query on. */
function putTwice(cache: EvaluationCache, environmentId: string, query: string, version: number, epoch: number, computed: ReturnType<typeof answer>) {
  cache.put(environmentId, query, version, epoch, computed);
  cache.put(environmentId, query, version, epoch, computed);
}

describe("EvaluationCache", () => {
  let now = 1_000;
  const cache = () => new EvaluationCache({ maxEntries: 2, maxAnswerBytes: 100, ttlMs: 1_000, now: () => now });

  it("keeps a one-off query's answer out", () => {
    const evaluations = cache();
    evaluations.put("env", "once", 1, 0, answer("a"));
    expect(evaluations.get("env", "once", 1)).toBeUndefined();
    evaluations.put("env", "once", 1, 0, answer("a"));
    expect(evaluations.get("env", "once", 1)?.body.toString()).toBe("a");
  });

  it("answers only under the flagStateVersion and attribute epoch it was computed under", () => {
    const evaluations = cache();
    putTwice(evaluations, "env", "q", 3, evaluations.attributeEpoch("env"), answer("a"));
    expect(evaluations.get("env", "q", 3)?.body.toString()).toBe("a");
    expect(evaluations.get("env", "q", 4)).toBeUndefined();
    putTwice(evaluations, "env", "q", 4, evaluations.attributeEpoch("env"), answer("b"));
    evaluations.attributesChanged("env");
    expect(evaluations.get("env", "q", 4)).toBeUndefined();
    expect(evaluations.get("other", "q", 4)).toBeUndefined();
  });

  it("keeps an answer computed under an older epoch out", () => {
    const evaluations = cache();
    const epochAtStart = evaluations.attributeEpoch("env");
    evaluations.attributesChanged("env");
    putTwice(evaluations, "env", "q", 1, epochAtStart, answer("stale"));
    expect(evaluations.get("env", "q", 1)).toBeUndefined();
  });

  it("expires entries, evicts the oldest past the bound, and skips errors and large answers", () => {
    const evaluations = cache();
    putTwice(evaluations, "env", "a", 1, 0, answer("a"));
    putTwice(evaluations, "env", "b", 1, 0, answer("b"));
    putTwice(evaluations, "env", "c", 1, 0, answer("c"));
    expect(evaluations.get("env", "a", 1)).toBeUndefined();
    expect(evaluations.get("env", "c", 1)?.body.toString()).toBe("c");
    putTwice(evaluations, "env", "big", 1, 0, answer("x".repeat(101)));
    putTwice(evaluations, "env", "bad", 1, 0, { status: 400, body: "{}", headers: {} });
    expect(evaluations.get("env", "big", 1)).toBeUndefined();
    expect(evaluations.get("env", "bad", 1)).toBeUndefined();
    now += 1_000;
    expect(evaluations.get("env", "c", 1)).toBeUndefined();
  });

  it("keeps the next answer of a query whose entry went stale at once", () => {
    const evaluations = cache();
    putTwice(evaluations, "env", "q", 1, 0, answer("old"));
    expect(evaluations.get("env", "q", 2)).toBeUndefined();
    evaluations.put("env", "q", 2, 0, answer("new"));
    expect(evaluations.get("env", "q", 2)?.body.toString()).toBe("new");
    now += 1_000;
    expect(evaluations.get("env", "q", 2)).toBeUndefined();
    evaluations.put("env", "q", 2, 0, answer("renewed"));
    expect(evaluations.get("env", "q", 2)?.body.toString()).toBe("renewed");
  });

  /** The service's own order of calls for one request: consult, look up, compute on a miss and offer the answer. */
  function serve(evaluations: EvaluationCache, query: string): boolean {
    if (!evaluations.consult()) return false;
    if (evaluations.get("env", query, 1) !== undefined) return true;
    evaluations.put("env", query, 1, 0, answer(query));
    return false;
  }

  it("closes on one-off queries, and answers from memory again once 1,000 users come round in turn", () => {
    const evaluations = new EvaluationCache({ maxEntries: 10_000, maxAnswerBytes: 100, ttlMs: 60_000, now: () => now });
    let hits = 0;
    for (let index = 0; index < 50_000; index++) if (serve(evaluations, `one-off-${index}`)) hits++;
    expect(hits).toBe(0);
    // Each user's query comes back every 1,000 lookups: the gate must notice repeats, not only hits of a cache it
    // emptied when it closed (an entry needs two computations before its first hit).
    let lastRound = 0;
    for (let round = 0; round < 200; round++) {
      lastRound = 0;
      for (let user = 0; user < 1_000; user++) if (serve(evaluations, `user-${user}`)) lastRound++;
    }
    expect(lastRound).toBe(1_000);
  });
});
