/** Sets `key` as the newest entry of `map`, dropping the oldest (a Map iterates in insertion order) past `maxEntries`. */
export function setBounded<V>(map: Map<string, V>, key: string, value: V, maxEntries: number): void {
  map.delete(key);
  if (map.size >= maxEntries) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}
