// `npm run fix:lock`: the npm registry this project installs from lacks the macOS and Windows
// builds of msgpackr-extract (an optional native speed-up of msgpackr), so `npm install` leaves
// them out of package-lock.json while keeping their names, and `npm ci` then refuses the lock.
// This drops optional dependencies that have no entry of their own. Run it after `npm install`
// has rewritten the lock.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const path = join(import.meta.dirname, '..', 'package-lock.json');
const lock = JSON.parse(readFileSync(path, 'utf8')) as {
  packages: Record<string, { optionalDependencies?: Record<string, string> }>;
};
let pruned = 0;
for (const entry of Object.values(lock.packages)) {
  for (const name of Object.keys(entry.optionalDependencies ?? {})) {
    if (!lock.packages[`node_modules/${name}`]) {
      delete entry.optionalDependencies![name];
      pruned++;
    }
  }
}
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`pruned ${pruned} optional dependencies missing from the registry`);
