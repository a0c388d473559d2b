// The rows of builder/cooccurrence.ts (unsorted in memory, put in order at a cut and a flush) against a plain model: sums per pair
// in f32 (what is stored), each row cut to its strongest maxNeighbours (equal weights by lower ix) whenever it passes twice that,
// and stored whole, strongest first. A cut may drop a neighbour that would later have made the top; the model reproduces that
// rule exactly, so any difference is a bug. Where flushes fall changes nothing stored (issue 13: the same events arriving at
// other times give the same rows). Then: a state dropped (trim) or rebuilt (a restart) after every flush resumes from what
// was stored and ends the same.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CooccurrenceState } from '../../../src/builder/cooccurrence.ts';
import { eventWeight } from '../../../src/domain/event-weight.ts';
import { flushRows, storedModel, storedRow, withModelStore } from '../../helpers/model-store.ts';
import { mulberry32 } from '../../../scripts/synthetic/random.ts';



test('rows equal a sort of summed pairs, cut to maxNeighbours at twice it, over random pairs with ties', async () => {
  await withModelStore((store) => {
    const random = mulberry32(7);
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
    flushRows(store, state, changed);
    const touched = new Set(pairs.filter(([a, b]) => a !== b).flatMap(([a, b]) => [a, b]));
    assert.deepEqual(new Set(changed), touched, 'every rewritten row is reported for the ranking workers');
    for (const [ix, expected] of modelRows(pairs, max)) assert.deepEqual(storedRow(store, ix), expected, `row ${ix}`);
  });
});

test('fractional and large weights, flushed every few hundred pairs, store what the plain model of all pairs holds', async () => {
  await withModelStore((store) => {
    const random = mulberry32(11);
    const max = 4;
    // Fresh: rows are not read before their first write; later flushes rewrite what is kept.
    const state = new CooccurrenceState(store, 'demo', max, true);
    const pairs: Array<[number, number, number]> = [];
    for (let i = 0; i < 4000; i++) {
      const a = Math.floor(random() ** 2 * 30);
      const b = Math.floor(random() * 30);
      // Ratings as an import writes them (0.5 steps), and sums past the packed sort key's 2^21.
      const w = i % 3 === 0 ? 0.5 * (1 + Math.floor(random() * 10)) : i % 3 === 1 ? 2 ** 21 : 1;
      pairs.push([a, b, w]);
      state.addPair(a, b, w);
      if (i % 350 === 349 || i === 3999) flushRows(store, state);
    }
    for (const [ix, row] of modelRows(pairs, max)) assert.deepEqual(storedRow(store, ix), row, `row ${ix}`);
  });
});

