// The sorted-as-it-changes rows of model/cooccurrence.ts against a plain model: sums per pair,
// then each row sorted strongest first (equal weights by lower ix) and cut to maxNeighbours.
// The cut while adding (at twice the bound) may drop a neighbour that would later have made the
// top; the model reproduces that rule exactly, so any difference is a bug.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { CooccurrenceState } from '../../../src/model/cooccurrence.ts';
import { decodeNeighbours, neighboursKey } from '../../../src/store/model.ts';
import { Store } from '../../../src/store/open.ts';
import { tempDir } from '../../helpers/server.ts';

function modelRows(pairs: Array<[number, number, number]>, max: number): Map<number, Array<[number, number]>> {
  const rows = new Map<number, Map<number, number>>();
  const sorted = (row: Map<number, number>) => [...row].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const add = (from: number, to: number, w: number) => {
    let row = rows.get(from);
    if (!row) rows.set(from, (row = new Map()));
    row.set(to, (row.get(to) ?? 0) + w);
    if (row.size > 2 * max) {
      const keep = sorted(row).slice(0, max);
      row.clear();
      for (const [ix, weight] of keep) row.set(ix, weight);
    }
  };
  for (const [a, b, w] of pairs) {
    if (a === b) continue;
    add(a, b, w);
    add(b, a, w);
  }
  return new Map([...rows].map(([ix, row]) => [ix, sorted(row).slice(0, max)]));
}

test('rows equal a sort of summed pairs, cut to maxNeighbours, over random pairs with ties', async () => {
  const dir = tempDir();
  const store = new Store({ dataDir: dir, mapSizeBytes: 64 * 1024 ** 2 });
  try {
    let seed = 7;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const max = 5;
    const state = new CooccurrenceState(store, 'demo', max);
    const pairs: Array<[number, number, number]> = [];
    for (let i = 0; i < 5000; i++) {
      // A few hot items and integer weights: many equal weights, so ties are ordered by ix.
      const a = Math.floor(random() ** 2 * 40);
      const b = Math.floor(random() * 40);
      const w = [1, 1, 2, 3, 5][Math.floor(random() * 5)]!;
      pairs.push([a, b, w]);
      state.addPair(a, b, w);
    }
    const changed: number[] = [];
    store.root.transactionSync(state.prepareFlush(changed));
    const touched = new Set(pairs.filter(([a, b]) => a !== b).flatMap(([a, b]) => [a, b]));
    assert.deepEqual(new Set(changed), touched, 'every rewritten row is reported for the ranking workers');
    for (const [ix, expected] of modelRows(pairs, max)) {
      const stored = decodeNeighbours(store.model.get(neighboursKey('demo', ix)));
      const got = [...stored.ix].map((j, k) => [j, stored.weight[k]!]);
      assert.deepEqual(got, expected, `row ${ix}`);
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
