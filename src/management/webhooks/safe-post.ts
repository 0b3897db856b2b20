import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from "node:dns";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { performance } from "node:perf_hooks";
import { isAllowed, literalAddress, refusalOf, type AddressAllowList } from "./address-policy.js";

export { parseAllowList, EMPTY_ALLOW_LIST, type AddressAllowList } from "./address-policy.js";

/** `node:dns` lookup's shape with `{all: true}`; injectable so tests decide what a name resolves to. */
export type LookupFunction = (hostname: string, options: LookupAllOptions, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

export interface SafePostPolicy {
  allow: AddressAllowList;
  lookup?: LookupFunction;
  /** Whole attempt: connect, headers and body (default 10 000). */
  timeoutMs?: number;
  /** Response body bytes kept; reading stops there (default 4096). */
  maxResponseBytes?: number;
}

export type UrlCheck = { ok: true; addresses: string[] } | { ok: false; reason: string };

export interface PostOutcome {
  /** The receiver's status, or null when none arrived (refused, unreachable, timed out). */
  status: number | null;
  durationMs: number;
  /** Null exactly when the attempt is delivered (a 2xx); otherwise why not, for the deliveries list. */
  error: string | null;
  /** The response body, cut at `maxResponseBytes`. */
  body: string;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 4096;

const defaultLookup: LookupFunction = (hostname, options, callback) => dnsLookup(hostname, options, callback);

/**
 * Checks a webhook URL: http(s) with a host, every address it resolves to public or allowed by the operator.
 * Resolves the name once; the addresses returned are the only ones a delivery may connect to.
 */
export async function checkWebhookUrl(url: string, policy: SafePostPolicy): Promise<UrlCheck> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return { ok: false, reason: `the scheme must be http or https, not ${parsed.protocol.replace(/:$/, "")}` };
  if (parsed.hostname === "") return { ok: false, reason: "the URL has no host" };
  const resolved = await resolve(parsed.hostname, policy.lookup ?? defaultLookup);
  if (!resolved.ok) return resolved;
  for (const address of resolved.addresses) {
    if (isAllowed(policy.allow, parsed.hostname, address)) continue;
    const refusal = refusalOf(address);
    if (refusal !== undefined) return { ok: false, reason: literalAddress(parsed.hostname) === undefined ? `${parsed.hostname} resolves to ${refusal}` : refusal };
  }
  return resolved;
}

async function resolve(hostname: string, lookup: LookupFunction): Promise<UrlCheck> {
  const literal = literalAddress(hostname);
  if (literal !== undefined) return { ok: true, addresses: [literal] };
  return new Promise((done) => {
    try {
      lookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
        if (error !== null) done({ ok: false, reason: `${hostname} could not be resolved (${error.code ?? error.message})` });
        else if (addresses.length === 0) done({ ok: false, reason: `${hostname} resolves to no address` });
        else done({ ok: true, addresses: addresses.map((entry) => entry.address) });
      });
    } catch (error) {
      done({ ok: false, reason: `${hostname} could not be resolved (${error instanceof Error ? error.message : String(error)})` });
    }
  });
}

/** A `lookup` for node's sockets that answers with the checked addresses only, so no second DNS query happens. */
function pinnedLookup(addresses: readonly string[]) {
  const entries: LookupAddress[] = addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  return (_hostname: string, options: LookupOneOptions | LookupAllOptions, callback: (...args: unknown[]) => void): void => {
    // Sockets ask for every address when they race IPv4 and IPv6 (autoSelectFamily), for one otherwise.
    if ((options as LookupAllOptions).all === true) callback(null, entries);
    else callback(null, entries[0]!.address, entries[0]!.family);
  };
}

/**
 * POSTs a body to a webhook URL without opening a door into the network: checks the URL as `checkWebhookUrl` does,
 * connects only to an address it checked, never follows a redirect, stops at the timeout and the body limit.
 * Never throws: every failure is an outcome with its error.
 */
export async function safePost(url: string, body: string, headers: Record<string, string>, policy: SafePostPolicy): Promise<PostOutcome> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const timeoutMs = policy.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  try {
    // The timeout covers resolving too: a resolver that never answers costs one attempt, not a stuck dispatcher.
    const expired = new Promise<"expired">((done) => (timer = setTimeout(() => done("expired"), timeoutMs)));
    const check = await Promise.race([checkWebhookUrl(url, policy), expired]);
    clearTimeout(timer);
    if (check === "expired") return { status: null, durationMs: elapsed(), error: `timed out after ${timeoutMs} ms`, body: "" };
    if (!check.ok) return { status: null, durationMs: elapsed(), error: `refused: ${check.reason}`, body: "" };
    const outcome = await post(new URL(url), check.addresses, body, headers, policy, Math.max(1, timeoutMs - elapsed()));
    return { ...outcome, durationMs: elapsed() };
  } catch (error) {
    clearTimeout(timer);
    return { status: null, durationMs: elapsed(), error: error instanceof Error ? error.message : String(error), body: "" };
  }
}

/** The request itself, ended `remainingMs` from now (what the attempt's timeout left after resolving). */
function post(url: URL, addresses: readonly string[], body: string, headers: Record<string, string>, policy: SafePostPolicy, remainingMs: number): Promise<Omit<PostOutcome, "durationMs">> {
  const timeoutMs = policy.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = policy.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const payload = Buffer.from(body, "utf8");
  return new Promise((done) => {
    let status: number | null = null;
    let location: string | undefined;
    const chunks: Buffer[] = [];
    let kept = 0;
    let settled = false;
    const finish = (failure: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      done({ status, error: failure ?? verdict(status, location), body: Buffer.concat(chunks).toString("utf8") });
    };
    const transport = url.protocol === "https:" ? https : http;
    const request = transport.request({
      protocol: url.protocol,
      // The name stays the request's Host and the TLS server name; only the socket's address is pinned.
      host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: "POST",
      headers: { ...headers, "content-length": String(payload.length) },
      ...(url.username !== "" ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` } : {}),
      // A fresh connection each time: a kept-alive socket would skip this attempt's check.
      agent: false,
      lookup: pinnedLookup(addresses) as never,
    });
    const timer = setTimeout(() => finish(status !== null && isSuccess(status) ? null : `timed out after ${timeoutMs} ms`), remainingMs);
    request.on("error", (error: NodeJS.ErrnoException) => finish(status !== null ? null : `connection failed: ${error.code ?? error.message}`));
    request.on("response", (response: IncomingMessage) => {
      status = response.statusCode ?? null;
      location = response.headers.location;
      response.on("data", (chunk: Buffer) => {
        const room = maxBytes - kept;
        if (room > 0) {
          const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
          chunks.push(piece);
          kept += piece.length;
        }
        // Enough read: the rest of a huge or endless body is not our concern.
        if (kept >= maxBytes) finish(null);
      });
      response.on("end", () => finish(null));
      response.on("error", () => finish(null));
      response.on("aborted", () => finish(null));
    });
    request.end(payload);
  });
}

const isSuccess = (status: number): boolean => status >= 200 && status < 300;

function verdict(status: number | null, location: string | undefined): string | null {
  if (status === null) return "no response";
  if (isSuccess(status)) return null;
  if (status >= 300 && status < 400) return `redirect (${status}) not followed${location === undefined ? "" : `: Location ${location}`}`;
  return `the receiver answered ${status}`;
}
