// Generated shop traffic with a known A/B lift, sent through the real API, for the reporting and
// dashboard tests. Environment `shop`: 40 users in the service group `affinity` and 40 in the
// control group `customer`, each with one recommendation request and five impressions on
// `top_sellers`. Service users click 60 of their 200 impressions and 16 buy once for 10.00;
// control users click 30 and 8 buy: CTR, conversion rate and revenue per user-day all have a
// lift of exactly +100%.
import assert from 'node:assert/strict';
import { waitFor } from './api.ts';
import type { TestServer } from './server.ts';

export const SHOP_CONFIG = {
  environments: {
    shop: {
      itemTypes: ['product'],
      lists: { top_sellers: { strategy: 'popular', itemTypes: [], fallback: 'latest' }, new_in: { strategy: 'latest', itemTypes: [] } },
      serviceGroup: 'affinity',
      controlGroups: { customer: 0 },
      // A short window, so a test can see a conversion fall outside it.
      model: { attributionWindowSec: 1 },
    },
  },
  reports: { maxRangeDays: 90, maxHourRangeDays: 7 },
};

export const USERS_PER_GROUP = 40;
export const PRODUCTS = Array.from({ length: 12 }, (_, i) => `p${i + 1}`);

/** What the traffic adds up to (per group and for the list). */
export const EXPECTED = {
  affinity: { impressions: 200, clicks: 60, users: 40, buyers: 16, revenue: 160 },
  customer: { impressions: 200, clicks: 30, users: 40, buyers: 8, revenue: 80 },
  list: { requests: 80, impressions: 400, clicks: 90, purchase: 24, revenue: 240 },
};

const today = () => new Date().toISOString().slice(0, 10);

/** Puts the products, then sends the requests and events; resolves once the reports count them all. */
export async function sendShopTraffic(server: TestServer, token: string): Promise<void> {
  const auth = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  for (const id of PRODUCTS) {
    const res = await fetch(`${server.url}/api/shop/items/product/${id}`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ environment: 'shop', item_id: id, item_type: 'product', title: `Product ${id}` }),
    });
    assert.equal(res.status, 200, await res.text());
  }
  const events: Array<Record<string, unknown>> = [];
  for (const group of ['affinity', 'customer'] as const) {
    for (let u = 0; u < USERS_PER_GROUP; u++) {
      const user = `${group}-u${u}`;
      const res = await fetch(`${server.url}/api/shop/recommendations/requests`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ page_type: 'home', channel: 'www', device_id: `d-${user}`, user_id: user, user_group: group, lists: [{ list_name: 'top_sellers', list_size: 5 }] }),
      });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      const body = JSON.parse(text) as { request_id: string; user_group: string };
      const shown = { page_type: 'home', channel: 'www', device_id: `d-${user}`, user_id: user, list_name: 'top_sellers', request_id: body.request_id, user_group: body.user_group, action_item_type: 'product' };
      const items = PRODUCTS.slice(u % 6, (u % 6) + 5);
      for (const item of items) events.push({ event_type: 'impression', ...shown, action_item: item });
      // Service: 20 users click twice, 20 once (60); control: 10 twice, 10 once, 20 never (30).
      const clicks = group === 'affinity' ? (u < 20 ? 2 : 1) : u < 10 ? 2 : u < 20 ? 1 : 0;
      for (const item of items.slice(0, clicks)) events.push({ event_type: 'click_on_recommendation', ...shown, action_item: item });
      if (u < (group === 'affinity' ? 16 : 8)) {
        events.push({ event_type: 'purchase', device_id: `d-${user}`, user_id: user, channel: 'www', action_item: items[0], action_item_type: 'product', amount: 1, purchased_price: 10 });
      }
    }
  }
  for (let i = 0; i < events.length; i += 200) {
    const res = await fetch(`${server.url}/api/shop/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ events: events.slice(i, i + 200) }) });
    assert.equal(res.status, 200, await res.text());
  }
  await waitFor('the reports to count the traffic', async () => {
    const res = await fetch(`${server.url}/api/shop/reports?from=${today()}&to=${today()}&breakdown=list_name`, { headers: { Authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { totals: Array<{ value: string; metrics: Record<string, number> }>; coverage: { catalog_items: number } };
    const m = body.totals.find((t) => t.value === 'top_sellers')?.metrics;
    // The catalog's size comes from the item layout the builder writes on its own, slower pace
    // (builder-worker.ts layoutFlushMs): counted events do not mean the products are counted yet.
    const counted = m && m.impressions === EXPECTED.list.impressions && m.purchase === EXPECTED.list.purchase && m.requests === EXPECTED.list.requests;
    return counted && body.coverage.catalog_items === PRODUCTS.length ? true : undefined;
  });
}
