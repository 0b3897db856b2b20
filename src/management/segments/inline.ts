/**
 * Segment references in rule trees. SDKs evaluate locally with the five filter types only, so every rule list that is
 * served or evaluated has each `{type: "segment", segmentId}` node replaced by the segment's own filter tree
 * (recursively). Trees are walked iteratively, like the validator, so no input can exhaust the call stack.
 */
import type { ValidationIssue } from "../../errors/catalogue.js";
import { validateFilterTree } from "../../schemas/rules.js";

/** A segment of the app by id, as stored or about to be written. */
export type SegmentLookup = (segmentId: string) => { filter: unknown } | undefined;

function isSegmentNode(node: unknown): node is { type: "segment"; segmentId: string } {
  return typeof node === "object" && node !== null && (node as { type?: unknown }).type === "segment";
}

/** Every segment id a tree (a filter, a rule list, anything JSON) names directly. */
export function segmentRefs(tree: unknown): Set<string> {
  const found = new Set<string>();
  const stack: unknown[] = [tree];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    if (isSegmentNode(node)) {
      if (typeof node.segmentId === "string") found.add(node.segmentId);
      continue;
    }
    for (const value of Array.isArray(node) ? node : Object.values(node)) if (typeof value === "object" && value !== null) stack.push(value);
  }
  return found;
}

/**
 * The chain of segment ids by which `startId`'s filter (given as `filter`) comes back to `startId`, or undefined when
 * it does not: a segment may not contain itself, directly or through others.
 */
export function findCycle(startId: string, filter: unknown, lookup: SegmentLookup): string[] | undefined {
  const stack: { id: string; path: string[] }[] = [...segmentRefs(filter)].map((id) => ({ id, path: [startId, id] }));
  const seen = new Set<string>();
  while (stack.length > 0) {
    const { id, path } = stack.pop()!;
    if (id === startId) return path;
    if (seen.has(id)) continue;
    seen.add(id);
    const segment = lookup(id);
    if (!segment) continue;
    for (const next of segmentRefs(segment.filter)) stack.push({ id: next, path: [...path, next] });
  }
  return undefined;
}

export type Inlined<T> = { ok: true; value: T } | { ok: false; message: string };

/** A copy of `tree` with every segment node replaced by its segment's inlined filter. */
export function inlineSegments<T>(tree: T, lookup: SegmentLookup): Inlined<T> {
  if (segmentRefs(tree).size === 0) return { ok: true, value: tree };
  const cache = new Map<string, unknown>();
  const expanding = new Set<string>();
  const expand = (segmentId: string): unknown => {
    const cached = cache.get(segmentId);
    if (cached !== undefined) return cached;
    const segment = lookup(segmentId);
    if (!segment) throw new InlineError(`No segment ${segmentId}.`);
    if (expanding.has(segmentId)) throw new InlineError(`Segment ${segmentId} contains itself.`);
    expanding.add(segmentId);
    const value = replace(segment.filter);
    expanding.delete(segmentId);
    cache.set(segmentId, value);
    return value;
  };
  // Recursion depth is bounded: stored trees passed the validator's depth limit, and each segment is expanded once.
  const replace = (node: unknown): unknown => {
    if (isSegmentNode(node)) return expand(node.segmentId);
    if (Array.isArray(node)) return node.map(replace);
    if (typeof node !== "object" || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(node)) out[name] = replace(value);
    return out;
  };
  try {
    return { ok: true, value: replace(tree) as T };
  } catch (error) {
    if (error instanceof InlineError) return { ok: false, message: error.message };
    throw error;
  }
}

/** Targeting rules with their segments inlined, checked again as plain §6 targeting (the depth limit included). */
export function inlineTargeting(rules: unknown[], lookup: SegmentLookup): Inlined<unknown[]> {
  const inlined = inlineSegments(rules, lookup);
  if (!inlined.ok) return inlined;
  const issues: ValidationIssue[] = [];
  inlined.value.forEach((rule, index) => validateFilterTree((rule as { filter: unknown }).filter, `rules.${index}.filter`, issues));
  if (issues.length > 0) return { ok: false, message: `With its segments inlined, ${issues[0]!.path}: ${issues[0]!.message}` };
  return inlined;
}

class InlineError extends Error {}

export type PreparedTargeting = { ok: true; served: unknown[]; segmentRules: unknown[] | undefined } | { ok: false; message: string };

/** `authored` (which may name segments) inlined and checked as plain targeting. */
export function prepareTargeting(authored: unknown[], lookup: SegmentLookup): PreparedTargeting {
  const inlined = inlineTargeting(authored, lookup);
  if (!inlined.ok) return inlined;
  return { ok: true, served: inlined.value, segmentRules: segmentRefs(authored).size > 0 ? authored : undefined };
}
