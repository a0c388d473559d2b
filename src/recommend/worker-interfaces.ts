/**
 * @module recommend/worker-interfaces
 * Piscina 5 hands its load balancer each worker's `interface`: a getter on its WorkerInfo class
 * that builds a new object literal with six accessors on every call, and Piscina calls it for
 * every worker on every task it places. V8 gives each such object a map of its own, in old space,
 * whose descriptors hold that object's getter closures: old space pointing at them, the closures
 * and what they reach survived every scavenge and were promoted, to die at the next mark-compact.
 * Measured (issue 11): a bare Piscina loop promoted ~45% of what its main thread allocated
 * (~800 KB a scavenge; none with this module, and 13% more tasks a second); the served
 * 100,000-item bench's main thread promoted ~190 KB a scavenge at 4 connections and ran a
 * mark-compact every ~1.7 s, each a 2.4–5.2 ms pause. The object only forwards to the worker's
 * live state, so one per worker serves every reader the same: memoized here, on the class the
 * loaded Piscina uses (its package exports do not name the file; an absolute path is the same
 * module to Node's cache).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const BUILT = Symbol('affinity.workerInterface');
let memoized: boolean | undefined;

/**
 * Makes Piscina build each worker's interface object once. Returns whether it could (false when
 * a Piscina release no longer has the getter: nothing is changed then). Idempotent.
 */
export function memoizeWorkerInterfaces(): boolean {
  if (memoized !== undefined) return memoized;
  let prototype: object | undefined;
  try {
    const workerPool = require(join(dirname(require.resolve('piscina')), 'worker_pool', 'index.js')) as { WorkerInfo?: { prototype: object } };
    prototype = workerPool.WorkerInfo?.prototype;
  } catch {
    prototype = undefined;
  }
  const descriptor = prototype ? Object.getOwnPropertyDescriptor(prototype, 'interface') : undefined;
  const build = descriptor?.get;
  if (!prototype || !build || !descriptor.configurable) return (memoized = false);
  Object.defineProperty(prototype, 'interface', {
    ...descriptor,
    get(this: Record<symbol, unknown>) {
      return (this[BUILT] ??= build.call(this));
    },
  });
  return (memoized = true);
}
