/**
 * The tracking bodies of API.md §4 as valibot schemas. Each body schema validates the wire shape and transforms it
 * into a normalised `TrackingItem` (ids as strings, timestamps as epoch milliseconds, "absent" always `undefined`),
 * so the write path never sees the wire forms. Nothing here throws: `parseTrackingCall` answers issues as data.
 *
 * Leniencies on purpose, for the official SDKs: bodies are loose objects (unknown keys ignored); an optional field
 * sent as `null` counts as absent (except `context.active`, which must be a boolean when sent); a feedback `comment`
 * of `""` counts as absent (the browser widget sends the trimmed textarea, empty when the user only gave a score);
 * a config evaluation result of `{}` is `{key: null, payload: null}` (the node SDK sends `{key: undefined, payload:
 * undefined}`, which JSON drops).
 */
import * as v from "valibot";
import type { ValidationIssue } from "../errors/catalogue.js";
import { toValidationIssues } from "./issues.js";
import {
  AttributesSchema,
  BULK_ITEM_TYPES,
  CONFIG_ACTIONS,
  ContextSchema,
  EventNameSchema,
  FEATURE_EVENT_ACTIONS,
  FEEDBACK_SOURCES,
  FeatureIdSchema,
  FeatureKeySchema,
  FeedbackIdSchema,
  IdSchema,
  isPlainObject,
  MAX_BULK_ITEMS,
  MAX_COMMENT_LENGTH,
  MAX_FEATURE_EVENTS,
  nullToUndefined,
  ObjectSchema,
  plainObject,
  PROMPT_EVENT_ACTIONS,
  PromptIdSchema,
  QuestionSchema,
  text,
  TimestampSchema,
  type BulkItemType,
} from "./tracking-fields.js";

/** The body entries behind `Sighted`, shared by `/user`, `/company` and `/event`. */
const SIGHTED_ENTRIES = {
  attributes: v.nullish(AttributesSchema),
  timestamp: v.nullish(TimestampSchema),
  context: v.nullish(ContextSchema),
};

function sighted(body: v.InferOutput<v.ObjectSchema<typeof SIGHTED_ENTRIES, undefined>>) {
  return { attributes: nullToUndefined(body.attributes), timestamp: nullToUndefined(body.timestamp), active: body.context?.active !== false };
}

// ---------------------------------------------------------------------------------------------------------------
// Body schemas. Each transforms into its TrackingItem (without `path`): the item types below are their outputs.

export const UserBodySchema = v.pipe(
  v.looseObject(
    {
      userId: IdSchema,
      ...SIGHTED_ENTRIES,
    },
    "must be an object",
  ),
  v.transform((body) => ({ type: "user" as const, userId: body.userId, ...sighted(body) })),
);

export const CompanyBodySchema = v.pipe(
  v.looseObject(
    {
      companyId: IdSchema,
      userId: v.nullish(IdSchema),
      ...SIGHTED_ENTRIES,
    },
    "must be an object",
  ),
  v.transform((body) => ({ type: "company" as const, companyId: body.companyId, userId: nullToUndefined(body.userId), ...sighted(body) })),
);

export const EventBodySchema = v.pipe(
  v.looseObject(
    {
      event: EventNameSchema,
      userId: IdSchema,
      companyId: v.nullish(IdSchema),
      ...SIGHTED_ENTRIES,
    },
    "must be an object",
  ),
  v.transform(
    (body) => ({ type: "event" as const, event: body.event, userId: body.userId, companyId: nullToUndefined(body.companyId), ...sighted(body) }),
  ),
);

