// HTTP edges found by the hardening audit (issue 16), against the real server over real sockets:
// report query parameters checked before use, HEAD answered without a body, unknown
// Content-Encoding refused, an oversized body answered (not reset), and the keep-alive hint.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { getToken } from '../helpers/auth.ts';
import { assertFieldErrors, assertProblem } from '../helpers/problem.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';

let server: TestServer;
let token: string;

before(async () => {
  server = await startServer({ env: { AFFINITY_MAX_BODY_BYTES: String(64 * 1024) } });
  token = await getToken(server);
  // Something stored, so "nothing changed" compares a non-empty store.
  const put = await fetch(`${server.url}/api/demo/items/article/edge-1`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ environment: 'demo', item_id: 'edge-1', item_type: 'article', title: 'Edge' }),
  });
  assert.equal(put.status, 200);
});
after(() => server?.close());

/**
 * Writes raw bytes on one connection and collects what the server sends until `responses`
 * complete responses arrived (HEAD ones counted by `headRequests`), the server closes, or
 * `idleMs` pass quietly.
 */
function rawExchange(
  bytes: Array<string | Buffer>,
  responses: number,
  headRequests: number[] = [],
  idleMs = 3000,
): Promise<{ text: string; error?: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket: Socket = connect(server.port, '127.0.0.1');
    let text = '';
    let error: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, ...(error ? { error } : {}), closed });
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => done(false), idleMs);
    };
    socket.on('connect', () => {
      for (const b of bytes) socket.write(b);
      arm();
    });
    socket.on('data', (d) => {
      text += d.toString('latin1');
      arm();
      try {
        if (parseResponses(text, headRequests).length >= responses) done(false);
      } catch {
        // Not complete yet.
      }
    });
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => done(true));
  });
}

/** Splits a raw HTTP/1.1 stream into responses (status, headers, body) using Content-Length. */
type RawResponse = { status: number; headers: Record<string, string>; body: string };

function parseResponses(text: string, headRequests: number[] = []): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`truncated response: ${JSON.stringify(rest)}`);
    if (rest.length < end + 4) throw new Error('truncated body');
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = headRequests.includes(out.length) ? 0 : Number(headers['content-length'] ?? 0);
    if (rest.length < end + 4 + length) throw new Error('truncated body');
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

