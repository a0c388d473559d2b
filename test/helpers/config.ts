// Configuration files for the loader's tests, and the problems a refused one is reported with.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/load.ts';

/** Writes `content` to a file `name` in a fresh temporary folder; returns its path. */
export function configFile(name: string, content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'affinity-config-')), name);
  writeFileSync(path, content);
  return path;
}

/** The problems loadConfig refuses `env` with; fails the test if it loads. */
export function configProblems(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
  assert.fail('expected a ConfigError');
}
