/*
 * bench_cuda.cu - input generation, verification counts and the ceiling kernels of
 * gpuhash-bench, behind the plain C functions of bench_cuda.h.
 *
 * CUDA C style: functions and structs only (a few small templates pick the element types of the
 * CUB calls and of the baseline's search). Nine kernels:
 *   gen_kernel            input keys / values (bench_gen.h), optional Zipf rank map
 *   count_differ_kernel   verification counts (found flags, value mismatches, ceiling checks)
 *   sorted_find_kernel    cuckoo baseline: binary search per query (bench_sorted.h)
 *   sorted_count_kernel   cuckoo baseline, multivalue: count pass of the lookup
 *   sorted_copy_kernel    cuckoo baseline, multivalue: copy of each key's values
 *   copy_kernel           ceiling: coalesced copy
 *   sector_read_kernel    ceiling: random 32-byte sector reads
 *   cas_kernel            ceiling: random 64-bit CAS into distinct slots
 *   atomic_add_kernel     ceiling: random 32-bit atomicAdd, result unused
 * The ceiling kernels have no counter of their own: a hot-spot atomic would cap the rate they
 * exist to measure. Their work is kept alive by a store that only happens when a loaded or
 * returned word is impossible, and checked after timing by bcu_limit_verify().
 */
#include <cuda_runtime.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

#include "bench_cuda.h"

/* ---- Tuning numbers ----------------------------------------------------------------------- */

enum {
  BCU_BLOCK_THREADS = 256, /* every kernel; a multiple of the warp size */
  BCU_WARP = 32,
  BCU_GRID_BLOCKS_PER_SM = 8,      /* grid-stride kernels: enough resident blocks to fill an SM */
  BCU_COPY_UNROLL = 4,             /* independent 16-byte loads in flight per copy thread */
  BCU_SECTOR_BYTES = 32,           /* DRAM / L2 sector: the unit a random read costs */
  BCU_SECTOR_READS_PER_SECTOR = 4, /* reads per launch = 4 x sectors in the table */
  BCU_ERROR_CHARS = 512,
  BCU_SCRATCH_WORDS = 3
};

/* A value no sector holds in practice (the table is filled with 64-bit hashes; a match costs
 * one harmless store to the sink): the load stays live without any write per thread. */
#define BCU_SINK_MAGIC 0x5ec70f00dbadc0deull
#define BCU_ALL_ONES 0xffffffffffffffffull
#define BCU_MIN_LIMIT_BYTES ((size_t)1 << 20)

/* ---- State and error reporting ------------------------------------------------------------ */

typedef struct bcu_state {
  int ready;
  int sm_count;
  cudaStream_t stream;
  cudaEvent_t start, stop;
  int have_start, have_stop;
  /* Device scratch: [0] the counter of count_differ_kernel, [1] the sink of the ceilings,
   * [2] the number of runs of the sorted baseline's run-length encoding. */
  unsigned long long *scratch;
  char error[BCU_ERROR_CHARS];
} bcu_state;

static bcu_state g_bcu;

static int bcu_fail(const char *what, cudaError_t err, const char *file, int line) {
  snprintf(g_bcu.error, sizeof g_bcu.error, "%s failed: %s (%s) at %s:%d", what,
           cudaGetErrorName(err), cudaGetErrorString(err), file, line);
  return -1;
}

static int bcu_fail_msg(const char *message) {
  snprintf(g_bcu.error, sizeof g_bcu.error, "%s", message);
  return -1;
}

