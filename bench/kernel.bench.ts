// Kernel alone: µs per call of the WASM kernel beside the plain-TypeScript reference (its
// specification), same inputs from a fixed seed, built before timing:
// - kernel/<variant>/n=N: top-k selection (k = 20) over N dense candidate scores (ABI v1 topK);
// - kernel/<variant>/rank/candidates=10000: one full ranking (ABI v2 rank) over n = 100,000
//   resident items with 32-dim content vectors: 50 seeds whose neighbour rows hold 10,000
//   distinct candidates (12,500 entries, so some shared), a pool of 100 popular items, 70
//   exclusions, every prior on, a type mask, k = 20.
// Variants alternate over several rounds; figures are medians over rounds of tinybench's median
// and p99 per task, and each variant's time as a multiple of the WASM one.
// Run: npm run bench -- kernel   (BENCH_QUICK=1 for a short run, BENCH_JSON=1 for JSON lines,
// BENCH_ROUNDS=N to override the round count). It must not measure anything but the kernel.
import { mulberry32 } from '../scripts/synthetic/random.ts';
import assert from 'node:assert/strict';
import { cpus } from 'node:os';
import { Bench } from 'tinybench';
import { WasmRanker } from '../src/ranker/kernel.ts';
import { ReferenceRanker, VECTOR_DIM, type ItemArrays, type RankInput, type Ranker } from '../src/ranker/reference-ranker.ts';
import { ITEM_ENABLED, ITEM_IN_CATALOG, UNKNOWN_TYPE } from '../src/store/model-layout.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const TASK_TIME_MS = QUICK ? 200 : 1000;
const TOPK_SIZES = [10_000, 100_000];
const K = 20;
const RANK_ITEMS = 100_000;
const RANK_CANDIDATES = 10_000;
const RANK_SEEDS = 50;
const RANK_ROW_LENGTH = 250; // 50 × 250 = 12,500 row entries over 10,000 distinct candidates
const RANK_POOL = 100;
const RANK_EXTRA_EXCLUSIONS = 20;
const NOW = 1_700_000_000;
const DAY = 86_400;
const VARIANTS = ['wasm', 'reference'] as const;

let sink = 0;


/** Scores in [0, 1), a tenth of them -Infinity (not rankable). */
function seededScores(n: number, seed: number): Float32Array {
  const random = mulberry32(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const r = random();
    out[i] = random() < 0.1 ? -Infinity : r;
  }
  return out;
}

/** 100,000 items: 3% not rankable, 2% expired, 4 types plus a few unknown, skewed popularity. */
function rankItems(random: () => number): ItemArrays {
  const n = RANK_ITEMS;
  const items: ItemArrays = {
    flags: new Uint8Array(n),
    type: new Uint8Array(n),
    published: new Uint32Array(n),
    ends: new Uint32Array(n),
    popularity: new Float32Array(n),
    vectors: new Float32Array(n * VECTOR_DIM),
  };
  for (let ix = 0; ix < n; ix++) {
    items.flags[ix] = random() < 0.97 ? ITEM_IN_CATALOG | ITEM_ENABLED : ITEM_IN_CATALOG;
    items.type[ix] = random() < 0.99 ? Math.floor(random() * 4) : UNKNOWN_TYPE;
    items.published[ix] = NOW - Math.floor(random() * 60 * DAY);
    items.ends[ix] = random() < 0.02 ? NOW - DAY : 0;
    items.popularity[ix] = Math.floor(1000 / (1 + random() * 999)); // ~ 1/x: a long tail
    if (random() < 0.8) for (let d = 0; d < VECTOR_DIM; d++) items.vectors![ix * VECTOR_DIM + d] = random() * 2 - 1;
  }
  return items;
}

