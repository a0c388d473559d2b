/**
 * @module main
 * Process entry: load and validate the configuration (exit 2 before listening when invalid),
 * start the service, stop gracefully on SIGTERM/SIGINT (exit 0).
 */
import { pino } from 'pino';
import { ConfigError, loadConfig } from './config/load.ts';
import type { Config } from './config/types.ts';
import { PortUnavailableError } from './http/server.ts';
import { startService } from './service.ts';
import { lmdbBuild } from './store/lmdb-build.ts';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(2);
}

const log = pino({ level: config.log.level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime });
const service = await startService(config, log).catch((err: unknown) => {
  // A taken port is an operator's mistake, not a crash: one clear line, no stack.
  if (err instanceof PortUnavailableError) log.fatal(err.message);
  else log.fatal({ err }, 'failed to start');
  process.exit(1);
});
// How V8 collects garbage was decided on node's command line (bin/affinity-serve).
const gc = process.execArgv.includes('--single-threaded-gc') ? 'single-threaded' : 'parallel';
log.info({ port: service.port, dataDir: config.store.dataDir, gc }, 'listening');
const lmdb = lmdbBuild();
if (!lmdb.freelistFixed) {
  log.warn(
    { module: lmdb.module },
    "lmdb runs its prebuilt native module, without the free-list fix: a commit on a large store can fail or the process abort (install a C compiler, make and Python, then run 'node scripts/lmdb-freelist-fix.mjs')",
  );
}
/**
 * The graceful stop, then exit: `exitCode` once stopped (1 if the stop fails). Whatever hangs in
 * the stop, the process still ends: the drain has its own timeout, this covers the builder and
 * the store behind it.
 */
function shutDown(exitCode: number): void {
  setTimeout(() => {
    log.error('shutdown did not finish in time: exiting');
    process.exit(1);
  }, config.server.shutdownTimeoutMs + 15_000).unref();
  service.stop().then(
    () => {
      log.info('stopped');
      process.exit(exitCode);
    },
    (err: unknown) => {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    },
  );
}

service.ready.then(
  () => log.info({ startMs: Math.round(performance.now()) }, 'ready'),
  (err: unknown) => {
    log.fatal({ err }, 'failed to start');
    shutDown(1);
  },
);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    log.info({ signal }, 'shutting down');
    shutDown(0);
  });
}
