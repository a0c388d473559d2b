// Where lmdb-js's native module and the LMDB source it is built from live, and the marker the
// free-list fix leaves in that source: one definition for the install script that builds it
// (scripts/lmdb-freelist-fix.mjs, run before any TypeScript is built, hence plain JavaScript) and
// for the service that checks which module it runs (store/lmdb-build.ts).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The comment the fix puts into mdb.c. */
export const FIX_MARKER = 'affinity: freelist record read only when found';

/** lmdb's package folder (its exports do not include package.json: the one with its binding.gyp), its mdb.c and its locally built module. */
export function lmdbNativePaths() {
  let dir = dirname(createRequire(import.meta.url).resolve('lmdb'));
  while (!existsSync(join(dir, 'binding.gyp')) && dirname(dir) !== dir) dir = dirname(dir);
  return {
    dir,
    source: join(dir, 'dependencies', 'lmdb', 'libraries', 'liblmdb', 'mdb.c'),
    built: join(dir, 'build', 'Release', 'lmdb.node'),
  };
}
