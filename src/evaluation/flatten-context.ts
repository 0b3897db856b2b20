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
