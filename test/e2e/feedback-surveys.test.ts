/**
 * Automated feedback surveys over real HTTP (issue 18 §5): survey rules through the management API and the CLI, and
 * the live prompt protocol of the browser SDKs (prompting-init → prompting-auth → requestToken → /sse) spoken by
 * hand, as the SDKs speak it. The SDKs themselves run in test/browser/feedback-surveys.test.ts.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRequest, createApp, request } from "../support/http.js";
import { CLI, startServer, type TestServer } from "../support/server.js";
import { openSse, type SseConnection } from "../support/sse.js";

const run = promisify(execFile);

interface Prompt {
  question: string;
  showAfter: number;
  showBefore: number;
  promptId: string;
  featureId: string;
}

/** The prompts a stream delivered: Ably-style messages whose `data` is the prompt as JSON text. */
function prompts(connection: SseConnection): Prompt[] {
  return connection
    .frames()
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => JSON.parse(frame.slice("data: ".length)) as { name: string; data: string })
    .filter((message) => message.name === "prompt")
    .map((message) => JSON.parse(message.data) as Prompt);
}

describe("feedback surveys", () => {
  let server: TestServer;
  let app: Awaited<ReturnType<typeof createApp>>;
  let other: Awaited<ReturnType<typeof createApp>>;
  let featureId: string;
  const streams: SseConnection[] = [];

  beforeAll(async () => {
    server = await startServer();
    app = await createApp(server.url, server.adminToken, "Surveys");
    other = await createApp(server.url, server.adminToken, "Other");
    featureId = (await adminRequest(server, "PUT", `/admin/apps/${app.app.id}/features/huddle`, { usageEvents: ["huddle-joined"] })).body.feature.id;
    await adminRequest(server, "PUT", `/admin/apps/${app.app.id}/features/calls`, {});
    await adminRequest(server, "PUT", `/admin/apps/${other.app.id}/features/huddle`, {});
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await server?.stop();
  });

  const env = () => app.production;
  const surveyPath = (key: string, environmentId = env().id) => `/admin/environments/${environmentId}/features/${key}/survey`;
  const track = (key: string, userId: string, event: string) => request(server.url, "POST", "/event", { token: key, body: { event, userId } });

  /** The Bucket SDK's sequence: a channel, a token request, a token, then the stream with it. */
  async function connect(publishableKey: string, userId: string, withToken = true): Promise<{ channel: string; token?: string; stream: SseConnection }> {
    const init = await request(server.url, "POST", "/feedback/prompting-init", { token: publishableKey, body: { userId } });
    expect(init.body).toMatchObject({ success: true, channel: expect.any(String) });
    const channel = init.body.channel as string;
    let token: string | undefined;
    if (withToken) {
      const auth = await request(server.url, "GET", `/feedback/prompting-auth?userId=${encodeURIComponent(userId)}&publishableKey=${publishableKey}`);
      expect(auth.status).toBe(200);
      const { success: _success, ...tokenRequest } = auth.body;
      const issued = await request(server.url, "POST", `/keys/${encodeURIComponent(tokenRequest.keyName)}/requestToken`, { body: tokenRequest });
      expect(issued.status).toBe(200);
      expect(issued.body.expires).toBeGreaterThan(Date.now());
      token = issued.body.token as string;
    }
    const query = new URLSearchParams({ v: "1.2", channels: channel, rewind: "1", ...(token ? { accessToken: token } : {}) });
    const stream = await openSse(`${server.url}/sse?${query}`);
    streams.push(stream);
    expect(stream.status).toBe(200);
    return { channel, ...(token ? { token } : {}), stream };
  }

  it("answers {success: false} to prompting-init while the environment has no survey", async () => {
    const reply = await request(server.url, "POST", "/feedback/prompting-init", { token: env().publishableKey, body: { userId: "early" } });
    expect(reply).toMatchObject({ status: 200, body: { success: false } });
  });

  it("validates survey rules, names the field, and audits every change", async () => {
    const missing = await adminRequest(server, "PUT", surveyPath("huddle"), { question: "How is it?" });
    expect(missing.status).toBe(400);
    expect(missing.body.error.validationErrors).toContainEqual(expect.objectContaining({ path: "afterUses" }));
    const bad = await adminRequest(server, "PUT", surveyPath("huddle"), { question: "", afterUses: 0, quietPeriodDays: -1, extra: 1 });
    expect(bad.status).toBe(400);
    const unknown = await adminRequest(server, "PUT", surveyPath("nope"), { question: "Q?", afterUses: 1 });
    expect(unknown.status).toBe(404);

    const put = await adminRequest(server, "PUT", surveyPath("huddle"), { question: "How are huddles working for you?", afterUses: 3, quietPeriodDays: 30 });
    expect(put.status).toBe(200);
    expect(put.body.survey).toMatchObject({ featureKey: "huddle", question: "How are huddles working for you?", enabled: true, afterUses: 3, afterDays: null, quietPeriodDays: 30 });
    expect((await adminRequest(server, "GET", surveyPath("huddle"))).body.survey).toEqual(put.body.survey);
    const audit = await adminRequest(server, "GET", "/admin/audit?entity=survey");
    expect(audit.body.entries).toContainEqual(expect.objectContaining({ action: "survey.create", entity: expect.objectContaining({ kind: "survey", key: "huddle", environmentId: env().id }) }));
  });

  it("is managed by the CLI too", async () => {
    const cli = (...args: string[]) => run(process.execPath, [CLI, ...args, "--url", server.url, "--token", server.adminToken]);
    const set = JSON.parse((await cli("surveys", "set", env().id, "calls", "--question", "Calls OK?", "--after-days", "2", "--quiet-days", "0")).stdout);
    expect(set.survey).toMatchObject({ featureKey: "calls", question: "Calls OK?", afterUses: null, afterDays: 2, quietPeriodDays: 0 });
    const listed = JSON.parse((await cli("surveys", "list", env().id)).stdout);
    expect(listed.surveys.map((survey: { featureKey: string }) => survey.featureKey)).toEqual(["calls", "huddle"]);
    await expect(cli("surveys", "set", env().id, "calls", "--question", "Q", "--after-uses", "many")).rejects.toThrow(/afterUses/);
    const removed = JSON.parse((await cli("surveys", "remove", env().id, "calls")).stdout);
    expect(removed.survey.featureKey).toBe("calls");
    expect((await adminRequest(server, "GET", surveyPath("calls"))).status).toBe(404);
  });

  it("pushes the prompt to a user who qualifies, once, and never to one who does not", async () => {
    const key = env().publishableKey;
    const qualifying = await connect(key, "ada");
    const notYet = await connect(key, "bob");
    await track(key, "bob", "huddle");
    await track(key, "bob", "huddle-joined");
    await track(key, "ada", "huddle");
    await track(key, "ada", "huddle-joined");
    expect(prompts(qualifying.stream)).toEqual([]);
    // The third use (the key or a usage event) qualifies Ada.
    await track(key, "ada", "huddle");
    await qualifying.stream.waitFor((connection) => prompts(connection).length > 0, 2_000);
    const [prompt] = prompts(qualifying.stream);
    expect(prompt).toMatchObject({ question: "How are huddles working for you?", featureId, promptId: expect.stringMatching(/^.{10,40}$/) });
    expect(prompt!.showBefore).toBeGreaterThan(prompt!.showAfter);

    // Ada answers as the SDK does: prompt events, then feedback naming the prompt.
    for (const action of ["received", "shown"]) {
      const event = await request(server.url, "POST", "/feedback/prompt-events", { token: key, body: { action, featureId, promptId: prompt!.promptId, userId: "ada", promptedQuestion: prompt!.question } });
      expect(event.status).toBe(200);
    }
    const feedback = await request(server.url, "POST", "/feedback", {
      token: key,
      body: { featureId, userId: "ada", score: 4, comment: "Handy", promptId: prompt!.promptId, promptedQuestion: prompt!.question, source: "prompt" },
    });
    expect(feedback.status).toBe(200);
    const satisfaction = (await adminRequest(server, "GET", `/admin/environments/${env().id}/analytics/features`)).body.features.find((feature: { key: string }) => feature.key === "huddle");
    expect(satisfaction.satisfaction).toEqual({ count: 1, average: 4 });

    // More uses, a reconnect: never asked again (the answered prompt is not replayed either).
    await track(key, "ada", "huddle");
    const again = await connect(key, "ada");
    // Bob's fourth event makes him qualify: his prompt arriving shows the checks ran; Ada's streams stayed silent.
    await track(key, "bob", "huddle");
    await notYet.stream.waitFor((connection) => prompts(connection).length === 1, 2_000);
    expect(prompts(qualifying.stream)).toHaveLength(1);
    expect(prompts(again.stream)).toEqual([]);
  });

  it("replays an open prompt on reconnect (rewind) until it is answered or dismissed", async () => {
    const key = env().publishableKey;
    for (let use = 0; use < 3; use++) await track(key, "cy", "huddle");
    const first = await connect(key, "cy", false);
    await first.stream.waitFor((connection) => prompts(connection).length === 1, 2_000);
    const [prompt] = prompts(first.stream);
    first.stream.close();
    const second = await connect(key, "cy", false);
    await second.stream.waitFor((connection) => prompts(connection).length === 1, 2_000);
    expect(prompts(second.stream)[0]!.promptId).toBe(prompt!.promptId);
    second.stream.close();
    const dismissed = await request(server.url, "POST", "/bulk", {
      token: key,
      body: [{ type: "prompt-event", action: "dismissed", featureId, promptId: prompt!.promptId, userId: "cy", promptedQuestion: prompt!.question }],
    });
    expect(dismissed.status).toBe(200);
    const third = await connect(key, "cy", false);
    // A fresh qualifying user on the same service shows the check on connect ran meanwhile.
    for (let use = 0; use < 3; use++) await track(key, "di", "huddle");
    const witness = await connect(key, "di", false);
    await witness.stream.waitFor((connection) => prompts(connection).length === 1, 2_000);
    expect(prompts(third.stream)).toEqual([]);
    const events = (await adminRequest(server, "GET", `/admin/environments/${env().id}/prompt-events`)).body.promptEvents;
    expect(events).toContainEqual(expect.objectContaining({ action: "dismissed", userId: "cy", promptId: prompt!.promptId }));
  });

  it("carries the prompts of the user named in its context on /sse/client (the Reflag SDK's stream)", async () => {
    const key = env().publishableKey;
    const context = encodeURIComponent(JSON.stringify({ user: { id: "gus" } }));
    const live = await openSse(`${server.url}/sse/client?publishableKey=${key}&context=${context}`);
    streams.push(live);
    expect(live.status).toBe(200);
    for (let use = 0; use < 3; use++) await track(key, "gus", "huddle");
    await live.waitFor((connection) => prompts(connection).length === 1, 2_000);
    expect(prompts(live)[0]).toMatchObject({ question: "How are huddles working for you?", featureId });
    // Flag updates still flow on the same stream.
    expect(live.versions().length).toBeGreaterThan(0);
  });

  it("keeps a quiet period between prompts of different surveys", async () => {
    const key = env().publishableKey;
    await adminRequest(server, "PUT", surveyPath("calls"), { question: "Calls?", afterUses: 1, quietPeriodDays: 30 });
    // Ada was asked about huddles minutes ago: she uses calls, but stays unasked.
    const ada = await connect(key, "ada");
    await track(key, "ada", "calls");
    // Eve was never asked: the same use gets her the calls survey.
    const eve = await connect(key, "eve");
    await track(key, "eve", "calls");
    await eve.stream.waitFor((connection) => prompts(connection).length === 1, 2_000);
    expect(prompts(eve.stream)[0]!.question).toBe("Calls?");
    expect(prompts(ada.stream)).toEqual([]);
    await adminRequest(server, "DELETE", surveyPath("calls"));
  });

  it("asks D days after the first use, checked when the user connects", async () => {
    const key = env().publishableKey;
    await adminRequest(server, "PUT", surveyPath("calls"), { question: "Three days of calls?", afterDays: 3, quietPeriodDays: 0 });
    const day = 86_400_000;
    // One use each: Hal's first was four days ago, Ivy's two.
    await request(server.url, "POST", "/event", { token: key, body: { event: "calls", userId: "hal", timestamp: new Date(Date.now() - 4 * day).toISOString() } });
    await request(server.url, "POST", "/event", { token: key, body: { event: "calls", userId: "ivy", timestamp: new Date(Date.now() - 2 * day).toISOString() } });
    const ivy = await connect(key, "ivy", false);
    const hal = await connect(key, "hal", false);
    await hal.stream.waitFor((connection) => prompts(connection).length === 1, 2_000);
    expect(prompts(hal.stream)[0]!.question).toBe("Three days of calls?");
    // Ivy connected first: her check ran before Hal's prompt was issued.
    expect(prompts(ivy.stream)).toEqual([]);
    await adminRequest(server, "DELETE", surveyPath("calls"));
  });

  it("refuses a token from another environment, and a token request for another key", async () => {
    const key = env().publishableKey;
    await adminRequest(server, "PUT", surveyPath("huddle", other.production.id), { question: "Other?", afterUses: 1 });
    const mine = await connect(key, "fay");
    const theirs = await connect(other.production.publishableKey, "fay");
    expect(theirs.channel).not.toBe(mine.channel);

    // The other environment's token on this environment's channel: an Ably token error, as an `error` event.
    const query = new URLSearchParams({ v: "1.2", channels: mine.channel, rewind: "1", accessToken: theirs.token! });
    const refused = await openSse(`${server.url}/sse?${query}`);
    await refused.ended;
    const frame = refused.frames().find((block) => block.startsWith("event: error"));
    expect(frame).toBeDefined();
    const error = JSON.parse(frame!.split("\n")[1]!.slice("data: ".length)) as { code: number };
    expect(error.code).toBeGreaterThanOrEqual(40000);
    expect(error.code).toBeLessThanOrEqual(49999);
    // Without an EventSource Accept header the same refusal is a 401 envelope.
    const plain = await request(server.url, "GET", `/sse?${query}`);
    expect(plain.status).toBe(401);

    // A token request of the other environment redeemed under this environment's key name.
    const auth = await request(server.url, "GET", `/feedback/prompting-auth?userId=fay&publishableKey=${other.production.publishableKey}`);
    const { success: _success, ...tokenRequest } = auth.body;
    const crossed = await request(server.url, "POST", `/keys/${env().id}/requestToken`, { body: { ...tokenRequest, keyName: env().id } });
    expect(crossed.status).toBe(401);
    // A token request is single-use.
    expect((await request(server.url, "POST", `/keys/${tokenRequest.keyName}/requestToken`, { body: tokenRequest })).status).toBe(200);
    expect((await request(server.url, "POST", `/keys/${tokenRequest.keyName}/requestToken`, { body: tokenRequest })).status).toBe(401);
  });

  it("answers 400 naming the field for malformed prompting calls", async () => {
    const key = env().publishableKey;
    const init = await request(server.url, "POST", "/feedback/prompting-init", { token: key, body: { userId: "" } });
    expect(init.status).toBe(400);
    expect(init.body.error.validationErrors[0].path).toBe("userId");
    const auth = await request(server.url, "GET", `/feedback/prompting-auth?publishableKey=${key}`);
    expect(auth.status).toBe(400);
    expect(auth.body.error.validationErrors[0].path).toBe("userId");
    const sse = await request(server.url, "GET", "/sse?v=1.2");
    expect(sse.status).toBe(400);
    expect(sse.body.error.validationErrors[0].path).toBe("channels");
    const token = await request(server.url, "POST", `/keys/${env().id}/requestToken`, { body: { keyName: env().id } });
    expect(token.status).toBe(400);
    expect(token.body.error.validationErrors.map((issue: { path: string }) => issue.path)).toEqual(expect.arrayContaining(["clientId", "channel", "nonce"]));
  });
});
