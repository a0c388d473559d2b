// The calling thread's coarse CPU clock (threads/thread-cpu.ts), which paces the builder's catch-up
// flushes: it advances with work done on this thread and hardly at all while the thread sleeps,
// which a wall clock would not tell apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { threadCpuClock } from '../../../src/threads/thread-cpu.ts';

test('the thread CPU clock counts work, not sleep', async () => {
  const cpuMs = threadCpuClock();
  const beforeWork = cpuMs();
  const wallStart = performance.now();
  let x = 0;
  while (performance.now() - wallStart < 100) x += Math.sqrt(x + 1);
  const worked = cpuMs() - beforeWork;
  const wall = performance.now() - wallStart;
  assert.ok(x > 0);
  // Good to a few ms (scheduler ticks), and a shared machine may take the core away for part of the loop.
  assert.ok(worked > 20 && worked <= wall + 10, `worked ${worked} ms of CPU in ${wall} ms`);
  const beforeSleep = cpuMs();
  await sleep(200);
  const slept = cpuMs() - beforeSleep;
  assert.ok(slept >= 0 && slept < 50, `${slept} ms of CPU while sleeping 200 ms`);
});

test('the exact thread CPU clock times a millisecond of work to a small fraction of it, where the plain one reads short', () => {
  // process.cpuUsage() counts every thread of this process; this test's other threads are idle.
  const errors = (cpuMs: () => number) => {
    const out: number[] = [];
    for (let i = 0; i < 40; i++) {
      const process0 = process.cpuUsage();
      const clock0 = cpuMs();
      const end = performance.now() + 1;
      let x = 0;
      while (performance.now() < end) x += Math.sqrt(x + 1);
      const clock = cpuMs() - clock0;
      const used = process.cpuUsage(process0);
      out.push(clock - (used.user + used.system) / 1000);
    }
    return out.sort((a, b) => a - b)[out.length >> 1]!;
  };
  const exact = errors(threadCpuClock(true));
  assert.ok(Math.abs(exact) < 0.2, `exact clock off by ${exact} ms (median) on 1 ms of work`);
  // What the plain clock misses here depends on the kernel's tick; it is never ahead.
  assert.ok(errors(threadCpuClock()) <= 0.05);
});
