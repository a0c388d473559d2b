// The rows of model/cooccurrence.ts (unsorted in memory, put in order at a cut and a flush) against a plain model: sums per pair,
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
  return flushedModel(new Map(), pairs, max);
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
    store.modelRoot.transactionSync(state.prepareFlush(changed));
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

test('fractional and large weights, flushed every few hundred pairs, equal the plain model cut at each flush', async () => {
  const dir = tempDir();
  const store = new Store({ dataDir: dir, mapSizeBytes: 64 * 1024 ** 2 });
  try {
    let seed = 11;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const max = 4;
    // Fresh: rows are not read before their first write; later flushes rewrite what is kept.
    const state = new CooccurrenceState(store, 'demo', max, true);
    let pairs: Array<[number, number, number]> = [];
    let expected = new Map<number, Array<[number, number]>>();
    for (let i = 0; i < 4000; i++) {
      const a = Math.floor(random() ** 2 * 30);
      const b = Math.floor(random() * 30);
      // Ratings as an import writes them (0.5 steps), and sums past the packed sort key's 2^21.
      const w = i % 3 === 0 ? 0.5 * (1 + Math.floor(random() * 10)) : i % 3 === 1 ? 2 ** 21 : 1;
      pairs.push([a, b, w]);
      state.addPair(a, b, w);
      if (i % 350 === 349 || i === 3999) {
        store.modelRoot.transactionSync(state.prepareFlush([]));
        // What the last flush kept is where the next interval's rows start.
        expected = flushedModel(expected, pairs, max);
        pairs = [];
      }
    }
    for (const [ix, row] of expected) {
      const stored = decodeNeighbours(store.model.get(neighboursKey('demo', ix)));
      const got = [...stored.ix].map((j, k) => [j, stored.weight[k]!]);
      assert.deepEqual(got, row.map(([j, weight]) => [j, Math.fround(weight)]), `row ${ix}`);
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The plain model of one flush interval: rows as the last flush left them, then `pairs` added, each cut at twice `max` and at the end. */
function flushedModel(before: Map<number, Array<[number, number]>>, pairs: Array<[number, number, number]>, max: number): Map<number, Array<[number, number]>> {
  const rows = new Map<number, Map<number, number>>([...before].map(([ix, row]) => [ix, new Map(row)]));
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
