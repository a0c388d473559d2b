// The model builder (issue 3, "Model builder") against the real service: a child process with
// real LMDB, real HTTP and the real builder worker. Events go in through POST /api/demo/events,
// items through the items API; what the builder wrote is read back from the data directory's
// LMDB (read-only, test/helpers/model-reader.ts) in the layouts of src/store/model-layout.ts, and its
// progress from GET /health. Groups with their own servers run concurrently; tests inside a
// group run in order on one server. Over 500 lines because the builder's outputs share one
// server (and its start-up time) and one set of event helpers; each describe is self-contained.
import assert from 'node:assert/strict';

import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENT_TYPE_CODES as CODES, ITEM_ENABLED, ITEM_IN_CATALOG } from '../../src/store/model-layout.ts';
import { getToken, runCli } from '../helpers/auth.ts';
import { readModel, waitForModel, type ModelReader } from '../helpers/model-reader.ts';
import { type StartOptions, type TestServer, sharedDataDir, startServer } from '../helpers/server.ts';

type Ev = Record<string, unknown>;

/** Who sends an event: a user on their own device, or a device alone. */
interface Who {
  user: string | null;
  device: string;
}
const user = (id: string, device = `device-of-${id}`): Who => ({ user: id, device });
const device = (id: string): Who => ({ user: null, device: id });

const RECOMMENDATION = { page_type: 'home', list_name: 'popular', request_id: 'req-1', user_group: 'affinity' };
/** The other required fields of each event type the tests send (SPEC.md's event table). */
const FIELDS: Record<string, Ev> = {
  detail_pageview: { page_type: 'article_detail' },
  item_interaction: { page_type: 'article_detail', interaction_type: 'like' },
  checkpoint: { page_type: 'video_detail', checkpoint_type: 'half', progress: 0.5 },
  add_to_cart: { page_type: 'product_detail', amount: 1 },
  purchase: { amount: 1, purchased_price: 10 },
  impression: RECOMMENDATION,
  click_on_recommendation: RECOMMENDATION,
  page_visit: { page_type: 'home' },
};

/** One event of `type` by `who` about `item` ([item type, item id]), `extra` overriding fields. */
function ev(type: string, who: Who, item?: [string, string], extra: Ev = {}): Ev {
  return {
    event_type: type,
    device_id: who.device,
    user_id: who.user,
    channel: 'www',
    ...(item ? { action_item_type: item[0], action_item: item[1] } : {}),
    ...FIELDS[type],
    ...extra,
  };
}

/** config/defaults.ts: the demo environment's event weights (other event types weigh 0). */
const WEIGHTS = { detail_pageview: 1, checkpoint: 1, item_interaction: 2, add_to_cart: 3, purchase: 5 } as const;
const weightOf = (eventType: string) => (WEIGHTS as Record<string, number>)[eventType] ?? 0;
const IN_CATALOG_AND_ENABLED = ITEM_IN_CATALOG | ITEM_ENABLED;

interface BuilderHealth {
  events_applied: number;
  lag_ms: { p50: number; p99: number; max: number };
  positions: Record<string, number>;
  skipped: Record<string, number>;
  catalog: { applied_position: number; log_position: number; lag_changes: number };
  environments: Record<string, { reports_position: number | null }>;
}

/** A running server and the number of events it acknowledged (its event sequence, one environment). */
interface Tracked {
  server: TestServer;
  sent: number;
}

/** Acceptance window of a request: the server stamps its events between `from` and `to` (Unix ms). */
interface Sent {
  from: number;
  to: number;
}

/** Posts a batch and expects a 200; `stored` is how many of its events are new to the log. */
async function track(s: Tracked, events: Ev[], stored = events.length): Promise<Sent> {
  const from = Date.now();
  const res = await fetch(`${s.server.url}/api/demo/events`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ events }),
  });
  const body = await res.text();
  const to = Date.now();
  assert.equal(res.status, 200, body);
  s.sent += stored;
  return { from, to };
}

async function builderHealth(server: TestServer): Promise<BuilderHealth | null> {
  const res = await fetch(`${server.url}/health`);
  assert.equal(res.status, 200);
  return ((await res.json()) as { model_builder: BuilderHealth | null }).model_builder;
}

