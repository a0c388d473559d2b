// One suite, run against every Ranker (the WASM kernel and its plain-TypeScript reference), plus
// generated cases where both must agree: the same order exactly and scores within 1e-5
// relative. Hand-made cases state their expected results outright, not through the reference.
import { mulberry32 } from '../../scripts/synthetic/random.ts';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError } from '../../src/domain/errors.ts';
import { WasmRanker } from '../../src/ranker/kernel.ts';
import {
  ALL_TYPES,
  ReferenceRanker,
  VECTOR_DIM,
  type ItemArrays,
  type RankInput,
  type RankResult,
  type Ranker,
} from '../../src/ranker/reference-ranker.ts';
import { ITEM_ENABLED, ITEM_IN_CATALOG, UNKNOWN_TYPE } from '../../src/store/model-layout.ts';

/** Relative score tolerance between the rankers (STYLE §11). */
const SCORE_TOLERANCE = 1e-5;
const GENERATED_CASES = 240;
/** Rankings per generated item set: later ones run on scratch the earlier ones left. */
const RANKINGS_PER_CASE = 3;
const MAX_GENERATED_ITEMS = 20_000;
const NOW = 1_700_000_000;
const HOUR = 3600;
const RANKABLE = ITEM_IN_CATALOG | ITEM_ENABLED;


function fill(ranker: Ranker, values: ArrayLike<number>): void {
  ranker.scoresBuffer(values.length).set(values);
}

/** n rankable items of type 0, unknown publication, no end, popularity 0, no vectors. */
function itemsOf(n: number, overrides: Partial<ItemArrays> = {}): ItemArrays {
  return {
    flags: new Uint8Array(n).fill(RANKABLE),
    type: new Uint8Array(n),
    published: new Uint32Array(n),
    ends: new Uint32Array(n),
    popularity: new Float32Array(n),
    ...overrides,
  };
}

interface Seed {
  weight: number;
  time?: number;
  neighbours: Array<[ix: number, weight: number]>;
}

/** A request with no priors unless overridden; `seeds` become the CSR arrays. */
function request(seeds: Seed[], overrides: Partial<RankInput> = {}): RankInput {
  const offsets = [0];
  const ix: number[] = [];
  const weight: number[] = [];
  for (const seed of seeds) {
    for (const [i, w] of seed.neighbours) {
      ix.push(i);
      weight.push(w);
    }
    offsets.push(ix.length);
  }
  return {
    k: 10,
    nowSec: NOW,
    allowedTypesMask: ALL_TYPES,
    seedWeight: Float32Array.from(seeds, (s) => s.weight),
    seedTime: Uint32Array.from(seeds, (s) => s.time ?? 0),
    seedHalfLifeSec: HOUR,
    neighbourOffsets: Uint32Array.from(offsets),
    neighbourIx: Uint32Array.from(ix),
    neighbourWeight: Float32Array.from(weight),
    pool: new Uint32Array(0),
    exclude: new Uint32Array(0),
    popularityWeight: 0,
    recencyWeight: 0,
    recencyHalfLifeSec: HOUR,
    contentWeight: 0,
    context: null,
    ...overrides,
  };
}

const u32 = (...xs: number[]) => Uint32Array.from(xs);

/** The vector a ranker holds for ix, read back with addVector. */
function heldVector(ranker: Ranker, ix: number): number[] {
  const out = new Float32Array(VECTOR_DIM);
  ranker.addVector(ix, 1, out);
  return Array.from(out);
}

function assertScoresClose(actual: ArrayLike<number>, expected: ArrayLike<number>, label: string): void {
  assert.equal(actual.length, expected.length, `${label}: result lengths`);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    const ok = Math.abs(a - e) <= SCORE_TOLERANCE * Math.max(Math.abs(a), Math.abs(e));
    assert.ok(ok, `${label}: score ${i} is ${a}, expected ${e}`);
  }
}

/** Ranks and checks order and scores; copies the result (views die at the next call). */
function assertRanks(ranker: Ranker, input: RankInput, ix: number[], scores: number[]): void {
  const result = ranker.rank(input);
  assert.deepEqual([...result.ix], ix);
  assertScoresClose(result.score, scores, 'scores');
}

