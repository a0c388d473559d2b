// The events API against the real server: every event type of SPEC.md's table accepted with its
// required and optional fields and visible afterwards (recent-events endpoint, `events export`),
// idempotent retries by `event_id`, every bad input answered with a problem body and nothing
// stored, and DESIGN.md's first invariant: a 200 survives `kill -9`.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { getToken, runCli } from '../helpers/auth.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';
import { assertProblem, type FieldErrorEntry, type Problem } from '../helpers/problem.ts';

type Event = Record<string, unknown>;


/** SPEC.md "Events": every event type with exactly its required fields, valid values. */
const REQUIRED: Record<string, Event> = (() => {
  const visit = { page_type: 'home', device_id: 'dev-1', user_id: 'user-1', channel: 'www-desktop' };
  const action = { action_item: 'a-1', action_item_type: 'article' };
  const recommendation = { ...visit, page_type: 'article_detail', ...action, list_name: 'recommended_for_you', request_id: 'req-1', user_group: 'affinity' };
  const batch = { ...visit, page_type: 'email', ...action, list_name: 'popular', request_id: 'req-2', campaign_id: 'camp-1' };
  const session = { page_type: 'home', session_id: 'sess-1', ...action, list_name: 'trending', request_id: 'req-3', channel: 'mobile-app' };
  const cart = { device_id: 'dev-1', ...action, action_item_type: 'product', amount: 1, channel: 'www-mobile' };
  return {
    detail_pageview: { ...visit, page_type: 'article_detail', ...action },
    page_visit: visit,
    item_interaction: { ...visit, ...action, interaction_type: 'like' },
    user_interaction: { ...visit, interaction_type: 'paywall' },
    impression: recommendation,
    click_on_recommendation: recommendation,
    start_subscription: visit,
    cancel_subscription: visit,
    checkpoint: { ...visit, page_type: 'video_detail', action_item: 'v-1', action_item_type: 'video', checkpoint_type: 'Progress' },
    add_to_cart: { ...visit, page_type: 'product_detail', ...cart },
    remove_from_cart: cart,
    purchase: { ...cart, amount: 2, purchased_price: 9.99 },
    batch_open: { ...visit, page_type: 'email', campaign_id: 'camp-1' },
    batch_impression: batch,
    batch_click_on_recommendation: batch,
    session_impression: session,
    session_click_on_recommendation: session,
  };
})();

/** SPEC.md "Events": the optional fields of the types that have some. */
const OPTIONAL: Record<string, Event> = {
  start_subscription: { subscription_type: 'premium', context_item: 'a-1', context_item_type: 'article' },
  cancel_subscription: { subscription_type: 'premium' },
  checkpoint: { progress: 0.5 },
  add_to_cart: { basket_content: [{ id: 'p-1', quantity: 2 }, { id: 'a-1' }] },
  remove_from_cart: { user_id: 'user-1', basket_content: [{ id: 'p-1' }] },
  purchase: { user_id: 'user-1', original_price: 12.5 },
};

const TYPES = Object.keys(REQUIRED);
const REQUIRES_USER_ID = TYPES.filter((type) => 'user_id' in REQUIRED[type]!);

/** A valid event of `type`; `extra` adds or overrides fields. */
const event = (type: string, extra: Event = {}): Event => ({ event_type: type, ...REQUIRED[type], ...extra });
const without = (e: Event, field: string): Event => Object.fromEntries(Object.entries(e).filter(([k]) => k !== field));

