/**
 * Survey rules (API.md "Automated feedback surveys"): per environment and feature, the question a user of the feature is asked, when, and how
 * often. Stored in the `surveys` table under `env␀rule␀<featureKey>`; written only through the management log.
 */
import * as v from "valibot";
import { key, prefixRange, type KvStore } from "../storage/kv.js";

export interface SurveyRule {
  featureKey: string;
  question: string;
  /** Paused rules ask nobody; their prompts already sent stay valid. */
  enabled: boolean;
  /** A user qualifies after this many uses of the feature… */
  afterUses: number | null;
  /** …or once this many days have passed since their first use (either condition suffices). */
  afterDays: number | null;
  /** No user is asked anything (by any survey of the environment) within this many days of their last prompt. */
  quietPeriodDays: number;
  updatedAt: string;
}

const DEFAULT_QUIET_PERIOD_DAYS = 7;
const MAX_DAYS = 3650;

const Days = (what: string) =>
  v.pipe(v.number("must be a number"), v.integer("must be an integer"), v.minValue(0, "must be at least 0"), v.maxValue(MAX_DAYS, `must be at most ${MAX_DAYS} (${what})`));

/** `PUT /admin/environments/:envId/features/:key/survey` body. */
export const PutSurveyBody = v.pipe(
  v.strictObject(
    {
      question: v.pipe(v.string("must be a string"), v.trim(), v.minLength(1, "must not be empty"), v.maxLength(256, "must be at most 256 characters")),
      enabled: v.optional(v.boolean("must be a boolean"), true),
      afterUses: v.optional(
        v.nullable(v.pipe(v.number("must be a number"), v.integer("must be an integer"), v.minValue(1, "must be at least 1"), v.maxValue(1_000_000, "must be at most 1000000"))),
        null,
      ),
      afterDays: v.optional(v.nullable(Days("days since first use")), null),
      quietPeriodDays: v.optional(Days("quiet period"), DEFAULT_QUIET_PERIOD_DAYS),
    },
    "must be an object with only: question, enabled, afterUses, afterDays, quietPeriodDays",
  ),
  v.forward(
    v.check((body) => body.afterUses !== null || body.afterDays !== null, "give afterUses, afterDays or both: who is asked"),
    ["afterUses"],
  ),
);
export type SurveySettings = v.InferOutput<typeof PutSurveyBody>;

const ruleKey = (environmentId: string, featureKey: string) => key(environmentId, "rule", featureKey);

export function getSurveyRule(store: KvStore, environmentId: string, featureKey: string): SurveyRule | undefined {
  return store.table<"surveys", SurveyRule>("surveys").get(ruleKey(environmentId, featureKey));
}

/** Every survey rule of an environment, in feature key order. */
export function listSurveyRules(store: KvStore, environmentId: string): SurveyRule[] {
  return [...store.table<"surveys", SurveyRule>("surveys").range(prefixRange(environmentId, "rule"))].map((entry) => entry.value);
}

/** Inside a write. */
export function writeSurveyRule(store: KvStore, environmentId: string, rule: SurveyRule): void {
  store.table<"surveys", SurveyRule>("surveys").put(ruleKey(environmentId, rule.featureKey), rule);
}

/** Inside a write; answers whether there was one. */
export function removeSurveyRule(store: KvStore, environmentId: string, featureKey: string): SurveyRule | undefined {
  const table = store.table<"surveys", SurveyRule>("surveys");
  const existing = table.get(ruleKey(environmentId, featureKey));
  if (existing) table.remove(ruleKey(environmentId, featureKey));
  return existing;
}

declare module "../storage/kv.js" {
  /** The value types of the tables this room owns (see TableValues). */
  interface TableValues {
    /** Survey rules, prompt channels, token digests and prompts issued, each read by its key's shape. */
    surveys: unknown;
  }
}
