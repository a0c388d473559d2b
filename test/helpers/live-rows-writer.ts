// A worker thread that changes co-occurrence rows in shared memory as the model builder does, as
// fast as it can, until `stop` is set: for the concurrent reader test
// (test/unit/store/live-rows.test.ts). It pairs items of the same residue mod RESIDUES only, so
// every neighbour of row r is ≡ r: a reader that copied another row's table (one freed by a move
// to a larger class or a cut, and taken again) sees a neighbour of another residue. Rows grow
// past their classes, are cut, flushed to a real LMDB, dropped (trim) and read back.
import { rmSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { CooccurrenceState } from '../../src/builder/cooccurrence.ts';
import type { LiveRowsMemory } from '../../src/store/live-rows.ts';
import { Store } from '../../src/store/open.ts';
import { mulberry32 } from '../../scripts/synthetic/random.ts';

const { live, stop, rows, residues, dataDir } = workerData as { live: LiveRowsMemory; stop: SharedArrayBuffer; rows: number; residues: number; dataDir: string };
const stopped = new Int32Array(stop);
const store = new Store({ dataDir, mapSizeBytes: 256 * 1024 ** 2 });
const state = new CooccurrenceState(store, 'demo', 20, true, live);
const random = mulberry32(1);
for (let round = 0; Atomics.load(stopped, 0) === 0; round++) {
  for (let i = 0; i < 20_000; i++) {
    const a = Math.floor(random() ** 2 * rows);
    // Up to ~120 neighbours a row: rows pass every size class and are cut, freeing tables others take.
    const b = a + residues * (Math.floor(random() * 120) - 60);
    if (b >= 0 && b < rows) state.addPair(a, b, 1 + Math.floor(random() * 3));
  }
  state.startRows();
  const put = state.prepareRows(Infinity, round);
  store.modelRoot.transactionSync(() => {
    put();
  });
  if (round % 3 === 2) state.trim(0);
}
await store.close();
rmSync(dataDir, { recursive: true, force: true });
