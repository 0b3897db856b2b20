/** Flags as files (API.md §13.2): export an app's flags as a document, import one with or without a dry run. */
import { appOrNotFound } from "../core/route-lookups.js";
import { MAX_JSON_DEPTH, parseJsonBody } from "../../schemas/json-body.js";
import { findLoneSurrogate } from "../../schemas/well-formed.js";
import { ok } from "../../http/responses.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { ServiceError } from "../../errors/catalogue.js";
import { envelopeFor, submitChange } from "../core/submit.js";
import { SegmentRepository } from "../../management/segments/segment-repository.js";
import type { Services } from "../core/services.js";
import { StageRepository } from "../../features/stage-repository.js";
import { newFeatureId, randomBase62 } from "../../tenancy/identifiers.js";
import type { AppRecord } from "../../tenancy/tenancy-records.js";
import { byName, exportDocument, readAppFlags, type FlagRepositories } from "../../management/operations/app-flags.js";
import { validateFlagsDocument, type FlagsDocument, type ImportWarning } from "../../management/operations/flags-document.js";
import { planImport, type ImportAnswer, type ImportIds } from "../../management/operations/import-plan.js";

type Context = RouteContext<Services>;

/** API.md §13.2: a document of up to 16 MiB (a large app's flags, with room). */
export const IMPORT_BODY_LIMIT = 16 * 1024 * 1024;
/**
 * A rule tree sits 7 JSON levels deeper in a document (features.N.environments.E.rules.N.filter) than in a targeting
 * PUT (rules.N.filter): whatever the management API accepts must export and import again.
 */
const DOCUMENT_JSON_DEPTH = MAX_JSON_DEPTH + 8;

export function flagRepositories(services: Services): FlagRepositories {
  return { tenancy: services.tenancy, features: services.features, segments: new SegmentRepository(services.store), stages: new StageRepository(services.store) };
}

/** `dryRun=true|1` lists the changes without making them; `false|0` or absent applies them. */
export function dryRunOf(context: Context): boolean {
  const value = new URLSearchParams(context.request.query).get("dryRun");
  if (value === null || value === "false" || value === "0") return false;
  if (value === "true" || value === "1") return true;
  throw new ServiceError("INVALID_QUERY", undefined, [{ path: "dryRun", message: "must be true, false, 1 or 0" }]);
}

/** Validates a document against `app` (environments and segments by name); a 400 naming every problem otherwise. */
export function validDocument(services: Services, app: AppRecord, input: unknown): FlagsDocument {
  // A document body was checked as it was parsed; what the Unleash importer built from Unleash's answers was not.
  const illFormed = findLoneSurrogate(input);
  if (illFormed !== undefined) throw new ServiceError("INVALID_DOCUMENT", undefined, [illFormed]);
  const flags = readAppFlags(flagRepositories(services), app);
  const validation = validateFlagsDocument(
    input,
    { environmentNames: new Set(flags.environments.map((environment) => environment.name)), segmentNames: new Set(flags.segments.map((segment) => segment.name)) },
    new Map(flags.segments.map((segment) => [segment.name, byName(segment.filter, flags.segments)])),
  );
  if (!validation.ok) throw new ServiceError("INVALID_DOCUMENT", undefined, validation.issues);
  return validation.document;
}

/** Fresh ids for everything the document names, used only for what the import creates. */
function newIds(document: FlagsDocument): ImportIds {
  return {
    features: Object.fromEntries(document.features.map((feature) => [feature.key, newFeatureId()])),
    segments: Object.fromEntries(document.segments.map((segment) => [segment.name, `sg_${randomBase62(10)}`])),
    stages: Object.fromEntries(document.stages.map((stage) => [stage.name, `st_${randomBase62(10)}`])),
  };
}

/**
 * Imports a validated document: a dry run plans against the app as it is and writes nothing; otherwise one
 * `flags.import` change plans again and applies, all or nothing. Answers API.md §13.2's shape.
 */
export async function importDocument(context: Context, app: AppRecord, document: FlagsDocument, source: { source: "document" | "unleash"; url?: string; warnings: ImportWarning[] }) {
  const dryRun = dryRunOf(context);
  const ids = newIds(document);
  const envelope = envelopeFor(context);
  let answer: ImportAnswer;
  if (dryRun) {
    const plan = planImport(flagRepositories(context.services), app, document, ids, envelope.at);
    if (!plan.ok) throw new ServiceError(plan.code, plan.message, plan.issues);
    answer = plan.answer;
  } else {
    const body = { appId: app.id, source: source.source, ...(source.url !== undefined ? { url: source.url } : {}), document, ids };
    answer = (await submitChange(context, "flags.import", body, envelope)).answer;
  }
  const { retargeted, ...rest } = answer;
  return ok({ dryRun, ...rest, warnings: source.warnings, ...(retargeted.length > 0 ? { retargeted } : {}) });
}

export const FLAGS_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/apps/:appId/export",
    managementRoute<Services>("read", BODY_LIMITS.none, (context) => {
      const app = appOrNotFound(context);
      const repositories = flagRepositories(context.services);
      const flags = readAppFlags(repositories, app);
      if (flags.repeatedNames.length > 0) throw new ServiceError("CONFLICT", `App ${app.id} has more than one environment named ${flags.repeatedNames[0]}: a document names environments.`);
      return ok({ document: exportDocument(repositories, flags, new Date().toISOString()) });
    }),
  ],
  [
    "POST",
    "/admin/apps/:appId/import",
    managementRoute<Services>("write", IMPORT_BODY_LIMIT, async (context) => {
      const app = appOrNotFound(context);
      dryRunOf(context);
      const document = validDocument(context.services, app, parseJsonBody(context.request.body, context.request.headers["content-type"], { maxDepth: DOCUMENT_JSON_DEPTH }));
      return importDocument(context, app, document, { source: "document", warnings: [] });
    }),
  ],
];
