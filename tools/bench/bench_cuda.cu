/* bench_cuda.cu - the CUDA backend (bench_cuda_open()): generation, verification counts, ceilings,
 * the sorted baseline on CUB, CUDA events on the gh_* calls' stream; failures: -1, bcu_error(). */
#include <cuda_runtime.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

#include "bench.h"

enum {
  BCU_BLOCK_THREADS = 256,        /* every kernel; a multiple of the warp size */
  BCU_WARP = 32,
  BCU_GRID_BLOCKS_PER_SM = 8,     /* grid-stride kernels: enough resident blocks to fill an SM */
  BCU_COPY_UNROLL = 4,            /* independent 16-byte loads in flight per copy thread */
  BCU_SECTOR_BYTES = 32,          /* DRAM / L2 sector: the unit a random read costs */
  BCU_SECTOR_READS_PER_SECTOR = 4 /* reads per launch = 4 x sectors in the buffer */
};
enum { BCU_COPY, BCU_SECTOR_READ, BCU_CAS64, BCU_ATOMIC_ADD32 }; /* bench_op - OP_LIMIT_COPY */
/* No sector holds it in practice (a match costs one harmless store): it keeps a load alive. */
#define BCU_SINK_MAGIC 0x5ec70f00dbadc0deull
#define BCU_ALL_ONES 0xffffffffffffffffull

static struct {
  int sm_count;
  cudaStream_t stream;
  cudaEvent_t start, stop, laps[BENCH_LAPS][2];
  unsigned long long *scratch; /* count_differ's counter, the ceilings' sink, the runs of a RLE */
} g_bcu;
static char g_bcu_error[512]; /* kept by bench_cuda_close() */

/* 0 if err is cudaSuccess, else -1 with what failed, how and where in g_bcu_error. */
static int bcu_check(const char *what, cudaError_t err, int line) {
  if (err == cudaSuccess) return 0;
  snprintf(g_bcu_error, sizeof g_bcu_error, "%s failed: %s (%s) at %s:%d", what,
           cudaGetErrorName(err), cudaGetErrorString(err), __FILE__, line);
  return -1;
}
static int bcu_fail_msg(const char *message) {
  return snprintf(g_bcu_error, sizeof g_bcu_error, "%s", message), -1;
}
static const char *bcu_error(void) { return g_bcu_error; }

/* bcu_check() of a call, or of a launch (that fails at once, or running: a later sync says so). */
#define BCU_CALL(call) bcu_check(#call, call, __LINE__)
#define BCU_LAUNCHED(kernel) bcu_check("launch of " kernel, cudaGetLastError(), __LINE__)

/* Blocks for one thread per item, and for a grid-stride kernel (up to a full device). */
static unsigned bcu_blocks_for(uint64_t items) {
  return (unsigned)((items + BCU_BLOCK_THREADS - 1) / BCU_BLOCK_THREADS);
}
static unsigned bcu_grid_stride_blocks(uint64_t items) {
  const uint64_t full = (uint64_t)g_bcu.sm_count * BCU_GRID_BLOCKS_PER_SM;
  return items == 0 ? 1 : bcu_blocks_for(items) < full ? bcu_blocks_for(items) : (unsigned)full;
}

/* ---- Kernels ------------------------------------------------------------------------------ */
static __device__ uint64_t bcu_global_index(void) {
  return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
}
static __device__ uint64_t bcu_grid_threads(void) { return (uint64_t)gridDim.x * blockDim.x; }

