/**
 * The `slack` format (API.md §16): Slack's incoming-webhook body, a one-line `text` (what notifications and screen
 * readers show) and Block Kit `blocks` with the change as a person reads it.
 */
import { clip, code, configLines, fieldLines, mrkdwn, targetingLines } from "./change-words.js";
import type { WebhookEvent, WebhookEventType } from "./webhook-event.js";

/** Slack's documented ceilings: blocks per message, characters per section text, per header text. */
export const SLACK_MAX_BLOCKS = 50;
export const SLACK_MAX_SECTION_TEXT = 3000;
const SLACK_MAX_HEADER_TEXT = 150;
/** More lines than this are not read in a chat; the dashboard has the rest. */
const MAX_CHANGE_LINES = 40;

export interface SlackBody {
  text: string;
  blocks: unknown[];
}

type Data = WebhookEvent["data"];

function who(actor: Data["actor"]): string {
  if (actor === null) return "Switchyard";
  if (actor.email !== undefined && actor.email !== "") return actor.email;
  if (actor.kind === "admin") return "The admin";
  if (actor.kind === "anonymous") return "Someone";
  return `${actor.kind} ${actor.id}`;
}

const featureName = (data: Data): string => (data.feature === null ? "a feature" : data.feature.name || data.feature.key);

const CHANGE_REQUEST_VERBS: Partial<Record<WebhookEventType, string>> = {
  "change_request.created": "opened",
  "change_request.approved": "approved",
  "change_request.rejected": "rejected",
  "change_request.applied": "applied",
  "change_request.scheduled": "scheduled",
  "change_request.suspended": "suspended",
};

const ROLLOUT_VERBS: Partial<Record<WebhookEventType, string>> = {
  "rollout.started": "started",
  "rollout.advanced": "advanced",
  "rollout.paused": "paused",
  "rollout.rolled_back": "rolled back",
  "rollout.completed": "completed",
};

/** What happened, in one plain sentence (not yet escaped): `alice@example.com changed the targeting of Huddle`. */
function sentence(event: WebhookEvent): { title: string; line: string } {
  const { data } = event;
  const actor = who(data.actor);
  const feature = featureName(data);
  const where = data.environment === null ? "" : ` in ${data.environment.name}`;
  const changeRequest = String(data.details?.changeRequestId ?? "");
  switch (event.type) {
    case "feature.created":
      return { title: `Feature created: ${feature}`, line: `${actor} created the feature ${feature}` };
    case "feature.updated":
      return { title: `Feature updated: ${feature}`, line: `${actor} updated the feature ${feature}` };
    case "feature.archived":
      return { title: `Feature archived: ${feature}`, line: `${actor} archived the feature ${feature}` };
    case "targeting.changed": {
      if (data.details?.killSwitch === true) {
        const on = (data.after as { enabled?: unknown } | null)?.enabled === true;
        return { title: `${feature} turned ${on ? "on" : "off"}${where}`, line: `${actor} turned ${feature} ${on ? "on" : "off"}${where}` };
      }
      return { title: `Targeting changed: ${feature}${where}`, line: `${actor} changed the targeting of ${feature}${where}` };
    }
    case "config.changed":
      return { title: `Remote config changed: ${feature}${where}`, line: `${actor} changed the remote config of ${feature}${where}` };
    case "feedback.created": {
      const score = (data.after as { score?: unknown } | null)?.score;
      return { title: `Feedback on ${feature}${where}`, line: `New feedback on ${feature}${where}${typeof score === "number" ? ` (score ${score})` : ""}` };
    }
    case "webhook.test":
      return { title: "Test message from Switchyard", line: `${actor} sent a test message to this webhook of ${data.app.name}` };
    default: {
      const changeVerb = CHANGE_REQUEST_VERBS[event.type];
      if (changeVerb !== undefined) {
        const about = data.feature === null ? "" : ` for ${feature}`;
        return { title: `Change request ${changeVerb}${about}`, line: `${actor} ${changeVerb} change request ${changeRequest}${about}${where}`.replace(/ {2,}/g, " ") };
      }
      const rolloutVerb = ROLLOUT_VERBS[event.type] ?? event.type;
      return { title: `Rollout ${rolloutVerb}: ${feature}${where}`, line: `The rollout of ${feature}${where} ${rolloutVerb}${data.actor === null ? "" : ` (${actor})`}` };
    }
  }
}

