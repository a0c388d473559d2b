// Recommendation requests over HTTP on loopback, on the seeded synthetic data set
// (scripts/synthetic/: 100,000 items with categories and publication times, 1,000,000 events
// from 50,000 users with a popularity skew) loaded once through the public APIs: POST
// /api/demo/recommendations/requests for an article page with two lists of 10 (personalized
// `recommended_for_you`, item-to-item `more_like_this`; bench/wrk/post-recommendations.lua).
// Peak throughput at 64 connections, then p50/p99 latency at half of that peak (paced), beside
// the same-run bare uWebSockets.js JSON responder (bench/baseline.ts) answering the same POSTs.
// Also: CPU per request of every thread of the service (main, ranking workers, builder, trainer,
// V8's and libuv's helpers), from /proc/<pid>/task/*/stat around the peak run and an unpaced run
// at 4 connections (light load), and GC pauses during those runs: all isolates' from --trace-gc
// (serving ones guessed by how often they scavenged), and each thread's own from /health
// process.gc_pauses (main and ranking are the serving threads). Then the light run
// again beside background work: while ~10,000 events/s are posted, and while a rebuild of the
// trained model runs.
// Targets (issue 11): CPU per request ≤ 100 µs (throughput ≥ 10% of the bare responder's); p99 ≤
// 5 ms at 4 connections (also beside events and a rebuild) and ≤ 10 ms at half of peak; no GC
// pause over 5 ms on the serving threads.
// Catalog size: BENCH_ITEMS (default 100,000) items, 10 events per item, one user per 2 items.
// The data set is loaded once into one data directory (the model builder then catches up with
// every event); each round restarts the service on it, so every round is a fresh process and
// also times the start-up (ranking workers building their engines on the catalog). Server pinned
// to core 0 (all its threads, ranking workers included), wrk to core 1 (bench/wrk-runner.ts).
// Context items: every CONTEXT_EVERY-th page view of the generated events, so an item is a
// context as often as it is viewed (the popularity skew of real detail pages, tail included).
// The service runs as `npm start` runs it: node on the build (dist/), so run `npm run build` first.
// Run: npm run bench -- recommendations   (needs wrk: apt-get install -y wrk)
//   BENCH_QUICK=1  one round, short runs, 10,000 items / 100,000 events / 5,000 users
//   BENCH_ITEMS=n  catalog size (events 10 n, users n / 2), e.g. 10000, 100000, 1000000
//   BENCH_ROUNDS=n (default 3)   BENCH_JSON=1 also JSON lines   BENCH_QUIET_WAIT_SEC (wrk-runner)
//   BENCH_DATA_DIR=dir  keep the loaded data set there and reuse it in later runs (for repeated
//                profiling: loading 100k items takes minutes); unset, a fresh temporary directory.
//                A directory prepared for another BENCH_ITEMS is refused. Every round serves a
//                fresh copy of it, so what a round writes (the events posted beside, request
//                counters) reaches neither the later rounds nor the kept set.
//   BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'  more node flags for the measured service
// Exit code 1 only when requests failed (non-2xx, socket errors, timeouts), not for a missed target.
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MsSummaryWire } from '../src/http/routes/health.ts';
import { GC_BUCKETS_MS, OVER_5_MS_BUCKET } from '../src/metrics/gc-pauses.ts';
import { DEFAULT_OPTIONS, generateEventBatches, type DatasetOptions } from '../scripts/synthetic/dataset.ts';
import { fetchToken, loadDataset, tokenSource } from '../scripts/synthetic/load.ts';
import { getToken } from '../test/helpers/auth.ts';
import { startServer, type TestServer } from '../test/helpers/server.ts';
import {
  checkWrk,
  CONNECTIONS,
  createWrkRunner,
  DISTURBED_PCT,
  LOAD_CORE,
  measured,
  median,
  percentile,
  PIN,
  pinned,
  procStatusKb,
  round3,
  runBench,
  SERVER_CORE,
  startBaseline,
  type Measured,
  type Target,
  WRK_DIR,
  type WrkRun,
} from './wrk-runner.ts';
import { failures, parseWrkResult, requestsPerSec } from './wrk-result.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const ITEMS = Number(process.env.BENCH_ITEMS ?? (QUICK ? 10_000 : DEFAULT_OPTIONS.items));
const DATASET: DatasetOptions = {
  ...DEFAULT_OPTIONS,
  itemTypes: [...DEFAULT_OPTIONS.itemTypes],
  items: ITEMS,
  events: ITEMS * 10,
  users: Math.max(2, Math.floor(ITEMS / 2)),
};
const ENVIRONMENT = DATASET.environment;
/** Seconds of each discarded warm-up run, the peak run, pacing calibration and the half-load run. */
const WARMUP_SEC = QUICK ? 1 : 3;
/**
 * Warm-up runs repeat until a run's CPU per request is within WARMUP_SETTLED of the run before,
 * for at most this long. At 1,000,000 items the first ~20 s after a start cost up to twice what
 * the service costs later (JIT compilation on helper threads, the first touches of the LMDB map):
 * the peak run measures the service as it keeps running, and the first warm-up run's figure is
 * reported beside it.
 */
