/**
 * Appliers of webhook settings and of the outbox's bookkeeping (claims and attempts, which the replicated log turns
 * into one decision every node shares: who may attempt a webhook's head delivery, and what became of each attempt).
 */
import type { Appliers, ApplyContext } from "../apply-context.js";
import { refused } from "../outcome.js";
import { buildEvent, derivedId, queueEvent } from "./webhook-outbox.js";
import type { DeliveryRecord, WebhookRecord } from "./webhook-records.js";
import { WebhookRepository } from "./webhook-repository.js";

type WebhookAppliers = Pick<
  Appliers,
  "webhook.create" | "webhook.update" | "webhook.delete" | "webhook.rotate-secret" | "webhook.test" | "webhook.redeliver" | "webhook.claim" | "webhook.attempt"
>;

/** How long a rotated-away secret keeps signing beside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 3_600_000;

function entity(webhook: WebhookRecord) {
  return { kind: "webhook", id: webhook.id, appId: webhook.appId };
}

/** What the audit keeps of a webhook: never its secret. */
function audited(webhook: WebhookRecord) {
  return { url: webhook.url, events: webhook.events, environments: webhook.environments, format: webhook.format, description: webhook.description, enabled: webhook.enabled };
}

function found(context: ApplyContext, change: { appId: string; webhookId: string }) {
  const webhooks = new WebhookRepository(context.store);
  const webhook = webhooks.get(change.appId, change.webhookId);
  return { webhooks, webhook };
}

/** Environment ids must be the app's: checked again here, against the store as the change applies. */
function foreignEnvironment(context: ApplyContext, appId: string, environments: string[]): string | undefined {
  return environments.find((id) => context.tenancy.getEnvironment(id)?.appId !== appId);
}

/** Inside a write transaction: the waiting deliveries are taken out of the queue and marked failed with the reason. */
function cancelWaiting(webhooks: WebhookRepository, webhook: WebhookRecord, reason: string): number {
  const waiting = webhooks.clearQueue(webhook.id);
  for (const delivery of waiting) webhooks.putDelivery({ ...delivery, state: "failed", nextAttemptAt: null, cancelled: reason });
  return waiting.length;
}

