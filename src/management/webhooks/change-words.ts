/**
 * A change as a person reads it, in Slack mrkdwn lines: rules added, removed and changed in words, fields with their
 * old and new values. Everything read here came from a user, so every piece of it goes through `mrkdwn` or `code`.
 */
import { pathKeys } from "./diff.js";
import type { WebhookDiff } from "./webhook-event.js";

/** Slack mrkdwn's three control characters; everything else a user typed shows as typed. */
export const mrkdwn = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`);

/** A value as inline code; a backtick inside would end the span early, so it shows as a prime. */
export function code(value: unknown, max = 120): string {
  const text = typeof value === "string" ? value : value === undefined ? "(none)" : (JSON.stringify(value) ?? String(value));
  return `\`${mrkdwn(clip(text.replace(/`/g, "ʹ").replace(/\s+/g, " "), max))}\``;
}

const OPERATOR_WORDS: Record<string, string> = {
  IS: "is",
  IS_NOT: "is not",
  ANY_OF: "is any of",
  NOT_ANY_OF: "is none of",
  CONTAINS: "contains",
  NOT_CONTAINS: "does not contain",
  GT: "is greater than",
  LT: "is less than",
  AFTER: "is more than N days ago, N =",
  BEFORE: "is less than N days ago, N =",
  DATE_AFTER: "is on or after",
  DATE_BEFORE: "is on or before",
  SET: "is set",
  NOT_SET: "is not set",
  IS_TRUE: "is true",
  IS_FALSE: "is false",
};

const record = (value: unknown): Record<string, unknown> => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/** A filter tree in words (`plan is any of pro, team AND 20% by company.id`), already mrkdwn-escaped. */
export function filterInWords(filter: unknown, depth = 0): string {
  const node = record(filter);
  if (depth > 8) return "…";
  switch (node.type) {
    case "constant":
      return node.value === true ? "everyone" : "no one";
    case "context": {
      const values = Array.isArray(node.values) ? node.values.map((value) => String(value)) : [];
      const operator = OPERATOR_WORDS[String(node.operator)] ?? mrkdwn(String(node.operator));
      const field = code(node.field, 60);
      return values.length === 0 ? `${field} ${operator}` : `${field} ${operator} ${values.slice(0, 10).map((value) => code(value, 60)).join(", ")}${values.length > 10 ? ` and ${values.length - 10} more` : ""}`;
    }
    case "rolloutPercentage":
      return `${Number(node.partialRolloutThreshold) / 1000}% by ${code(node.partialRolloutAttribute, 60)}`;
    case "group": {
      const members = Array.isArray(node.filters) ? node.filters : [];
      if (members.length === 0) return node.operator === "and" ? "everyone" : "no one";
      return `(${members.map((member) => filterInWords(member, depth + 1)).join(node.operator === "and" ? " AND " : " OR ")})`;
    }
    case "negation":
      return `NOT ${filterInWords(node.filter, depth + 1)}`;
    case "segment":
      return `companies in segment ${code(node.segmentId, 60)}`;
    default:
      return code(filter);
  }
}

/** Targeting rules by their reading: a rule whose words stay is unchanged wherever it moved. */
export function targetingLines(before: unknown, after: unknown): string[] {
  const words = (list: unknown): string[] => (Array.isArray(list) ? list.map((rule) => filterInWords(record(rule).filter)) : []);
  const [old, now] = [words(before), words(after)];
  const removed = unmatched(old, now);
  const added = unmatched(now, old);
  const lines: string[] = [];
  // A rule edited in place reads better as one "changed" line than as a removal and an addition.
  while (removed.length > 0 && added.length > 0 && removed[0]!.index === added[0]!.index) {
    const [gone, come] = [removed.shift()!, added.shift()!];
    lines.push(`✏️ Rule ${gone.index + 1} changed: ${gone.text} → ${come.text}`);
  }
  for (const { index, text } of added) lines.push(`➕ Rule ${index + 1} added: serve to ${text}`);
  for (const { index, text } of removed) lines.push(`➖ Rule ${index + 1} removed: ${text}`);
  if (lines.length === 0 && old.join("\n") !== now.join("\n")) lines.push("Rules reordered");
  else if (lines.length === 0 && JSON.stringify(before) !== JSON.stringify(after)) lines.push("Rules saved with the same reading");
  if (now.length === 0 && old.length > 0) lines.push("No rule is left: the feature is off for everyone in this environment.");
  return lines;
}

/** The items of `from` that `to` does not hold (as a multiset), with their positions. */
function unmatched(from: string[], to: string[]): { index: number; text: string }[] {
  const left = new Map<string, number>();
  for (const text of to) left.set(text, (left.get(text) ?? 0) + 1);
  const out: { index: number; text: string }[] = [];
  from.forEach((text, index) => {
    const count = left.get(text) ?? 0;
    if (count > 0) left.set(text, count - 1);
    else out.push({ index, text });
  });
  return out;
}

/** Config variants by their key: added, removed, or with a new audience or payload. */
export function configLines(before: unknown, after: unknown): string[] {
  const byKey = (list: unknown): Map<string, Record<string, unknown>> => new Map((Array.isArray(list) ? list : []).map((variant, index) => [String(record(variant).key ?? `#${index + 1}`), record(variant)]));
  const [old, now] = [byKey(before), byKey(after)];
  const lines: string[] = [];
  for (const [key, variant] of now) {
    const previous = old.get(key);
    if (previous === undefined) {
      lines.push(`➕ Variant ${code(key, 60)} added: for ${filterInWords(variant.filter)}, payload ${code(variant.payload)}`);
      continue;
    }
    const audience = [filterInWords(previous.filter), filterInWords(variant.filter)] as const;
    if (audience[0] !== audience[1]) lines.push(`✏️ Variant ${code(key, 60)} now for ${audience[1]} (was ${audience[0]})`);
    if (JSON.stringify(previous.payload) !== JSON.stringify(variant.payload)) lines.push(`✏️ Variant ${code(key, 60)} payload: ${code(previous.payload)} → ${code(variant.payload)}`);
  }
  for (const key of old.keys()) if (!now.has(key)) lines.push(`➖ Variant ${code(key, 60)} removed`);
  const order = (map: Map<string, unknown>) => [...map.keys()].filter((key) => old.has(key) && now.has(key)).join();
  if (lines.length === 0 && order(old) !== order(now)) lines.push("Variants reordered");
  return lines;
}

function valueAt(value: unknown, path: string): unknown {
  let current = value;
  for (const key of pathKeys(path)) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** Field changes from the diff: `*name*: old → new`, `*tags* added: value`, `*owner* removed (was value)`. */
export function fieldLines(before: unknown, after: unknown, diff: WebhookDiff): string[] {
  const label = (path: string): string => (path === "" ? "*value*" : `*${mrkdwn(clip(pathKeys(path).join(" › "), 80))}*`);
  return [
    ...diff.changed.map((path) => `✏️ ${label(path)}: ${code(valueAt(before, path))} → ${code(valueAt(after, path))}`),
    ...diff.added.map((path) => `➕ ${label(path)}: ${code(valueAt(after, path))}`),
    ...diff.removed.map((path) => `➖ ${label(path)} removed (was ${code(valueAt(before, path))})`),
  ];
}
