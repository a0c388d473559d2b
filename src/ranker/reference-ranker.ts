/**
 * @module ranker/reference-ranker
 * The Ranker role, its inputs, and ReferenceRanker: the plain-TypeScript specification of the
 * WASM ranking kernel (assembly/), which test/conformance holds to the same order and to scores
 * within 1e-5. Clarity over speed here: Maps, Sets and a sort. Every f32 operation of the kernel
 * is written out with Math.fround, in the kernel's order, so both round alike. It must not do
 * I/O or know where the arrays come from (LMDB layouts are src/store/model-layout.ts's).
 *
 * A ranking, for one list of one request:
 * 1. candidates: every neighbour ix < n of every seed, its score the sum over seeds, in seed and
 *    row order, of decayedSeedWeight × neighbourWeight, where decayedSeedWeight = weight ×
 *    2^(-(now - time) / seedHalfLifeSec) (time 0 or in the future: no decay); then the pool's
 *    ix < n not yet candidates, with score 0. Each ix is a candidate once.
 * 2. filter: keep a candidate only if it is in catalog and enabled, not expired (ends == 0 or
 *    ends > now), its type admitted by allowedTypesMask (bit t admits type t; types >= 32,
 *    UNKNOWN_TYPE included, only under ALL_TYPES), its bit set in `allow` (when given), and not
 *    in `exclude`.
 * 3. priors, added in this order to each kept candidate: popularityWeight × popularity /
 *    (max popularity over the kept candidates) — skipped when that max is not > 0; recencyWeight ×
 *    recency, recency = 0 for an unknown publication time, 1 when published at or after now,
 *    else 2^(-(now - published) / recencyHalfLifeSec); contentWeight × dot(context, vector)
 *    (skipped without a context vector). A term whose weight is 0 is skipped. Item vectors are
 *    held quantised (quantizeVector: i8 per dim and one f32 scale per item, so one item fits one
 *    cache line in the kernel); the dot product is over the quantised values, times the scale.
 * 4. top k: non-finite scores dropped; higher score first, equal scores by lower ix.
 */
import { AppError } from '../domain/errors.ts';
import { ITEM_ENABLED, ITEM_IN_CATALOG } from '../store/model-layout.ts';

/** f32 per content vector, for items and for a request's context vector. */
export const VECTOR_DIM = 32;
/** allowedTypesMask admitting every item type, the unknown type (255) included. */
export const ALL_TYPES = 0xffffffff;
/** Most items a ranker holds (assembly/abi.ts MAX_ITEMS: what a wasm32 memory fits). */
export const MAX_ITEMS = 1 << 24;
/** Types the u32 allowedTypesMask can name; others pass only ALL_TYPES. */
const MASK_TYPES = 32;
const RANKABLE_FLAGS = ITEM_IN_CATALOG | ITEM_ENABLED;
const U32_MAX = 0xffffffff;
const I32_MAX = 0x7fffffff;

/**
 * Resident item arrays of one environment, indexed by dense item index `ix`, as the model
 * builder writes them (src/store/model-layout.ts). All have length n; `vectors` n × VECTOR_DIM, or is
 * absent or empty for none (all-zero vectors).
 */
export interface ItemArrays {
  /** Bit 0 in catalog, bit 1 enabled. */
  flags: Uint8Array;
  /** Index of the item type in the environment's list; 255 unknown. */
  type: Uint8Array;
  /** Publication time, unix sec; 0 unknown. */
  published: Uint32Array;
  /** end_datetime, unix sec; 0 none. */
  ends: Uint32Array;
  /** Any non-negative prior score (all-time or trending popularity: the caller's choice). */
  popularity: Float32Array;
  /** Content vectors, row ix at ix × VECTOR_DIM; an all-zero row means none. */
  vectors?: Float32Array;
}

