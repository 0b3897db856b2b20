import { ok } from "./responses.js";
import type { RouteSpec } from "./route.js";
import type { HttpMethod } from "./router.js";

/** `GET /health`: no key; answers once the service is ready (the front end only listens then). */
export const HEALTH_ROUTES: [HttpMethod, string, RouteSpec<unknown>][] = [
  ["GET", "/health", { access: "public", bodyLimit: 0, cors: true, handle: () => ok() }],
];
