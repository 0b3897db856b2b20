import { describe, expect, it } from "vitest";
import type { AppRecord } from "../tenancy/tenancy-records.js";
import { residencyViolation } from "./residency.js";

const app = (id: string, region?: string): AppRecord => ({ id, name: id, trackingKeyHint: "", defaultEnvironmentId: "", environmentIds: [], createdAt: "", ...(region ? { region } : {}) });

describe("the residency start check", () => {
  it("lets a region's node hold unpinned apps only when it serves them, and never another region's", () => {
    const apps = [app("app_eu", "eu"), app("app_any")];
    expect(residencyViolation(apps, "eu", true)).toBeUndefined();
    expect(residencyViolation(apps, "eu")).toContain("app app_any, which is not pinned to a region, and this node is in region eu (SWITCHYARD_REGION) and does not serve unpinned apps (SWITCHYARD_REGION_SERVES_UNPINNED)");
    expect(residencyViolation([...apps, app("app_us", "us")], "eu", true)).toContain("app app_us, which is pinned to region us, and this node is in region eu (SWITCHYARD_REGION);");
    expect(residencyViolation(apps, undefined)).toContain("app app_eu, which is pinned to region eu, and this node has no SWITCHYARD_REGION");
  });
});
