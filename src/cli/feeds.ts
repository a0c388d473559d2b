/**
 * @module cli/feeds
 * `affinity feed add|list|status|remove|poll`: operator commands on the feed registry in the data
 * directory, with the same validation as the API (http/schemas/feed.ts). The running server's
 * poller reads the registry every second, so an added, changed or removed feed takes effect at
 * once. `feed poll` records a poll request the server picks up on its next tick (no token
 * needed: the CLI has the data directory), then waits for that poll's status and prints it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { Config } from '../config/types.ts';
import { feedToWire, parseFeedBody } from '../http/schemas/feed.ts';
import { parseAllowList } from '../outbound/allow-list.ts';
import { getFeed, getFeedStatus, listFeeds, newFeedId, putFeed, removeFeed, requestPoll, syncConfigFeeds } from '../store/feeds.ts';
import type { Store } from '../store/open.ts';
import { fieldErrorsText } from '../domain/field-errors.ts';

/** A feed command that cannot be done (unknown environment or feed, invalid definition): exit 1. */
export class FeedUsageError extends Error {}
/** A feed command invoked wrongly (missing or malformed flag, unknown action): exit 2 with the usage. */
export class FeedFlagError extends FeedUsageError {}

export const FEED_USAGE = `  affinity feed add --env <environment> --url <url> --format rss|atom|json|xml|csv --item-type <type>
        [--id <feed_id>] [--interval 15m] [--auth-header 'Name: value']
        [--disable-field <field> --disable-value <value>] [--items-path <path>]
        [--map <source path>=<item field> ...] [--delimiter <char>]
  affinity feed list [--env <environment>]
  affinity feed status --env <environment> <feed_id>
  affinity feed remove --env <environment> <feed_id>
  affinity feed poll --env <environment> <feed_id> [--no-wait] [--timeout <seconds>]`;

const POLL_CHECK_MS = 200;

function print(value: unknown): void {
  console.log(JSON.stringify(value));
}

function environmentOf(environments: Config['environments'], env: string | undefined): string {
  if (!env) throw new FeedFlagError('--env is required');
  if (!Object.hasOwn(environments, env)) throw new FeedUsageError(`unknown environment '${env}' (configured: ${Object.keys(environments).join(', ')})`);
  return env;
}

/** Builds the wire body of `feed add` from its flags. */
function bodyFromFlags(values: Record<string, string | string[] | boolean | undefined>): Record<string, unknown> {
  const body: Record<string, unknown> = { url: values.url, format: values.format, item_type: values['item-type'] };
  if (values.id !== undefined) body.feed_id = values.id;
  if (values.interval !== undefined) body.interval = values.interval;
  if (typeof values['auth-header'] === 'string') {
    const header = values['auth-header'];
    const colon = header.indexOf(':');
    if (colon < 1) throw new FeedFlagError(`--auth-header must be 'Name: value', got '${header}'`);
    body.auth_header = { name: header.slice(0, colon).trim(), value: header.slice(colon + 1).trim() };
  }
  if ((values['disable-field'] === undefined) !== (values['disable-value'] === undefined)) {
    throw new FeedFlagError('--disable-field and --disable-value go together');
  }
  if (values['disable-field'] !== undefined) body.disable_marker = { field: values['disable-field'], value: values['disable-value'] };
  if (values['items-path'] !== undefined) body.items_path = values['items-path'];
  if (values.delimiter !== undefined) body.delimiter = values.delimiter;
  const maps = (values.map as string[] | undefined) ?? [];
  if (maps.length > 0) {
    const mapping: Record<string, string> = {};
    for (const m of maps) {
      const eq = m.lastIndexOf('=');
      if (eq < 1) throw new FeedFlagError(`--map must be '<source path>=<item field>', got '${m}'`);
      mapping[m.slice(0, eq)] = m.slice(eq + 1);
    }
    body.mapping = mapping;
  }
  return body;
}

