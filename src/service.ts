/**
 * @module service
 * Composition of the running service: store → auth → model builder worker → ranking pool →
 * ingest worker (feeds, file drops) → HTTP routes → listening → the ranking engines built
 * (`ready`), and the graceful stop (stop
 * accepting, finish in-flight requests, stop ingestion after its current batch, stop the builder
 * after its current chunk, flush LMDB). The only module that
 * wires layers together; main.ts adds the process concerns (config errors, signals, exit codes).
 */
import type { Logger } from 'pino';
import { AttemptLimiter } from './auth/attempt-limiter.ts';
import { createClient, hasClients } from './auth/clients.ts';
import { loadOrCreateSigningKey } from './auth/signing-key.ts';
import { TokenVerifier } from './auth/tokens.ts';
import type { Config } from './config/types.ts';
import { registerEventRoutes } from './http/routes/events.ts';
import { registerFeedRoutes } from './http/routes/feeds.ts';
import { registerImportRoutes } from './http/routes/imports.ts';
import { registerHealthRoute } from './http/routes/health.ts';
import { registerItemRoutes } from './http/routes/items.ts';
import { registerModelRoutes } from './http/routes/model.ts';
import { registerOAuthRoutes } from './http/routes/oauth.ts';
import { registerRecommendationRoutes } from './http/routes/recommendations.ts';
import { registerReportRoutes } from './http/routes/reports.ts';
import { assertPortFree } from './http/port-check.ts';
import { registerDashboardRoutes } from './http/routes/dashboard.ts';
import { registerDocsRoutes } from './http/routes/docs.ts';
import { registerMetricsRoute } from './http/routes/metrics.ts';
import { registerReadyRoute } from './http/routes/ready.ts';
import { ProtobufCodec } from './http/protobuf.ts';
import { HttpServer } from './http/server.ts';
import { ServiceMetrics } from './metrics/service-metrics.ts';
import { IngestWorker } from './main-thread/ingest-supervisor.ts';
import { ModelBuilder } from './main-thread/model-builder.ts';
import { ModelTrainer } from './main-thread/model-trainer.ts';
import { ListCache } from './main-thread/list-cache.ts';
import { ProcessMonitor } from './main-thread/process-monitor.ts';
import { RankingPool } from './main-thread/ranking-pool.ts';
import { RequestCounter } from './main-thread/request-counter.ts';
import { Catalog } from './store/catalog.ts';
import { EventLog } from './store/event-log.ts';
import { getFeedStatus, listFeeds, syncConfigFeeds } from './store/feeds.ts';
import { listImports } from './store/imports.ts';
import { Store } from './store/open.ts';
import { readTrainedMeta } from './store/trained-model.ts';
import { packageVersion } from './config/version.ts';

const CORS_PATTERNS = ['/api/:environment/events', '/api/:environment/recommendations/requests', '/api/:environment/recommendations/lists'];
/** Imports counted per environment in /metrics (the newest; older ones are settled history). */
const METRICS_IMPORTS_LISTED = 1000;

export interface RunningService {
  port: number;
  /**
   * Resolves once the ranking workers have built their engines; rejects if they cannot. The port
   * opens before: a ranking worker's catalog scan takes ~10 s at 1,000,000 items, and for that
   * long a restart refused events and catalog writes (recommendations wait or answer 503 meanwhile).
   */
  ready: Promise<void>;
  /** Graceful stop; resolves once LMDB is flushed and closed. */
  stop(): Promise<void>;
}

async function ensureDemoClient(config: Config, store: Store, log: Logger): Promise<void> {
  if (!config.auth.demoClient || hasClients(store)) return;
  const environment = 'demo' in config.environments ? 'demo' : Object.keys(config.environments)[0]!;
  const { clientId, clientSecret } = await createClient(store, [environment]);
  // Shown once, like `affinity client create`; only the hash is stored.
  log.info(
    { client_id: clientId, client_secret: clientSecret, environment },
    'demo client created (the secret is shown only now; create more with `npx affinity client create`)',
  );
}

