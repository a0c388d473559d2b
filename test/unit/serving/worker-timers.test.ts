// A ranking worker's event loop turns between tasks (main-thread/ranking-pool.ts: Piscina's 'async'
// atomics). With Piscina's default it never did, and the timer lmdb-js sets on every read snapshot
// a batch renews stayed in the worker's timer list for good: ~2 Timeout objects per request, a
// heap that only grew (30 MB after 18 s at ~11,000 requests/s) and the worker's longest GC pauses.
// Under the default this worker does not even answer the probe: its event loop never turns.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from '../../helpers/server.ts';

const HELPER = fileURLToPath(new URL('../../helpers/rank-worker-timers.ts', import.meta.url));
const PROBE = fileURLToPath(new URL('../../helpers/worker-timer-probe.mjs', import.meta.url));
const REQUESTS = 2000;

test('after 2,000 requests a ranking worker answers from its event loop and holds a bounded number of timers', async (t) => {
  const dataDir = tempDir();
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--import', PROBE, HELPER, dataDir, String(REQUESTS)], { timeout: 120_000 });
  const timers = JSON.parse(stdout) as Array<number | null>;
  assert.equal(timers.length, 1, 'one ranking worker');
  assert.notEqual(timers[0], null, 'the ranking worker never answered: its event loop does not turn between tasks');
  // Two per request with the leak (4,000 here); a few dozen pending at any time without it.
  assert.ok(timers[0]! < REQUESTS / 10, `the ranking worker holds ${timers[0]} timers after ${REQUESTS} requests`);
});
