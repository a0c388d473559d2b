// The row board (store/row-board.ts): neighbour rows the model builder published and has not
// yet written to LMDB, read by the ranking workers before LMDB. Round trip, newer versions,
// flips and clears, the bounds, the rows a flush writes (into a real LMDB), and a reader on this
// thread beside a writer thread that flips and clears as fast as it can: never a torn row.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { open } from 'lmdb';
import { BOARD_ARENA_WORDS, BOARD_MAX_ROWS, createRowBoards, RowBoardReader, RowBoardWriter } from '../../../src/store/row-board.ts';
import { decodeNeighbours, encodeNeighboursInto, NeighbourRowReader, neighboursWords } from '../../../src/store/model.ts';
import { tempDir } from '../../helpers/server.ts';

/** An encoded row whose neighbours are `ix` with weights `weight`. */
function row(ix: number[], weight: number[]): Uint32Array {
  const out = new Uint32Array(neighboursWords(ix.length));
  encodeNeighboursInto(out, 0, Uint32Array.from(ix), Float32Array.from(weight), ix.length);
  return out;
}

function board(): { writer: RowBoardWriter; reader: RowBoardReader } {
  const memory = createRowBoards(['demo']).demo!;
  return { writer: new RowBoardWriter(memory), reader: new RowBoardReader(memory) };
}

function publish(writer: RowBoardWriter, ix: number, encoded: Uint32Array): void {
  assert.ok(writer.fits(1, encoded.length));
  writer.put(ix, encoded, 0, encoded.length);
}

/** What the reader finds of ix: its neighbours and weights, or null (not on the board). */
function read(reader: RowBoardReader, ix: number): { ix: number[]; weight: number[] } | null {
  const rows = new NeighbourRowReader();
  const n = reader.read(ix, rows);
  if (n < 0) return null;
  return { ix: Array.from({ length: n }, (_, k) => rows.ix(k)), weight: Array.from({ length: n }, (_, k) => rows.weight(k)) };
}

test('a published row reads back exactly; an ix never published is not on the board', () => {
  const { writer, reader } = board();
  publish(writer, 7, row([3, 9, 1], [5, 2, 0.5]));
  publish(writer, 100_000, row([7], [1]));
  assert.deepEqual(read(reader, 7), { ix: [3, 9, 1], weight: [5, 2, 0.5] });
  assert.deepEqual(read(reader, 100_000), { ix: [7], weight: [1] });
  assert.equal(read(reader, 8), null);
  assert.equal(writer.rows, 2);
});

test('a newer version of a row replaces the older one, which stays one row of the table', () => {
  const { writer, reader } = board();
  publish(writer, 7, row([3], [1]));
  publish(writer, 7, row([3, 4], [2, 1]));
  assert.deepEqual(read(reader, 7), { ix: [3, 4], weight: [2, 1] });
  assert.equal(writer.rows, 1);
});

test('a flip keeps the written half readable until the next flip; the current half is read first', () => {
  const { writer, reader } = board();
  publish(writer, 1, row([2], [1]));
  publish(writer, 5, row([6], [1]));
  writer.flip();
  // Written by the flush: still on the board (a ranking worker's LMDB snapshot may predate the commit).
  assert.deepEqual(read(reader, 1), { ix: [2], weight: [1] });
  assert.equal(writer.rows, 0, 'the new current half starts empty');
  publish(writer, 1, row([2, 3], [2, 1]));
  assert.deepEqual(read(reader, 1), { ix: [2, 3], weight: [2, 1] }, 'the newer version, from the current half');
  writer.flip();
  // Row 5 was only in the half written two flushes ago: cleared, read from LMDB again.
  assert.equal(read(reader, 5), null);
  assert.deepEqual(read(reader, 1), { ix: [2, 3], weight: [2, 1] });
});

test('a clear leaves no row on the board', () => {
  const { writer, reader } = board();
  publish(writer, 1, row([2], [1]));
  writer.flip();
  publish(writer, 3, row([4], [1]));
  writer.clear();
  assert.equal(read(reader, 1), null);
  assert.equal(read(reader, 3), null);
  assert.equal(writer.rows, 0);
  publish(writer, 3, row([5], [1]));
  assert.deepEqual(read(reader, 3), { ix: [5], weight: [1] });
});

