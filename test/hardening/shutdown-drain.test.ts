/**
 * SIGTERM drains in-flight work even when the clients that asked for it have gone (found by the soak, whose load
 * generator hangs up when a window ends). The front ends stop counting an exchange once its client disconnects, so
 * `stop()` also waits for the executor's accepted jobs before it closes the pool.
 */
import net from "node:net";
import { describe, expect, it } from "vitest";
import { createApp } from "../support/http.js";
import { NATIVE_MODE, startServer } from "../support/server.js";

describe(`shutdown drain (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  it("finishes the jobs of requests whose clients hung up, logs no fault, and exits 0", { timeout: 60_000 }, async () => {
    const server = await startServer();
    const { production } = await createApp(server.url, server.adminToken);
    const items = Array.from({ length: 8_000 }, (_, index) => ({ type: "event", event: "drain", userId: `u${index % 100}`, attributes: { index } }));
    const body = JSON.stringify(items);
    const sockets: net.Socket[] = [];
    for (let index = 0; index < 16; index++) {
      const socket = net.connect(server.port, "127.0.0.1");
      socket.on("error", () => {});
      socket.write(
        `POST /bulk HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${production.secretKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      sockets.push(socket);
    }
    // Let the bodies arrive and the jobs queue, then hang up and ask the service to stop.
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const code = await server.stop();
    const faults = server.output.filter((line) => line.includes('"level":"error"'));
    expect(faults.map((line) => line.slice(0, 200))).toEqual([]);
    expect(code).toBe(0);
  });
});
