// The typed TypeScript client (clients/typescript) against a real server: its generated types
// match the server's OpenAPI document, the token is shared and renewed before it expires,
// 503 answers and network errors are retried (waiting Retry-After), and events are batched.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { createAffinityClient, type AffinityClientOptions } from '../../clients/typescript/client.ts';
import { openApiToTypeScript, SCHEMA_FILE } from '../../scripts/openapi-types.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

before(async () => {
  // Tokens live 3 s, so a renewal before expiry is seen within the test.
  server = await startServer({ env: { AFFINITY_TOKEN_TTL_SEC: '3' } });
});
after(() => server?.close());

/** A fetch that records every request (method and path, and whether it carried a token). */
function recordingFetch(seen: string[], fault?: (n: number, request: Request) => Response | Error | undefined): typeof fetch {
  let n = 0;
  return async (input, init) => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname;
    seen.push(`${request.method} ${path}${request.headers.has('authorization') && !path.endsWith('/token') ? ' (token)' : ''}`);
    const injected = fault?.(n++, request);
    if (injected instanceof Error) throw injected;
    if (injected) return injected;
    return fetch(request);
  };
}

const options = (extra: Partial<AffinityClientOptions> = {}): AffinityClientOptions => ({
  baseUrl: server.url,
  clientId: server.demoClient!.clientId,
  clientSecret: server.demoClient!.clientSecret,
  environment: 'demo',
  ...extra,
});

test('the committed client types are the ones generated from the running server OpenAPI document', async () => {
  const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as Record<string, unknown>;
  assert.equal(readFileSync(SCHEMA_FILE, 'utf8'), openApiToTypeScript(doc), 'run scripts/openapi-types.ts against a server and commit clients/typescript/schema.ts');
});

test('one token serves concurrent calls and is renewed before it expires', async () => {
  const seen: string[] = [];
  const client = createAffinityClient(options({ refreshBeforeSec: 2, fetch: recordingFetch(seen) }));
  const calls = await Promise.all(Array.from({ length: 4 }, () => client.api.GET('/api/{environment}/reports', { params: { path: { environment: 'demo' } } })));
  for (const { response, data } of calls) {
    assert.equal(response.status, 200);
    assert.ok(Array.isArray(data?.rows));
  }
  assert.equal(seen.filter((s) => s === 'POST /api/oauth/token').length, 1);
  // 3 s tokens renewed 2 s before expiry: after 1.1 s the next call renews first.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const { response } = await client.api.GET('/api/{environment}/reports/ab', { params: { path: { environment: 'demo' } } });
  assert.equal(response.status, 200);
  assert.equal(seen.filter((s) => s === 'POST /api/oauth/token').length, 2);
  assert.ok(seen.filter((s) => s.startsWith('GET')).every((s) => s.endsWith('(token)')));
});

test('a network error and a 503 are retried, waiting the Retry-After the server asked for', async () => {
  const seen: string[] = [];
  const fault = (n: number) => (n === 1 ? new TypeError('fetch failed') : n === 2 ? new Response(null, { status: 503, headers: { 'Retry-After': '1' } }) : undefined);
  const client = createAffinityClient(options({ retryBaseMs: 10, fetch: recordingFetch(seen, fault) }));
  const started = Date.now();
  const { response, data } = await client.api.GET('/api/{environment}/reports/items', { params: { path: { environment: 'demo' }, query: { limit: 5 } } });
  assert.equal(response.status, 200);
  assert.deepEqual(data?.clicked, []);
  assert.deepEqual(seen, ['POST /api/oauth/token', 'GET /api/demo/reports/items (token)', 'GET /api/demo/reports/items (token)', 'GET /api/demo/reports/items (token)']);
  assert.ok(Date.now() - started >= 1000, 'waited the 1 s of Retry-After');
});

test('a 400 is not retried and its problem reaches the caller typed', async () => {
  const seen: string[] = [];
  const client = createAffinityClient(options({ fetch: recordingFetch(seen) }));
  const { response, error } = await client.api.GET('/api/{environment}/reports', { params: { path: { environment: 'demo' }, query: { from: '2024-03-10', to: '2024-03-01' } } });
  assert.equal(response.status, 400);
  assert.match(String((error as { detail?: string }).detail), /on or before/);
  assert.equal(seen.filter((s) => s.startsWith('GET')).length, 1);
});

test('tracked events are sent in batches of maxBatch without a token, each stored once', async () => {
  const seen: string[] = [];
  const client = createAffinityClient(options({ maxBatch: 100, batchMs: 50, fetch: recordingFetch(seen) }));
  for (let i = 0; i < 250; i++) {
    client.track({ event_type: 'page_visit', page_type: 'home', device_id: 'client-test-device', user_id: null, channel: 'www' });
  }
  await client.close();
  assert.equal(client.pendingEvents, 0);
  assert.deepEqual(seen, ['POST /api/demo/events', 'POST /api/demo/events', 'POST /api/demo/events']);
  const token = await client.token();
  const recent = await fetch(`${server.url}/api/demo/events?limit=1000`, { headers: { Authorization: `Bearer ${token}` } });
  const { events } = (await recent.json()) as { events: Array<{ device_id?: string }> };
  assert.equal(events.filter((e) => e.device_id === 'client-test-device').length, 250);
});
