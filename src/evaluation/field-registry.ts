/**
 * The context fields a compiled ruleset reads, each given a small integer id when first compiled. Evaluation holds a
 * context as an array of values indexed by id, so a compiled filter reads its field with an array load instead of a
 * string-keyed lookup, and a missing field is reported as an id (its JSON text is written once per ruleset).
 */
export class FieldRegistry {
  readonly ids = new Map<string, number>();
  readonly names: string[] = [];

  /** The id of `field`, registering it on first sight. */
  idOf(field: string): number {
    let id = this.ids.get(field);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(field);
      this.ids.set(field, id);
    }
    return id;
  }

  get size(): number {
    return this.names.length;
  }

  /** The values of every registered field in a flattened context (undefined where absent), indexed by id. */
  valuesOf(flat: ReadonlyMap<string, string>): (string | undefined)[] {
    return this.names.map((name) => flat.get(name));
  }
}
