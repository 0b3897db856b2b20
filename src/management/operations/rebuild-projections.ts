import { createHash } from "node:crypto";
import { forgetKnownExposures } from "../../analytics/aggregate-writer.js";
import { aggregateRanges } from "../../analytics/keys.js";
import type { ServiceError } from "../../errors/catalogue.js";
import type { KvStore, RangeOptions, TableName } from "../../storage/kv.js";
import { packValue } from "../../storage/value-encoding.js";
import { TenancyRepository } from "../../tenancy/tenancy-repository.js";
import { projectNextRecords } from "../../tracking/projector.js";
import type { TrackingProjections } from "../../tracking/projections.js";
import { dataPredatesLog, lastAppended, setProjectedUpTo, trackingLogRecords } from "../../tracking/tracking-log-table.js";

/**
 * Everything projected from the tracking log, as (table, ranges) the rebuild clears and the check compares: the
 * tracking tables whole; in `counters` only the event logs' sequence counters (the audit log keeps its own there);
 * in `aggregates` only the cells (an environment's analytics settings are configuration). Survey prompt state is
 * left out: prompts are issued by the service, the log only marks them done (idempotently).
 */
const WHOLE_TABLES: TableName[] = ["users", "companies", "memberships", "events", "featureEvents", "feedback", "promptEvents", "entityUpdates", "remoteContexts", "rolloutUnits", "rolloutTallies"];
const SEQUENCE_COUNTER = /^[^\u0000]+\u0000seq\u0000(events|featureEvents|promptEvents|feedback|entityUpdates)$/;

interface ProjectedPart {
  name: string;
  table: TableName;
  range: RangeOptions;
  keep?: (key: string) => boolean;
}

function projectedParts(store: KvStore): ProjectedPart[] {
  const environments = new Set(new TenancyRepository(store).listEnvironments().map((environment) => environment.id));
  for (const record of trackingLogRecords(store, 0)) for (const request of record.requests) environments.add(request.environmentId);
  const parts: ProjectedPart[] = WHOLE_TABLES.map((table) => ({ name: table, table, range: {} }));
  parts.push({ name: "counters", table: "counters", range: {}, keep: (key) => SEQUENCE_COUNTER.test(key) });
  for (const environmentId of [...environments].sort()) {
    for (const range of aggregateRanges(environmentId)) parts.push({ name: `aggregates ${environmentId}`, table: "aggregates", range });
  }
  return parts;
}

function* entriesOf(store: KvStore, part: ProjectedPart): Generator<{ key: string; value: unknown }> {
  for (const entry of store.table(part.table).range(part.range)) if (part.keep === undefined || part.keep(entry.key)) yield entry;
}

/** Per projected part: entries and a digest of their keys and values, in key order. */
function fingerprint(store: KvStore): Map<string, { entries: number; digest: string }> {
  const prints = new Map<string, { entries: number; digest: string }>();
  for (const part of projectedParts(store)) {
    const hash = createHash("sha256");
    let entries = 0;
    for (const entry of entriesOf(store, part)) {
      hash.update(entry.key).update("\u0000").update(packValue(entry.value));
      entries++;
    }
    const previous = prints.get(part.name);
    // An environment's several aggregate ranges add up under one name.
    prints.set(part.name, previous === undefined ? { entries, digest: hash.digest("hex") } : { entries: previous.entries + entries, digest: createHash("sha256").update(previous.digest).update(hash.digest("hex")).digest("hex") });
  }
  return prints;
}

/** Items projected per step of a rebuild (all steps in one transaction): bounds what is held in memory at once. */
const REBUILD_STEP_ITEMS = 50_000;

export interface RebuildReport {
  /** Log records and requests projected by the rebuild. */
  records: number;
  requests: number;
  items: number;
  /** Logged feedback dropped because its feature is gone (as the live projection drops it). */
  dropped: number;
}

/** Inside a write: clears what is projected and projects the whole log again; answers what it did. */
function rebuildNow(store: KvStore, projections: TrackingProjections): RebuildReport {
  for (const part of projectedParts(store)) {
    const stale = Array.from(entriesOf(store, part), (entry) => entry.key);
    const table = store.table(part.table);
    for (const key of stale) table.remove(key);
  }
  // The cells are gone: none may be taken for present from before (the rebuild writes each again).
  forgetKnownExposures(store);
  setProjectedUpTo(store, 0);
  const report: RebuildReport = { records: 0, requests: 0, items: 0, dropped: 0 };
  const onDropped = (_error: ServiceError) => report.dropped++;
  const end = lastAppended(store);
  for (;;) {
    const step = projectNextRecords(store, REBUILD_STEP_ITEMS, onDropped, projections);
    report.records += step.records;
    report.requests += step.requests;
    report.items += step.items;
    if (step.records === 0 || step.position >= end) return report;
  }
}

function refuseDataBeforeLog(store: KvStore): void {
  if (dataPredatesLog(store)) {
    throw new Error("This data dir held users, companies or events before its tracking log began (a release before log-first tracking): a rebuild from the log would lose them, so it is refused.");
  }
}

/**
 * `switchyard projections rebuild`: replaces everything projected from the tracking log with a projection of the
 * whole log, in one transaction (readers see the old state or the new one, never a mix).
 */
export async function rebuildProjections(store: KvStore, projections: TrackingProjections): Promise<RebuildReport> {
  refuseDataBeforeLog(store);
  try {
    return await store.write(() => rebuildNow(store, projections));
  } finally {
    forgetKnownExposures(store);
  }
}

export interface VerifyReport extends RebuildReport {
  equal: boolean;
  /** The parts whose stored state differs from a rebuild, with entry counts stored → rebuilt. */
  differences: { part: string; stored: number; rebuilt: number }[];
}

class RolledBack extends Error {
  constructor(readonly report: VerifyReport) {
    super("rolled back");
  }
}

/**
 * `switchyard projections verify`: whether the projected state equals a rebuild from the log. The rebuild runs in a
 * transaction that is then rolled back, so the data dir is left as it was. Projects any unprojected tail first
 * (as the service would), so that a data dir stopped with a backlog compares what it will serve.
 */
export async function verifyProjections(store: KvStore, projections: TrackingProjections): Promise<VerifyReport> {
  refuseDataBeforeLog(store);
  const onDropped = () => undefined;
  await store.write(() => {
    while (projectNextRecords(store, REBUILD_STEP_ITEMS, onDropped, projections).records > 0);
  });
  try {
    await store.write(() => {
      const stored = fingerprint(store);
      const rebuilt = rebuildNow(store, projections);
      const after = fingerprint(store);
      const differences: VerifyReport["differences"] = [];
      for (const name of new Set([...stored.keys(), ...after.keys()])) {
        const before = stored.get(name) ?? { entries: 0, digest: "" };
        const now = after.get(name) ?? { entries: 0, digest: "" };
        if (before.entries === 0 && now.entries === 0) continue;
        if (before.digest !== now.digest) differences.push({ part: name, stored: before.entries, rebuilt: now.entries });
      }
      throw new RolledBack({ ...rebuilt, equal: differences.length === 0, differences });
    });
  } catch (error) {
    if (error instanceof RolledBack) return error.report;
    throw error;
  } finally {
    // The rolled-back rebuild read cells it had written itself.
    forgetKnownExposures(store);
  }
  throw new Error("unreachable: the check always rolls back");
}
