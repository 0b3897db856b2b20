/** Hello-world servers under the same load as the service: the transport ceiling every HTTP figure is compared with. */
import { eventBody } from "../support/fixtures.js";
import { measure, type Lab, type LoadFigure } from "../support/lab.js";
import { startGroupCommitServer, startHelloServer, tempDir } from "../support/processes.js";

export const GROUP_COMMIT_ID = "group-commit-uws-post";

export const HELLO_IDS = {
  uws: { get: "hello-uws-get", post: "hello-uws-post" },
  node: { get: "hello-node-get", post: "hello-node-post" },
} as const;

/** GET and POST hello-world on bare uWebSockets.js (native) or node:http (the native-free twin's transport). */
export async function benchHelloWorld(lab: Lab, kind: "uws" | "node"): Promise<LoadFigure[]> {
  const server = await startHelloServer(kind);
  const label = kind === "uws" ? "uWebSockets.js" : "node:http";
  try {
    const info = { kind: kind === "uws" ? ("hello-uws" as const) : ("hello-node" as const) };
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
      requests: [{ method: "POST", path: "/event", headers: { "Content-Type": "application/json" }, body: JSON.stringify(eventBody(1)) }],
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
export async function benchGroupCommitCeiling(lab: Lab): Promise<LoadFigure> {
  const data = tempDir("switchyard-bench-group-commit-");
  const server = await startGroupCommitServer(data.path);
  try {
    return await measure(lab, {
      id: GROUP_COMMIT_ID,
      section: "baseline",
      title: "bare uWebSockets.js POST storing each body in LMDB, one commit per event-loop turn, answered after commit",
      server: { kind: "group-commit" },
      baseUrl: server.url,
      requests: [{ method: "POST", path: "/event", headers: { "Content-Type": "application/json" }, body: JSON.stringify(eventBody(1)) }],
    });
  } finally {
    await server.stop();
    data.remove();
  }
}