#define BCU_CHECK(call)                                                                \
  do {                                                                                 \
    cudaError_t bcu_err_ = (call);                                                     \
    if (bcu_err_ != cudaSuccess) return bcu_fail(#call, bcu_err_, __FILE__, __LINE__); \
  } while (0)

/* A launch can fail at once (bad configuration: cudaGetLastError) or while running (the next
 * synchronising call reports it, and names the kernel only through this message's line). */
#define BCU_CHECK_LAUNCH(kernel_name)                                          \
  do {                                                                         \
    cudaError_t bcu_err_ = cudaGetLastError();                                 \
    if (bcu_err_ != cudaSuccess)                                               \
      return bcu_fail("launch of " kernel_name, bcu_err_, __FILE__, __LINE__); \
  } while (0)

static int bcu_require_ready(void) {
  if (!g_bcu.ready) return bcu_fail_msg("bench CUDA layer used before bcu_init()");
  return 0;
}

/* Blocks for a kernel with one thread per item. */
static unsigned bcu_blocks_for(uint64_t items) {
  return (unsigned)((items + BCU_BLOCK_THREADS - 1) / BCU_BLOCK_THREADS);
}

/* Blocks for a grid-stride kernel: one per item up to a full device. */
static unsigned bcu_grid_stride_blocks(uint64_t items) {
  uint64_t wanted = (items + BCU_BLOCK_THREADS - 1) / BCU_BLOCK_THREADS;
  uint64_t full = (uint64_t)g_bcu.sm_count * BCU_GRID_BLOCKS_PER_SM;
  if (wanted < 1) wanted = 1;
  return (unsigned)(wanted < full ? wanted : full);
}

static int bcu_log2_exact(uint64_t x, unsigned *log2_out) {
  unsigned bits = 0;
  if (x == 0 || (x & (x - 1)) != 0) return -1;
  while ((1ull << bits) != x) ++bits;
  *log2_out = bits;
  return 0;
}

/* ---- Device helpers ----------------------------------------------------------------------- */

static __device__ uint64_t bcu_global_index(void) {
  return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
}

static __device__ uint64_t bcu_grid_threads(void) { return (uint64_t)gridDim.x * blockDim.x; }

/* Adds every thread's value of the block to *counter with one atomic per block. All threads
 * of the block must call it. */
static __device__ void bcu_block_sum_add(unsigned long long value, unsigned long long *counter) {
  __shared__ unsigned long long warp_sums[BCU_BLOCK_THREADS / BCU_WARP];
  for (int offset = BCU_WARP / 2; offset > 0; offset /= 2)
    value += __shfl_down_sync(0xffffffffu, value, offset);
  if (threadIdx.x % BCU_WARP == 0) warp_sums[threadIdx.x / BCU_WARP] = value;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long total = 0;
    for (unsigned w = 0; w < blockDim.x / BCU_WARP; ++w) total += warp_sums[w];
    if (total != 0) atomicAdd(counter, total);
  }
}

/* ---- Kernels ------------------------------------------------------------------------------ */

static __global__ void gen_kernel(void *out, uint64_t n, bench_gen_spec spec, uint8_t *rank_map) {
  for (uint64_t i = bcu_global_index(); i < n; i += bcu_grid_threads()) bench_gen_store(out, i, &spec, rank_map);
}

static __global__ void count_differ_kernel(const void *a, const void *b, uint64_t value, uint64_t n,
                                           unsigned elem_bytes, unsigned long long *counter) {
  unsigned long long differ = 0;
  for (uint64_t i = bcu_global_index(); i < n; i += bcu_grid_threads()) {
    uint64_t expected = b != NULL ? bench_load_element(b, i, elem_bytes) : value;
    differ += bench_load_element(a, i, elem_bytes) != expected;
  }
  bcu_block_sum_add(differ, counter);
}

/* Each thread copies BCU_COPY_UNROLL 16-byte words a block apart: all loads are issued before
 * the first store, and every warp access is one contiguous 512-byte run. */
static __global__ void copy_kernel(const uint4 *__restrict__ src, uint4 *__restrict__ dst,
                                   uint64_t words) {
  const uint64_t base = (uint64_t)blockIdx.x * blockDim.x * BCU_COPY_UNROLL + threadIdx.x;
  uint4 v[BCU_COPY_UNROLL];
#pragma unroll
  for (int k = 0; k < BCU_COPY_UNROLL; ++k) {
    uint64_t i = base + (uint64_t)k * blockDim.x;
    if (i < words) v[k] = src[i];
  }
#pragma unroll
  for (int k = 0; k < BCU_COPY_UNROLL; ++k) {
    uint64_t i = base + (uint64_t)k * blockDim.x;
    if (i < words) dst[i] = v[k];
  }
}

