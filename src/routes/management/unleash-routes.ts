/**
 * `POST /admin/apps/:appId/import/unleash` (API.md §13.3): reads a running Unleash 6 server's admin API with exactly
 * the calls the contract lists, maps its features (unleash-mapping.ts) and imports the document as §13.2 does. The
 * Unleash token is sent to Unleash only: never stored, logged or audited.
 */
import * as v from "valibot";
import { appOrNotFound } from "../core/route-lookups.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { schemaBody } from "../core/schema-body.js";
import { ServiceError } from "../../errors/catalogue.js";
import { toValidationIssues } from "../../schemas/issues.js";
import type { Services } from "../core/services.js";
import { dryRunOf, flagRepositories, importDocument, validDocument } from "./flags-routes.js";
import { readAppFlags } from "../../management/operations/app-flags.js";
import { mapUnleash } from "../../management/operations/unleash-mapping.js";
import { UnleashEnvironmentsSchema, UnleashFeatureListSchema, UnleashFeatureSchema, UnleashProjectsSchema, UnleashSegmentsSchema } from "../../management/operations/unleash-schemas.js";

/** API.md §13.3: each call to Unleash gets this long. */
const CALL_TIMEOUT_MS = 10_000;

const HttpUrl = v.pipe(
  v.string("must be a string"),
  v.url("must be an http or https URL"),
  v.check((value) => /^https?:$/.test(new URL(value).protocol), "must be an http or https URL"),
);
const OurField = v.nullable(v.pipe(v.string("must be a string or null"), v.regex(/^(user|company|other)\.[^.\s]/, "must be user.…, company.… or other.…, or null")));

export const UnleashImportBody = v.strictObject(
  {
    url: HttpUrl,
    token: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty")),
    project: v.optional(v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"))),
    environments: v.pipe(v.record(v.pipe(v.string(), v.minLength(1)), v.string("must be one of the app's environment names"), "must be an object"), v.check((value) => Object.keys(value).length > 0, "must map at least one Unleash environment")),
    contextMapping: v.optional(v.record(v.string(), OurField, "must be an object")),
  },
  "must be an object with only: url, token, project, environments, contextMapping",
);

/** One GET of Unleash's admin API, its answer checked against `schema`; the contract's 400/502 otherwise. */
async function unleashGet<TSchema extends v.GenericSchema>(base: string, token: string, path: string, schema: TSchema): Promise<v.InferOutput<TSchema>> {
  const url = `${base.replace(/\/+$/, "")}${path}`;
  let response: Response;
  try {
    response = await fetch(url, { headers: { authorization: token, accept: "application/json" }, redirect: "manual", signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
  } catch (error) {
    const why = (error as Error).name === "TimeoutError" ? `no answer within ${CALL_TIMEOUT_MS / 1000} s` : "unreachable";
    throw new ServiceError("UPSTREAM_UNAVAILABLE", `Unleash GET ${path}: ${why}.`);
  }
  if (response.status === 401 || response.status === 403) {
    throw new ServiceError("INVALID_BODY", undefined, [{ path: "token", message: `Unleash refused it (HTTP ${response.status}): an admin API token or a personal access token is needed` }]);
  }
  if (!response.ok) throw new ServiceError("UPSTREAM_UNAVAILABLE", `Unleash GET ${path}: HTTP ${response.status}${response.status >= 300 && response.status < 400 ? " (redirects are not followed)" : ""}.`);
  let body: unknown;
  try {
    body = JSON.parse(await response.text());
  } catch {
    throw new ServiceError("UPSTREAM_UNAVAILABLE", `Unleash GET ${path}: the answer is not JSON.`);
  }
  const parsed = v.safeParse(schema, body);
  if (!parsed.success) throw new ServiceError("UPSTREAM_UNAVAILABLE", `Unleash GET ${path}: the answer is not what Unleash 6 answers.`, toValidationIssues(parsed.issues, `GET ${path}`));
  return parsed.output;
}

async function importFromUnleash(context: RouteContext<Services>) {
  const app = appOrNotFound(context);
  dryRunOf(context);
  const body = schemaBody(context.request, UnleashImportBody);
  const ourNames = new Set(readAppFlags(flagRepositories(context.services), app).environments.map((environment) => environment.name));
  const notOurs = Object.entries(body.environments).filter(([, ours]) => !ourNames.has(ours));
  if (notOurs.length > 0) throw new ServiceError("INVALID_BODY", undefined, notOurs.map(([theirs, ours]) => ({ path: `environments.${theirs}`, message: `The app has no environment named ${ours}` })));
  const project = body.project ?? "default";
  const get = <TSchema extends v.GenericSchema>(path: string, schema: TSchema) => unleashGet(body.url, body.token, path, schema);

  const theirEnvironments = new Set((await get("/api/admin/environments", UnleashEnvironmentsSchema)).environments.map((environment) => environment.name));
  const missing = Object.keys(body.environments).filter((name) => !theirEnvironments.has(name));
  if (missing.length > 0) throw new ServiceError("INVALID_BODY", undefined, missing.map((name) => ({ path: `environments.${name}`, message: `Unleash has no environment ${name}` })));
  const projects = (await get("/api/admin/projects", UnleashProjectsSchema)).projects;
  // Unleash answers an unknown project's feature list with an empty one: check the project first.
  if (!projects.some((candidate) => candidate.id === project)) throw new ServiceError("INVALID_BODY", undefined, [{ path: "project", message: `Unleash has no project ${project}` }]);
  const projectPath = `/api/admin/projects/${encodeURIComponent(project)}/features`;
  const names = (await get(projectPath, UnleashFeatureListSchema)).features.map((feature) => feature.name);
  const features = [];
  for (const name of names) features.push(await get(`${projectPath}/${encodeURIComponent(name)}?variantEnvironments=true`, UnleashFeatureSchema));
  const segments = (await get("/api/admin/segments", UnleashSegmentsSchema)).segments;

  const mapped = mapUnleash({ features, segments, environments: body.environments, ...(body.contextMapping ? { contextMapping: body.contextMapping } : {}) });
  // What the mapping built is checked like any document, so it can never store what a file could not.
  const document = validDocument(context.services, app, { format: "switchyard.flags/v1", features: mapped.document.features.map((feature) => ({ key: feature.key, ...feature.fields, environments: feature.environments })) });
  const audited = new URL(body.url);
  audited.username = "";
  audited.password = "";
  return importDocument(context, app, document, { source: "unleash", url: audited.toString(), warnings: mapped.warnings });
}

export const UNLEASH_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["POST", "/admin/apps/:appId/import/unleash", managementRoute<Services>("write", BODY_LIMITS.admin, importFromUnleash)],
];
