// GET /reports over 90 days (issue 15: at most 50 ms), over loopback HTTP against the service
// started on a data directory filled beforehand with 90 days of counters as the builder and the
// request counter write them: 10 lists, 3 user groups, 5 channels, 6 page types, 10 metrics
// each, 12 event types, in day and hour rollups; the day's coverage bitset over 100,000
// items and its latency histogram. Baseline in the same run: the same report over one day.
// Also /reports/ab over 90 days. Prints median and p99 per task (tinybench).
//
//   npm run bench -- reports          (BENCH_QUICK=1: fewer iterations)
import { Bench } from 'tinybench';
import { Store } from '../src/store/open.ts';
import { addToRollup, COVERAGE_CHUNK_ITEMS, coverageKey, latencyKey, rollupKey } from '../src/store/report-keys.ts';
import { LATENCY_BUCKETS } from '../src/domain/latency-buckets.ts';
import { getToken } from '../test/helpers/auth.ts';
import { startServer, tempDir } from '../test/helpers/server.ts';

const DAYS = 90;
const ITEMS = 100_000;
const METRICS = ['requests', 'impressions', 'clicks', 'conversions', 'add_to_cart', 'purchase', 'revenue', 'users', 'converters', 'revenue_sq'];
const VALUES: Record<string, string[]> = {
  list_name: Array.from({ length: 10 }, (_, i) => `list_${i}`),
  user_group: ['affinity', 'customer', 'cms'],
  channel: ['www', 'www-mobile', 'app', 'app-ios', 'app-android'],
  page_type: ['home', 'category', 'article_detail', 'product_detail', 'video_detail', 'checkout'],
};
const EVENT_TYPES = ['impression', 'click_on_recommendation', 'detail_pageview', 'page_visit', 'add_to_cart', 'purchase', 'item_interaction', 'user_interaction', 'checkpoint', 'remove_from_cart', 'start_subscription', 'cancel_subscription'];
let sink: unknown;

const dataDir = tempDir('affinity-bench-reports-');
const store = new Store({ dataDir: `${dataDir}`, mapSizeBytes: 4 * 1024 ** 3 });
const today = Date.parse(new Date().toISOString().slice(0, 10));
const dayLabel = (i: number) => new Date(today - i * 86_400_000).toISOString().slice(0, 10);
let keys = 0;
for (let d = 0; d < DAYS; d++) {
  const day = dayLabel(d);
  await store.modelRoot.transaction(() => {
    const counts: Array<[string, number]> = [];
    for (const [dimension, values] of Object.entries(VALUES)) {
      for (const value of values) {
        for (const metric of METRICS) {
          counts.push([`${dimension}\u0000${value}\u0000${metric}`, 1000 + d]);
        }
      }
    }
    for (const type of EVENT_TYPES) counts.push([`event_type\u0000${type}\u0000events`, 5000]);
    addToRollup(store.modelState, rollupKey('demo', 'd', day, 'builder'), counts);
    addToRollup(store.modelState, rollupKey('demo', 'd', day, 'requests'), counts.filter(([id]) => id.endsWith('requests')));
    for (let h = 0; h < 24; h++) addToRollup(store.modelState, rollupKey('demo', 'h', `${day}T${String(h).padStart(2, '0')}`, 'builder'), counts);
    keys += counts.length + 26;
    // Coverage as the request counter writes it: chunks of COVERAGE_CHUNK_ITEMS bits.
    for (let chunk = 0; chunk * COVERAGE_CHUNK_ITEMS < ITEMS; chunk++) {
      const bits = new Uint8Array(COVERAGE_CHUNK_ITEMS / 8);
      for (let i = 0; i < bits.length; i += 3) bits[i] = 0xff;
      store.modelState.put(coverageKey('demo', day, chunk), Buffer.from(bits));
    }
    store.modelState.put(latencyKey('demo', 'd', day), Array.from({ length: LATENCY_BUCKETS }, (_, i) => i * 3));
  });
}
await store.close();
console.log(`filled ${DAYS} days: ${keys} counter records (${DAYS * 28} rollups)`);

const server = await startServer({ dataDir });
try {
  const token = await getToken(server, server.demoClient);
  const get = async (path: string) => {
    const res = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    sink = await res.text();
  };
  const to = dayLabel(0);
  const quick = process.env.BENCH_QUICK === '1';
  const bench = new Bench({ iterations: quick ? 20 : 200, time: quick ? 200 : 2000 });
  bench
    .add('reports/days=1 (baseline)', () => get(`/api/demo/reports?from=${to}&to=${to}`))
    .add(`reports/days=${DAYS}`, () => get(`/api/demo/reports?from=${dayLabel(DAYS - 1)}&to=${to}`))
    .add(`reports/days=${DAYS}/breakdown=list_name`, () => get(`/api/demo/reports?from=${dayLabel(DAYS - 1)}&to=${to}&breakdown=list_name`))
    .add(`reports/ab/days=${DAYS}`, () => get(`/api/demo/reports/ab?from=${dayLabel(DAYS - 1)}&to=${to}`));
  await bench.run();
  console.table(bench.table());
  const base = bench.tasks[0]!.result as { latency?: { p50?: number } } | undefined;
  for (const task of bench.tasks) {
    const r = task.result as { latency?: { p50?: number; p99?: number } } | undefined;
    const p50 = r?.latency?.p50 ?? NaN;
    console.log(`${task.name}: median ${p50.toFixed(2)} ms, p99 ${(r?.latency?.p99 ?? NaN).toFixed(2)} ms, ${(p50 / (base?.latency?.p50 ?? NaN)).toFixed(1)}× the one-day report`);
  }
  if (process.env.BENCH_JSON === '1') console.log(JSON.stringify({ node: process.version, tasks: bench.tasks.map((t) => ({ name: t.name, result: t.result })) }));
} finally {
  await server.close();
  void sink;
}
