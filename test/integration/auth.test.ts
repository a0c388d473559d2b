import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, importJWK, jwtVerify, type JWK } from 'jose';
import { getToken, runCli } from '../helpers/auth.ts';
import { type TestServer, sharedDataDir, startServer, tempDir } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';

const TWO_ENVIRONMENTS = { environments: { demo: { itemTypes: ['article'] }, shop: { itemTypes: ['product'] } } };
const ARTICLE = { environment: 'demo', item_id: 'x', item_type: 'article', title: 'Should never be stored' };

interface Client {
  clientId: string;
  clientSecret: string;
}

function basic(client: Client): string {
  return `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
}

function postToken(server: TestServer, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
}

async function assertOAuthError(res: Response, status: number, error: string): Promise<void> {
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(body.error, error);
  assert.equal(typeof body.error_description, 'string');
  assert.ok((body.error_description as string).length > 0);
  if (status === 401) assert.match(res.headers.get('www-authenticate') ?? '', /^Basic /);
}

async function assertBearer401(res: Response, detail: RegExp): Promise<void> {
  assert.equal(res.status, 401);
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer\b/);
  const body = (await res.json()) as { status: number; detail: string };
  assert.equal(body.status, 401);
  assert.match(body.detail, detail);
}

async function createClientWithCli(dataDir: string, env: string, configFile?: string): Promise<Client> {
  const extra: Record<string, string> = configFile ? { AFFINITY_CONFIG: configFile } : {};
  const out = await runCli(['client', 'create', '--env', env], { AFFINITY_DATA_DIR: dataDir, ...extra });
  assert.equal(out.code, 0, out.stderr);
  const parsed = JSON.parse(out.stdout) as { client_id: string; client_secret: string };
  return { clientId: parsed.client_id, clientSecret: parsed.client_secret };
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** Writes a JSON config file removed after the test (startServer's `config` option leaves its file behind). */
function writeConfig(t: { after(fn: () => void): void }, config: unknown): string {
  const dir = tempDir('affinity-config-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** Every regular file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

test('token endpoint, bearer checks, JWKS and secret storage on a two-environment server', async (t) => {
  // The config file is shared with the CLI, which must know the `shop` environment too.
  const configFile = writeConfig(t, TWO_ENVIRONMENTS);
  const server = await startServer({ env: { AFFINITY_CONFIG: configFile } });
  t.after(() => server.close());
  const demo = server.demoClient!;

  await t.test('client authentication by HTTP Basic gives 200 with a Bearer token and no-store', async () => {
    const res = await postToken(server, { grant_type: 'client_credentials' }, { Authorization: basic(demo) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(body.token_type, 'Bearer');
    assert.equal(typeof body.access_token, 'string');
    assert.equal(body.expires_in, 3600);
    assert.equal(body.scope, 'demo');
  });

  await t.test('client authentication by form fields gives 200 with a Bearer token and no-store', async () => {
    const res = await postToken(server, {
      grant_type: 'client_credentials',
      client_id: demo.clientId,
      client_secret: demo.clientSecret,
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const body = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 3600);
    assert.equal(body.scope, 'demo');
    const items = await fetch(`${server.url}/api/demo/items/article/none`, {
      headers: { Authorization: `Bearer ${body.access_token as string}` },
    });
    assert.equal(items.status, 404, 'the issued token is accepted by the items routes');
  });

  await t.test('a wrong secret answers 401 invalid_client with WWW-Authenticate', async () => {
    const res = await postToken(server, { grant_type: 'client_credentials' }, { Authorization: basic({ ...demo, clientSecret: 'wrong' }) });
    await assertOAuthError(res, 401, 'invalid_client');
    const form = await postToken(server, { grant_type: 'client_credentials', client_id: demo.clientId, client_secret: 'wrong' });
    await assertOAuthError(form, 401, 'invalid_client');
  });

  await t.test('an unknown client answers 401 invalid_client', async () => {
    const res = await postToken(server, { grant_type: 'client_credentials' }, { Authorization: basic({ clientId: 'ac_nobody', clientSecret: 'x' }) });
    await assertOAuthError(res, 401, 'invalid_client');
  });

  await t.test('a missing grant_type answers 400 invalid_request', async () => {
    const res = await postToken(server, {}, { Authorization: basic(demo) });
    await assertOAuthError(res, 400, 'invalid_request');
  });

  await t.test('grant_type=password answers 400 unsupported_grant_type', async () => {
    const res = await postToken(server, { grant_type: 'password', username: 'u', password: 'p' }, { Authorization: basic(demo) });
    await assertOAuthError(res, 400, 'unsupported_grant_type');
  });

  await t.test('Basic and form credentials together answer 400 invalid_request', async () => {
    const res = await postToken(
      server,
      { grant_type: 'client_credentials', client_id: demo.clientId, client_secret: demo.clientSecret },
      { Authorization: basic(demo) },
    );
    await assertOAuthError(res, 400, 'invalid_request');
  });

  await t.test('a scope naming an environment the client lacks answers 400 invalid_scope', async () => {
    const res = await postToken(server, { grant_type: 'client_credentials', scope: 'shop' }, { Authorization: basic(demo) });
    await assertOAuthError(res, 400, 'invalid_scope');
    const own = await postToken(server, { grant_type: 'client_credentials', scope: 'demo' }, { Authorization: basic(demo) });
    assert.equal(own.status, 200);
    assert.equal(((await own.json()) as { scope: string }).scope, 'demo');
  });

  await t.test('GET on the token endpoint answers 405 with Allow: POST', async () => {
    const res = await fetch(`${server.url}/api/oauth/token`);
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST');
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
  });

  // Bearer checks. Every token is built before the checks run; the revoked client's token is
  // used once before revocation so the verifier's cache holds it.
  const keyJwk = JSON.parse(readFileSync(join(server.dataDir, 'keys', 'token-signing-key.json'), 'utf8')) as JWK;
  const realKey = await importJWK(keyJwk, 'ES256');
  const nowSec = Math.floor(Date.now() / 1000);
  const claims = { environments: ['demo'] };
  const sign = (key: Parameters<SignJWT['sign']>[0], audience: string, exp: number) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: keyJwk.kid!, typ: 'at+jwt' })
      .setIssuer('affinity')
      .setAudience(audience)
      .setSubject(demo.clientId)
      .setIssuedAt(nowSec - 7200)
      .setExpirationTime(exp)
      .sign(key);
  const handMade = await sign(realKey, 'affinity-api', nowSec + 3600);
  const expired = await sign(realKey, 'affinity-api', nowSec - 3600);
  const wrongAudience = await sign(realKey, 'another-api', nowSec + 3600);
  const { privateKey: otherKey } = await generateKeyPair('ES256');
  const forged = await sign(otherKey, 'affinity-api', nowSec + 3600);
  const unsigned = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({
    iss: 'affinity',
    aud: 'affinity-api',
    sub: demo.clientId,
    environments: ['demo'],
    exp: nowSec + 3600,
  })}.`;

  const shop = await createClientWithCli(server.dataDir, 'shop', configFile);
  const shopToken = await getToken(server, shop);
  const shopUse = await fetch(`${server.url}/api/shop/items/product/none`, { headers: { Authorization: `Bearer ${shopToken}` } });
  assert.equal(shopUse.status, 404, "the shop client's token works on its own environment");

  const doomed = await createClientWithCli(server.dataDir, 'demo', configFile);
  const revokedToken = await getToken(server, doomed);
  const firstUse = await fetch(`${server.url}/api/demo/items/article/none`, { headers: { Authorization: `Bearer ${revokedToken}` } });
  assert.equal(firstUse.status, 404, 'the token works before revocation');
  const revoke = await runCli(['client', 'revoke', doomed.clientId], { AFFINITY_DATA_DIR: server.dataDir, AFFINITY_CONFIG: configFile });
  assert.equal(revoke.code, 0, revoke.stderr);

  await t.test('a token signed by hand with the service key and valid claims is accepted (control for the cases below)', async () => {
    const res = await fetch(`${server.url}/api/demo/items/article/none`, { headers: { Authorization: `Bearer ${handMade}` } });
    assert.equal(res.status, 404);
  });

  const cases: Array<{ name: string; authorization: string | undefined; detail: RegExp }> = [
    { name: 'no Authorization header', authorization: undefined, detail: /missing/i },
    { name: 'an Authorization header of another scheme', authorization: 'Token abc', detail: /Bearer <access token>/ },
    { name: 'a Bearer header without a token', authorization: 'Bearer', detail: /Bearer <access token>/ },
    { name: 'a garbage token', authorization: 'Bearer not-a-jwt', detail: /malformed/i },
    { name: 'an expired token', authorization: `Bearer ${expired}`, detail: /expired/i },
    { name: 'a token signed by another key with the same kid', authorization: `Bearer ${forged}`, detail: /signature|trusted key/i },
    { name: 'an alg:none token', authorization: `Bearer ${unsigned}`, detail: /alg/i },
    { name: 'a token with the wrong audience', authorization: `Bearer ${wrongAudience}`, detail: /aud/i },
    { name: 'a token for another environment', authorization: `Bearer ${shopToken}`, detail: /environment 'demo'/ },
    { name: 'a token of a revoked client', authorization: `Bearer ${revokedToken}`, detail: /revoked/i },
  ];

  for (const c of cases) {
    const headers: Record<string, string> = c.authorization === undefined ? {} : { Authorization: c.authorization };
    await t.test(`GET item with ${c.name} answers 401 with a Bearer challenge`, async () => {
      const res = await fetch(`${server.url}/api/demo/items/article/x`, { headers });
      await assertBearer401(res, c.detail);
    });
    await t.test(`PUT item with ${c.name} answers 401 and stores nothing`, async () => {
      const before = await snapshotStore(server.dataDir);
      const res = await fetch(`${server.url}/api/demo/items/article/x`, {
        method: 'PUT',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify(ARTICLE),
      });
      await assertBearer401(res, c.detail);
      assertSameStore(await snapshotStore(server.dataDir), before);
    });
  }

  await t.test('the same PUT with a valid token answers 200 (the rejected body was valid)', async () => {
    const res = await fetch(`${server.url}/api/demo/items/article/x`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${await getToken(server)}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(ARTICLE),
    });
    assert.equal(res.status, 200);
  });

  await t.test('JWKS publishes the public key only, and issued tokens verify against it', async () => {
    const res = await fetch(`${server.url}/.well-known/jwks.json`);
    assert.equal(res.status, 200);
    const jwks = (await res.json()) as { keys: JWK[] };
    assert.equal(jwks.keys.length, 1);
    const [key] = jwks.keys;
    assert.equal(key!.kid, keyJwk.kid);
    assert.equal(key!.d, undefined, 'no private part');
    assert.equal(key!.x, keyJwk.x);
    const { payload, protectedHeader } = await jwtVerify(await getToken(server), createLocalJWKSet(jwks), {
      issuer: 'affinity',
      audience: 'affinity-api',
    });
    assert.equal(protectedHeader.alg, 'ES256');
    assert.equal(payload.sub, demo.clientId);
    assert.deepEqual(payload.environments, ['demo']);
  });

  await t.test('client secrets are not stored in clear anywhere in the data directory', async () => {
    const fresh = await createClientWithCli(server.dataDir, 'demo', configFile);
    const secrets = [demo.clientSecret, fresh.clientSecret, shop.clientSecret];
    const needles = secrets.flatMap((s) => [Buffer.from(s, 'utf8'), Buffer.from(s, 'base64url')]);
    const files = filesUnder(server.dataDir);
    assert.ok(files.some((f) => f.endsWith('data.mdb')), 'the LMDB file is among the files searched');
    for (const file of files) {
      const content = readFileSync(file);
      for (const needle of needles) assert.equal(content.indexOf(needle), -1, `a client secret appears in ${file}`);
    }
  });
});

