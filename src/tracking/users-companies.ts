import type { Attributes } from "../schemas/tracking-fields.js";
import { key, prefixRange, lastKeyPart, type KvStore } from "../storage/kv.js";
import { putRemoteContext } from "./remote-contexts.js";
import type { CompanyRecord, MembershipRecord, UserRecord } from "./tracking-records.js";

/** What one call says about a user or company. */
export interface Sighting {
  /** Merged over the stored attributes; undefined leaves them as they are. */
  attributes: Attributes | undefined;
  /** The call's timestamp, or when it was received. */
  time: number;
  /** False for `context.active: false`: attributes are stored, lastSeen stays. */
  active: boolean;
}

/** Where a user lives in the `users` table. */
export function userKey(environmentId: string, userId: string): string {
  return key(environmentId, userId);
}

/** Where a company lives in the `companies` table. */
export function companyKey(environmentId: string, companyId: string): string {
  return key(environmentId, companyId);
}

/**
 * Users, companies and their memberships in one environment, written inside a `KvStore.write` transaction. Records
 * are cached for the transaction and written back once by `flush()`: a bulk of events from the same few users then
 * costs one decode and one encode per user, not one per item.
 */
export class EntityWriter {
  private readonly users = new Map<string, UserRecord>();
  private readonly companies = new Map<string, CompanyRecord>();
  private readonly dirtyUsers = new Set<string>();
  private readonly dirtyCompanies = new Set<string>();
  /** Records whose attributes changed: their flat form (remote-contexts.ts) is written with them. */
  private readonly changedUserAttributes = new Set<string>();
  private readonly changedCompanyAttributes = new Set<string>();

  constructor(
    private readonly store: KvStore,
    private readonly environmentId: string,
  ) {}

  /** Creates or updates a user; answers the record as it now stands. */
  upsertUser(userId: string, sighting: Sighting): UserRecord {
    const existing = this.user(userId);
    const user: UserRecord = {
      id: userId,
      ...afterSighting(existing, sighting),
      lastCompanyId: existing?.lastCompanyId ?? null,
      lastCompanyAt: existing?.lastCompanyAt ?? null,
    };
    this.users.set(userId, user);
    this.dirtyUsers.add(userId);
    if (user.attributes !== existing?.attributes) this.changedUserAttributes.add(userId);
    return user;
  }

  /** Creates or updates a company; answers the record as it now stands. */
  upsertCompany(companyId: string, sighting: Sighting): CompanyRecord {
    const existing = this.company(companyId);
    const company: CompanyRecord = { id: companyId, ...afterSighting(existing, sighting) };
    this.companies.set(companyId, company);
    this.dirtyCompanies.add(companyId);
    if (company.attributes !== existing?.attributes) this.changedCompanyAttributes.add(companyId);
    return company;
  }

  /**
   * Records that a user (upserted already) belongs to a company. The user's `lastCompanyId` moves to this company
   * unless the user was associated with a company at a later time: an out-of-order call does not win.
   */
  associate(userId: string, companyId: string, time: number): void {
    const user = this.user(userId);
    // The user's latest company since no later than this call: the membership exists and began no later than it
    // (its `since` is at most `lastCompanyAt`), so the usual repeat event needs no membership read at all.
    const isLatestAlready = user !== undefined && user.lastCompanyId === companyId && user.lastCompanyAt !== null && time >= user.lastCompanyAt;
    if (!isLatestAlready) this.recordMembership(userId, companyId, time);
    if (!user) return;
    // Ties go to the later call.
    if (user.lastCompanyAt !== null && time < user.lastCompanyAt) return;
    this.users.set(userId, { ...user, lastCompanyId: companyId, lastCompanyAt: time });
    this.dirtyUsers.add(userId);
  }

  /** Writes both directions of a membership when it first appears, or when an older call shows it began earlier. */
  private recordMembership(userId: string, companyId: string, time: number): void {
    const memberships = this.store.table("memberships");
    const byUser = key(this.environmentId, "u", userId, companyId);
    const existing = memberships.get(byUser);
    // Written when the association first appears (or an older call shows it began earlier), so that repeat events
    // cost a read, not two writes.
    if (!existing || time < existing.since) {
      const membership: MembershipRecord = { since: time };
      memberships.put(byUser, membership);
      memberships.put(key(this.environmentId, "c", companyId, userId), membership);
    }
  }

