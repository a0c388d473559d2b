// The trained model (issue 5) against the real server: POST /api/{env}/model/rebuild builds it in
// the trainer worker from the events posted through the events API, personalized lists then rank
// by it, each rebuild switches to a new version atomically (one version stored, `current` moved
// in one transaction), and a build that fails (here: over model.trained.maxMemoryBytes) answers
// 500 model-build-failed while the previous version keeps serving. What is stored is read back
// from the data directory's LMDB, read-only, in the layouts of src/store/trained-model.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { open } from 'lmdb';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { Engine } from '../../src/serving/engine.ts';
import type { RankTask } from '../../src/serving/task.ts';
import { modelStorePath, Store } from '../../src/store/open.ts';
import { type TrainedModelMeta, trainedCurrentKey } from '../../src/store/trained-model.ts';
import { getToken } from '../helpers/auth.ts';
import { postAndApply, view } from '../helpers/events.ts';
import { assertProblem } from '../helpers/problem.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const DEMO = DEFAULT_CONFIG.environments.demo!;
/**
 * No co-occurrence rows (window 0) and no content (items without text), so before a model
 * exists a personalized list can only be its `popular` fallback, and after, only the model
 * reorders it. The memory budget admits a model of the first 10 items, not of 40.
 */
const CONFIG = {
  environments: {
    demo: {
      ...DEMO,
      model: {
        ...DEMO.model,
        cooccurrenceWindow: 0,
        trained: { ...DEMO.model.trained, rebuildIntervalSec: 0, maxMemoryBytes: 8_000 },
      },
    },
    other: DEMO,
  },
};

interface Rebuilt {
  environment: string;
  status: string;
  version: number;
  items: number;
  users: number;
  build_ms: number;
  memory_bytes: number;
}

