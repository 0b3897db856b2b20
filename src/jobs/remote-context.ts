/**
 * Remote context (API.md §3): the stored attributes of the context's user and company fill the context under what
 * the request itself sent (the request wins), as `context.user = {...stored, ...sent}` — a shallow merge, so a
 * top-level attribute the request sent replaces the stored one whole.
 *
 * Two forms of the same merge: on nested contexts (the general path), and on flat field values (the fast path), where
 * a stored attribute fills a field unless the request sent anything under that field's top-level attribute.
 */
import type { CompiledRuleset } from "../evaluation/index.js";
import { flattenContext } from "../evaluation/flatten-context.js";
import type { Attributes } from "../schemas/tracking.js";
import type { EvaluateJob } from "../workers/protocol.js";
import type { JobContext } from "./job-context.js";

export type EntityKind = "user" | "company";

/** A stored user's or company's attributes, with their flattened form once the fast path asked for it. */
export class StoredEntity {
  #flat: Map<string, string> | null | undefined;

  constructor(
    readonly kind: EntityKind,
    readonly attributes: Attributes,
  ) {}

  /**
   * The attributes flattened under `user.` / `company.`, or null when a key somewhere holds "." or is "" (or an
   * object is not a plain one): then two paths can flatten alike, and only the nested merge settles which one wins.
   */
  get flat(): Map<string, string> | null {
    if (this.#flat === undefined) this.#flat = isFlatSafe(this.attributes, 0) ? flattenContext({ [this.kind]: this.attributes }) : null;
    return this.#flat;
  }
}

/** Nesting deeper than flattening follows is left to the nested path. */
const MAX_SAFE_DEPTH = 64;

function isFlatSafe(value: unknown, depth: number): boolean {
  if (typeof value !== "object" || value === null) return true;
  if (depth > MAX_SAFE_DEPTH) return false;
  if (Array.isArray(value)) return value.every((item) => isFlatSafe(item, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return false;
  for (const key of Object.keys(value)) {
    if (key === "" || key.includes(".") || key === "__proto__") return false;
    if (!isFlatSafe((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

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
    const attributes = kind === "user" ? jobContext.tracking.getUserAttributes(job.environmentId, id) : jobContext.tracking.getCompanyAttributes(job.environmentId, id);
    stored = attributes === undefined ? null : new StoredEntity(kind, attributes);
    cache?.set(cacheKey, job.attributeEpoch, job.attributeCacheMs, stored);
  }
  return stored;
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
    const sent = context[kind];
    const id = idOf(sent);
    if (id === undefined) continue;
    const stored = storedEntity(jobContext, job, kind, id);
    if (stored === null) continue;
    context[kind] = { ...stored.attributes, ...(sent as Record<string, unknown>) };
    used = true;
  }
  return used;
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
