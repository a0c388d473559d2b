/**
 * @module store/trained-model
 * Keys and binary layouts of the trained model (training/trainer-worker.ts writes it, the ranking
 * workers read it), and its atomic switch. A build writes a new version beside the serving one,
 * then one transaction points `current` at it; readers resolve `current` and then read rows in
 * the same LMDB snapshot, so a request sees one version whole, never a mix. The old version is
 * removed after the switch; a failed build removes its own partial version and `current` never
 * moved, so the previous model keeps serving.
 *
 * | key (db)                                   | value                                                   |
 * |--------------------------------------------|---------------------------------------------------------|
 * | [env, 'tm', 'current'] (modelState)        | TrainedModelMeta (msgpack)                               |
 * | [env, 'tm', version, 'items'] (model)      | u32 × n: the item ix of each model column               |
 * | [env, 'tm', version, 'layout'] (model)     | u32 COLUMN_PAIRS: the version's rows are `cols` rows     |
 * | [env, 'tm', version, 'cols', ix] (model)   | (model column u32, weight f32) × n: the columns whose score item `ix` changes and by how much, largest magnitude first (weights may be negative) |
 * | [env, 'tm', version, 'row', ix] (model)    | versions written before the layout key: the same row as neighbours (store/model-layout.ts encoding), item ix instead of columns |
 *
 * A `cols` row is laid out as a ranking worker's arena holds it (ranker/trained-kernel.ts), so
 * reading one is one copy. The `row` layout cost ~5 µs a row in lookups from ix back to columns:
 * 2.2 s for a 1,000,000-item catalog's 452,869 rows, which every ranking worker reads after each
 * start and model switch, and requests paid for the rows not read yet (issue 11, catalog scale).
 */
import type { Store } from './open.ts';
import { bytesOf, copyU32 } from './model-layout.ts';
import { transactionSyncRetried } from './commit.ts';

/** Per model column s, the columns it adds to and by how much: `cols/weights[offsets[s] .. offsets[s + 1])`, largest |w| first. */
export interface SparseRows {
  offsets: Uint32Array;
  cols: Uint32Array;
  weights: Float32Array;
}

export interface TrainedModelMeta {
  /** Increasing per environment; rows of other versions are never read for this one. */
  version: number;
  /** Columns (items) the model covers. */
  items: number;
  method: string;
  /** Users and (user, item) interactions the build learned from. */
  users: number;
  interactions: number;
  /** Event sequence number the build read up to. */
  eventsPosition: number;
  /** Unix ms when the build finished, and how long it took. */
  builtAt: number;
  buildMs: number;
  /** Peak working memory of the numeric core (bytes, estimated from its arrays). */
  memoryBytes: number;
}

export const trainedCurrentKey = (env: string) => [env, 'tm', 'current'];
export const trainedItemsKey = (env: string, version: number) => [env, 'tm', version, 'items'];
export const trainedLayoutKey = (env: string, version: number) => [env, 'tm', version, 'layout'];
export const trainedRowKey = (env: string, version: number, ix: number) => [env, 'tm', version, 'cols', ix];
/** A row of a version written before the `layout` key (neighbours encoding, item ix). */
export const legacyTrainedRowKey = (env: string, version: number, ix: number) => [env, 'tm', version, 'row', ix];
/** The `layout` value of versions whose rows are (column, weight) pairs. */
const COLUMN_PAIRS = 2;
/** Bytes of one (column, weight) pair of a `cols` row. */
export const PAIR_BYTES = 8;

/** The serving model's description, or undefined when none was built. */
export function readTrainedMeta(store: Store, env: string): TrainedModelMeta | undefined {
  return store.modelState.get(trainedCurrentKey(env)) as TrainedModelMeta | undefined;
}

/** Item ix by model column of a version (empty when absent). */
export function readTrainedItems(store: Store, env: string, version: number): Uint32Array {
  return copyU32(store.model.get(trainedItemsKey(env, version)));
}

/** Whether a version's rows are `cols` rows (else `row` rows, written before the layout key). */
export function hasColumnPairs(store: Store, env: string, version: number): boolean {
  return copyU32(store.model.get(trainedLayoutKey(env, version)))[0] === COLUMN_PAIRS;
}

/** Rows written per transaction: big enough to amortise commits, small enough not to hold the write lock long. */
const ROWS_PER_TRANSACTION = 2048;

/**
 * Writes a version's columns and sparse rows (model columns mapped to item ix), not yet serving.
 * Synchronous transactions: call from a worker, never from the main thread.
 */
export function writeTrainedVersion(store: Store, env: string, version: number, items: Uint32Array, rows: SparseRows): void {
  const n = items.length;
  transactionSyncRetried(store.modelRoot, () => {
    store.model.put(trainedItemsKey(env, version), bytesOf(items));
    store.model.put(trainedLayoutKey(env, version), bytesOf(Uint32Array.of(COLUMN_PAIRS)));
  });
  for (let start = 0; start < n; start += ROWS_PER_TRANSACTION) {
    transactionSyncRetried(store.modelRoot, () => {
      for (let c = start; c < Math.min(n, start + ROWS_PER_TRANSACTION); c++) {
        const from = rows.offsets[c]!;
        const length = rows.offsets[c + 1]! - from;
        if (length === 0) continue;
        store.model.put(trainedRowKey(env, version, items[c]!), encodeColumnPairs(rows.cols.subarray(from, from + length), rows.weights.subarray(from, from + length)));
      }
    });
  }
}

/** A `cols` row: (column u32, weight f32) pairs, little-endian as the arena holds them. */
function encodeColumnPairs(cols: ArrayLike<number>, weights: ArrayLike<number>): Buffer {
  const words = new Uint32Array(2 * cols.length);
  const floats = new Float32Array(words.buffer);
  for (let k = 0; k < cols.length; k++) {
    words[2 * k] = cols[k]!;
    floats[2 * k + 1] = weights[k]!;
  }
  return bytesOf(words);
}

/** Points `current` at a written version in one transaction; returns the version it replaced. */
export function switchTrainedVersion(store: Store, env: string, meta: TrainedModelMeta): number | undefined {
  return transactionSyncRetried(store.modelRoot, () => {
    const previous = readTrainedMeta(store, env)?.version;
    store.modelState.put(trainedCurrentKey(env), meta);
    return previous;
  });
}

/** Removes every stored version other than `keep` (old ones after a switch, a failed build's partial one). */
export function removeTrainedVersions(store: Store, env: string, keep: number | undefined): void {
  const doomed: unknown[][] = [];
  for (const key of store.model.getKeys({ start: [env, 'tm'], end: [env, 'tm', '\uffff'] })) {
    const version = (key as unknown[])[2];
    if (typeof version === 'number' && version !== keep) doomed.push(key as unknown[]);
  }
  for (let start = 0; start < doomed.length; start += ROWS_PER_TRANSACTION) {
    transactionSyncRetried(store.modelRoot, () => {
      for (const key of doomed.slice(start, start + ROWS_PER_TRANSACTION)) store.model.remove(key as never);
    });
  }
}
