/**
 * @module store/lmdb-build
 * Which native module lmdb-js runs: the one built at install with the free-list fix
 * (scripts/lmdb-freelist-fix.mjs: without it, a commit on a large store can fail with MDB_BAD_TXN
 * or the process abort), or its prebuilt one (no compiler at install). The service logs a warning
 * at start for the latter, so an operator learns it before a write fails.
 */
import { existsSync, readFileSync } from 'node:fs';
import { FIX_MARKER, lmdbNativePaths } from './lmdb-native.mjs';

export interface LmdbBuild {
  /** The native module file this process mapped (undefined where /proc/self/maps is not readable). */
  module?: string;
  /** The module is the one built from mdb.c with the fix. */
  freelistFixed: boolean;
}

let known: LmdbBuild | undefined;

/** Read once (the module a process mapped does not change): at start for the warning, then for /health. */
export function lmdbBuild(): LmdbBuild {
  return (known ??= inspect());
}

function inspect(): LmdbBuild {
  const { built, source } = lmdbNativePaths();
  let module: string | undefined;
  try {
    module = readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .map((line) => line.slice(line.indexOf('/')))
      .find((path) => path.includes('lmdb') && path.endsWith('.node'));
  } catch {
    // Not Linux: node-gyp-build loads build/Release before any prebuilt module when it exists.
  }
  const loadsBuilt = module !== undefined ? module === built : existsSync(built);
  const freelistFixed = loadsBuilt && existsSync(source) && readFileSync(source, 'utf8').includes(FIX_MARKER);
  return { ...(module !== undefined ? { module } : {}), freelistFixed };
}
