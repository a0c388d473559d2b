/**
 * @module eval/over-http
 * One evaluation run as a new user would do it: the built service (`node dist/main.js`) started
 * with no configuration file on a fresh data directory (the `demo` environment and its demo
 * client, whose secret it logs once), the catalog PUT through the items API as `article`s, the
 * training interactions POSTed in time order through the events API as `detail_pageview`s
 * (no timestamps, no ratings: the API carries neither), `POST /model/rebuild`, then one
 * `recommended_for_you` request of size k per test user, with no request history and no
 * `exclude`. What it measures is what the service serves, consumed-item exclusion included.
 * Offline tooling: it spawns the service and talks HTTP; nothing here runs inside it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dataset } from './datasets.ts';
import { type RankingMetrics, rankingMetrics } from './metrics.ts';
import type { Split } from './split.ts';

const ENVIRONMENT = 'demo';
const ITEM_TYPE = 'article';
const EVENTS_PER_BATCH = 100;
/** Requests in flight at once for items and recommendations (events go in order, one batch at a time). */
const IN_FLIGHT = 16;
const ROOT = join(import.meta.dirname, '..', '..');

export interface OverHttpResult {
  metrics: RankingMetrics;
  predictions: Map<string, string[]>;
  ms: { start: number; load: number; modelBuilder: number; training: number; recommend: number };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
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
  const dataDir = mkdtempSync(join(tmpdir(), 'affinity-eval-http-'));
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'main.js')], {
    cwd: ROOT,
    env: { ...process.env, AFFINITY_HOST: '127.0.0.1', AFFINITY_PORT: String(port), AFFINITY_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    const t0 = performance.now();
    const credentials = await new Promise<{ client_id: string; client_secret: string }>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the service exited (${code}) before logging its demo client; was \`npm run build\` run?`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        try {
          const entry = JSON.parse(line) as { client_id?: string; client_secret?: string };
          if (entry.client_id && entry.client_secret) resolve({ client_id: entry.client_id, client_secret: entry.client_secret });
        } catch {
          // not a log line
        }
      });
    });
    for (;;) {
      const ready = await fetch(`${base}/ready`).then((r) => r.status, () => 0);
      if (ready === 200) break;
      await sleep(100);
    }
    const basic = Buffer.from(`${credentials.client_id}:${credentials.client_secret}`).toString('base64');
    const { access_token: token } = (await call(`${base}/api/oauth/token`, {
      method: 'POST',
      headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    })) as { access_token: string };
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
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
