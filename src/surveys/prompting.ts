import { FeatureRepository } from "../features/feature-repository.js";
import type { Logger } from "../observability/logger.js";
import type { KvStore } from "../storage/kv.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import { PromptHub } from "./prompt-hub.js";
import { PromptStore } from "./prompt-store.js";
import { Prompter } from "./prompter.js";

/** The survey prompting of one process: who is due a prompt, the open prompt streams, the prompts' state. */
export interface Prompting {
  hub: PromptHub;
  prompter: Prompter;
  prompts: PromptStore;
}

/** Made once by the composition root; the prompt streams' limits are the live streams' (SWITCHYARD_SSE_*). */
export function createPrompting(store: KvStore, streams: { keepAliveMs: number; maxStreams: number }, log: Logger): Prompting {
  const prompter = new Prompter(store, new TenancyRepository(store), new FeatureRepository(store));
  return { hub: new PromptHub(prompter, streams, log), prompter, prompts: new PromptStore(store) };
}
