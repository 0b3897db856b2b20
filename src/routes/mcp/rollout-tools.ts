/**
 * The MCP tools of guarded rollouts (API.md §17, §12): start one and read one, through the same change and checks
 * as `POST …/rollouts` and `GET …/rollouts/:id`. Listed in tools.ts.
 */
import * as v from "valibot";
import { ServiceError } from "../../errors/catalogue.js";
import { presentRollout } from "../../management/rollouts/present-rollout.js";
import { RolloutRepository } from "../../management/rollouts/rollout-repository.js";
import { FeatureKey } from "../../schemas/admin.js";
import { StartRolloutBody } from "../../schemas/rollouts.js";
import type { EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import type { RouteContext } from "../core/route.js";
import type { Services } from "../core/services.js";
import { startOrPropose } from "../management/rollout-routes.js";

type Context = RouteContext<Services>;

const id = (what: string) => v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(128, "must be at most 128 characters"), v.description(what));
const target = {
  environmentId: id("The environment's id, as list_apps returns it."),
  key: v.pipe(FeatureKey, v.description("The flag's key.")),
};

export const StartRolloutInput = v.strictObject({ ...target, ...StartRolloutBody.entries });
export const GetRolloutInput = v.strictObject({ ...target, rolloutId: v.optional(id("The rollout's id; left out: the flag's latest rollout in that environment.")) });

function environmentOrError(context: Context, environmentId: string): EnvironmentRecord {
  context.services.store.refresh();
  const environment = context.services.tenancy.getEnvironment(environmentId);
  if (!environment) throw new ServiceError("NOT_FOUND", `environmentId: no environment ${environmentId}; list_apps gives the ids.`, [{ path: "environmentId", message: "no such environment" }]);
  return environment;
}

function flagOrError(context: Context, environment: EnvironmentRecord, key: string): void {
  if (!context.services.features.getFeature(environment.appId, key)) throw new ServiceError("NOT_FOUND", `key: no flag ${key}; list_flags gives the keys.`, [{ path: "key", message: "no such flag" }]);
}

function startRollout(context: Context, input: v.InferOutput<typeof StartRolloutInput>) {
  const { environmentId, key, ...settings } = input;
  const environment = environmentOrError(context, environmentId);
  flagOrError(context, environment, key);
  return startOrPropose(context, environment, key, settings);
}

function getRollout(context: Context, input: v.InferOutput<typeof GetRolloutInput>) {
  const environment = environmentOrError(context, input.environmentId);
  flagOrError(context, environment, input.key);
  const rollouts = new RolloutRepository(context.services.store);
  const rollout = input.rolloutId !== undefined ? rollouts.get(environment.id, input.rolloutId) : rollouts.listForFeature(environment.id, input.key)[0];
  if (!rollout || rollout.featureKey !== input.key) throw new ServiceError("NOT_FOUND", `No rollout of ${input.key} here${input.rolloutId ? ` with id ${input.rolloutId}` : ""}.`, [{ path: "rolloutId", message: "no such rollout" }]);
  return { rollout: presentRollout(rollout, rollouts) };
}

export const ROLLOUT_TOOLS = [
  {
    name: "start_rollout",
    title: "Start a guarded rollout",
    description:
      "Raises a flag's share in one environment step by step (steps in percent, default [1, 5, 10, 25, 50, 100]; stepSeconds per step) and rolls it back on its own when a guard breaches: each guard compares the per-company (or per-user, attribute) rate of a tracked event between those who got the flag and those who did not, with a sequential test (lower_is_better for errors, higher_is_better for conversions; maxRelativeChange is the tolerated worsening, e.g. 0.1). The flag's current targeting is who the rollout raises the share of. Answers {rollout, warnings} (a warning names a guard event never tracked); where the environment requires approval, the start is proposed as a change request instead: {rollout: null, rolloutId, changeRequest}, started when it is approved and applied. One active rollout per flag and environment. Needs a token that may write.",
    input: StartRolloutInput,
    permission: "write" as const,
    run: (context: Context, input: v.InferOutput<typeof StartRolloutInput>) => startRollout(context, input),
  },
  {
    name: "get_rollout",
    title: "Read a guarded rollout",
    description:
      "Shows a flag's rollout in one environment (the latest unless rolloutId is given): {rollout: {id, state (running, paused, rolled_back, completed, cancelled), step, percent, reason, steps: [{percent, startedAt, exposures: {exposed, control}}], guards: [{event, estimate, interval, breached}]}}. estimate and interval are the relative change exposed vs control (0.1 = 10 % more). Changes nothing.",
    input: GetRolloutInput,
    permission: "read" as const,
    run: (context: Context, input: v.InferOutput<typeof GetRolloutInput>) => getRollout(context, input),
  },
];
