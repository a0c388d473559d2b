// POST /api/{env}/model/rebuild answers with a model of every event accepted before the request,
// also when a build is already running: it waits for that one and builds once more (main-thread/model-trainer.ts
// `cover`). Joining the running build instead answered, after a load, with a model of part of the
// events. The first rebuild here is not awaited, so the second one usually arrives while it runs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { getToken } from '../helpers/auth.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { view } from '../helpers/events.ts';

const DEMO = DEFAULT_CONFIG.environments.demo!;
/** No automatic builds: only the two asked for run. */
const CONFIG = { environments: { demo: { ...DEMO, model: { ...DEMO.model, trained: { ...DEMO.model.trained, rebuildIntervalSec: 0 } } } } };

let server: TestServer;
let token: string;

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${server.url}/api/demo${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...init.headers } });

/** The log's end and the builder's applied position, from /health. */
async function positions(): Promise<{ applied: number; log: number }> {
  const health = (await (await fetch(`${server.url}/health`)).json()) as {
    model_builder: { environments: Record<string, { applied_position: number; log_position: number }> } | null;
  };
  const demo = health.model_builder?.environments.demo;
  return { applied: demo?.applied_position ?? 0, log: demo?.log_position ?? 0 };
}

async function postViews(pairs: Array<[user: string, item: string]>): Promise<void> {
  const events = pairs.map(([user, item]) => view(item, user));
  const res = await fetch(`${server.url}/api/demo/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ events }) });
  assert.equal(res.status, 200, await res.text());
}

before(async () => {
  server = await startServer({ config: CONFIG });
  token = await getToken(server);
  for (const id of ['a', 'b', 'c']) {
    const res = await api(`/items/article/${id}`, { method: 'PUT', body: JSON.stringify({ environment: 'demo', item_id: id, item_type: 'article' }) });
    assert.equal(res.status, 200, await res.text());
  }
});
after(() => server.close());

test('a rebuild asked while another runs answers with a model of every event accepted before it', async () => {
  await postViews([['u1', 'a'], ['u1', 'b'], ['u2', 'a'], ['u2', 'b']]);
  // The items have their indices once the builder has applied these (training resolves items by them).
  for (let i = 0; i < 200 && (await positions()).applied < 4; i++) await sleep(50);
  const first = api('/model/rebuild', { method: 'POST' });
  await postViews([['u3', 'a'], ['u3', 'c'], ['u4', 'a'], ['u4', 'c']]);
  const second = await api('/model/rebuild', { method: 'POST' });
  assert.equal(second.status, 200, await second.clone().text());
  const body = (await second.json()) as { status: string; events_position: number };
  const { log } = await positions();
  assert.equal(log, 8);
  assert.equal(body.status, 'built');
  assert.equal(body.events_position, log, 'the second rebuild read every event posted before it');
  assert.equal((await first).status, 200);
});
