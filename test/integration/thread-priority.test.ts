// Thread priorities (Linux): serving threads keep the process's priority; the model builder
// runs at builder.niceness (default 10) and the trainer at 19 in the SCHED_IDLE class, so on a
// saturated core requests go first. Read from /proc/<pid>/task/*/stat (field 19 is the nice
// value, field 41 the scheduling policy).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, type TestServer } from '../helpers/server.ts';

/** Linux scheduling policies (sched.h). */
const SCHED_OTHER = 0;
const SCHED_IDLE = 5;

/**
 * Nice value of each named thread of `pid` (the first of a name), waiting for `names` to exist;
 * `policy` receives each one's scheduling policy.
 */
async function niceByThread(pid: number, names: string[], policy = new Map<string, number>()): Promise<Map<string, number>> {
  for (let waited = 0; ; waited += 100) {
    const nice = new Map<string, number>();
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        // comm may hold spaces and parentheses: the fields after it start at the last ')'.
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        for (const name of [Number(tid) === pid ? 'main' : undefined, nice.has(comm) ? undefined : comm]) {
          if (name === undefined) continue;
          nice.set(name, Number(fields[16]));
          policy.set(name, Number(fields[38]));
        }
      } catch {
        // The thread ended while read.
      }
    }
    if (names.every((n) => nice.has(n))) return nice;
    if (waited > 20_000) throw new Error(`threads ${names} not all found: ${[...nice.keys()]}`);
    await sleep(100);
  }
}

const servers: TestServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

test('the builder runs at niceness 10 and the trainer at 19; the main thread and ranking workers at 0', { skip: process.platform !== 'linux' }, async () => {
  const server = await startServer();
  servers.push(server);
  const nice = await niceByThread(server.proc.pid!, ['main', 'aff-builder', 'aff-trainer', 'aff-rank']);
  assert.deepEqual(
    ['main', 'aff-rank', 'aff-builder', 'aff-trainer'].map((n) => [n, nice.get(n)]),
    [['main', 0], ['aff-rank', 0], ['aff-builder', 10], ['aff-trainer', 19]],
  );
});

test('the trainer runs in the SCHED_IDLE class; the main thread, ranking workers and builder in the normal one', { skip: process.platform !== 'linux' ? 'Linux only' : spawnSync('chrt', ['--help']).error ? 'no chrt (util-linux) here' : false }, async () => {
  const server = await startServer();
  servers.push(server);
  const policy = new Map<string, number>();
  // The trainer sets its class right after it starts: wait until it shows.
  for (let waited = 0; ; waited += 100) {
    await niceByThread(server.proc.pid!, ['main', 'aff-builder', 'aff-trainer', 'aff-rank'], policy);
    if (policy.get('aff-trainer') === SCHED_IDLE || waited > 10_000) break;
    await sleep(100);
  }
  assert.deepEqual(
    ['main', 'aff-rank', 'aff-builder', 'aff-trainer'].map((n) => [n, policy.get(n)]),
    [['main', SCHED_OTHER], ['aff-rank', SCHED_OTHER], ['aff-builder', SCHED_OTHER], ['aff-trainer', SCHED_IDLE]],
  );
});

test('builder.niceness 0 (AFFINITY_BUILDER_NICENESS) keeps the builder at the process priority', { skip: process.platform !== 'linux' }, async () => {
  const server = await startServer({ env: { AFFINITY_BUILDER_NICENESS: '0' } });
  servers.push(server);
  const nice = await niceByThread(server.proc.pid!, ['main', 'aff-builder']);
  assert.equal(nice.get('aff-builder'), 0);
});
