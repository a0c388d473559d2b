// `npm run eval -- --dataset ml-100k [--dataset ms-store-sample | PATH.csv] [--seeds 42,1,2,3,4]
//   [--protocol random-by-item,time-by-user] [--set model.trained.l2=300 ...] [--over-http] [--json]`
// --over-http adds a run per seed against the built service over its public API (src/eval/over-http.ts).
// Offline quality of Affinity's own engine (src/eval/harness.ts) on each dataset and protocol,
// mean and spread over seeds, printed beside the published table (src/eval/published.ts).
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { readDataset } from '../src/eval/datasets.ts';
import { evalEnvironment, evaluateSplit, type RunResult } from '../src/eval/harness.ts';
import { evaluateOverHttp, type OverHttpResult } from '../src/eval/over-http.ts';
import { PUBLISHED_ML_100K, PUBLISHED_SOURCE } from '../src/eval/published.ts';
import { chronologicalByUser, stratifiedByItem } from '../src/eval/split.ts';

const K = 10;
const PROTOCOLS = {
  /** The notebook's protocol: 75% of each item's ratings train, at random. */
  'random-by-item': (rows: Parameters<typeof stratifiedByItem>[0], seed: number) => stratifiedByItem(rows, 0.75, seed),
  /** A live service predicts the future: each user's last 20% of events test. */
  'time-by-user': (rows: Parameters<typeof chronologicalByUser>[0]) => chronologicalByUser(rows, 0.8),
} as const;
type Protocol = keyof typeof PROTOCOLS;

const USAGE = `Usage: npm run eval -- [--dataset ml-100k|ms-store-sample|PATH.csv ...] [--seeds 42,1,2,3,4]
         [--protocol random-by-item,time-by-user] [--set model.trained.l2=300 ...] [--json]
         [--over-http] [--datasets-dir DIR]
Offline quality of Affinity's engine on each dataset and protocol, beside the published figures.
--over-http also evaluates the built service (npm run build) over HTTP with its default
configuration: catalog and training events through the API, one request per test user.`;

