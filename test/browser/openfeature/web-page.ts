/**
 * A page using the OpenFeature web SDK with the official OFREP web provider, set up as README.md shows (polling off:
 * live updates come through the event stream the bulk answer names). Bundled by openfeature-web.test.ts with esbuild.
 */
import { OFREPWebProvider } from "@openfeature/ofrep-web-provider";
import { OpenFeature, ProviderEvents } from "@openfeature/web-sdk";

interface PageConfig {
  baseUrl: string;
  publishableKey: string;
  context: Record<string, unknown>;
}

interface PageState {
  changes: number;
  errors: string[];
  read(): Record<string, unknown>;
  setContext(context: Record<string, unknown>): Promise<void>;
}

const config = JSON.parse(document.getElementById("config")!.textContent!) as PageConfig;
const state: PageState = { changes: 0, errors: [], read: () => ({}), setContext: (context) => OpenFeature.setContext(context as never) };
(window as unknown as { state: PageState }).state = state;

(window as unknown as { run: Promise<unknown> }).run = (async () => {
  // --- the README's set-up, as written ---
  await OpenFeature.setContext(config.context as never);
  await OpenFeature.setProviderAndWait(
    new OFREPWebProvider({ baseUrl: config.baseUrl, headers: [["Authorization", `Bearer ${config.publishableKey}`]] }),
  );
  const client = OpenFeature.getClient();
  // ---
  client.addHandler(ProviderEvents.ConfigurationChanged, () => state.changes++);
  client.addHandler(ProviderEvents.Error, (details) => state.errors.push(String(details?.message)));
  state.read = () => ({
    alwaysOn: client.getBooleanDetails("always-on", false),
    enterprise: client.getBooleanDetails("enterprise-plan", false),
    enterpriseConfig: client.getObjectDetails("enterprise-plan:config", { none: true }),
    untargeted: client.getBooleanDetails("untargeted", false),
    smallConfig: client.getStringDetails("small-companies:config", "fallback"),
    unknown: client.getBooleanDetails("no-such-flag", true),
  });
  return state.read();
})().catch((error: unknown) => ({ error: String((error as Error)?.stack ?? error) }));
