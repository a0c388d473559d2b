// The browser bundles (esbuild, from node_modules, no CDN): the reporting dashboard served at
// /dashboard (dist/dashboard/: index.html, app.js, app.css with uPlot) and the browser tracker
// (dist/clients/browser/: tracker.mjs for `import`, tracker.global.js for a script tag, exposing
// `AffinityTracker`), whose sizes are printed. Run by scripts/build.ts after the type check.
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = join(import.meta.dirname, '..');
const dashboard = join(root, 'dist', 'dashboard');
const tracker = join(root, 'dist', 'clients', 'browser');
mkdirSync(dashboard, { recursive: true });
mkdirSync(tracker, { recursive: true });

const common = { bundle: true, minify: true, target: 'es2020', logLevel: 'warning' } as const;
await build({ ...common, entryPoints: [join(root, 'web/dashboard/main.ts')], outfile: join(dashboard, 'app.js'), format: 'esm' });
copyFileSync(join(root, 'web/dashboard/index.html'), join(dashboard, 'index.html'));
await build({ ...common, entryPoints: [join(root, 'clients/browser/tracker.ts')], outfile: join(tracker, 'tracker.mjs'), format: 'esm' });
await build({ ...common, entryPoints: [join(root, 'clients/browser/tracker.ts')], outfile: join(tracker, 'tracker.global.js'), format: 'iife', globalName: 'AffinityTracker' });

for (const file of ['tracker.mjs', 'tracker.global.js']) {
  const bytes = readFileSync(join(tracker, file));
  console.log(`browser tracker ${file}: ${bytes.length} bytes, ${gzipSync(bytes).length} gzipped`);
}
