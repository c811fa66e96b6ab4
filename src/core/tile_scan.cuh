/* tile_scan.cuh - an exclusive sum computed inside the kernel that produces the summands, in one
 * pass (Merrill and Garland's single-pass scan with decoupled look-back). Blocks take tiles in
 * order from a counter; a block sums its tile, publishes that sum, then adds up its predecessors'
 * published words (stopping at the first that holds a running total) to learn where its tile
 * starts, and publishes its own running total. A kernel that computes per-element counts and
 * needs their offsets (gh_find_all's count pass) writes the offsets at once, where a separate scan
 * would read the counts back and write them again.
 *
 * Usage, every thread of a block of kThreads threads:
 *   for (uint64_t tile = gh_tile_claim(s); tile < tiles; tile = gh_tile_claim(s)) {
 *     ... this thread's part of the tile: `mine` ...
 *     const uint64_t before_me = gh_tile_exclusive_sum<kThreads>(s, tile, mine);
 *   }
 * Blocks may loop over tiles (a resident grid): a block waits only for tiles claimed before its
 * own, which blocks already running hold, so the waiting always ends. */
#ifndef GH_CORE_TILE_SCAN_CUH
#define GH_CORE_TILE_SCAN_CUH

#include <cuda_runtime.h>
#include <stdint.h>

typedef struct gh_tile_scan {
  unsigned long long *words; /* one a tile, zeroed before the kernel: 0 = nothing published yet */
  unsigned long long *next_tile; /* zeroed before the kernel: the next tile to hand out */
} gh_tile_scan;

/* A published word: a flag in the top two bits, a sum below (sums stay below 2^62). */
#define GH_TILE_SUM (1ull << 62)    /* the tile's own sum */
#define GH_TILE_TOTAL (2ull << 62)  /* the sum of the tile and every tile before it */
#define GH_TILE_VALUE (GH_TILE_SUM - 1u)

/* The next tile, the same for every thread of the block. Its first barrier also ends the previous
 * tile's reads of the shared memory gh_tile_exclusive_sum uses. */
static __device__ uint64_t gh_tile_claim(const gh_tile_scan &s) {
  __shared__ uint64_t tile;
  __syncthreads();
  if (threadIdx.x == 0) tile = atomicAdd(s.next_tile, 1ull);
  __syncthreads();
  return tile;
}

static __device__ __forceinline__ uint64_t gh_warp_sum_u64(uint64_t value) {
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xFFFFFFFFu, value, offset);
  return value;
}

/* The warp's look-back for `tile` of sum tile_sum (every lane of one warp): publishes the sum,
 * reads the predecessors' words 32 at a time (waiting for those not yet published) back to the
 * nearest running total, publishes this tile's; returns the sum of every tile before it. */
static __device__ uint64_t gh_tile_look_back(const gh_tile_scan &s, uint64_t tile, uint64_t tile_sum) {
  const unsigned lane = threadIdx.x & 31u;
  if (lane == 0) atomicExch(&s.words[tile], (tile == 0 ? GH_TILE_TOTAL : GH_TILE_SUM) | tile_sum);
  uint64_t before = 0;
  for (long long look = (long long)tile - 1 - lane; tile > 0; look -= 32) {
    unsigned long long word = GH_TILE_TOTAL; /* before tile 0: a total of 0 */
    if (look >= 0) {
      const volatile unsigned long long *at = s.words + look;
      do word = *at; while (word == 0);
    }
    const unsigned totals = __ballot_sync(0xFFFFFFFFu, word >= GH_TILE_TOTAL);
    const unsigned last_lane = totals ? (unsigned)__ffs(totals) - 1u : 31u; /* nearer lanes come first */
    before += gh_warp_sum_u64(lane <= last_lane ? (word & GH_TILE_VALUE) : 0u);
    if (totals) break;
  }
  if (lane == 0 && tile > 0) atomicExch(&s.words[tile], GH_TILE_TOTAL | (before + tile_sum));
  return before;
}

/* The sum of `value` over every thread of every earlier tile and the earlier threads of this
 * one (every thread of the block calls it once a tile). */
template <int kThreads>
static __device__ uint64_t gh_tile_exclusive_sum(const gh_tile_scan &s, uint64_t tile, uint64_t value) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, one block");
  __shared__ uint64_t warp_before[kThreads / 32];
  __shared__ uint64_t tile_start;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x / 32u;
  uint64_t inclusive = value;
  for (unsigned d = 1; d < 32u; d <<= 1) {
    const uint64_t below = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
    if (lane >= d) inclusive += below;
  }
  if (lane == 31u) warp_before[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const uint64_t warp_sum = lane < kThreads / 32u ? warp_before[lane] : 0u;
    uint64_t through = warp_sum;
    for (unsigned d = 1; d < 32u; d <<= 1) {
      const uint64_t below = __shfl_up_sync(0xFFFFFFFFu, through, d);
      if (lane >= d) through += below;
    }
    if (lane < kThreads / 32u) warp_before[lane] = through - warp_sum;
    const uint64_t tile_sum = __shfl_sync(0xFFFFFFFFu, through, 31);
    const uint64_t before = gh_tile_look_back(s, tile, tile_sum);
    if (lane == 0) tile_start = before;
  }
  __syncthreads();
  return tile_start + warp_before[warp] + inclusive - value;
}

#endif /* GH_CORE_TILE_SCAN_CUH */
