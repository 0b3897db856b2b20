import type { Actor } from "../../accounts/principal.js";

/** The event types a webhook may subscribe to (API.md §16); `*` subscribes to all of them. */
export const WEBHOOK_EVENT_TYPES = [
  "feature.created",
  "feature.updated",
  "feature.archived",
  "targeting.changed",
  "config.changed",
  "change_request.created",
  "change_request.approved",
  "change_request.rejected",
  "change_request.applied",
  "change_request.scheduled",
  "change_request.suspended",
  "feedback.created",
  "rollout.started",
  "rollout.advanced",
  "rollout.paused",
  "rollout.rolled_back",
  "rollout.completed",
  "webhook.test",
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Paths (dot-separated, array indexes as numbers) that differ between `before` and `after`. */
export interface WebhookDiff {
  added: string[];
  removed: string[];
  changed: string[];
}

/**
 * One change as a webhook hears it: the `standard` body exactly (API.md §16), and what the `slack` format renders.
 * `id` is the event's; each delivery of it to a webhook has its own stable delivery id (the `webhook-id` header).
 */
export interface WebhookEvent {
  id: string;
  type: WebhookEventType;
  /** ISO 8601, the change's own time (never the time of delivery). */
  timestamp: string;
  data: {
    app: { id: string; name: string };
    environment: { id: string; name: string } | null;
    feature: { key: string; name: string } | null;
    actor: Pick<Actor, "kind" | "id"> & { email?: string } | null;
    before: unknown;
    after: unknown;
    diff: WebhookDiff;
    /** Anything else the type carries (a change request's id and state, a rollout's step, feedback's score). */
    details?: Record<string, unknown>;
  };
}
