// Property-based fuzzing of every route (test/helpers/fuzz.ts) against a real server: no 5xx,
// no hang, no stack trace in a body, and the data stored before the run reads back unchanged
// after it. FUZZ_RUNS overrides the case count (default 3000); the long mode is
// `npm run bench -- fuzz`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiClient } from '../helpers/api.ts';
import { getToken } from '../helpers/auth.ts';
import { fuzzRoutes } from '../helpers/fuzz.ts';
import { startServer } from '../helpers/server.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);

test(`${RUNS} fuzzed requests over every route: all below 500, none hangs, no stack trace, seeded data intact`, async (t) => {
  const server = await startServer({ config: { ingest: { feeds: { timeoutMs: 2000, retries: 0 } } } });
  t.after(() => server.close());
  const token = await getToken(server);
  const api = apiClient(server, token);

  // Seed: items, a feed and events, read back after the run.
  const items = Array.from({ length: 5 }, (_, i) => ({ environment: 'demo', item_id: `seed-${i}`, item_type: 'article', title: `Seed ${i}`, tags: ['seed'] }));
  for (const item of items) assert.equal((await api('PUT', `/api/demo/items/article/${item.item_id}`, item)).status, 200);
  assert.equal((await api('PUT', '/api/demo/feeds/seed-feed', { url: 'https://feeds.invalid/seed.rss', format: 'rss', item_type: 'article', interval: '30d' })).status, 201);
  const events = Array.from({ length: 5 }, (_, i) => ({ event_type: 'detail_pageview', event_id: `seed-ev-${i}`, page_type: 'home', device_id: 'seed-d', user_id: 'seed-u', action_item: `seed-${i}`, action_item_type: 'article', channel: 'www' }));
  assert.equal((await api('POST', '/api/demo/events', { events })).status, 200);
  const read = async () => ({
    items: await Promise.all(items.map(async (i) => (await api('GET', `/api/demo/items/article/${i.item_id}`)).text)),
    feed: (await api<{ url: string; format: string; interval: string }>('GET', '/api/demo/feeds/seed-feed')).body,
  });
  const before = await read();

  const counts = await fuzzRoutes({ url: server.url, token, environment: 'demo' }, RUNS);
  t.diagnostic(`cases ${counts.cases}, 4xx ${counts.status4xx}, 5xx ${counts.status5xx}, by status ${JSON.stringify(counts.byStatus)}`);
  assert.equal(counts.cases, RUNS);
  assert.equal(counts.status5xx, 0);
  assert.ok(counts.status4xx > RUNS / 2, 'most mutated requests are refused');
  assert.ok(Object.keys(counts.byStatus).some((s) => s.startsWith('2')), 'some requests pass validation and reach the handlers');

  assert.equal(server.proc.exitCode, null, 'the server is still running');
  const after = await read();
  assert.deepEqual(after.items, before.items);
  assert.deepEqual([after.feed.url, after.feed.format, after.feed.interval], [before.feed.url, before.feed.format, before.feed.interval]);
  const recent = await api<{ events: Array<{ event_id?: string; action_item: string }> }>('GET', '/api/demo/events?limit=1000');
  for (const e of events) assert.ok(recent.body.events.some((r) => r.event_id === e.event_id && r.action_item === e.action_item), `${e.event_id} still stored`);
});
