import { key, prefixRange, type KvStore } from "../storage/kv.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import { defaultStages, type StageRecord } from "./stage-records.js";

/**
 * Release stages per app. An app whose stages were never written has the default ones (computed, not stored); the
 * first write stores them (`materialize`), after which the stored list is the whole truth (a deleted default stays
 * deleted). Writes run inside the management apply transaction.
 */
export class StageRepository {
  private readonly tenancy: TenancyRepository;

  constructor(private readonly store: KvStore) {
    this.tenancy = new TenancyRepository(store);
  }

  private get stages() {
    return this.store.table("stages");
  }

  /** The app's stages in order (then by id); undefined when the app does not exist. */
  listStages(appId: string): StageRecord[] | undefined {
    const app = this.tenancy.getApp(appId);
    if (!app) return undefined;
    if (this.stages.get(key(appId, "materialized")) !== true) return defaultStages(app.createdAt, app.environmentIds, app.defaultEnvironmentId);
    const stored: StageRecord[] = [];
    for (const { value } of this.stages.range(prefixRange(appId, "stage"))) if (value !== true) stored.push(value);
    return stored.sort((a, b) => a.order - b.order || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  getStage(appId: string, stageId: string): StageRecord | undefined {
    return this.listStages(appId)?.find((stage) => stage.id === stageId);
  }

  /** A stage by id, or else by name (people and the CLI name stages). */
  findStage(appId: string, idOrName: string): StageRecord | undefined {
    const stages = this.listStages(appId);
    return stages?.find((stage) => stage.id === idOrName) ?? stages?.find((stage) => stage.name === idOrName);
  }

  /** Stores the computed defaults, once, so that a write changes a stored list. */
  materialize(appId: string): void {
    if (this.stages.get(key(appId, "materialized")) === true) return;
    for (const stage of this.listStages(appId) ?? []) this.stages.put(key(appId, "stage", stage.id), stage);
    this.stages.put(key(appId, "materialized"), true);
  }

  putStage(appId: string, stage: StageRecord): void {
    this.materialize(appId);
    this.stages.put(key(appId, "stage", stage.id), stage);
  }

  removeStage(appId: string, stageId: string): void {
    this.materialize(appId);
    this.stages.remove(key(appId, "stage", stageId));
  }
}
