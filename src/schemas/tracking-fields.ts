/**
 * The field-level pieces of the tracking bodies (API.md §4): limits, enumerations, and the schemas of ids, names,
 * timestamps and attributes that the body schemas in tracking.ts are built from.
 */
import * as v from "valibot";

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

export type Attributes = Record<string, unknown>;

// Field schemas.

const hasNoNul = (text: string): boolean => !text.includes("\u0000");

/** A string of `min..max` characters. */
export function text(min: number, max: number) {
  return v.pipe(
    v.string("must be a string"),
    v.minLength(min, min === 1 ? "must not be empty" : `must be at least ${min} characters`),
    v.maxLength(max, `must be at most ${max} characters`),
  );
}

/** An identifier that becomes part of a storage key: no U+0000 (the key separator). */
export function keyText(min: number, max: number) {
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
export const TimestampSchema = v.pipe(
  v.union([v.string(), v.number()], TIMESTAMP_MESSAGE),
  v.transform((value): number => (typeof value === "string" ? parseIsoDateTime(value) : Math.floor(value))),
  v.check((ms) => Number.isFinite(ms) && Math.abs(ms) <= MAX_EPOCH_MS, TIMESTAMP_MESSAGE),
);

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export const ObjectSchema = v.custom<Record<string, unknown>>(isPlainObject, "must be an object");

/** A nested loose object (unknown keys ignored) that, unlike valibot's, refuses arrays. */
export function plainObject<const TEntries extends v.ObjectEntries>(entries: TEntries, message = "must be an object") {
  return v.pipe(ObjectSchema, v.looseObject(entries, message));
}

/**
 * Attributes: an object whose values may be any JSON. Bounded in count and name length; names that would touch a
 * prototype are refused. Checked by hand in one pass so that a bad object yields one issue per bad name.
 */
export const AttributesSchema = v.pipe(
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
export const ContextSchema = plainObject(
  { active: v.optional(v.boolean("must be a boolean")) },
  "must be an object",
);

export const EventNameSchema = text(1, MAX_EVENT_NAME_LENGTH);
export const FeatureKeySchema = text(1, MAX_FEATURE_KEY_LENGTH);
export const FeatureIdSchema = keyText(1, MAX_FEATURE_ID_LENGTH);
export const QuestionSchema = text(1, MAX_QUESTION_LENGTH);
export const PromptIdSchema = text(MIN_PROMPT_ID_LENGTH, MAX_PROMPT_ID_LENGTH);
export const FeedbackIdSchema = keyText(1, MAX_ID_LENGTH);

export const nullToUndefined = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);
