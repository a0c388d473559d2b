// The TLS recipe (deploy/Caddyfile) as shipped: Debian's caddy with `tls internal` in front of
// the built service, the API called over HTTPS with the Caddy CA as the only trusted root.
// Skipped, with the reason, when no `caddy` binary is installed (.ci/run installs it).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { waitFor } from '../helpers/api.ts';
import { startServer, tempDir } from '../helpers/server.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const CADDY = spawnSync('caddy', ['version'], { encoding: 'utf8' });
const SKIP = CADDY.error ? 'caddy is not installed (apt-get install caddy; .ci/run does): the TLS recipe test needs it' : false;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** An HTTPS request trusting only `ca`; resolves with status, headers and body. */
function https(url: string, ca: Buffer, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers, ca, servername: 'localhost' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

test('deploy/Caddyfile with `tls internal` serves the API over HTTPS', { skip: SKIP }, async (t) => {
  const server = await startServer();
  t.after(() => server.close());
  const storage = tempDir('affinity-caddy-');
  t.after(() => rmSync(storage, { recursive: true, force: true }));
  const [httpsPort, httpPort] = [await freePort(), await freePort()];
  const caddy = spawn('caddy', ['run', '--config', join(ROOT, 'deploy', 'Caddyfile'), '--adapter', 'caddyfile'], {
    env: {
      ...process.env,
      HOME: storage,
      XDG_DATA_HOME: storage,
      XDG_CONFIG_HOME: storage,
      CADDY_STORAGE: storage,
      CADDY_HTTPS_PORT: String(httpsPort),
      CADDY_HTTP_PORT: String(httpPort),
      AFFINITY_UPSTREAM: `127.0.0.1:${server.port}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const caddyLog: string[] = [];
  caddy.stderr!.on('data', (c: Buffer) => caddyLog.push(c.toString()));
  const caddyExited = new Promise((resolve) => caddy.once('exit', resolve));
  t.after(async () => {
    caddy.kill('SIGTERM');
    await caddyExited;
  });

  const rootCa = join(storage, 'pki', 'authorities', 'local', 'root.crt');
  const base = `https://localhost:${httpsPort}`;
  const health = await waitFor(
    'caddy serving HTTPS',
    async () => {
      if (caddy.exitCode !== null) throw new Error(`caddy exited ${caddy.exitCode}:\n${caddyLog.join('')}`);
      if (!existsSync(rootCa)) return undefined;
      return https(`${base}/health`, readFileSync(rootCa)).catch(() => undefined);
    },
    30_000,
    200,
  );
  const ca = readFileSync(rootCa);
  assert.equal(health.status, 200);
  assert.equal((JSON.parse(health.body) as { status: string }).status, 'ok');
  assert.ok(health.headers['x-request-id'], 'the service answered through the proxy');

  // A token and an item write and read over TLS.
  const basic = Buffer.from(`${server.demoClient!.clientId}:${server.demoClient!.clientSecret}`).toString('base64');
  const token = await https(`${base}/api/oauth/token`, ca, {
    method: 'POST',
    headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  assert.equal(token.status, 200, token.body);
  const bearer = { Authorization: `Bearer ${(JSON.parse(token.body) as { access_token: string }).access_token}` };
  const item = { environment: 'demo', item_id: 'tls-1', item_type: 'article', title: 'Over TLS' };
  const put = await https(`${base}/api/demo/items/article/tls-1`, ca, { method: 'PUT', headers: { ...bearer, 'Content-Type': 'application/json' }, body: JSON.stringify(item) });
  assert.equal(put.status, 200, put.body);
  const got = await https(`${base}/api/demo/items/article/tls-1`, ca, { headers: bearer });
  assert.equal(got.status, 200);
  assert.equal((JSON.parse(got.body) as { title: string }).title, 'Over TLS');

  // The recipe keeps /metrics off the public side.
  assert.equal((await https(`${base}/metrics`, ca)).status, 404);
  assert.equal((await fetch(`${server.url}/metrics`)).status, 200, 'it is served on the internal port');
});
