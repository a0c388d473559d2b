// Results do not depend on when the same events arrive (issue 13): two services get the same
// catalog and the same events in the same order, one in a single burst, the other in batches
// 150 ms apart (so the model builder's flushes, every 100 ms, fall elsewhere among the events,
// and the events' timestamps differ by seconds). With rows small enough to be cut often
// (maxNeighbours 3), every user's personalized list and every item's more_like_this come out the
// same. Before, a flush cut rows to the bound, and seeds' ages counted in seconds.
import { mulberry32 } from '../../scripts/synthetic/random.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { getToken } from '../helpers/auth.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const DEMO = DEFAULT_CONFIG.environments.demo!;
const CONFIG = { environments: { demo: { ...DEMO, model: { ...DEMO.model, maxNeighbours: 3 } } } };
const ITEMS = 30;
const USERS = 40;
const VIEWS_PER_USER = 12;
const BATCH = 24;


/** Views with a popularity skew, users interleaved as on a live site. */
function events(): unknown[] {
  const random = mulberry32(5);
  const out: unknown[] = [];
  for (let k = 0; k < VIEWS_PER_USER; k++) {
    for (let u = 0; u < USERS; u++) {
      const item = `a${Math.floor(random() ** 2 * ITEMS)}`;
      const common = { channel: 'www', device_id: `d${u}`, user_id: `u${u}`, action_item: item, action_item_type: 'article' };
      // Some carts among the views: another event weight.
      out.push(random() < 0.15 ? { event_type: 'add_to_cart', page_type: 'product_detail', amount: 1, ...common } : { event_type: 'detail_pageview', page_type: 'article_detail', ...common });
    }
  }
  return out;
}

interface Health {
  model_builder: { environments: Record<string, { applied_position: number }> } | null;
}

/** Loads the service, pausing `pauseMs` between event batches; returns every list asked, as item ids. */
async function listsOf(server: TestServer, pauseMs: number): Promise<Map<string, string[]>> {
  const token = await getToken(server);
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  for (let i = 0; i < ITEMS; i++) {
    const res = await fetch(`${server.url}/api/demo/items/article/a${i}`, { method: 'PUT', headers, body: JSON.stringify({ environment: 'demo', item_id: `a${i}`, item_type: 'article', title: `Article ${i}` }) });
    assert.equal(res.status, 200, await res.text());
  }
  const all = events();
  for (let at = 0; at < all.length; at += BATCH) {
    const res = await fetch(`${server.url}/api/demo/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ events: all.slice(at, at + BATCH) }) });
    assert.equal(res.status, 200, await res.text());
    if (pauseMs > 0) await sleep(pauseMs);
  }
  for (let waited = 0; ; waited += 100) {
    const health = (await (await fetch(`${server.url}/health`)).json()) as Health;
    if (health.model_builder?.environments.demo?.applied_position === all.length) break;
    if (waited > 20_000) throw new Error(`the builder did not apply every event: ${JSON.stringify(health)}`);
    await sleep(100);
  }
  const rebuilt = await fetch(`${server.url}/api/demo/model/rebuild`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
  assert.equal(rebuilt.status, 200, await rebuilt.text());
  const lists = new Map<string, string[]>();
  for (let u = 0; u < USERS; u++) {
    const body = {
      page_type: 'article_detail',
      channel: 'www',
      device_id: `d${u}`,
      user_id: `u${u}`,
      context_item: `a${u % ITEMS}`,
      context_item_type: 'article',
      lists: [
        { list_name: 'recommended_for_you', list_size: 8 },
        { list_name: 'more_like_this', list_size: 8 },
      ],
    };
    const res = await fetch(`${server.url}/api/demo/recommendations/requests`, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    for (const list of (JSON.parse(text) as { lists: Array<{ list_name: string; items: Array<{ item_id: string }> }> }).lists) {
      lists.set(`u${u} ${list.list_name}`, list.items.map((i) => i.item_id));
    }
  }
  return lists;
}

const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

test('the same events in the same order give the same lists, whether they arrive at once or spread over seconds', async () => {
  const burst = await startServer({ config: CONFIG });
  servers.push(burst);
  const atOnce = await listsOf(burst, 0);
  const spread = await startServer({ config: CONFIG });
  servers.push(spread);
  const slowly = await listsOf(spread, 150);
  assert.equal(atOnce.size, 2 * USERS);
  assert.ok([...atOnce.values()].every((items) => items.length > 0), 'every list has items');
  const differing = [...atOnce].filter(([key, items]) => slowly.get(key)?.join() !== items.join()).map(([key]) => key);
  assert.deepEqual(differing, [], 'lists that differ between the two arrivals');
});
