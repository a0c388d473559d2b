// The trained model's numeric core (src/training/linear-autoencoder.ts) on small matrices checked
// against their definitions: the inverse, EASE's zero diagonal, and DLAE's B = I − P·Λ.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gramMatrix, invertSpdInPlace, trainAutoencoder, type InteractionRows } from '../../../src/training/linear-autoencoder.ts';

function rowsOf(users: number[][]): InteractionRows {
  const offsets = [0];
  const cols: number[] = [];
  for (const items of users) {
    cols.push(...items);
    offsets.push(cols.length);
  }
  return { offsets: Uint32Array.from(offsets), cols: Uint32Array.from(cols), values: Float32Array.from(cols, () => 1) };
}

test('invertSpdInPlace gives A · A⁻¹ = I for a symmetric positive-definite matrix', () => {
  const n = 7;
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) a[i * n + j] = a[j * n + i] = ((i * 7 + j * 3) % 5) / 10;
  for (let i = 0; i < n; i++) a[i * n + i]! += n;
  const inverse = a.slice();
  invertSpdInPlace(inverse, n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += a[i * n + k]! * inverse[k * n + j]!;
      assert.ok(Math.abs(s - (i === j ? 1 : 0)) < 1e-12, `(${i}, ${j}) = ${s}`);
    }
  }
});

test('invertSpdInPlace refuses a matrix that is not positive definite', () => {
  assert.throws(() => invertSpdInPlace(Float64Array.from([1, 2, 2, 1]), 2), /not positive definite/);
});

test('gramMatrix counts co-consumption: XᵀX', () => {
  const g = gramMatrix(rowsOf([[0, 1], [1, 2], [1]]), 3);
  assert.deepEqual(Array.from(g), [1, 1, 0, 1, 3, 1, 0, 1, 1]);
});

test('EASE has a zero diagonal and links items consumed together', () => {
  const b = trainAutoencoder(rowsOf([[0, 1], [0, 1], [1, 2], [2]]), 3, { method: 'ease', l2: 1, dropout: 0 });
  for (let i = 0; i < 3; i++) assert.equal(b[i * 3 + i], 0);
  assert.ok(b[0 * 3 + 1]! > b[0 * 3 + 2]!, 'item 0 raises item 1 (consumed together twice) above item 2 (never)');
});

test('DLAE is B = I − P·Λ with Λ = p/(1−p)·diag(G) + λ', () => {
  // Two items, G = [[2, 1], [1, 1]]; p = 0.5 → Λ = diag(2 + 1, 1 + 1) = diag(3, 2); A = [[5, 1], [1, 3]].
  const b = trainAutoencoder(rowsOf([[0, 1], [0]]), 2, { method: 'dlae', l2: 1, dropout: 0.5 });
  const det = 5 * 3 - 1;
  const p = [3 / det, -1 / det, -1 / det, 5 / det];
  const expected = [1 - p[0]! * 3, -p[1]! * 2, -p[2]! * 3, 1 - p[3]! * 2];
  expected.forEach((v, i) => assert.ok(Math.abs(b[i]! - v) < 1e-6, `B[${i}] = ${b[i]}, expected ${v}`));
});
