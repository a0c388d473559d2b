// λ chosen per build (src/model/tune-l2.ts) on MovieLens 100k ratings read in place: its
// held-out nDCG per candidate equals the one computed the long way (the dense model trained on
// the rows without the held-out items, each user scored as x·B), for DLAE and EASE; the best
// candidate wins and ties keep the configured λ.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { trainAutoencoder, type AutoencoderOptions, type InteractionRows } from '../../../src/model/linear-autoencoder.ts';
import { headRows } from '../../../src/model/sparse-autoencoder.ts';
import { chooseL2 } from '../../../src/model/tune-l2.ts';

const DATA = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'datasets', 'ml-100k', 'u.data');

/** The first `users` users' ratings over the `n` most rated items (columns most rated first); latest = each user's last rating by time. */
function movieLens(users: number, n: number) {
  const ratings = readFileSync(DATA, 'utf8').trim().split('\n').map((l) => l.split('\t').map(Number) as [number, number, number, number]);
  const count = new Map<number, number>();
  for (const [, item] of ratings) count.set(item, (count.get(item) ?? 0) + 1);
  const columns = new Map([...count].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, n).map(([item], c) => [item, c]));
  const byUser = new Map<number, Array<[col: number, rating: number, time: number]>>();
  for (const [user, item, rating, time] of ratings) {
    const c = columns.get(item);
    if (user > users || c === undefined) continue;
    byUser.set(user, [...(byUser.get(user) ?? []), [c, rating, time]]);
  }
  const offsets = [0];
  const cols: number[] = [];
  const values: number[] = [];
  const latest: number[] = [];
  for (const entries of byUser.values()) {
    let last = 0;
    entries.forEach(([c, rating, time], k) => {
      if (time > entries[last]![2]) last = k;
      cols.push(c);
      values.push(rating);
    });
    latest.push(cols.length - entries.length + last);
    offsets.push(cols.length);
  }
  const rows: InteractionRows = { offsets: Uint32Array.from(offsets), cols: Uint32Array.from(cols), values: Float32Array.from(values) };
  return { rows, latest: Uint32Array.from(latest) };
}

/** Mean nDCG@10 of the held-out items the long way; users chosen as chooseL2 does (all eligible: fewer than its sample size). */
function heldOutNdcg(rows: InteractionRows, latest: Uint32Array, n: number, options: AutoencoderOptions): number {
  const heldOut = new Uint8Array(rows.cols.length);
  const validation: number[] = [];
  for (let u = 0; u + 1 < rows.offsets.length; u++) {
    if (rows.offsets[u + 1]! - rows.offsets[u]! - 1 < 2) continue;
    validation.push(u);
    heldOut[latest[u]!] = 1;
  }
  const b = trainAutoencoder(headRows(rows, n, heldOut), n, options);
  let gain = 0;
  for (const u of validation) {
    const kept = new Map<number, number>();
    for (let e = rows.offsets[u]!; e < rows.offsets[u + 1]!; e++) if (e !== latest[u]) kept.set(rows.cols[e]!, rows.values[e]!);
    const score = (j: number) => [...kept].reduce((s, [i, x]) => s + x * b[i * n + j]!, 0);
    const target = score(rows.cols[latest[u]!]!);
    let rank = 0;
    for (let j = 0; j < n; j++) if (!kept.has(j) && score(j) > target + 1e-9 * Math.abs(target)) rank++;
    if (rank < 10) gain += 1 / Math.log2(rank + 2);
  }
  return gain / validation.length;
}

for (const method of ['dlae', 'ease'] as const) {
  test(`${method}: each candidate's held-out nDCG@10 is the dense model's, and the best candidate is chosen`, () => {
    const n = 80;
    const { rows, latest } = movieLens(150, n);
    const options = { method, l2: 50, dropout: method === 'dlae' ? 0.5 : 0 };
    const candidates = [5, 50, 500, 5000];
    const choice = chooseL2(rows, latest, n, options, candidates);
    assert.equal(choice.validationUsers, 150);
    candidates.forEach((l2, c) => assert.ok(Math.abs(choice.ndcg[c]! - heldOutNdcg(rows, latest, n, { ...options, l2 })) < 1e-3, `λ ${l2}`));
    // The candidates are far apart: they do not all rank alike, and the winner is the best one.
    assert.ok(new Set(choice.ndcg.map((g) => g.toFixed(4))).size > 1, JSON.stringify(choice.ndcg));
    assert.equal(choice.l2, candidates[choice.ndcg.indexOf(Math.max(...choice.ndcg))]);
  });
}

test('ties keep the configured λ; with no user to hold an item out for, the configured λ stands', () => {
  const { rows, latest } = movieLens(60, 40);
  const same = chooseL2(rows, latest, 40, { method: 'dlae', l2: 30, dropout: 0.5 }, [30, 30]);
  assert.equal(same.l2, 30);
  // Held-out items outside the head are not scored: a head of one column scores nobody.
  const none = chooseL2(rows, latest, 1, { method: 'dlae', l2: 30, dropout: 0.5 }, [10, 30, 90]);
  assert.deepEqual([none.l2, none.validationUsers, none.ndcg], [30, 0, []]);
});