/** The plain model: f32 sums per pair, a row cut to its strongest `max` when it passes twice that, stored whole in order. */
function modelRows(pairs: Array<[number, number, number]>, max: number): Map<number, Array<[number, number]>> {
  const rows = new Map<number, Map<number, number>>();
  const sorted = (row: Map<number, number>) => [...row].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const add = (from: number, to: number, w: number) => {
    let row = rows.get(from);
    if (!row) rows.set(from, (row = new Map()));
    row.set(to, Math.fround((row.get(to) ?? 0) + w));
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
  return new Map([...rows].map(([ix, row]) => [ix, sorted(row)]));
}

test('where flushes fall among the same pairs changes nothing stored', async () => {
  const run = (flushEvery: number) =>
    withModelStore((store) => {
      const random = mulberry32(31);
      const state = new CooccurrenceState(store, 'demo', 3, true);
      for (let i = 1; i <= 3000; i++) {
        state.addPair(Math.floor(random() ** 2 * 25), Math.floor(random() * 25), [1, 1, 2, 3, 5][Math.floor(random() * 5)]!);
        if (i % flushEvery === 0 || i === 3000) flushRows(store, state);
      }
      return storedModel(store);
    });
  const once = await run(3000);
  assert.ok(once.size >= 25, 'rows were written');
  for (const every of [1, 7, 100, 999]) assert.deepEqual(await run(every), once, `flushed every ${every} pairs`);
});

/**
 * Adds pairs weighted as the builder weighs events (domain/event-weight.ts: fractional type weights
 * times an import's own weight, so sums are not exact in f32), flushing every 97 pairs; after each
 * flush `between` may trim or replace the state. Returns the stored rows.
 */
function fractionalRun(between: 'nothing' | 'trim' | 'restart'): Promise<Map<string, unknown>> {
  return withModelStore((store) => {
    const random = mulberry32(23);
    const weights = { detail_pageview: 0.3, item_interaction: 1.1, purchase: 2.7 };
    const types = Object.keys(weights);
    const max = 6;
    let state = new CooccurrenceState(store, 'demo', max, true);
    for (let i = 1; i <= 3000; i++) {
      const event = { event_type: types[Math.floor(random() * types.length)]!, weight: i % 4 === 0 ? 0.7 : undefined };
      const w = eventWeight(weights, event as Parameters<typeof eventWeight>[1]);
      state.addPair(Math.floor(random() ** 2 * 30), Math.floor(random() * 30), w);
      if (i % 97 !== 0 && i !== 3000) continue;
      flushRows(store, state);
      // The rows written are dropped once the commit is readable (a transactionSync's is at once here).
      if (between === 'trim') state.trim(0);
      // Not fresh: its rows are read back from LMDB, as after a builder restart.
      if (between === 'restart') state = new CooccurrenceState(store, 'demo', max);
    }
    return storedModel(store);
  });
}

test('with fractional event weights, a state restarted after every flush stores the same rows as one never restarted', async () => {
  const straight = await fractionalRun('nothing');
  assert.ok(straight.size >= 30, 'rows were written');
  const restarted = await fractionalRun('restart');
  const differing = [...straight].filter(([key, row]) => restarted.get(key) !== row).map(([key]) => key);
  assert.deepEqual(differing, [], 'rows differ after restarts');
  assert.deepEqual(restarted, straight);
});

test('trim(0) after every flush (rows read back from LMDB) stores the same rows as no trim', async () => {
  assert.deepEqual(await fractionalRun('trim'), await fractionalRun('nothing'));
});

test('a row is cut to its strongest neighbours when it passes twice the bound, and a flush stores it whole', async () => {
  await withModelStore((store) => {
    const state = new CooccurrenceState(store, 'demo', 2, true);
    const row = (ix: number) => storedRow(store, ix);
    // Five neighbours, past twice the bound (4): cut at once to the strongest two, 2 and 4 (equal
    // weights, lower ix first); 1's 1.5 is dropped, so its 2.5 later starts from nothing.
    for (const [j, w] of [[1, 1.5], [2, 3], [3, 2], [4, 3], [5, 0.5]] as const) state.addPair(0, j, w);
    state.addPair(0, 1, 2.5);
    state.addPair(0, 3, 1);
    flushRows(store, state);
    // Four neighbours, over the bound but not twice it: stored whole, in order.
    assert.deepEqual(row(0), [[2, 3], [4, 3], [1, 2.5], [3, 1]]);
    assert.deepEqual(row(1), [[0, 4]], 'the other side of a dropped pair keeps its whole sum');
    // The flush cut nothing: 1 goes on from 2.5, and the fifth neighbour cuts the row to 1 (6) and 2 (3.5).
    state.addPair(0, 2, 0.5);
    state.addPair(0, 1, 3.5);
    state.addPair(0, 5, 0.5);
    flushRows(store, state);
    assert.deepEqual(row(0), [[1, 6], [2, 3.5]]);
    assert.deepEqual(row(4), [[0, 3]]);
  });
});

test("maxNeighbours up to the schema's 10,000 is accepted; one whose rows outgrow u16 table entries is refused", async () => {
  await withModelStore((store) => {
    new CooccurrenceState(store, 'demo', 10_000);
    new CooccurrenceState(store, 'demo', 32_767);
    assert.throws(() => new CooccurrenceState(store, 'demo', 32_768), RangeError);
  });
});

test('a row stored under a larger maxNeighbours loads cut to its strongest entries', async () => {
  await withModelStore((store) => {
    const wide = new CooccurrenceState(store, 'demo', 20, true);
    for (let j = 1; j <= 30; j++) wide.addPair(0, j, j);
    flushRows(store, wide);
    // Restarted with a bound of 4: row 0's 30 stored entries are more than twice it, so the row
    // loads cut to its strongest 4, as a cut under the new bound keeps them.
    const narrow = new CooccurrenceState(store, 'demo', 4);
    narrow.addPair(0, 99, 100);
    flushRows(store, narrow);
    assert.deepEqual(storedRow(store, 0), [[99, 100], [30, 30], [29, 29], [28, 28], [27, 27]]);
  });
});
