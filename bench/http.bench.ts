// Over 500 lines because it carries its own load-generation bookkeeping (quiet-machine waits, CPU
// accounting of the server's core, wrk pacing calibration) that no other bench needs in full.
// HTTP on loopback: item PUT throughput (every 200 is a committed LMDB write) and GET-one
// latency p50/p99 at half of peak GET throughput, on a 100,000-item catalog, each beside a
// bare uWebSockets.js JSON responder (bench/baseline.ts) measured in the same run. Targets
// (issue): PUT ≥ 10,000/s sustained with every response a 200; GET-one p99 ≤ 1 ms at half peak.
// The load generator is wrk (a Node client saturates before uWS does), pinned to core 1 while
// the server under test is pinned to core 0, both at nice -20 (BENCH_NICE) to keep a shared
// machine's other processes out of the way; scripts in bench/wrk/. Variants alternate in order
// over BENCH_ROUNDS rounds (default 3), each in fresh processes and a fresh data directory;
// figures are the median over rounds plus the worst round (p99 of rounds, p1 for req/s).
// Run: npm run bench -- http   (needs wrk: apt-get install -y wrk)
//   BENCH_QUICK=1  one round, short runs, a 10,000-item catalog
//   BENCH_JSON=1   also one JSON line per task, with the Node version and the CPU model
//   BENCH_QUIET_WAIT_SEC=600  total time it may wait for other processes to go quiet (a shared
//                  machine); runs disturbed anyway are repeated, and `other cpu %` reports them
// Exit code 1 only when requests failed (non-2xx, socket errors, timeouts), not for a missed target.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import { getToken } from '../test/helpers/auth.ts';
import { startServer, type TestServer } from '../test/helpers/server.ts';
import { failures, parseWrkResult, requestsPerSec, type WrkResult } from './wrk-result.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const CATALOG = QUICK ? 10_000 : 100_000;
const CONNECTIONS = 64;
/** Seconds of each peak GET run, of the pacing calibration and of the half-load run. */
const PEAK_SEC = QUICK ? 2 : 5;
const CALIBRATE_SEC = QUICK ? 1 : 2;
const HALF_SEC = QUICK ? 3 : 10;
/** Upper bound of one loading run; a catalog not loaded by then is topped up by another run. */
const LOAD_CAP_SEC = Math.max(60, Math.ceil(CATALOG / 1000));
const PUT_TARGET_PER_SEC = 10_000;
const GET_P99_TARGET_MS = 1;
/** Waiting for a quiet machine: other processes under this % of all cores; at most
 * QUIET_RUN_SEC before one run and BENCH_QUIET_WAIT_SEC over the whole bench. */
const QUIET_PCT = 10;
const QUIET_RUN_SEC = 60;
let quietBudgetMs = Number(process.env.BENCH_QUIET_WAIT_SEC ?? 600) * 1000;
/** A run during which other processes used more than this % of the server's core is repeated. */
const DISTURBED_PCT = 10;
const ENVIRONMENT = 'demo';
const ITEM_TYPE = 'article';

const BENCH_DIR = import.meta.dirname;
const WRK_DIR = join(BENCH_DIR, 'wrk');
const PIN = availableParallelism() >= 2;
const SERVER_CORE = '0';
const LOAD_CORE = '1';
/** Niceness of the server and of wrk (BENCH_NICE=0: leave it). */
const NICE = Number(process.env.BENCH_NICE ?? -20);

interface Measured {
  rps: number;
  p50ms: number;
  p99ms: number;
  /** Non-2xx responses plus socket errors and timeouts. */
  errors: number;
  /** CPU time on the server's core used by other processes during the run, in % of the run. */
  otherCpuPct: number;
  /** For paced runs: the rate aimed at, and the connections used. */
  offered?: number;
  connections?: number;
}

const debug = (message: string) => process.env.BENCH_DEBUG === '1' && console.error(`http bench: ${message}`);

const tmp = mkdtempSync(join(tmpdir(), 'affinity-bench-'));

function checkWrk(): void {
  const r = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (r.error) throw new Error(`wrk is required (apt-get update && apt-get install -y wrk): ${r.error.message}`);
}

