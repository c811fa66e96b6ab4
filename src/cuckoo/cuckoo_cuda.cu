/* cuckoo_cuda.cu - the cuckoo primitives on the GPU: one thread per key (the chapter's design:
 * eviction chains are per-item and gain nothing from cooperation), grid-stride loops over a
 * resident grid, warp-aggregated counters and output cursors, CUB for sorting and prefix sums.
 *
 * Only the hot kernels (prepare, place, find) are instantiated per (key, value) width pair so the
 * slot layout folds at compile time; the bookkeeping kernels take the format at run time, which
 * keeps the build small. */
#include <cuda_runtime.h>
#include <cub/cub.cuh>
#include <stdio.h>

#include "core/kernels.cuh"

extern "C" {
#include "cuckoo/cuckoo_table.h"
}

#define GH_CK_WIDTHS(X) X(32, 0) X(32, 32) X(32, 64) X(64, 0) X(64, 32) X(64, 64)

static const int kBlockThreads = 256;

static gh_ck_table *state(gh_table *t) { return (gh_ck_table *)t->impl; }


/* ---- Small device helpers -------------------------------------------------------------------- */

static __device__ __forceinline__ uint64_t read_word(const void *array, uint64_t i, unsigned bits) {
  return bits == 64 ? ((const uint64_t *)array)[i] : ((const uint32_t *)array)[i];
}

static __device__ __forceinline__ void write_word(void *array, uint64_t i, unsigned bits, uint64_t value) {
  if (bits == 64) ((uint64_t *)array)[i] = value;
  else ((uint32_t *)array)[i] = (uint32_t)value;
}

static __device__ __forceinline__ uint64_t thread_index(void) { return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; }
static __device__ __forceinline__ uint64_t grid_threads(void) { return (uint64_t)gridDim.x * blockDim.x; }

/* Adds a per-thread count to a counter: one atomic per warp. Every lane of the warp calls it. */
static __device__ __forceinline__ void add_per_warp(unsigned long long *counter, unsigned long long count) {
  for (int offset = 16; offset > 0; offset >>= 1) count += __shfl_down_sync(0xFFFFFFFFu, count, offset);
  if ((threadIdx.x & 31u) == 0 && count) atomicAdd(counter, count);
}

/* Reserves a position in an output array for each lane with keep set: one atomic per warp. Every
 * lane of the warp calls it. */
static __device__ __forceinline__ uint64_t reserve_per_warp(unsigned long long *cursor, int keep) {
  const unsigned keepers = __ballot_sync(0xFFFFFFFFu, keep);
  const unsigned lane = threadIdx.x & 31u;
  unsigned long long base = 0;
  if (lane == 0 && keepers) base = atomicAdd(cursor, (unsigned long long)__popc(keepers));
  base = __shfl_sync(0xFFFFFFFFu, base, 0);
  return base + __popc(keepers & ((1u << lane) - 1u));
}

/* The geometry with the widths as compile-time constants. */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ gh_ck_geometry constant_geometry(gh_ck_geometry g) {
  g.format = gh_slot_format_make(KB, VB);
  return g;
}

/* Loops rounded up to whole warps so warp-collective helpers see every lane. */
static __device__ __forceinline__ uint64_t warp_rounded(uint64_t n) { return (n + 31u) / 32u * 32u; }

/* ---- Kernels --------------------------------------------------------------------------------- */

template <unsigned KB, unsigned VB>
__global__ void ck_prepare_kernel(gh_ck_geometry geometry, void *slots, const void *keys, const void *values,
                                  int source, uint64_t n, int policy, int check_present, void *entries,
                                  gh_ck_counters *counters) {
  const gh_ck_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_slot_format f = g.format;
  unsigned long long side_new = 0;
  for (uint64_t i = thread_index(); i < warp_rounded(n); i += grid_threads()) {
    int keep = 0;
    uint64_t key = 0, value = 0;
    if (i < n) {
      key = read_word(keys, i, KB);
      value = source == GH_CK_VALUE_INDEX ? i : (source == GH_CK_VALUE_NO_ID ? GH_CK_NO_ID : (VB ? read_word(values, i, VB) : 0));
      if (gh_ck_is_sentinel(&g, key)) {
        side_new += (unsigned long long)gh_side_insert(f, gh_ck_side_slot(&g, slots), value, policy);
      } else {
        const uint64_t at = check_present ? gh_ck_locate(&g, slots, key) : ~0ull;
        if (at != ~0ull) gh_slot_update_value(f, gh_ck_entry_at(&g, slots, at), policy, value);
        else keep = 1;
      }
    }
    const uint64_t position = reserve_per_warp(&counters->count, keep);
    if (keep) gh_slot_write(f, gh_slot_at(f, entries, position), gh_slot_pack(f, key, value));
  }
  add_per_warp(&counters->side, side_new);
}

