/**
 * `feedback.created` (API.md §16): queued by the projector in the transaction that stores the feedback, so an
 * acknowledged feedback is delivered at least once even after a crash. The event's ids derive from the feedback's id
 * (decided in the tracking log), so projecting the log again — or an update of the same feedback — queues nothing more.
 */
import type { TrackingProjection } from "../../tracking/projections.js";
import { queueRaisedEvents } from "./webhook-outbox.js";

export const WEBHOOK_PROJECTION: TrackingProjection = {
  name: "webhooks",
  open(store, environmentId) {
    return {
      feedback: (record) => {
        const after = {
          feedbackId: record.feedbackId,
          score: record.score,
          comment: record.comment,
          question: record.question,
          userId: record.userId,
          companyId: record.companyId,
          source: record.source,
        };
        const origin = { id: `feedback:${environmentId}:${record.feedbackId}`, at: new Date(record.createdAt).toISOString(), actor: null };
        const raised = { type: "feedback.created" as const, appId: null, environmentId, featureKey: record.key, before: null, after, details: { feedbackId: record.feedbackId } };
        // A rebuild projects old feedback again: webhooks created since do not hear of it.
        queueRaisedEvents(store, origin, [raised], { createdBy: origin.at });
      },
    };
  },
};
