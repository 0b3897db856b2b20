import type { Actor } from "./principal.js";
import type { Role } from "./roles.js";

/** A scrypt hash with everything needed to check it again: parameters travel with the hash, so costs can rise later. */
export interface PasswordHash {
  algorithm: "scrypt";
  /** log2 of scrypt's N. */
  cost: number;
  blockSize: number;
  parallelization: number;
  /** base64 */
  salt: string;
  /** base64 */
  hash: string;
}

export interface MemberRecord {
  id: string;
  /** Lower-cased; unique. */
  email: string;
  name: string;
  role: Role;
  createdAt: string;
  lastSignInAt: string | null;
  password: PasswordHash;
}

/** A browser session, stored under the SHA-256 digest of its cookie value. */
export interface SessionRecord {
  id: string;
  memberId: string;
  createdAt: string;
  /** Moved forward at most once a minute (idle expiry counts from it). */
  lastSeenAt: string;
}

/** A personal API token, stored under the SHA-256 digest of its secret. */
export interface TokenRecord {
  id: string;
  memberId: string;
  name: string;
  readOnly: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  /** Tokens issued through OAuth (an editor's MCP sign-in) expire; personal tokens have none (absent or null). */
  expiresAt?: string | null;
  /** The OAuth client (editor) the token was issued to, for the token list. */
  oauthClient?: { id: string; name: string } | null;
}

/** An OAuth client registered dynamically (RFC 7591) by an editor: public, PKCE only, no secret. */
export interface OAuthClientRecord {
  id: string;
  name: string;
  redirectUris: string[];
  createdAt: string;
}

/** A one-time OAuth authorization code a member's approval issued, stored under the SHA-256 digest of the code. */
export interface OAuthCodeRecord {
  id: string;
  clientId: string;
  memberId: string;
  redirectUri: string;
  /** PKCE S256 challenge (base64url SHA-256 of the verifier). */
  codeChallenge: string;
  createdAt: string;
  expiresAt: string;
}

/** A one-time password reset token, stored under the SHA-256 digest of its secret. */
export interface ResetRecord {
  id: string;
  memberId: string;
  createdAt: string;
  expiresAt: string;
}

/**
 * The admin token once it has been rotated or turned off through the service (before that, the bootstrap token of
 * the data dir or SWITCHYARD_ADMIN_TOKEN stands). `digest` null: turned off.
 */
export interface AdminTokenRecord {
  digest: string | null;
  hint: string | null;
  changedAt: string;
}

/** What an audit entry names as changed. */
export interface AuditEntity {
  kind: string;
  /** null for what has no id (the store, for `backup.create`). */
  id: string | null;
  key?: string;
  environmentId?: string;
  appId?: string;
  memberId?: string;
}

/** One line of the audit log (API.md §8). */
export interface AuditEntry {
  cursor: string;
  at: string;
  actor: Actor;
  action: string;
  entity: AuditEntity;
  details: Record<string, unknown>;
  /** The client address the change came from; null for changes made offline by the CLI. */
  address: string | null;
}

/** A member as answers show them: never the password hash. */
export function presentMember(member: MemberRecord) {
  return { id: member.id, email: member.email, name: member.name, role: member.role, createdAt: member.createdAt, lastSignInAt: member.lastSignInAt };
}

/** A token as answers show it: never the secret, which is not stored. */
export function presentToken(token: TokenRecord) {
  return {
    id: token.id,
    name: token.name,
    readOnly: token.readOnly,
    createdAt: token.createdAt,
    lastUsedAt: token.lastUsedAt,
    memberId: token.memberId,
    expiresAt: token.expiresAt ?? null,
    oauthClient: token.oauthClient ?? null,
  };
}

declare module "../storage/kv.js" {
  /** The value types of the tables this room owns (see TableValues). */
  interface TableValues {
    /** Members, and the member id under each email (the email index). */
    members: MemberRecord | string;
    /** Session, token and reset digests of several shapes, read by their key's prefix. */
    credentials: unknown;
    /** Audit entries, and `true` markers of its indexes. */
    audit: AuditEntry | true;
  }
}