/**
 * One ranking's inputs. Seeds are the items the list grows from (history, context item), with
 * their neighbour rows in CSR form: row s is neighbourIx/neighbourWeight[offsets[s] ..
 * offsets[s + 1]). An ix >= n anywhere is ignored.
 */
export interface RankInput {
  /** Results wanted, integer >= 0. */
  k: number;
  /** Now, unix sec (u32). */
  nowSec: number;
  /** Bit t admits item type t; ALL_TYPES admits every type. */
  allowedTypesMask: number;
  /** Weight of each seed (f32[m]). */
  seedWeight: Float32Array;
  /** Time of each seed, unix sec (u32[m]); 0 = no decay. */
  seedTime: Uint32Array;
  /** Half-life of a seed's weight, sec, > 0. */
  seedHalfLifeSec: number;
  /** CSR row starts (u32[m + 1]): 0, ..., neighbourIx.length, non-decreasing. */
  neighbourOffsets: Uint32Array;
  neighbourIx: Uint32Array;
  /** Co-occurrence weight of each neighbour (f32, same length as neighbourIx). */
  neighbourWeight: Float32Array;
  /** Extra candidates with score 0 before priors (e.g. popular or latest items, the fallback). */
  pool: Uint32Array;
  /** Never ranked: consumed items, the request's exclude, items of earlier lists, the context item. */
  exclude: Uint32Array;
  popularityWeight: number;
  recencyWeight: number;
  /** Half-life of the recency prior, sec, > 0. */
  recencyHalfLifeSec: number;
  contentWeight: number;
  /** f32[VECTOR_DIM] whose dot product with each candidate's vector is scored, or null. */
  context: Float32Array | null;
  /**
   * Bitset of the ix that may be ranked (bit ix & 31 of word ix >> 5; at least ceil(n / 32)
   * words), e.g. the items matching a list's filters; absent or null admits all.
   */
  allow?: Uint32Array | null;
}

/** One item's resident values, for an update between rankings (a catalog change). */
export interface ItemUpdate {
  flags: number;
  type: number;
  published: number;
  ends: number;
  /** f32[VECTOR_DIM]; null for none (all zeros); absent keeps the vector held (a state change). */
  vector?: Float32Array | null;
}

/** The k' best candidates, best first; views valid until the ranker's next call. */
export interface RankResult {
  ix: Uint32Array;
  score: Float32Array;
}

export interface Ranker {
  /**
   * Replaces the resident item arrays (when the model builder's data changes, not per request).
   * Throws AppError `internal` when lengths disagree or n > MAX_ITEMS.
   */
  setItems(items: ItemArrays): void;
  /**
   * setItems for a catalog that grew: the arrays hold what the ranker already holds for the
   * first `held` items (n at the last setItems, and every updateItem and setPopularity since), so
   * only the items from `held` on need writing. A catalog of 1,000,000 items rewrote every record
   * (each vector quantized again) inside one batch at each growth. The vectors of the first `held`
   * are kept whether or not the arrays carry any (a catalog view passes none: the ranker's copy is
   * the only one). Same errors as setItems.
   */
  growItems(items: ItemArrays, held: number): void;
  /** Replaces one item's resident values (ix < n). Throws AppError `internal` on a bad ix or vector. */
  updateItem(ix: number, item: ItemUpdate): void;
  /**
   * Replaces the vectors of items first, first + 1, ... (vectors.length / VECTOR_DIM of them,
   * all < n), keeping the rest of their values: how a catalog view loads the builder's saved
   * vectors by chunk without a float copy of them all. Throws AppError `internal` on a bad range.
   */
  setVectors(first: number, vectors: Float32Array): void;
  /** Replaces the popularity prior only (length n). Throws AppError `internal` on a bad length. */
  setPopularity(popularity: Float32Array): void;
  /**
   * Adds `weight` × the vector held for ix (quantised: scale × q) to `out` (f32[VECTOR_DIM]);
   * nothing for an ix not held. The held copy is the only one a ranking worker keeps: a float
   * copy beside it was 160 MB at 1,000,000 items (issue 12's memory target).
   */
  addVector(ix: number, weight: number, out: Float32Array): void;
  /**
   * Ranks one list over the resident items (see the module comment). Returns k' = min(k,
   * rankable candidates) results; empty before setItems. Throws AppError `internal` on an
   * inconsistent input (lengths, CSR offsets, half-life <= 0, non-finite weight).
   */
  rank(input: RankInput): RankResult;
  /** A buffer with room for `n` scores; write candidates' scores into it. */
  scoresBuffer(n: number): Float32Array;
  /**
   * Indices of the `k` best of the first `n` scores, best first; equal scores keep the lower
   * index first; non-finite scores (filtered candidates) are never selected. Valid until the
   * next call.
   */
  selectTopK(n: number, k: number): Uint32Array;
}

