// threads/supervised-worker.ts starts, restarts and stops every worker kind but the ranking
// workers (Piscina's): a real worker thread (test/helpers/echo-worker.ts) crashed, restarted,
// stopped, and one that ignores its stop terminated after the bound. Run in a process of its own
// (test/helpers/supervised-worker-run.ts says why).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const RUN = fileURLToPath(new URL('../../helpers/supervised-worker-run.ts', import.meta.url));

test('a supervised worker is restarted after an unexpected exit, stopped by its message, and terminated when it ignores it', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', RUN], { timeout: 60_000 });
  const run = JSON.parse(stdout) as {
    runningAfterCrash: boolean;
    runningAfterRestart: boolean;
    stopping: [beforeClose: boolean, afterClose: boolean];
    afterStop: { running: boolean; exits: number[]; bye: number };
    stuckStop: { ms: number; running: boolean };
    messages: string[];
    logs: Array<{ level: number; msg: string; code?: number }>;
  };
  assert.equal(run.runningAfterCrash, false, 'not running between the crash and the restart');
  assert.equal(run.runningAfterRestart, true);
  assert.deepEqual(run.messages.slice(0, 5), ['started', 'pong', 'started', 'pong', 'bye'], 'answered before the crash and again after the restart; said bye at the stop');
  assert.deepEqual(run.afterStop, { running: false, exits: [3, 0], bye: 1 });
  assert.deepEqual(run.stopping, [false, true], 'stopping once a close was asked (what the handles refuse new work by), not after a crash');
  assert.deepEqual(run.logs[0], { level: 50, msg: 'echo worker stopped unexpectedly', code: 3 });
  assert.ok(run.stuckStop.ms >= 300 && run.stuckStop.ms < 5000, `terminated after the 300 ms bound: ${run.stuckStop.ms} ms`);
  assert.equal(run.stuckStop.running, false);
  assert.deepEqual(run.logs.slice(1), [{ level: 40, msg: 'stuck worker did not stop in time: terminated (what it had is lost)' }]);
});
