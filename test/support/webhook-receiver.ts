/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 (ephemeral port) that records every request and
 * answers as the test says — a status, a hang (never answering), a redirect, a huge body.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
  /** When the connection closed (the sender hung up, or the answer was sent). */
  closedAt?: number;
}

export type Answer = { status: number; body?: string; headers?: Record<string, string> } | "hang";

export interface WebhookReceiver {
  url: string;
  received: ReceivedRequest[];
  /** Decides each answer; by default 200. */
  answer: (request: ReceivedRequest, index: number) => Answer;
  /** Resolves once at least `count` requests arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<WebhookReceiver> {
  const hanging = new Set<ServerResponse>();
  const receiver = {
    received: [] as ReceivedRequest[],
    answer: (() => ({ status: 200 })) as WebhookReceiver["answer"],
  } as WebhookReceiver;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
      const entry: ReceivedRequest = { path: request.url ?? "/", headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
      const index = receiver.received.push(entry) - 1;
      response.on("close", () => (entry.closedAt = Date.now()));
      const answer = receiver.answer(entry, index);
      if (answer === "hang") {
        hanging.add(response);
        return;
      }
      response.writeHead(answer.status, { "content-type": "text/plain", ...answer.headers });
      response.end(answer.body ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const bound = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${bound}`;
  receiver.waitFor = async (count, timeoutMs = 15_000) => {
    const until = Date.now() + timeoutMs;
    while (receiver.received.length < count) {
      if (Date.now() > until) throw new Error(`receiver got ${receiver.received.length} of ${count} requests: ${receiver.received.map((each) => JSON.parse(each.body).type ?? "?").join(", ")}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return receiver.received;
  };
  receiver.close = async () => {
    for (const response of hanging) response.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
