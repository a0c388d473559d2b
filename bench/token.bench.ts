// The token endpoint under guessing clients (issue 16): wrk with 16 connections, each request a
// fresh wrong secret (bench/wrk/token-guess.lua), for --seconds (default 20), against a fresh
// service with the default limits. Two runs: all guesses at the demo client's id, then a new
// random id per request. Prints answers per status and per second, and the service's CPU use
// (user + system time of its process over the run, as % of one core), and /health's counters.
//
//   npm run bench -- token [--seconds 20] [--connections 16]
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from '../test/helpers/server.ts';
import { parseWrkResult } from './wrk-result.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '20' }, connections: { type: 'string', default: '16' } }, allowPositionals: true });
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const TICKS_PER_SEC = 100; // USER_HZ on Linux

const server = await startServer();
const cpuTicks = () => {
  const fields = readFileSync(`/proc/${server.proc.pid}/stat`, 'latin1').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime (fields 14 and 15 of stat)
};
try {
  for (const target of [server.demoClient!.clientId, 'random']) {
    const before = cpuTicks();
    const run = spawnSync('wrk', ['-t2', `-c${connections}`, `-d${seconds}s`, '-s', join(import.meta.dirname, 'wrk', 'token-guess.lua'), server.url, '--', target], { encoding: 'utf8' });
    const cpuPct = ((cpuTicks() - before) / TICKS_PER_SEC / seconds) * 100;
    const result = parseWrkResult(run.stdout);
    if (!result) throw new Error(`wrk printed no result: ${run.stdout}${run.stderr}`);
    const secs = result.duration_us / 1e6;
    const perSec = Object.fromEntries(Object.entries(result.statuses).map(([s, n]) => [s, Number((n / secs).toFixed(1))]));
    const health = (await (await fetch(`${server.url}/health`)).json()) as { token_endpoint: unknown };
    console.log(
      `${connections} guessers, client id ${target === 'random' ? 'random per request' : 'of the demo client'}, ${secs.toFixed(1)} s: ` +
        `${result.requests} answers (${(result.requests / secs).toFixed(0)}/s), per status ${JSON.stringify(result.statuses)}, per second ${JSON.stringify(perSec)}, ` +
        `socket errors ${JSON.stringify(result.errors)}, latency p50 ${(result.latency_us.p50 / 1000).toFixed(2)} ms p99 ${(result.latency_us.p99 / 1000).toFixed(2)} ms, ` +
        `service CPU ${cpuPct.toFixed(0)}% of one core; /health token_endpoint ${JSON.stringify(health.token_endpoint)}`,
    );
  }
} finally {
  await server.close();
}
