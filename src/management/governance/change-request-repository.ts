/** Change requests per environment, in the `changeRequests` table keyed (environment id, request id). */
import { key, prefixRange, type KvStore } from "../../storage/kv.js";
import type { ChangeRequestRecord } from "./change-request-records.js";

export class ChangeRequestRepository {
  constructor(private readonly store: KvStore) {}

  private get requests() {
    return this.store.table("changeRequests");
  }

  get(environmentId: string, requestId: string): ChangeRequestRecord | undefined {
    return this.requests.get(key(environmentId, requestId));
  }

  /** Newest first. */
  list(environmentId: string): ChangeRequestRecord[] {
    const all = [...this.requests.range(prefixRange(environmentId))].map((entry) => entry.value);
    return all.sort((a, b) => (a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : b.createdAt.localeCompare(a.createdAt)));
  }

  /** Every scheduled request of every environment: what the scheduler arms timers for. */
  listScheduled(): ChangeRequestRecord[] {
    return [...this.requests.range({})].map((entry) => entry.value).filter((request) => request.state === "scheduled");
  }

  /** Inside a write transaction. */
  put(request: ChangeRequestRecord): void {
    this.requests.put(key(request.environmentId, request.id), request);
  }
}
