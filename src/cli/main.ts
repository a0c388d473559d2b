/**
 * @module cli/main
 * `affinity` command line: operator tasks on the data directory of the configured service
 * (same AFFINITY_CONFIG / AFFINITY_DATA_DIR as the server, or --data-dir; safe while it runs).
 * Output is one JSON object per line so scripts can read it. Help and --version go to stdout
 * with exit 0; a bad invocation (unknown command, bad or missing flag) exits 2 with the usage
 * on stderr; a command that cannot be done exits 1 with a message on stderr. Commands other
 * than `serve` need the data of a service that has started once: they never create a store.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient, listClients, revokeClient } from '../auth/clients.ts';
import { ConfigError, loadConfig } from '../config/load.ts';
import { FEED_USAGE, FeedFlagError, FeedUsageError, runFeedCommand, type OpenStore } from './feeds.ts';
import { EventLog } from '../store/event-log.ts';
import { Store, storeDataFile } from '../store/open.ts';
import { packageVersion } from '../config/version.ts';

const COMMAND_USAGE: Record<string, string> = {
  serve: `  affinity serve
        Runs the service (the same as \`npm start\`): AFFINITY_CONFIG, AFFINITY_PORT and the
        other AFFINITY_* variables configure it; SIGTERM or SIGINT stops it gracefully.`,
  client: `  affinity client create --env <environment> [--env <environment> ...]
  affinity client list
  affinity client revoke <client_id>`,
  events: `  affinity events export --env <environment> [--since <ISO 8601 time>]`,
  feed: FEED_USAGE,
};

const GLOBAL_OPTIONS = `Options:
  --data-dir <dir>   the service's data directory (default: AFFINITY_DATA_DIR, else ./data)
  -h, --help         this help (also: affinity <command> --help)
  -V, --version      the version`;

function usage(command?: string): string {
  const commands = command ? COMMAND_USAGE[command]! : Object.values(COMMAND_USAGE).join('\n');
  return `Usage:\n${commands}\n\n${GLOBAL_OPTIONS}`;
}

/** A bad invocation: exit 2 with the usage (of the command when known). */
class UsageError extends Error {
  constructor(message: string, readonly command?: string) {
    super(message);
  }
}
/** A command that cannot be done as asked: exit 1. */
class CommandError extends Error {}

async function runClientCommand(open: OpenStore, environments: readonly string[], args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { env: { type: 'string', multiple: true } },
    allowPositionals: true,
  });
  if (action === 'create') {
    const envs = [...new Set(values.env ?? [])];
    if (envs.length === 0) throw new UsageError('client create needs at least one --env', 'client');
    const unknown = envs.filter((e) => !environments.includes(e));
    if (unknown.length > 0) {
      throw new CommandError(`unknown environment(s): ${unknown.join(', ')} (configured: ${environments.join(', ')})`);
    }
    const { clientId, clientSecret } = await createClient(await open(), envs);
    console.log(JSON.stringify({ client_id: clientId, client_secret: clientSecret }));
    return;
  }
  if (action === 'list') {
    if (positionals.length > 0 || values.env !== undefined) throw new UsageError('client list takes no arguments', 'client');
    for (const c of listClients(await open())) {
      console.log(
        JSON.stringify({ client_id: c.clientId, environments: c.environments, created_at: c.createdAt, revoked_at: c.revokedAt ?? null }),
      );
    }
    return;
  }
  if (action === 'revoke') {
    const clientId = positionals[0];
    if (!clientId) throw new UsageError('client revoke needs a client_id', 'client');
    if (!(await revokeClient(await open(), clientId))) throw new CommandError(`no client '${clientId}'`);
    console.log(JSON.stringify({ client_id: clientId, revoked: true }));
    return;
  }
  throw new UsageError(`unknown client command '${action ?? ''}'`, 'client');
}