template <unsigned KB, unsigned VB>
__global__ void ck_place_kernel(gh_ck_geometry geometry, void *slots, void *entries, uint64_t m, int policy,
                                uint8_t *failed, gh_ck_counters *counters) {
  const gh_ck_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_slot_format f = g.format;
  unsigned long long placed = 0, gave_up = 0;
  for (uint64_t i = thread_index(); i < m; i += grid_threads()) {
    void *entry = gh_slot_at(f, entries, i);
    gh_slot_bits held = gh_slot_read(f, entry);
    const gh_ck_outcome outcome = gh_ck_insert_chain(&g, slots, &held, policy);
    placed += outcome == GH_CK_PLACED;
    gave_up += outcome == GH_CK_GAVE_UP;
    failed[i] = outcome == GH_CK_GAVE_UP;
    if (outcome == GH_CK_GAVE_UP) gh_slot_write(f, entry, held);
  }
  add_per_warp(&counters->placed, placed);
  add_per_warp(&counters->gave_up, gave_up);
}

/* Keys one thread looks up together. A lookup is a chain of up to d dependent reads, and on a
 * table far larger than the TLB's reach each read waits long, so one key per thread leaves the
 * memory system idle; a thread that walks several keys' chains in lockstep keeps that many reads
 * in flight. H200, n = 2^27, d = 4, 1.25 n slots: 1 key per thread 6.4 G finds/s (all d reads of
 * a key at once: 7.5), 4 keys 18.3, 8 keys 18.9 (docs/benchmarks.md). */
#ifndef GH_CK_FIND_KEYS_PER_THREAD
#define GH_CK_FIND_KEYS_PER_THREAD 4
#endif

/* STASH: the table has a stash to scan for keys missing from their d slots (rare: a separate
 * instantiation keeps the common kernel exactly the chapter's d reads). */
template <unsigned KB, unsigned VB, bool STASH>
__global__ void ck_find_kernel(gh_ck_geometry geometry, void *slots, const void *keys, uint64_t n, void *values_out,
                               uint8_t *found_out, uint64_t default_value) {
  const gh_ck_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_slot_format f = g.format;
  const uint64_t stride = grid_threads();
  for (uint64_t first = thread_index(); first < n; first += stride * GH_CK_FIND_KEYS_PER_THREAD) {
    uint64_t key[GH_CK_FIND_KEYS_PER_THREAD], value[GH_CK_FIND_KEYS_PER_THREAD];
    int pending[GH_CK_FIND_KEYS_PER_THREAD], found[GH_CK_FIND_KEYS_PER_THREAD];
#pragma unroll
    for (int j = 0; j < GH_CK_FIND_KEYS_PER_THREAD; ++j) {
      const uint64_t i = first + j * stride;
      key[j] = i < n ? read_word(keys, i, KB) : 0;
      value[j] = default_value;
      found[j] = 0;
      pending[j] = i < n;
      if (pending[j] && gh_ck_is_sentinel(&g, key[j])) {
        found[j] = gh_side_find(f, gh_ck_side_slot(&g, slots), &value[j]);
        pending[j] = 0;
      }
    }
    /* Round r reads every pending key's r-th slot; the reads of one round are independent. */
    for (unsigned r = 0; r < g.functions; ++r) {
      gh_slot_bits seen[GH_CK_FIND_KEYS_PER_THREAD];
#pragma unroll
      for (int j = 0; j < GH_CK_FIND_KEYS_PER_THREAD; ++j)
        if (pending[j]) seen[j] = gh_slot_load(f, gh_slot_at(f, slots, gh_ck_location(&g, key[j], r)));
#pragma unroll
      for (int j = 0; j < GH_CK_FIND_KEYS_PER_THREAD; ++j) {
        if (pending[j] && gh_slot_bits_key(f, seen[j]) == key[j]) {
          found[j] = 1;
          value[j] = gh_slot_bits_value(f, seen[j]);
          pending[j] = 0;
        }
      }
    }
    if (STASH) {
      for (int j = 0; j < GH_CK_FIND_KEYS_PER_THREAD; ++j) {
        const uint64_t at = pending[j] ? gh_ck_stash_locate(&g, key[j]) : ~0ull;
        if (at == ~0ull) continue;
        found[j] = 1;
        value[j] = gh_slot_load_value(f, gh_ck_entry_at(&g, slots, at));
      }
    }
#pragma unroll
    for (int j = 0; j < GH_CK_FIND_KEYS_PER_THREAD; ++j) {
      const uint64_t i = first + j * stride;
      if (i >= n) continue;
      if (VB && values_out) write_word(values_out, i, VB, value[j]);
      if (found_out) found_out[i] = (uint8_t)found[j];
    }
  }
}