const WARMUP_MAX_SEC = QUICK ? 1 : 30;
const WARMUP_SETTLED = 0.1;
const PEAK_SEC = QUICK ? 3 : 10;
const CALIBRATE_SEC = QUICK ? 1 : 2;
const HALF_SEC = QUICK ? 3 : 10;
/** The light-load run: unpaced, this many connections. */
const LIGHT_CONNECTIONS = 4;
const LIGHT_SEC = QUICK ? 3 : 10;
const CPU_TARGET_US = 100;
const LIGHT_P99_TARGET_MS = 5;
const GC_PAUSE_TARGET_MS = 5;
const LIST_SIZE = 10;
const RATIO_TARGET = 0.1;
const P99_TARGET_MS = 10;
/** One context line per this many generated page views: ~16,600 lines for 1M events. */
const CONTEXT_EVERY = 50;
/** Requests of the response check before each Affinity round's measurement. */
const CHECK_REQUESTS = 20;
/** The model builder must apply every event within this; it must not stall for BUILDER_STALL_SEC. */
// At 1,000,000 items on a slow VM the builder made no progress visible for the first 60 s after
// the load (its positions move only at a flush, every 8 s while behind, on a core shared with
// the service's settling after 10,000,000 events): the stall allowance is 180 s.
const BUILDER_TIMEOUT_SEC = 1800;
const BUILDER_STALL_SEC = 180;

const runner = createWrkRunner({ label: 'recommendations bench', calibrateSec: CALIBRATE_SEC, pacedSec: HALF_SEC });
const log = (message: string) => console.error(`recommendations bench: ${message}`);

const tmp = mkdtempSync(join(tmpdir(), 'affinity-bench-'));
/** A kept data directory (BENCH_DATA_DIR) is outside `tmp`, which is removed at the end. */
const KEPT_DATA_DIR = process.env.BENCH_DATA_DIR;
const dataDir = KEPT_DATA_DIR ?? join(tmp, 'data');
/** In a kept data directory: what prepare() returned, with the data set it loaded. */
const PREPARED_FILE = join(dataDir, 'bench-prepared.json');

interface Health {
  model_builder: { events_applied: number; positions: Record<string, number>; flush_ms?: MsSummaryWire } | null;
  request_counter?: { flush_ms: MsSummaryWire } | null;
}

/**
 * Builds the trained model now (the service would build one only at its next start or hour),
 * so every round serves it and none measures a build running beside the requests; returns the
 * build's ms, or undefined when the model is switched off.
 */
