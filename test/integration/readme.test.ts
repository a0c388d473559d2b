// README.md as a newcomer follows it: the service started with the README's own `npm start`
// (npm → bin/affinity-serve → node dist/main.js, each exec'd, so SIGTERM to npm reaches the service), then every ```sh block of
// the tour run in order in one bash session against it (localhost:8080 pointed at the test's
// port, AFFINITY_DATA_DIR at its data directory), each command failing the test on any error
// (`set -euo pipefail`, `curl -f`), and the outputs the tour promises checked.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { waitFor } from '../helpers/api.ts';
import { tempDir } from '../helpers/server.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

function blocks(language: string): string[] {
  return [...README.matchAll(new RegExp('^```' + language + '\\n([\\s\\S]*?)^```$', 'gm'))].map((m) => m[1]!);
}

test('the README opens with the two commands: install and start, and test', () => {
  const [setup, ...rest] = blocks('console');
  assert.equal(rest.length, 0, 'one set-up block');
  const commands = setup!.split('\n').filter(Boolean).map((l) => l.replace(/\s+#.*$/, '').trim());
  assert.deepEqual(commands, ['npm install && npm start', 'npm test']);
  assert.ok(README.indexOf('```console') < README.indexOf('## Five-minute tour'), 'before the tour');
  // `npm install` runs `prepare` (the build) and `npm start` runs the build: .ci/run does the same on a clean clone.
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  // `exec` (here and in the launcher): npm's shell becomes node, so the SIGTERM npm forwards
  // reaches the service (a plain `node dist/main.js` leaves node orphaned when the shell dies).
  assert.equal(pkg.scripts.start, 'exec bin/affinity-serve');
  assert.equal(pkg.scripts.prepare, 'node scripts/prepare.mjs');
});

test('every shell example of the README tour runs against a service started with npm start', async (t) => {
  const dataDir = tempDir();
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AFFINITY_') && k !== 'PORT'));
  // Its own process group, so a failed test can stop npm and everything it started at once.
  const npm = spawn('npm', ['start'], { cwd: ROOT, env: { ...env, PORT: '0', AFFINITY_HOST: '127.0.0.1', AFFINITY_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  t.after(() => {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // the group is gone: the stop below worked
    }
  });
  // After the kill above: hooks run in order, and a directory removed under a running service races it.
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  createInterface({ input: npm.stderr! }).on('line', (l) => logs.push(l));
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: npm.stdout! }).on('line', (line) => {
      logs.push(line);
      if (line.includes('"msg":"listening"')) resolve(Number((JSON.parse(line) as { port: number }).port));
    });
    void exited.then((code) => reject(new Error(`npm start exited ${code}:\n${logs.join('\n')}`)));
  });
  await waitFor('ready', async () => ((await fetch(`http://127.0.0.1:${port}/ready`)).status === 200 ? true : undefined));

  const tour = blocks('sh');
  assert.ok(tour.length >= 6, 'the tour has its steps');
  const script = ['set -euo pipefail', ...tour.map((block, i) => `printf '\\n@@ block ${i}\\n'\n${block}`)].join('\n').replaceAll('localhost:8080', `127.0.0.1:${port}`);
  const run = spawnSync('bash', ['-c', script], { cwd: ROOT, env: { ...env, AFFINITY_DATA_DIR: dataDir }, encoding: 'utf8', timeout: 120_000 });
  const outputs = run.stdout.split(/^@@ block \d+\n/m).slice(1).map((o) => o.trim());
  assert.equal(run.status, 0, `the tour failed in block ${outputs.length - 1}:\n${tour[outputs.length - 1]}\nstdout:\n${outputs.at(-1)}\nstderr:\n${run.stderr}`);
  assert.equal(outputs.length, tour.length);

  const [health, credentials, items, events, recommendations, observe, cli] = outputs as [string, string, string, string, string, string, string];
  assert.match(health, /"status":"ok"/);
  assert.match(health, /\{"status":"ready"\}/);
  assert.equal(credentials, '', 'step 2 only sets variables');
  assert.match(items, /"item_id":"a-1"/);
  assert.equal(events, '', 'events answer 200 with no content');
  const answer = JSON.parse(recommendations) as { lists: Array<{ list_name: string; items: Array<{ item_id: string }> }> };
  assert.deepEqual(answer.lists.map((l) => l.list_name), ['more_like_this', 'recommended_for_you']);
  const ids = answer.lists.flatMap((l) => l.items.map((i) => i.item_id));
  assert.ok(ids.includes('a-2'), `a-2 is recommended: ${recommendations}`);
  assert.ok(!ids.includes('a-1'), 'never the context item, nor what the user read');
  assert.match(observe, /^affinity_events_total\{environment="demo",event_type="detail_pageview",outcome="accepted"\} 1$/m);
  assert.match(observe, /^\d+ paths$/m);
  assert.match(cli, /Usage:/);
  assert.match(cli, /"event_type":"detail_pageview".*"accepted_at"/);

  // Stopping npm start stops the service itself: the signal reaches node, which drains and exits 0.
  npm.kill('SIGTERM');
  assert.equal(await exited, 0, logs.slice(-10).join('\n'));
  assert.ok(logs.some((l) => l.includes('"msg":"stopped"')), `the service stopped gracefully:\n${logs.slice(-10).join('\n')}`);
});
