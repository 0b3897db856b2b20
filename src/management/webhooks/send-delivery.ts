/** One attempt of one delivery: its body in the webhook's format, signed for `standard`, sent through `safePost`. */
import { parseAllowList, safePost } from "./safe-post.js";
import { slackBody } from "./slack-format.js";
import { signedHeaders } from "./signing.js";
import type { DeliveryRecord, WebhookRecord } from "./webhook-records.js";

export type SafePostPolicy = Parameters<typeof safePost>[3];

/** Response bodies are read up to this many bytes (API.md §16). */
export const MAX_RESPONSE_BYTES = 4096;

/** The SSRF policy of every check and attempt: SWITCHYARD_WEBHOOK_ALLOW's private targets, the attempt timeout. */
export function postPolicy(allow: string, timeoutMs: number): SafePostPolicy {
  return { allow: parseAllowList(allow), timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES };
}

export interface SendOptions {
  policy: SafePostPolicy;
  /** SWITCHYARD_PUBLIC_URL: where Slack messages link to. */
  publicUrl: string | undefined;
}

export interface AttemptResult {
  status: number | null;
  durationMs: number;
  error: string | null;
}

export function bodyOf(webhook: Pick<WebhookRecord, "format">, delivery: Pick<DeliveryRecord, "event">, publicUrl: string | undefined): string {
  return JSON.stringify(webhook.format === "slack" ? slackBody(delivery.event, publicUrl) : delivery.event);
}

export async function sendDelivery(webhook: WebhookRecord, delivery: DeliveryRecord, options: SendOptions, now = new Date()): Promise<AttemptResult> {
  const body = bodyOf(webhook, delivery, options.publicUrl);
  // Slack's incoming webhooks take no signature: only the JSON body.
  const headers = {
    "content-type": "application/json",
    "user-agent": "Switchyard-Webhooks/1",
    ...(webhook.format === "standard" ? signedHeaders(webhook, delivery.id, body, now) : {}),
  };
  const result = await safePost(webhook.url, body, headers, options.policy);
  const failed = result.error ?? (result.status !== null && (result.status < 200 || result.status >= 300) ? `HTTP ${result.status}` : null);
  return { status: result.status, durationMs: result.durationMs, error: failed };
}
