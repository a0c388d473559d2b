// The browser tracker (clients/browser, as built into dist/clients/browser/tracker.mjs) in
// Chromium against a real server: a shop page served by this test on its own origin renders a
// recommended list, is scrolled and clicked, and the events it sends across origins (CORS, the
// shop's origin allowed) are stored exactly as expected, with the response's request_id,
// list_name and user_group. A gateway in front of the API can play an unreachable server: the
// events are then kept, retried and delivered once it is back, and the page sees no error.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { waitFor } from '../helpers/api.ts';
import { getToken } from '../helpers/auth.ts';
import { chromiumMissing, collectPageErrors, launchChromium, screenshot } from '../helpers/browser.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const TRACKER = join(import.meta.dirname, '..', '..', 'dist', 'clients', 'browser', 'tracker.mjs');
const ITEMS = ['t1', 't2', 't3', 't4', 't5'];

interface Recommendations {
  request_id: string;
  user_group: string;
  lists: Array<{ list_name: string; items: Array<{ item_id: string }> }>;
}

/** A shop page: five 250 px items under each other in a 400 px high viewport (items 1 and 2 visible at first). */
function page(reco: Recommendations, deviceId: string, apiUrl: string): string {
  return `<!doctype html><html><head><style>
body { margin: 0; } ul { list-style: none; margin: 0; padding: 0; } li { height: 250px; box-sizing: border-box; border: 1px solid #999; }
#after { height: 1200px; }
</style></head><body><ul id="list"></ul><div id="after"></div>
<script type="module">
import { createTracker } from '/tracker.mjs';
const reco = ${JSON.stringify(reco)};
const tracker = createTracker({ endpoint: ${JSON.stringify(`${apiUrl}/api`)}, environment: 'demo', deviceId: ${JSON.stringify(deviceId)}, userId: null, channel: 'www', pageType: 'home', flushMs: 200, retryMs: 200 });
window.tracker = tracker;
tracker.pageView();
const list = document.getElementById('list');
for (const item of reco.lists[0].items) {
  const li = document.createElement('li');
  li.dataset.itemId = item.item_id;
  li.dataset.itemType = 'article';
  li.textContent = item.item_id;
  list.append(li);
}
tracker.observeList(list, reco, reco.lists[0].list_name);
window.ready = true;
</script></body></html>`;
}

