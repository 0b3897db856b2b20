/**
 * The `switchyard.flags/v1` document (API.md §13.2): its parsed form, and its validation. The whole document is
 * checked before anything is planned, and every problem is reported at its dotted path, so a reviewer fixes a file
 * in one round. A typo'd field is an error, never ignored: a flag file is reviewed as a diff and must mean what it says.
 */
import * as v from "valibot";
import type { ValidationIssue } from "../../errors/catalogue.js";
import { FeatureKey, FeatureName } from "../../schemas/admin.js";
import { MAX_REPORTED_ISSUES, validateFilterTree } from "../../schemas/rules.js";
import { SegmentName } from "../../schemas/segments.js";
import { StageName } from "../../schemas/stages.js";

export const FLAGS_FORMAT = "switchyard.flags/v1";

/** Rules, variants and prerequisites of one feature in one environment; an absent list stays as it is in the app. */
export interface DocumentEnvironment {
  rules?: unknown[];
  variants?: unknown[];
  /** Features of the app (or of the document) this one requires on (`enabled: true`) or off (API.md §15). */
  prerequisites?: { feature: string; enabled: boolean }[];
}

export interface DocumentFeature {
  key: string;
  /** Only the fields the document names; each is the desired value. */
  fields: { name?: string | null; description?: string | null; link?: string | null; stage?: string | null; optInEnabled?: boolean };
  /** By environment name. */
  environments: Record<string, DocumentEnvironment>;
}

export interface DocumentSegment {
  name: string;
  description?: string | null;
  /** Segment references by name: `{type: "segment", segment: "<name>"}`. */
  filter: unknown;
}

export interface DocumentStage {
  name: string;
  order: number;
  /** By environment name. */
  targeting?: Record<string, { rules: unknown[] }>;
}

/** A validated document, reduced to what an import acts on (exportedAt, app and the environment list are informational). */
export interface FlagsDocument {
  segments: DocumentSegment[];
  stages: DocumentStage[];
  features: DocumentFeature[];
}

/** What validation needs to know of the target app. */
export interface DocumentTarget {
  environmentNames: ReadonlySet<string>;
  segmentNames: ReadonlySet<string>;
}

export type DocumentValidation = { ok: true; document: FlagsDocument } | { ok: false; issues: ValidationIssue[] };

const nullableText = (maximum: number) =>
  v.nullable(v.pipe(v.string("must be a string or null"), v.maxLength(maximum, `must be at most ${maximum} characters`)));

/** The message of an object schema's own issues: an unknown key, a missing one, or not an object at all. */
const objectMessage = (what: string) => (issue: v.BaseIssue<unknown>) => {
  if (issue.expected === "never") return "unknown field";
  const missing = issue.path?.[issue.path.length - 1]?.key;
  return issue.input === undefined && typeof missing === "string" ? `${missing} is required` : what;
};

const TOP_LEVEL_FIELDS = ["format", "exportedAt", "app", "environments", "segments", "stages", "features"];

const FeatureFields = v.strictObject(
  {
    key: FeatureKey,
    name: v.optional(v.nullable(FeatureName)),
    description: v.optional(nullableText(4000)),
    link: v.optional(nullableText(2048)),
    stage: v.optional(nullableText(128)),
    optInEnabled: v.optional(v.boolean("must be a boolean")),
    environments: v.optional(v.record(v.string(), v.unknown(), "must be an object of environment names")),
  },
  objectMessage("a feature must be an object"),
);

const PrerequisiteFields = v.strictObject(
  { feature: FeatureKey, enabled: v.boolean("enabled must be true or false") },
  objectMessage("a prerequisite must be an object with only: feature, enabled"),
);

const EnvironmentFields = v.strictObject(
  {
    rules: v.optional(v.array(v.unknown(), "rules must be an array")),
    variants: v.optional(v.array(v.unknown(), "variants must be an array")),
    prerequisites: v.optional(v.pipe(v.array(PrerequisiteFields, "prerequisites must be an array"), v.maxLength(20, "a feature may have at most 20 prerequisites"))),
  },
  objectMessage("must be an object with only: rules, variants, prerequisites"),
);

const SegmentFields = v.strictObject(
  { name: SegmentName, description: v.optional(nullableText(4000)), filter: v.nonOptional(v.unknown(), "filter is required") },
  objectMessage("must be an object with name, description, filter"),
);

