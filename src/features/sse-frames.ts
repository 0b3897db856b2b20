/**
 * The Server-Sent Events frames of API.md §5. The SDKs split the stream on blank lines and read `data:` lines of the
 * default `message` event (the Reflag node SDK ignores any other event name), so every frame is one block ending in
 * `\n\n`, and the payload is one line of JSON.
 */

/** Sent first on every stream, so that proxies and clients see bytes at once. */
export const CONNECTED_COMMENT = ": connected\n\n";

/** Sent on every stream each keep-alive interval; comment lines are ignored by every SSE parser. */
export const KEEP_ALIVE_COMMENT = ": keep-alive\n\n";

/**
 * The frame announcing a new flagStateVersion: a default `message` event whose data is
 * `{"name":"flags-updated","data":{"flagStateVersion":N}}` — what the Reflag node SDK (`flag-updates-sse.js`) and
 * browser SDK (`handlePubSubMessage`) parse.
 */
export function flagsUpdatedFrame(flagStateVersion: number): string {
  return `data: {"name":"flags-updated","data":{"flagStateVersion":${flagStateVersion}}}\n\n`;
}

/**
 * The OFREP frame (API.md §14): `@openfeature/ofrep-web-provider` refetches its bulk evaluation on a
 * `refetchEvaluation` message, and sends `etag` back as the `flagConfigEtag` query parameter (which we ignore).
 */
export function refetchEvaluationFrame(flagStateVersion: number): string {
  return `data: {"type":"refetchEvaluation","etag":"${flagStateVersion}"}\n\n`;
}