__global__ void ck_absorb_kernel(gh_ck_geometry g, void *slots, const void *entries, uint8_t *failed, uint64_t m,
                                 int policy, gh_ck_counters *counters) {
  const gh_slot_format f = g.format;
  unsigned long long remaining = 0;
  for (uint64_t i = thread_index(); i < m; i += grid_threads()) {
    if (!failed[i]) continue;
    const gh_slot_bits entry = gh_slot_read(f, gh_slot_at(f, (void *)entries, i));
    const uint64_t at = gh_ck_locate(&g, slots, gh_slot_bits_key(f, entry));
    if (at == ~0ull) {
      remaining += 1;
      continue;
    }
    gh_slot_update_value(f, gh_ck_entry_at(&g, slots, at), policy, gh_slot_bits_value(f, entry));
    failed[i] = 0;
  }
  add_per_warp(&counters->count, remaining);
}

__global__ void ck_dedupe_kernel(gh_ck_geometry g, void *slots, int policy, gh_ck_counters *counters) {
  unsigned long long removed = 0;
  for (uint64_t i = thread_index(); i < g.slot_count; i += grid_threads())
    removed += (unsigned long long)gh_ck_dedupe_slot(&g, slots, i, policy);
  add_per_warp(&counters->count, removed);
}

__global__ void ck_dedupe_stash_kernel(gh_ck_geometry g, int policy, gh_ck_counters *counters) {
  unsigned long long removed = 0;
  for (uint64_t j = thread_index(); j < warp_rounded(g.stash_slots); j += grid_threads())
    removed += j < g.stash_slots ? (unsigned long long)gh_ck_dedupe_stash_entry(&g, j, policy) : 0ull;
  add_per_warp(&counters->count, removed);
}

__global__ void ck_clear_unflagged_kernel(gh_slot_format f, void *entries, const uint8_t *flags, uint64_t m) {
  for (uint64_t i = thread_index(); i < m; i += grid_threads())
    if (!flags[i]) gh_slot_write(f, gh_slot_at(f, entries, i), gh_slot_pack(f, gh_slot_empty_key(f.key_bits), ~0ull));
}

__global__ void ck_gather_kernel(gh_ck_geometry g, int include_slots, const void *slots, const void *entries,
                                 const uint8_t *failed, uint64_t m, void *out, gh_ck_counters *counters) {
  const gh_slot_format f = g.format;
  const uint64_t empty = gh_slot_empty_key(f.key_bits);
  const uint64_t main = include_slots ? g.slot_count : 0, total = main + m;
  for (uint64_t i = thread_index(); i < warp_rounded(total); i += grid_threads()) {
    gh_slot_bits bits = {0, 0};
    int keep = 0;
    if (i < main) {
      bits = gh_slot_read(f, gh_slot_at(f, (void *)slots, i));
    } else if (i < total && (failed == NULL || failed[i - main])) {
      bits = gh_slot_read(f, gh_slot_at(f, (void *)entries, i - main));
    } else {
      bits = gh_slot_pack(f, empty, ~0ull);
    }
    keep = i < total && gh_slot_bits_key(f, bits) != empty;
    const uint64_t position = reserve_per_warp(&counters->count, keep);
    if (keep) gh_slot_write(f, gh_slot_at(f, out, position), bits);
  }
}

__global__ void ck_erase_kernel(gh_ck_geometry g, void *slots, const void *keys, uint64_t n, uint8_t *erased_out,
                                gh_ck_counters *counters) {
  unsigned long long erased = 0, side = 0, stash = 0;
  for (uint64_t i = thread_index(); i < warp_rounded(n); i += grid_threads()) {
    gh_ck_erased where = GH_CK_ABSENT;
    if (i < n) {
      where = gh_ck_erase(&g, slots, read_word(keys, i, g.format.key_bits));
      if (erased_out) erased_out[i] = where != GH_CK_ABSENT;
    }
    erased += where == GH_CK_ERASED_MAIN;
    side += where == GH_CK_ERASED_SIDE;
    stash += where == GH_CK_ERASED_STASH;
  }
  add_per_warp(&counters->count, erased);
  add_per_warp(&counters->side, side);
  add_per_warp(&counters->stash, stash);
}

/* Exports (key, value) of every position holding a key (main slots, side slot, stash). */
__global__ void ck_export_kernel(gh_ck_geometry g, const void *slots, void *keys_out, void *values_out,
                                 gh_ck_counters *counters) {
  const gh_slot_format f = g.format;
  const uint64_t positions = gh_ck_position_count(&g);
  for (uint64_t i = thread_index(); i < warp_rounded(positions); i += grid_threads()) {
    int keep = 0;
    uint64_t key = 0, value = 0;
    if (i < positions) {
      const gh_slot_bits bits = gh_slot_read(f, gh_ck_entry_at(&g, (void *)slots, i));
      key = gh_slot_bits_key(f, bits);
      value = gh_slot_bits_value(f, bits);
      keep = gh_ck_holds_key(&g, i, &key);
    }
    const uint64_t position = reserve_per_warp(&counters->count, keep);
    if (keep) {
      write_word(keys_out, position, f.key_bits, key);
      if (values_out && f.value_bits) write_word(values_out, position, f.value_bits, value);
    }
  }
}

