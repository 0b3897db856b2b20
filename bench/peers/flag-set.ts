/**
 * The flag set and the traffic of the peers benchmark: 50 Unleash features in five shapes, the shapes of the bench
 * fixtures' features (support/fixtures.ts) written as Unleash strategies and constraints, created through Unleash's
 * admin API; and distinct contexts (10,000 users × 200 companies) as each server takes them.
 *
 * Only what the importer maps with the same meaning is used (constraints IN, NOT_IN, STR_CONTAINS, NUM_GT,
 * userWithId, flexibleRollout), so both sides serve the same rules; rollouts and variant splits keep their share but
 * hash other users (the importer warns ROLLOUT_REHASHED, VARIANTS_REHASHED), which agreement.ts allows for.
 */
import { seededRandom } from "../support/seeded-random.js";
import { TRAFFIC_COMPANIES, TRAFFIC_USERS } from "../support/fixtures.js";
import type { RunningUnleash } from "../support/unleash.js";

export const PEER_FEATURES = 50;

/** Unleash context fields the rules name besides userId; the import maps role and location, the rest by default. */
const CUSTOM_FIELDS = ["companyId", "email", "plan", "seats", "role", "location"] as const;
export const CONTEXT_MAPPING = { role: "user.role", location: "other.location" } as const;

const PLANS = ["free", "pro", "business", "enterprise"] as const;
const ROLES = ["member", "admin", "owner"] as const;
const LOCATIONS = ["dk", "us", "de", "fr", "jp"] as const;

interface Constraint {
  contextName: string;
  operator: string;
  values?: string[];
  value?: string;
  caseInsensitive?: boolean;
  inverted?: boolean;
}
interface Strategy {
  name: string;
  parameters?: Record<string, string>;
  constraints?: Constraint[];
  variants?: Record<string, unknown>[];
}

const constrained = (...constraints: Constraint[]): Strategy => ({ name: "default", parameters: {}, constraints });
const rollout = (groupId: string, stickiness: string, percent: number, ...constraints: Constraint[]): Strategy => ({
  name: "flexibleRollout",
  parameters: { rollout: String(percent), stickiness, groupId },
  constraints,
});

/** Every other feature's first strategy splits its users between two variants with JSON payloads. */
const VARIANTS = [
  { name: "dark", weight: 500, weightType: "variable", stickiness: "userId", payload: { type: "json", value: '{"limit":100,"theme":"dark"}' } },
  { name: "light", weight: 500, weightType: "variable", stickiness: "userId", payload: { type: "json", value: '{"limit":10}' } },
];
export const VARIANT_NAMES: readonly string[] = VARIANTS.map((variant) => variant.name);

/** Feature `index`'s strategies in production: five shapes in turn, as in support/fixtures.ts. */
export function peerStrategies(index: number): Strategy[] {
  const key = peerFeatureKey(index);
  const strategies = ((): Strategy[] => {
    switch (index % 5) {
      case 0:
        return [constrained({ contextName: "plan", operator: "IN", values: ["business", "enterprise"] }), rollout(key, "companyId", 30)];
      case 1:
        return [rollout(key, "userId", 50, { contextName: "role", operator: "IN", values: ["admin"] })];
      case 2:
        return [
          constrained({ contextName: "email", operator: "STR_CONTAINS", values: ["@acme"], caseInsensitive: true }),
          constrained({ contextName: "plan", operator: "NOT_IN", values: ["free"] }),
          constrained({ contextName: "location", operator: "IN", values: ["dk", "de"] }),
        ];
      case 3:
        return [rollout(key, "userId", 10), constrained({ contextName: "companyId", operator: "IN", values: Array.from({ length: 20 }, (_, item) => `c${item * 3}`) })];
      default:
        return [
          constrained({ contextName: "seats", operator: "NUM_GT", value: "10" }, { contextName: "plan", operator: "IN", values: ["pro", "business", "enterprise"] }),
          { name: "userWithId", parameters: { userIds: "u1,u2,u3,u5,u8,u13,u21,u34,u55,u89" } },
        ];
    }
  })();
  if (index % 2 === 0) strategies[0] = { ...strategies[0]!, variants: VARIANTS };
  return strategies;
}

export function peerFeatureKey(index: number): string {
  return `peer-feature-${index}`;
}

/** Creates the context fields and the 50 features in Unleash's default project, each on in production. */
export async function createPeerFlags(unleash: RunningUnleash): Promise<void> {
  for (const name of CUSTOM_FIELDS) await unleash.call("POST", "/api/admin/context", { name });
  const features = "/api/admin/projects/default/features";
  for (let index = 0; index < PEER_FEATURES; index++) {
    const name = peerFeatureKey(index);
    await unleash.call("POST", features, { name, description: `Peers benchmark feature ${index}` });
    for (const strategy of peerStrategies(index)) await unleash.call("POST", `${features}/${name}/environments/production/strategies`, strategy);
    await unleash.call("POST", `${features}/${name}/environments/production/on`);
  }
}

/** One traffic context, by Unleash's field names. */
export interface PeerContext {
  userId: string;
  companyId: string;
  email: string;
  plan: string;
  seats: string;
  role: string;
  location: string;
}

const pick = <T>(list: readonly T[], index: number): T => list[index % list.length]!;

/** `count` contexts, each a random (user, company) pair from 10,000 × 200, the same for the same seed. */
export function peerContexts(count: number, seed = 49): PeerContext[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const user = Math.floor(random() * TRAFFIC_USERS);
    const company = Math.floor(random() * TRAFFIC_COMPANIES);
    return {
      userId: `u${user}`,
      companyId: `c${company}`,
      email: `user${user}@${user % 4 === 0 ? "acme" : "example"}.com`,
      plan: pick(PLANS, company),
      seats: String((company * 7) % 60),
      role: pick(ROLES, user),
      location: pick(LOCATIONS, user),
    };
  });
}

/** The context as Switchyard's `/features/evaluated` takes it (the names the import's mapping gives the fields). */
export function switchyardQuery(context: PeerContext): string {
  return new URLSearchParams({
    "context.user.id": context.userId,
    "context.company.id": context.companyId,
    "context.user.email": context.email,
    "context.company.plan": context.plan,
    "context.company.seats": context.seats,
    "context.user.role": context.role,
    "context.other.location": context.location,
  }).toString();
}

/**
 * The context as Unleash's `/api/frontend` and the proxy's `/proxy` take it from a frontend SDK: userId at the top,
 * the custom fields as `properties[name]`.
 */
export function unleashQuery(context: PeerContext): string {
  const query = new URLSearchParams({ userId: context.userId });
  for (const name of CUSTOM_FIELDS) query.set(`properties[${name}]`, context[name]);
  return query.toString();
}
