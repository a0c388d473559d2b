/**
 * @module ingest/ingest-worker
 * Worker entry of catalog ingestion: the feed scheduler and the file-drop watcher, off the main
 * thread (parsing feeds and millions of file rows must not delay HTTP answers). It opens the
 * store itself and writes through the same Catalog as the Items API. Logs go to the main thread
 * as messages (one logger, STYLE §6). On 'stop' it cancels fetches in flight, lets the current
 * import commit its batch, closes the store and exits.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Config, IngestConfig, StoreConfig } from '../config/types.ts';
import { Catalog } from '../store/catalog.ts';
import { Store } from '../store/open.ts';
import { FeedScheduler } from './feeds/scheduler.ts';
import { ImportWatcher } from './imports/watcher.ts';
import type { LogFn } from './log.ts';
import { nameThread } from '../threads/thread-name.ts';
import { reportGcPauses } from '../metrics/gc-pauses.ts';

export interface IngestWorkerData {
  store: StoreConfig;
  environments: Config['environments'];
  ingest: IngestConfig;
  /** How often the feed scheduler looks for due feeds and poll requests. */
  tickMs: number;
}

/** Messages to the worker. */
export type IngestCommand = 'stop' | 'scan' | { type: 'poll'; id: number; environment: string; feedId: string };

/** Messages from the worker. */
export type IngestMessage =
  | { type: 'log'; level: Parameters<LogFn>[0]; fields: Record<string, unknown>; msg: string }
  | { type: 'polled'; id: number; known: boolean };

nameThread('aff-ingest');
reportGcPauses('ingest');
const data = workerData as IngestWorkerData;
const port = parentPort!;
const post = (message: IngestMessage) => port.postMessage(message);
const log: LogFn = (level, fields, msg) => post({ type: 'log', level, fields, msg });

const store = new Store(data.store);
const catalog = new Catalog(store);
const scheduler = new FeedScheduler({
  store,
  catalog,
  environments: data.environments,
  policy: data.ingest.feeds,
  concurrency: data.ingest.feeds.concurrency,
  tickMs: data.tickMs,
  log,
});
const watcher = new ImportWatcher({ store, catalog, environments: data.environments, dataDir: data.store.dataDir, config: data.ingest.imports, log });

let stopping = false;
port.on('message', (command: IngestCommand) => {
  if (command === 'stop') {
    if (stopping) return;
    stopping = true;
    void (async () => {
      await Promise.all([scheduler.close(), watcher.close()]);
      await store.close();
      // The 'message' listener keeps the port referenced: close it so the thread can exit.
      port.close();
    })();
    return;
  }
  if (command === 'scan') {
    watcher.nudge();
    return;
  }
  scheduler.pollNow(command.environment, command.feedId).then(
    (known) => post({ type: 'polled', id: command.id, known }),
    () => post({ type: 'polled', id: command.id, known: false }),
  );
});

scheduler.start();
watcher.start();
