// Stopping the ranking pool (main-thread/ranking-pool.ts) with real workers over a real data directory
// (test/helpers/stop-pool.ts, in a process of its own). Piscina stops a worker with
// worker.terminate(); a worker stopped inside an lmdb-js call that throws (opening its
// environment) aborts the whole process, so a stop waits for workers still starting. Seen in CI:
// a worker started in place of a failed one was stopped while it opened LMDB, and the service
// died of SIGABRT instead of its graceful stop.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from '../../helpers/server.ts';

const STOP_POOL = fileURLToPath(new URL('../../helpers/stop-pool.ts', import.meta.url));

test('a pool stopped while its workers start stops them only once their engines are built, and every worker stops', async (t) => {
  const dataDir = tempDir();
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', STOP_POOL, dataDir, '2']);
  const rounds = JSON.parse(stdout) as Array<{ startingAtClose: boolean; builtAtClose: boolean; threadsLeft: number; failures: string[] }>;
  assert.equal(rounds.length, 2);
  for (const round of rounds) {
    assert.deepEqual(round, { startingAtClose: true, builtAtClose: true, threadsLeft: 0, failures: [] });
  }
});
