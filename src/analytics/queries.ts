import { displayName, type FeatureRecord } from "../features/feature-records.js";
import { key, lastKeyPart, prefixRange, type KvStore, type KvTable } from "../storage/kv.js";
import { cellPrefix, dayKeyPart, isAggregatableName, parseCellKey, type CellKind, type SatisfactionCell, type UsageCell } from "./keys.js";
import { adoptionState, NO_USAGE, satisfactionOf, type AdoptionState, type Satisfaction, type WindowUsage } from "./states.js";
import type { AnalyticsWindow } from "./window.js";

/** `GET …/analytics/features` → `features[]`. */
export interface FeatureSummary {
  key: string;
  /** The feature's display name (its key when it has none). */
  name: string;
  companies: Record<AdoptionState | "adopted", number>;
  satisfaction: Satisfaction;
  exposure: { companies: number };
}

/** One company's standing with one feature (`…/features/:key/companies` and `…/companies/:companyId`). */
export interface CompanyStanding {
  state: AdoptionState;
  usageDays: number;
  lastUsedAt: string | null;
  satisfaction: Satisfaction;
}

export type FeatureCompanyRow = { companyId: string } & CompanyStanding;
export type CompanyFeatureRow = { key: string; name: string } & CompanyStanding;

export interface FeatureCompaniesPage {
  companies: FeatureCompanyRow[];
  /** The `after` of the next page; null when this page reached the last company. */
  next: string | null;
}

/** Which companies' cells a read covers: every one, a contiguous run in id order, or one. */
type CompanySelection = { kind: "all" } | { kind: "between"; first: string; last: string } | { kind: "one"; companyId: string };
const ALL_COMPANIES: CompanySelection = { kind: "all" };

/**
 * Per company (by its index in the companies being read): distinct days with usage of one feature, the last day
 * counted (so that a second event name on the same day is not counted again) and the latest usage time.
 */
interface UsageColumns {
  days: Uint32Array;
  lastDay: Float64Array;
  lastAt: Float64Array;
}

/** The event names that count as usage of a feature: its key and its `usageEvents`, each once. */
export function usageNames(feature: Pick<FeatureRecord, "key" | "usageEvents">): string[] {
  return [...new Set([feature.key, ...feature.usageEvents])].filter(isAggregatableName);
}

/**
 * The analytics read side (docs/ANALYTICS.md). Everything is answered from the aggregates: a query reads one cell
 * per (event name or feature, company, day) in its window, never an event.
 */
export class AnalyticsQueries {
  private readonly aggregates: KvTable<unknown>;

  constructor(private readonly store: KvStore) {
    this.aggregates = store.table("aggregates");
  }

  /** Adoption, satisfaction and exposure of each feature over every company of the environment. */
  featureSummaries(environmentId: string, features: readonly FeatureRecord[], window: AnalyticsWindow, retentionDays: number): FeatureSummary[] {
    const companyIds = this.companyIds(environmentId);
    const usage = this.usageColumns(environmentId, features, window, ALL_COMPANIES, indexOf(companyIds));
    return features.map((feature, index) => {
      const counts = { none: 0, tried: 0, retained: 0, churned: 0, adopted: 0 };
      for (let company = 0; company < companyIds.length; company++) counts[adoptionState(windowUsage(usage[index]!, company), retentionDays, window)]++;
      counts.adopted = counts.retained + counts.churned;
      let scored = 0;
      let sum = 0;
      this.forEachCell<SatisfactionCell>(environmentId, "s", feature.key, window.fromDay, window.toDay, ALL_COMPANIES, (_, cell) => {
        scored += cell[0];
        sum += cell[1];
      });
      const exposed = new Set<string>();
      this.forEachCell(environmentId, "x", feature.key, window.fromDay, window.toDay, ALL_COMPANIES, (companyId) => exposed.add(companyId));
      return { key: feature.key, name: displayName(feature), companies: counts, satisfaction: satisfactionOf(scored, sum), exposure: { companies: exposed.size } };
    });
  }

  /** Every company of the environment (a page of them, in companyId order) with its standing with one feature. */
  featureCompanies(
    environmentId: string,
    feature: FeatureRecord,
    window: AnalyticsWindow,
    retentionDays: number,
    after: string | undefined,
    limit: number,
  ): FeatureCompaniesPage {
    const { companyIds, more } = this.companyPage(environmentId, after, limit);
    const first = companyIds[0];
    const last = companyIds.at(-1);
    if (first === undefined || last === undefined) return { companies: [], next: null };
    const selection: CompanySelection = { kind: "between", first, last };
    const [usage] = this.usageColumns(environmentId, [feature], window, selection, indexOf(companyIds));
    const satisfaction = this.satisfactionByCompany(environmentId, feature.key, window, selection);
    return {
      companies: companyIds.map((companyId, company) => ({
        companyId,
        ...standing(windowUsage(usage!, company), satisfaction.get(companyId), retentionDays, window),
      })),
      next: more ? last : null,
    };
  }

  /** One company's standing with each feature. */
  companyFeatures(environmentId: string, companyId: string, features: readonly FeatureRecord[], window: AnalyticsWindow, retentionDays: number): CompanyFeatureRow[] {
    const selection: CompanySelection = { kind: "one", companyId };
    const usage = this.usageColumns(environmentId, features, window, selection, indexOf([companyId]));
    return features.map((feature, index) => {
      const satisfaction = this.satisfactionByCompany(environmentId, feature.key, window, selection);
      return { key: feature.key, name: displayName(feature), ...standing(windowUsage(usage[index]!, 0), satisfaction.get(companyId), retentionDays, window) };
    });
  }

