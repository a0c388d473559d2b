// HTTP on loopback: item PUT throughput (every 200 is a committed LMDB write) and GET-one
// latency p50/p99 at half of peak GET throughput, on a 100,000-item catalog, each beside a
// bare uWebSockets.js JSON responder (bench/baseline.ts) measured in the same run. Targets
// (issues 7 and 12): PUT ≥ 20,000/s sustained with every response a 200; GET-one p99 ≤ 1 ms at half
// peak.
// The load generator is wrk (a Node client saturates before uWS does), pinned to core 1 while
// the server under test is pinned to core 0, both at nice -20 (BENCH_NICE) to keep a shared
// machine's other processes out of the way; scripts in bench/wrk/, runs by bench/wrk-runner.ts.
// Variants alternate in order over BENCH_ROUNDS rounds (default 3), each in fresh processes and a
// fresh data directory; figures are the median over rounds plus the worst round (p99 of rounds,
// p1 for req/s).
// Run: npm run bench -- http   (needs wrk: apt-get install -y wrk)
//   BENCH_QUICK=1  one round, short runs, a 10,000-item catalog
//   BENCH_JSON=1   also one JSON line per task, with the Node version and the CPU model
//   BENCH_QUIET_WAIT_SEC=600  total time it may wait for other processes to go quiet (a shared
//                  machine); runs disturbed anyway are repeated, and `other cpu %` reports them
// Exit code 1 only when requests failed (non-2xx, socket errors, timeouts), not for a missed target.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { getToken } from '../test/helpers/auth.ts';
import { startServer, type TestServer } from '../test/helpers/server.ts';
import { failures, type WrkResult } from './wrk-result.ts';
import {
  checkWrk,
  CONNECTIONS,
  createWrkRunner,
  DISTURBED_PCT,
  measured,
  median,
  percentile,
  PIN,
  round3,
  runBench,
  SERVER_CORE,
  startBaseline,
  type Measured,
  type Target,
} from './wrk-runner.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const CATALOG = QUICK ? 10_000 : 100_000;
/** Seconds of each peak GET run, of the pacing calibration and of the half-load run. */
const PEAK_SEC = QUICK ? 2 : 5;
const CALIBRATE_SEC = QUICK ? 1 : 2;
const HALF_SEC = QUICK ? 3 : 10;
/** Upper bound of one loading run; a catalog not loaded by then is topped up by another run. */
const LOAD_CAP_SEC = Math.max(60, Math.ceil(CATALOG / 1000));
const PUT_TARGET_PER_SEC = 20_000;
const GET_P99_TARGET_MS = 1;
const ENVIRONMENT = 'demo';
const ITEM_TYPE = 'article';

const { wrk, getAtRate, pinProcess, waitForIdleServer } = createWrkRunner({
  label: 'http bench',
  calibrateSec: CALIBRATE_SEC,
  pacedSec: HALF_SEC,
});

const tmp = mkdtempSync(join(tmpdir(), 'affinity-bench-'));

// --- servers under test ---

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
      statuses: { '200': ok },
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
await runBench('http bench', tmp, main, () => running?.close());
