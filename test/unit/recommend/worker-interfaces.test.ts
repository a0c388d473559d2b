// Piscina's per-worker `interface` objects, as its load balancer receives them: built once per
// worker with memoizeWorkerInterfaces (recommend/worker-interfaces.ts), where Piscina 5 builds a
// new one, with its own accessor closures, for every task it places.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Piscina } from 'piscina';
import { memoizeWorkerInterfaces } from '../../../src/recommend/worker-interfaces.ts';

/** Piscina's load balancer type (its package does not export it by name). */
type LoadBalancer = NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']>;

const ECHO_WORKER = new URL('../../helpers/echo-worker.mjs', import.meta.url).pathname;

test('the load balancer sees the same interface object for a worker on every task, and it reads the live state', async () => {
  assert.equal(memoizeWorkerInterfaces(), true, 'the installed Piscina has the getter this memoizes');
  assert.equal(memoizeWorkerInterfaces(), true, 'a second call changes nothing');
  const seen: object[] = [];
  const usages: number[] = [];
  const loadBalancer: LoadBalancer = (_task, workers) => {
    seen.push(workers[0]!);
    usages.push(workers[0]!.currentUsage);
    return workers[0]!;
  };
  // execArgv: the suite's --import of TypeScript helpers would not load in a plain worker.
  const pool = new Piscina({ filename: ECHO_WORKER, minThreads: 1, maxThreads: 1, idleTimeout: Infinity, loadBalancer, execArgv: [] });
  try {
    for (let i = 0; i < 3; i++) assert.deepEqual(await pool.run({ i }), { i });
    const [a, b] = await Promise.all([pool.run('a'), pool.run('b')]);
    assert.deepEqual([a, b], ['a', 'b']);
  } finally {
    await pool.destroy();
  }
  assert.ok(seen.length >= 5, `the balancer placed every task (${seen.length} calls)`);
  for (const worker of seen) assert.equal(worker, seen[0], 'one interface object per worker');
  // Its getters still read the worker as it is: the second of two concurrent tasks finds one running.
  assert.equal(usages[0], 0);
  assert.ok(usages.includes(1), `currentUsage follows the worker (${usages.join(', ')})`);
});
