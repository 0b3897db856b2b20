/**
 * The automated feedback protocol of the browser SDKs (API.md "Automated feedback surveys"; src/sse.ts and src/feedback/ of
 * `@bucketco/browser-sdk` 3.3.3 and `@reflag/browser-sdk` 1.6.1), served by Switchyard itself (`sseBaseUrl` = the
 * service's address) in place of Bucket's Ably-based messaging:
 *
 * 1. `POST /feedback/prompting-init {userId}` (environment key) → `{success: true, channel}` while the environment
 *    has an enabled survey, else `{success: false}` (both SDKs then open nothing).
 * 2. `GET /feedback/prompting-auth?userId=` (environment key) → `{success: true, keyName, clientId, channel, nonce,
 *    timestamp, ttl}`, a token request the Bucket SDK posts back verbatim to
 * 3. `POST /keys/:keyName/requestToken` → `{token, expires, issued, clientId, capability}` (a single-use request).
 * 4. `GET /sse?v=1.2&channels=<channel>&rewind=1[&accessToken=<token>]` → the prompt stream. The Bucket SDK sends
 *    the token; the Reflag SDK sends none (its feedback channel carries no credential), so the channel name — random,
 *    handed out only to holders of the environment's key — is what admits a stream, and a token, when sent, must be
 *    the channel's current one: a token of another channel or environment is refused with an Ably token error
 *    (40000–49999), after which the Bucket SDK forgets its cached token and asks for a new one.
 */
import * as v from "valibot";
import { parseJsonBody, SDK_BODY } from "../../schemas/json-body.js";
import { toWellFormed } from "../../schemas/well-formed.js";
import { ok } from "../../http/responses.js";
import { BODY_LIMITS, environmentOf, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { ApiResponse, StreamResponse } from "../../http/types.js";
import { ServiceError } from "../../errors/catalogue.js";
import { IdSchema } from "../../schemas/tracking-fields.js";
import { parseOrThrow } from "../../schemas/issues.js";
import type { Services } from "../core/services.js";
import { digestKey, randomBase62 } from "../../tenancy/identifiers.js";

/** A token request must be redeemed within this time. */
const TOKEN_REQUEST_TTL_MS = 60_000;
/** A token admits new streams for this long; an open stream is not cut when it expires. */
export const TOKEN_TTL_MS = 60 * 60_000;

/** Ably's error codes, which the Bucket SDK reads from an `error` event to decide to forget its token. */
const TOKEN_EXPIRED = 40142;
const TOKEN_INVALID = 40140;
const NOT_PERMITTED = 40160;

const STREAM_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/**
 * Bodies parsed again for prompting at most this large: a browser's calls are far smaller, and parsing a server's
 * 2 MiB bulk on the main thread would hold up every request behind it. Users of a larger bulk are checked when a
 * stream of theirs next opens.
 */
const MAX_REPARSED_BODY = 64 * 1024;

/**
 * After a tracking call committed: users whose events it stored and who have a prompt stream open get a check. The
 * body is parsed again (on the main thread) only when some user of the environment has a stream open.
 */
export function promptingAfterTracking(services: Services, environmentId: string, call: string, body: Uint8Array | null): void {
  if (call !== "event" && call !== "bulk") return;
  const prompting = services.prompting;
  if (!prompting.hub.hasStreams(environmentId) || body === null || body.byteLength > MAX_REPARSED_BODY) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
  } catch {
    return;
  }
  const items = Array.isArray(parsed) ? parsed : [parsed];
  const users = new Set<string>();
  for (const item of items) {
    if (typeof item !== "object" || item === null) continue;
    const { type, userId } = item as { type?: unknown; userId?: unknown };
    if (call === "bulk" && type !== "event") continue;
    // As the tracking call stored it: U+FFFD in place of a lone surrogate.
    if (typeof userId === "string" || typeof userId === "number") users.add(toWellFormed(String(userId)));
  }
  prompting.hub.usersTracked(environmentId, users);
}

