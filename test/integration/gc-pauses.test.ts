// /health process.gc_pauses (issue 11: GC pauses on the serving threads, by thread) and process.heaps: every thread
// reports its own collections (perf_hooks 'gc' entries) to the main thread under its kind. The
// service runs with a 1 MB young generation (a V8 flag, so every thread's) so that a few hundred
// requests make each thread that does the work collect: the main thread, the ranking worker and
// the model builder.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { GC_BUCKETS_MS, OVER_5_MS_BUCKET } from '../../src/metrics/gc-pauses.ts';
import { waitFor } from '../helpers/api.ts';
import { getToken } from '../helpers/auth.ts';
import { startServer } from '../helpers/server.ts';

interface Pauses {
  count: number;
  over_5ms: number;
  max_ms: number;
  buckets: number[];
}
type ByThread = Record<'main' | 'ranking' | 'builder' | 'trainer' | 'ingest', Pauses>;

test('GC pauses of the main thread, the ranking worker and the builder reach /health, each under its thread', async (t) => {
  const server = await startServer({ nodeArgs: ['--max-semi-space-size=1'] });
  t.after(() => server.close());
  const token = await getToken(server);
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${server.url}/api/demo/items/article/a${i}`, { method: 'PUT', headers, body: JSON.stringify({ environment: 'demo', item_type: 'article', item_id: `a${i}`, title: `Article ${i}`, tags: ['gc'] }) });
    assert.equal(res.status, 200, await res.text());
  }
  const pauses = async () => ((await (await fetch(`${server.url}/health`)).json()) as { process: { gc_pauses: ByThread } }).process.gc_pauses;
  const deadline = Date.now() + 60_000;
  let seen = await pauses();
  for (let round = 0; Date.now() < deadline && !(seen.main.count > 0 && seen.ranking.count > 0 && seen.builder.count > 0); round++) {
    const events = Array.from({ length: 50 }, (_, k) => ({ event_type: 'detail_pageview', page_type: 'article_detail', channel: 'www', device_id: `d${round}-${k}`, user_id: `u${k}`, action_item: `a${(round + k) % 20}`, action_item_type: 'article' }));
    const posted = await fetch(`${server.url}/api/demo/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ events }) });
    assert.equal(posted.status, 200, await posted.text());
    const body = { page_type: 'article_detail', channel: 'www', device_id: `d${round}`, user_id: `u${round % 50}`, context_item: `a${round % 20}`, context_item_type: 'article', lists: [{ list_name: 'more_like_this', list_size: 5 }, { list_name: 'recommended_for_you', list_size: 5 }] };
    const answered = await Promise.all(Array.from({ length: 20 }, () => fetch(`${server.url}/api/demo/recommendations/requests`, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) => r.status)));
    assert.deepEqual(new Set(answered), new Set([200]));
    if (round % 10 === 9) {
      await sleep(200);
      seen = await pauses();
    }
  }
  for (const thread of ['main', 'ranking', 'builder'] as const) {
    const p = seen[thread];
    assert.ok(p.count > 0, `${thread}: collections reported: ${JSON.stringify(seen)}`);
    assert.equal(p.buckets.reduce((a, b) => a + b, 0), p.count, `${thread}: every pause in a bucket`);
    assert.equal(p.over_5ms, p.buckets.slice(OVER_5_MS_BUCKET).reduce((a, b) => a + b, 0), `${thread}: over 5 ms are the buckets above 5 ms`);
    assert.ok(p.max_ms > 0, `${thread}: the longest pause is kept`);
  }
  for (const thread of ['trainer', 'ingest'] as const) assert.equal(seen[thread].buckets.length, GC_BUCKETS_MS.length + 1, `${thread} is reported too`);
});

test("every thread's V8 heap reaches /health and /metrics under its kind: the builder's two threads (model and report counters) summed", async (t) => {
  const server = await startServer();
  t.after(() => server.close());
  type Heaps = Record<'main' | 'ranking' | 'builder' | 'trainer' | 'ingest', { used_bytes: number; total_bytes: number; external_bytes: number; threads: number }>;
  // Each worker posts its heap as it starts: every thread is counted once the service is ready.
  const heaps = await waitFor('every thread heard from', async () => {
    const h = ((await (await fetch(`${server.url}/health`)).json()) as { process: { heaps: Heaps } }).process.heaps;
    return h.builder.threads === 2 && h.ranking.threads >= 1 && h.trainer.threads === 1 && h.ingest.threads === 1 ? h : undefined;
  });
  assert.equal(heaps.main.threads, 1);
  for (const [thread, h] of Object.entries(heaps)) {
    assert.ok(h.used_bytes > 1e6 && h.total_bytes >= h.used_bytes && h.external_bytes > 0, `${thread}: ${JSON.stringify(h)}`);
  }
  const text = await (await fetch(`${server.url}/metrics`)).text();
  for (const thread of ['main', 'ranking', 'builder', 'trainer', 'ingest']) {
    const used = new RegExp(`^affinity_thread_heap_bytes\\{thread="${thread}",state="used"\\} (\\d+)$`, 'm').exec(text);
    assert.ok(used && Number(used[1]) > 1e6, `${thread} in /metrics`);
  }
});
