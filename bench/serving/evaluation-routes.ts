/** GET /features/evaluated and /features/enabled under load: by number of features and by context size. */
import { measure, type Lab, type LoadFigure, type ServerInfo } from "../support/lab.js";
import type { SeededApp } from "../support/seed.js";
import { evaluateRequests } from "./requests.js";

/** Distinct contexts (10,000 users × 200 companies): the headline evaluation figures. */
export const evaluateId = (features: number) => `evaluate-${features}`;
/** 1,000 users in turn: mostly answered from the answer cache. */
export const repeatedEvaluateId = (features: number) => `evaluate-${features}-repeated`;
export const contextSizeId = (params: number) => `evaluate-50-context-${params}`;
export const ENABLED_ID = "enabled-50";
/** The feature counts whose repeated-context case is measured too. */
export const REPEATED_FEATURE_COUNTS = [10, 50] as const;
/** The context size of the main evaluation scenarios (user id, email, role; company id, plan; location). */
export const DEFAULT_CONTEXT_SIZE = 6;

export interface ServiceTarget {
  baseUrl: string;
  server: ServerInfo;
  /** Seeded apps by feature count. */
  apps: ReadonlyMap<number, SeededApp>;
}

export function appWith(target: ServiceTarget, features: number): SeededApp {
  const app = target.apps.get(features);
  if (!app) throw new Error(`no app with ${features} features was seeded`);
  return app;
}

export async function benchEvaluation(lab: Lab, target: ServiceTarget): Promise<LoadFigure[]> {
  const figures: LoadFigure[] = [];
  for (const features of lab.mode.featureCounts) {
    figures.push(
      await measure(lab, {
        id: evaluateId(features),
        section: "evaluation",
        title: `GET /features/evaluated, ${features} features, distinct contexts (10,000 users × 200 companies)`,
        server: target.server,
        baseUrl: target.baseUrl,
        requests: evaluateRequests(appWith(target, features)),
      }),
    );
  }
  figures.push(
    await measure(lab, {
      id: ENABLED_ID,
      section: "evaluation",
      title: "GET /features/enabled, 50 features, distinct contexts (records an evaluate event per enabled feature)",
      server: target.server,
      baseUrl: target.baseUrl,
      requests: evaluateRequests(appWith(target, 50), { onlyEnabled: true }),
    }),
  );
  for (const features of REPEATED_FEATURE_COUNTS) {
    if (!target.apps.has(features)) continue;
    figures.push(
      await measure(lab, {
        id: repeatedEvaluateId(features),
        section: "evaluation",
        title: `GET /features/evaluated, ${features} features, repeated contexts (1,000 users in turn: mostly the answer cache)`,
        server: target.server,
        baseUrl: target.baseUrl,
        requests: evaluateRequests(appWith(target, features), { traffic: "repeated" }),
      }),
    );
  }
  return figures;
}

/** The same 50 features with smaller and larger contexts (the default size is measured by benchEvaluation). */
export async function benchContextSizes(lab: Lab, target: ServiceTarget): Promise<LoadFigure[]> {
  const figures: LoadFigure[] = [];
  for (const size of lab.mode.contextSizes) {
    if (size === DEFAULT_CONTEXT_SIZE) continue;
    figures.push(
      await measure(lab, {
        id: contextSizeId(size),
        section: "scaling",
        title: `GET /features/evaluated, 50 features, ${size} context params`,
        server: target.server,
        baseUrl: target.baseUrl,
        requests: evaluateRequests(appWith(target, 50), { contextSize: size, traffic: "repeated" }),
        // The evaluation path is warm from benchEvaluation.
        warmUp: false,
      }),
    );
  }
  return figures;
}
