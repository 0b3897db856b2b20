/**
 * What importing a `switchyard.flags/v1` document into an app changes (API.md §13.2), computed without writing: the
 * dry run answers with it, and the `flags.import` change computes it again inside its transaction (against the store
 * as it is then) and performs exactly its writes. Ids of whatever the import creates are decided before, by the
 * route, so planning reads only the store and the change: the same on every node.
 */
import type { ValidationIssue } from "../../errors/catalogue.js";
import type { FeatureChanges } from "../../features/feature-repository.js";
import { prerequisitesOf, UNTARGETED, type EnvironmentFeatureState, type FeatureRecord, type Prerequisite } from "../../features/feature-records.js";
import { cycleThrough, deepestChain, describeCycle, MAX_PREREQUISITE_DEPTH } from "../../features/prerequisite-graph.js";
import type { SegmentRecord } from "../segments/segment-records.js";
import { prepareTargeting } from "../segments/inline.js";
import type { StageRecord } from "../../features/stage-records.js";
import type { AppRecord } from "../../tenancy/tenancy-records.js";
import { byId, byName, readAppFlags, type AppFlags, type FlagRepositories } from "./app-flags.js";
import type { FlagsDocument } from "./flags-document.js";

export type ChangeKind = "created" | "changed" | "unchanged";

/** Ids for what the import may create, by feature key, segment name and stage name; decided before planning. */
export interface ImportIds {
  features: Record<string, string>;
  segments: Record<string, string>;
  stages: Record<string, string>;
}

export interface ImportAnswer {
  /** `prerequisites: true` on an environment whose prerequisites the import changes (absent otherwise). */
  features: { key: string; change: ChangeKind; environments: { name: string; change: ChangeKind; targeting: boolean; config: boolean; prerequisites?: true }[] }[];
  segments: { name: string; change: ChangeKind }[];
  stages: { name: string; change: ChangeKind }[];
  summary: { created: number; changed: number; unchanged: number };
  /** Features the document does not name whose served rules change because a segment they use changes. */
  retargeted: { key: string; environment: string }[];
}

export interface FeatureWrite {
  key: string;
  create: boolean;
  id: string;
  fields: FeatureChanges;
  /** Present when the document names the stage: the release stage of that name, or null for a plain label. */
  stage?: { label: string | null; stageId: string | null };
}

export interface RulesWrite {
  environmentId: string;
  key: string;
  kind: "targeting" | "config";
  /** What is served (segments inlined) or the variants. */
  list: unknown[];
  /** Targeting naming segments: the rules as saved, references by id. */
  segmentRules?: unknown[];
}

/** A feature's new prerequisites in one environment, with where the document gave them (for its issues). */
export interface PrerequisitesWrite {
  environmentId: string;
  key: string;
  prerequisites: Prerequisite[];
  path: string;
}

export interface ImportWrites {
  segments: SegmentRecord[];
  stages: StageRecord[];
  features: FeatureWrite[];
  rules: RulesWrite[];
  prerequisites: PrerequisitesWrite[];
}

export type ImportPlan =
  | { ok: true; answer: ImportAnswer; writes: ImportWrites; changes: boolean }
  | { ok: false; code: "CONFLICT" | "INVALID_DOCUMENT"; message: string; issues?: ValidationIssue[] };