/** Prints an environment's events as NDJSON, oldest first, each with its acceptance time. */
async function exportEvents(open: OpenStore, environments: readonly string[], args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action !== 'export') throw new UsageError(`unknown events command '${action ?? ''}'`, 'events');
  const { values } = parseArgs({ args: rest, options: { env: { type: 'string' }, since: { type: 'string' } } });
  if (!values.env) throw new UsageError('events export needs --env', 'events');
  if (!environments.includes(values.env)) throw new CommandError(`unknown environment '${values.env}'`);
  let sinceMs = 0;
  if (values.since !== undefined) {
    sinceMs = Date.parse(values.since);
    if (!/[zZ]|[+-]\d\d:?\d\d$/.test(values.since) || Number.isNaN(sinceMs)) {
      throw new UsageError(`--since must be an ISO 8601 time with an offset or Z, got '${values.since}'`, 'events');
    }
  }
  const out: string[] = [];
  const flush = () => {
    if (out.length > 0) process.stdout.write(`${out.join('\n')}\n`);
    out.length = 0;
  };
  for (const { event } of new EventLog(await open()).after(values.env, 0)) {
    if (event.t < sinceMs) continue;
    out.push(JSON.stringify({ ...event.e, accepted_at: new Date(event.t).toISOString() }));
    if (out.length === 1000) flush();
  }
  flush();
}

/** Takes `--data-dir <dir>` / `--data-dir=<dir>` out of argv wherever it stands. */
function takeDataDir(argv: string[]): { dataDir: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let dataDir: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--data-dir') {
      dataDir = argv[++i];
      if (dataDir === undefined || dataDir === '') throw new UsageError('--data-dir needs a directory');
    } else if (arg.startsWith('--data-dir=')) {
      dataDir = arg.slice('--data-dir='.length);
      if (dataDir === '') throw new UsageError('--data-dir needs a directory');
    } else {
      rest.push(arg);
    }
  }
  return { dataDir, rest };
}

async function main(argv: string[]): Promise<number> {
  const { dataDir, rest } = takeDataDir(argv);
  const [command, ...args] = rest;
  if (command === undefined) throw new UsageError('a command is required');
  if (command === '--help' || command === '-h' || command === 'help') {
    const topic = args[0];
    if (topic !== undefined && !Object.hasOwn(COMMAND_USAGE, topic)) throw new UsageError(`unknown command '${topic}'`);
    console.log(usage(topic));
    return 0;
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    console.log(packageVersion());
    return 0;
  }
  if (!Object.hasOwn(COMMAND_USAGE, command)) {
    throw new UsageError(command.startsWith('-') ? `unknown option '${command}'` : `unknown command '${command}'`);
  }
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage(command));
    return 0;
  }
  const env = dataDir === undefined ? process.env : { ...process.env, AFFINITY_DATA_DIR: dataDir };
  if (command === 'serve') {
    if (args.length > 0) throw new UsageError(`serve takes no arguments, got '${args.join(' ')}'`, 'serve');
    if (dataDir !== undefined) process.env.AFFINITY_DATA_DIR = dataDir;
    await import('../main.ts');
    return -1;
  }
  const config = loadConfig(env);
  let store: Store | undefined;
  // Called by a command once its flags are checked. A store is created only by the service: a
  // typo or a wrong working directory must not leave an empty ./data behind.
  const open: OpenStore = async () => {
    if (store) return store;
    const dir = resolve(config.store.dataDir);
    if (!existsSync(storeDataFile(dir))) {
      throw new CommandError(`no Affinity data in '${dir}': start the service once with this data directory, or pass --data-dir <dir> (or AFFINITY_DATA_DIR)`);
    }
    store = new Store(config.store);
    return store;
  };
  try {
    if (command === 'events') await exportEvents(open, Object.keys(config.environments), args);
    else if (command === 'feed') await runFeedCommand(open, config.environments, args);
    else await runClientCommand(open, Object.keys(config.environments), args);
    return 0;
  } finally {
    await store?.close();
  }
}

function commandOf(argv: string[]): string | undefined {
  return argv.find((a) => Object.hasOwn(COMMAND_USAGE, a));
}

try {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exitCode = code;
} catch (err) {
  const message = `affinity: ${(err as Error).message}`;
  if (err instanceof UsageError || err instanceof FeedFlagError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    const command = err instanceof UsageError ? err.command : commandOf(process.argv.slice(2));
    console.error(`${message}\n${usage(command)}`);
    process.exitCode = 2;
  } else if (err instanceof CommandError || err instanceof FeedUsageError || err instanceof ConfigError) {
    console.error(message);
    process.exitCode = 1;
  } else {
    throw err;
  }
}