/* One 8-byte load per thread from the start of a pseudo-random sector. */
static __global__ void sector_read_kernel(const unsigned long long *table, uint64_t sector_mask,
                                          uint64_t ops, uint64_t seed, unsigned long long *sink) {
  const uint64_t i = bcu_global_index();
  if (i >= ops) return;
  const uint64_t sector = bench_mix64(i ^ seed) & sector_mask;
  const unsigned long long v = table[sector * (BCU_SECTOR_BYTES / sizeof(unsigned long long))];
  if (v == BCU_SINK_MAGIC) *sink = v;
}

/* One CAS(all-ones -> i) per thread at slot permute(i): a bijection, so every CAS finds its slot
 * empty, as an insert into an empty table does. The old value is used (a failure is flagged),
 * so the CAS waits for its reply like an insert does. */
static __global__ void cas_kernel(unsigned long long *table, unsigned slot_bits, uint64_t ops,
                                  uint64_t seed, unsigned long long *sink) {
  const uint64_t i = bcu_global_index();
  if (i >= ops) return;
  const uint64_t slot = bench_permute(i, slot_bits, seed);
  const unsigned long long old = atomicCAS(&table[slot], BCU_ALL_ONES, (unsigned long long)i);
  if (old != BCU_ALL_ONES) *sink = 1;
}

/* One atomicAdd per thread at a pseudo-random word; the result is unused (a reduction). */
static __global__ void atomic_add_kernel(unsigned *array, uint64_t word_mask, uint64_t ops,
                                         uint64_t seed) {
  const uint64_t i = bcu_global_index();
  if (i >= ops) return;
  atomicAdd(&array[bench_mix64(i ^ seed) & word_mask], 1u);
}

static __global__ void sorted_count_kernel(bench_sorted s, const void *queries, uint64_t n,
                                           uint64_t *counts, uint64_t *positions) {
  const uint64_t i = bcu_global_index();
  if (i < n) bench_sorted_count_one(&s, queries, i, counts, positions);
  if (i == n) counts[n] = 0; /* the exclusive sum over n + 1 words leaves the total here */
}

/* One warp per 32 consecutive queries: for each, the lanes copy its values (a contiguous run
 * of the sorted values) to its place in the output, 32 values per step, coalesced. */
static __global__ void sorted_copy_kernel(const void *sorted_values, unsigned value_bytes,
                                          const uint64_t *positions, const uint64_t *offsets,
                                          uint64_t n, void *values_out) {
  const uint64_t first = bcu_global_index() / BCU_WARP * BCU_WARP;
  const unsigned lane = threadIdx.x % BCU_WARP;
  for (uint64_t i = first; i < first + BCU_WARP && i < n; ++i) {
    const uint64_t from = positions[i], to = offsets[i], count = offsets[i + 1] - offsets[i];
    for (uint64_t k = lane; k < count; k += BCU_WARP)
      bench_store_element(values_out, to + k, value_bytes,
                          bench_load_element(sorted_values, from + k, value_bytes));
  }
}

/* The element widths are template arguments, so the search loop loads fixed-width words. */
template <unsigned KEY_BYTES, unsigned OUT_BYTES>
static __global__ void sorted_find_kernel(const void *keys, const void *values, uint64_t m,
                                          const void *queries, uint64_t n, void *values_out,
                                          uint8_t *found_out) {
  const uint64_t i = bcu_global_index();
  if (i < n)
    bench_sorted_find_one(keys, values, m, KEY_BYTES, OUT_BYTES, queries, i, values_out, found_out);
}

/* ---- Setup, memory, timing ---------------------------------------------------------------- */

extern "C" int bcu_init(int device, bcu_device_info *info) {
  cudaDeviceProp prop;
  bcu_shutdown();
  BCU_CHECK(cudaSetDevice(device));
  BCU_CHECK(cudaGetDeviceProperties(&prop, device));
  memset(info, 0, sizeof *info);
  snprintf(info->name, sizeof info->name, "%s", prop.name);
  info->major = prop.major;
  info->minor = prop.minor;
  info->sm_count = prop.multiProcessorCount;
  info->total_bytes = prop.totalGlobalMem;
  info->l2_bytes = (size_t)prop.l2CacheSize;
  g_bcu.sm_count = prop.multiProcessorCount;
  /* A blocking stream (not cudaStreamNonBlocking): work the library might issue on the legacy
   * default stream stays ordered with ours. */
  BCU_CHECK(cudaStreamCreate(&g_bcu.stream));
  g_bcu.ready = 1; /* from here on bcu_shutdown() has something to free */
  BCU_CHECK(cudaEventCreate(&g_bcu.start));
  g_bcu.have_start = 1;
  BCU_CHECK(cudaEventCreate(&g_bcu.stop));
  g_bcu.have_stop = 1;
  BCU_CHECK(cudaMalloc((void **)&g_bcu.scratch, BCU_SCRATCH_WORDS * sizeof(unsigned long long)));
  BCU_CHECK(cudaMemset(g_bcu.scratch, 0, BCU_SCRATCH_WORDS * sizeof(unsigned long long)));
  return 0;
}