const isInternalError = (e: unknown) => e instanceof AppError && e.kind === 'internal' && e.status === 500;

function rankerSuite(name: string, make: () => Ranker): void {
  describe(`${name} selectTopK`, () => {
    test('returns the k best indices, best first, ties by lower index', () => {
      const r = make();
      fill(r, [0.5, 2, 2, -1, 7, 0.5]);
      assert.deepEqual([...r.selectTopK(6, 4)], [4, 1, 2, 0]);
    });
    test('never selects filtered (non-finite) candidates and returns fewer than k when needed', () => {
      const r = make();
      fill(r, [-Infinity, 3, NaN, Infinity, 1]);
      assert.deepEqual([...r.selectTopK(5, 10)], [1, 4]);
    });
    test('k = 0 and n = 0 give an empty result', () => {
      const r = make();
      fill(r, [1, 2]);
      assert.equal(r.selectTopK(2, 0).length, 0);
      assert.equal(r.selectTopK(0, 5).length, 0);
    });
    test('still works after items are set (its buffers do not overlap the items)', () => {
      const r = make();
      r.setItems(itemsOf(1000, { popularity: new Float32Array(1000).fill(1) }));
      fill(r, [1, 3, 2]);
      assert.deepEqual([...r.selectTopK(3, 2)], [1, 2]);
      assertRanks(r, request([], { pool: u32(5), popularityWeight: 1 }), [5], [1]);
    });
  });

  describe(`${name} rank: candidates and scores`, () => {
    test('a neighbour shared by two seeds is one candidate with both contributions summed', () => {
      const r = make();
      r.setItems(itemsOf(5));
      const seeds: Seed[] = [
        { weight: 1, neighbours: [[1, 0.5], [2, 0.25]] },
        { weight: 2, neighbours: [[2, 1], [3, 0.125]] },
      ];
      assertRanks(r, request(seeds), [2, 1, 3], [2.25, 0.5, 0.25]);
    });

    test('a seed weight halves per seedHalfLifeSec of age; time 0 and future times do not decay', () => {
      const r = make();
      r.setItems(itemsOf(5));
      const seeds: Seed[] = [
        { weight: 1, time: NOW - HOUR, neighbours: [[1, 1]] },
        { weight: 1, time: NOW - 2 * HOUR, neighbours: [[2, 1]] },
        { weight: 1, time: 0, neighbours: [[3, 1]] },
        { weight: 1, time: NOW + 500, neighbours: [[4, 1]] },
      ];
      assertRanks(r, request(seeds), [3, 4, 1, 2], [1, 1, 0.5, 0.25]);
    });

    test('popularity is divided by the max popularity of the kept candidates', () => {
      const r = make();
      r.setItems(itemsOf(4, { popularity: Float32Array.of(0, 10, 5, 100) }));
      // Item 3 (popularity 100) is excluded, so the max is 10, not 100.
      const input = request([], { pool: u32(1, 2, 3, 0), exclude: u32(3), popularityWeight: 2 });
      assertRanks(r, input, [1, 2, 0], [2, 1, 0]);
    });

    test('popularity all zero adds nothing and leaves ties to the lower ix', () => {
      const r = make();
      r.setItems(itemsOf(4));
      assertRanks(r, request([], { pool: u32(3, 1, 2), popularityWeight: 5 }), [1, 2, 3], [0, 0, 0]);
    });

    test('recency is 1 at or after now, halves per recencyHalfLifeSec, and is 0 when unknown', () => {
      const r = make();
      r.setItems(itemsOf(5, { published: u32(0, NOW, NOW + 100, NOW - HOUR, NOW - 2 * HOUR) }));
      const input = request([], { pool: u32(0, 1, 2, 3, 4), recencyWeight: 1 });
      assertRanks(r, input, [1, 2, 3, 4, 0], [1, 1, 0.5, 0.25, 0]);
    });

    test('content adds contentWeight × context·vector; a zero vector or no context adds nothing', () => {
      const r = make();
      const vectors = new Float32Array(4 * VECTOR_DIM);
      // item 1 = e0, item 2 = 0.25 e0 + 3 e5, item 3 = zero vector; context = 2 e0 + e5
      vectors[1 * VECTOR_DIM + 0] = 1;
      vectors[2 * VECTOR_DIM + 0] = 0.25;
      vectors[2 * VECTOR_DIM + 5] = 3;
      r.setItems(itemsOf(4, { vectors }));
      const context = new Float32Array(VECTOR_DIM);
      context[0] = 2;
      context[5] = 1;
      const pool = u32(3, 2, 1);
      // Vectors are held quantised (i8 × a per-item scale of max |value| / 127): item 1 exactly,
      // item 2 as (11 e0 + 127 e5) × 3/127, so 0.5 × (2 × 11 + 127) × 3/127 ≈ 1.7598, not 1.75.
      const item2 = 0.5 * (2 * 11 + 127) * Math.fround(3 / 127);
      assertRanks(r, request([], { pool, context, contentWeight: 0.5 }), [2, 1, 3], [item2, 1, 0]);
      assertRanks(r, request([], { pool, context: null, contentWeight: 0.5 }), [1, 2, 3], [0, 0, 0]);
    });

    test('co-occurrence and every prior add up in one score', () => {
      const r = make();
      const vectors = new Float32Array(3 * VECTOR_DIM);
      vectors[1 * VECTOR_DIM + 3] = 1;
      r.setItems(itemsOf(3, { popularity: Float32Array.of(0, 4, 8), published: u32(0, NOW, NOW - HOUR), vectors }));
      const context = new Float32Array(VECTOR_DIM);
      context[3] = 1;
      const input = request([{ weight: 1, neighbours: [[1, 0.5]] }], {
        pool: u32(2),
        popularityWeight: 1,
        recencyWeight: 1,
        contentWeight: 1,
        context,
      });
      // item 1: 0.5 + 4/8 + 1 + 1 = 3; item 2: 0 + 8/8 + 0.5 + 0 = 1.5
      assertRanks(r, input, [1, 2], [3, 1.5]);
    });

    test('equal scores rank by lower ix, not by the order candidates were gathered in', () => {
      const r = make();
      r.setItems(itemsOf(10));
      const seeds: Seed[] = [{ weight: 1, neighbours: [[9, 1], [7, 1], [8, 1]] }];
      assertRanks(r, request(seeds, { pool: u32(6, 2) }), [7, 8, 9, 2, 6], [1, 1, 1, 0, 0]);
    });

    test('a pool item that is also a neighbour keeps its neighbour score', () => {
      const r = make();
      r.setItems(itemsOf(4));
      assertRanks(r, request([{ weight: 1, neighbours: [[2, 0.5]] }], { pool: u32(2, 1) }), [2, 1], [0.5, 0]);
    });

    test('pool items rank alone when there are no seeds, score-0 ones included', () => {
      const r = make();
      r.setItems(itemsOf(6));
      assertRanks(r, request([], { pool: u32(5, 3, 4, 1, 3) }), [1, 3, 4, 5], [0, 0, 0, 0]);
    });

    test('a negative contribution ranks below score-0 pool items but is still ranked', () => {
      const r = make();
      r.setItems(itemsOf(4));
      assertRanks(r, request([{ weight: -1, neighbours: [[0, 1]] }], { pool: u32(3) }), [3, 0], [0, -1]);
    });

    test('k larger than the candidates returns all kept ones; k = 0 returns none', () => {
      const r = make();
      r.setItems(itemsOf(5));
      const seeds: Seed[] = [{ weight: 1, neighbours: [[0, 3], [1, 2], [2, 1]] }];
      assertRanks(r, request(seeds, { k: 1000 }), [0, 1, 2], [3, 2, 1]);
      assertRanks(r, request(seeds, { k: 2 }), [0, 1], [3, 2]);
      assertRanks(r, request(seeds, { k: 0 }), [], []);
    });

    test('no seeds and no pool give an empty list', () => {
      const r = make();
      r.setItems(itemsOf(5));
      assertRanks(r, request([]), [], []);
      assertRanks(r, request([{ weight: 1, neighbours: [] }]), [], []);
    });

    test('before setItems every ix is beyond n, so the list is empty', () => {
      assertRanks(make(), request([{ weight: 1, neighbours: [[0, 1]] }], { pool: u32(1) }), [], []);
    });

    test('ix beyond n are ignored in neighbours, pool and exclude', () => {
      const r = make();
      r.setItems(itemsOf(3));
      const seeds: Seed[] = [{ weight: 1, neighbours: [[3, 5], [1, 1], [0xffffffff, 9]] }];
      const input = request(seeds, { pool: u32(2, 4, 1 << 30), exclude: u32(3, 0xffffffff, 100) });
      assertRanks(r, input, [1, 2], [1, 0]);
    });
  });

  describe(`${name} rank: filters`, () => {
    // Each dropped item has the highest co-occurrence score, so only the filter keeps it out.
    const strongest = (ix: number): Seed[] => [{ weight: 1, neighbours: [[ix, 10], [0, 1]] }];

    test('an item not in catalog is never ranked', () => {
      const r = make();
      r.setItems(itemsOf(2, { flags: Uint8Array.of(RANKABLE, ITEM_ENABLED) }));
      assertRanks(r, request(strongest(1)), [0], [1]);
    });

    test('a disabled item is never ranked', () => {
      const r = make();
      r.setItems(itemsOf(2, { flags: Uint8Array.of(RANKABLE, ITEM_IN_CATALOG) }));
      assertRanks(r, request(strongest(1)), [0], [1]);
    });

    test('an item whose end is at or before now is never ranked; a later or no end is', () => {
      const r = make();
      r.setItems(itemsOf(5, { ends: u32(0, NOW, NOW - 1, NOW + 1, 1) }));
      const seeds: Seed[] = [{ weight: 1, neighbours: [[1, 4], [2, 3], [3, 2], [4, 5], [0, 1]] }];
      assertRanks(r, request(seeds), [3, 0], [2, 1]);
    });

    test('a type outside allowedTypesMask is never ranked; the unknown type passes only ALL_TYPES', () => {
      const r = make();
      r.setItems(itemsOf(5, { type: Uint8Array.of(0, 1, 2, UNKNOWN_TYPE, 40) }));
      const pool = u32(0, 1, 2, 3, 4);
      assertRanks(r, request([], { pool, allowedTypesMask: 0b101 }), [0, 2], [0, 0]);
      assertRanks(r, request([], { pool, allowedTypesMask: 0x7fffffff }), [0, 1, 2], [0, 0, 0]);
      assertRanks(r, request([], { pool, allowedTypesMask: ALL_TYPES }), [0, 1, 2, 3, 4], [0, 0, 0, 0, 0]);
      assertRanks(r, request([], { pool, allowedTypesMask: 0 }), [], []);
    });

    test('an excluded item is never ranked, and the exclusion ends with the call', () => {
      const r = make();
      r.setItems(itemsOf(40));
      assertRanks(r, request(strongest(33), { exclude: u32(33, 33, 5) }), [0], [1]);
      assertRanks(r, request(strongest(33)), [33, 0], [10, 1]);
    });

    test('only items whose bit is set in allow are ranked; no allow admits all', () => {
      const r = make();
      r.setItems(itemsOf(40));
      const pool = u32(0, 1, 33, 39);
      assertRanks(r, request([], { pool, allow: u32(0b10, 1 << 1) }), [1, 33], [0, 0]);
      assertRanks(r, request([], { pool, allow: null }), [0, 1, 33, 39], [0, 0, 0, 0]);
      assert.throws(() => r.rank(request([], { pool, allow: u32(0b10) })), /allow has 1 words for 40 items/);
    });

    test('updateItem changes one item between rankings', () => {
      const r = make();
      r.setItems(itemsOf(10));
      const pool = u32(2, 3);
      r.updateItem(3, { flags: ITEM_IN_CATALOG, type: 0, published: 0, ends: 0, vector: null });
      assertRanks(r, request([], { pool }), [2], [0]);
      const vector = new Float32Array(VECTOR_DIM).fill(0.5);
      r.updateItem(3, { flags: RANKABLE, type: 0, published: 0, ends: 0, vector });
      assertRanks(r, request([], { pool, contentWeight: 1, context: new Float32Array(VECTOR_DIM).fill(1) }), [3, 2], [16, 0]);
      assert.throws(() => r.updateItem(10, { flags: RANKABLE, type: 0, published: 0, ends: 0, vector: null }), /outside the 10 items/);
    });

    test('candidates of one call never leak into the next', () => {
      const r = make();
      r.setItems(itemsOf(10));
      assertRanks(r, request([{ weight: 1, neighbours: [[4, 1], [5, 2]] }], { pool: u32(6) }), [5, 4, 6], [2, 1, 0]);
      assertRanks(r, request([{ weight: 1, neighbours: [[5, 0.5]] }]), [5], [0.5]);
    });
  });

  describe(`${name} items and bad input`, () => {
    test('setItems again with a larger, then a smaller n replaces everything', () => {
      const r = make();
      r.setItems(itemsOf(3));
      r.setItems(itemsOf(50_000, { popularity: new Float32Array(50_000).fill(2) }));
      assertRanks(r, request([], { pool: u32(49_999, 2), popularityWeight: 1 }), [2, 49_999], [1, 1]);
      r.setItems(itemsOf(10));
      assertRanks(r, request([], { pool: u32(49_999, 2), popularityWeight: 1 }), [2], [0]);
    });

    test('growItems keeps what was held below `held` (updates included) and takes the new items from the arrays', () => {
      const n = 50_000;
      const arrays = itemsOf(n, { popularity: Float32Array.from({ length: n }, (_, i) => (i % 7) + 1), published: Uint32Array.from({ length: n }, (_, i) => NOW - i * 60) });
      const vectors = new Float32Array(n * VECTOR_DIM);
      for (let i = 0; i < n * VECTOR_DIM; i++) vectors[i] = Math.sin(i);
      arrays.vectors = vectors;
      const held = 1000;
      const grown = make();
      grown.setItems({ flags: arrays.flags.slice(0, held), type: arrays.type.slice(0, held), published: arrays.published.slice(0, held), ends: arrays.ends.slice(0, held), popularity: arrays.popularity.slice(0, held), vectors: vectors.slice(0, held * VECTOR_DIM) });
      // A change after the layout, mirrored in the arrays as a catalog view keeps them.
      const update = { flags: ITEM_IN_CATALOG, type: 0, published: 0, ends: 0, vector: null };
      grown.updateItem(3, update);
      arrays.flags[3] = update.flags;
      arrays.published[3] = 0;
      vectors.fill(0, 3 * VECTOR_DIM, 4 * VECTOR_DIM);
      grown.growItems(arrays, held);
      const whole = make();
      whole.setItems(arrays);
      const context = Float32Array.from({ length: VECTOR_DIM }, (_, d) => Math.cos(d));
      const input = request([{ weight: 1, neighbours: [[3, 5], [2, 1], [999, 2], [1000, 2], [49_999, 3]] }], {
        pool: u32(0, 3, 998, 1001, 25_000, 49_998),
        popularityWeight: 0.5,
        recencyWeight: 0.25,
        recencyHalfLifeSec: 24 * HOUR,
        contentWeight: 1,
        context,
        k: 20,
      });
      const expected = whole.rank(input);
      const [ix, score] = [[...expected.ix], [...expected.score]];
      assert.ok(!ix.includes(3), 'the disabled item stays out after the growth');
      assert.ok(ix.includes(1000) && ix.includes(49_999), 'items past the held ones are ranked');
      assertRanks(grown, input, ix, score);
    });

    test('growItems without vectors keeps the held ones and gives the new items none (a catalog view keeps no float copy)', () => {
      const held = 4;
      const r = make();
      const vectors = Float32Array.from({ length: held * VECTOR_DIM }, (_, i) => Math.sin(i + 1));
      r.setItems({ ...itemsOf(held), vectors });
      const before = Array.from({ length: held }, (_, ix) => heldVector(r, ix));
      r.growItems({ ...itemsOf(10), vectors: new Float32Array(0) }, held);
      for (let ix = 0; ix < held; ix++) assert.deepEqual(heldVector(r, ix), before[ix]);
      assert.deepEqual(heldVector(r, 7), new Array(VECTOR_DIM).fill(0));
      const context = new Float32Array(VECTOR_DIM).fill(1);
      const ranked = r.rank(request([], { pool: u32(1, 7), contentWeight: 1, context, k: 2 }));
      assert.equal(ranked.score[[...ranked.ix].indexOf(7)], 0, 'a new item has no vector to score');
    });

    test('setVectors writes a run of vectors as updateItem would, keeps the rest of each record, and refuses a run outside n', () => {
      const r = make();
      r.setItems(itemsOf(6));
      const vectors = Float32Array.from({ length: 3 * VECTOR_DIM }, (_, i) => Math.cos(i));
      r.setVectors(2, vectors);
      const one = make();
      one.setItems(itemsOf(6));
      for (let k = 0; k < 3; k++) one.updateItem(2 + k, { flags: RANKABLE, type: 0, published: 0, ends: 0, vector: vectors.subarray(k * VECTOR_DIM, (k + 1) * VECTOR_DIM) });
      for (let ix = 0; ix < 6; ix++) assert.deepEqual(heldVector(r, ix), heldVector(one, ix), `ix ${ix}`);
      assertRanks(r, request([], { pool: u32(1, 3) }), [1, 3], [0, 0]);
      assert.throws(() => r.setVectors(4, vectors), (e) => isInternalError(e) && /items 4 to 6 are outside the 6 items/.test((e as Error).message));
      assert.throws(() => r.setVectors(0, new Float32Array(VECTOR_DIM + 1)), (e) => isInternalError(e) && /not a multiple of/.test((e as Error).message));
    });

    test('addVector adds weight × the held (quantised) vector; updateItem without a vector keeps it', () => {
      const r = make();
      r.setItems(itemsOf(3));
      const vector = Float32Array.from({ length: VECTOR_DIM }, (_, d) => (d % 5) - 2);
      r.updateItem(1, { flags: RANKABLE, type: 0, published: 0, ends: 0, vector });
      const once = heldVector(r, 1);
      // Quantised: max |value| 2 is 127 steps; -2, 0 and 2 are exact, ±1 within a step.
      for (let d = 0; d < VECTOR_DIM; d++) assert.ok(Math.abs(once[d]! - vector[d]!) <= 2 / 127, `dim ${d}`);
      const out = new Float32Array(VECTOR_DIM).fill(1);
      r.addVector(1, 0.5, out);
      for (let d = 0; d < VECTOR_DIM; d++) assert.ok(Math.abs(out[d]! - (1 + 0.5 * once[d]!)) < 1e-6, `dim ${d}`);
      r.updateItem(1, { flags: ITEM_IN_CATALOG, type: 0, published: 0, ends: 0 });
      assert.deepEqual(heldVector(r, 1), once, 'a state change keeps the vector');
      r.updateItem(1, { flags: RANKABLE, type: 0, published: 0, ends: 0, vector: null });
      assert.deepEqual(heldVector(r, 1), new Array(VECTOR_DIM).fill(0), 'null clears it');
      const untouched = new Float32Array(VECTOR_DIM).fill(3);
      r.addVector(3, 1, untouched);
      assert.deepEqual([...untouched], new Array(VECTOR_DIM).fill(3), 'an ix not held adds nothing');
    });

    test('setPopularity replaces the popularity prior only', () => {
      const r = make();
      r.setItems(itemsOf(3, { popularity: Float32Array.of(1, 2, 3) }));
      r.setPopularity(Float32Array.of(3, 2, 1));
      assertRanks(r, request([], { pool: u32(0, 1, 2), popularityWeight: 3 }), [0, 1, 2], [3, 2, 1]);
    });

    test('a later change to the caller arrays does not reach the ranker', () => {
      const r = make();
      const items = itemsOf(2);
      r.setItems(items);
      items.flags[1] = 0;
      assertRanks(r, request([], { pool: u32(1) }), [1], [0]);
    });

    test('item arrays of different lengths are refused with AppError internal', () => {
      const r = make();
      assert.throws(() => r.setItems(itemsOf(3, { ends: new Uint32Array(2) })), isInternalError);
      assert.throws(() => r.setItems(itemsOf(3, { vectors: new Float32Array(3) })), isInternalError);
      r.setItems(itemsOf(3));
      assert.throws(() => r.setPopularity(new Float32Array(4)), isInternalError);
    });

    const base = () => request([{ weight: 1, neighbours: [[0, 1], [1, 1]] }, { weight: 1, neighbours: [[2, 1]] }]);
    const badInputs: Array<[string, (input: RankInput) => void]> = [
      ['seedTime shorter than seedWeight', (i) => (i.seedTime = new Uint32Array(1))],
      ['neighbourOffsets of the wrong length', (i) => (i.neighbourOffsets = u32(0, 3))],
      ['neighbourOffsets not starting at 0', (i) => (i.neighbourOffsets = u32(1, 2, 3))],
      ['neighbourOffsets decreasing', (i) => (i.neighbourOffsets = u32(0, 3, 2))],
      ['neighbourOffsets not ending at the neighbour count', (i) => (i.neighbourOffsets = u32(0, 1, 2))],
      ['neighbourWeight shorter than neighbourIx', (i) => (i.neighbourWeight = new Float32Array(2))],
      ['a context of the wrong dimension', (i) => (i.context = new Float32Array(VECTOR_DIM - 1))],
      ['a zero seed half-life', (i) => (i.seedHalfLifeSec = 0)],
      ['a negative recency half-life', (i) => (i.recencyHalfLifeSec = -1)],
      ['a NaN weight', (i) => (i.popularityWeight = NaN)],
      ['a weight beyond f32', (i) => (i.contentWeight = 1e39)],
      ['a negative k', (i) => (i.k = -1)],
      ['a fractional nowSec', (i) => (i.nowSec = 1.5)],
    ];
    for (const [what, spoil] of badInputs) {
      test(`${what} is refused with AppError internal and the ranker still works`, () => {
        const r = make();
        r.setItems(itemsOf(4));
        const input = base();
        spoil(input);
        assert.throws(() => r.rank(input), isInternalError);
        assertRanks(r, base(), [0, 1, 2], [1, 1, 1]);
      });
    }
  });
}

