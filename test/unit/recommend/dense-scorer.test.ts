// The dense scorer (kernel axpy and topK over a model's rows in WASM memory) against plain sums.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DenseScorer } from '../../../src/recommend/dense-scorer.ts';

test('scores are the weighted sums of rows, in f32 lanes, and top picks the best finite ones', () => {
  const n = 37; // not a multiple of 4: the scalar tail runs too
  const scorer = new DenseScorer();
  scorer.reset(n);
  let seed = 3;
  const random = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const rows = Array.from({ length: n }, () => Float32Array.from({ length: n }, () => random() * 2 - 1));
  for (const [c, row] of rows.entries()) scorer.setRow(c, new Uint8Array(row.buffer));
  scorer.scores.fill(0);
  const expected = new Float32Array(n);
  for (const [c, w] of [[3, 0.5], [10, 2], [36, -1]] as const) {
    scorer.add(c, w);
    for (let j = 0; j < n; j++) expected[j] = Math.fround(expected[j]! + Math.fround(w * rows[c]![j]!));
  }
  assert.deepEqual([...scorer.scores], [...expected]);
  scorer.scores[5] = -Infinity; // an exclusion
  const order = [...expected.keys()].filter((c) => c !== 5).sort((a, b) => expected[b]! - expected[a]! || a - b);
  assert.deepEqual([...scorer.top(4)], order.slice(0, 4));
  assert.equal(scorer.hasRow(0), true);
});

test('rows are loaded one by one: an unloaded row is reported, a reset forgets every row', () => {
  const scorer = new DenseScorer();
  scorer.reset(8);
  assert.equal(scorer.hasRow(2), false);
  scorer.setRow(2, new Uint8Array(new Float32Array(8).fill(1).buffer));
  assert.equal(scorer.hasRow(2), true);
  scorer.reset(16);
  assert.equal(scorer.hasRow(2), false);
  assert.equal(scorer.scores.length, 16);
});
