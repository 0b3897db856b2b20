import { describe, expect, it } from "vitest";
import { HitRateGate } from "./hit-rate-gate.js";

describe("HitRateGate", () => {
  it("closes after a window below break-even, for the bypass length, then samples again", () => {
    const gate = new HitRateGate(0.5, 10, 20);
    for (let index = 0; index < 9; index++) {
      expect(gate.open()).toBe(true);
      expect(gate.record(index < 4)).toBe(false);
    }
    expect(gate.open()).toBe(true);
    expect(gate.record(false)).toBe(true); // 4 hits of 10: closed
    let skipped = 0;
    while (!gate.open()) skipped++;
    expect(skipped).toBe(20);
    expect(gate.bypassing).toBe(false);
  });

  it("doubles the bypass after each failed window, and resets it after a passing one", () => {
    const gate = new HitRateGate(0.5, 10, 20, 80);
    const failWindow = () => {
      for (let index = 0; index < 10; index++) {
        expect(gate.open()).toBe(true);
        gate.record(false);
      }
    };
    const skips = () => {
      let skipped = 0;
      while (!gate.open()) skipped++;
      gate.record(false); // the lookup the gate let through starts the next window
      for (let index = 1; index < 10; index++) gate.record(false);
      return skipped;
    };
    failWindow();
    expect(skips()).toBe(20);
    expect(skips()).toBe(40);
    expect(skips()).toBe(80);
    expect(skips()).toBe(80); // capped
    let skipped = 0;
    while (!gate.open()) skipped++;
    for (let index = 0; index < 10; index++) gate.record(true); // a passing window
    failWindow();
    skipped = 0;
    while (!gate.open()) skipped++;
    expect(skipped).toBe(20);
  });

  it("stays open while the window hits at least break-even", () => {
    const gate = new HitRateGate(0.5, 10, 20);
    for (let index = 0; index < 100; index++) {
      expect(gate.open()).toBe(true);
      expect(gate.record(index % 2 === 0)).toBe(false);
    }
  });
});