/* Compacting: every position holding a key without an id gets the next id (counters->count counts
 * them from 0; ids are first_id + that), and keys_by_id[id] = its key. */
__global__ void ck_assign_kernel(gh_ck_geometry g, void *slots, uint64_t first_id, void *keys_by_id,
                                 gh_ck_counters *counters) {
  const gh_slot_format f = g.format;
  const uint64_t no_id = gh_slot_value_mask(f.value_bits) & GH_CK_NO_ID;
  const uint64_t positions = gh_ck_position_count(&g);
  for (uint64_t i = thread_index(); i < warp_rounded(positions); i += grid_threads()) {
    void *slot = i < positions ? gh_ck_entry_at(&g, slots, i) : NULL;
    gh_slot_bits bits = {0, 0};
    uint64_t key = 0;
    int unassigned = 0;
    if (slot) {
      bits = gh_slot_read(f, slot);
      key = gh_slot_bits_key(f, bits);
      unassigned = gh_ck_holds_key(&g, i, &key) && gh_slot_bits_value(f, bits) == no_id;
    }
    const uint64_t id = first_id + reserve_per_warp(&counters->count, unassigned);
    if (!unassigned) continue;
    gh_slot_write(f, slot, gh_slot_pack(f, gh_slot_bits_key(f, bits), id));
    write_word(keys_by_id, id, f.key_bits, key);
  }
}

__global__ void ck_keys_of_ids_kernel(const void *keys_by_id, uint64_t id_count, const void *ids, uint64_t n,
                                      unsigned key_bits, unsigned id_bits, void *keys_out, gh_ck_counters *counters) {
  unsigned long long bad = 0;
  for (uint64_t i = thread_index(); i < warp_rounded(n); i += grid_threads()) {
    if (i >= n) continue;
    const uint64_t id = read_word(ids, i, id_bits);
    if (id >= id_count) {
      bad += 1;
      continue;
    }
    write_word(keys_out, i, key_bits, read_word(keys_by_id, id, key_bits));
  }
  add_per_warp(&counters->count, bad);
}

__global__ void ck_info_kernel(const uint64_t *firsts, const uint64_t *counts, uint64_t unique, gh_ck_key_info *info) {
  for (uint64_t i = thread_index(); i < unique; i += grid_threads()) {
    info[i].first = firsts[i];
    info[i].count = counts[i];
  }
}

/* counts[i] for n keys; counts[n] = 0 so one exclusive scan of n + 1 gives the total too. */
__global__ void ck_counts_kernel(const gh_ck_key_info *info, const uint32_t *ids, const uint8_t *found, uint64_t n,
                                 uint64_t *counts) {
  for (uint64_t i = thread_index(); i <= n; i += grid_threads())
    counts[i] = i < n && (found == NULL || found[i]) ? info[ids[i]].count : 0;
}

/* One thread per key copies its values (keys are few values each on average; a key with many
 * values is one long loop, which the chapter's retrieval has too). */
__global__ void ck_gather_values_kernel(const gh_ck_key_info *info, const void *sorted_values, const uint32_t *ids,
                                        const uint8_t *found, const uint64_t *offsets, uint64_t n,
                                        uint64_t default_value, const void *keys,
                                        void *keys_out, void *values_out, unsigned key_bits, unsigned value_bits) {
  for (uint64_t i = thread_index(); i < n; i += grid_threads()) {
    const int present = found == NULL || found[i];
    if (offsets == NULL) {
      const uint64_t value = present ? read_word(sorted_values, info[ids[i]].first, value_bits) : default_value;
      write_word(values_out, i, value_bits, value);
      continue;
    }
    if (!present) continue;
    const gh_ck_key_info key_info = info[ids[i]];
    const uint64_t key = keys_out ? read_word(keys, i, key_bits) : 0;
    for (uint64_t j = 0; j < key_info.count; ++j) {
      write_word(values_out, offsets[i] + j, value_bits, read_word(sorted_values, key_info.first + j, value_bits));
      if (keys_out) write_word(keys_out, offsets[i] + j, key_bits, key);
    }
  }
}

/* ---- Launching -------------------------------------------------------------------------------- */

static gh_status launch(gh_table *t, const void *kernel, uint64_t threads, void *stream, void **args) {
  if (kernel == NULL)
    return gh__fail(t, GH_ERR_INTERNAL, "no cuckoo kernel for key_bits %u, value_bits %u", t->config.key_bits,
                    t->config.value_bits);
  GH_CUDA_TRY(t, cudaLaunchKernel(kernel, dim3(gh_cuda_resident_grid(threads, kernel, kBlockThreads)), dim3(kBlockThreads), args, 0, (cudaStream_t)stream),
            "cuckoo kernel launch");
  return GH_OK;
}

