// The reporting API against a real server filled with generated traffic of a known lift
// (helpers/report-traffic.ts): totals per list and page type, intake, coverage, latency, hourly
// rows, the A/B comparison, top items; and bad report ranges refused with nothing stored.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { compareMeans, compareRates } from '../../src/domain/ab-comparison.ts';
import { waitFor } from '../helpers/api.ts';
import { getToken } from '../helpers/auth.ts';
import { assertFieldErrors, assertProblem } from '../helpers/problem.ts';
import { EXPECTED, PRODUCTS, SHOP_CONFIG, sendShopTraffic } from '../helpers/report-traffic.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';

let server: TestServer;
let token: string;
const today = new Date().toISOString().slice(0, 10);

before(async () => {
  server = await startServer({ config: SHOP_CONFIG });
  token = await getToken(server);
  await sendShopTraffic(server, token);
});
after(() => server?.close());

async function get<T = Record<string, any>>(path: string): Promise<T> {
  const res = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as T;
}

type Totals = Array<{ dimension: string; value: string; metrics: Record<string, number | null> }>;

describe('GET /reports', () => {
  test('totals per list count requests, impressions, clicks, CTR and the attributed purchases and revenue', async () => {
    const body = await get(`/api/shop/reports?from=${today}&to=${today}&breakdown=list_name`);
    const totals = body.totals as Totals;
    assert.deepEqual(totals.map((t) => t.dimension), ['list_name']);
    const list = totals.find((t) => t.value === 'top_sellers')!.metrics;
    const { requests, impressions, clicks, purchase, revenue } = EXPECTED.list;
    assert.deepEqual(
      { requests: list.requests, impressions: list.impressions, clicks: list.clicks, purchase: list.purchase, revenue: list.revenue, conversions: list.conversions },
      { requests, impressions, clicks, purchase, revenue, conversions: purchase },
    );
    const round = (x: number) => Math.round(x * 1e6) / 1e6;
    assert.equal(list.ctr, round(clicks / impressions));
    assert.equal(list.conversion_rate, round(purchase / clicks));
    assert.ok((body.rows as Array<{ dimension: string; day: string }>).every((r) => r.dimension === 'list_name' && r.day === today));
  });

  test('without a breakdown every dimension is reported, page_type included, with the intake per event type', async () => {
    const body = await get(`/api/shop/reports?from=${today}&to=${today}`);
    const totals = body.totals as Totals;
    const of = (dimension: string, value: string) => totals.find((t) => t.dimension === dimension && t.value === value)?.metrics;
    assert.equal(of('page_type', 'home')?.impressions, EXPECTED.list.impressions);
    assert.equal(of('page_type', 'home')?.requests, EXPECTED.list.requests);
    assert.equal(of('channel', 'www')?.clicks, EXPECTED.list.clicks);
    assert.equal(of('user_group', 'affinity')?.clicks, EXPECTED.affinity.clicks);
    assert.equal(of('user_group', 'customer')?.revenue, EXPECTED.customer.revenue);
    assert.deepEqual(body.intake, { impression: 400, click_on_recommendation: 90, purchase: 24 });
  });

  test('coverage is the share of the enabled catalog recommended; latency percentiles come from the requests answered', async () => {
    const body = await get(`/api/shop/reports?from=${today}&to=${today}`);
    // The popular list shows the same five products to every service user (no consumption yet ranks them).
    assert.equal(body.coverage.catalog_items, PRODUCTS.length);
    assert.ok(body.coverage.recommended_items >= 5 && body.coverage.recommended_items <= PRODUCTS.length, JSON.stringify(body.coverage));
    assert.equal(body.coverage.share, Math.round((body.coverage.recommended_items / PRODUCTS.length) * 1e6) / 1e6);
    assert.equal(body.latency_ms.requests, EXPECTED.list.requests);
    assert.ok(body.latency_ms.p50 > 0 && body.latency_ms.p50 <= body.latency_ms.p90 && body.latency_ms.p90 <= body.latency_ms.p99, JSON.stringify(body.latency_ms));
  });

  test('granularity=hour answers rows per UTC hour that add up to the day', async () => {
    const body = await get(`/api/shop/reports?from=${today}&to=${today}&granularity=hour&breakdown=user_group`);
    const rows = body.rows as Array<{ hour: string; value: string; metrics: Record<string, number> }>;
    assert.ok(rows.length > 0 && rows.every((r) => /^\d{4}-\d{2}-\d{2}T\d{2}:00:00Z$/.test(r.hour)), JSON.stringify(rows.slice(0, 2)));
    const clicks = rows.filter((r) => r.value === 'affinity').reduce((sum, r) => sum + (r.metrics.clicks ?? 0), 0);
    assert.equal(clicks, EXPECTED.affinity.clicks);
  });
});