/** JSON text with keys sorted and `values: []` left out: two rule trees are "the same" when these are equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value ?? null);
  const entries = Object.entries(value)
    .filter(([name, item]) => item !== undefined && !(name === "values" && Array.isArray(item) && item.length === 0))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(",")}}`;
}

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

const FIELDS = ["name", "description", "link", "optInEnabled"] as const;

function featureFieldChanges(existing: FeatureRecord | undefined, fields: FlagsDocument["features"][number]["fields"]): FeatureChanges {
  const changes: FeatureChanges = {};
  for (const field of FIELDS) {
    const wanted = fields[field];
    if (wanted === undefined) continue;
    const current = existing ? (existing[field] ?? null) : field === "optInEnabled" ? false : null;
    if (!existing || !same(current, wanted)) (changes as Record<string, unknown>)[field] = wanted;
  }
  return changes;
}

/** Plans the import of `document` into `app`; see the file comment. */
export function planImport(repositories: FlagRepositories, app: AppRecord, document: FlagsDocument, ids: ImportIds, at: string): ImportPlan {
  const flags = readAppFlags(repositories, app);
  if (flags.repeatedNames.length > 0) return { ok: false, code: "CONFLICT", message: `App ${app.id} has more than one environment named ${flags.repeatedNames[0]}: documents name environments.` };
  const environmentId = new Map(flags.environments.map((environment) => [environment.name, environment.id]));
  const issues: ValidationIssue[] = [];
  const writes: ImportWrites = { segments: [], stages: [], features: [], rules: [], prerequisites: [] };
  const answer: ImportAnswer = { features: [], segments: [], stages: [], summary: { created: 0, changed: 0, unchanged: 0 }, retargeted: [] };

  // Segments: by name; a document segment creates the app's segment of that name or replaces its filter.
  const segmentIds = new Map(flags.segments.map((segment) => [segment.name, segment.id]));
  for (const segment of document.segments) if (!segmentIds.has(segment.name)) segmentIds.set(segment.name, requireId(ids.segments, segment.name, "segment"));
  const filters = new Map<string, unknown>(flags.segments.map((segment) => [segment.id, segment.filter]));
  for (const segment of document.segments) {
    const existing = flags.segments.find((candidate) => candidate.name === segment.name);
    const description = segment.description !== undefined ? segment.description : (existing?.description ?? null);
    const filter = byId(segment.filter, segmentIds);
    const change: ChangeKind = !existing ? "created" : same(byName(existing.filter, flags.segments), segment.filter) && same(existing.description, description) ? "unchanged" : "changed";
    answer.segments.push({ name: segment.name, change });
    if (change === "unchanged") continue;
    filters.set(segmentIds.get(segment.name)!, filter);
    writes.segments.push({ id: segmentIds.get(segment.name)!, name: segment.name, description, filter, createdAt: existing?.createdAt ?? at, updatedAt: at });
  }
  const lookup = (segmentId: string) => (filters.has(segmentId) ? { filter: filters.get(segmentId) } : undefined);

  // Stages: by name; the environments a document stage names replace those of the app's stage of that name.
  const stageIds = new Map(flags.stages.map((stage) => [stage.name, stage.id]));
  document.stages.forEach((stage, index) => {
    const existing = flags.stages.find((candidate) => candidate.name === stage.name);
    const id = existing?.id ?? requireId(ids.stages, stage.name, "stage");
    stageIds.set(stage.name, id);
    const targeting: StageRecord["targeting"] = { ...(existing?.targeting ?? {}) };
    let targetingChanged = false;
    for (const [name, { rules }] of Object.entries(stage.targeting ?? {})) {
      const rulesById = byId(rules, segmentIds) as unknown[];
      const prepared = prepareTargeting(rulesById, lookup);
      if (!prepared.ok) issues.push({ path: `stages.${index}.targeting.${name}.rules`, message: prepared.message });
      const id = environmentId.get(name)!;
      if (!existing || !same(byName(existing.targeting[id]?.rules ?? [], flags.segments), rules)) targetingChanged = true;
      targeting[id] = { rules: rulesById };
    }
    const change: ChangeKind = !existing ? "created" : targetingChanged || existing.order !== stage.order ? "changed" : "unchanged";
    answer.stages.push({ name: stage.name, change });
    if (change !== "unchanged") writes.stages.push({ id, name: stage.name, order: stage.order, targeting, createdAt: existing?.createdAt ?? at });
  });

  // Features, and each (feature, environment) pair the document names (looked up by key: documents can be large).
  const planned = new Set<string>();
  const byKey = new Map(flags.features.map((feature) => [feature.key, feature]));
  document.features.forEach((feature, index) => {
    const existing = byKey.get(feature.key);
    const fields = featureFieldChanges(existing, feature.fields);
    let stage: FeatureWrite["stage"];
    if (feature.fields.stage !== undefined) {
      const label = feature.fields.stage;
      const stageId = label === null ? null : (stageIds.get(label) ?? null);
      if (!existing || existing.stage !== label || (existing.stageId ?? null) !== stageId) stage = { label, stageId };
    }
    let featureChanged = !existing || Object.keys(fields).length > 0 || stage !== undefined;
    const environments: ImportAnswer["features"][number]["environments"] = [];
    for (const [name, wanted] of Object.entries(feature.environments)) {
      const id = environmentId.get(name)!;
      planned.add(`${id}\u0000${feature.key}`);
      const current: EnvironmentFeatureState = existing ? repositories.features.rulesOf(id, feature.key) : UNTARGETED;
      let targeting = false;
      let config = false;
      if (wanted.rules !== undefined) {
        const rulesById = byId(wanted.rules, segmentIds) as unknown[];
        const prepared = prepareTargeting(rulesById, lookup);
        if (!prepared.ok) issues.push({ path: `features.${index}.environments.${name}.rules`, message: prepared.message });
        else {
          const saved = byName(current.targeting.segmentRules ?? current.targeting.rules, flags.segments);
          targeting = !same(saved, wanted.rules) || !same(current.targeting.rules, prepared.served);
          if (targeting) writes.rules.push({ environmentId: id, key: feature.key, kind: "targeting", list: prepared.served, ...(prepared.segmentRules ? { segmentRules: prepared.segmentRules } : {}) });
        }
      } else targeting = retarget(current, id, feature.key);
      if (wanted.variants !== undefined && !same(current.config.variants, wanted.variants)) {
        config = true;
        writes.rules.push({ environmentId: id, key: feature.key, kind: "config", list: wanted.variants });
      }
      const prerequisites = wanted.prerequisites !== undefined && !same(prerequisitesOf(current), wanted.prerequisites);
      if (prerequisites) writes.prerequisites.push({ environmentId: id, key: feature.key, prerequisites: wanted.prerequisites!, path: `features.${index}.environments.${name}.prerequisites` });
      const change: ChangeKind = !existing ? "created" : targeting || config || prerequisites ? "changed" : "unchanged";
      if (change === "changed") featureChanged = true;
      answer.summary[change] += 1;
      environments.push({ name, change, targeting, config, ...(prerequisites ? { prerequisites: true as const } : {}) });
    }
    answer.features.push({ key: feature.key, change: !existing ? "created" : featureChanged ? "changed" : "unchanged", environments });
    if (!existing || Object.keys(fields).length > 0 || stage !== undefined) {
      writes.features.push({ key: feature.key, create: !existing, id: existing?.id ?? requireId(ids.features, feature.key, "feature"), fields, ...(stage ? { stage } : {}) });
    }
  });

  /** A targeting that names a changed segment gets its rules inlined again: a new version when what is served changes. */
  function retarget(current: EnvironmentFeatureState, id: string, key: string): boolean {
    if (!current.targeting.segmentRules || writes.segments.length === 0) return false;
    const prepared = prepareTargeting(current.targeting.segmentRules, lookup);
    if (!prepared.ok) {
      issues.push({ path: "segments", message: `Feature ${key}: ${prepared.message}` });
      return false;
    }
    if (same(prepared.served, current.targeting.rules)) return false;
    writes.rules.push({ environmentId: id, key, kind: "targeting", list: prepared.served, segmentRules: prepared.segmentRules! });
    return true;
  }
  for (const feature of flags.features) {
    for (const environment of flags.environments) {
      if (planned.has(`${environment.id}\u0000${feature.key}`)) continue;
      if (retarget(repositories.features.rulesOf(environment.id, feature.key), environment.id, feature.key)) answer.retargeted.push({ key: feature.key, environment: environment.name });
    }
  }

  checkPrerequisites(repositories, app, new Set([...flags.features.map((feature) => feature.key), ...document.features.map((feature) => feature.key)]), writes.prerequisites, issues);
  if (issues.length > 0) return { ok: false, code: "INVALID_DOCUMENT", message: "The document cannot be applied to this app.", issues };
  const changes = writes.segments.length + writes.stages.length + writes.features.length + writes.rules.length + writes.prerequisites.length > 0;
  return { ok: true, answer, writes, changes };
}

