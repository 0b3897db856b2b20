/**
 * Drives guarded rollouts (API.md §17) in the service, no cron: once a second it reads every active rollout from the
 * store with its current step's reading (the exposure projection's tallies) and submits what `decide` says as a
 * `rollout.transition` naming the state and step it was decided on. The applier takes such a change only while the
 * rollout is still there, so in cluster mode every node may submit the same decision and exactly one applies; after
 * a restart the driver picks the rollouts up from the store where they were.
 */
import type { Logger } from "../observability/logger.js";
import type { ManagementLog } from "../management/management-log.js";
import type { ChangeOf } from "../management/changes.js";
import { newEnvelope } from "../management/envelope.js";
import { decide } from "../management/rollouts/rollout-decision.js";
import { currentReading, evidenceOf } from "../management/rollouts/rollout-evidence.js";
import type { RolloutRecord } from "../management/rollouts/rollout-records.js";
import { RolloutRepository } from "../management/rollouts/rollout-repository.js";
import { FeatureRepository } from "../features/feature-repository.js";
import type { KvStore } from "../storage/kv.js";

const CHECK_EVERY_MS = 1000;

export class RolloutDriver {
  private readonly rollouts: RolloutRepository;
  private readonly features: FeatureRepository;
  private readonly timer: NodeJS.Timeout;
  private checking = false;

  constructor(
    private readonly store: KvStore,
    private readonly management: ManagementLog,
    private readonly log: Logger,
    intervalMs = CHECK_EVERY_MS,
  ) {
    this.rollouts = new RolloutRepository(store);
    this.features = new FeatureRepository(store);
    this.timer = setInterval(() => void this.check(), intervalMs);
    this.timer.unref();
  }

  /** One look at every running rollout; overlapping looks are skipped (a slow submit must not pile them up). */
  async check(now = Date.now()): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      this.store.refresh();
      for (const rollout of this.rollouts.allActive()) if (rollout.state === "running") await this.drive(rollout, now);
    } finally {
      this.checking = false;
    }
  }

  private async drive(rollout: RolloutRecord, now: number): Promise<void> {
    const reading = currentReading(rollout, this.rollouts);
    const current = this.features.rulesOf(rollout.environmentId, rollout.featureKey).targeting.version;
    const decision =
      current !== rollout.writtenVersion
        ? { action: "pause" as const, reason: `The feature's targeting was edited by hand during the rollout (version ${current}); the rollout holds.` }
        : decide(rollout, reading, now);
    if (decision.action === "wait") return;
    const change: ChangeOf<"rollout.transition"> = {
      // The rollout's author stands behind its steps, as behind a scheduled change request; the audit says `automatic`.
      ...newEnvelope(rollout.createdBy, null, new Date(now)),
      type: "rollout.transition",
      environmentId: rollout.environmentId,
      rolloutId: rollout.id,
      action: decision.action,
      expected: { state: rollout.state, step: rollout.step },
      reason: decision.reason,
      evidence: evidenceOf(reading),
    };
    try {
      const outcome = await this.management.submit(change);
      if (!outcome.ok) this.log.error("rollout transition refused", { rolloutId: rollout.id, action: decision.action, error: outcome.error });
      else if (outcome.value.applied) this.log.info("rollout moved", { rolloutId: rollout.id, action: decision.action, state: outcome.value.rollout.state, step: outcome.value.rollout.step });
    } catch (error) {
      // Tried again on the next look.
      this.log.error("rollout transition not submitted", { rolloutId: rollout.id, error: String(error) });
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
