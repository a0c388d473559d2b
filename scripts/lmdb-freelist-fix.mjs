// Rebuilds lmdb-js's native module with one fix to its bundled LMDB, at install (scripts/prepare.mjs).
//
// lmdb-js 3.5.6's `mdb_freelist_save` (dependencies/lmdb/libraries/liblmdb/mdb.c), filling the
// free-list records it reserved, looks each one up and reads the found record's size and address
// before checking that the lookup found it. When it did not (MDB_NOTFOUND, which the code means to
// accept), both are uninitialised: a size of 0 fails the commit with MDB_BAD_TXN ("reserved
// freelist had a data entry with zero-size"); anything else copies the free list to a garbage
// address. On the 1,000,000-item bench data with events beside recommendations, 3 of 5 runs met
// one or the other: a failed commit (every event POST batched into it answered 500) or the process
// aborted by glibc (`munmap_chunk(): invalid pointer`). The fix reads the record only when found.
// Built with it, 3 of 3 runs passed and a trace showed the not-found lookup in 1 of 279 saves.
//
// Needs a C compiler, make and Python (node-gyp) and Node's headers; without them the prebuilt
// module stays and this says so (the service logs it at start: store/lmdb-build.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FIX_MARKER, lmdbNativePaths } from '../src/store/lmdb-native.mjs';
const BUGGY = `		rc = mdb_cursor_get(&mc, &key, &data, MDB_SET_KEY);
		if (data.mv_size == 0) {`;
const FIXED = `		rc = mdb_cursor_get(&mc, &key, &data, MDB_SET_KEY);
		/* ${FIX_MARKER}: data is not set when rc != 0 */
		if (rc && rc != MDB_NOTFOUND)
			break;
		if (rc == MDB_SUCCESS && data.mv_size == 0) {`;

const { dir: lmdbDir, source, built } = lmdbNativePaths();

function warn(message) {
  console.error(`affinity: ${message}; lmdb's prebuilt module stays (it can fail commits or crash on a large store: see scripts/lmdb-freelist-fix.mjs)`);
  process.exit(0);
}

let text = readFileSync(source, 'utf8');
if (!text.includes(FIX_MARKER)) {
  if (!text.includes(BUGGY)) warn(`lmdb ${JSON.parse(readFileSync(join(lmdbDir, 'package.json'), 'utf8')).version}'s mdb.c no longer has the code this fix is for: check whether upstream fixed it`);
  writeFileSync(source, (text = text.replace(BUGGY, FIXED)));
} else if (existsSync(built)) {
  process.exit(0);
}

// node-gyp: npm's own (npm sets npm_config_node_gyp for lifecycle scripts), else beside npm.
const npmNodeGyp = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
const nodeGyp = process.env.npm_config_node_gyp || (existsSync(npmNodeGyp) ? npmNodeGyp : undefined);
if (!nodeGyp) warn('node-gyp not found');
// Node's own headers, so that node-gyp does not download them (installs may be offline).
const nodeDir = join(dirname(process.execPath), '..');
const headers = existsSync(join(nodeDir, 'include', 'node', 'node_api.h')) ? [`--nodedir=${nodeDir}`] : [];
console.error('affinity: building lmdb with the free-list fix (10-20 s on two cores)');
const result = spawnSync(process.execPath, [nodeGyp, 'rebuild', '--release', '-j', 'max', ...headers], { cwd: lmdbDir, encoding: 'utf8' });
if (result.status !== 0 || !existsSync(built)) {
  // The compiler's warnings fill pages on success; on failure the end of its output says why.
  console.error(`${result.stdout ?? ''}${result.stderr ?? ''}`.split('\n').slice(-40).join('\n'));
  // A half-built folder must not shadow the prebuilt module.
  rmSync(join(lmdbDir, 'build'), { recursive: true, force: true });
  warn('building lmdb failed');
}
console.error('affinity: lmdb built with the free-list fix');
