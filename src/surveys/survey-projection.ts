import type { TrackingProjection } from "../tracking/projections.js";
import { markPromptDone } from "./prompt-store.js";

/** A prompt is done once it is answered (feedback naming it) or dismissed: it is not shown to that user again. */
export const SURVEY_PROJECTION: TrackingProjection = {
  name: "surveys",
  open(store, environmentId) {
    return {
      feedback: (record) => {
        if (record.promptId !== null) markPromptDone(store, environmentId, record.promptId);
      },
      promptEvent: (record) => {
        if (record.action === "dismissed") markPromptDone(store, environmentId, record.promptId);
      },
    };
  },
};
