// `npm install` / `npm ci` in this folder builds dist/ and the kernel, so a fresh clone's
// `npm install && npm start` needs nothing more. With `--omit=dev` (a production install) the
// build tools are absent: dist/ must then come from a build stage (see the Dockerfile).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
// Before anything else, production installs included: the store's native module (see the script).
spawnSync(process.execPath, [join(import.meta.dirname, 'lmdb-freelist-fix.mjs')], { cwd: root, stdio: 'inherit' });
if (!existsSync(join(root, 'node_modules', 'typescript')) || !existsSync(join(root, 'node_modules', 'tsx'))) {
  console.error('affinity: build tools not installed (production install): skipping the build');
  process.exit(0);
}
const result = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
