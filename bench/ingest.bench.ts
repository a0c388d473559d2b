// Catalog ingestion (issue 6), each figure beside a same-run baseline:
// 1. Feed: entries/s from the largest real feed file (../shared/datasets/feeds/…/giantbomb-podcast.rss,
//    1.6 MB, 730 entries). Baseline: rss-parser's parseString alone on the decoded text. Then
//    Affinity's parse + SPEC.md mapping + Item validation, and a whole poll (local HTTP fetch,
//    decode, parse, validate, write into a fresh LMDB catalog with change records).
// 2. File drop: rows/s and peak memory of a 1,000,000-row CSV generated with a fixed seed
//    (scripts/generate-import-csv.ts --seed 42; cached in the temp dir). Baseline: csv-parse
//    alone on the same file, in a fresh process (bench/import-runner.ts). The figure: the file
//    POSTed to the running service and imported as served (bench/served-import.ts: pinned, all
//    threads, the ranking workers and the builder following the catalog). Targets (issue 12):
//    ≥ 50,000 rows/s, peak anonymous memory (RssAnon: heap and buffers, not the file-backed LMDB
//    map) < 300 MB. Also, for finding causes only, the import alone in a fresh process
//    (import-runner.ts import: the ingest worker's code without the rest of the service).
// Run: npm run bench -- ingest   BENCH_QUICK=1 (100,000 rows, fewer rounds), BENCH_ROUNDS=n
//      (import rounds, default 1), BENCH_JSON=1 (JSON lines).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import Parser from 'rss-parser';
import { loadConfig } from '../src/config/load.ts';
import { emptyFeedStatus, type FeedDefinition } from '../src/domain/feed.ts';
import { decodeBody } from '../src/ingest/feeds/decode.ts';
import { pollFeed } from '../src/ingest/feeds/poll.ts';
import { parseRssAtom } from '../src/ingest/feeds/rss-atom.ts';
import { toItem } from '../src/ingest/normalize.ts';
import { parseAllowList } from '../src/outbound/allow-list.ts';
import { Catalog } from '../src/store/catalog.ts';
import { Store } from '../src/store/open.ts';
import { servedImport, type ServedImport } from './served-import.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const FEED_ROUNDS = QUICK ? 3 : 10;
const IMPORT_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const ROWS = QUICK ? 100_000 : 1_000_000;
const SEED = 42;
const ROWS_TARGET = 50_000;
const RSS_TARGET_MB = 300;
const ROOT = join(import.meta.dirname, '..');
const FEED_FILE = join(ROOT, '..', 'shared', 'datasets', 'feeds', 'rss-parser', 'test', 'input', 'giantbomb-podcast.rss');

let sink: unknown;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timeRounds(rounds: number, run: () => Promise<unknown> | unknown): Promise<number[]> {
  await run(); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    sink = await run();
    ms.push(performance.now() - t);
  }
  return ms;
}

// 1. Feed --------------------------------------------------------------------------------------
const bytes = readFileSync(FEED_FILE);
const text = decodeBody(bytes, 'application/rss+xml', true).text;
const entries = (await parseRssAtom(text, undefined)).entries.length;

const baselineMs = await timeRounds(FEED_ROUNDS, () => new Parser({ defaultRSS: 2 }).parseString(text));
const mapMs = await timeRounds(FEED_ROUNDS, async () => {
  const feed = await parseRssAtom(decodeBody(bytes, 'application/rss+xml', true).text, undefined);
  let valid = 0;
  for (const e of feed.entries) if ('candidate' in e && 'item' in toItem({ environment: 'demo', item_type: 'article', ...e.candidate }, 'demo', ['article'])) valid++;
  return valid;
});

const http = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/rss+xml' }).end(bytes));
await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
const feedUrl = `http://127.0.0.1:${(http.address() as { port: number }).port}/feed.rss`;
const pollMs: number[] = [];
let applied = 0;
for (let i = 0; i <= FEED_ROUNDS; i++) {
  const dataDir = mkdtempSync(join(tmpdir(), 'affinity-bench-feed-'));
  const store = new Store(loadConfig({ AFFINITY_DATA_DIR: dataDir } as NodeJS.ProcessEnv).store);
  const now = new Date().toISOString();
  const def: FeedDefinition = { feedId: 'bench', environment: 'demo', url: feedUrl, format: 'rss', itemType: 'article', intervalSec: 900, source: 'api', createdAt: now, updatedAt: now };
  const t = performance.now();
  const status = await pollFeed(def, emptyFeedStatus(), { catalog: new Catalog(store), itemTypes: ['article'], policy: { timeoutMs: 30_000, maxBodyBytes: 50 << 20, retries: 0, retryBaseMs: 0 }, allow: parseAllowList(['127.0.0.1']) });
  if (i > 0) pollMs.push(performance.now() - t); // round 0 warms up
  applied = status.entriesApplied;
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
}
http.close();

const feedRow = (task: string, ms: number[]) => ({
  task,
  'median ms': Number(median(ms).toFixed(1)),
  'max ms': Number(Math.max(...ms).toFixed(1)),
  'entries/s': Math.round((entries / median(ms)) * 1000),
  'x baseline': Number((median(baselineMs) / median(ms)).toFixed(2)),
});
const feedRows = [
  feedRow(`feed/rss-parser-only/n=${entries}`, baselineMs),
  feedRow(`feed/parse+map+validate/n=${entries}`, mapMs),
  { ...feedRow(`feed/poll-into-lmdb/n=${entries}`, pollMs), applied },
];
console.log(`\nfeed: ${FEED_FILE.slice(ROOT.length - 4)} (${(bytes.length / 1e6).toFixed(2)} MB, ${entries} entries), ${FEED_ROUNDS} rounds`);
console.table(feedRows);

