// Soak: a steady mixed load on one real service for a long time, watching for growth.
//
//   npm run bench -- soak                 60 minutes
//   npm run bench -- soak --minutes 10    shorter
//
// Load (paced, not flat out; about the audit's mix): 40 event batches of 20 events a second
// (800 events/s), 30 recommendation requests a second (two lists), 20 item PUTs a second, over a
// fixed population (2,000 items, 2,000 users), so the model's legitimate state stops growing
// within the warm-up: the builder keeps each user's last `historyLength` (100) events in memory,
// which at 0.4 events/s per user fills in about 4 minutes. With 20,000 users that takes 40
// minutes and reads as growth (about 1 MB/min) that is data, not a leak: `--users N` to see it. Every 30 s it prints the service's RssAnon (anonymous
// resident memory: the process's own, without LMDB's file-backed pages), the main thread's heap
// used, the LMDB file size, the event-loop delay p99 of the main thread, and the p99 of each
// request kind in the window. Verdict: RssAnon after warm-up (the first fifth of the run, at
// most 10 minutes) grows under 5% to the end (mean of the last three samples against the mean
// of the three after warm-up). Exit code 1 on a failed verdict or any request error.
import http from 'node:http';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getToken } from '../test/helpers/auth.ts';
import { startServer } from '../test/helpers/server.ts';
import { procStatusKb } from './wrk-runner.ts';

const { values } = parseArgs({
  options: { minutes: { type: 'string', default: '60' }, 'interval-sec': { type: 'string', default: '30' }, users: { type: 'string', default: '2000' } },
  allowPositionals: true,
});
const minutes = Number(values.minutes);
const intervalSec = Number(values['interval-sec']);
if (!(minutes > 0) || !(intervalSec > 0) || !(Number(values.users) >= 1)) throw new Error('--minutes, --interval-sec and --users must be positive numbers');

const ITEMS = 2000;
const USERS = Number(values.users);
const EVENT_BATCHES_PER_SEC = 40;
const EVENTS_PER_BATCH = 20;
const RECOMMENDATIONS_PER_SEC = 30;
const ITEM_PUTS_PER_SEC = 20;
const TICK_MS = 100;
/** Requests of one kind in flight at most; a tick that finds more skips (and the skip is counted). */
const MAX_IN_FLIGHT = 64;
const TYPES = ['article', 'video', 'product'] as const;

const server = await startServer({ env: { AFFINITY_LOG_LEVEL: 'info' } });
const agent = new http.Agent({ keepAlive: true, maxSockets: 3 * MAX_IN_FLIGHT });
let token = await getToken(server);
const renew = setInterval(() => void getToken(server).then((t) => (token = t)), 30 * 60_000);

let seed = 42;
/** Park–Miller: reproducible load without a dependency. */
const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
const pick = (n: number) => Math.floor(random() * n);
const itemOf = (i: number) => ({ id: `soak-${i}`, type: TYPES[i % TYPES.length]! });

