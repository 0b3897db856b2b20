/** The evaluation core: pure functions from feature definitions and a context to evaluated features. No I/O. */
export { compileRuleset, CompiledRuleset } from "./compile-ruleset.js";
export { contextFromQuery, QUERY_LIMITS, type ContextFromQuery } from "./context-from-query.js";
export { writeAnswer, type AnswerOptions, type AnswerTarget, type OutcomeView } from "./answer-writer.js";
export { contextValues, evaluateRuleset } from "./evaluate-ruleset.js";
export { nestedContext, parseFlatQuery, type FlatQuery } from "./flat-query.js";
export { flattenContext } from "./flatten-context.js";
export { rolloutBucket } from "./rollout-bucket.js";
export { serializeEvaluation } from "./serialize-evaluation.js";
export { accessFlag, configFlag, findOfrepFlag, ofrepOutcome, type OfrepFlag, type OfrepOutcome } from "./ofrep-answer.js";
export { outcomeMemo, type OutcomeMemo } from "./outcome-memo.js";
export { contextOfOfrep } from "./ofrep-context.js";
export type {
  ConfigVariants,
  EvaluatedConfig,
  EvaluatedFeature,
  EvaluateOptions,
  FeatureDefinition,
  Filter,
  OptInItem,
  TargetingRules,
} from "./types.js";
