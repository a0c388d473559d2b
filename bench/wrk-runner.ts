// Load generation for the wrk-driven benches (http.bench.ts, recommendations.bench.ts): wrk pinned
// to core 1 and the server under test to core 0, both at nice -20 (BENCH_NICE) to keep a shared
// machine's other processes out of the way; waits for a quiet machine before each run, accounts
// the CPU other processes took from the server's core (and repeats disturbed runs), paces runs to
// a target rate (getAtRate), starts the bare uWebSockets.js baseline (bench/baseline.ts), and the
// median/worst-round figures. It starts no process on import and owns no server but the baseline.
//   BENCH_QUIET_WAIT_SEC=600  total time a bench may wait for other processes to go quiet
//   BENCH_NICE=-20            niceness of the server and of wrk (0: leave it)
//   BENCH_DEBUG=1             print every pacing step
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { failures, parseWrkResult, requestsPerSec, type WrkResult } from './wrk-result.ts';

/** wrk connections of a peak run, and the least a paced run uses. */
export const CONNECTIONS = 64;
/** Waiting for a quiet machine: other processes under this % of all cores; at most
 * QUIET_RUN_SEC before one run and BENCH_QUIET_WAIT_SEC over the whole bench. */
const QUIET_PCT = 10;
const QUIET_RUN_SEC = 60;
/** A run during which other processes used more than this % of the server's core is repeated. */
export const DISTURBED_PCT = 10;

const BENCH_DIR = import.meta.dirname;
export const WRK_DIR = join(BENCH_DIR, 'wrk');
/** Whether server and wrk get a core each (false on a single-core machine: figures indicative only). */
export const PIN = availableParallelism() >= 2;
/** Core of the server under test (all its threads) and of wrk. */
export const SERVER_CORE = '0';
export const LOAD_CORE = '1';
/** Niceness of the server and of wrk (BENCH_NICE=0: leave it). */
const NICE = Number(process.env.BENCH_NICE ?? -20);

/** One run's figures. */
export interface Measured {
  rps: number;
  p50ms: number;
  p99ms: number;
  /** Non-2xx responses plus socket errors and timeouts. */
  errors: number;
  /** Responses by HTTP status. */
  statuses: Record<string, number>;
  /** CPU time on the server's core used by other processes during the run, in % of the run. */
  otherCpuPct: number;
  /** For paced runs: the rate aimed at, and the connections used. */
  offered?: number;
  connections?: number;
}

/** One wrk run against a server: `script` is a file of bench/wrk/, `args` follow its `--`. */
export interface WrkRun {
  url: string;
  script: string;
  args: string[];
  seconds: number;
  serverPid: number;
  /** Default CONNECTIONS. */
  connections?: number;
  /** Repeat the run (at most this many times) when other processes took the server's core. */
  retries?: number;
  /** Also account the server's CPU per request by thread (cpuPerRequest) over the run. */
  threadCpu?: boolean;
  /** Start at once: the bench runs another load beside this one on purpose. */
  beside?: boolean;
}

export type WrkOutcome = WrkResult & { otherCpuPct: number; threadCpu?: Record<string, number> };

/** A server under test, pinned to SERVER_CORE. */
export interface Target {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Throws (with the install command) when wrk is missing. */
export function checkWrk(): void {
  const r = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (r.error) throw new Error(`wrk is required (apt-get update && apt-get install -y wrk): ${r.error.message}`);
}

/**
 * The command run on `core` at raised priority (nice NICE) so that other processes of a shared
 * machine disturb the measurement less; without the privilege, nice warns and runs it as is.
 */
export function pinned(core: string, command: string, args: string[]): [string, string[]] {
  const niced = NICE === 0 ? [command, ...args] : ['nice', '-n', String(NICE), command, ...args];
  return PIN ? ['taskset', ['-c', core, ...niced]] : [niced[0]!, niced.slice(1)];
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

// --- CPU per thread: what each thread of the server spent, by the names the service gives them ---

/** Kernel clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const CLOCK_TICKS_PER_SEC = 100;

/**
 * CPU ticks so far of every thread of `pid`, summed by role: `main` (the process's first
 * thread), else the thread's name (the service names its workers aff-rank, aff-builder,
 * aff-trainer, aff-ingest; V8's and libuv's helpers keep theirs). Threads that ended are gone
 * from /proc, so take the snapshots around a run in which none ends.
 */
/** A thread's niceness (/proc/<pid>/task/<tid>/stat field 19); 0 when it cannot be read. */
function threadNiceness(pid: number, tid: string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  } catch {
    return 0;
  }
}

/**
 * Fields of /proc/<pid>/status in kB (RssAnon, RssFile, VmRSS, VmHWM, ...); a field absent, or
 * the process gone, is left out. `self`: the calling process.
 */
export function procStatusKb(pid: number | 'self', ...fields: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'latin1');
  } catch {
    return out;
  }
  for (const field of fields) {
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1];
    if (kb !== undefined) out[field] = Number(kb);
  }
  return out;
}

