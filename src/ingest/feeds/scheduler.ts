/**
 * @module ingest/feeds/scheduler
 * Decides when each feed is polled: every tick it reads the registry (so feeds added, changed or
 * removed by the API or the CLI, even from another process, take effect within a tick), polls
 * the feeds whose interval has passed since their last poll or that have a poll request newer
 * than it, at most `concurrency` at once and never one feed twice at a time, and records each
 * poll's status. Runs in the ingest worker.
 */
import type { Config } from '../../config/types.ts';
import { emptyFeedStatus, type FeedDefinition } from '../../domain/feed.ts';
import type { Catalog } from '../../store/catalog.ts';
import { getFeedStatus, listFeeds, pollRequestedAt, writeFeedStatus } from '../../store/feeds.ts';
import type { Store } from '../../store/open.ts';
import { parseAllowList } from '../../outbound/allow-list.ts';

/** One empty list for environments without an allowance (parseAllowList caches by array). */
const NO_ENTRIES: readonly string[] = [];
import type { LogFn } from '../log.ts';
import type { FetchPolicy } from './fetch.ts';
import { pollFeed } from './poll.ts';

export interface SchedulerOptions {
  store: Store;
  catalog: Catalog;
  environments: Config['environments'];
  policy: FetchPolicy;
  concurrency: number;
  tickMs: number;
  log: LogFn;
}

const keyOf = (environment: string, feedId: string) => `${environment}\u0000${feedId}`;

/** How long a new feed waits for its first automatic poll (an explicit poll is not delayed). */
const FIRST_POLL_GRACE_MS = 5000;

export class FeedScheduler {
  readonly #o: SchedulerOptions;
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: SchedulerOptions) {
    this.#o = options;
  }

  start(): void {
    const tick = () => {
      try {
        this.#tick();
      } catch (err) {
        this.#o.log('error', { err: String(err) }, 'feed scheduler tick failed');
      }
      if (!this.#abort.signal.aborted) this.#timer = setTimeout(tick, this.#o.tickMs);
    };
    tick();
  }

  #tick(): void {
    // Another thread or process (the API, the CLI) may have committed since this thread's snapshot.
    this.#o.store.root.resetReadTxn();
    const now = Date.now();
    for (const def of listFeeds(this.#o.store)) {
      if (this.#inFlight.size >= this.#o.concurrency) return;
      if (this.#inFlight.has(keyOf(def.environment, def.feedId))) continue;
      if (!Object.hasOwn(this.#o.environments, def.environment)) continue;
      const status = getFeedStatus(this.#o.store, def.environment, def.feedId);
      const lastStart = status?.lastPollAt ? Date.parse(status.lastPollAt) : 0;
      const requested = pollRequestedAt(this.#o.store, def.environment, def.feedId) ?? 0;
      // A feed never polled waits FIRST_POLL_GRACE_MS after its creation: a client that adds a
      // feed and asks for a poll at once gets that poll's outcome, not "unchanged" after ours.
      const due = lastStart === 0 ? (Date.parse(def.updatedAt) || 0) + FIRST_POLL_GRACE_MS : lastStart + def.intervalSec * 1000;
      if (requested > lastStart || now >= due) void this.#poll(def);
    }
  }

  #poll(def: FeedDefinition): Promise<void> {
    const key = keyOf(def.environment, def.feedId);
    const running = this.#inFlight.get(key);
    if (running) return running;
    const o = this.#o;
    const run = (async () => {
      const previous = getFeedStatus(o.store, def.environment, def.feedId) ?? emptyFeedStatus();
      const itemTypes = o.environments[def.environment]?.itemTypes ?? [];
      const status = await pollFeed(def, previous, {
        catalog: o.catalog,
        itemTypes,
        policy: o.policy,
        allow: parseAllowList(this.#o.environments[def.environment]?.outbound.allow ?? NO_ENTRIES),
        signal: this.#abort.signal,
        log: o.log,
      });
      status.nextPollAt = Date.parse(status.lastPollAt!) + def.intervalSec * 1000;
      await writeFeedStatus(o.store, def.environment, def.feedId, status);
      const summary = {
        environment: def.environment,
        feed_id: def.feedId,
        outcome: status.outcome,
        seen: status.entriesSeen,
        applied: status.entriesApplied,
        rejected: status.entriesRejected,
        ms: status.durationMs,
      };
      if (status.outcome === 'error') o.log('warn', { ...summary, error: status.lastError }, 'feed poll failed');
      else o.log('info', summary, 'feed polled');
    })()
      .catch((err: unknown) => o.log('error', { environment: def.environment, feed_id: def.feedId, err: String(err) }, 'feed poll crashed'))
      .finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, run);
    return run;
  }


  /** Polls a feed now, or joins its poll in flight; resolves false when the feed is unknown. */
  async pollNow(environment: string, feedId: string): Promise<boolean> {
    this.#o.store.root.resetReadTxn();
    const def = listFeeds(this.#o.store, environment).find((d) => d.feedId === feedId);
    if (!def || this.#abort.signal.aborted) return false;
    await this.#poll(def);
    return true;
  }

  /** Stops scheduling, cancels fetches in flight and waits for their polls to record it. */
  async close(): Promise<void> {
    this.#abort.abort();
    clearTimeout(this.#timer);
    await Promise.all(this.#inFlight.values());
  }
}
