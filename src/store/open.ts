/**
 * @module store/open
 * Opens the data directory's three LMDB environments and their named databases. `db/` holds what
 * clients send (catalog, change feed, event log, clients, feeds, imports); `model/` holds what
 * the model builder and the trainer derive from it (histories, neighbour rows, trained model
 * versions, snapshots); `reports/` the report and request counters. LMDB lets one writer at a
 * time into an environment: in one, a builder flush at 100,000 items (175 ms–1.9 s, rows and
 * histories rewritten) held the lock every event batch's commit waited for, and event POSTs took
 * up to 1.7 s at p99. And a commit pays for its environment's free list: beside the model's
 * large writes, the report counters' one-second commits (a few small records) grew from 0.8 to
 * 2.5 ms of CPU over 150 s of a steady load, mostly in LMDB's free-page bookkeeping
 * (`mdb_midl_insert`, perf on their thread). The Store owns every lifecycle; the modules beside
 * it (catalog, clients) read and write through the databases it exposes. Safe to open from
 * several processes at once (the CLI beside a running server): LMDB serialises writers with a
 * file lock per environment.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { StoreConfig } from '../config/types.ts';

/** The main LMDB environment's folder in a data directory. */
export const storePath = (dataDir: string) => join(dataDir, 'db');
/** Its data file (what an operator sees grow; absent before the first start). */
export const storeDataFile = (dataDir: string) => join(storePath(dataDir), 'data.mdb');
/** The model environment's folder: everything in it can be derived again from `db/`. */
export const modelStorePath = (dataDir: string) => join(dataDir, 'model');
export const modelDataFile = (dataDir: string) => join(modelStorePath(dataDir), 'data.mdb');
/** The reports environment's folder: counters derived from `db/` (events) and from requests served. */
export const reportsStorePath = (dataDir: string) => join(dataDir, 'reports');
export const reportsDataFile = (dataDir: string) => join(reportsStorePath(dataDir), 'data.mdb');

/**
 * Options of the main environment's databases that are not plain msgpack. Items and change
 * records share their msgpack structures (kept in the database under this key): each record
 * otherwise carries its own field names and record definitions, which cost the 1,000,000-row file
 * drop (issue 12) ~4.8 us a row to pack in the ingest worker and ~2 us to read back in the ranking
 * worker; shared, the drop went from 30,908 to 35,013 rows/s (32.5 to 28.7 us of CPU a row) and a
 * stored item from ~528 to ~372 bytes. Records written before (structures inline) read as they
 * were. Whatever opens these databases raw (tests, tools) must open them with these options.
 */
export const SHARED_STRUCTURES_KEY = Symbol.for('structures');
const MAIN_DATABASES: Record<string, { name: string; encoding?: 'binary'; sharedStructuresKey?: symbol }> = {
  items: { name: 'items', sharedStructuresKey: SHARED_STRUCTURES_KEY },
  changes: { name: 'changes', sharedStructuresKey: SHARED_STRUCTURES_KEY },
  /** The event log as written before the nineteenth session: 8 bytes of acceptance time, then the body's JSON (read, never written). */
  events: { name: 'events', encoding: 'binary' },
  'event-batches': { name: 'event-batches', sharedStructuresKey: SHARED_STRUCTURES_KEY },
};
/** How the service opens the main environment's database `name`. */
export const mainDatabaseOptions = (name: string) => MAIN_DATABASES[name] ?? { name };
const MODEL_DB = { name: 'model', encoding: 'binary' } as const;
const MODEL_STATE_DB = { name: 'model-state' } as const;
const REPORT_STATE_DB = { name: 'report-state' } as const;
const REPORT_BLOBS_DB = { name: 'report-blobs', encoding: 'binary' } as const;


/**
 * Data directories written before the split kept the model databases in `db/`: they move to
 * `model/` in one transaction there (so a restart mid-way finds them whole in one place or the
 * other), then leave `db/`. The derived state could be rebuilt instead, but that is a replay of
 * the whole log (2,000 s at 10,000,000 events) and a retraining.
 */
function moveModelDatabases(root: RootDatabase, modelRoot: RootDatabase, model: Database<Buffer>, modelState: Database): void {
  // lmdb-js: `create: false` (not in its types) answers undefined for a database that is not there.
  const existing = (options: { name: string }) => root.openDB({ ...options, create: false } as typeof options) as Database | undefined;
  const oldModel = existing(MODEL_DB) as Database<Buffer> | undefined;
  const oldState = existing(MODEL_STATE_DB);
  if (!oldModel && !oldState) return;
  const entries = (db: Database) => (db.getStats() as { entryCount: number }).entryCount;
  if (entries(model) === 0 && entries(modelState) === 0) {
    modelRoot.transactionSync(() => {
      for (const { key, value } of oldModel?.getRange() ?? []) model.put(key, value);
      for (const { key, value } of oldState?.getRange() ?? []) modelState.put(key, value);
    });
  }
  oldModel?.dropSync();
  oldState?.dropSync();
}

