/**
 * The fields any management write may carry beside its own (API.md §15): a `comment`, and an owner's `bypass` with a
 * `reason`. Strict body schemas admit them with these entries; their values are checked where every write reads
 * them (src/routes/kit/change-notes.ts).
 */
import * as v from "valibot";

export const CHANGE_NOTE_FIELDS = { comment: v.optional(v.unknown()), bypass: v.optional(v.unknown()), reason: v.optional(v.unknown()) };
