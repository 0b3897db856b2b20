/**
 * How both front ends answer a body over its route's limit (RFC 9112 §9.6, closing in stages): the rest of the body
 * is read and thrown away, up to a bound, and only then is the 413 sent with `connection: close`. A client that is
 * still writing when the server closes gets EPIPE or a reset and never reads its answer (Node's `http` client among
 * them); one whose body has been read cannot miss it. Nothing of a discarded body is kept, so memory does not grow
 * with it. Past the bound (a declared length further over, more bytes than that, or a client too slow), the 413 is
 * sent at once and the connection closed: such a client may see the reset instead. docs/RELIABILITY.md documents it.
 */

/** Bytes past the route's limit that are still read and discarded before the 413. */
export const OVER_LIMIT_DRAIN_BYTES = 32 * 1024 * 1024;

import type { FrontEndLimits } from "./types.js";

/** How long, from the moment a body is known to be over its limit, the rest of it may take to arrive (default). */
const OVER_LIMIT_DRAIN_MS = 5_000;

/** The drain time a front end runs with: its limits' (tests shorten it), else the default. */
export function drainTime(limits: FrontEndLimits): number {
  return limits.overLimitDrainMs ?? OVER_LIMIT_DRAIN_MS;
}

/** The most bytes of a body over `bodyLimit` that are read before answering. */
export function drainBound(bodyLimit: number): number {
  return bodyLimit + OVER_LIMIT_DRAIN_BYTES;
}

/** Whether a declared Content-Length over the limit is small enough to be read and discarded before the 413. */
export function drainsDeclaredLength(contentLength: number, bodyLimit: number): boolean {
  return Number.isFinite(contentLength) && contentLength <= drainBound(bodyLimit);
}
