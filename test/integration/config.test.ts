import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { getToken } from '../helpers/auth.ts';
import { tempDir, type TestServer } from '../helpers/server.ts';

const ROOT = join(import.meta.dirname, '..', '..');

interface MainProcess {
  proc: ChildProcess;
  stdout: string[];
  stderr: string[];
  exited: Promise<number | null>;
  /** Resolves with the port of the 'listening' line, or with undefined once the process exits. */
  listening: Promise<number | undefined>;
  close(): Promise<void>;
}

/** `node dist/main.js` (scripts/test.ts builds it) with only the given configuration variables (no inherited AFFINITY_* or PORT). */
function spawnMain(env: Record<string, string>): MainProcess {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('AFFINITY_') && k !== 'PORT') base[k] = v;
  }
  const proc = spawn(process.execPath, [join(ROOT, 'dist/main.js')], {
    cwd: ROOT,
    env: { ...base, AFFINITY_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  let onListening: (port: number) => void = () => undefined;
  const listening = new Promise<number | undefined>((resolve) => {
    onListening = resolve;
    void exited.then(() => resolve(undefined));
  });
  let pending = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      stdout.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === 'listening') onListening(Number(entry.port));
      } catch {
        // not a log line
      }
    }
  });
  proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  return {
    proc,
    stdout,
    stderr,
    exited,
    listening,
    async close() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Asserts the process exits with code 2 before listening, with every pattern on stderr. */
async function assertRefusesToStart(main: MainProcess, patterns: RegExp[]): Promise<void> {
  const port = await main.listening;
  assert.equal(port, undefined, `the service started listening: ${main.stdout.join('\n')}`);
  assert.equal(await main.exited, 2);
  assert.ok(!main.stdout.some((l) => l.includes('"listening"')), 'no listening line');
  const stderr = main.stderr.join('');
  for (const pattern of patterns) assert.match(stderr, pattern);
}

test('invalid configurations stop the process before it listens, with a message naming the key', { concurrency: true }, async (t) => {
  const dir = tempDir('affinity-config-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const run = async (t2: { after(fn: () => unknown): void }, env: Record<string, string>, patterns: RegExp[]) => {
    const main = spawnMain({ AFFINITY_DATA_DIR: join(dir, 'data'), ...env });
    t2.after(() => main.close());
    await assertRefusesToStart(main, patterns);
  };

  await Promise.all([
    t.test('AFFINITY_PORT=abc exits 2 naming AFFINITY_PORT', (t2) =>
      run(t2, { AFFINITY_PORT: 'abc' }, [/AFFINITY_PORT must be an integer/, /'abc'/])),
    t.test('an unknown key under server in a YAML file exits 2 naming server and the key', (t2) =>
      run(t2, { AFFINITY_CONFIG: write('unknown-key.yaml', 'server:\n  prot: 1\n') }, [/server\b.*additional properties.*'prot'/])),
    t.test('a builder niceness outside 0..19 exits 2 naming builder.niceness', (t2) =>
      run(t2, { AFFINITY_BUILDER_NICENESS: '25' }, [/builder\.niceness/, /19/])),
    t.test('a builder write pace under 100 ms exits 2 naming builder.flushMs', (t2) =>
      run(t2, { AFFINITY_BUILDER_FLUSH_MS: '50' }, [/builder\.flushMs/, /100/])),
    t.test('a builder write pace that is not an integer exits 2 naming AFFINITY_BUILDER_FLUSH_MS', (t2) =>
      run(t2, { AFFINITY_BUILDER_FLUSH_MS: 'soon' }, [/AFFINITY_BUILDER_FLUSH_MS must be an integer/, /'soon'/])),
    t.test('an environment with empty itemTypes exits 2 naming environments.<name>.itemTypes', (t2) =>
      run(t2, { AFFINITY_CONFIG: write('empty-types.yaml', 'environments:\n  shop:\n    itemTypes: []\n') }, [
        /environments\.shop\.itemTypes/,
      ])),
    t.test('a JSON file that does not parse exits 2 naming AFFINITY_CONFIG and the file', (t2) => {
      const path = write('broken.json', '{ "server": { "port": 1, }');
      return run(t2, { AFFINITY_CONFIG: path }, [/AFFINITY_CONFIG/, new RegExp(path.replaceAll('.', '\\.')), /not valid JSON/]);
    }),
    t.test('a missing AFFINITY_CONFIG file exits 2 naming AFFINITY_CONFIG and the path', (t2) => {
      const path = join(dir, 'does-not-exist.yaml');
      return run(t2, { AFFINITY_CONFIG: path }, [/AFFINITY_CONFIG: cannot read/, new RegExp(path.replaceAll('.', '\\.'))]);
    }),
  ]);
});

test('valid configurations are honoured', { concurrency: true }, async (t) => {
  const dir = tempDir('affinity-config-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  await Promise.all([
    t.test('a YAML config file is honoured: environment shop accepts a PUT of a product', async (t2) => {
      const config = join(dir, 'shop.yaml');
      writeFileSync(config, ['environments:', '  shop:', '    itemTypes:', '      - product', ''].join('\n'));
      const main = spawnMain({ AFFINITY_CONFIG: config, AFFINITY_DATA_DIR: join(dir, 'shop-data'), PORT: '0' });
      t2.after(() => main.close());
      const port = await main.listening;
      assert.ok(port, main.stderr.join(''));
      const created = main.stdout
        .map((l) => JSON.parse(l) as { client_id?: string; client_secret?: string; environment?: string })
        .find((e) => e.client_secret !== undefined);
      assert.equal(created?.environment, 'shop', 'the demo client is made for the only environment');
      const server = { url: `http://127.0.0.1:${port}` } as TestServer;
      const token = await getToken(server, { clientId: created.client_id!, clientSecret: created.client_secret! });
      const auth = { Authorization: `Bearer ${token}` };
      const product = { environment: 'shop', item_type: 'product', item_id: 'p-1', title: 'A product' };
      const put = await fetch(`${server.url}/api/shop/items/product/p-1`, {
        method: 'PUT',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify(product),
      });
      assert.equal(put.status, 200);
      const get = await fetch(`${server.url}/api/shop/items/product/p-1`, { headers: auth });
      assert.deepEqual(await get.json(), product);
      const demo = await fetch(`${server.url}/api/demo/items/article/a`, { headers: auth });
      assert.equal(demo.status, 401, 'the embedded demo environment is replaced by the file');
    }),
    t.test('PORT is honoured', async (t2) => {
      const port = await freePort();
      const main = spawnMain({ PORT: String(port), AFFINITY_DATA_DIR: join(dir, 'port-data') });
      t2.after(() => main.close());
      assert.equal(await main.listening, port, main.stderr.join(''));
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      assert.equal(res.status, 200);
    }),
    t.test('AFFINITY_PORT wins over PORT', async (t2) => {
      const [loser, winner] = [await freePort(), await freePort()];
      const main = spawnMain({ PORT: String(loser), AFFINITY_PORT: String(winner), AFFINITY_DATA_DIR: join(dir, 'both-data') });
      t2.after(() => main.close());
      assert.equal(await main.listening, winner, main.stderr.join(''));
      const res = await fetch(`http://127.0.0.1:${winner}/health`);
      assert.equal(res.status, 200);
      await assert.rejects(fetch(`http://127.0.0.1:${loser}/health`), 'nothing listens on PORT');
    }),
  ]);
});
