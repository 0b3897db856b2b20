import { ServiceError } from "../errors/catalogue.js";
import { findLoneSurrogate, mayHoldLoneSurrogate, replaceLoneSurrogates } from "./well-formed.js";

/** Deepest JSON nesting accepted in any body; far above what the contract needs, far below what breaks a parser. */
export const MAX_JSON_DEPTH = 64;

/**
 * Measures nesting over the raw text before parsing, so that absurdly deep input is refused before it reaches
 * JSON.parse, valibot, msgpackr or structuredClone (each recurses and throws RangeError near 10,000 levels).
 */
export function exceedsJsonDepth(text: string, maxDepth = MAX_JSON_DEPTH): boolean {
  // Fewer opening brackets than the bound (counted natively) cannot nest past it: most bodies skip the walk.
  if (countsAtMost(text, maxDepth)) return false;
  let depth = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x22 /* " */) {
      // Most of a body is string contents: jump to the closing quote (native indexOf) instead of walking to it.
      index = closingQuote(text, index);
      if (index === -1) return false;
    } else if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      if (++depth > maxDepth) return true;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) depth--;
  }
  return false;
}

/** Whether `text` holds at most `bound` `{` and `[` together (strings included: an overcount only costs the walk). */
function countsAtMost(text: string, bound: number): boolean {
  let count = 0;
  for (let index = text.indexOf("{"); index !== -1; index = text.indexOf("{", index + 1)) if (++count > bound) return false;
  for (let index = text.indexOf("["); index !== -1; index = text.indexOf("[", index + 1)) if (++count > bound) return false;
  return true;
}

/** The index of the quote closing the string opened at `open`: the next one not escaped, -1 if there is none. */
function closingQuote(text: string, open: number): number {
  let quote = open;
  for (;;) {
    quote = text.indexOf('"', quote + 1);
    if (quote === -1) return -1;
    // A quote behind an odd run of backslashes is escaped; behind an even run (none included) it ends the string.
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c /* \ */) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
}

/**
 * The path of the first own `__proto__` key anywhere in a parsed body, or undefined. JSON.parse makes such a key an
 * own property (harmless there), but msgpack decodes it as `__proto_`, so what was stored would read back
 * differently, and any later merge with Object.assign would set a prototype. Refused everywhere instead.
 */
export function findPrototypeKey(value: unknown, path = ""): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = findPrototypeKey(value[index], path === "" ? String(index) : `${path}.${index}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const name of Object.keys(value)) {
    const here = path === "" ? name : `${path}.${name}`;
    if (name === "__proto__") return here;
    const found = findPrototypeKey((value as Record<string, unknown>)[name], here);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Whether a JSON text could hold a `__proto__` key: spelled out, or hidden behind `\u` escapes. */
function mayHoldPrototypeKey(text: string): boolean {
  return text.includes("__proto__") || text.includes("\\u");
}

/** `Content-Type: application/json`, parameters such as `; charset=utf-8` allowed. */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  // What every SDK sends, without the split and case fold.
  if (contentType === "application/json") return true;
  const mediaType = contentType.split(";", 1)[0]!.trim().toLowerCase();
  return mediaType === "application/json";
}

export interface JsonBodyOptions {
  maxDepth?: number;
  /**
   * What a string holding a lone UTF-16 surrogate gets (API.md §2): `refuse` (management bodies: a 400 naming its
   * path) or `replace` (tracking: U+FFFD in its place, as the store would keep it).
   */
  loneSurrogates?: "refuse" | "replace";
}

/**
 * Bodies the SDKs send about users and companies (tracking, opt-in, feedback prompting): never refused for a lone
 * surrogate, which gets U+FFFD, so an opt-in lands on the same user record tracking made for that id.
 */
export const SDK_BODY: JsonBodyOptions = { loneSurrogates: "replace" };

/** One decoder for every body, not one per body: it keeps no state between whole (non-streaming) decodes. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes and parses a JSON body, answering the contract's 400s for anything a client got wrong. */
export function parseJsonBody(body: Uint8Array | null, contentType: string | undefined, options: JsonBodyOptions = {}): unknown {
  const { maxDepth = MAX_JSON_DEPTH, loneSurrogates = "refuse" } = options;
  if (!isJsonContentType(contentType)) throw new ServiceError("UNSUPPORTED_CONTENT_TYPE");
  if (!body || body.length === 0) throw new ServiceError("MALFORMED_JSON", "The request body is empty.");
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    throw new ServiceError("MALFORMED_JSON", "The request body is not valid UTF-8.");
  }
  if (exceedsJsonDepth(text, maxDepth)) {
    throw new ServiceError("INVALID_BODY", `The request body is nested deeper than ${maxDepth} levels.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ServiceError("MALFORMED_JSON", `The request body is not valid JSON: ${(error as Error).message}`);
  }
  // The walks are bounded by the depth check above; each only runs when the text could hold what it looks for.
  const prototypeKey = mayHoldPrototypeKey(text) ? findPrototypeKey(parsed) : undefined;
  if (prototypeKey !== undefined) {
    throw new ServiceError("INVALID_BODY", undefined, [{ path: prototypeKey, message: '"__proto__" is not allowed as a key' }]);
  }
  if (!mayHoldLoneSurrogate(text)) return parsed;
  if (loneSurrogates === "replace") return replaceLoneSurrogates(parsed);
  const illFormed = findLoneSurrogate(parsed);
  if (illFormed !== undefined) throw new ServiceError("INVALID_BODY", undefined, [illFormed]);
  return parsed;
}