async function buildTrainedModel(url: string, token: string): Promise<number | undefined> {
  // node:http, not fetch: the answer comes once the model serves, and at 1,000,000 items a build
  // takes longer than fetch's 300 s wait for response headers (the first 1M run failed there).
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(`${url}/api/${ENVIRONMENT}/model/rebuild`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  if (status !== 200) throw new Error(`model rebuild answered ${status}: ${text}`);
  const body = JSON.parse(text) as { status: string; build_ms?: number };
  return body.status === 'built' ? body.build_ms : undefined;
}

/** Waits until the builder's written position is the last event; returns the seconds waited. */
async function waitForBuilder(url: string, events: number): Promise<number> {
  const start = Date.now();
  let last = -1;
  let changedAt = start;
  let reportedAt = start;
  for (;;) {
    const health = (await (await fetch(`${url}/health`)).json()) as Health;
    const position = health.model_builder?.positions[ENVIRONMENT] ?? 0;
    if (position >= events) return (Date.now() - start) / 1000;
    const now = Date.now();
    if (position !== last) [last, changedAt] = [position, now];
    if (now - changedAt > BUILDER_STALL_SEC * 1000 || now - start > BUILDER_TIMEOUT_SEC * 1000) {
      throw new Error(`model builder at event ${position} of ${events} after ${((now - start) / 1000).toFixed(0)} s: ${JSON.stringify(health)}`);
    }
    if (now - reportedAt >= 15_000) {
      log(`model builder at event ${position} of ${events}`);
      reportedAt = now;
    }
    await sleep(500);
  }
}

interface Prepared {
  client: NonNullable<TestServer['demoClient']>;
  itemsSec: number;
  eventsSec: number;
  catchUpSec: number;
}

/** A kept data directory's earlier preparation, when it holds this data set; throws for another. */
function preparedBefore(): Prepared | undefined {
  if (!KEPT_DATA_DIR || !existsSync(PREPARED_FILE)) return undefined;
  const saved = JSON.parse(readFileSync(PREPARED_FILE, 'utf8')) as Prepared & { dataset: DatasetOptions };
  if (JSON.stringify(saved.dataset) !== JSON.stringify(DATASET)) throw new Error(`${dataDir} holds another data set (${saved.dataset.items} items): choose another BENCH_DATA_DIR`);
  log(`reusing the data set loaded into ${dataDir}`);
  return saved;
}

/** Loads the data set into `dataDir` through the APIs and waits for the model builder. */
async function prepare(): Promise<Prepared> {
  const before = preparedBefore();
  if (before) return before;
  mkdirSync(dataDir, { recursive: true });
  const server = await startServer({ dataDir });
  running = server;
  try {
    runner.pinProcess(server.proc.pid!, SERVER_CORE);
    const client = server.demoClient;
    if (!client) throw new Error('the service printed no demo client on its first start');
    const summary = await loadDataset({
      url: server.url,
      token: tokenSource(server.url, client.clientId, client.clientSecret),
      options: DATASET,
      concurrency: CONNECTIONS,
      onProgress: (p) => log(`loading ${p.phase}: ${p.done}/${p.total} in ${p.elapsedSec.toFixed(1)} s`),
    });
    const catchUpSec = await waitForBuilder(server.url, DATASET.events);
    const buildMs = await buildTrainedModel(server.url, (await fetchToken(server.url, client.clientId, client.clientSecret)).accessToken);
    if (buildMs !== undefined) log(`trained model built in ${(buildMs / 1000).toFixed(1)} s`);
    warnFromLog(server, 'loading');
    const prepared = { client, itemsSec: summary.itemsSec, eventsSec: summary.eventsSec, catchUpSec };
    if (KEPT_DATA_DIR) writeFileSync(PREPARED_FILE, JSON.stringify({ ...prepared, dataset: DATASET }));
    return prepared;
  } finally {
    await server.stop();
    running = undefined;
  }
}

/** Writes the context file (`type id` lines); returns its line count and distinct items. */
function writeContexts(file: string): { lines: string[]; distinct: number } {
  const lines: string[] = [];
  let views = 0;
  for (const batch of generateEventBatches(DATASET, 1000)) {
    for (const event of batch) {
      if (event.event_type !== 'detail_pageview') continue;
      if (views++ % CONTEXT_EVERY === 0) lines.push(`${String(event.action_item_type)} ${String(event.action_item)}`);
    }
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { lines, distinct: new Set(lines).size };
}

/** The request post-recommendations.lua sends, for user `u` and one context line. */
function requestBody(u: number, context: string): string {
  const [type, id] = context.split(' ');
  return JSON.stringify({
    page_type: 'article_detail',
    channel: 'www',
    device_id: `d${u}`,
    user_id: `u${u}`,
    context_item: id,
    context_item_type: type,
    lists: [
      { list_name: 'recommended_for_you', list_size: LIST_SIZE },
      { list_name: 'more_like_this', list_size: LIST_SIZE },
    ],
  });
}

/**
 * CHECK_REQUESTS requests before measuring: each must be a 200 (else it throws), and lists
 * shorter than LIST_SIZE are reported. Returns the first request's milliseconds.
 */
async function checkResponses(url: string, token: string, contexts: string[]): Promise<number> {
  const short: string[] = [];
  let firstMs = 0;
  for (let k = 0; k < CHECK_REQUESTS; k++) {
    const u = 1 + ((k * 7919) % (DATASET.users - 1));
    const context = contexts[Math.floor((k * contexts.length) / CHECK_REQUESTS)]!;
    const t0 = performance.now();
    const res = await fetch(`${url}/api/${ENVIRONMENT}/recommendations/requests`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: requestBody(u, context),
    });
    const text = await res.text();
    if (k === 0) firstMs = performance.now() - t0;
    if (res.status !== 200) throw new Error(`recommendation request (u${u}, ${context}) answered ${res.status}: ${text}`);
    const body = JSON.parse(text) as { lists?: Array<{ list_name: string; items: unknown[] }> };
    const sizes = (body.lists ?? []).map((l) => `${l.list_name} ${l.items.length}`);
    if (sizes.length !== 2 || body.lists!.some((l) => l.items.length < LIST_SIZE)) short.push(`u${u} ${context}: ${sizes.join(', ') || 'no lists'}`);
  }
  if (short.length > 0) log(`WARNING: ${short.length} of ${CHECK_REQUESTS} checked responses lack 2 lists of ${LIST_SIZE}: ${short.join('; ')}`);
  return firstMs;
}

/** Prints the service's warn and error log lines (pino levels 40 and up), grouped by message. */
function warnFromLog(server: TestServer, when: string): void {
  const counts = new Map<string, number>();
  for (const line of server.logs) {
    let entry: { level?: number; msg?: string };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if ((entry.level ?? 0) >= 40) counts.set(entry.msg ?? line, (counts.get(entry.msg ?? line) ?? 0) + 1);
  }
  for (const [msg, n] of counts) log(`service log while ${when}: ${n} × ${msg}`);
  // A service that died says why outside its JSON log (V8's fatal errors, a native crash).
  const { exitCode, signalCode } = server.proc;
  if ((exitCode !== null && exitCode !== 0) || (signalCode !== null && signalCode !== 'SIGTERM')) {
    const last = server.logs.filter((line) => !line.startsWith('{') && !/Scavenge|Mark-Compact|Mark-sweep|Minor Mark/.test(line)).slice(-30);
    log(`the service exited (code ${exitCode}, signal ${signalCode}) while ${when}; its last lines:\n${last.join('\n')}`);
  }
}

// --- one round of each variant ---

interface RoundResult {
  peak: Measured;
  /** µs of CPU per request by thread (cpuPerRequest) in the peak run and the light run. */
  peakCpu: Record<string, number>;
  light: Measured;
  lightCpu: Record<string, number>;
  half: Measured;
  /** Affinity only: light load while events stream in, and while the trained model is rebuilt. */
  beside?: { events: Measured; eventsPerSec: number; rebuild: Measured; rebuildSec: number };
  /** GC pauses (ms) during the peak and light runs, of the serving threads and of the idle ones; Affinity only (--trace-gc). */
  gcPausesMs?: number[];
  idleGcPausesMs?: number[];
  /** --trace-gc's isolates in the measured runs: scavenges and longest pause, serving ones first. */
  gcIsolates?: string;
  /** Affinity only: GC pauses in the same runs by thread, as each thread reported them (/health process.gc_pauses). */
  gcByThread?: Record<string, ThreadPauses>;
  /** Resident memory of the service after the runs (VmRSS, and RssAnon: not the LMDB map). */
  rssMb?: number;
  rssAnonMb?: number;
  /** Affinity only: spawn to ready (the ranking engines built; the port opens before), and the first request. */
  startSec?: number;
  firstRequestMs?: number;
  /** The warm-up: its seconds, and the CPU per request (µs, all threads) of its first and last runs. */
  warmup: { seconds: number; firstUs: number; lastUs: number };
  /** Affinity only: the periodic commits over the round (/health after it), issue 12's ≤ 1 ms each. */
  commits?: { requestCounter?: MsSummaryWire; builder?: MsSummaryWire };
}

/**
 * Pause of each garbage collection in --trace-gc lines (`[pid:isolate] ... Scavenge ..., 1.2 / 0.0
 * ms ...`), and of a mark-compact's biggest incremental marking step (`biggest step 9.0 ms`), split
 * by whether its isolate (thread) scavenged through the runs. The target is about the serving
 * threads (main, ranking workers): they allocate per request and scavenge all through a run (at 4
 * connections, 10 s: main 46 times, the ranking worker 38). The builder, trainer and ingest
 * threads scavenge seldom or never (the builder now and then, taking the request counters the
 * main thread posts each second), but V8's memory reducer gives each a few mark-compacts in the first
 * ~25 s after start (8 s apart), and a niced thread's collection is stretched by the core's
 * serving load (to 20–490 ms, and one of the builder's to 3 s): counted as the service's worst
 * pause, they were no serving thread's. So the `servingThreads` isolates that scavenged most
 * serve (the main thread and the ranking workers: /proc names them); the others are idle. (Before,
 * any isolate that scavenged a tenth as often as the busiest counted as serving: a round whose
 * builder scavenged more than usual counted its stretched marking steps.) `isolates` says, per
 * isolate, how often it scavenged and its longest pause, so a miss names its thread's kind.
 */
function gcPauses(lines: readonly string[], servingThreads: number): { serving: number[]; idle: number[]; isolates: string } {
  const byIsolate = new Map<string, { pauses: number[]; scavenges: number }>();
  for (const line of lines) {
    const m = /^\[\d+:(0x[0-9a-f]+)\].*?(Scavenge|Mark-Compact|Mark-sweep|Minor Mark-Sweep)\b.*?, ([\d.]+) \/ [\d.]+ ms/.exec(line);
    if (!m) continue;
    let isolate = byIsolate.get(m[1]!);
    if (!isolate) byIsolate.set(m[1]!, (isolate = { pauses: [], scavenges: 0 }));
    isolate.pauses.push(Number(m[3]));
    // The steps of incremental marking stop the thread too, and on one core (where concurrent
    // markers cannot run) the biggest were longer than the final pause: 10-16 ms against 5-8.
    const step = /biggest step ([\d.]+) ms/.exec(line);
    if (step) isolate.pauses.push(Number(step[1]));
    if (m[2] === 'Scavenge' || m[2] === 'Minor Mark-Sweep') isolate.scavenges++;
  }
  const isolates = [...byIsolate.values()].sort((a, b) => b.scavenges - a.scavenges);
  const serving = isolates.slice(0, servingThreads).filter((i) => i.scavenges > 0);
  const idle = isolates.filter((i) => !serving.includes(i));
  const described = (i: { pauses: number[]; scavenges: number }) => `${i.scavenges} scavenges, longest ${Math.max(0, ...i.pauses)} ms`;
  return {
    serving: serving.flatMap((i) => i.pauses),
    idle: idle.flatMap((i) => i.pauses),
    isolates: `serving: ${serving.map(described).join('; ') || 'none'}; idle: ${idle.map(described).join('; ') || 'none'}`,
  };
}

/** Threads of `pid` that serve requests: the main thread and the ranking workers (named aff-rank). */
function servingThreadCount(pid: number): number {
  let count = 1;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === 'aff-rank') count++;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return count;
}

