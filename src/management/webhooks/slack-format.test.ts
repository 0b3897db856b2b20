import { describe, expect, it } from "vitest";
import { diffOf } from "./diff.js";
import { SLACK_MAX_BLOCKS, SLACK_MAX_SECTION_TEXT, slackBody } from "./slack-format.js";
import { WEBHOOK_EVENT_TYPES, type WebhookEvent, type WebhookEventType } from "./webhook-event.js";

function event(type: WebhookEventType, before: unknown, after: unknown, extra: Partial<WebhookEvent["data"]> = {}): WebhookEvent {
  return {
    id: "evt_1",
    type,
    timestamp: "2026-12-02T03:04:05.000Z",
    data: {
      app: { id: "app_1", name: "Acme" },
      environment: { id: "env_prod", name: "Production" },
      feature: { key: "huddle", name: "Huddle call" },
      actor: { kind: "member", id: "mem_1", email: "alice@example.com" },
      before,
      after,
      diff: diffOf(before, after),
      ...extra,
    },
  };
}

type Block = { type: string; text?: { type: string; text: string }; elements?: { type: string; text: string | { text: string }; url?: string }[] };
const blocks = (body: { blocks: unknown[] }) => body.blocks as Block[];
/** Every text a reader sees, joined: what the assertions read. */
const shown = (body: { text: string; blocks: unknown[] }): string =>
  [body.text, ...blocks(body).flatMap((block) => [block.text?.text ?? "", ...(block.elements ?? []).map((element) => (typeof element.text === "string" ? element.text : element.text.text))])].join("\n");

const context = (attribute: string, operator: string, values?: string[]) => ({ type: "context", field: attribute, operator, ...(values ? { values } : {}) });

