// Dense vector arithmetic for the trained model's scores (src/recommend/dense-scorer.ts): a
// user's scores are the sum of their history items' rows of the model, weighted. SIMD, four
// lanes at a time; the caller (index.ts) has checked both ranges lie in the arena.

/** y[i] += a × x[i] for i < n. */
export function axpyF32(y: usize, x: usize, n: i32, a: f32): void {
  const av = f32x4.splat(a);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const at = <usize>i << 2;
    v128.store(y + at, f32x4.add(v128.load(y + at), f32x4.mul(v128.load(x + at), av)));
  }
  for (; i < n; i++) {
    const at = <usize>i << 2;
    store<f32>(y + at, load<f32>(y + at) + a * load<f32>(x + at));
  }
}
