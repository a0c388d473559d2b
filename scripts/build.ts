// `npm run build`: src/ → dist/ (tsc with tsconfig.build.json, plus the plain .mjs worker entries
// tsc does not copy) and the release WASM kernel → build/kernel.wasm, read from dist/ and src/ alike.
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function copyPlainModules(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) copyPlainModules(path);
    else if (entry.name.endsWith('.mjs') || entry.name.endsWith('.proto')) cpSync(path, join(root, 'dist', relative(join(root, 'src'), path)));
  }
}

rmSync(join(root, 'dist'), { recursive: true, force: true });
run('npx', ['asc', 'assembly/index.ts', '--target', 'release']);
run('npx', ['tsc', '-p', 'tsconfig.build.json']);
copyPlainModules(join(root, 'src'));
run('npx', ['tsc', '-p', 'tsconfig.web.json', '--noEmit']);
run(process.execPath, ['--import', 'tsx', join(root, 'scripts/build-web.ts')]);
