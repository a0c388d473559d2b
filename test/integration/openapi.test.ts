// The OpenAPI 3.1 document at /api/openapi.json against the real server: every documented
// operation exists (none answers "no route" or 405), a representative request of each operation
// gets a documented status whose body validates against the documented schema, and /docs serves
// Swagger UI from node_modules. (Every registered route is documented by construction: the start
// fails otherwise, test/unit/http/openapi-document.test.ts.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getToken } from '../helpers/auth.ts';
import { waitFor } from '../helpers/api.ts';
import { ResponseChecker, type OpenApiDocument } from '../helpers/openapi.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const PARAMS: Record<string, string> = { environment: 'demo', item_type: 'article', item_id: 'oa-1', feed_id: 'none', import_id: 'none', asset: 'swagger-ui.css', file: 'app.js' };

function article(id: string) {
  return { environment: 'demo', item_id: id, item_type: 'article', title: `Article ${id}`, categories: [['news']], publication_datetime: '2024-05-01T10:00:00Z' };
}

describe('the OpenAPI document of a running server', () => {
  let server: TestServer;
  let token: string;
  let checker: ResponseChecker;

  before(async () => {
    server = await startServer();
    token = await getToken(server);
    const res = await fetch(`${server.url}/api/openapi.json`);
    assert.equal(res.status, 200);
    checker = new ResponseChecker((await res.json()) as OpenApiDocument);
  });
  after(() => server.close());

  /** Sends a request and checks its answer against the document; returns status and body text. */
  async function call(method: string, path: string, init: { body?: string | Uint8Array; headers?: Record<string, string>; query?: string; auth?: boolean } = {}) {
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(PARAMS[name] ?? 'x'));
    const headers: Record<string, string> = { ...(init.auth === false ? {} : { Authorization: `Bearer ${token}` }), ...init.headers };
    if (typeof init.body === 'string' && !('Content-Type' in headers)) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${server.url}${url}${init.query ?? ''}`, { method, headers, body: init.body });
    const text = await res.text();
    checker.check(method, path, res, text);
    return { status: res.status, text };
  }

  test('is OpenAPI 3.1 with its component schemas valid JSON Schema 2020-12', () => {
    assert.equal(checker.doc.openapi, '3.1.0');
    assert.ok(Object.keys(checker.doc.paths).length >= 20);
  });

  test('every documented operation exists on the server (no 404 "no route", no 405)', async () => {
    for (const [path, operations] of Object.entries(checker.doc.paths)) {
      for (const method of Object.keys(operations)) {
        const url = path.replace(/\{(\w+)\}/g, (_, name: string) => PARAMS[name] ?? 'x');
        // No body: each operation answers its own 4xx (or 200) — never the router's.
        const res = await fetch(`${server.url}${url}`, { method: method.toUpperCase(), headers: { Authorization: `Bearer ${token}` } });
        const text = await res.text();
        assert.notEqual(res.status, 405, `${method} ${path}: ${text}`);
        assert.ok(!text.includes('urn:affinity:problem:not-found'), `${method} ${path} is routed: ${text.slice(0, 200)}`);
      }
    }
  });

  test('representative requests of every operation answer documented statuses with bodies matching the schemas', async () => {
    await call('GET', '/health', { auth: false });
    await waitFor('ready', async () => ((await fetch(`${server.url}/ready`)).status === 200 ? true : undefined));
    await call('GET', '/ready', { auth: false });
    await call('GET', '/metrics', { auth: false });
    await call('GET', '/api/openapi.json', { auth: false });
    await call('GET', '/docs', { auth: false });
    await call('GET', '/docs/{asset}', { auth: false });
    const basic = `Basic ${Buffer.from(`${server.demoClient!.clientId}:${server.demoClient!.clientSecret}`).toString('base64')}`;
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    assert.equal((await call('POST', '/api/oauth/token', { auth: false, headers: { ...form, Authorization: basic }, body: 'grant_type=client_credentials' })).status, 200);
    assert.equal((await call('POST', '/api/oauth/token', { auth: false, headers: form, body: 'grant_type=client_credentials&client_id=nobody&client_secret=x' })).status, 401);
    await call('GET', '/.well-known/jwks.json', { auth: false });

    // Items
    assert.equal((await call('PUT', '/api/{environment}/items/{item_type}/{item_id}', { body: JSON.stringify(article('oa-1')) })).status, 200);
    assert.equal((await call('PUT', '/api/{environment}/items/{item_type}/{item_id}', { body: '{' })).status, 422);
    assert.equal((await call('POST', '/api/{environment}/items/{item_type}', { body: JSON.stringify(article('oa-2')) })).status, 200);
    assert.equal((await call('GET', '/api/{environment}/items/{item_type}/{item_id}')).status, 200);
    assert.equal((await call('GET', '/api/{environment}/items/{item_type}')).status, 200);
    assert.equal((await call('POST', '/api/{environment}/items/{item_type}/{item_id}/disable')).status, 200);
    assert.equal((await call('POST', '/api/{environment}/items/{item_type}/{item_id}/enable')).status, 200);
    assert.equal((await call('GET', '/api/{environment}/items/{item_type}', { query: '?limit=0' })).status, 400);
    assert.equal((await call('GET', '/api/{environment}/items/{item_type}/{item_id}', { auth: false })).status, 401);

    // Events
    const visit = { event_type: 'detail_pageview', page_type: 'article_detail', device_id: 'd-1', user_id: 'u-1', channel: 'www-desktop', action_item: 'oa-1', action_item_type: 'article' };
    assert.equal((await call('POST', '/api/{environment}/events', { auth: false, body: JSON.stringify({ events: [visit] }) })).status, 200);
    assert.equal((await call('POST', '/api/{environment}/events', { auth: false, body: JSON.stringify({ events: [{ event_type: 'purchase' }] }) })).status, 400);
    assert.equal((await call('POST', '/api/{environment}/events', { auth: false, body: 'not json' })).status, 415);
    assert.equal((await call('GET', '/api/{environment}/events')).status, 200);

    // Recommendations
    const request = { page_type: 'home', channel: 'www-desktop', device_id: 'd-1', user_id: 'u-1', lists: [{ list_name: 'popular', list_size: 5 }] };
    const rec = await call('POST', '/api/{environment}/recommendations/requests', { body: JSON.stringify(request) });
    assert.equal(rec.status, 200);
    const listKey = (JSON.parse(rec.text) as { lists: Array<{ list_key?: string }> }).lists[0]!.list_key!;
    assert.equal((await call('POST', '/api/{environment}/recommendations/requests', { body: JSON.stringify({ ...request, lists: [] }) })).status, 400);
    assert.equal((await call('GET', '/api/{environment}/recommendations/lists', { query: `?list_key=${encodeURIComponent(listKey)}&offset=1&limit=2` })).status, 200);
    assert.equal((await call('GET', '/api/{environment}/recommendations/lists', { query: '?list_key=gone&offset=1&limit=2' })).status, 404);

    // Reports and model
    assert.equal((await call('GET', '/api/{environment}/reports')).status, 200);
    assert.equal((await call('GET', '/api/{environment}/reports', { query: '?granularity=hour&breakdown=channel' })).status, 200);
    assert.equal((await call('GET', '/api/{environment}/reports', { query: '?from=2024-02-01&to=2024-01-01' })).status, 400);
    assert.equal((await call('GET', '/api/{environment}/reports/ab')).status, 200);
    assert.equal((await call('GET', '/api/{environment}/reports/items', { query: '?limit=5' })).status, 200);
    assert.equal((await call('GET', '/dashboard', { auth: false })).status, 200);
    assert.equal((await call('GET', '/dashboard/{file}', { auth: false })).status, 200);
    assert.equal((await call('POST', '/api/{environment}/model/rebuild')).status, 200);

    // Feeds
    PARAMS.feed_id = 'oa-feed';
    // A public host: loopback and private addresses are refused at registration (SECURITY.md).
    const feed = { feed_id: 'oa-feed', url: 'http://feeds.example.com/feed.xml', format: 'rss', item_type: 'article', interval: '1d' };
    assert.equal((await call('POST', '/api/{environment}/feeds', { body: JSON.stringify(feed) })).status, 201);
    assert.equal((await call('POST', '/api/{environment}/feeds', { body: JSON.stringify({ ...feed, format: 'gopher' }) })).status, 400);
    assert.equal((await call('GET', '/api/{environment}/feeds')).status, 200);
    assert.equal((await call('GET', '/api/{environment}/feeds/{feed_id}')).status, 200);
    assert.equal((await call('PUT', '/api/{environment}/feeds/{feed_id}', { body: JSON.stringify({ ...feed, interval: '2d' }) })).status, 200);
    const poll = await call('POST', '/api/{environment}/feeds/{feed_id}/poll');
    assert.ok([200, 202].includes(poll.status), poll.text);
    assert.equal((await call('DELETE', '/api/{environment}/feeds/{feed_id}')).status, 200);
    assert.equal((await call('GET', '/api/{environment}/feeds/{feed_id}')).status, 404);

    // Imports
    const csv = ['operation,item_id,item_type,title', 'ADD,oa-csv-1,article,From CSV'].join('\n');
    const upload = await call('POST', '/api/{environment}/imports', { headers: { 'Content-Type': 'text/csv' }, body: csv });
    assert.equal(upload.status, 202);
    PARAMS.import_id = (JSON.parse(upload.text) as { import_id: string }).import_id;
    assert.equal((await call('GET', '/api/{environment}/imports')).status, 200);
    assert.equal((await call('GET', '/api/{environment}/imports/{import_id}')).status, 200);

    assert.equal((await call('DELETE', '/api/{environment}/items/{item_type}/{item_id}')).status, 200);
    assert.equal((await call('GET', '/api/{environment}/items/{item_type}/{item_id}')).status, 404);

    const all = Object.entries(checker.doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    assert.deepEqual(all.filter((op) => !checker.checked.has(op)), [], 'every operation had a response checked');
  });

  test('/docs is Swagger UI loading its assets from this server, not a CDN', async () => {
    const page = await (await fetch(`${server.url}/docs`)).text();
    assert.match(page, /SwaggerUIBundle\(\{ url: '\/api\/openapi\.json'/);
    assert.doesNotMatch(page, /https?:\/\//, 'no external URL');
    const bundle = await fetch(`${server.url}/docs/swagger-ui-bundle.js`);
    assert.equal(bundle.status, 200);
    assert.match(bundle.headers.get('content-type') ?? '', /javascript/);
    assert.equal((await fetch(`${server.url}/docs/..%2Fpackage.json`)).status, 404);
  });
});
