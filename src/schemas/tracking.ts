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

// ---------------------------------------------------------------------------------------------------------------
// Limits (the contract's, plus the ones decided here; see the exported constants' comments).

export const MAX_ID_LENGTH = 256;
export const MAX_EVENT_NAME_LENGTH = 255;
export const MAX_FEATURE_KEY_LENGTH = 255;
export const MAX_FEATURE_ID_LENGTH = 14;
/** **decided**: at most this many attributes per user, company or event. */
export const MAX_ATTRIBUTES = 256;
/** **decided**: attribute names are 1..256 characters. */
export const MAX_ATTRIBUTE_NAME_LENGTH = 256;
/** Names that would reach an object's prototype when merged or rebuilt; refused as attribute names. */
export const FORBIDDEN_ATTRIBUTE_NAMES: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);
/** **decided**: a `/bulk` request holds at most this many items (2 MiB bodies fit ~10k small items). */
export const MAX_BULK_ITEMS = 10_000;
/** **decided**: a `/features/events` array holds at most this many events. */
export const MAX_FEATURE_EVENTS = 10_000;
export const MAX_COMMENT_LENGTH = 4000;
export const MAX_QUESTION_LENGTH = 256;
export const MIN_PROMPT_ID_LENGTH = 10;
export const MAX_PROMPT_ID_LENGTH = 40;
/** Dates outside ±8.64e15 ms are not representable by `Date`. */
const MAX_EPOCH_MS = 8.64e15;

export const FEATURE_EVENT_ACTIONS = [
  "evaluate",
  "evaluate-config",
  "check",
  "check-config",
  "check-is-enabled",
  "evaluate-is-enabled",
] as const;
export type FeatureEventAction = (typeof FEATURE_EVENT_ACTIONS)[number];
/** Actions whose `evalResult` is a config variant `{key, payload}` (or absent) instead of a boolean. */
export const CONFIG_ACTIONS: ReadonlySet<FeatureEventAction> = new Set(["evaluate-config", "check-config"]);

export const FEEDBACK_SOURCES = ["sdk", "widget", "prompt", "manual"] as const;
export type FeedbackSource = (typeof FEEDBACK_SOURCES)[number];

export const PROMPT_EVENT_ACTIONS = ["received", "shown", "dismissed"] as const;
export type PromptEventAction = (typeof PROMPT_EVENT_ACTIONS)[number];

export const BULK_ITEM_TYPES = ["user", "company", "event", "feedback", "feature-flag-event", "prompt-event"] as const;
export type BulkItemType = (typeof BULK_ITEM_TYPES)[number];

// ---------------------------------------------------------------------------------------------------------------
// Normalised items: what the write path receives.

export type Attributes = Record<string, unknown>;

interface ItemBase {
  /**
   * Where the item sat in the request body, as a dotted path prefix: `""` for a single-item call, `"3"` for item 3
   * of a bulk or `/features/events` array. Reference errors found when writing (unknown feature or feedback id)
   * are reported under it. Optional for items built in code.
   */
  path?: string;
}

/** What `/user`, `/company` and `/event` say about the user or company they name besides who it is. */
export interface Sighted {
  attributes: Attributes | undefined;
  /** Epoch milliseconds, or undefined when the call sent none. */
  timestamp: number | undefined;
  /** False only when the call sent `context.active: false`. */
  active: boolean;
}

export interface UserItem extends ItemBase, Sighted {
  type: "user";
  userId: string;
}

export interface CompanyItem extends ItemBase, Sighted {
  type: "company";
  companyId: string;
  userId: string | undefined;
}

export interface EventItem extends ItemBase, Sighted {
  type: "event";
  event: string;
  userId: string;
  companyId: string | undefined;
}

export interface FeedbackItem extends ItemBase {
  type: "feedback";
  feedbackId: string | undefined;
  userId: string;
  companyId: string | undefined;
  featureId: string | undefined;
  key: string | undefined;
  score: number | undefined;
  comment: string | undefined;
  question: string | undefined;
  promptedQuestion: string | undefined;
  promptId: string | undefined;
  source: FeedbackSource | undefined;
  timestamp: number | undefined;
}

