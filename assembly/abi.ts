// ABI shared with src/recommend/kernel.ts: offsets are byte offsets into linear memory,
// lengths are element counts, results are i32 (>= 0 a count, < 0 a STATUS_* error).
export const ABI_VERSION: i32 = 1;
export const STATUS_BAD_ARGS: i32 = -1;
export const STATUS_OUT_OF_MEMORY: i32 = -2;
