// Server-side request forgery through feeds (issue 16): a feed URL whose literal host is internal
// is refused at registration; a name that resolves to an internal address, or a redirect to one,
// is refused at fetch time with the same message as a closed port; an operator's allowance per
// environment lets a named internal host through, and redirects stay checked at every hop.
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { apiClient, type Api } from '../helpers/api.ts';
import { getToken } from '../helpers/auth.ts';
import { startFeedServer, type FeedServer } from '../helpers/feed-server.ts';
import { assertFieldErrors, assertProblem } from '../helpers/problem.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';

interface Feed {
  feed_id: string;
  status: { state: string; last_error: string | null; http_status?: number | null };
}

const RSS = '<rss version="2.0"><channel><item><guid>ssrf-1</guid><title>Secret</title></item></channel></rss>';

let feeds: FeedServer;
let feedPort: number;
before(async () => {
  feeds = await startFeedServer();
  feedPort = Number(new URL(feeds.url).port);
  feeds.route('/feed.rss', { headers: { 'Content-Type': 'application/rss+xml' }, body: RSS });
});
after(() => feeds?.close());

describe('an environment without an allowance', () => {
  let server: TestServer;
  let api: Api;
  before(async () => {
    server = await startServer({ config: { ingest: { feeds: { retries: 0 } } } });
    api = apiClient(server, await getToken(server));
  });
  after(() => server?.close());

  const internal = () => [
    `http://127.0.0.1:${server.port}/health`,
    `http://localhost:${feedPort}/feed.rss`,
    `http://LOCALHOST./feed.rss`,
    'http://api.localhost/feed.rss',
    'http://2130706433/feed.rss',
    'http://0x7f000001/feed.rss',
    'http://0177.0.0.1/feed.rss',
    'http://127.1/feed.rss',
    'http://[::1]/feed.rss',
    'http://[::ffff:127.0.0.1]/feed.rss',
    'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]/feed.rss',
    'http://10.0.0.1/feed.rss',
    'http://172.16.5.4/feed.rss',
    'http://192.168.1.1/feed.rss',
    'http://100.64.0.1/feed.rss',
    'http://[fd12:3456::1]/feed.rss',
    'http://0.0.0.0/feed.rss',
    'http://[::]/feed.rss',
    'http://224.0.0.1/feed.rss',
    'http://255.255.255.255/feed.rss',
  ];

  test('POST and PUT of a feed whose literal host is internal answer 400 on url, store nothing and fetch nothing', async () => {
    const requestsBefore = feeds.requests('/feed.rss').length;
    const token = await getToken(server);
    for (const url of internal()) {
      const before = await snapshotStore(server.dataDir);
      for (const [method, path] of [['POST', '/api/demo/feeds'], ['PUT', '/api/demo/feeds/internal']] as const) {
        const res = await fetch(`${server.url}${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ url, format: 'rss', item_type: 'article' }),
        });
        const problem = await assertProblem(res, 400, 'invalid-request');
        assertFieldErrors(problem, [['/url', /internal/]]);
      }
      assertSameStore(await snapshotStore(server.dataDir), before, url);
    }
    assert.equal(feeds.requests('/feed.rss').length, requestsBefore, 'nothing was fetched');
  });

  test('a name that resolves to an internal address is fetched never: open and closed ports fail with the same message', async () => {
    // This machine's own name resolves to one of its addresses, which are internal here.
    const own = hostname();
    const { address } = await lookup(own);
    assert.ok(/^(127\.|10\.|172\.(1[6-9]|2\d|3[01])\.|192\.168\.|::1$|f[cd])/.test(address), `${own} resolves to ${address}`);
    const open = await api<Feed>('POST', '/api/demo/feeds', { feed_id: 'open', url: `http://${own}:${feedPort}/feed.rss`, format: 'rss', item_type: 'article', interval: '1d' });
    assert.equal(open.status, 201, open.text);
    const closed = await api<Feed>('POST', '/api/demo/feeds', { feed_id: 'closed', url: `http://${own}:9/feed.rss`, format: 'rss', item_type: 'article', interval: '1d' });
    assert.equal(closed.status, 201, closed.text);
    const requestsBefore = feeds.requests('/feed.rss').length;
    const openStatus = (await api<Feed>('POST', '/api/demo/feeds/open/poll')).body.status;
    const closedStatus = (await api<Feed>('POST', '/api/demo/feeds/closed/poll')).body.status;
    assert.equal(openStatus.state, 'error');
    assert.equal(openStatus.last_error, closedStatus.last_error);
    assert.match(openStatus.last_error!, /^fetch: the feed could not be reached/);
    assert.equal(feeds.requests('/feed.rss').length, requestsBefore, 'the internal server saw no request');
    const item = await api('GET', '/api/demo/items/article/ssrf-1');
    assert.equal(item.status, 404, 'nothing of the internal response became an item');
    // The reason is in the log, for the operator.
    assert.ok(server.logs.some((l) => l.includes('feed fetch failed') && l.includes('refused')), 'the refusal is logged');
  });
});

describe('an environment that allows one internal host by name', () => {
  let server: TestServer;
  let api: Api;
  before(async () => {
    server = await startServer({
      config: { ingest: { feeds: { retries: 0 } }, environments: { demo: { itemTypes: ['article'], outbound: { allow: ['localhost'] } } } },
    });
    api = apiClient(server, await getToken(server));
    feeds.route('/to-allowed', { status: 302, headers: { Location: `http://localhost:${feedPort}/feed.rss` } });
    feeds.route('/to-literal', { status: 302, headers: { Location: `http://127.0.0.1:${feedPort}/feed.rss` } });
    feeds.route('/to-metadata', { status: 307, headers: { Location: 'http://169.254.169.254/latest/meta-data/' } });
    for (let i = 0; i < 6; i++) feeds.route(`/hop${i}`, { status: 301, headers: { Location: `/hop${i + 1}` } });
    feeds.route('/hop6', { headers: { 'Content-Type': 'application/rss+xml' }, body: RSS });
  });
  after(() => server?.close());

  async function pollOnce(feedId: string, path: string): Promise<Feed['status']> {
    const added = await api('POST', '/api/demo/feeds', { feed_id: feedId, url: `http://localhost:${feedPort}${path}`, format: 'rss', item_type: 'article', interval: '1d' });
    assert.equal(added.status, 201, added.text);
    const res = await api<Feed>('POST', `/api/demo/feeds/${feedId}/poll`);
    assert.equal(res.status, 200, res.text);
    return res.body.status;
  }

  test('the allowed host is polled and a redirect to it is followed', async () => {
    const status = await pollOnce('allowed', '/to-allowed');
    assert.equal(status.state, 'applied', status.last_error ?? '');
    assert.equal((await api('GET', '/api/demo/items/article/ssrf-1')).status, 200);
  });

  test('a redirect to an address the allowance does not name is refused at that hop, with the uniform message', async () => {
    const before = feeds.requests('/feed.rss').length;
    for (const [feedId, path] of [['literal', '/to-literal'], ['metadata', '/to-metadata']]) {
      const status = await pollOnce(feedId!, path!);
      assert.equal(status.state, 'error');
      assert.match(status.last_error!, /^fetch: the feed could not be reached/);
    }
    assert.equal(feeds.requests('/feed.rss').length, before, 'the redirect target was not fetched');
  });

  test('more than 5 redirects are not followed', async () => {
    const status = await pollOnce('hops', '/hop0');
    assert.equal(status.state, 'error');
    assert.match(status.last_error!, /^fetch: the feed could not be reached/);
    assert.equal(feeds.requests('/hop6').length, 0);
    assert.equal(feeds.requests('/hop5').length, 1, 'five redirects were followed');
  });

  test('a literal internal address is still refused at registration: the allowance names a host, not every address', async () => {
    const before = await snapshotStore(server.dataDir);
    const res = await fetch(`${server.url}/api/demo/feeds`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${await getToken(server)}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${feedPort}/feed.rss`, format: 'rss', item_type: 'article' }),
    });
    assertFieldErrors(await assertProblem(res, 400, 'invalid-request'), [['/url', /internal/]]);
    assertSameStore(await snapshotStore(server.dataDir), before);
  });
});

test("an external identity provider's JWKS URL goes through the same guard: a name resolving internal is never fetched", async (t) => {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' };
  let jwksRequests = 0;
  const idp = createServer((_req, res) => {
    jwksRequests++;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => idp.close(() => resolve())));
  const port = (idp.address() as AddressInfo).port;
  const server = await startServer({
    config: { auth: { external: { issuer: 'https://idp.test', audience: 'affinity', jwksUrl: `http://${hostname()}:${port}/jwks`, environmentsClaim: 'envs' } } },
  });
  t.after(() => server.close());
  const token = await new SignJWT({ envs: ['demo'] })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer('https://idp.test')
    .setAudience('affinity')
    .setSubject('user-1')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(privateKey);
  const res = await fetch(`${server.url}/api/demo/items/article/x`, { headers: { Authorization: `Bearer ${token}` } });
  await assertProblem(res, 401, 'unauthorized');
  assert.equal(jwksRequests, 0, 'the internal JWKS server saw no request');
});
