/** The tracking domain: the log and its projection (tracking-log-table.ts, projector.ts), the writer, and the read side (`TrackingReader`). */
export { evaluationRow, type Evaluations } from "./tracking-writer.js";
export { evaluationCount, evaluationsOf } from "./evaluations.js";
export { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, parseListQuery } from "../storage/cursor.js";
export {
  TrackingReader,
  type CompanyView,
  type EntityUpdateView,
  type EventView,
  type FeatureEventView,
  type FeedbackView,
  type Page,
  type PromptEventView,
  type UserView,
} from "./reader.js";