/** The change in lines of mrkdwn, by what kind of thing changed. */
function changeLines(event: WebhookEvent): string[] {
  const { data } = event;
  if (event.type === "targeting.changed" && data.details?.killSwitch !== true) return targetingLines(data.before, data.after);
  if (event.type === "config.changed") return configLines(data.before, data.after);
  if (event.type === "feedback.created") {
    const feedback = (data.after ?? {}) as Record<string, unknown>;
    return [
      ...(typeof feedback.comment === "string" && feedback.comment !== "" ? [`> ${mrkdwn(clip(feedback.comment.replace(/\s+/g, " "), 1000))}`] : []),
      ...(["score", "question", "userId", "companyId"] as const).filter((field) => feedback[field] !== undefined && feedback[field] !== null).map((field) => `*${field}*: ${code(feedback[field])}`),
    ];
  }
  if (event.type === "webhook.test") return ["If you can read this, the webhook works."];
  if (event.type === "feature.created" || event.type === "feature.archived" || event.type.startsWith("change_request.")) {
    const details = Object.entries(data.details ?? {}).filter(([, value]) => value !== undefined && value !== null);
    return [...fieldLines(data.before, data.after, data.diff), ...details.map(([key, value]) => `*${mrkdwn(key)}*: ${code(value)}`)];
  }
  return fieldLines(data.before, data.after, data.diff);
}

/** Lines packed into section texts of at most Slack's limit, at most `maxSections` of them, the overflow counted. */
function sections(lines: string[], maxSections: number): unknown[] {
  const shown = lines.slice(0, MAX_CHANGE_LINES).map((line) => clip(line, 1000));
  const texts: string[] = [];
  let current = "";
  let used = 0;
  for (const line of shown) {
    const next = current === "" ? line : `${current}\n${line}`;
    if (next.length <= SLACK_MAX_SECTION_TEXT - 100) {
      current = next;
      used += 1;
      continue;
    }
    if (texts.length + 1 >= maxSections) break;
    texts.push(current);
    current = line;
    used += 1;
  }
  if (current !== "") texts.push(current);
  const hidden = lines.length - used;
  if (hidden > 0) texts[texts.length - 1] += `\n…and ${hidden} more change${hidden === 1 ? "" : "s"}, in the dashboard.`;
  return texts.map((text) => ({ type: "section", text: { type: "mrkdwn", text } }));
}

/** Slack shows a date token in each reader's own time zone; the ISO text is its fallback. */
function slackDate(timestamp: string): string {
  const seconds = Math.floor(Date.parse(timestamp) / 1000);
  return Number.isFinite(seconds) ? `<!date^${seconds}^{date_short_pretty} {time}|${mrkdwn(timestamp)}>` : mrkdwn(timestamp);
}

/** The dashboard's page for the event: the feature in its environment, else the dashboard itself. */
function dashboardLink(event: WebhookEvent, publicUrl: string): { url: string; label: string } {
  const base = `${publicUrl.replace(/\/+$/, "")}/dashboard/`;
  const { app, environment, feature } = event.data;
  if (feature === null || environment === null) return { url: base, label: "Open Switchyard" };
  const path = `/apps/${encodeURIComponent(app.id)}/environments/${encodeURIComponent(environment.id)}/features/${encodeURIComponent(feature.key)}`;
  return { url: `${base}#${path}`, label: "Open the feature" };
}

/** Slack's incoming-webhook body for one event: who did what to which feature where, then the change itself. */
export function slackBody(event: WebhookEvent, publicUrl?: string): SlackBody {
  const { data } = event;
  const { title, line } = sentence(event);
  const fallback = mrkdwn(clip(`${line} (${data.app.name})`, SLACK_MAX_SECTION_TEXT));
  const context = [
    `App ${code(data.app.name, 60)}`,
    ...(data.environment === null ? [] : [`environment ${code(data.environment.name, 60)}`]),
    ...(data.feature === null ? [] : [`feature ${code(data.feature.key, 80)}`]),
    `${code(event.type)} at ${slackDate(event.timestamp)}`,
  ].join(" · ");
  const head: unknown[] = [
    { type: "header", text: { type: "plain_text", text: clip(title, SLACK_MAX_HEADER_TEXT), emoji: true } },
    { type: "section", text: { type: "mrkdwn", text: clip(mrkdwn(line), SLACK_MAX_SECTION_TEXT) } },
  ];
  const tail: unknown[] = [{ type: "context", elements: [{ type: "mrkdwn", text: clip(context, SLACK_MAX_SECTION_TEXT) }] }];
  if (publicUrl !== undefined && publicUrl !== "") {
    const link = dashboardLink(event, publicUrl);
    tail.push({ type: "actions", elements: [{ type: "button", text: { type: "plain_text", text: link.label }, url: link.url }] });
  }
  const body = sections(changeLines(event), SLACK_MAX_BLOCKS - head.length - tail.length - 1);
  const divider = body.length > 0 ? [{ type: "divider" }] : [];
  return { text: fallback, blocks: [...head, ...divider, ...body, ...tail] };
}
