/**
 * When a failed delivery is tried again: exponential backoff from a base (5 s in production), ×4 per attempt, capped
 * at 5760 bases (8 h). With the 5 s base the first two retries come 5 s and 20 s after their failures (within 60 s)
 * and the eleventh attempt comes about 31.6 h after the first, so retries go on for at least 24 h; after it the
 * delivery is failed. The base is configurable so that tests see the whole schedule in moments.
 */
export const MAX_ATTEMPTS = 11;
const FACTOR = 4;
const CAP_BASES = 5760;

/** The wait after the `attempts`-th failed attempt of a round (1-based). */
export function retryDelayMs(attempts: number, baseMs: number): number {
  return baseMs * Math.min(FACTOR ** (attempts - 1), CAP_BASES);
}

/** What follows an attempt: delivered on a 2xx, failed after the last attempt, else a retry. */
export function outcomeOf(status: number | null, attemptsThisRound: number): "delivered" | "retry" | "failed" {
  if (status !== null && status >= 200 && status < 300) return "delivered";
  return attemptsThisRound >= MAX_ATTEMPTS ? "failed" : "retry";
}