/**
 * A `/sse/client` stream (live flag updates) of a user named in its context also carries that user's prompts,
 * when the environment has an enabled survey: where the Reflag browser SDK 1.6.1 listens for them.
 */
export function withPrompts(services: Services, environmentId: string, userId: string | undefined, response: StreamResponse): StreamResponse {
  if (userId === undefined) return response;
  const prompting = services.prompting;
  if (!prompting.prompter.hasActiveSurveys(environmentId)) return response;
  const start = response.start;
  return {
    ...response,
    start: (sink) => {
      start(sink);
      prompting.hub.share({ environmentId, userId }, sink);
    },
  };
}

const UserBody = v.object({ userId: IdSchema }, "must be an object with userId");

function userIdOfQuery(query: string): string {
  const userId = new URLSearchParams(query).get("userId");
  return parseOrThrow(v.safeParse, v.object({ userId: IdSchema }), { userId: userId === null || userId === "" ? undefined : userId }, "INVALID_QUERY").userId;
}

/** `{success: false}`, status 200: what both SDKs read as "no automated feedback here" without logging an error. */
const NOT_OFFERED = (): ApiResponse => ({ status: 200, headers: { "content-type": "application/json" }, body: '{"success":false}' });

async function channelFor(context: RouteContext<Services>, userId: string): Promise<string | undefined> {
  const { environmentId } = environmentOf(context.principal);
  const prompting = context.services.prompting;
  if (!prompting.prompter.hasActiveSurveys(environmentId)) return undefined;
  const existing = prompting.prompts.channelOfUser(environmentId, userId);
  if (existing !== undefined) return existing;
  const fresh = `prompt_${randomBase62(32)}`;
  return context.services.store.write(() => prompting.prompts.ensureChannel(environmentId, userId, fresh));
}

const TokenRequestBody = v.object(
  {
    keyName: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty")),
    clientId: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty")),
    channel: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty")),
    nonce: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty")),
  },
  "must be the token request from /feedback/prompting-auth",
);

function refusedToken(message: string): never {
  throw new ServiceError("UNAUTHORIZED", message);
}

/** A refused stream: an Ably-style `error` event for EventSource clients (which cannot read an error status), else a 401. */
function refuseStream(context: RouteContext<Services>, code: number, message: string): StreamResponse {
  const accept = context.request.headers.accept ?? "";
  if (!accept.includes("text/event-stream")) throw new ServiceError("UNAUTHORIZED", `${message} (${code})`);
  const frame = `event: error\ndata: ${JSON.stringify({ code, statusCode: 401, message })}\n\n`;
  return { status: 200, headers: { ...STREAM_HEADERS }, preamble: frame, start: (sink) => sink.end() };
}

function openPromptStream(context: RouteContext<Services>): StreamResponse {
  const params = new URLSearchParams(context.request.query);
  const channels = params.get("channels");
  if (channels === null || channels === "") {
    throw new ServiceError("INVALID_QUERY", undefined, [{ path: "channels", message: "is required: the channel from /feedback/prompting-init" }]);
  }
  if (channels.includes(",")) throw new ServiceError("INVALID_QUERY", undefined, [{ path: "channels", message: "must name exactly one channel" }]);
  const services = context.services;
  const prompting = services.prompting;
  const owner = prompting.prompts.channel(channels);
  if (!owner) return refuseStream(context, NOT_PERMITTED, "Unknown channel.");
  const token = params.get("accessToken");
  if (token !== null) {
    const current = prompting.prompts.credential("token", owner.environmentId, channels);
    if (!current || current.digest !== digestKey(token)) return refuseStream(context, TOKEN_INVALID, "The token is not valid for this channel.");
    if (current.expires <= Date.now()) return refuseStream(context, TOKEN_EXPIRED, "The token has expired.");
  }
  if (!services.tenancy.getEnvironment(owner.environmentId)) return refuseStream(context, NOT_PERMITTED, "The channel's environment no longer exists.");
  return prompting.hub.open({ environmentId: owner.environmentId, userId: owner.userId, channel: channels }, { ...STREAM_HEADERS });
}

