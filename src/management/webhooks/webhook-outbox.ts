/**
 * Queues webhook deliveries inside the transaction of what caused them (a management change, a projected feedback),
 * so a crash loses none and a refused change queues none. Ids are derived from the cause, so queueing the same cause
 * again (a re-projection, a replayed log) queues nothing twice.
 */
import { createHash } from "node:crypto";
import type { Actor } from "../../accounts/principal.js";
import { displayName } from "../../features/feature-records.js";
import { FeatureRepository } from "../../features/feature-repository.js";
import type { KvStore } from "../../storage/kv.js";
import { TenancyRepository } from "../../tenancy/tenancy-repository.js";
import type { RaisedEvent } from "./change-events.js";
import { diffOf } from "./diff.js";
import type { WebhookEvent, WebhookEventType } from "./webhook-event.js";
import type { WebhookRecord } from "./webhook-records.js";
import { WebhookRepository } from "./webhook-repository.js";

/** What caused the events: its id (a change's, or one derived from a tracking log position), time and actor. */
export interface EventOrigin {
  id: string;
  at: string;
  actor: Actor | null;
}

/** A short, stable id from its parts. */
export function derivedId(prefix: string, ...parts: string[]): string {
  return `${prefix}_${createHash("sha256").update(parts.join("\u0000")).digest("base64url").slice(0, 24)}`;
}

/** Whether the webhook wants this event: its type (or `*`), and its environment when it names environments. */
export function subscribes(webhook: WebhookRecord, type: WebhookEventType, environmentId: string | null): boolean {
  if (!webhook.enabled) return false;
  if (!webhook.events.includes("*") && !webhook.events.includes(type)) return false;
  return webhook.environments.length === 0 || environmentId === null || webhook.environments.includes(environmentId);
}

function actorOf(actor: Actor | null): WebhookEvent["data"]["actor"] {
  if (actor === null) return null;
  return { kind: actor.kind, id: actor.id, ...("email" in actor ? { email: actor.email } : {}) };
}

/** The event as receivers see it, its names read in the transaction. Undefined when its app is gone. */
export function buildEvent(store: KvStore, origin: EventOrigin, index: number, raised: RaisedEvent): WebhookEvent | undefined {
  const tenancy = new TenancyRepository(store);
  const environment = raised.environmentId !== null ? tenancy.getEnvironment(raised.environmentId) : undefined;
  const appId = raised.appId ?? environment?.appId;
  const app = appId !== undefined ? tenancy.getApp(appId) : undefined;
  if (!app) return undefined;
  const feature = raised.featureKey !== null ? new FeatureRepository(store).getFeature(app.id, raised.featureKey) : undefined;
  return {
    id: derivedId("evt", origin.id, String(index)),
    type: raised.type,
    timestamp: origin.at,
    data: {
      app: { id: app.id, name: app.name },
      environment: environment ? { id: environment.id, name: environment.name } : null,
      feature: raised.featureKey !== null ? { key: raised.featureKey, name: feature ? displayName(feature) : raised.featureKey } : null,
      actor: actorOf(origin.actor),
      before: raised.before ?? null,
      after: raised.after ?? null,
      diff: diffOf(raised.before ?? null, raised.after ?? null),
      ...(raised.details !== undefined ? { details: raised.details } : {}),
    },
  };
}

/**
 * Only webhooks that existed when the cause happened hear of it: a re-projection of old tracking (a rebuild) must not
 * announce last year's feedback to a webhook created today.
 */
export interface QueueOptions {
  createdBy?: string;
}

/** Inside a write transaction: one delivery per subscribed, enabled webhook of the event's app. Returns how many. */
export function queueEvent(store: KvStore, event: WebhookEvent, only?: WebhookRecord, options: QueueOptions = {}): number {
  const webhooks = new WebhookRepository(store);
  const wanted = (webhook: WebhookRecord) =>
    subscribes(webhook, event.type, event.data.environment?.id ?? null) && (options.createdBy === undefined || webhook.createdAt <= options.createdBy);
  const targets = only ? [only] : webhooks.list(event.data.app.id).filter(wanted);
  let queued = 0;
  for (const webhook of targets) {
    const id = derivedId("msg", event.id, webhook.id);
    if (webhooks.hasDelivery(id)) continue;
    // Re-read: an earlier event of the same cause stepped the webhook's sequence.
    const current = webhooks.get(webhook.appId, webhook.id) ?? webhook;
    webhooks.enqueue(current, { id, event, state: "pending", attempts: [], nextAttemptAt: event.timestamp, attemptsThisRound: 0, createdAt: event.timestamp, cancelled: null });
    queued += 1;
  }
  return queued;
}

/** Inside a write transaction: every event raised by one cause, in order. */
export function queueRaisedEvents(store: KvStore, origin: EventOrigin, raised: RaisedEvent[], options: QueueOptions = {}): number {
  let queued = 0;
  const tenancy = new TenancyRepository(store);
  const webhooks = new WebhookRepository(store);
  for (const [index, each] of raised.entries()) {
    // Most apps have no webhook that wants this event: nothing more is read or built for them.
    const appId = each.appId ?? (each.environmentId !== null ? tenancy.getEnvironment(each.environmentId)?.appId : undefined);
    if (appId === undefined || !webhooks.list(appId).some((webhook) => subscribes(webhook, each.type, each.environmentId))) continue;
    const event = buildEvent(store, origin, index, each);
    if (event) queued += queueEvent(store, event, undefined, options);
  }
  return queued;
}
