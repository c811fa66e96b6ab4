/* warpdrive_cuda.cu - the warpdrive design on the GPU.
 *
 * Thin kernels: a grid-stride loop hands one key to each cooperative group of group_size lanes,
 * which runs the group operation of gpuhash/warpdrive.cuh (the same code user kernels call); lane 0
 * of the group writes the per-key output; per-thread counts are reduced per warp and added to
 * the table's counters once per warp, so no counter is a hot spot. Kernels are instantiated
 * once per supported (key, value) width pair (GH_WD_WIDTHS), with the group size a run-time
 * value: that keeps the build to a handful of kernels. */
#include <cuda_runtime.h>
#include <stdio.h>

#include "gpuhash/warpdrive.cuh"

#include "core/cuda_kernels.cuh"

extern "C" {
#include "warpdrive/warpdrive_table.h"
}

/* Launch shape: enough resident threads to hide DRAM latency on every multiprocessor. */
typedef struct gh_wd_launch_policy {
  int block_threads;
} gh_wd_launch_policy;
static const gh_wd_launch_policy kLaunch = {256};

/* Every (key_bits, value_bits) pair the design supports. */
#define GH_WD_WIDTHS(X) X(32, 0) X(32, 32) X(32, 64) X(64, 0) X(64, 32) X(64, 64)

static gh_wd_table *state(gh_table *t) { return (gh_wd_table *)t->impl; }


/* The geometry with the widths as compile-time constants, so the slot-layout branches fold. */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ gh_wd_geometry constant_geometry(gh_wd_geometry g) {
  g.key_bits = KB;
  g.value_bits = VB;
  g.slot_bytes = gh_wd_slot_bytes(KB, VB);
  return g;
}

template <unsigned BITS>
static __device__ __forceinline__ uint64_t read_word(const void *array, uint64_t i) {
  return BITS == 64 ? ((const uint64_t *)array)[i] : ((const uint32_t *)array)[i];
}

template <unsigned BITS>
static __device__ __forceinline__ void write_word(void *array, uint64_t i, uint64_t value) {
  if (BITS == 64) ((uint64_t *)array)[i] = value;
  else ((uint32_t *)array)[i] = (uint32_t)value;
}

/* The group this thread belongs to, and the grid-stride loop bounds in units of groups. */
typedef struct group_loop {
  gh_device_group group;
  uint64_t first, stride;
} group_loop;

static __device__ __forceinline__ group_loop group_loop_make(unsigned group_size) {
  group_loop l;
  l.group = gh_device_group_make(group_size);
  l.first = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / group_size;
  l.stride = ((uint64_t)gridDim.x * blockDim.x) / group_size;
  return l;
}

/* Adds a per-thread count to a counter: one atomic per warp. Every lane of the warp calls it. */
static __device__ __forceinline__ void add_per_warp(unsigned long long *counter, unsigned count) {
  const unsigned total = __reduce_add_sync(0xFFFFFFFFu, count);
  if ((threadIdx.x & 31u) == 0 && total) atomicAdd(counter, (unsigned long long)total);
}

/* Resident blocks per multiprocessor the insert kernel is compiled for (a register cap): inserts
 * wait on two dependent memory round trips, so more resident groups mean more throughput, up
 * to the point where capped registers spill. On an H100 at load 0.9 (n = 2^27, g = 4): no cap
 * (43 registers, 5 blocks) 7.62 G inserts/s, 6 blocks 8.40, 8 blocks (spills) 4.02. */
#ifndef GH_WD_INSERT_MIN_BLOCKS
#define GH_WD_INSERT_MIN_BLOCKS 6
#endif

template <unsigned KB, unsigned VB>
__global__ void __launch_bounds__(256, GH_WD_INSERT_MIN_BLOCKS) wd_insert_kernel(gh_wd_geometry geometry, void *slots, const void *keys, const void *values,
                                 uint64_t n, int policy, uint8_t *failed_out, gh_wd_counters *counters) {
  const gh_wd_geometry g = constant_geometry<KB, VB>(geometry);
  const group_loop l = group_loop_make(g.window_width);
  /* 32-bit per-thread counts: a thread sees at most n / (resident threads) keys. */
  unsigned inserted = 0, failed = 0, flags = 0;
  for (uint64_t i = l.first; i < n; i += l.stride) {
    const uint64_t key = read_word<KB>(keys, i);
    const uint64_t value = VB ? read_word<VB == 0 ? 32 : VB>(values, i) : 0;
    const gh_wd_outcome outcome = gh_wd_insert_group(&g, slots, l.group, key, value, policy);
    if (l.group.rank == 0) {
      inserted += outcome == GH_WD_INSERTED;
      failed += outcome == GH_WD_NOT_FITTED;
      flags |= outcome == GH_WD_NOT_FITTED ? GH_FLAG_PROBE_LIMIT : (outcome == GH_WD_UPDATED ? GH_FLAG_DUPLICATE : 0u);
      if (failed_out) failed_out[i] = outcome == GH_WD_NOT_FITTED;
    }
  }
  add_per_warp(&counters->size, inserted);
  add_per_warp(&counters->failed, failed);
  flags = __reduce_or_sync(0xFFFFFFFFu, flags);
  if ((threadIdx.x & 31u) == 0 && flags) atomicOr(&counters->status, flags);
}