extern "C" void bcu_shutdown(void) {
  if (!g_bcu.ready) return;
  /* Errors are ignored here: shutdown also runs after a failure, and has nothing to report. */
  cudaStreamSynchronize(g_bcu.stream);
  if (g_bcu.scratch != NULL) cudaFree(g_bcu.scratch);
  if (g_bcu.have_start) cudaEventDestroy(g_bcu.start);
  if (g_bcu.have_stop) cudaEventDestroy(g_bcu.stop);
  cudaStreamDestroy(g_bcu.stream);
  char error[BCU_ERROR_CHARS];
  memcpy(error, g_bcu.error, sizeof error);
  memset(&g_bcu, 0, sizeof g_bcu);
  memcpy(g_bcu.error, error, sizeof error); /* keep the reason of a failure for the caller */
}

extern "C" const char *bcu_error(void) { return g_bcu.error; }

extern "C" void *bcu_stream(void) { return (void *)g_bcu.stream; }

extern "C" int bcu_memory(size_t *free_bytes, size_t *total_bytes) {
  if (bcu_require_ready() != 0) return -1;
  BCU_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
  return 0;
}

extern "C" int bcu_alloc(void **ptr, size_t bytes) {
  *ptr = NULL;
  if (bcu_require_ready() != 0) return -1;
  cudaError_t err = cudaMalloc(ptr, bytes);
  if (err != cudaSuccess) {
    *ptr = NULL;
    char what[96];
    snprintf(what, sizeof what, "cudaMalloc(%zu bytes)", bytes);
    return bcu_fail(what, err, __FILE__, __LINE__);
  }
  return 0;
}

extern "C" int bcu_free(void *ptr) {
  if (ptr == NULL || !g_bcu.ready) return 0;
  BCU_CHECK(cudaStreamSynchronize(g_bcu.stream));
  BCU_CHECK(cudaFree(ptr));
  return 0;
}

extern "C" int bcu_memset(void *ptr, int byte, size_t bytes) {
  if (bcu_require_ready() != 0) return -1;
  BCU_CHECK(cudaMemsetAsync(ptr, byte, bytes, g_bcu.stream));
  return 0;
}

extern "C" int bcu_timer_start(void) {
  if (bcu_require_ready() != 0) return -1;
  BCU_CHECK(cudaEventRecord(g_bcu.start, g_bcu.stream));
  return 0;
}

extern "C" int bcu_timer_stop(double *ms) {
  float elapsed = 0.0f;
  if (bcu_require_ready() != 0) return -1;
  BCU_CHECK(cudaEventRecord(g_bcu.stop, g_bcu.stream));
  BCU_CHECK(cudaEventSynchronize(g_bcu.stop));
  BCU_CHECK(cudaEventElapsedTime(&elapsed, g_bcu.start, g_bcu.stop));
  *ms = (double)elapsed;
  return 0;
}

/* ---- Generation and verification ---------------------------------------------------------- */

extern "C" int bcu_generate(void *out, uint64_t n, bench_gen_spec spec, uint8_t *rank_map) {
  if (bcu_require_ready() != 0) return -1;
  if (spec.bits != 32 && spec.bits != 64)
    return bcu_fail_msg("bcu_generate: bits must be 32 or 64");
  if (n == 0) return 0;
  gen_kernel<<<bcu_grid_stride_blocks(n), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(out, n, spec,
                                                                                rank_map);
  BCU_CHECK_LAUNCH("gen_kernel");
  BCU_CHECK(cudaStreamSynchronize(g_bcu.stream));
  return 0;
}