const Order = v.pipe(v.number("must be an integer"), v.integer("must be an integer"), v.minValue(0, "must be at least 0"), v.maxValue(10_000, "must be at most 10000"));

const StageFields = v.strictObject(
  { name: StageName, order: Order, targeting: v.optional(v.record(v.string(), v.unknown(), "must be an object of environment names")) },
  objectMessage("must be an object with name, order, targeting"),
);

const RuleFields = v.strictObject({ filter: v.nonOptional(v.unknown(), "filter is required") }, objectMessage("a rule must be an object with only: filter"));

const VariantFields = v.strictObject(
  { filter: v.nonOptional(v.unknown(), "filter is required"), key: v.pipe(v.string("key must be a string"), v.minLength(1, "key must not be empty")), payload: v.optional(v.unknown()) },
  objectMessage("a variant must be an object with only: filter, key, payload"),
);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Issues of one valibot parse, at `prefix` + their own path (an unknown key is reported at the key itself). */
function collect(result: v.SafeParseResult<v.GenericSchema>, prefix: string, issues: ValidationIssue[]): boolean {
  if (result.success) return true;
  for (const issue of result.issues) {
    const relative = issue.path?.map((item) => String(item.key)).join(".") ?? "";
    const path = [prefix, relative].filter((part) => part !== "").join(".");
    const message = issue.expected === "never" ? "unknown field" : issue.message;
    issues.push({ path, message });
  }
  return false;
}

/**
 * Every `{type: "segment", segment: "<name>"}` node of a tree with its path. Walked with a stack: trees come from a
 * request and are only later depth-checked.
 */
export function segmentNameRefs(tree: unknown, rootPath: string): { path: string; name: unknown }[] {
  const found: { path: string; name: unknown }[] = [];
  const stack: { node: unknown; path: string }[] = [{ node: tree, path: rootPath }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (!Array.isArray(node) && (node as { type?: unknown }).type === "segment") {
      found.push({ path: `${path}.segment`, name: (node as { segment?: unknown }).segment });
      continue;
    }
    const entries = Array.isArray(node) ? node.map((value, index) => [String(index), value] as const) : Object.entries(node);
    for (const [name, value] of entries) if (typeof value === "object" && value !== null) stack.push({ node: value, path: `${path}.${name}` });
  }
  return found;
}

/** A copy of a tree with each segment reference rewritten by `rewrite` (name → id on import, id → name on export). */
export function mapSegmentRefs(tree: unknown, rewrite: (node: Record<string, unknown>) => Record<string, unknown>): unknown {
  if (Array.isArray(tree)) return tree.map((item) => mapSegmentRefs(item, rewrite));
  if (!isObject(tree)) return tree;
  if (tree.type === "segment") return rewrite(tree);
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(tree)) out[name] = mapSegmentRefs(value, rewrite);
  return out;
}

/**
 * Checks one filter tree as §3 does (with segment references by name allowed where `segments`), reporting at `path`.
 * A reference node must be exactly `{type: "segment", segment: "<name>"}`.
 */
function checkFilter(filter: unknown, path: string, issues: ValidationIssue[], options: { segments: boolean; companyOnly?: boolean }): void {
  // The rules validator knows segment nodes as `{type, segmentId}`: give it that form and translate its paths back.
  const asIds = options.segments ? mapSegmentRefs(filter, (node) => ({ ...node, segmentId: node.segment, segment: undefined })) : filter;
  const found: ValidationIssue[] = [];
  validateFilterTree(JSON.parse(JSON.stringify(asIds ?? null)), path, found, { segments: options.segments, ...(options.companyOnly ? { companyOnly: true } : {}) });
  for (const issue of found) issues.push({ path: issue.path.replace(/\.segmentId$/, ".segment"), message: issue.message.replace(/segmentId/g, "segment") });
  if (options.segments) {
    for (const ref of segmentNameRefs(filter, path)) {
      const node = ref.path.slice(0, -".segment".length);
      const extra = Object.keys(findNode(filter, path, node) ?? {}).filter((field) => field !== "type" && field !== "segment");
      for (const field of extra) issues.push({ path: `${node}.${field}`, message: "unknown field" });
    }
  }
}

