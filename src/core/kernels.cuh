/* kernels.cuh - what the CUDA backends of all designs share in device code and around launches:
 * the list of (key, value) widths kernels are instantiated for, the grid-stride loops (per
 * thread, and per cooperative group of run-time size), warp-aggregated counters and output
 * reservation, and launching a kernel, with or without reading its counters back. Word access by
 * width is core/words.h (GH_HD: give the width as a template constant and the branch folds away).
 * The host-side half (fill, copy, scan, sort, ...) is core/toolkit.h. */
#ifndef GH_CORE_KERNELS_CUH
#define GH_CORE_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "gpuhash_device.cuh"

extern "C" {
#include "core/table.h"
}
#include "core/words.h"

/* Every (key_bits, value_bits) pair the designs support (value_bits 0 = a set): the hot kernels
 * of a design are instantiated once per entry, e.g.
 *   #define CASE(kb, vb) if (key_bits == kb && value_bits == vb) kernel = my_kernel<kb, vb>;
 *   GH_WIDTHS(CASE) */
#define GH_WIDTHS(X) X(32, 0) X(32, 32) X(32, 64) X(64, 0) X(64, 32) X(64, 64)

/* Returns from the enclosing function when call fails; an allocation failure maps to
 * GH_ERR_OUT_OF_MEMORY, everything else to GH_ERR_CUDA. */
#define GH_CUDA_TRY(t, call, what)                                                                       \
  do {                                                                                                   \
    const cudaError_t gh_err_ = (call);                                                                  \
    if (gh_err_ != cudaSuccess)                                                                          \
      return gh__fail((t), gh_err_ == cudaErrorMemoryAllocation ? GH_ERR_OUT_OF_MEMORY : GH_ERR_CUDA,   \
                      "%s failed: %s (%s)", (what), cudaGetErrorName(gh_err_), cudaGetErrorString(gh_err_)); \
  } while (0)

/* Blocks for a grid-stride kernel over threads_wanted threads: no more than fit on the device at
 * once with shared_bytes of dynamic shared memory a block (so every block stays resident and
 * loops), at least one. */
static inline int gh_cuda_resident_grid_shared(uint64_t threads_wanted, const void *kernel, int block_threads,
                                               size_t shared_bytes) {
  int device = 0, sms = 0, per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads, shared_bytes);
  const uint64_t resident = (uint64_t)(sms > 0 ? sms : 1) * (uint64_t)(per_sm > 0 ? per_sm : 1);
  const uint64_t blocks = (threads_wanted + block_threads - 1) / block_threads;
  return (int)(blocks < resident ? (blocks ? blocks : 1) : resident);
}
static inline int gh_cuda_resident_grid(uint64_t threads_wanted, const void *kernel, int block_threads) {
  return gh_cuda_resident_grid_shared(threads_wanted, kernel, block_threads, 0);
}

/* ---- Regions in shared memory ------------------------------------------------------------------ */

/* The block copies words between a region of a table in memory and in shared memory (every
 * thread calls it), 16 bytes a load where both are aligned to 16 bytes, several loads in flight per
 * thread. */
template <typename W>
static __device__ __forceinline__ void gh_block_copy(W *to, const W *from, uint64_t words) {
  uint64_t done = 0;
  if ((((uintptr_t)to | (uintptr_t)from) & 15u) == 0) {
    const uint64_t vectors = words * sizeof(W) / 16u;
#pragma unroll 8
    for (uint64_t j = threadIdx.x; j < vectors; j += blockDim.x) ((uint4 *)to)[j] = ((const uint4 *)from)[j];
    done = vectors * 16u / sizeof(W);
  }
  for (uint64_t j = done + threadIdx.x; j < words; j += blockDim.x) to[j] = from[j];
}

/* A record's digit for gh__cuda_partition (core/toolkit.h), digit_bytes (2 or 4) wide. */
static __device__ __forceinline__ void gh_partition_digit(void *digits, unsigned digit_bytes, uint64_t i, uint64_t digit) {
  if (digit_bytes == 2u) ((uint16_t *)digits)[i] = (uint16_t)digit;
  else ((uint32_t *)digits)[i] = (uint32_t)digit;
}