extern "C" int bcu_count_differ(const void *a, const void *b, uint64_t value, uint64_t n,
                                unsigned elem_bytes, uint64_t *count) {
  unsigned long long host_count = 0;
  if (bcu_require_ready() != 0) return -1;
  if (elem_bytes != 1 && elem_bytes != 4 && elem_bytes != 8)
    return bcu_fail_msg("bcu_count_differ: elem_bytes must be 1, 4 or 8");
  *count = 0;
  if (n == 0) return 0;
  BCU_CHECK(cudaMemsetAsync(&g_bcu.scratch[0], 0, sizeof(unsigned long long), g_bcu.stream));
  count_differ_kernel<<<bcu_grid_stride_blocks(n), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(
      a, b, value, n, elem_bytes, &g_bcu.scratch[0]);
  BCU_CHECK_LAUNCH("count_differ_kernel");
  BCU_CHECK(cudaMemcpyAsync(&host_count, &g_bcu.scratch[0], sizeof host_count,
                            cudaMemcpyDeviceToHost, g_bcu.stream));
  BCU_CHECK(cudaStreamSynchronize(g_bcu.stream));
  *count = host_count;
  return 0;
}

/* ---- Ceilings ----------------------------------------------------------------------------- */

/* The geometry of each ceiling over a power-of-two buffer. */
typedef struct bcu_limit_geometry {
  uint64_t elements;     /* copy: 16-byte words per half; sectors; CAS slots; 32-bit words */
  unsigned element_bits; /* log2(elements) */
  uint64_t ops;          /* threads (copy: bytes moved) per launch */
} bcu_limit_geometry;

static int bcu_limit_geometry_of(bcu_limit which, size_t bytes, bcu_limit_geometry *g) {
  unsigned bits = 0;
  if (bytes < BCU_MIN_LIMIT_BYTES || bcu_log2_exact(bytes, &bits) != 0)
    return bcu_fail_msg("ceiling buffer must be a power of two of at least 1 MiB");
  switch (which) {
    case BCU_LIMIT_COPY:
      g->elements = bytes / 2 / sizeof(uint4);
      g->ops = bytes; /* half read + half written */
      break;
    case BCU_LIMIT_SECTOR_READ:
      g->elements = bytes / BCU_SECTOR_BYTES;
      g->ops = g->elements * BCU_SECTOR_READS_PER_SECTOR;
      break;
    case BCU_LIMIT_CAS64:
      g->elements = bytes / sizeof(unsigned long long);
      g->ops = g->elements; /* the permutation covers the whole table */
      break;
    case BCU_LIMIT_ATOMIC_ADD32:
      g->elements = bytes / sizeof(unsigned);
      g->ops = g->elements / 2;
      break;
    default:
      return bcu_fail_msg("unknown ceiling");
  }
  return bcu_log2_exact(g->elements, &g->element_bits) == 0 ? 0 : bcu_fail_msg("ceiling geometry");
}

static int bcu_fill_values64(void *ptr, uint64_t words, uint64_t seed) {
  bench_gen_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.kind = BENCH_GEN_VALUES;
  spec.bits = 64;
  spec.seed = seed ^ BENCH_SALT_LIMITS;
  return bcu_generate(ptr, words, spec, NULL);
}

extern "C" int bcu_limit_prepare(bcu_limit which, void *buffer, size_t bytes, uint64_t seed,
                                 bcu_limit_plan *plan) {
  bcu_limit_geometry g;
  if (bcu_require_ready() != 0 || bcu_limit_geometry_of(which, bytes, &g) != 0) return -1;
  plan->ops = g.ops;
  plan->table_bytes = bytes;
  BCU_CHECK(cudaMemsetAsync(&g_bcu.scratch[1], 0, sizeof(unsigned long long), g_bcu.stream));
  switch (which) {
    case BCU_LIMIT_COPY: /* real data in the source (never time on zeros), destination cleared */
      if (bcu_fill_values64(buffer, bytes / 2 / sizeof(uint64_t), seed) != 0) return -1;
      BCU_CHECK(cudaMemsetAsync((char *)buffer + bytes / 2, 0, bytes / 2, g_bcu.stream));
      break;
    case BCU_LIMIT_SECTOR_READ:
      if (bcu_fill_values64(buffer, bytes / sizeof(uint64_t), seed) != 0) return -1;
      break;
    case BCU_LIMIT_CAS64: /* bcu_limit_reset() fills it before each launch */
      break;
    case BCU_LIMIT_ATOMIC_ADD32:
      BCU_CHECK(cudaMemsetAsync(buffer, 0, bytes, g_bcu.stream));
      break;
  }
  BCU_CHECK(cudaStreamSynchronize(g_bcu.stream));
  return 0;
}

