/**
 * Evaluates a compiled ruleset straight to the UTF-8 bytes of a `/features/evaluated` answer.
 *
 * A feature's item text depends only on its outcome — which targeting rules and variants matched, which fields each
 * list reported missing (in order), and the opt-in state — and a feature has few outcomes however many contexts
 * arrive. So evaluation computes each feature's outcome as a number, and the item's bytes are written once per
 * outcome (by serializeEvaluation, so they are exactly its text) and copied from then on. The answer is assembled in
 * a buffer reused from call to call: no string is built, flattened or UTF-8 encoded per request.
 */
import { ChunkedViews } from "./chunked-views.js";
import type { CompiledFeature, CompiledRules, CompiledRuleset } from "./compile-ruleset.js";
import type { EvaluationScope } from "./evaluation-scope.js";
import { evaluatedFeature } from "./evaluated-feature.js";
import { beginEvaluation } from "./rollout-slots.js";
import { optInItem } from "./evaluate-ruleset.js";
import { serializeEvaluation } from "./serialize-evaluation.js";
import type { EvaluatedFeature, OptInItem } from "./types.js";
import type { CachedOutcome, ItemCache } from "./item-cache.js";

/** Rules (or variants) whose results fit an outcome number; a longer list takes the per-request path. */
const MAX_CACHED_RULES = 24;
/** Outcomes remembered per feature; past it, new outcomes are written per request. */
const MAX_OUTCOMES = 256;
/** Bound of each list's missing-fields code, so that both fit one exact number. */
const MISSING_CODE_LIMIT = 2 ** 26;

/** Outcome numbers below this index an array instead of a map (a lookup without hashing). */
const DENSE_OUTCOMES = 1_024;

/** A feature's outcome as an `onItem` callback sees it: valid while the callback runs (the next item reuses it). */
export interface OutcomeView {
  /** The evaluated item, as evaluateRuleset would give it. */
  item(): EvaluatedFeature;
  /**
   * A value the caller derives from this outcome, kept with it for as long as the outcome is remembered (undefined
   * until set, and for outcomes not remembered).
   */
  memo: unknown;
}

/**
 * Room for an answer in a caller's buffer (a batch's result arena), so that the answer is written where it travels
 * from instead of into the writer's buffer and copied there (a copy per answer, which large answers feel
 * (docs/BENCHMARKS.md, "Figures behind the code")).
 */
export interface AnswerTarget {
  /** Makes room for `length` bytes at the end of `bytes` and answers where they start (`bytes` may be new after it). */
  claim(length: number): number;
  readonly bytes: Uint8Array;
}

export interface AnswerOptions {
  flagStateVersion: number;
  remoteContextUsed: boolean;
  onlyKey?: string;
  onlyEnabled?: boolean;
  /** Keys of the opt-in features the context's user and company opted in to (only read for opt-in features). */
  optIns?: { user: ReadonlySet<string>; company: ReadonlySet<string> };
  /** Receives each feature that is in the answer (for `/features/enabled`'s events). */
  onItem?: (feature: CompiledFeature, outcome: OutcomeView) => void;
  /** Where to write the answer; by default a buffer of the writer's own. */
  target?: AnswerTarget;
  /** False: only evaluate and report each item (onItem), no answer bytes put together (OFREP shapes its own). */
  assemble?: boolean;
}

const encoder = new TextEncoder();
const COMMA = 0x2c;
const TAIL = encoder.encode("}}");
const EMPTY = new Uint8Array(0);

let output = new Uint8Array(64 * 1024);
const pieces: Uint8Array[] = [];
/** The pieces' byte count, summed as they are added (while each piece is still in the caches). */
let piecesBytes = 0;

/**
 * The answer's bytes for the context whose field values (by the ruleset's field ids) are `values`. The result is a
 * view of a buffer the next call overwrites (the writer's own, or the room claimed in `options.target`, which the
 * target keeps only if told): send or copy it before evaluating again.
 */
export function writeAnswer(ruleset: CompiledRuleset, values: ArrayLike<string | undefined>, options: AnswerOptions): Uint8Array {
  const scope = ruleset.scope;
  scope.values = values;
  beginEvaluation(scope);
  pieces.length = 0;
  piecesBytes = 0;
  if (options.onlyKey !== undefined) {
    const feature = ruleset.byKey.get(options.onlyKey);
    if (feature !== undefined) addItem(feature, scope, options);
  } else {
    for (const feature of ruleset.answerOrder) addItem(feature, scope, options);
  }
  if (options.assemble === false) {
    pieces.length = 0;
    return EMPTY;
  }
  const head = headOf(ruleset, options.flagStateVersion, options.remoteContextUsed);
  const total = head.length + TAIL.length + Math.max(0, pieces.length - 1) + piecesBytes;
  let out: Uint8Array;
  let start = 0;
  if (options.target !== undefined) {
    start = options.target.claim(total);
    out = options.target.bytes;
  } else {
    if (output.length < total) output = new Uint8Array(Math.max(total, output.length * 2));
    out = output;
  }
  out.set(head, start);
  let offset = start + head.length;
  for (let index = 0; index < pieces.length; index++) {
    if (index > 0) out[offset++] = COMMA;
    const piece = pieces[index]!;
    out.set(piece, offset);
    offset += piece.length;
  }
  out.set(TAIL, offset);
  pieces.length = 0;
  return out.subarray(start, start + total);
}