test('a put past the rows a half holds is refused', () => {
  const { writer, reader } = board();
  const one = row([1], [1]);
  for (let r = 0; r < BOARD_MAX_ROWS; r++) writer.put(r, one, 0, one.length);
  assert.throws(() => writer.put(BOARD_MAX_ROWS, one, 0, one.length), RangeError);
  // A newer version of a row it holds still goes in.
  writer.put(5, row([2], [3]), 0, one.length);
  assert.deepEqual(read(reader, 5), { ix: [2], weight: [3] });
  assert.equal(read(reader, BOARD_MAX_ROWS), null);
});

test('fits says no past the rows or the words a half holds', () => {
  const { writer } = board();
  assert.equal(writer.fits(BOARD_MAX_ROWS, 1), true);
  assert.equal(writer.fits(BOARD_MAX_ROWS + 1, 1), false);
  assert.equal(writer.fits(1, BOARD_ARENA_WORDS), true);
  assert.equal(writer.fits(1, BOARD_ARENA_WORDS + 1), false);
  const big = new Uint32Array(neighboursWords(1000));
  big[0] = 1000;
  let rows = 0;
  while (writer.fits(1, big.length)) {
    writer.put(rows, big, 0, big.length);
    rows++;
  }
  assert.equal(rows, Math.floor(BOARD_ARENA_WORDS / big.length));
  // Put past what fits anyway: refused, nothing of the other half written over.
  assert.throws(() => writer.put(rows, big, 0, big.length), RangeError);
  writer.flip();
  assert.equal(writer.fits(1, big.length), true, 'the other half is empty');
});

test("a flush writes the current half's rows in ix order, newest versions, with the bytes LMDB gets", () => {
  const { writer } = board();
  publish(writer, 9, row([1], [1]));
  publish(writer, 2, row([5, 6], [3, 2]));
  publish(writer, 9, row([1, 2], [4, 1]));
  publish(writer, 40_000, row([2], [0.25]));
  const dir = tempDir('affinity-row-board-');
  const db = open({ path: dir, encoding: 'binary' });
  try {
    const order: number[] = [];
    db.transactionSync(() => writer.forEachRow((ix, bytes) => {
      order.push(ix);
      db.put(ix, bytes);
    }));
    assert.deepEqual(order, [2, 9, 40_000]);
    const stored = (ix: number) => {
      const { ix: n, weight } = decodeNeighbours(db.get(ix));
      return { ix: Array.from(n), weight: Array.from(weight) };
    };
    assert.deepEqual(stored(2), { ix: [5, 6], weight: [3, 2] });
    assert.deepEqual(stored(9), { ix: [1, 2], weight: [4, 1] });
    assert.deepEqual(stored(40_000), { ix: [2], weight: [0.25] });
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a reader beside a writer that rewrites, flips and clears as fast as it can never gets a torn row', async () => {
  const memory = createRowBoards(['demo']).demo!;
  const reader = new RowBoardReader(memory);
  const stop = new SharedArrayBuffer(4);
  const ROWS = 2000;
  const worker = new Worker(new URL('../../../src/ts-worker.mjs', import.meta.url), {
    // Not the test process's preloads (a TypeScript one a worker cannot load): ts-worker.mjs registers tsx itself.
    execArgv: [],
    workerData: { entry: new URL('../../helpers/row-board-writer.ts', import.meta.url).href, board: memory, stop, rows: ROWS },
  });
  const exited = new Promise((resolve, reject) => worker.once('exit', resolve).once('error', reject));
  const rows = new NeighbourRowReader();
  let found = 0;
  let reads = 0;
  const until = performance.now() + 1500;
  try {
    while (performance.now() < until) {
      for (let r = 0; r < ROWS; r++, reads++) {
        const n = reader.read(r, rows);
        if (n < 0) continue;
        found++;
        const version = rows.ix(0);
        // The writer's row r at a version has 1 + (r + version) % 64 neighbours, each naming the version.
        assert.equal(n, 1 + ((r + version) % 64), `row ${r}: a length of another version`);
        for (let k = 0; k < n; k++) {
          assert.equal(rows.ix(k), version, `row ${r}: neighbour ${k} of another version`);
          assert.equal(rows.weight(k), version, `row ${r}: weight ${k} of another version`);
        }
      }
      // Let the writer's thread run on a busy core too.
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    Atomics.store(new Int32Array(stop), 0, 1);
    await exited;
  }
  assert.ok(found > reads / 100, `rows were found on the board (${found} of ${reads} reads)`);
});
