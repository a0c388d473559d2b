/**
 * @module recommend/kernel
 * WasmRanker: the AssemblyScript ranking kernel (build/kernel.wasm) behind the Ranker role.
 * One instance per worker; it owns one arena in WASM memory, grown on demand and reused, so a
 * ranking allocates nothing. Layout constants match assembly/abi.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../errors.ts';
import type { Ranker } from './reference-ranker.ts';

/** Must equal ABI_VERSION in assembly/abi.ts. */
export const ABI_VERSION = 1;
const STATUS_BAD_ARGS = -1;
const STATUS_OUT_OF_MEMORY = -2;

interface KernelExports {
  memory: WebAssembly.Memory;
  abiVersion(): number;
  arenaOffset(): number;
  reserveArena(bytes: number): number;
  topK(scoresOff: number, n: number, k: number, outOff: number): number;
}

export const KERNEL_PATH = join(import.meta.dirname, '..', '..', 'build', 'kernel.wasm');

let compiled: WebAssembly.Module | undefined;

function kernelError(status: number): AppError {
  const what = status === STATUS_OUT_OF_MEMORY ? 'out of memory' : status === STATUS_BAD_ARGS ? 'bad arguments' : `status ${status}`;
  return new AppError('internal', 500, 'Internal Server Error', `Ranking kernel failed: ${what}`);
}

export class WasmRanker implements Ranker {
  #exports: KernelExports;
  #capacity = 0;
  #scoresOff = 0;
  #outOff = 0;

  constructor(wasmPath = KERNEL_PATH) {
    compiled ??= new WebAssembly.Module(readFileSync(wasmPath));
    this.#exports = new WebAssembly.Instance(compiled, {
      env: {
        abort: () => {
          throw new Error('ranking kernel aborted');
        },
      },
    }).exports as unknown as KernelExports;
    const version = this.#exports.abiVersion();
    if (version !== ABI_VERSION) throw new Error(`kernel ABI ${version}, expected ${ABI_VERSION}: rebuild with npm run build`);
  }

  /** A view on kernel memory with room for `n` scores; write candidates' scores into it. */
  scoresBuffer(n: number): Float32Array {
    this.#reserve(n);
    return new Float32Array(this.#exports.memory.buffer, this.#scoresOff, n);
  }

  /** Indices of the `k` best of the first `n` scores, best first; valid until the next call. */
  selectTopK(n: number, k: number): Uint32Array {
    this.#reserve(n);
    const count = this.#exports.topK(this.#scoresOff, n, Math.min(k, n), this.#outOff);
    if (count < 0) throw kernelError(count);
    return new Uint32Array(this.#exports.memory.buffer, this.#outOff, count);
  }

  #reserve(n: number): void {
    if (n <= this.#capacity) return;
    const capacity = Math.max(n, this.#capacity * 2, 1024);
    const status = this.#exports.reserveArena(capacity * 8);
    if (status !== 0) throw kernelError(status);
    const base = this.#exports.arenaOffset();
    this.#scoresOff = base;
    this.#outOff = base + capacity * 4;
    this.#capacity = capacity;
  }
}
