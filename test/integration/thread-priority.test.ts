// Thread priorities (Linux): serving threads keep the process's priority; the model builder
// runs at builder.niceness (default 10) and the trainer at 19, so on a saturated core requests
// go first. Read from /proc/<pid>/task/*/stat (field 19 is the nice value).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, type TestServer } from '../helpers/server.ts';

/** Nice value of each named thread of `pid` (the first of a name), waiting for `names` to exist. */
async function niceByThread(pid: number, names: string[]): Promise<Map<string, number>> {
  for (let waited = 0; ; waited += 100) {
    const nice = new Map<string, number>();
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        // comm may hold spaces and parentheses: the fields after it start at the last ')'.
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (!nice.has(comm)) nice.set(comm, Number(fields[16]));
        if (Number(tid) === pid) nice.set('main', Number(fields[16]));
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

test('builder.niceness 0 (AFFINITY_BUILDER_NICENESS) keeps the builder at the process priority', { skip: process.platform !== 'linux' }, async () => {
  const server = await startServer({ env: { AFFINITY_BUILDER_NICENESS: '0' } });
  servers.push(server);
  const nice = await niceByThread(server.proc.pid!, ['main', 'aff-builder']);
  assert.equal(nice.get('aff-builder'), 0);
});
