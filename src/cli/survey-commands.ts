import type { AdminClient } from "./admin-client.js";

type Values = Record<string, string | boolean | undefined>;

export const SURVEY_USAGE = `Feedback surveys (docs/API.md "Feedback surveys"; prompts reach the browser SDKs live):
  switchyard surveys list ENV_ID
  switchyard surveys show ENV_ID KEY
  switchyard surveys set ENV_ID KEY --question Q [--after-uses N] [--after-days D] [--quiet-days Q] [--enabled true|false]
                                                   (asks users of KEY after N uses or D days since their first use)
  switchyard surveys remove ENV_ID KEY
`;

/** A number when the text is one; else the text itself, so the service names the field that is not a number. */
function numberOrText(value: string | boolean | undefined): unknown {
  if (value === undefined) return undefined;
  if (value === "none") return null;
  return typeof value === "string" && /^-?[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : value;
}

/** `switchyard surveys …`: the survey rules of API.md §6 (PUT/GET/DELETE …/features/:key/survey). */
export async function surveys(client: AdminClient, action: string | undefined, envId: string | undefined, key: string | undefined, values: Values): Promise<unknown> {
  if (!envId) throw new Error(`Missing ENV_ID.\n\n${SURVEY_USAGE}`);
  const environment = `/admin/environments/${encodeURIComponent(envId)}`;
  if (action === "list") return client.call("GET", `${environment}/surveys`);
  if (!key) throw new Error(`Missing KEY.\n\n${SURVEY_USAGE}`);
  const path = `${environment}/features/${encodeURIComponent(key)}/survey`;
  switch (action) {
    case "show":
      return client.call("GET", path);
    case "remove":
      return client.call("DELETE", path);
    case "set": {
      const body: Record<string, unknown> = { question: values.question };
      const fields: [string, string][] = [["afterUses", "after-uses"], ["afterDays", "after-days"], ["quietPeriodDays", "quiet-days"]];
      for (const [field, option] of fields) if (values[option] !== undefined) body[field] = numberOrText(values[option]);
      if (values.enabled !== undefined) body.enabled = values.enabled === "true" ? true : values.enabled === "false" ? false : values.enabled;
      return client.call("PUT", path, body);
    }
    default:
      throw new Error(SURVEY_USAGE);
  }
}
