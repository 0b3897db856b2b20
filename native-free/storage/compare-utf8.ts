/**
 * Compares two strings by their UTF-8 bytes (LMDB's key order) without encoding them.
 *
 * JavaScript's own `<` compares UTF-16 code units, which agrees with UTF-8 byte order everywhere except one place:
 * a surrogate (U+D800–U+DFFF, half of a code point above U+FFFF) sorts below U+E000–U+FFFF in UTF-16 but above
 * them in UTF-8. So compare code units, and fix up only that case at the first difference. Keys must be
 * well-formed Unicode (no lone surrogates), as they must for LMDB, whose encoder replaces lone ones.
 */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const length = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      const xIsSurrogate = x <= 0xdfff;
      if (xIsSurrogate !== y <= 0xdfff) return xIsSurrogate ? 1 : -1;
    }
    return x - y;
  }
  return a.length - b.length;
}
