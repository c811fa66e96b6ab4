/* toolkit.h - the bulk building blocks every design's backends share, one C call each for both
 * backends: memory (fill, copy, read back, scratch, growth) and the parallel primitives the
 * papers' builds are made of (exclusive scan, stable radix sort of pairs, run-length encode).
 * Device code has its own half in core/kernels.cuh; the host backend's loop is core/parallel.h.
 *
 * Every function takes the table (its backend, allocator and error message) and dispatches on
 * t->config.backend: the host backend runs the work at once on the calling thread (or CPU
 * threads); the CUDA backend QUEUES it on `stream` (CUB for the algorithms) and returns without
 * waiting. Only gh__to_host and gh__sync wait, so an operation built from these queues all of its
 * work and synchronises once, where it needs a result on the host. Arrays live on the backend's
 * side (gh__backend_memory) unless said otherwise. Failures return a status with the message in
 * gh_last_error(t); nothing is left allocated. */
#ifndef GH_CORE_TOOLKIT_H
#define GH_CORE_TOOLKIT_H

#include <stddef.h>
#include <stdint.h>

#include "core/table.h"

/* Where the table's backend keeps its arrays: GH_MEMORY_DEVICE for CUDA, GH_MEMORY_HOST else. */
gh_memory_kind gh__backend_memory(const gh_table *t);

/* ---- Memory ------------------------------------------------------------------------------------ */

/* memset / memcpy on the backend's side; copy also takes arrays of any location (a host array to
 * the device, say). Stream-ordered on CUDA. */
gh_status gh__fill(gh_table *t, void *dst, int byte, size_t bytes, void *stream);
gh_status gh__copy(gh_table *t, void *dst, const void *src, size_t bytes, void *stream);
/* Copies backend memory into host memory and waits for it (and for the stream's earlier work):
 * how an operation reads a counter or a size it needs to decide on the host. */
gh_status gh__to_host(gh_table *t, void *host_dst, const void *src, size_t bytes, void *stream);
/* Waits for the stream's work (CUDA; nothing to wait for on the host), then releases what
 * gh__free_after deferred on that stream. */
gh_status gh__sync(gh_table *t, void *stream);
/* Waits for all work on the table's device, whatever its stream (kernels of user code that use a
 * device view, say), then releases everything gh__free_after deferred. */
gh_status gh__device_sync(gh_table *t);

/* A temporary array on the backend's side, counted in the table's memory like every allocation. */
typedef struct gh_scratch {
  void *ptr;
  size_t bytes;
  gh_memory_kind kind;
  int pooled;   /* from the stream-ordered pool (gh__scratch_alloc_on), on `stream` */
  void *stream;
} gh_scratch;

/* Allocates bytes (at least 1) on the backend's side; on failure s->ptr is NULL and the message
 * says how much was wanted. */
gh_status gh__scratch_alloc(gh_table *t, gh_scratch *s, size_t bytes);
/* The same, for scratch that only work queued on `stream` uses and that gh__scratch_free releases
 * (never gh__free): with the default device allocator it comes from gpuhash's stream-ordered pool
 * (core/cuda_runtime.cu), which keeps freed memory for the next call instead of a cudaMalloc and a
 * cudaFree each time (1 GB of them cost about 1.2 ms of a 5.3 ms hashgraph build on an H200). A
 * user allocator, the host backend, or a device without pools: gh__scratch_alloc. */
gh_status gh__scratch_alloc_on(gh_table *t, gh_scratch *s, size_t bytes, void *stream);
/* Releases a scratch array once the work queued on stream has run (gh__free_after; pool scratch
 * stream-ordered on its own stream); NULL ptr is fine. */
void gh__scratch_free(gh_table *t, gh_scratch *s, void *stream);

/* The device record a design's device views point at: allocated (bytes, device memory) into
 * *record on the first call and filled by publish(t, NULL), which the design also calls after every
 * change; without memory, or when publish fails, *record stays NULL and the table is unchanged. */
gh_status gh__view_record(gh_table *t, void **record, size_t bytes, gh_status (*publish)(gh_table *t, void *stream));
/* Frees ptr once the work queued on stream so far has run - at the next gh__sync / gh__to_host of
 * that stream, or the end of the public call - not now: a queued kernel may still read it, and a
 * user allocator may hand the memory out again at once. The host backend frees at once. */
void gh__free_after(gh_table *t, void *ptr, size_t bytes, gh_memory_kind kind, void *stream);
/* Frees what gh__free_after deferred on stream (call once that stream's work has run), or all of
 * it (once the whole device's work has run). */
