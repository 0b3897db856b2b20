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
  /**
   * Archives every feature of the app (their production prerequisites removed first: a feature others depend on
   * cannot be archived), then saves each definition (its stage, and its production targeting and config): a property
   * test's next ruleset on a clean app. The saves' replies, in order, say what was refused.
   */
  replaceFeatures(definitions: readonly FeatureSave[]): Promise<{ definition: FeatureSave; targeting: JsonReply; config: JsonReply }[]>;
}

/** What `replaceFeatures` saves of a feature definition (the parity generators' shape). */
export interface FeatureSave {
  key: string;
  stage?: string | null;
  targeting: { rules: unknown[] };
  config: { variants: unknown[] };
}

export function useAppServer(options: StartOptions = {}): AppServer {
  const fixture = {
    admin: (method: string, path: string, body?: unknown) => adminRequest(fixture.server, method, path, body),
    async replaceFeatures(definitions: readonly FeatureSave[]) {
      const appId = fixture.keys.app.id;
      const production = `/admin/environments/${fixture.keys.production.id}`;
      for (const feature of (await fixture.admin("GET", `${production}/features`)).body.features as { key: string; prerequisites?: unknown[] }[]) {
        if (feature.prerequisites?.length) await fixture.admin("PUT", `${production}/features/${encodeURIComponent(feature.key)}/prerequisites`, { prerequisites: [] });
      }
      for (const feature of (await fixture.admin("GET", `/admin/apps/${appId}/features`)).body.features as { key: string }[]) {
        await fixture.admin("DELETE", `/admin/apps/${appId}/features/${encodeURIComponent(feature.key)}`);
      }
      const saved = [];
      for (const definition of definitions) {
        const path = encodeURIComponent(definition.key);
        await fixture.admin("PUT", `/admin/apps/${appId}/features/${path}`, { stage: definition.stage });
        const targeting = await fixture.admin("PUT", `/admin/environments/${fixture.keys.production.id}/features/${path}/targeting`, { rules: definition.targeting.rules });
        const config = await fixture.admin("PUT", `/admin/environments/${fixture.keys.production.id}/features/${path}/config`, { variants: definition.config.variants });
        saved.push({ definition, targeting, config });
      }
      return saved;
    },
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
