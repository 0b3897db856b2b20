import type { WebhookDiff } from "./webhook-event.js";

type Container = Record<string, unknown> | unknown[];

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
};

const isContainer = (value: unknown): value is Container => Array.isArray(value) || isPlainObject(value);

/** A key as one segment of a dot path: dots and backslashes inside keys are escaped, so paths read back unambiguously. */
export const pathSegment = (key: string): string => key.replace(/[\\.]/g, (character) => `\\${character}`);

const join = (path: string, key: string): string => (path === "" ? pathSegment(key) : `${path}.${pathSegment(key)}`);

/** Own keys that hold a value (a JSON body has no `undefined`, so a key holding one counts as absent). */
function presentKeys(value: Container): string[] {
  if (Array.isArray(value)) return Array.from({ length: value.length }, (_, index) => String(index));
  return Object.keys(value).filter((key) => value[key] !== undefined);
}

const child = (value: Container, key: string): unknown => (Array.isArray(value) ? value[Number(key)] : value[key]);

/** Leaves compare as JSON would: numbers, strings, booleans, null; anything exotic by its JSON text. */
const sameLeaf = (before: unknown, after: unknown): boolean => before === after || (typeof before === "object" && typeof after === "object" && JSON.stringify(before) === JSON.stringify(after));

/**
 * The paths where `after` differs from `before`, each at the highest point where the difference starts: a key new in
 * `after` is `added` (its subtree is not listed leaf by leaf), a key gone is `removed`, a value replaced (or a type
 * switched, object to array or to a scalar) is `changed`. Paths join keys with dots, array items by index
 * (`rules.0.values.2`); a missing or null side at the top counts as empty, so a creation lists every key as added.
 * Two differing scalars at the top are the one path `""` (which a top-level key `""` would share; records have none).
 */
export function diffOf(before: unknown, after: unknown): WebhookDiff {
  const diff: WebhookDiff = { added: [], removed: [], changed: [] };
  const absent = (value: unknown): boolean => value === undefined || value === null;
  if (absent(before) && isContainer(after)) walk({}, after, "", diff);
  else if (isContainer(before) && absent(after)) walk(before, {}, "", diff);
  else compare(before, after, "", diff);
  return diff;
}

function compare(before: unknown, after: unknown, path: string, diff: WebhookDiff): void {
  if (Array.isArray(before) && Array.isArray(after)) walk(before, after, path, diff);
  else if (isPlainObject(before) && isPlainObject(after)) walk(before, after, path, diff);
  else if (!sameLeaf(before, after)) diff.changed.push(path);
}

function walk(before: Container, after: Container, path: string, diff: WebhookDiff): void {
  const beforeKeys = presentKeys(before);
  const afterKeys = new Set(presentKeys(after));
  for (const key of beforeKeys) {
    if (afterKeys.has(key)) compare(child(before, key), child(after, key), join(path, key), diff);
    else diff.removed.push(join(path, key));
    afterKeys.delete(key);
  }
  for (const key of afterKeys) diff.added.push(join(path, key));
}

/** Splits a dot path back into its keys (the inverse of how `diffOf` writes them). */
export function pathKeys(path: string): string[] {
  if (path === "") return [];
  const keys: string[] = [];
  let current = "";
  for (let index = 0; index < path.length; index += 1) {
    const character = path[index]!;
    if (character === "\\" && index + 1 < path.length) current += path[(index += 1)]!;
    else if (character === ".") {
      keys.push(current);
      current = "";
    } else current += character;
  }
  keys.push(current);
  return keys;
}
