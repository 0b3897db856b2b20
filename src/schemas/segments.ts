/** Bodies of the segment routes (API.md §10); the filter tree is checked by the rules validator after these. */
import * as v from "valibot";
import { CHANGE_NOTE_FIELDS } from "./change-note-fields.js";

export const SegmentName = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.minLength(1, "must not be empty"),
  v.maxLength(128, "must be at most 128 characters"),
  v.regex(/^[^\u0000-\u001f\u007f]+$/, "must not contain control characters"),
);

const Description = v.nullable(v.pipe(v.string("must be a string or null"), v.maxLength(4000, "must be at most 4000 characters")));

export const CreateSegmentBody = v.strictObject(
  { name: SegmentName, description: v.optional(Description), filter: v.nonOptional(v.unknown(), "filter is required") },
  "must be an object with only: name, description, filter",
);

export const UpdateSegmentBody = v.strictObject(
  { name: v.optional(SegmentName), description: v.optional(Description), filter: v.optional(v.unknown()), ...CHANGE_NOTE_FIELDS },
  "must be an object with only: name, description, filter, comment, bypass, reason",
);
