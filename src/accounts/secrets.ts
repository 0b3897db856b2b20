import { createHmac, timingSafeEqual } from "node:crypto";
import { digestKey, randomBase62 } from "../tenancy/identifiers.js";

/** 43 base62 characters: about 256 random bits, the same as 32 random bytes. */
const SECRET_LENGTH = 43;

/** Personal API tokens: `sya_` + 43 base62. The prefix lets auth tell them from keys without a lookup. */
export const API_TOKEN_PREFIX = "sya_";
/** One-time password reset tokens. */
export const RESET_TOKEN_PREFIX = "syr_";

export const newApiTokenSecret = (): string => `${API_TOKEN_PREFIX}${randomBase62(SECRET_LENGTH)}`;
export const newResetSecret = (): string => `${RESET_TOKEN_PREFIX}${randomBase62(SECRET_LENGTH)}`;
/** A session cookie's value. */
export const newSessionSecret = (): string => randomBase62(SECRET_LENGTH);

export const newMemberId = (): string => `mem_${randomBase62(12)}`;
export const newTokenId = (): string => `tok_${randomBase62(12)}`;
export const newSessionId = (): string => `ses_${randomBase62(12)}`;
export const newResetId = (): string => `rst_${randomBase62(12)}`;

/** Secrets are stored only as SHA-256 digests (hex); a presented secret is looked up by its digest. */
export const digestSecret = digestKey;

const CSRF_LABEL = "switchyard csrf token v1";

/**
 * A session's CSRF token, derived from its cookie value (HMAC-SHA-256), so nothing more is stored and the token
 * reveals nothing about the cookie. A page reads it from the sign-in answer or `GET /admin/session`.
 */
export function csrfTokenFor(sessionSecret: string): string {
  return createHmac("sha256", sessionSecret).update(CSRF_LABEL).digest("base64url");
}

/** Constant-time equality of two strings (both are hashed first, so lengths leak nothing either). */
export function sameSecret(presented: string, expected: string): boolean {
  return timingSafeEqual(Buffer.from(digestKey(presented), "hex"), Buffer.from(digestKey(expected), "hex"));
}
