// The token endpoint under guessing (issue 16): a bucket per source address and per client id,
// a temporary lockout after repeated failures that the right secret outlives, a counter of
// failed attempts on /health, the fast hash with old scrypt hashes still verifying (and
// migrated), and bearer tokens with an impossible iat or exp refused.
import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { SignJWT, importJWK, type JWK } from 'jose';
import { open } from 'lmdb';
import { sharedDataDir, startServer, type TestServer } from '../helpers/server.ts';
import { assertProblem } from '../helpers/problem.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';

interface Client {
  clientId: string;
  clientSecret: string;
}

const LIMITS = { addressBurst: 1000, addressPerMinute: 60_000, clientBurst: 1000, clientPerMinute: 60_000, lockoutFailures: 1000, lockoutSec: 60 };

function requestToken(server: TestServer, client: Client): Promise<Response> {
  return fetch(`${server.url}/api/oauth/token`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
}

async function assert429(res: Response): Promise<number> {
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After: ${res.headers.get('retry-after')}`);
  const body = (await res.json()) as { error: string; error_description: string };
  assert.equal(body.error, 'temporarily_unavailable');
  assert.ok(body.error_description.length > 0);
  return retryAfter;
}

async function tokenStats(server: TestServer): Promise<Record<string, number>> {
  const health = (await (await fetch(`${server.url}/health`)).json()) as { token_endpoint: Record<string, number> };
  return health.token_endpoint;
}

test('a client id is locked after repeated wrong secrets, the right secret works again once the lockout ends, and failures are counted', async (t) => {
  const server = await startServer({ config: { auth: { tokenEndpoint: { ...LIMITS, lockoutFailures: 3, lockoutSec: 1 } } } });
  t.after(() => server.close());
  const right = server.demoClient!;
  const wrong = { ...right, clientSecret: 'guess' };
  const before = await snapshotStore(server.dataDir);
  for (let i = 0; i < 3; i++) assert.equal((await requestToken(server, wrong)).status, 401, `guess ${i}`);
  // Locked: even the right secret waits, and nothing was stored by any of it.
  const retryAfter = await assert429(await requestToken(server, right));
  assert.ok(retryAfter <= 1);
  assertSameStore(await snapshotStore(server.dataDir), before);
  assert.deepEqual(await tokenStats(server), { failed_attempts: 3, rate_limited: 0, locked_out: 1, lockouts: 1 });
  await sleep(retryAfter * 1000 + 100);
  assert.equal((await requestToken(server, right)).status, 200, 'the right secret works after the lockout');
  // A success forgets the failures: three more guesses are needed for the next lockout.
  for (let i = 0; i < 2; i++) assert.equal((await requestToken(server, wrong)).status, 401);
  assert.equal((await requestToken(server, right)).status, 200);
});

test('one source address gets its burst, then 429 with Retry-After before any secret is checked', async (t) => {
  const server = await startServer({ config: { auth: { tokenEndpoint: { ...LIMITS, addressBurst: 5, addressPerMinute: 1 } } } });
  t.after(() => server.close());
  const guesses = Array.from({ length: 5 }, (_, i) => ({ clientId: `ac_guess${i}`, clientSecret: 'x' }));
  for (const guess of guesses) assert.equal((await requestToken(server, guess)).status, 401);
  const before = await snapshotStore(server.dataDir);
  const retryAfter = await assert429(await requestToken(server, server.demoClient!));
  assert.ok(retryAfter >= 30, `one request a minute: Retry-After ${retryAfter}`);
  assertSameStore(await snapshotStore(server.dataDir), before);
  const stats = await tokenStats(server);
  assert.equal(stats.failed_attempts, 5);
  assert.equal(stats.rate_limited, 1);
  // Other endpoints are not limited by it.
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
});

test('one client id gets its burst, then 429, whatever the address', async (t) => {
  const server = await startServer({ config: { auth: { tokenEndpoint: { ...LIMITS, clientBurst: 2, clientPerMinute: 1 } } } });
  t.after(() => server.close());
  const client = server.demoClient!;
  assert.equal((await requestToken(server, client)).status, 200);
  assert.equal((await requestToken(server, client)).status, 200);
  await assert429(await requestToken(server, client));
  // Another id is not affected.
  assert.equal((await requestToken(server, { clientId: 'ac_other', clientSecret: 'x' })).status, 401);
});

test('a client secret stored as scrypt by an earlier version still verifies and is rewritten as the fast hash', async (t) => {
  const shared = sharedDataDir();
  t.after(() => shared.close());
  const first = shared.track(await startServer({ dataDir: shared.dataDir }));
  const client = first.demoClient!;
  await first.stop();
  // The record as the previous version wrote it: scrypt N=16384, r=8, p=1, 32 bytes.
  const root = open({ path: join(shared.dataDir, 'db'), maxDbs: 16 });
  const clients = root.openDB({ name: 'clients' });
  const salt = randomBytes(16);
  const hash = scryptSync(client.clientSecret, salt, 32, { N: 16384, r: 8, p: 1 });
  const record = clients.get(client.clientId) as { secretHash: string };
  assert.match(record.secretHash, /^hmac-sha256\$/, 'new clients get the fast hash');
  await clients.put(client.clientId, { ...record, secretHash: ['scrypt', 16384, 8, 1, salt.toString('base64url'), hash.toString('base64url')].join('$') });
  await root.close();

  const second = shared.track(await startServer({ dataDir: shared.dataDir }));
  assert.equal((await requestToken(second, { ...client, clientSecret: 'wrong' })).status, 401);
  assert.equal((await requestToken(second, client)).status, 200);
  await second.stop();
  const after = open({ path: join(shared.dataDir, 'db'), maxDbs: 16, readOnly: true });
  const migrated = after.openDB({ name: 'clients' }).get(client.clientId) as { secretHash: string };
  await after.close();
  assert.match(migrated.secretHash, /^hmac-sha256\$/);
  const third = shared.track(await startServer({ dataDir: shared.dataDir }));
  assert.equal((await requestToken(third, client)).status, 200, 'the migrated hash verifies');
});

test('bearer tokens issued in the future or living longer than the token lifetime are refused with 401', async (t) => {
  const server = await startServer({ env: { AFFINITY_TOKEN_TTL_SEC: '600' } });
  t.after(() => server.close());
  const jwk = JSON.parse(readFileSync(join(server.dataDir, 'keys', 'token-signing-key.json'), 'utf8')) as JWK;
  const key = await importJWK(jwk, 'ES256');
  const now = Math.floor(Date.now() / 1000);
  const sign = (iat: number, exp: number) =>
    new SignJWT({ environments: ['demo'] })
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid!, typ: 'at+jwt' })
      .setIssuer('affinity')
      .setAudience('affinity-api')
      .setSubject(server.demoClient!.clientId)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(key);
  const read = (token: string) => fetch(`${server.url}/api/demo/items/article/none`, { headers: { Authorization: `Bearer ${token}` } });
  // Within the skew and the lifetime: accepted (404: the item is unknown, the token is fine).
  assert.equal((await read(await sign(now + 30, now + 600))).status, 404);
  const cases: Array<[string, string, RegExp]> = [
    ['iat an hour ahead', await sign(now + 3600, now + 3900), /issued in the future/],
    ['exp a year ahead', await sign(now, now + 365 * 86400), /token lifetime/],
    ['exp just past lifetime and skew', await sign(now, now + 600 + 600), /token lifetime/],
  ];
  for (const [name, token, detail] of cases) {
    const before = await snapshotStore(server.dataDir);
    const problem = await assertProblem(await read(token), 401, 'unauthorized');
    assert.match(problem.detail, detail, name);
    assertSameStore(await snapshotStore(server.dataDir), before);
  }
});