/** `{"success":true,"flagStateVersion":N,"remoteContextUsed":B,"features":{`, encoded once per version. */
function headOf(ruleset: CompiledRuleset, flagStateVersion: number, remoteContextUsed: boolean): Uint8Array {
  const heads = ruleset.answerHeads;
  if (heads.version !== flagStateVersion) {
    heads.version = flagStateVersion;
    heads.used = encoder.encode(`{"success":true,"flagStateVersion":${flagStateVersion},"remoteContextUsed":true,"features":{`);
    heads.unused = encoder.encode(`{"success":true,"flagStateVersion":${flagStateVersion},"remoteContextUsed":false,"features":{`);
  }
  return remoteContextUsed ? heads.used : heads.unused;
}

function addItem(feature: CompiledFeature, scope: EvaluationScope, options: AnswerOptions): void {
  const optIn = feature.optIn === undefined ? undefined : optInItem(feature, options.optIns);
  const piece = itemBytes(feature, scope, optIn, options);
  if (piece !== undefined) {
    pieces.push(piece);
    piecesBytes += piece.length;
  }
}

/** Runs a rule list, answering its results as bits (rule i is bit i); the list holds at most MAX_CACHED_RULES. */
function ruleBits(rules: CompiledRules, scope: EvaluationScope, constantBits: number): number {
  scope.missingCount = 0;
  if (rules.constantResults !== undefined) return constantBits;
  const runs = rules.runs;
  let bits = 0;
  for (let index = 0; index < runs.length; index++) if (runs[index]!(scope)) bits |= 1 << index;
  return bits;
}

/** The scope's missing fields in report order as one number (mixed radix, ids + 1), or -1 past the limit. */
function missingCode(scope: EvaluationScope, radix: number): number {
  let code = 0;
  for (let index = 0; index < scope.missingCount; index++) {
    code = code * radix + scope.missing[index]! + 1;
    if (code >= MISSING_CODE_LIMIT) return -1;
  }
  return code;
}

function itemBytes(feature: CompiledFeature, scope: EvaluationScope, optIn: OptInItem | undefined, options: AnswerOptions): Uint8Array | undefined {
  const ruleCount = feature.targetingRuleCount;
  const variantCount = feature.variantRuleCount;
  if (ruleCount > MAX_CACHED_RULES || variantCount > MAX_CACHED_RULES) return uncachedItem(feature, scope, optIn, options);
  const radix = feature.ruleset.fields.size + 1;
  const rules = ruleBits(feature.targeting, scope, feature.constantTargetingBits);
  const targetingMissing = missingCode(scope, radix);
  const optInBits = optIn === undefined ? 0 : (optIn.userOptedIn ? 1 : 0) | (optIn.companyOptedIn ? 2 : 0);
  if (options.onlyEnabled === true && rules === 0 && optInBits === 0) return undefined;
  const variants = ruleBits(feature.variantRules, scope, feature.constantVariantBits);
  const variantMissing = missingCode(scope, radix);
  if (targetingMissing < 0 || variantMissing < 0) return uncachedItem(feature, scope, optIn, options);
  // Exact: at most 24 + 24 + 2 bits.
  const key = rules + feature.targetingRadix * (variants + feature.variantRadix * optInBits);
  const missingKey = targetingMissing * MISSING_CODE_LIMIT + variantMissing;
  const cache = feature.items;
  let cached = missingKey === 0 ? (key < DENSE_OUTCOMES ? cache.dense[key] : cache.plain.get(key)) : cache.withMissing.get(key)?.get(missingKey);
  // The outcome's objects are built only when its bytes are new or a caller wants to see it.
  if (cached === undefined || options.onItem !== undefined) {
    const outcome = seenOutcome.reset(feature, rules, targetingMissing, variants, variantMissing, radix, optIn);
    cached ??= remember(cache, key, missingKey, outcome.item());
    if (options.onItem !== undefined) {
      outcome.cached = cached;
      options.onItem(feature, outcome);
    }
  }
  return cached.bytes;
}

/** Remembers a new outcome when there is room; answers it either way. */
function remember(cache: ItemCache, key: number, missingKey: number, item: EvaluatedFeature): CachedOutcome {
  if (cache.size >= MAX_OUTCOMES) return { bytes: encodeItem(item), memo: undefined };
  const cached: CachedOutcome = { bytes: encodeKeptItem(item), memo: undefined };
  cache.size++;
  if (missingKey !== 0) {
    let outcomes = cache.withMissing.get(key);
    if (outcomes === undefined) cache.withMissing.set(key, (outcomes = new Map()));
    outcomes.set(missingKey, cached);
  } else if (key < DENSE_OUTCOMES) {
    // Filled up to `key` first, so the array stays packed (holes would make every read slower).
    while (cache.dense.length < key) cache.dense.push(undefined);
    cache.dense[key] = cached;
  } else cache.plain.set(key, cached);
  return cached;
}

