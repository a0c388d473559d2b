// The sparse trained model (src/training/sparse-autoencoder.ts) against the dense one it stands
// for: a head row is the dense row pruned by magnitude, a tail column regressed on its whole
// neighbourhood is the dense column, and every item of two users or more gets a row.
import { mulberry32 } from '../../../scripts/synthetic/random.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { trainAutoencoder, type InteractionRows } from '../../../src/training/linear-autoencoder.ts';
import type { SparseRows } from '../../../src/store/trained-model.ts';
import { trainSparseAutoencoder } from '../../../src/training/sparse-autoencoder.ts';

/** Deterministic users over `n` items: every pair of items shares some users. */
function rowsOf(users: number, n: number, seed = 7): InteractionRows {
  const next = mulberry32(seed);
  const offsets = [0];
  const cols: number[] = [];
  const values: number[] = [];
  for (let u = 0; u < users; u++) {
    for (let i = 0; i < n; i++) {
      if (next() < 0.45) {
        cols.push(i);
        values.push(1 + Math.floor(next() * 3));
      }
    }
    offsets.push(cols.length);
  }
  return { offsets: Uint32Array.from(offsets), cols: Uint32Array.from(cols), values: Float32Array.from(values) };
}

const rowOf = (m: SparseRows, s: number) => {
  const out = new Map<number, number>();
  for (let e = m.offsets[s]!; e < m.offsets[s + 1]!; e++) out.set(m.cols[e]!, m.weights[e]!);
  return out;
};
const OPTIONS = { method: 'dlae', l2: 5, dropout: 0.3 } as const;

test('head rows are the dense rows, largest magnitudes first, pruned to rowLength without the diagonal', () => {
  const n = 12;
  const rows = rowsOf(60, n);
  const dense = trainAutoencoder(rows, n, OPTIONS);
  const sparse = trainSparseAutoencoder(rows, n, { ...OPTIONS, denseItems: n, rowLength: 5, neighbourhood: 4 });
  for (let s = 0; s < n; s++) {
    const expected = [...Array(n).keys()].filter((j) => j !== s).sort((a, b) => Math.abs(dense[s * n + b]!) - Math.abs(dense[s * n + a]!)).slice(0, 5);
    const got = [...sparse.cols.subarray(sparse.offsets[s]!, sparse.offsets[s + 1]!)];
    assert.deepEqual(got, expected, `row ${s}`);
    for (const [j, w] of rowOf(sparse, s)) assert.ok(Math.abs(w - dense[s * n + j]!) < 1e-6, `B[${s}][${j}]`);
  }
});

test('a tail column regressed on every co-occurring item is the dense column', () => {
  const n = 10;
  const rows = rowsOf(80, n, 11);
  const dense = trainAutoencoder(rows, n, OPTIONS);
  const sparse = trainSparseAutoencoder(rows, n, { ...OPTIONS, denseItems: 0, rowLength: n, neighbourhood: n - 1 });
  for (let s = 0; s < n; s++) {
    const row = rowOf(sparse, s);
    assert.equal(row.size, n - 1, `row ${s} covers every other item`);
    for (const [j, w] of row) assert.ok(Math.abs(w - dense[s * n + j]!) < 1e-5, `B[${s}][${j}]: ${w} vs ${dense[s * n + j]}`);
  }
});

test('with a small dense head, every item that co-occurs gets a row, and a row never exceeds rowLength', () => {
  const n = 40;
  const rows = rowsOf(50, n, 3);
  const sparse = trainSparseAutoencoder(rows, n, { ...OPTIONS, denseItems: 5, rowLength: 8, neighbourhood: 6 });
  for (let s = 0; s < n; s++) {
    const length = sparse.offsets[s + 1]! - sparse.offsets[s]!;
    assert.ok(length > 0 && length <= 8, `row ${s}: ${length} weights`);
    assert.ok(!rowOf(sparse, s).has(s), `row ${s} has no diagonal`);
  }
});
