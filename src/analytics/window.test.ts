import { describe, expect, it } from "vitest";
import { ServiceError } from "../errors/catalogue.js";
import { featureEventCompany, isExposure } from "../tracking/attribution.js";
import { adoptionState } from "./states.js";
import { MAX_WINDOW_DAYS, resolveWindow, windowOfDays } from "./window.js";

const iso = (ms: number) => new Date(ms).toISOString();
const NOW = Date.parse("2024-05-10T15:30:00Z");

function queryError(run: () => unknown): ServiceError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    return error as ServiceError;
  }
  throw new Error("expected a ServiceError");
}

describe("resolveWindow", () => {
  it("defaults to the 30 UTC days up to and including today", () => {
    const window = resolveWindow(undefined, undefined, NOW);
    expect([iso(window.from), iso(window.to)]).toEqual(["2024-04-11T00:00:00.000Z", "2024-05-11T00:00:00.000Z"]);
    expect(iso(window.lastQuarterFrom)).toBe("2024-05-03T12:00:00.000Z");
  });

  it("widens given instants to whole days and accepts dates", () => {
    const window = resolveWindow("2024-03-01T10:00:00+02:00", "2024-03-05T00:00:01Z", NOW);
    expect([iso(window.from), iso(window.to)]).toEqual(["2024-03-01T00:00:00.000Z", "2024-03-06T00:00:00.000Z"]);
    expect(resolveWindow("2024-03-01", "2024-03-31", NOW).toDay - resolveWindow("2024-03-01", "2024-03-31", NOW).fromDay).toBe(30);
    expect(iso(resolveWindow("2024-05-01", undefined, NOW).to)).toBe("2024-05-11T00:00:00.000Z");
    expect(iso(resolveWindow(undefined, "2024-02-01", NOW).from)).toBe("2024-01-02T00:00:00.000Z");
  });

  it("refuses bad dates, from ≥ to and overlong windows", () => {
    expect(queryError(() => resolveWindow("yesterday", undefined, NOW)).validationErrors).toEqual([{ path: "from", message: expect.any(String) }]);
    expect(queryError(() => resolveWindow("2024-02-30", "2024-03-01", NOW)).code).toBe("INVALID_QUERY");
    expect(queryError(() => resolveWindow("2024-03-02", "2024-03-01", NOW)).code).toBe("INVALID_QUERY");
    expect(queryError(() => resolveWindow("2024-03-01T12:00:00Z", "2024-03-01T12:00:00Z", NOW)).code).toBe("INVALID_QUERY");
    expect(queryError(() => resolveWindow("2000-01-01", "2024-01-01", NOW)).message).toContain(String(MAX_WINDOW_DAYS));
  });
});

describe("adoptionState", () => {
  const window = windowOfDays(100, 108); // last quarter from day 106
  const at = (day: number, hours = 0) => day * 86_400_000 + hours * 3_600_000;
  it("classifies by distinct days and the last quarter", () => {
    expect(adoptionState({ usageDays: 0, lastUsedAt: null }, 2, window)).toBe("none");
    expect(adoptionState({ usageDays: 1, lastUsedAt: at(107) }, 2, window)).toBe("tried");
    expect(adoptionState({ usageDays: 2, lastUsedAt: at(106) }, 2, window)).toBe("retained");
    expect(adoptionState({ usageDays: 2, lastUsedAt: at(106) - 1 }, 2, window)).toBe("churned");
    expect(adoptionState({ usageDays: 1, lastUsedAt: at(101) }, 1, window)).toBe("churned");
  });
});

describe("featureEventCompany", () => {
  const latest = (userId: string) => (userId === "u1" ? "acme" : null);
  it("takes company.id nested or flattened, else the user's latest company", () => {
    expect(featureEventCompany({ company: { id: "globex" }, user: { id: "u1" } }, latest)).toBe("globex");
    expect(featureEventCompany({ "company.id": 7 }, latest)).toBe("7");
    expect(featureEventCompany({ user: { id: "u1" } }, latest)).toBe("acme");
    expect(featureEventCompany({ "user.id": "u1", company: { id: "" } }, latest)).toBe("acme");
    expect(featureEventCompany({ user: { id: "u2" } }, latest)).toBeNull();
    expect(featureEventCompany(null, latest)).toBeNull();
  });

  it("counts true evaluate and check results as exposure", () => {
    expect(isExposure("evaluate", true)).toBe(true);
    expect(isExposure("check", true)).toBe(true);
    expect(isExposure("check", false)).toBe(false);
    expect(isExposure("evaluate-config", { key: "x", payload: null })).toBe(false);
  });
});