interface ThreadPauses {
  count: number;
  over5Ms: number;
  /** Upper bound of the bucket of the longest pause (ms; Infinity past the last bound), 0 without pauses. */
  longestUpToMs: number;
}

/** The upper bound of each bucket /health counts pauses in; the last holds the longer ones. */
const GC_BUCKET_BOUNDS_MS = [...GC_BUCKETS_MS, Infinity];

async function gcPausesByThread(url: string): Promise<Record<string, number[]>> {
  const health = (await (await fetch(`${url}/health`)).json()) as { process?: { gc_pauses?: Record<string, { buckets: number[] }> } };
  return Object.fromEntries(Object.entries(health.process?.gc_pauses ?? {}).map(([thread, p]) => [thread, p.buckets]));
}

function pausesBetween(before: Record<string, number[]>, after: Record<string, number[]>): Record<string, ThreadPauses> {
  const out: Record<string, ThreadPauses> = {};
  for (const [thread, buckets] of Object.entries(after)) {
    const delta = buckets.map((n, b) => n - (before[thread]?.[b] ?? 0));
    const last = delta.findLastIndex((n) => n > 0);
    out[thread] = { count: delta.reduce((a, n) => a + n, 0), over5Ms: delta.slice(OVER_5_MS_BUCKET).reduce((a, n) => a + n, 0), longestUpToMs: last < 0 ? 0 : GC_BUCKET_BOUNDS_MS[last]! };
  }
  return out;
}