function parseOptions() {
  try {
    return parseArgs({ options: OPTIONS }).values;
  } catch (err) {
    // A bad flag is a usage error: message and usage on stderr, exit 2 (not a stack trace).
    console.error(`eval: ${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

const OPTIONS = {
    help: { type: 'boolean', short: 'h', default: false },
    dataset: { type: 'string', multiple: true, default: ['ml-100k'] },
    seeds: { type: 'string', default: '42,1,2,3,4' },
    protocol: { type: 'string', default: 'random-by-item,time-by-user' },
    set: { type: 'string', multiple: true, default: [] },
    json: { type: 'boolean', default: false },
    'over-http': { type: 'boolean', default: false },
    'datasets-dir': { type: 'string', default: join(import.meta.dirname, '..', '..', 'shared', 'datasets') },
} satisfies NonNullable<ParseArgsConfig['options']>;

const values = parseOptions();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

/** `--set a.b.c=value` (value parsed as JSON when it parses, else a string) into an overrides object. */
function overridesOf(settings: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const setting of settings) {
    const eq = setting.indexOf('=');
    if (eq < 0) throw new Error(`--set ${setting}: expected path=value`);
    const path = setting.slice(0, eq).split('.');
    let value: unknown = setting.slice(eq + 1);
    try {
      value = JSON.parse(value as string);
    } catch {
      // a plain string
    }
    let node = out;
    for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[path[path.length - 1]!] = value;
  }
  return out;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** Sample standard deviation (0 for one run). */
const spread = (xs: number[]) => (xs.length < 2 ? 0 : Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1)));
const fmt = (xs: number[]) => `${mean(xs).toFixed(4)} ± ${spread(xs).toFixed(4)}`;

const overrides = overridesOf(values.set);
const seeds = values.seeds.split(',').map(Number);
const protocols = values.protocol.split(',') as Protocol[];
for (const p of protocols) if (!(p in PROTOCOLS)) throw new Error(`unknown protocol '${p}': use ${Object.keys(PROTOCOLS).join(', ')}`);

for (const name of values.dataset) {
  const dataset = readDataset(name, values['datasets-dir']);
  const environment = evalEnvironment(dataset, overrides);
  for (const protocol of protocols) {
    // The time split has no randomness: one run says all.
    const runSeeds = protocol === 'time-by-user' ? [seeds[0]!] : seeds;
    const runs: RunResult[] = [];
    const httpRuns: OverHttpResult[] = [];
    for (const seed of runSeeds) {
      const split = PROTOCOLS[protocol](dataset.interactions, seed);
      const run = await evaluateSplit(dataset, split, environment, K);
      runs.push(run);
      if (values['over-http']) {
        const http = await evaluateOverHttp(dataset, split, K);
        httpRuns.push(http);
        const m = http.metrics;
        if (!values.json) {
          console.error(
            `${dataset.name} ${protocol} seed ${seed} over HTTP: P@10 ${m.precisionAtK.toFixed(4)} R@10 ${m.recallAtK.toFixed(4)} nDCG@10 ${m.ndcgAtK.toFixed(4)} MAP ${m.map.toFixed(4)} ` +
              `(${m.users} users; start ${(http.ms.start / 1000).toFixed(1)} s, load ${(http.ms.load / 1000).toFixed(1)} s, builder ${(http.ms.modelBuilder / 1000).toFixed(1)} s, ` +
              `rebuild ${(http.ms.training / 1000).toFixed(1)} s, recommend ${(http.ms.recommend / 1000).toFixed(1)} s)`,
          );
        }
      }
      if (!values.json) {
        const m = run.metrics;
        console.error(
          `${dataset.name} ${protocol} seed ${seed}: P@10 ${m.precisionAtK.toFixed(4)} R@10 ${m.recallAtK.toFixed(4)} nDCG@10 ${m.ndcgAtK.toFixed(4)} MAP ${m.map.toFixed(4)} ` +
            `(${m.users} users; load ${(run.ms.load / 1000).toFixed(1)} s, builder ${(run.ms.modelBuilder / 1000).toFixed(1)} s, ` +
            `training ${(run.model.buildMs / 1000).toFixed(2)} s for ${run.model.items} items, ${(run.model.memoryBytes / 1024 ** 2).toFixed(0)} MiB arrays, ` +
            `peak RSS ${(run.model.peakRssBytes / 1024 ** 2).toFixed(0)} MiB, recommend ${(run.ms.recommend / 1000).toFixed(2)} s)` +
            (run.model.error ? ` model: ${run.model.status}: ${run.model.error}` : ''),
        );
      }
    }
    const col = (f: (r: RunResult) => number) => runs.map(f);
    const precision = col((r) => r.metrics.precisionAtK);
    const recall = col((r) => r.metrics.recallAtK);
    const ndcg = col((r) => r.metrics.ndcgAtK);
    const map = col((r) => r.metrics.map);
    if (values.json) {
      console.log(JSON.stringify({ dataset: dataset.name, protocol, seeds: runSeeds, precision_at_10: mean(precision), recall_at_10: mean(recall), ndcg_at_10: mean(ndcg), map: mean(map) }));
      continue;
    }
    const rows: Record<string, Record<string, string>> = {
      [`Affinity (${runSeeds.length} seed${runSeeds.length > 1 ? 's' : ''}, mean ± sd)`]: {
        'precision@10': fmt(precision),
        'recall@10': fmt(recall),
        'nDCG@10': fmt(ndcg),
        MAP: fmt(map),
      },
    };
    if (httpRuns.length > 0) {
      const http = (f: (m: OverHttpResult['metrics']) => number) => fmt(httpRuns.map((r) => f(r.metrics)));
      rows[`Affinity over HTTP, defaults (${httpRuns.length} seed${httpRuns.length > 1 ? 's' : ''})`] = {
        'precision@10': http((m) => m.precisionAtK),
        'recall@10': http((m) => m.recallAtK),
        'nDCG@10': http((m) => m.ndcgAtK),
        MAP: http((m) => m.map),
      };
    }
    if (dataset.name === 'ml-100k' && protocol === 'random-by-item') {
      for (const p of PUBLISHED_ML_100K) {
        rows[`${p.algorithm} (published)`] = { 'precision@10': p.precisionAt10.toFixed(6), 'recall@10': p.recallAt10.toFixed(6), 'nDCG@10': p.ndcgAt10.toFixed(6), MAP: p.map.toFixed(6) };
      }
    }
    console.log(`\n${dataset.name}, ${protocol}${protocol === 'random-by-item' ? ' (stratified 75/25 by item)' : ' (last 20% of each user)'}, top ${K}`);
    console.table(rows);
    const buildS = runs.map((r) => r.model.buildMs / 1000);
    console.log(
      `training: ${fmt(buildS)} s per build (${runs[0]!.model.items} items, ${(runs[0]!.model.memoryBytes / 1024 ** 2).toFixed(0)} MiB working arrays, ` +
        `process peak RSS ${(Math.max(...runs.map((r) => r.model.peakRssBytes)) / 1024 ** 2).toFixed(0)} MiB) on ${availableParallelism()} cores`,
    );
    if (dataset.name === 'ml-100k' && protocol === 'random-by-item') console.log(`published: ${PUBLISHED_SOURCE}`);
  }
}