static __global__ void gen_kernel(void *out, uint64_t n, bench_gen_spec spec, uint8_t *rank_map) {
  for (uint64_t i = bcu_global_index(); i < n; i += bcu_grid_threads())
    bench_gen_store(out, i, &spec, rank_map);
}
static __global__ void count_differ_kernel(const void *a, const void *b, uint64_t value, uint64_t n,
                                           unsigned elem_bytes, unsigned long long *counter) {
  unsigned long long differ = 0;
  for (uint64_t i = bcu_global_index(); i < n; i += bcu_grid_threads()) {
    uint64_t expected = b != NULL ? bench_load(b, i, elem_bytes) : value;
    differ += bench_load(a, i, elem_bytes) != expected;
  }
  for (int offset = BCU_WARP / 2; offset > 0; offset /= 2) /* one atomic per warp */
    differ += __shfl_down_sync(0xffffffffu, differ, offset);
  if (threadIdx.x % BCU_WARP == 0 && differ != 0) atomicAdd(counter, differ);
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
/* No ceiling has a counter (a hot-spot atomic would cap its rate): a store for an impossible word
 * keeps the work alive. CAS at slot permute(i) finds the slot empty as an insert into an empty
 * table does, and waits for its reply (a failure is flagged), as one does (bench/README.md). */
static __global__ void cas_kernel(unsigned long long *table, unsigned slot_bits, uint64_t ops,
                                  uint64_t seed, unsigned long long *sink) {
  const uint64_t i = bcu_global_index();
  if (i >= ops) return;
  const uint64_t slot = bench_permute(i, slot_bits, seed);
  if (atomicCAS(&table[slot], BCU_ALL_ONES, (unsigned long long)i) != BCU_ALL_ONES) *sink = 1;
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
/* One warp per 32 queries: the lanes copy each one's values (a run of the sorted values). */
static __global__ void sorted_copy_kernel(const void *sorted_values, unsigned value_bytes,
                                          const uint64_t *positions, const uint64_t *offsets,
                                          uint64_t n, void *values_out) {
  const uint64_t first = bcu_global_index() / BCU_WARP * BCU_WARP;
  const unsigned lane = threadIdx.x % BCU_WARP;
  for (uint64_t i = first; i < first + BCU_WARP && i < n; ++i) {
    const uint64_t from = positions[i], to = offsets[i], count = offsets[i + 1] - offsets[i];
    for (uint64_t k = lane; k < count; k += BCU_WARP)
      bench_store(values_out, to + k, value_bytes,
                  bench_load(sorted_values, from + k, value_bytes));
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

/* ---- Memory, timing, generation, verification --------------------------------------------- */
static int bcu_memory(size_t *free_bytes) {
  size_t total = 0;
  return BCU_CALL(cudaMemGetInfo(free_bytes, &total));
}
static int bcu_alloc(void **ptr, size_t bytes) {
  if (bcu_check("cudaMalloc", cudaMalloc(ptr, bytes), __LINE__) == 0) return 0;
  return *ptr = NULL, -1;
}
static int bcu_free(void *ptr) {
  if (ptr == NULL || g_bcu.stream == NULL) return 0;
  if (BCU_CALL(cudaStreamSynchronize(g_bcu.stream))) return -1;
  return BCU_CALL(cudaFree(ptr));
}
static int bcu_timer_start(void) { return BCU_CALL(cudaEventRecord(g_bcu.start, g_bcu.stream)); }
static int bcu_lap_start(unsigned lap) {
  return BCU_CALL(cudaEventRecord(g_bcu.laps[lap][0], g_bcu.stream));
}
static int bcu_lap_stop(unsigned lap) {
  return BCU_CALL(cudaEventRecord(g_bcu.laps[lap][1], g_bcu.stream));
}
static int bcu_lap_ms(unsigned lap, double *ms) {
  float elapsed = 0.0f;
  if (BCU_CALL(cudaEventSynchronize(g_bcu.laps[lap][1]))) return -1;
  if (BCU_CALL(cudaEventElapsedTime(&elapsed, g_bcu.laps[lap][0], g_bcu.laps[lap][1]))) return -1;
  return *ms = (double)elapsed, 0;
}
static int bcu_timer_stop(double *ms) {
  float elapsed = 0.0f;
  if (BCU_CALL(cudaEventRecord(g_bcu.stop, g_bcu.stream))) return -1;
  if (BCU_CALL(cudaEventSynchronize(g_bcu.stop))) return -1;
  if (BCU_CALL(cudaEventElapsedTime(&elapsed, g_bcu.start, g_bcu.stop))) return -1;
  return *ms = (double)elapsed, 0;
}
/* *word = the 8 bytes at device address from, after the stream's work: synchronises. */
static int bcu_read_word(const void *from, unsigned long long *word) {
  if (BCU_CALL(cudaMemcpyAsync(word, from, sizeof *word, cudaMemcpyDeviceToHost, g_bcu.stream)))
    return -1;
  return BCU_CALL(cudaStreamSynchronize(g_bcu.stream));
}

/* Synchronises. */
static int bcu_generate(void *out, uint64_t n, bench_gen_spec spec, uint8_t *rank_map) {
  if (n == 0) return 0;
  if (rank_map && BCU_CALL(cudaMemsetAsync(rank_map, 0, spec.zipf_n, g_bcu.stream))) return -1;
  gen_kernel<<<bcu_grid_stride_blocks(n), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(out, n, spec,
                                                                                rank_map);
  if (BCU_LAUNCHED("gen_kernel")) return -1;
  return BCU_CALL(cudaStreamSynchronize(g_bcu.stream));
}
/* Synchronises. */
static int bcu_count_differ(const void *a, const void *b, uint64_t value, uint64_t n,
                            unsigned elem_bytes, uint64_t *count) {
  unsigned long long host_count = 0;
  *count = 0;
  if (n == 0) return 0;
  if (BCU_CALL(cudaMemsetAsync(&g_bcu.scratch[0], 0, sizeof host_count, g_bcu.stream))) return -1;
  count_differ_kernel<<<bcu_grid_stride_blocks(n), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(
      a, b, value, n, elem_bytes, &g_bcu.scratch[0]);
  if (BCU_LAUNCHED("count_differ_kernel") || bcu_read_word(&g_bcu.scratch[0], &host_count))
    return -1;
  return *count = host_count, 0;
}

/* ---- Ceilings, over the BENCH_LIMIT_BYTES buffer ----------------------------------------- */
static int bcu_limit(int step, int which, void *buffer, uint64_t seed, uint64_t *ops) {
  const size_t bytes = BENCH_LIMIT_BYTES;
  /* Elements: the copy's 16-byte words of a half; sectors; 64-bit CAS slots; 32-bit words. */
  static const size_t ELEMENT_BYTES[] = {2 * sizeof(uint4), BCU_SECTOR_BYTES, 8, 4};
  const uint64_t elements = bytes / ELEMENT_BYTES[which], mask = elements - 1;
  const uint64_t threads = which == BCU_SECTOR_READ ? elements * BCU_SECTOR_READS_PER_SECTOR
                           : which == BCU_CAS64     ? elements /* the permutation covers all */
                                                    : elements / 2;
  const uint64_t position_seed = seed ^ BENCH_SALT_LIMITS, half = bytes / 2 / sizeof(uint64_t);
  const unsigned blocks = bcu_blocks_for(threads), bits = (unsigned)__builtin_ctzll(elements);
  const cudaStream_t st = g_bcu.stream;
  unsigned long long sink = 0;
  uint64_t count = 0;
  char *second_half = (char *)buffer + bytes / 2;
  const bench_gen_spec hashes = {GEN_VALUES, 64, position_seed, 0, 0, 0, 0, 0}; /* data, never 0 */
  switch (step) {
    case BENCH_PREPARE: /* the copy's destination cleared; CAS: RESET fills its slots */
      *ops = which == BCU_COPY ? bytes : threads;
      if (BCU_CALL(cudaMemsetAsync(&g_bcu.scratch[1], 0, sizeof sink, st))) return -1;
      if (which == BCU_COPY && BCU_CALL(cudaMemsetAsync(second_half, 0, bytes / 2, st))) return -1;
      if (which == BCU_ATOMIC_ADD32 && BCU_CALL(cudaMemsetAsync(buffer, 0, bytes, st))) return -1;
      if (which <= BCU_SECTOR_READ && bcu_generate(buffer, which ? 2 * half : half, hashes, NULL))
        return -1;
      return BCU_CALL(cudaStreamSynchronize(st));
    case BENCH_RESET: /* CAS: every slot back to all-ones, as an empty table's */
      return which == BCU_CAS64 ? BCU_CALL(cudaMemsetAsync(buffer, 0xff, bytes, st)) : 0;
    case BENCH_LAUNCH:
      if (which == BCU_COPY) /* a block copies BCU_COPY_UNROLL words per thread */
        copy_kernel<<<bcu_blocks_for((elements + BCU_COPY_UNROLL - 1) / BCU_COPY_UNROLL),
                      BCU_BLOCK_THREADS, 0, st>>>((const uint4 *)buffer, (uint4 *)second_half,
                                                  elements);
      if (which == BCU_SECTOR_READ)
        sector_read_kernel<<<blocks, BCU_BLOCK_THREADS, 0, st>>>(
            (const unsigned long long *)buffer, mask, threads, position_seed, &g_bcu.scratch[1]);
      if (which == BCU_CAS64)
        cas_kernel<<<blocks, BCU_BLOCK_THREADS, 0, st>>>((unsigned long long *)buffer, bits,
                                                         threads, position_seed, &g_bcu.scratch[1]);
      if (which == BCU_ATOMIC_ADD32)
        atomic_add_kernel<<<blocks, BCU_BLOCK_THREADS, 0, st>>>((unsigned *)buffer, mask, threads,
                                                                position_seed);
      return BCU_LAUNCHED("a ceiling kernel");
  }
  /* VERIFY: the copy's destination equals its source; no CAS found its slot taken, each slot
   * was written. (The sector sink fires one time in 2^64; atomicAdd's result is unused.) */
  if (bcu_read_word(&g_bcu.scratch[1], &sink)) return -1;
  if (which == BCU_CAS64 && sink != 0)
    return bcu_fail_msg("CAS ceiling: a CAS found its slot taken (not a bijection)");
  if (which != BCU_COPY && which != BCU_CAS64) return 0;
  if (bcu_count_differ(buffer, which == BCU_COPY ? second_half : NULL, BCU_ALL_ONES,
                       which == BCU_COPY ? half : elements, 8, &count) != 0)
    return -1;
  if (count == (which == BCU_COPY ? 0 : elements)) return 0;
  return bcu_fail_msg(which == BCU_COPY ? "copy ceiling: destination differs from source"
                                        : "CAS ceiling: some slots were never written");
}

/* ---- The sorted baseline ------------------------------------------------------------------ */
/* CUB, on keys of type K: the radix sort of s->n keys (and values) into s, or the run-length
 * encoding of the sorted keys (the run count into scratch[2]); temp NULL only sizes it. */
enum { BCU_SORT, BCU_ENCODE };
template <typename K>
static cudaError_t bcu_cub_typed(int what, void *temp, size_t *bytes, const bench_sorted *s,
                                 const void *keys_in, const void *values_in) {
  const K *in = (const K *)keys_in;
  K *out = (K *)s->keys;
  const int64_t n = (int64_t)s->n;
  const int bits = (int)sizeof(K) * 8;
  const cudaStream_t st = g_bcu.stream;
  if (what == BCU_ENCODE)
    return cub::DeviceRunLengthEncode::Encode(temp, *bytes, (const K *)out, (K *)s->unique_keys,
                                              s->run_counts, &g_bcu.scratch[2], (int)n, st);
  if (s->value_bytes == 0)
    return cub::DeviceRadixSort::SortKeys(temp, *bytes, in, out, n, 0, bits, st);
  if (s->value_bytes == 8)
    return cub::DeviceRadixSort::SortPairs(temp, *bytes, in, out, (const uint64_t *)values_in,
                                           (uint64_t *)s->values, n, 0, bits, st);
  return cub::DeviceRadixSort::SortPairs(temp, *bytes, in, out, (const uint32_t *)values_in,
                                         (uint32_t *)s->values, n, 0, bits, st);
}
static cudaError_t bcu_cub(int what, void *temp, size_t *bytes, const bench_sorted *s,
                           const void *keys_in, const void *values_in) {
  return s->key_bytes == 4 ? bcu_cub_typed<uint32_t>(what, temp, bytes, s, keys_in, values_in)
                           : bcu_cub_typed<uint64_t>(what, temp, bytes, s, keys_in, values_in);
}
/* Exclusive sum of in[0, n) into out (in == out: in place). */
static cudaError_t bcu_exclusive_sum(void *temp, size_t *temp_bytes, const uint64_t *in,
                                     uint64_t *out, uint64_t n) {
  return cub::DeviceScan::ExclusiveSum(temp, *temp_bytes, in, out, (int64_t)n, g_bcu.stream);
}
/* The largest scratch of the sort, the encoding and the scans (find_all: n + 1 offsets). */
static int bcu_sorted_temp_bytes(uint64_t n, unsigned key_bytes, unsigned value_bytes,
                                 size_t *bytes) {
  bench_sorted s = {key_bytes, value_bytes, n, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0};
  size_t sort = 0, encode = 0, scan = 0;
  if (n > (uint64_t)INT_MAX) return bcu_fail_msg("sorted baseline: at most INT_MAX items (RLE)");
  if (BCU_CALL(bcu_cub(BCU_SORT, NULL, &sort, &s, NULL, NULL))) return -1;
  if (BCU_CALL(bcu_cub(BCU_ENCODE, NULL, &encode, &s, NULL, NULL))) return -1;
  if (BCU_CALL(bcu_exclusive_sum(NULL, &scan, NULL, NULL, n + 1))) return -1;
  return *bytes = sort > encode ? (sort > scan ? sort : scan) : (encode > scan ? encode : scan), 0;
}

/* The sort; then unless a map the encoding, whose run count it reads back: that synchronises. */
static int bcu_sorted_build(bench_sorted *s, const void *keys_in, const void *values_in,
                            gh_variant variant) {
  size_t temp_bytes = s->temp_bytes;
  unsigned long long runs = 0;
  if (BCU_CALL(bcu_cub(BCU_SORT, s->temp, &temp_bytes, s, keys_in, values_in))) return -1;
  if (variant == GH_VARIANT_MAP) return 0;
  temp_bytes = s->temp_bytes;
  if (BCU_CALL(bcu_cub(BCU_ENCODE, s->temp, &temp_bytes, s, NULL, NULL))) return -1;
  if (bcu_read_word(&g_bcu.scratch[2], &runs)) return -1;
  s->unique = runs;
  temp_bytes = s->temp_bytes;
  if (variant != GH_VARIANT_MULTIVALUE) return 0;
  return BCU_CALL(bcu_exclusive_sum(s->temp, &temp_bytes, s->run_counts, s->run_offsets, runs));
}
/* One thread per query; no synchronisation. */
static int bcu_sorted_find(const void *keys, const void *values, uint64_t m, unsigned key_bytes,
                           unsigned out_bytes, const void *queries, uint64_t n, void *values_out,
                           uint8_t *found_out) {
  if (n == 0) return 0;
  if ((key_bytes != 4 && key_bytes != 8) || (out_bytes != 4 && out_bytes != 8))
    return bcu_fail_msg("sorted_find: keys and values must be 4 or 8 bytes");
  void (*kernel)(const void *, const void *, uint64_t, const void *, uint64_t, void *, uint8_t *) =
      key_bytes == 4 ? (out_bytes == 4 ? sorted_find_kernel<4, 4> : sorted_find_kernel<4, 8>)
                     : (out_bytes == 4 ? sorted_find_kernel<8, 4> : sorted_find_kernel<8, 8>);
  kernel<<<bcu_blocks_for(n), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(keys, values, m, queries, n,
                                                                    values_out, found_out);
  return BCU_LAUNCHED("sorted_find_kernel");
}
/* Counts (into offsets_out; run starts into positions), their in-place exclusive sum whose last
 * word, the total, is read back (synchronises), then a warp per 32 queries copies the values. */
static int bcu_sorted_find_all(const bench_sorted *s, const void *queries, uint64_t n,
                               uint64_t *offsets_out, uint64_t *positions, void *values_out,
                               uint64_t values_capacity, uint64_t *total) {
  size_t temp_bytes = s->temp_bytes;
  unsigned long long host_total = 0;
  *total = 0;
  sorted_count_kernel<<<bcu_blocks_for(n + 1), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(
      *s, queries, n, offsets_out, positions);
  if (BCU_LAUNCHED("sorted_count_kernel")) return -1;
  if (BCU_CALL(bcu_exclusive_sum(s->temp, &temp_bytes, offsets_out, offsets_out, n + 1))) return -1;
  if (bcu_read_word(&offsets_out[n], &host_total)) return -1;
  if ((*total = host_total) > values_capacity) return bcu_fail_msg("find_all: values overflow");
  if (n == 0) return 0;
  sorted_copy_kernel<<<bcu_blocks_for(n), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(
      s->values, s->value_bytes, positions, offsets_out, n, values_out);
  return BCU_LAUNCHED("sorted_copy_kernel");
}

/* The sort-merge join's own scratch (the left side sorted, the counts): kept between calls, so
 * that only the warm-up run allocates it. */
static struct { void *block; size_t bytes; } g_join;
static __global__ void rows_kernel(uint64_t *rows, uint64_t n) {
  const uint64_t i = bcu_global_index();
  if (i < n) rows[i] = i;
}
/* Sorted left key i's pairs: its row, once per right value the copy kernel writes there. */
static __global__ void join_rows_kernel(const uint64_t *rows, const uint64_t *offsets, uint64_t n,
                                        uint64_t *left_out) {
  const uint64_t i = bcu_global_index();
  if (i < n)
    for (uint64_t k = offsets[i]; k < offsets[i + 1]; ++k) left_out[k] = rows[i];
}
template <typename K>
static cudaError_t bcu_sort_rows(void *temp, size_t *bytes, const void *keys_in, void *keys_out,
                                 const uint64_t *rows_in, uint64_t *rows_out, uint64_t n) {
  return cub::DeviceRadixSort::SortPairs(temp, *bytes, (const K *)keys_in, (K *)keys_out, rows_in,
                                         rows_out, (int64_t)n, 0, (int)sizeof(K) * 8, g_bcu.stream);
}
static int bcu_sorted_join(const bench_sorted *s, const void *left_keys, uint64_t n, uint64_t *left_out,
                           void *right_out, uint64_t capacity, uint64_t *pairs) {
  cudaError_t (*sort)(void *, size_t *, const void *, void *, const uint64_t *, uint64_t *, uint64_t) =
      s->key_bytes == 4 ? bcu_sort_rows<uint32_t> : bcu_sort_rows<uint64_t>;
  size_t sort_bytes = 0, scan_bytes = 0;
  if (BCU_CALL(sort(NULL, &sort_bytes, NULL, NULL, NULL, NULL, n))) return -1;
  if (BCU_CALL(bcu_exclusive_sum(NULL, &scan_bytes, NULL, NULL, n + 1))) return -1;
  const size_t words = (n + 7) / 8 * 8, temp = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
  const size_t need = words * 8 * 4 + 8 + words * s->key_bytes + temp;
  if (g_join.bytes < need) {
    if (g_join.block != NULL && BCU_CALL(cudaFree(g_join.block))) return -1;
    g_join.block = NULL, g_join.bytes = 0;
    if (BCU_CALL(cudaMalloc(&g_join.block, need))) return -1;
    g_join.bytes = need;
  }
  uint64_t *rows_in = (uint64_t *)g_join.block, *rows = rows_in + words, *positions = rows + words;
  uint64_t *offsets = positions + words; /* n + 1 */
  char *keys = (char *)(offsets + words + 1), *scratch = keys + words * s->key_bytes;
  unsigned long long total = 0;
  rows_kernel<<<bcu_blocks_for(n), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(rows_in, n);
  if (BCU_LAUNCHED("rows_kernel")) return -1;
  size_t bytes = temp;
  if (BCU_CALL(sort(scratch, &bytes, left_keys, keys, rows_in, rows, n))) return -1;
  sorted_count_kernel<<<bcu_blocks_for(n + 1), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(*s, keys, n, offsets,
                                                                                   positions);
  if (BCU_LAUNCHED("sorted_count_kernel")) return -1;
  bytes = temp;
  if (BCU_CALL(bcu_exclusive_sum(scratch, &bytes, offsets, offsets, n + 1))) return -1;
  if (bcu_read_word(&offsets[n], &total)) return -1;
  if ((*pairs = total) > capacity) return bcu_fail_msg("sorted join: more pairs than capacity");
  if (n == 0) return 0;
  sorted_copy_kernel<<<bcu_blocks_for(n), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(s->values, s->value_bytes,
                                                                              positions, offsets, n, right_out);
  if (BCU_LAUNCHED("sorted_copy_kernel")) return -1;
  join_rows_kernel<<<bcu_blocks_for(n), BCU_BLOCK_THREADS, 0, g_bcu.stream>>>(rows, offsets, n, left_out);
  return BCU_LAUNCHED("join_rows_kernel");
}

/* ---- Start and stop ----------------------------------------------------------------------- */
/* Frees what bcu_start() made (ignoring errors: it also runs after one). */
extern "C" void bench_cuda_close(void) {
  if (g_bcu.stream != NULL) cudaStreamSynchronize(g_bcu.stream);
  if (g_bcu.scratch != NULL) cudaFree(g_bcu.scratch);
  if (g_join.block != NULL) cudaFree(g_join.block);
  g_join.block = NULL, g_join.bytes = 0;
  if (g_bcu.start != NULL) cudaEventDestroy(g_bcu.start);
  if (g_bcu.stop != NULL) cudaEventDestroy(g_bcu.stop);
  for (unsigned k = 0; k < 2 * BENCH_LAPS; ++k)
    if (g_bcu.laps[k / 2][k % 2] != NULL) cudaEventDestroy(g_bcu.laps[k / 2][k % 2]);
  if (g_bcu.stream != NULL) cudaStreamDestroy(g_bcu.stream);
  memset(&g_bcu, 0, sizeof g_bcu);
}
static int bcu_start(int device, bench_backend *b) {
  cudaDeviceProp prop;
  if (BCU_CALL(cudaSetDevice(device))) return -1;
  if (BCU_CALL(cudaGetDeviceProperties(&prop, device))) return -1;
  snprintf(b->device, sizeof b->device, "%s", prop.name);
  b->sm_version = prop.major * 10 + prop.minor, b->memory_bytes = prop.totalGlobalMem;
  b->sm_count = g_bcu.sm_count = prop.multiProcessorCount, b->l2_bytes = (size_t)prop.l2CacheSize;
  /* Blocking: work the library issues on the legacy default stream stays ordered with ours. */
  if (BCU_CALL(cudaStreamCreate(&g_bcu.stream))) return -1;
  if (BCU_CALL(cudaEventCreate(&g_bcu.start))) return -1;
  if (BCU_CALL(cudaEventCreate(&g_bcu.stop))) return -1;
  for (unsigned k = 0; k < 2 * BENCH_LAPS; ++k)
    if (BCU_CALL(cudaEventCreate(&g_bcu.laps[k / 2][k % 2]))) return -1;
  if (BCU_CALL(cudaMalloc((void **)&g_bcu.scratch, 3 * sizeof(unsigned long long)))) return -1;
  if (BCU_CALL(cudaMemset(g_bcu.scratch, 0, 3 * sizeof(unsigned long long)))) return -1;
  return b->stream = (gh_stream)g_bcu.stream, 0;
}
extern "C" int bench_cuda_open(int device, bench_backend *b, char *about, size_t about_size) {
  memset(b, 0, sizeof *b);
  b->name = "cuda", b->kind = GH_BACKEND_CUDA, b->error = bcu_error, b->limit = bcu_limit;
  b->memory = bcu_memory, b->alloc = bcu_alloc, b->release = bcu_free;
  b->generate = bcu_generate, b->count_differ = bcu_count_differ;
  b->timer_start = bcu_timer_start, b->timer_stop = bcu_timer_stop;
  b->lap_start = bcu_lap_start, b->lap_stop = bcu_lap_stop, b->lap_ms = bcu_lap_ms;
  b->sorted_temp_bytes = bcu_sorted_temp_bytes, b->sorted_build = bcu_sorted_build;
  b->sorted_find = bcu_sorted_find, b->sorted_find_all = bcu_sorted_find_all;
  b->sorted_join = bcu_sorted_join;
  bench_cuda_close();
  if (bcu_start(device, b) != 0) {
    snprintf(about, about_size, "starting CUDA on device %d: %s", device, g_bcu_error);
    bench_cuda_close();
    return -1;
  }
  snprintf(about, about_size, "%s (device %d, sm_%d, %d SMs, %.1f GiB, L2 %.0f MB)", b->device,
           device, b->sm_version, b->sm_count, (double)b->memory_bytes / (double)(1ull << 30),
           (double)b->l2_bytes / 1e6);
  return 0;
}