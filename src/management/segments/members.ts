/** A segment's member companies in one environment: stored companies, in id order, whose attributes match. */
import { compileRuleset, evaluateRuleset } from "../../evaluation/index.js";
import type { FeatureDefinition } from "../../evaluation/index.js";
import { key, lastKeyPart, prefixRange, type KvStore } from "../../storage/kv.js";
import type { CompanyRecord } from "../../tracking/tracking-records.js";
import { inlineSegments } from "./inline.js";
import type { SegmentRecord } from "./segment-records.js";

/** Companies looked at per page at most: a page may hold fewer members than `limit`; `next` then goes on. */
export const MAX_SCANNED_PER_PAGE = 10_000;

export interface MembersPage {
  companies: { id: string; attributes: Record<string, unknown>; firstSeen: string; lastSeen: string | null }[];
  /** The `after` of the next page (a company id); null once every stored company was looked at. */
  next: string | null;
  scanned: number;
}

/**
 * Pages through the environment's stored companies after `after`, evaluating the segment (inlined) with the same
 * evaluator as the SDK answers, against `{company: {id, ...attributes}}`. Stops at `limit` members or after
 * MAX_SCANNED_PER_PAGE companies, whichever comes first.
 */
export function segmentMembers(
  store: KvStore,
  environmentId: string,
  segment: SegmentRecord,
  lookup: (segmentId: string) => SegmentRecord | undefined,
  after: string | undefined,
  limit: number,
): MembersPage {
  const inlined = inlineSegments(segment.filter, lookup);
  if (!inlined.ok) throw new Error(`stored segment ${segment.id} does not inline: ${inlined.message}`);
  const definition = { key: `segment:${segment.id}`, stage: null, targeting: { version: 1, rules: [{ filter: inlined.value }] }, config: { version: 0, variants: [] } } as unknown as FeatureDefinition;
  const ruleset = compileRuleset([definition]);
  const range = prefixRange(environmentId);
  const start = after === undefined ? range.start : `${key(environmentId, after)}\u0000`;
  const companies: MembersPage["companies"] = [];
  let scanned = 0;
  let last: string | undefined;
  let exhausted = true;
  for (const entry of store.table("companies").range({ start, end: range.end })) {
    if (companies.length >= limit || scanned >= MAX_SCANNED_PER_PAGE) {
      exhausted = false;
      break;
    }
    scanned++;
    last = lastKeyPart(entry.key);
    const company = entry.value;
    const [result] = evaluateRuleset(ruleset, { company: { ...company.attributes, id: company.id } });
    if (result?.isEnabled) {
      companies.push({
        id: company.id,
        attributes: company.attributes,
        firstSeen: new Date(company.firstSeen).toISOString(),
        lastSeen: company.lastSeen === null ? null : new Date(company.lastSeen).toISOString(),
      });
    }
  }
  return { companies, next: exhausted ? null : (last ?? after ?? null), scanned };
}
