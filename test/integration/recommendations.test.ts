// The recommendation API against the real server (SPEC.md "Recommendations", DESIGN.md
// "Recommendation engine"): response shape, catalog changes, real-time consumption, histories
// and exclusions, no item twice per request, content and co-occurrence item-to-item,
// popularity, fallbacks, list_content, filters, information_field, A/B groups, the list cache
// and environment scoping. One server serves one environment per concern (each a copy of the
// shipped `demo` environment, some with one setting changed), so every suite has its own
// catalog and model and the suites run side by side; the tests within a suite run in order.
// Over 500 lines because the suites share that server (and its start-up) and one set of
// request helpers; each describe is self-contained.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { getToken, runCli } from '../helpers/auth.ts';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { assertProblem, type Problem } from '../helpers/problem.ts';
import { view } from '../helpers/events.ts';

interface RecItem {
  item_id: string;
  rank: number;
  information_field?: string;
}
interface RecList {
  list_name: string;
  alias?: string;
  list_key?: string;
  list_size: number;
  limit: number;
  items: RecItem[];
}
interface Recs {
  request_id: string;
  user_group: string;
  device_id: string;
  user_id?: string;
  lists: RecList[];
}
interface ListRequest {
  list_name: string;
  list_size: number;
  limit?: number;
  alias?: string;
  list_content?: Array<{ id: string; item_type?: string; rank?: number }>;
  filters?: Record<string, unknown>;
}
type Body = Record<string, unknown> & { lists: ListRequest[] };
type Fields = Record<string, unknown>;

const DEMO = DEFAULT_CONFIG.environments.demo!;
const LIST_NAMES = Object.keys(DEMO.lists);
/** One environment per suite; the `demo` environment keeps the demo client (and its token) to itself. */
const ENVIRONMENTS: Record<string, unknown> = {
  demo: DEMO,
  shape: DEMO,
  lifecycle: DEMO,
  latest: DEMO,
  realtime: DEMO,
  exclusions: DEMO,
  consumed: DEMO,
  dedupe: DEMO,
  content: DEMO,
  cooc: DEMO,
  popular: DEMO,
  fallback: DEMO,
  listcontent: DEMO,
  cache: DEMO,
  other: DEMO,
  reports: DEMO,
  filters: {
    ...DEMO,
    filterAttributes: ['author'],
    lists: { ...DEMO.lists, videos: { strategy: 'latest', itemTypes: ['video'] }, german: { strategy: 'latest', itemTypes: [], filters: { language: 'de' } } },
  },
  info: { ...DEMO, lists: { ...DEMO.lists, headlines: { strategy: 'latest', itemTypes: [], informationField: 'title' } } },
  control: { ...DEMO, controlGroups: { customer: 1 } },
  nocache: { ...DEMO, listCache: { enabled: false, ttlSec: 1800 } },
};
const TEST_ENVIRONMENTS = Object.keys(ENVIRONMENTS).filter((e) => e !== 'demo');

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const HOUR_MS = 3600_000;
/** Publication time `hours` before a fixed start, so `latest` has a known order. */
const T0 = Date.now() - 1000 * HOUR_MS;
const published = (hours: number) => new Date(T0 - hours * HOUR_MS).toISOString();

let server: TestServer;
/** A token for every test environment (not `demo`). */
let token: string;
/** The demo client's token: valid for `demo` only. */
let demoToken: string;
let configDir: string;

before(async () => {
  configDir = tempDir('affinity-config-');
  const configFile = join(configDir, 'config.json');
  writeFileSync(configFile, JSON.stringify({ environments: ENVIRONMENTS }));
  // Several ranking workers, as on a many-core host: each keeps its own catalog view and signals.
  server = await startServer({ env: { AFFINITY_CONFIG: configFile, AFFINITY_RANK_WORKERS: '3' } });
  const out = await runCli(['client', 'create', ...TEST_ENVIRONMENTS.flatMap((e) => ['--env', e])], {
    AFFINITY_DATA_DIR: server.dataDir,
    AFFINITY_CONFIG: configFile,
  });
  assert.equal(out.code, 0, out.stderr);
  const client = JSON.parse(out.stdout) as { client_id: string; client_secret: string };
  [token, demoToken] = await Promise.all([getToken(server, { clientId: client.client_id, clientSecret: client.client_secret }), getToken(server)]);
});
after(async () => {
  await server?.close();
  rmSync(configDir, { recursive: true, force: true });
});

/** A home-page request for `lists`; `extra` adds or overrides fields. */
const req = (lists: ListRequest[], extra: Fields = {}): Body => ({ page_type: 'home', channel: 'www', device_id: 'device-1', lists, ...extra });
/** Every list of the demo configuration, each of `size`. */
const everyList = (size: number): ListRequest[] => LIST_NAMES.map((list_name) => ({ list_name, list_size: size }));
const idsOf = (list: RecList) => list.items.map((i) => i.item_id);
const allIds = (recs: Recs) => recs.lists.flatMap(idsOf);
const sorted = (ids: Iterable<string>) => [...ids].sort();

/** Asserts what holds for every 200 of a recommendation request (SPEC.md Recommendations, DESIGN.md). */
function assertWellFormed(recs: Recs, body: Body): void {
  assert.match(recs.request_id, UUID_V7, 'request_id is a UUIDv7');
  const ms = parseInt(recs.request_id.replaceAll('-', '').slice(0, 12), 16);
  assert.ok(Math.abs(ms - Date.now()) < 60_000, 'the UUIDv7 carries the time of the request');
  assert.equal(typeof recs.user_group, 'string');
  assert.equal(recs.device_id, body.device_id);
  if (typeof body.user_id === 'string') assert.equal(recs.user_id, body.user_id);
  else assert.equal('user_id' in recs, false, 'no user_id without one in the request');
  assert.equal(recs.lists.length, body.lists.length);
  const seen = new Set<string>();
  recs.lists.forEach((list, i) => {
    const asked = body.lists[i]!;
    assert.equal(list.list_name, asked.list_name);
    assert.equal(list.alias, asked.alias);
    assert.ok(list.list_size <= asked.list_size, `list ${i}: list_size ${list.list_size} within the ${asked.list_size} asked`);
    assert.equal(list.items.length, list.limit, `list ${i}: limit counts the items returned`);
    assert.deepEqual(list.items.map((it) => it.rank), list.items.map((_, k) => k + 1), `list ${i}: ranks from 1, consecutive`);
    for (const item of list.items) {
      assert.equal(typeof item.item_id, 'string');
      const injected = (asked.list_content ?? []).some((c) => c.id === item.item_id);
      if (!injected) assert.ok(!seen.has(item.item_id), `'${item.item_id}' is recommended twice in one request`);
      seen.add(item.item_id);
    }
  });
}