/**
 * The command run on `core` at raised priority (nice NICE) so that other processes of a shared
 * machine disturb the measurement less; without the privilege, nice warns and runs it as is.
 */
function pinned(core: string, command: string, args: string[]): [string, string[]] {
  const niced = NICE === 0 ? [command, ...args] : ['nice', '-n', String(NICE), command, ...args];
  return PIN ? ['taskset', ['-c', core, ...niced]] : [niced[0]!, niced.slice(1)];
}

/** Pins and raises every thread of a running process, as pinned() does for a new one. */
function pinProcess(pid: number, core: string): void {
  if (PIN) {
    const r = spawnSync('taskset', ['-a', '-p', '-c', core, String(pid)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`taskset failed: ${r.stderr}`);
  }
  if (NICE !== 0) {
    // Niceness is per thread on Linux; threads started later inherit their creator's.
    const tids = readdirSync(`/proc/${pid}/task`);
    const r = spawnSync('renice', ['-n', String(NICE), '-p', ...tids], { encoding: 'utf8' });
    if (r.status !== 0) console.error(`http bench: renice failed (${r.stderr.trim()}); running at normal priority`);
  }
}

// --- CPU accounting: how much of the server's core went to anything but the server ---

/**
 * Busy and total ticks of one core (`cpu0`) or of the whole machine (`cpu`), from /proc/stat.
 * Busy is user, nice, system and steal: interrupt time is left out, as the loopback traffic
 * of the run itself is processed there and belongs to no process.
 */
function cpuTicks(name: string): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name} `));
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = (line ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { busy: user + nice + system + steal, total: user + nice + system + idle + iowait + irq + softirq + steal };
}

function processTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15 of proc(5))
}

function cpuWatch(serverPid: number): () => number {
  if (!PIN) return () => NaN;
  const c0 = cpuTicks(`cpu${SERVER_CORE}`);
  const p0 = processTicks(serverPid);
  return () => {
    const c1 = cpuTicks(`cpu${SERVER_CORE}`);
    const p1 = processTicks(serverPid);
    const total = c1.total - c0.total;
    return total > 0 ? Math.max(0, (100 * (c1.busy - c0.busy - (p1 - p0))) / total) : 0;
  };
}

/**
 * This machine may be shared (other sessions' tests and builds): before each measurement, wait
 * until processes other than the server under test use under QUIET_PCT of the machine for a
 * second, at most QUIET_RUN_SEC (then measure anyway; the report's `other cpu %` tells).
 */
async function waitForQuiet(serverPid: number): Promise<void> {
  const start = Date.now();
  const deadline = start + Math.min(QUIET_RUN_SEC * 1000, quietBudgetMs);
  let quietSamples = 0;
  let announced = false;
  try {
    for (;;) {
      const m0 = cpuTicks('cpu');
      const p0 = processTicks(serverPid);
      await sleep(500);
      const m1 = cpuTicks('cpu');
      const total = m1.total - m0.total;
      const other = total > 0 ? (100 * (m1.busy - m0.busy - (processTicks(serverPid) - p0))) / total : 0;
      if (other < QUIET_PCT) {
        if (++quietSamples >= 2) return;
        continue;
      }
      quietSamples = 0;
      if (Date.now() > deadline) {
        console.error(`http bench: machine still busy (${other.toFixed(0)}% CPU by other processes); measuring anyway`);
        return;
      }
      if (!announced) console.error(`http bench: waiting for other processes to go quiet (${other.toFixed(0)}% CPU)...`);
      announced = true;
    }
  } finally {
    if (announced) quietBudgetMs = Math.max(0, quietBudgetMs - (Date.now() - start));
  }
}

/**
 * Waits until the server is idle (under 5% of a core for a second, at most 120 s): after a bulk
 * load the model builder catches up with the change feed, which would otherwise be measured as
 * part of GET. Returns the seconds waited.
 */
async function waitForIdleServer(pid: number): Promise<number> {
  const start = Date.now();
  let idleSamples = 0;
  while (idleSamples < 2 && Date.now() - start < 120_000) {
    const t0 = processTicks(pid);
    const c0 = cpuTicks('cpu');
    await sleep(500);
    const cores = availableParallelism();
    const pct = (100 * cores * (processTicks(pid) - t0)) / Math.max(1, cpuTicks('cpu').total - c0.total);
    idleSamples = pct < 5 ? idleSamples + 1 : 0;
  }
  return (Date.now() - start) / 1000;
}

// --- wrk ---

interface WrkRun {
  url: string;
  script: 'get-items.lua' | 'put-items.lua';
  args: string[];
  seconds: number;
  serverPid: number;
  /** Default CONNECTIONS. */
  connections?: number;
  /** Repeat the run (at most this many times) when other processes took the server's core. */
  retries?: number;
}

async function wrk(run: WrkRun): Promise<WrkResult & { otherCpuPct: number }> {
  for (let retries = run.retries ?? 2; ; retries--) {
    const r = await wrkOnce(run);
    if (!(r.otherCpuPct > DISTURBED_PCT) || retries <= 0) return r;
    console.error(`http bench: other processes took ${r.otherCpuPct.toFixed(0)}% of core ${SERVER_CORE}; repeating the run`);
  }
}

async function wrkOnce(run: WrkRun): Promise<WrkResult & { otherCpuPct: number }> {
  const wrkArgs = [
    '-t1',
    `-c${run.connections ?? CONNECTIONS}`,
    `-d${run.seconds}s`,
    '--timeout',
    '5s',
    '-s',
    join(WRK_DIR, run.script),
    run.url,
    '--',
    ...run.args,
  ];
  const [command, args] = pinned(LOAD_CORE, 'wrk', wrkArgs);
  await waitForQuiet(run.serverPid);
  const otherCpu = cpuWatch(run.serverPid);
  const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => proc.once('close', resolve));
  const otherCpuPct = otherCpu();
  const result = parseWrkResult(out);
  if (code !== 0 || !result) throw new Error(`wrk ${wrkArgs.join(' ')} exited with ${code}:\n${out}\n${err}`);
  return { ...result, otherCpuPct };
}

function measured(r: WrkResult & { otherCpuPct: number }, offered?: number): Measured {
  return {
    rps: requestsPerSec(r),
    p50ms: r.latency_us.p50 / 1000,
    p99ms: r.latency_us.p99 / 1000,
    errors: failures(r),
    otherCpuPct: r.otherCpuPct,
    offered,
  };
}

/**
 * GET latency at `target` req/s: each connection waits `delay` ms after each response, so the
 * rate is connections / (delay + response time + wrk's timer lateness). wrk's timers have whole
 * milliseconds (delay() is dithered between the two nearest), so short calibration runs fit
 * delay to rate (secant method) until within 5% of the target, and the measured run is redone
 * once if it lands more than 10% off. The peak run's 64 connections are kept unless the target
 * needs a cycle under PACED_MIN_CYCLE_MS per connection (the baseline's ~30,000/s): then more,
 * but no more than needed, as wrk walks a list of all its timers on every event and falls
 * behind with many (measured: worse latency at the same rate with 128 to 192 connections).
 */
/** Below 1 ms, dithering mixes in 0 ms delays, which wrk runs at once: no pacing at all. */
const MIN_DELAY_MS = 1;
/** Delay plus response time plus timer lateness: a 1 ms delay needs about 2 ms, keep some room. */
const PACED_MIN_CYCLE_MS = 3;

async function getAtRate(base: Omit<WrkRun, 'seconds'>, target: number): Promise<Measured> {
  const connections = Math.max(CONNECTIONS, Math.ceil((target * PACED_MIN_CYCLE_MS) / 1000));
  const cycleFor = (rate: number) => (connections * 1000) / rate;
  const wanted = cycleFor(target);
  const points: Array<{ delay: number; cycle: number }> = [];
  let delayMs = wanted;
  const nextDelay = () => {
    const [p, q] = points.slice(-2);
    let slope = 1;
    if (p && q && Math.abs(q.delay - p.delay) > 1e-3) slope = (q.cycle - p.cycle) / (q.delay - p.delay);
    if (!(slope > 0.5 && slope < 2)) slope = 1;
    const last = points[points.length - 1]!;
    return Math.max(MIN_DELAY_MS, last.delay + (wanted - last.cycle) / slope);
  };
  const run = async (seconds: number, what: string) => {
    const r = await wrk({ ...base, connections, args: [...base.args, delayMs.toFixed(3)], seconds });
    debug(`${what} ${target.toFixed(0)}/s, ${connections} conn: delay ${delayMs.toFixed(3)} ms gave ${requestsPerSec(r).toFixed(0)}/s`);
    return r;
  };
  for (let attempt = 0; attempt < 5; attempt++) {
    const r = await run(CALIBRATE_SEC, 'pacing');
    if (Math.abs(requestsPerSec(r) - target) <= 0.05 * target) break;
    points.push({ delay: delayMs, cycle: cycleFor(requestsPerSec(r)) });
    delayMs = nextDelay();
  }
  for (let attempt = 0; ; attempt++) {
    const r = await run(HALF_SEC, 'paced run');
    if (attempt === 1 || Math.abs(requestsPerSec(r) - target) <= 0.1 * target) return { ...measured(r, target), connections };
    points.push({ delay: delayMs, cycle: cycleFor(requestsPerSec(r)) });
    delayMs = nextDelay();
  }
}

// --- servers under test ---

interface Target {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

async function startBaseline(): Promise<Target> {
  const [command, args] = pinned(SERVER_CORE, process.execPath, ['--import', 'tsx', join(BENCH_DIR, 'baseline.ts')]);
  const proc: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', (line) => resolve(Number(JSON.parse(line).port)));
    void exited.then(() => reject(new Error('baseline exited before listening')));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: proc.pid!,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

async function startAffinity(): Promise<Target & { server: TestServer }> {
  const server = await startServer();
  running = server;
  // Every thread of the running service: the main thread, the model builder worker, libuv's
  // pool where LMDB commits, V8's helpers.
  pinProcess(server.proc.pid!, SERVER_CORE);
  return {
    url: server.url,
    pid: server.proc.pid!,
    server,
    async stop() {
      await server.close();
      running = undefined;
    },
  };
}

// --- one round of each variant ---

interface RoundResult {
  put: Measured;
  getPeak: Measured;
  getHalf: Measured;
}

/** Paths the baseline is asked for: the same shape as the service's ids. */
function syntheticIds(): string {
  const file = join(tmp, 'baseline-ids.txt');
  const ids: string[] = [];
  for (let i = 1; i <= CATALOG; i++) ids.push(`r0-0-${i}`);
  writeFileSync(file, ids.join('\n'));
  return file;
}

async function roundBaseline(idsFile: string): Promise<RoundResult> {
  const t = await startBaseline();
  try {
    const get = { url: t.url, script: 'get-items.lua' as const, args: ['baseline', ENVIRONMENT, ITEM_TYPE, idsFile] };
    // PUT: the same requests as the service's catalog load, CATALOG of them as fast as possible.
    const put = await wrk({
      url: t.url,
      script: 'put-items.lua',
      args: ['baseline', ENVIRONMENT, ITEM_TYPE, String(CATALOG), 'base'],
      seconds: LOAD_CAP_SEC,
      serverPid: t.pid,
    });
    const getPeak = measured(await wrk({ ...get, seconds: PEAK_SEC, serverPid: t.pid }));
    const getHalf = await getAtRate({ ...get, serverPid: t.pid }, getPeak.rps / 2);
    return { put: measured(put), getPeak, getHalf };
  } finally {
    await t.stop();
  }
}

async function fetchOk(url: string, token: string): Promise<unknown> {
  const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** Every item id of the type, through the list endpoint (the proof the catalog is there). */
async function listIds(url: string, token: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = '';
  while (cursor !== null) {
    const page = (await fetchOk(
      `${url}/api/${ENVIRONMENT}/items/${ITEM_TYPE}?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
      token,
    )) as { items: Array<{ item_id: string }>; next_cursor: string | null };
    for (const item of page.items) ids.push(item.item_id);
    cursor = page.next_cursor;
  }
  return ids;
}

