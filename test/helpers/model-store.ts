// A store in a fresh temp folder for the state classes (model/*.ts, serving/catalog-view.ts) to write to, and
// everything they wrote, for comparing two runs record by record.
import { rmSync } from 'node:fs';
import type { CooccurrenceState } from '../../src/builder/cooccurrence.ts';
import { decodeNeighbours, neighboursKey } from '../../src/store/model-layout.ts';
import { Store } from '../../src/store/open.ts';
import { tempDir } from './server.ts';

/** Runs `run` on a new store; closes it and removes its folder afterwards, whatever happens. */
export async function withModelStore<T>(run: (store: Store) => T | Promise<T>): Promise<T> {
  const dir = tempDir();
  const store = new Store({ dataDir: dir, mapSizeBytes: 64 * 1024 ** 2 });
  try {
    return await run(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every record of the model (bytes as hex) and model-state databases, by database and key. */
export function storedModel(store: Store): Map<string, unknown> {
  const out = new Map<string, unknown>();
  // Neighbour rows are stored in table order, which depends on what was loaded when: compared sorted.
  for (const { key, value } of store.model.getRange({})) out.set(`model ${JSON.stringify(key)}`, (key as unknown[])[1] === 'nb' ? JSON.stringify(sortedRow(value)) : Buffer.from(value).toString('hex'));
  for (const { key, value } of store.modelState.getRange({})) out.set(`model-state ${JSON.stringify(key)}`, value);
  return out;
}

/**
 * Writes every neighbour row changed since the last call in one transaction, stamped with
 * `position` (the builder writes them a bounded number per transaction between its steps:
 * builder/builder-worker.ts); `changed` receives the ix the ranking workers are to read anew.
 */
export function flushRows(store: Store, state: CooccurrenceState, changed: number[] = [], position = 0): void {
  state.startRows();
  const put = state.prepareRows(Infinity, position);
  store.modelRoot.transactionSync(() => {
    put();
  });
  state.takeWritten(changed);
}

/** A builder cache (builder/consumer-records.ts, builder/histories.ts): flushed, then maybe trimmed. */
interface FlushedCache {
  prepareFlush(): () => void;
  trim(max: number): void;
}

/** Several caches flushed and trimmed together, as builder/environment-model.ts does. */
export function flushedTogether<T extends object>(parts: T, caches: FlushedCache[]): T & FlushedCache {
  return Object.assign(parts, {
    prepareFlush(): () => void {
      const writes = caches.map((c) => c.prepareFlush());
      return () => {
        for (const write of writes) write();
      };
    },
    trim(max: number): void {
      for (const c of caches) c.trim(max);
    },
  });
}

/**
 * What `step` (called for i = 1..steps) stores through the cache `make` returns on a fresh store,
 * flushed every 40 steps; with `trim`, the cache is dropped (trim(0)) after every flush, so later
 * touches read back what was stored.
 */
export function storedWithFlushes<C extends FlushedCache>(make: (store: Store) => C, steps: number, step: (cache: C, i: number) => void, trim: boolean): Promise<Map<string, unknown>> {
  return withModelStore((store) => {
    const cache = make(store);
    for (let i = 1; i <= steps; i++) {
      step(cache, i);
      if (i % 40 !== 0) continue;
      store.modelRoot.transactionSync(cache.prepareFlush());
      if (trim) cache.trim(0);
    }
    return storedModel(store);
  });
}

/** Whether a key of `stored` contains `part` (such as '"link"'): a run wrote the kind of record it is meant to test. */
export function hasRecord(stored: Map<string, unknown>, part: string): boolean {
  for (const key of stored.keys()) if (key.includes(part)) return true;
  return false;
}

/** A neighbour row as stored in LMDB (in no order) as [ix, weight] pairs, strongest first, equal weights by lower ix. */
export function storedRow(store: Store, ix: number, env = 'demo'): Array<[number, number]> {
  return sortedRow(store.model.get(neighboursKey(env, ix)));
}

function sortedRow(bytes: Uint8Array | undefined): Array<[number, number]> {
  const stored = decodeNeighbours(bytes);
  return [...stored.ix].map((j, k): [number, number] => [j, stored.weight[k]!]).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
}
