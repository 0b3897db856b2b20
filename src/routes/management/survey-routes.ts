import * as v from "valibot";
import { environmentOrNotFound } from "../core/route-lookups.js";
import { ok } from "../../http/responses.js";
import { schemaBody } from "../core/schema-body.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { ServiceError } from "../../errors/catalogue.js";
import { submitChange } from "../core/submit.js";
import { FeatureKey } from "../../schemas/admin.js";
import { parseOrThrow } from "../../schemas/issues.js";
import type { Services } from "../core/services.js";
import { getSurveyRule, listSurveyRules, PutSurveyBody } from "../../surveys/survey-rules.js";

type Context = RouteContext<Services>;


function featureKeyParam(context: Context): string {
  return parseOrThrow(v.safeParse, FeatureKey, context.params.key, "INVALID_REQUEST");
}

/** Feedback survey rules per environment and feature (docs/API.md "Automated feedback surveys"). */
export const SURVEY_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/environments/:envId/surveys",
    managementRoute("read", BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      return ok({ surveys: listSurveyRules(context.services.store, environment.id) });
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/features/:key/survey",
    managementRoute("read", BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      const featureKey = featureKeyParam(context);
      const survey = getSurveyRule(context.services.store, environment.id, featureKey);
      if (!survey) throw new ServiceError("NOT_FOUND", `No survey for feature ${featureKey}.`);
      return ok({ survey });
    }),
  ],
  [
    "PUT",
    "/admin/environments/:envId/features/:key/survey",
    managementRoute("write", BODY_LIMITS.admin, async (context) => {
      const environment = environmentOrNotFound(context);
      const featureKey = featureKeyParam(context);
      const settings = schemaBody(context.request, PutSurveyBody);
      const { survey } = await submitChange(context, "survey.put", { environmentId: environment.id, featureKey, settings });
      return ok({ survey });
    }),
  ],
  [
    "DELETE",
    "/admin/environments/:envId/features/:key/survey",
    managementRoute("write", BODY_LIMITS.none, async (context) => {
      const environment = environmentOrNotFound(context);
      const featureKey = featureKeyParam(context);
      const { survey } = await submitChange(context, "survey.remove", { environmentId: environment.id, featureKey });
      return ok({ survey });
    }),
  ],
];
