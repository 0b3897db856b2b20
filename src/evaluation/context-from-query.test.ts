import { describe, expect, it } from "vitest";

import { contextFromQuery, QUERY_LIMITS } from "./context-from-query.js";

function contextOf(query: string) {
  const parsed = contextFromQuery(query);
  if (!parsed.ok) throw new Error(`unexpected issues: ${JSON.stringify(parsed.issues)}`);
  return parsed;
}

describe("contextFromQuery", () => {
  it("rebuilds nested objects from dotted paths and ignores other parameters", () => {
    const parsed = contextOf(
      "context.user.id=42&context.user.name=Ada&context.company.id=acme&publishableKey=pk&bucket-sdk-version=1&waitForVersion=3",
    );
    expect(parsed).toEqual({ ok: true, context: { user: { id: "42", name: "Ada" }, company: { id: "acme" } } });
    expect("key" in parsed).toBe(false);
  });

  it("decodes like URLSearchParams, + as space, and accepts a leading ?", () => {
    expect(contextOf("?context.user.name=Ada+Lovelace&context.company.name=%C3%BCn%C3%AF%20AS").context).toEqual({
      user: { name: "Ada Lovelace" },
      company: { name: "ünï AS" },
    });
    expect(contextOf("context.a%2Eb=1").context).toEqual({ a: { b: "1" } });
  });

  it("treats context.otherContext.* as context.other.*", () => {
    expect(contextOf("context.otherContext.region=eu&context.other.tier=2").context).toEqual({
      other: { region: "eu", tier: "2" },
    });
  });

  it("returns the key parameter, and refuses an empty or overlong one", () => {
    expect(contextOf("key=huddle&context.user.id=1").key).toBe("huddle");
    expect(contextFromQuery("key=")).toEqual({ ok: false, issues: [{ path: "key", message: "key must be 1 to 255 characters" }] });
    expect(contextFromQuery(`key=${"k".repeat(256)}`).ok).toBe(false);
    expect(contextOf(`key=${"k".repeat(255)}`).key).toHaveLength(255);
  });

  it("lets an object win over a plain value at the same path, in either order", () => {
    expect(contextOf("context.user=1&context.user.id=2").context).toEqual({ user: { id: "2" } });
    expect(contextOf("context.user.id=2&context.user=1").context).toEqual({ user: { id: "2" } });
    expect(contextOf("context.user.id=1&context.user.id=2").context).toEqual({ user: { id: "2" } });
  });

  it("refuses prototype-reaching segments, however they are spelled in the URL", () => {
    for (const query of [
      "context.__proto__.polluted=1",
      "context.user.constructor.prototype.polluted=1",
      "context.%5F%5Fproto%5F%5F.polluted=1",
      "context.user.prototype=1",
    ]) {
      const parsed = contextFromQuery(query);
      expect(parsed.ok).toBe(false);
      expect(!parsed.ok && parsed.issues[0]?.message).toMatch(/^The path segment "(__proto__|constructor|prototype)" is not allowed$/);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("keeps names of other Object.prototype members as ordinary own fields", () => {
    const { context } = contextOf("context.toString=x&context.user.hasOwnProperty.deep=y");
    expect(Object.keys(context)).toEqual(["toString", "user"]);
    expect(context.toString).toBe("x");
    expect(context.user).toEqual({ hasOwnProperty: { deep: "y" } });
  });

  it(`refuses more than ${QUERY_LIMITS.maxContextParams} context parameters`, () => {
    const params = (count: number) => Array.from({ length: count }, (_, index) => `context.f${index}=1`).join("&");
    expect(contextOf(params(256)).context).toHaveProperty("f255", "1");
    expect(contextFromQuery(params(257))).toEqual({
      ok: false,
      issues: [{ path: "context", message: "At most 256 context parameters are allowed" }],
    });
  });

  it("refuses overlong names and values, deep paths, and an overlong query", () => {
    const longName = `context.${"n".repeat(300)}`;
    expect(contextFromQuery(`${longName}=1`)).toEqual({
      ok: false,
      issues: [{ path: longName.slice(0, 256), message: "A parameter name must be at most 256 characters" }],
    });
    expect(contextFromQuery(`context.v=${"x".repeat(4097)}`)).toEqual({
      ok: false,
      issues: [{ path: "context.v", message: "A context value must be at most 4096 characters" }],
    });
    expect(contextOf(`context.v=${"x".repeat(4096)}`).context.v).toHaveLength(4096);
    const deep = `context.${Array.from({ length: 17 }, () => "a").join(".")}`;
    expect(contextFromQuery(`${deep}=1`)).toEqual({
      ok: false,
      issues: [{ path: deep, message: "A context path must have at most 16 segments" }],
    });
    expect(contextOf(`context.${Array.from({ length: 16 }, () => "a").join(".")}=1`).ok).toBe(true);
    expect(contextFromQuery(`x=${"y".repeat(32 * 1024)}`)).toEqual({
      ok: false,
      issues: [{ path: "", message: "The query string must be at most 32768 characters" }],
    });
  });

  it("reports every bad parameter at once", () => {
    const parsed = contextFromQuery("context.__proto__.a=1&context.ok=1&context.constructor=2&key=");
    expect(!parsed.ok && parsed.issues.map((issue) => issue.path)).toEqual([
      "context.__proto__.a",
      "context.constructor",
      "key",
    ]);
  });

  it("gives an empty context for an empty query", () => {
    expect(contextFromQuery("")).toEqual({ ok: true, context: {} });
  });
});
