// RFC 9457 problem bodies as every error response of the service writes them (DESIGN.md), and
// the one assertion of their shape that the integration tests share.
import assert from 'node:assert/strict';

export interface FieldErrorEntry {
  index?: number;
  path: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldErrorEntry[];
  /** The request id, also in the X-Request-Id response header. */
  request_id: string;
}

/** Asserts a problem response (status, media type, RFC 9457 fields and nothing else); returns its body. */
export async function assertProblem(res: Response, status: number, kind: string): Promise<Problem> {
  const text = await res.text();
  assert.equal(res.status, status, `status (body: ${text.slice(0, 500)})`);
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  const body = JSON.parse(text) as Problem;
  assert.equal(body.type, `urn:affinity:problem:${kind}`);
  assert.equal(body.status, status);
  assert.ok(typeof body.title === 'string' && body.title.length > 0, 'title is a non-empty string');
  assert.ok(typeof body.detail === 'string' && body.detail.length > 0, 'detail is a non-empty string');
  assert.ok(typeof body.request_id === 'string' && body.request_id.length > 0, 'request_id is a non-empty string');
  assert.equal(res.headers.get('x-request-id'), body.request_id, 'the body names the request id of the X-Request-Id header');
  for (const key of Object.keys(body)) {
    assert.ok(['type', 'title', 'status', 'detail', 'errors', 'request_id'].includes(key), `unexpected problem field '${key}'`);
  }
  return body;
}

/** Each expected path is among the problem's errors (with a matching message when given), and no other path is. */
export function assertFieldErrors(problem: Problem, expected: Array<[path: string, message?: RegExp]>): void {
  const errors = problem.errors ?? [];
  for (const e of errors) assert.ok(e.message.length > 0, `an error message for '${e.path}'`);
  for (const [path, message] of expected) {
    const entry = errors.find((e) => e.path === path && (message === undefined || message.test(e.message)));
    assert.ok(entry, `an error for path '${path}'${message ? ` matching ${message}` : ''} in ${JSON.stringify(errors)}`);
  }
  assert.deepEqual([...new Set(errors.map((e) => e.path))].sort(), [...new Set(expected.map(([p]) => p))].sort());
}
