// Imports a worker's entry module, named by its TypeScript file: URL, in both ways the service
// runs. Built (`npm run build`, plain node from dist/): the compiled `.js` sibling exists and is
// imported as it is, so production needs no tsx. From the sources (tests, tools): Node 20 does
// not run the tsx loader given in execArgv inside worker threads, so tsx is registered here first.
import { existsSync } from 'node:fs';

/** @param {string} tsUrl a file: URL ending in `.ts` */
export async function importEntry(tsUrl) {
  const built = tsUrl.replace(/\.ts$/, '.js');
  if (built !== tsUrl && existsSync(new URL(built))) return import(built);
  const { register } = await import('tsx/esm/api');
  register();
  return import(tsUrl);
}
