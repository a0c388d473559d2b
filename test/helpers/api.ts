// A small authenticated client for the JSON endpoints of a test server.
import type { TestServer } from './server.ts';

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  /** Parsed JSON body (undefined when empty). */
  body: T;
  text: string;
}

export type Api = <T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<ApiResponse<T>>;

/** `api('POST', '/api/demo/feeds', {...})`: JSON in and out, with the bearer token. */
export function apiClient(server: TestServer, token: string): Api {
  return async <T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const init: RequestInit = { method, headers: { Authorization: `Bearer ${token}`, ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' || body instanceof Uint8Array ? (body as string | Uint8Array) : JSON.stringify(body);
      if (!('Content-Type' in headers)) (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
    }
    const res = await fetch(`${server.url}${path}`, init);
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text === '' ? undefined : JSON.parse(text)) as T, text };
  };
}

/** Polls `check` every `everyMs` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
