// Static checks of the Dockerfile and the systemd unit (no Docker engine or systemd runs in CI,
// so they are not started here): every file they copy or run exists after `npm run build`, the
// image is multi-stage, runs as a non-root user with a health check on /ready, and both start
// bin/affinity-serve, which execs node on dist/main.js so SIGTERM reaches the service.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');

test('the Dockerfile builds in one stage and runs the build in another, non-root, with a /ready health check', () => {
  const dockerfile = readFileSync(join(ROOT, 'deploy', 'Dockerfile'), 'utf8');
  assert.equal([...dockerfile.matchAll(/^FROM /gm)].length, 2, 'two stages');
  for (const [, from, source] of dockerfile.matchAll(/^COPY (--from=\w+ )?(\S+)/gm)) {
    if (from) continue;
    assert.ok(existsSync(join(ROOT, source!)), `COPY ${source} exists in the repository`);
  }
  for (const [, built] of dockerfile.matchAll(/^COPY --from=build \/app\/(\S+)/gm)) {
    assert.ok(existsSync(join(ROOT, built!)), `/app/${built} exists after the build`);
  }
  // The install rebuilds lmdb with the free-list fix (scripts/lmdb-freelist-fix.mjs): it needs a
  // compiler, make and Python in the build stage, before npm ci.
  const buildStage = dockerfile.slice(0, dockerfile.lastIndexOf('\nFROM '));
  const toolchain = buildStage.search(/^RUN .*apt-get install .*build-essential.*python3/m);
  assert.ok(toolchain >= 0 && toolchain < buildStage.search(/^RUN npm ci/m), 'build-essential and python3 installed before npm ci');
  assert.match(dockerfile, /^USER node$/m);
  assert.match(dockerfile, /^HEALTHCHECK .*\n.*\/ready/m);
  assert.match(dockerfile, /^CMD \["bin\/affinity-serve"\]$/m);
  assert.ok(existsSync(join(ROOT, 'dist', 'main.js')));
  assert.ok(statSync(join(ROOT, 'bin', 'affinity-serve')).mode & 0o111, 'the launcher is executable (COPY keeps the mode)');
});

test('the systemd unit starts the launcher, stops with SIGTERM and gives the drain time', () => {
  const unit = readFileSync(join(ROOT, 'deploy', 'affinity.service'), 'utf8');
  assert.match(unit, /^ExecStart=\/opt\/affinity\/bin\/affinity-serve$/m);
  assert.match(unit, /^KillSignal=SIGTERM$/m);
  const stopSec = Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1]);
  assert.ok(stopSec > 10 + 15, 'longer than the default drain (10 s) plus the stop of the workers');
  assert.match(unit, /^User=affinity$/m);
});
