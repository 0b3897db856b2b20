import type { ApiCore, FrontEnd, FrontEndLimits } from "../http/types.js";
import type { Config } from "../config/config.js";
import type { Logger } from "../observability/logger.js";
import { detectDataDirKind } from "../storage/data-dir-kind.js";
import type { KvStore, KvStoreOptions } from "../storage/kv.js";

/** The two ports with native and native-free implementations, as chosen for this run. */
export interface Adapters {
  store: KvStore;
  createFrontEnd(core: ApiCore, limits: FrontEndLimits): FrontEnd;
  /** Whether worker threads can open the store themselves (LMDB can; the in-process log store cannot). */
  storeSharedAcrossThreads: boolean;
}

/** Loads the LMDB store's module: this is what fails where the native addon cannot load. */
async function loadNativeStore(): Promise<(options: KvStoreOptions) => KvStore> {
  const { LmdbStore } = await import("../storage/lmdb-store.js");
  return (options) => new LmdbStore(options);
}

async function openLogStore(options: KvStoreOptions): Promise<KvStore> {
  const { LogStore } = await import("../../native-free/storage/log-store.js");
  return LogStore.open(options);
}

async function nativeFrontEndFactory(): Promise<Adapters["createFrontEnd"]> {
  const { loadNativeUws } = await import("../http/load-uws.js");
  const { createUwsFrontEnd } = await import("../http/uws-front-end.js");
  const uws = loadNativeUws();
  return (core, limits) => createUwsFrontEnd(core, limits, uws);
}

async function nodeFrontEndFactory(): Promise<Adapters["createFrontEnd"]> {
  const { createNodeFrontEnd } = await import("../../native-free/http/node-front-end.js");
  return createNodeFrontEnd;
}

/**
 * Picks native or native-free for each port. `on` insists on native, `off` never tries it, `auto` falls back
 * with one log line saying what loaded and why. A data dir is only ever opened by the kind of store that made it.
 */
export async function selectAdapters(config: Config, log: Logger): Promise<Adapters> {
  const options: KvStoreOptions = { path: config.dataDir, durability: config.durability };
  const dataDirKind = detectDataDirKind(config.dataDir);
  const reasons: string[] = [];

  let store: KvStore | undefined;
  if (config.native !== "off") {
    if (dataDirKind === "log") {
      const message = `The data dir ${config.dataDir} was written by the native-free store; start with SWITCHYARD_NATIVE=0 to open it.`;
      if (config.native === "on") throw new Error(message);
      reasons.push(message);
    } else {
      let openLmdb: ((options: KvStoreOptions) => KvStore) | undefined;
      try {
        openLmdb = await loadNativeStore();
      } catch (error) {
        if (config.native === "on") throw error;
        reasons.push(`lmdb did not load: ${(error as Error).message}`);
      }
      // Opening can fail for reasons that are not about native code (permissions, a full disk): those stop the
      // service rather than quietly starting an empty store of the other kind.
      if (openLmdb) store = openLmdb(options);
    }
  }
  if (!store) {
    if (dataDirKind === "lmdb") {
      throw new Error(`The data dir ${config.dataDir} was written by the LMDB store; the native-free store cannot open it.`);
    }
    store = await openLogStore(options);
  }

  let createFrontEnd: Adapters["createFrontEnd"] | undefined;
  let http = "node:http (native-free)";
  if (config.native !== "off") {
    try {
      createFrontEnd = await nativeFrontEndFactory();
      http = "uWebSockets.js (native binary)";
    } catch (error) {
      if (config.native === "on") throw error;
      reasons.push(`uWebSockets.js did not load: ${(error as Error).message}`);
    }
  }
  createFrontEnd ??= await nodeFrontEndFactory();

  log.info("adapters selected", {
    store: store.kind === "lmdb" ? "lmdb (native)" : "log store (native-free)",
    http,
    requested: config.native,
    ...(reasons.length > 0 ? { fallbackReasons: reasons } : {}),
  });
  return { store, createFrontEnd, storeSharedAcrossThreads: store.kind === "lmdb" };
}
