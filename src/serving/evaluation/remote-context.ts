/**
 * Remote context (API.md §3): the stored attributes of the context's user and company fill the context under what
 * the request itself sent (the request wins), as `context.user = {...stored, ...sent}` — a shallow merge, so a
 * top-level attribute the request sent replaces the stored one whole.
 *
 * Two forms of the same merge: on nested contexts (the general path), and on flat field values (the fast path), where
 * a stored attribute fills a field unless the request sent anything under that field's top-level attribute.
 */
import { contextValues, type CompiledRuleset } from "../../evaluation/index.js";
import type { EvaluateJob } from "../protocol.js";
import type { JobContext } from "../job-context.js";
import type { Attributes } from "../../schemas/tracking-fields.js";
import type { TrackingReader } from "../../tracking/index.js";
import { StoredEntity, type EntityKind } from "./stored-entity.js";

/** The stored user or company `id` of the job's environment (null: none stored), through the thread's cache. */
export function storedEntity(jobContext: JobContext, job: EvaluateJob, kind: EntityKind, id: string): StoredEntity | null {
  // Tracking calls commit on another thread: when the main thread says attributes changed since this thread last
  // looked, the read snapshot is renewed first, so what was acknowledged is what evaluation reads.
  if (jobContext.attributeEpochs.get(job.environmentId) !== job.attributeEpoch) {
    jobContext.store.refresh();
    jobContext.attributeEpochs.set(job.environmentId, job.attributeEpoch);
  }
  const kindCache = jobContext.attributes[kind];
  const cache = job.attributeCacheMs > 0 && kindCache.consult() ? kindCache : undefined;
  const cacheKey = cache === undefined ? "" : `${job.environmentId}\u0000${id}`;
  let stored = cache?.get(cacheKey, job.attributeEpoch);
  if (stored === undefined) {
    stored = readStoredEntity(jobContext.tracking, job.environmentId, kind, id);
    cache?.set(cacheKey, job.attributeEpoch, job.attributeCacheMs, stored);
  }
  return stored;
}

/** The flat form stored beside the record when there is one (the record itself is then read only if needed). */
function readStoredEntity(tracking: TrackingReader, environmentId: string, kind: EntityKind, id: string): StoredEntity | null {
  const readAttributes = (): Attributes | undefined =>
    kind === "user" ? tracking.getUserAttributes(environmentId, id) : tracking.getCompanyAttributes(environmentId, id);
  const pairs = tracking.getRemoteContext(environmentId, kind, id);
  if (pairs !== undefined) return StoredEntity.fromRemoteContext(kind, pairs, () => readAttributes() ?? {});
  const attributes = readAttributes();
  return attributes === undefined ? null : StoredEntity.fromAttributes(kind, attributes);
}

