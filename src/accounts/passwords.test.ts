import { describe, expect, it } from "vitest";
import { PasswordHasher } from "./passwords.js";

describe("password hashing", () => {
  const hasher = new PasswordHasher(14);

  it("stores scrypt parameters and a per-hash salt with the hash, and verifies only the right password", async () => {
    const first = await hasher.hash("correct horse battery");
    const second = await hasher.hash("correct horse battery");
    expect(first).toMatchObject({ algorithm: "scrypt", cost: 14, blockSize: 8, parallelization: 1 });
    expect(first.salt).not.toBe(second.salt);
    expect(first.hash).not.toBe(second.hash);
    expect(JSON.stringify(first)).not.toContain("correct horse");
    expect(await hasher.verify("correct horse battery", first)).toBe(true);
    expect(await hasher.verify("correct horse batterY", first)).toBe(false);
  });

  it("checks a hash made with other parameters by its own parameters", async () => {
    const older = await new PasswordHasher(15).hash("a long enough password");
    expect(await hasher.verify("a long enough password", older)).toBe(true);
  });

  it("answers false for an unknown account, after doing the same work", async () => {
    expect(await hasher.verify("anything at all", undefined)).toBe(false);
  });

  it("refuses stored parameters that would cost unbounded memory", async () => {
    const stored = await hasher.hash("a long enough password");
    expect(await hasher.verify("a long enough password", { ...stored, cost: 30 })).toBe(false);
  });
});