function findNode(tree: unknown, rootPath: string, path: string): Record<string, unknown> | undefined {
  const parts = path.slice(rootPath.length).split(".").filter((part) => part !== "");
  let node: unknown = tree;
  for (const part of parts) node = (node as Record<string, unknown>)?.[part];
  return isObject(node) ? node : undefined;
}

function checkRules(rules: unknown[], path: string, issues: ValidationIssue[]): void {
  rules.forEach((rule, index) => {
    if (collect(v.safeParse(RuleFields, rule), `${path}.${index}`, issues)) checkFilter((rule as { filter: unknown }).filter, `${path}.${index}.filter`, issues, { segments: true });
  });
}

function checkVariants(variants: unknown[], path: string, issues: ValidationIssue[]): void {
  variants.forEach((variant, index) => {
    // Config variants cannot name segments (API.md §10): they are evaluated as saved.
    if (collect(v.safeParse(VariantFields, variant), `${path}.${index}`, issues)) checkFilter((variant as { filter: unknown }).filter, `${path}.${index}.filter`, issues, { segments: false });
  });
}

/** Reports each name given a second time in `items`, at the later item. */
function checkUnique(items: { name?: unknown }[], path: string, field: string, issues: ValidationIssue[]): void {
  const seen = new Set<unknown>();
  items.forEach((item, index) => {
    const name = typeof item[field as "name"] === "string" ? (item[field as "name"] as string).trim() : undefined;
    if (name === undefined) return;
    if (seen.has(name)) issues.push({ path: `${path}.${index}.${field}`, message: `${name} is given twice` });
    seen.add(name);
  });
}

/** Segments that contain themselves, by name, over the document's segments and the app's (`appFilters`). */
function checkSegmentCycles(segments: DocumentSegment[], appFilters: ReadonlyMap<string, unknown>, issues: ValidationIssue[]): void {
  const filters = new Map(appFilters);
  for (const segment of segments) filters.set(segment.name, segment.filter);
  segments.forEach((segment, index) => {
    const stack: { name: string; chain: string[] }[] = segmentNameRefs(segment.filter, "").map((ref) => ({ name: String(ref.name), chain: [segment.name, String(ref.name)] }));
    const seen = new Set<string>();
    while (stack.length > 0) {
      const { name, chain } = stack.pop()!;
      if (name === segment.name) {
        issues.push({ path: `segments.${index}.filter`, message: `A segment may not contain itself: ${chain.join(" → ")}` });
        return;
      }
      if (seen.has(name)) continue;
      seen.add(name);
      for (const ref of segmentNameRefs(filters.get(name), "")) stack.push({ name: String(ref.name), chain: [...chain, String(ref.name)] });
    }
  });
}

/**
 * Validates a document against the app it is imported into. `appSegmentFilters`: the app's segments by name, their
 * filters with references by name (for the cycle check).
 */