export const FeedbackBodySchema = v.pipe(
  v.looseObject(
    {
      feedbackId: v.nullish(FeedbackIdSchema),
      userId: IdSchema,
      companyId: v.nullish(IdSchema),
      featureId: v.nullish(FeatureIdSchema),
      key: v.nullish(FeatureKeySchema),
      score: v.nullish(
        v.pipe(
          v.number("must be an integer from 1 to 5"),
          v.integer("must be an integer from 1 to 5"),
          v.minValue(1, "must be an integer from 1 to 5"),
          v.maxValue(5, "must be an integer from 1 to 5"),
        ),
      ),
      // "" is what the widget sends for an untouched comment box: read as absent.
      comment: v.nullish(v.union([v.literal(""), text(1, MAX_COMMENT_LENGTH)], "must be a string")),
      question: v.nullish(QuestionSchema),
      promptedQuestion: v.nullish(QuestionSchema),
      promptId: v.nullish(PromptIdSchema),
      source: v.nullish(v.picklist(FEEDBACK_SOURCES, `must be one of ${FEEDBACK_SOURCES.join(", ")}`)),
      timestamp: v.nullish(TimestampSchema),
    },
    "must be an object",
  ),
  v.forward(
    v.partialCheck(
      [["featureId"], ["key"]],
      (body) => body.featureId != null || body.key != null,
      "featureId or key is required",
    ),
    ["featureId"],
  ),
  v.forward(
    v.partialCheck(
      [["score"], ["comment"]],
      (body) => body.score != null || (body.comment != null && body.comment !== ""),
      "score or comment is required",
    ),
    ["score"],
  ),
  v.transform(
    (body) => ({
      type: "feedback" as const,
      feedbackId: nullToUndefined(body.feedbackId),
      userId: body.userId,
      companyId: nullToUndefined(body.companyId),
      featureId: nullToUndefined(body.featureId),
      key: nullToUndefined(body.key),
      score: nullToUndefined(body.score),
      comment: body.comment === "" ? undefined : nullToUndefined(body.comment),
      question: nullToUndefined(body.question),
      promptedQuestion: nullToUndefined(body.promptedQuestion),
      promptId: nullToUndefined(body.promptId),
      source: nullToUndefined(body.source),
      timestamp: nullToUndefined(body.timestamp),
    }),
  ),
);

const ConfigEvalResultSchema = v.pipe(
  plainObject(
    { key: v.nullish(v.string("must be a string or null")), payload: v.optional(v.unknown()) },
    "must be a boolean, or {key, payload} for a config action",
  ),
  v.transform((result) => ({ key: result.key ?? null, payload: result.payload ?? null })),
);

const ACTION_MESSAGE = `must be one of ${FEATURE_EVENT_ACTIONS.join(", ")}`;

export const FeatureEventBodySchema = v.pipe(
  v.looseObject(
    {
      action: v.picklist(FEATURE_EVENT_ACTIONS, ACTION_MESSAGE),
      key: FeatureKeySchema,
      targetingVersion: v.nullish(
        v.pipe(
          v.number("must be a non-negative integer"),
          v.integer("must be a non-negative integer"),
          v.minValue(0, "must be a non-negative integer"),
        ),
      ),
      evalContext: v.nullish(ObjectSchema),
      evalResult: v.optional(v.unknown()),
      evalRuleResults: v.nullish(v.array(v.boolean("must be a boolean"), "must be an array of booleans")),
      evalMissingFields: v.nullish(v.array(v.string("must be a string"), "must be an array of strings")),
    },
    "must be an object",
  ),
  // The type of evalResult depends on the action, so it is checked (and normalised) once the action is known.
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const body = dataset.value;
    let evalResult: boolean | ConfigEvalResult | undefined;
    const raw = body.evalResult;
    const path: [v.IssuePathItem] = [{ type: "object", origin: "value", input: body, key: "evalResult", value: raw }];
    if (CONFIG_ACTIONS.has(body.action)) {
      if (raw != null) {
        const parsed = v.safeParse(ConfigEvalResultSchema, raw);
        if (!parsed.success) {
          addIssue({ message: "must be {key, payload} for a config action", path });
          return NEVER;
        }
        evalResult = parsed.output;
      }
    } else if (typeof raw === "boolean") {
      evalResult = raw;
    } else {
      addIssue({ message: `must be a boolean for action ${body.action}`, path });
      return NEVER;
    }
    return {
      type: "feature-flag-event" as const,
      action: body.action,
      key: body.key,
      targetingVersion: nullToUndefined(body.targetingVersion),
      evalContext: nullToUndefined(body.evalContext),
      evalResult,
      evalRuleResults: nullToUndefined(body.evalRuleResults),
      evalMissingFields: nullToUndefined(body.evalMissingFields),
    };
  }),
);

