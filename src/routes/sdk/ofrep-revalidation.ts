import { BoundedMap } from "../../storage/bounded-map.js";

interface Validator {
  etag: string;
  flagStateVersion: number;
  attributeEpoch: number;
  expiresAt: number;
}

/**
 * The ETags of recent OFREP bulk answers, by (environment, caller's publishable key, digest of the request body), so
 * that an `If-None-Match` is answered 304 without evaluating again (API.md §14). An entry stands for its answer only
 * while nothing it was computed from can have changed: the environment's flagStateVersion (rules, config, opt-ins)
 * and attribute epoch (stored users and companies, see evaluation-cache.ts) are the ones it was computed under, and
 * for at most `ttlMs` — the bound `/features/evaluated`'s cache already accepts for changes this process is not told
 * of (another process on the data dir, a date operator crossing a day). Past it the answer is computed again, and a
 * 304 is still sent when its ETag is unchanged.
 */
export class OfrepRevalidation {
  private readonly validators: BoundedMap<string, Validator>;

  constructor(
    maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.validators = new BoundedMap(maxEntries);
  }

  /** The ETag the answer for `key` still has, or undefined when it must be computed. */
  current(key: string, flagStateVersion: number, attributeEpoch: number): string | undefined {
    const validator = this.validators.get(key);
    if (validator === undefined) return undefined;
    if (validator.flagStateVersion !== flagStateVersion || validator.attributeEpoch !== attributeEpoch || validator.expiresAt <= this.now()) return undefined;
    return validator.etag;
  }

  /** Remembers an answer's ETag, computed under the given version and epoch (both read before the work started). */
  remember(key: string, etag: string, flagStateVersion: number, attributeEpoch: number): void {
    if (this.ttlMs <= 0) return;
    this.validators.set(key, { etag, flagStateVersion, attributeEpoch, expiresAt: this.now() + this.ttlMs });
  }
}

/** Whether an `If-None-Match` header names `etag` (a list, weak validators and `*` included, RFC 9110 §13.1.2). */
export function ifNoneMatchHolds(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  for (const part of header.split(",")) {
    const tag = part.trim();
    if (tag === "*" || tag === etag || (tag.startsWith("W/") && tag.slice(2) === etag)) return true;
  }
  return false;
}