/** Seeds whose rows cover exactly RANK_CANDIDATES distinct ix, pool of the most popular items. */
function rankInput(random: () => number, items: ItemArrays): RankInput {
  const distinct = new Set<number>();
  while (distinct.size < RANK_CANDIDATES) distinct.add(Math.floor(random() * RANK_ITEMS));
  const candidates = [...distinct];
  const entries = [...candidates];
  while (entries.length < RANK_SEEDS * RANK_ROW_LENGTH) entries.push(candidates[Math.floor(random() * candidates.length)]!);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  const seedIx = Array.from({ length: RANK_SEEDS }, () => Math.floor(random() * RANK_ITEMS));
  const byPopularity = Array.from({ length: RANK_ITEMS }, (_, ix) => ix).sort((a, b) => items.popularity[b]! - items.popularity[a]!);
  const context = Float32Array.from({ length: VECTOR_DIM }, () => random() * 2 - 1);
  return {
    k: K,
    nowSec: NOW,
    allowedTypesMask: 0b0111,
    seedWeight: Float32Array.from(seedIx, () => 1 + Math.floor(random() * 5)),
    seedTime: Uint32Array.from(seedIx, () => NOW - Math.floor(random() * 30 * DAY)),
    seedHalfLifeSec: 7 * DAY,
    neighbourOffsets: Uint32Array.from({ length: RANK_SEEDS + 1 }, (_, s) => s * RANK_ROW_LENGTH),
    neighbourIx: Uint32Array.from(entries),
    neighbourWeight: Float32Array.from(entries, () => random()),
    pool: Uint32Array.from(byPopularity.slice(0, RANK_POOL)),
    exclude: Uint32Array.from([...seedIx, ...Array.from({ length: RANK_EXTRA_EXCLUSIONS }, () => candidates[Math.floor(random() * candidates.length)]!)]),
    popularityWeight: 0.3,
    recencyWeight: 0.2,
    recencyHalfLifeSec: 14 * DAY,
    contentWeight: 0.5,
    context,
  };
}

const rankers: Record<(typeof VARIANTS)[number], Ranker> = { wasm: new WasmRanker(), reference: new ReferenceRanker() };

// Every group times one call per variant on the same inputs.
type Call = (ranker: Ranker) => void;
const groups: Array<{ size: string; call: Call }> = [];
for (const n of TOPK_SIZES) {
  const scores = seededScores(n, 7 + n);
  groups.push({
    size: `n=${n}`,
    call: (ranker) => {
      ranker.scoresBuffer(n).set(scores);
      sink += ranker.selectTopK(n, K)[0] ?? 0;
    },
  });
}
{
  const random = mulberry32(20_240_601);
  const items = rankItems(random);
  const input = rankInput(random, items);
  for (const ranker of Object.values(rankers)) ranker.setItems(items);
  // The two must agree before their times mean anything.
  const wasmIx = [...rankers.wasm.rank(input).ix];
  assert.deepEqual(wasmIx, [...rankers.reference.rank(input).ix], 'rankers disagree on the bench input');
  assert.equal(wasmIx.length, K);
  groups.push({
    size: `rank/candidates=${RANK_CANDIDATES}`,
    call: (ranker) => {
      sink += ranker.rank(input).ix[0] ?? 0;
    },
  });
}

const medians = new Map<string, number[]>();
const p99s = new Map<string, number[]>();
const push = (map: Map<string, number[]>, key: string, value: number) => map.set(key, [...(map.get(key) ?? []), value]);

for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
  for (const { size, call } of groups) {
    const bench = new Bench({ time: TASK_TIME_MS, warmup: true });
    for (const variant of order) {
      const ranker = rankers[variant];
      bench.add(`kernel/${variant}/${size}`, () => call(ranker));
    }
    await bench.run();
    for (const task of bench.tasks) {
      const r = task.result;
      if (!('latency' in r)) throw new Error(`${task.name} did not complete`);
      push(medians, task.name, r.latency.p50 * 1000);
      push(p99s, task.name, r.latency.p99 * 1000);
    }
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: Array<Record<string, string | number>> = [];
for (const { size } of groups) {
  const wasm = median(medians.get(`kernel/wasm/${size}`)!);
  for (const variant of VARIANTS) {
    const name = `kernel/${variant}/${size}`;
    const us = median(medians.get(name)!);
    const row = {
      task: name,
      'median µs': Number(us.toFixed(2)),
      'p99 µs': Number(median(p99s.get(name)!).toFixed(2)),
      'x wasm time': Number((us / wasm).toFixed(2)),
      rounds: ROUNDS,
    };
    rows.push(row);
    if (process.env.BENCH_JSON === '1') {
      console.log(JSON.stringify({ ...row, node: process.version, cpu: cpus()[0]?.model }));
    }
  }
}
console.table(rows);
if (sink === -1) console.log(sink);
