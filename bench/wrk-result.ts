// The result line that bench/wrk/common.lua's done() prints, and the figures read off it; shared
// by the wrk-driven benches.

/** One wrk run as printed by bench/wrk/common.lua (`WRK_RESULT {...}`). */
export interface WrkResult {
  requests: number;
  duration_us: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  statuses: Record<string, number>;
  latency_us: { min: number; mean: number; max: number; p50: number; p90: number; p99: number; p999: number };
}

const PREFIX = 'WRK_RESULT ';

/** The result in wrk's stdout, or undefined when the run printed none. */
export function parseWrkResult(stdout: string): WrkResult | undefined {
  const line = stdout.split('\n').find((l) => l.startsWith(PREFIX));
  return line ? (JSON.parse(line.slice(PREFIX.length)) as WrkResult) : undefined;
}

export function requestsPerSec(r: WrkResult): number {
  return r.requests / (r.duration_us / 1e6);
}

/** Non-2xx responses plus socket errors and timeouts. */
export function failures(r: WrkResult): number {
  let n = r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout;
  for (const [status, count] of Object.entries(r.statuses)) if (!status.startsWith('2')) n += count;
  return n;
}
