/**
 * The checks a feature's proposed prerequisites pass before they are stored (API.md §15), shared by the direct write
 * and change requests: no unknown feature, no self, no repeat, no cycle, no chain deeper than MAX_PREREQUISITE_DEPTH.
 * Issues are placed under `path` (`prerequisites`, or `changes.N.prerequisites` in a request).
 */
import type { ValidationIssue } from "../../errors/catalogue.js";
import type { Prerequisite } from "../../features/feature-records.js";
import type { FeatureRepository } from "../../features/feature-repository.js";
import { cycleThrough, deepestChain, describeCycle, MAX_PREREQUISITE_DEPTH } from "../../features/prerequisite-graph.js";

/**
 * What is wrong with `proposed` as `featureKey`'s prerequisites in `graph` (the environment's, with whatever else is
 * being written at the same time already set in it); empty when nothing is. On success the caller sets the list in
 * `graph`, so the next feature of the same request is checked against it.
 */
export function prerequisiteIssues(
  features: FeatureRepository,
  appId: string,
  featureKey: string,
  proposed: readonly Prerequisite[],
  graph: Map<string, Prerequisite[]>,
  path: string,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  proposed.forEach(({ feature: parent }, index) => {
    const at = `${path}.${index}.feature`;
    if (parent === featureKey) issues.push({ path: at, message: `${parent} cannot be its own prerequisite` });
    else if (!features.getFeature(appId, parent)) issues.push({ path: at, message: `No feature ${parent} in this app` });
    else if (seen.has(parent)) issues.push({ path: at, message: `${parent} is listed twice` });
    seen.add(parent);
  });
  if (issues.length > 0) return issues;
  const cycle = cycleThrough(graph, featureKey, proposed);
  if (cycle) {
    const index = proposed.findIndex((prerequisite) => prerequisite.feature === cycle[1]);
    return [{ path: `${path}.${index}.feature`, message: `These prerequisites would close a cycle: ${describeCycle(cycle)}` }];
  }
  const after = new Map(graph).set(featureKey, [...proposed]);
  if (deepestChain(after) > MAX_PREREQUISITE_DEPTH) {
    return [{ path, message: `A chain of prerequisites may pass through at most ${MAX_PREREQUISITE_DEPTH} features` }];
  }
  return [];
}
