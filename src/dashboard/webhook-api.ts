/** Webhooks of an app through the management API (API.md §16), as the dashboard's webhook pages use them. */
import { api, enc, get } from "./api";
import { WEBHOOK_EVENT_TYPES } from "../management/webhooks/webhook-event";

export { WEBHOOK_EVENT_TYPES };

export type WebhookFormat = "standard" | "slack";

export interface Webhook {
  id: string;
  appId: string;
  /** In full for members who may write; the origin only (`https://hooks.example.com/…`) for viewers. */
  url: string;
  events: string[];
  /** Environment ids; empty: every environment. */
  environments: string[];
  format: WebhookFormat;
  description: string | null;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  /** While a rotated-away secret still signs beside the new one. */
  previousSecretUntil: string | null;
}

export interface DeliveryAttempt {
  at: string;
  status: number | null;
  durationMs: number;
  error: string | null;
}

export interface Delivery {
  id: string;
  type: string;
  state: "pending" | "delivered" | "failed";
  attempts: DeliveryAttempt[];
  nextAttemptAt: string | null;
  createdAt?: string;
  cancelled?: string | null;
  event?: unknown;
}

/** The fields a person sets; the rest the service decides. */
export interface WebhookFields {
  url: string;
  events: string[];
  environments: string[];
  format: WebhookFormat;
  description: string | null;
}

const base = (appId: string) => `/admin/apps/${enc(appId)}/webhooks`;
const one = (appId: string, id: string) => `${base(appId)}/${enc(id)}`;

export const listWebhooks = (appId: string) => get<{ webhooks: Webhook[] }>(base(appId)).then((answer) => answer.webhooks);
export const getWebhook = (appId: string, id: string) => get<{ webhook: Webhook }>(one(appId, id)).then((answer) => answer.webhook);
export const createWebhook = (appId: string, fields: WebhookFields) => api<{ webhook: Webhook; secret: string }>("POST", base(appId), fields);
export const updateWebhook = (appId: string, id: string, fields: Partial<WebhookFields> & { enabled?: boolean }) =>
  api<{ webhook: Webhook; cancelledDeliveries?: number }>("PATCH", one(appId, id), fields);
export const deleteWebhook = (appId: string, id: string) => api("DELETE", one(appId, id));
export const rotateSecret = (appId: string, id: string) => api<{ webhook: Webhook; secret: string }>("POST", `${one(appId, id)}/rotate-secret`);
export const sendTest = (appId: string, id: string) => api<{ delivery: Delivery }>("POST", `${one(appId, id)}/test`);
export const listDeliveries = (appId: string, id: string) => get<{ deliveries: Delivery[] }>(`${one(appId, id)}/deliveries`).then((answer) => answer.deliveries);
export const redeliver = (appId: string, id: string, deliveryId: string) => api<{ delivery: Delivery }>("POST", `${one(appId, id)}/deliveries/${enc(deliveryId)}/redeliver`);
