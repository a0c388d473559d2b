// The scheduling class of a thread (src/threads/thread-class.mjs), read back from /proc (field 41 of the
// thread's stat is its policy): SCHED_IDLE set on a worker thread, the normal class while it
// writes, SCHED_IDLE again after; a thread in the normal class is never put in SCHED_IDLE by a write.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';

const SCHED_OTHER = 0;
const SCHED_IDLE = 5;
const skip = process.platform !== 'linux' ? 'Linux only' : spawnSync('chrt', ['--help']).error ? 'no chrt (util-linux) here' : false;

/** Policies a worker thread sees of itself: after `setIdle`, inside a write, after it. */
function policiesInWorker(setIdle: boolean): Promise<number[]> {
  const moduleUrl = new URL('../../../src/threads/thread-class.mjs', import.meta.url).href;
  const code = `
    const { parentPort } = require('node:worker_threads');
    const { readFileSync } = require('node:fs');
    const policy = () => { const s = readFileSync('/proc/thread-self/stat', 'utf8'); return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[38]); };
    import(${JSON.stringify(moduleUrl)}).then(({ setSchedulingClass, writingAtNormalClass }) => {
      if (${setIdle}) setSchedulingClass('idle');
      const before = policy();
      const inside = writingAtNormalClass(() => policy());
      parentPort.postMessage([before, inside, policy()]);
    });`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true });
    worker.once('message', (m: number[]) => void worker.terminate().then(() => resolve(m)));
    worker.once('error', reject);
  });
}

test('a thread put in SCHED_IDLE writes in the normal class and returns to SCHED_IDLE', { skip }, async () => {
  assert.deepEqual(await policiesInWorker(true), [SCHED_IDLE, SCHED_OTHER, SCHED_IDLE]);
});

test('a thread in the normal class stays in it through a write', { skip }, async () => {
  assert.deepEqual(await policiesInWorker(false), [SCHED_OTHER, SCHED_OTHER, SCHED_OTHER]);
});

test('SCHED_IDLE is entered only where the thread may leave it again: CAP_SYS_NICE, or RLIMIT_NICE of at least 20 - nice', async () => {
  const { mayLeaveIdleClass } = await import('../../../src/threads/thread-class.mjs');
  const status = (capEff: string) => `Name:\tnode\nCapInh:\t0000000000000000\nCapEff:\t${capEff}\nCapBnd:\t000001ffffffffff\n`;
  const limits = (soft: string) => `Limit                     Soft Limit           Hard Limit           Units\nMax nice priority         ${soft}                    ${soft}\nMax realtime priority     0                    0\n`;
  const rootInAContainer = '00000000a80425fb'; // Docker's default set: no CAP_SYS_NICE (bit 23)
  assert.equal(mayLeaveIdleClass(status('000001fffeffffff'), limits('0'), 19), true, 'CAP_SYS_NICE');
  assert.equal(mayLeaveIdleClass(status(rootInAContainer), limits('0'), 19), false, 'the default limit permits no nice value');
  assert.equal(mayLeaveIdleClass(status(rootInAContainer), limits('1'), 19), true, 'RLIMIT_NICE 1 permits nice 19');
  assert.equal(mayLeaveIdleClass(status(rootInAContainer), limits('1'), 10), false, 'but not nice 10');
  assert.equal(mayLeaveIdleClass(status(rootInAContainer), limits('unlimited'), 0), true);
  assert.equal(mayLeaveIdleClass('', '', 19), false, 'nothing readable: stay out');
});
