/**
 * Fires scheduled change requests (API.md §15) in the service, no cron: a timer per scheduled request, armed on start
 * from the store and re-armed whenever a change request changes. Firing is itself a management change
 * (`change-request.fire`, stamped with the real time), applied in one transaction: a crash before it commits leaves
 * the request scheduled (fired again on the next start), after it the request is applied, never twice. In cluster
 * mode every node may fire; the replicated log applies the first and the others find it no longer scheduled.
 */
import type { Logger } from "../observability/logger.js";
import type { ManagementLog } from "../management/management-log.js";
import type { ChangeOf } from "../management/changes.js";
import { newEnvelope } from "../management/envelope.js";
import { ChangeRequestRepository } from "../management/governance/change-request-repository.js";
import type { ChangeRequestRecord } from "../management/governance/change-request-records.js";
import type { KvStore } from "../storage/kv.js";

/** setTimeout's longest delay; a later time is reached in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** After a firing could not be submitted (the cluster's log unreachable, say). */
const RETRY_MS = 1000;

export class ChangeRequestScheduler {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly requests: ChangeRequestRepository;
  private stopped = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: KvStore,
    private readonly management: ManagementLog,
    private readonly log: Logger,
  ) {
    this.requests = new ChangeRequestRepository(store);
    this.unsubscribe = management.onApplied((change) => {
      if (change.type.startsWith("change-request.")) this.rearm((change as ChangeOf<"change-request.apply">).environmentId, (change as ChangeOf<"change-request.apply">).requestId);
    });
    for (const request of this.requests.listScheduled()) this.arm(request);
  }

  private rearm(environmentId: string, requestId: string): void {
    const request = this.requests.get(environmentId, requestId);
    if (request?.state === "scheduled") this.arm(request);
    else this.disarm(requestId);
  }

  private disarm(requestId: string): void {
    clearTimeout(this.timers.get(requestId));
    this.timers.delete(requestId);
  }

  private arm(request: ChangeRequestRecord, delayMs?: number): void {
    if (this.stopped || request.scheduledAt === null) return;
    this.disarm(request.id);
    const wait = delayMs ?? Math.max(0, Date.parse(request.scheduledAt) - Date.now());
    const timer = setTimeout(() => void this.fire(request.environmentId, request.id), Math.min(wait, MAX_TIMER_MS));
    this.timers.set(request.id, timer);
  }

  private async fire(environmentId: string, requestId: string): Promise<void> {
    this.timers.delete(requestId);
    this.store.refresh();
    const request = this.requests.get(environmentId, requestId);
    if (this.stopped || request?.state !== "scheduled" || request.scheduledAt === null) return;
    const now = new Date();
    // Not due yet (a long wait reached in steps): wait on.
    if (now.toISOString() < request.scheduledAt) return this.arm(request);
    // The request's author stands behind what it writes; the audit details say the scheduler fired it.
    const change = { ...newEnvelope(request.createdBy, null, now), type: "change-request.fire" as const, environmentId, requestId };
    try {
      const outcome = await this.management.submit(change);
      if (!outcome.ok) this.log.error("scheduled change request refused", { requestId, error: outcome.error });
      else if (outcome.value.changeRequest?.state === "suspended") this.log.info("scheduled change request suspended", { requestId, reason: outcome.value.changeRequest.suspendedReason });
    } catch (error) {
      this.log.error("scheduled change request not fired; retrying", { requestId, error: String(error) });
      this.arm(request, RETRY_MS);
    }
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