/* ---- Grid-stride loops ------------------------------------------------------------------------ */

static __device__ __forceinline__ uint64_t gh_thread_index(void) {
  return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
}
static __device__ __forceinline__ uint64_t gh_grid_threads(void) { return (uint64_t)gridDim.x * blockDim.x; }

/* A loop bound rounded up to whole warps, so that warp-collective helpers (gh_warp_reserve) see
 * every lane of the warp in every iteration: `for (i = gh_thread_index(); i < gh_warp_rounded(n);
 * i += gh_grid_threads()) { keep = i < n && ...; }`. */
static __device__ __forceinline__ uint64_t gh_warp_rounded(uint64_t n) { return (n + 31u) / 32u * 32u; }

/* The cooperative group this thread belongs to and the grid-stride loop in units of groups:
 * `for (i = l.first; i < n; i += l.stride)` hands item i to the group, whose lanes all call the
 * group operation; rank 0 writes the item's output. */
typedef struct gh_group_loop {
  gh_device_group group;
  uint64_t first, stride;
} gh_group_loop;

static __device__ __forceinline__ gh_group_loop gh_group_loop_make(unsigned group_size) {
  gh_group_loop l;
  l.group = gh_device_group_make(group_size);
  l.first = gh_thread_index() / group_size;
  l.stride = gh_grid_threads() / group_size;
  return l;
}

/* ---- Warp aggregation (every lane of the warp calls these) ----------------------------------- */

/* Adds each lane's count to *counter with one atomic per warp. Counts add modulo 2^64, so a
 * counter is decremented by adding 0 - count. */
static __device__ __forceinline__ void gh_warp_add(unsigned long long *counter, unsigned long long count) {
  for (int offset = 16; offset > 0; offset >>= 1) count += __shfl_down_sync(0xFFFFFFFFu, count, offset);
  if ((threadIdx.x & 31u) == 0 && count) atomicAdd(counter, count);
}

/* ORs each lane's flags into *word with one atomic per warp. */
static __device__ __forceinline__ void gh_warp_or(unsigned *word, unsigned flags) {
  flags = __reduce_or_sync(0xFFFFFFFFu, flags);
  if ((threadIdx.x & 31u) == 0 && flags) atomicOr(word, flags);
}

/* Reserves an output position for each lane with keep set (consecutive within the warp) with one
 * atomic per warp on *cursor; returns this lane's position (meaningless where keep is 0). */
static __device__ __forceinline__ uint64_t gh_warp_reserve(unsigned long long *cursor, int keep) {
  const unsigned keepers = __ballot_sync(0xFFFFFFFFu, keep);
  const unsigned lane = threadIdx.x & 31u;
  unsigned long long base = 0;
  if (lane == 0 && keepers) base = atomicAdd(cursor, (unsigned long long)__popc(keepers));
  base = __shfl_sync(0xFFFFFFFFu, base, 0);
  return base + __popc(keepers & ((1u << lane) - 1u));
}

/* A loop bound rounded up to whole blocks, for gh_block_reserve (as gh_warp_rounded for warps). */
static __device__ __forceinline__ uint64_t gh_block_rounded(uint64_t n) {
  return (n + blockDim.x - 1u) / blockDim.x * blockDim.x;
}

/* gh_warp_reserve with one atomic per block: every thread of the block calls it (loop bounds
 * rounded by gh_block_rounded). A kernel that compacts a large input into one array otherwise
 * queues an atomic per warp on one address, which the L2 serves one at a time (2^27 keys: about
 * 4 ms on an H200 in cuckoo's prepare pass). */
static __device__ __forceinline__ uint64_t gh_block_reserve(unsigned long long *cursor, int keep) {
  __shared__ unsigned warp_offset[32];
  __shared__ unsigned long long block_base;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned keepers = __ballot_sync(0xFFFFFFFFu, keep);
  if (lane == 0) warp_offset[warp] = __popc(keepers);
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned total = 0;
    for (unsigned w = 0; w < (blockDim.x + 31u) / 32u; ++w) {
      const unsigned count = warp_offset[w];
      warp_offset[w] = total;
      total += count;
    }
    block_base = total ? atomicAdd(cursor, (unsigned long long)total) : 0ull;
  }
  __syncthreads();
  const uint64_t position = block_base + warp_offset[warp] + __popc(keepers & ((1u << lane) - 1u));
  __syncthreads(); /* every thread has read the shared words before the next call writes them */
  return position;
}