test('the signing key survives a restart, so tokens issued before it stay valid; the key file is 0600', async (t) => {
  const disk = sharedDataDir();
  t.after(() => disk.close());
  const dataDir = disk.dataDir;
  const first = disk.track(await startServer({ dataDir }));
  const token = await getToken(first);
  assert.equal(await first.stop(), 0);

  const second = disk.track(await startServer({ dataDir }));
  assert.equal(second.demoClient, undefined, 'no second demo client on restart');
  const res = await fetch(`${second.url}/api/demo/items/article/none`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(res.status, 404);
  const mode = statSync(join(dataDir, 'keys', 'token-signing-key.json')).mode & 0o777;
  assert.equal(mode, 0o600);
});

test('tokens of a configured external identity provider are accepted only with its audience and a granted environment', async (t) => {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const kid = 'idp-key-1';
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const idp = createServer((req, res) => {
    if (req.url === '/jwks') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ keys: [jwk] }));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => idp.close(() => resolve())));
  const idpPort = (idp.address() as AddressInfo).port;

  const configFile = writeConfig(t, {
    auth: {
      external: {
        issuer: 'https://idp.test',
        audience: 'affinity',
        jwksUrl: `http://127.0.0.1:${idpPort}/jwks`,
        environmentsClaim: 'envs',
        // The test IdP is on loopback, which the outbound guard refuses unless allowed.
        outbound: { allow: ['127.0.0.1'] },
      },
    },
  });
  const server = await startServer({ env: { AFFINITY_CONFIG: configFile } });
  t.after(() => server.close());

  const idpToken = (audience: string, envs: string[]) =>
    new SignJWT({ envs })
      .setProtectedHeader({ alg: 'RS256', kid })
      .setIssuer('https://idp.test')
      .setAudience(audience)
      .setSubject('user-1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
  const get = async (token: string) =>
    fetch(`${server.url}/api/demo/items/article/unknown`, { headers: { Authorization: `Bearer ${token}` } });

  await t.test('a token with envs [demo] is accepted: an unknown item answers 404', async () => {
    const res = await get(await idpToken('affinity', ['demo']));
    assert.equal(res.status, 404);
  });

  await t.test('a token with the wrong audience answers 401', async () => {
    await assertBearer401(await get(await idpToken('someone-else', ['demo'])), /aud/i);
  });

  await t.test('a token with envs [other] answers 401', async () => {
    await assertBearer401(await get(await idpToken('affinity', ['other'])), /environment 'demo'/);
  });

  await t.test('a token granting an unconfigured environment named like an Object member answers 404, never 5xx', async () => {
    for (const environment of ['toString', '__proto__']) {
      const headers = { Authorization: `Bearer ${await idpToken('affinity', [environment])}` };
      const put = await fetch(`${server.url}/api/${environment}/items/article/x`, {
        method: 'PUT',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ environment, item_type: 'article', item_id: 'x' }),
      });
      const list = await fetch(`${server.url}/api/${environment}/items/article`, { headers });
      for (const res of [put, list]) {
        assert.equal(res.status, 404, `${environment}: ${res.url}`);
        assert.equal(((await res.json()) as { type: string }).type, 'urn:affinity:problem:environment-not-found');
      }
    }
  });

  await t.test("the service's own tokens still work beside the external provider", async () => {
    const res = await get(await getToken(server));
    assert.equal(res.status, 404);
  });
});
