/** The app or environment a management route's path names, or a 404 naming it. */
import type { RouteContext } from "./route.js";
import { ServiceError } from "../../errors/catalogue.js";
import type { Services } from "./services.js";
import type { AppRecord, EnvironmentRecord } from "../../tenancy/tenancy-records.js";

export function environmentOrNotFound(context: RouteContext<Services>): EnvironmentRecord {
  // Worker threads commit tracking data; renew this thread's read snapshot so an admin read sees it at once.
  context.services.store.refresh();
  const environment = context.services.tenancy.getEnvironment(context.params.envId!);
  if (!environment) throw new ServiceError("NOT_FOUND", `No environment ${context.params.envId}.`);
  return environment;
}

export function appOrNotFound(context: RouteContext<Services>): AppRecord {
  context.services.store.refresh();
  const app = context.services.tenancy.getApp(context.params.appId!);
  if (!app) throw new ServiceError("NOT_FOUND", `No app ${context.params.appId}.`);
  return app;
}