describe("slackBody", () => {
  it("says who changed which feature's targeting where, and the rules in words", () => {
    const before = [{ filter: context("company.plan", "ANY_OF", ["pro"]) }, { filter: context("user.email", "CONTAINS", ["@acme.com"]) }];
    const after = [
      { filter: context("company.plan", "ANY_OF", ["pro", "team"]) },
      { filter: { type: "rolloutPercentage", key: "huddle", partialRolloutAttribute: "company.id", partialRolloutThreshold: 25_000 } },
      { filter: { type: "group", operator: "and", filters: [context("country", "IS", ["FR"]), { type: "negation", filter: context("beta", "IS_TRUE") }] } },
    ];
    const body = slackBody(event("targeting.changed", before, after), "https://flags.example.com");
    expect(body.text).toBe("alice@example.com changed the targeting of Huddle call in Production (Acme)");
    const text = shown(body);
    expect(text).toContain("Rule 1 changed: `company.plan` is any of `pro` → `company.plan` is any of `pro`, `team`");
    expect(text).toContain("Rule 2 changed: `user.email` contains `@acme.com` → 25% by `company.id`");
    expect(text).toContain("Rule 3 added: serve to (`country` is `FR` AND NOT `beta` is true)");
    expect(text).not.toMatch(/"filter"|\{"type"/);
    expect(blocks(body)[0]).toEqual({ type: "header", text: { type: "plain_text", text: "Targeting changed: Huddle call in Production", emoji: true } });
    const actions = blocks(body).find((block) => block.type === "actions")!;
    expect(actions.elements![0]!.url).toBe("https://flags.example.com/dashboard/#/apps/app_1/environments/env_prod/features/huddle");
  });

  it("lists removed rules and says when none is left", () => {
    const body = slackBody(event("targeting.changed", [{ filter: { type: "constant", value: true } }], []));
    expect(shown(body)).toContain("Rule 1 removed: everyone");
    expect(shown(body)).toContain("No rule is left");
  });

  it("says a reordering is one", () => {
    const [a, b] = [{ filter: context("a", "SET") }, { filter: context("b", "SET") }];
    expect(shown(slackBody(event("targeting.changed", [a, b], [b, a])))).toContain("Rules reordered");
  });

  it("reads the kill switch as on or off", () => {
    const on = slackBody(event("targeting.changed", { enabled: false }, { enabled: true }, { details: { killSwitch: true } }));
    expect(on.text).toBe("alice@example.com turned Huddle call on in Production (Acme)");
    const off = slackBody(event("targeting.changed", { enabled: true }, { enabled: false }, { details: { killSwitch: true } }));
    expect(off.text).toBe("alice@example.com turned Huddle call off in Production (Acme)");
  });

  it("shows config variants added, removed and changed by key", () => {
    const before = [
      { key: "blue", filter: { type: "constant", value: true }, payload: { colour: "#00f" } },
      { key: "old", filter: context("plan", "IS", ["free"]), payload: null },
    ];
    const after = [
      { key: "blue", filter: context("plan", "IS", ["pro"]), payload: { colour: "#00c" } },
      { key: "green", filter: { type: "constant", value: true }, payload: 3 },
    ];
    const text = shown(slackBody(event("config.changed", before, after)));
    expect(text).toContain("alice@example.com changed the remote config of Huddle call in Production");
    expect(text).toContain("Variant `blue` now for `plan` is `pro` (was everyone)");
    expect(text).toContain('Variant `blue` payload: `{"colour":"#00f"}` → `{"colour":"#00c"}`');
    expect(text).toContain("Variant `green` added: for everyone, payload `3`");
    expect(text).toContain("Variant `old` removed");
  });

  it("shows a feature's fields on creation and update, and the archive", () => {
    const created = slackBody(event("feature.created", null, { key: "huddle", name: "Huddle call" }, { environment: null }), "https://flags.example.com/");
    expect(created.text).toBe("alice@example.com created the feature Huddle call (Acme)");
    expect(shown(created)).toContain("*name*: `Huddle call`");
    expect(blocks(created).find((block) => block.type === "actions")!.elements![0]!.url).toBe("https://flags.example.com/dashboard/");

    const updated = slackBody(event("feature.updated", { name: "Huddle", description: "old" }, { name: "Huddle call", description: null }, { environment: null }));
    expect(updated.text).toBe("alice@example.com updated the feature Huddle call (Acme)");
    expect(shown(updated)).toContain("*name*: `Huddle` → `Huddle call`");
    expect(shown(updated)).toContain("*description*: `old` → `null`");

    expect(slackBody(event("feature.archived", null, null, { environment: null })).text).toBe("alice@example.com archived the feature Huddle call (Acme)");
  });

  it.each([
    ["change_request.created", "opened"],
    ["change_request.approved", "approved"],
    ["change_request.rejected", "rejected"],
    ["change_request.applied", "applied"],
    ["change_request.scheduled", "scheduled"],
    ["change_request.suspended", "suspended"],
  ] as const)("reads %s", (type, verb) => {
    const body = slackBody(event(type, null, null, { feature: null, details: { changeRequestId: "cr_7" } }));
    expect(body.text).toBe(`alice@example.com ${verb} change request cr_7 in Production (Acme)`);
    expect(shown(body)).toContain("*changeRequestId*: `cr_7`");
  });

  it("quotes feedback with its score", () => {
    const body = slackBody(event("feedback.created", null, { score: 4, comment: "Love it <3 & more", userId: "u1", companyId: "c1" }, { actor: null }));
    expect(body.text).toBe("New feedback on Huddle call in Production (score 4) (Acme)");
    expect(shown(body)).toContain("> Love it &lt;3 &amp; more");
    expect(shown(body)).toContain("*companyId*: `c1`");
  });

  it.each([
    ["rollout.started", "started"],
    ["rollout.advanced", "advanced"],
    ["rollout.paused", "paused"],
    ["rollout.rolled_back", "rolled back"],
    ["rollout.completed", "completed"],
  ] as const)("reads %s with its step", (type, verb) => {
    const body = slackBody(event(type, { percent: 10 }, { percent: 25 }, { actor: null }));
    expect(body.text).toBe(`The rollout of Huddle call in Production ${verb} (Acme)`);
    expect(shown(body)).toContain("*percent*: `10` → `25`");
  });

  it("sends a test message", () => {
    const body = slackBody(event("webhook.test", null, null, { environment: null, feature: null, actor: { kind: "admin", id: "admin" } }));
    expect(body.text).toBe("The admin sent a test message to this webhook of Acme (Acme)");
    expect(shown(body)).toContain("If you can read this, the webhook works.");
  });

  it("has a readable body for every event type, with no link when no public URL is set", () => {
    for (const type of WEBHOOK_EVENT_TYPES) {
      const body = slackBody(event(type, { a: 1 }, { a: 2 }));
      expect(body.text.length, type).toBeGreaterThan(10);
      expect(blocks(body)[0]!.type).toBe("header");
      expect(blocks(body).some((block) => block.type === "actions")).toBe(false);
    }
  });

  it("escapes &, < and > in everything a user typed, and keeps backticks from breaking code spans", () => {
    const body = slackBody(
      event("feature.updated", { name: "a" }, { name: "<!channel> & `rm`" }, { feature: { key: "k<>", name: "<@U123> & co" }, app: { id: "a", name: "A&B" }, environment: { id: "e", name: "<prod>" }, actor: { kind: "member", id: "m", email: "e<vil>@x.com" } }),
    );
    const text = shown({ text: body.text, blocks: blocks(body).filter((block) => block.type !== "header") });
    expect(body.text).toBe("e&lt;vil&gt;@x.com updated the feature &lt;@U123&gt; &amp; co (A&amp;B)");
    expect(text).not.toMatch(/<!channel>|<@U123>|<prod>|A&B|k<>/);
    expect(text).toContain("`&lt;!channel&gt; &amp; ʹrmʹ`");
    // The header is plain text: Slack shows it literally, so it is not escaped.
    expect(blocks(body)[0]!.text!.text).toBe("Feature updated: <@U123> & co");
  });

  it("stays within Slack's limits however large the change", () => {
    const before = Object.fromEntries(Array.from({ length: 2000 }, (_, index) => [`field${index}`, "x".repeat(500)]));
    const after = Object.fromEntries(Array.from({ length: 2000 }, (_, index) => [`field${index}`, "y".repeat(5000)]));
    const rules = Array.from({ length: 500 }, (_, index) => ({ filter: context(`attribute${index}`, "ANY_OF", Array.from({ length: 50 }, (_, value) => `value-${value}-${"z".repeat(100)}`)) }));
    for (const body of [slackBody(event("feature.updated", before, after), "https://flags.example.com"), slackBody(event("targeting.changed", [], rules), "https://flags.example.com")]) {
      expect(body.blocks.length).toBeLessThanOrEqual(SLACK_MAX_BLOCKS);
      expect(body.text.length).toBeLessThanOrEqual(SLACK_MAX_SECTION_TEXT);
      for (const block of blocks(body)) {
        if (block.text) expect(block.text.text.length).toBeLessThanOrEqual(block.type === "header" ? 150 : SLACK_MAX_SECTION_TEXT);
        for (const element of block.elements ?? []) expect((typeof element.text === "string" ? element.text : element.text.text).length).toBeLessThanOrEqual(SLACK_MAX_SECTION_TEXT);
      }
      expect(shown(body)).toMatch(/…and \d+ more changes, in the dashboard\./);
      expect(blocks(body).at(-1)!.type).toBe("actions");
    }
  });
});