describe('GET /reports/ab', () => {
  test('the service group beats the control group by +100% on CTR, conversion and revenue per user, with intervals and sample sizes', async () => {
    const body = await get(`/api/shop/reports/ab?from=${today}&to=${today}`);
    assert.equal(body.service_group, 'affinity');
    assert.equal(body.unit, 'user-day');
    const [comparison] = body.comparisons as Array<{ control_group: string; metrics: Array<Record<string, any>> }>;
    assert.equal(comparison!.control_group, 'customer');
    const metric = (name: string) => comparison!.metrics.find((m) => m.metric === name)!;
    const s = EXPECTED.affinity;
    const c = EXPECTED.customer;
    // Expected figures from the same formulas (unit-tested in test/unit/domain/ab-comparison.test.ts).
    assert.deepEqual(metric('ctr'), { metric: 'ctr', ...compareRates(s.clicks, s.impressions, c.clicks, c.impressions) });
    assert.deepEqual(metric('conversion_rate'), { metric: 'conversion_rate', ...compareRates(s.buyers, s.users, c.buyers, c.users) });
    // Every buyer spent 10.00 once: Σr² = 100 per buyer.
    assert.deepEqual(metric('revenue_per_user'), {
      metric: 'revenue_per_user',
      ...compareMeans({ n: s.users, sum: s.revenue, sumSq: 100 * s.buyers }, { n: c.users, sum: c.revenue, sumSq: 100 * c.buyers }),
    });
    for (const name of ['ctr', 'conversion_rate', 'revenue_per_user']) {
      const m = metric(name);
      assert.equal(m.lift, 1, `${name} lift`);
      assert.ok(m.ci95[0] < 1 && 1 < m.ci95[1], `${name} interval ${m.ci95} holds the lift`);
    }
    assert.ok(metric('ctr').ci95[0] > 0, 'the CTR lift is significant');
    assert.deepEqual([metric('ctr').service.n, metric('ctr').control.n], [s.impressions, c.impressions]);
    assert.deepEqual([metric('conversion_rate').service.n, metric('conversion_rate').control.n], [s.users, c.users]);
  });
});

describe('GET /reports/items', () => {
  test('lists the most clicked items with their counts, and the recommended ones', async () => {
    const body = await get(`/api/shop/reports/items?from=${today}&to=${today}&limit=3`);
    const clicked = body.clicked as Array<{ item_id: string; count: number }>;
    assert.equal(clicked.length, 3);
    assert.ok(clicked[0]!.count >= clicked[1]!.count && clicked[1]!.count >= clicked[2]!.count);
    assert.ok(body.recommended.length > 0 && body.recommended.every((i: { item_type: string }) => i.item_type === 'product'));
    assert.equal(
      (body.recommended as Array<{ count: number }>).reduce((a, r) => a + r.count, 0) <= EXPECTED.affinity.users * 5,
      true,
      'control requests recommend nothing',
    );
  });
});