  /** The company a user was most recently associated with, as this transaction sees it; null if none. */
  latestCompanyOf(userId: string): string | null {
    return this.user(userId)?.lastCompanyId ?? null;
  }

  /** Writes back every record changed in this transaction. */
  flush(): void {
    const users = this.store.table("users");
    for (const userId of this.dirtyUsers) users.put(userKey(this.environmentId, userId), this.users.get(userId)!);
    const companies = this.store.table("companies");
    for (const companyId of this.dirtyCompanies) companies.put(companyKey(this.environmentId, companyId), this.companies.get(companyId)!);
    for (const userId of this.changedUserAttributes) putRemoteContext(this.store, this.environmentId, "user", userId, this.users.get(userId)!.attributes);
    for (const companyId of this.changedCompanyAttributes) putRemoteContext(this.store, this.environmentId, "company", companyId, this.companies.get(companyId)!.attributes);
    this.dirtyUsers.clear();
    this.dirtyCompanies.clear();
    this.changedUserAttributes.clear();
    this.changedCompanyAttributes.clear();
  }

  private user(userId: string): UserRecord | undefined {
    let user = this.users.get(userId);
    if (user === undefined) {
      user = this.store.table("users").get(userKey(this.environmentId, userId));
      if (user !== undefined) this.users.set(userId, user);
    }
    return user;
  }

  private company(companyId: string): CompanyRecord | undefined {
    let company = this.companies.get(companyId);
    if (company === undefined) {
      company = this.store.table("companies").get(companyKey(this.environmentId, companyId));
      if (company !== undefined) this.companies.set(companyId, company);
    }
    return company;
  }
}

/** A user's or company's attributes and first and last sightings once `sighting` is counted (`existing` absent: new). */
function afterSighting(existing: CompanyRecord | undefined, sighting: Sighting): Pick<CompanyRecord, "attributes" | "firstSeen" | "lastSeen"> {
  return {
    attributes: merge(existing?.attributes ?? {}, sighting.attributes),
    firstSeen: existing ? Math.min(existing.firstSeen, sighting.time) : sighting.time,
    lastSeen: nextLastSeen(existing?.lastSeen ?? null, sighting),
  };
}

function merge(stored: Attributes, sent: Attributes | undefined): Attributes {
  // The stored object itself when nothing changes (SDKs send the same attributes again and again): its flat form
  // then needs no rewrite.
  if (sent === undefined || sendsNothingNew(stored, sent)) return stored;
  // Spread defines own properties (never a prototype); validation already refused `__proto__` and friends.
  return { ...stored, ...sent };
}

/** Whether every attribute in `sent` is stored already with the same primitive value. */
function sendsNothingNew(stored: Attributes, sent: Attributes): boolean {
  for (const name in sent) {
    const value = sent[name];
    if (typeof value === "object" && value !== null) return false;
    if (!Object.hasOwn(stored, name) || !Object.is(stored[name], value)) return false;
  }
  return true;
}

function nextLastSeen(lastSeen: number | null, sighting: Sighting): number | null {
  if (!sighting.active) return lastSeen;
  return lastSeen === null ? sighting.time : Math.max(lastSeen, sighting.time);
}

/** The companies a user belongs to, in id order. */
export function listUserCompanyIds(store: KvStore, environmentId: string, userId: string): string[] {
  return listMembers(store, prefixRange(environmentId, "u", userId));
}

/** The users of a company, in id order. */
export function listCompanyUserIds(store: KvStore, environmentId: string, companyId: string): string[] {
  return listMembers(store, prefixRange(environmentId, "c", companyId));
}

function listMembers(store: KvStore, range: { start: string; end: string }): string[] {
  const ids: string[] = [];
  for (const entry of store.table("memberships").range(range)) ids.push(lastKeyPart(entry.key));
  return ids;
}
