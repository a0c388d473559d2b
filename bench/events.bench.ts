// Event ingestion over HTTP on loopback: batches of 10 mixed events at 64 connections, every 200
// durable (committed to the LMDB event log before the answer), beside the same-run baseline of a
// bare uWebSockets.js POST responder (bench/baseline.ts); and the model builder's lag (an
// event's 200 to the builder's write) at that load, read from GET /health once the builder has
// caught up. Targets (issue 3): ≥ 100,000 events/s; builder lag p99 ≤ 1 s.
// The server is pinned to core 0 (all its threads: HTTP, LMDB writer, model builder), wrk to
// core 1. Rounds alternate baseline and service in fresh processes and data directories.
// CPU per event (issue 12) is the server process's, all threads, from /proc/<pid>/task/*/stat over
// the measured load and the builder's catch-up after it (the model's and then the report
// counters', each thread with its own position), split by thread (main, builder, reports, trainer,
// ranking, V8/libuv/LMDB helpers); a 2 s warm-up load runs first (not counted in CPU or
// events/s; its events are in the lag histogram). After the rounds, bench/builder-replay.ts
// replays BENCH_REPLAY_EVENTS (default 1,000,000; quick 200,000) events through the builder alone,
// then starts the service on that data and times its restart (first recommendation answered,
// builder at the log's end).
// A sustained round then holds the steady ~10,000 events/s on a fresh service for
// BENCH_SUSTAINED_SEC (default 150 s; 0 skips it) and prints per 30 s window the events applied,
// the lag p99, the model flushes' CPU and the builder's CPU per event: the steady round's 12 s see
// neighbour rows that have not grown yet, and the builder's cost per event grows with them.
// Each service round first imports the catalog the events name (100,000 articles, through the
// API; BENCH_EVENTS_CATALOG=0 leaves it empty, as the figures before the seventeenth session).
// Run: npm run bench -- events   (needs wrk)   BENCH_QUICK=1 short, BENCH_JSON=1 JSON lines,
//      BENCH_ROUNDS=n rounds (default 3), BENCH_UNPINNED=1 lets the server use both cores,
//      BENCH_EVENTS_DELAY_MS=d paces each connection (64 × 1000 / d requests/s) to find the rate
//      the builder sustains within its lag target.
//      BENCH_RESTART_DIR=dir also times restarts on a copy of a data folder the recommendations
//      bench kept (BENCH_DATA_DIR there; 1,000,000 items and 10,000,000 events with
//      BENCH_ITEMS=1000000): spawn to the first recommendation answered 200 and to /ready 200,
//      BENCH_RESTARTS times (default 3; the first may make the builder's records for an older
//      folder, docs/reference.md Operations).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MsSummaryWire } from '../src/http/routes/health.ts';
import { getToken } from '../test/helpers/auth.ts';
import { startServer, tempDir, type TestServer } from '../test/helpers/server.ts';
import { replayThroughBuilder } from './builder-replay.ts';
import { importFinished, layoutCaughtUp } from './served-import.ts';
import { measureTrainingReads } from './training-read.ts';
import { failures, parseWrkResult, requestsPerSec, type WrkResult } from './wrk-result.ts';
import { cpuPerRequest, median, threadTicks } from './wrk-runner.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const SECONDS = QUICK ? 3 : 10;
const CONNECTIONS = 64;
const EVENTS_PER_REQUEST = 10;
const EVENTS_TARGET = 100_000;
const LAG_P99_TARGET_MS = 1000;
const PIN = availableParallelism() >= 2;
const PIN_SERVER = PIN && process.env.BENCH_UNPINNED !== '1';
const WRK_DIR = join(import.meta.dirname, 'wrk');
const DELAY_MS = Number(process.env.BENCH_EVENTS_DELAY_MS ?? 0);

