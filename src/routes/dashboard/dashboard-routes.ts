import { errorFor, ok } from "../../http/responses.js";
import type { RouteContext, RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { ApiResponse } from "../../http/types.js";
import { preferredEncoding } from "../../evaluation/answer-encoding.js";
import { StaticAssets, type StaticAsset } from "./static-assets.js";

/**
 * The page only loads its own files and talks to its own origin; no inline script or style (Vite emits none), no
 * framing. `style-src` also allows nothing inline: Preact and uPlot set styles through the CSSOM, which CSP permits.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
} as const;

function answer(asset: StaticAsset, request: RouteContext<unknown>["request"]): ApiResponse {
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    "content-type": asset.contentType,
    etag: asset.etag,
    // Hashed names never change; the HTML that names them must be checked every time, so a new build is picked up.
    "cache-control": asset.immutable ? "public, max-age=31536000, immutable" : "no-cache",
  };
  if (asset.contentType.startsWith("text/html")) headers["content-security-policy"] = CONTENT_SECURITY_POLICY;
  if (asset.br || asset.gzip) headers.vary = "accept-encoding";
  if (request.headers["if-none-match"] === asset.etag) return { status: 304, headers, body: "" };
  const encoding = asset.br || asset.gzip ? preferredEncoding(request.headers["accept-encoding"]) : undefined;
  const encoded = encoding === "br" ? asset.br : encoding === "gzip" ? asset.gzip : undefined;
  if (encoded && encoding) return { status: 200, headers: { ...headers, "content-encoding": encoding }, body: encoded };
  return { status: 200, headers, body: asset.identity };
}

/** Facts about the running service the dashboard shows (SDK snippets need the SDK port). */
export interface DashboardServiceInfo {
  /** The SDK port when the admin surface has a port of its own; undefined otherwise (SDKs use the page's origin). */
  sdkPort(): number | undefined;
}

function notBuilt(): ApiResponse {
  return errorFor("ROUTE_NOT_FOUND", "The dashboard is not built: run `npm run build` (npm start does).");
}

/**
 * API.md §9: `/dashboard/` serves the single-page app (its views live after `#`, so one HTML file answers every
 * page), `/dashboard/assets/*` its hashed files, and `/` redirects there.
 */
export function createDashboardRoutes(
  service: DashboardServiceInfo = { sdkPort: () => undefined },
  assets = new StaticAssets(),
): [HttpMethod, string, RouteSpec<unknown>][] {
  const file = (name: (context: RouteContext<unknown>) => string): RouteSpec<unknown> => ({
    access: "public",
    bodyLimit: 0,
    cors: false,
    handle(context) {
      const asset = assets.get(name(context));
      if (asset) return answer(asset, context.request);
      return assets.available() ? errorFor("ROUTE_NOT_FOUND", `No dashboard file ${context.request.path}.`) : notBuilt();
    },
  });
  return [
    ["GET", "/", { access: "public", bodyLimit: 0, cors: false, handle: () => ({ status: 302, headers: { location: "/dashboard/" }, body: "" }) }],
    ["GET", "/dashboard", file(() => "index.html")],
    // What the page cannot know from its own URL: the SDK port, when the dashboard is on a separate admin port.
    ["GET", "/dashboard/service.json", { access: "public", bodyLimit: 0, cors: false, handle: () => ok({ sdkPort: service.sdkPort() ?? null }) }],
    ["GET", "/dashboard/assets/:file", file((context) => `assets/${context.params.file}`)],
    ["GET", "/dashboard/:file", file((context) => context.params.file!)],
  ];
}
