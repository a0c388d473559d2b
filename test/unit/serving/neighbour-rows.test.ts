// A ranking worker's neighbour-row arena (serving/neighbour-rows.ts) over real LMDB rows: each
// row reads back as the stored one (stored in no order) sorted strongest first, equal weights by
// lower ix, cut to the row length and scaled so its strongest is 1, a
// dropped row is read anew after the builder rewrote it, and when the arena is full every row
// is still read back right (the arena starts over); rows fill pages without spanning two, and
// growing the arena page by page keeps every row read before right.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { encodeNeighboursInto, neighboursKey, neighboursWords } from '../../../src/store/model-layout.ts';
import { Store } from '../../../src/store/open.ts';
import { NeighbourRows } from '../../../src/serving/neighbour-rows.ts';
import { tempDir } from '../../helpers/server.ts';

function writeRow(store: Store, ix: number, row: Array<[number, number]>): void {
  const out = new Uint32Array(neighboursWords(row.length));
  const bytes = encodeNeighboursInto(out, 0, Uint32Array.from(row, (e) => e[0]), Float32Array.from(row, (e) => e[1]), row.length);
  store.model.putSync(neighboursKey('demo', ix), Buffer.from(bytes));
}

function readRow(rows: NeighbourRows, ix: number): Array<[number, number]> {
  const at = rows.row(ix);
  const start = rows.offsetOf(at);
  return Array.from({ length: rows.lengthOf(ix) }, (_, k) => [rows.ixOf(at)[start + k]!, rows.weightOf(at)[start + k]!]);
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

    // Stored in table order, not strongest first: read back sorted.
    writeRow(store, 3, [[7, 4], [2, 8]]);
    assert.deepEqual(readRow(rows, 3), [[7, 1], [9, 0.5], [1, 0.25]], 'a row is read once until dropped');
    rows.drop(3);
    assert.deepEqual(readRow(rows, 3), [[2, 1], [7, 0.5]], 'a dropped row is read anew');

    // The re-read of 3 (2 entries after 3 + 1) already started the arena over; reads now overflow it in turn.
    writeRow(store, 11, [[6, 3], [8, 1], [4, 3], [2, 1]]);
    assert.deepEqual(readRow(rows, 11), [[4, 1], [6, 1], [2, Math.fround(1 / 3)]], 'equal weights by lower ix');
    assert.deepEqual(readRow(rows, 8), [[3, 1]]);
    assert.deepEqual(readRow(rows, 3), [[2, 1], [7, 0.5]]);
    assert.deepEqual(readRow(rows, 11), [[4, 1], [6, 1], [2, Math.fround(1 / 3)]]);

    rows.clear();
    assert.deepEqual(readRow(rows, 3), [[2, 1], [7, 0.5]], 'after clear() rows are read again');
  } finally {
    void store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rows fill 64K-entry pages, never span two, and read back right across pages and a start over', () => {
  const dir = tempDir();
  const store = new Store({ dataDir: dir, mapSizeBytes: 256 * 1024 ** 2 });
  try {
    // 100-entry rows: 655 fit a page (65,500 of 65,536 entries), three pages hold 1,965.
    const rowOf = (ix: number): Array<[number, number]> => Array.from({ length: 100 }, (_, k) => [ix + k + 1, 200 - k]);
    const expected = (ix: number) => rowOf(ix).map(([n, w]) => [n, Math.fround(w / 200)]);
    for (let ix = 0; ix < 2000; ix++) writeRow(store, ix, rowOf(ix));
    const rows = new NeighbourRows(store, 'demo', 100, 3 * 65536);
    for (let ix = 0; ix < 1965; ix++) assert.deepEqual(readRow(rows, ix), expected(ix), `row ${ix}`);
    assert.notEqual(rows.ixOf(rows.row(0)), rows.ixOf(rows.row(655)), 'row 655 starts the second page');
    assert.equal(rows.offsetOf(rows.row(655)), 0);
    assert.equal(rows.offsetOf(rows.row(654)), 65400, 'the last row of a page ends inside it');
    // Rows read on the first page stay right while later pages fill.
    assert.deepEqual(readRow(rows, 3), expected(3));
    // The 1,966th row does not fit: the arena starts over, and every row still reads back right.
    assert.deepEqual(readRow(rows, 1999), expected(1999));
    assert.equal(rows.offsetOf(rows.row(1999)), 0);
    for (const ix of [0, 654, 655, 1964]) assert.deepEqual(readRow(rows, ix), expected(ix), `row ${ix} after the start over`);
  } finally {
    void store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
