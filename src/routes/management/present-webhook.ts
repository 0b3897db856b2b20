/** Webhooks and deliveries as the management API answers them (API.md §16): never a secret. */
import type { DeliveryRecord, WebhookRecord } from "../../management/webhooks/webhook-records.js";

/**
 * A URL as a reader without write access sees it: its origin only. Receivers' URLs often carry a credential in the
 * path (a Slack incoming webhook's is one), and viewers read everything but keys and tokens in clear.
 */
function maskedUrl(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname === "/" && parsed.search === "" ? url : `${parsed.origin}/…`;
}

export function presentWebhook(webhook: WebhookRecord, fullUrl: boolean) {
  return {
    id: webhook.id,
    appId: webhook.appId,
    url: fullUrl ? webhook.url : maskedUrl(webhook.url),
    events: webhook.events,
    environments: webhook.environments,
    format: webhook.format,
    description: webhook.description,
    enabled: webhook.enabled,
    createdAt: webhook.createdAt,
    updatedAt: webhook.updatedAt,
    previousSecretUntil: webhook.previousSecret?.until ?? null,
    /** Which node attempts its deliveries now (cluster mode), until when. */
    lease: webhook.lease,
  };
}

export function presentDelivery(delivery: DeliveryRecord) {
  return {
    id: delivery.id,
    type: delivery.event.type,
    state: delivery.state,
    attempts: delivery.attempts.map(({ at, status, durationMs, error }) => ({ at, status, durationMs, error })),
    nextAttemptAt: delivery.nextAttemptAt,
    createdAt: delivery.createdAt,
    cancelled: delivery.cancelled,
    event: delivery.event,
  };
}
