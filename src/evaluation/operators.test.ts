import { evaluate, evaluateFeatureRules } from "@bucketco/flag-evaluation";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

import { CONTEXT_OPERATORS, type ContextOperator, OPERATORS_WITHOUT_VALUES } from "../schemas/rules.js";
import { compileFieldTest, inheritedFieldResult, inheritedFieldValue, reportsMissingField } from "./operators.js";

const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);
const DAY = 86_400_000;
const iso = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();

/** Corner cases of API.md §3, used both as field values and as operands. */
const STRINGS = [
  "", "a", "A", "abc", "ABC", "xAbCx", "ß", "SS", "İ", "ü", "Ü",
  "0", "-0", "1", "01", "1.0", "10", "9", "-1", "1e3", "0x10", " 5 ", "NaN", "Infinity", "-Infinity",
  "true", "false", "True", "TRUE", "yes",
  "2025-06-15", "2025-06-15T12:00:00.000Z", "not a date", "2020-02-30",
  iso(0), iso(-DAY), iso(-DAY + 1), iso(-DAY - 1), iso(-7 * DAY), iso(-1.5 * DAY), iso(-2 * DAY + 1), iso(DAY),
  "1.5", "7", "30",
];

describe("compileFieldTest matches the reference evaluate()", () => {
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ["Date"], now: NOW });
    vi.spyOn(console, "error").mockImplementation(() => undefined);
  });
  afterAll(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  for (const operator of CONTEXT_OPERATORS) {
    it(`${operator} on every pair of corner-case strings`, () => {
      let compared = 0;
      const operandLists = [...STRINGS.map((operand) => [operand]), ["a", "abc", "1"], ["x", "true", ""]];
      for (const values of operandLists) {
        const test = compileFieldTest(operator, values);
        for (const fieldValue of STRINGS) {
          expect([operator, values, fieldValue, test(fieldValue)]).toEqual([
            operator,
            values,
            fieldValue,
            evaluate(fieldValue, operator, values),
          ]);
          compared++;
        }
      }
      expect(compared).toBe((STRINGS.length + 2) * STRINGS.length);
    });
  }

  it("answers ANY_OF / NOT_ANY_OF right when filters share a list and its remembered last answer", () => {
    const allowList = ["c0", "c3", "c6"];
    const tests = [
      { test: compileFieldTest("ANY_OF", [...allowList]), in: true, list: allowList },
      { test: compileFieldTest("NOT_ANY_OF", [...allowList]), in: false, list: allowList },
      { test: compileFieldTest("ANY_OF", ["c3", "c0", "c6"]), in: true, list: allowList },
      { test: compileFieldTest("ANY_OF", ["c1", "c3"]), in: true, list: ["c1", "c3"] },
      // A list whose JSON differs only by a separator inside a value is another list.
      { test: compileFieldTest("ANY_OF", ["c0,c3", "c6"]), in: true, list: ["c0,c3", "c6"] },
    ];
    const values = ["c0", "c1", "c3", "c3", "c0,c3", "", "c6", "c9", "c0"];
    for (let round = 0; round < 3; round++) {
      for (const value of values) {
        // A new string each time, as each request's query gives: the answer cannot depend on the string's identity.
        const fresh = `${value} `.slice(0, value.length);
        for (const { test, in: wanted, list } of tests) expect(test(fresh)).toBe(list.includes(value) === wanted);
      }
    }
  });

  it("spot checks of the documented semantics", () => {
    expect(compileFieldTest("IS", ["Pro"])("pro")).toBe(false); // case-sensitive
    expect(compileFieldTest("ANY_OF", ["a", "b"])("B")).toBe(false);
    expect(compileFieldTest("CONTAINS", ["BC"])("xabcx")).toBe(true); // case-insensitive
    expect(compileFieldTest("GT", ["5"])("abc")).toBe(false); // NaN
    expect(compileFieldTest("GT", ["-1"])("")).toBe(true); // Number("") is 0
    expect(compileFieldTest("DATE_AFTER", ["2025-06-15"])("2025-06-15")).toBe(true); // inclusive
    expect(compileFieldTest("DATE_BEFORE", ["2025-06-15"])("2025-06-15")).toBe(true);
    expect(compileFieldTest("AFTER", ["1"])(iso(-DAY + 1))).toBe(true); // less than a day ago
    expect(compileFieldTest("BEFORE", ["1"])(iso(-DAY - 1))).toBe(true); // more than a day ago
    expect(compileFieldTest("IS_TRUE", [])("True")).toBe(false);
  });

  it("date tests of several features reading one value agree with the reference as values alternate (one parse remembered)", () => {
    const tests = [compileFieldTest("DATE_AFTER", ["2025-01-01"]), compileFieldTest("DATE_BEFORE", ["2025-03-01"]), compileFieldTest("AFTER", ["30"])];
    const values = ["2025-02-01", "2025-02-01", "2024-12-31", "not a date", "", "2025-02-01", iso(-DAY), iso(-DAY)];
    for (const value of values) {
      for (const [index, operator] of (["DATE_AFTER", "DATE_BEFORE", "AFTER"] as const).entries()) {
        const operand = ["2025-01-01", "2025-03-01", "30"][index]!;
        expect([operator, value, tests[index]!(value)]).toEqual([operator, value, evaluate(value, operator, [operand])]);
      }
    }
  });

  it("AFTER follows the clock rather than the clock at compile time", () => {
    const withinADay = compileFieldTest("AFTER", ["1"]);
    expect(withinADay(iso(-DAY / 2))).toBe(true);
    vi.setSystemTime(NOW + DAY);
    expect(withinADay(iso(-DAY / 2))).toBe(false);
    vi.setSystemTime(NOW);
  });
});

describe("fields named like Object.prototype members", () => {
  beforeAll(() => vi.spyOn(console, "error").mockImplementation(() => undefined));
  afterAll(() => vi.restoreAllMocks());

  it("are recognised, ordinary names are not", () => {
    expect(inheritedFieldValue("toString")).toBe(Object.prototype.toString);
    expect(inheritedFieldValue("__proto__")).toBe(Object.prototype);
    expect(inheritedFieldValue("user.toString")).toBeUndefined();
    expect(inheritedFieldValue("id")).toBeUndefined();
  });

  for (const field of ["toString", "constructor", "__proto__", "valueOf", "hasOwnProperty"]) {
    for (const operator of CONTEXT_OPERATORS) {
      const rules = [{ filter: { type: "context" as const, field, operator, values: ["x"] }, value: true }];
      if (operator === "CONTAINS" || operator === "NOT_CONTAINS") {
        it(`${operator} on absent "${field}": the reference throws, ours is false`, () => {
          expect(() => evaluateFeatureRules({ context: {}, featureKey: "f", rules })).toThrow(TypeError);
          expect(inheritedFieldResult(operator)).toBe(false);
        });
        continue;
      }
      it(`${operator} on absent "${field}" answers as the reference, without reporting it missing`, () => {
        const reference = evaluateFeatureRules({ context: {}, featureKey: "f", rules });
        expect(reference.missingContextFields).toEqual([]);
        expect(inheritedFieldResult(operator)).toBe(reference.ruleEvaluationResults[0]);
      });
    }
  }
});

describe("reportsMissingField", () => {
  it("is false only for SET and NOT_SET", () => {
    const silent = CONTEXT_OPERATORS.filter((operator: ContextOperator) => !reportsMissingField(operator));
    expect(silent).toEqual(["SET", "NOT_SET"]);
    expect([...OPERATORS_WITHOUT_VALUES]).toEqual(expect.arrayContaining(silent));
  });
});