describe('bad report ranges answer 400 and store nothing', () => {
  const cases: Array<[name: string, path: string, errors: Array<[string, RegExp?]>]> = [
    ['a reversed range', `/api/shop/reports?from=2024-03-10&to=2024-03-01`, [['from', /on or before/]]],
    ['a range over the configured 90 days', `/api/shop/reports?from=2024-01-01&to=2024-03-31`, [['from', /at most 90 days/]]],
    ['an hourly range over the configured 7 days', `/api/shop/reports?from=2024-03-01&to=2024-03-08&granularity=hour`, [['from', /at most 7 days/]]],
    ['a malformed day', `/api/shop/reports?from=2024-3-1&to=2024-03-08`, [['from', /date/]]],
    ['an unknown breakdown and granularity', `/api/shop/reports?breakdown=colour&granularity=week`, [['granularity', /day.*hour/], ['breakdown', /list_name/]]],
    ['a reversed A/B range', `/api/shop/reports/ab?from=2024-03-10&to=2024-03-01`, [['from', /on or before/]]],
    ['an items limit out of range', `/api/shop/reports/items?limit=0`, [['limit', /1 to 100/]]],
  ];
  for (const [name, path, errors] of cases) {
    test(`${name} answers 400 naming the parameter`, async () => {
      const before = await snapshotStore(server.dataDir);
      const res = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
      assertFieldErrors(await assertProblem(res, 400, 'invalid-request'), errors);
      assertSameStore(await snapshotStore(server.dataDir), before);
    });
  }
});

describe('attribution', () => {
  test('a conversion is attributed to the latest click on its item by the same user or device within the window, once', async () => {
    const base = { channel: 'app', page_type: 'category', list_name: 'new_in', user_group: 'cms', request_id: 'cms-page', action_item_type: 'product' };
    const send = async (events: Array<Record<string, unknown>>) => {
      const res = await fetch(`${server.url}/api/shop/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ events }) });
      assert.equal(res.status, 200, await res.text());
    };
    const buy = (user: string | null, device: string, item: string, price: number) => ({ event_type: 'purchase', user_id: user, device_id: device, channel: 'app', action_item: item, action_item_type: 'product', amount: 1, purchased_price: price });
    await send([
      { event_type: 'click_on_recommendation', ...base, user_id: 'att-a', device_id: 'att-da', action_item: 'p1' },
      buy('att-a', 'att-da', 'p1', 5),
      // Clicked logged out (device only), bought logged in on that device.
      { event_type: 'click_on_recommendation', ...base, user_id: null, device_id: 'att-da', action_item: 'p2' },
      buy('att-a', 'att-da', 'p2', 7),
      // Clicked twice, bought once: one conversion.
      { event_type: 'click_on_recommendation', ...base, user_id: 'att-c', device_id: 'att-dc', action_item: 'p3' },
      { event_type: 'click_on_recommendation', ...base, user_id: 'att-c', device_id: 'att-dc', action_item: 'p3' },
      buy('att-c', 'att-dc', 'p3', 11),
      // Bought by someone who never clicked it.
      buy('att-x', 'att-dx', 'p1', 50),
      { event_type: 'click_on_recommendation', ...base, user_id: 'att-b', device_id: 'att-db', action_item: 'p4' },
    ]);
    // Past the 1 s window of SHOP_CONFIG.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await send([buy('att-b', 'att-db', 'p4', 100)]);
    const totals = await waitFor('the late purchase to be counted', async () => {
      const body = await get(`/api/shop/reports?from=${today}&to=${today}&breakdown=list_name`);
      const list = (body.totals as Totals).find((t) => t.value === 'new_in')?.metrics;
      return body.intake.purchase === EXPECTED.list.purchase + 5 ? list : undefined;
    });
    assert.deepEqual(
      { clicks: totals?.clicks, purchase: totals?.purchase, conversions: totals?.conversions, revenue: totals?.revenue },
      { clicks: 5, purchase: 3, conversions: 3, revenue: 23 },
    );
  });
});
