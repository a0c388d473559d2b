// Kernel alone: µs per top-k selection over n candidate scores, the WASM kernel beside the
// plain-TypeScript reference (its specification), same inputs from a fixed seed. Variants
// alternate over several rounds; figures are medians and p99 of tinybench samples.
// Run: npm run bench -- kernel   (BENCH_QUICK=1 for a short run, BENCH_JSON=1 for JSON lines)
import { cpus } from 'node:os';
import { Bench } from 'tinybench';
import { WasmRanker } from '../src/recommend/kernel.ts';
import { ReferenceRanker, type Ranker } from '../src/recommend/reference-ranker.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const SIZES = [10_000, 100_000];
const K = 20;

let sink = 0;

function seededScores(n: number, seed: number): Float32Array {
  let a = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    out[i] = a % 10 === 0 ? -Infinity : a / 4294967296;
  }
  return out;
}

const rankers: Record<string, Ranker> = { wasm: new WasmRanker(), reference: new ReferenceRanker() };
const rows: Array<Record<string, string | number>> = [];
const medians = new Map<string, number[]>();
const p99s = new Map<string, number[]>();

for (let round = 0; round < ROUNDS; round++) {
  for (const n of SIZES) {
    const scores = seededScores(n, 7 + n);
    const order = round % 2 === 0 ? ['wasm', 'reference'] : ['reference', 'wasm'];
    const bench = new Bench({ time: QUICK ? 200 : 1000, warmup: true });
    for (const variant of order) {
      const ranker = rankers[variant]!;
      bench.add(`kernel/${variant}/n=${n}`, () => {
        ranker.scoresBuffer(n).set(scores);
        sink += ranker.selectTopK(n, K)[0] ?? 0;
      });
    }
    await bench.run();
    for (const task of bench.tasks) {
      const r = task.result;
      if (!('latency' in r)) throw new Error(`${task.name} did not complete`);
      const m = medians.get(task.name) ?? [];
      m.push(r.latency.p50 * 1000);
      medians.set(task.name, m);
      const p = p99s.get(task.name) ?? [];
      p.push(r.latency.p99 * 1000);
      p99s.set(task.name, p);
    }
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const n of SIZES) {
  const wasm = median(medians.get(`kernel/wasm/n=${n}`)!);
  for (const variant of ['wasm', 'reference']) {
    const name = `kernel/${variant}/n=${n}`;
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