rankerSuite('ReferenceRanker', () => new ReferenceRanker());
rankerSuite('WasmRanker', () => new WasmRanker());

test('WasmRanker agrees with ReferenceRanker on 200 generated topK cases', () => {
  const wasm = new WasmRanker();
  const reference = new ReferenceRanker();
  const random = mulberry32(42);
  for (let c = 0; c < 200; c++) {
    const n = Math.floor(random() * 5000);
    const k = Math.floor(random() * 120);
    const values = new Float32Array(n);
    // Coarse values force ties; some candidates filtered out.
    for (let i = 0; i < n; i++) values[i] = random() < 0.1 ? -Infinity : Math.round(random() * 50) / 10;
    fill(wasm, values);
    fill(reference, values);
    assert.deepEqual([...wasm.selectTopK(n, k)], [...reference.selectTopK(n, k)], `case ${c}: n=${n} k=${k}`);
  }
});

/** Random item arrays: every flag/type/time/end combination, coarse values so scores tie. */
function generateItems(random: () => number, n: number): ItemArrays {
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
  const items = itemsOf(n);
  const withVectors = random() < 0.6;
  const vectors = new Float32Array(withVectors ? n * VECTOR_DIM : 0);
  for (let ix = 0; ix < n; ix++) {
    items.flags[ix] = random() < 0.85 ? RANKABLE : pick([0, ITEM_IN_CATALOG, ITEM_ENABLED]);
    items.type[ix] = random() < 0.9 ? Math.floor(random() * 6) : pick([UNKNOWN_TYPE, 31, 32, 40]);
    const published = random();
    items.published[ix] = published < 0.1 ? 0 : published < 0.15 ? NOW + Math.floor(random() * 10) * HOUR : NOW - Math.floor(random() * 720) * HOUR;
    const ends = random();
    items.ends[ix] = ends < 0.8 ? 0 : ends < 0.88 ? NOW - Math.floor(random() * 100) : ends < 0.9 ? NOW : NOW + 1 + Math.floor(random() * 100);
    items.popularity[ix] = random() < 0.2 ? 0 : Math.floor(random() * 20) * (random() < 0.5 ? 1 : 0.37);
    if (withVectors && random() < 0.7) {
      // Coarse rows make equal similarities; the others exercise f32 rounding.
      const coarse = random() < 0.5;
      for (let d = 0; d < VECTOR_DIM; d++) {
        const value = random() * 2 - 1;
        vectors[ix * VECTOR_DIM + d] = random() < 0.3 ? 0 : coarse ? Math.round(value * 8) / 8 : value;
      }
    }
  }
  items.vectors = vectors;
  return items;
}