interface Health {
  model_builder: {
    events_applied: number;
    lag_ms: { p50: number; p99: number; max: number };
    flush_ms: MsSummaryWire;
    flush_cpu_ms: { count: number; mean: number | null };
    publish_cpu_ms: { count: number; mean: number | null };
    reports_flush_ms: MsSummaryWire | null;
    reports_flush_cpu_ms: { count: number; mean: number | null } | null;
    reports_snapshots: { count: number; last_cpu_ms: number | null; mean_cpu_ms: number | null } | null;
    positions: Record<string, number>;
    environments: Record<string, { reports_lag_events: number | null }>;
  } | null;
}

function pin(pid: number, core: string): void {
  if (!PIN_SERVER) return;
  const r = spawnSync('taskset', ['-a', '-p', '-c', core, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`taskset failed: ${r.stderr}`);
}

const THREAD_GROUPS = ['main', 'aff-builder', 'aff-reports', 'aff-trainer', 'aff-rank', 'helpers'] as const;
type ThreadGroup = (typeof THREAD_GROUPS)[number];

/** µs of CPU per event by thread group (the service's named threads, the rest as helpers) between two /proc snapshots. */
function usPerEventByGroup(before: Map<string, number>, after: Map<string, number>, events: number): Record<ThreadGroup, number> {
  const out: Record<ThreadGroup, number> = { main: 0, 'aff-builder': 0, 'aff-reports': 0, 'aff-trainer': 0, 'aff-rank': 0, helpers: 0 };
  for (const [role, us] of Object.entries(cpuPerRequest(before, after, events))) {
    if (role === 'all') continue;
    out[(THREAD_GROUPS as readonly string[]).includes(role) ? (role as ThreadGroup) : 'helpers'] += us;
  }
  return out;
}

/** wrk posting events for `seconds`, pinned to core 1 when pinning; `delayMs`: each connection's pause between requests (post-events.lua), 0 for the peak. */
function wrkCommand(url: string, seconds: number, delayMs: number): [string, string[]] {
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '5s', '-s', join(WRK_DIR, 'post-events.lua'), url, '--', 'demo', String(delayMs)];
  return PIN ? ['taskset', ['-c', '1', 'wrk', ...args]] : ['wrk', args];
}

async function runWrk(url: string, seconds: number, delayMs = DELAY_MS): Promise<WrkResult> {
  const r = spawnSync(...wrkCommand(url, seconds, delayMs), { encoding: 'utf8' });
  const result = parseWrkResult(r.stdout);
  if (r.status !== 0 || !result) throw new Error(`wrk failed (${r.status}): ${r.stdout}\n${r.stderr}`);
  return result;
}


async function baselineRound(): Promise<WrkResult> {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'baseline.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => {
    createInterface({ input: proc.stdout }).once('line', (l) => resolve((JSON.parse(l) as { port: number }).port));
  });
  pin(proc.pid!, '0');
  try {
    await runWrk(`http://127.0.0.1:${port}`, 1); // warm-up
    return await runWrk(`http://127.0.0.1:${port}`, SECONDS);
  } finally {
    proc.kill('SIGTERM');
  }
}

/**
 * GET /health. Once more on a dropped connection: the service closes a keep-alive connection idle
 * for 10 s (uWebSockets.js), as the one polled before a 10 s load is, and fetch may reuse it just
 * as it closes ("other side closed"); a service that is gone fails the retry too.
 */
async function health(url: string): Promise<Health> {
  try {
    return (await (await fetch(`${url}/health`)).json()) as Health;
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return (await (await fetch(`${url}/health`)).json()) as Health;
  }
}

/** Waits until the builder has applied `events` (since start); returns when it had. */
async function builderCaughtUp(url: string, events: number): Promise<Health> {
  const start = Date.now();
  for (;;) {
    const now = await health(url);
    const applied = now.model_builder?.events_applied ?? 0;
    if (applied >= events) return now;
    if (Date.now() - start > 120_000) throw new Error(`builder applied ${applied} of ${events} events after 120 s`);
    await sleep(50);
  }
}

