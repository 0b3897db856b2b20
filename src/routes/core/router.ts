import { ServiceError } from "../../errors/catalogue.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

interface CompiledPattern<R> {
  route: R;
  method: HttpMethod;
  segments: string[];
  /** The pattern as written (`/:trackingKey/event`): what metrics label a route with, never a concrete path. */
  pattern: string;
}

export interface RouteMatch<R> {
  route: R;
  params: Record<string, string>;
  pattern: string;
}

/** Splits a path into segments; `/a/b/` and `/a/b` are the same route. */
function splitPath(path: string): string[] {
  const segments = path.split("/");
  if (segments[0] === "") segments.shift();
  if (segments.length > 0 && segments[segments.length - 1] === "") segments.pop();
  return segments;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ServiceError("INVALID_REQUEST", "The request path is not valid percent-encoding.");
  }
}

/**
 * A segment-wise router: literal segments beat parameters, so `/features/evaluated` wins over `/:trackingKey/event`.
 * Tables are small; a linear scan over the patterns of one segment count is cheaper than anything cleverer.
 */
export class Router<R> {
  private readonly bySegmentCount = new Map<number, CompiledPattern<R>[]>();
  /** Parameter-free routes by `METHOD path`: the hot routes (`/features/evaluated`, `/event`) need no scan. */
  private readonly literal = new Map<string, RouteMatch<R>>();

  add(method: HttpMethod, pattern: string, route: R): this {
    const segments = splitPath(pattern);
    const normalised = `/${segments.join("/")}`;
    if (countParams(segments) === 0) this.literal.set(`${method} ${normalised}`, { route, params: Object.freeze(Object.create(null)) as Record<string, string>, pattern: normalised });
    const list = this.bySegmentCount.get(segments.length) ?? [];
    list.push({ route, method, segments, pattern: normalised });
    // Fewer parameters first: literal matches take precedence.
    list.sort((a, b) => countParams(a.segments) - countParams(b.segments));
    this.bySegmentCount.set(segments.length, list);
    return this;
  }

  /** The route for a method and path; `methodMismatch` when the path exists under other methods only. */
  match(method: string, path: string): RouteMatch<R> | "methodMismatch" | undefined {
    const literal = this.literal.get(`${method} ${path}`);
    if (literal) return literal;
    const segments = splitPath(path);
    const candidates = this.bySegmentCount.get(segments.length);
    if (!candidates) return undefined;
    let pathMatched = false;
    for (const candidate of candidates) {
      const params = matchSegments(candidate.segments, segments);
      if (!params) continue;
      if (candidate.method !== method) {
        pathMatched = true;
        continue;
      }
      return { route: candidate.route, params, pattern: candidate.pattern };
    }
    return pathMatched ? "methodMismatch" : undefined;
  }

  /** Every route as added, for listings and for tests that must reach every route of a kind. */
  *entries(): IterableIterator<{ method: HttpMethod; pattern: string; route: R }> {
    for (const list of this.bySegmentCount.values()) for (const { method, pattern, route } of list) yield { method, pattern, route };
  }
}

function countParams(segments: string[]): number {
  return segments.filter((segment) => segment.startsWith(":")).length;
}

function matchSegments(pattern: string[], actual: string[]): Record<string, string> | undefined {
  let params: Record<string, string> | undefined;
  for (let index = 0; index < pattern.length; index++) {
    const expected = pattern[index]!;
    const segment = actual[index]!;
    if (expected.startsWith(":")) {
      if (segment === "") return undefined;
      params ??= Object.create(null) as Record<string, string>;
      params[expected.slice(1)] = decodeSegment(segment);
    } else if (expected !== segment) return undefined;
  }
  return params ?? (Object.create(null) as Record<string, string>);
}