/** The wrk run that posts recommendation requests to `t`. */
function postRun(t: Pick<Target, 'url' | 'pid'>, token: string, contextFile: string): Omit<WrkRun, 'seconds'> {
  return { url: t.url, script: 'post-recommendations.lua', args: [token, ENVIRONMENT, String(DATASET.users - 1), contextFile], serverPid: t.pid };
}

/** Discarded runs (JIT, caches, the LMDB map's pages) until the CPU per request settles (WARMUP_MAX_SEC). */
async function warmUp(post: Omit<WrkRun, 'seconds'>): Promise<RoundResult['warmup']> {
  const usPerRequest = async () => (await runner.wrk({ ...post, seconds: WARMUP_SEC, retries: 0, threadCpu: true })).threadCpu?.all ?? NaN;
  const firstUs = await usPerRequest();
  let lastUs = firstUs;
  let seconds = WARMUP_SEC;
  while (seconds + WARMUP_SEC <= WARMUP_MAX_SEC) {
    const us = await usPerRequest();
    seconds += WARMUP_SEC;
    const settled = Math.abs(us - lastUs) <= WARMUP_SETTLED * lastUs;
    lastUs = us;
    if (settled) break;
  }
  return { seconds, firstUs, lastUs };
}

async function measure(t: Pick<Target, 'url' | 'pid'>, token: string, contextFile: string, logs?: string[]): Promise<RoundResult> {
  const post = postRun(t, token, contextFile);
  const warmup = await warmUp(post);
  const gcFrom = logs?.length ?? 0;
  const pausesBefore = logs ? await gcPausesByThread(t.url) : undefined;
  const peakRun = await runner.wrk({ ...post, seconds: PEAK_SEC, threadCpu: true });
  const lightRun = await runner.wrk({ ...post, seconds: LIGHT_SEC, connections: LIGHT_CONNECTIONS, threadCpu: true });
  const gc = logs ? gcPauses(logs.slice(gcFrom), servingThreadCount(t.pid)) : undefined;
  // The ranking workers post what they collected at most once a second, from their next batch.
  const gcByThread = pausesBefore ? pausesBetween(pausesBefore, await gcPausesByThread(t.url)) : undefined;
  const peak = measured(peakRun);
  const half = await runner.getAtRate(post, peak.rps / 2);
  return { peak, peakCpu: peakRun.threadCpu ?? {}, light: measured(lightRun), lightCpu: lightRun.threadCpu ?? {}, half, warmup, ...(gc ? { gcPausesMs: gc.serving, idleGcPausesMs: gc.idle, gcIsolates: gc.isolates } : {}), ...(gcByThread ? { gcByThread } : {}) };
}

/**
 * The events load beside the light run: connections and ms between a connection's posts, aiming
 * at 10,000 events/s (batches of 10): each connection posts at most every 95 ms, ~1,050 batches a
 * second at most, 1,000 while a response takes up to 5 ms. An event's 200 waits for its commit,
 * so it takes many connections; the rate reached is reported, not assumed. (20 connections 18 ms
 * apart reached 8,600–10,100 events/s at 10,000 and 100,000 items but 5,300–5,800 in most
 * 1,000,000-item rounds, where a response took ~17 ms; before that, 32 connections 2 ms apart
 * posted 34,000 events/s, 3.5 times the load the target names.)
 */
const BESIDE_EVENTS_CONNECTIONS = 100;
const BESIDE_EVENTS_DELAY_MS = 95;

/**
 * Light load beside background work (issue 11: the serving p99 holds while events stream in at
 * 10,000/s and while a model rebuild runs): the 4-connection run again, once while a paced wrk
 * posts event batches on the load core, once right after a rebuild was requested (the trainer
 * runs at nice 19 on the service's core). The events' rate is what that wrk achieved.
 */
async function besideBackground(t: Pick<Target, 'url' | 'pid'>, token: string, post: Omit<WrkRun, 'seconds'>): Promise<NonNullable<RoundResult['beside']>> {
  const seconds = LIGHT_SEC + 2;
  const [command, args] = pinned(LOAD_CORE, 'wrk', ['-t1', `-c${BESIDE_EVENTS_CONNECTIONS}`, `-d${seconds}s`, '--timeout', '5s', '-s', join(WRK_DIR, 'post-events.lua'), t.url, '--', ENVIRONMENT, String(BESIDE_EVENTS_DELAY_MS)]);
  const eventsLoad = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  eventsLoad.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const eventsDone = new Promise((resolve) => eventsLoad.once('close', resolve));
  await sleep(1000);
  const events = measured(await runner.wrk({ ...post, seconds: LIGHT_SEC, connections: LIGHT_CONNECTIONS, retries: 0, beside: true }));
  await eventsDone;
  const posted = parseWrkResult(out);
  if (!posted || failures(posted) > 0) throw new Error(`the events load beside the requests failed:\n${out}`);
  await runner.waitForIdleServer(t.pid);

  const started = performance.now();
  let rebuildSec = NaN;
  const rebuilding = fetch(`${t.url}/api/${ENVIRONMENT}/model/rebuild`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } }).then(async (res) => {
    const text = await res.text();
    if (!res.ok) throw new Error(`model rebuild answered ${res.status}: ${text}`);
    rebuildSec = (performance.now() - started) / 1000;
  });
  const rebuild = measured(await runner.wrk({ ...post, seconds: LIGHT_SEC, connections: LIGHT_CONNECTIONS, retries: 0, beside: true }));
  await rebuilding;
  return { events, eventsPerSec: 10 * requestsPerSec(posted), rebuild, rebuildSec };
}

