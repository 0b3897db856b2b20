import { flattenContext } from "../evaluation/flatten-context.js";
import type { Attributes } from "../schemas/tracking-fields.js";

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
