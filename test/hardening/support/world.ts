/**
 * A small tenancy for the hardening suites: two apps, the first with two environments, keys of every kind, a key
 * rotated away (revoked), features with rules, and a pollution canary — a feature whose rules turn it on as soon as
 * any object in the server inherits a field named like the ones the fuzzers try to plant on `Object.prototype`.
 */
import { createApp, request } from "../../support/http.js";

export interface EnvironmentKeys {
  id: string;
  publishableKey: string;
  secretKey: string;
}

export interface AppKeys {
  id: string;
  trackingKey: string;
  production: EnvironmentKeys;
  development: EnvironmentKeys;
}

export interface World {
  a: AppKeys;
  b: AppKeys;
  /** By environment id (a.production, a.development, b.production): keys rotated away, which must answer 401 everywhere. */
  revoked: Record<string, { publishableKey: string; secretKey: string }>;
  /** A feature of every app, with a rule in every environment (rules must never reach a publishable key). */
  featureKey: string;
  /** A feature that allows opt-in, in app `a`. */
  optInFeatureKey: string;
  /** `a`'s feature id of `featureKey`, for feedback bodies. */
  featureId: string;
}

/** Field names the fuzzers try to plant on prototypes; the canary's rules test each of them with SET. */
export const CANARY_FIELDS = ["polluted", "x", "isAdmin", "user.polluted", "user.x", "company.polluted", "company.x", "other.polluted"];
export const CANARY_FEATURE = "pollution-canary";

async function ok(reply: Promise<{ status: number; body: Record<string, any> }>, what: string) {
  const answer = await reply;
  if (answer.status !== 200) throw new Error(`${what} failed (${answer.status}): ${JSON.stringify(answer.body)}`);
  return answer.body;
}

async function makeApp(url: string, admin: string, name: string): Promise<AppKeys> {
  const { app, production, development } = await createApp(url, admin, name);
  return { id: app.id, trackingKey: app.trackingKey, production, development };
}

/** Rules that reveal whether a user's plan reached the evaluator: `targeting` must never be shown to a publishable key. */
const PRO_PLAN_RULES = { rules: [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }] };

export async function buildWorld(url: string, admin: string): Promise<World> {
  const a = await makeApp(url, admin, "hardening-a");
  const b = await makeApp(url, admin, "hardening-b");
  const put = (path: string, body: unknown) => ok(request(url, "PUT", path, { token: admin, body }), `PUT ${path}`);
  const featureKey = "huddle";
  const feature = await put(`/admin/apps/${a.id}/features/${featureKey}`, { description: "Huddles", stage: "beta" });
  await put(`/admin/apps/${b.id}/features/${featureKey}`, { description: "B's huddles" });
  for (const environment of [a.production, a.development, b.production, b.development]) {
    await put(`/admin/environments/${environment.id}/features/${featureKey}/targeting`, PRO_PLAN_RULES);
    await put(`/admin/environments/${environment.id}/features/${featureKey}/config`, {
      variants: [{ filter: { type: "constant", value: true }, key: "v1", payload: { secret: `payload-of-${environment.id}` } }],
    });
  }
  await put(`/admin/apps/${a.id}/features/beta-editor`, { optInEnabled: true });
  await put(`/admin/apps/${b.id}/features/beta-editor`, { optInEnabled: true });
  await put(`/admin/apps/${a.id}/features/${CANARY_FEATURE}`, { description: "on only if a prototype was polluted" });
  await put(`/admin/environments/${a.production.id}/features/${CANARY_FEATURE}/targeting`, {
    rules: CANARY_FIELDS.map((field) => ({ filter: { type: "context", field, operator: "SET" } })),
  });

  // Rotate each environment's keys once: the old ones are the revoked keys.
  const revoked: World["revoked"] = {};
  for (const environment of [a.production, a.development, b.production]) {
    revoked[environment.id] = { publishableKey: environment.publishableKey, secretKey: environment.secretKey };
    const rotate = async (kind: string) =>
      (await ok(request(url, "POST", `/admin/environments/${environment.id}/keys/rotate`, { token: admin, body: { kind } }), `rotate ${kind}`)).key as string;
    environment.publishableKey = await rotate("publishable");
    environment.secretKey = await rotate("secret");
  }
  return { a, b, revoked, featureKey, optInFeatureKey: "beta-editor", featureId: feature.feature.id as string };
}

/**
 * Evaluates the canary for a context the fuzzers never stored. Answers the canary's item: `isEnabled` is true only if
 * some object the evaluator walked inherited a canary field.
 */
export async function canaryItem(url: string, publishableKey: string): Promise<{ isEnabled: boolean; ruleEvaluationResults: boolean[] }> {
  const reply = await request(url, "GET", `/features/evaluated?context.user.id=canary-user&context.company.id=canary-co&key=${CANARY_FEATURE}`, {
    token: publishableKey,
  });
  if (reply.status !== 200) throw new Error(`canary evaluation failed (${reply.status}): ${JSON.stringify(reply.body)}`);
  return reply.body.features[CANARY_FEATURE];
}

/** Every key of every object in `value` (depth-first), for "no prototype surprises" checks on stored data. */
export function allKeys(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) for (const item of value) allKeys(item, into);
  else if (typeof value === "object" && value !== null) {
    for (const name of Object.keys(value)) {
      into.add(name);
      allKeys((value as Record<string, unknown>)[name], into);
    }
  }
  return into;
}
