// Reads what the model builder wrote, in the test process: the data directory's LMDB opened
// read-only beside the running server, decoded with the layouts of src/store/model-layout.ts (the
// contract the ranking side reads), never with a copy of them.
import { setTimeout as sleep } from 'node:timers/promises';
import { open, type Database, type RootDatabase } from 'lmdb';
import { modelStorePath, reportsStorePath, storePath } from '../../src/store/open.ts';
import type { Rollup } from '../../src/store/report-keys.ts';
import { decodeChunk, ITEM_VIEW_CHUNK_ITEMS, itemViewChunkKey, type ItemViewEntry } from '../../src/store/item-view.ts';
import {
  copyU8,
  decodeConsumerRecord,
  decodeNeighbours,
  deviceRecordKey,
  itemLayoutKey,
  neighboursKey,
  readPopularity,
  userRecordKey,
} from '../../src/store/model-layout.ts';

export interface HistoryEntry {
  ix: number;
  /** Event type code (EVENT_TYPE_CODES). */
  type: number;
  /** Unix seconds. */
  t: number;
}

export interface ReportCount {
  day: string;
  dimension: string;
  value: string;
  metric: string;
  n: number;
}

/** Read access to one environment's model; valid only inside readModel's callback. */
export class ModelReader {
  readonly #env: string;
  readonly #model: Database<Buffer>;
  readonly #state: Database;
  readonly #reportState: Database;
  readonly #itemIndex: Database<number>;

  constructor(root: RootDatabase, modelRoot: RootDatabase, reportsRoot: RootDatabase, env: string) {
    this.#env = env;
    this.#model = modelRoot.openDB({ name: 'model', encoding: 'binary' });
    this.#state = modelRoot.openDB({ name: 'model-state' });
    this.#reportState = reportsRoot.openDB({ name: 'report-state' });
    this.#itemIndex = root.openDB({ name: 'item-index' });
  }

  /** A history as triplets, oldest first; undefined when no consumer record is stored. */
  history(kind: 'user' | 'device', id: string): HistoryEntry[] | undefined {
    const record = this.#consumer(kind, id);
    if (record === undefined) return undefined;
    const out: HistoryEntry[] = [];
    for (let i = 0; i + 2 < record.entries.length; i += 3) out.push({ ix: record.entries[i]!, type: record.entries[i + 1]!, t: record.entries[i + 2]! });
    return out;
  }

  /** Every ix the consumer ever consumed, sorted; undefined when no consumer record is stored. */
  consumed(kind: 'user' | 'device', id: string): number[] | undefined {
    return this.#consumer(kind, id)?.ix;
  }

  #consumer(kind: 'user' | 'device', id: string): { entries: number[]; ix: number[] } | undefined {
    const bytes = this.#model.get(kind === 'user' ? userRecordKey(this.#env, id) : deviceRecordKey(this.#env, id));
    return bytes === undefined ? undefined : decodeConsumerRecord(bytes);
  }

  /** Neighbours of an item index, strongest first, equal weights by lower ix, as the ranking workers order them (stored in no order). */
  neighbours(ix: number): Array<{ ix: number; weight: number }> {
    const nb = decodeNeighbours(this.#model.get(neighboursKey(this.#env, ix)));
    return Array.from(nb.ix, (j, i) => ({ ix: j, weight: nb.weight[i]! })).sort((a, b) => b.weight - a.weight || a.ix - b.ix);
  }

  /** Weighted consumption per item index, all-time or for one UTC hour (unix sec / 3600). */
  popularity(bucket: number | 'all'): Float32Array {
    return readPopularity(this.#model, this.#env, bucket);
  }

  flags(): Uint8Array {
    return copyU8(this.#model.get(itemLayoutKey(this.#env, 'flags')));
  }

  /** Whether the builder's store still holds an array of an earlier layout (builder/item-layout.ts). */
  hasLayoutArray(name: 'type' | 'published' | 'ends'): boolean {
    return this.#model.get(itemLayoutKey(this.#env, name)) !== undefined;
  }

  /** The item view entry of ix, as the ranking workers read it (store/item-view.ts); null when none. */
  itemView(ix: number): ItemViewEntry | null {
    return decodeChunk(this.#state.get(itemViewChunkKey(this.#env, Math.floor(ix / ITEM_VIEW_CHUNK_ITEMS))))[ix % ITEM_VIEW_CHUNK_ITEMS] ?? null;
  }

  /** The dense index of an item, if it has one. */
  itemIndex(itemType: string, itemId: string): number | undefined {
    return this.#itemIndex.get([this.#env, itemType, itemId]);
  }

  /** The last event sequence number the builder wrote (builder/builder-worker.ts keeps it at [env, 'pos', 'events']). */
  eventsPosition(): number {
    return (this.#state.get([this.#env, 'pos', 'events']) as number | undefined) ?? 0;
  }

  /** Every daily report counter of the environment, from the day rollups of both writers (store/report-keys.ts). */
  reports(): ReportCount[] {
    const out: ReportCount[] = [];
    for (const { key, value } of this.#reportState.getRange({ start: [this.#env, 'repr', 'd'], end: [this.#env, 'repr', 'd', '\uffff'] })) {
      const day = (key as string[])[3]!;
      for (const [row, metrics] of Object.entries(value as Rollup)) {
        const [dimension = '', val = ''] = row.split('\u0000');
        for (const [metric, n] of Object.entries(metrics)) out.push({ day, dimension, value: val, metric, n });
      }
    }
    return out;
  }

  /** A counter summed over days (0 when absent). */
  report(dimension: string, value: string, metric: string): number {
    return this.reports()
      .filter((r) => r.dimension === dimension && r.value === value && r.metric === metric)
      .reduce((sum, r) => sum + r.n, 0);
  }
}

/** Opens the data directory's LMDB environments read-only, runs `read`, closes. */
export async function readModel<T>(dataDir: string, env: string, read: (model: ModelReader) => T): Promise<T> {
  const root = open({ path: storePath(dataDir), maxDbs: 16, readOnly: true });
  const modelRoot = open({ path: modelStorePath(dataDir), maxDbs: 4, readOnly: true });
  const reportsRoot = open({ path: reportsStorePath(dataDir), maxDbs: 4, readOnly: true });
  try {
    return read(new ModelReader(root, modelRoot, reportsRoot, env));
  } finally {
    await Promise.all([root.close(), modelRoot.close(), reportsRoot.close()]);
  }
}

/** Polls the model until `read` returns something other than undefined; throws after `timeoutMs`. */
export async function waitForModel<T>(
  dataDir: string,
  env: string,
  read: (model: ModelReader) => T | undefined,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await readModel(dataDir, env, read);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`model did not reach the expected state within ${timeoutMs} ms`);
    await sleep(50);
  }
}
