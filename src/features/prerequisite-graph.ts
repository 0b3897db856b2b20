/**
 * The prerequisite graph of one environment (API.md §15): which features a feature depends on. A write is checked
 * here before it is stored — no cycle, no chain deeper than MAX_PREREQUISITE_DEPTH — and archiving asks here who
 * still depends on a feature.
 */
import type { Prerequisite } from "./feature-records.js";

/**
 * How many features a chain of prerequisites may pass through below a feature. Every level nests the parent's rule
 * tree one group deeper in what is served (served-rules.ts), so the bound keeps served trees within what the
 * evaluator compiles (MAX_SERVED_FILTER_DEPTH) and a chain within what a person can follow.
 */
export const MAX_PREREQUISITE_DEPTH = 10;


/** A feature's prerequisites by its key, for every feature of an environment that has any. */
export type PrerequisiteGraph = ReadonlyMap<string, readonly Prerequisite[]>;

/**
 * The cycle `featureKey` would close if its prerequisites were `proposed`: the keys along it, starting and ending
 * with `featureKey` (`a → b → c → a` as a list), or undefined when there is none.
 */
export function cycleThrough(graph: PrerequisiteGraph, featureKey: string, proposed: readonly Prerequisite[]): string[] | undefined {
  const parentsOf = (key: string) => (key === featureKey ? proposed : (graph.get(key) ?? []));
  const done = new Set<string>();
  // Depth-first from the feature: a path that comes back to it is the cycle.
  const walk = (key: string, path: string[]): string[] | undefined => {
    for (const { feature } of parentsOf(key)) {
      if (feature === featureKey) return [...path, feature];
      if (done.has(feature) || path.includes(feature)) continue;
      const found = walk(feature, [...path, feature]);
      if (found) return found;
    }
    done.add(key);
    return undefined;
  };
  return walk(featureKey, [featureKey]);
}

/**
 * The longest chain of prerequisites in the graph (a feature with prerequisites that have none counts 1), assuming
 * it has no cycle. A cycle, which a checked write never leaves, counts as the limit passed.
 */
export function deepestChain(graph: PrerequisiteGraph): number {
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const depthOf = (key: string): number => {
    const known = depth.get(key);
    if (known !== undefined) return known;
    if (visiting.has(key)) return MAX_PREREQUISITE_DEPTH + 1;
    visiting.add(key);
    let deepest = 0;
    for (const { feature } of graph.get(key) ?? []) deepest = Math.max(deepest, 1 + depthOf(feature));
    visiting.delete(key);
    depth.set(key, deepest);
    return deepest;
  };
  let deepest = 0;
  for (const key of graph.keys()) deepest = Math.max(deepest, depthOf(key));
  return deepest;
}

/** The features that list `featureKey` among their prerequisites, in key order. */
export function dependentsOf(graph: PrerequisiteGraph, featureKey: string): string[] {
  const dependents: string[] = [];
  for (const [key, prerequisites] of graph) if (prerequisites.some((prerequisite) => prerequisite.feature === featureKey)) dependents.push(key);
  return dependents.sort();
}

/** How a cycle reads in an answer: `a → b → c → a`. */
export function describeCycle(cycle: readonly string[]): string {
  return cycle.join(" → ");
}
