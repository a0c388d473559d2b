// The store's native module (scripts/lmdb-freelist-fix.mjs, store/lmdb-build.ts): the install
// builds lmdb with the free-list fix and the service runs that build; a service on lmdb's prebuilt
// module (node-gyp-build's PREBUILDS_ONLY makes it load one) warns at start, naming the module;
// /health says which (process.lmdb).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

const warning = (logs: string[]) => logs.map((line) => JSON.parse(line.startsWith('{') ? line : '{}') as { level?: number; msg?: string; module?: string }).find((e) => e.level === 40 && e.msg?.includes('free-list fix'));

test('the service runs lmdb built with the free-list fix, and says nothing about it', async () => {
  const server = await startServer();
  try {
    assert.equal(warning(server.logs), undefined, server.logs.join('\n'));
    const maps = await import('node:fs').then((fs) => fs.readFileSync(`/proc/${server.proc.pid}/maps`, 'utf8'));
    const modules = [...new Set(maps.split('\n').map((l) => l.slice(l.indexOf('/'))).filter((p) => p.includes('lmdb') && p.endsWith('.node')))];
    assert.equal(modules.length, 1, modules.join(', '));
    assert.match(modules[0]!, /node_modules\/lmdb\/build\/Release\/lmdb\.node$/);
    const health = (await (await fetch(`${server.url}/health`)).json()) as { process: { lmdb: unknown } };
    assert.deepEqual(health.process.lmdb, { freelist_fix: true });
  } finally {
    await server.close();
  }
});

test("a service on lmdb's prebuilt module warns at start, naming it", async () => {
  const server = await startServer({ env: { PREBUILDS_ONLY: '1' } });
  try {
    const warned = warning(server.logs);
    assert.ok(warned, server.logs.join('\n'));
    assert.match(warned.module ?? '', /@lmdb\/lmdb-linux-x64|prebuilds/);
    const health = (await (await fetch(`${server.url}/health`)).json()) as { process: { lmdb: unknown } };
    assert.deepEqual(health.process.lmdb, { freelist_fix: false });
  } finally {
    await server.close();
  }
});
