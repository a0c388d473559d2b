/**
 * @module store/trained-model
 * Keys and binary layouts of the trained model (model/trainer-worker.ts writes it, the ranking
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
 * | [env, 'tm', version, 'row', ix] (model)    | neighbours (store/model.ts encoding): the items whose score item `ix` changes and by how much, largest magnitude first (weights may be negative) |
 */
import type { Store } from './open.ts';
import type { SparseRows } from '../model/sparse-autoencoder.ts';
import { bytesOf, copyU32, encodeNeighboursInto, neighboursWords } from './model.ts';

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
export const trainedRowKey = (env: string, version: number, ix: number) => [env, 'tm', version, 'row', ix];

/** The serving model's description, or undefined when none was built. */
export function readTrainedMeta(store: Store, env: string): TrainedModelMeta | undefined {
  return store.modelState.get(trainedCurrentKey(env)) as TrainedModelMeta | undefined;
}

/** Item ix by model column of a version (empty when absent). */
export function readTrainedItems(store: Store, env: string, version: number): Uint32Array {
  return copyU32(store.model.get(trainedItemsKey(env, version)));
}

/** Rows written per transaction: big enough to amortise commits, small enough not to hold the write lock long. */
const ROWS_PER_TRANSACTION = 2048;

/**
 * Writes a version's columns and sparse rows (model columns mapped to item ix), not yet serving.
 * Synchronous transactions: call from a worker, never from the main thread.
 */
export function writeTrainedVersion(store: Store, env: string, version: number, items: Uint32Array, rows: SparseRows): void {
  const n = items.length;
  store.modelRoot.transactionSync(() => store.model.put(trainedItemsKey(env, version), bytesOf(items)));
  const ix = new Uint32Array(rows.cols.length);
  for (let e = 0; e < ix.length; e++) ix[e] = items[rows.cols[e]!]!;
  for (let start = 0; start < n; start += ROWS_PER_TRANSACTION) {
    store.modelRoot.transactionSync(() => {
      for (let c = start; c < Math.min(n, start + ROWS_PER_TRANSACTION); c++) {
        const from = rows.offsets[c]!;
        const length = rows.offsets[c + 1]! - from;
        if (length === 0) continue;
        store.model.put(trainedRowKey(env, version, items[c]!), encodeNeighboursInto(new Uint32Array(neighboursWords(length)), 0, ix.subarray(from), rows.weights.subarray(from), length));
      }
    });
  }
}

/** Points `current` at a written version in one transaction; returns the version it replaced. */
export function switchTrainedVersion(store: Store, env: string, meta: TrainedModelMeta): number | undefined {
  return store.modelRoot.transactionSync(() => {
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
    store.modelRoot.transactionSync(() => {
      for (const key of doomed.slice(start, start + ROWS_PER_TRANSACTION)) store.model.remove(key as never);
    });
  }
}
