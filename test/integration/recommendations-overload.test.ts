// Overload of the ranking pool: a full queue and a missed deadline answer 503 with Retry-After
// and a problem body, never hang, and the server keeps serving afterwards (the pool and its
// workers recover). Settings come from the configuration (recommend.maxQueue, deadlineMs).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { getToken } from '../helpers/auth.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const REQUEST = {
  page_type: 'home',
  channel: 'www',
  device_id: 'd-overload',
  lists: [{ list_name: 'latest', list_size: 50 }, { list_name: 'popular', list_size: 50 }],
};

async function recommend(server: TestServer, token: string): Promise<Response> {
  return fetch(`${server.url}/api/demo/recommendations/requests`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(REQUEST),
  });
}

async function putItems(server: TestServer, token: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const item = { environment: 'demo', item_id: `o${i}`, item_type: 'article', title: `Item ${i}`, publication_datetime: new Date(Date.UTC(2026, 0, 1 + i)).toISOString() };
    const res = await fetch(`${server.url}/api/demo/items/article/o${i}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(item),
    });
    assert.equal(res.status, 200);
  }
}

async function assertBusy(res: Response): Promise<void> {
  assert.equal(res.status, 503);
  assert.equal(res.headers.get('retry-after'), '1');
  assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
  const body = (await res.json()) as { status: number; title: string };
  assert.equal(body.status, 503);
  assert.equal(body.title, 'Service Unavailable');
}

describe('a full queue answers 503 with Retry-After (recommend.maxQueue = 0)', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startServer({ config: { recommend: { ...DEFAULT_CONFIG.recommend, workers: 1, maxQueue: 0 } } });
    token = await getToken(server);
  });
  after(() => server.close());

  test('every recommendation request is refused at once, and other endpoints still answer', async () => {
    for (let i = 0; i < 3; i++) await assertBusy(await recommend(server, token));
    const health = await fetch(`${server.url}/health`);
    assert.equal(health.status, 200);
  });
});

describe('a missed deadline answers 503 with Retry-After (recommend.deadlineMs = 1)', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startServer({ config: { recommend: { ...DEFAULT_CONFIG.recommend, workers: 1, maxBatch: 4, deadlineMs: 1 } } });
    token = await getToken(server);
    await putItems(server, token, 30);
  });
  after(() => server.close());

  test('of 64 concurrent requests, those not answered within 1 ms get 503; none hangs, none is a 500', async () => {
    // 64 requests in one turn: 4 go to the worker, the other 60 wait behind them for longer than 1 ms.
    const responses = await Promise.all(Array.from({ length: 64 }, () => recommend(server, token)));
    const busy = responses.filter((r) => r.status === 503);
    assert.ok(busy.length > 0, 'some requests missed the deadline');
    for (const r of responses) assert.ok(r.status === 200 || r.status === 503, `status ${r.status}`);
    for (const r of busy) await assertBusy(r);
    for (const r of responses.filter((r) => r.status === 200)) await r.arrayBuffer();
  });

  test('after the overload the server still answers (a lone request may still miss 1 ms: only 200 or 503)', async () => {
    const res = await recommend(server, token);
    assert.ok(res.status === 200 || res.status === 503, `status ${res.status}`);
    await res.arrayBuffer();
    assert.ok(!server.logs.some((l) => l.includes('"level":50')), 'no internal error was logged');
  });
});