/**
 * A feature's outcome as numbers; turned into the item objects only when they are needed. One instance is reset for
 * each item an onItem callback sees (an object per feature per request was a tenth of an OFREP answer's cost): a
 * callback reads it while it runs and keeps only what it derives (the memo), never the view.
 */
class Outcome implements OutcomeView {
  /** Set when an onItem callback is to see this outcome. */
  cached: CachedOutcome | undefined;
  private feature!: CompiledFeature;
  private rules = 0;
  private targetingMissing = 0;
  private variants = 0;
  private variantMissing = 0;
  private radix = 1;
  private optIn: OptInItem | undefined;

  get memo(): unknown {
    return this.cached?.memo;
  }

  set memo(value: unknown) {
    if (this.cached !== undefined) this.cached.memo = value;
  }

  reset(feature: CompiledFeature, rules: number, targetingMissing: number, variants: number, variantMissing: number, radix: number, optIn: OptInItem | undefined): this {
    this.cached = undefined;
    this.feature = feature;
    this.rules = rules;
    this.targetingMissing = targetingMissing;
    this.variants = variants;
    this.variantMissing = variantMissing;
    this.radix = radix;
    this.optIn = optIn;
    return this;
  }

  item(): EvaluatedFeature {
    const { feature, radix, optIn } = this;
    const names = feature.ruleset.fields.names;
    const isEnabled = this.rules !== 0 || optIn?.isOptedIn === true;
    return evaluatedFeature(
      feature,
      isEnabled,
      booleansOf(this.rules, feature.targetingRuleCount),
      decodeMissing(this.targetingMissing, radix, names),
      booleansOf(this.variants, feature.variantRuleCount),
      decodeMissing(this.variantMissing, radix, names),
      optIn,
    );
  }
}

const seenOutcome = new Outcome();

/** A feature whose outcome does not fit a number: evaluated into objects and written for this request alone. */
function uncachedItem(feature: CompiledFeature, scope: EvaluationScope, optIn: OptInItem | undefined, options: AnswerOptions): Uint8Array | undefined {
  const fields = feature.ruleset.fields;
  const ruleResults = runList(feature.targeting, scope);
  const missing = namesOf(scope.missing, scope.missingCount, fields.names);
  const isEnabled = ruleResults.includes(true) || optIn?.isOptedIn === true;
  if (options.onlyEnabled === true && !isEnabled) return undefined;
  const variantResults = runList(feature.variantRules, scope);
  const variantMissing = namesOf(scope.missing, scope.missingCount, fields.names);
  const item = evaluatedFeature(feature, isEnabled, ruleResults, missing, variantResults, variantMissing, optIn);
  options.onItem?.(feature, { item: () => item, memo: undefined });
  return encodeItem(item);
}

function runList(rules: CompiledRules, scope: EvaluationScope): boolean[] {
  scope.missingCount = 0;
  if (rules.constantResults !== undefined) return rules.constantResults.slice();
  return rules.runs.map((run) => run(scope));
}

function itemText(item: EvaluatedFeature): string {
  const text = serializeEvaluation([item]);
  return text.slice(1, -1);
}

function encodeItem(item: EvaluatedFeature): Uint8Array {
  return encoder.encode(itemText(item));
}

/**
 * The bytes of remembered outcomes come from shared chunks, in the order they are first met (mostly answer order),
 * so that copying an answer's items reads memory nearly in sequence; each in a buffer of its own, they would be
 * scattered over the heap, and copying them reads cold memory (docs/BENCHMARKS.md, "Figures behind the code"). Only remembered ones: they live as long as their ruleset, so a chunk is not held by one item among
 * others long dropped. Items larger than a sixteenth of a chunk get buffers of their own.
 */
const ITEM_CHUNK_BYTES = 256 * 1024;
const itemChunks = new ChunkedViews(() => new Uint8Array(ITEM_CHUNK_BYTES));

function encodeKeptItem(item: EvaluatedFeature): Uint8Array {
  const text = itemText(item);
  // UTF-8 takes at most three bytes per UTF-16 code unit.
  const most = text.length * 3;
  if (most > ITEM_CHUNK_BYTES / 16) return encoder.encode(text);
  const { written } = encoder.encodeInto(text, itemChunks.room(most));
  return itemChunks.take(written);
}

function booleansOf(bits: number, count: number): boolean[] {
  const results = new Array<boolean>(count);
  for (let index = 0; index < count; index++) results[index] = (bits & (1 << index)) !== 0;
  return results;
}

function decodeMissing(code: number, radix: number, names: readonly string[]): string[] {
  const missing: string[] = [];
  for (let rest = code; rest > 0; rest = Math.floor(rest / radix)) missing.unshift(names[(rest % radix) - 1]!);
  return missing;
}

function namesOf(ids: Int32Array, count: number, names: readonly string[]): string[] {
  const result = new Array<string>(count);
  for (let index = 0; index < count; index++) result[index] = names[ids[index]!]!;
  return result;
}