/**
 * The prerequisites an import writes, checked as a direct write is (API.md §15) against each environment's graph as
 * the import leaves it: features of the app or the document, not the feature itself, once each, no cycle, no chain
 * too deep.
 */
function checkPrerequisites(repositories: FlagRepositories, app: AppRecord, known: ReadonlySet<string>, planned: readonly PrerequisitesWrite[], issues: ValidationIssue[]): void {
  const graphs = new Map<string, Map<string, readonly Prerequisite[]>>();
  for (const write of planned) {
    const seen = new Set<string>();
    write.prerequisites.forEach(({ feature }, index) => {
      const path = `${write.path}.${index}.feature`;
      if (feature === write.key) issues.push({ path, message: `${feature} cannot be its own prerequisite` });
      else if (!known.has(feature)) issues.push({ path, message: `No feature ${feature} in this app or the document` });
      else if (seen.has(feature)) issues.push({ path, message: `${feature} is listed twice` });
      seen.add(feature);
    });
    const graph = graphs.get(write.environmentId) ?? repositories.features.prerequisiteGraph(write.environmentId, app.id);
    graph.set(write.key, write.prerequisites);
    graphs.set(write.environmentId, graph);
  }
  for (const write of planned) {
    const graph = graphs.get(write.environmentId)!;
    const cycle = cycleThrough(graph, write.key, write.prerequisites);
    if (cycle) issues.push({ path: write.path, message: `These prerequisites would close a cycle: ${describeCycle(cycle)}` });
  }
  for (const [environmentId, graph] of graphs) {
    // A cycle would count as too deep as well: report it once, as a cycle.
    if (issues.length > 0 || deepestChain(graph) <= MAX_PREREQUISITE_DEPTH) continue;
    const path = planned.find((write) => write.environmentId === environmentId)!.path;
    issues.push({ path, message: `A chain of prerequisites may pass through at most ${MAX_PREREQUISITE_DEPTH} features` });
  }
}

function requireId(ids: Record<string, string>, name: string, what: string): string {
  const id = Object.hasOwn(ids, name) ? ids[name] : undefined;
  // The route decides an id for every name of the document; a change without one was built wrongly.
  if (id === undefined) throw new Error(`No id was decided for the new ${what} ${name}.`);
  return id;
}

export { readAppFlags, type AppFlags };

/** The `flags.import` change's body (its envelope aside). */
export interface FlagsImportBody {
  appId: string;
  source: "document" | "unleash";
  /** The Unleash server read (never its token). */
  url?: string;
  document: FlagsDocument;
  ids: ImportIds;
}

export type FlagsImportResult = { answer: ImportAnswer };