extern "C" int bcu_limit_reset(bcu_limit which, void *buffer, size_t bytes) {
  if (bcu_require_ready() != 0) return -1;
  if (which == BCU_LIMIT_CAS64) BCU_CHECK(cudaMemsetAsync(buffer, 0xff, bytes, g_bcu.stream));
  return 0;
}

extern "C" int bcu_limit_launch(bcu_limit which, void *buffer, size_t bytes, uint64_t seed) {
  bcu_limit_geometry g;
  const uint64_t position_seed = seed ^ BENCH_SALT_LIMITS;
  if (bcu_require_ready() != 0 || bcu_limit_geometry_of(which, bytes, &g) != 0) return -1;
  switch (which) {
    case BCU_LIMIT_COPY: {
      const uint64_t per_block = (uint64_t)BCU_BLOCK_THREADS * BCU_COPY_UNROLL;
      const unsigned blocks = (unsigned)((g.elements + per_block - 1) / per_block);
      copy_kernel<<<blocks, BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(
          (const uint4 *)buffer, (uint4 *)((char *)buffer + bytes / 2), g.elements);
      BCU_CHECK_LAUNCH("copy_kernel");
      break;
    }
    case BCU_LIMIT_SECTOR_READ:
      sector_read_kernel<<<bcu_blocks_for(g.ops), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(
          (const unsigned long long *)buffer, g.elements - 1, g.ops, position_seed,
          &g_bcu.scratch[1]);
      BCU_CHECK_LAUNCH("sector_read_kernel");
      break;
    case BCU_LIMIT_CAS64:
      cas_kernel<<<bcu_blocks_for(g.ops), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(
          (unsigned long long *)buffer, g.element_bits, g.ops, position_seed, &g_bcu.scratch[1]);
      BCU_CHECK_LAUNCH("cas_kernel");
      break;
    case BCU_LIMIT_ATOMIC_ADD32:
      atomic_add_kernel<<<bcu_blocks_for(g.ops), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(
          (unsigned *)buffer, g.elements - 1, g.ops, position_seed);
      BCU_CHECK_LAUNCH("atomic_add_kernel");
      break;
  }
  return 0;
}

extern "C" int bcu_limit_verify(bcu_limit which, void *buffer, size_t bytes) {
  bcu_limit_geometry g;
  unsigned long long sink = 0;
  uint64_t count = 0;
  if (bcu_require_ready() != 0 || bcu_limit_geometry_of(which, bytes, &g) != 0) return -1;
  BCU_CHECK(
      cudaMemcpyAsync(&sink, &g_bcu.scratch[1], sizeof sink, cudaMemcpyDeviceToHost, g_bcu.stream));
  BCU_CHECK(cudaStreamSynchronize(g_bcu.stream));
  switch (which) {
    case BCU_LIMIT_COPY:
      if (bcu_count_differ(buffer, (const char *)buffer + bytes / 2, 0,
                           bytes / 2 / sizeof(uint64_t), sizeof(uint64_t), &count) != 0)
        return -1;
      if (count != 0) return bcu_fail_msg("copy ceiling: destination differs from source");
      break;
    case BCU_LIMIT_CAS64:
      if (sink != 0)
        return bcu_fail_msg("CAS ceiling: a CAS found its slot taken (not a bijection)");
      if (bcu_count_differ(buffer, NULL, BCU_ALL_ONES, g.elements, sizeof(uint64_t), &count) != 0)
        return -1;
      if (count != g.elements) return bcu_fail_msg("CAS ceiling: some slots were never written");
      break;
    case BCU_LIMIT_SECTOR_READ:
    case BCU_LIMIT_ATOMIC_ADD32:
      /* The sector sink can only fire on a one-in-2^64 coincidence and changes no timing;
       * the atomicAdd result is unused by design. Launch errors were checked already. */
      break;
  }
  return 0;
}