/** Fails on any error the service logged (a worker crash, a failed builder step). */
function assertNoErrorsLogged(server: TestServer): void {
  const errors = server.logs.filter((line) => {
    try {
      return ((JSON.parse(line) as { level?: number }).level ?? 0) >= 50;
    } catch {
      return /error/i.test(line);
    }
  });
  assert.deepEqual(errors, [], 'the service logged errors');
}

/**
 * Polls /health until the builder's demo position reaches `count` events; returns its stats. The
 * allowance is long because the builder runs at niceness 10 (config `builder.niceness`): beside
 * the suite's other servers on a saturated CI machine it waits its turn for seconds (CI saw 6 s).
 */
async function waitApplied(server: TestServer, count: number, timeoutMs = 20_000): Promise<BuilderHealth> {
  const deadline = Date.now() + timeoutMs;
  let last: BuilderHealth | null = null;
  for (;;) {
    last = await builderHealth(server);
    // Both consumers of the log: the model and the report counters (their own thread and position).
    if (last && (last.positions.demo ?? 0) >= count && (last.environments.demo?.reports_position ?? 0) >= count) {
      assertNoErrorsLogged(server);
      return last;
    }
    if (Date.now() > deadline) {
      assert.fail(
        `builder positions (model, reports) did not reach ${count} within ${timeoutMs} ms: ${JSON.stringify(last)}\n${server.logs.slice(-20).join('\n')}`,
      );
    }
    await sleep(50);
  }
}

/** Waits until the server has printed a matching log line (stdout arrives asynchronously). */
async function waitForLog(server: TestServer, match: (line: string) => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!server.logs.some(match)) {
    if (Date.now() > deadline) assert.fail(`no matching log line within ${timeoutMs} ms:\n${server.logs.slice(-20).join('\n')}`);
    await sleep(20);
  }
}

const applied = (s: Tracked) => waitApplied(s.server, s.sent);

/**
 * Starts a server and waits for its builder's first report: the worker compiles its TypeScript
 * on start, which on a loaded machine takes longer than following events, so start-up gets its
 * own, longer allowance and each later wait only covers the builder catching up.
 */
async function startWithBuilder(options: StartOptions = {}): Promise<TestServer> {
  const server = await startServer(options);
  try {
    await waitApplied(server, 0, 30_000);
  } catch (err) {
    await server.close();
    throw err;
  }
  return server;
}

/** Unix seconds / hours the server may have stamped on events sent in `sent`. */
const secondsOf = (sent: Sent) => [Math.floor(sent.from / 1000), Math.floor(sent.to / 1000)] as const;
function hoursOf(...sent: Sent[]): number[] {
  const hours = new Set<number>();
  for (const s of sent) for (let h = Math.floor(s.from / 3_600_000); h <= Math.floor(s.to / 3_600_000); h++) hours.add(h);
  return [...hours];
}
function daysOf(...sent: Sent[]): string[] {
  return [...new Set(sent.flatMap((s) => [s.from, s.to].map((ms) => new Date(ms).toISOString().slice(0, 10))))];
}

function ix(m: ModelReader, itemType: string, itemId: string): number {
  const found = m.itemIndex(itemType, itemId);
  assert.notEqual(found, undefined, `${itemType}/${itemId} has an item index`);
  return found!;
}

/** An item's count in a popularity array (0 beyond its end). */
const countAt = (counts: Float32Array, i: number) => counts[i] ?? 0;