export class Store {
  /** The main environment (`db/`): the catalog, the event log and everything clients send. */
  readonly root: RootDatabase;
  /** The model environment (`model/`): `model` and `modelState`, written by the builder and trainer. */
  readonly modelRoot: RootDatabase;
  /** The reports environment (`reports/`): `reportState` and `reportBlobs`, written by the report counters' thread and the request counter. */
  readonly reportsRoot: RootDatabase;
  /** [environment, itemType, itemId] → StoredItem */
  readonly items: Database;
  /** [environment, itemType, itemId] → dense item index; kept after delete so the index is stable. */
  readonly itemIndex: Database<number>;
  /** [environment, ix] → [itemType, itemId]: the kernel's way back from an index to an item. */
  readonly indexItems: Database<[string, string]>;
  /** seq (integer, ascending) → CatalogChange: the change feed. */
  readonly changes: Database;
  /** [environment, seq of its first event] → one batch as bytes, as written before event-batches (store/event-log.ts). */
  readonly events: Database<Buffer>;
  /** [environment, seq of its first event] → [acceptance time, events] (msgpack, shared structures; store/event-log.ts). */
  readonly eventBatches: Database<[number, unknown[]]>;
  /** [environment, event_id] → seq: makes retried batches idempotent. */
  readonly eventIds: Database<number>;
  /** Model builder output, raw bytes (typed arrays): histories, neighbours, popularity, item layout. */
  readonly model: Database<Buffer>;
  /** Model builder bookkeeping (msgpack): positions, device→user links, trained model versions. */
  readonly modelState: Database;
  /** Report and request counters, clicks, A/B units and the report counters' position (msgpack; store/report-keys.ts). */
  readonly reportState: Database;
  /** The report counters' snapshot chunks (raw bytes; builder/report-snapshot.ts). */
  readonly reportBlobs: Database<Buffer>;
  /** clientId → ClientRecord */
  readonly clients: Database;
  /** Counters: ['nextIx', environment], 'changeSeq', 'eventSeq'. */
  readonly meta: Database<number>;
  /** [environment, feedId] → FeedDefinition: configured and operator-added feeds (store/feeds.ts). */
  readonly feeds: Database;
  /** ['status' | 'request', environment, feedId] → feed status / poll request time (store/feeds.ts). */
  readonly feedState: Database;
  /** [environment, importId] → ImportRecord: file drops and their progress (store/imports.ts). */
  readonly imports: Database;
  /** [environment, importId, row] → { line, reason }: the rejected rows of each import. */
  readonly importRejects: Database;

  constructor(config: StoreConfig) {
    const path = storePath(config.dataDir);
    mkdirSync(path, { recursive: true });
    // overlappingSync (the lmdb-js default off Windows): a write promise resolves once the
    // transaction is committed, which survives the death of this process; `flushed` resolves
    // once it is also on disk (survives the machine).
    this.root = open({ path, mapSize: config.mapSizeBytes, maxDbs: 16 });
    this.items = this.root.openDB(mainDatabaseOptions('items'));
    this.itemIndex = this.root.openDB({ name: 'item-index' });
    this.indexItems = this.root.openDB({ name: 'index-items' });
    this.changes = this.root.openDB(mainDatabaseOptions('changes'));
    this.events = this.root.openDB(mainDatabaseOptions('events')) as Database<Buffer>;
    this.eventBatches = this.root.openDB(mainDatabaseOptions('event-batches'));
    this.eventIds = this.root.openDB({ name: 'event-ids' });
    this.clients = this.root.openDB({ name: 'clients' });
    this.meta = this.root.openDB({ name: 'meta' });
    this.feeds = this.root.openDB({ name: 'feeds' });
    this.feedState = this.root.openDB({ name: 'feed-state' });
    this.imports = this.root.openDB({ name: 'imports' });
    this.importRejects = this.root.openDB({ name: 'import-rejects' });
    const modelPath = modelStorePath(config.dataDir);
    mkdirSync(modelPath, { recursive: true });
    this.modelRoot = open({ path: modelPath, mapSize: config.mapSizeBytes, maxDbs: 4 });
    this.model = this.modelRoot.openDB(MODEL_DB);
    this.modelState = this.modelRoot.openDB(MODEL_STATE_DB);
    moveModelDatabases(this.root, this.modelRoot, this.model, this.modelState);
    const reportsPath = reportsStorePath(config.dataDir);
    mkdirSync(reportsPath, { recursive: true });
    this.reportsRoot = open({ path: reportsPath, mapSize: config.mapSizeBytes, maxDbs: 4 });
    this.reportState = this.reportsRoot.openDB(REPORT_STATE_DB);
    this.reportBlobs = this.reportsRoot.openDB(REPORT_BLOBS_DB);
  }

  /**
   * Renews every environment's read snapshots: a thread that blocks between tasks (a Piscina
   * worker, a long build) would otherwise miss commits that lmdb-js's timer would have shown it.
   */
  resetReadTxns(): void {
    this.root.resetReadTxn();
    this.modelRoot.resetReadTxn();
    this.reportsRoot.resetReadTxn();
  }

  /**
   * Ends this thread's read snapshots of every environment now, not at the next event-loop turn
   * (lmdb-js resets them on a setTimeout). A long synchronous job (a trained build) must call it
   * between its reads: LMDB cannot reuse a page freed after the oldest open snapshot began, so
   * every builder flush during a build took new pages. The 1,000,000-item load grew the model
   * file to 19 GB for 0.8 GB of data (issue 11).
   */
  releaseReadSnapshots(): void {
    this.root.resetReadTxn();
    this.modelRoot.resetReadTxn();
    this.reportsRoot.resetReadTxn();
  }

  /** Waits for every commit to be flushed, then closes every environment. */
  async close(): Promise<void> {
    await Promise.all([this.root.flushed, this.modelRoot.flushed, this.reportsRoot.flushed]);
    await Promise.all([this.root.close(), this.modelRoot.close(), this.reportsRoot.close()]);
  }
}