async function roundBaseline(contextFile: string): Promise<RoundResult> {
  const t = await startBaseline();
  try {
    return await measure(t, 'baseline', contextFile);
  } finally {
    await t.stop();
  }
}

async function roundAffinity(prepared: Prepared, contextFile: string, contexts: string[]): Promise<RoundResult> {
  // Each round serves a copy of the loaded data set: a round writes to it (the ~300,000 events
  // posted beside the light run, request counters), and on the set itself those events made the
  // next round's service start stale enough that its trainer rebuilt the model during the runs.
  const roundDir = join(tmp, 'round-data');
  rmSync(roundDir, { recursive: true, force: true });
  cpSync(dataDir, roundDir, { recursive: true });
  const t0 = performance.now();
  const extraArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const server = await startServer({ dataDir: roundDir, nodeArgs: ['--trace-gc', ...extraArgs] });
  const startSec = (performance.now() - t0) / 1000;
  running = server;
  try {
    // Every thread of the running service: HTTP, the ranking workers, the model builder, libuv.
    runner.pinProcess(server.proc.pid!, SERVER_CORE);
    const token = await getToken(server, prepared.client);
    const firstRequestMs = await checkResponses(server.url, token, contexts);
    const target = { url: server.url, pid: server.proc.pid! };
    const measuredRound = await measure(target, token, contextFile, server.logs);
    const memory = residentMemory(target.pid);
    const beside = await besideBackground(target, token, postRun(target, token, contextFile));
    // Over the whole round: the counter flushed each second of the runs, the builder applied the events beside them.
    const health = (await (await fetch(`${server.url}/health`)).json()) as Health;
    const commits = { requestCounter: health.request_counter?.flush_ms, builder: health.model_builder?.flush_ms };
    return { ...measuredRound, ...memory, beside, startSec, firstRequestMs, commits };
  } finally {
    await server.stop();
    running = undefined;
    warnFromLog(server, 'measuring');
  }
}

/** VmRSS and RssAnon of a process, in MB. */
function residentMemory(pid: number): { rssMb: number; rssAnonMb: number } {
  const { VmRSS = NaN, RssAnon = NaN } = procStatusKb(pid, 'VmRSS', 'RssAnon');
  return { rssMb: VmRSS / 1024, rssAnonMb: RssAnon / 1024 };
}

const round1 = (x: number) => Number(x.toFixed(1));

// --- report ---

const statusText = (rs: Measured[]) => {
  const all: Record<string, number> = {};
  for (const r of rs) for (const [s, n] of Object.entries(r.statuses)) all[s] = (all[s] ?? 0) + n;
  return Object.entries(all)
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ');
};

