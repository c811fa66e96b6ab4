/* partition.cuh - a multisplit on the GPU: n items put in runs by a small digit (at most
 * GH_PARTITION_MAX_DIGITS), in one counting pass and one scatter pass, not a sort. Each block takes
 * a contiguous share of the items: it counts its items per digit in shared memory, the (digit,
 * block) counts are summed into each block's place in each run (CUB's scan), and the block writes
 * its items there. Order inside a run is not kept. A design's bulk paths bring the items (a
 * Source, below): the warpdrive bulk insert sorts its pending entries by the cache region of the
 * window they try next. The host backends' counterpart is gh__host_partition (core/toolkit.h). The
 * caller gives the scratch (gh__cuda_partition_scratch_bytes). */
#ifndef GH_CORE_PARTITION_CUH
#define GH_CORE_PARTITION_CUH

#include "core/kernels.cuh"

extern "C" {
#include "core/toolkit.h"
}

/* A Source is a struct (passed by value to the kernels) with
 *   typedef ... item;                          what is moved (read once, written once)
 *   __device__ item load(uint64_t i) const;    item i of the input
 *   __device__ unsigned digit(const item &) const;   its run, < digits
 *   __device__ void store(uint64_t to, const item &) const;   into position `to` of the output */

static const int kPartitionThreads = 256;
/* Items a thread loads before it counts or places them: loads in flight together. */
static const int kPartitionUnroll = 4;

/* The lanes of the warp whose items share this lane's digit (a lane without an item passes
 * gh_partition_none), their leader (the lowest), and this lane's rank among them: one shared-memory
 * atomic per digit a warp, not per item. */
static const unsigned gh_partition_none = 0xFFFFFFFFu;
typedef struct gh_partition_peers {
  unsigned mask, leader, rank;
} gh_partition_peers;
static __device__ __forceinline__ gh_partition_peers gh_partition_peers_of(unsigned digit) {
  gh_partition_peers p;
  const unsigned lane = threadIdx.x & 31u;
  p.mask = __match_any_sync(0xFFFFFFFFu, digit);
  p.leader = (unsigned)__ffs(p.mask) - 1u;
  p.rank = __popc(p.mask & ((1u << lane) - 1u));
  return p;
}

/* The items of the block's share, a warp's lanes and the unrolled loads alike in every lane (the
 * loop bounds are the warp's), so that the peers of each step are found among the whole warp. */
#define GH_PARTITION_FOR_ITEMS(s, n, share, items, active, body)                                         \
  const uint64_t begin_ = (uint64_t)blockIdx.x * (share), end_ = begin_ + (share) < (n) ? begin_ + (share) : (n); \
  const uint64_t step_ = (uint64_t)blockDim.x * kPartitionUnroll;                                        \
  for (uint64_t first_ = begin_ + (threadIdx.x & ~31u); first_ < end_; first_ += step_) {                \
    typename Source::item items[kPartitionUnroll];                                                       \
    _Pragma("unroll") for (int u_ = 0; u_ < kPartitionUnroll; ++u_) {                                    \
      const uint64_t i_ = first_ + (threadIdx.x & 31u) + (uint64_t)u_ * blockDim.x;                     \
      if (i_ < end_) items[u_] = (s).load(i_);                                                            \
    }                                                                                                    \
    _Pragma("unroll") for (int u_ = 0; u_ < kPartitionUnroll; ++u_) {                                    \
      const int active = first_ + (threadIdx.x & 31u) + (uint64_t)u_ * blockDim.x < end_;                \
      const typename Source::item &item = items[u_];                                                     \
      body                                                                                               \
    }                                                                                                    \
  }

template <typename Source>
__global__ void __launch_bounds__(kPartitionThreads) gh_partition_count_kernel(Source s, uint64_t n, uint64_t share,
                                                                           unsigned digits,
                                                                           unsigned long long *counts) {
  extern __shared__ unsigned gh_partition_counts[];
  for (unsigned d = threadIdx.x; d < digits; d += blockDim.x) gh_partition_counts[d] = 0u;
  __syncthreads();
  GH_PARTITION_FOR_ITEMS(s, n, share, items, active, {
    const unsigned digit = active ? s.digit(item) : gh_partition_none;
    const gh_partition_peers p = gh_partition_peers_of(digit);
    if (active && p.rank == 0) atomicAdd(&gh_partition_counts[digit], (unsigned)__popc(p.mask));
  })
  __syncthreads();
  /* Digit-major: the scan then gives each (digit, block) its place. */
  for (unsigned d = threadIdx.x; d < digits; d += blockDim.x)
    counts[(uint64_t)d * gridDim.x + blockIdx.x] = gh_partition_counts[d];
}

