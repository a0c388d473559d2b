// A ranking worker's neighbour-row arena (recommend/neighbour-rows.ts) over real LMDB rows: each
// row reads back as the stored one cut to the row length and scaled so its strongest is 1, a
// dropped row is read anew after the builder rewrote it, and when the arena is full every row
// is still read back right (the arena starts over).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { encodeNeighboursInto, neighboursKey, neighboursWords } from '../../../src/store/model.ts';
import { Store } from '../../../src/store/open.ts';
import { NeighbourRows } from '../../../src/recommend/neighbour-rows.ts';
import { tempDir } from '../../helpers/server.ts';

function writeRow(store: Store, ix: number, row: Array<[number, number]>): void {
  const out = new Uint32Array(neighboursWords(row.length));
  const bytes = encodeNeighboursInto(out, 0, Uint32Array.from(row, (e) => e[0]), Float32Array.from(row, (e) => e[1]), row.length);
  store.model.putSync(neighboursKey('demo', ix), Buffer.from(bytes));
}

function readRow(rows: NeighbourRows, ix: number): Array<[number, number]> {
  const start = rows.row(ix);
  return Array.from({ length: rows.lengthOf(ix) }, (_, k) => [rows.ix[start + k]!, rows.weight[start + k]!]);
}

test('rows read back cut, scaled to the strongest, re-read when dropped, right after the arena fills', () => {
  const dir = tempDir();
  const store = new Store({ dataDir: dir, mapSizeBytes: 64 * 1024 ** 2 });
  try {
    writeRow(store, 3, [[7, 4], [9, 2], [1, 1], [5, 0.5]]);
    writeRow(store, 8, [[3, 10]]);
    // A row length of 3 and an arena of 5 entries: rows 3 (3 entries) and 8 (1) fit, a third does not.
    const rows = new NeighbourRows(store, 'demo', 3, 5);
    assert.deepEqual(readRow(rows, 3), [[7, 1], [9, 0.5], [1, 0.25]]);
    assert.deepEqual(readRow(rows, 8), [[3, 1]]);
    assert.deepEqual(readRow(rows, 4), [], 'a row never written is empty');

    writeRow(store, 3, [[2, 8], [7, 4]]);
    assert.deepEqual(readRow(rows, 3), [[7, 1], [9, 0.5], [1, 0.25]], 'a row is read once until dropped');
    rows.drop(3);
    assert.deepEqual(readRow(rows, 3), [[2, 1], [7, 0.5]], 'a dropped row is read anew');

    // The re-read of 3 (2 entries after 3 + 1) already started the arena over; reads now overflow it in turn.
    writeRow(store, 11, [[4, 3], [6, 3], [8, 1], [2, 1]]);
    assert.deepEqual(readRow(rows, 11), [[4, 1], [6, 1], [8, Math.fround(1 / 3)]]);
    assert.deepEqual(readRow(rows, 8), [[3, 1]]);
    assert.deepEqual(readRow(rows, 3), [[2, 1], [7, 0.5]]);
    assert.deepEqual(readRow(rows, 11), [[4, 1], [6, 1], [8, Math.fround(1 / 3)]]);

    rows.clear();
    assert.deepEqual(readRow(rows, 3), [[2, 1], [7, 0.5]], 'after clear() rows are read again');
  } finally {
    void store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
