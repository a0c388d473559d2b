/**
 * @module cli/main
 * `affinity` command line: operator tasks on the data directory of the configured service
 * (same AFFINITY_CONFIG / AFFINITY_DATA_DIR as the server; safe while it runs). Output is one
 * JSON object per line so scripts can read it; errors go to stderr with exit code 1.
 */
import { parseArgs } from 'node:util';
import { createClient, listClients, revokeClient } from '../auth/clients.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import { FEED_USAGE, FeedUsageError, runFeedCommand } from './feeds.ts';
import { EventLog } from '../store/event-log.ts';
import { Store } from '../store/open.ts';

const USAGE = `Usage:
  affinity client create --env <environment> [--env <environment> ...]
  affinity client list
  affinity client revoke <client_id>
  affinity events export --env <environment> [--since <ISO 8601 time>]
${FEED_USAGE}
  affinity serve`;

class UsageError extends Error {}

async function runClientCommand(store: Store, environments: readonly string[], args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { env: { type: 'string', multiple: true } },
    allowPositionals: true,
  });
  if (action === 'create') {
    const envs = [...new Set(values.env ?? [])];
    if (envs.length === 0) throw new UsageError('client create needs at least one --env');
    const unknown = envs.filter((e) => !environments.includes(e));
    if (unknown.length > 0) {
      throw new UsageError(`unknown environment(s): ${unknown.join(', ')} (configured: ${environments.join(', ')})`);
    }
    const { clientId, clientSecret } = await createClient(store, envs);
    console.log(JSON.stringify({ client_id: clientId, client_secret: clientSecret }));
    return;
  }
  if (action === 'list') {
    for (const c of listClients(store)) {
      console.log(
        JSON.stringify({ client_id: c.clientId, environments: c.environments, created_at: c.createdAt, revoked_at: c.revokedAt ?? null }),
      );
    }
    return;
  }
  if (action === 'revoke') {
    const clientId = positionals[0];
    if (!clientId) throw new UsageError('client revoke needs a client_id');
    if (!(await revokeClient(store, clientId))) throw new UsageError(`no client '${clientId}'`);
    console.log(JSON.stringify({ client_id: clientId, revoked: true }));
    return;
  }
  throw new UsageError(`unknown client command '${action ?? ''}'`);
}

/** Prints an environment's events as NDJSON, oldest first, each with its acceptance time. */
function exportEvents(store: Store, environments: readonly string[], args: string[]): void {
  const [action, ...rest] = args;
  if (action !== 'export') throw new UsageError(`unknown events command '${action ?? ''}'`);
  const { values } = parseArgs({ args: rest, options: { env: { type: 'string' }, since: { type: 'string' } } });
  if (!values.env) throw new UsageError('events export needs --env');
  if (!environments.includes(values.env)) throw new UsageError(`unknown environment '${values.env}'`);
  let sinceMs = 0;
  if (values.since !== undefined) {
    sinceMs = Date.parse(values.since);
    if (!/[zZ]|[+-]\d\d:?\d\d$/.test(values.since) || Number.isNaN(sinceMs)) {
      throw new UsageError(`--since must be an ISO 8601 time with an offset or Z, got '${values.since}'`);
    }
  }
  const out: string[] = [];
  const flush = () => {
    if (out.length > 0) process.stdout.write(`${out.join('\n')}\n`);
    out.length = 0;
  };
  for (const { event } of new EventLog(store).after(values.env, 0)) {
    if (event.t < sinceMs) continue;
    out.push(JSON.stringify({ ...event.e, accepted_at: new Date(event.t).toISOString() }));
    if (out.length === 1000) flush();
  }
  flush();
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === 'serve') {
    await import('../main.ts');
    return -1;
  }
  if (command !== 'client' && command !== 'events' && command !== 'feed') {
    console.error(USAGE);
    return command === undefined || command === '--help' || command === 'help' ? 0 : 1;
  }
  const config = loadConfig();
  const store = new Store(config.store);
  try {
    if (command === 'events') exportEvents(store, Object.keys(config.environments), args);
    else if (command === 'feed') await runFeedCommand(store, config.environments, args);
    else await runClientCommand(store, Object.keys(config.environments), args);
    return 0;
  } finally {
    await store.close();
  }
}

try {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exitCode = code;
} catch (err) {
  if (
    err instanceof UsageError ||
    err instanceof FeedUsageError ||
    err instanceof ConfigError ||
    (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  ) {
    console.error(`affinity: ${(err as Error).message}`);
    if (err instanceof UsageError) console.error(USAGE);
    process.exitCode = 1;
  } else {
    throw err;
  }
}
