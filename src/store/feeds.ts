/**
 * @module store/feeds
 * The feed registry on LMDB: definitions (from the configuration file, synced at start, and
 * those operators add by API or CLI), each feed's poll status, and poll requests. Poll requests
 * are records so that the CLI, another process, can ask the running server's poller for a poll:
 * the poller sees a request newer than its last poll start on its next tick. Validation is the
 * caller's job.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../config/types.ts';
import { DEFAULT_INTERVAL_SEC, parseInterval, type FeedDefinition, type FeedStatus } from '../domain/feed.ts';
import type { Store } from './open.ts';
import { transactionRetried } from './commit.ts';

const KEY_END = '\uffff';

/** A new feed id: `f_` and 12 random hex digits. */
export function newFeedId(): string {
  return `f_${randomBytes(6).toString('hex')}`;
}

/** Every feed of `environment` (of all environments when undefined), in id order. */
export function listFeeds(store: Store, environment?: string): FeedDefinition[] {
  const range = environment === undefined ? store.feeds.getRange() : store.feeds.getRange({ start: [environment], end: [environment, KEY_END] });
  return [...range].map(({ value }) => value as FeedDefinition);
}

export function getFeed(store: Store, environment: string, feedId: string): FeedDefinition | undefined {
  if (feedId.length > 256) return undefined;
  return store.feeds.get([environment, feedId]) as FeedDefinition | undefined;
}

/** Creates or replaces a definition; resolves `created` or `replaced` once committed. */
export function putFeed(store: Store, def: FeedDefinition): Promise<'created' | 'replaced'> {
  return transactionRetried(store.root, () => {
    const key = [def.environment, def.feedId];
    const existing = store.feeds.get(key) as FeedDefinition | undefined;
    store.feeds.put(key, existing ? { ...def, createdAt: existing.createdAt } : def);
    return existing ? 'replaced' : 'created';
  });
}

/** Removes a definition with its status and poll request; resolves false when unknown. */
export function removeFeed(store: Store, environment: string, feedId: string): Promise<boolean> {
  return transactionRetried(store.root, () => {
    if (store.feeds.get([environment, feedId]) === undefined) return false;
    store.feeds.remove([environment, feedId]);
    store.feedState.remove(['status', environment, feedId]);
    store.feedState.remove(['request', environment, feedId]);
    return true;
  });
}

/** The definition a configured feed stands for. */
export function configFeedDefinition(environment: string, feedId: string, feed: Config['environments'][string]['feeds'][string], now: string): FeedDefinition {
  const def: FeedDefinition = {
    feedId,
    environment,
    url: feed.url,
    format: feed.format,
    itemType: feed.itemType,
    intervalSec: feed.interval === undefined ? DEFAULT_INTERVAL_SEC : (parseInterval(feed.interval) ?? DEFAULT_INTERVAL_SEC),
    source: 'config',
    createdAt: now,
    updatedAt: now,
  };
  if (feed.authHeader) def.authHeader = { ...feed.authHeader };
  if (feed.disableMarker) def.disableMarker = { ...feed.disableMarker };
  if (feed.itemsPath !== undefined) def.itemsPath = feed.itemsPath;
  if (feed.mapping) def.mapping = { ...feed.mapping };
  if (feed.delimiter !== undefined) def.delimiter = feed.delimiter;
  return def;
}

function sameDefinition(a: FeedDefinition, b: FeedDefinition): boolean {
  const strip = ({ createdAt: _c, updatedAt: _u, ...rest }: FeedDefinition) => JSON.stringify(rest, Object.keys(rest).sort());
  return strip(a) === strip(b);
}

/**
 * Makes the registry hold exactly the configuration file's feeds as `config` feeds: new ones
 * added, changed ones replaced (their status kept), ones no longer configured removed. An
 * operator-added feed with the id of a configured one is replaced by it. Resolves the ids of
 * configured feeds that replaced an operator's, for a warning.
 */
export function syncConfigFeeds(store: Store, environments: Config['environments']): Promise<string[]> {
  const now = new Date().toISOString();
  return transactionRetried(store.root, () => {
    const replaced: string[] = [];
    const wanted = new Map<string, FeedDefinition>();
    for (const [environment, env] of Object.entries(environments)) {
      for (const [feedId, feed] of Object.entries(env.feeds)) wanted.set(`${environment}\u0000${feedId}`, configFeedDefinition(environment, feedId, feed, now));
    }
    for (const { key, value } of store.feeds.getRange()) {
      const def = value as FeedDefinition;
      const name = `${def.environment}\u0000${def.feedId}`;
      if (def.source === 'config' && !wanted.has(name)) {
        store.feeds.remove(key);
        store.feedState.remove(['status', def.environment, def.feedId]);
        store.feedState.remove(['request', def.environment, def.feedId]);
      }
    }
    for (const def of wanted.values()) {
      const existing = store.feeds.get([def.environment, def.feedId]) as FeedDefinition | undefined;
      if (existing?.source === 'api') replaced.push(`${def.environment}/${def.feedId}`);
      if (existing && sameDefinition(existing, def)) continue;
      store.feeds.put([def.environment, def.feedId], existing ? { ...def, createdAt: existing.createdAt } : def);
    }
    return replaced;
  });
}

export function getFeedStatus(store: Store, environment: string, feedId: string): FeedStatus | undefined {
  return store.feedState.get(['status', environment, feedId]) as FeedStatus | undefined;
}

/** Writes a poll's status, unless the feed was removed meanwhile (resolves false then). */
export function writeFeedStatus(store: Store, environment: string, feedId: string, status: FeedStatus): Promise<boolean> {
  return transactionRetried(store.root, () => {
    if (store.feeds.get([environment, feedId]) === undefined) return false;
    store.feedState.put(['status', environment, feedId], status);
    return true;
  });
}

/** Records a request to poll now (unix ms); the poller takes it on its next tick. */
export async function requestPoll(store: Store, environment: string, feedId: string): Promise<number> {
  const at = Date.now();
  await store.feedState.put(['request', environment, feedId], at);
  return at;
}

/** When a poll was last requested (unix ms), if ever. */
export function pollRequestedAt(store: Store, environment: string, feedId: string): number | undefined {
  return store.feedState.get(['request', environment, feedId]) as number | undefined;
}
