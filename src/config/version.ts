/**
 * @module config/version
 * The package version, read from package.json (two folders above src/config/ and dist/config/ alike) when asked.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
}
