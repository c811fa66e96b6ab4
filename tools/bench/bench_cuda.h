/*
 * bench_cuda.h - the benchmark's CUDA side, as plain C functions.
 *
 * Implemented by bench_cuda.cu when gpuhash is built with CUDA, and by bench_cuda_stub.c
 * (every function fails with "built without CUDA") otherwise, so the C code never needs a CUDA
 * header. All device work goes to one stream created by bcu_init(), the stream the benchmark
 * passes to every gh_* call.
 *
 * Every function returns 0 on success and -1 on failure; bcu_error() then says which CUDA call
 * failed, with the CUDA error name, and where. A failure after a kernel launch may report an
 * earlier asynchronous error: treat every failure as fatal for the run.
 */
#ifndef GPUHASH_BENCH_CUDA_H
#define GPUHASH_BENCH_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "bench_gen.h"
#include "bench_sorted.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bcu_device_info {
  char name[256];   /* cudaDeviceProp.name */
  int major, minor; /* compute capability */
  int sm_count;
  size_t total_bytes; /* device memory */
  size_t l2_bytes;
} bcu_device_info;

/** Selects the device, creates the stream, the timing events and a few scratch words. */
int bcu_init(int device, bcu_device_info *info);
/** Frees everything bcu_init() made; safe to call when it failed or never ran. */
void bcu_shutdown(void);
/** What the last failing call did ("" if none). */
const char *bcu_error(void);
/** The benchmark's stream, as a cudaStream_t cast to void * (gh_stream). */
void *bcu_stream(void);

/** Free and total device memory (cudaMemGetInfo). */
int bcu_memory(size_t *free_bytes, size_t *total_bytes);
/** cudaMalloc; *ptr is NULL on failure. */
int bcu_alloc(void **ptr, size_t bytes);
/** cudaFree after synchronising the stream; accepts NULL. */
int bcu_free(void *ptr);
/** Stream-ordered memset of device memory. */
int bcu_memset(void *ptr, int byte, size_t bytes);

/** Records the start event on the stream. */
int bcu_timer_start(void);
/** Records the stop event, waits for it, and returns the milliseconds between the two. */
int bcu_timer_stop(double *ms);

/** out[i] = bench_gen_element(spec, i) for i < n, as spec.bits-wide words in device memory.
 * For Zipf keys rank_map (device, zipf_n bytes, zeroed by the caller) gets a 1 at every rank
 * drawn, so that counting its non-zero bytes counts the distinct keys; NULL skips that. */
int bcu_generate(void *out, uint64_t n, bench_gen_spec spec, uint8_t *rank_map);

/** *count = number of i < n with a[i] != (b ? b[i] : value); elements of elem_bytes = 1, 4 or 8
 * bytes, a and b in device memory. Synchronises the stream. */
int bcu_count_differ(const void *a, const void *b, uint64_t value, uint64_t n, unsigned elem_bytes,
                     uint64_t *count);

/* ---- The sorted-array baseline of the cuckoo scenarios (bench_sorted.h) ------------------- */

/** Scratch bytes (s->temp) the sort, the run-length encoding and the scans of a structure of n
 * pairs with these widths need: the largest CUB temporary storage among them. */
bench_sorted_temp_bytes_fn bcu_sorted_temp_bytes;
/** Radix sort (cub::DeviceRadixSort) of keys_in (and values_in unless s->value_bytes is 0) into
 * s->keys / s->values; stream-ordered, no synchronisation. */
bench_sorted_build_fn bcu_sorted_build;
/** Run-length encoding of the sorted keys (cub::DeviceRunLengthEncode::Encode): distinct keys
 * and their counts, then (with_offsets) the exclusive sum of the counts (cub::DeviceScan) into
 * s->run_offsets. Reads the number of distinct keys into s->unique: synchronises the stream. */
bench_sorted_runs_fn bcu_sorted_runs;
/** One thread per query: binary search of queries[0, n) in sorted keys[0, m), writing
 * values_out / found_out as bench_sorted_find_one() says. No synchronisation. */
bench_sorted_find_fn bcu_sorted_find;
/** Multivalue lookup of queries[0, n) in the run-length encoding of s, in gh_count +
 * gh_find_all's shape: a count pass (binary search; counts into offsets_out, run starts into
 * positions, n words), an in-place exclusive sum of offsets_out[0, n] (so offsets_out[n] is
 * the total, read back: synchronises), then one warp per 32 queries copying each key's values
 * from s->values to values_out. Fails if the total exceeds values_capacity. */
bench_sorted_find_all_fn bcu_sorted_find_all;

/* ---- Ceilings (gpuhash-bench --limits) ------------------------------------------------------ */

typedef enum bcu_limit {
  BCU_LIMIT_COPY = 0,        /* coalesced copy, first half of the buffer to the second */
  BCU_LIMIT_SECTOR_READ = 1, /* one 8-byte load per thread from a random 32-byte sector */
  BCU_LIMIT_CAS64 = 2,       /* one 64-bit CAS(all-ones -> i) per thread, distinct slots */
  BCU_LIMIT_ATOMIC_ADD32 = 3 /* one 32-bit atomicAdd per thread, random word, result unused */
} bcu_limit;
#define BCU_LIMIT_COUNT 4

/** The work one launch of a ceiling kernel does over a buffer of `bytes` bytes. */
typedef struct bcu_limit_plan {
  uint64_t ops;         /* operations per launch; for the copy, bytes read + written */
  uint64_t table_bytes; /* bytes of the buffer the kernel touches */
} bcu_limit_plan;

/** Fills the buffer for the ceiling (untimed) and says what one launch does. `bytes` must be a
 * power of two of at least 1 MiB. */
int bcu_limit_prepare(bcu_limit which, void *buffer, size_t bytes, uint64_t seed,
                      bcu_limit_plan *plan);
/** Restores the state a launch consumes (CAS: the table back to all-ones); untimed. */
int bcu_limit_reset(bcu_limit which, void *buffer, size_t bytes);
/** Launches the ceiling kernel once on the stream (no synchronisation). */
int bcu_limit_launch(bcu_limit which, void *buffer, size_t bytes, uint64_t seed);
/** Checks the last launch did what was counted (copy: destination equals source; CAS: every
 * CAS succeeded and every slot was written); -1 with a message otherwise. */
int bcu_limit_verify(bcu_limit which, void *buffer, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* GPUHASH_BENCH_CUDA_H */
