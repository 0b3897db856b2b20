/**
 * Rebuilds the evaluation context from the query of `/features/evaluated` and `/features/enabled`, where the SDKs send
 * it flattened: `context.user.id=42&context.company.plan=pro`.
 */
import type { ValidationIssue } from "../errors/catalogue.js";

/** Bounds on what a query may carry; past them contextFromQuery answers issues. */
export const QUERY_LIMITS = {
  /** Characters of the raw query string. */
  maxQueryLength: 32 * 1024,
  maxContextParams: 256,
  maxNameLength: 256,
  maxValueLength: 4096,
  /** Segments of the path after `context.`. */
  maxPathDepth: 16,
  maxKeyLength: 255,
} as const;

/** Segments that could reach a prototype if a context were ever merged or assigned carelessly downstream. */
const REFUSED_SEGMENTS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

const CONTEXT_PREFIX = "context.";

export type ContextFromQuery =
  | { ok: true; context: Record<string, unknown>; key?: string }
  | { ok: false; issues: ValidationIssue[] };

/** Built with Maps, so that walking a path never meets inherited members such as `toString`. */
type ContextNode = Map<string, ContextNode | string>;

/**
 * Parses a raw query string (decoded like URLSearchParams: percent-escapes, "+" as space) into a nested context and
 * the optional `key` parameter (the last one, if repeated). `context.otherContext.*` is an alias of
 * `context.other.*`; parameters other than `context.*` and `key` are ignored.
 *
 * Conflicting paths never fail: an object wins over a plain value at the same path, whichever comes first
 * (`context.user=1&context.user.id=2` gives `{user: {id: "2"}}`), and of two plain values at one path the later wins.
 * That keeps the result independent of parameter order wherever an object is involved.
 */
export function contextFromQuery(query: string): ContextFromQuery {
  if (query.length > QUERY_LIMITS.maxQueryLength) {
    return fail("", `The query string must be at most ${QUERY_LIMITS.maxQueryLength} characters`);
  }
  const issues: ValidationIssue[] = [];
  const root: ContextNode = new Map();
  let key: string | undefined;
  let contextParams = 0;
  for (const [name, value] of new URLSearchParams(query)) {
    if (name === "key") {
      key = value;
      continue;
    }
    if (!name.startsWith(CONTEXT_PREFIX)) continue;
    if (++contextParams > QUERY_LIMITS.maxContextParams) {
      const message = `At most ${QUERY_LIMITS.maxContextParams} context parameters are allowed`;
      issues.push({ path: "context", message });
      break;
    }
    const issue = checkContextParam(name, value);
    if (issue !== undefined) {
      issues.push(issue);
      continue;
    }
    const segments = name.slice(CONTEXT_PREFIX.length).split(".");
    if (segments[0] === "otherContext") segments[0] = "other";
    assign(root, segments, value);
  }
  if (key !== undefined && (key.length === 0 || key.length > QUERY_LIMITS.maxKeyLength)) {
    issues.push({ path: "key", message: `key must be 1 to ${QUERY_LIMITS.maxKeyLength} characters` });
  }
  if (issues.length > 0) return { ok: false, issues };
  const context = toObject(root);
  return key === undefined ? { ok: true, context } : { ok: true, context, key };
}

function checkContextParam(name: string, value: string): ValidationIssue | undefined {
  if (name.length > QUERY_LIMITS.maxNameLength) {
    return {
      path: name.slice(0, QUERY_LIMITS.maxNameLength),
      message: `A parameter name must be at most ${QUERY_LIMITS.maxNameLength} characters`,
    };
  }
  if (value.length > QUERY_LIMITS.maxValueLength) {
    return { path: name, message: `A context value must be at most ${QUERY_LIMITS.maxValueLength} characters` };
  }
  const segments = name.slice(CONTEXT_PREFIX.length).split(".");
  if (segments.length > QUERY_LIMITS.maxPathDepth) {
    return { path: name, message: `A context path must have at most ${QUERY_LIMITS.maxPathDepth} segments` };
  }
  const refused = segments.find((segment) => REFUSED_SEGMENTS.has(segment));
  if (refused !== undefined) return { path: name, message: `The path segment "${refused}" is not allowed` };
  return undefined;
}

function assign(root: ContextNode, segments: string[], value: string): void {
  let node = root;
  const last = segments.length - 1;
  for (let index = 0; index < last; index++) {
    const segment = segments[index] as string;
    let child = node.get(segment);
    if (!(child instanceof Map)) {
      // An object wins over a plain value set earlier at this path.
      child = new Map();
      node.set(segment, child);
    }
    node = child;
  }
  const leaf = segments[last] as string;
  // ... and over a plain value set later.
  if (!(node.get(leaf) instanceof Map)) node.set(leaf, value);
}

function toObject(node: ContextNode): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  // Plain assignment is safe: "__proto__" (the one key with a setter on a plain object) was refused above.
  for (const [segment, child] of node) object[segment] = typeof child === "string" ? child : toObject(child);
  return object;
}

function fail(path: string, message: string): ContextFromQuery {
  return { ok: false, issues: [{ path, message }] };
}
