import { key, lastKeyPart, prefixRange, type KvStore } from "../storage/kv.js";
import type { AdminTokenRecord, MemberRecord, OAuthClientRecord, OAuthCodeRecord, ResetRecord, SessionRecord, TokenRecord } from "./account-records.js";

type CredentialKind = "session" | "token" | "reset";
const ADMIN_TOKEN_KEY = "admin-token";

/**
 * Members and their credentials. Reads are plain store reads; the writes are for the management apply path and
 * must run inside its transaction (`src/management/`).
 *
 * `members`: `id␀<memberId>` → record, `email␀<email>` → member id.
 * `credentials`: `session␀<digest>`, `token␀<digest>`, `reset␀<digest>` → record; `token-id␀<tokenId>` → digest;
 * `member␀<memberId>␀<kind>␀<digest>` → true (what to revoke with a member); `admin-token` → AdminTokenRecord;
 * `oauth-client␀<clientId>` → OAuthClientRecord; `oauth-code␀<digest>` → OAuthCodeRecord.
 */
export class AccountRepository {
  constructor(private readonly store: KvStore) {}

  private get members() {
    return this.store.table<"members", MemberRecord>("members");
  }
  private get memberIds() {
    return this.store.table<"members", string>("members");
  }
  private get credentials() {
    return this.store.table("credentials");
  }

  getMember(memberId: string): MemberRecord | undefined {
    return this.members.get(key("id", memberId));
  }

  memberByEmail(email: string): MemberRecord | undefined {
    const memberId = this.memberIds.get(key("email", normaliseEmail(email)));
    return memberId === undefined ? undefined : this.getMember(memberId);
  }

  listMembers(): MemberRecord[] {
    return Array.from(this.members.range(prefixRange("id")), (entry) => entry.value);
  }

  countOwners(): number {
    return this.listMembers().filter((member) => member.role === "owner").length;
  }

  session(digest: string): SessionRecord | undefined {
    return this.credentials.get(key("session", digest)) as SessionRecord | undefined;
  }

  token(digest: string): TokenRecord | undefined {
    return this.credentials.get(key("token", digest)) as TokenRecord | undefined;
  }

  tokenById(tokenId: string): { digest: string; token: TokenRecord } | undefined {
    const digest = this.credentials.get(key("token-id", tokenId)) as string | undefined;
    const token = digest === undefined ? undefined : this.token(digest);
    return digest !== undefined && token ? { digest, token } : undefined;
  }

  reset(digest: string): ResetRecord | undefined {
    return this.credentials.get(key("reset", digest)) as ResetRecord | undefined;
  }

  /** Digests of a member's credentials of one kind. */
  credentialDigests(memberId: string, kind: CredentialKind): string[] {
    return Array.from(this.credentials.range(prefixRange("member", memberId, kind)), (entry) => lastKeyPart(entry.key));
  }

  /** Every token of one member, or of everyone, oldest first. */
  listTokens(memberId?: string): TokenRecord[] {
    const members = memberId === undefined ? this.listMembers().map((member) => member.id) : [memberId];
    return members
      .flatMap((id) => this.credentialDigests(id, "token").flatMap((digest) => this.token(digest) ?? []))
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  }

  /** The admin token's record once rotated or turned off through the service; undefined while the bootstrap token stands. */
  adminToken(): AdminTokenRecord | undefined {
    return this.credentials.get(ADMIN_TOKEN_KEY) as AdminTokenRecord | undefined;
  }

  oauthClient(clientId: string): OAuthClientRecord | undefined {
    return this.credentials.get(key("oauth-client", clientId)) as OAuthClientRecord | undefined;
  }

  oauthCode(digest: string): OAuthCodeRecord | undefined {
    return this.credentials.get(key("oauth-code", digest)) as OAuthCodeRecord | undefined;
  }

  // Writes: inside a management apply transaction only.

  putOAuthClient(client: OAuthClientRecord): void {
    this.credentials.put(key("oauth-client", client.id), client);
  }

  putOAuthCode(digest: string, code: OAuthCodeRecord): void {
    this.credentials.put(key("oauth-code", digest), code);
  }

  removeOAuthCode(digest: string): void {
    this.credentials.remove(key("oauth-code", digest));
  }

  putMember(member: MemberRecord, previousEmail?: string): void {
    if (previousEmail !== undefined && previousEmail !== member.email) this.memberIds.remove(key("email", previousEmail));
    this.members.put(key("id", member.id), member);
    this.memberIds.put(key("email", member.email), member.id);
  }

  /** Removes a member and every credential they hold. */
  removeMember(member: MemberRecord): void {
    for (const kind of ["session", "token", "reset"] as const) this.revokeAll(member.id, kind);
    this.members.remove(key("id", member.id));
    this.memberIds.remove(key("email", member.email));
  }

  putSession(digest: string, session: SessionRecord): void {
    this.credentials.put(key("session", digest), session);
    this.credentials.put(key("member", session.memberId, "session", digest), true);
  }

  putToken(digest: string, token: TokenRecord): void {
    this.credentials.put(key("token", digest), token);
    this.credentials.put(key("token-id", token.id), digest);
    this.credentials.put(key("member", token.memberId, "token", digest), true);
  }

  putReset(digest: string, reset: ResetRecord): void {
    this.credentials.put(key("reset", digest), reset);
    this.credentials.put(key("member", reset.memberId, "reset", digest), true);
  }

  /** Removes one credential; false when it was not there. */
  revoke(kind: CredentialKind, digest: string): boolean {
    const record = this.credentials.get(key(kind, digest)) as { id: string; memberId: string } | undefined;
    if (!record) return false;
    this.credentials.remove(key(kind, digest));
    this.credentials.remove(key("member", record.memberId, kind, digest));
    if (kind === "token") this.credentials.remove(key("token-id", record.id));
    return true;
  }

  /** Removes every credential of one kind a member holds; how many there were. */
  revokeAll(memberId: string, kind: CredentialKind): number {
    const digests = this.credentialDigests(memberId, kind);
    for (const digest of digests) this.revoke(kind, digest);
    return digests.length;
  }

  putAdminToken(record: AdminTokenRecord): void {
    this.credentials.put(ADMIN_TOKEN_KEY, record);
  }
}

/** Emails compare case-insensitively; the stored form is trimmed and lower-cased. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}