export const PromptEventBodySchema = v.pipe(
  v.looseObject(
    {
      action: v.picklist(PROMPT_EVENT_ACTIONS, `must be one of ${PROMPT_EVENT_ACTIONS.join(", ")}`),
      featureId: FeatureIdSchema,
      promptId: PromptIdSchema,
      userId: IdSchema,
      promptedQuestion: QuestionSchema,
    },
    "must be an object",
  ),
  v.transform(
    (body) => ({
      type: "prompt-event" as const,
      action: body.action,
      featureId: body.featureId,
      promptId: body.promptId,
      userId: body.userId,
      promptedQuestion: body.promptedQuestion,
    }),
  ),
);

// ---------------------------------------------------------------------------------------------------------------
// Normalised items: what the write path receives, each the output of its body schema above.

/**
 * Where an item sat in the request body, as a dotted path prefix: `""` for a single-item call, `"3"` for item 3 of
 * a bulk or `/features/events` array. Reference errors found when writing (unknown feature or feedback id) are
 * reported under it. Optional for items built in code.
 */
interface Placed {
  path?: string;
}

/** What `/user`, `/company` and `/event` say about the user or company they name besides who it is. */
export type Sighted = ReturnType<typeof sighted>;
/** The chosen config variant of a config action; both null when no variant matched. */
export type ConfigEvalResult = v.InferOutput<typeof ConfigEvalResultSchema>;
export type UserItem = v.InferOutput<typeof UserBodySchema> & Placed;
export type CompanyItem = v.InferOutput<typeof CompanyBodySchema> & Placed;
export type EventItem = v.InferOutput<typeof EventBodySchema> & Placed;
export type FeedbackItem = v.InferOutput<typeof FeedbackBodySchema> & Placed;
export type FeatureEventItem = v.InferOutput<typeof FeatureEventBodySchema> & Placed;
export type PromptEventItem = v.InferOutput<typeof PromptEventBodySchema> & Placed;
export type TrackingItem = UserItem | CompanyItem | EventItem | FeedbackItem | FeatureEventItem | PromptEventItem;

/** The wire shapes, for callers that build bodies (tests, CLI). */
export type UserBody = v.InferInput<typeof UserBodySchema>;
export type CompanyBody = v.InferInput<typeof CompanyBodySchema>;
export type EventBody = v.InferInput<typeof EventBodySchema>;
export type FeedbackBody = v.InferInput<typeof FeedbackBodySchema>;
export type FeatureEventBody = v.InferInput<typeof FeatureEventBodySchema>;
export type PromptEventBody = v.InferInput<typeof PromptEventBodySchema>;

type ItemSchema =
  | typeof UserBodySchema
  | typeof CompanyBodySchema
  | typeof EventBodySchema
  | typeof FeedbackBodySchema
  | typeof FeatureEventBodySchema
  | typeof PromptEventBodySchema;

const BULK_SCHEMAS: Readonly<Record<BulkItemType, ItemSchema>> = {
  user: UserBodySchema,
  company: CompanyBodySchema,
  event: EventBodySchema,
  feedback: FeedbackBodySchema,
  "feature-flag-event": FeatureEventBodySchema,
  "prompt-event": PromptEventBodySchema,
};

// ---------------------------------------------------------------------------------------------------------------
// Whole requests.

/** The tracking calls, one per endpoint body (`/{trackingKey}/…` calls use the same names). */
export type TrackingCall = "user" | "company" | "event" | "feedback" | "feature-events" | "bulk" | "prompt-event";