/** The error every Ranker raises on inputs the host should never send (a bug: 500). */
export function rankerError(detail: string, cause?: unknown): AppError {
  return new AppError('internal', 500, 'Internal Server Error', `Ranking failed: ${detail}`, { cause });
}

const isU32 = (x: number) => Number.isInteger(x) && x >= 0 && x <= U32_MAX;
const isF32Finite = (x: number) => Number.isFinite(Math.fround(x));
const isF32Positive = (x: number) => isF32Finite(x) && Math.fround(x) > 0;

/**
 * Why `input` cannot be ranked, checking what is O(1) to check (both rankers; the CSR offsets'
 * order is checked by each ranker as it reads them), or undefined when it is sound.
 */
export function rankInputProblem(input: RankInput, itemCount: number): string | undefined {
  const m = input.seedWeight.length;
  if (!Number.isInteger(input.k) || input.k < 0 || input.k > I32_MAX) return `k ${input.k} is not an integer >= 0`;
  if (!isU32(input.nowSec)) return `nowSec ${input.nowSec} is not a u32`;
  if (!isU32(input.allowedTypesMask)) return `allowedTypesMask ${input.allowedTypesMask} is not a u32`;
  if (input.seedTime.length !== m) return `seedTime has ${input.seedTime.length} entries for ${m} seeds`;
  if (input.neighbourOffsets.length !== m + 1) return `neighbourOffsets has ${input.neighbourOffsets.length} entries for ${m} seeds`;
  if (input.neighbourWeight.length !== input.neighbourIx.length) return 'neighbourWeight and neighbourIx differ in length';
  if (input.context !== null && input.context.length !== VECTOR_DIM) return `context has ${input.context.length} dims, not ${VECTOR_DIM}`;
  if (input.allow && input.allow.length < Math.ceil(itemCount / 32)) return `allow has ${input.allow.length} words for ${itemCount} items`;
  if (!isF32Positive(input.seedHalfLifeSec) || !isF32Positive(input.recencyHalfLifeSec)) return 'a half-life is not > 0';
  if (!isF32Finite(input.popularityWeight) || !isF32Finite(input.recencyWeight) || !isF32Finite(input.contentWeight)) {
    return 'a weight is not finite';
  }
  return undefined;
}

/** Why `items` cannot be held, or undefined. */
export function itemArraysProblem(items: ItemArrays): string | undefined {
  const n = items.flags.length;
  if (n > MAX_ITEMS) return `${n} items exceed ${MAX_ITEMS}`;
  if (items.type.length !== n || items.published.length !== n || items.ends.length !== n || items.popularity.length !== n) {
    return `item arrays differ in length (flags has ${n})`;
  }
  const v = items.vectors?.length ?? 0;
  if (v !== 0 && v !== n * VECTOR_DIM) return `vectors has ${v} values, not ${n} × ${VECTOR_DIM}`;
  return undefined;
}