function report(prepared: Prepared, contexts: { lines: string[]; distinct: number }, results: Record<'affinity' | 'bare-uws', RoundResult[]>): boolean {
  const { items, events, users } = DATASET;
  const starts = results.affinity.map((r) => r.startSec!);
  const setup = {
    task: 'recommendations/setup',
    items,
    events,
    users,
    'items load s': round3(prepared.itemsSec),
    'items/s': Math.round(items / prepared.itemsSec),
    'events load s': round3(prepared.eventsSec),
    'events/s': Math.round(events / prepared.eventsSec),
    'builder catch-up s': round3(prepared.catchUpSec),
    'server start s': round3(median(starts)),
    'server start s worst': round3(Math.max(...starts)),
    'first request ms': round3(median(results.affinity.map((r) => r.firstRequestMs!))),
    'context lines': contexts.lines.length,
    'context items': contexts.distinct,
  };
  console.log(
    `data set: seed ${DATASET.seed}, ${items} items, ${events} events from ${users} users; context items: ` +
      `${contexts.lines.length} lines (every ${CONTEXT_EVERY}th page view, ${contexts.distinct} distinct items)\n` +
      `load through the APIs: items in ${prepared.itemsSec.toFixed(1)} s (${setup['items/s']}/s), ` +
      `events in ${prepared.eventsSec.toFixed(1)} s (${setup['events/s']}/s); model builder caught up ` +
      `${prepared.catchUpSec.toFixed(1)} s after the last event\n` +
      `server start to ready (ranking engines built): median ${setup['server start s']} s, worst ` +
      `${setup['server start s worst']} s; first request ${setup['first request ms']} ms (median over rounds)`,
  );
  const baseRps = median(results['bare-uws'].map((r) => r.peak.rps));
  const baseP99 = median(results['bare-uws'].map((r) => r.half.p99ms));
  const rows: Array<Record<string, string | number>> = [];
  let failed = false;
  for (const variant of ['affinity', 'bare-uws'] as const) {
    const rs = results[variant];
    const rps = median(rs.map((r) => r.peak.rps));
    const p99 = median(rs.map((r) => r.half.p99ms));
    const lightP99 = median(rs.map((r) => r.light.p99ms));
    const cpu = median(rs.map((r) => r.peakCpu.all ?? NaN));
    const gc = rs.flatMap((r) => r.gcPausesMs ?? []);
    const gcMax = gc.length > 0 ? Math.max(...gc) : 0;
    const servingOver5 = rs.reduce((n, r) => n + (r.gcByThread?.main?.over5Ms ?? 0) + (r.gcByThread?.ranking?.over5Ms ?? 0), 0);
    const errors = rs.reduce((n, r) => n + r.peak.errors + r.half.errors + r.light.errors, 0);
    if (errors > 0) failed = true;
    const isAffinity = variant === 'affinity';
    const besideEventsP99 = median(rs.map((r) => r.beside?.events.p99ms ?? NaN));
    const besideRebuildP99 = median(rs.map((r) => r.beside?.rebuild.p99ms ?? NaN));
    const pass =
      rps / baseRps >= RATIO_TARGET &&
      cpu <= CPU_TARGET_US &&
      p99 <= P99_TARGET_MS &&
      lightP99 <= LIGHT_P99_TARGET_MS &&
      besideEventsP99 <= LIGHT_P99_TARGET_MS &&
      besideRebuildP99 <= LIGHT_P99_TARGET_MS &&
      gcMax <= GC_PAUSE_TARGET_MS &&
      servingOver5 === 0;
    rows.push({
      task: `recommendations/${variant}/items=${items}`,
      'req/s': Math.round(rps),
      'req/s worst': Math.round(percentile(rs.map((r) => r.peak.rps), 1)),
      'x base req/s': round3(rps / baseRps),
      'latency at': `${Math.round(median(rs.map((r) => r.half.rps)))}/s, ${Math.round(median(rs.map((r) => r.half.connections ?? 0)))} conn`,
      'p50 ms': round3(median(rs.map((r) => r.half.p50ms))),
      'p99 ms': round3(p99),
      'p99 ms worst': round3(percentile(rs.map((r) => r.half.p99ms), 99)),
      'x base p99': round3(p99 / baseP99),
      'cpu µs/req': round1(cpu),
      'cpu µs/req at 4 conn': round1(median(rs.map((r) => r.lightCpu.all ?? NaN))),
      '4 conn req/s': Math.round(median(rs.map((r) => r.light.rps))),
      '4 conn p99 ms': round3(lightP99),
      '4 conn p99 ms, events beside': isAffinity ? `${round3(besideEventsP99)} (${Math.round(median(rs.map((r) => r.beside?.eventsPerSec ?? NaN)))} events/s)` : '-',
      '4 conn p99 ms, rebuild beside': isAffinity ? `${round3(besideRebuildP99)} (build ${median(rs.map((r) => r.beside?.rebuildSec ?? NaN)).toFixed(1)} s)` : '-',
      'gc max ms': isAffinity ? round3(gcMax) : '-',
      'gc > 5 ms': isAffinity ? gc.filter((ms) => ms > GC_PAUSE_TARGET_MS).length : '-',
      'gc > 5 ms main+ranking, by thread': isAffinity ? servingOver5 : '-',
      'idle threads gc max ms': isAffinity ? round3(Math.max(0, ...rs.flatMap((r) => r.idleGcPausesMs ?? []))) : '-',
      'rss MB': isAffinity ? Math.round(median(rs.map((r) => r.rssMb ?? NaN))) : '-',
      'rss anon MB': isAffinity ? Math.round(median(rs.map((r) => r.rssAnonMb ?? NaN))) : '-',
      target: isAffinity
        ? `≥ ${RATIO_TARGET * 100}% base req/s, ≤ ${CPU_TARGET_US} µs/req, p99 ≤ ${LIGHT_P99_TARGET_MS} ms at 4 conn (alone, beside events, beside a rebuild) and ≤ ${P99_TARGET_MS} ms at 50% peak, gc ≤ ${GC_PAUSE_TARGET_MS} ms`
        : '-',
      pass: isAffinity ? String(pass && errors === 0) : '-',
      statuses: statusText(rs.flatMap((r) => [r.peak, r.light, r.half])),
      'other cpu %': Math.round(Math.max(...rs.map((r) => Math.max(r.peak.otherCpuPct, r.light.otherCpuPct, r.half.otherCpuPct)))),
      rounds: rs.length,
    });
  }
  if (process.env.BENCH_JSON === '1') {
    for (const row of [setup, ...rows]) console.log(JSON.stringify({ ...row, node: process.version, cpu: cpus()[0]?.model, pinned: PIN }));
  }
  console.table(rows);
  // CPU per request by thread (µs, median over rounds), at peak and at 4 connections.
  const threadRows: Array<Record<string, string | number>> = [];
  for (const variant of ['affinity', 'bare-uws'] as const) {
    for (const [load, pick] of [['peak', (r: RoundResult) => r.peakCpu], ['4 conn', (r: RoundResult) => r.lightCpu]] as const) {
      const roles = new Set(results[variant].flatMap((r) => Object.keys(pick(r))));
      const row: Record<string, string | number> = { task: `recommendations/${variant}/cpu-by-thread/${load}` };
      const order = ['main', 'aff-rank', 'aff-builder', 'aff-trainer', 'aff-ingest'];
      const rank = (role: string) => (role === 'all' ? 99 : order.includes(role) ? order.indexOf(role) : 50);
      for (const role of [...roles].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))) {
        row[role] = round1(median(results[variant].map((r) => pick(r)[role] ?? 0)));
      }
      threadRows.push(row);
    }
  }
  console.table(threadRows);
  const pauseText = (p: ThreadPauses | undefined) => (p ? `${p.count} (over 5 ms: ${p.over5Ms}${p.count > 0 ? `, longest ≤ ${p.longestUpToMs} ms` : ''})` : 'not reported');
  console.log(
    `GC pauses by thread in the peak and 4-connection runs, as each thread reported them (/health process.gc_pauses; the steps of incremental marking are not pauses there, --trace-gc's 'gc max' counts them): ` +
      results.affinity.map((r, i) => `round ${i + 1}: ${['main', 'ranking', 'builder', 'trainer'].map((t) => `${t} ${pauseText(r.gcByThread?.[t])}`).join(', ')}`).join('; '),
  );
  console.log(`--trace-gc's isolates in the same runs (incremental marking steps counted): ${results.affinity.map((r, i) => `round ${i + 1}: ${r.gcIsolates ?? 'not traced'}`).join('; ')}`);
  if (process.env.BENCH_JSON === '1') for (const row of threadRows) console.log(JSON.stringify(row));
  const commitText = (pick: (r: RoundResult) => MsSummaryWire | undefined) => {
    const cs = results.affinity.map(pick).filter((c): c is MsSummaryWire => c !== undefined);
    if (cs.length === 0) return 'not reported';
    return `p50 ${median(cs.map((c) => c.p50))} ms, p99 ${median(cs.map((c) => c.p99))} ms, max ${Math.max(...cs.map((c) => c.max))} ms (${median(cs.map((c) => c.count))} per round)`;
  };
  for (const variant of ['affinity', 'bare-uws'] as const) {
    const ws = results[variant].map((r) => r.warmup);
    console.log(
      `${variant} warm-up before the peak run (median of rounds): ${median(ws.map((w) => w.seconds))} s; CPU per request in its first ${WARMUP_SEC} s ` +
        `${round1(median(ws.map((w) => w.firstUs)))} µs, in its last ${round1(median(ws.map((w) => w.lastUs)))} µs`,
    );
  }
  console.log(
    `periodic commits over a round, time each held its thread (median of rounds; target ≤ 1 ms each): request counter ${commitText((r) => r.commits?.requestCounter)}; ` +
      `model builder ${commitText((r) => r.commits?.builder)}`,
  );
  if (rows.some((r) => Number(r['other cpu %']) > DISTURBED_PCT)) {
    console.warn(`recommendations bench: other processes used > ${DISTURBED_PCT}% of core ${SERVER_CORE} during some runs; figures are disturbed`);
  }
  return failed;
}