  /** Every company id of the environment, in id order. */
  private companyIds(environmentId: string): string[] {
    const companyIds: string[] = [];
    for (const entry of this.store.table("companies").range(prefixRange(environmentId))) companyIds.push(lastKeyPart(entry.key));
    return companyIds;
  }

  /**
   * Per feature (in the order given), per company of `companies`: distinct days with usage and the latest usage.
   * Reads day by day, and each event name once per day whichever features share it, so a company's days arrive in
   * order and a day on which it sent two of a feature's names is counted once, with no per-company set of days.
   * Usage cells only ever name companies that exist (ingestion upserts the company in the same transaction).
   */
  private usageColumns(
    environmentId: string,
    features: readonly FeatureRecord[],
    window: AnalyticsWindow,
    selection: CompanySelection,
    companies: ReadonlyMap<string, number>,
  ): UsageColumns[] {
    const columns = features.map(
      (): UsageColumns => ({
        days: new Uint32Array(companies.size),
        lastDay: new Float64Array(companies.size).fill(Number.NaN),
        lastAt: new Float64Array(companies.size).fill(Number.NEGATIVE_INFINITY),
      }),
    );
    const targetsByName = new Map<string, UsageColumns[]>();
    features.forEach((feature, index) => {
      for (const name of usageNames(feature)) targetsByName.set(name, [...(targetsByName.get(name) ?? []), columns[index]!]);
    });
    for (let day = window.fromDay; day < window.toDay; day++) {
      for (const [name, targets] of targetsByName) {
        this.forEachCell<UsageCell>(environmentId, "u", name, day, day + 1, selection, (companyId, cell) => {
          const company = companies.get(companyId);
          if (company === undefined) return;
          for (const target of targets) {
            if (target.lastDay[company] !== day) {
              target.days[company]!++;
              target.lastDay[company] = day;
            }
            if (cell[1] > target.lastAt[company]!) target.lastAt[company] = cell[1];
          }
        });
      }
    }
    return columns;
  }

  private satisfactionByCompany(environmentId: string, featureKey: string, window: AnalyticsWindow, selection: CompanySelection): Map<string, SatisfactionCell> {
    const byCompany = new Map<string, SatisfactionCell>();
    this.forEachCell<SatisfactionCell>(environmentId, "s", featureKey, window.fromDay, window.toDay, selection, (companyId, cell) => {
      const known = byCompany.get(companyId);
      byCompany.set(companyId, known ? [known[0] + cell[0], known[1] + cell[1]] : [cell[0], cell[1]]);
    });
    return byCompany;
  }

  /**
   * Visits the cells of one subject on days `[fromDay, toDay)`, in day order. All companies: one key range. A run of
   * companies: one range per day (cells are day-first, so a day's run is contiguous). One company: a read per day.
   */
  private forEachCell<V>(
    environmentId: string,
    kind: CellKind,
    subject: string,
    fromDay: number,
    toDay: number,
    selection: CompanySelection,
    visit: (companyId: string, cell: V, day: number) => void,
  ): void {
    const prefix = cellPrefix(environmentId, kind, subject);
    const table = this.aggregates as KvTable<V>;
    if (selection.kind === "all") {
      for (const entry of table.range({ start: prefix + dayKeyPart(fromDay), end: prefix + dayKeyPart(toDay) })) {
        const { day, companyId } = parseCellKey(prefix, entry.key);
        visit(companyId, entry.value, day);
      }
      return;
    }
    for (let day = fromDay; day < toDay; day++) {
      const dayPrefix = prefix + dayKeyPart(day);
      if (selection.kind === "one") {
        const cell = table.get(key(dayPrefix, selection.companyId));
        if (cell !== undefined) visit(selection.companyId, cell, day);
        continue;
      }
      // Company ids hold no U+0000, so `last␀` is the first key after every cell of `last`.
      for (const entry of table.range({ start: key(dayPrefix, selection.first), end: `${key(dayPrefix, selection.last)}\u0000` })) {
        visit(lastKeyPart(entry.key), entry.value, day);
      }
    }
  }

  /** Up to `limit` company ids after `after`, in id order, and whether more follow. */
  private companyPage(environmentId: string, after: string | undefined, limit: number): { companyIds: string[]; more: boolean } {
    const range = prefixRange(environmentId);
    const start = after === undefined ? range.start : `${key(environmentId, after)}\u0000`;
    const companyIds: string[] = [];
    for (const entry of this.store.table("companies").range({ start, end: range.end, limit: limit + 1 })) companyIds.push(lastKeyPart(entry.key));
    const more = companyIds.length > limit;
    if (more) companyIds.pop();
    return { companyIds, more };
  }
}

/** Each id's position. */
function indexOf(companyIds: readonly string[]): Map<string, number> {
  return new Map(companyIds.map((companyId, index) => [companyId, index]));
}

function windowUsage(columns: UsageColumns, company: number): WindowUsage {
  const days = columns.days[company]!;
  return days === 0 ? NO_USAGE : { usageDays: days, lastUsedAt: columns.lastAt[company]! };
}

function standing(usage: WindowUsage, satisfaction: SatisfactionCell | undefined, retentionDays: number, window: AnalyticsWindow): CompanyStanding {
  return {
    state: adoptionState(usage, retentionDays, window),
    usageDays: usage.usageDays,
    lastUsedAt: usage.lastUsedAt === null ? null : new Date(usage.lastUsedAt).toISOString(),
    satisfaction: satisfactionOf(satisfaction?.[0] ?? 0, satisfaction?.[1] ?? 0),
  };
}
