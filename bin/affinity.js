#!/usr/bin/env node
// The `affinity` command runs the built CLI (dist/, `npm run build`) with plain node, so no
// loader process sits between the shell and `affinity serve` and signals reach the service.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('affinity: dist/ is missing: run `npm run build` first');
  process.exit(1);
}
await import(entry.href);