export function validateFlagsDocument(input: unknown, target: DocumentTarget, appSegmentFilters: ReadonlyMap<string, unknown> = new Map()): DocumentValidation {
  if (!isObject(input)) return { ok: false, issues: [{ path: "", message: "The document must be a JSON object" }] };
  // A document of another format is reported alone: its other "problems" would only be noise.
  if (input.format !== FLAGS_FORMAT) return { ok: false, issues: [{ path: "format", message: `must be exactly ${FLAGS_FORMAT}` }] };
  const issues: ValidationIssue[] = [];
  for (const field of Object.keys(input)) if (!TOP_LEVEL_FIELDS.includes(field)) issues.push({ path: field, message: "unknown field" });

  const segmentsIn = input.segments === undefined ? [] : input.segments;
  const stagesIn = input.stages === undefined ? [] : input.stages;
  const featuresIn = input.features;
  if (!Array.isArray(segmentsIn)) issues.push({ path: "segments", message: "segments must be an array" });
  if (!Array.isArray(stagesIn)) issues.push({ path: "stages", message: "stages must be an array" });
  if (!Array.isArray(featuresIn)) issues.push({ path: "features", message: "features must be an array" });

  const document: FlagsDocument = { segments: [], stages: [], features: [] };
  const documentSegmentNames = new Set<string>();
  if (Array.isArray(segmentsIn)) {
    segmentsIn.forEach((item, index) => {
      const parsed = v.safeParse(SegmentFields, item);
      if (!collect(parsed, `segments.${index}`, issues) || !parsed.success) return;
      checkFilter(parsed.output.filter, `segments.${index}.filter`, issues, { segments: true, companyOnly: true });
      documentSegmentNames.add(parsed.output.name);
      document.segments.push({ name: parsed.output.name, ...(parsed.output.description !== undefined ? { description: parsed.output.description } : {}), filter: parsed.output.filter });
    });
    checkUnique(segmentsIn as { name?: unknown }[], "segments", "name", issues);
  }
  const knowsSegment = (name: unknown) => typeof name === "string" && (documentSegmentNames.has(name) || target.segmentNames.has(name));
  const checkRefs = (tree: unknown, path: string) => {
    for (const ref of segmentNameRefs(tree, path)) if (typeof ref.name === "string" && !knowsSegment(ref.name)) issues.push({ path: ref.path, message: `No segment named ${ref.name} in the document or the app` });
  };
  document.segments.forEach((segment, index) => checkRefs(segment.filter, `segments.${index}.filter`));
  checkSegmentCycles(document.segments, appSegmentFilters, issues);

  const checkEnvironmentName = (name: string, path: string) => {
    if (target.environmentNames.has(name)) return true;
    issues.push({ path, message: `The app has no environment named ${name}` });
    return false;
  };

  if (Array.isArray(stagesIn)) {
    stagesIn.forEach((item, index) => {
      const parsed = v.safeParse(StageFields, item);
      if (!collect(parsed, `stages.${index}`, issues) || !parsed.success) return;
      const targeting: Record<string, { rules: unknown[] }> = {};
      for (const [name, value] of Object.entries(parsed.output.targeting ?? {})) {
        const path = `stages.${index}.targeting.${name}`;
        if (!checkEnvironmentName(name, path)) continue;
        const shape = v.safeParse(v.strictObject({ rules: v.array(v.unknown(), "rules must be an array") }, objectMessage("must be an object with only: rules")), value);
        if (!collect(shape, path, issues) || !shape.success) continue;
        checkRules(shape.output.rules, `${path}.rules`, issues);
        checkRefs(shape.output.rules, `${path}.rules`);
        targeting[name] = { rules: shape.output.rules };
      }
      document.stages.push({ name: parsed.output.name, order: parsed.output.order, ...(parsed.output.targeting !== undefined ? { targeting } : {}) });
    });
    checkUnique(stagesIn as { name?: unknown }[], "stages", "name", issues);
  }

  if (Array.isArray(featuresIn)) {
    const keys = new Set<string>();
    featuresIn.forEach((item, index) => {
      const path = `features.${index}`;
      const parsed = v.safeParse(FeatureFields, item);
      if (!collect(parsed, path, issues) || !parsed.success) return;
      const { key, environments, ...fields } = parsed.output;
      if (keys.has(key)) issues.push({ path: `${path}.key`, message: `${key} is given twice` });
      keys.add(key);
      const feature: DocumentFeature = { key, fields, environments: {} };
      for (const [name, value] of Object.entries(environments ?? {})) {
        const environmentPath = `${path}.environments.${name}`;
        if (!checkEnvironmentName(name, environmentPath)) continue;
        const shape = v.safeParse(EnvironmentFields, value);
        collect(shape, environmentPath, issues);
        // Rules and variants are checked each on its own, so a bad one does not hide the other's problems.
        const { rules, variants } = isObject(value) ? (value as DocumentEnvironment) : {};
        if (Array.isArray(rules)) {
          checkRules(rules, `${environmentPath}.rules`, issues);
          checkRefs(rules, `${environmentPath}.rules`);
        }
        if (Array.isArray(variants)) checkVariants(variants, `${environmentPath}.variants`, issues);
        if (shape.success) feature.environments[name] = shape.output;
      }
      document.features.push(feature);
    });
  }
  if (issues.length > 0) return { ok: false, issues: issues.slice(0, MAX_REPORTED_ISSUES) };
  return { ok: true, document };
}

/** A place where an imported feature is not exactly what its source served (API.md §13.3 `warnings`). */
export interface ImportWarning {
  key: string;
  environment: string;
  strategyId?: string;
  code: string;
  message: string;
}
