/**
 * Context flattening, identical to the reference `flattenJSON`: nested keys joined with ".", array items by index,
 * primitives stringified, null and empty objects or arrays as "", undefined left out.
 */

/**
 * Flattens `context` into dotted paths → string values.
 *
 * The reference fills a plain `{}`; a Map gives the same entries without the prototype's members looking like fields.
 * The one place the two differ is the key "__proto__": the reference's assignment to it is swallowed by the
 * prototype setter, so it is left out here too.
 */
export function flattenContext(context: Record<string, unknown>): Map<string, string> {
  const flat = new Map<string, string>();
  // Quirk kept from the reference: an empty top-level object gives no entry, where an empty nested one gives "".
  if (Object.keys(context).length === 0) return flat;
  flattenInto(flat, context, "", 0);
  return flat;
}

/**
 * Evaluation must not throw, and a context may come from stored attributes of any shape: values nested deeper than
 * this (or a cycle) are left out instead of overflowing the stack. The request parser allows 16 levels.
 */
export const MAX_CONTEXT_DEPTH = 256;

function flattenInto(flat: Map<string, string>, value: unknown, path: string, depth: number): void {
  if (value === undefined || depth > MAX_CONTEXT_DEPTH) return;
  if (value === null) {
    store(flat, path, "");
  } else if (typeof value !== "object") {
    store(flat, path, String(value));
  } else if (Array.isArray(value)) {
    if (value.length === 0) store(flat, path, "");
    for (let index = 0; index < value.length; index++) {
      // `path ? … : …` (not `path !== ""`) mirrors the reference, so a "" key at the top level contributes no dot.
      flattenInto(flat, value[index], path ? `${path}.${index}` : `${index}`, depth + 1);
    }
  } else {
    let isEmpty = true;
    // for…in, like the reference, so that the enumeration order (and so which of two colliding paths wins) matches.
    for (const key in value) {
      isEmpty = false;
      flattenInto(flat, (value as Record<string, unknown>)[key], path ? `${path}.${key}` : key, depth + 1);
    }
    if (isEmpty) store(flat, path, "");
  }
}

function store(flat: Map<string, string>, path: string, value: string): void {
  if (path !== "__proto__") flat.set(path, value);
}

/**
 * A set of field paths as resolveFields walks them: one node per path that is the whole of a field or the part of
 * one before a ".", the root standing for the path "". A node's children are keyed by what flattening appends to its
 * path for a child (a key or an index; with the "." that joins it, except below a "" path), so that a child's node is
 * found without building the child's path.
 */
export interface FieldTrie {
  /** The field this node's path is, when it is one flattenContext can hold ("__proto__" it leaves out). */
  readonly field: string | undefined;
  readonly children: Map<string, FieldTrie>;
}

/** The trie of `fields`. */
export function fieldTrie(fields: Iterable<string>): FieldTrie {
  const wanted = new Set(fields);
  // Every path below which (or at which) flattening can produce a wanted field: the field and its parts before a ".".
  const paths = new Set<string>([""]);
  for (const field of wanted) {
    for (let index = field.indexOf("."); index !== -1; index = field.indexOf(".", index + 1)) {
      paths.add(field.slice(0, index));
    }
    paths.add(field);
  }
  const nodes = new Map<string, FieldTrie>();
  for (const path of paths) {
    nodes.set(path, { field: wanted.has(path) && path !== "__proto__" ? path : undefined, children: new Map() });
  }
  const root = nodes.get("") as FieldTrie;
  for (const [path, node] of nodes) {
    // Below "" a child's path is its key alone (so the root's "" key leads back to the root) …
    root.children.set(path, node);
    // … and below any other path `${parent}.${key}`, where the key may itself hold dots.
    for (let index = path.indexOf(".", 1); index !== -1; index = path.indexOf(".", index + 1)) {
      nodes.get(path.slice(0, index))?.children.set(path.slice(index + 1), node);
    }
  }
  return root;
}

/**
 * The entries of `flattenContext(context)` for the fields of `trie`, and no others: the same walk (so the same reads,
 * in the same order, the same depth limit and the same errors), but a path is followed in the trie instead of built,
 * and values are only kept at the trie's fields. Later values overwrite earlier ones at a field, as in flattening.
 */
export function resolveFields(trie: FieldTrie, context: Record<string, unknown>): Map<string, string> {
  const flat = new Map<string, string>();
  if (Object.keys(context).length === 0) return flat;
  resolveInto(flat, context, trie, 0);
  return flat;
}

function resolveInto(flat: Map<string, string>, value: unknown, node: FieldTrie | undefined, depth: number): void {
  if (value === undefined || depth > MAX_CONTEXT_DEPTH) return;
  const field = node === undefined ? undefined : node.field;
  if (value === null) {
    if (field !== undefined) flat.set(field, "");
  } else if (typeof value !== "object") {
    // String() of a function may run its own toString (and throw), so it runs wherever flattening would run it.
    if (field !== undefined) flat.set(field, String(value));
    else if (typeof value === "function") String(value);
  } else if (Array.isArray(value)) {
    if (value.length === 0 && field !== undefined) flat.set(field, "");
    for (let index = 0; index < value.length; index++) {
      resolveInto(flat, value[index], node === undefined ? undefined : node.children.get(`${index}`), depth + 1);
    }
  } else {
    let isEmpty = true;
    for (const key in value) {
      isEmpty = false;
      resolveInto(flat, (value as Record<string, unknown>)[key], node === undefined ? undefined : node.children.get(key), depth + 1);
    }
    if (isEmpty && field !== undefined) flat.set(field, "");
  }
}
