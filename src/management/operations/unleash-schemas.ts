/**
 * What the Unleash 6 admin API answers, as far as the importer reads it (API.md §13.3). Every answer is checked
 * before it is used: Unleash adds fields freely (loose objects), but a field the mapping reads must have its type,
 * or the import stops with a 502 naming the call and the path.
 */
import * as v from "valibot";

const Constraint = v.looseObject({
  contextName: v.string(),
  operator: v.string(),
  values: v.optional(v.array(v.string())),
  value: v.optional(v.nullable(v.string())),
  inverted: v.optional(v.nullable(v.boolean())),
  caseInsensitive: v.optional(v.nullable(v.boolean())),
});

const Variant = v.looseObject({
  name: v.string(),
  weight: v.number(),
  stickiness: v.optional(v.nullable(v.string())),
  payload: v.optional(v.nullable(v.looseObject({ type: v.string(), value: v.string() }))),
  overrides: v.optional(v.nullable(v.array(v.looseObject({ contextName: v.string(), values: v.array(v.string()) })))),
});

const Strategy = v.looseObject({
  id: v.optional(v.string()),
  name: v.string(),
  parameters: v.optional(v.nullable(v.record(v.string(), v.union([v.string(), v.number(), v.boolean()])))),
  constraints: v.optional(v.nullable(v.array(Constraint))),
  segments: v.optional(v.nullable(v.array(v.number()))),
  variants: v.optional(v.nullable(v.array(Variant))),
  disabled: v.optional(v.nullable(v.boolean())),
  sortOrder: v.optional(v.nullable(v.number())),
});

export const UnleashFeatureSchema = v.looseObject({
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(255)),
  description: v.optional(v.nullable(v.string())),
  dependencies: v.optional(
    v.nullable(v.array(v.looseObject({ feature: v.string(), enabled: v.optional(v.nullable(v.boolean())), variants: v.optional(v.nullable(v.array(v.string()))) }))),
  ),
  environments: v.array(
    v.looseObject({
      name: v.string(),
      enabled: v.boolean(),
      strategies: v.array(Strategy),
      variants: v.optional(v.nullable(v.array(Variant))),
    }),
  ),
});

export const UnleashFeatureListSchema = v.looseObject({ features: v.array(v.looseObject({ name: v.string() })) });
export const UnleashSegmentsSchema = v.looseObject({ segments: v.array(v.looseObject({ id: v.number(), name: v.optional(v.string()), constraints: v.array(Constraint) })) });
export const UnleashEnvironmentsSchema = v.looseObject({ environments: v.array(v.looseObject({ name: v.string() })) });
export const UnleashProjectsSchema = v.looseObject({ projects: v.array(v.looseObject({ id: v.string() })) });

export type UnleashFeature = v.InferOutput<typeof UnleashFeatureSchema>;
export type UnleashStrategy = v.InferOutput<typeof Strategy>;
export type UnleashConstraint = v.InferOutput<typeof Constraint>;
export type UnleashVariant = v.InferOutput<typeof Variant>;
export type UnleashSegment = v.InferOutput<typeof UnleashSegmentsSchema>["segments"][number];