export type TrackingParseResult = { ok: true; items: TrackingItem[] } | { ok: false; issues: ValidationIssue[] };

const SINGLE_SCHEMAS: Readonly<Record<Exclude<TrackingCall, "bulk" | "feature-events">, ItemSchema>> = {
  user: UserBodySchema,
  company: CompanyBodySchema,
  event: EventBodySchema,
  feedback: FeedbackBodySchema,
  "prompt-event": PromptEventBodySchema,
};

/**
 * Validates and normalises the body of one tracking request. Every issue of every item is reported (a bulk with
 * several bad items names each), with dotted paths: `userId` for a single call, `3.userId` for bulk item 3.
 * Root-level issues have the path `""`.
 */
export function parseTrackingCall(call: TrackingCall, body: unknown): TrackingParseResult {
  const items: TrackingItem[] = [];
  const issues: ValidationIssue[] = [];
  switch (call) {
    case "bulk":
      parseArray(body, MAX_BULK_ITEMS, items, issues, bulkItemSchema);
      break;
    case "feature-events":
      if (Array.isArray(body)) parseArray(body, MAX_FEATURE_EVENTS, items, issues, () => FeatureEventBodySchema);
      else parseItem(FeatureEventBodySchema, body, "", items, issues);
      break;
    default:
      parseItem(SINGLE_SCHEMAS[call], body, "", items, issues);
  }
  return issues.length === 0 ? { ok: true, items } : { ok: false, issues };
}

/** Picks a bulk item's schema by its `type`, or reports why it cannot. */
function bulkItemSchema(item: unknown, path: string, issues: ValidationIssue[]): ItemSchema | undefined {
  if (!isPlainObject(item)) {
    issues.push({ path, message: "must be an object" });
    return undefined;
  }
  const type = item.type;
  if (typeof type === "string" && Object.hasOwn(BULK_SCHEMAS, type)) return BULK_SCHEMAS[type as BulkItemType];
  issues.push({
    path: joinPath(path, "type"),
    message:
      type === undefined
        ? `is required (one of ${BULK_ITEM_TYPES.join(", ")})`
        : `unknown item type; expected one of ${BULK_ITEM_TYPES.join(", ")}`,
  });
  return undefined;
}

function parseArray(
  body: unknown,
  maxItems: number,
  items: TrackingItem[],
  issues: ValidationIssue[],
  schemaFor: (item: unknown, path: string, issues: ValidationIssue[]) => ItemSchema | undefined,
): void {
  if (!Array.isArray(body)) {
    issues.push({ path: "", message: "must be an array" });
    return;
  }
  if (body.length > maxItems) {
    issues.push({ path: "", message: `must hold at most ${maxItems} items (got ${body.length})` });
    return;
  }
  for (let index = 0; index < body.length; index++) {
    const item: unknown = body[index];
    const path = String(index);
    const schema = schemaFor(item, path, issues);
    if (schema) parseItem(schema, item, path, items, issues);
  }
}

function parseItem(schema: ItemSchema, body: unknown, path: string, items: TrackingItem[], issues: ValidationIssue[]): void {
  // valibot's objects accept arrays; a body must be a JSON object.
  if (!isPlainObject(body)) {
    issues.push({ path, message: "must be an object" });
    return;
  }
  const result = v.safeParse(schema, body);
  if (result.success) {
    const item: TrackingItem = result.output;
    item.path = path;
    items.push(item);
    return;
  }
  const found = toValidationIssues(result.issues, path);
  for (let index = 0; index < found.length; index++) {
    // valibot reports a missing required key as an object-level "Invalid key" issue; say it plainly.
    const issue = result.issues[index]!;
    const missingKey = issue.kind === "schema" && issue.type === "loose_object" && issue.input === undefined && issue.path !== undefined;
    issues.push(missingKey ? { path: found[index]!.path, message: "is required" } : found[index]!);
  }
}

function joinPath(prefix: string, path: string): string {
  if (prefix === "") return path;
  return path === "" ? prefix : `${prefix}.${path}`;
}