/** How many vectors setVectors(first, vectors) writes; throws when they do not fit n items. */
export function vectorRangeCount(first: number, vectors: Float32Array, n: number): number {
  const count = vectors.length / VECTOR_DIM;
  if (!Number.isInteger(count)) throw rankerError(`vectors has ${vectors.length} values, not a multiple of ${VECTOR_DIM}`);
  if (!Number.isInteger(first) || first < 0 || first + count > n) throw rankerError(`vectors for items ${first} to ${first + count - 1} are outside the ${n} items held`);
  return count;
}

/** 2^(-ageSec / halfLifeSec) as an f32 (the kernel's halfLifeDecay). */
function halfLifeDecay(ageSec: number, halfLifeSec: number): number {
  return Math.fround(2 ** -(ageSec / halfLifeSec));
}

function decayedSeedWeight(weight: number, timeSec: number, nowSec: number, halfLifeSec: number): number {
  if (timeSec === 0) return weight;
  const age = nowSec > timeSec ? nowSec - timeSec : 0;
  return Math.fround(weight * halfLifeDecay(age, halfLifeSec));
}

function recencyPrior(publishedSec: number, nowSec: number, halfLifeSec: number): number {
  if (publishedSec === 0) return 0;
  if (publishedSec >= nowSec) return 1;
  return halfLifeDecay(nowSec - publishedSec, halfLifeSec);
}

/** Quantised values per dim run from -QUANT_MAX to QUANT_MAX. */
const QUANT_MAX = 127;

/**
 * Quantises `source[at ... at + VECTOR_DIM)` into `out[outAt ...]` (i8) and returns its scale
 * (f32): value ≈ scale × q, scale = max |value| / 127, q = round(value / scale). An all-zero or
 * non-finite vector gets scale 0 and all-zero q. Both rankers quantise with this function, so
 * both hold the same bytes.
 */
export function quantizeVector(source: ArrayLike<number>, at: number, out: Int8Array, outAt: number): number {
  let maxAbs = 0;
  for (let d = 0; d < VECTOR_DIM; d++) maxAbs = Math.max(maxAbs, Math.abs(source[at + d]!));
  if (!(maxAbs > 0) || !Number.isFinite(maxAbs)) {
    out.fill(0, outAt, outAt + VECTOR_DIM);
    return 0;
  }
  const scale = Math.fround(maxAbs / QUANT_MAX);
  for (let d = 0; d < VECTOR_DIM; d++) {
    out[outAt + d] = Math.max(-QUANT_MAX, Math.min(QUANT_MAX, Math.round(source[at + d]! / scale)));
  }
  return scale;
}

/**
 * Dot product in the kernel's order: 4 lanes over dims j, j+4, ... of q × context;
 * ((l0 + l1) + (l2 + l3)) × scale.
 */
function dot(q: Int8Array, qStart: number, scale: number, context: Float32Array): number {
  const lanes = [0, 0, 0, 0];
  for (let d = 0; d < VECTOR_DIM; d++) {
    const lane = d % 4;
    lanes[lane] = Math.fround(lanes[lane]! + Math.fround(q[qStart + d]! * context[d]!));
  }
  return Math.fround(Math.fround(Math.fround(lanes[0]! + lanes[1]!) + Math.fround(lanes[2]! + lanes[3]!)) * scale);
}

/** The quantised vectors of n items. */
interface QuantizedVectors {
  q: Int8Array;
  scale: Float32Array;
}

function quantizeAll(vectors: Float32Array | undefined, n: number): QuantizedVectors {
  const out = { q: new Int8Array(n * VECTOR_DIM), scale: new Float32Array(n) };
  if (!vectors || vectors.length === 0) return out;
  for (let ix = 0; ix < n; ix++) out.scale[ix] = quantizeVector(vectors, ix * VECTOR_DIM, out.q, ix * VECTOR_DIM);
  return out;
}