/** Waits until the report counters' thread has written the whole log (a lower priority than the model's). */
async function reportsCaughtUp(url: string): Promise<void> {
  const start = Date.now();
  for (;;) {
    const lag = (await health(url)).model_builder?.environments.demo?.reports_lag_events;
    if (lag === 0) return;
    if (Date.now() - start > 120_000) throw new Error(`the reports were ${lag} events behind after 120 s`);
    await sleep(50);
  }
}

interface AffinityRound {
  wrk: WrkResult;
  lag: { p50: number; p99: number; max: number };
  applied: number;
  catchUpMs: number;
  /** From the load's end until the report counters had written it all too. */
  reportsCatchUpMs: number;
  cpuUsPerEvent: number;
  threadUsPerEvent: Record<ThreadGroup, number>;
}

/**
 * The catalog the events name (post-events.lua: articles i0 to i99999), imported through the API
 * as a site's catalog is before its visitors' events arrive; then until the builder and the
 * ranking workers have it. Without it (BENCH_EVENTS_CATALOG=0, the condition of the figures
 * before the seventeenth session) every event names an item unknown to the catalog, which the
 * builder gives an index in a commit of the catalog environment per step (the lock event appends
 * wait for) and a ranking worker keeps as strings until a request reads it.
 */
const WITH_CATALOG = process.env.BENCH_EVENTS_CATALOG !== '0';
const CATALOG_ITEMS = 100_000;
const CATALOG_WORDS = ['market', 'energy', 'election', 'climate', 'season', 'league', 'storm', 'budget', 'festival', 'research', 'museum', 'transit', 'harbour', 'startup', 'vaccine', 'orchestra'];
const CATALOG_SECTIONS = ['[[""news""],[""news"",""world""]]', '[[""sport""],[""sport"",""football""]]', '[[""culture""],[""culture"",""film""]]', '[[""business""]]', '[[""science""]]'];
function catalogCsv(): string {
  const lines = ['operation,environment,item_id,item_type,title,categories,publication_datetime'];
  for (let n = 0; n < CATALOG_ITEMS; n++) {
    const title = [0, 1, 2, 3, 4].map((k) => CATALOG_WORDS[(n * 7 + k * 5) % CATALOG_WORDS.length]).join(' ');
    const published = new Date(Date.UTC(2024, 0, 1) + n * 60_000).toISOString();
    lines.push(`ADD,demo,i${n},article,${title},"${CATALOG_SECTIONS[n % CATALOG_SECTIONS.length]}",${published}`);
  }
  return lines.join('\n') + '\n';
}

async function importCatalog(server: TestServer): Promise<void> {
  if (!WITH_CATALOG) return;
  const url = server.url;
  const auth = { Authorization: `Bearer ${await getToken(server)}` };
  const upload = await fetch(`${url}/api/demo/imports`, { method: 'POST', headers: { ...auth, 'Content-Type': 'text/csv' }, body: catalogCsv() });
  const { import_id: importId } = (await upload.json()) as { import_id: string };
  if (upload.status !== 202) throw new Error(`catalog import answered ${upload.status}`);
  const record = await importFinished(url, auth, importId);
  if (record.state !== 'done' || record.rejected > 0) throw new Error(`catalog import: ${JSON.stringify(record)}`);
  await layoutCaughtUp(url, 120_000);
}

async function affinityRound(): Promise<AffinityRound> {
  // Info level: startServer reads the listening port from the log.
  const server = await startServer();
  try {
    await importCatalog(server);
    pin(server.proc.pid!, '0');
    const warm = await runWrk(server.url, 2);
    const warmEvents = (warm.statuses['200'] ?? 0) * EVENTS_PER_REQUEST;
    await builderCaughtUp(server.url, warmEvents);
    await reportsCaughtUp(server.url);
    const cpuStart = threadTicks(server.proc.pid!);
    const wrk = await runWrk(server.url, SECONDS);
    const events = (wrk.statuses['200'] ?? 0) * EVENTS_PER_REQUEST;
    const loadEnd = Date.now();
    // The builder applied everything acknowledged: its lag histogram then covers the run.
    const builder = (await builderCaughtUp(server.url, warmEvents + events)).model_builder!;
    const catchUpMs = Date.now() - loadEnd;
    await reportsCaughtUp(server.url);
    const reportsCatchUpMs = Date.now() - loadEnd;
    // Load and both catch-ups together: HTTP, validation, log writes and the builder's work per event.
    const threadUsPerEvent = usPerEventByGroup(cpuStart, threadTicks(server.proc.pid!), events);
    const cpuUsPerEvent = THREAD_GROUPS.reduce((sum, g) => sum + threadUsPerEvent[g], 0);
    return { wrk, lag: builder.lag_ms, applied: builder.events_applied, catchUpMs, reportsCatchUpMs, cpuUsPerEvent, threadUsPerEvent };
  } finally {
    await server.close();
  }
}

