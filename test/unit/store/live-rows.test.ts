// The model builder's co-occurrence rows read from the shared memory they live in
// (store/live-rows.ts), as a ranking worker reads them: the same rows, in the same order, as the
// flush stores in LMDB; none for a row the builder does not hold; none after a new builder takes
// the memory or a trim drops what was written; and never a torn row beside a writer thread.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { CooccurrenceState } from '../../../src/builder/cooccurrence.ts';
import { createLiveRows, LiveRowReader, type LiveRowsMemory } from '../../../src/store/live-rows.ts';
import type { Store } from '../../../src/store/open.ts';
import { NeighbourRowReader } from '../../../src/store/model-layout.ts';
import { tempDir } from '../../helpers/server.ts';
import { flushRows, storedRow, withModelStore } from '../../helpers/model-store.ts';
import { mulberry32 } from '../../../scripts/synthetic/random.ts';

/** ix's row from the shared memory as [ix, weight] pairs, or null when the builder holds none. */
function liveRow(reader: LiveRowReader, ix: number): Array<[number, number]> | null {
  const rows = new NeighbourRowReader();
  const n = reader.read(ix, rows);
  if (n < 0) return null;
  return Array.from({ length: n }, (_, k) => [rows.ix(k), rows.weight(k)]);
}



/** A fresh builder state on new shared memory, and a ranking worker's reader of it. */
function sharedState(store: Store, maxNeighbours: number): { live: LiveRowsMemory; reader: LiveRowReader; state: CooccurrenceState } {
  const live = createLiveRows(['demo']).demo!;
  return { live, reader: new LiveRowReader(live, maxNeighbours), state: new CooccurrenceState(store, 'demo', maxNeighbours, true, live) };
}

test('a row read from the shared memory is the row the flush stores, strongest first; an untouched row is not held', async () => {
  await withModelStore((store) => {
    const { reader, state } = sharedState(store, 5);
    const random = mulberry32(3);
    const touched = new Set<number>();
    for (let i = 0; i < 3000; i++) {
      // Hot rows pass every size class and are cut; fractional weights take the comparator sort.
      const a = Math.floor(random() ** 2 * 60);
      const b = Math.floor(random() * 60);
      state.addPair(a, b, i % 5 === 0 ? 0.5 : 1 + Math.floor(random() * 3));
      if (a !== b) touched.add(a).add(b);
    }
    const before = new Map([...touched].map((ix) => [ix, liveRow(reader, ix)]));
    flushRows(store, state);
    for (const ix of touched) {
      assert.deepEqual(before.get(ix), storedRow(store, ix), `row ${ix}`);
      assert.ok(before.get(ix)!.length > 0);
    }
    assert.equal(liveRow(reader, 60), null, 'a row the builder never touched');
    assert.equal(liveRow(reader, 100_000), null, 'past the rows the memory holds');
  });
});

test('publish tells each changed row once; a new builder on the same memory drops what the last one held', async () => {
  await withModelStore((store) => {
    const { live, reader, state } = sharedState(store, 10);
    state.addPair(1, 2, 1);
    state.addPair(1, 3, 1);
    const changed: number[] = [];
    state.publish(changed);
    assert.deepEqual(changed.sort(), [1, 2, 3]);
    const again: number[] = [];
    state.publish(again);
    assert.deepEqual(again, [], 'nothing changed since');
    assert.deepEqual(liveRow(reader, 1), [[2, 1], [3, 1]]);
    // A restarted builder thread: its predecessor's rows (never written) are dropped, a read goes to LMDB.
    new CooccurrenceState(store, 'demo', 10, true, live);
    for (const ix of [1, 2, 3]) assert.equal(liveRow(reader, ix), null, `row ${ix}`);
  });
});

test('a trim drops the rows the flush wrote once its commit is readable; rows changed since stay', async () => {
  await withModelStore((store) => {
    const { reader, state } = sharedState(store, 10);
    state.addPair(1, 2, 1);
    state.addPair(4, 5, 2);
    flushRows(store, state);
    // Applied after the flush, before its commit is readable: not written, so kept.
    state.addPair(4, 6, 1);
    assert.deepEqual(liveRow(reader, 1), [[2, 1]], 'held until the commit is readable');
    // What the builder does once the commit is readable.
    state.trim(0);
    assert.equal(liveRow(reader, 1), null);
    assert.equal(liveRow(reader, 2), null);
    assert.deepEqual(liveRow(reader, 4), [[5, 2], [6, 1]]);
    // A dropped row comes back from LMDB when the builder touches it again.
    state.addPair(1, 7, 3);
    assert.deepEqual(liveRow(reader, 1), [[7, 3], [2, 1]]);
  });
});

test('a reader beside a writer thread that adds, grows, cuts, flushes and trims as fast as it can never gets a torn row', async () => {
  const live = createLiveRows(['demo']).demo!;
  const ROWS = 3000;
  const RESIDUES = 7;
  const stop = new SharedArrayBuffer(4);
  const worker = new Worker(new URL('../../../src/threads/ts-worker.mjs', import.meta.url), {
    // Not the test process's preloads (a TypeScript one a worker cannot load): threads/ts-worker.mjs registers tsx itself.
    execArgv: [],
    workerData: { entry: new URL('../../helpers/live-rows-writer.ts', import.meta.url).href, live, stop, rows: ROWS, residues: RESIDUES, dataDir: tempDir() },
  });
  const exited = new Promise((resolve, reject) => worker.once('exit', resolve).once('error', reject));
  const reader = new LiveRowReader(live, 20);
  const rows = new NeighbourRowReader();
  let [found, reads] = [0, 0];
  const until = performance.now() + 2000;
  try {
    while (performance.now() < until) {
      for (let r = 0; r < ROWS; r++, reads++) {
        const n = reader.read(r, rows);
        if (n < 0) continue;
        found++;
        assert.ok(n <= 41, `row ${r}: ${n} neighbours, more than a row holds`);
        for (let k = 0; k < n; k++) {
          assert.equal(rows.ix(k) % RESIDUES, r % RESIDUES, `row ${r}: neighbour ${rows.ix(k)} of another row`);
          assert.ok(Number.isInteger(rows.weight(k)) && rows.weight(k) >= 1, `row ${r}: weight ${rows.weight(k)}`);
          if (k > 0) assert.ok(rows.weight(k) <= rows.weight(k - 1), `row ${r}: not strongest first`);
        }
      }
      // Let the writer's thread run on a busy core too.
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    Atomics.store(new Int32Array(stop), 0, 1);
    await exited;
  }
  assert.ok(found > reads / 100, `rows were found in the shared memory (${found} of ${reads} reads)`);
});
