// The token endpoint with a client id longer than any stored key: a 401 invalid_client, never a
// 500 (the lookup of a key past LMDB's 1,978 bytes threw; found by the fuzz test), nothing stored.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(() => server.close());

for (const [name, clientId] of [
  ['a 3,000-character client id', 'x'.repeat(3000)],
  ['a 257-character client id', 'a'.repeat(257)],
] as const) {
  test(`${name} in the form answers 401 invalid_client and stores nothing`, async () => {
    const stored = await snapshotStore(server.dataDir);
    const res = await fetch(`${server.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'secret' }),
    });
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { error: 'invalid_client', error_description: 'Client authentication failed' });
    assertSameStore(await snapshotStore(server.dataDir), stored);
  });

  test(`${name} in HTTP Basic answers 401 invalid_client`, async () => {
    const res = await fetch(`${server.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${clientId}:secret`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { error: string }).error, 'invalid_client');
  });
}
