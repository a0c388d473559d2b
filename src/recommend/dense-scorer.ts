/**
 * @module recommend/dense-scorer
 * The trained model's numeric core on the request path: an instance of the kernel (its own
 * memory) holding the model's rows, where a user's scores are summed with the kernel's SIMD
 * `axpy` (one call per history item) and the best picked with its `topK`. In JavaScript the
 * same sums cost a few hundred microseconds per request. Memory: [rows n × n f32][scores n f32]
 * [out n u32] from the arena; rows are copied in on first use, so untouched ones cost nothing.
 */
import { rankerError } from './reference-ranker.ts';
import { KERNEL_PATH, instantiateKernel, type KernelExports } from './kernel.ts';

const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;

export class DenseScorer {
  readonly #exports: KernelExports;
  readonly #arena: number;
  #n = 0;
  #scoresOff = 0;
  #outOff = 0;
  #loaded = new Uint8Array(0);
  #f32 = new Float32Array(0);
  #u32 = new Uint32Array(0);

  constructor(wasmPath = KERNEL_PATH) {
    this.#exports = instantiateKernel(wasmPath);
    this.#arena = this.#exports.arenaOffset() >>> 0;
  }

  /** Makes room for an n × n model; every row is unloaded until setRow. */
  reset(n: number): void {
    const rowsBytes = align16(n * n * 4);
    this.#scoresOff = this.#arena + rowsBytes;
    this.#outOff = this.#scoresOff + align16(n * 4);
    if (this.#exports.reserveArena(rowsBytes + 2 * align16(n * 4)) !== 0) throw rankerError(`no memory for a ${n} × ${n} model`);
    this.#n = n;
    this.#loaded = new Uint8Array(n);
    this.#f32 = new Float32Array(this.#exports.memory.buffer);
    this.#u32 = new Uint32Array(this.#exports.memory.buffer);
  }

  get size(): number {
    return this.#n;
  }

  hasRow(c: number): boolean {
    return this.#loaded[c] === 1;
  }

  /** Copies row `c` (n f32, any alignment) into the model. */
  setRow(c: number, bytes: Uint8Array): void {
    new Uint8Array(this.#exports.memory.buffer, this.#arena + c * this.#n * 4, this.#n * 4).set(bytes);
    this.#loaded[c] = 1;
  }

  /** The scores, a view valid until the next reset. */
  get scores(): Float32Array {
    return this.#f32.subarray(this.#scoresOff >>> 2, (this.#scoresOff >>> 2) + this.#n);
  }

  /** scores += weight × row c. */
  add(c: number, weight: number): void {
    const status = this.#exports.axpy(this.#scoresOff, this.#arena + c * this.#n * 4, this.#n, weight);
    if (status !== 0) throw rankerError(`axpy returned ${status}`);
  }

  /** Columns of the `k` best finite scores, best first; a view valid until the next call. */
  top(k: number): Uint32Array {
    const count = this.#exports.topK(this.#scoresOff, this.#n, Math.min(k, this.#n), this.#outOff);
    if (count < 0) throw rankerError(`topK returned ${count}`);
    return this.#u32.subarray(this.#outOff >>> 2, (this.#outOff >>> 2) + count);
  }
}
