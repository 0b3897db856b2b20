import { describe, expect, it } from "vitest";
import { ServiceError } from "../errors/catalogue.js";
import { SignInThrottle } from "./sign-in-throttle.js";

function refusal(begin: () => unknown): ServiceError | undefined {
  try {
    begin();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  return undefined;
}

describe("sign-in throttle", () => {
  it("refuses an account past its failures within the window, with Retry-After until the oldest leaves it", () => {
    let now = 1_000_000;
    const throttle = new SignInThrottle({ maxFailuresPerAccount: 3, maxFailuresPerAddress: 100, windowMs: 60_000 }, () => now);
    for (let attempt = 0; attempt < 3; attempt++) {
      throttle.begin(`10.0.0.${attempt}`, "a@x.test");
      now += 1000;
    }
    const refused = refusal(() => throttle.begin("10.0.0.9", "a@x.test"));
    expect(refused?.code).toBe("RATE_LIMITED");
    expect(refused?.retryAfterSeconds).toBe(57);
    // Another account from the same addresses is not affected.
    expect(refusal(() => throttle.begin("10.0.0.9", "b@x.test"))).toBeUndefined();
    now += 57_001;
    expect(refusal(() => throttle.begin("10.0.0.9", "a@x.test"))).toBeUndefined();
  });

  it("refuses an address past its failures whatever accounts it tries", () => {
    const throttle = new SignInThrottle({ maxFailuresPerAccount: 100, maxFailuresPerAddress: 4, windowMs: 60_000 }, () => 5);
    for (let attempt = 0; attempt < 4; attempt++) throttle.begin("10.0.0.1", `user${attempt}@x.test`);
    expect(refusal(() => throttle.begin("10.0.0.1", "fresh@x.test"))?.code).toBe("RATE_LIMITED");
    expect(refusal(() => throttle.begin("10.0.0.2", "fresh@x.test"))).toBeUndefined();
  });

  it("counts attempts in flight, and forgives them and the account's failures once one succeeds", () => {
    const throttle = new SignInThrottle({ maxFailuresPerAccount: 2, maxFailuresPerAddress: 100, windowMs: 60_000 }, () => 5);
    throttle.begin("10.0.0.1", "a@x.test");
    const inFlight = throttle.begin("10.0.0.1", "a@x.test");
    // Two attempts still computing their hashes already fill the budget.
    expect(refusal(() => throttle.begin("10.0.0.1", "a@x.test"))?.code).toBe("RATE_LIMITED");
    throttle.succeeded(inFlight);
    expect(refusal(() => throttle.begin("10.0.0.1", "a@x.test"))).toBeUndefined();
  });
});