describe('browser tracker in Chromium', { skip: chromiumMissing, concurrency: 1 }, () => {
  let server: TestServer;
  let token: string;
  let browser: Browser;
  let site: Server;
  let siteUrl: string;
  let gateway: Server;
  let gatewayUrl: string;
  /** While true the gateway answers every request by closing the connection (a network error). */
  let apiDown = false;
  const pages = new Map<string, string>();

  const listen = async (s: Server) => {
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };

  before(async () => {
    const tracker = readFileSync(TRACKER);
    // The shop's own site: its pages and the tracker file.
    site = createServer((req, res) => {
      if (req.url === '/tracker.mjs') res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(tracker);
      else if (pages.has(req.url ?? '')) res.writeHead(200, { 'Content-Type': 'text/html' }).end(pages.get(req.url!));
      else res.writeHead(404).end();
    });
    siteUrl = await listen(site);
    [server, browser] = await Promise.all([
      startServer({ config: { environments: { demo: { itemTypes: ['article'], lists: { latest: { strategy: 'latest', itemTypes: [] } }, cors: { allowedOrigins: [siteUrl] } } } } }),
      launchChromium(),
    ]);
    // In front of the API, passing requests and answers through unchanged (CORS headers included).
    gateway = createServer((req, res) => {
      void (async () => {
        if (apiDown) return req.socket.destroy();
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const headers: Record<string, string> = {};
        for (const name of ['content-type', 'origin', 'access-control-request-method', 'access-control-request-headers']) if (req.headers[name]) headers[name] = String(req.headers[name]);
        const upstream = await fetch(`${server.url}${req.url}`, { method: req.method!, headers, body: chunks.length > 0 ? Buffer.concat(chunks) : null });
        const answer: Record<string, string> = {};
        upstream.headers.forEach((value, name) => {
          if (name !== 'content-length' && name !== 'content-encoding' && name !== 'connection' && name !== 'keep-alive') answer[name] = value;
        });
        res.writeHead(upstream.status, answer).end(Buffer.from(await upstream.arrayBuffer()));
      })();
    });
    gatewayUrl = await listen(gateway);
    token = await getToken(server);
    for (const id of ITEMS) {
      const res = await fetch(`${server.url}/api/demo/items/article/${id}`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ environment: 'demo', item_id: id, item_type: 'article', title: id, publication_datetime: `2024-01-0${ITEMS.indexOf(id) + 1}T00:00:00Z` }),
      });
      assert.equal(res.status, 200);
    }
  });
  after(async () => {
    await browser?.close();
    for (const s of [site, gateway]) {
      s?.closeAllConnections();
      await new Promise((resolve) => s?.close(resolve));
    }
    await server?.close();
  });

  /** Asks for a list as the shop's backend would, and publishes a page rendering it. */
  async function shopPage(deviceId: string): Promise<[path: string, reco: Recommendations]> {
    const res = await fetch(`${server.url}/api/demo/recommendations/requests`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ page_type: 'home', channel: 'www', device_id: deviceId, lists: [{ list_name: 'latest', list_size: 5 }] }),
    });
    assert.equal(res.status, 200);
    const reco = (await res.json()) as Recommendations;
    assert.deepEqual(reco.lists[0]!.items.map((i) => i.item_id), [...ITEMS].reverse(), 'latest first');
    const path = `/shop-${deviceId}`;
    pages.set(path, page(reco, deviceId, gatewayUrl));
    return [path, reco];
  }

  async function storedFor(deviceId: string): Promise<Array<Record<string, unknown>>> {
    const res = await fetch(`${server.url}/api/demo/events?limit=1000`, { headers: { Authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { events: Array<Record<string, unknown>> };
    return body.events.filter((e) => e.device_id === deviceId).reverse();
  }

  const summary = (events: Array<Record<string, unknown>>) => events.map((e) => `${e.event_type}${e.action_item ? ` ${e.action_item}` : ''}`).sort();
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const scrollTo = (p: Page, y: number) => p.evaluate(`window.scrollTo(0, ${y})`);

  test('impressions only for items half visible for a second, once each; the click; the page view; sent on page hide', async () => {
    const [path, reco] = await shopPage('tracker-dev-1');
    const [first, second, third, fourth, fifth] = reco.lists[0]!.items.map((i) => i.item_id);
    const p = await browser.newPage({ viewport: { width: 600, height: 400 } });
    const errors = collectPageErrors(p);
    await p.goto(`${siteUrl}${path}`);
    await p.waitForFunction('window.ready === true');
    await pause(1400); // items 1 (whole) and 2 (60% visible) for over a second
    await scrollTo(p, 500); // items 3 and 4 for only 300 ms
    await pause(300);
    await scrollTo(p, 1000); // item 5 alone
    await pause(1400);
    await p.click(`li[data-item-id="${fifth}"]`);
    await scrollTo(p, 0); // items 1 and 2 again: no second impression
    await pause(1300);
    await screenshot(p, 'tracker-page');
    await p.goto('about:blank'); // page hide: the beacon carries what is left
    const expected = ['page_visit', `impression ${first}`, `impression ${second}`, `impression ${fifth}`, `click_on_recommendation ${fifth}`].sort();
    const stored = await waitFor('the tracker events', async () => {
      const events = await storedFor('tracker-dev-1');
      return events.length >= expected.length ? events : undefined;
    });
    await pause(300);
    assert.deepEqual(summary(await storedFor('tracker-dev-1')), expected, `not ${third} or ${fourth}, each once`);
    for (const e of stored.filter((x) => x.event_type !== 'page_visit')) {
      assert.deepEqual([e.request_id, e.list_name, e.user_group, e.action_item_type], [reco.request_id, 'latest', reco.user_group, 'article']);
    }
    assert.deepEqual(errors, []);
    await p.close();
  });

  test('with the server unreachable the events are kept and retried without page errors, then stored once', async () => {
    const [path] = await shopPage('tracker-dev-2');
    apiDown = true;
    const p = await browser.newPage({ viewport: { width: 600, height: 400 } });
    const errors = collectPageErrors(p);
    await p.goto(`${siteUrl}${path}`);
    await p.waitForFunction('window.ready === true');
    await pause(1800); // two impressions and several failed sends
    assert.equal(await p.evaluate('window.tracker.pending.length'), 3, 'page view and two impressions kept');
    assert.deepEqual(await storedFor('tracker-dev-2'), []);
    apiDown = false;
    await waitFor('the kept events to arrive', async () => ((await storedFor('tracker-dev-2')).length >= 3 ? true : undefined), 10_000);
    await waitFor('the tracker queue to empty', async () => ((await p.evaluate('window.tracker.pending.length')) === 0 ? true : undefined), 5000);
    assert.equal((await storedFor('tracker-dev-2')).length, 3, 'stored once');
    assert.deepEqual(errors, []);
    await p.close();
  });

  test('the script-tag build defines the global AffinityTracker with createTracker', async () => {
    const p = await browser.newPage();
    const errors = collectPageErrors(p);
    await p.setContent('<!doctype html><title>script tag</title>');
    await p.addScriptTag({ content: readFileSync(join(TRACKER, '..', 'tracker.global.js'), 'utf8') });
    assert.equal(await p.evaluate('typeof AffinityTracker.createTracker'), 'function');
    assert.deepEqual(errors, []);
    await p.close();
  });
});
