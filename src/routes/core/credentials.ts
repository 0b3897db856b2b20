import { bearerToken, type ManagementCredentials } from "./auth.js";
import type { ApiRequest } from "../../http/types.js";
import type { AccountsConfig } from "../../config/config.js";
import { ServiceError } from "../../errors/catalogue.js";
import type { ManagementLog } from "../../management/management-log.js";
import { newEnvelope } from "../../management/envelope.js";
import type { Logger } from "../../observability/logger.js";
import { matchesDigest, type KeyIndex } from "../../tenancy/key-index.js";
import type { AccountRepository } from "../../accounts/account-repository.js";
import { SESSION_COOKIE, readCookie } from "./cookies.js";
import { checkCsrfToken, checkOrigin } from "./csrf.js";
import { actorOf, type ManagementPrincipal, type SessionPrincipal, type TokenPrincipal } from "../../accounts/principal.js";
import type { SessionRecord } from "../../accounts/account-records.js";
import { isSafeMethod } from "../../accounts/roles.js";
import { API_TOKEN_PREFIX, csrfTokenFor, digestSecret } from "../../accounts/secrets.js";

/** Usage stamps (session `lastSeenAt`, token `lastUsedAt`) move at most this often: a write per request would be waste. */
const TOUCH_INTERVAL_MS = 60_000;

const ADMIN: ManagementPrincipal = Object.freeze({ kind: "admin" });

export interface CredentialsOptions {
  accounts: AccountRepository;
  keys: KeyIndex;
  management: ManagementLog;
  config: AccountsConfig;
  /** Digest of the bootstrap admin token (data dir or SWITCHYARD_ADMIN_TOKEN); undefined when none was resolved. */
  bootstrapAdminDigest: string | undefined;
  log: Logger;
  now?: () => number;
}

/**
 * "Who is this credential?" for the management API: the admin token, a personal API token (both as
 * `Authorization: Bearer`), or a browser session (the `switchyard_session` cookie, with the CSRF checks of API.md §8
 * on anything that changes state). Secrets are looked up by their SHA-256 digest; the admin token is compared in
 * constant time. Front-facing routes never come here.
 */
export class Credentials implements ManagementCredentials {
  private adminDigest: string | null = null;
  private readonly now: () => number;
  /** Digests whose usage stamp is being written, so a burst of requests sends one touch. */
  private readonly touching = new Set<string>();
  private readonly touchIntervalMs: number;

  constructor(private readonly options: CredentialsOptions) {
    this.now = options.now ?? Date.now;
    // A session must be seen as used well within its idle limit, however short tests make it.
    this.touchIntervalMs = Math.min(TOUCH_INTERVAL_MS, Math.floor(options.config.sessionIdleMs / 4));
    this.reloadAdminToken();
  }

  /** Re-reads the admin token: after a rotation here, and on the cross-process poll. */
  reloadAdminToken(): void {
    const record = this.options.accounts.adminToken();
    this.adminDigest = record ? record.digest : (this.options.bootstrapAdminDigest ?? null);
  }

  /** Whether the admin token is accepted at all (it can be turned off). */
  adminTokenEnabled(): boolean {
    return this.adminDigest !== null;
  }

  isManagementCredential(secret: string): boolean {
    if (secret.startsWith(API_TOKEN_PREFIX)) return this.options.accounts.token(digestSecret(secret)) !== undefined;
    return this.adminDigest !== null && matchesDigest(secret, this.adminDigest);
  }

  authenticate(request: ApiRequest): ManagementPrincipal {
    const bearer = bearerToken(request);
    if (bearer !== undefined) return this.fromBearer(request, bearer);
    const sessionSecret = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (sessionSecret !== undefined) return this.fromSession(request, sessionSecret);
    throw new ServiceError("UNAUTHORIZED", "Sign in, or send the admin token or an API token as `Authorization: Bearer <token>`.");
  }

  /** The session a cookie value names, if it is live: for sign-in (which replaces it) and sign-out. */
  liveSession(sessionSecret: string): { digest: string; session: SessionRecord } | undefined {
    const digest = digestSecret(sessionSecret);
    const session = this.options.accounts.session(digest);
    return session && !this.expired(session) ? { digest, session } : undefined;
  }

  /** Whether a stored session is past its idle or absolute limit. */
  expired(session: SessionRecord): boolean {
    const now = this.now();
    const { sessionIdleMs, sessionAbsoluteMs } = this.options.config;
    return now - Date.parse(session.createdAt) >= sessionAbsoluteMs || now - Date.parse(session.lastSeenAt) >= sessionIdleMs;
  }

  private fromBearer(request: ApiRequest, bearer: string): ManagementPrincipal {
    const { accounts, keys } = this.options;
    if (bearer.startsWith(API_TOKEN_PREFIX)) {
      const digest = digestSecret(bearer);
      const token = accounts.token(digest);
      const member = token && accounts.getMember(token.memberId);
      if (!token || !member) throw new ServiceError("UNAUTHORIZED", "The API token is not valid.");
      if (token.expiresAt && this.now() >= Date.parse(token.expiresAt)) throw new ServiceError("UNAUTHORIZED", "The API token has expired.");
      const principal: TokenPrincipal = {
        kind: "token",
        tokenId: token.id,
        memberId: member.id,
        email: member.email,
        role: token.readOnly ? "viewer" : member.role,
        memberRole: member.role,
        readOnly: token.readOnly,
      };
      this.touch(principal, request, "token", digest, token.lastUsedAt);
      return principal;
    }
    if (this.adminDigest !== null && matchesDigest(bearer, this.adminDigest)) return ADMIN;
    if (keys.resolve(bearer)) throw new ServiceError("FORBIDDEN", "Environment and tracking keys cannot use the management API.");
    throw new ServiceError("UNAUTHORIZED", "The admin token is not valid.");
  }

  private fromSession(request: ApiRequest, sessionSecret: string): SessionPrincipal {
    const { accounts, config } = this.options;
    const digest = digestSecret(sessionSecret);
    const session = accounts.session(digest);
    if (!session) throw new ServiceError("UNAUTHORIZED", "The session is not valid; sign in again.");
    if (this.expired(session)) throw new ServiceError("UNAUTHORIZED", "The session has expired; sign in again.");
    const member = accounts.getMember(session.memberId);
    if (!member) throw new ServiceError("UNAUTHORIZED", "The session is not valid; sign in again.");
    const csrfToken = csrfTokenFor(sessionSecret);
    if (!isSafeMethod(request.method)) {
      checkOrigin(request, config.publicOrigin);
      checkCsrfToken(request, csrfToken);
    }
    const principal: SessionPrincipal = {
      kind: "member",
      memberId: member.id,
      email: member.email,
      role: member.role,
      sessionId: session.id,
      sessionDigest: digest,
      csrfToken,
    };
    this.touch(principal, request, "session", digest, session.lastSeenAt);
    return principal;
  }

  private touch(principal: ManagementPrincipal, request: ApiRequest, credential: "session" | "token", digest: string, last: string | null): void {
    if (last !== null && this.now() - Date.parse(last) < this.touchIntervalMs) return;
    if (this.touching.has(digest)) return;
    this.touching.add(digest);
    const change = { ...newEnvelope(actorOf(principal), request.remoteAddress(), new Date(this.now())), type: "credential.touch" as const, credential, digest };
    this.options.management.submit(change).then(
      () => this.touching.delete(digest),
      (error: unknown) => {
        this.touching.delete(digest);
        this.options.log.error("usage stamp failed", { credential, error: String((error as Error)?.message ?? error) });
      },
    );
  }
}