export function threadTicks(pid: number): Map<string, number> {
  const ticks = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return ticks;
  }
  for (const tid of tids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // ended between the listing and the read
    }
    const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks.set(name, (ticks.get(name) ?? 0) + Number(f[11]) + Number(f[12]));
  }
  return ticks;
}

/** µs of CPU per request by role between two snapshots, plus `all`; roles that spent nothing are left out. */
export function cpuPerRequest(before: Map<string, number>, after: Map<string, number>, requests: number): Record<string, number> {
  const out: Record<string, number> = {};
  let all = 0;
  for (const [role, t] of after) {
    const spent = t - (before.get(role) ?? 0);
    if (spent <= 0) continue;
    all += spent;
    out[role] = (spent * 1e6) / CLOCK_TICKS_PER_SEC / Math.max(1, requests);
  }
  out.all = (all * 1e6) / CLOCK_TICKS_PER_SEC / Math.max(1, requests);
  return out;
}

/** Figures of one wrk run; `offered` is the rate a paced run aimed at. */
export function measured(r: WrkOutcome, offered?: number): Measured {
  return {
    rps: requestsPerSec(r),
    p50ms: r.latency_us.p50 / 1000,
    p99ms: r.latency_us.p99 / 1000,
    errors: failures(r),
    statuses: r.statuses,
    otherCpuPct: r.otherCpuPct,
    offered,
  };
}

/** Below 1 ms, dithering mixes in 0 ms delays, which wrk runs at once: no pacing at all. */
const MIN_DELAY_MS = 1;
/** Delay plus response time plus timer lateness: a 1 ms delay needs about 2 ms, keep some room. */
const PACED_MIN_CYCLE_MS = 3;

export interface WrkRunnerOptions {
  /** Prefix of the runner's messages, e.g. `http bench`. */
  label: string;
  /** Seconds of each pacing calibration run of getAtRate. */
  calibrateSec: number;
  /** Seconds of getAtRate's measured run. */
  pacedSec: number;
}

/** The runs of one bench process; they share its budget of waiting for a quiet machine. */
export interface WrkRunner {
  /** One wrk run (repeated when disturbed); throws when wrk fails or prints no result. */
  wrk(run: WrkRun): Promise<WrkOutcome>;
  /** Latency at `target` req/s (see createWrkRunner); `base.args` get the delay appended. */
  getAtRate(base: Omit<WrkRun, 'seconds'>, target: number): Promise<Measured>;
  /** Pins and raises every thread of a running process, as pinned() does for a new one. */
  pinProcess(pid: number, core: string): void;
  /** Waits until the server uses under 5% of a core for a second (at most 120 s); returns the seconds waited. */
  waitForIdleServer(pid: number): Promise<number>;
}

/**
 * A runner for one bench. getAtRate: each connection waits `delay` ms after each response, so the
 * rate is connections / (delay + response time + wrk's timer lateness). wrk's timers have whole
 * milliseconds (delay() is dithered between the two nearest), so short calibration runs fit
 * delay to rate (secant method) until within 5% of the target, and the measured run is redone
 * once if it lands more than 10% off. The peak run's 64 connections are kept unless the target
 * needs a cycle under PACED_MIN_CYCLE_MS per connection (the baseline's ~30,000/s): then more,
 * but no more than needed, as wrk walks a list of all its timers on every event and falls
 * behind with many (measured: worse latency at the same rate with 128 to 192 connections).
 */