/** A random request over n items: seeds, rows, pool and exclusions with duplicates and ix >= n. */
function generateRequest(random: () => number, n: number): RankInput {
  const span = Math.floor(n * 1.05) + 5; // some ix beyond n
  const ixIn = (limit: number) => Math.floor(random() * limit);
  const seeds: Seed[] = [];
  const m = Math.floor(random() * 30);
  // Rows drawn from a small hot set overlap, so neighbours are shared between seeds.
  const hot = Array.from({ length: 1 + ixIn(200) }, () => ixIn(span));
  for (let s = 0; s < m; s++) {
    const time = random() < 0.2 ? 0 : random() < 0.1 ? NOW + ixIn(1000) : NOW - ixIn(30 * 24) * HOUR - ixIn(HOUR);
    const weight = random() < 0.1 ? -0.5 : Math.round(random() * 8) / 4;
    const neighbours: Array<[number, number]> = [];
    const rowLength = ixIn(300);
    for (let j = 0; j < rowLength; j++) {
      const ix = random() < 0.5 ? hot[ixIn(hot.length)]! : ixIn(span);
      neighbours.push([ix, random() < 0.5 ? Math.round(random() * 16) / 16 : random()]);
    }
    seeds.push({ weight, time, neighbours });
  }
  const pool = Uint32Array.from({ length: ixIn(300) }, () => (random() < 0.3 ? hot[ixIn(hot.length)]! : ixIn(span)));
  const exclude = Uint32Array.from({ length: ixIn(200) }, () => (random() < 0.5 ? hot[ixIn(hot.length)]! : ixIn(span)));
  const maybe = (weight: number) => (random() < 0.3 ? 0 : weight);
  let context: Float32Array | null = null;
  if (random() < 0.5) {
    context = new Float32Array(VECTOR_DIM);
    for (let d = 0; d < VECTOR_DIM; d++) context[d] = Math.round((random() * 2 - 1) * 4) / 4;
  }
  let allow: Uint32Array | null = null;
  if (random() < 0.3) {
    allow = new Uint32Array(Math.ceil(n / 32) + ixIn(3));
    const density = random();
    for (let ix = 0; ix < n; ix++) if (random() < density) allow[ix >>> 5]! |= 1 << (ix & 31);
  }
  return request(seeds, {
    allow,
    k: ixIn(150),
    allowedTypesMask: random() < 0.5 ? ALL_TYPES : Math.floor(random() * 0x100000000),
    seedHalfLifeSec: 1 + ixIn(14 * 24) * HOUR,
    pool,
    exclude,
    popularityWeight: maybe(random() * 2),
    recencyWeight: maybe(random()),
    recencyHalfLifeSec: 1 + ixIn(72) * HOUR,
    contentWeight: maybe(random() * 3 - 1),
    context,
  });
}

