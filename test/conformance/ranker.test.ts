// One suite, run against every Ranker: the WASM kernel must agree with the reference exactly.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WasmRanker } from '../../src/recommend/kernel.ts';
import { ReferenceRanker, type Ranker } from '../../src/recommend/reference-ranker.ts';

/** Deterministic PRNG (mulberry32) so every run checks the same generated cases. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function fill(ranker: Ranker, values: ArrayLike<number>): void {
  ranker.scoresBuffer(values.length).set(values);
}

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
  });
}

rankerSuite('ReferenceRanker', () => new ReferenceRanker());
rankerSuite('WasmRanker', () => new WasmRanker());

test('WasmRanker agrees with ReferenceRanker on 200 generated cases', () => {
  const wasm = new WasmRanker();
  const reference = new ReferenceRanker();
  const random = rng(42);
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
