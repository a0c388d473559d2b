// Piscina's per-worker `interface` objects, as its load balancer receives them: built once per
// worker with memoizeWorkerInterfaces (serving/worker-interfaces.ts), where Piscina 5 builds a
// new one, with its own accessor closures, for every task it places. And each worker's tasks in
// flight kept in a TaskTable (replaceTaskMaps) instead of a Map: the same answers to every call
// Piscina makes, and a pool that runs, balances and finishes tasks as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Piscina } from 'piscina';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { TaskTable, memoizeWorkerInterfaces, replaceTaskMaps } from '../../../src/serving/worker-interfaces.ts';

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

test('a TaskTable answers as a Map for every call Piscina makes on a worker\'s tasks', () => {
  const table = new TaskTable<number, string>();
  const map = new Map<number, string>();
  const same = () => {
    assert.equal(table.size, map.size);
    assert.deepEqual([...table], [...map]);
    assert.deepEqual([...table.values()], [...map.values()]);
  };
  // Past the arrays' first length (8), deletes from the middle and the ends, a key set twice.
  for (let i = 0; i < 12; i++) [table, map].forEach((m) => m.set(i, `t${i}`));
  same();
  for (const key of [0, 5, 11, 42]) assert.equal(table.delete(key), map.delete(key));
  same();
  [table, map].forEach((m) => m.set(3, 'again'));
  [table, map].forEach((m) => m.set(20, 't20'));
  same();
  for (const key of [3, 4, 20, 99]) {
    assert.equal(table.has(key), map.has(key));
    assert.equal(table.get(key), map.get(key));
  }
  // Piscina reads the one task of a worker running one as the first entry.
  for (const key of [...map.keys()].slice(1)) [table, map].forEach((m) => m.delete(key));
  const [first] = table;
  assert.deepEqual(first, [...map][0]);
  table.clear();
  map.clear();
  same();
});

test("replaceTaskMaps gives Piscina's workers a TaskTable, and a pool runs, balances and finishes tasks with it", async () => {
  assert.equal(replaceTaskMaps(), true, 'the installed Piscina assigns taskInfos in its WorkerInfo constructor');
  assert.equal(replaceTaskMaps(), true, 'a second call changes nothing');
  const require = createRequire(import.meta.url);
  const { WorkerInfo } = require(join(dirname(require.resolve('piscina')), 'worker_pool', 'index.js')) as { WorkerInfo: { prototype: object } };
  // The exchange itself: the constructor's empty Map becomes a table; anything else is kept.
  const info = Object.create(WorkerInfo.prototype) as { taskInfos: unknown };
  info.taskInfos = new Map();
  assert.ok(info.taskInfos instanceof TaskTable);
  const kept = new Map([[1, 'task']]);
  info.taskInfos = kept;
  assert.equal(info.taskInfos, kept);

  const usages: number[] = [];
  const loadBalancer: LoadBalancer = (_task, workers) => {
    usages.push(workers[0]!.currentUsage);
    return workers[0]!;
  };
  const pool = new Piscina({ filename: ECHO_WORKER, minThreads: 1, maxThreads: 1, idleTimeout: Infinity, loadBalancer, concurrentTasksPerWorker: 4, execArgv: [] });
  try {
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.run({ round, i })));
      assert.deepEqual(answers, Array.from({ length: 6 }, (_, i) => ({ round, i })));
    }
    assert.deepEqual(await pool.run('alone'), 'alone');
  } finally {
    await pool.destroy();
  }
  // The worker's usage followed its table: tasks placed while others ran saw them counted.
  assert.equal(usages[0], 0);
  assert.ok(Math.max(...usages) >= 2, `currentUsage counted tasks in flight (${usages.join(', ')})`);
});