typedef struct hot_kernels {
  const void *prepare, *place, *find, *find_with_stash;
} hot_kernels;


static hot_kernels kernels_for(gh_slot_format f) {
  hot_kernels k = {NULL, NULL, NULL, NULL};
#define GH_CK_KERNELS_CASE(kb, vb)                        \
  if (f.key_bits == kb && f.value_bits == vb) {           \
    k.prepare = (const void *)ck_prepare_kernel<kb, vb>;  \
    k.place = (const void *)ck_place_kernel<kb, vb>;      \
    k.find = (const void *)ck_find_kernel<kb, vb, false>;        \
    k.find_with_stash = (const void *)ck_find_kernel<kb, vb, true>; \
  }
  GH_CK_WIDTHS(GH_CK_KERNELS_CASE)
#undef GH_CK_KERNELS_CASE
  return k;
}

/* Device scratch for CUB, released by scratch_free. */
typedef struct scratch {
  void *ptr;
  size_t bytes;
} scratch;

static gh_status scratch_alloc(gh_table *t, scratch *s, size_t bytes) {
  s->bytes = bytes ? bytes : 1;
  s->ptr = gh__alloc(t, s->bytes, GH_MEMORY_DEVICE);
  return s->ptr ? GH_OK : gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no device memory for %zu bytes of scratch", bytes);
}

static void scratch_free(gh_table *t, scratch *s) {
  gh__free(t, s->ptr, s->bytes, GH_MEMORY_DEVICE);
  s->ptr = NULL;
}

/* out[0..n] = exclusive prefix sum of in[0..n] (n + 1 elements). */
static gh_status exclusive_sum(gh_table *t, const uint64_t *in, uint64_t *out, uint64_t count, void *stream) {
  size_t bytes = 0;
  GH_CUDA_TRY(t, cub::DeviceScan::ExclusiveSum(NULL, bytes, in, out, (int64_t)count, (cudaStream_t)stream), "CUB scan (size)");
  scratch s;
  gh_status status = scratch_alloc(t, &s, bytes);
  if (status != GH_OK) return status;
  const cudaError_t err = cub::DeviceScan::ExclusiveSum(s.ptr, bytes, in, out, (int64_t)count, (cudaStream_t)stream);
  scratch_free(t, &s);
  GH_CUDA_TRY(t, err, "CUB exclusive scan");
  return GH_OK;
}

/* ---- Primitives ------------------------------------------------------------------------------- */

static gh_status cuda_fill(gh_table *t, void *dst, int byte, size_t bytes, void *stream) {
  GH_CUDA_TRY(t, cudaMemsetAsync(dst, byte, bytes, (cudaStream_t)stream), "cudaMemsetAsync");
  return GH_OK;
}

static gh_status cuda_copy(gh_table *t, void *dst, const void *src, size_t bytes, void *stream) {
  if (bytes) GH_CUDA_TRY(t, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)stream), "cudaMemcpyAsync");
  return GH_OK;
}

