/**
 * The OpenFeature server SDK with the official OFREP provider, as a user installs them, against a real Switchyard
 * (alone, or a node of a cluster with SWITCHYARD_TEST_CLUSTER=1): every value and variant equals
 * `/features/evaluated`'s for the same context, reasons and metadata arrive, errors become the caller's default, and a
 * targeting change is seen by the next evaluation. This is the set-up README.md shows.
 */
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OpenFeature, type Client, type EvaluationContext } from "@openfeature/server-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "../support/http.js";
import { startServerUnderTest, type ServerUnderTest } from "../support/server-under-test.js";
import { adminCall, createFixtureApp, eventually, FEATURES, randomContexts, type AppFixture, type SdkContext } from "./fixtures.js";

/** The OpenFeature context of an SDK context: the user's id as targetingKey, the rest under its namespace. */
function openFeatureContext(context: SdkContext): EvaluationContext {
  const { id, ...user } = context.user;
  return { targetingKey: id, user, ...(context.company ? { company: context.company } : {}), ...(context.other ? { other: context.other } : {}) };
}

function queryOf(context: SdkContext): string {
  const parts: string[] = [];
  for (const [namespace, attributes] of Object.entries(context)) {
    for (const [name, value] of Object.entries(attributes as Record<string, unknown>)) parts.push(`context.${namespace}.${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
  }
  return parts.join("&");
}

describe("@openfeature/server-sdk with @openfeature/ofrep-provider against Switchyard", () => {
  let under: ServerUnderTest;
  let fixture: AppFixture;
  let client: Client;

  beforeAll(async () => {
    under = await startServerUnderTest();
    fixture = await createFixtureApp(under.writer.url, under.writer.adminToken, "OpenFeature server");
    // Cluster mode: wait until the node the provider talks to has applied the fixture's rules.
    await eventually(async () => (await request(under.server.url, "GET", "/features/evaluated", { token: fixture.secretKey })).body.flagStateVersion >= fixture.flagStateVersion, 20_000);
    await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl: under.server.url, headers: [["Authorization", `Bearer ${fixture.secretKey}`]] }));
    client = OpenFeature.getClient();
  }, 120_000);
  afterAll(async () => {
    await OpenFeature.close();
    await under?.stop();
  });

  it("evaluates every feature and config like /features/evaluated, for 100 random contexts", async () => {
    for (const context of randomContexts(100, 4301, "of")) {
      const answer = (await request(under.server.url, "GET", `/features/evaluated?${queryOf(context)}`, { token: fixture.secretKey })).body;
      const evaluated = answer.features;
      for (const { key } of FEATURES) {
        const details = await client.getBooleanDetails(key, !evaluated[key].isEnabled, openFeatureContext(context));
        expect(details.errorCode, `${key} ${JSON.stringify(context)}`).toBeUndefined();
        expect(details.value).toBe(evaluated[key].isEnabled);
        expect(details.variant).toBe(evaluated[key].isEnabled ? "on" : "off");
        expect(["STATIC", "TARGETING_MATCH", "SPLIT", "DEFAULT"]).toContain(details.reason);
        expect(details.flagMetadata.flagStateVersion).toBe(answer.flagStateVersion);
      }
      // Config flags whose variant is an object; a string or number payload is read with its own type.
      const gold = evaluated["enterprise-plan"].config;
      const config = await client.getObjectDetails("enterprise-plan:config", { none: true }, openFeatureContext(context));
      if (gold.key === null) {
        expect(config.value).toEqual({ none: true });
      } else {
        expect(config.value).toEqual(gold.payload);
        expect(config.variant).toBe(gold.key);
      }
      const small = evaluated["small-companies"].config;
      if (small.key === "large") expect(await client.getStringValue("small-companies:config", "default", openFeatureContext(context))).toBe("big");
      if (small.key === "half") expect(await client.getNumberValue("small-companies:config", -1, openFeatureContext(context))).toBe(42);
    }
  }, 120_000);

  it("reports reasons and metadata", async () => {
    const always = await client.getBooleanDetails("always-on", false, { targetingKey: "r-1" });
    expect(always).toMatchObject({ value: true, reason: "STATIC", variant: "on", flagMetadata: { configKey: "v1", targetingVersion: 1 } });
    const vip = await client.getBooleanDetails("multi-rule", false, { targetingKey: "vip-1", user: { role: "admin" } });
    expect(vip).toMatchObject({ value: true, reason: "TARGETING_MATCH" });
    const untargeted = await client.getBooleanDetails("untargeted", true, { targetingKey: "r-1" });
    expect(untargeted).toMatchObject({ value: false, reason: "DEFAULT", variant: "off" });
  });

  it("gives the caller's default for an unknown flag and a wrong type", async () => {
    const unknown = await client.getBooleanDetails("no-such-flag", true, { targetingKey: "x" });
    expect(unknown).toMatchObject({ value: true, errorCode: "FLAG_NOT_FOUND", reason: "ERROR" });
    const mismatch = await client.getStringDetails("always-on", "fallback", { targetingKey: "x" });
    expect(mismatch).toMatchObject({ value: "fallback", errorCode: "TYPE_MISMATCH" });
    // No variant matches (no company): the answer has no value. Provider 0.1.3 reads that as a malformed answer
    // (GENERAL); the web provider as DEFAULT. The caller's default applies either way.
    const noVariant = await client.getStringDetails("small-companies:config", "fallback", { targetingKey: "x" });
    expect(noVariant).toMatchObject({ value: "fallback", errorCode: "GENERAL" });
  });

  it("sees a targeting change at the next evaluation", async () => {
    expect(await client.getBooleanValue("untargeted", true, { targetingKey: "change" })).toBe(false);
    const reply = await adminCall(under.writer.url, under.writer.adminToken, "PUT", `/admin/environments/${fixture.environmentId}/features/untargeted/targeting`, {
      rules: [{ filter: { type: "context", field: "user.id", operator: "IS", values: ["change"] } }],
    });
    await eventually(async () => (await client.getBooleanDetails("untargeted", false, { targetingKey: "change" })).flagMetadata.flagStateVersion === reply.flagStateVersion, 20_000);
    expect(await client.getBooleanDetails("untargeted", false, { targetingKey: "change" })).toMatchObject({ value: true, reason: "TARGETING_MATCH" });
    expect(await client.getBooleanValue("untargeted", true, { targetingKey: "someone-else" })).toBe(false);
  });
});
