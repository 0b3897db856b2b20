/** The app and environment a tool call names, or the error result that says which id is wrong and where to find one. */
import { ServiceError } from "../../errors/catalogue.js";
import type { AppRecord, EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import type { RouteContext } from "../core/route.js";
import type { Services } from "../core/services.js";

type Context = RouteContext<Services>;

export function appOrError(context: Context, appId: string): AppRecord {
  const app = context.services.tenancy.getApp(appId);
  if (!app) throw new ServiceError("NOT_FOUND", `appId: no app ${appId}; list_apps gives the ids.`, [{ path: "appId", message: "no such app" }]);
  return app;
}

export function environmentOrError(context: Context, app: AppRecord, environmentId: string): EnvironmentRecord {
  const environment = context.services.tenancy.getEnvironment(environmentId);
  if (!environment || environment.appId !== app.id) {
    throw new ServiceError("NOT_FOUND", `environmentId: no environment ${environmentId} in app ${app.id}; list_apps gives the ids.`, [
      { path: "environmentId", message: "no such environment in this app" },
    ]);
  }
  return environment;
}