/**
 * A steady load well below the peak (issue 11 serves beside events at this rate): the builder keeps
 * up, so its lag is the real-time figure, and its flushes are the periodic commits issue 12 asks
 * to cost under 1 ms each. One fresh service; what /health shows once the builder applied it all.
 */
const STEADY_EVENTS_PER_SEC = 10_000;
async function steadyRound(): Promise<{ eventsPerSec: number; p50Ms: number; p99Ms: number; cpuUsPerEvent: number; threadUsPerEvent: Record<string, number>; lag: { p50: number; p99: number; max: number }; flush: MsSummaryWire; flushCpuMeanMs: number | null; publish: { count: number; mean: number | null }; reportsFlush: MsSummaryWire | null; reportsFlushCpuMeanMs: number | null; reportsSnapshots: { count: number; last_cpu_ms: number | null } | null }> {
  const server = await startServer();
  try {
    await importCatalog(server);
    pin(server.proc.pid!, '0');
    const delayMs = Math.round((CONNECTIONS * EVENTS_PER_REQUEST * 1000) / STEADY_EVENTS_PER_SEC);
    const cpuStart = threadTicks(server.proc.pid!);
    const wrk = await runWrk(server.url, SECONDS + 2, delayMs);
    const events = (wrk.statuses['200'] ?? 0) * EVENTS_PER_REQUEST;
    await builderCaughtUp(server.url, events);
    await reportsCaughtUp(server.url);
    // Every thread's CPU over the load and until both consumers wrote its end, per event.
    const threadUsPerEvent = usPerEventByGroup(cpuStart, threadTicks(server.proc.pid!), events);
    const builder = (await health(server.url)).model_builder!;
    return {
      eventsPerSec: requestsPerSec(wrk) * EVENTS_PER_REQUEST,
      // The POSTs' own latency at this light, paced load (the rounds' is at the peak).
      p50Ms: wrk.latency_us.p50 / 1000,
      p99Ms: wrk.latency_us.p99 / 1000,
      cpuUsPerEvent: THREAD_GROUPS.reduce((sum, g) => sum + threadUsPerEvent[g], 0),
      threadUsPerEvent,
      lag: builder.lag_ms,
      flush: builder.flush_ms,
      flushCpuMeanMs: builder.flush_cpu_ms.mean,
      // Absent before the row boards (a run at an earlier commit).
      publish: builder.publish_cpu_ms ?? { count: 0, mean: null },
      reportsFlush: builder.reports_flush_ms,
      reportsFlushCpuMeanMs: builder.reports_flush_cpu_ms?.mean ?? null,
      reportsSnapshots: builder.reports_snapshots,
    };
  } finally {
    await server.close();
  }
}

const worst = (xs: number[]) => Math.max(...xs);

const baseline: WrkResult[] = [];
const affinity: AffinityRound[] = [];
for (let round = 0; round < ROUNDS; round++) {
  if (round % 2 === 0) {
    baseline.push(await baselineRound());
    affinity.push(await affinityRound());
  } else {
    affinity.push(await affinityRound());
    baseline.push(await baselineRound());
  }
}

