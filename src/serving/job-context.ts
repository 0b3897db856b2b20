import { FeatureRepository } from "../features/feature-repository.js";
import type { KvStore } from "../storage/kv.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import { TrackingReader } from "../tracking/index.js";
import { AppendTally, type AppendTallySlot } from "../tracking/append-tally.js";
import { AttributeCache } from "./evaluation/attribute-cache.js";
import { HeldEvaluationEvents } from "./tracking/held-evaluation-events.js";
import { TRACKING_PROJECTIONS } from "./tracking-projections.js";
import type { TrackingProjections } from "../tracking/projections.js";
import { RulesetCache } from "./evaluation/ruleset-cache.js";
import type { StoredEntity } from "./evaluation/stored-entity.js";

/** What a job needs, built once per thread over that thread's store handle. */
export interface JobContext {
  store: KvStore;
  tenancy: TenancyRepository;
  features: FeatureRepository;
  tracking: TrackingReader;
  rulesets: RulesetCache;
  /** One cache per kind: company ids come back far more often than user ids, and each cache gates on its own hit rate. */
  attributes: { user: AttributeCache<StoredEntity>; company: AttributeCache<StoredEntity> };
  /** The attribute epoch of each environment as this thread's read snapshot last caught up with it. */
  attributeEpochs: Map<string, number>;
  /** What the projector derives from tracking beside its entries (analytics, surveys). */
  projections: TrackingProjections;
  /** This thread's count of unawaited appends (the `evaluate` events of `/features/enabled`). */
  appendTally: AppendTallySlot;
  /** Those events, held briefly to share one append (and the appends of acknowledged calls, which take them along). */
  heldEvents: HeldEvaluationEvents;
}

/** Users and companies whose stored attributes a thread remembers for remote context. */
const ATTRIBUTE_CACHE_ENTRIES = 50_000;

/** `appendTally`: the process's shared tally (a thread of its own without one: tests, tools). */
export function createJobContext(store: KvStore, appendTally: AppendTally = new AppendTally()): JobContext {
  const tenancy = new TenancyRepository(store);
  const features = new FeatureRepository(store);
  const tally = appendTally.claim();
  return {
    store,
    tenancy,
    features,
    tracking: new TrackingReader(store),
    rulesets: new RulesetCache(store, tenancy, features),
    attributes: { user: new AttributeCache<StoredEntity>(ATTRIBUTE_CACHE_ENTRIES), company: new AttributeCache<StoredEntity>(ATTRIBUTE_CACHE_ENTRIES) },
    attributeEpochs: new Map(),
    projections: TRACKING_PROJECTIONS,
    appendTally: tally,
    heldEvents: new HeldEvaluationEvents(store, tally),
  };
}
