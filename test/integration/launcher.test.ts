// bin/affinity-serve, as `npm start`, the Docker image and the systemd unit start the service: it
// execs node on dist/main.js (the pid it was given is the service's), passes its arguments to node
// before the entry, and picks the garbage collector by core count unless AFFINITY_GC says which;
// a bad AFFINITY_GC stops it before node starts (exit 2, a message naming the variable, nothing
// created in the data directory). The collector in force is named by the `listening` log line.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { after, test } from 'node:test';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';

const servers: TestServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

/** The process's command line, as the kernel has it (proves which program the pid runs). */
function cmdline(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

function listeningGc(server: TestServer): unknown {
  const line = server.logs.find((l) => l.includes('"msg":"listening"'));
  assert.ok(line, server.logs.join('\n'));
  return (JSON.parse(line) as { gc?: unknown }).gc;
}

async function started(env: Record<string, string>, nodeArgs?: string[]): Promise<TestServer> {
  const server = await startServer({ env, ...(nodeArgs ? { nodeArgs } : {}) });
  servers.push(server);
  return server;
}

test('AFFINITY_GC=single: node runs under the launcher\'s pid with --single-threaded-gc, and says so', { skip: process.platform !== 'linux' }, async () => {
  const server = await started({ AFFINITY_GC: 'single' }, ['--stack-trace-limit=42']);
  const argv = cmdline(server.proc.pid!);
  assert.match(argv[0]!, /node$/, 'exec: the pid is node, not a shell');
  assert.match(argv.at(-1)!, /\/dist\/main\.js$/);
  assert.ok(argv.includes('--single-threaded-gc'), argv.join(' '));
  const passed = argv.indexOf('--stack-trace-limit=42');
  assert.ok(passed > 0 && passed < argv.length - 1, `arguments reach node, before the entry: ${argv.join(' ')}`);
  assert.equal(listeningGc(server), 'single-threaded');
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
});

test('AFFINITY_GC=parallel: V8\'s default collector', { skip: process.platform !== 'linux' }, async () => {
  const server = await started({ AFFINITY_GC: 'parallel' });
  assert.ok(!cmdline(server.proc.pid!).includes('--single-threaded-gc'));
  assert.equal(listeningGc(server), 'parallel');
});

test('by default the collector follows the core count: single-threaded below 4', { skip: process.platform !== 'linux' }, async () => {
  const server = await started({ AFFINITY_GC: '' });
  assert.equal(listeningGc(server), availableParallelism() < 4 ? 'single-threaded' : 'parallel');
});

test('a bad AFFINITY_GC stops the start with exit 2 and a message, before anything is stored', async () => {
  const dataDir = tempDir();
  try {
    await assert.rejects(
      startServer({ dataDir, env: { AFFINITY_GC: 'fast' } }),
      (err: Error) => /exited with 2 before listening/.test(err.message) && err.message.includes("AFFINITY_GC must be auto, single or parallel, got 'fast'"),
    );
    assert.deepEqual(readdirSync(dataDir), [], 'the data directory is left as it was');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
