/**
 * Decides which survey prompt a user gets (API.md "Automated feedback surveys"): a new one when they qualify for a survey they were never
 * asked and their quiet period is over, or, when a stream (re)connects, the latest one still open (the Ably
 * `rewind=1` the browser SDKs ask for; their own cookie keeps a prompt they completed from showing twice).
 */
import { DAY_MS, userUsageKey, type UserUsageCell } from "../analytics/keys.js";
import { usageNames } from "../analytics/queries.js";
import type { FeatureRepository } from "../features/feature-repository.js";
import type { FeatureRecord } from "../features/feature-records.js";
import type { KvStore } from "../storage/kv.js";
import { randomBase62 } from "../tenancy/identifiers.js";
import type { TenancyRepository } from "../tenancy/tenancy-repository.js";
import { PromptStore, type PromptRecord } from "./prompt-store.js";
import { listSurveyRules, type SurveyRule } from "./survey-rules.js";

/** How long a prompt may still be shown after it was issued (the SDKs drop it past `showBefore`). */
export const PROMPT_LIFETIME_MS = DAY_MS;

/** A user's use of one feature: events named by its key or usage events. */
export interface FeatureUsage {
  uses: number;
  /** Epoch ms of the earliest use; null when none. */
  firstAt: number | null;
}

export function usageOf(store: KvStore, environmentId: string, userId: string, feature: Pick<FeatureRecord, "key" | "usageEvents">): FeatureUsage {
  const table = store.table<"aggregates", UserUsageCell>("aggregates");
  let uses = 0;
  let firstAt: number | null = null;
  for (const name of usageNames(feature)) {
    const cell = table.get(userUsageKey(environmentId, userId, name));
    if (!cell) continue;
    uses += cell[0];
    firstAt = firstAt === null ? cell[1] : Math.min(firstAt, cell[1]);
  }
  return { uses, firstAt };
}

/** Whether a user with this usage is asked by `rule` (quiet period and "asked before" are checked apart). */
export function qualifies(rule: Pick<SurveyRule, "afterUses" | "afterDays">, usage: FeatureUsage, now: number): boolean {
  if (usage.uses === 0 || usage.firstAt === null) return false;
  if (rule.afterUses !== null && usage.uses >= rule.afterUses) return true;
  return rule.afterDays !== null && now - usage.firstAt >= rule.afterDays * DAY_MS;
}

export function inQuietPeriod(lastPromptedAt: number | undefined, quietPeriodDays: number, now: number): boolean {
  return lastPromptedAt !== undefined && now - lastPromptedAt < quietPeriodDays * DAY_MS;
}

export class Prompter {
  private readonly prompts: PromptStore;

  constructor(
    private readonly store: KvStore,
    private readonly tenancy: TenancyRepository,
    private readonly features: FeatureRepository,
  ) {
    this.prompts = new PromptStore(store);
  }

  /** Whether the environment has a survey that asks anyone: without one, no channel is handed out. */
  hasActiveSurveys(environmentId: string): boolean {
    return listSurveyRules(this.store, environmentId).some((rule) => rule.enabled);
  }

  /**
   * The prompt to push to the user now: a new one (issued and stored) when they qualify, else with `replay` the
   * latest that is still open. Resolves undefined when there is nothing to send.
   */
  async promptFor(environmentId: string, userId: string, now: number, replay: boolean): Promise<PromptRecord | undefined> {
    // Usage is committed by worker threads: read their latest commits.
    this.store.refresh();
    const candidate = this.candidate(environmentId, userId, now);
    if (candidate) {
      const issued = await this.store.write(() => {
        // Checked again inside the transaction: another check may have issued a prompt since.
        if (!this.stillEligible(environmentId, userId, candidate.rule, now)) return undefined;
        const prompt: PromptRecord = {
          promptId: `prm_${randomBase62(20)}`,
          featureKey: candidate.feature.key,
          featureId: candidate.feature.id,
          question: candidate.rule.question,
          showAfter: now,
          showBefore: now + PROMPT_LIFETIME_MS,
          createdAt: now,
        };
        this.prompts.putPrompt(environmentId, userId, prompt);
        return prompt;
      });
      if (issued) return issued;
    }
    return replay ? this.openPrompt(environmentId, userId, now) : undefined;
  }

  private candidate(environmentId: string, userId: string, now: number): { rule: SurveyRule; feature: FeatureRecord } | undefined {
    const environment = this.tenancy.getEnvironment(environmentId);
    if (!environment) return undefined;
    for (const rule of listSurveyRules(this.store, environmentId)) {
      if (!this.stillEligible(environmentId, userId, rule, now)) continue;
      const feature = this.features.getFeature(environment.appId, rule.featureKey);
      if (feature && qualifies(rule, usageOf(this.store, environmentId, userId, feature), now)) return { rule, feature };
    }
    return undefined;
  }

  /** Enabled, never asked this user, and the user's quiet period is over. */
  private stillEligible(environmentId: string, userId: string, rule: SurveyRule, now: number): boolean {
    if (!rule.enabled) return false;
    if (this.prompts.prompt(environmentId, userId, rule.featureKey) !== undefined) return false;
    return !inQuietPeriod(this.prompts.lastPromptedAt(environmentId, userId), rule.quietPeriodDays, now);
  }

  /** The user's latest prompt if it may still be shown and was neither answered nor dismissed. */
  private openPrompt(environmentId: string, userId: string, now: number): PromptRecord | undefined {
    let latest: PromptRecord | undefined;
    for (const prompt of this.prompts.promptsOf(environmentId, userId)) if (!latest || prompt.createdAt > latest.createdAt) latest = prompt;
    if (!latest || latest.showBefore <= now || this.prompts.isDone(environmentId, latest.promptId)) return undefined;
    return latest;
  }
}
