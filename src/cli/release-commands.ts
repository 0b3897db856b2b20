/** `switchyard stages …` and `switchyard features stage …` (API.md §10). */
import { readFileSync } from "node:fs";
import type { AdminClient } from "./admin-client.js";

type Values = Record<string, string | boolean | undefined>;

const part = (value: string | undefined, name: string): string => {
  if (!value) throw new Error(`Missing ${name}.`);
  return encodeURIComponent(value);
};

const readJson = (file: string): unknown => JSON.parse(readFileSync(file, "utf8")) as unknown;

/** `switchyard stages list|create|update|delete APP_ID …` */
export async function stages(client: AdminClient, action: string | undefined, appId: string | undefined, stage: string | undefined, values: Values): Promise<unknown> {
  const base = `/admin/apps/${part(appId, "APP_ID")}/stages`;
  const fields = (): Record<string, unknown> => {
    const body: Record<string, unknown> = {};
    if (typeof values.name === "string") body.name = values.name;
    if (typeof values.order === "string") body.order = Number(values.order);
    if (typeof values.targeting === "string") body.targeting = readJson(values.targeting);
    return body;
  };
  switch (action) {
    case "list":
      return client.call("GET", base);
    case "create":
      return client.call("POST", base, { ...fields(), name: stage ?? values.name });
    case "update":
      return client.call("PATCH", `${base}/${part(stage, "STAGE")}`, { ...fields(), ...(values.reapply === true ? { reapply: true } : {}) });
    case "delete":
      return client.call("DELETE", `${base}/${part(stage, "STAGE")}`);
    default:
      throw new Error("Usage: switchyard stages list|create|update|delete APP_ID [STAGE] …");
  }
}

/** `switchyard features stage APP_ID KEY STAGE`: the stage's targeting becomes the feature's in every environment. */
export function featureStage(client: AdminClient, appId: string | undefined, key: string | undefined, stage: string | undefined): Promise<unknown> {
  if (!stage) throw new Error("Missing STAGE (an id or a name).");
  return client.call("PUT", `/admin/apps/${part(appId, "APP_ID")}/features/${part(key, "KEY")}/stage`, { stage });
}
