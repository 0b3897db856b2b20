/**
 * Data residency (API.md §11, docs/CLUSTER.md): a node of region R holds only apps pinned to R (and the unpinned
 * ones too when it serves them, SWITCHYARD_REGION_SERVES_UNPINNED), and a node of no region only unpinned apps. Replication keeps it so (each region has streams of its own); this check covers the
 * one other way data gets into a node, its data dir, e.g. a dir reused after SWITCHYARD_REGION was changed.
 */
import type { AppRecord } from "../tenancy/tenancy-records.js";

/** Why this node must not serve the data dir it was given, or undefined when every app belongs here. */
export function residencyViolation(apps: readonly AppRecord[], region: string | undefined, servesUnpinned = false): string | undefined {
  const foreign = apps.find((app) => app.region !== region && !(servesUnpinned && app.region === undefined));
  if (foreign === undefined) return undefined;
  const where = foreign.region === undefined ? "is not pinned to a region" : `is pinned to region ${foreign.region}`;
  const here =
    region === undefined
      ? "this node has no SWITCHYARD_REGION"
      : foreign.region === undefined
        ? `this node is in region ${region} (SWITCHYARD_REGION) and does not serve unpinned apps (SWITCHYARD_REGION_SERVES_UNPINNED)`
        : `this node is in region ${region} (SWITCHYARD_REGION)`;
  return `SWITCHYARD_REGION: the data dir holds app ${foreign.id}, which ${where}, and ${here}; a node serves only the apps of its own region. Start it with the matching region or an empty data dir.`;
}
