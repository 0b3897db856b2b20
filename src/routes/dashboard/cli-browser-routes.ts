/**
 * The browser ends of the Reflag CLI (API.md §10), served where `/dashboard/` is: `reflag login` leaves the browser
 * on `/cli-login/success` (or `/cli-login/error?error=…`), and `reflag flags create` prints
 * `<base>/envs/<envSegment>/features/<featureSegment>`, which redirects to that feature's dashboard page (§9).
 */
import { errorFor } from "../../http/responses.js";
import { BODY_LIMITS, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { ApiResponse } from "../../http/types.js";
import type { Services } from "../core/services.js";
import type { EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import { escapeHtml, htmlPage, pageHeaders } from "../core/html-page.js";

type Context = RouteContext<Services>;

const PAGE_HEADERS = pageHeaders("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");

/** The card and the pages' own rules. */
const STYLE =
  "main{max-width:27rem;margin:10vh auto 2rem;background:#fff;padding:32px;border:1px solid #d6dae1;border-radius:8px;box-shadow:0 1px 3px rgb(0 0 0/6%)}" +
  "a{color:#1d4ed8}.ok{color:#166534;font-weight:600}";

function page(status: number, title: string, body: string): ApiResponse {
  return { status, headers: { ...PAGE_HEADERS }, body: htmlPage(`${title} · Switchyard`, STYLE, body) };
}

function signedIn(): ApiResponse {
  return page(
    200,
    "CLI signed in",
    `<h1>The CLI is signed in</h1><p class="ok">You can close this tab and go back to your terminal.</p><p>To manage features in the browser, open <a href="/dashboard/">the dashboard</a>.</p>`,
  );
}

function loginFailed(context: Context): ApiResponse {
  const message = new URLSearchParams(context.request.query).get("error") || "The sign-in did not finish.";
  return page(
    200,
    "CLI sign-in failed",
    `<h1>The CLI could not sign in</h1><p class="error" role="alert">${escapeHtml(message.slice(0, 500))}</p><p>Run <code>reflag login</code> again in your terminal.</p>`,
  );
}

/**
 * The id a CLI link segment names (`<slug of the name>-<id>`): the whole segment if that is an id, else its longest
 * suffix after a `-` that is one. Undefined when none is.
 */
function resolveSegment<T>(segment: string, lookup: (id: string) => T | undefined): T | undefined {
  const whole = lookup(segment);
  if (whole !== undefined) return whole;
  for (let at = segment.indexOf("-"); at >= 0; at = segment.indexOf("-", at + 1)) {
    const found = lookup(segment.slice(at + 1));
    if (found !== undefined) return found;
  }
  return undefined;
}

function environmentOf(context: Context): EnvironmentRecord | undefined {
  const segment = decodeURIComponent(context.params.envSegment ?? "");
  return resolveSegment(segment, (id) => context.services.tenancy.getEnvironment(id));
}

function redirect(location: string): ApiResponse {
  return { status: 302, headers: { location, "cache-control": "no-store" }, body: "" };
}

const dashboardPath = (environment: EnvironmentRecord) => `/dashboard/#/apps/${encodeURIComponent(environment.appId)}/environments/${encodeURIComponent(environment.id)}/features`;

function toEnvironment(context: Context): ApiResponse {
  const environment = environmentOf(context);
  if (!environment) return errorFor("NOT_FOUND", `No environment ${context.params.envSegment}.`);
  return redirect(dashboardPath(environment));
}

function toFeature(context: Context): ApiResponse {
  const environment = environmentOf(context);
  if (!environment) return errorFor("NOT_FOUND", `No environment ${context.params.envSegment}.`);
  const segment = decodeURIComponent(context.params.featureSegment ?? "");
  const feature = resolveSegment(segment, (id) => context.services.features.getFeatureById(environment.appId, id));
  if (!feature) return errorFor("NOT_FOUND", `No feature ${segment} in the app of environment ${environment.id}.`);
  return redirect(`${dashboardPath(environment)}/${encodeURIComponent(feature.key)}`);
}

const route = (handle: (context: Context) => ApiResponse): RouteSpec<Services> => ({ access: "public", bodyLimit: BODY_LIMITS.none, cors: false, handle });

export const CLI_BROWSER_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["GET", "/cli-login/success", route(signedIn)],
  ["GET", "/cli-login/error", route(loginFailed)],
  ["GET", "/envs/:envSegment", route(toEnvironment)],
  ["GET", "/envs/:envSegment/features/:featureSegment", route(toFeature)],
];