/* Reserves `count` consecutive output positions for each lane (lanes in order) with one atomic per
 * warp on *cursor; returns this lane's first position. */
static __device__ __forceinline__ uint64_t gh_warp_reserve_n(unsigned long long *cursor, unsigned count) {
  const unsigned lane = threadIdx.x & 31u;
  unsigned before = count; /* inclusive scan, then less this lane's own */
  for (unsigned d = 1; d < 32u; d <<= 1) {
    const unsigned below = __shfl_up_sync(0xFFFFFFFFu, before, d);
    if (lane >= d) before += below;
  }
  unsigned long long base = 0;
  if (lane == 31u && before) base = atomicAdd(cursor, (unsigned long long)before);
  base = __shfl_sync(0xFFFFFFFFu, base, 31);
  return base + before - count;
}

/* ---- Entries a warp holds back (every lane calls these) -------------------------------------------
 * A kernel that passes a few of its entries on to a later step appends them to one output array;
 * an atomic per warp and step on its one cursor queues in the L2 (one per step of about 3 entries
 * at load 0.9 took warpdrive's rounds 10 ms at 2^27 keys on an H100), so a warp gathers them in a
 * buffer of its own in shared memory and appends the buffer with one atomic when it is nearly
 * full, and at the end. write(at, entry) puts an entry at position `at` of the output. */

/* Appends the warp's `holding` held entries to the output with one atomic. */
template <typename E, typename Write>
static __device__ __forceinline__ void gh_warp_append_held(const E *held, unsigned holding, unsigned long long *cursor,
                                                           Write write) {
  const unsigned lane = threadIdx.x % 32u;
  __syncwarp();
  const uint64_t base = __shfl_sync(0xFFFFFFFFu, gh_warp_reserve_n(cursor, lane == 0 ? holding : 0u), 0);
  for (unsigned k = lane; k < holding; k += 32u) write(base + k, held[k]);
  __syncwarp();
}

/* Adds each lane's entry that passes on (holds) to the warp's buffer (room entries, *holding in
 * it), in lane order; appends the buffer once 32 more might not fit. */
template <typename E, typename Write>
static __device__ __forceinline__ void gh_warp_hold(E *held, unsigned room, unsigned *holding, int holds, const E &entry,
                                                    unsigned long long *cursor, Write write) {
  const unsigned lane = threadIdx.x % 32u, holders = __ballot_sync(0xFFFFFFFFu, holds);
  if (holds) held[*holding + __popc(holders & ((1u << lane) - 1u))] = entry;
  *holding += __popc(holders);
  if (*holding > room - 32u) {
    gh_warp_append_held(held, *holding, cursor, write);
    *holding = 0;
  }
}

/* ---- Launching (core/toolkit_cuda.cu) ------------------------------------------------------------ */

/* Queues kernel(args) on stream over a resident grid of blocks of block_threads, enough for
 * `threads` threads (grid-stride kernels). A NULL kernel (no instantiation for the table's widths)
 * is GH_ERR_INTERNAL. */
gh_status gh__cuda_launch(gh_table *t, const void *kernel, uint64_t threads, int block_threads, void **args,
                          void *stream);

/* Queues a kernel over the regions of a table in shared memory: a block a region (grid `regions`,
 * at most 2^31 - 1), shared_bytes of dynamic shared memory each, the carveout at its largest. */
gh_status gh__cuda_launch_regions(gh_table *t, const void *kernel, uint64_t regions, int block_threads,
                                  size_t shared_bytes, void **args, void *stream);

/* A kernel that accumulates into counters: zeroes counter_bytes at `counters` (device), launches,
 * copies them into counters_host and waits. The one synchronisation of an operation that needs a
 * count on the host. */
gh_status gh__cuda_launch_counted(gh_table *t, const void *kernel, uint64_t threads, int block_threads,
                                  void **args, void *counters, void *counters_host, size_t counter_bytes,
                                  void *stream);

#endif /* GH_CORE_KERNELS_CUH */
