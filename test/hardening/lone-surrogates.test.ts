/**
 * Strings must be well-formed Unicode (API.md §2). A lone UTF-16 surrogate (`"\ud83d"`, half an emoji) in a rule,
 * a config variant or any management body — the management API, a flags document, the Reflag `/api`, the MCP tools
 * — is refused with a 400 naming its path and nothing is stored; a tracking call is not refused, and stores U+FFFD
 * in its place, which is what reads serve. Real service, real HTTP; bodies go out as JSON.stringify writes them
 * (the surrogate as a `\ud83d` escape, as any JavaScript client sends it).
 */
import { describe, expect, it } from "vitest";
import { useAppServer } from "../support/app-server.js";
import { request } from "../support/http.js";
import { connectMcp } from "../support/mcp.js";

const HALF_EMOJI = "\ud83d";
const LONE_LOW = "\ude00";
const WHOLE_EMOJI = "\ud83d\ude00";
const refusal = (path: string) => ({ path, message: expect.stringContaining("lone UTF-16 surrogate") });
const contains = (value: string) => ({ type: "context", field: "company.name", operator: "CONTAINS", values: [value] });

describe("lone UTF-16 surrogates", () => {
  const app = useAppServer();
  const environment = () => app.keys.production.id;
  const features = async () => (await request(app.server.url, "GET", "/features", { token: app.keys.production.secretKey })).body.features;

  it("refuses one in a rule with 400 naming its path and keeps the rules saved before; a whole emoji is kept exactly", async () => {
    expect((await app.admin("PUT", `/admin/apps/${app.keys.app.id}/features/emoji`, {})).status).toBe(200);
    const targeting = `/admin/environments/${environment()}/features/emoji/targeting`;
    const saved = await app.admin("PUT", targeting, { rules: [{ filter: contains(`rocket ${WHOLE_EMOJI}`) }] });
    expect(saved.status).toBe(200);
    const before = await features();
    expect(JSON.stringify(before)).toContain(`rocket ${WHOLE_EMOJI}`);

    const nested = { type: "group", operator: "or", filters: [contains("plain"), { type: "negation", filter: contains(`x${HALF_EMOJI}`) }] };
    for (const [rules, path] of [
      [[{ filter: contains(HALF_EMOJI) }], "rules.0.filter.values.0"],
      [[{ filter: contains("ok") }, { filter: nested }], "rules.1.filter.filters.1.filter.values.0"],
      [[{ filter: { type: "context", field: `company.${LONE_LOW}`, operator: "SET" } }], "rules.0.filter.field"],
    ] as const) {
      const reply = await app.admin("PUT", targeting, { rules });
      expect(reply.status, path).toBe(400);
      expect(reply.body.error.code).toBe("INVALID_BODY");
      expect(reply.body.error.validationErrors).toEqual([refusal(path)]);
    }
    expect(await features()).toEqual(before);
  });

  it("refuses one in a config variant, a feature's fields, a segment and a key of any object", async () => {
    const before = await features();
    const config = await app.admin("PUT", `/admin/environments/${environment()}/features/emoji/config`, {
      variants: [{ filter: { type: "constant", value: true }, key: "v", payload: { label: `go ${HALF_EMOJI}` } }],
    });
    expect(config.status).toBe(400);
    expect(config.body.error.validationErrors).toEqual([refusal("variants.0.payload.label")]);

    const renamed = await app.admin("PUT", `/admin/apps/${app.keys.app.id}/features/emoji`, { name: `Emoji ${LONE_LOW}` });
    expect(renamed.body.error.validationErrors).toEqual([refusal("name")]);
    const segment = await app.admin("POST", `/admin/apps/${app.keys.app.id}/segments`, { name: "Rockets", filter: contains(HALF_EMOJI) });
    expect(segment.status).toBe(400);
    expect(segment.body.error.validationErrors).toEqual([refusal("filter.values.0")]);
    const badKey = await app.admin("PUT", `/admin/environments/${environment()}/features/emoji/config`, {
      variants: [{ filter: { type: "constant", value: true }, key: "v", payload: { [`k${HALF_EMOJI}`]: 1 } }],
    });
    expect(badKey.body.error.validationErrors).toEqual([{ path: "variants.0.payload.k\ufffd", message: expect.stringContaining("key") }]);

    expect(await features()).toEqual(before);
    expect((await app.admin("GET", `/admin/apps/${app.keys.app.id}/segments`)).body.segments).toEqual([]);
  });

  it("refuses one in an imported flags document, dry run or not, and changes nothing", async () => {
    const exported = (await app.admin("GET", `/admin/apps/${app.keys.app.id}/export`)).body.document;
    const emoji = exported.features.findIndex((feature: { key: string }) => feature.key === "emoji");
    const document = structuredClone(exported);
    document.features[emoji].environments.production.rules = [{ filter: contains(HALF_EMOJI) }];
    for (const dryRun of ["true", "false"]) {
      const reply = await app.admin("POST", `/admin/apps/${app.keys.app.id}/import?dryRun=${dryRun}`, document);
      expect(reply.status).toBe(400);
      expect(reply.body.error.validationErrors).toEqual([refusal(`features.${emoji}.environments.production.rules.0.filter.values.0`)]);
    }
    const after = (await app.admin("GET", `/admin/apps/${app.keys.app.id}/export`)).body.document;
    expect(after.features).toEqual(exported.features);
  });

  it("refuses one in the Reflag /api's flag creation", async () => {
    const created = await app.admin("POST", `/api/apps/${app.keys.app.id}/features`, { key: "reflag-made", name: `Made ${HALF_EMOJI}` });
    expect(created.status).toBe(400);
    expect(created.body.error.validationErrors).toEqual([refusal("name")]);
    expect((await features()).map((feature: { key: string }) => feature.key)).not.toContain("reflag-made");
  });

  it("refuses one in an MCP tool's arguments with an error result naming its path", async () => {
    const mcp = await connectMcp(`${app.server.url}/api/mcp`, { token: app.server.adminToken });
    try {
      const before = await features();
      const targeting = await mcp.call("set_flag_targeting", { appId: app.keys.app.id, key: "emoji", environmentId: environment(), rules: [{ filter: contains(HALF_EMOJI) }] });
      expect(targeting.isError).toBe(true);
      expect(targeting.value.error.validationErrors).toEqual([refusal("rules.0.filter.values.0")]);
      expect(targeting.text).toContain("rules.0.filter.values.0");
      const companies = await mcp.call("set_flag_targeting", { appId: app.keys.app.id, key: "emoji", environmentId: environment(), companyIds: ["acme", `b${LONE_LOW}`] });
      expect(companies.value.error.validationErrors).toEqual([refusal("companyIds.1")]);
      const created = await mcp.call("create_flag", { appId: app.keys.app.id, key: "mcp-made", description: HALF_EMOJI });
      expect(created.value.error.validationErrors).toEqual([refusal("description")]);
      expect(await features()).toEqual(before);
    } finally {
      await mcp.close();
    }
  });

  it("takes a tracking call holding one, and stores and serves U+FFFD in its place", async () => {
    const { publishableKey, secretKey } = app.keys.production;
    const user = await request(app.server.url, "POST", "/user", { token: publishableKey, body: { userId: `u${HALF_EMOJI}`, attributes: { name: `Ada ${LONE_LOW}`, [`k${HALF_EMOJI}`]: "v", whole: WHOLE_EMOJI } } });
    expect(user.status).toBe(200);
    const event = await request(app.server.url, "POST", "/bulk", { token: secretKey, body: [{ type: "event", event: `clicked ${HALF_EMOJI}`, userId: `u${HALF_EMOJI}` }] });
    expect(event.status).toBe(200);

    const stored = await app.admin("GET", `/admin/environments/${environment()}/users/${encodeURIComponent("u\ufffd")}`);
    expect(stored.status).toBe(200);
    expect(stored.body.user).toMatchObject({ id: "u\ufffd", attributes: { name: "Ada \ufffd", "k\ufffd": "v", whole: WHOLE_EMOJI } });
    const events = (await app.admin("GET", `/admin/environments/${environment()}/events?limit=100`)).body.events;
    expect(events.filter((item: { userId: string }) => item.userId === "u\ufffd").map((item: { event: string }) => item.event)).toEqual(["clicked \ufffd"]);
  });
});
