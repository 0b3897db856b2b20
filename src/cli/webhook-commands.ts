/** `switchyard webhooks …` (API.md §16): an app's webhooks, their secrets, test events and deliveries. */
import type { AdminClient } from "./admin-client.js";

type Values = Record<string, string | boolean | undefined>;

export const WEBHOOK_USAGE = `Webhooks (docs/WEBHOOKS.md; the signing secret is printed once, by create and rotate-secret):
  switchyard webhooks list APP_ID
  switchyard webhooks create APP_ID URL --events E1,E2|* [--environments ENV1,ENV2] [--format standard|slack] [--description T]
  switchyard webhooks update APP_ID WEBHOOK_ID [--webhook-url URL] [--events …] [--environments …|all] [--format F]
                                                   [--description T] [--enabled true|false]
  switchyard webhooks delete APP_ID WEBHOOK_ID | rotate-secret APP_ID WEBHOOK_ID | test APP_ID WEBHOOK_ID
  switchyard webhooks deliveries APP_ID WEBHOOK_ID [--limit N]
  switchyard webhooks redeliver APP_ID WEBHOOK_ID DELIVERY_ID
`;

/** The options these commands read, for the CLI's argument parser (`--url` is the service's address, so the webhook's is `--webhook-url`). */
export const WEBHOOK_OPTIONS = {
  events: { type: "string" },
  environments: { type: "string" },
  format: { type: "string" },
  "webhook-url": { type: "string" },
} as const;

const part = (value: string | undefined, name: string): string => {
  if (!value) throw new Error(`Missing ${name}.\n\n${WEBHOOK_USAGE}`);
  return encodeURIComponent(value);
};

const list = (value: string): string[] =>
  value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

/** The fields given as options; what is not given stays as it is on update. Values the service checks go as typed. */
function fields(values: Values): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (typeof values.events === "string") body.events = list(values.events);
  if (typeof values.environments === "string") body.environments = values.environments === "all" ? [] : list(values.environments);
  if (typeof values.format === "string") body.format = values.format;
  if (typeof values.description === "string") body.description = values.description === "" ? null : values.description;
  if (typeof values.enabled === "string") body.enabled = values.enabled === "true" ? true : values.enabled === "false" ? false : values.enabled;
  if (typeof values["webhook-url"] === "string") body.url = values["webhook-url"];
  return body;
}

export async function webhooks(client: AdminClient, action: string | undefined, appId: string | undefined, webhookId: string | undefined, third: string | undefined, values: Values): Promise<unknown> {
  const base = `/admin/apps/${part(appId, "APP_ID")}/webhooks`;
  const one = () => `${base}/${part(webhookId, "WEBHOOK_ID")}`;
  switch (action) {
    case "list":
      return client.call("GET", base);
    case "create":
      // The second positional is the receiver's URL here.
      if (!webhookId) throw new Error(`Missing URL.\n\n${WEBHOOK_USAGE}`);
      if (typeof values.events !== "string") throw new Error(`Missing --events (a comma-separated list of event types, or *).\n\n${WEBHOOK_USAGE}`);
      return client.call("POST", base, { ...fields(values), url: webhookId });
    case "update":
      return client.call("PATCH", one(), fields(values));
    case "delete":
      return client.call("DELETE", one());
    case "rotate-secret":
      return client.call("POST", `${one()}/rotate-secret`);
    case "test":
      return client.call("POST", `${one()}/test`);
    case "deliveries":
      return client.call("GET", `${one()}/deliveries${typeof values.limit === "string" ? `?limit=${encodeURIComponent(values.limit)}` : ""}`);
    case "redeliver":
      return client.call("POST", `${one()}/deliveries/${part(third, "DELIVERY_ID")}/redeliver`);
    default:
      throw new Error(WEBHOOK_USAGE);
  }
}
