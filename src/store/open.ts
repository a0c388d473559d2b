/**
 * @module store/open
 * Opens the one LMDB environment of the data directory and its named databases. The Store owns
 * the environment's lifecycle; the modules beside it (catalog, clients) read and write through
 * the databases it exposes. Safe to open from several processes at once (the CLI beside a
 * running server): LMDB serialises writers with a file lock.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { StoreConfig } from '../config/types.ts';

/** The LMDB environment's folder in a data directory. */
export const storePath = (dataDir: string) => join(dataDir, 'db');
/** Its data file (what an operator sees grow; absent before the first start). */
export const storeDataFile = (dataDir: string) => join(storePath(dataDir), 'data.mdb');

export class Store {
  readonly root: RootDatabase;
  /** [environment, itemType, itemId] → StoredItem */
  readonly items: Database;
  /** [environment, itemType, itemId] → dense item index; kept after delete so the index is stable. */
  readonly itemIndex: Database<number>;
  /** [environment, ix] → [itemType, itemId]: the kernel's way back from an index to an item. */
  readonly indexItems: Database<[string, string]>;
  /** seq (integer, ascending) → CatalogChange: the change feed. */
  readonly changes: Database;
  /** [environment, seq of its first event] → one batch as bytes (see store/event-log.ts). */
  readonly events: Database<Buffer>;
  /** [environment, event_id] → seq: makes retried batches idempotent. */
  readonly eventIds: Database<number>;
  /** Model builder output, raw bytes (typed arrays): histories, neighbours, popularity, item layout. */
  readonly model: Database<Buffer>;
  /** Model builder bookkeeping (msgpack): positions, device→user links, clicks, report counters. */
  readonly modelState: Database;
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
    this.items = this.root.openDB({ name: 'items' });
    this.itemIndex = this.root.openDB({ name: 'item-index' });
    this.indexItems = this.root.openDB({ name: 'index-items' });
    this.changes = this.root.openDB({ name: 'changes' });
    this.events = this.root.openDB({ name: 'events', encoding: 'binary' });
    this.eventIds = this.root.openDB({ name: 'event-ids' });
    this.model = this.root.openDB({ name: 'model', encoding: 'binary' });
    this.modelState = this.root.openDB({ name: 'model-state' });
    this.clients = this.root.openDB({ name: 'clients' });
    this.meta = this.root.openDB({ name: 'meta' });
    this.feeds = this.root.openDB({ name: 'feeds' });
    this.feedState = this.root.openDB({ name: 'feed-state' });
    this.imports = this.root.openDB({ name: 'imports' });
    this.importRejects = this.root.openDB({ name: 'import-rejects' });
  }

  /** Waits for every commit to be flushed, then closes the environment. */
  async close(): Promise<void> {
    await this.root.flushed;
    await this.root.close();
  }
}
