import assert from 'node:assert/strict';
import { test } from 'node:test';
import { quantizeVector, VECTOR_DIM } from '../../../src/ranker/reference-ranker.ts';

test('a vector is held as i8 × one scale, each value within half a step of the original', () => {
  const v = Float32Array.from({ length: VECTOR_DIM }, (_, d) => Math.sin(d + 1) * 0.4);
  const q = new Int8Array(VECTOR_DIM + 8);
  const scale = quantizeVector(v, 0, q, 8);
  const maxAbs = Math.max(...[...v].map(Math.abs));
  assert.equal(scale, Math.fround(maxAbs / 127));
  assert.equal(Math.max(...[...q.subarray(8)].map(Math.abs)), 127, 'the largest value takes the whole range');
  for (let d = 0; d < VECTOR_DIM; d++) assert.ok(Math.abs(q[8 + d]! * scale - v[d]!) <= scale / 2 + 1e-9, `dim ${d}`);
  assert.deepEqual([...q.subarray(0, 8)], [0, 0, 0, 0, 0, 0, 0, 0], 'nothing written before outAt');
});

test('an all-zero or non-finite vector is held as none: scale 0, all zeros', () => {
  const q = new Int8Array(VECTOR_DIM).fill(5);
  assert.equal(quantizeVector(new Float32Array(VECTOR_DIM), 0, q, 0), 0);
  assert.deepEqual([...q], new Array(VECTOR_DIM).fill(0));
  const bad = new Float32Array(VECTOR_DIM).fill(0.5);
  bad[3] = Infinity;
  q.fill(5);
  assert.equal(quantizeVector(bad, 0, q, 0), 0);
  assert.deepEqual([...q], new Array(VECTOR_DIM).fill(0));
});