template <unsigned KB, unsigned VB>
__global__ void wd_find_kernel(gh_wd_geometry geometry, void *slots, const void *keys, uint64_t n,
                               void *values_out, uint8_t *found_out, uint64_t default_value) {
  const gh_wd_geometry g = constant_geometry<KB, VB>(geometry);
  const group_loop l = group_loop_make(g.window_width);
  for (uint64_t i = l.first; i < n; i += l.stride) {
    uint64_t value = default_value;
    const int found = gh_wd_find_group(&g, slots, l.group, read_word<KB>(keys, i), &value);
    if (l.group.rank == 0) {
      if (VB && values_out) write_word<VB == 0 ? 32 : VB>(values_out, i, found ? value : default_value);
      if (found_out) found_out[i] = (uint8_t)found;
    }
  }
}

template <unsigned KB, unsigned VB>
__global__ void wd_erase_kernel(gh_wd_geometry geometry, void *slots, const void *keys, uint64_t n,
                                uint8_t *erased_out, gh_wd_counters *counters) {
  const gh_wd_geometry g = constant_geometry<KB, VB>(geometry);
  const group_loop l = group_loop_make(g.window_width);
  unsigned erased = 0;
  for (uint64_t i = l.first; i < n; i += l.stride) {
    const int removed = gh_wd_erase_group(&g, slots, l.group, read_word<KB>(keys, i));
    if (l.group.rank == 0) {
      erased += (unsigned)removed;
      if (erased_out) erased_out[i] = (uint8_t)removed;
    }
  }
  add_per_warp(&counters->erased, erased);
}

/* Export: each thread looks at slots; a warp reserves output positions with one atomic. */
template <unsigned KB, unsigned VB>
__global__ void wd_export_kernel(gh_wd_geometry geometry, void *slots, void *keys_out, void *values_out,
                                 gh_wd_counters *counters) {
  const gh_wd_geometry g = constant_geometry<KB, VB>(geometry);
  const uint64_t main_slots = g.window_count * g.window_width;
  const uint64_t total = main_slots + GH_WD_SIDE_SLOTS;
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  const uint64_t rounded = (total + 31u) / 32u * 32u; /* whole warps keep going together */
  const unsigned lane = threadIdx.x & 31u;
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rounded; i += stride) {
    int keep = 0;
    uint64_t key = 0, value = 0;
    if (i < total) {
      const gh_wd_bits bits = gh_wd_load_bits(&g, gh_wd_slot_at(&g, slots, i));
      key = gh_wd_bits_key(&g, bits);
      value = gh_wd_bits_value(&g, bits);
      if (i < main_slots) {
        keep = !gh_wd_is_sentinel(key, KB);
      } else {
        keep = key == GH_WD_SIDE_PRESENT;
        key = i == main_slots ? gh_wd_empty_key(KB) : gh_wd_tombstone_key(KB);
      }
    }
    const unsigned keepers = __ballot_sync(0xFFFFFFFFu, keep);
    unsigned long long base = 0;
    if (lane == 0 && keepers) base = atomicAdd(&counters->cursor, (unsigned long long)__popc(keepers));
    base = __shfl_sync(0xFFFFFFFFu, base, 0);
    if (keep) {
      const uint64_t at = base + __popc(keepers & ((1u << lane) - 1u));
      write_word<KB>(keys_out, at, key);
      if (VB && values_out) write_word<VB == 0 ? 32 : VB>(values_out, at, value);
    }
  }
}

/* ---- Launching -------------------------------------------------------------------------------- */

/* The kernels of one (key, value) width pair. */
typedef struct wd_kernels {
  const void *insert, *find, *erase, *export_all;
} wd_kernels;

static wd_kernels kernels_for(const gh_wd_geometry &g) {
  wd_kernels k = {NULL, NULL, NULL, NULL};
#define GH_WD_KERNELS_CASE(kb, vb)                                                            \
  if (g.key_bits == kb && g.value_bits == vb) {                                               \
    k.insert = (const void *)wd_insert_kernel<kb, vb>;                                        \
    k.find = (const void *)wd_find_kernel<kb, vb>;                                            \
    k.erase = (const void *)wd_erase_kernel<kb, vb>;                                          \
    k.export_all = (const void *)wd_export_kernel<kb, vb>;                                    \
  }
  GH_WD_WIDTHS(GH_WD_KERNELS_CASE)
#undef GH_WD_KERNELS_CASE
  return k;
}