/* ---- The sorted-array baseline ------------------------------------------------------------ */

/* CUB's radix sort of s->n keys (and values) into s; with temp NULL it only sizes *temp_bytes. */
template <typename K, typename V>
static cudaError_t bcu_sort_typed(void *temp, size_t *temp_bytes, const bench_sorted *s,
                                  const void *keys_in, const void *values_in) {
  const int64_t n = (int64_t)s->n;
  if (s->value_bytes == 0)
    return cub::DeviceRadixSort::SortKeys(temp, *temp_bytes, (const K *)keys_in, (K *)s->keys, n, 0,
                                          (int)sizeof(K) * 8, g_bcu.stream);
  return cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, (const K *)keys_in, (K *)s->keys,
                                         (const V *)values_in, (V *)s->values, n, 0,
                                         (int)sizeof(K) * 8, g_bcu.stream);
}

static cudaError_t bcu_sort(void *temp, size_t *temp_bytes, const bench_sorted *s,
                            const void *keys_in, const void *values_in) {
  const int wide_values = s->value_bytes == 8;
  if (s->key_bytes == 4)
    return wide_values
               ? bcu_sort_typed<uint32_t, uint64_t>(temp, temp_bytes, s, keys_in, values_in)
               : bcu_sort_typed<uint32_t, uint32_t>(temp, temp_bytes, s, keys_in, values_in);
  return wide_values ? bcu_sort_typed<uint64_t, uint64_t>(temp, temp_bytes, s, keys_in, values_in)
                     : bcu_sort_typed<uint64_t, uint32_t>(temp, temp_bytes, s, keys_in, values_in);
}

template <typename K>
static cudaError_t bcu_encode_typed(void *temp, size_t *temp_bytes, const bench_sorted *s) {
  return cub::DeviceRunLengthEncode::Encode(temp, *temp_bytes, (const K *)s->keys,
                                            (K *)s->unique_keys, s->run_counts, &g_bcu.scratch[2],
                                            (int)s->n, g_bcu.stream);
}

static cudaError_t bcu_encode(void *temp, size_t *temp_bytes, const bench_sorted *s) {
  return s->key_bytes == 4 ? bcu_encode_typed<uint32_t>(temp, temp_bytes, s)
                           : bcu_encode_typed<uint64_t>(temp, temp_bytes, s);
}

/* Exclusive sum of in[0, n) into out (in == out: in place). */
static cudaError_t bcu_exclusive_sum(void *temp, size_t *temp_bytes, const uint64_t *in,
                                     uint64_t *out, uint64_t n) {
  return cub::DeviceScan::ExclusiveSum(temp, *temp_bytes, in, out, (int64_t)n, g_bcu.stream);
}

static int bcu_check_sorted(const bench_sorted *s) {
  if ((s->key_bytes != 4 && s->key_bytes != 8) ||
      (s->value_bytes != 0 && s->value_bytes != 4 && s->value_bytes != 8))
    return bcu_fail_msg("sorted baseline: keys must be 4 or 8 bytes, values 0, 4 or 8");
  if (s->n > (uint64_t)INT_MAX)
    return bcu_fail_msg("sorted baseline: cub::DeviceRunLengthEncode takes at most INT_MAX items");
  return 0;
}

extern "C" int bcu_sorted_temp_bytes(uint64_t n, unsigned key_bytes, unsigned value_bytes,
                                     size_t *bytes) {
  bench_sorted s;
  size_t sort = 0, encode = 0, scan = 0;
  memset(&s, 0, sizeof s);
  s.n = n;
  s.key_bytes = key_bytes;
  s.value_bytes = value_bytes;
  *bytes = 0;
  if (bcu_require_ready() != 0 || bcu_check_sorted(&s) != 0) return -1;
  BCU_CHECK(bcu_sort(NULL, &sort, &s, NULL, NULL));
  BCU_CHECK(bcu_encode(NULL, &encode, &s));
  BCU_CHECK(
      bcu_exclusive_sum(NULL, &scan, NULL, NULL, n + 1)); /* find_all's offsets: n + 1 words */
  *bytes = sort > encode ? sort : encode;
  if (scan > *bytes) *bytes = scan;
  return 0;
}