static gh_status cuda_sync(gh_table *t, void *stream) {
  GH_CUDA_TRY(t, cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize");
  return GH_OK;
}

static gh_status cuda_to_host(gh_table *t, void *host_dst, const void *src, size_t bytes, void *stream) {
  gh_status status = cuda_copy(t, host_dst, src, bytes, stream);
  return status == GH_OK ? cuda_sync(t, stream) : status;
}

/* Launches a kernel that accumulates into the zeroed counters, waits, and reads them back (this is
 * where the bulk calls synchronise). */
static gh_status run_counted(gh_table *t, const void *kernel, uint64_t threads, void **args, gh_ck_counters *after,
                             void *stream) {
  gh_status status = cuda_fill(t, state(t)->counters, 0, sizeof(gh_ck_counters), stream);
  if (status == GH_OK) status = launch(t, kernel, threads, stream, args);
  return status == GH_OK ? cuda_to_host(t, after, state(t)->counters, sizeof *after, stream) : status;
}

static gh_status cuda_prepare(gh_table *t, const gh_ck_geometry *g, const void *keys, const void *values,
                              gh_ck_value_source source, uint64_t n, int policy, int check_present, void *entries,
                              uint64_t *entry_count, uint64_t *side_new, void *stream) {
  gh_ck_geometry geometry = *g;
  void *slots = state(t)->slots;
  gh_ck_counters *counters = state(t)->counters;
  int source_value = (int)source;
  void *args[] = {&geometry, &slots, (void *)&keys, (void *)&values, &source_value, &n, &policy, &check_present,
                  &entries, &counters};
  gh_ck_counters after;
  gh_status status = run_counted(t, kernels_for(g->format).prepare, n, args, &after, stream);
  if (status != GH_OK) return status;
  *entry_count = after.count;
  *side_new = after.side;
  return GH_OK;
}

static gh_status cuda_place(gh_table *t, const gh_ck_geometry *g, void *entries, uint64_t m, int policy,
                            uint8_t *failed, uint64_t *placed, uint64_t *gave_up, void *stream) {
  gh_ck_geometry geometry = *g;
  void *slots = state(t)->slots;
  gh_ck_counters *counters = state(t)->counters;
  void *args[] = {&geometry, &slots, &entries, &m, &policy, &failed, &counters};
  gh_ck_counters after;
  gh_status status = run_counted(t, kernels_for(g->format).place, m, args, &after, stream);
  if (status != GH_OK) return status;
  *placed = after.placed;
  *gave_up = after.gave_up;
  return GH_OK;
}

static gh_status cuda_absorb(gh_table *t, const gh_ck_geometry *g, const void *entries, uint8_t *failed, uint64_t m,
                             int policy, uint64_t *remaining, void *stream) {
  gh_ck_geometry geometry = *g;
  void *slots = state(t)->slots;
  gh_ck_counters *counters = state(t)->counters;
  void *args[] = {&geometry, &slots, (void *)&entries, &failed, &m, &policy, &counters};
  gh_ck_counters after;
  gh_status status = run_counted(t, (const void *)ck_absorb_kernel, m, args, &after, stream);
  if (status == GH_OK) *remaining = after.count;
  return status;
}

static gh_status cuda_dedupe(gh_table *t, const gh_ck_geometry *g, int policy, uint64_t *removed, void *stream) {
  gh_ck_geometry geometry = *g;
  void *slots = state(t)->slots;
  gh_ck_counters *counters = state(t)->counters;
  void *args[] = {&geometry, &slots, &policy, &counters};
  gh_ck_counters after;
  gh_status status = run_counted(t, (const void *)ck_dedupe_kernel, g->slot_count, args, &after, stream);
  if (status == GH_OK) *removed = after.count;
  return status;
}

static gh_status cuda_dedupe_stash(gh_table *t, const gh_ck_geometry *g, int policy, uint64_t *removed, void *stream) {
  gh_ck_geometry geometry = *g;
  gh_ck_counters *counters = state(t)->counters;
  void *args[] = {&geometry, &policy, &counters};
  gh_ck_counters after;
  gh_status status = run_counted(t, (const void *)ck_dedupe_stash_kernel, g->stash_slots, args, &after, stream);
  if (status == GH_OK) *removed = after.count;
  return status;
}

static gh_status cuda_clear_unflagged(gh_table *t, const gh_ck_geometry *g, void *entries, const uint8_t *flags,
                                      uint64_t m, void *stream) {
  gh_slot_format format = g->format;
  void *args[] = {&format, &entries, (void *)&flags, &m};
  return launch(t, (const void *)ck_clear_unflagged_kernel, m, stream, args);
}

static gh_status cuda_gather(gh_table *t, const gh_ck_geometry *g, int include_slots, const void *entries,
                             const uint8_t *failed, uint64_t m, void *out, uint64_t *count, void *stream) {
  gh_ck_geometry geometry = *g;
  const void *slots = state(t)->slots;
  gh_ck_counters *counters = state(t)->counters;
  void *args[] = {&geometry, &include_slots, (void *)&slots, (void *)&entries, (void *)&failed, &m, &out, &counters};
  gh_ck_counters after;
  gh_status status = run_counted(t, (const void *)ck_gather_kernel, (include_slots ? g->slot_count : 0) + m, args,
                                 &after, stream);
  if (status == GH_OK) *count = after.count;
  return status;
}

static gh_status cuda_find(gh_table *t, const gh_ck_geometry *g, const void *keys, uint64_t n, void *values_out,
                           uint8_t *found_out, uint64_t default_value, void *stream) {
  gh_ck_geometry geometry = *g;
  void *slots = state(t)->slots;
  void *args[] = {&geometry, &slots, (void *)&keys, &n, &values_out, &found_out, &default_value};
  const hot_kernels kernels = kernels_for(g->format);
  gh_status status = launch(t, g->stash_slots ? kernels.find_with_stash : kernels.find, n, stream, args);
  return status == GH_OK ? cuda_sync(t, stream) : status;
}

static gh_status cuda_erase(gh_table *t, const gh_ck_geometry *g, const void *keys, uint64_t n, uint8_t *erased_out,
                            gh_ck_erase_counts *erased, void *stream) {
  gh_ck_geometry geometry = *g;
  void *slots = state(t)->slots;
  gh_ck_counters *counters = state(t)->counters;
  void *args[] = {&geometry, &slots, (void *)&keys, &n, &erased_out, &counters};
  gh_ck_counters after;
  gh_status status = run_counted(t, (const void *)ck_erase_kernel, n, args, &after, stream);
  if (status != GH_OK) return status;
  erased->main = after.count;
  erased->side = after.side;
  erased->stash = after.stash;
  return GH_OK;
}

static gh_status cuda_export(gh_table *t, const gh_ck_geometry *g, void *keys_out, void *values_out, uint64_t *count,
                             void *stream) {
  gh_ck_geometry geometry = *g;
  const void *slots = state(t)->slots;
  gh_ck_counters *counters = state(t)->counters;
  void *args[] = {&geometry, (void *)&slots, &keys_out, &values_out, &counters};
  gh_ck_counters after;
  gh_status status = run_counted(t, (const void *)ck_export_kernel, gh_ck_position_count(g), args, &after, stream);
  if (status == GH_OK) *count = after.count;
  return status;
}

static gh_status cuda_assign_ids(gh_table *t, const gh_ck_geometry *g, uint64_t first_id, void *keys_by_id,
                                 uint64_t *assigned, void *stream) {
  gh_ck_geometry geometry = *g;
  void *slots = state(t)->slots;
  gh_ck_counters *counters = state(t)->counters;
  void *args[] = {&geometry, &slots, &first_id, &keys_by_id, &counters};
  gh_ck_counters after;
  gh_status status = run_counted(t, (const void *)ck_assign_kernel, gh_ck_position_count(g), args, &after, stream);
  if (status == GH_OK) *assigned = after.count;
  return status;
}

static gh_status cuda_keys_of_ids(gh_table *t, const void *keys_by_id, uint64_t id_count, const void *ids, uint64_t n,
                                  void *keys_out, uint64_t *bad, void *stream) {
  unsigned key_bits = t->config.key_bits, id_bits = t->config.value_bits;
  gh_ck_counters *counters = state(t)->counters;
  void *args[] = {(void *)&keys_by_id, &id_count, (void *)&ids, &n, &key_bits, &id_bits, &keys_out, &counters};
  gh_ck_counters after;
  gh_status status = run_counted(t, (const void *)ck_keys_of_ids_kernel, n, args, &after, stream);
  if (status == GH_OK) *bad = after.count;
  return status;
}

/* Radix sort of the pairs, then unique keys with their run lengths, then run starts. */
template <typename K, typename V>
static gh_status group_pairs_typed(gh_table *t, const K *keys, const V *values, uint64_t n, V *sorted_values,
                                   K *unique_keys, gh_ck_key_info *info, uint64_t *unique, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  const int64_t items = (int64_t)n;
  scratch sorted_keys = {NULL, 0}, counts = {NULL, 0}, firsts = {NULL, 0}, runs = {NULL, 0}, temp = {NULL, 0};
  gh_status status = scratch_alloc(t, &sorted_keys, (size_t)n * sizeof(K));
  if (status == GH_OK) status = scratch_alloc(t, &counts, (size_t)(n + 1) * sizeof(uint64_t));
  if (status == GH_OK) status = scratch_alloc(t, &firsts, (size_t)(n + 1) * sizeof(uint64_t));
  if (status == GH_OK) status = scratch_alloc(t, &runs, sizeof(int64_t));
  size_t sort_bytes = 0, rle_bytes = 0;
  cudaError_t err = cudaSuccess;
  if (status == GH_OK) {
    err = cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, keys, (K *)sorted_keys.ptr, values, sorted_values, items, 0,
                                          (int)(sizeof(K) * 8), s);
    if (err == cudaSuccess)
      err = cub::DeviceRunLengthEncode::Encode(NULL, rle_bytes, (K *)sorted_keys.ptr, unique_keys, (uint64_t *)counts.ptr,
                                               (int64_t *)runs.ptr, items, s);
    if (err == cudaSuccess) status = scratch_alloc(t, &temp, sort_bytes > rle_bytes ? sort_bytes : rle_bytes);
  }
  if (status == GH_OK && err == cudaSuccess)
    err = cub::DeviceRadixSort::SortPairs(temp.ptr, sort_bytes, keys, (K *)sorted_keys.ptr, values, sorted_values, items,
                                          0, (int)(sizeof(K) * 8), s);
  if (status == GH_OK && err == cudaSuccess)
    err = cub::DeviceRunLengthEncode::Encode(temp.ptr, rle_bytes, (K *)sorted_keys.ptr, unique_keys, (uint64_t *)counts.ptr,
                                             (int64_t *)runs.ptr, items, s);
  int64_t run_count = 0;
  if (status == GH_OK && err == cudaSuccess) err = cudaMemcpyAsync(&run_count, runs.ptr, sizeof run_count, cudaMemcpyDeviceToHost, s);
  if (status == GH_OK && err == cudaSuccess) err = cudaStreamSynchronize(s);
  if (status == GH_OK && err != cudaSuccess)
    status = gh__fail(t, GH_ERR_CUDA, "sorting the multivalue pairs failed: %s", cudaGetErrorName(err));
  if (status == GH_OK) status = cuda_fill(t, (uint64_t *)counts.ptr + run_count, 0, sizeof(uint64_t), stream);
  if (status == GH_OK) status = exclusive_sum(t, (const uint64_t *)counts.ptr, (uint64_t *)firsts.ptr, (uint64_t)run_count + 1, stream);
  if (status == GH_OK) {
    const uint64_t *first_array = (const uint64_t *)firsts.ptr, *count_array = (const uint64_t *)counts.ptr;
    uint64_t runs_value = (uint64_t)run_count;
    void *args[] = {(void *)&first_array, (void *)&count_array, &runs_value, &info};
    status = launch(t, (const void *)ck_info_kernel, runs_value, stream, args);
  }
  if (status == GH_OK) status = cuda_sync(t, stream);
  if (status == GH_OK) *unique = (uint64_t)run_count;
  scratch_free(t, &temp);
  scratch_free(t, &runs);
  scratch_free(t, &firsts);
  scratch_free(t, &counts);
  scratch_free(t, &sorted_keys);
  return status;
}

