/**
 * The body parser every JSON route shares (src/schemas/json-body.ts): nesting is measured on the raw text and refused
 * before JSON.parse (and so before valibot, msgpackr, structuredClone or JSON.stringify, which recurse), and a
 * `__proto__` key anywhere is refused, because msgpack would store it as `__proto_` (what was acknowledged would
 * read back differently).
 */
import fc from "fast-check";
import { Packr } from "msgpackr";
import { describe, expect, it } from "vitest";
import { exceedsJsonDepth, findPrototypeKey, MAX_JSON_DEPTH, parseJsonBody, SDK_BODY } from "../../src/schemas/json-body.js";
import { ServiceError } from "../../src/errors/catalogue.js";

const JSON_TYPE = "application/json";
const parse = (text: string | Buffer) => parseJsonBody(Buffer.isBuffer(text) ? text : Buffer.from(text), JSON_TYPE);

function refusal(run: () => unknown): ServiceError {
  try {
    run();
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error("expected a ServiceError");
}

describe("exceedsJsonDepth", () => {
  it(`accepts ${MAX_JSON_DEPTH} levels and refuses ${MAX_JSON_DEPTH + 1}`, () => {
    expect(exceedsJsonDepth("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH))).toBe(false);
    expect(exceedsJsonDepth("[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(exceedsJsonDepth(`${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${"}".repeat(MAX_JSON_DEPTH + 1)}`)).toBe(true);
  });

  it("ignores brackets inside strings, escaped quotes included", () => {
    const inString = JSON.stringify({ text: "[".repeat(1_000) + '\\"{{{' + "{".repeat(1_000) });
    expect(exceedsJsonDepth(inString)).toBe(false);
    expect(exceedsJsonDepth(JSON.stringify({ a: 'quote " then [[[[', b: "backslash \\", c: [[["x"]]] }))).toBe(false);
  });

  it("agrees with a character-by-character scan on any mix of brackets, quotes, backslashes and text", () => {
    // The plain scan the fast one replaced: inside a string a backslash skips the next character.
    const reference = (text: string, maxDepth: number): boolean => {
      let depth = 0;
      let inString = false;
      for (let index = 0; index < text.length; index++) {
        const code = text[index];
        if (inString) {
          if (code === "\\") index++;
          else if (code === '"') inString = false;
        } else if (code === '"') inString = true;
        else if (code === "{" || code === "[") {
          if (++depth > maxDepth) return true;
        } else if (code === "}" || code === "]") depth--;
      }
      return false;
    };
    fc.assert(
      fc.property(fc.array(fc.constantFrom("[", "]", "{", "}", '"', "\\", "a", ","), { maxLength: 200 }), fc.integer({ min: 0, max: 8 }), (chars, maxDepth) => {
        const text = chars.join("");
        expect(exceedsJsonDepth(text, maxDepth)).toBe(reference(text, maxDepth));
      }),
      { numRuns: 5_000 },
    );
  });

  it("does not let a string that ends in a backslash hide brackets after it", () => {
    const deep = `["\\\\",${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}]`;
    expect(JSON.parse(deep)).toBeDefined();
    expect(exceedsJsonDepth(deep)).toBe(true);
  });
});

describe("parseJsonBody", () => {
  it("refuses 10,000 levels before parsing: a body deep and broken beyond the limit gets the depth answer", () => {
    for (const body of ["[".repeat(10_000), `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`, `${"[".repeat(10_000)}!!! not json`]) {
      const error = refusal(() => parse(body));
      expect(error.code).toBe("INVALID_BODY");
      expect(error.message).toMatch(/nested deeper than 64/);
    }
  });

  it("parses 100,000 keys wide (bounded by the body limit, not the parser)", () => {
    const wide = `{${Array.from({ length: 100_000 }, (_, index) => `"${index.toString(36)}":0`).join(",")}}`;
    expect(Object.keys(parse(wide) as object)).toHaveLength(100_000);
  });

  it.each([
    ['{"__proto__":{"polluted":1}}', "__proto__"],
    ['{"attributes":{"a":{"__proto__":{"polluted":1}}}}', "attributes.a.__proto__"],
    ['[{"type":"event"},{"deep":[{"__proto__":1}]}]', "1.deep.0.__proto__"],
    ['{"a":{"\\u005f_proto__":1}}', "a.__proto__"],
    ['{"a":{"__pr\\u006fto__":{}}}', "a.__proto__"],
  ])("refuses a __proto__ key anywhere: %s", (body, path) => {
    const error = refusal(() => parse(body));
    expect(error.code).toBe("INVALID_BODY");
    expect(error.validationErrors).toEqual([{ path, message: '"__proto__" is not allowed as a key' }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("accepts __proto__ as a value, and constructor/prototype as plain keys", () => {
    expect(parse('{"a":"__proto__","b":["__proto__"]}')).toEqual({ a: "__proto__", b: ["__proto__"] });
    expect(parse('{"constructor":{"prototype":{"x":1}}}')).toEqual({ constructor: { prototype: { x: 1 } } });
    expect(findPrototypeKey(JSON.parse('{"a":{"b":[1,{"c":null}]}}'))).toBeUndefined();
  });

  it("exists because msgpack does not keep a __proto__ key (what was stored would read back differently)", () => {
    const packr = new Packr({ copyBuffers: true });
    const sent = JSON.parse('{"a":{"__proto__":{"polluted":1}}}');
    expect(Object.keys(packr.unpack(packr.pack(sent)).a)).toEqual(["__proto_"]);
  });

  it("answers the contract's 400s for everything else a client gets wrong", () => {
    expect(refusal(() => parseJsonBody(Buffer.from("{}"), "text/plain")).code).toBe("UNSUPPORTED_CONTENT_TYPE");
    expect(refusal(() => parseJsonBody(Buffer.from("{}"), undefined)).code).toBe("UNSUPPORTED_CONTENT_TYPE");
    expect(refusal(() => parse("")).code).toBe("MALFORMED_JSON");
    expect(refusal(() => parse('{"a":')).code).toBe("MALFORMED_JSON");
    expect(refusal(() => parse(Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]))).message).toMatch(/UTF-8/);
    expect(parseJsonBody(Buffer.from("[1]"), "Application/JSON; charset=utf-8")).toEqual([1]);
  });
});

describe("lone UTF-16 surrogates", () => {
  const surrogate = "must be well-formed Unicode: it holds a lone UTF-16 surrogate";

  it.each([
    ['{"name":"\\ud83d"}', "name"],
    ['{"rules":[{"filter":{"values":["ok","a\\udc00b"]}}]}', "rules.0.filter.values.1"],
    ['["\\uDBFF\\uDBFF\\uDC00"]', "0"],
    ['"\\ud800"', ""],
  ])("refuses one anywhere in a management body, naming its path: %s", (body, path) => {
    const error = refusal(() => parse(body));
    expect(error.code).toBe("INVALID_BODY");
    expect(error.validationErrors).toEqual([{ path, message: surrogate }]);
  });

  it("names a key holding one with U+FFFD in its place, so the answer is well-formed itself", () => {
    const error = refusal(() => parse('{"payload":{"a\\ud83d":1}}'));
    expect(error.validationErrors).toEqual([{ path: "payload.a\ufffd", message: expect.stringContaining("key") }]);
    expect(JSON.stringify(error.validationErrors)).not.toMatch(/\\ud83d/);
  });

  it("keeps surrogate pairs, escaped or not, and escaped backslashes before a u", () => {
    expect(parse('{"a":"\\ud83d\\ude00","b":"\ud83d\ude00","c":"\\\\ud83d"}')).toEqual({ a: "\ud83d\ude00", b: "\ud83d\ude00", c: "\\ud83d" });
  });

  it("gives an SDK body U+FFFD in place of each one, keys included, and refuses nothing for it", () => {
    const body = '[{"userId":"u\\ud83d","attributes":{"k\\udc00":"\\ud83d\\ud83d\\ude00","n":1}}]';
    expect(parseJsonBody(Buffer.from(body), JSON_TYPE, SDK_BODY)).toEqual([{ userId: "u\ufffd", attributes: { "k\ufffd": "\ufffd\ud83d\ude00", n: 1 } }]);
  });

  it("agrees with String.prototype.isWellFormed on any string of surrogates and letters", () => {
    const wellFormed = (text: string) => (text as unknown as { isWellFormed(): boolean }).isWellFormed();
    fc.assert(
      fc.property(fc.array(fc.constantFrom("\ud83d", "\ude00", "\udbff", "\udc00", "a", "\u00e9"), { maxLength: 8 }), (parts) => {
        const text = parts.join("");
        const body = Buffer.from(JSON.stringify({ text }));
        if (wellFormed(text)) expect(parse(body)).toEqual({ text });
        else expect(refusal(() => parse(body)).validationErrors).toEqual([{ path: "text", message: surrogate }]);
        const replaced = (text as unknown as { toWellFormed(): string }).toWellFormed();
        expect(parseJsonBody(body, JSON_TYPE, SDK_BODY)).toEqual({ text: replaced });
      }),
      { numRuns: 2_000 },
    );
  });
});