void gh__release_deferred(gh_table *t, void *stream);
void gh__release_all_deferred(gh_table *t);

/* Growth, all or nothing: replaces the array *ptr of *bytes by one of new_bytes of the same kind:
 * allocates it first, copies the first keep_bytes of the old array into it, fills the rest with
 * the byte `fill` (when fill >= 0), and only then releases the old array (gh__free_after). On
 * failure *ptr and *bytes are untouched, so the table keeps its state. *ptr may be NULL (bytes 0). */
gh_status gh__realloc_array(gh_table *t, void **ptr, size_t *bytes, size_t new_bytes, size_t keep_bytes,
                            int fill, gh_memory_kind kind, void *stream);

/* ---- Timing -------------------------------------------------------------------------------------- */

/* How long a stretch of an operation's work takes (a resize, for gh_stats.resize_seconds): CUDA
 * events on the stream, or the monotonic clock on the host. Reading it waits for the work queued
 * since the start. Timing never fails the work it times: a watch that could not start reads 0. */
typedef struct gh_stopwatch {
  void *event;         /* CUDA: the start event */
  double host_seconds; /* host: the clock at the start */
} gh_stopwatch;
void gh__stopwatch_start(gh_table *t, gh_stopwatch *w, void *stream);
double gh__stopwatch_seconds(gh_table *t, gh_stopwatch *w, void *stream);

/* ---- Parallel primitives (CUB on CUDA) --------------------------------------------------------- */

/* out[i] = in[0] + ... + in[i - 1] for i < count (out[0] = 0); in == out is allowed. Give one
 * extra 0 element at the end to get the total in out[count - 1]. */
gh_status gh__exclusive_sum_u64(gh_table *t, const uint64_t *in, uint64_t *out, uint64_t count, void *stream);

/* gh_find_all's offsets: offsets[0 .. n - 1] hold each key's number of values; makes them the CSR
 * offsets (offsets[n] the total) and checks the total against values_capacity: GH_ERR_BUFFER_TOO_SMALL,
 * saying how many are needed, when the values would not fit. Waits for the stream (to read the total). */
gh_status gh__find_all_offsets(gh_table *t, uint64_t *offsets, uint64_t n, uint64_t values_capacity, void *stream);

/* The rows of a CSR's entries: rows_out[j] = i for offsets[i] <= j < offsets[i + 1], for every
 * j < total = offsets[n] (a join's left rows from gh_find_all's offsets). */
gh_status gh__expand_offsets(gh_table *t, const uint64_t *offsets, uint64_t n, uint64_t total, uint64_t *rows_out,
                             void *stream);

/* Stable sort of n (key, value) pairs by key, ascending, keys and values key_bits / value_bits
 * wide (32 or 64). value_bits 0 (values_in / values_out NULL) sorts keys only. Inputs and outputs
 * are distinct arrays. */
gh_status gh__sort_pairs(gh_table *t, const void *keys_in, void *keys_out, const void *values_in, void *values_out,
                         uint64_t n, unsigned key_bits, unsigned value_bits, void *stream);

/* Runs of equal keys in n sorted keys (key_bits wide): unique_out[r] = the key of run r,
 * counts_out[r] = its length, *runs_out = the number of runs. runs_out is backend memory (one
 * uint64_t) so that the work stays queued: read it with gh__to_host when the host needs it. */
gh_status gh__run_length_encode(gh_table *t, const void *keys_in, uint64_t n, unsigned key_bits, void *unique_out,
                                uint64_t *counts_out, uint64_t *runs_out, void *stream);

/* Digits gh__host_partition takes at most (gh__cuda_sort_by_digit sorts 16- or 32-bit digits). */
#define GH_PARTITION_MAX_DIGITS 65536u

/* The host backends' multisplit: items 0 .. n - 1 into runs by digit(ctx, i) < digits, in order
 * inside a run; move(ctx, i, to) puts item i at position `to` of the caller's output. places:
 * the caller's `digits` words of work space (taken with the rest of an operation's scratch); on
 * return places[d] = where run d ends. Returns the longest run. */
uint64_t gh__host_partition(uint64_t n, unsigned digits, unsigned (*digit)(const void *ctx, uint64_t i),
                            void (*move)(const void *ctx, uint64_t i, uint64_t to), const void *ctx, uint64_t *places);