export async function startService(config: Config, log: Logger): Promise<RunningService> {
  if (!config.server.reusePort) await assertPortFree(config.server.host, config.server.port);
  const store = new Store(config.store);
  let builder: ModelBuilder | undefined;
  let trainer: ModelTrainer | undefined;
  let pool: RankingPool | undefined;
  let requests: RequestCounter | undefined;
  let ingest: IngestWorker | undefined;
  let monitor: ProcessMonitor | undefined;
  try {
    // First: the pauses of the workers' first collections count too.
    monitor = new ProcessMonitor();
    const key = await loadOrCreateSigningKey(config.store.dataDir);
    await ensureDemoClient(config, store, log);
    const auth = { verifier: new TokenVerifier(key, config.auth), store };
    // The builder and trainer start before the pool: their notices find it once it exists (the
    // pool's workers read LMDB at start, so nothing committed before is missed).
    builder = new ModelBuilder({
      store: config.store,
      environments: config.environments,
      niceness: config.builder.niceness,
      flushMs: config.builder.flushMs,
      log,
      onRows: ({ environment, ix }) => pool?.notify({ kind: 'rows', environment, ix }),
    });
    trainer = new ModelTrainer({
      store: config.store,
      environments: config.environments,
      log,
      servingModel: (environment) => readTrainedMeta(store, environment),
      appliedPosition: (environment) => builder?.stats?.positions[environment],
      onBuilt: (environment) => pool?.notify({ kind: 'model', environment }),
    });
    pool = new RankingPool(config, (err) => log.error({ err }, 'a ranking worker failed; another starts in its place'), builder.liveRows);
    // Feeds of the configuration file first, so the ingest worker's first tick sees them.
    for (const replaced of await syncConfigFeeds(store, config.environments)) {
      log.warn({ feed: replaced }, 'a feed of the configuration file replaced an operator-added feed with the same id');
    }
    ingest = await IngestWorker.start(config, store, log);
    const metrics = new ServiceMetrics();
    const server = new HttpServer({
      maxBodyBytes: config.server.maxBodyBytes,
      log,
      metrics,
      accessSampleRate: config.log.accessSampleRate,
      compressMinBytes: config.server.compressMinBytes,
    });
    // Browsers call these two from shop pages; the other endpoints are for backends and operators.
    server.cors(CORS_PATTERNS, (environment) => config.environments[environment]?.cors.allowedOrigins);
    const b = builder;
    const t = trainer;
    const p = pool;
    const i = ingest;
    const eventLog = new EventLog(store);
    metrics.setSources({
      builder: () => b.stats,
      logEnd: (environment) => eventLog.endOf(environment),
      trainer: () => t.stats,
      poolQueueDepth: () => p.queueDepth,
      heaps: () => monitor!.heaps(),
      dataDir: config.store.dataDir,
      feeds: () =>
        listFeeds(store).map((f) => {
          const s = getFeedStatus(store, f.environment, f.feedId);
          return { environment: f.environment, feedId: f.feedId, polls: s?.polls ?? 0, outcome: s?.outcome, consecutiveFailures: s?.consecutiveFailures ?? 0, entriesRejected: s?.entriesRejected ?? 0 };
        }),
      imports: () => Object.keys(config.environments).flatMap((environment) => listImports(store, environment, METRICS_IMPORTS_LISTED)),
    });
    const limiter = new AttemptLimiter(config.auth.tokenEndpoint);
    registerHealthRoute(server, builder, trainer, { tokenEndpoint: limiter.stats, process: monitor!, eventLog, catalog: new Catalog(store), requestCounterFlush: metrics.requestCounterFlush });
    registerReadyRoute(server, {
      environments: Object.keys(config.environments),
      probeStore: () => void store.meta.get('ready-probe'),
      builder: b,
      ingest: i,
      pool: p,
      rankWorkers: config.recommend.workers,
    });
    registerMetricsRoute(server, metrics);
    registerOAuthRoutes(server, { store, key, config: config.auth, limiter });
    registerItemRoutes(server, { catalog: new Catalog(store), auth, environments: config.environments });
    const protobuf = new ProtobufCodec();
    registerEventRoutes(server, {
      eventLog,
      auth,
      environments: config.environments,
      notifyRanking: (notice) => p.notify(notice),
      metrics,
      protobuf,
    });
    requests = new RequestCounter((counts) => b.postRequestCounts(counts), (ms) => metrics.requestCounterFlush.record(ms));
    registerRecommendationRoutes(server, {
      requests,
      pool,
      listCache: new ListCache(config.recommend.listCacheItems),
      auth,
      environments: config.environments,
      recommend: config.recommend,
      protobuf,
    });
    registerReportRoutes(server, { store, auth, environments: config.environments, reports: config.reports });
    registerModelRoutes(server, { trainer, auth, environments: config.environments });
    registerFeedRoutes(server, { store, ingest, auth, environments: config.environments });
    registerImportRoutes(server, {
      store,
      ingest,
      auth,
      environments: config.environments,
      dataDir: config.store.dataDir,
      maxUploadBytes: config.ingest.imports.maxUploadBytes,
    });
    registerDashboardRoutes(server);
    registerDocsRoutes(server, packageVersion());
    server.fallback();
    const port = await server.listen(config.server.host, config.server.port, config.server.reusePort);

    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        const drained = await server.drain(config.server.shutdownTimeoutMs);
        if (!drained) log.warn({ timeoutMs: config.server.shutdownTimeoutMs }, 'in-flight requests cut off at shutdown');
        server.close();
        // Before the store closes: the current import commits its batch, polls in flight are cancelled.
        await ingest!.close();
        await pool!.close();
        // Posted before the builder's stop: its last write has them.
        requests!.close();
        await trainer!.close();
        await builder!.close();
        await store.close();
        monitor!.close();
      })());
    return { port, ready: pool.ready(), stop };
  } catch (err) {
    monitor?.close();
    await ingest?.close();
    await pool?.close();
    requests?.close();
    await trainer?.close();
    await builder?.close();
    await store.close();
    throw err;
  }
}
