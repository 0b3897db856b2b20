/** Hello-world servers under the same load as the service: the transport ceiling every HTTP figure is compared with. */
import { compileRuleset, contextValues, writeAnswer } from "../../src/evaluation/index.js";
import { bareBulkMixedRequests, bareEventRequests } from "../serving/requests.js";
import { contextObject, eventBody, featureDefinitions } from "../support/fixtures.js";
import type { GroupCommitMode } from "./group-commit-server.js";
import { measure, type Lab, type LoadFigure } from "../support/lab.js";
import type { RequestSpec } from "../support/load.js";
import { startGroupCommitServer, startHelloServer, tempDir } from "../support/processes.js";
import { BULK_CONNECTIONS } from "../serving/tracking-routes.js";

export const GROUP_COMMIT_ID = "group-commit-uws-post";
export const BULK_CEILING_ID = "group-commit-uws-bulk";
export const EVENT_RECORDS_ID = "group-commit-uws-event-records";
/** A bare uWebSockets.js GET answering a body as large as an evaluation's at N features. */
export const answerTransportId = (features: number) => `hello-uws-get-${features}-features`;

export const HELLO_IDS = {
  uws: { get: "hello-uws-get", post: "hello-uws-post" },
  node: { get: "hello-node-get", post: "hello-node-post" },
} as const;

/** One `/event`-sized body, posted over and over by the POST baselines (hello-world and group-commit). */
const EVENT_POST: readonly RequestSpec[] = [{ method: "POST", path: "/event", headers: { "Content-Type": "application/json" }, body: JSON.stringify(eventBody(1)) }];

/** GET and POST hello-world on bare uWebSockets.js (native) or node:http (the native-free twin's transport). */
export async function benchHelloWorld(lab: Lab, kind: "uws" | "node"): Promise<LoadFigure[]> {
  const server = await startHelloServer(kind);
  const label = kind === "uws" ? "uWebSockets.js" : "node:http";
  try {
    const info = { kind: kind === "uws" ? ("hello-uws" as const) : ("hello-node" as const), pid: server.pid };
    const get = await measure(lab, {
      id: HELLO_IDS[kind].get,
      section: "baseline",
      title: `bare ${label} hello-world GET (60 B JSON)`,
      server: info,
      baseUrl: server.url,
      requests: [{ method: "GET", path: "/hello", headers: {} }],
    });
    const post = await measure(lab, {
      id: HELLO_IDS[kind].post,
      section: "baseline",
      title: `bare ${label} hello-world POST (reads an /event-sized body, 60 B JSON answer)`,
      server: info,
      baseUrl: server.url,
      requests: EVENT_POST,
    });
    return [get, post];
  } finally {
    await server.stop();
  }
}

/**
 * The bare uWebSockets.js POST that stores each body with one LMDB commit per event-loop turn and answers after it:
 * the most any tracking call acknowledged after commit can reach here, transport and disk included.
 */
export function benchGroupCommitCeiling(lab: Lab): Promise<LoadFigure> {
  return measureGroupCommit(lab, "body", {
    id: GROUP_COMMIT_ID,
    title: "bare uWebSockets.js POST storing each body in LMDB, one commit per event-loop turn, answered after commit",
    requests: EVENT_POST,
  });
}

/** One load run against a group-commit server of the given mode, on a data dir of its own. */
async function measureGroupCommit(
  lab: Lab,
  mode: GroupCommitMode,
  spec: Omit<Parameters<typeof measure>[1], "section" | "server" | "baseUrl">,
): Promise<LoadFigure> {
  const data = tempDir(`switchyard-bench-group-commit-${mode}-`);
  const server = await startGroupCommitServer(data.path, mode);
  try {
    return await measure(lab, { ...spec, section: "baseline", server: { kind: "group-commit", pid: server.pid }, baseUrl: server.url });
  } finally {
    await server.stop();
    data.remove();
  }
}

/**
 * The same bare group-commit server as the ceiling, paced at `rate` requests per second: at the `/event` share of the
 * paced mix, its p99 is how long an answer given after a commit takes at that rate with nothing else to do.
 */
export function benchGroupCommitAt(lab: Lab, id: string, title: string, rate: number): Promise<LoadFigure> {
  return measureGroupCommit(lab, "body", {
    id,
    title,
    requests: EVENT_POST,
    rate,
    warmUp: false,
  });
}

/**
 * The group-commit server storing each `/event` body with everything the service projects it to (its user, company
 * and analytics cells, by the service's own tracking writer, one shared transaction per turn) and nothing else: no
 * routing, keys or validation. Set against the ceiling, it tells how much of the `/event` target would be left were
 * the answer to wait for all of it; the service answers after its log append and projects afterwards.
 */
export function benchEventRecordsCeiling(lab: Lab): Promise<LoadFigure> {
  return measureGroupCommit(lab, "tracking", {
    id: EVENT_RECORDS_ID,
    title: "bare uWebSockets.js POST storing each /event body with what it is projected to (event, user, company, analytics cells), one commit per turn, answered after commit",
    requests: bareEventRequests(),
  });
}

/** The size of an evaluation answer at `features` features (a typical context, as the benchmark's fixtures give). */
export function answerBytes(features: number): number {
  const ruleset = compileRuleset(featureDefinitions(features));
  return writeAnswer(ruleset, contextValues(ruleset, contextObject(7)), { flagStateVersion: 1, remoteContextUsed: true }).length;
}

/**
 * Bare uWebSockets.js GETs answering bodies as large as the evaluation answers at the given feature counts: what the
 * transport alone costs for an answer that size, the bound the evaluation figures cannot pass.
 */
export async function benchAnswerTransport(lab: Lab, featureCounts: readonly number[]): Promise<LoadFigure[]> {
  const figures: LoadFigure[] = [];
  for (const features of featureCounts) {
    const bytes = answerBytes(features);
    const server = await startHelloServer("uws", bytes);
    try {
      figures.push(
        await measure(lab, {
          id: answerTransportId(features),
          section: "baseline",
          title: `bare uWebSockets.js GET answering ${bytes.toLocaleString("en")} B (an answer's size at ${features} features)`,
          server: { kind: "hello-uws", pid: server.pid },
          baseUrl: server.url,
          requests: [{ method: "GET", path: "/hello", headers: {} }],
        }),
      );
    } finally {
      await server.stop();
    }
  }
  return figures;
}

/** The /bulk ceiling: the same mixed bodies parsed and each item put on its own, one commit per turn, answered after it. */
export function benchBulkCeiling(lab: Lab): Promise<LoadFigure> {
  return measureGroupCommit(lab, "items", {
    id: BULK_CEILING_ID,
    title: "bare uWebSockets.js POST of mixed bulk bodies, each item put in LMDB, one commit per turn, answered after commit",
    requests: bareBulkMixedRequests(),
    itemsPerRequest: 1000,
    connections: BULK_CONNECTIONS,
    minDurationSeconds: 2,
  });
}
