import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERRORS, ServiceError, isErrorData, type ErrorCode } from "./catalogue.js";

const DOCUMENTED = readFileSync(new URL("../../docs/ERRORS.md", import.meta.url), "utf8");
/** The statuses the contract documents (API.md §2; 409 in §8). */
const CONTRACT_STATUSES = new Set([400, 401, 403, 404, 409, 413, 414, 429, 500, 502, 503]);

describe("error catalogue", () => {
  const codes = Object.keys(ERRORS) as ErrorCode[];

  it("documents every code with its status in docs/ERRORS.md, and nothing else", () => {
    for (const code of codes) expect(DOCUMENTED, code).toContain(`| \`${code}\` | ${ERRORS[code].status} |`);
    const documentedCodes = [...DOCUMENTED.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]);
    expect(documentedCodes.sort()).toEqual([...codes].sort());
  });

  it("maps every code to a status the contract knows, and to a message", () => {
    for (const code of codes) {
      expect(CONTRACT_STATUSES.has(ERRORS[code].status), code).toBe(true);
      expect(ERRORS[code].message.length).toBeGreaterThan(0);
    }
  });

  it("carries errors across threads as plain data, matched by code", () => {
    const error = new ServiceError("INVALID_BODY", "bad", [{ path: "events.3.userId", message: "must not be empty" }], 2);
    const data = structuredClone(error.toData());
    expect(isErrorData(data)).toBe(true);
    const back = ServiceError.fromData(data);
    expect(back).toMatchObject({ code: "INVALID_BODY", message: "bad", status: 400, retryAfterSeconds: 2 });
    expect(back.validationErrors).toEqual([{ path: "events.3.userId", message: "must not be empty" }]);
    expect(isErrorData({ code: "NOT_A_CODE" })).toBe(false);
  });
});