describe('GET /reports checks every query parameter before using it', () => {
  const cases: Array<[query: string, errors: Array<[string, RegExp?]>]> = [
    ['to=x', [['to', /date/]]],
    ['to=2147483648', [['to', /date/]]],
    ['to=0x10', [['to', /date/]]],
    ['to=2024-02-30', [['to', /date/]]],
    ['from=x&to=2024-01-10', [['from', /date/]]],
    ['from=2024-01-10&to=2024-01-01', [['from', /on or before/]]],
    ['from=2020-01-01&to=2024-01-01', [['from', /366 days/]]],
    ['to=2024-01-01&to=2024-01-02', [['to', /once/]]],
    ['day=2024-01-01', [['day', /not a query parameter/]]],
  ];
  for (const [query, errors] of cases) {
    test(`GET /reports?${query} answers 400 naming the parameter and stores nothing`, async () => {
      const before = await snapshotStore(server.dataDir);
      const res = await fetch(`${server.url}/api/demo/reports?${query}`, { headers: { Authorization: `Bearer ${token}` } });
      assertFieldErrors(await assertProblem(res, 400, 'invalid-request'), errors);
      assertSameStore(await snapshotStore(server.dataDir), before);
    });
  }

  test('GET /reports?to=<a day> without from answers 200 with the seven days up to it', async () => {
    const res = await fetch(`${server.url}/api/demo/reports?to=2024-03-01`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { from: string; to: string };
    assert.deepEqual([body.from, body.to], ['2024-02-24', '2024-03-01']);
  });
});

describe('HEAD', () => {
  test('HEAD on a GET route answers like GET, without a body, and the next response on the connection is read intact', async () => {
    const get = await fetch(`${server.url}/health`);
    const getBody = await get.text();
    const { text } = await rawExchange([
      'HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n',
      `HEAD /api/demo/items/article/edge-1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      'GET /.well-known/jwks.json HTTP/1.1\r\nHost: x\r\n\r\n',
    ], 3, [0, 1]);
    const [health, item, jwks] = parseResponses(text, [0, 1]);
    assert.equal(health!.status, 200);
    assert.equal(health!.headers['content-type'], 'application/json');
    assert.equal(health!.body, '');
    // The length is what GET sent (health's counters may have moved by a digit or two).
    assert.ok(Math.abs(Number(health!.headers['content-length']) - Buffer.byteLength(getBody)) < 16);
    assert.equal(item!.status, 200);
    assert.equal(item!.body, '');
    assert.ok(Number(item!.headers['content-length']) > 0);
    assert.equal(jwks!.status, 200);
    assert.ok(JSON.parse(jwks!.body).keys.length === 1, 'the response after the HEADs parses whole');
  });

  test('HEAD on a route without GET and on an unknown path answer 405 and 404 without a body; the connection stays in step', async () => {
    const { text } = await rawExchange([
      'HEAD /api/oauth/token HTTP/1.1\r\nHost: x\r\n\r\n',
      'HEAD /nowhere HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /health HTTP/1.1\r\nHost: x\r\n\r\n',
    ], 3, [0, 1]);
    const [notAllowed, notFound, health] = parseResponses(text, [0, 1]);
    assert.equal(notAllowed!.status, 405);
    assert.equal(notAllowed!.headers.allow, 'POST');
    assert.equal(notAllowed!.body, '');
    assert.equal(notFound!.status, 404);
    assert.equal(notFound!.body, '');
    assert.equal(health!.status, 200);
    assert.equal(JSON.parse(health!.body).status, 'ok');
  });

  test('a 405 on a GET route lists HEAD in Allow', async () => {
    const res = await fetch(`${server.url}/health`, { method: 'DELETE' });
    await assertProblem(res, 405, 'method-not-allowed');
    assert.equal(res.headers.get('allow'), 'GET, HEAD');
  });
});

describe('Content-Encoding', () => {
  const bodies: Array<[name: string, path: string, body: unknown]> = [
    ['PUT item', '/api/demo/items/article/enc-1', { environment: 'demo', item_id: 'enc-1', item_type: 'article' }],
    ['POST events', '/api/demo/events', { events: [{ event_type: 'page_visit', page_type: 'home', device_id: 'd', user_id: null, channel: 'www' }] }],
    ['POST recommendations', '/api/demo/recommendations/requests', { page_type: 'home', channel: 'www', device_id: 'd', lists: [{ list_name: 'popular', list_size: 3 }] }],
    ['POST feed', '/api/demo/feeds', { url: 'https://example.com/feed.rss', format: 'rss', item_type: 'article' }],
  ];
  for (const [name, path, body] of bodies) {
    // gzip and deflate are decoded (operations.test.ts covers them, corrupt ones included).
    for (const coding of ['x-unknown', 'compress', 'br, identity']) {
      test(`${name} with Content-Encoding '${coding}' answers 415 naming it and stores nothing`, async () => {
        const before = await snapshotStore(server.dataDir);
        const res = await fetch(`${server.url}${path}`, {
          method: path.includes('/items/') ? 'PUT' : 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Encoding': coding },
          body: JSON.stringify(body),
        });
        const problem = await assertProblem(res, 415, 'unsupported-media-type');
        assert.ok(problem.detail.includes(`'${coding}'`), problem.detail);
        assertSameStore(await snapshotStore(server.dataDir), before);
      });
    }
  }

  test('Content-Encoding identity is accepted', async () => {
    const res = await fetch(`${server.url}/api/demo/items/article/enc-ok`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Encoding': 'identity' },
      body: JSON.stringify({ environment: 'demo', item_id: 'enc-ok', item_type: 'article' }),
    });
    assert.equal(res.status, 200);
  });

  test('after a 415 the connection reads the next request intact (the refused body was skipped)', async () => {
    const body = JSON.stringify({ events: [] });
    const { text } = await rawExchange([
      `POST /api/demo/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: x-unknown\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      'GET /health HTTP/1.1\r\nHost: x\r\n\r\n',
    ], 2);
    const [refused, health] = parseResponses(text);
    assert.equal(refused!.status, 415);
    assert.equal(health!.status, 200);
  });
});

describe('oversized bodies', () => {
  test('a body over the limit sent with its headers gets the 413, never a reset, in 40 tries', async () => {
    const body = Buffer.alloc(32 * 1024 * 1024, 0x61);
    for (let i = 0; i < 40; i++) {
      const { text, error } = await rawExchange([
        Buffer.concat([Buffer.from(`POST /api/demo/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`), body]),
      ], 1);
      assert.equal(error, undefined, `try ${i}: the client saw ${error}`);
      const [res] = parseResponses(text);
      assert.equal(res!.status, 413, `try ${i}`);
      assert.equal(res!.headers.connection, 'close', 'the client is told to close');
      assert.equal(JSON.parse(res!.body).type, 'urn:affinity:problem:body-too-large');
    }
  });
});

describe('keep-alive', () => {
  test('responses tell clients to stop reusing an idle connection before the server closes it', async () => {
    for (const res of [
      await fetch(`${server.url}/health`),
      await fetch(`${server.url}/nowhere`),
      await fetch(`${server.url}/api/demo/items/article/edge-1`),
    ]) {
      await res.text();
      const timeout = /^timeout=(\d+)$/.exec(res.headers.get('keep-alive') ?? '')?.[1];
      // uWS closes idle connections after 10 s.
      assert.ok(timeout !== undefined && Number(timeout) >= 1 && Number(timeout) < 10, `Keep-Alive: ${res.headers.get('keep-alive')}`);
    }
  });
});
