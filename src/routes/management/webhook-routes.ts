/** API.md §16 through the management API: an app's webhooks, their secrets, test events and deliveries. */
import { permits } from "../../accounts/permissions.js";
import { ServiceError } from "../../errors/catalogue.js";
import { ok } from "../../http/responses.js";
import { checkWebhookUrl } from "../../management/webhooks/safe-post.js";
import { postPolicy } from "../../management/webhooks/send-delivery.js";
import { generateSecret } from "../../management/webhooks/signing.js";
import { WEBHOOK_EVENT_TYPES } from "../../management/webhooks/webhook-event.js";
import { WebhookRepository } from "../../management/webhooks/webhook-repository.js";
import { webhookBodies } from "../../schemas/webhooks.js";
import { randomBase62 } from "../../tenancy/identifiers.js";
import type { AppRecord } from "../../tenancy/tenancy-records.js";
import { appOrNotFound } from "../core/route-lookups.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { schemaBody } from "../core/schema-body.js";
import { envelopeFor, submitChange } from "../core/submit.js";
import type { Services } from "../core/services.js";
import { presentDelivery, presentWebhook } from "./present-webhook.js";

type Context = RouteContext<Services>;

const read = (handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("read", BODY_LIMITS.none, handle);
const write = (handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("write", BODY_LIMITS.single, handle);
/** A write that reads no body (a comment, if any, comes in the query). */
const act = (handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("write", BODY_LIMITS.none, handle);

const BODIES = webhookBodies(WEBHOOK_EVENT_TYPES);
const DEFAULT_DELIVERIES = 50;
const MAX_DELIVERIES = 200;

/** Whoever may change webhooks sees their URLs in full; readers see the origin (a URL may hold a credential). */
function seesUrls(context: Context): boolean {
  const { principal } = context;
  return (principal.kind === "admin" || principal.kind === "member" || principal.kind === "token") && permits(principal, "write", "POST");
}

function webhookOrNotFound(context: Context, app: AppRecord) {
  const webhook = new WebhookRepository(context.services.store).get(app.id, context.params.webhookId!);
  if (!webhook) throw new ServiceError("NOT_FOUND", `No webhook ${context.params.webhookId}.`);
  return webhook;
}

/** Every named environment must be the app's: a 400 at `environments.N`. Duplicates are dropped. */
function checkedEnvironments(app: AppRecord, environments: string[] | undefined): string[] | undefined {
  if (environments === undefined) return undefined;
  const issues = environments.flatMap((id, index) => (app.environmentIds.includes(id) ? [] : [{ path: `environments.${index}`, message: `No environment ${id} in app ${app.id}` }]));
  if (issues.length > 0) throw new ServiceError("INVALID_BODY", undefined, issues);
  return [...new Set(environments)];
}

function checkedEvents(events: string[] | undefined): string[] | undefined {
  return events === undefined ? undefined : events.includes("*") ? ["*"] : [...new Set(events)];
}

/** The SSRF check at save time: where the host resolves now must be a public address, or an allowed one. */
async function checkedUrl(context: Context, url: string): Promise<string> {
  const { allow, timeoutMs } = context.services.config.webhooks;
  const verdict = await checkWebhookUrl(url, postPolicy(allow, timeoutMs));
  if (!verdict.ok) throw new ServiceError("INVALID_WEBHOOK_URL", undefined, [{ path: "url", message: verdict.reason }]);
  return url;
}

const deliveryAction = act(async (context) => {
  const app = appOrNotFound(context);
  const webhook = webhookOrNotFound(context, app);
  const result = await submitChange(context, "webhook.redeliver", { appId: app.id, webhookId: webhook.id, deliveryId: context.params.deliveryId! });
  return ok({ delivery: presentDelivery(result.delivery) });
});

export const WEBHOOK_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "POST",
    "/admin/apps/:appId/webhooks",
    write(async (context) => {
      const app = appOrNotFound(context);
      const body = schemaBody(context.request, BODIES.create);
      const environments = checkedEnvironments(app, body.environments) ?? [];
      const url = await checkedUrl(context, body.url);
      const envelope = envelopeFor(context);
      // Decided here, before the change: applying a change is deterministic on every node.
      const secret = generateSecret();
      const webhook = {
        id: `wh_${randomBase62(16)}`,
        appId: app.id,
        url,
        events: checkedEvents(body.events)!,
        environments,
        format: body.format,
        description: body.description ?? null,
        enabled: true,
        createdAt: envelope.at,
        createdBy: envelope.actor,
        secret,
      };
      const result = await submitChange(context, "webhook.create", { webhook }, envelope);
      return ok({ webhook: presentWebhook(result.webhook, true), secret });
    }),
  ],
  [
    "GET",
    "/admin/apps/:appId/webhooks",
    read((context) => {
      const app = appOrNotFound(context);
      const full = seesUrls(context);
      return ok({ webhooks: new WebhookRepository(context.services.store).list(app.id).map((webhook) => presentWebhook(webhook, full)) });
    }),
  ],
  [
    "GET",
    "/admin/apps/:appId/webhooks/:webhookId",
    read((context) => ok({ webhook: presentWebhook(webhookOrNotFound(context, appOrNotFound(context)), seesUrls(context)) })),
  ],
  [
    "PATCH",
    "/admin/apps/:appId/webhooks/:webhookId",
    write(async (context) => {
      const app = appOrNotFound(context);
      const webhook = webhookOrNotFound(context, app);
      const body = schemaBody(context.request, BODIES.update);
      const fields = {
        ...body,
        events: checkedEvents(body.events),
        environments: checkedEnvironments(app, body.environments),
        url: body.url !== undefined && body.url !== webhook.url ? await checkedUrl(context, body.url) : body.url,
      };
      const result = await submitChange(context, "webhook.update", { appId: app.id, webhookId: webhook.id, fields });
      return ok({ webhook: presentWebhook(result.webhook, true), cancelledDeliveries: result.cancelled });
    }),
  ],
  [
    "DELETE",
    "/admin/apps/:appId/webhooks/:webhookId",
    act(async (context) => {
      const app = appOrNotFound(context);
      const webhook = webhookOrNotFound(context, app);
      const result = await submitChange(context, "webhook.delete", { appId: app.id, webhookId: webhook.id });
      return ok({ webhook: presentWebhook(result.webhook, true) });
    }),
  ],
  [
    "POST",
    "/admin/apps/:appId/webhooks/:webhookId/rotate-secret",
    act(async (context) => {
      const app = appOrNotFound(context);
      const webhook = webhookOrNotFound(context, app);
      const secret = generateSecret();
      const result = await submitChange(context, "webhook.rotate-secret", { appId: app.id, webhookId: webhook.id, secret });
      return ok({ webhook: presentWebhook(result.webhook, true), secret });
    }),
  ],
  [
    "POST",
    "/admin/apps/:appId/webhooks/:webhookId/test",
    act(async (context) => {
      const app = appOrNotFound(context);
      const webhook = webhookOrNotFound(context, app);
      const result = await submitChange(context, "webhook.test", { appId: app.id, webhookId: webhook.id });
      return ok({ delivery: presentDelivery(result.delivery) });
    }),
  ],
  [
    "GET",
    "/admin/apps/:appId/webhooks/:webhookId/deliveries",
    read((context) => {
      const app = appOrNotFound(context);
      const webhook = webhookOrNotFound(context, app);
      const asked = Number(new URLSearchParams(context.request.query).get("limit") ?? DEFAULT_DELIVERIES);
      if (!Number.isInteger(asked) || asked < 1 || asked > MAX_DELIVERIES) throw new ServiceError("INVALID_QUERY", undefined, [{ path: "limit", message: `must be a whole number from 1 to ${MAX_DELIVERIES}` }]);
      return ok({ deliveries: new WebhookRepository(context.services.store).deliveries(webhook.id, asked).map(presentDelivery) });
    }),
  ],
  ["POST", "/admin/apps/:appId/webhooks/:webhookId/deliveries/:deliveryId/redeliver", deliveryAction],
];