describe('trained model: rebuild endpoint, atomic switch, failed builds', () => {
  let server: TestServer;
  let token: string;
  let sent = 0;

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}/api${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...init.headers } });

  async function postEvents(events: Array<[user: string, item: string]>): Promise<void> {
    sent += events.length;
    // The model builder writes histories (what personalized lists seed from) within ~500 ms.
    await postAndApply(server.url, 'demo', events.map(([user, item]) => view(item, user)), sent);
  }

  async function personalized(user: string): Promise<string[]> {
    const res = await api('/demo/recommendations/requests', {
      method: 'POST',
      body: JSON.stringify({ page_type: 'home', channel: 'www', device_id: `device-of-${user}`, user_id: user, lists: [{ list_name: 'recommended_for_you', list_size: 3 }] }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { lists: Array<{ items: Array<{ item_id: string }> }> }).lists[0]!.items.map((i) => i.item_id);
  }

  const rebuild = (environment = 'demo') => api(`/${environment}/model/rebuild`, { method: 'POST' });

  /**
   * `read` once it satisfies `done`, polling for up to 3 s: the test's own LMDB handle reads
   * another process's commits.
   */
  async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    const deadline = Date.now() + 3000;
    let value = await read();
    while (!done(value) && Date.now() < deadline) {
      await sleep(50);
      value = await read();
    }
    return value;
  }

  /** The stored trained-model state: `current` and the versions that have rows (a fresh read snapshot). */
  async function stored(): Promise<{ current: TrainedModelMeta | undefined; versions: number[] }> {
    const root = open({ path: modelStorePath(server.dataDir), maxDbs: 4, readOnly: true });
    try {
      root.resetReadTxn();
      const current = root.openDB({ name: 'model-state' }).get(trainedCurrentKey('demo')) as TrainedModelMeta | undefined;
      const versions = new Set<number>();
      for (const key of root.openDB({ name: 'model', encoding: 'binary' }).getKeys({ start: ['demo', 'tm'], end: ['demo', 'tm', '\uffff'] })) {
        versions.add((key as [string, string, number])[2]);
      }
      return { current, versions: [...versions] };
    } finally {
      await root.close();
    }
  }

  before(async () => {
    server = await startServer({ config: CONFIG });
    token = await getToken(server);
    const items = Array.from({ length: 40 }, (_, i) => `a${i}`);
    for (const id of items) {
      const res = await api(`/demo/items/article/${id}`, { method: 'PUT', body: JSON.stringify({ environment: 'demo', item_id: id, item_type: 'article' }) });
      assert.equal(res.status, 200, await res.text());
    }
    // a0..a2 are the most popular (what the fallback ranks first); a5, a6, a7 are consumed together.
    const events: Array<[string, string]> = [];
    for (let u = 0; u < 12; u++) for (const item of ['a0', 'a1', 'a2']) events.push([`fan${u}`, item]);
    for (let u = 0; u < 6; u++) for (const item of ['a5', 'a6', 'a7']) events.push([`trio${u}`, item]);
    events.push(['reader', 'a5'], ['reader', 'a6']);
    await postEvents(events);
  });
  after(() => server.close());

  test('rebuild needs a token for the environment: 401 without one, 401 for another environment', async () => {
    await assertProblem(await fetch(`${server.url}/api/demo/model/rebuild`, { method: 'POST' }), 401, 'unauthorized');
    await assertProblem(await rebuild('other'), 401, 'unauthorized');
    assert.deepEqual((await stored()).versions, [], 'nothing was built');
  });

  test('before any model, a personalized list is the popular fallback', async () => {
    const list = await personalized('reader');
    assert.deepEqual(list.slice(0, 3).sort(), ['a0', 'a1', 'a2']);
  });

  test('a rebuild answers with the new version, its size, time and memory; the list then ranks by the model', async () => {
    const res = await rebuild();
    assert.equal(res.status, 200, await res.clone().text());
    const body = (await res.json()) as Rebuilt;
    assert.equal(body.status, 'built');
    assert.equal(body.version, 1);
    assert.equal(body.items, 6);
    assert.ok(body.users >= 19 && body.build_ms >= 0 && body.memory_bytes > 0);
    // a7 was consumed with a5 and a6 by every trio user: the model's first choice for `reader`.
    // The very next request: the trainer's model notice reaches the ranking workers before its reply.
    assert.equal((await personalized('reader'))[0], 'a7');
    const { current, versions } = await eventually(stored, (s) => s.versions.length === 1);
    assert.equal(current?.version, 1);
    assert.deepEqual(versions, [1]);
  });

  test('a second rebuild switches to version 2 and removes version 1; /health reports the build', async () => {
    const res = await rebuild();
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as Rebuilt).version, 2);
    const after = await eventually(stored, (s) => s.versions.length === 1 && s.current?.version === 2);
    assert.deepEqual(after.versions, [2]);
    assert.equal(after.current?.version, 2);
    const health = (await (await fetch(`${server.url}/health`)).json()) as {
      trained_model: Record<string, { builds: number; failures: number; last_build: { version: number; build_ms: number; memory_bytes: number } }>;
    };
    const demo = health.trained_model.demo!;
    assert.equal(demo.last_build.version, 2);
    assert.equal(demo.failures, 0);
    assert.ok(demo.builds >= 2 && demo.last_build.memory_bytes > 0);
  });

  test('a ranking engine switches versions only when it syncs between batches: one response never mixes two', async () => {
    // A ranking worker's engine, in this process, on the server's data directory: a batch is
    // sync() then its requests, so a request ranked after the model notice and before the next
    // sync must still be the old version's in every list, and the one after it the new one's.
    const store = new Store({ ...DEFAULT_CONFIG.store, dataDir: server.dataDir });
    try {
      const engine = new Engine(store, CONFIG.environments);
      const article = ['article'];
      const task = (): RankTask => ({
        environment: 'demo',
        nowSec: Math.floor(Date.now() / 1000),
        userId: 'reader',
        deviceId: 'device-of-reader',
        context: { id: 'a5', type: 'article' },
        history: [],
        exclude: [],
        lists: [
          { strategy: 'personalized', size: 3, limit: 3, itemTypes: article, filters: [], content: [] },
          { strategy: 'item_to_item', size: 3, limit: 3, itemTypes: article, filters: [], content: [] },
        ],
      });
      const listsOf = (outcome: ReturnType<Engine['recommend']>) => ('lists' in outcome ? outcome.lists.map((l) => l.ids) : assert.fail(JSON.stringify(outcome)));
      const before = listsOf(engine.recommend(task()));
      assert.match(before[0]!, /^a7/, 'version 2: a7 first for reader');
      // More users read a5 and a6 with a8 than with a7: the next version puts a8 first.
      const events: Array<[string, string]> = [];
      for (let u = 0; u < 9; u++) for (const item of ['a5', 'a6', 'a8']) events.push([`quartet${u}`, item]);
      await postEvents(events);
      const res = await rebuild();
      assert.equal(((await res.json()) as Rebuilt).version, 3);
      store.resetReadTxns();
      engine.modelChanged({ kind: 'model', environment: 'demo' });
      assert.deepEqual(listsOf(engine.recommend(task())), before, 'no sync yet: every list still ranked by version 2');
      engine.sync(Date.now());
      const after = listsOf(engine.recommend(task()));
      assert.match(after[0]!, /^a8/, 'synced: version 3 ranks the personalized list');
      assert.notDeepEqual(after[1], before[1], 'and the item-to-item list, in the same response');
    } finally {
      await store.close();
    }
  });

  test('a build over the memory budget answers 500 model-build-failed; version 3 keeps serving', async () => {
    const events: Array<[string, string]> = [];
    for (let i = 10; i < 40; i++) events.push([`wide${i}`, `a${i}`], [`wide${i}`, `a${(i % 30) + 10}`]);
    await postEvents(events);
    const problem = await assertProblem(await rebuild(), 500, 'model-build-failed');
    assert.match(String(problem.detail), /maxMemoryBytes.*previous model keeps serving/);
    assert.deepEqual((await stored()).versions, [3], 'no partial version left');
    assert.equal((await stored()).current?.version, 3);
    assert.equal((await personalized('reader'))[0], 'a8', 'lists still rank by version 3');
    const health = (await (await fetch(`${server.url}/health`)).json()) as { trained_model: Record<string, { failures: number; last_error: { error: string } }> };
    assert.equal(health.trained_model.demo!.failures, 1);
    assert.match(health.trained_model.demo!.last_error.error, /maxMemoryBytes/);
  });
});