function post(server: TestServer, body: unknown, options: { environment?: string; headers?: Record<string, string> } = {}) {
  return fetch(`${server.url}/api/${options.environment ?? 'demo'}/events`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...options.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Asserts 200 with an empty body. */
async function assertAccepted(res: Response): Promise<void> {
  const text = await res.text();
  assert.equal(res.status, 200, `status (body: ${text.slice(0, 500)})`);
  assert.equal(text, '');
}


/**
 * Asserts a 400 for per-event failures: the `Events contain errors: ` title and exactly one
 * error entry per failing event, `[index, field, message pattern]`, in index order.
 */
async function assertEventErrors(res: Response, expected: Array<[index: number, field: string, message: RegExp]>): Promise<Problem> {
  const body = await assertProblem(res, 400, 'invalid-events');
  assert.ok(body.title.startsWith('Events contain errors: '), `title: ${body.title}`);
  const errors = body.errors ?? [];
  assert.equal(errors.length, expected.length, `one entry per failing event: ${JSON.stringify(errors).slice(0, 1000)}`);
  expected.forEach(([index, field, message], k) => {
    const entry = errors[k]!;
    assert.deepEqual(Object.keys(entry).sort(), ['index', 'message', 'path']);
    assert.equal(entry.index, index);
    assert.equal(entry.path, field ? `/events/${index}/${field}` : `/events/${index}`);
    assert.match(entry.message, message);
  });
  return body;
}

/** Asserts a 400 `invalid-request` naming `path` in its errors. */
async function assertInvalidRequest(res: Response, path: string, message: RegExp): Promise<Problem> {
  const body = await assertProblem(res, 400, 'invalid-request');
  const errors = body.errors ?? [];
  assert.ok(
    errors.some((e) => e.path === path && message.test(e.message)),
    `an error for '${path}' matching ${message} in ${JSON.stringify(errors)}`,
  );
  return body;
}

/** Runs `send` and asserts with `check` that it was refused and that the store is unchanged. */
async function assertRefusedAndNothingStored(
  server: TestServer,
  send: () => Promise<Response>,
  check: (res: Response) => Promise<unknown>,
): Promise<void> {
  const stored = await snapshotStore(server.dataDir);
  await check(await send());
  assertSameStore(await snapshotStore(server.dataDir), stored, 'the store is unchanged');
}

/** `affinity events export` on the server's data directory, parsed. */
async function exportEvents(server: TestServer, ...args: string[]): Promise<Event[]> {
  const out = await runCli(['events', 'export', '--env', 'demo', ...args], { AFFINITY_DATA_DIR: server.dataDir });
  assert.equal(out.code, 0, `export exits 0 (stderr: ${out.stderr})`);
  if (out.stdout === '') return [];
  assert.ok(out.stdout.endsWith('\n'), 'NDJSON ends with a newline');
  return out.stdout
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as Event);
}

const withoutAcceptedAt = ({ accepted_at: _, ...rest }: Event): Event => rest;

function assertAcceptedAt(e: Event): number {
  assert.equal(typeof e.accepted_at, 'string');
  const ms = Date.parse(e.accepted_at as string);
  assert.ok(!Number.isNaN(ms), `accepted_at '${String(e.accepted_at)}' is a time`);
  assert.equal(new Date(ms).toISOString(), e.accepted_at, 'accepted_at is ISO 8601 UTC');
  return ms;
}

/** Servers are started together (a start takes about a second) and shared within each suite. */
const CONFIGURED = {
  environments: {
    demo: { itemTypes: ['article'], channels: ['kiosk'], pageTypes: ['search'], lists: { top: { strategy: 'popular', itemTypes: [] } } },
  },
};
let valid: TestServer;
let pristine: TestServer;
let configured: TestServer;
let doomed: TestServer;

before(async () => {
  const started = await Promise.allSettled([
    startServer(),
    startServer(),
    startServer({ config: CONFIGURED, env: { AFFINITY_MAX_BODY_BYTES: '4096' } }),
    startServer(),
  ]);
  const servers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  if (servers.length < started.length) {
    await Promise.all(servers.map((s) => s.close()));
    throw (started.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason;
  }
  [valid, pristine, configured, doomed] = servers as [TestServer, TestServer, TestServer, TestServer];
});
after(() => Promise.all([valid, pristine, configured, doomed].map((s) => s?.close())));

// The four suites use their own servers and do not interfere, so they run side by side; the
// tests within a suite run in order.
describe('events API', { concurrency: true }, () => {
  describe('valid events', { concurrency: 1 }, () => {
    let server: TestServer;
    /** Every event this server answered 200 for, in sending order (none carries a repeated event_id). */
    const sent: Event[] = [];
    const startedAt = Date.now();
    /** The last full export, reused by later tests. */
    let exportedAll: Event[] = [];

    before(() => {
      server = valid;
    });

    async function accept(events: Event[], headers?: Record<string, string>): Promise<void> {
      await assertAccepted(await post(server, { events }, { headers }));
      sent.push(...events);
    }

    test('the table covers the 17 event types of SPEC.md', () => {
      assert.equal(TYPES.length, 17);
    });

    test('every event type with only its required fields is accepted with 200 and no body', async () => {
      for (const type of TYPES) await accept([event(type)]);
    });

    test('every event type with its optional fields too is accepted with 200 and no body', async () => {
      for (const type of TYPES) await accept([event(type, { event_id: `opt-${type}`, ...OPTIONAL[type] })]);
    });

    test('a batch mixing all 17 event types is accepted with 200', async () => {
      await accept(TYPES.map((type) => event(type, { event_id: `mix-${type}` })));
    });

    test('user_id null (anonymous user) is accepted by every type that requires user_id and by those where it is optional', async () => {
      assert.equal(REQUIRES_USER_ID.length, 13);
      await accept([...REQUIRES_USER_ID, 'remove_from_cart', 'purchase'].map((type) => event(type, { user_id: null, device_id: 'no-consent' })));
    });

    test('an Authorization header, valid or garbage, is ignored by event tracking', async () => {
      const token = await getToken(server);
      await accept([event('page_visit', { device_id: 'auth-bearer' })], { Authorization: `Bearer ${token}` });
      await accept([event('page_visit', { device_id: 'auth-garbage' })], { Authorization: 'Bearer not.a.token' });
      await accept([event('page_visit', { device_id: 'auth-basic' })], { Authorization: 'Basic Zm9vOmJhcg==' });
      await accept([event('page_visit', { device_id: 'auth-junk' })], { Authorization: 'junk !@# {}' });
    });

    test('GET recent events shows the last N accepted events newest first, each with accepted_at', async () => {
      const batch = TYPES.slice(0, 5).map((type, i) => event(type, { device_id: `recent-${i}` }));
      await accept(batch);
      const token = await getToken(server);
      const res = await fetch(`${server.url}/api/demo/events?limit=7`, { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const { events } = (await res.json()) as { events: Event[] };
      assert.equal(events.length, 7);
      assert.deepEqual(events.map(withoutAcceptedAt), sent.slice(-7).reverse());
      const times = events.map(assertAcceptedAt);
      for (let i = 1; i < times.length; i++) assert.ok(times[i - 1]! >= times[i]!, 'newest first');
      assert.ok(times.every((t) => t >= startedAt - 1000 && t <= Date.now() + 1000), 'accepted_at is the acceptance time');
    });

    test('events export prints every accepted event as one NDJSON line, oldest first, with accepted_at', async () => {
      const exported = await exportEvents(server);
      exportedAll = exported;
      assert.equal(exported.length, sent.length);
      assert.deepEqual(exported.map(withoutAcceptedAt), sent);
      const times = exported.map(assertAcceptedAt);
      for (let i = 1; i < times.length; i++) assert.ok(times[i - 1]! <= times[i]!, 'oldest first');
    });

    test('events export --since keeps events accepted at or after that time and a future --since prints nothing', async () => {
      const all = exportedAll;
      assert.ok(all.length > 0, 'the previous test exported the log');
      const since = all[Math.floor(all.length / 2)]!.accepted_at as string;
      const [later, future] = await Promise.all([
        exportEvents(server, '--since', since),
        exportEvents(server, '--since', new Date(Date.now() + 3600_000).toISOString()),
      ]);
      assert.deepEqual(later, all.filter((e) => Date.parse(e.accepted_at as string) >= Date.parse(since)));
      assert.ok(later.length > 0 && later.length <= all.length, `${later.length} of ${all.length} events since ${since}`);
      assert.deepEqual(future, []);
    });

    test('events export with a --since that is not an ISO 8601 time exits non-zero and prints no events', async () => {
      const sinces = ['yesterday', '2024-01-01T00:00:00'];
      const outs = await Promise.all(
        sinces.map((since) => runCli(['events', 'export', '--env', 'demo', '--since', since], { AFFINITY_DATA_DIR: server.dataDir })),
      );
      outs.forEach((out, i) => {
        assert.notEqual(out.code, 0, `--since ${sinces[i]}`);
        assert.equal(out.stdout, '');
        assert.match(out.stderr, /--since/);
      });
    });

    test('events export for an environment that is not configured exits non-zero and prints nothing', async () => {
      const out = await runCli(['events', 'export', '--env', 'nope'], { AFFINITY_DATA_DIR: server.dataDir });
      assert.notEqual(out.code, 0);
      assert.equal(out.stdout, '');
      assert.match(out.stderr, /nope/);
    });

    describe('idempotency by event_id', () => {
      /** Exported events whose event_id starts with `prefix`. */
      async function exportedWith(prefix: string): Promise<Event[]> {
        return (await exportEvents(server)).filter((e) => typeof e.event_id === 'string' && e.event_id.startsWith(prefix));
      }

      /** The 50 most recent events (GET recent, quicker than an export), oldest first. */
      async function recent(): Promise<Event[]> {
        const token = await getToken(server);
        const res = await fetch(`${server.url}/api/demo/events?limit=50`, { headers: { Authorization: `Bearer ${token}` } });
        assert.equal(res.status, 200);
        return ((await res.json()) as { events: Event[] }).events.reverse();
      }
      const recentWith = async (prefix: string) =>
        (await recent()).filter((e) => typeof e.event_id === 'string' && e.event_id.startsWith(prefix));

      test('the same batch with event_ids sent twice is stored once', async () => {
        const batch = TYPES.slice(0, 4).map((type, i) => event(type, { event_id: `twice-${i}` }));
        await assertAccepted(await post(server, { events: batch }));
        await assertAccepted(await post(server, { events: batch }));
        assert.deepEqual((await exportedWith('twice-')).map(withoutAcceptedAt), batch);
      });

      test('a retried batch that overlaps an earlier one stores only its new events', async () => {
        const first = [event('page_visit', { event_id: 'overlap-1' }), event('page_visit', { event_id: 'overlap-2' })];
        const retry = [first[1]!, event('page_visit', { event_id: 'overlap-3' })];
        await assertAccepted(await post(server, { events: first }));
        await assertAccepted(await post(server, { events: retry }));
        assert.deepEqual((await recentWith('overlap-')).map((e) => e.event_id), ['overlap-1', 'overlap-2', 'overlap-3']);
      });

      test('duplicates of an event_id within one batch are stored once', async () => {
        const e = event('purchase', { event_id: 'inbatch-1' });
        await assertAccepted(await post(server, { events: [e, event('page_visit', { event_id: 'inbatch-2' }), e, e] }));
        assert.deepEqual((await recentWith('inbatch-')).map((x) => x.event_id), ['inbatch-1', 'inbatch-2']);
      });

      test('events without event_id are stored every time they are sent', async () => {
        const e = event('detail_pageview', { device_id: 'no-id-device' });
        await assertAccepted(await post(server, { events: [e, e] }));
        await assertAccepted(await post(server, { events: [e] }));
        const stored = (await recent()).filter((x) => x.device_id === 'no-id-device');
        assert.equal(stored.length, 3);
      });
    });
  });

  describe('bad input', { concurrency: 1 }, () => {
    // This server never accepts an event, so its store changes only if a refused request wrote.
    let server: TestServer;

    before(() => {
      server = pristine;
    });

    const refused = (body: unknown, check: (res: Response) => Promise<unknown>, options?: Parameters<typeof post>[2]) =>
      assertRefusedAndNothingStored(server, () => post(server, body, options), check);

    for (const type of TYPES) {
      const fields = Object.keys(REQUIRED[type]!);
      test(`${type} missing any one of its required fields (${fields.join(', ')}) answers 400 with one error per event and stores nothing`, async () => {
        // A valid event first: it gets no entry, and the failing events' indices start at 1.
        const events = [event(type), ...fields.map((f) => without(event(type), f))];
        await refused({ events }, (res) =>
          assertEventErrors(
            res,
            fields.map((f, i) => [i + 1, f, new RegExp(`^${f} is required`)]),
          ),
        );
      });
    }

    test('an event with only its event_type answers 400 naming every missing required field in one entry', async () => {
      const fields = Object.keys(REQUIRED.impression!);
      await refused({ events: [{ event_type: 'impression' }] }, async (res) => {
        const body = await assertEventErrors(res, [[0, fields[0]!, /is required/]]);
        for (const f of fields) assert.match(body.errors![0]!.message, new RegExp(`${f} is required`));
      });
    });

    const wrongValues: Array<[name: string, e: Event, field: string, message: RegExp]> = [
      ['amount 1.5', event('add_to_cart', { amount: 1.5 }), 'amount', /integer/],
      ['amount "2"', event('purchase', { amount: '2' }), 'amount', /integer/],
      ['amount 1e400 (Infinity)', event('remove_from_cart', { amount: 1e400 }), 'amount', /integer/],
      ['purchased_price "9.99"', event('purchase', { purchased_price: '9.99' }), 'purchased_price', /number/],
      ['original_price null', event('purchase', { original_price: null }), 'original_price', /number/],
      ['progress "half"', event('checkpoint', { progress: 'half' }), 'progress', /number/],
      ['basket_content not an array', event('add_to_cart', { basket_content: 'p-1' }), 'basket_content', /array/],
      ['basket_content entry without id', event('add_to_cart', { basket_content: [{ id: 'p-1' }, { name: 'x' }] }), 'basket_content', /\[1\]\.id/],
      ['basket_content entry not an object', event('remove_from_cart', { basket_content: ['p-1'] }), 'basket_content', /\[0\]/],
      ['user_id 5', event('page_visit', { user_id: 5 }), 'user_id', /string/],
      ['device_id ""', event('page_visit', { device_id: '' }), 'device_id', /empty/],
      ['device_id null', event('page_visit', { device_id: null }), 'device_id', /string/],
      ['event_id ""', event('page_visit', { event_id: '' }), 'event_id', /empty/],
      ['event_id 5', event('page_visit', { event_id: 5 }), 'event_id', /string/],
      ['action_item an object', event('detail_pageview', { action_item: { id: 'a-1' } }), 'action_item', /string/],
      ['an unknown field', event('page_visit', { colour: 'red' }), 'colour', /not a field/],
      ['a field of another type', event('page_visit', { amount: 1 }), 'amount', /not a field/],
      ['a field named constructor', event('page_visit', { constructor: { a: 1 } }), 'constructor', /not a field/],
      ['a field named toString', event('page_visit', { toString: 'x' }), 'toString', /not a field/],
      ['a 300-character device_id', event('page_visit', { device_id: 'd'.repeat(300) }), 'device_id', /at most/],
      ['a 100 KB action_item', event('detail_pageview', { action_item: 'a'.repeat(100 * 1024) }), 'action_item', /at most/],
      ['invalid channel', event('page_visit', { channel: 'web' }), 'channel', /not a channel/],
      ['invalid page_type', event('page_visit', { page_type: 'homepage' }), 'page_type', /not a page type/],
      ['invalid list_name', event('impression', { list_name: 'not_a_list' }), 'list_name', /not a list/],
      ['unknown event_type', event('page_visit', { event_type: 'page_view' }), 'event_type', /not an event type/],
      ['event_type with wrong case "Purchase"', event('purchase', { event_type: 'Purchase' }), 'event_type', /not an event type/],
      ['event_type missing', without(event('page_visit'), 'event_type'), 'event_type', /required/],
      ['event_type a number', event('page_visit', { event_type: 5 }), 'event_type', /string/],
    ];
    for (const [name, e, field, message] of wrongValues) {
      test(`an event with ${name} answers 400 naming ${field} and stores nothing`, async () => {
        await refused({ events: [event('page_visit'), e] }, (res) => assertEventErrors(res, [[1, field, message]]));
      });
    }

    test('a __proto__ field in an event answers 400 and stores nothing', async () => {
      const raw = JSON.stringify({ events: [event('page_visit')] }).replace('"channel"', '"__proto__":{"channel":"x"},"channel"');
      await refused(raw, (res) => assertEventErrors(res, [[0, '__proto__', /not a field/]]));
    });

    test('an event that is not an object answers 400 and stores nothing', async () => {
      for (const bad of [null, 'page_visit', 5, [event('page_visit')]]) {
        await refused({ events: [event('page_visit'), bad] }, (res) => assertEventErrors(res, [[1, '', /object/]]));
      }
    });

    test('one bad event among 99 good ones answers 400 with exactly its entry and stores none of the 100', async () => {
      const events = Array.from({ length: 100 }, (_, i) => event(TYPES[i % TYPES.length]!, { event_id: `bulk-${i}` }));
      events[57] = event('purchase', { event_id: 'bulk-57', amount: 1.5 });
      await refused({ events }, (res) => assertEventErrors(res, [[57, 'amount', /integer/]]));
    });

    test('many bad events answer 400 with one entry each and a title that summarises them', async () => {
      const events = Array.from({ length: 10 }, (_, i) => (i % 2 ? event('page_visit', { channel: 'nope' }) : event('page_visit')));
      await refused({ events }, async (res) => {
        const body = await assertEventErrors(
          res,
          [1, 3, 5, 7, 9].map((i) => [i, 'channel', /not a channel/]),
        );
        assert.match(body.title, /and 2 more$/);
      });
    });

    test('an empty events array answers 400 and stores nothing', async () => {
      await refused({ events: [] }, (res) => assertInvalidRequest(res, '/events', /empty/));
    });

    test('events that is not an array answers 400 and stores nothing', async () => {
      for (const events of [{}, event('page_visit'), 'x', null, 1]) {
        await refused({ events }, (res) => assertInvalidRequest(res, '/events', /array/));
      }
    });

    test('a body that is a JSON array, string, number or null answers 400 and stores nothing', async () => {
      for (const body of [[event('page_visit')], '"events"', '5', 'null']) {
        await refused(body, (res) => assertInvalidRequest(res, '', /object/));
      }
    });

    test('a body without events answers 400 and stores nothing', async () => {
      await refused({}, (res) => assertInvalidRequest(res, '/events', /required/));
      await refused({ event: [event('page_visit')] }, (res) => assertInvalidRequest(res, '/events', /required/));
    });

    test('an unknown top-level field answers 400 naming it and stores nothing', async () => {
      await refused({ events: [event('page_visit')], user_id: 'u' }, (res) => assertInvalidRequest(res, '/user_id', /not a field/));
    });

    test('more than 1000 events in one request answers 400 and stores nothing', async () => {
      const events = Array.from({ length: 1001 }, (_, i) => event('page_visit', { device_id: `many-${i}` }));
      await refused({ events }, (res) => assertInvalidRequest(res, '/events', /at most 1000/));
    });

    test('a body that is not JSON answers 415 and stores nothing', async () => {
      for (const body of ['not json', '{"events": [', '', '<events/>']) {
        await refused(body, (res) => assertProblem(res, 415, 'body-not-json'));
      }
      await refused('events=1', (res) => assertProblem(res, 415, 'body-not-json'), {
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
    });

    test('events for an unknown environment answer 404 and store nothing', async () => {
      await refused({ events: [event('page_visit')] }, (res) => assertProblem(res, 404, 'environment-not-found'), { environment: 'nope' });
    });

    test('GET recent events without a token answers 401', async () => {
      const res = await fetch(`${server.url}/api/demo/events?limit=5`);
      await assertProblem(res, 401, 'unauthorized');
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
    });

    test('GET recent events with a limit outside 1..1000 answers 400', async () => {
      const token = await getToken(server);
      for (const limit of ['0', '1001', '-1', 'abc', '1.5', '']) {
        const res = await fetch(`${server.url}/api/demo/events?limit=${limit}`, { headers: { Authorization: `Bearer ${token}` } });
        await assertInvalidRequest(res, 'limit', /1 to 1000/);
      }
    });
  });

  describe('configured vocabulary and body limit', { concurrency: 1 }, () => {
    let server: TestServer;

    before(() => {
      server = configured;
    });

    test('a configured extra channel, page type and list name are accepted and stored', async () => {
      const events = [
        event('page_visit', { channel: 'kiosk', page_type: 'search' }),
        event('impression', { channel: 'kiosk', page_type: 'search', list_name: 'top' }),
        // The standard page types and channels stay accepted beside the configured ones.
        event('page_visit', { channel: 'test', page_type: 'home' }),
      ];
      await assertAccepted(await post(server, { events }));
      assert.deepEqual((await exportEvents(server)).map(withoutAcceptedAt), events);
    });

    test('a list name the environment does not configure answers 400 and stores nothing', async () => {
      await assertRefusedAndNothingStored(
        server,
        () => post(server, { events: [event('impression', { channel: 'kiosk', list_name: 'popular' })] }),
        (res) => assertEventErrors(res, [[0, 'list_name', /not a list/]]),
      );
    });

    test('a body over the configured byte limit answers 413 and stores nothing', async () => {
      const events = Array.from({ length: 40 }, (_, i) => event('page_visit', { device_id: `big-${i}` }));
      assert.ok(JSON.stringify({ events }).length > 4096, 'the body is over the limit');
      await assertRefusedAndNothingStored(
        server,
        () => post(server, { events }),
        (res) => assertProblem(res, 413, 'body-too-large'),
      );
      // The server still answers after closing that connection.
      await assertAccepted(await post(server, { events: [event('page_visit', { channel: 'kiosk' })] }));
    });

    test('a chunked body that grows over the byte limit answers 413 and stores nothing', async () => {
      // No Content-Length: the limit is enforced on the bytes received. A raw socket, because
      // fetch reports the early close as a write error instead of the response.
      const chunk = `{"events":[${JSON.stringify(event('page_visit', { channel: 'kiosk' }))},`.padEnd(3000, ' ');
      let raw = '';
      await assertRefusedAndNothingStored(
        server,
        () =>
          new Promise<Response>((resolve, reject) => {
            const socket = connect(server.port, '127.0.0.1');
            socket.setEncoding('utf8');
            socket.on('data', (data: string) => (raw += data));
            socket.on('error', () => undefined); // a write after the server closed: expected
            socket.on('close', () => {
              const [head = '', body = ''] = raw.split('\r\n\r\n');
              const [statusLine = '', ...headerLines] = head.split('\r\n');
              const status = Number(statusLine.split(' ')[1]);
              if (!status) return reject(new Error(`no HTTP response: ${JSON.stringify(raw)}`));
              const headers = new Headers(headerLines.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]) as [string, string][]);
              resolve(new Response(body, { status, headers }));
            });
            socket.write('POST /api/demo/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
            const send = (n: number) => {
              if (socket.destroyed) return;
              if (n === 0) return void socket.end('0\r\n\r\n');
              socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
              setTimeout(() => send(n - 1), 20);
            };
            send(3);
            setTimeout(() => socket.destroy(), 5000).unref();
          }),
        (res) => assertProblem(res, 413, 'body-too-large'),
      );
    });
  });

  describe('durability', { concurrency: 1 }, () => {
    test('every event of every batch answered 200 survives kill -9 during concurrent writes, exactly once', async (t) => {
      const first = doomed;
      let restarted: TestServer | undefined;
      // Before the top-level after() removes the data directory with `first.close()`.
      t.after(() => restarted?.close());

      const SENDERS = 32;
      const BATCH = 10;
      const KILL_AFTER = 300;
      const acknowledged: string[][] = [];
      const attempted = new Set<string>();
      /** Anything but a 200 before the kill, or an error before it: stops the run and fails it. */
      const unexpected: string[] = [];
      let killed = false;
      const kill = () => {
        if (killed) return;
        killed = true;
        first.proc.kill('SIGKILL');
      };

      // Every sender keeps sending until its request fails, so requests are in flight (sent, being
      // committed, being answered) at the moment the process dies; any 200 it gave must hold.
      async function sender(s: number): Promise<void> {
        for (let b = 0; ; b++) {
          const ids = Array.from({ length: BATCH }, (_, i) => `s${s}-b${b}-e${i}`);
          for (const id of ids) attempted.add(id);
          const events = ids.map((id) => event('detail_pageview', { event_id: id, device_id: `dev-${s}`, action_item: `a-${b % 50}` }));
          let res: Response;
          let text: string;
          try {
            res = await post(first, { events });
            text = await res.text();
          } catch (err) {
            // Once killed, the connection dies with the process: this batch's outcome is unknown.
            if (!killed) unexpected.push(`sender ${s}: ${(err as Error).message} before the kill`);
            kill();
            return;
          }
          if (res.status !== 200) {
            unexpected.push(`sender ${s}: ${res.status} ${text.slice(0, 300)}`);
            kill();
            return;
          }
          acknowledged.push(ids);
          if (acknowledged.length >= KILL_AFTER) kill();
        }
      }
      await Promise.all(Array.from({ length: SENDERS }, (_, s) => sender(s)));
      await first.exited;
      assert.deepEqual(unexpected, []);
      assert.equal(first.proc.signalCode, 'SIGKILL');
      assert.ok(acknowledged.length >= KILL_AFTER, `${acknowledged.length} batches acknowledged before the kill`);

      restarted = await startServer({ dataDir: first.dataDir });
      const exported = await exportEvents(restarted);
      t.diagnostic(`${acknowledged.length} batches acknowledged, ${exported.length / BATCH} stored`);
      const counts = new Map<string, number>();
      for (const e of exported) counts.set(e.event_id as string, (counts.get(e.event_id as string) ?? 0) + 1);

      const lost = acknowledged.flat().filter((id) => counts.get(id) !== 1);
      assert.deepEqual(lost, [], 'every acknowledged event is stored exactly once');
      for (const [id, n] of counts) {
        assert.equal(n, 1, `${id} stored once`);
        assert.ok(attempted.has(id), `${id} was sent`);
      }
      // A batch is stored whole or not at all, even when the process died around its commit.
      const batches = new Map<string, number>();
      for (const id of counts.keys()) {
        const batch = id.slice(0, id.lastIndexOf('-e'));
        batches.set(batch, (batches.get(batch) ?? 0) + 1);
      }
      for (const [batch, n] of batches) assert.equal(n, BATCH, `batch ${batch} stored whole`);

      // The restarted server serves the surviving log.
      const token = await getToken(restarted, first.demoClient);
      const res = await fetch(`${restarted.url}/api/demo/events?limit=1`, { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(res.status, 200);
      assert.deepEqual(((await res.json()) as { events: Event[] }).events.map(withoutAcceptedAt), [withoutAcceptedAt(exported.at(-1)!)]);
    });
  });
});