async function main(): Promise<void> {
  const startMs = Date.now();
  checkWrk();
  if (!PIN) console.warn('recommendations bench: fewer than 2 cores, server and wrk are not pinned (figures are indicative only)');
  log(`loading ${DATASET.items} items and ${DATASET.events} events from ${DATASET.users} users (seed ${DATASET.seed})`);
  const prepared = await prepare();
  log(`loaded: items ${prepared.itemsSec.toFixed(1)} s, events ${prepared.eventsSec.toFixed(1)} s, builder caught up in ${prepared.catchUpSec.toFixed(1)} s`);
  const contextFile = join(tmp, 'contexts.txt');
  const contexts = writeContexts(contextFile);

  const results: Record<'affinity' | 'bare-uws', RoundResult[]> = { affinity: [], 'bare-uws': [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['bare-uws', 'affinity'] as const) : (['affinity', 'bare-uws'] as const);
    for (const variant of order) {
      const r = variant === 'affinity' ? await roundAffinity(prepared, contextFile, contexts.lines) : await roundBaseline(contextFile);
      results[variant].push(r);
      log(
        `round ${round + 1}/${ROUNDS} ${variant}: ${r.startSec !== undefined ? `started in ${r.startSec.toFixed(1)} s, ` : ''}` +
          `peak ${r.peak.rps.toFixed(0)}/s (${statusText([r.peak])}), at ${r.half.rps.toFixed(0)}/s (aim ${r.half.offered?.toFixed(0)}): ` +
          `p50 ${r.half.p50ms.toFixed(3)} ms p99 ${r.half.p99ms.toFixed(3)} ms (${statusText([r.half])}); ` +
          // The bare responder's light-load p99 was 0.05-0.1 ms in quiet full runs; far above it the
          // host was stalling the guest around that round (once 4.2 ms, and the Affinity round
          // after it was off in every figure): a hint to read such a round with care.
          `p99 at ${LIGHT_CONNECTIONS} connections ${r.light.p99ms.toFixed(3)} ms; other CPU on core ` +
          `${SERVER_CORE}: ${Math.max(r.peak.otherCpuPct, r.half.otherCpuPct).toFixed(1)}%`,
      );
    }
  }
  const failed = report(prepared, contexts, results);
  console.log(`total ${((Date.now() - startMs) / 1000).toFixed(0)} s`);
  if (failed) {
    console.error('recommendations bench: some requests failed (non-2xx, socket errors or timeouts)');
    process.exitCode = 1;
  }
}

/** The service being measured, so that an interrupted run still removes its data directory. */
let running: TestServer | undefined;
await runBench('recommendations bench', tmp, main, () => running?.stop());