async function roundAffinity(round: number): Promise<RoundResult> {
  const t = await startAffinity();
  try {
    const token = await getToken(t.server);
    // Load the catalog: this run is the PUT measurement. It ends once CATALOG responses are in;
    // if the time cap ends it first, top up with fresh ids until the catalog is complete.
    let ok = 0;
    let durationUs = 0;
    let putErrors = 0;
    let otherCpu = 0;
    let latency: WrkResult['latency_us'] | undefined;
    let ids: string[] = [];
    for (let part = 0; ids.length < CATALOG; part++) {
      if (part > 3) throw new Error(`catalog still ${ids.length} items after ${part} loading runs`);
      const r = await wrk({
        url: t.url,
        script: 'put-items.lua',
        args: [token, ENVIRONMENT, ITEM_TYPE, String(CATALOG - ids.length), `r${round}p${part}`],
        seconds: LOAD_CAP_SEC,
        serverPid: t.pid,
        retries: 0, // a repeat would measure PUTs into a larger catalog
      });
      ok += r.statuses['200'] ?? 0;
      durationUs += r.duration_us;
      putErrors += failures(r);
      otherCpu = Math.max(otherCpu, r.otherCpuPct);
      latency ??= r.latency_us;
      if (putErrors > 0) {
        throw new Error(`item PUT: ${putErrors} failures (statuses ${JSON.stringify(r.statuses)}, errors ${JSON.stringify(r.errors)})`);
      }
      ids = await listIds(t.url, token);
    }
    // A few sampled ids must read back as the items that were written.
    for (let i = 0; i < 5; i++) {
      const id = ids[Math.floor((i * ids.length) / 5)]!;
      const item = (await fetchOk(`${t.url}/api/${ENVIRONMENT}/items/${ITEM_TYPE}/${id}`, token)) as { item_id?: string };
      if (item.item_id !== id) throw new Error(`GET ${id} returned item ${JSON.stringify(item.item_id)}`);
    }
    const idsFile = join(tmp, `affinity-ids-${round}.txt`);
    writeFileSync(idsFile, ids.join('\n'));
    const waited = await waitForIdleServer(t.pid);
    if (waited > 2) console.error(`http bench: the service was busy for ${waited.toFixed(0)} s after loading (model builder)`);

    const put: Measured = {
      rps: ok / (durationUs / 1e6),
      p50ms: latency!.p50 / 1000,
      p99ms: latency!.p99 / 1000,
      errors: putErrors,
      otherCpuPct: otherCpu,
    };
    const get = { url: t.url, script: 'get-items.lua' as const, args: [token, ENVIRONMENT, ITEM_TYPE, idsFile] };
    const getPeak = measured(await wrk({ ...get, seconds: PEAK_SEC, serverPid: t.pid }));
    const getHalf = await getAtRate({ ...get, serverPid: t.pid }, getPeak.rps / 2);
    return { put, getPeak, getHalf };
  } finally {
    await t.stop();
  }
}

