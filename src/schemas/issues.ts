import type * as v from "valibot";
import { ServiceError, type ErrorCode, type ValidationIssue } from "../errors/catalogue.js";

/** valibot issues as the contract's `validationErrors`: a dotted path and a message each. */
export function toValidationIssues(issues: readonly v.BaseIssue<unknown>[], prefix = ""): ValidationIssue[] {
  return issues.map((issue) => {
    const path = issue.path?.map((item) => String(item.key)).join(".") ?? "";
    return { path: prefix && path ? `${prefix}.${path}` : prefix || path, message: issue.message };
  });
}

/** Parses `input` or throws a 400 ServiceError listing every issue. */
export function parseOrThrow<TSchema extends v.GenericSchema>(
  safeParse: (schema: TSchema, input: unknown) => v.SafeParseResult<TSchema>,
  schema: TSchema,
  input: unknown,
  code: ErrorCode = "INVALID_BODY",
): v.InferOutput<TSchema> {
  const result = safeParse(schema, input);
  if (result.success) return result.output;
  throw new ServiceError(code, undefined, toValidationIssues(result.issues));
}