const baseEvents = median(baseline.map((r) => requestsPerSec(r) * EVENTS_PER_REQUEST));
const events = median(affinity.map((r) => requestsPerSec(r.wrk) * EVENTS_PER_REQUEST));
const lagP99 = median(affinity.map((r) => r.lag.p99));
const rows = [
  {
    task: 'events/bare-uws',
    'events/s': Math.round(baseEvents),
    'p50 ms': Number(median(baseline.map((r) => r.latency_us.p50 / 1000)).toFixed(2)),
    'p99 ms': Number(median(baseline.map((r) => r.latency_us.p99 / 1000)).toFixed(2)),
    'x baseline': 1,
    'non-2xx': baseline.reduce((a, r) => a + failures(r), 0),
    'lag p99 ms': '',
    'CPU µs/event': '',
    target: '',
    pass: '',
  },
  {
    task: 'events/affinity',
    'events/s': Math.round(events),
    'p50 ms': Number(median(affinity.map((r) => r.wrk.latency_us.p50 / 1000)).toFixed(2)),
    'p99 ms': Number(median(affinity.map((r) => r.wrk.latency_us.p99 / 1000)).toFixed(2)),
    'x baseline': Number((events / baseEvents).toFixed(3)),
    'non-2xx': affinity.reduce((a, r) => a + failures(r.wrk), 0),
    'lag p99 ms': `${lagP99} (p50 ${median(affinity.map((r) => r.lag.p50))}, worst ${worst(affinity.map((r) => r.lag.p99))}, catch-up ${median(affinity.map((r) => r.catchUpMs))} ms, reports ${median(affinity.map((r) => r.reportsCatchUpMs))} ms)`,
    'CPU µs/event': Number(median(affinity.map((r) => r.cpuUsPerEvent)).toFixed(1)),
    target: `≥ ${EVENTS_TARGET} events/s, lag p99 ≤ ${LAG_P99_TARGET_MS} ms`,
    pass: events >= EVENTS_TARGET && lagP99 <= LAG_P99_TARGET_MS ? 'yes' : 'no',
  },
];
console.table(rows);
const threads = THREAD_GROUPS.map((g) => `${g} ${median(affinity.map((r) => r.threadUsPerEvent[g])).toFixed(1)}`).join(', ');
console.log(`CPU µs per event by thread (median of rounds): ${threads}`);
const steady = await steadyRound();
const flushText = (f: MsSummaryWire) => `p50 ${f.p50} ms, p99 ${f.p99} ms, max ${f.max} ms over ${f.count} flushes`;
console.log(
  `steady ${Math.round(steady.eventsPerSec)} events/s (aimed at ${STEADY_EVENTS_PER_SEC}), pinned: POST p50 ${steady.p50Ms.toFixed(2)} ms, p99 ${steady.p99Ms.toFixed(2)} ms; ` +
    `${steady.cpuUsPerEvent.toFixed(1)} µs CPU per event, all threads (${THREAD_GROUPS.map((g) => `${g} ${steady.threadUsPerEvent[g]!.toFixed(1)}`).join(', ')}); ` +
    `neighbour rows published to the ranking workers ${steady.publish.count} times, ${steady.publish.mean} ms of CPU each; builder lag p50 ${steady.lag.p50} ms, p99 ${steady.lag.p99} ms ` +
    `(target ≤ ${LAG_P99_TARGET_MS} ms: ${steady.lag.p99 <= LAG_P99_TARGET_MS ? 'pass' : 'missed'}); builder flushes ${flushText(steady.flush)} ` +
    `(its writes of everything applied to LMDB, wall time on the builder's thread); their CPU ${steady.flushCpuMeanMs} ms each on average ` +
    `(target ≤ 1 ms: ${steady.flushCpuMeanMs !== null && steady.flushCpuMeanMs <= 1 ? 'pass' : 'missed'}; read off the thread's exact CPU clock, threads/thread-cpu.ts); ` +
    `the report counters' commits (their own thread, every second) ${steady.reportsFlush ? flushText(steady.reportsFlush) : 'none'}, their CPU ${steady.reportsFlushCpuMeanMs} ms each on average ` +
    `(target ≤ 1 ms: ${steady.reportsFlushCpuMeanMs !== null && steady.reportsFlushCpuMeanMs <= 1 ? 'pass' : 'missed'}); ` +
    `their clicks, A/B units and clicked items snapshotted ${steady.reportsSnapshots?.count ?? 0} times (every minute and at a stop), the last ${steady.reportsSnapshots?.last_cpu_ms ?? '-'} ms of CPU`,
);
/** Bucket counts of the builder's lag histogram (/metrics, summed over label sets), by upper bound in seconds. */
async function lagBuckets(url: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const line of text.split('\n')) {
    const m = /^affinity_builder_lag_seconds_bucket\{.*le="([^"]+)".*\} (\d+(?:\.\d+)?)$/.exec(line);
    if (!m) continue;
    const le = m[1] === '+Inf' ? Infinity : Number(m[1]);
    buckets.set(le, (buckets.get(le) ?? 0) + Number(m[2]));
  }
  return buckets;
}

