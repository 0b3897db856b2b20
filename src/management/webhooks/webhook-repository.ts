/** Reads and in-transaction writes of webhooks and their outbox (the key shapes are in webhook-records.ts). */
import { key, prefixRange, sequenceKeyPart, type KvStore } from "../../storage/kv.js";
import type { DeliveryRecord, WebhookRecord } from "./webhook-records.js";

export class WebhookRepository {
  constructor(private readonly store: KvStore) {}

  private get webhooks() {
    return this.store.table("webhooks");
  }

  private get outbox() {
    return this.store.table("webhookDeliveries");
  }

  get(appId: string, webhookId: string): WebhookRecord | undefined {
    return this.webhooks.get(key(appId, webhookId));
  }

  /** Oldest first (ids are not ordered; creation time is, with the id breaking ties). */
  list(appId: string): WebhookRecord[] {
    return sortByCreation([...this.webhooks.range(prefixRange(appId))].map((entry) => entry.value));
  }

  /** Every webhook of every app: what the dispatcher looks at. */
  listAll(): WebhookRecord[] {
    return [...this.webhooks.range({})].map((entry) => entry.value);
  }

  /** Inside a write transaction. */
  put(webhook: WebhookRecord): void {
    this.webhooks.put(key(webhook.appId, webhook.id), webhook);
  }

  delivery(deliveryId: string): DeliveryRecord | undefined {
    const where = this.outbox.get(key("i", deliveryId));
    return typeof where === "string" ? (this.outbox.get(key("d", where)) as DeliveryRecord | undefined) : undefined;
  }

  /** Newest first, at most `limit`. */
  deliveries(webhookId: string, limit: number): DeliveryRecord[] {
    return [...this.outbox.range({ ...prefixRange("d", webhookId), reverse: true, limit })].map((entry) => entry.value as DeliveryRecord);
  }

  /** The delivery at the head of the webhook's queue: the only one of that webhook that may be attempted now. */
  head(webhookId: string): DeliveryRecord | undefined {
    for (const entry of this.outbox.range({ ...prefixRange("q", webhookId), limit: 1 })) return this.delivery(entry.value as string);
    return undefined;
  }

  /** Inside a write transaction: appends a delivery to the webhook's outbox and queue (the webhook's sequence steps). */
  enqueue(webhook: WebhookRecord, delivery: Omit<DeliveryRecord, "sequence" | "webhookId" | "appId">): WebhookRecord {
    const sequence = webhook.sequence + 1;
    const record: DeliveryRecord = { ...delivery, webhookId: webhook.id, appId: webhook.appId, sequence };
    this.outbox.put(key("d", webhook.id, sequenceKeyPart(sequence)), record);
    this.outbox.put(key("i", record.id), key(webhook.id, sequenceKeyPart(sequence)));
    this.outbox.put(key("q", webhook.id, sequenceKeyPart(sequence)), record.id);
    const stepped = { ...webhook, sequence };
    this.put(stepped);
    return stepped;
  }

  /** Inside a write transaction: queues an existing delivery again, behind everything queued (a redelivery). */
  requeue(webhook: WebhookRecord, delivery: DeliveryRecord): WebhookRecord {
    const sequence = webhook.sequence + 1;
    this.outbox.put(key("q", webhook.id, sequenceKeyPart(sequence)), delivery.id);
    const stepped = { ...webhook, sequence };
    this.put(stepped);
    return stepped;
  }

  /** Whether a delivery with this id was ever queued (deterministic ids make enqueueing idempotent). */
  hasDelivery(deliveryId: string): boolean {
    return this.outbox.get(key("i", deliveryId)) !== undefined;
  }

  /**
   * Inside a write transaction: a delivery this node has not queued yet was settled by another node (cluster mode: a
   * feedback's delivery is queued by each node's tracking applier, which may run behind the management log). Its id
   * is taken, so queueing it later does nothing and this node never sends it again.
   */
  markSettledElsewhere(deliveryId: string): void {
    this.outbox.put(key("i", deliveryId), "settled elsewhere");
  }

  /** Inside a write transaction. */
  putDelivery(delivery: DeliveryRecord): void {
    this.outbox.put(key("d", delivery.webhookId, sequenceKeyPart(delivery.sequence)), delivery);
  }

  /** Inside a write transaction: takes the delivery out of its webhook's queue (delivered, failed, cancelled). */
  dequeue(delivery: DeliveryRecord): void {
    for (const entry of this.outbox.range(prefixRange("q", delivery.webhookId))) {
      if (entry.value === delivery.id) this.outbox.remove(entry.key);
    }
  }

  /** Inside a write transaction: empties the webhook's queue, returning what was waiting. */
  clearQueue(webhookId: string): DeliveryRecord[] {
    const waiting: DeliveryRecord[] = [];
    for (const entry of [...this.outbox.range(prefixRange("q", webhookId))]) {
      const delivery = this.delivery(entry.value as string);
      if (delivery) waiting.push(delivery);
      this.outbox.remove(entry.key);
    }
    return waiting;
  }

  /** Inside a write transaction: the webhook and everything of its outbox. */
  remove(webhook: WebhookRecord): void {
    this.clearQueue(webhook.id);
    for (const entry of [...this.outbox.range(prefixRange("d", webhook.id))]) {
      this.outbox.remove(key("i", (entry.value as DeliveryRecord).id));
      this.outbox.remove(entry.key);
    }
    this.webhooks.remove(key(webhook.appId, webhook.id));
  }
}

function sortByCreation(webhooks: WebhookRecord[]): WebhookRecord[] {
  return webhooks.sort((a, b) => (a.createdAt === b.createdAt ? a.id.localeCompare(b.id) : a.createdAt.localeCompare(b.createdAt)));
}
