/**
 * @module serving/worker-interfaces
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
 *
 * The same class keeps each worker's tasks in flight in a Map (`taskInfos`): a set and a delete
 * per task. V8 allocates the rebuilt table of a Map that lives in old space in old space too, and
 * a Map whose entries come and go is rebuilt every few tasks: a bare Piscina loop with 4 tasks in
 * flight left 62 bytes of old space per task (0 with the table below), the served main thread
 * (100,000 items, 4 connections) ~0.65 of the ~2 MB a second its old generation grew by between
 * mark-compacts. replaceTaskMaps gives each worker a TaskTable instead: the same methods over two
 * arrays that never shrink.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const BUILT = Symbol('affinity.workerInterface');
const TASKS = Symbol('affinity.taskTable');
let memoized: boolean | undefined;
let replaced: boolean | undefined;

/** Piscina's WorkerInfo prototype, or undefined when a release moved it. */
function workerInfoPrototype(): object | undefined {
  try {
    const workerPool = require(join(dirname(require.resolve('piscina')), 'worker_pool', 'index.js')) as { WorkerInfo?: { prototype: object } };
    return workerPool.WorkerInfo?.prototype;
  } catch {
    return undefined;
  }
}

/**
 * Makes Piscina build each worker's interface object once. Returns whether it could (false when
 * a Piscina release no longer has the getter: nothing is changed then). Idempotent.
 */
export function memoizeWorkerInterfaces(): boolean {
  if (memoized !== undefined) return memoized;
  const prototype = workerInfoPrototype();
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

/**
 * A worker's tasks in flight by id, with the Map methods Piscina calls on `taskInfos`. Entries in
 * insertion order (Piscina reads the first one when only one runs); a delete moves the later ones
 * down, and the arrays keep their length, so no task allocates.
 */
export class TaskTable<K, V> {
  readonly #keys: Array<K | undefined> = new Array(8).fill(undefined);
  readonly #values: Array<V | undefined> = new Array(8).fill(undefined);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  #indexOf(key: K): number {
    for (let i = 0; i < this.#size; i++) if (this.#keys[i] === key) return i;
    return -1;
  }

  has(key: K): boolean {
    return this.#indexOf(key) >= 0;
  }

  get(key: K): V | undefined {
    const i = this.#indexOf(key);
    return i < 0 ? undefined : this.#values[i];
  }

  set(key: K, value: V): this {
    const i = this.#indexOf(key);
    if (i >= 0) {
      this.#values[i] = value;
      return this;
    }
    this.#keys[this.#size] = key;
    this.#values[this.#size++] = value;
    return this;
  }

  delete(key: K): boolean {
    const i = this.#indexOf(key);
    if (i < 0) return false;
    for (let j = i + 1; j < this.#size; j++) {
      this.#keys[j - 1] = this.#keys[j];
      this.#values[j - 1] = this.#values[j];
    }
    this.#size--;
    this.#keys[this.#size] = undefined;
    this.#values[this.#size] = undefined;
    return true;
  }

  clear(): void {
    this.#keys.fill(undefined);
    this.#values.fill(undefined);
    this.#size = 0;
  }

  *values(): IterableIterator<V> {
    for (let i = 0; i < this.#size; i++) yield this.#values[i]!;
  }

  *[Symbol.iterator](): IterableIterator<[K, V]> {
    for (let i = 0; i < this.#size; i++) yield [this.#keys[i]!, this.#values[i]!];
  }
}

/**
 * Makes each Piscina worker created from now on keep its tasks in a TaskTable: the empty Map its
 * constructor assigns to `taskInfos` is exchanged on assignment. Returns whether it could (false
 * when a Piscina release no longer has the class or already defines the property: nothing is
 * changed then). Idempotent.
 */
export function replaceTaskMaps(): boolean {
  if (replaced !== undefined) return replaced;
  const prototype = workerInfoPrototype();
  if (!prototype || Object.getOwnPropertyDescriptor(prototype, 'taskInfos')) return (replaced = false);
  Object.defineProperty(prototype, 'taskInfos', {
    configurable: true,
    get(this: Record<symbol, unknown>) {
      return this[TASKS];
    },
    set(this: Record<symbol, unknown>, value: unknown) {
      this[TASKS] = value instanceof Map && value.size === 0 ? new TaskTable() : value;
    },
  });
  return (replaced = true);
}
