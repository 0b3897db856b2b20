/** Hello-world servers under the same load as the service: the transport ceiling every HTTP figure is compared with. */
import { eventBody } from "../support/fixtures.js";
import { measure, type Lab, type LoadFigure } from "../support/lab.js";
import { startHelloServer } from "../support/processes.js";

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
