// Starts the real service (the build through bin/affinity-serve as `npm start` runs it, or
// `src/main.ts` through tsx) as a child process on a free port with a fresh data directory, and
// reads its demo client credentials from its first-start log line.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { after } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');

export interface TestServer {
  url: string;
  port: number;
  dataDir: string;
  proc: ChildProcess;
  /** Credentials of the demo client created on first start (undefined on a restart). */
  demoClient?: { clientId: string; clientSecret: string };
  /** Every log line printed so far (stdout and stderr). */
  logs: string[];
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** Stops the process (if running) and removes the data directory unless it was given. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Reuse a data directory (for restarts); by default a fresh temporary one. */
  dataDir?: string;
  /** Configuration written to a temporary JSON file and passed as AFFINITY_CONFIG. */
  config?: unknown;
  env?: Record<string, string>;
  /** Extra node flags before the entry (e.g. --cpu-prof for profiling benches). */
  nodeArgs?: string[];
  /**
   * true (the default): the build through bin/affinity-serve, as `npm start` runs it (its GC
   * choice included; scripts/test.ts builds first). The launcher execs node: `proc.pid` is the
   * service's. false: `src/main.ts` through tsx, for a change not yet built; it starts ~1 s
   * slower (tsx compiles every module in every thread), which over the suite's ~150 starts
   * was minutes.
   */
  built?: boolean;
  /**
   * 'ready' (the default): resolve once the ranking engines are built and recommendations are
   * served. 'listening': as soon as the port opens, while the ranking workers may still load.
   */
  waitFor?: 'listening' | 'ready';
  /** The install whose bin/affinity-serve runs (a copy of this checkout's build): this checkout by default. */
  root?: string;
}

/**
 * Servers still running (each until its process exits). One left behind by a failed test, or by
 * an `after` hook that threw and so skipped the hook after it that would have stopped it, keeps
 * the test file's process alive through its output pipes, and CI waited for it until killed at
 * its 90 minutes. So once a file's tests and hooks are done, whatever still runs a minute later
 * is killed (an unref'd timer: a file that ends normally exits without waiting for it), and at
 * the process's exit too. Not the runner's --test-force-exit: with process isolation it drops
 * the verdicts a file's process had not yet sent (nodejs/node#64833: a clean clone reported 1,045
 * of 1,054 tests, fail 0).
 */
const running = new Set<ChildProcess>();
const killRunning = () => {
  for (const proc of running) proc.kill('SIGKILL');
};
const LEFT_RUNNING_GRACE_MS = 60_000;
process.on('exit', killRunning);
// Inside the test runner only: the benches import this module too.
if (process.env.NODE_TEST_CONTEXT) after(() => void setTimeout(killRunning, LEFT_RUNNING_GRACE_MS).unref());

export function tempDir(prefix = 'affinity-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? tempDir();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: '0',
    AFFINITY_HOST: '127.0.0.1',
    AFFINITY_DATA_DIR: dataDir,
    AFFINITY_LOG_LEVEL: 'info',
    ...options.env,
  };
  let configDir: string | undefined;
  if (options.config !== undefined) {
    configDir = tempDir('affinity-config-');
    const file = join(configDir, 'config.json');
    writeFileSync(file, JSON.stringify(options.config));
    env.AFFINITY_CONFIG = file;
  }
  const built = options.built ?? true;
  // The launcher runs `node` from PATH: the one running these tests, first.
  if (built) env.PATH = `${dirname(process.execPath)}${delimiter}${env.PATH ?? ''}`;
  const [command, args] = built
    ? [join(options.root ?? ROOT, 'bin/affinity-serve'), options.nodeArgs ?? []]
    : [process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', join(ROOT, 'src/main.ts')]];
  const proc = spawn(command, args, {
    cwd: options.root ?? ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code, signal) => {
      running.delete(proc);
      // A null code alone says nothing in a failed assertion; the logs it prints then do.
      if (signal) logs.push(`(the process was ended by ${signal})`);
      resolve(code);
    }),
  );
  createInterface({ input: proc.stderr! }).on('line', (line) => logs.push(line));

  let demoClient: TestServer['demoClient'];
  let listeningPort: number | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout! });
    lines.on('line', (line) => {
      logs.push(line);
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      if (typeof entry.client_secret === 'string') {
        demoClient = { clientId: String(entry.client_id), clientSecret: entry.client_secret };
      }
      // Tests start once recommendations are served: the port opens while the ranking
      // workers still build their engines ('listening' comes first, then 'ready').
      if (entry.msg === 'listening') listeningPort = Number(entry.port);
      if (listeningPort !== undefined && (entry.msg === 'ready' || options.waitFor === 'listening')) resolve(listeningPort);
    });
    void exited.then((code) => reject(new Error(`server exited with ${code} before ${listeningPort === undefined ? 'listening' : 'it was ready'}:\n${logs.join('\n')}`)));
  });

  /** SIGTERM, then SIGKILL if the process has not exited within `graceMs`, so a test never hangs. */
  const stop = async (graceMs = 30_000) => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    proc,
    demoClient,
    logs,
    exited,
    stop,
    async close() {
      await stop();
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
      if (configDir) rmSync(configDir, { recursive: true, force: true });
    },
  };
}

/** A data directory shared by servers started (and restarted) on it. */
export interface SharedDataDir {
  dataDir: string;
  /** Registers a server for close(); returns it. */
  track(server: TestServer): TestServer;
  /** Stops every tracked server, then removes the directory. */
  close(): Promise<void>;
}

export function sharedDataDir(): SharedDataDir {
  const dataDir = tempDir();
  const servers: TestServer[] = [];
  return {
    dataDir,
    track(server) {
      servers.push(server);
      return server;
    },
    async close() {
      for (const server of servers) await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The default drain limit (server.shutdownTimeoutMs, 10 s) plus a wide margin. Not a speed check:
 * it turns a shutdown that never ends into a failure instead of a hung suite.
 */
export const SHUTDOWN_BOUND_MS = 30_000;

/** The exit code of a server told to stop; fails (and kills it) if it is still running after `ms`. */
export async function exitCodeWithin(server: TestServer, ms = SHUTDOWN_BOUND_MS, after = 'the signal'): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), ms)));
  const outcome = await Promise.race([server.exited, hung]);
  clearTimeout(timer);
  if (outcome === 'hung') {
    server.proc.kill('SIGKILL');
    assert.fail(`the process had not exited ${ms} ms after ${after}:\n${server.logs.slice(-20).join('\n')}`);
  }
  return outcome;
}