function assertSameRanking(actual: RankResult, expected: RankResult, label: string): void {
  assert.deepEqual([...actual.ix], [...expected.ix], `${label}: order`);
  assertScoresClose(actual.score, expected.score, label);
}

test(`WasmRanker agrees with ReferenceRanker on ${GENERATED_CASES} generated item sets × ${RANKINGS_PER_CASE} rankings`, () => {
  const wasm = new WasmRanker();
  const reference = new ReferenceRanker();
  const random = mulberry32(20_240_601);
  let nonEmpty = 0;
  for (let c = 0; c < GENERATED_CASES; c++) {
    // A quarter of the cases are tiny, where edge cases (empty rows, all filtered) are common.
    const n = random() < 0.25 ? Math.floor(random() * 40) : Math.floor(random() * (MAX_GENERATED_ITEMS + 1));
    const items = generateItems(random, n);
    wasm.setItems(items);
    reference.setItems(items);
    for (let q = 0; q < RANKINGS_PER_CASE; q++) {
      const input = generateRequest(random, n);
      const expected = reference.rank(input);
      const actual = wasm.rank(input);
      assertSameRanking(actual, expected, `case ${c}.${q}: n=${n} k=${input.k} seeds=${input.seedWeight.length}`);
      if (expected.ix.length > 0) nonEmpty++;
    }
  }
  // Guards the generator: most cases must rank something, or agreement would prove little.
  assert.ok(nonEmpty > GENERATED_CASES * RANKINGS_PER_CASE * 0.7, `only ${nonEmpty} non-empty rankings`);
});
