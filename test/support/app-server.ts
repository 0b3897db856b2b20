/**
 * The usual suite fixture: one service with one app (production and development environments), started before the
 * suite's tests and stopped after them. Read `server` and `keys` inside hooks and tests, once `beforeAll` has run.
 */
import { afterAll, beforeAll } from "vitest";
import { adminRequest, createApp, type JsonReply } from "./http.js";
import { startServer, type StartOptions, type TestServer } from "./server.js";

export interface AppServer {
  server: TestServer;
  keys: Awaited<ReturnType<typeof createApp>>;
  /** A management API call with the server's admin token. */
  admin(method: string, path: string, body?: unknown): Promise<JsonReply>;
}

export function useAppServer(options: StartOptions = {}): AppServer {
  const fixture = {
    admin: (method: string, path: string, body?: unknown) => adminRequest(fixture.server, method, path, body),
  } as AppServer;
  beforeAll(async () => {
    fixture.server = await startServer(options);
    fixture.keys = await createApp(fixture.server.url, fixture.server.adminToken);
  });
  afterAll(async () => {
    await fixture.server?.stop();
  });
  return fixture;
}
