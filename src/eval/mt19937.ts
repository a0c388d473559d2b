/**
 * @module eval/mt19937
 * The Mersenne Twister MT19937 as numpy's legacy `np.random.seed(seed)` / `np.random.rand(n)`
 * use it (init_genrand seeding, 53-bit doubles from two draws), so a split with seed 42 draws
 * the same numbers as the recommenders benchmark notebook's `python_stratified_split`.
 * test/unit/eval checks the first draws against numpy's. Pure.
 */

const N = 624;
const M = 397;

export class Mt19937 {
  readonly #mt = new Uint32Array(N);
  #index = N;

  /** numpy's `RandomState(seed)` for an integer seed in [0, 2³²). */
  constructor(seed: number) {
    const mt = this.#mt;
    mt[0] = seed >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1]! ^ (mt[i - 1]! >>> 30);
      // 1812433253 × prev + i, mod 2³², without losing bits to doubles.
      mt[i] = (((((prev & 0xffff0000) >>> 16) * 1812433253) << 16) + (prev & 0x0000ffff) * 1812433253 + i) >>> 0;
    }
  }

  #twist(): void {
    const mt = this.#mt;
    for (let i = 0; i < N; i++) {
      const y = (mt[i]! & 0x80000000) | (mt[(i + 1) % N]! & 0x7fffffff);
      mt[i] = mt[(i + M) % N]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    this.#index = 0;
  }

  /** The next 32-bit output. */
  nextU32(): number {
    if (this.#index >= N) this.#twist();
    let y = this.#mt[this.#index++]!;
    y ^= y >>> 11;
    y = (y ^ ((y << 7) & 0x9d2c5680)) >>> 0;
    y = (y ^ ((y << 15) & 0xefc60000)) >>> 0;
    return (y ^ (y >>> 18)) >>> 0;
  }

  /** A double in [0, 1) with 53 random bits: numpy's `random_sample` (genrand_res53). */
  random(): number {
    const a = this.nextU32() >>> 5;
    const b = this.nextU32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }
}