function send(method: string, path: string, body: unknown, auth: boolean): Promise<number> {
  const text = JSON.stringify(body);
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
  if (auth) headers.authorization = `Bearer ${token}`;
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}${path}`, { method, agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(text);
  });
}

const putItem = (i: number, version: number) => {
  const { id, type } = itemOf(i);
  return send('PUT', `/api/demo/items/${type}/${id}`, {
    environment: 'demo',
    item_id: id,
    item_type: type,
    title: `Item ${i} v${version}`,
    categories: [[`c${i % 20}`, `c${i % 20}-${i % 7}`]],
    publication_datetime: new Date(Date.now() - pick(30 * 86_400_000)).toISOString(),
  }, true);
};

console.error(`soak: ${minutes} min, samples every ${intervalSec} s, ${USERS} users; loading ${ITEMS} items`);
for (let i = 0; i < ITEMS; i += 50) await Promise.all(Array.from({ length: Math.min(50, ITEMS - i) }, (_, k) => putItem(i + k, 0)));

interface Kind {
  name: string;
  perSec: number;
  make: () => Promise<number>;
  inFlight: number;
  latenciesMs: number[];
  done: number;
  errors: number;
  skipped: number;
}

const kinds: Kind[] = [
  {
    name: 'events',
    perSec: EVENT_BATCHES_PER_SEC,
    make: () => {
      const events = Array.from({ length: EVENTS_PER_BATCH }, () => {
        const user = pick(USERS);
        const item = itemOf(pick(ITEMS));
        return { event_type: 'detail_pageview', page_type: 'article_detail', device_id: `d${user}`, user_id: `u${user}`, action_item: item.id, action_item_type: item.type, channel: 'www' };
      });
      return send('POST', '/api/demo/events', { events }, false);
    },
  },
  {
    name: 'recommendations',
    perSec: RECOMMENDATIONS_PER_SEC,
    make: () => {
      const user = pick(USERS);
      return send('POST', '/api/demo/recommendations/requests', {
        page_type: 'home',
        channel: 'www',
        device_id: `d${user}`,
        user_id: `u${user}`,
        lists: [{ list_name: 'recommended_for_you', list_size: 20, limit: 10 }, { list_name: 'popular', list_size: 10 }],
      }, true);
    },
  },
  { name: 'item PUTs', perSec: ITEM_PUTS_PER_SEC, make: () => putItem(pick(ITEMS), Date.now()) },
].map((k) => ({ ...k, inFlight: 0, latenciesMs: [], done: 0, errors: 0, skipped: 0 }));

const ticker = setInterval(() => {
  for (const kind of kinds) {
    // Fractional rates per tick accumulate by drawing: perSec/10 on average.
    let n = Math.floor((kind.perSec * TICK_MS) / 1000);
    if (random() < (kind.perSec * TICK_MS) / 1000 - n) n++;
    for (let i = 0; i < n; i++) {
      if (kind.inFlight >= MAX_IN_FLIGHT) {
        kind.skipped++;
        continue;
      }
      kind.inFlight++;
      const started = performance.now();
      kind
        .make()
        .then((status) => {
          if (status < 200 || status > 299) kind.errors++;
          else kind.done++;
        }, () => kind.errors++)
        .finally(() => {
          kind.inFlight--;
          kind.latenciesMs.push(performance.now() - started);
        });
    }
  }
}, TICK_MS);

const p99 = (xs: number[]) => {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;
};
const mb = (bytes: number) => (bytes / 1024 ** 2).toFixed(1);
const procKb = (field: string) => procStatusKb(server.proc.pid!, field)[field] ?? NaN;

interface Sample {
  min: number;
  rssAnonMb: number;
  rssMb: number;
  heapUsedMb: number;
  lmdbMb: number;
  loopP99Ms: number;
  p99Ms: Record<string, number>;
  counts: Record<string, number>;
}
const samples: Sample[] = [];
const startedAt = Date.now();
console.log(['min', 'RssAnon MB', 'RSS MB', 'heap used MB', 'LMDB MB', 'loop p99 ms', ...kinds.map((k) => `${k.name} p99 ms`), ...kinds.map((k) => `${k.name} done`)].join('\t'));

async function sample(): Promise<void> {
  const health = (await (await fetch(`${server.url}/health`)).json()) as { process: { heap_used_bytes: number; event_loop_delay_ms: { p99: number } } };
  const s: Sample = {
    min: Number(((Date.now() - startedAt) / 60_000).toFixed(1)),
    rssAnonMb: Number(mb(procKb('RssAnon') * 1024)),
    rssMb: Number(mb(procKb('VmRSS') * 1024)),
    heapUsedMb: Number(mb(health.process.heap_used_bytes)),
    lmdbMb: Number(mb(statSync(join(server.dataDir, 'db', 'data.mdb')).size)),
    loopP99Ms: Number(health.process.event_loop_delay_ms.p99.toFixed(1)),
    p99Ms: Object.fromEntries(kinds.map((k) => [k.name, Number(p99(k.latenciesMs).toFixed(1))])),
    counts: Object.fromEntries(kinds.map((k) => [k.name, k.done])),
  };
  for (const k of kinds) k.latenciesMs = [];
  samples.push(s);
  console.log([s.min, s.rssAnonMb, s.rssMb, s.heapUsedMb, s.lmdbMb, s.loopP99Ms, ...kinds.map((k) => s.p99Ms[k.name]), ...kinds.map((k) => s.counts[k.name])].join('\t'));
}

await new Promise<void>((resolve) => {
  const timer = setInterval(() => {
    void sample().then(() => {
      if (Date.now() - startedAt >= minutes * 60_000) {
        clearInterval(timer);
        resolve();
      }
    });
  }, intervalSec * 1000);
});
clearInterval(ticker);
clearInterval(renew);
while (kinds.some((k) => k.inFlight > 0)) await new Promise((r) => setTimeout(r, 50));

const warmupMin = Math.min(10, minutes / 5);
const afterWarmup = samples.filter((s) => s.min >= warmupMin);
const mean = (xs: Sample[]) => xs.reduce((a, s) => a + s.rssAnonMb, 0) / xs.length;
const base = mean(afterWarmup.slice(0, 3));
const end = mean(afterWarmup.slice(-3));
const growthPct = ((end - base) / base) * 100;
const errors = kinds.reduce((a, k) => a + k.errors, 0);
console.log(
  `\n${kinds.map((k) => `${k.name}: ${k.done} ok, ${k.errors} errors, ${k.skipped} skipped`).join('; ')}` +
    `\nRssAnon after warm-up (${warmupMin.toFixed(1)} min): ${base.toFixed(1)} MB → end ${end.toFixed(1)} MB: ${growthPct >= 0 ? '+' : ''}${growthPct.toFixed(1)}%` +
    `\nverdict: ${growthPct < 5 && errors === 0 ? 'PASS' : 'FAIL'} (anonymous memory grows under 5% after warm-up, no request errors)`,
);
agent.destroy();
await server.close();
process.exit(growthPct < 5 && errors === 0 ? 0 : 1);
