/**
 * A feature's targeting with its segment references inlined, prepared before anything is written (a refused change
 * must write nothing: the store commits whatever its transaction wrote) and then saved.
 */
import type { HistoryLink } from "../features/feature-records.js";
import type { ApplyContext } from "./apply-context.js";
import type { PreparedTargeting, SegmentLookup } from "./segments/inline.js";

/** The segments of an app as stored, or with `override` in place of one of them (a change about to write it). */
export function segmentLookup(context: ApplyContext, appId: string, override?: { id: string; filter: unknown }): SegmentLookup {
  return (segmentId) => (override && segmentId === override.id ? override : context.segments.getSegment(appId, segmentId));
}

/** Saves prepared targeting as the feature's new version in one environment (which must hold the feature). */
export function saveTargeting(
  context: ApplyContext,
  environmentId: string,
  featureKey: string,
  prepared: Extract<PreparedTargeting, { ok: true }>,
  at: string,
  link: HistoryLink,
): { version: number; flagStateVersion: number } {
  const written = context.features.writeRules(environmentId, featureKey, "targeting", prepared.served, at, link, prepared.segmentRules)!;
  return { version: written.state.targeting.version, flagStateVersion: written.flagStateVersion };
}