function idOf(entity: unknown): string | undefined {
  if (typeof entity !== "object" || entity === null) return undefined;
  const id = (entity as { id?: unknown }).id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** Merges the stored user and company into a nested context; answers whether anything stored was used. */
export function mergeRemoteContext(jobContext: JobContext, job: EvaluateJob, context: Record<string, unknown>): boolean {
  let used = false;
  for (const kind of ["user", "company"] as const) {
    const stored = storedOf(jobContext, job, kind, context[kind]);
    if (stored === null) continue;
    context[kind] = mergedEntity(stored, context[kind]);
    used = true;
  }
  return used;
}

/** A nested context's field values with remote context applied. */
export interface ResolvedContext {
  values: (string | undefined)[];
  remoteContextUsed: boolean;
  /** The stored user and company used (null: none), for the merged context events record (mergedContext). */
  storedUser: StoredEntity | null;
  storedCompany: StoredEntity | null;
}

/** Whether every top-level attribute name flattens to paths under itself alone: not empty, no dots. */
function plainKeys(sent: Record<string, unknown>): boolean {
  for (const key in sent) if (key === "" || key.includes(".")) return false;
  return true;
}

function storedOf(jobContext: JobContext, job: EvaluateJob, kind: EntityKind, sent: unknown): StoredEntity | null {
  const id = idOf(sent);
  return id === undefined ? null : storedEntity(jobContext, job, kind, id);
}

/** Whether the stored entity's flat form can fill the fields the request did not send (see resolveWithRemoteContext). */
function fillsFlat(stored: StoredEntity | null, sent: unknown): boolean {
  return stored === null || (stored.flat !== null && plainKeys(sent as Record<string, unknown>));
}

/**
 * The field values of a nested context (OFREP's) with the stored user and company filled in under what the request
 * sent: the sent context resolved as it is, then each stored entity's flat form fills the fields under attributes
 * the request did not send (fillRemoteFields) — the values the merged context gives, without merging objects per
 * request. When a stored entity is not flat-safe, or the request sent an attribute whose name holds a dot (whose
 * paths may meet a stored attribute's), the merged context decides instead.
 */
export function resolveWithRemoteContext(jobContext: JobContext, job: EvaluateJob, ruleset: CompiledRuleset, context: Record<string, unknown>): ResolvedContext {
  const storedUser = storedOf(jobContext, job, "user", context.user);
  const storedCompany = storedOf(jobContext, job, "company", context.company);
  const remoteContextUsed = storedUser !== null || storedCompany !== null;
  if (!fillsFlat(storedUser, context.user) || !fillsFlat(storedCompany, context.company)) {
    return { values: contextValues(ruleset, mergedContext(context, storedUser, storedCompany)), remoteContextUsed, storedUser, storedCompany };
  }
  const values = contextValues(ruleset, context);
  if (storedUser !== null) fillRemoteFields(values, ruleset, "user", storedUser.flat!, Object.keys(context.user as Record<string, unknown>));
  if (storedCompany !== null) fillRemoteFields(values, ruleset, "company", storedCompany.flat!, Object.keys(context.company as Record<string, unknown>));
  return { values, remoteContextUsed, storedUser, storedCompany };
}

/** A stored user or company with what the request sent under it merged over it: `{...stored, ...sent}`. */
export function mergedEntity(stored: StoredEntity, sent: unknown): Record<string, unknown> {
  return { ...stored.attributes, ...(sent as Record<string, unknown>) };
}

/** The context with the stored attributes merged in under what was sent (mergedEntity for each). */
export function mergedContext(context: Record<string, unknown>, storedUser: StoredEntity | null, storedCompany: StoredEntity | null): Record<string, unknown> {
  const merged = { ...context };
  if (storedUser !== null) merged.user = mergedEntity(storedUser, context.user);
  if (storedCompany !== null) merged.company = mergedEntity(storedCompany, context.company);
  return merged;
}

/** The id of the context's user or company in a nested context, as remote context reads it. */
export function contextEntityId(context: Record<string, unknown>, kind: EntityKind): string | undefined {
  return idOf(context[kind]);
}

/** A ruleset field under `user.` or `company.`, with the top-level attribute it lives under. */
interface RemoteField {
  id: number;
  name: string;
  topKey: string;
}

const remoteFieldsByRuleset = new WeakMap<CompiledRuleset, Record<EntityKind, RemoteField[]>>();

function remoteFields(ruleset: CompiledRuleset): Record<EntityKind, RemoteField[]> {
  let fields = remoteFieldsByRuleset.get(ruleset);
  if (fields === undefined) {
    fields = { user: [], company: [] };
    ruleset.fields.names.forEach((name, id) => {
      for (const kind of ["user", "company"] as const) {
        if (name.length > kind.length + 1 && name.startsWith(kind) && name.charCodeAt(kind.length) === 0x2e) {
          fields![kind].push({ id, name, topKey: topKeyOf(name, kind.length + 1) });
        }
      }
    });
    remoteFieldsByRuleset.set(ruleset, fields);
  }
  return fields;
}

/** The segment of `path` that starts at `from` (the attribute under `user.` / `company.`). */
export function topKeyOf(path: string, from: number): string {
  const dot = path.indexOf(".", from);
  return dot === -1 ? path.slice(from) : path.slice(from, dot);
}

/**
 * Fills the ruleset's `user.*` or `company.*` field values from a stored entity, except those under a top-level
 * attribute the request sent (`sentTopKeys`): what `{...stored, ...sent}` flattens to, for a flat-safe entity.
 */
export function fillRemoteFields(
  values: (string | undefined)[],
  ruleset: CompiledRuleset,
  kind: EntityKind,
  flat: ReadonlyMap<string, string>,
  sentTopKeys: readonly string[],
): void {
  for (const field of remoteFields(ruleset)[kind]) {
    if (!sentTopKeys.includes(field.topKey)) values[field.id] = flat.get(field.name);
  }
}