static gh_status cuda_group_pairs(gh_table *t, const void *keys, const void *values, uint64_t n, void *sorted_values,
                                  void *unique_keys, gh_ck_key_info *info, uint64_t *unique, void *stream) {
  const unsigned kb = t->config.key_bits, vb = t->config.value_bits;
  if (kb == 32 && vb == 32)
    return group_pairs_typed(t, (const uint32_t *)keys, (const uint32_t *)values, n, (uint32_t *)sorted_values,
                             (uint32_t *)unique_keys, info, unique, stream);
  if (kb == 32)
    return group_pairs_typed(t, (const uint32_t *)keys, (const uint64_t *)values, n, (uint64_t *)sorted_values,
                             (uint32_t *)unique_keys, info, unique, stream);
  if (vb == 32)
    return group_pairs_typed(t, (const uint64_t *)keys, (const uint32_t *)values, n, (uint32_t *)sorted_values,
                             (uint64_t *)unique_keys, info, unique, stream);
  return group_pairs_typed(t, (const uint64_t *)keys, (const uint64_t *)values, n, (uint64_t *)sorted_values,
                           (uint64_t *)unique_keys, info, unique, stream);
}

static gh_status cuda_count_values(gh_table *t, const gh_ck_key_info *info, const uint32_t *ids, const uint8_t *found,
                                   uint64_t n, uint64_t *counts, uint64_t *offsets, uint64_t *total, void *stream) {
  scratch all_counts;
  gh_status status = scratch_alloc(t, &all_counts, (size_t)(n + 1) * sizeof(uint64_t));
  if (status != GH_OK) return status;
  uint64_t *count_array = (uint64_t *)all_counts.ptr;
  void *args[] = {(void *)&info, (void *)&ids, (void *)&found, &n, &count_array};
  status = launch(t, (const void *)ck_counts_kernel, n + 1, stream, args);
  if (status == GH_OK && counts) status = cuda_copy(t, counts, count_array, (size_t)n * sizeof(uint64_t), stream);
  if (status == GH_OK) status = exclusive_sum(t, count_array, offsets, n + 1, stream);
  if (status == GH_OK) status = cuda_to_host(t, total, offsets + n, sizeof *total, stream);
  scratch_free(t, &all_counts);
  return status;
}