/* Launches one kernel over `threads` threads and reports a launch error. */
static gh_status run_kernel(gh_table *t, const void *kernel, uint64_t threads, void *stream, void **args) {
  if (kernel == NULL) return gh__fail(t, GH_ERR_INTERNAL, "no kernel for key_bits %u, value_bits %u",
                                      t->config.key_bits, t->config.value_bits);
  GH_CUDA_TRY(t, cudaLaunchKernel(kernel, dim3(gh_cuda_resident_grid(threads, kernel, kLaunch.block_threads)), dim3(kLaunch.block_threads), args, 0,
                                  (cudaStream_t)stream), "kernel launch");
  return GH_OK;
}

/* Reads the counters back after the stream's work (this is where bulk calls synchronise). */
static gh_status read_counters(gh_table *t, gh_wd_counters *out, void *stream) {
  GH_CUDA_TRY(t, cudaMemcpyAsync(out, state(t)->counters, sizeof *out, cudaMemcpyDeviceToHost, (cudaStream_t)stream),
              "reading the table counters");
  GH_CUDA_TRY(t, cudaStreamSynchronize((cudaStream_t)stream), "the operation (cudaStreamSynchronize)");
  return GH_OK;
}

static gh_status reset_call_counters(gh_table *t, void *stream) {
  gh_wd_counters *c = state(t)->counters;
  GH_CUDA_TRY(t, cudaMemsetAsync(&c->failed, 0, 3 * sizeof(unsigned long long), (cudaStream_t)stream),
              "resetting the call counters");
  return GH_OK;
}

/* ---- Ops -------------------------------------------------------------------------------------- */

static gh_status cuda_clear(gh_table *t, void *stream) {
  gh_wd_table *w = state(t);
  GH_CUDA_TRY(t, cudaMemsetAsync(w->slots, 0xFF, w->slots_bytes, (cudaStream_t)stream), "clearing the slots");
  GH_CUDA_TRY(t, cudaMemsetAsync(&w->counters->size, 0, sizeof w->counters->size, (cudaStream_t)stream),
              "clearing the size");
  GH_CUDA_TRY(t, cudaStreamSynchronize((cudaStream_t)stream), "clear (cudaStreamSynchronize)");
  return GH_OK;
}

static gh_status cuda_init(gh_table *t) {
  gh_status status = gh__wd_allocate(t, GH_MEMORY_DEVICE);
  if (status != GH_OK) return status;
  const cudaError_t err = cudaMemset(state(t)->counters, 0, sizeof(gh_wd_counters));
  if (err != cudaSuccess) {
    gh__wd_release(t);
    return gh__fail(t, GH_ERR_CUDA, "cudaMemset failed: %s", cudaGetErrorName(err));
  }
  status = cuda_clear(t, NULL);
  if (status != GH_OK) gh__wd_release(t);
  return status;
}

static void cuda_release(gh_table *t) {
  cudaDeviceSynchronize();
  gh__wd_release(t);
}

static gh_status cuda_insert(gh_table *t, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                             uint8_t *failed_out, uint64_t *failed, void *stream) {
  gh_wd_table *w = state(t);
  gh_wd_geometry g = w->geometry;
  int policy_value = (int)policy;
  void *args[] = {&g, &w->slots, (void *)&keys, (void *)&values, &n, &policy_value, &failed_out, &w->counters};
  gh_wd_counters after;
  gh_status status = reset_call_counters(t, stream);
  if (status == GH_OK) status = run_kernel(t, kernels_for(g).insert, n * g.window_width, stream, args);
  if (status == GH_OK) status = read_counters(t, &after, stream);
  if (status == GH_OK) *failed = after.failed;
  return status;
}

static gh_status cuda_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                           uint64_t default_value, void *stream) {
  gh_wd_table *w = state(t);
  gh_wd_geometry g = w->geometry;
  void *args[] = {&g, &w->slots, (void *)&keys, &n, &values_out, &found_out, &default_value};
  gh_status status = run_kernel(t, kernels_for(g).find, n * g.window_width, stream, args);
  if (status != GH_OK) return status;
  GH_CUDA_TRY(t, cudaStreamSynchronize((cudaStream_t)stream), "find (cudaStreamSynchronize)");
  return GH_OK;
}

