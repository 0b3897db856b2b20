/**
 * The common case of contextFromQuery, without building the nested context: the SDKs send the context already
 * flattened (`context.user.id=42&context.company.plan=pro`), and as long as no path conflicts with another, flattening
 * the nested context contextFromQuery would build gives back exactly those paths. So the paths are kept as they come.
 *
 * Anything this does not handle the same way — a parameter past a limit, a refused segment, a path that is both a
 * value and an object, an empty first segment, an escape decodeURIComponent refuses — makes it answer undefined, and
 * the caller takes contextFromQuery, which answers the same request correctly (with its 400 where there is one).
 */
import { QUERY_LIMITS } from "./context-from-query.js";

export interface FlatQuery {
  /** Context paths as flattening names them (`user.id`; `otherContext.` read as `other.`), in parameter order. */
  readonly paths: string[];
  /** The decoded value of each path (of two at one path, the later wins). */
  readonly values: string[];
  /** The `key` parameter (the last one), when sent. */
  readonly key: string | undefined;
}

const CONTEXT_PREFIX = "context.";
const SURROGATE = /[\uD800-\uDFFF]/;
/** Beyond this many context parameters the pairwise conflict check is left to contextFromQuery. */
const MAX_FAST_PARAMS = 32;

/** The flattened context of a raw query string, or undefined when contextFromQuery must decide. */
export function parseFlatQuery(query: string): FlatQuery | undefined {
  // URLSearchParams reads a lone surrogate as U+FFFD; a raw surrogate (HTTP sends none: non-ASCII arrives
  // percent-encoded) is left to contextFromQuery.
  if (query.length > QUERY_LIMITS.maxQueryLength || SURROGATE.test(query)) return undefined;
  const paths: string[] = [];
  const values: string[] = [];
  let key: string | undefined;
  let start = 0;
  const length = query.length;
  while (start <= length) {
    let end = query.indexOf("&", start);
    if (end === -1) end = length;
    if (end > start) {
      const equals = query.indexOf("=", start);
      const nameEnd = equals === -1 || equals > end ? end : equals;
      const name = decode(query.slice(start, nameEnd));
      if (name === undefined) return undefined;
      if (name === "key") {
        key = nameEnd === end ? "" : decode(query.slice(nameEnd + 1, end));
        if (key === undefined) return undefined;
      } else if (name.startsWith(CONTEXT_PREFIX)) {
        const value = nameEnd === end ? "" : decode(query.slice(nameEnd + 1, end));
        if (value === undefined || name.length > QUERY_LIMITS.maxNameLength || value.length > QUERY_LIMITS.maxValueLength) return undefined;
        const path = contextPath(name);
        if (path === undefined || paths.length === MAX_FAST_PARAMS) return undefined;
        paths.push(path);
        values.push(value);
      }
    }
    start = end + 1;
  }
  if (key !== undefined && (key.length === 0 || key.length > QUERY_LIMITS.maxKeyLength)) return undefined;
  if (hasConflict(paths)) return undefined;
  return { paths, values, key };
}

/** URLSearchParams decoding for the escapes decodeURIComponent accepts; undefined for the others. */
function decode(text: string): string | undefined {
  if (!text.includes("%") && !text.includes("+")) return text;
  try {
    return decodeURIComponent(text.includes("+") ? text.replaceAll("+", " ") : text);
  } catch {
    return undefined;
  }
}

/** The path of a `context.` parameter, or undefined when contextFromQuery must judge it. */
function contextPath(name: string): string | undefined {
  let path = name.slice(CONTEXT_PREFIX.length);
  // A refused segment (contextFromQuery answers 400), or one merely containing such a word: let it decide.
  if (path.includes("__proto__") || path.includes("constructor") || path.includes("prototype")) return undefined;
  // An empty first segment flattens to something else than the path ("context..a" gives "a").
  if (path === "" || path.charCodeAt(0) === 0x2e) return undefined;
  let dots = 0;
  for (let index = path.indexOf("."); index !== -1; index = path.indexOf(".", index + 1)) dots++;
  if (dots >= QUERY_LIMITS.maxPathDepth) return undefined;
  if (path.startsWith("otherContext") && (path.length === 12 || path.charCodeAt(12) === 0x2e)) path = `other${path.slice(12)}`;
  return path;
}

/** Whether a path is a plain value at one place and an object at another (`user=1&user.id=2`). */
function hasConflict(paths: readonly string[]): boolean {
  for (let outer = 0; outer < paths.length; outer++) {
    const prefix = paths[outer]!;
    for (let inner = 0; inner < paths.length; inner++) {
      const path = paths[inner]!;
      if (path.length > prefix.length && path.charCodeAt(prefix.length) === 0x2e && path.startsWith(prefix)) return true;
    }
  }
  return false;
}

/**
 * The nested context contextFromQuery builds from the same query: each path's segments as nested objects. Equal to
 * it for every query parseFlatQuery accepts (no path is both a value and an object there).
 */
export function nestedContext(flat: FlatQuery): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (let index = 0; index < flat.paths.length; index++) {
    const segments = flat.paths[index]!.split(".");
    let node = root;
    for (let depth = 0; depth < segments.length - 1; depth++) {
      const segment = segments[depth]!;
      let child = node[segment];
      if (typeof child !== "object" || child === null) node[segment] = child = {};
      node = child as Record<string, unknown>;
    }
    node[segments[segments.length - 1]!] = flat.values[index]!;
  }
  return root;
}
