/**
 * @module config/defaults
 * The embedded configuration: what `npm start` serves with no config file (DESIGN.md, the
 * `demo` environment). A file's environment inherits ENVIRONMENT_DEFAULTS for keys it omits.
 */
import { availableParallelism } from 'node:os';
import type { Config, EnvironmentConfig } from './types.ts';

export const ENVIRONMENT_DEFAULTS: EnvironmentConfig = {
  itemTypes: [],
  pageTypes: [],
  channels: [],
  lists: {},
  filterAttributes: [],
  listCache: { enabled: true, ttlSec: 30 * 60 },
  serviceGroup: 'affinity',
  controlGroups: {},
  model: {
    // A purchase says more about taste than a page view; impressions and clicks are not consumption
    // (a click is followed by the detail page view, which is counted).
    eventWeights: { detail_pageview: 1, checkpoint: 1, item_interaction: 2, add_to_cart: 3, purchase: 5 },
    // The trained model reads a history whole: on MovieLens 100k, 100 entries gave P@10 0.383 and
    // 500 gave 0.418 (a user's whole history there); 12 bytes an entry.
    historyLength: 500,
    cooccurrenceWindow: 10,
    // A row is cut to this many when it passes twice as many and is stored up to twice as long
    // (builder/cooccurrence.ts); the ranking reads the strongest 100 at most. 100 (stored up to 200,
    // what 200 stored before rows were no longer cut at flushes) gave MovieLens 100k the same
    // P@10 as 200: 0.4200 / 0.4197 (random split, 5 seeds), time split nDCG@10 0.2145 / 0.2147.
    maxNeighbours: 100,
    attributionWindowSec: 24 * 3600,
    seedHalfLifeSec: 14 * 24 * 3600,
    // Chosen on MovieLens 100k (README, "Trained model"): DLAE beat EASE at every λ tried; the
    // model's weight 10 beside the co-occurrence neighbours was best on the random split and
    // within 6% of the best (weight 1) on the time split.
    trained: {
      enabled: true,
      method: 'dlae',
      l2: 200,
      dropout: 0.6,
      maxItems: 2000,
      halfLifeSec: 0,
      rebuildIntervalSec: 3600,
      // 10% more events than the serving model learned from: a build at low priority is cheap next to stale lists.
      rebuildShare: 0.1,
      // A 1,000,000-item catalog (452,869 model columns) needs 1.6 GB by sparseModelBytes (issue 11).
      maxMemoryBytes: 2 * 1024 ** 3,
      weight: 100,
      maxSeeds: 0,
      // MovieLens 100k (docs/reference.md "Trained model"): 200 weights per item lost 0.005 of
      // P@10 against the dense model; 64 neighbours train a 100,000-item tail in seconds.
      rowLength: 200,
      neighbourhood: 64,
      // Issue 13 (docs/reference.md "Trained model"): ratings as given favoured MovieLens's random
      // split and ignoring them its time split; their square root was best on the random split
      // and kept most of the time split's gain.
      ownWeightPower: 0.5,
      // Issue 13: with each row divided by its largest weight^(2/(2 + n)), retail users with 1–9
      // purchases moved ahead of item-kNN; dividing rows whole (any n) cost MovieLens 0.009 P@10.
      shortHistoryItems: 2,
    },
  },
  cors: { allowedOrigins: [] },
  feeds: {},
  outbound: { allow: [] },
};

export const DEFAULT_CONFIG: Config = {
  // Answers under 4 KiB (a typical recommendation answer) go uncompressed: gzip would cost the
  // main thread more than the bytes it saves on such bodies.
  server: { host: '0.0.0.0', port: 8080, maxBodyBytes: 1024 * 1024, shutdownTimeoutMs: 10_000, reusePort: false, compressMinBytes: 4096 },
  // One core stays with the main thread (HTTP, validation) and the model builder.
  recommend: {
    workers: Math.max(1, availableParallelism() - 1),
    maxQueue: 4096,
    deadlineMs: 1000,
    maxBatch: 16,
    maxListSize: 1000,
    // ~8 MB: at 30 requests/s of two lists a cached list lives ~2 minutes, long enough to page a
    // carousel. 2,000,000 (the earlier default) held ~100 MB and took half an hour to fill, which
    // the soak saw as steady growth. Raise it with the request rate and the paging time needed.
    listCacheItems: 250_000,
  },
  // Serving first: on one core streaming 8,500 events/s beside 4 connections of requests, the
  // builder at the process's priority took 45% of the core (p99 38–269 ms, 1,300 req/s); at 10,
  // p99 15–19 ms and 2,700 req/s, the builder catching up when requests leave it time.
  builder: { niceness: 10, flushMs: 1000 },
  store: { dataDir: './data', mapSizeBytes: 8 * 1024 ** 3 },
  auth: {
    issuer: 'affinity',
    tokenTtlSec: 3600,
    tokenCacheSize: 10_000,
    demoClient: true,
    // A backend caches its token for its lifetime (an hour): a few requests a minute is plenty
    // for an honest client; a guesser gets about one try a second per address at most.
    tokenEndpoint: { addressBurst: 20, addressPerMinute: 60, clientBurst: 10, clientPerMinute: 30, lockoutFailures: 10, lockoutSec: 60 },
  },
  ingest: {
    feeds: { timeoutMs: 30_000, maxBodyBytes: 50 * 1024 ** 2, retries: 2, retryBaseMs: 1000, concurrency: 4 },
    // SPEC.md allows up to 30 minutes per file; a 1 GiB CSV is millions of rows.
    imports: { maxUploadBytes: 1024 ** 3, batchRows: 2000, scanIntervalMs: 1000, settleMs: 2000 },
  },
  // No access line per request by default: the hot path only updates metrics.
  log: { level: 'info', accessSampleRate: 0 },
  // A year of days answers in a few ms (bench/reports.bench.ts); hours are 24 times the rows.
  reports: { maxRangeDays: 366, maxHourRangeDays: 31 },
  environments: {
    demo: {
      ...ENVIRONMENT_DEFAULTS,
      itemTypes: ['article', 'video', 'product'],
      lists: {
        recommended_for_you: { strategy: 'personalized', itemTypes: [], fallback: 'popular' },
        more_like_this: { strategy: 'item_to_item', itemTypes: [], fallback: 'popular' },
        trending: { strategy: 'trending', itemTypes: [], fallback: 'popular' },
        popular: { strategy: 'popular', itemTypes: [], fallback: 'latest' },
        latest: { strategy: 'latest', itemTypes: [] },
      },
      controlGroups: { customer: 0 },
    },
  },
};
