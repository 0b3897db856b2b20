import { ServiceError } from "../errors/catalogue.js";

/** `limit` when a list request names none. */
export const DEFAULT_LIST_LIMIT = 100;
/** The largest page a list request gets; a larger `limit` is lowered to this. */
export const MAX_LIST_LIMIT = 1000;

const CURSOR = /^(?:0|[1-9][0-9]{0,15})$/;

/**
 * Cursors are the sequence number of the item in its log, as decimal text. Clients must treat them as opaque; the
 * encoding is private so that it may change (old cursors would then be refused with INVALID_QUERY, not misread).
 */
export function encodeCursor(sequence: number): string {
  return String(sequence);
}

/** The sequence number a cursor stands for; 0 (before everything) when there is none. */
export function decodeCursor(after: string | undefined): number {
  if (after === undefined) return 0;
  const sequence = CURSOR.test(after) ? Number(after) : Number.NaN;
  if (!Number.isSafeInteger(sequence)) {
    throw new ServiceError("INVALID_QUERY", "`after` is not a cursor this service issued.", [
      { path: "after", message: "must be a cursor returned by an earlier page" },
    ]);
  }
  return sequence;
}

/** A page size: a positive integer, lowered to MAX_LIST_LIMIT. */
export function checkListLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ServiceError("INVALID_QUERY", "`limit` must be a positive integer.", [
      { path: "limit", message: `must be an integer from 1 to ${MAX_LIST_LIMIT}` },
    ]);
  }
  return Math.min(limit, MAX_LIST_LIMIT);
}

/** Reads `after` and `limit` from query parameters (absent → undefined / DEFAULT_LIST_LIMIT). */
export function parseListQuery(after: string | null | undefined, limit: string | null | undefined): { after: string | undefined; limit: number } {
  const afterCursor = after ?? undefined;
  if (afterCursor !== undefined) decodeCursor(afterCursor);
  if (limit === null || limit === undefined || limit === "") return { after: afterCursor, limit: DEFAULT_LIST_LIMIT };
  return { after: afterCursor, limit: checkListLimit(/^[0-9]{1,10}$/.test(limit) ? Number(limit) : Number.NaN) };
}