// 2. File drop -----------------------------------------------------------------------------------
const csvFile = join(tmpdir(), `affinity-bench-import-${ROWS}-seed${SEED}.csv`);
if (!existsSync(csvFile)) {
  const gen = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'generate-import-csv.ts'), '--rows', String(ROWS), '--seed', String(SEED), '--out', csvFile], { stdio: 'inherit', cwd: ROOT });
  if (gen.status !== 0) throw new Error('generating the CSV failed');
}

interface RunResult {
  rows: number;
  ms: number;
  rows_per_sec: number;
  vm_hwm_mb: number;
  peak_anon_mb: number;
  peak_file_mb: number;
  state?: string;
  rejected?: number;
}

function runChild(mode: 'csv-parse' | 'import'): RunResult {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'import-runner.ts'), mode, csvFile], { encoding: 'utf8', cwd: ROOT, maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`import-runner ${mode} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as RunResult;
}

const baseRuns: RunResult[] = [];
const importRuns: RunResult[] = [];
const servedRuns: ServedImport[] = [];
for (let round = 0; round < IMPORT_ROUNDS; round++) {
  if (round % 2 === 0) {
    baseRuns.push(runChild('csv-parse'));
    servedRuns.push(await servedImport(csvFile));
  } else {
    servedRuns.push(await servedImport(csvFile));
    baseRuns.push(runChild('csv-parse'));
  }
  importRuns.push(runChild('import'));
}
const baseRate = median(baseRuns.map((r) => r.rows_per_sec));
const importRate = median(importRuns.map((r) => r.rows_per_sec));
const servedRate = median(servedRuns.map((r) => r.rowsPerSec));
const servedAnon = Math.max(...servedRuns.map((r) => r.peakAnonMb));
const importRows = [
  {
    task: `import/csv-parse-only/rows=${ROWS}`,
    'rows/s': baseRate,
    's': Number((median(baseRuns.map((r) => r.ms)) / 1000).toFixed(1)),
    'peak RSS MB': Math.max(...baseRuns.map((r) => r.vm_hwm_mb)),
    'anon MB': Math.max(...baseRuns.map((r) => r.peak_anon_mb)),
    'LMDB map MB': 0,
    'x baseline': 1,
    target: '',
    pass: '',
  },
  {
    task: `import/affinity-served/rows=${ROWS}`,
    'rows/s': servedRate,
    's': Number(median(servedRuns.map((r) => r.importSec)).toFixed(1)),
    'peak RSS MB': '-',
    'anon MB': servedAnon,
    'LMDB map MB': Math.max(...servedRuns.map((r) => r.peakFileMb)),
    'x baseline': Number((servedRate / baseRate).toFixed(2)),
    target: `≥ ${ROWS_TARGET} rows/s, peak anon < ${RSS_TARGET_MB} MB`,
    pass: `${servedRate >= ROWS_TARGET ? 'rows/s yes' : 'rows/s no'}, ${servedAnon < RSS_TARGET_MB ? 'anon yes' : 'anon no'}`,
  },
  {
    task: `import/in-process-diagnostic/rows=${ROWS}`,
    'rows/s': importRate,
    's': Number((median(importRuns.map((r) => r.ms)) / 1000).toFixed(1)),
    'peak RSS MB': Math.max(...importRuns.map((r) => r.vm_hwm_mb)),
    'anon MB': Math.max(...importRuns.map((r) => r.peak_anon_mb)),
    'LMDB map MB': Math.max(...importRuns.map((r) => r.peak_file_mb)),
    'x baseline': Number((importRate / baseRate).toFixed(2)),
    target: '',
    pass: '',
  },
];
console.log(`\nfile drop: ${csvFile} (${(readFileSync(csvFile).length / 1e6).toFixed(0)} MB), ${IMPORT_ROUNDS} round(s), fresh process each; the served import ended ${servedRuns.map((r) => `${r.state} with ${r.rejected} rejected rows`).join(', ')}`);
console.table(importRows);
const served = servedRuns[Math.floor(servedRuns.length / 2)]!;
const byThread = (us: Record<string, number>) => Object.entries(us).map(([t, v]) => `${t} ${v.toFixed(1)}`).join(', ');
console.log(
  `served: upload ${served.uploadSec.toFixed(1)} s, import ${served.importSec.toFixed(1)} s, the builder's item layout caught up ${served.layoutCatchUpSec.toFixed(1)} s later; ` +
    `CPU µs per row to done: ${byThread(served.cpuUsPerRow)}; to the builder's catch-up: ${byThread(served.cpuUsPerRowCaughtUp)}; ` +
    `RssAnon ${served.idleAnonMb} MB before, peak ${served.peakAnonMb} MB (to the catch-up), ${served.restartedAnonMb} MB restarted on the imported catalog`,
);
console.log('peak RSS = VmHWM of the process; anon = heap and buffers (served: the whole service, the imported catalog resident included); LMDB map = file-backed pages of the database map (page cache the kernel can reclaim)');
if (process.env.BENCH_JSON === '1') {
  for (const row of [...feedRows, ...importRows]) console.log(JSON.stringify({ ...row, node: process.version, cpu: cpus()[0]?.model }));
}
void sink;
