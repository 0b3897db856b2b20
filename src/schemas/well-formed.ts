/**
 * Well-formed Unicode in parsed JSON (API.md §2). A JSON text can spell a lone UTF-16 surrogate as an escape
 * (`"\ud83d"`, what slicing an emoji in JavaScript gives); the store keeps UTF-8, which cannot hold one, so such a
 * string would be saved as U+FFFD and read back other than it was acknowledged. Management bodies are refused for it;
 * tracking bodies get U+FFFD in its place before anything is stored, so what is stored is what the answer implies.
 */
import type { ValidationIssue } from "../errors/catalogue.js";

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (matched by code unit). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

/**
 * Whether a JSON text could hold a lone surrogate once parsed: the UTF-8 decoder refuses encoded surrogates, so only
 * a `\uD800`–`\uDFFF` escape can make one. Lets the walk below skip nearly every body.
 */
export const mayHoldLoneSurrogate = (text: string): boolean => /\\u[dD][89a-fA-F]/.test(text);

export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text);

/** The string with U+FFFD in place of each lone surrogate (`String.prototype.toWellFormed`, which ES2023 lacks). */
export const toWellFormed = (text: string): string => text.replace(LONE_SURROGATES, "\ufffd");

const MESSAGE = "must be well-formed Unicode: it holds a lone UTF-16 surrogate";
const KEY_MESSAGE = "is a key that is not well-formed Unicode: it holds a lone UTF-16 surrogate";

const join = (path: string, part: string | number): string => (path === "" ? String(part) : `${path}.${part}`);

/** The first string (value or key) holding a lone surrogate, as a validation issue with its dotted path. */
export function findLoneSurrogate(value: unknown, path = ""): ValidationIssue | undefined {
  if (typeof value === "string") return hasLoneSurrogate(value) ? { path, message: MESSAGE } : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = findLoneSurrogate(value[index], join(path, index));
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [name, item] of Object.entries(value)) {
    // The key goes into the path as U+FFFD: the answer itself must be well-formed JSON for any client to read.
    if (hasLoneSurrogate(name)) return { path: join(path, toWellFormed(name)), message: KEY_MESSAGE };
    const found = findLoneSurrogate(item, join(path, name));
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Puts U+FFFD in place of every lone surrogate of a freshly parsed JSON value, keys included, in place; answers the
 * value (a string is answered replaced).
 */
export function replaceLoneSurrogates(value: unknown): unknown {
  if (typeof value === "string") return hasLoneSurrogate(value) ? toWellFormed(value) : value;
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) value[index] = replaceLoneSurrogates(value[index]);
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const name of Object.keys(record)) {
    const item = replaceLoneSurrogates(record[name]);
    if (hasLoneSurrogate(name)) {
      delete record[name];
      record[toWellFormed(name)] = item;
    } else record[name] = item;
  }
  return record;
}