/** The chosen config variant of a config action; both null when no variant matched. */
export interface ConfigEvalResult {
  key: string | null;
  payload: unknown;
}

export interface FeatureEventItem extends ItemBase {
  type: "feature-flag-event";
  action: FeatureEventAction;
  key: string;
  targetingVersion: number | undefined;
  evalContext: Record<string, unknown> | undefined;
  /** A boolean for the non-config actions; a variant or undefined for `evaluate-config` / `check-config`. */
  evalResult: boolean | ConfigEvalResult | undefined;
  evalRuleResults: boolean[] | undefined;
  evalMissingFields: string[] | undefined;
}

export interface PromptEventItem extends ItemBase {
  type: "prompt-event";
  action: PromptEventAction;
  featureId: string;
  promptId: string;
  userId: string;
  promptedQuestion: string;
}

export type TrackingItem = UserItem | CompanyItem | EventItem | FeedbackItem | FeatureEventItem | PromptEventItem;

// ---------------------------------------------------------------------------------------------------------------
// Field schemas.

const hasNoNul = (text: string): boolean => !text.includes("\u0000");

/** A string of `min..max` characters. */
function text(min: number, max: number) {
  return v.pipe(
    v.string("must be a string"),
    v.minLength(min, min === 1 ? "must not be empty" : `must be at least ${min} characters`),
    v.maxLength(max, `must be at most ${max} characters`),
  );
}

/** An identifier that becomes part of a storage key: no U+0000 (the key separator). */
function keyText(min: number, max: number) {
  return v.pipe(text(min, max), v.check(hasNoNul, "must not contain U+0000"));
}

/** `userId` / `companyId`: a non-empty string or a finite number, kept as a string. */
export const IdSchema = v.pipe(
  v.union(
    [keyText(1, MAX_ID_LENGTH), v.pipe(v.number(), v.finite("must be a finite number"))],
    "must be a non-empty string or a finite number",
  ),
  v.transform((id): string => (typeof id === "string" ? id : String(id))),
);

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/**
 * Epoch milliseconds of an ISO 8601 date-time, or NaN. Components are range-checked (no 31 February); a date-time
 * without an offset is read as UTC (**decided**: the server's own zone must not change what a request means).
 */
export function parseIsoDateTime(value: string): number {
  const match = ISO_DATE_TIME.exec(value);
  if (!match) return Number.NaN;
  const [, y, mo, d, h, mi, s, fraction, zulu, sign, offsetHours, offsetMinutes] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = s === undefined ? 0 : Number(s);
  const millisecond = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, "0"));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return Number.NaN;
  if (hour > 23 || minute > 59 || second > 59) return Number.NaN;
  let offset = 0;
  if (zulu === undefined && sign !== undefined) {
    const oh = Number(offsetHours);
    const om = offsetMinutes === undefined ? 0 : Number(offsetMinutes);
    if (oh > 23 || om > 59) return Number.NaN;
    offset = (sign === "-" ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear does not.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millisecond);
  return date.getTime() - offset;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const TIMESTAMP_MESSAGE = "must be an ISO 8601 date-time or epoch milliseconds";

/** `timestamp`: an ISO 8601 date-time string or epoch milliseconds (fractions dropped), as epoch milliseconds. */
const TimestampSchema = v.pipe(
  v.union([v.string(), v.number()], TIMESTAMP_MESSAGE),
  v.transform((value): number => (typeof value === "string" ? parseIsoDateTime(value) : Math.floor(value))),
  v.check((ms) => Number.isFinite(ms) && Math.abs(ms) <= MAX_EPOCH_MS, TIMESTAMP_MESSAGE),
);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const ObjectSchema = v.custom<Record<string, unknown>>(isPlainObject, "must be an object");

/** A nested loose object (unknown keys ignored) that, unlike valibot's, refuses arrays. */
function plainObject<const TEntries extends v.ObjectEntries>(entries: TEntries, message = "must be an object") {
  return v.pipe(ObjectSchema, v.looseObject(entries, message));
}

/**
 * Attributes: an object whose values may be any JSON. Bounded in count and name length; names that would touch a
 * prototype are refused. Checked by hand in one pass so that a bad object yields one issue per bad name.
 */
const AttributesSchema = v.pipe(
  ObjectSchema,
  v.rawCheck<Record<string, unknown>>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const attributes = dataset.value;
    let count = 0;
    for (const name in attributes) {
      if (!Object.hasOwn(attributes, name)) continue;
      if (++count > MAX_ATTRIBUTES) {
        addIssue({ message: `must have at most ${MAX_ATTRIBUTES} attributes` });
        return;
      }
      const problem =
        name.length === 0
          ? "attribute names must not be empty"
          : name.length > MAX_ATTRIBUTE_NAME_LENGTH
            ? `attribute names must be at most ${MAX_ATTRIBUTE_NAME_LENGTH} characters`
            : FORBIDDEN_ATTRIBUTE_NAMES.has(name)
              ? `"${name}" is not allowed as an attribute name`
              : undefined;
      if (problem) {
        addIssue({
          message: problem,
          path: [{ type: "object", origin: "key", input: attributes, key: name, value: attributes[name] }],
        });
      }
    }
    // `JSON.parse` makes `__proto__` an own property, which `for…in` lists; anything built in code that hides it
    // behind a prototype is caught here.
    if (Object.getPrototypeOf(attributes) !== Object.prototype && Object.getPrototypeOf(attributes) !== null) {
      addIssue({ message: "must be a plain object" });
    }
  }),
);