/** The p99 of the events recorded between two bucket snapshots: the upper bound of the bucket holding it, ms. */
function windowP99Ms(before: Map<number, number>, after: Map<number, number>): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  for (const le of bounds) if ((after.get(le) ?? 0) - (before.get(le) ?? 0) >= 0.99 * total) return le * 1000;
  return Infinity;
}

interface SustainedWindow {
  endSec: number;
  appliedPerSec: number;
  lagP99Ms: number;
  flushes: number;
  flushCpuMs: number;
  builderUsPerEvent: number;
  reportsCommitCpuMs: number;
  reportsSnapshots: number;
  reportsSnapshotCpuMs: number;
}

/**
 * The steady rate held for minutes (BENCH_SUSTAINED_SEC, default 150; 0 skips it): the steady
 * round above sees a fresh service's first seconds, before the neighbour rows have grown. Per
 * window of 30 s: events applied per second, the window's lag p99 (from /metrics' buckets), the
 * model's flushes and their CPU each, the builder thread's CPU per event, the report counters'
 * commits' CPU each and their state snapshots' (once a minute; differences of /health's counts and means).
 */
const SUSTAINED_SEC = Number(process.env.BENCH_SUSTAINED_SEC ?? (QUICK ? 0 : 150));
const SUSTAINED_WINDOW_SEC = 30;
async function sustainedRound(): Promise<SustainedWindow[]> {
  const server = await startServer();
  try {
    await importCatalog(server);
    pin(server.proc.pid!, '0');
    const delayMs = Math.round((CONNECTIONS * EVENTS_PER_REQUEST * 1000) / STEADY_EVENTS_PER_SEC);
    const wrk = spawn(...wrkCommand(server.url, SUSTAINED_SEC, delayMs), { stdio: 'ignore' });
    const exited = new Promise((resolve) => wrk.once('exit', resolve));
    const windows: SustainedWindow[] = [];
    const snapshot = async () => ({ health: (await health(server.url)).model_builder!, buckets: await lagBuckets(server.url), ticks: threadTicks(server.proc.pid!), at: performance.now() });
    let last = await snapshot();
    const start = last.at;
    for (let end = SUSTAINED_WINDOW_SEC; end <= SUSTAINED_SEC; end += SUSTAINED_WINDOW_SEC) {
      await sleep(start + end * 1000 - performance.now());
      const now = await snapshot();
      const [a, b] = [last.health, now.health];
      const applied = b.events_applied - a.events_applied;
      const flushes = b.flush_cpu_ms.count - a.flush_cpu_ms.count;
      const cpuOf = (x: { count: number; mean: number | null }) => x.count * (x.mean ?? 0);
      const reportCommits = (b.reports_flush_cpu_ms?.count ?? 0) - (a.reports_flush_cpu_ms?.count ?? 0);
      const snapshotCpu = (x: typeof a) => (x.reports_snapshots?.count ?? 0) * (x.reports_snapshots?.mean_cpu_ms ?? 0);
      const reportSnapshots = (b.reports_snapshots?.count ?? 0) - (a.reports_snapshots?.count ?? 0);
      windows.push({
        endSec: end,
        appliedPerSec: applied / ((now.at - last.at) / 1000),
        lagP99Ms: windowP99Ms(last.buckets, now.buckets),
        flushes,
        flushCpuMs: flushes > 0 ? (cpuOf(b.flush_cpu_ms) - cpuOf(a.flush_cpu_ms)) / flushes : NaN,
        builderUsPerEvent: cpuPerRequest(last.ticks, now.ticks, applied)['aff-builder'] ?? 0,
        reportsCommitCpuMs: reportCommits > 0 ? (cpuOf(b.reports_flush_cpu_ms!) - cpuOf(a.reports_flush_cpu_ms!)) / reportCommits : NaN,
        reportsSnapshots: reportSnapshots,
        reportsSnapshotCpuMs: reportSnapshots > 0 ? (snapshotCpu(b) - snapshotCpu(a)) / reportSnapshots : NaN,
      });
      last = now;
    }
    await exited;
    return windows;
  } finally {
    await server.close();
  }
}