describe('model builder', { concurrency: true }, () => {
  describe('on the demo environment', { concurrency: 1 }, () => {
    const s: Tracked = { server: undefined as unknown as TestServer, sent: 0 };
    before(async () => {
      s.server = await startWithBuilder();
    });
    after(() => s.server?.close());

    it('appends every consumption event to the user history in order with its type code and time, and nothing else', async () => {
      const u = user('hist-user');
      const sent = await track(s, [
        ev('detail_pageview', u, ['article', 'h-1']),
        ev('page_visit', u),
        ev('item_interaction', u, ['video', 'h-2']),
        ev('impression', u, ['article', 'h-9']),
        ev('checkpoint', u, ['video', 'h-2']),
        ev('add_to_cart', u, ['product', 'h-3']),
        ev('purchase', u, ['product', 'h-3']),
        ev('click_on_recommendation', u, ['article', 'h-4']),
      ]);
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        const history = m.history('user', 'hist-user');
        assert.ok(history, 'the user has a history');
        const [earliest, latest] = secondsOf(sent);
        for (const entry of history) assert.ok(entry.t >= earliest && entry.t <= latest, `time ${entry.t} is the acceptance second`);
        assert.deepEqual(
          history.map(({ ix, type }) => ({ ix, type })),
          [
            { ix: ix(m, 'article', 'h-1'), type: CODES.detail_pageview },
            { ix: ix(m, 'video', 'h-2'), type: CODES.item_interaction },
            { ix: ix(m, 'video', 'h-2'), type: CODES.checkpoint },
            { ix: ix(m, 'product', 'h-3'), type: CODES.add_to_cart },
            { ix: ix(m, 'product', 'h-3'), type: CODES.purchase },
            { ix: ix(m, 'article', 'h-4'), type: CODES.click_on_recommendation },
          ],
        );
        assert.equal(m.history('device', 'device-of-hist-user'), undefined, "a user's events do not go to the device history");
        assert.equal(m.itemIndex('article', 'h-9'), undefined, 'an impression gives no item an index');
      });
    });

    it('merges a device history into the user history when the device is seen with a user_id, and sends later device-only events to the user', async () => {
      const anonymous = device('merge-device');
      const known = user('merge-user', 'merge-device');
      await track(s, [ev('detail_pageview', anonymous, ['article', 'm-1'])]);
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        assert.deepEqual(m.history('device', 'merge-device')?.map((e) => e.ix), [ix(m, 'article', 'm-1')]);
        assert.equal(m.history('user', 'merge-user'), undefined);
      });

      await track(s, [ev('detail_pageview', known, ['article', 'm-2'])]);
      await track(s, [ev('detail_pageview', anonymous, ['article', 'm-3'])]);
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        assert.deepEqual(
          m.history('user', 'merge-user')?.map((e) => e.ix),
          [ix(m, 'article', 'm-1'), ix(m, 'article', 'm-2'), ix(m, 'article', 'm-3')],
        );
        assert.equal(m.history('device', 'merge-device'), undefined, 'the device history is gone once merged');
      });
    });

    it("pairs a device's anonymous consumption with its user's once the device is linked, as if both had been the user's", async () => {
      // The user viewed lk-1 on another device; this device, still anonymous, viewed lk-2 and lk-3.
      await track(s, [ev('detail_pageview', user('link-user', 'link-other-device'), ['article', 'lk-1'])]);
      await track(s, [ev('detail_pageview', device('link-device'), ['article', 'lk-2']), ev('add_to_cart', device('link-device'), ['product', 'lk-3'])]);
      await applied(s);
      // A page visit with both ids links the device: no item, yet the histories merge.
      await track(s, [ev('page_visit', user('link-user', 'link-device'))]);
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        const [lk1, lk2, lk3] = [ix(m, 'article', 'lk-1'), ix(m, 'article', 'lk-2'), ix(m, 'product', 'lk-3')];
        assert.deepEqual(m.history('user', 'link-user')?.map((e) => e.ix), [lk1, lk2, lk3]);
        // lk-2 and lk-3 after lk-1, each with its own weight; lk-2 with lk-3 was counted when lk-3 was added.
        assert.deepEqual(m.neighbours(lk1), [
          { ix: lk3, weight: WEIGHTS.add_to_cart },
          { ix: lk2, weight: WEIGHTS.detail_pageview },
        ]);
        assert.deepEqual(m.neighbours(lk2), [{ ix: lk3, weight: WEIGHTS.add_to_cart }, { ix: lk1, weight: WEIGHTS.detail_pageview }]);
      });
    });

    it("keeps no history and no co-occurrence for 'no-consent' devices but counts their consumption as popularity", async () => {
      const anonymous = device('no-consent');
      await track(s, [ev('detail_pageview', anonymous, ['article', 'nc-1']), ev('detail_pageview', anonymous, ['article', 'nc-2'])]);
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        assert.equal(m.history('device', 'no-consent'), undefined);
        assert.deepEqual(m.neighbours(ix(m, 'article', 'nc-1')), []);
        assert.deepEqual(m.neighbours(ix(m, 'article', 'nc-2')), []);
        assert.equal(countAt(m.popularity('all'), ix(m, 'article', 'nc-1')), WEIGHTS.detail_pageview);
      });
    });

    it('makes two items viewed one after the other by two users neighbours of each other with the sum of the view weights', async () => {
      await track(s, [
        ev('detail_pageview', user('co-1'), ['article', 'co-A']),
        ev('detail_pageview', user('co-1'), ['article', 'co-B']),
        ev('detail_pageview', user('co-2'), ['article', 'co-A']),
        ev('detail_pageview', user('co-2'), ['article', 'co-B']),
      ]);
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        const a = ix(m, 'article', 'co-A');
        const b = ix(m, 'article', 'co-B');
        const expected = 2 * WEIGHTS.detail_pageview
        assert.deepEqual(m.neighbours(a), [{ ix: b, weight: expected }]);
        assert.deepEqual(m.neighbours(b), [{ ix: a, weight: expected }]);
      });
    });

    it('weighs a purchase more than a page view in the stored neighbours', async () => {
      const u = user('co-3');
      // X's neighbours arrive weakest first: Z by a page view, then Y by a purchase, then W by an add to cart.
      await track(s, [
        ev('detail_pageview', u, ['product', 'co-X']),
        ev('detail_pageview', u, ['product', 'co-Z']),
        ev('purchase', u, ['product', 'co-Y']),
        ev('add_to_cart', u, ['product', 'co-W']),
      ]);
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        const [x, y, z, w] = ['co-X', 'co-Y', 'co-Z', 'co-W'].map((id) => ix(m, 'product', id)) as [number, number, number, number];
        assert.deepEqual(m.neighbours(x), [
          { ix: y, weight: WEIGHTS.purchase },
          { ix: w, weight: WEIGHTS.add_to_cart },
          { ix: z, weight: WEIGHTS.detail_pageview },
        ]);
        // Y was bought after X and Z (both gain the purchase weight), then W was put in the cart.
        const ofY = m.neighbours(y);
        assert.deepEqual(ofY.slice(0, 2).sort((p, q) => p.ix - q.ix), [
          { ix: Math.min(x, z), weight: WEIGHTS.purchase },
          { ix: Math.max(x, z), weight: WEIGHTS.purchase },
        ]);
        assert.deepEqual(ofY[2], { ix: w, weight: WEIGHTS.add_to_cart });
      });
    });

    it('counts weighted consumption per item index all-time and per hour, and not impressions or clicks', async () => {
      const u = user('pop-user');
      const sent = await track(s, [
        ev('detail_pageview', u, ['article', 'p-1']),
        ev('item_interaction', u, ['article', 'p-1']),
        ev('purchase', u, ['article', 'p-1']),
        ev('checkpoint', u, ['video', 'p-2']),
        ev('add_to_cart', u, ['video', 'p-2']),
        ev('detail_pageview', device('no-consent'), ['video', 'p-2']),
        ev('impression', u, ['video', 'p-2']),
        ev('click_on_recommendation', u, ['video', 'p-2']),
        ev('impression', u, ['article', 'p-3']),
        ev('click_on_recommendation', u, ['article', 'p-3']),
      ]);
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        const p1 = ix(m, 'article', 'p-1');
        const p2 = ix(m, 'video', 'p-2');
        const p3 = ix(m, 'article', 'p-3');
        const expected = new Map([
          [p1, WEIGHTS.detail_pageview + WEIGHTS.item_interaction + WEIGHTS.purchase],
          [p2, WEIGHTS.checkpoint + WEIGHTS.add_to_cart + WEIGHTS.detail_pageview],
          [p3, 0],
        ]);
        const all = m.popularity('all');
        const hourly = hoursOf(sent).map((h) => m.popularity(h));
        for (const [item, count] of expected) {
          assert.equal(countAt(all, item), count, `all-time count of index ${item}`);
          assert.equal(
            hourly.reduce((sum, counts) => sum + countAt(counts, item), 0),
            count,
            `hourly count of index ${item}`,
          );
        }
      });
    });

    it('counts a batch retried with the same event_ids once', async () => {
      const u = user('retry-user');
      const batch = [
        ev('detail_pageview', u, ['article', 'rt-1'], { event_id: 'retry-1' }),
        ev('purchase', u, ['article', 'rt-1'], { event_id: 'retry-2' }),
      ];
      await track(s, batch);
      await track(s, batch, 0);
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        const item = ix(m, 'article', 'rt-1');
        assert.equal(countAt(m.popularity('all'), item), WEIGHTS.detail_pageview + WEIGHTS.purchase);
        assert.deepEqual(m.history('user', 'retry-user')?.map((e) => e.type), [CODES.detail_pageview, CODES.purchase]);
      });
    });

    it('counts impressions and clicks per day and per list_name, user_group and channel, and attributes a purchase of a clicked item to the click', async () => {
      // list_name 'more_like_this' and channel 'app-audio-ios' are used by this test only.
      const shown = { list_name: 'more_like_this', channel: 'app-audio-ios' };
      const buyer = user('rep-buyer');
      const other = user('rep-other');
      const first = await track(s, [
        ev('impression', buyer, ['product', 'r-1'], { ...shown, user_group: 'rep-A' }),
        ev('impression', buyer, ['product', 'r-2'], { ...shown, user_group: 'rep-A' }),
        ev('impression', buyer, ['product', 'r-3'], { ...shown, user_group: 'rep-A' }),
        ev('impression', other, ['product', 'r-1'], { ...shown, user_group: 'rep-B' }),
        ev('click_on_recommendation', buyer, ['product', 'r-1'], { ...shown, user_group: 'rep-A' }),
      ]);
      const second = await track(s, [
        ev('add_to_cart', buyer, ['product', 'r-1'], { amount: 2 }),
        ev('purchase', buyer, ['product', 'r-1'], { amount: 2, purchased_price: 10.25 }),
        // Not attributed: no click on r-2, and the other user never clicked r-1.
        ev('purchase', buyer, ['product', 'r-2'], { amount: 1, purchased_price: 99 }),
        ev('purchase', other, ['product', 'r-1'], { amount: 1, purchased_price: 99 }),
      ]);
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        const counts = (dimension: string, value: string) =>
          Object.fromEntries(
            ['impressions', 'clicks', 'conversions', 'add_to_cart', 'purchase', 'revenue'].map((metric) => [metric, m.report(dimension, value, metric)]),
          );
        const clickedOnly = { impressions: 3, clicks: 1, conversions: 2, add_to_cart: 1, purchase: 1, revenue: 20.5 };
        assert.deepEqual(counts('user_group', 'rep-A'), clickedOnly);
        assert.deepEqual(counts('user_group', 'rep-B'), { impressions: 1, clicks: 0, conversions: 0, add_to_cart: 0, purchase: 0, revenue: 0 });
        assert.deepEqual(counts('list_name', 'more_like_this'), { ...clickedOnly, impressions: 4 });
        assert.deepEqual(counts('channel', 'app-audio-ios'), { ...clickedOnly, impressions: 4 });
        const days = daysOf(first, second);
        const rows = m.reports().filter((r) => r.value === 'rep-A' || r.value === 'rep-B' || r.value === 'more_like_this');
        assert.ok(rows.length > 0);
        for (const row of rows) assert.ok(days.includes(row.day), `counter day ${row.day} is the acceptance day`);
      });
    });

    it('fills the item layouts from the catalog: flags, type position, publication and end times; disable and delete clear their bits', async () => {
      const token = await getToken(s.server);
      const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
      const put = async (itemType: string, itemId: string, extra: Ev = {}) => {
        const res = await fetch(`${s.server.url}/api/demo/items/${itemType}/${itemId}`, {
          method: 'PUT',
          headers,
          body: JSON.stringify({ environment: 'demo', item_id: itemId, item_type: itemType, title: itemId, ...extra }),
        });
        assert.equal(res.status, 200, await res.text());
      };
      const post = async (path: string, method = 'POST') => {
        const res = await fetch(`${s.server.url}/api/demo/items/${path}`, { method, headers: { Authorization: headers.Authorization } });
        assert.equal(res.status, 200, await res.text());
      };
      await put('article', 'l-1', { publication_datetime: '2024-05-01T10:00:00+02:00', end_datetime: '2030-01-01T00:00:00Z' });
      await put('video', 'l-2', { publication_datetime: '2024-06-01T00:00:00Z' });
      const [a, v] = await waitForModel(s.server.dataDir, 'demo', (m) => {
        const ixs = [m.itemIndex('article', 'l-1'), m.itemIndex('video', 'l-2')];
        const flags = m.flags();
        return ixs.every((i) => i !== undefined && flags[i] === IN_CATALOG_AND_ENABLED) ? (ixs as [number, number]) : undefined;
      });
      // Type, publication and end as the ranking workers read them: the item view records.
      await waitForModel(s.server.dataDir, 'demo', (m) => (m.itemView(a) && m.itemView(v) ? true : undefined));
      await readModel(s.server.dataDir, 'demo', (m) => {
        assert.equal(m.itemView(a)!.type, 'article');
        assert.equal(m.itemView(v)!.type, 'video');
        assert.equal(m.itemView(a)!.published, Date.parse('2024-05-01T08:00:00Z') / 1000);
        assert.equal(m.itemView(a)!.ends, Date.parse('2030-01-01T00:00:00Z') / 1000);
        assert.equal(m.itemView(v)!.published, Date.parse('2024-06-01T00:00:00Z') / 1000);
        assert.equal(m.itemView(v)!.ends, 0, 'no end_datetime is 0');
        for (const name of ['type', 'published', 'ends'] as const) assert.equal(m.hasLayoutArray(name), false, `no '${name}' array: nothing reads one`);
      });

      await post('article/l-1/disable');
      await post('video/l-2', 'DELETE');
      await waitForModel(s.server.dataDir, 'demo', (m) => (m.flags()[a] === ITEM_IN_CATALOG && m.flags()[v] === 0 ? true : undefined));

      await post('article/l-1/enable');
      await waitForModel(s.server.dataDir, 'demo', (m) => (m.flags()[a] === IN_CATALOG_AND_ENABLED ? true : undefined));

      // /health: the layout written covers the change feed to its end (stats follow within a second or so).
      const deadline = Date.now() + 20_000;
      let catalog = (await builderHealth(s.server))!.catalog;
      while (catalog.lag_changes > 0 && Date.now() < deadline) {
        await sleep(100);
        catalog = (await builderHealth(s.server))!.catalog;
      }
      assert.ok(catalog.log_position >= 5, `the five changes of this test are in the feed: ${JSON.stringify(catalog)}`);
      assert.deepEqual(catalog, { applied_position: catalog.log_position, log_position: catalog.log_position, lag_changes: 0 });
    });

    it('gives an item seen in an event before it is in the catalog an index that its later PUT keeps', async () => {
      await track(s, [ev('detail_pageview', user('early-user'), ['product', 'l-3'])]);
      await applied(s);
      const early = await readModel(s.server.dataDir, 'demo', (m) => {
        const i = ix(m, 'product', 'l-3');
        assert.equal(m.flags()[i] ?? 0, 0, 'not in the catalog yet');
        assert.equal(countAt(m.popularity('all'), i), WEIGHTS.detail_pageview);
        return i;
      });
      const token = await getToken(s.server);
      const res = await fetch(`${s.server.url}/api/demo/items/product/l-3`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ environment: 'demo', item_id: 'l-3', item_type: 'product', title: 'Late' }),
      });
      assert.equal(res.status, 200, await res.text());
      await waitForModel(s.server.dataDir, 'demo', (m) => (m.flags()[early] === IN_CATALOG_AND_ENABLED ? true : undefined));
      await readModel(s.server.dataDir, 'demo', (m) => {
        assert.equal(m.itemIndex('product', 'l-3'), early);
        assert.equal(m.itemView(early)?.type, 'product');
        assert.equal(countAt(m.popularity('all'), early), WEIGHTS.detail_pageview, 'its popularity stays at its index');
      });
    });

    it("skips an event whose action_item_type is not an item type of the environment and shows the reason in /health", async () => {
      await track(s, [ev('detail_pageview', user('skip-user'), ['category', 'sk-1'])]);
      const health = await applied(s);
      const reason = "action_item_type 'category' is not an item type";
      assert.equal(health.skipped[reason], 1);
      await waitForLog(s.server, (line) => line.includes('model builder skipped events') && line.includes(reason));
      await readModel(s.server.dataDir, 'demo', (m) => {
        assert.equal(m.itemIndex('category', 'sk-1'), undefined);
        assert.equal(m.history('user', 'skip-user'), undefined);
      });
    });

    it('reports every sent event as applied and a lag p99 after a burst', async () => {
      const batches = Array.from({ length: 20 }, (_, b) =>
        Array.from({ length: 50 }, (_, i) => ev('detail_pageview', user(`burst-${i % 7}`), ['article', `burst-${(b * 50 + i) % 31}`])),
      );
      await Promise.all(batches.map((events) => track(s, events)));
      const health = await applied(s);
      assert.equal(health.events_applied, s.sent);
      assert.equal(health.positions.demo, s.sent);
      assert.equal(typeof health.lag_ms.p99, 'number');
      assert.ok(health.lag_ms.p50 <= health.lag_ms.p99 && health.lag_ms.p99 <= health.lag_ms.max, JSON.stringify(health.lag_ms));
    });
  });

  describe('with model settings from a config file', { concurrency: 1 }, () => {
    const s: Tracked = { server: undefined as unknown as TestServer, sent: 0 };
    before(async () => {
      s.server = await startWithBuilder({
        config: {
          environments: {
            demo: {
              itemTypes: ['article', 'product'],
              lists: { shelf: { strategy: 'popular', itemTypes: [] } },
              model: { historyLength: 3, maxNeighbours: 2, attributionWindowSec: 0 },
            },
          },
        },
      });
    });
    after(() => s.server?.close());

    it('keeps only the historyLength most recent items in a history', async () => {
      const u = user('cap-user');
      await track(s, ['c-1', 'c-2', 'c-3', 'c-4', 'c-5'].map((id) => ev('detail_pageview', u, ['article', id])));
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        assert.deepEqual(
          m.history('user', 'cap-user')?.map((e) => e.ix),
          ['c-3', 'c-4', 'c-5'].map((id) => ix(m, 'article', id)),
        );
      });
    });

    it('keeps only the maxNeighbours strongest neighbours of an item once it has more than twice as many', async () => {
      // Five users each view n-1 and then consume another item: n-1 gains five neighbours, one
      // more than twice maxNeighbours (2), and is cut to its strongest two.
      const then: Array<[string, string]> = [['detail_pageview', 'n-2'], ['item_interaction', 'n-3'], ['purchase', 'n-4'], ['add_to_cart', 'n-5'], ['detail_pageview', 'n-6']];
      await track(
        s,
        then.flatMap(([type, id], k) => [ev('detail_pageview', user(`nb-${k}`), ['product', 'n-1']), ev(type, user(`nb-${k}`), ['product', id])]),
      );
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        assert.deepEqual(m.neighbours(ix(m, 'product', 'n-1')), [
          { ix: ix(m, 'product', 'n-4'), weight: WEIGHTS.purchase },
          { ix: ix(m, 'product', 'n-5'), weight: WEIGHTS.add_to_cart },
        ]);
      });
    });

    it('does not attribute a purchase after the click when attributionWindowSec is 0', async () => {
      const u = user('late-buyer');
      await track(s, [ev('click_on_recommendation', u, ['product', 'w-1'], { list_name: 'shelf', user_group: 'late-group' })]);
      await sleep(5);
      await track(s, [ev('purchase', u, ['product', 'w-1'])]);
      await applied(s);
      await readModel(s.server.dataDir, 'demo', (m) => {
        assert.equal(m.report('user_group', 'late-group', 'clicks'), 1);
        assert.equal(m.report('user_group', 'late-group', 'conversions'), 0);
        assert.equal(m.report('list_name', 'shelf', 'purchase'), 0);
        assert.equal(m.report('list_name', 'shelf', 'revenue'), 0);
      });
    });
  });

  describe('across a graceful restart', () => {
    const disk = sharedDataDir();
    after(() => disk.close());
    const dataDir = disk.dataDir;

    it('resumes where it stopped and counts nothing twice', async () => {
      const round = (tag: string) => [
        ...Array.from({ length: 10 }, (_, k) => ev('detail_pageview', user(`${tag}-${k}`), ['article', 'rs-1'])),
        ...Array.from({ length: 5 }, (_, k) => ev('purchase', user(`${tag}-${k}`), ['product', 'rs-2'])),
        ev('impression', user(`${tag}-0`), ['article', 'rs-1'], { user_group: 'rs-group' }),
      ];
      const first: Tracked = { server: disk.track(await startWithBuilder({ dataDir })), sent: 0 };
      const sentBefore = await track(first, round('before'));
      await applied(first);
      assert.equal(await first.server.stop(), 0, 'a graceful stop exits 0');

      const second: Tracked = { server: disk.track(await startWithBuilder({ dataDir })), sent: first.sent };
      const sentAfter = await track(second, [...round('after'), ev('detail_pageview', user('before-0'), ['article', 'rs-3'])]);
      const health = await applied(second);
      assert.equal(health.events_applied, second.sent - first.sent, 'the restarted builder applies only the new events');

      await readModel(dataDir, 'demo', (m) => {
        const [rs1, rs2, rs3] = [ix(m, 'article', 'rs-1'), ix(m, 'product', 'rs-2'), ix(m, 'article', 'rs-3')];
        const expected = new Map([
          [rs1, 2 * 10 * WEIGHTS.detail_pageview],
          [rs2, 2 * 5 * WEIGHTS.purchase],
          [rs3, WEIGHTS.detail_pageview],
        ]);
        const all = m.popularity('all');
        const hourly = hoursOf(sentBefore, sentAfter).map((h) => m.popularity(h));
        for (const [item, count] of expected) {
          assert.equal(countAt(all, item), count, `all-time count of index ${item}`);
          assert.equal(hourly.reduce((sum, counts) => sum + countAt(counts, item), 0), count, `hourly count of index ${item}`);
        }
        // rs-2 was bought after rs-1 in both rounds; rs-3 was viewed after both by before-0.
        assert.deepEqual(m.neighbours(rs2), [
          { ix: rs1, weight: 2 * 5 * WEIGHTS.purchase },
          { ix: rs3, weight: WEIGHTS.detail_pageview },
        ]);
        assert.deepEqual(m.history('user', 'before-0')?.map((e) => e.ix), [rs1, rs2, rs3]);
        assert.equal(m.report('user_group', 'rs-group', 'impressions'), 2);
      });
    });
  });

  describe('across a kill -9 mid-stream', () => {
    const disk = sharedDataDir();
    after(() => disk.close());
    const dataDir = disk.dataDir;

    it('resumes from its last write and its popularity equals the weighted count of the logged events', async (t) => {
      const first = disk.track(await startWithBuilder({ dataDir }));
      const batch = (b: number) =>
        Array.from({ length: 50 }, (_, i) => {
          const who = user(`kill-${(b * 50 + i) % 40}`);
          const item: [string, string] = i % 3 === 0 ? ['product', `k-${i % 11}`] : ['article', `k-${i % 13}`];
          return ev(i % 5 === 0 ? 'purchase' : i % 7 === 0 ? 'impression' : 'detail_pageview', who, item);
        });
      const post = (b: number) =>
        fetch(`${first.url}/api/demo/events`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ events: batch(b) }),
        }).then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        });
      // A first part of the stream is applied and written, so the restart has a position to resume from.
      for (let b = 0; b < 10; b++) assert.equal(await post(b), 200);
      await waitApplied(first, 500);

      let acknowledged = 10;
      let killed = false;
      const inFlight = new Set<Promise<void>>();
      for (let b = 10; b < 60 && !killed; b++) {
        const request: Promise<void> = post(b)
          .then((status) => {
            if (status === 200) acknowledged++;
          })
          .catch(() => undefined)
          .finally(() => inFlight.delete(request));
        inFlight.add(request);
        if (inFlight.size >= 4) await Promise.race(inFlight);
        if (acknowledged >= 20) killed = first.proc.kill('SIGKILL');
      }
      await Promise.all(inFlight);
      await first.exited;
      assert.equal(first.proc.signalCode, 'SIGKILL', 'the server was killed mid-stream');
      const written = await readModel(dataDir, 'demo', (m) => m.eventsPosition());
      assert.ok(written >= 500, `the builder had written position ${written} before the kill`);

      const second = disk.track(await startWithBuilder({ dataDir }));
      const exported = await runCli(['events', 'export', '--env', 'demo'], { AFFINITY_DATA_DIR: dataDir });
      assert.equal(exported.code, 0, exported.stderr);
      const logged = exported.stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Ev);
      assert.ok(logged.length >= acknowledged * 50, `${logged.length} logged events hold the ${acknowledged} acknowledged batches`);
      const health = await waitApplied(second, logged.length);
      t.diagnostic(`${acknowledged} batches acknowledged, ${logged.length} events logged, ${written} written before the kill`);
      assert.equal(health.events_applied, logged.length - written, 'the restarted builder applies exactly the events after its written position');

      const expected = new Map<string, number>();
      for (const e of logged) {
        if (weightOf(e.event_type as string) === 0) continue;
        const key = `${String(e.action_item_type)}/${String(e.action_item)}`;
        expected.set(key, (expected.get(key) ?? 0) + weightOf(e.event_type as string));
      }
      await readModel(dataDir, 'demo', (m) => {
        const all = m.popularity('all');
        let total = 0;
        for (const [key, count] of expected) {
          const [itemType, itemId] = key.split('/') as [string, string];
          assert.equal(countAt(all, ix(m, itemType, itemId)), count, `all-time count of ${key}`);
          total += count;
        }
        assert.equal(all.reduce((sum, n) => sum + n, 0), total, 'the all-time counts add up to the weighted events of the log');
      });
    });
  });
});
