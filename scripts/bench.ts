// `npm run bench`: build (dist/ and the WASM kernel), then run every bench/*.bench.ts, each in a fresh
// process (`node --import tsx`) so JIT state and open handles never carry over between benches.
// `npm run bench -- http kernel` runs only the benches whose file name contains one of the words.
// Arguments from the first `--flag` on are passed to every selected bench (`npm run bench -- soak
// --minutes 10`); `--minutes N` also extends the timeout below to N + 10 minutes.
// Environment is passed through: BENCH_QUICK=1 (short runs, as CI), BENCH_JSON=1, BENCH_ROUNDS.
// A bench still running after BENCH_TIMEOUT_SEC (default 1800) is stopped with the servers it
// started (its whole process group) and counted as failed, so one hung bench cannot stall the rest.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const benchDir = join(root, 'bench');
const defaultTimeoutMs = Number(process.env.BENCH_TIMEOUT_SEC ?? 1800) * 1000;

const args = process.argv.slice(2);
const firstFlag = args.findIndex((a) => a.startsWith('--'));
const filters = firstFlag < 0 ? args : args.slice(0, firstFlag);
const passed = firstFlag < 0 ? [] : args.slice(firstFlag);
const minutesAt = passed.indexOf('--minutes');
const runMinutes = minutesAt >= 0 ? Number(passed[minutesAt + 1]) : undefined;
const all = readdirSync(benchDir)
  .filter((name) => name.endsWith('.bench.ts'))
  .sort();
const selected = filters.length === 0 ? all : all.filter((name) => filters.some((f) => name.includes(f)));
if (selected.length === 0) {
  console.error(`no bench matches ${filters.join(', ')} (have: ${all.join(', ') || 'none'})`);
  process.exit(1);
}

// The whole build (dist/ and the kernel): benches that start the service run it as npm start does.
const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(1);

/** Runs one bench in its own process group; resolves with its exit code (null when stopped). */
function runBench(file: string): Promise<number | null> {
  // The soak's default run is an hour; any bench given --minutes gets its run plus 10 minutes.
  const minutes = runMinutes ?? (file.includes('soak') ? 60 : 0);
  const timeoutMs = Math.max(defaultTimeoutMs, (minutes + 10) * 60_000);
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...passed], { cwd: root, stdio: 'inherit', detached: true });
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  // Being in its own group, the bench no longer gets the terminal's Ctrl-C: pass it on, and
  // run no further bench.
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = true;
    killGroup(signal);
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  const timer = setTimeout(() => {
    console.error(`\n${file}: still running after ${timeoutMs / 1000} s, stopping it`);
    killGroup('SIGTERM');
    setTimeout(() => killGroup('SIGKILL'), 10_000).unref();
  }, timeoutMs);
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      clearTimeout(timer);
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
      // Whatever it left behind (servers it started) goes with it.
      killGroup('SIGTERM');
      resolve(code);
    });
  });
}

let interrupted = false;
const failed: string[] = [];
for (const name of selected) {
  console.error(`\n# bench/${name}`);
  if ((await runBench(join('bench', name))) !== 0) failed.push(name);
  if (interrupted) {
    console.error('interrupted');
    process.exit(130);
  }
}
if (failed.length > 0) {
  console.error(`\nfailed: ${failed.join(', ')}`);
  process.exit(1);
}
