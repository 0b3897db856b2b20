/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): `whsec_<base64>` secrets, and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>" under the secret's decoded bytes>`.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { WebhookRecord } from "./webhook-records.js";

const SECRET_PREFIX = "whsec_";
/** 32 random bytes: above the 24 the contract asks, as the Standard Webhooks libraries generate. */
const SECRET_BYTES = 32;

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac("sha256", keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`;
}

/** The secrets that sign now: the current one, and during a rotation's 24 h the one it replaced. */
export function signingSecrets(webhook: Pick<WebhookRecord, "secret" | "previousSecret">, now: Date): string[] {
  const previous = webhook.previousSecret;
  return previous !== null && previous.until > now.toISOString() ? [webhook.secret, previous.secret] : [webhook.secret];
}

/** The three Standard Webhooks headers of one attempt. */
export function signedHeaders(webhook: Pick<WebhookRecord, "secret" | "previousSecret">, id: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signingSecrets(webhook, now)
      .map((secret) => sign(secret, id, timestamp, body))
      .join(" "),
  };
}
