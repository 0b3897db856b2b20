/**
 * The ceiling of "answer only after commit" on this machine: a bare uWebSockets.js server that reads each POST body,
 * parses it, appends it to an LMDB log through the service's own store (same options, same durability) with one
 * commit for every body that arrived in the same event-loop turn, and answers each only once its commit is done.
 * No routing, keys, validation, users, companies or analytics: what remains is the transport plus the commit wait,
 * which no tracking call that is acknowledged after commit can avoid.
 *
 * `node group-commit-server.js <dataDir> [--items | --tracking]` listens on 127.0.0.1 with an ephemeral port and
 * prints `{"message":"listening","port":N}`. With `--items` a body is a JSON array and each of its items is put on its
 * own: the ceiling of a `/bulk` acknowledged after commit (parse, one put per item, one commit per turn). With
 * `--tracking` a body is an `/event` body, stored with everything the service projects it to — the event, its user
 * and company, the analytics cells, through the service's own tracking writer, one shared transaction per turn — with
 * no routing, keys or validation: what storing an event costs beside the ceiling's single record (the service
 * answers after its log append and projects afterwards; this mode answers after storing everything).
 */
import type { KvTable } from "../../src/storage/kv.js";
import { loadNativeUws } from "../../src/http/load-uws.js";
import { logKey } from "../../src/tracking/append-log.js";
import { LmdbStore } from "../../src/storage/lmdb-store.js";
import { applyTrackingTogether } from "../support/apply-together.js";
import type { TrackingRequest } from "../support/direct-tracking.js";
import { whenBodyRead } from "./uws-body.js";

// Analytics and survey state derive from tracking only where they are registered, as every serving thread does.

const ANSWER = '{"success":true}';

interface Waiting {
  body: string;
  answer: () => void;
}

export type GroupCommitMode = "body" | "items" | "tracking";

const USAGE = `node dist/bench/baselines/group-commit-server.js <dataDir> [--items | --tracking]

A bare uWebSockets.js server on 127.0.0.1 (ephemeral port, printed as {"message":"listening","port":N}) that stores
every POST body in LMDB, one commit per event-loop turn, and answers each only after its commit: the ceiling of any
call acknowledged after commit. --items: bodies are JSON arrays, each item stored on its own (the /bulk ceiling).
--tracking: bodies are /event bodies, stored with their user, company and analytics cells by the service's writer.
`;

/** An `/event` body as the tracking writer takes it (the bench sends well-formed bodies: no validation here). */
function eventRequest(body: Record<string, unknown>, receivedAt: number): TrackingRequest {
  const item = {
    type: "event" as const,
    event: String(body.event),
    userId: String(body.userId),
    companyId: typeof body.companyId === "string" ? body.companyId : undefined,
    attributes: body.attributes as Record<string, unknown> | undefined,
    timestamp: undefined,
    active: true,
  };
  return { environmentId: "ceiling", items: [item], receivedAt };
}

function serve(dataDir: string, mode: GroupCommitMode): void {
  const store = new LmdbStore({ path: dataDir, durability: "commit" });
  // A baseline: request bodies stored as they come, unvalidated, as the ceiling of a group-committed append.
  const events = store.table("events") as KvTable<unknown>;
  let sequence = 0;
  let queued: Waiting[] = [];

  function commitQueued(): void {
    const group = queued;
    queued = [];
    if (mode === "tracking") {
      const receivedAt = Date.now();
      const requests = group.map((waiting) => eventRequest(JSON.parse(waiting.body) as Record<string, unknown>, receivedAt));
      void applyTrackingTogether(store, requests).then(() => {
        for (const waiting of group) waiting.answer();
      });
      return;
    }
    void store
      .write(() => {
        for (const waiting of group) {
          const parsed: unknown = JSON.parse(waiting.body);
          if (mode === "items" && Array.isArray(parsed)) for (const item of parsed) events.put(logKey("events", "ceiling", ++sequence), item);
          else events.put(logKey("events", "ceiling", ++sequence), parsed);
        }
      })
      .then(() => {
        for (const waiting of group) waiting.answer();
      });
  }

  const uws = loadNativeUws();
  const app = uws.App();
  app.post("/*", (res) => {
    whenBodyRead(res, (chunks, isAborted) => {
      const answer = () => {
        if (!isAborted()) res.cork(() => res.writeHeader("content-type", "application/json").end(ANSWER));
      };
      queued.push({ body: Buffer.concat(chunks).toString("utf8"), answer });
      if (queued.length === 1) setImmediate(commitQueued);
    });
  });
  app.listen("127.0.0.1", 0, (socket) => {
    if (!socket) throw new Error("group-commit server could not listen");
    process.stdout.write(`${JSON.stringify({ message: "listening", port: uws.us_socket_local_port(socket) })}\n`);
  });
  process.on("SIGTERM", () => {
    void store.close().then(() => process.exit(0));
  });
}

const args = process.argv.slice(2);
if (args.includes("--help") || args.includes("-h")) process.stdout.write(USAGE);
else {
  const dataDir = args.find((arg) => !arg.startsWith("--"));
  if (!dataDir) throw new Error(USAGE);
  serve(dataDir, args.includes("--items") ? "items" : args.includes("--tracking") ? "tracking" : "body");
}