export class ReferenceRanker implements Ranker {
  #scores = new Float32Array(0);
  #items: Omit<Required<ItemArrays>, 'vectors'> & QuantizedVectors = {
    flags: new Uint8Array(0),
    type: new Uint8Array(0),
    published: new Uint32Array(0),
    ends: new Uint32Array(0),
    popularity: new Float32Array(0),
    q: new Int8Array(0),
    scale: new Float32Array(0),
  };

  setItems(items: ItemArrays): void {
    const problem = itemArraysProblem(items);
    if (problem) throw rankerError(problem);
    const n = items.flags.length;
    // Copies, as the kernel's memory is a copy: later changes to the caller's arrays do not count.
    this.#items = {
      flags: items.flags.slice(),
      type: items.type.slice(),
      published: items.published.slice(),
      ends: items.ends.slice(),
      popularity: items.popularity.slice(),
      ...quantizeAll(items.vectors, n),
    };
  }

  /** The reference holds copies: it takes them all but the vectors of the first `held`, which it keeps. */
  growItems(items: ItemArrays, held: number): void {
    const old = this.#items;
    this.setItems(items);
    const kept = Math.min(held, old.scale.length, this.#items.scale.length);
    this.#items.q.set(old.q.subarray(0, kept * VECTOR_DIM));
    this.#items.scale.set(old.scale.subarray(0, kept));
  }

  setVectors(first: number, vectors: Float32Array): void {
    const count = vectorRangeCount(first, vectors, this.#items.flags.length);
    for (let i = 0; i < count; i++) this.#items.scale[first + i] = quantizeVector(vectors, i * VECTOR_DIM, this.#items.q, (first + i) * VECTOR_DIM);
  }

  addVector(ix: number, weight: number, out: Float32Array): void {
    if (!(ix < this.#items.scale.length)) return;
    const factor = Math.fround(weight * this.#items.scale[ix]!);
    for (let d = 0; d < VECTOR_DIM; d++) out[d] = Math.fround(out[d]! + Math.fround(factor * this.#items.q[ix * VECTOR_DIM + d]!));
  }

  updateItem(ix: number, item: ItemUpdate): void {
    const n = this.#items.flags.length;
    if (!Number.isInteger(ix) || ix < 0 || ix >= n) throw rankerError(`item ${ix} is outside the ${n} items held`);
    if (item.vector && item.vector.length !== VECTOR_DIM) throw rankerError(`vector has ${item.vector.length} dims, not ${VECTOR_DIM}`);
    this.#items.flags[ix] = item.flags;
    this.#items.type[ix] = item.type;
    this.#items.published[ix] = item.published;
    this.#items.ends[ix] = item.ends;
    if (item.vector === undefined) return;
    this.#items.scale[ix] = item.vector ? quantizeVector(item.vector, 0, this.#items.q, ix * VECTOR_DIM) : 0;
    if (!item.vector) this.#items.q.fill(0, ix * VECTOR_DIM, (ix + 1) * VECTOR_DIM);
  }

  setPopularity(popularity: Float32Array): void {
    if (popularity.length !== this.#items.flags.length) throw rankerError(`popularity has ${popularity.length} values for ${this.#items.flags.length} items`);
    this.#items.popularity = popularity.slice();
  }

  rank(input: RankInput): RankResult {
    const problem = rankInputProblem(input, this.#items.flags.length) ?? csrProblem(input);
    if (problem) throw rankerError(problem);
    const items = this.#items;
    const n = items.flags.length;
    const now = input.nowSec;

    // 1. Candidates, in order of first appearance; Map keeps insertion order.
    const scores = new Map<number, number>();
    const seedHalfLife = Math.fround(input.seedHalfLifeSec);
    for (let s = 0; s < input.seedWeight.length; s++) {
      const w = decayedSeedWeight(input.seedWeight[s]!, input.seedTime[s]!, now, seedHalfLife);
      for (let j = input.neighbourOffsets[s]!; j < input.neighbourOffsets[s + 1]!; j++) {
        const ix = input.neighbourIx[j]!;
        if (ix >= n) continue;
        const contribution = Math.fround(w * input.neighbourWeight[j]!);
        scores.set(ix, Math.fround((scores.get(ix) ?? 0) + contribution));
      }
    }
    for (const ix of input.pool) if (ix < n && !scores.has(ix)) scores.set(ix, 0);

    // 2. Filter.
    const excluded = new Set(input.exclude);
    const isRankable = (ix: number) => {
      if ((items.flags[ix]! & RANKABLE_FLAGS) !== RANKABLE_FLAGS) return false;
      const ends = items.ends[ix]!;
      if (ends !== 0 && ends <= now) return false;
      const type = items.type[ix]!;
      if (input.allowedTypesMask !== ALL_TYPES && (type >= MASK_TYPES || ((input.allowedTypesMask >>> type) & 1) === 0)) return false;
      if (input.allow && ((input.allow[ix >>> 5]! >>> (ix & 31)) & 1) === 0) return false;
      return !excluded.has(ix);
    };
    const kept = [...scores].filter(([ix]) => isRankable(ix)).map(([ix, score]) => ({ ix, score }));

    // 3. Priors.
    let maxPopularity = 0;
    for (const { ix } of kept) if (items.popularity[ix]! > maxPopularity) maxPopularity = items.popularity[ix]!;
    const popularityWeight = Math.fround(input.popularityWeight);
    const recencyWeight = Math.fround(input.recencyWeight);
    const recencyHalfLife = Math.fround(input.recencyHalfLifeSec);
    const contentWeight = Math.fround(input.contentWeight);
    for (const c of kept) {
      if (popularityWeight !== 0 && maxPopularity > 0) {
        const normalised = Math.fround(items.popularity[c.ix]! / maxPopularity);
        c.score = Math.fround(c.score + Math.fround(popularityWeight * normalised));
      }
      if (recencyWeight !== 0) {
        const recency = recencyPrior(items.published[c.ix]!, now, recencyHalfLife);
        c.score = Math.fround(c.score + Math.fround(recencyWeight * recency));
      }
      if (input.context !== null && contentWeight !== 0) {
        const similarity = dot(items.q, c.ix * VECTOR_DIM, items.scale[c.ix]!, input.context);
        c.score = Math.fround(c.score + Math.fround(contentWeight * similarity));
      }
    }

    // 4. Top k.
    const ranked = kept.filter((c) => Number.isFinite(c.score)).sort((a, b) => b.score - a.score || a.ix - b.ix);
    const top = ranked.slice(0, input.k);
    return { ix: Uint32Array.from(top, (c) => c.ix), score: Float32Array.from(top, (c) => c.score) };
  }

  scoresBuffer(n: number): Float32Array {
    if (this.#scores.length < n) this.#scores = new Float32Array(n);
    return this.#scores.subarray(0, n);
  }

  selectTopK(n: number, k: number): Uint32Array {
    const scores = this.#scores;
    const candidates: number[] = [];
    for (let i = 0; i < n; i++) if (Number.isFinite(scores[i]!)) candidates.push(i);
    candidates.sort((a, b) => scores[b]! - scores[a]! || a - b);
    return Uint32Array.from(candidates.slice(0, Math.max(0, k)));
  }
}

/** Why the CSR offsets are unsound (not 0 ..= neighbourIx.length, non-decreasing), or undefined. */
function csrProblem(input: RankInput): string | undefined {
  const offsets = input.neighbourOffsets;
  if (offsets[0] !== 0) return 'neighbourOffsets does not start at 0';
  for (let s = 1; s < offsets.length; s++) if (offsets[s]! < offsets[s - 1]!) return `neighbourOffsets decreases at ${s}`;
  if (offsets[offsets.length - 1] !== input.neighbourIx.length) return 'neighbourOffsets does not end at neighbourIx.length';
  return undefined;
}
