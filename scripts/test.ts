// `npm test`: build (the WASM kernel and dist/, which the CLI and start/stop tests run as
// production does), type-check everything, then run every test/**/*.test.ts with node:test
// (Node 20's --test does not expand globs, so the files are listed here).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findTests(path));
    else if (entry.name.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out.sort();
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const only = process.argv.slice(2);
const files = only.length > 0 ? only : findTests(join(root, 'test'));
if (files.length === 0) {
  console.error('no test files found under test/');
  process.exit(1);
}
run(process.execPath, ['--import', 'tsx', join(root, 'scripts/build.ts')]);
run('npx', ['tsc', '--noEmit', '-p', '.']);
// Temporary folders go under one folder of this run, removed at its end (pass or fail): a test
// killed by a timeout, or one that keeps its folder to report it, leaves nothing in /tmp.
const runTmp = mkdtempSync(join(tmpdir(), 'affinity-tests-'));
process.on('exit', () => rmSync(runTmp, { recursive: true, force: true }));
// Every test process checks the responses it fetches against the server's OpenAPI document.
// A test that hangs fails after 5 minutes (the longest takes ~1): one stuck test costs a failure,
// not CI's whole time limit (a server a test leaves running: test/helpers/server.ts).
run(
  process.execPath,
  ['--import', 'tsx', '--import', './test/helpers/openapi-conformance.ts', '--test', '--test-reporter=spec', '--test-timeout=300000', ...files],
  { ...process.env, TMPDIR: runTmp },
);
