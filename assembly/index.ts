// Exported ABI of the ranking kernel. Only entry points live here; the numeric work is in
// topk.ts. Every export checks its bounds once and returns an i32 status instead of throwing
// (an AssemblyScript throw traps and leaves the instance unusable).
import { ABI_VERSION, STATUS_BAD_ARGS, STATUS_OUT_OF_MEMORY } from "./abi";
import { selectTopK } from "./topk";

export function abiVersion(): i32 {
  return ABI_VERSION;
}

/** First byte of the arena the host may write into (16-byte aligned, after static data). */
export function arenaOffset(): usize {
  return (__heap_base + 15) & ~(<usize>15);
}

/** Grows memory so the arena holds `bytes`; returns 0 or STATUS_OUT_OF_MEMORY. */
export function reserveArena(bytes: usize): i32 {
  const end = arenaOffset() + bytes;
  const have = <usize>memory.size() << 16;
  if (end <= have) return 0;
  const pages = <i32>((end - have + 0xffff) >> 16);
  return memory.grow(pages) < 0 ? STATUS_OUT_OF_MEMORY : 0;
}

/**
 * Top-k of `n` f32 scores at `scoresOff`, written as u32 candidate indices at `outOff`
 * (room for k). Non-finite scores are filtered out. Returns the count written or a status.
 */
export function topK(scoresOff: usize, n: i32, k: i32, outOff: usize): i32 {
  const limit = <usize>memory.size() << 16;
  if (n < 0 || k < 0) return STATUS_BAD_ARGS;
  if (scoresOff + (<usize>n << 2) > limit || outOff + (<usize>k << 2) > limit) return STATUS_BAD_ARGS;
  if (k == 0 || n == 0) return 0;
  return selectTopK(scoresOff, n, k, outOff);
}