export const WEBHOOK_APPLIERS: WebhookAppliers = {
  "webhook.create"(context, change) {
    const app = context.tenancy.getApp(change.webhook.appId);
    if (!app) return refused("NOT_FOUND", `No app ${change.webhook.appId}.`);
    const stray = foreignEnvironment(context, app.id, change.webhook.environments);
    if (stray !== undefined) return refused("NOT_FOUND", `No environment ${stray} in app ${app.id}.`);
    const webhooks = new WebhookRepository(context.store);
    if (webhooks.get(app.id, change.webhook.id)) return refused("CONFLICT", `Webhook ${change.webhook.id} exists.`);
    const webhook: WebhookRecord = { ...change.webhook, updatedAt: change.at, previousSecret: null, sequence: 0, lease: null };
    webhooks.put(webhook);
    return { ok: true, value: { webhook }, audit: { action: "webhook.create", entity: entity(webhook), details: audited(webhook) } };
  },

  "webhook.update"(context, change) {
    const { webhooks, webhook } = found(context, change);
    if (!webhook) return refused("NOT_FOUND", `No webhook ${change.webhookId}.`);
    const stray = foreignEnvironment(context, webhook.appId, change.fields.environments ?? []);
    if (stray !== undefined) return refused("NOT_FOUND", `No environment ${stray} in app ${webhook.appId}.`);
    const defined = Object.fromEntries(Object.entries(change.fields).filter(([, value]) => value !== undefined));
    const updated: WebhookRecord = { ...webhook, ...defined, updatedAt: change.at };
    webhooks.put(updated);
    // A disabled webhook sends nothing more: what waited is cancelled, not held for later.
    const cancelled = webhook.enabled && !updated.enabled ? cancelWaiting(webhooks, updated, "webhook disabled") : 0;
    const before = audited(webhook) as Record<string, unknown>;
    const after = audited(updated) as Record<string, unknown>;
    const changes = Object.fromEntries(
      Object.keys(after)
        .filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]))
        .map((field) => [field, { from: before[field], to: after[field] }]),
    );
    return { ok: true, value: { webhook: webhooks.get(webhook.appId, webhook.id)!, cancelled }, audit: { action: "webhook.update", entity: entity(updated), details: { changes, ...(cancelled > 0 ? { cancelled } : {}) } } };
  },

  "webhook.delete"(context, change) {
    const { webhooks, webhook } = found(context, change);
    if (!webhook) return refused("NOT_FOUND", `No webhook ${change.webhookId}.`);
    webhooks.remove(webhook);
    return { ok: true, value: { webhook }, audit: { action: "webhook.delete", entity: entity(webhook), details: { url: webhook.url } } };
  },

  "webhook.rotate-secret"(context, change) {
    const { webhooks, webhook } = found(context, change);
    if (!webhook) return refused("NOT_FOUND", `No webhook ${change.webhookId}.`);
    const until = new Date(Date.parse(change.at) + PREVIOUS_SECRET_MS).toISOString();
    const rotated: WebhookRecord = { ...webhook, secret: change.secret, previousSecret: { secret: webhook.secret, until }, updatedAt: change.at };
    webhooks.put(rotated);
    return { ok: true, value: { webhook: rotated }, audit: { action: "webhook.rotate-secret", entity: entity(rotated), details: { previousSecretUntil: until } } };
  },

  "webhook.test"(context, change) {
    const { webhooks, webhook } = found(context, change);
    if (!webhook) return refused("NOT_FOUND", `No webhook ${change.webhookId}.`);
    if (!webhook.enabled) return refused("CONFLICT", `Webhook ${webhook.id} is disabled.`);
    const origin = { id: change.id, at: change.at, actor: change.actor };
    const event = buildEvent(context.store, origin, 0, { type: "webhook.test", appId: webhook.appId, environmentId: null, featureKey: null, before: null, after: null })!;
    queueEvent(context.store, event, webhook);
    const delivery = webhooks.delivery(derivedId("msg", event.id, webhook.id))!;
    return { ok: true, value: { delivery }, audit: { action: "webhook.test", entity: entity(webhook), details: { deliveryId: delivery.id } } };
  },

  "webhook.redeliver"(context, change) {
    const { webhooks, webhook } = found(context, change);
    const delivery = webhooks.delivery(change.deliveryId);
    if (!webhook || !delivery || delivery.webhookId !== webhook.id) return refused("NOT_FOUND", `No delivery ${change.deliveryId}.`);
    if (delivery.state === "pending") return refused("CONFLICT", `Delivery ${delivery.id} is still pending.`);
    if (!webhook.enabled) return refused("CONFLICT", `Webhook ${webhook.id} is disabled.`);
    webhooks.requeue(webhook, delivery);
    const queued: DeliveryRecord = { ...delivery, state: "pending", nextAttemptAt: change.at, attemptsThisRound: 0, cancelled: null };
    webhooks.putDelivery(queued);
    return { ok: true, value: { delivery: queued }, audit: { action: "webhook.redeliver", entity: entity(webhook), details: { deliveryId: delivery.id, type: delivery.event.type } } };
  },

  "webhook.claim"(context, change) {
    const { webhooks, webhook } = found(context, change);
    if (!webhook) return refused("NOT_FOUND", `No webhook ${change.webhookId}.`);
    const held = webhook.lease;
    if (held !== null && held.nodeId !== change.nodeId && held.until > change.at) return { ok: true, value: { granted: false, lease: held }, audit: null };
    const lease = { nodeId: change.nodeId, until: change.until };
    webhooks.put({ ...webhook, lease });
    return { ok: true, value: { granted: true, lease }, audit: null };
  },

  "webhook.attempt"(context, change) {
    const { webhooks, webhook } = found(context, change);
    const delivery = webhooks.delivery(change.deliveryId);
    if (webhook && !delivery && !webhooks.hasDelivery(change.deliveryId) && change.outcome !== "retry") webhooks.markSettledElsewhere(change.deliveryId);
    if (!webhook || !delivery || delivery.state !== "pending") return { ok: true, value: { recorded: false, delivery: delivery ?? null }, audit: null };
    const attempts = [...delivery.attempts, change.attempt];
    const settled = change.outcome !== "retry";
    const next: DeliveryRecord = {
      ...delivery,
      attempts,
      attemptsThisRound: delivery.attemptsThisRound + 1,
      state: change.outcome === "retry" ? "pending" : change.outcome,
      nextAttemptAt: settled ? null : change.nextAttemptAt,
    };
    webhooks.putDelivery(next);
    if (settled) webhooks.dequeue(next);
    if (webhook.lease?.nodeId === change.nodeId) webhooks.put({ ...webhook, lease: { nodeId: change.nodeId, until: change.leaseUntil } });
    return { ok: true, value: { recorded: true, delivery: next }, audit: null };
  },
};
