import assert from 'node:assert/strict';
// Reads every record of the data directory's LMDB databases in the test process (LMDB allows
// a second process beside the server), so a test can assert that a rejected request changed
// nothing at all.
import { setTimeout as sleep } from 'node:timers/promises';
import { open, type Database } from 'lmdb';
import { lastEventSeq } from '../../src/store/event-log.ts';
import { mainDatabaseOptions, modelStorePath, reportsStorePath, storePath } from '../../src/store/open.ts';

const DATABASES = ['items', 'item-index', 'index-items', 'changes', 'clients', 'meta', 'event-ids', 'event-batches', 'model-state', 'report-state', 'feeds', 'feed-state', 'imports', 'import-rejects'];
/** Databases whose values are raw bytes (event batches, model arrays): dumped as hex. */
const BINARY_DATABASES = ['events', 'model', 'report-blobs'];
/** The databases of the model and reports environments (store/open.ts); the others are in the main one. */
const MODEL_DATABASES = new Set(['model', 'model-state']);
const REPORT_DATABASES = new Set(['report-state', 'report-blobs']);

/** Every environment of a data directory, read-only, and a database by name from the right one. */
function openReadOnly(dataDir: string) {
  const main = open({ path: storePath(dataDir), maxDbs: 16, readOnly: true });
  const model = open({ path: modelStorePath(dataDir), maxDbs: 4, readOnly: true });
  const reports = open({ path: reportsStorePath(dataDir), maxDbs: 4, readOnly: true });
  const rootOf = (name: string) => (MODEL_DATABASES.has(name) ? model : reports);
  return {
    // The main environment's as the service opens them (shared msgpack structures: store/open.ts).
    db: (name: string, encoding?: 'binary') => (MODEL_DATABASES.has(name) || REPORT_DATABASES.has(name) ? rootOf(name).openDB({ name, ...(encoding ? { encoding } : {}) }) : main.openDB(mainDatabaseOptions(name))) as Database,
    close: () => Promise.all([main.close(), model.close(), reports.close()]),
  };
}

/**
 * Records written on their own schedule by background writers that no single request drives,
 * left out of snapshots: the trained model and its training-data snapshot (the trainer rebuilds
 * on a timer and on start, [env, 'tm', ...] and [env, 'training', ...]: CI caught a snapshot
 * written between a test's two reads), the request counter's report records (`requests`, recommended items, coverage, latency:
 * flushed about once a second after earlier requests, main-thread/request-counter.ts), and the
 * builder's ranked lists ([env, 'top', ...]: written at its start and when an hour turns,
 * builder/popularity.ts), the fingerprint of its item view records ([env, 'ivf']: written at
 * its start once the records are made, store/item-view.ts), and the report counters' state
 * snapshot with the clicked items' chunks ([env, 'repsnap', ...], [env, 'repk', ...]: about once
 * a minute, builder/report-snapshot.ts).
 */
function ownedByBackgroundWriter(key: unknown): boolean {
  if (!Array.isArray(key)) return false;
  if (['tm', 'training', 'top', 'ivf', 'repc', 'repn', 'replat', 'repsnap', 'repk'].includes(key[1] as string)) return true;
  return key[1] === 'repr' && key[4] === 'requests';
}

/**
 * How long a snapshot waits for the model builder to write what it has not written yet: long,
 * because the builder runs at niceness 10 and, beside the suite's other servers on a saturated
 * machine, waits its turn for seconds (5 s was not always enough).
 */
const SETTLE_TIMEOUT_MS = 20_000;
const SETTLE_POLL_MS = 10;

/**
 * Whether the model builder has written everything the catalog change feed and the event log
 * hold (its positions in `model-state` reached their ends). Until then it may still write to
 * `model`, `model-state`, `item-index`, `index-items` and `meta` on its own, so a before/after
 * comparison would see changes no request made.
 */
