import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getToken, runCli } from '../helpers/auth.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

interface Credentials {
  client_id: string;
  client_secret: string;
}

function tokenRequest(server: TestServer, clientId: string, clientSecret: string): Promise<Response> {
  return fetch(`${server.url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });
}

test('the client CLI manages clients on the data directory of a running server', async (t) => {
  const server = await startServer();
  t.after(() => server.close());
  const env = { AFFINITY_DATA_DIR: server.dataDir };
  const created: Credentials[] = [];

  await t.test('client create --env demo prints one JSON line of credentials that work at the token endpoint', async () => {
    const out = await runCli(['client', 'create', '--env', 'demo'], env);
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, out.stdout);
    assert.ok(out.stdout.endsWith('\n'));
    const credentials = JSON.parse(lines[0]!) as Credentials;
    assert.deepEqual(Object.keys(credentials).sort(), ['client_id', 'client_secret']);
    assert.equal(typeof credentials.client_id, 'string');
    assert.ok(credentials.client_secret.length >= 32, 'the secret is long');
    created.push(credentials);

    const res = await tokenRequest(server, credentials.client_id, credentials.client_secret);
    assert.equal(res.status, 200);
    const token = (await res.json()) as { access_token: string; scope: string };
    assert.equal(token.scope, 'demo');
    const item = await fetch(`${server.url}/api/demo/items/article/none`, { headers: { Authorization: `Bearer ${token.access_token}` } });
    assert.equal(item.status, 404, 'the token is accepted on the items routes');
  });

  await t.test('client create without --env exits 2 (a usage error) with a message on stderr and prints nothing', async () => {
    const out = await runCli(['client', 'create'], env);
    assert.equal(out.code, 2);
    assert.equal(out.stdout, '');
    assert.match(out.stderr, /--env/);
  });

  await t.test('client create with an unknown environment exits 1 naming it on stderr and prints nothing', async () => {
    const out = await runCli(['client', 'create', '--env', 'nowhere'], env);
    assert.equal(out.code, 1);
    assert.equal(out.stdout, '');
    assert.match(out.stderr, /unknown environment\(s\): nowhere/);
  });

  await t.test('client list prints one JSON line per client without secret or hash', async () => {
    const second = await runCli(['client', 'create', '--env', 'demo'], env);
    assert.equal(second.code, 0, second.stderr);
    created.push(JSON.parse(second.stdout) as Credentials);

    const out = await runCli(['client', 'list'], env);
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.split('\n').filter((l) => l !== '');
    const clients = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const ids = clients.map((c) => c.client_id).sort();
    assert.deepEqual(ids, [server.demoClient!.clientId, ...created.map((c) => c.client_id)].sort());
    for (const c of clients) {
      assert.deepEqual(Object.keys(c).sort(), ['client_id', 'created_at', 'environments', 'revoked_at']);
      assert.deepEqual(c.environments, ['demo']);
      assert.equal(c.revoked_at, null);
    }
    for (const secret of [server.demoClient!.clientSecret, ...created.map((c) => c.client_secret)]) {
      assert.ok(!out.stdout.includes(secret), 'no secret in the listing');
    }
    assert.doesNotMatch(out.stdout, /scrypt|hash|secret/i);
  });

  await t.test('client revoke makes the token endpoint answer 401 invalid_client for that client only', async () => {
    const victim = created[0]!;
    const before = await tokenRequest(server, victim.client_id, victim.client_secret);
    assert.equal(before.status, 200);

    const out = await runCli(['client', 'revoke', victim.client_id], env);
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), { client_id: victim.client_id, revoked: true });

    const after = await tokenRequest(server, victim.client_id, victim.client_secret);
    assert.equal(after.status, 401);
    assert.equal(((await after.json()) as { error: string }).error, 'invalid_client');
    await getToken(server); // the demo client still works

    const list = await runCli(['client', 'list'], env);
    const entry = list.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { client_id: string; revoked_at: string | null })
      .find((c) => c.client_id === victim.client_id);
    assert.equal(typeof entry?.revoked_at, 'string', 'the listing shows the revocation time');
  });

  await t.test('client revoke of an unknown id exits 1 with a message on stderr', async () => {
    const out = await runCli(['client', 'revoke', 'ac_doesnotexist'], env);
    assert.equal(out.code, 1);
    assert.equal(out.stdout, '');
    assert.match(out.stderr, /no client 'ac_doesnotexist'/);
  });
});