template <typename Source>
__global__ void __launch_bounds__(kPartitionThreads) gh_partition_scatter_kernel(Source s, uint64_t n, uint64_t share,
                                                                             unsigned digits,
                                                                             const unsigned long long *places) {
  /* Each digit's place for this block, and the items placed there so far (a block's share fits
   * 32 bits). */
  extern __shared__ unsigned long long gh_partition_places[];
  unsigned *placed = (unsigned *)(gh_partition_places + digits);
  for (unsigned d = threadIdx.x; d < digits; d += blockDim.x) {
    gh_partition_places[d] = places[(uint64_t)d * gridDim.x + blockIdx.x];
    placed[d] = 0u;
  }
  __syncthreads();
  GH_PARTITION_FOR_ITEMS(s, n, share, items, active, {
    const unsigned digit = active ? s.digit(item) : gh_partition_none;
    const gh_partition_peers p = gh_partition_peers_of(digit);
    unsigned before = 0;
    if (active && p.rank == 0) before = atomicAdd(&placed[digit], (unsigned)__popc(p.mask));
    before = __shfl_sync(0xFFFFFFFFu, before, (int)p.leader);
    if (active) s.store(gh_partition_places[digit] + before + p.rank, item);
  })
}
#undef GH_PARTITION_FOR_ITEMS

/* Items a block takes: enough that each of its runs is long (coalesced writes), few enough blocks
 * that the (digit, block) counts stay small. */
static const uint64_t kPartitionShare = 16384;
static const unsigned kPartitionMaxBlocks = 2048;

static unsigned gh_partition_blocks(uint64_t n) {
  const uint64_t wanted = (n + kPartitionShare - 1u) / kPartitionShare;
  return wanted == 0 ? 1u : wanted < kPartitionMaxBlocks ? (unsigned)wanted : kPartitionMaxBlocks;
}

/* The scratch a partition of up to n items takes: the (digit, block) counts and their scan's
 * temporary storage. Taken by the caller ahead of the operation, so that no step fails for memory
 * once the operation has changed anything. */
static size_t gh__cuda_partition_scratch_bytes(uint64_t n, unsigned digits) {
  const uint64_t cells = (uint64_t)digits * gh_partition_blocks(n);
  return (size_t)(cells * sizeof(unsigned long long) + 255u) / 256u * 256u + gh__cuda_exclusive_sum_u64_temp_bytes(cells);
}

/* Puts the n items of s into runs by digit (digits <= GH_PARTITION_MAX_DIGITS), queued on stream,
 * in scratch of gh__cuda_partition_scratch_bytes(n or more, digits). */
template <typename Source>
static gh_status gh__cuda_partition(gh_table *t, const Source &s, uint64_t n, unsigned digits, void *scratch,
                                    size_t scratch_bytes, void *stream) {
  if (n == 0) return GH_OK;
  const unsigned blocks = gh_partition_blocks(n);
  const uint64_t share = (n + blocks - 1u) / blocks, cells = (uint64_t)digits * blocks;
  const size_t counts_bytes = (size_t)(cells * sizeof(unsigned long long) + 255u) / 256u * 256u;
  const size_t temp_bytes = gh__cuda_exclusive_sum_u64_temp_bytes(cells);
  if (counts_bytes + temp_bytes > scratch_bytes)
    return gh__fail(t, GH_ERR_INTERNAL, "partition: %zu bytes of scratch for %zu", scratch_bytes,
                    counts_bytes + temp_bytes);
  unsigned long long *counts = (unsigned long long *)scratch;
  cudaStream_t on = (cudaStream_t)stream;
  gh_partition_count_kernel<Source><<<blocks, kPartitionThreads, digits * sizeof(unsigned), on>>>(s, n, share, digits,
                                                                                                   counts);
  GH_CUDA_TRY(t, cudaGetLastError(), "the partition's count kernel");
  const gh_status status = gh__cuda_exclusive_sum_u64_in(t, (const uint64_t *)counts, (uint64_t *)counts, cells,
                                                         (char *)scratch + counts_bytes, temp_bytes, stream);
  if (status != GH_OK) return status;
  gh_partition_scatter_kernel<Source>
      <<<blocks, kPartitionThreads, digits * (sizeof(unsigned long long) + sizeof(unsigned)), on>>>(s, n, share, digits,
                                                                                                 counts);
  GH_CUDA_TRY(t, cudaGetLastError(), "the partition's scatter kernel");
  return GH_OK;
}

#endif /* GH_CORE_PARTITION_CUH */