function builderCaughtUp(store: ReturnType<typeof openReadOnly>): boolean {
  const state = store.db('model-state');
  for (const key of store.db('changes').getKeys({ reverse: true, limit: 1 })) {
    if (((state.get(['pos', 'changes']) as number | undefined) ?? 0) < (key as number)) return false;
  }
  // The log as written before event-batches, and since (store/event-log.ts).
  const log = { events: store.db('events', 'binary') as Database<Buffer>, eventBatches: store.db('event-batches') as Database<[number, unknown[]]> };
  const environments = new Set<string>();
  for (const db of [log.events, log.eventBatches] as Database[]) {
    const first = (options: { start?: [string, number] }) => {
      for (const key of db.getKeys({ ...options, limit: 1 })) return (key as [string, number])[0];
      return undefined;
    };
    for (let name = first({}); name !== undefined; name = first({ start: [name, Number.MAX_SAFE_INTEGER] })) environments.add(name);
  }
  for (const environment of environments) {
    // The model's position and the report counters' (their own thread and position).
    const reportState = store.db('report-state');
    const position = Math.min((state.get([environment, 'pos', 'events']) as number | undefined) ?? 0, (reportState.get([environment, 'pos', 'reports']) as number | undefined) ?? 0);
    if (position < lastEventSeq(log, environment)) return false;
  }
  return true;
}

/**
 * Every record as one string, once the model builder has caught up (at most SETTLE_TIMEOUT_MS,
 * then as it is: a stopped or killed server's builder will not catch up).
 */
export async function snapshotStore(dataDir: string): Promise<string> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    // A fresh environment per attempt so every read sees the latest commit of the server.
    const store = openReadOnly(dataDir);
    try {
      if (builderCaughtUp(store) || Date.now() >= deadline) {
        const dump: Record<string, unknown[]> = {};
        for (const name of DATABASES) {
          dump[name] = [...store.db(name).getRange()].filter(({ key }) => !ownedByBackgroundWriter(key)).map(({ key, value }) => [key, value]);
        }
        for (const name of BINARY_DATABASES) {
          dump[name] = [...store.db(name, 'binary').getRange()].filter(({ key }) => !ownedByBackgroundWriter(key)).map(({ key, value }) => [
            key,
            (value as Buffer).toString('hex'),
          ]);
        }
        return JSON.stringify(dump);
      }
    } finally {
      await store.close();
    }
    await sleep(SETTLE_POLL_MS);
  }
}

/** Every change-feed record, oldest first. */
export async function readChanges(dataDir: string): Promise<Array<Record<string, unknown>>> {
  const root = open({ path: storePath(dataDir), maxDbs: 16, readOnly: true });
  try {
    return [...root.openDB(mainDatabaseOptions('changes')).getRange({ start: 0 })].map(({ value }) => value as Record<string, unknown>);
  } finally {
    await root.close();
  }
}

/**
 * Fails, naming the records that differ (database, key, both values cut short), unless two
 * snapshots are equal: the snapshots are hundreds of kilobytes, and assert.equal's message cuts
 * them before the first difference.
 */
export function assertSameStore(after: string, before: string, message = 'the store is unchanged'): void {
  if (after === before) return;
  const records = (snapshot: string) => {
    const out = new Map<string, string>();
    for (const [db, entries] of Object.entries(JSON.parse(snapshot) as Record<string, Array<[unknown, unknown]>>)) {
      for (const [key, value] of entries) out.set(`${db} ${JSON.stringify(key)}`, JSON.stringify(value));
    }
    return out;
  };
  const [a, b] = [records(after), records(before)];
  const lines: string[] = [];
  for (const [key, value] of a) if (b.get(key) !== value) lines.push(`${key}: ${b.has(key) ? `${b.get(key)!.slice(0, 120)} → ` : 'new '}${value.slice(0, 120)}`);
  for (const key of b.keys()) if (!a.has(key)) lines.push(`${key}: removed`);
  assert.fail(`${message}; ${lines.length} records differ:\n${lines.slice(0, 20).join('\n')}`);
}
