/** The native-free twin (node:http front end, pure-JS log store, inline executor) on the main scenarios. */
import { benchBulk, benchEvent, BULK_CONNECTIONS } from "../serving/tracking-routes.js";
import { evaluateRequests, rulesRequests } from "../serving/requests.js";
import { featureDefinitions } from "../support/fixtures.js";
import { failedFigure, measure, type Lab, type LoadFigure } from "../support/lab.js";
import { startService, tempDir } from "../support/processes.js";
import { seedApp } from "../support/seed.js";

/** Native-free figure ids and the native figure each is set beside. */
export const NATIVE_FREE_PAIRS = [
  { id: "nf-evaluate-10", native: "evaluate-10", title: "GET /features/evaluated, 10 features" },
  { id: "nf-evaluate-50", native: "evaluate-50", title: "GET /features/evaluated, 50 features" },
  { id: "nf-rules-50", native: "rules-50", title: "GET /features, 50 features" },
  { id: "nf-event", native: "event", title: "POST /event" },
  { id: "nf-bulk-1000", native: "bulk-1000", title: "POST /bulk, 1,000 events per body (events/s)" },
] as const;

const SERVER = { kind: "service" as const, workers: 0, native: false };

export async function benchNativeFree(lab: Lab): Promise<{ figures: LoadFigure[]; startupMs?: number; failure?: string }> {
  const directory = tempDir("switchyard-bench-nf-");
  const fail = (failure: string) => ({
    figures: NATIVE_FREE_PAIRS.map((pair) =>
      failedFigure({ id: pair.id, section: "native-free", title: `${pair.title} — native-free`, server: SERVER, itemsPerRequest: pair.id === "nf-bulk-1000" ? 1000 : 1, connections: pair.id === "nf-bulk-1000" ? BULK_CONNECTIONS : 50 }, failure),
    ),
    failure,
  });
  let service;
  try {
    service = await startService({ dataDir: directory.path, workers: 0, native: false });
  } catch (error) {
    directory.remove();
    const failure = `the native-free service did not start: ${(error as Error).message.split("\n")[0]}`;
    lab.log(failure);
    return fail(failure);
  }
  try {
    const small = await seedApp(service.url, "bench-nf-10", featureDefinitions(10));
    const medium = await seedApp(service.url, "bench-nf-50", featureDefinitions(50));
    const figures = [
      await measure(lab, { id: "nf-evaluate-10", section: "native-free", title: "GET /features/evaluated, 10 features — native-free", server: SERVER, baseUrl: service.url, requests: evaluateRequests(small) }),
      await measure(lab, { id: "nf-evaluate-50", section: "native-free", title: "GET /features/evaluated, 50 features — native-free", server: SERVER, baseUrl: service.url, requests: evaluateRequests(medium) }),
      await measure(lab, { id: "nf-rules-50", section: "native-free", title: "GET /features, 50 features — native-free", server: SERVER, baseUrl: service.url, requests: rulesRequests(medium) }),
      await benchEvent(lab, service.url, SERVER, small, { id: "nf-event", section: "native-free", titleSuffix: " — native-free" }),
      await benchBulk(lab, service.url, SERVER, small, { id: "nf-bulk-1000", section: "native-free", titleSuffix: " — native-free" }),
    ];
    return { figures, startupMs: service.startupMs };
  } catch (error) {
    return fail(`seeding the native-free service failed: ${(error as Error).message}`);
  } finally {
    await service.stop();
    directory.remove();
  }
}
