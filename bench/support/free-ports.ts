/** Ports on 127.0.0.1 for servers a tool starts itself and must name the port of beforehand. */
import { createServer } from "node:net";

/**
 * `count` distinct ports free right now: all held open together (so none is handed out twice), then closed for
 * whoever asked to bind. Another process can still take one in between: callers that cannot afford that start over.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolveServer, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolveServer(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolveClose) => server.close(resolveClose))));
  return ports;
}