static gh_status cuda_gather_values(gh_table *t, const gh_ck_key_info *info, const void *sorted_values,
                                    const uint32_t *ids, const uint8_t *found, const uint64_t *offsets, uint64_t n,
                                    uint64_t default_value, const void *keys, void *keys_out, void *values_out,
                                    void *stream) {
  unsigned key_bits = t->config.key_bits, value_bits = t->config.value_bits;
  void *args[] = {(void *)&info, (void *)&sorted_values, (void *)&ids, (void *)&found, (void *)&offsets, &n,
                  &default_value, (void *)&keys, &keys_out, &values_out, &key_bits, &value_bits};
  gh_status status = launch(t, (const void *)ck_gather_values_kernel, n, stream, args);
  return status == GH_OK ? cuda_sync(t, stream) : status;
}

extern "C" const gh_ck_backend gh__cuckoo_cuda_backend = {
    .kind = GH_MEMORY_DEVICE,
    .fill = cuda_fill,
    .copy = cuda_copy,
    .to_host = cuda_to_host,
    .sync = cuda_sync,
    .prepare = cuda_prepare,
    .place = cuda_place,
    .absorb = cuda_absorb,
    .dedupe = cuda_dedupe,
    .dedupe_stash = cuda_dedupe_stash,
    .clear_unflagged = cuda_clear_unflagged,
    .gather = cuda_gather,
    .find = cuda_find,
    .erase = cuda_erase,
    .export_pairs = cuda_export,
    .assign_ids = cuda_assign_ids,
    .keys_of_ids = cuda_keys_of_ids,
    .group_pairs = cuda_group_pairs,
    .count_values = cuda_count_values,
    .gather_values = cuda_gather_values,
};
