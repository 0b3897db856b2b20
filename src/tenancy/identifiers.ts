import { hash, randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniformly random base62 text; rejection sampling keeps every character equally likely. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/**
 * App ids are 14 characters: the Reflag CLI's config schema accepts no other length. Ids made before (`app_` + 12)
 * are plain strings to every lookup and keep working.
 */
export const newAppId = (): string => `app_${randomBase62(10)}`;
export const newEnvironmentId = (): string => `env_${randomBase62(12)}`;
/** Feature ids are at most 14 characters: the feedback contract limits `featureId` to 1..14. */
export const newFeatureId = (): string => `ft${randomBase62(12)}`;
export const newFeedbackId = (): string => `fb_${randomBase62(20)}`;

export type KeyKind = "publishable" | "secret" | "tracking";
const KEY_PREFIX: Record<KeyKind, string> = { publishable: "pub", secret: "sec", tracking: "trk" };

/** The node SDKs refuse secret keys of 22 characters or fewer; ours carry 32 random characters after the prefix. */
export function newKey(kind: KeyKind, environmentName?: string): string {
  const label = environmentName ? `${environmentLabel(environmentName)}_` : "";
  return `${KEY_PREFIX[kind]}_${label}${randomBase62(32)}`;
}

/** The environment's name as it may appear inside a key: lower-case alphanumerics only. */
function environmentLabel(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, "").slice(0, 16) || "env";
}

/** Keys are stored as SHA-256 digests only; a lookup hashes what the client sent. */
export function digestKey(secret: string): string {
  // One-shot hashing: every authenticated request pays this, and it is about twice as fast as a Hash object.
  return hash("sha256", secret, "hex");
}

/** What a key looks like when shown again after creation: its prefix and last four characters. */
export function maskKey(secret: string): string {
  return `${secret.slice(0, secret.lastIndexOf("_") + 1)}…${secret.slice(-4)}`;
}
