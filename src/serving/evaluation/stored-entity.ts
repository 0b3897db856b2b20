import type { Attributes } from "../../schemas/tracking-fields.js";
import { remoteContextOf, type EntityKind, type RemoteContext } from "../../tracking/remote-contexts.js";

export type { EntityKind };

/**
 * A stored user or company as remote context uses it: the flat form of its attributes for the fast path, the nested
 * attributes for the rest (the nested merge, the context `/features/enabled` records). Either may be read lazily:
 * the fast path reads the flat form stored beside the record and never decodes the record itself.
 */
export class StoredEntity {
  #flat: Map<string, string> | null | undefined;
  #pairs: RemoteContext | undefined;
  #attributes: Attributes | undefined;

  private constructor(
    readonly kind: EntityKind,
    pairs: RemoteContext | undefined,
    attributes: Attributes | undefined,
    private readonly readAttributes: () => Attributes,
  ) {
    this.#pairs = pairs;
    this.#attributes = attributes;
  }

  /** From the stored flat form; the record's attributes are read only if asked for (in the same read snapshot). */
  static fromRemoteContext(kind: EntityKind, pairs: RemoteContext, readAttributes: () => Attributes): StoredEntity {
    return new StoredEntity(kind, pairs, undefined, readAttributes);
  }

  /** From the record's attributes (no flat form stored beside it). */
  static fromAttributes(kind: EntityKind, attributes: Attributes): StoredEntity {
    return new StoredEntity(kind, undefined, attributes, () => attributes);
  }

  get attributes(): Attributes {
    this.#attributes ??= this.readAttributes();
    return this.#attributes;
  }

  /** The attributes flattened under `user.` / `company.`, or null when they are not flat-safe (see RemoteContext). */
  get flat(): Map<string, string> | null {
    if (this.#flat === undefined) {
      const pairs = this.#pairs ?? remoteContextOf(this.kind, this.attributes);
      if (pairs === false) this.#flat = null;
      else {
        const flat = new Map<string, string>();
        for (let index = 0; index < pairs.length; index += 2) flat.set(pairs[index]!, pairs[index + 1]!);
        this.#flat = flat;
      }
    }
    return this.#flat;
  }
}
