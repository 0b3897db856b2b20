/**
 * Property test: our compiled evaluation answers exactly as the reference evaluator, result by result, on random
 * rule trees and contexts, with random prerequisites and kill switches compiled into the served rules (API.md §15) —
 * and a feature with prerequisites is on exactly when their definition says. A failure prints the seed and the
 * shrunk counterexample (fast-check's default report).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

import { compileRuleset, contextValues, evaluateRuleset, serializeEvaluation, writeAnswer } from "../../src/evaluation/index.js";
import { validateConfig, validateTargeting } from "../../src/schemas/rules.js";
import { evaluationContext, featuresWithPrerequisites, PARITY_NOW } from "./arbitraries.js";
import { accessByDefinition, ownRulesReference, servedDefinitions } from "./prerequisite-oracle.js";
import { compileReference, evaluateReference, REFERENCE_NAMES } from "./reference.js";

const decoder = new TextDecoder();

/** (ruleset, context) pairs compared, across the whole file, at least. */
const MIN_CASES = 100_000;
const CONTEXTS_PER_RULESET = 16;
/** Rulesets drawn: every one is compared with all its contexts, so the count, not the clock, says when to stop. */
const RULESETS = Math.ceil((MIN_CASES * 1.2) / CONTEXTS_PER_RULESET);
/**
 * A generous ceiling, not a budget: about 40 s on a quiet two-core machine; a busy one takes longer and still
 * compares every case rather than stopping short of MIN_CASES.
 */
const TIMEOUT_MS = 300_000;

describe("evaluation parity with @bucketco/flag-evaluation and @reflag/flag-evaluation", () => {
  const originalTimeZone = process.env.TZ;
  beforeAll(() => {
    // A zone with DST around PARITY_NOW, where the reference's local-calendar "N days ago" differs from N × 24 h.
    process.env.TZ = "Europe/Berlin";
    // AFTER / BEFORE read the clock: both evaluators must see the same instant.
    vi.useFakeTimers({ toFake: ["Date"], now: PARITY_NOW });
    // The reference logs every NaN comparison with console.error; that would drown the report.
    vi.spyOn(console, "error").mockImplementation(() => undefined);
  });
  afterAll(() => {
    if (originalTimeZone === undefined) delete process.env.TZ;
    else process.env.TZ = originalTimeZone;
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it(
    `matches both references on at least ${MIN_CASES} random (ruleset, context) pairs`,
    () => {
      expect(new Date(PARITY_NOW).getTimezoneOffset()).not.toBe(new Date(PARITY_NOW - 86_400_000).getTimezoneOffset());
      let cases = 0;
      let casesWithPrerequisites = 0;
      const started = performance.now();
      fc.assert(
        fc.property(
          featuresWithPrerequisites(),
          fc.array(evaluationContext(), { minLength: CONTEXTS_PER_RULESET, maxLength: CONTEXTS_PER_RULESET }),
          fc.constantFrom<{ onlyEnabled?: boolean; onlyKey?: string }>({}, {}, {}, { onlyEnabled: true }, { onlyKey: "huddle" }),
          ({ definitions: saved, settings }, contexts, options) => {
            // The generator must only produce trees the management API accepts, or parity would be vacuous.
            for (const definition of saved) {
              expect(validateTargeting(definition.targeting).ok).toBe(true);
              expect(validateConfig(definition.config).ok).toBe(true);
            }
            // What the environment serves and the server compiles: prerequisites and kill switches compiled in.
            const definitions = servedDefinitions(saved, settings);
            const withPrerequisites = settings.some((setting) => setting.prerequisites.length > 0);
            const own = withPrerequisites && options.onlyEnabled === undefined && options.onlyKey === undefined ? ownRulesReference(saved) : undefined;
            const ours = compileRuleset(definitions);
            expect(ours.compileFailures).toEqual([]);
            const [reference, second] = REFERENCE_NAMES.map((name) => compileReference(definitions, name));
            for (const context of contexts) {
              const actual = evaluateRuleset(ours, context, options);
              const expected = evaluateReference(reference!, context, options);
              // The second reference must answer as the first (docs/SDK-COMPATIBILITY.md: they differ only outside
              // evaluation); so ours, equal to the first, is equal to both.
              const alsoExpected = evaluateReference(second!, context, options);
              if (JSON.stringify(alsoExpected) !== JSON.stringify(expected)) expect(alsoExpected).toEqual(expected);
              // JSON text comparison is exact for these JSON-shaped results and far cheaper than a deep equal;
              // the deep equal runs only to describe a difference.
              const expectedMap = JSON.stringify(Object.fromEntries(expected.map((item) => [item.key, item])));
              // The answer writer, which serves the HTTP answers, must write the same text from its cached items.
              const written = decoder.decode(writeAnswer(ours, contextValues(ours, context), { flagStateVersion: 7, remoteContextUsed: true, ...options }));
              const expectedAnswer = `{"success":true,"flagStateVersion":7,"remoteContextUsed":true,"features":${expectedMap}}`;
              if (JSON.stringify(actual) !== JSON.stringify(expected) || serializeEvaluation(actual) !== expectedMap || written !== expectedAnswer) {
                expect(actual).toEqual(expected);
                expect(serializeEvaluation(actual)).toBe(expectedMap);
                expect(written).toBe(expectedAnswer);
              }
              if (own) {
                const access = accessByDefinition(own, saved, settings, context);
                for (const item of actual) if (item.isEnabled !== access.get(item.key)) expect({ key: item.key, isEnabled: item.isEnabled }).toEqual({ key: item.key, isEnabled: access.get(item.key) });
              }
              if (withPrerequisites) casesWithPrerequisites++;
              cases++;
            }
          },
        ),
        { numRuns: RULESETS },
      );
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.info(`parity: ${cases} (ruleset, context) pairs compared in ${seconds} s, ${casesWithPrerequisites} with prerequisites`);
      expect(cases).toBe(RULESETS * CONTEXTS_PER_RULESET);
      expect(cases).toBeGreaterThanOrEqual(MIN_CASES);
      expect(casesWithPrerequisites).toBeGreaterThan(MIN_CASES / 3);
    },
    TIMEOUT_MS,
  );
});
