/**
 * The soak's three kinds of traffic, built the same way in whichever process sends them (see stream-process.ts):
 * closures cannot cross a process boundary, so a stream travels as its kind, its keys and where its numbering starts.
 */
import { bulkMixedBody, eventBody, trafficQueries } from "./fixtures.js";
import { getStream, postStream, type Stream } from "./load-streams.js";
import type { StreamSpec } from "./stream-spec.js";

export const BULK_ITEMS = 50;

/** The stream a spec names. */
export function streamOf(spec: StreamSpec): Stream {
  const secret = { authorization: `Bearer ${spec.secretKey}` };
  switch (spec.kind) {
    case "evaluation": {
      const paths = trafficQueries().map((query) => `/features/evaluated?${query}`);
      return getStream("evaluation", paths, { authorization: `Bearer ${spec.publishableKey}` }, 16);
    }
    case "event":
      // Distinct users (a new id every call), as browsers and backends send them.
      return postStream("event", "/event", secret, (sequence) => JSON.stringify({ ...eventBody(spec.sequenceStart + sequence), userId: `soak-u${spec.sequenceStart + sequence}` }), 16);
    case "bulk":
      return postStream("bulk", "/bulk", secret, (sequence) => JSON.stringify(bulkMixedBody(BULK_ITEMS, spec.sequenceStart + sequence + 1)), 4);
  }
}
