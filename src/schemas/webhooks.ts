/**
 * Bodies of API.md §16's webhook routes. The event types are the management room's list, handed in (this floor imports
 * none of it). Environment ids are checked against the app by the route.
 */
import * as v from "valibot";

const MAX_URL_LENGTH = 2048;

/** http or https, with a host; the SSRF check (what the host resolves to) is the route's, at creation and every attempt. */
const WebhookUrl = v.pipe(
  v.string("url must be a string"),
  v.maxLength(MAX_URL_LENGTH, `url must be at most ${MAX_URL_LENGTH} characters`),
  v.check((text) => {
    try {
      const url = new URL(text);
      return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
    } catch {
      return false;
    }
  }, "url must be an http or https URL with a host"),
);

const Environments = v.pipe(v.array(v.pipe(v.string("must be an environment id"), v.minLength(1, "must be an environment id")), "environments must be an array"), v.maxLength(100, "environments may list at most 100"));
const Format = v.picklist(["standard", "slack"], "format must be standard or slack");
const Description = v.nullable(v.pipe(v.string("description must be a string"), v.maxLength(500, "description must be at most 500 characters")));

function events(eventTypes: readonly string[]) {
  return v.pipe(
    v.array(v.picklist(["*", ...eventTypes], `must be * or one of ${eventTypes.join(", ")}`), "events must be an array"),
    v.minLength(1, "events must list at least one event type, or *"),
    v.maxLength(eventTypes.length + 1, "events lists an event type twice"),
  );
}

export function webhookBodies(eventTypes: readonly string[]) {
  return {
    create: v.object({
      url: WebhookUrl,
      events: events(eventTypes),
      environments: v.optional(Environments),
      format: v.optional(Format, "standard"),
      description: v.optional(Description),
    }),
    update: v.object({
      url: v.optional(WebhookUrl),
      events: v.optional(events(eventTypes)),
      environments: v.optional(Environments),
      format: v.optional(Format),
      description: v.optional(Description),
      enabled: v.optional(v.boolean("enabled must be true or false")),
    }),
  };
}