// --- report ---

/** Nearest-rank percentile of a few values. */
function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
const median = (xs: number[]) => percentile(xs, 50);
const round3 = (x: number) => Number(x.toFixed(3));

async function main(): Promise<void> {
  checkWrk();
  if (!PIN) console.warn('http bench: fewer than 2 cores, server and wrk are not pinned (figures are indicative only)');
  const baselineIds = syntheticIds();
  const results: Record<'affinity' | 'bare-uws', RoundResult[]> = { affinity: [], 'bare-uws': [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['bare-uws', 'affinity'] as const) : (['affinity', 'bare-uws'] as const);
    for (const variant of order) {
      const r = variant === 'affinity' ? await roundAffinity(round) : await roundBaseline(baselineIds);
      results[variant].push(r);
      console.error(
        `round ${round + 1}/${ROUNDS} ${variant}: put ${r.put.rps.toFixed(0)}/s, get peak ${r.getPeak.rps.toFixed(0)}/s, ` +
          `get at ${r.getHalf.rps.toFixed(0)}/s (aim ${r.getHalf.offered?.toFixed(0)}): p50 ${r.getHalf.p50ms.toFixed(3)} ms ` +
          `p99 ${r.getHalf.p99ms.toFixed(3)} ms; other CPU on core ${SERVER_CORE}: ` +
          `${Math.max(r.put.otherCpuPct, r.getPeak.otherCpuPct, r.getHalf.otherCpuPct).toFixed(1)}%`,
      );
    }
  }

  // PUT rows: throughput and latency of the loading run itself (64 connections, saturated).
  // GET rows: peak throughput, and latency at half of it.
  const view = (r: RoundResult, op: 'put' | 'get') =>
    op === 'put'
      ? { rps: r.put.rps, lat: r.put, errors: r.put.errors, other: r.put.otherCpuPct }
      : {
          rps: r.getPeak.rps,
          lat: r.getHalf,
          errors: r.getPeak.errors + r.getHalf.errors,
          other: Math.max(r.getPeak.otherCpuPct, r.getHalf.otherCpuPct),
        };
  const rows: Array<Record<string, string | number>> = [];
  let failed = false;
  for (const op of ['put', 'get'] as const) {
    const base = results['bare-uws'].map((r) => view(r, op));
    const baseRps = median(base.map((v) => v.rps));
    const baseP99 = median(base.map((v) => v.lat.p99ms));
    for (const variant of ['affinity', 'bare-uws'] as const) {
      const vs = results[variant].map((r) => view(r, op));
      const reqPerSec = median(vs.map((v) => v.rps));
      const p99 = median(vs.map((v) => v.lat.p99ms));
      const errors = vs.reduce((n, v) => n + v.errors, 0);
      if (errors > 0) failed = true;
      let target = '-';
      let pass = '-';
      if (variant === 'affinity' && op === 'put') {
        target = `≥ ${PUT_TARGET_PER_SEC}/s, all 200`;
        pass = String(reqPerSec >= PUT_TARGET_PER_SEC && errors === 0);
      } else if (variant === 'affinity') {
        target = `p99 ≤ ${GET_P99_TARGET_MS} ms at 50% peak`;
        pass = String(p99 <= GET_P99_TARGET_MS && errors === 0);
      }
      const row: Record<string, string | number> = {
        task: `http/${op}/${variant}/n=${CATALOG}`,
        'req/s': Math.round(reqPerSec),
        'req/s worst': Math.round(percentile(vs.map((v) => v.rps), 1)),
        'latency at':
          op === 'put'
            ? `peak, ${CONNECTIONS} conn`
            : `${Math.round(median(vs.map((v) => v.lat.rps)))}/s, ${Math.round(median(vs.map((v) => v.lat.connections ?? 0)))} conn`,
        'p50 ms': round3(median(vs.map((v) => v.lat.p50ms))),
        'p99 ms': round3(p99),
        'p99 ms worst': round3(percentile(vs.map((v) => v.lat.p99ms), 99)),
        'x base req/s': round3(reqPerSec / baseRps),
        'x base p99': round3(p99 / baseP99),
        target,
        pass,
        errors,
        'other cpu %': Math.round(Math.max(...vs.map((v) => v.other))),
        rounds: vs.length,
      };
      rows.push(row);
      if (process.env.BENCH_JSON === '1') {
        console.log(JSON.stringify({ ...row, node: process.version, cpu: cpus()[0]?.model, pinned: PIN }));
      }
    }
  }
  console.table(rows);
  if (rows.some((r) => Number(r['other cpu %']) > DISTURBED_PCT)) {
    console.warn(`http bench: other processes used > ${DISTURBED_PCT}% of core ${SERVER_CORE} during some runs; figures are disturbed`);
  }
  if (failed) {
    console.error('http bench: some requests failed (non-2xx, socket errors or timeouts)');
    process.exitCode = 1;
  }
}

/** The service being measured, so that an interrupted run still removes its data directory. */
let running: TestServer | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`http bench: ${signal}, cleaning up`);
    void (running?.close() ?? Promise.resolve()).finally(() => {
      rmSync(tmp, { recursive: true, force: true });
      process.exit(130);
    });
  });
}

try {
  await main();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