if (SUSTAINED_SEC > 0) {
  const windows = await sustainedRound();
  console.log(`sustained ~${STEADY_EVENTS_PER_SEC} events/s for ${SUSTAINED_SEC} s (a fresh service, pinned), by window of ${SUSTAINED_WINDOW_SEC} s:`);
  console.table(
    windows.map((w) => ({
      'until s': w.endSec,
      'applied/s': Math.round(w.appliedPerSec),
      'lag p99 ms': w.lagP99Ms,
      'model flushes': w.flushes,
      'CPU ms each': Number(w.flushCpuMs.toFixed(1)),
      'builder µs/event': Number(w.builderUsPerEvent.toFixed(1)),
      'report commits CPU ms each': Number(w.reportsCommitCpuMs.toFixed(2)),
      'report snapshots × CPU ms': w.reportsSnapshots > 0 ? `${w.reportsSnapshots} × ${w.reportsSnapshotCpuMs.toFixed(1)}` : '-',
    })),
  );
}
/** BENCH_REPLAY_EVENTS=0 skips the replay and what runs on its data (the restart, the trained-model build's input). */
const replayEvents = Number(process.env.BENCH_REPLAY_EVENTS ?? (QUICK ? 200_000 : 1_000_000));

/** Posts `body` as a recommendation request until it is answered 200 (the service has just started). */
async function untilRecommended(url: string, token: string, body: object): Promise<void> {
  for (;;) {
    const res = await fetch(`${url}/api/demo/recommendations/requests`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    if (res.status === 200) return;
    await sleep(20);
  }
}

/**
 * Restart on the replay's data: from spawn to the first 200 recommendation answer (more_like_this
 * for a popular item, the builder's co-occurrence rows) and to /health showing the builder at
 * the log's end with nothing to replay. The service's own start (tsx, workers, WASM) included.
 */
async function restartRound(dataDir: string, events: number): Promise<{ servingSec: number; builderSec: number }> {
  const started = performance.now();
  const server = await startServer({ dataDir });
  try {
    const token = await getToken(server);
    await untilRecommended(server.url, token, { page_type: 'article_detail', channel: 'www', device_id: 'd1', context_item: 'i0', context_item_type: 'article', lists: [{ list_name: 'more_like_this', list_size: 10 }] });
    const servingSec = (performance.now() - started) / 1000;
    for (;;) {
      const health = (await (await fetch(`${server.url}/health`)).json()) as Health;
      if ((health.model_builder?.positions.demo ?? 0) >= events) break;
      await sleep(20);
    }
    return { servingSec, builderSec: (performance.now() - started) / 1000 };
  } finally {
    await server.close();
  }
}

/** The replay through the builder alone, then the service restarted on its data and the trained-model build's reads of it. */
async function replayRounds(events: number): Promise<Awaited<ReturnType<typeof replayThroughBuilder>>> {
  const replayDir = tempDir('affinity-replay-');
  const replay = await replayThroughBuilder(events, replayDir);
  const targetSec = (5 * events) / 1_000_000;
  console.log(
    `builder replay of ${events} events: ${replay.replaySec.toFixed(1)} s (target ≤ ${targetSec} s: ${replay.replaySec <= targetSec ? 'pass' : 'missed'}), ` +
      `${replay.cpuUsPerEvent} µs CPU per event (builder thread ${replay.builderUsPerEvent}, reports thread ${replay.reportsUsPerEvent}), unpinned; ` +
      `the model had written the last event at ${replay.modelDoneSec.toFixed(1)} s, the report counters at ${replay.reportsDoneSec.toFixed(1)} s`,
  );
  const restart = await restartRound(replayDir, events);
  console.log(`restart with ${events} events stored: recommendations answered ${restart.servingSec.toFixed(1)} s after spawn, builder at the log's end ${restart.builderSec.toFixed(1)} s (no trained model in this data)`);
  const reads = await measureTrainingReads(replayDir);
  rmSync(replayDir, { recursive: true, force: true });
  console.log(
    `trained-model build input at ${reads.events} events: the whole log read in ${reads.wholeSec.toFixed(1)} s; ` +
      `from the snapshot (position ${reads.readFrom}) and the ${reads.tail} events after it in ${reads.resumedSec.toFixed(1)} s`,
  );
  return replay;
}
const replay = replayEvents > 0 ? await replayRounds(replayEvents) : undefined;
const RESTART_DIR = process.env.BENCH_RESTART_DIR;
if (RESTART_DIR) {
  const { dataset, client } = JSON.parse(readFileSync(join(RESTART_DIR, 'bench-prepared.json'), 'utf8')) as {
    dataset: { items: number; events: number };
    client: { clientId: string; clientSecret: string };
  };
  const copy = tempDir('affinity-restart-');
  cpSync(RESTART_DIR, copy, { recursive: true });
  const restarts = Number(process.env.BENCH_RESTARTS ?? 3);
  const rounds: Array<{ servingSec: number; readySec: number }> = [];
  for (let r = 0; r < restarts; r++) {
    const started = performance.now();
    const server = await startServer({ dataDir: copy, waitFor: 'listening' });
    try {
      await untilRecommended(server.url, await getToken(server, client), { page_type: 'home', channel: 'www', user_id: 'u1', device_id: 'd1', lists: [{ list_name: 'recommended_for_you', list_size: 10 }] });
      const servingSec = (performance.now() - started) / 1000;
      while ((await fetch(`${server.url}/ready`).then(async (res) => (await res.arrayBuffer(), res.status))) !== 200) await sleep(20);
      rounds.push({ servingSec, readySec: (performance.now() - started) / 1000 });
    } finally {
      await server.close();
    }
  }
  rmSync(copy, { recursive: true, force: true });
  console.log(
    `restart with ${dataset.items} items and ${dataset.events} events stored (${RESTART_DIR}): first recommendation 200 / ready after ` +
      rounds.map((r) => `${r.servingSec.toFixed(1)} / ${r.readySec.toFixed(1)} s`).join(', ') +
      ` (target ≤ 10 s; median ${median(rounds.map((r) => r.servingSec)).toFixed(1)} s)`,
  );
}
console.log(`rounds ${ROUNDS} × ${SECONDS} s, ${CONNECTIONS} connections${DELAY_MS > 0 ? ` paced by ${DELAY_MS} ms` : ''}, ${EVENTS_PER_REQUEST} events per request, server ${PIN_SERVER ? 'pinned to core 0' : 'unpinned'}, wrk on core 1`);
if (process.env.BENCH_JSON === '1') {
  for (const row of rows) console.log(JSON.stringify({ ...row, node: process.version, cpu: cpus()[0]?.model }));
  if (replay) console.log(JSON.stringify({ task: 'events/builder-replay', events: replayEvents, ...replay }));
}