/** The recommendation API of one environment, with the test token. */
class Api {
  /** `auth` gives the token to use (tokens exist only once the server has started). */
  constructor(
    readonly env: string,
    readonly auth: () => string = () => token,
  ) {}

  #headers(auth = this.auth()): Record<string, string> {
    return { Authorization: `Bearer ${auth}`, 'Content-Type': 'application/json' };
  }

  async put(type: string, id: string, fields: Fields = {}): Promise<void> {
    const body = JSON.stringify({ environment: this.env, item_id: id, item_type: type, ...fields });
    const res = await fetch(`${server.url}/api/${this.env}/items/${type}/${id}`, { method: 'PUT', headers: this.#headers(), body });
    assert.equal(res.status, 200, `PUT ${type}/${id}: ${await res.text()}`);
  }

  /** POST enable or disable, or DELETE; expects 200. */
  async change(action: 'enable' | 'disable' | 'delete', type: string, id: string): Promise<void> {
    const path = `${server.url}/api/${this.env}/items/${type}/${id}`;
    const res = action === 'delete' ? await fetch(path, { method: 'DELETE', headers: this.#headers() }) : await fetch(`${path}/${action}`, { method: 'POST', headers: this.#headers() });
    assert.equal(res.status, 200, `${action} ${type}/${id}: ${await res.text()}`);
  }

  async events(events: Fields[]): Promise<void> {
    const res = await fetch(`${server.url}/api/${this.env}/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ events }) });
    assert.equal(res.status, 200, `events: ${await res.text()}`);
  }

  post(body: unknown, auth = this.auth()): Promise<Response> {
    return fetch(`${server.url}/api/${this.env}/recommendations/requests`, { method: 'POST', headers: this.#headers(auth), body: JSON.stringify(body) });
  }

  /** A 200 recommendation response, checked by assertWellFormed. */
  async recommend(body: Body): Promise<Recs> {
    const res = await this.post(body);
    const text = await res.text();
    assert.equal(res.status, 200, `recommendations: ${text.slice(0, 500)}`);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const recs = JSON.parse(text) as Recs;
    assertWellFormed(recs, body);
    return recs;
  }

  /** The ids of one list of `size` for a home page. */
  async list(listName: string, size: number, extra: Fields = {}): Promise<string[]> {
    return idsOf((await this.recommend(req([{ list_name: listName, list_size: size }], extra))).lists[0]!);
  }

  getList(query: string, auth = this.auth()): Promise<Response> {
    return fetch(`${server.url}/api/${this.env}/recommendations/lists?${query}`, { headers: { Authorization: `Bearer ${auth}` } });
  }
}

/** Asks `ask` until `done` holds for its answer (the model builder flushes every 500 ms); returns the last answer. */
async function pollUntil<T>(ask: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await ask();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`${what} within ${timeoutMs} ms; last: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}


/** Articles `ids`, the first the newest (one hour apart). */
async function putArticles(api: Api, ids: string[], fields: Fields = {}): Promise<void> {
  for (const [i, id] of ids.entries()) await api.put('article', id, { title: `Article ${id}`, publication_datetime: published(i), ...fields });
}

// The suites use their own environments, so they run side by side; each suite's tests run in order.
describe('recommendations API', { concurrency: true }, () => {
  describe('response shape', { concurrency: 1 }, () => {
    const api = new Api('shape');
    const CATALOG = ['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9'];
    before(() => putArticles(api, CATALOG));

    test('a request answers a UUIDv7 request_id, the service group, the echoed ids and per list its name, key, size, limit and ranked items', async () => {
      const body = req([{ list_name: 'latest', list_size: 5, limit: 3 }, { list_name: 'popular', list_size: 4 }], { device_id: 'shape-device', user_id: 'shape-user' });
      const recs = await api.recommend(body);
      assert.deepEqual(Object.keys(recs).sort(), ['device_id', 'lists', 'request_id', 'user_group', 'user_id']);
      assert.equal(recs.user_group, 'affinity');
      assert.equal(recs.device_id, 'shape-device');
      assert.equal(recs.user_id, 'shape-user');
      const [latest, popular] = recs.lists as [RecList, RecList];
      assert.deepEqual(Object.keys(latest).sort(), ['items', 'limit', 'list_key', 'list_name', 'list_size']);
      assert.ok(typeof latest.list_key === 'string' && latest.list_key.length >= 16, 'an unguessable list_key');
      assert.deepEqual([latest.list_name, latest.list_size, latest.limit], ['latest', 5, 3]);
      assert.deepEqual(latest.items, [{ item_id: 's0', rank: 1 }, { item_id: 's1', rank: 2 }, { item_id: 's2', rank: 3 }]);
      assert.deepEqual([popular.list_name, popular.list_size, popular.limit, popular.items.length], ['popular', 4, 4, 4]);
      assert.notEqual(popular.list_key, latest.list_key);
      for (const item of popular.items) assert.deepEqual(Object.keys(item).sort(), ['item_id', 'rank']);
    });

    test('every request gets its own request_id', async () => {
      const body = req([{ list_name: 'latest', list_size: 1 }]);
      const ids = await Promise.all([1, 2, 3].map(async () => (await api.recommend(body)).request_id));
      assert.equal(new Set(ids).size, 3);
    });

    test('without a user_id, or with user_id null, the response carries no user_id', async () => {
      await api.recommend(req([{ list_name: 'latest', list_size: 2 }]));
      await api.recommend(req([{ list_name: 'latest', list_size: 2 }], { user_id: null }));
    });

    test('limit is the minimum of the requested limit and the items found; limit 0 returns no items', async () => {
      const [few, none] = (await api.recommend(req([{ list_name: 'latest', list_size: 20, limit: 15 }, { list_name: 'popular', list_size: 5, limit: 0 }]))).lists as [RecList, RecList];
      assert.deepEqual([few.list_size, few.limit], [10, 10], 'the catalog holds 10 items');
      assert.deepEqual([none.list_size, none.limit, none.items], [0, 0, []], 'the first list took every item');
      const [zero] = (await api.recommend(req([{ list_name: 'latest', list_size: 5, limit: 0 }]))).lists as [RecList];
      assert.deepEqual([zero.list_size, zero.limit, zero.items], [5, 0, []]);
    });

    test('one list_name twice with aliases: each list echoes its alias and the second continues after the first', async () => {
      const recs = await api.recommend(req([{ list_name: 'latest', list_size: 2, alias: 'top' }, { list_name: 'latest', list_size: 2, alias: 'more' }]));
      assert.deepEqual(recs.lists.map((l) => [l.alias, idsOf(l)]), [['top', ['s0', 's1']], ['more', ['s2', 's3']]]);
    });
  });

  describe('catalog changes', { concurrency: 1 }, () => {
    const api = new Api('lifecycle');
    /** L1 is the oldest, so it leads `popular` only once the builder has counted its views. */
    const LIVE = ['L6', 'L5', 'L4', 'L3', 'L2', 'L1'];
    const GONE = ['D', 'X', 'E', 'K'];
    const everything = async (extra: Fields = {}) => allIds(await api.recommend(req(everyList(20), extra)));

    before(async () => {
      await putArticles(api, LIVE);
      for (const id of GONE) await api.put('article', id, { title: `Doomed ${id}`, publication_datetime: published(-10) });
      await api.put('article', 'E', { title: 'Expired', publication_datetime: published(-10), end_datetime: new Date(Date.now() - 60_000).toISOString() });
      await api.put('article', 'F', { title: 'Ends tomorrow', publication_datetime: published(20), end_datetime: new Date(Date.now() + 24 * HOUR_MS).toISOString() });
    });

    test('an item PUT is in the latest list of the very next request, and a re-PUT with a newer publication moves it up', async () => {
      await api.put('video', 'N', { title: 'Brand new', publication_datetime: published(-20) });
      assert.deepEqual((await api.list('latest', 1)), ['N']);
      await api.put('article', 'L1', { title: 'Article L1, updated', publication_datetime: published(-30) });
      assert.deepEqual(await api.list('latest', 2), ['L1', 'N']);
      await api.put('article', 'L1', { title: 'Article L1', publication_datetime: published(5) });
      assert.deepEqual(await api.list('latest', 1), ['N']);
    });

    test('disabled, deleted and expired items appear in no list, even the most viewed and co-viewed ones', async () => {
      const events: Fields[] = [];
      for (let u = 0; u < 8; u++) for (const id of GONE) events.push(view(id, `gone-fan-${u}`));
      for (let u = 0; u < 4; u++) events.push(view('L1', `l1-fan-${u}`), view('D', `l1-fan-${u}`));
      await api.events(events);
      await api.change('disable', 'article', 'D');
      await api.change('disable', 'article', 'K');
      await api.change('delete', 'article', 'X');
      // Once the builder has counted the views, L1 leads `popular`: every more viewed item is gone.
      await pollUntil(() => api.list('popular', 1), (ids) => ids[0] === 'L1', 'L1 leads popular');
      const answers = [
        await everything(),
        await everything({ user_id: 'l1-fan-0' }),
        await everything({ user_id: 'gone-fan-0', device_id: 'device-of-gone-fan-0' }),
        await everything({ page_type: 'article_detail', context_item: 'L1', context_item_type: 'article' }),
        await everything({ page_type: 'article_detail', context_item: 'D', context_item_type: 'article' }),
        await everything({ histories: { read: [{ id: 'L1' }, { id: 'D', reconsumable: true }, { id: 'K', reconsumable: true }] } }),
      ];
      for (const ids of answers) {
        for (const id of GONE) assert.ok(!ids.includes(id), `'${id}' recommended: ${ids.join(', ')}`);
        assert.ok(ids.includes('F'), 'an item ending tomorrow is recommended');
      }
      assert.deepEqual(sorted(answers[0]!), sorted(['F', 'N', ...LIVE]), 'every live item, each once');
    });

    test('a re-enabled item is recommended again on the next request, and popular ranks it first (it is the most viewed)', async () => {
      await api.change('enable', 'article', 'K');
      assert.ok((await everything()).includes('K'));
      // Popularity is per ranking worker, reloaded at most once a second: poll, in case this
      // request goes to a worker that has not reloaded since the builder counted the views.
      await pollUntil(() => api.list('popular', 1), (ids) => ids[0] === 'K', 'K leads popular');
    });

    test('a deleted item PUT again is recommended again', async () => {
      await api.put('article', 'X', { title: 'Back', publication_datetime: published(-40) });
      assert.deepEqual(await api.list('latest', 1), ['X']);
    });

    test('an item is recommended until its end_datetime passes, and not after', async () => {
      const endsMs = Date.now() + 1500;
      await api.put('article', 'soon', { title: 'Ends soon', publication_datetime: published(-50), end_datetime: new Date(endsMs).toISOString() });
      assert.deepEqual(await api.list('latest', 1), ['soon']);
      const ids = await pollUntil(() => api.list('latest', 1), (got) => got[0] !== 'soon', 'the expired item leaves latest', 5000);
      assert.ok(Date.now() >= endsMs - 1000, 'not before its end');
      assert.ok(!(await everything()).includes('soon'));
      assert.deepEqual(ids, ['X']);
    });
  });

  describe('latest', { concurrency: 1 }, () => {
    const api = new Api('latest');

    test('latest orders items of every type by publication_datetime, newest first, whatever the offset they were given in', async () => {
      // PUT in an order unrelated to publication; one time with +02:00 (10:00Z) and one in Z.
      await api.put('video', 'v-noon', { publication_datetime: '2024-05-01T12:00:00Z' });
      await api.put('article', 'a-ten', { publication_datetime: '2024-05-01T12:00:00+02:00' });
      await api.put('product', 'p-eleven', { publication_datetime: '2024-05-01T11:00:00Z' });
      await api.put('article', 'a-june', { publication_datetime: '2024-06-01T00:00:00.000Z' });
      await api.put('article', 'a-jan', { publication_datetime: '2024-01-01T00:00:00-05:00' });
      assert.deepEqual(await api.list('latest', 10), ['a-june', 'v-noon', 'p-eleven', 'a-ten', 'a-jan']);
    });

    test('latest with a smaller list_size returns the newest items', async () => {
      assert.deepEqual(await api.list('latest', 2), ['a-june', 'v-noon']);
    });
  });

  describe('real-time consumption', { concurrency: 1 }, () => {
    const api = new Api('realtime');
    const CATALOG = ['R1', 'R2', 'R3', 'R4', 'R5'];
    before(() => putArticles(api, CATALOG));

    test("after a detail_pageview the same user's very next request excludes the item from every list; another user still gets it", async () => {
      await api.events([view('R3', 'rt-user', 'rt-device')]);
      // Same user_id on another device: the exclusion follows the user.
      const mine = allIds(await api.recommend(req(everyList(10), { user_id: 'rt-user', device_id: 'rt-other-device' })));
      assert.deepEqual(sorted(mine), ['R1', 'R2', 'R4', 'R5']);
      const theirs = allIds(await api.recommend(req(everyList(10), { user_id: 'rt-someone-else', device_id: 'rt-device-2' })));
      assert.deepEqual(sorted(theirs), CATALOG);
    });

    test('a device without a user: its detail_pageview excludes the item from its next request, not from other devices', async () => {
      await api.events([view('R1', null, 'rt-anonymous-device')]);
      const mine = allIds(await api.recommend(req(everyList(10), { device_id: 'rt-anonymous-device' })));
      assert.deepEqual(sorted(mine), ['R2', 'R3', 'R4', 'R5']);
      const theirs = allIds(await api.recommend(req(everyList(10), { device_id: 'rt-another-device' })));
      assert.deepEqual(sorted(theirs), CATALOG);
    });

    test('views by no-consent devices exclude nothing from the next no-consent request (they are not one user)', async () => {
      await api.events([view('R2', null, 'no-consent')]);
      const ids = allIds(await api.recommend(req(everyList(10), { device_id: 'no-consent' })));
      assert.deepEqual(sorted(ids), CATALOG);
    });

    test('several views in one batch exclude every viewed item at once', async () => {
      await api.events([view('R2', 'rt-reader'), view('R4', 'rt-reader'), view('R5', 'rt-reader')]);
      const ids = allIds(await api.recommend(req(everyList(10), { user_id: 'rt-reader' })));
      assert.deepEqual(sorted(ids), ['R1', 'R3']);
    });
  });

  describe('histories and exclude', { concurrency: 1 }, () => {
    const api = new Api('exclusions');
    const CATALOG = ['H1', 'H2', 'H3', 'H4', 'H5', 'H6'];
    before(() => putArticles(api, CATALOG));

    test('items of request histories are not recommended unless reconsumable', async () => {
      const histories = {
        read: [{ id: 'H1' }, { id: 'H2', item_type: 'article', reconsumable: true, timestamp: Math.floor(Date.now() / 1000) }],
        bought: [{ id: 'H3', reconsumable: false }],
      };
      const ids = allIds(await api.recommend(req(everyList(10), { user_id: 'hist-user', histories })));
      assert.deepEqual(sorted(ids), ['H2', 'H4', 'H5', 'H6']);
    });

    test('the exclude array removes its items from every list', async () => {
      const ids = allIds(await api.recommend(req(everyList(10), { exclude: ['H4', 'H6'] })));
      assert.deepEqual(sorted(ids), ['H1', 'H2', 'H3', 'H5']);
    });

    test('history and exclude ids unknown to the catalog are ignored, not errors', async () => {
      const ids = allIds(await api.recommend(req(everyList(10), { exclude: ['nope'], histories: { read: [{ id: 'ghost' }] } })));
      assert.deepEqual(sorted(ids), CATALOG);
    });
  });

  describe('every consumed item, beyond the history window', { concurrency: 1 }, () => {
    const api = new Api('consumed');
    const CONSUMED = 1000;
    const ids = Array.from({ length: CONSUMED + 10 }, (_, i) => `K${i}`);
    const unconsumed = sorted(ids.slice(CONSUMED));

    test(`a user who consumed ${CONSUMED} items (twice the stored history) is recommended none of them, in any list`, async () => {
      assert.ok(CONSUMED > DEMO.model.historyLength, 'more consumed items than a history holds');
      for (let start = 0; start < ids.length; start += 100) {
        await Promise.all(ids.slice(start, start + 100).map((id) => api.put('article', id, { title: `Article ${id}` })));
      }
      for (let start = 0; start < CONSUMED; start += 100) {
        await api.events(
          ids.slice(start, Math.min(CONSUMED, start + 100)).map((id) => ({
            event_type: 'detail_pageview', page_type: 'article_detail', channel: 'www', device_id: 'heavy-device', user_id: 'heavy-user', action_item: id, action_item_type: 'article',
          })),
        );
      }
      const ask = () => api.recommend(req([{ list_name: 'recommended_for_you', list_size: 20 }, { list_name: 'popular', list_size: 20 }], { user_id: 'heavy-user', device_id: 'heavy-device' }));
      // Until the builder has written the user's consumed set: the oldest items are the first to come back otherwise.
      const recs = await pollUntil(ask, (r) => allIds(r).every((id) => unconsumed.includes(id)), 'only unconsumed items');
      assert.deepEqual(sorted(allIds(recs)), unconsumed);
      // The same user on another device (no device history): the user's set still applies.
      const other = await api.recommend(req([{ list_name: 'popular', list_size: 20 }], { user_id: 'heavy-user', device_id: 'another-device' }));
      assert.deepEqual(sorted(allIds(other)), unconsumed);
    });
  });

  describe('no item twice in one request', { concurrency: 1 }, () => {
    const api = new Api('dedupe');
    const CATALOG = ['U1', 'U2', 'U3', 'U4', 'U5', 'U6', 'U7'];
    before(() => putArticles(api, CATALOG));

    test('latest then popular over a catalog of 7: the second list takes only what the first left', async () => {
      const [latest, popular] = (await api.recommend(req([{ list_name: 'latest', list_size: 4 }, { list_name: 'popular', list_size: 4 }]))).lists as [RecList, RecList];
      assert.deepEqual(idsOf(latest), ['U1', 'U2', 'U3', 'U4']);
      assert.deepEqual(sorted(idsOf(popular)), ['U5', 'U6', 'U7']);
      assert.deepEqual([popular.list_size, popular.limit], [3, 3]);
    });

    test('all five lists of 3 items over a catalog of 7 share out the catalog, each item once', async () => {
      const recs = await api.recommend(req(everyList(3), { user_id: 'dedupe-user' }));
      assert.deepEqual(recs.lists.map((l) => l.items.length), [3, 3, 1, 0, 0]);
      assert.deepEqual(sorted(allIds(recs)), CATALOG);
    });
  });

  describe('item-to-item by content', { concurrency: 1 }, () => {
    const api = new Api('content');
    before(async () => {
      // Cooking is newer, so recency alone would put it first.
      for (const [i, id] of ['C1', 'C2', 'C3'].entries()) {
        await api.put('article', id, { title: `Cooking pasta recipe ${i}`, categories: [['food', 'cooking']], tags: ['cooking'], publication_datetime: published(i) });
      }
      await api.put('article', 'T1', { title: 'Tennis final report', categories: [['sport', 'tennis']], publication_datetime: published(5) });
      for (const [i, id] of ['F1', 'F2', 'F3'].entries()) {
        await api.put('article', id, { title: `Football match report ${i}`, categories: [['sport', 'football']], tags: ['football'], publication_datetime: published(10 + i) });
      }
      // The same topics told by tags and words alone, without categories.
      for (const [i, id] of ['WC1', 'WC2', 'WC3'].entries()) {
        await api.put('article', id, { title: `Cooking pasta sauce recipe kitchen ${i}`, tags: ['cooking', 'kitchen'], description: 'Pasta sauce recipe from the kitchen', publication_datetime: published(-10 + i) });
      }
      for (const [i, id] of ['WF1', 'WF2', 'WF3'].entries()) {
        await api.put('article', id, { title: `Football match goal league ${i}`, tags: ['football', 'league'], description: 'Football match goal in the league', publication_datetime: published(30 + i) });
      }
    });

    test('more_like_this for an item without events ranks its category first, then items sharing its parent category or tags, never the item itself', async () => {
      const ids = (await api.recommend(req([{ list_name: 'more_like_this', list_size: 6 }], { page_type: 'article_detail', context_item: 'F1', context_item_type: 'article' }))).lists[0]!;
      const got = idsOf(ids);
      assert.equal(got.length, 6, 'a full list');
      assert.deepEqual(sorted(got.slice(0, 2)), ['F2', 'F3'], `football first: ${got.join(', ')}`);
      // T1 shares the parent category sport, WF* the tag and words football: all before cooking.
      assert.deepEqual(sorted(got.slice(2, 6)), ['T1', 'WF1', 'WF2', 'WF3'], `then sport and football: ${got.join(', ')}`);
      assert.ok(!got.includes('F1'));
    });

    test('the context item is recommended in no list, with or without its type', async () => {
      for (const context of [{ context_item: 'C2', context_item_type: 'article' }, { context_item: 'C2' }]) {
        const ids = allIds(await api.recommend(req(everyList(20), { page_type: 'article_detail', ...context })));
        assert.ok(!ids.includes('C2'), `C2 recommended with ${JSON.stringify(context)}`);
        assert.equal(ids.length, 12, 'every other item');
      }
    });

    test('more_like_this for an item without events or categories prefers items sharing its tags and words', async () => {
      const got = idsOf((await api.recommend(req([{ list_name: 'more_like_this', list_size: 4 }], { page_type: 'article_detail', context_item: 'WF1' }))).lists[0]!);
      assert.deepEqual(sorted(got.slice(0, 2)), ['WF2', 'WF3'], `football words first: ${got.join(', ')}`);
    });
  });

  describe('co-occurrence', { concurrency: 1 }, () => {
    const api = new Api('cooc');
    before(async () => {
      // Same category and words everywhere: only the events tell the items apart.
      for (const [i, id] of ['A', 'B', 'C', 'Z', 'N1', 'N2', 'N3'].entries()) {
        await api.put('article', id, { title: `News story ${i}`, categories: [['news']], publication_datetime: published(i) });
      }
      const events: Fields[] = [];
      for (let u = 0; u < 20; u++) events.push(view('A', `ab-${u}`), view('B', `ab-${u}`));
      for (let u = 0; u < 5; u++) events.push(view('A', `ac-${u}`), view('C', `ac-${u}`));
      // Z is the most viewed item, but never with A.
      for (let u = 0; u < 40; u++) events.push(view('Z', `z-${u}`));
      await api.events(events);
    });

    test('many users viewing A then B: more_like_this for A ranks B first, C (co-viewed less) second, above the more popular Z', async () => {
      const body = req([{ list_name: 'more_like_this', list_size: 4 }], { page_type: 'article_detail', context_item: 'A', context_item_type: 'article' });
      const got = await pollUntil(async () => idsOf((await api.recommend(body)).lists[0]!), (ids) => ids[0] === 'B' && ids[1] === 'C' && ids[2] === 'Z', 'B, C, then Z for A');
      assert.equal(got.length, 4);
      assert.ok(!got.includes('A'));
    });

    test('recommended_for_you for a user who just viewed A ranks B first and not A', async () => {
      await pollUntil(() => api.list('popular', 1), (ids) => ids[0] === 'Z', 'the builder has counted the views');
      await api.events([view('A', 'cooc-newcomer')]);
      const got = await api.list('recommended_for_you', 4, { user_id: 'cooc-newcomer', device_id: 'cooc-newcomer-device' });
      assert.deepEqual(got.slice(0, 2), ['B', 'C']);
      assert.ok(!got.includes('A'));
    });

    test('a request history with A personalises like a viewed A', async () => {
      const got = await api.list('recommended_for_you', 2, { histories: { read: [{ id: 'A', item_type: 'article' }] } });
      assert.deepEqual(got, ['B', 'C']);
    });
  });

  describe('popularity', { concurrency: 1 }, () => {
    const api = new Api('popular');
    before(async () => {
      // P is the oldest and S the newest: the `latest` fallback alone would order them S..P.
      await putArticles(api, ['S', 'T', 'R', 'Q', 'P']);
      const events: Fields[] = [];
      for (let u = 0; u < 8; u++) events.push(view('P', `pop-${u}`));
      for (let u = 0; u < 5; u++) events.push(view('Q', `pop-${u}`));
      for (let u = 0; u < 2; u++) events.push(view('R', `pop-${u}`));
      await api.events(events);
    });

    test('popular ranks the most viewed item first, then the next, then falls back to latest', async () => {
      await pollUntil(() => api.list('popular', 5), (ids) => ids.join() === 'P,Q,R,S,T', 'P, Q, R lead popular, then S, T');
    });

    test('trending ranks the items viewed this hour by their views', async () => {
      await pollUntil(() => api.list('trending', 3), (ids) => ids.join() === 'P,Q,R', 'P, Q, R lead trending');
    });
  });

  describe('fallbacks', { concurrency: 1 }, () => {
    const api = new Api('fallback');
    const CATALOG = ['G1', 'G2', 'G3', 'G4', 'G5', 'G6', 'G7', 'G8', 'G9', 'G10', 'G11', 'G12'];
    before(async () => {
      for (const [i, id] of CATALOG.entries()) await api.put(['article', 'video', 'product'][i % 3]!, id, { title: `Item ${id}`, publication_datetime: published(i) });
    });

    test('a new user with no history gets a full list from every strategy when the catalog has enough items', async () => {
      for (const name of LIST_NAMES) {
        const got = await api.list(name, 10, { user_id: `fallback-new-${name}` });
        assert.equal(got.length, 10, `${name}: ${got.join(', ')}`);
      }
    });

    test('a list_size larger than the catalog gives every item once, and list_size and limit say how many', async () => {
      const [list] = (await api.recommend(req([{ list_name: 'recommended_for_you', list_size: 50 }], { user_id: 'fallback-big' }))).lists as [RecList];
      assert.deepEqual([list.list_size, list.limit], [12, 12]);
      assert.deepEqual(sorted(idsOf(list)), sorted(CATALOG));
    });

    test('an unknown context_item is not an error: more_like_this answers a full list from its fallback', async () => {
      const got = await api.list('more_like_this', 6, { page_type: 'article_detail', context_item: 'not-yet-ingested', context_item_type: 'article' });
      assert.equal(got.length, 6);
    });
  });

  describe('list_content', { concurrency: 1 }, () => {
    const api = new Api('listcontent');
    const CATALOG = ['M1', 'M2', 'M3', 'M4', 'M5', 'M6', 'M7', 'M8'];
    before(() => putArticles(api, CATALOG));

    test('an item injected at rank 2 is at rank 2 and nowhere else in the list', async () => {
      const [list] = (await api.recommend(req([{ list_name: 'latest', list_size: 5, list_content: [{ id: 'M1', rank: 2 }] }]))).lists as [RecList];
      assert.deepEqual(idsOf(list), ['M2', 'M1', 'M3', 'M4', 'M5']);
    });

    test('an item injected without rank is placed in the list, once, and the list keeps its size', async () => {
      const [list] = (await api.recommend(req([{ list_name: 'latest', list_size: 3, list_content: [{ id: 'M8', item_type: 'article' }] }]))).lists as [RecList];
      const got = idsOf(list);
      assert.equal(got.length, 3);
      assert.equal(got.filter((id) => id === 'M8').length, 1, `M8 once: ${got.join(', ')}`);
    });

    test('ranked and unranked injections together, with the rank-1 item also the newest', async () => {
      const content = [{ id: 'M7', rank: 4 }, { id: 'M1', rank: 1 }, { id: 'M6' }];
      const [list] = (await api.recommend(req([{ list_name: 'latest', list_size: 5, limit: 5, list_content: content }]))).lists as [RecList];
      const got = idsOf(list);
      assert.equal(got[0], 'M1');
      assert.equal(got[3], 'M7');
      assert.ok(got.includes('M6'));
      assert.equal(new Set(got).size, 5, `no item twice: ${got.join(', ')}`);
    });

    test('an injected item is not recommended again by a later list of the request', async () => {
      const recs = await api.recommend(req([{ list_name: 'popular', list_size: 2, list_content: [{ id: 'M1', rank: 2 }] }, { list_name: 'latest', list_size: 3 }]));
      assert.equal(recs.lists[0]!.items[1]!.item_id, 'M1');
      assert.ok(!idsOf(recs.lists[1]!).includes('M1'), `latest: ${idsOf(recs.lists[1]!).join(', ')}`);
    });

    test('the same item twice in list_content is refused naming the repeat', async () => {
      const res = await api.post(req([{ list_name: 'latest', list_size: 4, list_content: [{ id: 'M8' }, { id: 'M8', rank: 3 }] }]));
      const text = await res.text();
      assert.equal(res.status, 400, text);
      const problem = JSON.parse(text) as Problem;
      assert.ok(problem.errors?.some((e) => e.path === '/lists/0/list_content/1/id'), text);
    });

    test('an injected item ranked beyond the items found closes up so ranks stay consecutive', async () => {
      const [list] = (await api.recommend(req([{ list_name: 'latest', list_size: 20, list_content: [{ id: 'M3', rank: 15 }] }]))).lists as [RecList];
      assert.equal(list.items.length, 8);
      assert.ok(idsOf(list).includes('M3'));
    });
  });

  describe('filters', { concurrency: 1 }, () => {
    const api = new Api('filters');
    before(async () => {
      await api.put('article', 'fb1', { categories: [['sport', 'football']], language: 'en', flags: ['premium'], item_attributes: { author: 'ann' }, publication_datetime: published(1) });
      await api.put('article', 'fb2', { categories: [['sport', 'football', 'bundesliga']], language: 'de', flags: ['free'], publication_datetime: published(2) });
      await api.put('article', 'tn1', { categories: [['sport', 'tennis']], language: 'en', item_attributes: { author: 'bob' }, publication_datetime: published(3) });
      await api.put('video', 'ck1', { categories: [['food', 'cooking']], language: 'de', flags: ['premium', 'hd'], publication_datetime: published(4) });
      await api.put('product', 'ck2', { categories: ['food'], language: 'en', item_attributes: { name: 'meta', value: { author: 'ann' } }, publication_datetime: published(5) });
      await api.put('article', 'nc', { title: 'No labels', publication_datetime: published(6) });
    });

    const cases: Array<[string, Record<string, unknown>, string[]]> = [
      ['a top-level category matches items in its child and grandchild paths', { categories: ['sport'] }, ['fb1', 'fb2', 'tn1']],
      ['a category path matches itself and deeper paths', { categories: [['sport', 'football']] }, ['fb1', 'fb2']],
      ['a path below the top level alone matches nothing', { categories: [['football']] }, []],
      ['several categories match any of them', { categories: ['food', ['sport', 'tennis']] }, ['ck1', 'ck2', 'tn1']],
      ['a category given as a string in the item matches', { categories: [['food']] }, ['ck1', 'ck2']],
      ['flags match items carrying any of them', { flags: ['premium'] }, ['ck1', 'fb1']],
      ['language matches that language only', { language: 'de' }, ['ck1', 'fb2']],
      ['several languages match any of them', { language: ['de', 'en'] }, ['ck1', 'ck2', 'fb1', 'fb2', 'tn1']],
      ['item_type matches that type only', { item_type: 'video' }, ['ck1']],
      ['several item types match any of them', { item_type: ['video', 'product'] }, ['ck1', 'ck2']],
      ['a configured item_attributes key matches both item_attributes shapes', { item_attributes: { author: 'ann' } }, ['ck2', 'fb1']],
      ['fields combine: every field must match', { categories: ['sport'], language: 'en', flags: ['premium'] }, ['fb1']],
    ];
    for (const [name, filters, expected] of cases) {
      test(`filters: ${name}`, async () => {
        for (const listName of ['latest', 'recommended_for_you', 'popular']) {
          const [list] = (await api.recommend(req([{ list_name: listName, list_size: 10, filters }]))).lists as [RecList];
          assert.deepEqual(sorted(idsOf(list)), expected, `${listName} with ${JSON.stringify(filters)}`);
        }
      });
    }

    test('a list configured with item types and one configured with filters return only matching items', async () => {
      assert.deepEqual(await api.list('videos', 10), ['ck1']);
      assert.deepEqual(sorted(await api.list('german', 10)), ['ck1', 'fb2']);
      const [list] = (await api.recommend(req([{ list_name: 'german', list_size: 10, filters: { item_type: 'article' } }]))).lists as [RecList];
      assert.deepEqual(idsOf(list), ['fb2'], 'request filters narrow the configured ones');
    });

    test("one list's filters do not restrict another list of the request", async () => {
      const recs = await api.recommend(req([{ list_name: 'latest', list_size: 10, filters: { item_type: 'video' } }, { list_name: 'popular', list_size: 10 }]));
      assert.deepEqual(idsOf(recs.lists[0]!), ['ck1']);
      assert.deepEqual(sorted(idsOf(recs.lists[1]!)), ['ck2', 'fb1', 'fb2', 'nc', 'tn1']);
    });

    test('an item written again with other categories, flags and language leaves the old filters and matches the new ones', async () => {
      const matching = async (filters: Record<string, unknown>) => sorted(idsOf(((await api.recommend(req([{ list_name: 'latest', list_size: 10, filters }]))).lists as [RecList])[0]));
      await api.put('article', 'mv', { categories: [['food', 'baking']], flags: ['hd'], language: 'fr', publication_datetime: published(7) });
      assert.deepEqual(await matching({ categories: [['food', 'baking']] }), ['mv']);
      await api.put('article', 'mv', { categories: [['sport', 'tennis']], flags: ['free'], language: 'de', publication_datetime: published(7) });
      assert.deepEqual(await matching({ categories: [['food', 'baking']] }), []);
      assert.deepEqual(await matching({ categories: ['food'] }), ['ck1', 'ck2']);
      assert.deepEqual(await matching({ flags: ['hd'] }), ['ck1']);
      assert.deepEqual(await matching({ language: 'fr' }), []);
      assert.deepEqual(await matching({ categories: [['sport', 'tennis']] }), ['mv', 'tn1']);
      assert.deepEqual(await matching({ flags: ['free'], language: 'de' }), ['fb2', 'mv']);
    });
  });

  describe('information_field', { concurrency: 1 }, () => {
    const api = new Api('info');
    before(async () => {
      await api.put('article', 'I1', { title: 'First headline', publication_datetime: published(1) });
      await api.put('article', 'I2', { title: 'Second headline', publication_datetime: published(2) });
      await api.put('article', 'I3', { description: 'No title', publication_datetime: published(3) });
    });

    test('a list configured with informationField "title" gives each item its title; an item without one has none', async () => {
      const recs = await api.recommend(req([{ list_name: 'headlines', list_size: 3 }]));
      assert.deepEqual(recs.lists[0]!.items, [
        { item_id: 'I1', rank: 1, information_field: 'First headline' },
        { item_id: 'I2', rank: 2, information_field: 'Second headline' },
        { item_id: 'I3', rank: 3 },
      ]);
    });

    test('lists without informationField carry no information_field', async () => {
      const recs = await api.recommend(req([{ list_name: 'latest', list_size: 3 }]));
      for (const item of recs.lists[0]!.items) assert.equal('information_field' in item, false);
    });

    test('a slice from the list cache carries information_field too, and an updated title is used by the next request', async () => {
      const recs = await api.recommend(req([{ list_name: 'headlines', list_size: 3, limit: 1 }]));
      const res = await api.getList(`list_key=${recs.lists[0]!.list_key!}&offset=2&limit=1`);
      assert.equal(res.status, 200);
      assert.deepEqual(((await res.json()) as Recs).lists[0]!.items, [{ item_id: 'I2', rank: 2, information_field: 'Second headline' }]);
      await api.put('article', 'I1', { title: 'First headline, corrected', publication_datetime: published(1) });
      const again = await api.recommend(req([{ list_name: 'headlines', list_size: 1 }]));
      assert.deepEqual(again.lists[0]!.items, [{ item_id: 'I1', rank: 1, information_field: 'First headline, corrected' }]);
    });
  });

  describe('reports', { concurrency: 1 }, () => {
    const api = new Api('reports');
    before(() => putArticles(api, ['R1', 'R2', 'R3']));

    test('requests are counted per list_name, user_group and channel of the day in GET /reports, control traffic included', async () => {
      await api.recommend(req([{ list_name: 'latest', list_size: 2 }, { list_name: 'popular', list_size: 1 }]));
      await api.recommend(req([{ list_name: 'latest', list_size: 1 }], { channel: 'app', user_group: 'customer' }));
      await api.recommend(req([{ list_name: 'latest', list_size: 1, alias: 'top' }, { list_name: 'latest', list_size: 1, alias: 'again' }], { channel: 'app' }));
      const expected = [
        ['list_name', 'latest', 4],
        ['list_name', 'popular', 1],
        ['user_group', 'affinity', 2],
        ['user_group', 'customer', 1],
        ['channel', 'www', 1],
        ['channel', 'app', 2],
      ] as const;
      const counted = async () => {
        const res = await fetch(`${server.url}/api/reports/reports`, { headers: { Authorization: `Bearer ${token}` } });
        assert.equal(res.status, 200);
        const body = (await res.json()) as { rows: Array<{ dimension: string; value: string; metrics: Record<string, number> }> };
        return expected.map(([dimension, value]) => body.rows.find((r) => r.dimension === dimension && r.value === value)?.metrics.requests);
      };
      // Counts are written about once a second.
      const deadline = Date.now() + 10_000;
      let got = await counted();
      while (got.some((n, i) => n !== expected[i]![2]) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        got = await counted();
      }
      assert.deepEqual(got, expected.map((e) => e[2]));
    });
  });

  describe('user groups', { concurrency: 1 }, () => {
    const demo = new Api('demo', () => demoToken);
    const control = new Api('control');
    before(async () => {
      await putArticles(demo, ['K1', 'K2', 'K3']);
      await putArticles(control, ['K1', 'K2', 'K3']);
    });

    test('user_group "customer" in the request is echoed and its lists have empty items but their names and a request_id', async () => {
      const lists = [{ list_name: 'latest', list_size: 5 }, { list_name: 'popular', list_size: 3, alias: 'side' }];
      const recs = await demo.recommend(req(lists, { user_group: 'customer', user_id: 'ctl-user' }));
      assert.equal(recs.user_group, 'customer');
      assert.deepEqual(recs.lists.map((l) => [l.list_name, l.items]), [['latest', []], ['popular', []]]);
      assert.equal(recs.lists[1]!.alias, 'side');
      const served = await demo.recommend(req(lists, { user_id: 'ctl-user' }));
      assert.equal(served.user_group, 'affinity');
      assert.deepEqual(sorted(allIds(served)), ['K1', 'K2', 'K3'], 'the same request without user_group is served');
    });

    test('with a control share of 0, users who send no user_group all get the service group', async () => {
      for (let u = 0; u < 10; u++) {
        const recs = await demo.recommend(req([{ list_name: 'latest', list_size: 1 }], { user_id: `share-zero-${u}` }));
        assert.equal(recs.user_group, 'affinity');
      }
    });

    test('with a control share of 1, users and devices who send no user_group are assigned to the control group, with empty items', async () => {
      for (const who of [{ user_id: 'ctl-1' }, { user_id: 'ctl-2', device_id: 'ctl-device-2' }, { device_id: 'ctl-device-3' }]) {
        const recs = await control.recommend(req([{ list_name: 'latest', list_size: 3 }], who));
        assert.equal(recs.user_group, 'customer', JSON.stringify(who));
        assert.deepEqual(recs.lists[0]!.items, []);
      }
    });

    test('a user who sends the service group gets the service group and its recommendations', async () => {
      const recs = await control.recommend(req([{ list_name: 'latest', list_size: 3 }], { user_id: 'ctl-1', user_group: 'affinity' }));
      assert.equal(recs.user_group, 'affinity');
      assert.deepEqual(idsOf(recs.lists[0]!), ['K1', 'K2', 'K3']);
    });

    test('a no-consent device without user_id gets the service group and recommendations even with a control share of 1', async () => {
      const recs = await control.recommend(req([{ list_name: 'latest', list_size: 3 }], { device_id: 'no-consent' }));
      assert.equal(recs.user_group, 'affinity');
      assert.deepEqual(idsOf(recs.lists[0]!), ['K1', 'K2', 'K3']);
    });

    test('a no-consent device with a user_id gets the service group too (DESIGN.md: no-consent devices always do)', async () => {
      const recs = await control.recommend(req([{ list_name: 'latest', list_size: 3 }], { device_id: 'no-consent', user_id: 'logged-in-no-consent' }));
      assert.equal(recs.user_group, 'affinity');
    });
  });

  describe('list cache', { concurrency: 1 }, () => {
    const api = new Api('cache');
    const nocache = new Api('nocache');
    const CATALOG = ['Q1', 'Q2', 'Q3', 'Q4', 'Q5', 'Q6', 'Q7', 'Q8'];
    let full: Recs;
    before(async () => {
      await putArticles(api, CATALOG);
      await putArticles(nocache, CATALOG);
      full = await api.recommend(req([{ list_name: 'latest', list_size: 8, limit: 3 }], { user_id: 'cache-user', device_id: 'cache-device' }));
    });

    test('GET lists with offset 3 and limit 2 returns ranks 3 and 4 of the list, with the request attribution', async () => {
      const list = full.lists[0]!;
      const res = await api.getList(`list_key=${encodeURIComponent(list.list_key!)}&offset=3&limit=2`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const slice = (await res.json()) as Recs;
      assert.deepEqual(
        { request_id: slice.request_id, user_group: slice.user_group, device_id: slice.device_id, user_id: slice.user_id },
        { request_id: full.request_id, user_group: 'affinity', device_id: 'cache-device', user_id: 'cache-user' },
      );
      assert.deepEqual(slice.lists, [{ list_name: 'latest', list_key: list.list_key, list_size: 8, limit: 2, items: [{ item_id: 'Q3', rank: 3 }, { item_id: 'Q4', rank: 4 }] }]);
      assert.deepEqual(idsOf(list), ['Q1', 'Q2', 'Q3'], 'the first request returned the first 3');
    });

    test('a carousel: the items after the first limit come from the cache, up to the list end', async () => {
      const res = await api.getList(`list_key=${encodeURIComponent(full.lists[0]!.list_key!)}&offset=4&limit=100`);
      const slice = (await res.json()) as Recs;
      assert.deepEqual(slice.lists[0]!.items, CATALOG.slice(3).map((item_id, i) => ({ item_id, rank: 4 + i })));
      assert.equal(slice.lists[0]!.limit, 5);
    });

    test('an unknown list_key, and a key of another environment, answer 404 with a problem body', async () => {
      await assertProblem(await api.getList('list_key=never-issued-key&offset=1&limit=2'), 404, 'list-not-found');
      const other = await new Api('shape').getList(`list_key=${encodeURIComponent(full.lists[0]!.list_key!)}&offset=1&limit=2`);
      await assertProblem(other, 404, 'list-not-found');
    });

    const BAD_QUERIES: Array<[string, string]> = [
      ['offset=1&limit=2', 'list_key'],
      ['limit=2', 'offset'],
      ['offset=1', 'limit'],
      ['offset=0&limit=2', 'offset'],
      ['offset=-1&limit=2', 'offset'],
      ['offset=x&limit=2', 'offset'],
      ['offset=1.5&limit=2', 'offset'],
      ['offset=1&limit=0', 'limit'],
      ['offset=1&limit=-1', 'limit'],
      ['offset=1&limit=x', 'limit'],
      ['offset=1&limit=', 'limit'],
    ];
    for (const [query, field] of BAD_QUERIES) {
      test(`GET lists with '${query}' answers 400 naming ${field}`, async () => {
        const key = field === 'list_key' ? '' : `list_key=${encodeURIComponent(full.lists[0]!.list_key!)}&`;
        const problem = await assertProblem(await api.getList(`${key}${query}`), 400, 'invalid-request');
        assert.ok(problem.errors?.some((e) => e.path === field), `an error for ${field}: ${JSON.stringify(problem.errors)}`);
      });
    }

    // Last of this suite: it changes the catalog.
    test('GET lists leaves out items disabled, deleted or expired since the list was computed; the slice fills from the cached tail', async () => {
      const computed = await api.recommend(req([{ list_name: 'latest', list_size: 8, limit: 1 }], { user_id: 'later-user', device_id: 'later-device' }));
      const key = encodeURIComponent(computed.lists[0]!.list_key!);
      const before = (await (await api.getList(`list_key=${key}&offset=1&limit=8`)).json()) as Recs;
      assert.deepEqual(idsOf(before.lists[0]!), CATALOG);
      await api.change('disable', 'article', 'Q2');
      await api.change('delete', 'article', 'Q4');
      await api.put('article', 'Q5', { title: 'Article Q5', publication_datetime: published(4), end_datetime: '2000-01-01T00:00:00Z' });
      const res = await api.getList(`list_key=${key}&offset=2&limit=3`);
      assert.equal(res.status, 200);
      const after = (await res.json()) as Recs;
      assert.deepEqual(after.lists[0], {
        list_name: 'latest',
        list_key: computed.lists[0]!.list_key,
        list_size: 5,
        limit: 3,
        items: [{ item_id: 'Q3', rank: 2 }, { item_id: 'Q6', rank: 3 }, { item_id: 'Q7', rank: 4 }],
      });
    });

    test('with the list cache disabled, responses carry no list_key and GET lists answers 404', async () => {
      const recs = await nocache.recommend(req([{ list_name: 'latest', list_size: 5, limit: 2 }]));
      assert.equal('list_key' in recs.lists[0]!, false);
      assert.deepEqual(idsOf(recs.lists[0]!), ['Q1', 'Q2']);
      await assertProblem(await nocache.getList('list_key=anything&offset=1&limit=2'), 404, 'list-not-found');
    });
  });

  describe('environments', { concurrency: 1 }, () => {
    const api = new Api('other');
    const shape = new Api('shape');

    test("another environment's token answers 401 on both endpoints", async () => {
      await assertProblem(await shape.post(req([{ list_name: 'latest', list_size: 3 }]), demoToken), 401, 'unauthorized');
      await assertProblem(await shape.getList('list_key=x&offset=1&limit=2', demoToken), 401, 'unauthorized');
      await assertProblem(await shape.post(req([{ list_name: 'latest', list_size: 3 }]), 'not-a-token'), 401, 'unauthorized');
    });

    test('only items of the requested environment are recommended', async () => {
      await api.put('article', 'elsewhere', { title: 'Only in other', publication_datetime: published(-1000) });
      assert.deepEqual(await api.list('latest', 5), ['elsewhere']);
      const ids = allIds(await shape.recommend(req(everyList(20))));
      assert.ok(!ids.includes('elsewhere'));
      assert.ok(ids.length > 0);
    });
  });
});

test('no request answered a 5xx', () => {
  // respond.ts logs every 5xx with kind 'internal'.
  assert.deepEqual(server.logs.filter((line) => line.includes('"kind":"internal"')), []);
});
