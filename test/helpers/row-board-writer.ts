// A worker thread that publishes rows to a row board as the model builder does, as fast as it can,
// flipping and clearing its halves, until `stop` is set: for the concurrent reader test
// (test/unit/store/row-board.test.ts). Each row's words name its version, so a reader can tell a
// whole row from one torn by a rewrite.
import { workerData } from 'node:worker_threads';
import { RowBoardWriter } from '../../src/store/row-board.ts';
import { encodeNeighboursInto, neighboursWords } from '../../src/store/model.ts';

const { board, stop, rows } = workerData as { board: SharedArrayBuffer; stop: SharedArrayBuffer; rows: number };
const writer = new RowBoardWriter(board);
const stopped = new Int32Array(stop);
const encoded = new Uint32Array(neighboursWords(64));
const ix = new Uint32Array(64);
const weight = new Float32Array(64);
for (let version = 1; Atomics.load(stopped, 0) === 0; version++) {
  for (let r = 0; r < rows; r++) {
    // A row of 1 to 64 neighbours, each naming the version: a reader checks they all agree.
    const n = 1 + ((r + version) % 64);
    ix.fill(version, 0, n);
    weight.fill(version, 0, n);
    encodeNeighboursInto(encoded, 0, ix, weight, n);
    if (!writer.fits(1, neighboursWords(n))) writer.flip();
    writer.put(r, encoded, 0, neighboursWords(n));
  }
  if (version % 7 === 0) writer.clear();
  else writer.flip();
}
