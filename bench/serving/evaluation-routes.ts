/** GET /features/evaluated and /features/enabled under load: by number of features and by context size. */
import { get as httpGet } from "node:http";
import type { RequestSpec } from "../support/load.js";
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

/** Feature counts whose answers are large enough to be compressed by default (SWITCHYARD_COMPRESS_MIN_BYTES). */
export const COMPRESSED_FEATURE_COUNTS = [200, 1000] as const;
export const compressedEvaluateId = (features: number) => `${evaluateId(features)}-br`;

/** The sizes of one answer sent plain and with `encoding`, read from the service. */
async function answerSizes(baseUrl: string, request: RequestSpec, encoding: string): Promise<{ plain: number; encoded: number }> {
  const size = (headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const outgoing = httpGet(`${baseUrl}${request.path}`, { headers: { ...request.headers, ...headers } }, (response) => {
        let bytes = 0;
        response.on("data", (chunk: Buffer) => (bytes += chunk.length));
        response.on("end", () => resolve(bytes));
      });
      outgoing.on("error", reject);
    });
  return { plain: await size({}), encoded: await size({ "Accept-Encoding": encoding }) };
}

/**
 * The large answers again, for clients that accept brotli (browsers do): what compressing costs in throughput, and
 * what it saves on the wire.
 */
export async function benchCompression(lab: Lab, target: ServiceTarget): Promise<LoadFigure[]> {
  const figures: LoadFigure[] = [];
  for (const features of COMPRESSED_FEATURE_COUNTS) {
    if (!target.apps.has(features) || !lab.mode.featureCounts.includes(features)) continue;
    const plain = evaluateRequests(appWith(target, features));
    const requests = plain.map((request) => ({ ...request, headers: { ...request.headers, "Accept-Encoding": "gzip, deflate, br" } }));
    const sizes = await answerSizes(target.baseUrl, plain[0]!, "gzip, deflate, br");
    figures.push(
      await measure(lab, {
        id: compressedEvaluateId(features),
        section: "evaluation",
        title: `GET /features/evaluated, ${features} features, distinct contexts, Accept-Encoding: br (one answer: ${sizes.plain.toLocaleString("en")} B plain, ${sizes.encoded.toLocaleString("en")} B sent)`,
        server: target.server,
        baseUrl: target.baseUrl,
        requests,
      }),
    );
  }
  return figures;
}
