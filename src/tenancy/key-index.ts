import { timingSafeEqual } from "node:crypto";
import { digestKey } from "./identifiers.js";
import type { KeyRecord } from "./tenancy-records.js";
import type { TenancyRepository } from "./tenancy-repository.js";

/**
 * digest → key record, in memory, so a request never waits on the store to learn who it is. Changes made by this
 * process apply at once (`reload`); another process sharing the data dir is seen on a miss and on the periodic
 * reload that `main.ts` schedules.
 */
export class KeyIndex {
  private byDigest = new Map<string, KeyRecord>();
  /**
   * Publishable keys as presented → their records: they are public (shown in every browser), so no digest protects
   * them, and the one SHA-256 per request the digest map costs is skipped for the keys most requests carry.
   * Secret and tracking keys are only ever held as digests.
   */
  private publishable = new Map<string, KeyRecord>();

  constructor(private readonly tenancy: TenancyRepository) {
    this.reload();
  }

  reload(): void {
    const next = new Map<string, KeyRecord>();
    for (const { digest, record } of this.tenancy.listKeys()) next.set(digest, record);
    this.byDigest = next;
    this.publishable = new Map();
  }

  resolve(secret: string): KeyRecord | undefined {
    const known = this.publishable.get(secret);
    if (known !== undefined) return known;
    const digest = digestKey(secret);
    let record = this.byDigest.get(digest);
    if (!record) {
      record = this.tenancy.lookupKey(digest);
      if (record) this.byDigest.set(digest, record);
    }
    if (record?.kind === "publishable") this.publishable.set(secret, record);
    return record;
  }

  forget(digest: string): void {
    this.byDigest.delete(digest);
    // Which presented key had this digest is not kept: every publishable entry is dropped, and found again by digest.
    this.publishable.clear();
  }
}

/** Constant-time comparison of a presented secret against a stored digest. */
export function matchesDigest(secret: string, expectedDigest: string): boolean {
  const presented = Buffer.from(digestKey(secret), "hex");
  const expected = Buffer.from(expectedDigest, "hex");
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}