static gh_status cuda_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out, uint64_t *erased,
                            void *stream) {
  gh_wd_table *w = state(t);
  gh_wd_geometry g = w->geometry;
  void *args[] = {&g, &w->slots, (void *)&keys, &n, &erased_out, &w->counters};
  gh_wd_counters after;
  gh_status status = reset_call_counters(t, stream);
  if (status == GH_OK) status = run_kernel(t, kernels_for(g).erase, n * g.window_width, stream, args);
  if (status == GH_OK) status = read_counters(t, &after, stream);
  if (status != GH_OK) return status;
  *erased = after.erased;
  /* The size counter is decremented here, once, rather than per warp in the kernel. */
  const unsigned long long size = after.size - after.erased;
  GH_CUDA_TRY(t, cudaMemcpyAsync(&w->counters->size, &size, sizeof size, cudaMemcpyHostToDevice, (cudaStream_t)stream),
              "updating the size");
  GH_CUDA_TRY(t, cudaStreamSynchronize((cudaStream_t)stream), "erase (cudaStreamSynchronize)");
  return GH_OK;
}

static gh_status cuda_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_wd_table *w = state(t);
  gh_wd_geometry g = w->geometry;
  void *args[] = {&g, &w->slots, &keys_out, &values_out, &w->counters};
  gh_wd_counters after;
  const uint64_t slots = g.window_count * g.window_width + GH_WD_SIDE_SLOTS;
  gh_status status = reset_call_counters(t, stream);
  if (status == GH_OK) status = run_kernel(t, kernels_for(g).export_all, slots, stream, args);
  if (status == GH_OK) status = read_counters(t, &after, stream);
  if (status == GH_OK) *count = after.cursor;
  return status;
}

static gh_status cuda_size(gh_table *t, uint64_t *size) {
  unsigned long long value = 0;
  GH_CUDA_TRY(t, cudaMemcpy(&value, &state(t)->counters->size, sizeof value, cudaMemcpyDeviceToHost), "reading the size");
  *size = value;
  return GH_OK;
}

static gh_status cuda_validate(gh_table *t) {
  gh_wd_table *w = state(t);
  gh_wd_counters counters;
  void *snapshot = gh__alloc(t, w->slots_bytes, GH_MEMORY_HOST);
  if (snapshot == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "validate: no host memory for a %zu-byte copy of the table", w->slots_bytes);
  cudaError_t err = cudaMemcpy(snapshot, w->slots, w->slots_bytes, cudaMemcpyDeviceToHost);
  if (err == cudaSuccess) err = cudaMemcpy(&counters, w->counters, sizeof counters, cudaMemcpyDeviceToHost);
  gh_status status = err == cudaSuccess
                         ? gh__wd_validate_snapshot(t, snapshot, counters.size)
                         : gh__fail(t, GH_ERR_CUDA, "validate: copying the table failed: %s", cudaGetErrorName(err));
  gh__free(t, snapshot, w->slots_bytes, GH_MEMORY_HOST);
  return status;
}

static gh_status cuda_device_view(gh_table *t, gh_device_view *view) {
  gh_wd_table *w = state(t);
  view->slots = w->slots;
  view->size = &w->counters->size;
  view->status_word = &w->counters->status;
  view->design = GH_WARPDRIVE;
  view->layout[0] = w->geometry.window_count;
  view->layout[1] = w->geometry.max_probe_windows;
  view->layout[2] = w->geometry.window_width;
  view->seed = w->geometry.seed;
  view->key_bits = w->geometry.key_bits;
  view->value_bits = w->geometry.value_bits;
  view->slot_bytes = w->geometry.slot_bytes;
  return GH_OK;
}

static gh_status cuda_take_flags(gh_table *t, unsigned *flags) {
  unsigned *word = &state(t)->counters->status;
  const unsigned zero = 0;
  GH_CUDA_TRY(t, cudaDeviceSynchronize(), "waiting for kernels before reading the status word");
  GH_CUDA_TRY(t, cudaMemcpy(flags, word, sizeof *flags, cudaMemcpyDeviceToHost), "reading the status word");
  GH_CUDA_TRY(t, cudaMemcpy(word, &zero, sizeof zero, cudaMemcpyHostToDevice), "clearing the status word");
  return GH_OK;
}

extern "C" const gh_table_ops gh__warpdrive_cuda_ops = {
    .name = "warpdrive/cuda",
    .init = cuda_init,
    .release = cuda_release,
    .insert = cuda_insert,
    .find = cuda_find,
    .erase = cuda_erase,
    .count = NULL,
    .find_all = NULL,
    .export_all = cuda_export,
    .clear = cuda_clear,
    .size = cuda_size,
    .validate = cuda_validate,
    .keys_of_ids = NULL,
    .stats = NULL,
    .device_view = cuda_device_view,
    .take_flags = cuda_take_flags,
};