/* A partition's runs much longer than a region holds are mostly repeats of a few keys, which one
 * block (one thread, on the host) would apply one after another while the rest of the device
 * waits: a bulk call whose longest run exceeds this many times its region's slots goes the
 * ordinary way. (Zipf keys at 2^27 took warpdrive's bulk insert 1.46 s on an H100, against 17 ms
 * by the ordinary insert; docs/benchmarks.md, "Skewed keys stall the bulk insert".) */
#define GH_PARTITION_LONGEST_RUN_REGIONS 4u
static inline int gh_partition_too_skewed(uint64_t longest, uint64_t region_slots) {
  return longest > (uint64_t)GH_PARTITION_LONGEST_RUN_REGIONS * region_slots;
}

/* ---- The backends' implementations (called through the functions above) ------------------------ */

/* core/toolkit_host.c */
gh_status gh__host_exclusive_sum_u64(gh_table *t, const uint64_t *in, uint64_t *out, uint64_t count);
gh_status gh__host_sort_pairs(gh_table *t, const void *keys_in, void *keys_out, const void *values_in,
                              void *values_out, uint64_t n, unsigned key_bits, unsigned value_bits);
gh_status gh__host_run_length_encode(gh_table *t, const void *keys_in, uint64_t n, unsigned key_bits,
                                     void *unique_out, uint64_t *counts_out, uint64_t *runs_out);
gh_status gh__host_expand_offsets(gh_table *t, const uint64_t *offsets, uint64_t n, uint64_t *rows_out);

#if defined(GH_HAVE_CUDA)
/* core/toolkit_cuda.cu: CUB, temporary storage from gh__scratch_alloc. */
gh_status gh__cuda_exclusive_sum_u64(gh_table *t, const uint64_t *in, uint64_t *out, uint64_t count, void *stream);
/* Records (4, 8 or 16 bytes) sorted by a digit of digit_bytes (2 or 4) bytes, its low digit_bits
 * bits (CUB's radix sort: one pass up to 8 bits), in temporary storage the caller took before (an
 * operation that must not fail for memory part-way): its size for up to n records, and the sort. */
size_t gh__cuda_sort_by_digit_temp_bytes(uint64_t n, unsigned record_bytes, unsigned digit_bytes);
gh_status gh__cuda_sort_by_digit(gh_table *t, const void *digits_in, void *digits_out, unsigned digit_bytes,
                                 const void *records_in, void *records_out, uint64_t n, unsigned record_bytes,
                                 unsigned digit_bits, void *temp, size_t temp_bytes, void *stream);
/* A partition of records into runs by a digit below `digits` (a region of a table): the caller's
 * kernel writes each record's digit into digits_in (digit_bytes wide: 2 up to 65536 digits, else
 * 4), then gh__cuda_partition sorts the records by it (CUB) and finds where each digit's run starts:
 * starts[r] = the first sorted record of digit r or a later one, starts[digits] = n. Its work space
 * (digits before and after the sort, starts, the sort's temporary storage) is taken with the rest of
 * an operation's scratch: gh__cuda_partition_bytes for n records, carved by gh__cuda_partition_work. */
typedef struct gh_partition_work {
  void *digits_in, *digits_out;
  unsigned digit_bytes;
  uint64_t *starts;
  unsigned long long *longest; /* the longest run, when asked */
  void *sort_temp;
  size_t sort_bytes;
} gh_partition_work;
size_t gh__cuda_partition_bytes(uint64_t n, unsigned record_bytes, unsigned digits);
gh_partition_work gh__cuda_partition_work(void *work, size_t work_bytes, uint64_t n, unsigned digits);
/* *longest (when not NULL): the longest run, read back (the call waits for the partition). */
gh_status gh__cuda_partition(gh_table *t, const gh_partition_work *w, const void *records_in, void *records_out,
                             uint64_t n, unsigned record_bytes, unsigned digits, uint64_t *longest, void *stream);
gh_status gh__cuda_sort_pairs(gh_table *t, const void *keys_in, void *keys_out, const void *values_in,
                              void *values_out, uint64_t n, unsigned key_bits, unsigned value_bits, void *stream);
gh_status gh__cuda_run_length_encode(gh_table *t, const void *keys_in, uint64_t n, unsigned key_bits,
                                     void *unique_out, uint64_t *counts_out, uint64_t *runs_out, void *stream);
gh_status gh__cuda_expand_offsets(gh_table *t, const uint64_t *offsets, uint64_t n, uint64_t total, uint64_t *rows_out,
                                  void *stream);
#endif

#endif /* GH_CORE_TOOLKIT_H */
