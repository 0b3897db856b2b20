import { ServiceError } from "../errors/catalogue.js";
import { BoundedMap } from "../storage/bounded-map.js";

export interface ThrottleLimits {
  maxFailuresPerAccount: number;
  maxFailuresPerAddress: number;
  windowMs: number;
}

/** Failure counts kept at most for about this many accounts and addresses each; the least recent are forgotten first. */
const MAX_TRACKED = 100_000;

/** A sign-in attempt in progress: counted as a failure until it is known to have succeeded. */
export interface Attempt {
  account: string;
  address: string;
  at: number;
}

/**
 * Slows password guessing: failed sign-ins (and password-reset attempts) are counted per account and per client
 * address in a sliding window; past either budget, attempts get 429 until the oldest failure leaves the window.
 * An attempt counts as failed from the moment it starts, so guesses sent at once cannot outrun the count while
 * their hashes are computed. In memory, per process: a restart forgets, and each cluster node counts on its own.
 */
export class SignInThrottle {
  private readonly byAccount = new BoundedMap<string, number[]>(MAX_TRACKED);
  private readonly byAddress = new BoundedMap<string, number[]>(MAX_TRACKED);

  constructor(
    private readonly limits: ThrottleLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts an attempt, or throws 429 `RATE_LIMITED` (with Retry-After) when the account or address is over budget. */
  begin(address: string, account: string): Attempt {
    const at = this.now();
    const accountFailures = this.recent(this.byAccount, account, at);
    const addressFailures = this.recent(this.byAddress, address, at);
    const waitAccount = accountFailures.length >= this.limits.maxFailuresPerAccount ? accountFailures[0]! + this.limits.windowMs - at : 0;
    const waitAddress = addressFailures.length >= this.limits.maxFailuresPerAddress ? addressFailures[0]! + this.limits.windowMs - at : 0;
    const wait = Math.max(waitAccount, waitAddress);
    if (wait > 0) throw new ServiceError("RATE_LIMITED", "Too many failed sign-ins; retry later.", undefined, Math.max(1, Math.ceil(wait / 1000)));
    this.byAccount.set(account, [...accountFailures, at]);
    this.byAddress.set(address, [...addressFailures, at]);
    return { account, address, at };
  }

  /** The attempt succeeded: it no longer counts, and the account's earlier failures are forgiven. */
  succeeded(attempt: Attempt): void {
    this.byAccount.delete(attempt.account);
    const addressFailures = this.byAddress.get(attempt.address);
    const index = addressFailures?.indexOf(attempt.at) ?? -1;
    if (addressFailures && index !== -1) addressFailures.splice(index, 1);
  }

  private recent(map: BoundedMap<string, number[]>, name: string, at: number): number[] {
    const failures = map.get(name);
    if (!failures) return [];
    const cutoff = at - this.limits.windowMs;
    let first = 0;
    while (first < failures.length && failures[first]! <= cutoff) first++;
    return first === 0 ? failures : failures.slice(first);
  }
}
