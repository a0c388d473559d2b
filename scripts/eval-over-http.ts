/**
 * @module scripts/eval-over-http
 * One evaluation run as a new user would do it: the built service (`bin/affinity-serve`, as `npm start`) started
 * with no configuration file on a fresh data directory (the `demo` environment and its demo
 * client, whose secret it logs once), the catalog PUT through the items API as `article`s, the
 * training interactions POSTed in time order through the events API as `detail_pageview`s
 * (no timestamps, no ratings: the API carries neither), `POST /model/rebuild`, then one
 * `recommended_for_you` request of size k per test user, with no request history and no
 * `exclude`. What it measures is what the service serves, consumed-item exclusion included.
 * Offline tooling: it starts the service as the tests do (test/helpers/server.ts: a free port, a
 * fresh data directory, the demo client from its log) and talks HTTP; nothing here runs inside it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dataset } from '../src/eval/datasets.ts';
import { type RankingMetrics, rankingMetrics } from '../src/eval/metrics.ts';
import type { Split } from '../src/eval/split.ts';
import { getToken } from '../test/helpers/auth.ts';
import { startServer } from '../test/helpers/server.ts';

const ENVIRONMENT = 'demo';
const ITEM_TYPE = 'article';
const EVENTS_PER_BATCH = 100;
/** Requests in flight at once for items and recommendations (events go in order, one batch at a time). */
const IN_FLIGHT = 16;
export interface OverHttpResult {
  metrics: RankingMetrics;
  predictions: Map<string, string[]>;
  ms: { start: number; load: number; modelBuilder: number; training: number; recommend: number };
}

/** Runs `work` over `items` with at most `limit` calls pending. */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(runners);
}

async function call(url: string, init: RequestInit & { expect?: number } = {}): Promise<unknown> {
  const res = await fetch(url, init);
  const body = await res.text();
  if (res.status !== (init.expect ?? 200)) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${body.slice(0, 300)}`);
  return body ? JSON.parse(body) : undefined;
}

/** Evaluates one split over HTTP against a freshly started service. */
export async function evaluateOverHttp(dataset: Dataset, split: Split, k: number): Promise<OverHttpResult> {
  const t0 = performance.now();
  const server = await startServer();
  const base = server.url;
  try {
    for (;;) {
      const ready = await fetch(`${base}/ready`).then((r) => r.status, () => 0);
      if (ready === 200) break;
      await sleep(100);
    }
    const token = await getToken(server);
    const json = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const t1 = performance.now();

    await inParallel(dataset.items, IN_FLIGHT, async (it) => {
      const body = {
        environment: ENVIRONMENT,
        item_type: ITEM_TYPE,
        item_id: it.id,
        ...(it.title ? { title: it.title } : {}),
        ...(it.categories && it.categories.length > 0 ? { categories: it.categories } : {}),
        ...(it.published ? { publication_datetime: it.published } : {}),
      };
      await call(`${base}/api/${ENVIRONMENT}/items/${ITEM_TYPE}/${encodeURIComponent(it.id)}`, { method: 'PUT', headers: json, body: JSON.stringify(body) });
    });
    // Oldest first, as a site would have sent them; ties keep the file's order.
    const train = split.train.map((r, i) => [r, i] as const).sort((a, b) => a[0].t - b[0].t || a[1] - b[1]);
    for (let start = 0; start < train.length; start += EVENTS_PER_BATCH) {
      const events = train.slice(start, start + EVENTS_PER_BATCH).map(([r]) => ({
        event_type: 'detail_pageview',
        page_type: 'article_detail',
        channel: 'www-desktop',
        user_id: r.user,
        device_id: `d-${r.user}`,
        action_item: r.item,
        action_item_type: ITEM_TYPE,
      }));
      await call(`${base}/api/${ENVIRONMENT}/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ events }) });
    }
    const t2 = performance.now();
    for (;;) {
      const health = (await call(`${base}/health`)) as { model_builder: { events_applied: number } | null };
      if ((health.model_builder?.events_applied ?? 0) >= train.length) break;
      await sleep(100);
    }
    const t3 = performance.now();
    await call(`${base}/api/${ENVIRONMENT}/model/rebuild`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
    const t4 = performance.now();

    const trained = new Set(split.train.map((r) => r.user));
    const relevant = new Map<string, Set<string>>();
    for (const r of split.test) {
      if (!trained.has(r.user)) continue; // no training history: no prediction (the protocol's common users)
      const items = relevant.get(r.user);
      if (items) items.add(r.item);
      else relevant.set(r.user, new Set([r.item]));
    }
    const predictions = new Map<string, string[]>();
    await inParallel([...relevant.keys()], IN_FLIGHT, async (user) => {
      const answer = (await call(`${base}/api/${ENVIRONMENT}/recommendations/requests`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({
          page_type: 'home',
          channel: 'www-desktop',
          user_id: user,
          device_id: `d-${user}`,
          lists: [{ list_name: 'recommended_for_you', list_size: k }],
        }),
      })) as { lists: Array<{ items: Array<{ item_id: string }> }> };
      predictions.set(user, answer.lists[0]!.items.map((item) => item.item_id));
    });
    const t5 = performance.now();
    return {
      metrics: rankingMetrics(relevant, predictions, k),
      predictions,
      ms: { start: t1 - t0, load: t2 - t1, modelBuilder: t3 - t2, training: t4 - t3, recommend: t5 - t4 },
    };
  } finally {
    await server.close();
  }
}
