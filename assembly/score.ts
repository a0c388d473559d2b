// Score terms of one candidate: time decay of a seed's weight, the recency prior and the content
// dot product. Pure arithmetic on values and pointers the caller has checked; no state. Every
// f32 operation and its order is part of the specification (src/recommend/reference-ranker.ts
// repeats them with Math.fround), so do not reorder, fuse or reassociate them.
import { REC_VECTOR, REC_VECTOR_SCALE, VECTOR_DIM } from "./abi";

/**
 * 2^(-ageSec / halfLifeSec) rounded to f32, in f64 first (exp2 of the musl/ARM routines, within
 * 0.52 ulp of exact, so it rounds to the same f32 as the reference's 2 ** x but for ~1 in 2^28).
 */
// @ts-ignore: decorator
@inline export function halfLifeDecay(ageSec: u32, halfLifeSec: f32): f32 {
  return <f32>Math.exp2(-(<f64>ageSec / <f64>halfLifeSec));
}

/** A seed's weight decayed by its age; time 0 means no decay, a future time no decay either. */
export function decayedSeedWeight(weight: f32, timeSec: u32, nowSec: u32, halfLifeSec: f32): f32 {
  if (timeSec == 0) return weight;
  const age = nowSec > timeSec ? nowSec - timeSec : 0;
  return weight * halfLifeDecay(age, halfLifeSec);
}

/** Recency prior in [0, 1]: 0 when unknown (0), 1 when published now or later, else decayed. */
// @ts-ignore: decorator
@inline export function recencyPrior(publishedSec: u32, nowSec: u32, halfLifeSec: f32): f32 {
  if (publishedSec == 0) return 0;
  if (publishedSec >= nowSec) return 1;
  return halfLifeDecay(nowSec - publishedSec, halfLifeSec);
}

/**
 * Dot product of an item's content vector (its record's i8 vector × vectorScale) with the f32
 * context, in 4 lanes: lane j sums dims j, j+4, j+8, ... in order, then
 * ((lane0 + lane1) + (lane2 + lane3)) × vectorScale. Four chains instead of one cut the
 * add-latency chain from 32 to 8 steps; an i8 converts to f32 exactly, so the order is all the
 * reference (src/recommend/reference-ranker.ts) has to repeat. The lanes are one f32x4: dims
 * d..d+3 land in lanes 0..3, multiplied and added as unfused f32 operations, the same roundings
 * as four scalar chains (it was ~6% of a ranking worker as scalar code: perf, 100,000 items).
 */
// @ts-ignore: decorator
@inline export function contentDot(record: usize, context: usize): f32 {
  const v = record + REC_VECTOR;
  let lanes = f32x4.splat(0);
  for (let d = 0; d < VECTOR_DIM; d += 16) {
    const bytes = v128.load(v + <usize>d);
    const low = i16x8.extend_low_i8x16_s(bytes);
    const high = i16x8.extend_high_i8x16_s(bytes);
    const at = context + (<usize>d << 2);
    lanes = f32x4.add(lanes, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(low)), v128.load(at)));
    lanes = f32x4.add(lanes, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(low)), v128.load(at, 16)));
    lanes = f32x4.add(lanes, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(high)), v128.load(at, 32)));
    lanes = f32x4.add(lanes, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(high)), v128.load(at, 48)));
  }
  const sum = (f32x4.extract_lane(lanes, 0) + f32x4.extract_lane(lanes, 1)) + (f32x4.extract_lane(lanes, 2) + f32x4.extract_lane(lanes, 3));
  return sum * load<f32>(record + REC_VECTOR_SCALE);
}