/** `context`: only `active` is read; it must be a boolean when sent. */
const ContextSchema = plainObject(
  { active: v.optional(v.boolean("must be a boolean")) },
  "must be an object",
);

const EventNameSchema = text(1, MAX_EVENT_NAME_LENGTH);
const FeatureKeySchema = text(1, MAX_FEATURE_KEY_LENGTH);
const FeatureIdSchema = keyText(1, MAX_FEATURE_ID_LENGTH);
const QuestionSchema = text(1, MAX_QUESTION_LENGTH);
const PromptIdSchema = text(MIN_PROMPT_ID_LENGTH, MAX_PROMPT_ID_LENGTH);
const FeedbackIdSchema = keyText(1, MAX_ID_LENGTH);

const nullToUndefined = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);

/** The body entries behind `Sighted`, shared by `/user`, `/company` and `/event`. */
const SIGHTED_ENTRIES = {
  attributes: v.nullish(AttributesSchema),
  timestamp: v.nullish(TimestampSchema),
  context: v.nullish(ContextSchema),
};

function sighted(body: v.InferOutput<v.ObjectSchema<typeof SIGHTED_ENTRIES, undefined>>): Sighted {
  return { attributes: nullToUndefined(body.attributes), timestamp: nullToUndefined(body.timestamp), active: body.context?.active !== false };
}

// ---------------------------------------------------------------------------------------------------------------
// Body schemas. Each transforms into its TrackingItem (without `path`).

export const UserBodySchema = v.pipe(
  v.looseObject(
    {
      userId: IdSchema,
      ...SIGHTED_ENTRIES,
    },
    "must be an object",
  ),
  v.transform((body): UserItem => ({ type: "user", userId: body.userId, ...sighted(body) })),
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
  v.transform((body): CompanyItem => ({ type: "company", companyId: body.companyId, userId: nullToUndefined(body.userId), ...sighted(body) })),
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
    (body): EventItem => ({ type: "event", event: body.event, userId: body.userId, companyId: nullToUndefined(body.companyId), ...sighted(body) }),
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
    (body): FeedbackItem => ({
      type: "feedback",
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
  v.transform((result): ConfigEvalResult => ({ key: result.key ?? null, payload: result.payload ?? null })),
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
  v.rawTransform(({ dataset, addIssue, NEVER }): FeatureEventItem => {
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
      type: "feature-flag-event",
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
    (body): PromptEventItem => ({
      type: "prompt-event",
      action: body.action,
      featureId: body.featureId,
      promptId: body.promptId,
      userId: body.userId,
      promptedQuestion: body.promptedQuestion,
    }),
  ),
);

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
