/**
 * @module ingest/imports/watcher
 * Finds and runs file drops. The inbox folders are scanned every `scanIntervalMs` (polling, not
 * fs.watch: it also works on network and bind mounts that an SFTP server or bucket sync writes
 * to); a file is taken once its size and time have not changed for `settleMs` (it may still be
 * arriving): it is moved into processing/ under a new import id, then recorded. Imports then run
 * one at a time in arrival order. At start, a file left in processing/ without a record (a crash
 * between the move and the record) gets one, and unfinished imports resume where their committed
 * progress says. Runs in the ingest worker.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Config, IngestConfig } from '../../config/types.ts';
import type { Catalog } from '../../store/catalog.ts';
import { getImport, newImportId, putImport, unfinishedImports } from '../../store/imports.ts';
import type { Store } from '../../store/open.ts';
import type { LogFn } from '../log.ts';
import { inboxDir, listDropped, moveFile, newImportRecord, parseStoredName, storedNameFor } from './inbox.ts';
import { runImport } from './run-import.ts';

export interface WatcherOptions {
  store: Store;
  catalog: Catalog;
  environments: Config['environments'];
  dataDir: string;
  config: IngestConfig['imports'];
  log: LogFn;
}

export class ImportWatcher {
  readonly #o: WatcherOptions;
  /** Dropped files being watched until they settle: path → last size, time and when first seen so. */
  readonly #settling = new Map<string, { size: number; mtimeMs: number; since: number }>();
  #stopping = false;
  #wake: (() => void) | undefined;
  /** A nudge that arrived during a scan: the next wait ends at once (else it waited a full interval). */
  #nudged = false;
  #loop: Promise<void> | undefined;

  constructor(options: WatcherOptions) {
    this.#o = options;
  }

  start(): void {
    this.#adoptOrphans();
    this.#loop = this.#run();
  }

  /** Scans now instead of at the next interval (an upload has arrived). */
  nudge(): void {
    this.#nudged = true;
    this.#wake?.();
  }

  /** Stops after the current batch of the import in progress; resolves once stopped. */
  async close(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#loop;
  }

  /** Files in processing/ without a record: the process stopped between the move and the record. */
  #adoptOrphans(): void {
    const { store, dataDir, environments } = this.#o;
    for (const environment of Object.keys(environments)) {
      const dir = inboxDir(dataDir, environment, 'processing');
      for (const storedName of readdirSync(dir)) {
        const parsed = parseStoredName(storedName);
        if (!parsed || getImport(store, environment, parsed.importId)) continue;
        const bytes = statSync(join(dir, storedName)).size;
        void putImport(store, newImportRecord({ ...parsed, environment, storedName, source: 'inbox', bytes }));
        this.#o.log('warn', { environment, import_id: parsed.importId, file: parsed.fileName }, 'import recorded after a restart');
      }
    }
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      this.#nudged = false;
      try {
        // Uploads are recorded by the main thread: read its latest commit.
        this.#o.store.root.resetReadTxn();
        await this.#claimSettled();
        for (const record of unfinishedImports(this.#o.store)) {
          if (this.#stopping) break;
          if (record.state === 'receiving') continue;
          await runImport({ ...this.#o, batchRows: this.#o.config.batchRows, shouldStop: () => this.#stopping }, record);
        }
      } catch (err) {
        this.#o.log('error', { err: String(err) }, 'import watcher failed; retrying at the next scan');
      }
      if (this.#stopping) break;
      if (this.#nudged) continue;
      // A wake clears the interval's timer: a pending timer would keep the worker thread alive
      // after a stop for up to scanIntervalMs (every shutdown waited ~1 s for it).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#o.config.scanIntervalMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
  }

  /** Takes every dropped file whose size and time have held still for settleMs. */
  async #claimSettled(): Promise<void> {
    const { store, dataDir, environments, config } = this.#o;
    const now = Date.now();
    const present = new Set<string>();
    for (const environment of Object.keys(environments)) {
      for (const file of listDropped(dataDir, environment)) {
        const path = join(inboxDir(dataDir, environment), file.name);
        present.add(path);
        const seen = this.#settling.get(path);
        if (!seen || seen.size !== file.size || seen.mtimeMs !== file.mtimeMs) {
          this.#settling.set(path, { size: file.size, mtimeMs: file.mtimeMs, since: now });
          if (config.settleMs > 0) continue;
        } else if (now - seen.since < config.settleMs) continue;
        this.#settling.delete(path);
        const importId = newImportId();
        const storedName = storedNameFor(importId, file.name);
        if (!moveFile(path, join(inboxDir(dataDir, environment, 'processing'), storedName))) continue;
        await putImport(store, newImportRecord({ importId, environment, fileName: file.name, storedName, source: 'inbox', bytes: file.size }));
        this.#o.log('info', { environment, import_id: importId, file: file.name, bytes: file.size }, 'file taken from the inbox');
      }
    }
    for (const path of this.#settling.keys()) if (!present.has(path)) this.#settling.delete(path);
  }
}
