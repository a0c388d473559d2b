// `npm run eval -- [--dataset ml-100k --dataset ms-store-sample | PATH.csv] [--seeds 42,1,2,3,4]
//   [--protocol random-by-item,time-by-user,last-by-user] [--set model.trained.l2=300 ...] [--over-http] [--json]`
// Offline quality of Affinity's served defaults (src/eval/harness.ts: its own engine, builder and
// trainer) on each dataset and protocol, beside baselines computed on the same splits
// (src/eval/baselines.ts: popular, item-kNN, full EASE with λ tuned) and the published table
// (src/eval/published.ts): mean ± sd over seeds, then nDCG@10 by history-length bucket.
// --over-http adds a run per seed against the built service over its public API (scripts/eval-over-http.ts).
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { readDataset } from '../src/eval/datasets.ts';
import { evalEnvironment, evaluateSplit, type RunResult } from '../src/eval/harness.ts';
import { evaluateOverHttp } from './eval-over-http.ts';
import { PUBLISHED_ML_100K, PUBLISHED_SOURCE } from '../src/eval/published.ts';
import { easeBaseline, HISTORY_BUCKETS, itemKnnBaseline, metricsByBucket, popularBaseline, type Predictions } from '../src/eval/baselines.ts';
import { type RankingMetrics, rankingMetrics } from '../src/eval/metrics.ts';
import { chronologicalByUser, lastByUser, stratifiedByItem } from '../src/eval/split.ts';

const K = 10;
const PROTOCOLS = {
  /** The notebook's protocol: 75% of each item's ratings train, at random. */
  'random-by-item': (rows: Parameters<typeof stratifiedByItem>[0], seed: number) => stratifiedByItem(rows, 0.75, seed),
  /** A live service predicts the future: each user's last 20% of events test. */
  'time-by-user': (rows: Parameters<typeof chronologicalByUser>[0]) => chronologicalByUser(rows, 0.8),
  /** Retail: each user's last purchase tests. */
  'last-by-user': (rows: Parameters<typeof lastByUser>[0]) => lastByUser(rows),
} as const;
/** Protocols run when --protocol is not given: the published one for MovieLens, leave-last-out for the retail sample. */
const DEFAULT_PROTOCOLS: Record<string, Protocol[]> = { 'ml-100k': ['random-by-item', 'time-by-user'], 'ms-store-sample': ['last-by-user'] };
type Protocol = keyof typeof PROTOCOLS;

