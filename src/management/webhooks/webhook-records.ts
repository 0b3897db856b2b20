/**
 * Webhooks (API.md §16) as stored: each app's webhooks, and the durable outbox of their deliveries.
 *
 * `webhooks` is keyed (app id, webhook id). `webhookDeliveries` holds three key shapes per webhook:
 * - `d␀webhookId␀<sequence>` → the delivery (its event, state and every attempt), in the order it was queued
 * - `q␀webhookId␀<sequence>` → the id of a delivery waiting to be sent: the webhook's queue, oldest first, so its head
 *   is the one delivery of that webhook that may be attempted (strict order)
 * - `i␀deliveryId` → `webhookId␀<sequence>` (where the delivery is, for claims, attempts and redelivery)
 */
import type { Actor } from "../../accounts/principal.js";
import type { WebhookEvent } from "./webhook-event.js";

export const WEBHOOK_FORMATS = ["standard", "slack"] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** Which node may attempt this webhook's head delivery, until when (ISO 8601): decided by the management log. */
export interface WebhookLease {
  nodeId: string;
  until: string;
}

export interface WebhookRecord {
  id: string;
  appId: string;
  url: string;
  /** Event types, or `["*"]`. */
  events: string[];
  /** Environment ids; empty: every environment (and the events of no environment). */
  environments: string[];
  format: WebhookFormat;
  description: string | null;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  createdBy: Actor;
  /**
   * The signing secret `whsec_<base64>`. An HMAC key must be stored as itself to sign with; it is never returned
   * after creation or rotation, never audited, never logged (docs/SECURITY.md).
   */
  secret: string;
  /** The secret a rotation replaced, which keeps signing beside the new one until `until`. */
  previousSecret: { secret: string; until: string } | null;
  /** The last sequence used in this webhook's outbox keys. */
  sequence: number;
  lease: WebhookLease | null;
}

export interface DeliveryAttempt {
  at: string;
  /** The receiver's HTTP status; null when no answer came (refused address, timeout, connection error). */
  status: number | null;
  durationMs: number;
  error: string | null;
  /** The node that made it (cluster mode). */
  nodeId: string;
}

export type DeliveryState = "pending" | "delivered" | "failed";

export interface DeliveryRecord {
  /** `webhook-id`: the same on every retry and on a redelivery. */
  id: string;
  webhookId: string;
  appId: string;
  sequence: number;
  event: WebhookEvent;
  state: DeliveryState;
  attempts: DeliveryAttempt[];
  /** When the next attempt is due (ISO 8601); null once delivered or failed. */
  nextAttemptAt: string | null;
  /** Attempts made since it was last queued (a redelivery starts the retry schedule again). */
  attemptsThisRound: number;
  createdAt: string;
  /** Why it will not be sent: the webhook was disabled while it waited. */
  cancelled: string | null;
}

declare module "../../storage/kv.js" {
  /** The value types of the tables webhooks own (see TableValues). */
  interface TableValues {
    webhooks: WebhookRecord;
    /** Deliveries, and (as strings) the queue entries and the delivery id index. */
    webhookDeliveries: DeliveryRecord | string;
  }
}