const promptingInit = async (context: RouteContext<Services>): Promise<ApiResponse> => {
  const body = parseJsonBody(context.request.body, context.request.headers["content-type"], SDK_BODY);
  const { userId } = parseOrThrow(v.safeParse, UserBody, body);
  const channel = await channelFor(context, userId);
  return channel === undefined ? NOT_OFFERED() : ok({ channel });
};

const promptingAuth = async (context: RouteContext<Services>): Promise<ApiResponse> => {
  const userId = userIdOfQuery(context.request.query);
  const channel = await channelFor(context, userId);
  if (channel === undefined) return NOT_OFFERED();
  const { environmentId } = environmentOf(context.principal);
  const nonce = randomBase62(32);
  const now = Date.now();
  const prompts = context.services.prompting.prompts;
  await context.services.store.write(() => prompts.putCredential("token-request", environmentId, channel, nonce, now + TOKEN_REQUEST_TTL_MS));
  return ok({ keyName: environmentId, clientId: userId, channel, nonce, timestamp: now, ttl: TOKEN_TTL_MS });
};

const requestToken = async (context: RouteContext<Services>): Promise<ApiResponse> => {
  const body = parseOrThrow(v.safeParse, TokenRequestBody, parseJsonBody(context.request.body, context.request.headers["content-type"], SDK_BODY));
  const environmentId = context.params.keyName!;
  if (body.keyName !== environmentId) refusedToken("The token request is for another key.");
  const prompts = context.services.prompting.prompts;
  const owner = prompts.channel(body.channel);
  // A request of another environment (or user) is refused like an unknown one: nothing to learn from the answer.
  if (!owner || owner.environmentId !== environmentId || owner.userId !== body.clientId) refusedToken("The token request is not valid.");
  const now = Date.now();
  const token = `tok_${randomBase62(40)}`;
  const issued = await context.services.store.write(() => {
    const pending = prompts.credential("token-request", environmentId, body.channel);
    if (!pending || pending.digest !== digestKey(body.nonce) || pending.expires <= now) return false;
    prompts.removeCredential("token-request", environmentId, body.channel);
    prompts.putCredential("token", environmentId, body.channel, token, now + TOKEN_TTL_MS);
    return true;
  });
  if (!issued) refusedToken("The token request is not valid, was used already, or expired.");
  return ok({
    token,
    issued: now,
    expires: now + TOKEN_TTL_MS,
    clientId: body.clientId,
    capability: JSON.stringify({ [body.channel]: ["subscribe"] }),
  });
};

/**
 * The front API's routes, and the same two on the tracking API for `@bucketco/tracking-sdk` 2.4.0, which asks
 * `<host>/<trackingKey>/feedback/prompting-init` and `…/prompting-auth` (its prompt events: tracking-routes.ts).
 */
export const PROMPTING_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["POST", "/feedback/prompting-init", { access: "environment", bodyLimit: BODY_LIMITS.single, cors: true, handle: promptingInit }],
  ["GET", "/feedback/prompting-auth", { access: "environment", bodyLimit: BODY_LIMITS.none, cors: true, handle: promptingAuth }],
  ["POST", "/:trackingKey/feedback/prompting-init", { access: "tracking-path", bodyLimit: BODY_LIMITS.single, cors: true, handle: promptingInit }],
  ["GET", "/:trackingKey/feedback/prompting-auth", { access: "tracking-path", bodyLimit: BODY_LIMITS.none, cors: true, handle: promptingAuth }],
  ["POST", "/keys/:keyName/requestToken", { access: "public", bodyLimit: BODY_LIMITS.single, cors: true, handle: requestToken }],
  // Whether a user is due a prompt is read from projected usage: the stream waits for what was tracked before it.
  ["GET", "/sse", { access: "public", bodyLimit: 0, cors: true, readsProjection: true, handle: (context) => openPromptStream(context) }],
];
