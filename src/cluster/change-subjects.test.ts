import { describe, expect, it } from "vitest";
import { ADMIN_ACTOR } from "../accounts/principal.js";
import type { ManagementChange } from "../management/changes.js";
import { changeSubject } from "./change-subjects.js";

const envelope = { id: "chg_1", at: "2026-01-01T00:00:00.000Z", actor: ADMIN_ACTOR, address: null };
const rules = (environmentId: string, featureKey: string) =>
  ({ ...envelope, type: "rules.put", environmentId, featureKey, kind: "targeting", list: [] }) as ManagementChange;

/** NATS subject tokens: no empty token, no wildcard, no whitespace, no dot inside a token. */
const VALID_SUBJECT = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

describe("configuration subjects", () => {
  it("give one feature's targeting in one environment one subject, and others another", () => {
    expect(changeSubject(rules("env_1", "huddle"))).toEqual(changeSubject(rules("env_1", "huddle")));
    expect(changeSubject(rules("env_1", "huddle")).subject).not.toBe(changeSubject(rules("env_1", "other")).subject);
    expect(changeSubject(rules("env_1", "huddle")).subject).not.toBe(changeSubject(rules("env_2", "huddle")).subject);
    expect(changeSubject(rules("env_1", "huddle")).concurrency).toBe(true);
  });

  it("stay valid NATS subjects whatever a feature key holds", () => {
    for (const key of ["a.b", "*", ">", "with space", "ключ", "x".repeat(200), "a\u0000b"]) {
      expect(changeSubject(rules("env_1", key)).subject).toMatch(VALID_SUBJECT);
    }
  });

  it("publish bookkeeping without an expectation", () => {
    const touch = { ...envelope, type: "credential.touch", credential: "token", digest: "d" } as ManagementChange;
    expect(changeSubject(touch)).toEqual({ subject: "bookkeeping", concurrency: false });
  });
});