const USAGE = `Usage: npm run eval -- [--dataset ml-100k|ms-store-sample|PATH.csv ...] [--seeds 42,1,2,3,4]
         [--protocol random-by-item,time-by-user,last-by-user] [--set model.trained.l2=300 ...] [--json]
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
    dataset: { type: 'string', multiple: true, default: ['ml-100k', 'ms-store-sample'] },
    seeds: { type: 'string', default: '42,1,2,3,4' },
    protocol: { type: 'string' },
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
const askedProtocols = values.protocol?.split(',') as Protocol[] | undefined;
for (const p of askedProtocols ?? []) if (!(p in PROTOCOLS)) throw new Error(`unknown protocol '${p}': use ${Object.keys(PROTOCOLS).join(', ')}`);
if (Object.keys(overrides).length > 0 && values['over-http']) console.error('eval: --set applies to the in-process run only; --over-http serves the defaults');

const DESCRIPTION: Record<Protocol, string> = {
  'random-by-item': 'stratified 75/25 by item, as python_stratified_split',
  'time-by-user': "last 20% of each user's rows",
  'last-by-user': "each user's last row",
};

/** One method's results over the seeds: overall and per history bucket. */
interface MethodRuns {
  overall: RankingMetrics[];
  buckets: RankingMetrics[][];
  note?: string;
}

for (const name of values.dataset) {
  const dataset = readDataset(name, values['datasets-dir']);
  const environment = evalEnvironment(overrides);
  if (!values.json) {
    // What ran: the served defaults, with --set applied (the over-HTTP run has the defaults only).
    const changed = Object.keys(overrides).length > 0 ? ` (--set ${values.set.join(' --set ')})` : ' (the served defaults)';
    console.log(`${dataset.name}: configuration of the in-process run${changed}: model ${JSON.stringify(environment.model)}`);
  }
  const protocols = askedProtocols ?? DEFAULT_PROTOCOLS[dataset.name] ?? ['time-by-user'];
  for (const protocol of protocols) {
    // Only the random split has randomness: one run of the others says all.
    const runSeeds = protocol === 'random-by-item' ? seeds : [seeds[0]!];
    const methods = new Map<string, MethodRuns>();
    const record = (method: string, train: Parameters<typeof metricsByBucket>[0], relevant: Map<string, Set<string>>, predictions: Predictions, note?: string) => {
      let runs = methods.get(method);
      if (!runs) methods.set(method, (runs = { overall: [], buckets: [] }));
      runs.overall.push(rankingMetrics(relevant, predictions, K));
      runs.buckets.push(metricsByBucket(train, relevant, predictions, K));
      if (note) runs.note = note;
    };
    const builds: RunResult['model'][] = [];
    for (const seed of runSeeds) {
      const split = PROTOCOLS[protocol](dataset.interactions, seed);
      const run = await evaluateSplit(dataset, split, environment, K);
      builds.push(run.model);
      const relevant = run.relevant;
      const users = [...relevant.keys()];
      record('Affinity, served defaults', split.train, relevant, run.predictions);
      if (values['over-http']) {
        const http = await evaluateOverHttp(dataset, split, K);
        record('Affinity over HTTP, defaults', split.train, relevant, http.predictions);
        if (!values.json) {
          console.error(
            `  over HTTP: start ${(http.ms.start / 1000).toFixed(1)} s, load ${(http.ms.load / 1000).toFixed(1)} s, builder ${(http.ms.modelBuilder / 1000).toFixed(1)} s, ` +
              `rebuild ${(http.ms.training / 1000).toFixed(1)} s, recommend ${(http.ms.recommend / 1000).toFixed(1)} s`,
          );
        }
      }
      record('popular', split.train, relevant, popularBaseline(split.train, users, K));
      record('item-kNN (cosine, 100)', split.train, relevant, itemKnnBaseline(split.train, users, K));
      const ease = easeBaseline(split.train, relevant, K);
      if (ease) record('EASE (full, λ tuned)', split.train, relevant, ease.predictions, `λ ${ease.lambda}`);
      if (!values.json) {
        const m = methods.get('Affinity, served defaults')!.overall.at(-1)!;
        console.error(
          `${dataset.name} ${protocol} seed ${seed}: Affinity P@10 ${m.precisionAtK.toFixed(4)} nDCG@10 ${m.ndcgAtK.toFixed(4)} (${m.users} users; load ${(run.ms.load / 1000).toFixed(1)} s, ` +
            `builder ${(run.ms.modelBuilder / 1000).toFixed(1)} s, training ${(run.model.buildMs / 1000).toFixed(2)} s for ${run.model.items} items` +
            (run.model.error ? `; model: ${run.model.status}: ${run.model.error}` : '') + `)${ease ? `; EASE λ ${ease.lambda}` : ''}`,
        );
      }
    }
    if (values.json) {
      for (const [method, runs] of methods) {
        const col = (f: (m: RankingMetrics) => number) => mean(runs.overall.map(f));
        console.log(JSON.stringify({
          dataset: dataset.name, protocol, method, seeds: runSeeds,
          precision_at_10: col((m) => m.precisionAtK), recall_at_10: col((m) => m.recallAtK), ndcg_at_10: col((m) => m.ndcgAtK), map: col((m) => m.map),
          ndcg_by_history: Object.fromEntries(HISTORY_BUCKETS.map((b, i) => [b.label, mean(runs.buckets.map((r) => r[i]!.ndcgAtK))])),
        }));
      }
      continue;
    }
    const rows: Record<string, Record<string, string>> = {};
    for (const [method, runs] of methods) {
      const col = (f: (m: RankingMetrics) => number) => fmt(runs.overall.map(f));
      rows[runs.note ? `${method} (${runs.note})` : method] = {
        'precision@10': col((m) => m.precisionAtK),
        'recall@10': col((m) => m.recallAtK),
        'nDCG@10': col((m) => m.ndcgAtK),
        MAP: col((m) => m.map),
      };
    }
    if (dataset.name === 'ml-100k' && protocol === 'random-by-item') {
      for (const p of PUBLISHED_ML_100K) {
        rows[`${p.algorithm} (published)`] = { 'precision@10': p.precisionAt10.toFixed(6), 'recall@10': p.recallAt10.toFixed(6), 'nDCG@10': p.ndcgAt10.toFixed(6), MAP: p.map.toFixed(6) };
      }
    }
    console.log(`\n${dataset.name}, ${protocol} (${DESCRIPTION[protocol]}), top ${K}, ${runSeeds.length} seed${runSeeds.length > 1 ? 's' : ''} (mean ± sd)`);
    console.table(rows);
    const first = methods.values().next().value!;
    const buckets: Record<string, Record<string, string>> = {};
    for (const [method, runs] of methods) {
      // A bucket without users has no figure (not 0).
      // Over several seeds with their spread: a bucket holds a few hundred users, so its mean
      // moves by hundredths between splits, and a difference far inside that is a tie.
      const figure = (i: number) => {
        const xs = runs.buckets.map((r) => r[i]!.ndcgAtK);
        return xs.length > 1 ? fmt(xs) : xs[0]!.toFixed(4);
      };
      buckets[method] = Object.fromEntries(HISTORY_BUCKETS.map((b, i) => [b.label, runs.buckets[0]![i]!.users === 0 ? '—' : figure(i)]));
    }
    buckets['users'] = Object.fromEntries(HISTORY_BUCKETS.map((b, i) => [b.label, String(Math.round(mean(first.buckets.map((r) => r[i]!.users))))]));
    console.log('nDCG@10 by history length (distinct training items of the user)');
    console.table(buckets);
    const build = builds[0]!;
    console.log(
      `training: ${fmt(builds.map((b) => b.buildMs / 1000))} s per build (${build.items} items, ${(build.memoryBytes / 1024 ** 2).toFixed(0)} MiB working arrays, ` +
        `process peak RSS ${(Math.max(...builds.map((b) => b.peakRssBytes)) / 1024 ** 2).toFixed(0)} MiB) on ${availableParallelism()} cores`,
    );
    if (dataset.name === 'ml-100k' && protocol === 'random-by-item') console.log(`published: ${PUBLISHED_SOURCE}`);
  }
}
