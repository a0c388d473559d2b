// Stopping the ranking pool (recommend/pool.ts) with real workers over a real data directory.
// Piscina stops a worker with worker.terminate(); a worker stopped inside an lmdb-js call that
// throws (opening its environment) aborts the whole process, so a stop waits for workers still
// starting. Seen in CI: a worker started in place of a failed one was stopped while it opened
// LMDB, and the service died of SIGABRT instead of its graceful stop.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { loadConfig } from '../../../src/config/load.ts';
import { RankingPool } from '../../../src/recommend/pool.ts';
import { Store } from '../../../src/store/open.ts';
import { tempDir } from '../../helpers/server.ts';

test('a pool stopped while its workers start stops them only once their engines are built, and every worker stops', async (t) => {
  const dataDir = tempDir();
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig({ AFFINITY_DATA_DIR: dataDir, AFFINITY_RANK_WORKERS: '2' });
  // The service opens the store before its workers do (it creates the environments).
  const store = new Store(config.store);
  t.after(() => store.close());
  for (let round = 0; round < 3; round++) {
    const pool = new RankingPool(config, (err) => assert.fail(`a worker failed: ${String(err)}`));
    assert.equal(pool.engineBuilt, false, 'the workers are still starting');
    let built = false;
    const ready = pool.ready().then(() => (built = true));
    await pool.close();
    assert.ok(built, 'the engines were built before the workers were stopped');
    await ready;
    assert.equal(pool.threads, 0, 'no worker is left');
  }
});
