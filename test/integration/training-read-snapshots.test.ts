// A trained build runs for seconds to minutes without a turn of the event loop, so lmdb-js's own
// reset of read snapshots (on a setTimeout) never comes while it trains. A snapshot left open
// keeps every page freed after it began: at 1,000,000 items the builder's flushes during builds
// grew the model file to 19 GB for 0.8 GB of data (issue 11). The read of the training input
// must end with no read snapshot of this thread open in either environment, checked right after
// it returns (same tick) in LMDB's reader table, on events posted to a real server.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { readTrainingData } from '../../src/training/training-data.ts';
import { Store } from '../../src/store/open.ts';
import { postAndApply, view } from '../helpers/events.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const DEMO = DEFAULT_CONFIG.environments.demo!;
let server: TestServer;

/** This process's reader slots holding a snapshot (a txn id, not '-') in LMDB's reader table. */
function openSnapshots(readerList: string): string[] {
  return readerList
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([pid, , txn]) => pid === String(process.pid) && txn !== undefined && txn !== '-')
    .map((fields) => fields.join(' '));
}

before(async () => {
  server = await startServer();
  const events = [];
  for (let u = 0; u < 20; u++) for (let i = 0; i < 5; i++) events.push(view(`a${(u + i) % 9}`, `user-${u}`));
  await postAndApply(server.url, 'demo', events, events.length);
  await server.stop();
});

after(() => server.close());

test('reading the training input leaves no read snapshot open in either environment', () => {
  const store = new Store({ ...DEFAULT_CONFIG.store, dataDir: server.dataDir });
  try {
    const data = readTrainingData(store, 'demo', DEMO, false);
    const openModel = openSnapshots(store.modelRoot.readerList());
    const openMain = openSnapshots(store.root.readerList());
    assert.equal(data.eventsRead, 100, 'every posted event was read');
    assert.ok(data.items.length > 0, 'items of two users or more became columns');
    assert.deepEqual(openModel, [], 'model environment');
    assert.deepEqual(openMain, [], 'main environment');
  } finally {
    void store.close();
  }
});

test('the reader table check sees a snapshot that is open', () => {
  const store = new Store({ ...DEFAULT_CONFIG.store, dataDir: server.dataDir });
  try {
    store.items.getKeys({ limit: 1 }).asArray;
    assert.ok(openSnapshots(store.root.readerList()).length >= 1, store.root.readerList());
  } finally {
    void store.close();
  }
});
