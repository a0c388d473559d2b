// Token helpers for tests: the real token endpoint and the real CLI, no shortcuts.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestServer } from './server.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/** Gets an access token from POST /api/oauth/token with HTTP Basic client authentication. */
export async function getToken(
  server: TestServer,
  client = server.demoClient!,
  scope?: string,
): Promise<string> {
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  if (scope) body.set('scope', scope);
  const res = await fetch(`${server.url}/api/oauth/token`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body,
  });
  if (res.status !== 200) throw new Error(`token endpoint answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Runs `affinity <args>` (bin/affinity.js) against a data directory; returns stdout, stderr and code. */
export async function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin/affinity.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}