export function createWrkRunner({ label, calibrateSec, pacedSec }: WrkRunnerOptions): WrkRunner {
  let quietBudgetMs = Number(process.env.BENCH_QUIET_WAIT_SEC ?? 600) * 1000;
  const debug = (message: string) => process.env.BENCH_DEBUG === '1' && console.error(`${label}: ${message}`);

  function pinProcess(pid: number, core: string): void {
    if (PIN) {
      const r = spawnSync('taskset', ['-a', '-p', '-c', core, String(pid)], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`taskset failed: ${r.stderr}`);
    }
    if (NICE !== 0) {
      // Niceness is per thread on Linux; threads started later inherit their creator's. A thread
      // that lowered its own priority (the trainer, nice 19) keeps it: raising it too measured
      // serving against a trainer of equal priority (it took ~250 µs of the core per request).
      const tids = readdirSync(`/proc/${pid}/task`).filter((tid) => threadNiceness(pid, tid) <= 0);
      const r = spawnSync('renice', ['-n', String(NICE), '-p', ...tids], { encoding: 'utf8' });
      if (r.status !== 0) console.error(`${label}: renice failed (${r.stderr.trim()}); running at normal priority`);
    }
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
          console.error(`${label}: machine still busy (${other.toFixed(0)}% CPU by other processes); measuring anyway`);
          return;
        }
        if (!announced) console.error(`${label}: waiting for other processes to go quiet (${other.toFixed(0)}% CPU)...`);
        announced = true;
      }
    } finally {
      if (announced) quietBudgetMs = Math.max(0, quietBudgetMs - (Date.now() - start));
    }
  }

  /**
   * After a bulk load the model builder catches up with the change feed, which would otherwise
   * be measured as part of the next run.
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

  async function wrkOnce(run: WrkRun): Promise<WrkOutcome> {
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
    if (!run.beside) await waitForQuiet(run.serverPid);
    const otherCpu = cpuWatch(run.serverPid);
    const ticksBefore = run.threadCpu ? threadTicks(run.serverPid) : undefined;
    const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => proc.once('close', resolve));
    const otherCpuPct = otherCpu();
    const ticksAfter = ticksBefore && threadTicks(run.serverPid);
    const result = parseWrkResult(out);
    if (code !== 0 || !result) throw new Error(`wrk ${wrkArgs.join(' ')} exited with ${code}:\n${out}\n${err}`);
    return { ...result, otherCpuPct, ...(ticksBefore && ticksAfter ? { threadCpu: cpuPerRequest(ticksBefore, ticksAfter, result.requests) } : {}) };
  }

  async function wrk(run: WrkRun): Promise<WrkOutcome> {
    for (let retries = run.retries ?? 2; ; retries--) {
      const r = await wrkOnce(run);
      if (!(r.otherCpuPct > DISTURBED_PCT) || retries <= 0) return r;
      console.error(`${label}: other processes took ${r.otherCpuPct.toFixed(0)}% of core ${SERVER_CORE}; repeating the run`);
    }
  }

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
      const r = await run(calibrateSec, 'pacing');
      if (Math.abs(requestsPerSec(r) - target) <= 0.05 * target) break;
      points.push({ delay: delayMs, cycle: cycleFor(requestsPerSec(r)) });
      delayMs = nextDelay();
    }
    for (let attempt = 0; ; attempt++) {
      const r = await run(pacedSec, 'paced run');
      if (attempt === 1 || Math.abs(requestsPerSec(r) - target) <= 0.1 * target) return { ...measured(r, target), connections };
      points.push({ delay: delayMs, cycle: cycleFor(requestsPerSec(r)) });
      delayMs = nextDelay();
    }
  }

  return { wrk, getAtRate, pinProcess, waitForIdleServer };
}

/** Starts bench/baseline.ts pinned to SERVER_CORE; resolves once it listens. */
export async function startBaseline(): Promise<Target> {
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

// --- figures over rounds ---

/** Nearest-rank percentile of a few values. */
export function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
/** Median of a few values (nearest rank). */
export const median = (xs: number[]) => percentile(xs, 50);
/** `x` with three decimals, for the tables. */
export const round3 = (x: number) => Number(x.toFixed(3));

/**
 * Runs a bench's `main` and removes its temporary folder afterwards, also on SIGINT/SIGTERM, when
 * `stopService` first stops the service it may be measuring (so its data directory can go).
 */
export async function runBench(label: string, tmp: string, main: () => Promise<void>, stopService: () => Promise<unknown> | undefined): Promise<void> {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`${label}: ${signal}, cleaning up`);
      void (stopService() ?? Promise.resolve()).finally(() => {
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
}