async function addFeed(open: OpenStore, environments: Config['environments'], args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      env: { type: 'string' },
      url: { type: 'string' },
      format: { type: 'string' },
      'item-type': { type: 'string' },
      id: { type: 'string' },
      interval: { type: 'string' },
      'auth-header': { type: 'string' },
      'disable-field': { type: 'string' },
      'disable-value': { type: 'string' },
      'items-path': { type: 'string' },
      map: { type: 'string', multiple: true },
      delimiter: { type: 'string' },
    },
  });
  const environment = environmentOf(environments, values.env);
  for (const required of ['url', 'format', 'item-type'] as const) {
    if (values[required] === undefined) throw new FeedFlagError(`feed add needs --${required}`);
  }
  const env = environments[environment]!;
  const parsed = parseFeedBody(bodyFromFlags(values), environment, undefined, env.itemTypes, parseAllowList(env.outbound.allow));
  const store = await open();
  if ('errors' in parsed) throw new FeedUsageError(`invalid feed: ${fieldErrorsText(parsed.errors)}`);
  const feedId = parsed.feedIdGiven ? parsed.feed.feedId : newFeedId();
  if (getFeed(store, environment, feedId)) throw new FeedUsageError(`feed '${feedId}' already exists in environment '${environment}'`);
  const now = new Date().toISOString();
  await putFeed(store, { ...parsed.feed, feedId, source: 'api', createdAt: now, updatedAt: now });
  print(feedToWire(getFeed(store, environment, feedId)!, undefined));
}

async function oneFeed(open: OpenStore, environments: Config['environments'], args: string[], pollOptions = false) {
  const { values, positionals } = parseArgs({
    args,
    options: { env: { type: 'string' }, 'no-wait': { type: 'boolean' }, timeout: { type: 'string' } },
    allowPositionals: true,
  });
  if (!pollOptions && (values['no-wait'] !== undefined || values.timeout !== undefined)) throw new FeedFlagError('--no-wait and --timeout apply to feed poll');
  const environment = environmentOf(environments, values.env);
  const feedId = positionals[0];
  if (!feedId) throw new FeedFlagError('a feed_id is required');
  const timeoutSec = values.timeout === undefined ? 120 : Number(values.timeout);
  if (!(timeoutSec > 0)) throw new FeedFlagError(`--timeout must be a positive number of seconds, got '${String(values.timeout)}'`);
  const store = await open();
  const def = getFeed(store, environment, feedId);
  if (!def) throw new FeedUsageError(`no feed '${feedId}' in environment '${environment}'`);
  return { def, values, store, timeoutSec };
}

async function pollFeed(open: OpenStore, environments: Config['environments'], args: string[]): Promise<void> {
  const { def, values, store, timeoutSec } = await oneFeed(open, environments, args, true);
  const requestedAt = await requestPoll(store, def.environment, def.feedId);
  if (values['no-wait']) {
    print({ feed_id: def.feedId, poll_requested_at: new Date(requestedAt).toISOString() });
    return;
  }
  const deadline = Date.now() + timeoutSec * 1000;
  while (Date.now() < deadline) {
    await sleep(POLL_CHECK_MS);
    store.root.resetReadTxn(); // see the server's latest commit
    const status = getFeedStatus(store, def.environment, def.feedId);
    if (status?.lastPollAt && Date.parse(status.lastPollAt) >= requestedAt) {
      print(feedToWire(getFeed(store, def.environment, def.feedId) ?? def, status));
      return;
    }
  }
  throw new FeedUsageError(`no poll within ${timeoutSec} s: is the server running on this data directory? (the request stays; it polls when the server runs)`);
}

/** Opens the data directory's store once the command line is known to be valid. */
export type OpenStore = () => Promise<Store>;

/**
 * Runs `affinity feed <action> ...`: flags are checked before `open` is called, so a bad
 * invocation is reported as such whatever the state of the data directory.
 */
export async function runFeedCommand(openStore: OpenStore, environments: Config['environments'], args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const open: OpenStore = async () => {
    const store = await openStore();
    // The configuration file's feeds are in the registry even before the server first starts.
    await syncConfigFeeds(store, environments);
    return store;
  };
  if (action === 'add') return addFeed(open, environments, rest);
  if (action === 'list') {
    const { values } = parseArgs({ args: rest, options: { env: { type: 'string' } } });
    const environment = values.env === undefined ? undefined : environmentOf(environments, values.env);
    const store = await open();
    for (const def of listFeeds(store, environment)) print(feedToWire(def, getFeedStatus(store, def.environment, def.feedId)));
    return;
  }
  if (action === 'status') {
    const { def, store } = await oneFeed(open, environments, rest);
    print(feedToWire(def, getFeedStatus(store, def.environment, def.feedId)));
    return;
  }
  if (action === 'remove') {
    const { def, store } = await oneFeed(open, environments, rest);
    if (def.source === 'config') throw new FeedUsageError(`feed '${def.feedId}' is declared in the configuration file: remove it there`);
    await removeFeed(store, def.environment, def.feedId);
    print({ feed_id: def.feedId, removed: true });
    return;
  }
  if (action === 'poll') return pollFeed(open, environments, rest);
  throw new FeedFlagError(`unknown feed command '${action ?? ''}'`);
}