extern "C" int bcu_sorted_build(bench_sorted *s, const void *keys_in, const void *values_in) {
  size_t temp_bytes = s->temp_bytes;
  if (bcu_require_ready() != 0 || bcu_check_sorted(s) != 0) return -1;
  BCU_CHECK(bcu_sort(s->temp, &temp_bytes, s, keys_in, values_in));
  return 0;
}

extern "C" int bcu_sorted_runs(bench_sorted *s, int with_offsets) {
  size_t temp_bytes = s->temp_bytes;
  unsigned long long runs = 0;
  if (bcu_require_ready() != 0 || bcu_check_sorted(s) != 0) return -1;
  BCU_CHECK(bcu_encode(s->temp, &temp_bytes, s));
  BCU_CHECK(
      cudaMemcpyAsync(&runs, &g_bcu.scratch[2], sizeof runs, cudaMemcpyDeviceToHost, g_bcu.stream));
  BCU_CHECK(cudaStreamSynchronize(g_bcu.stream));
  s->unique = runs;
  if (with_offsets) {
    temp_bytes = s->temp_bytes;
    BCU_CHECK(bcu_exclusive_sum(s->temp, &temp_bytes, s->run_counts, s->run_offsets, runs));
  }
  return 0;
}

extern "C" int bcu_sorted_find(const void *keys, const void *values, uint64_t m, unsigned key_bytes,
                               unsigned out_bytes, const void *queries, uint64_t n,
                               void *values_out, uint8_t *found_out) {
  if (bcu_require_ready() != 0) return -1;
  if (n == 0) return 0;
  const unsigned blocks = bcu_blocks_for(n);
  const cudaStream_t st = g_bcu.stream;
  if (key_bytes == 4 && out_bytes == 4)
    sorted_find_kernel<4, 4>
        <<<blocks, BCU_BLOCK_THREADS, 0, st>>>(keys, values, m, queries, n, values_out, found_out);
  else if (key_bytes == 4 && out_bytes == 8)
    sorted_find_kernel<4, 8>
        <<<blocks, BCU_BLOCK_THREADS, 0, st>>>(keys, values, m, queries, n, values_out, found_out);
  else if (key_bytes == 8 && out_bytes == 4)
    sorted_find_kernel<8, 4>
        <<<blocks, BCU_BLOCK_THREADS, 0, st>>>(keys, values, m, queries, n, values_out, found_out);
  else if (key_bytes == 8 && out_bytes == 8)
    sorted_find_kernel<8, 8>
        <<<blocks, BCU_BLOCK_THREADS, 0, st>>>(keys, values, m, queries, n, values_out, found_out);
  else
    return bcu_fail_msg("bcu_sorted_find: keys and values must be 4 or 8 bytes");
  BCU_CHECK_LAUNCH("sorted_find_kernel");
  return 0;
}

extern "C" int bcu_sorted_find_all(const bench_sorted *s, const void *queries, uint64_t n,
                                   uint64_t *offsets_out, uint64_t *positions, void *values_out,
                                   uint64_t values_capacity, uint64_t *total) {
  size_t temp_bytes = s->temp_bytes;
  unsigned long long host_total = 0;
  *total = 0;
  if (bcu_require_ready() != 0 || bcu_check_sorted(s) != 0) return -1;
  sorted_count_kernel<<<bcu_blocks_for(n + 1), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(
      *s, queries, n, offsets_out, positions);
  BCU_CHECK_LAUNCH("sorted_count_kernel");
  BCU_CHECK(bcu_exclusive_sum(s->temp, &temp_bytes, offsets_out, offsets_out, n + 1));
  BCU_CHECK(cudaMemcpyAsync(&host_total, &offsets_out[n], sizeof host_total, cudaMemcpyDeviceToHost,
                            g_bcu.stream));
  BCU_CHECK(cudaStreamSynchronize(g_bcu.stream));
  *total = host_total;
  if (host_total > values_capacity)
    return bcu_fail_msg("bcu_sorted_find_all: the values do not fit in values_capacity");
  if (n == 0) return 0;
  sorted_copy_kernel<<<bcu_blocks_for(n), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(
      s->values, s->value_bytes, positions, offsets_out, n, values_out);
  BCU_CHECK_LAUNCH("sorted_copy_kernel");
  return 0;
}
