/** The body of OFREP's evaluation requests (API.md §14): `{"context": {...}}`, the context optional. */
import * as v from "valibot";

const plainObject = v.custom<Record<string, unknown>>(
  (input) => typeof input === "object" && input !== null && !Array.isArray(input),
  "must be a JSON object",
);

const identifier = v.union([v.string(), v.number()], "must be a string or a number");

/** An OpenFeature evaluation context as the providers send it; any other attribute is free-form. */
export const OfrepContextSchema = v.looseObject(
  {
    targetingKey: v.optional(identifier),
    companyId: v.optional(identifier),
    user: v.optional(plainObject),
    company: v.optional(plainObject),
    other: v.optional(plainObject),
  },
  "must be a JSON object",
);

export type OfrepContext = v.InferOutput<typeof OfrepContextSchema>;

/** The request object itself; other members (none defined today) are ignored. */
export const OfrepRequestSchema = v.looseObject({ context: v.optional(v.unknown()) }, "must be a JSON object");
