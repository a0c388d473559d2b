// The `affinity` command line as an operator meets it (bin/affinity.js running dist/): help and
// version on stdout with exit 0, per-command help, bad invocations exit 2 with a message, the
// data directory from --data-dir or AFFINITY_DATA_DIR, and commands that need existing data
// refusing a missing or empty directory instead of creating one.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startServer, tempDir } from '../helpers/server.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'affinity.js');
const run = promisify(execFile);

/** Runs `affinity <args>` in `cwd` with only the given AFFINITY_* variables. */
async function affinity(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AFFINITY_')));
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env: { ...env, ...options.env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

test('--help, -h and help print the usage of every command on stdout and exit 0', async () => {
  for (const flag of ['--help', '-h', 'help']) {
    const out = await affinity([flag]);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stderr, '');
    for (const command of ['serve', 'client create', 'events export', 'feed add']) assert.match(out.stdout, new RegExp(`affinity ${command}`));
    assert.match(out.stdout, /--data-dir/);
  }
});

test('--version prints the package version on stdout and exits 0', async () => {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  for (const flag of ['--version', '-V']) {
    const out = await affinity([flag]);
    assert.equal(out.code, 0);
    assert.equal(out.stdout, `${version}\n`);
  }
});

test('<command> --help prints that command\'s usage on stdout and exits 0', async () => {
  for (const [args, expected, other] of [
    [['client', '--help'], /affinity client revoke/, /affinity feed/],
    [['feed', 'add', '--help'], /affinity feed add --env/, /affinity client/],
    [['events', '-h'], /affinity events export/, /affinity feed/],
    [['serve', '--help'], /affinity serve/, /affinity client/],
    [['help', 'feed'], /affinity feed poll/, /affinity client/],
  ] as const) {
    const out = await affinity([...args]);
    assert.equal(out.code, 0, `${args.join(' ')}: ${out.stderr}`);
    assert.match(out.stdout, expected);
    assert.doesNotMatch(out.stdout, other, 'only the command asked about');
  }
});

test('no command, an unknown command or an unknown option exits 2 with a message and the usage on stderr', async () => {
  for (const [args, message] of [
    [[], /a command is required/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['--frobnicate'], /unknown option '--frobnicate'/],
    [['client', 'list', '--bogus'], /Unknown option '--bogus'/],
    [['client', 'create'], /client create needs at least one --env/],
    [['client', 'explode'], /unknown client command 'explode'/],
    [['feed', 'status', '--env', 'demo'], /a feed_id is required/],
    [['events', 'export', '--env'], /argument missing/],
    [['help', 'nothing'], /unknown command 'nothing'/],
  ] as const) {
    const out = await affinity([...args], { env: { AFFINITY_DATA_DIR: tempDir() } });
    assert.equal(out.stdout, '', `${args.join(' ')} prints nothing on stdout`);
    assert.match(out.stderr, message);
    assert.equal(out.code, 2, `${args.join(' ')}: ${out.stderr}`);
    assert.match(out.stderr, /Usage:/);
  }
});

test('a command run on a missing or empty data directory exits 1 and creates nothing', async (t) => {
  const parent = tempDir();
  t.after(() => rmSync(parent, { recursive: true, force: true }));
  const missing = join(parent, 'missing');
  const empty = join(parent, 'empty');
  mkdirSync(empty);
  for (const dir of [missing, empty]) {
    for (const args of [['client', 'list'], ['client', 'create', '--env', 'demo'], ['events', 'export', '--env', 'demo'], ['feed', 'list']]) {
      const viaEnv = await affinity(args, { env: { AFFINITY_DATA_DIR: dir } });
      assert.equal(viaEnv.code, 1, `${args.join(' ')}: ${viaEnv.stderr}`);
      assert.match(viaEnv.stderr, /no Affinity data in '.*': start the service once/);
      const viaFlag = await affinity([...args, '--data-dir', dir]);
      assert.equal(viaFlag.code, 1);
    }
  }
  assert.equal(existsSync(missing), false, 'the missing directory was not created');
  assert.deepEqual(readdirSync(empty), [], 'the empty directory stayed empty');

  // From another working directory with nothing configured: no ./data appears there.
  const elsewhere = join(parent, 'elsewhere');
  mkdirSync(elsewhere);
  const out = await affinity(['client', 'list'], { cwd: elsewhere });
  assert.equal(out.code, 1);
  assert.deepEqual(readdirSync(elsewhere), []);
});

test('--data-dir and AFFINITY_DATA_DIR both reach the data of a running service', async (t) => {
  const server = await startServer();
  t.after(() => server.close());
  const viaFlag = await affinity(['client', 'list', '--data-dir', server.dataDir]);
  assert.equal(viaFlag.code, 0, viaFlag.stderr);
  const viaEqualsFlag = await affinity([`--data-dir=${server.dataDir}`, 'client', 'list']);
  assert.equal(viaEqualsFlag.stdout, viaFlag.stdout);
  const viaEnv = await affinity(['client', 'list'], { env: { AFFINITY_DATA_DIR: server.dataDir } });
  assert.equal(viaEnv.stdout, viaFlag.stdout);
  const clients = viaFlag.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { client_id: string });
  assert.deepEqual(clients.map((c) => c.client_id), [server.demoClient!.clientId]);
});

test('affinity serve --data-dir runs the service on that directory and stops on SIGTERM with exit 0', async (t) => {
  const dataDir = tempDir();
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AFFINITY_') && k !== 'PORT'));
  const proc = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir], { cwd: ROOT, env: { ...env, PORT: '0', AFFINITY_HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  t.after(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  // After the kill above: hooks run in order, and a directory removed under a running service races it.
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const listening = await new Promise<{ port: number; dataDir: string }>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (line.includes('"msg":"listening"')) resolve(JSON.parse(line) as { port: number; dataDir: string });
    });
    void exited.then((code) => reject(new Error(`serve exited ${code}`)));
  });
  assert.equal(listening.dataDir, dataDir);
  assert.equal((await fetch(`http://127.0.0.1:${listening.port}/health`)).status, 200);
  proc.kill('SIGTERM');
  assert.equal(await exited, 0);
});
