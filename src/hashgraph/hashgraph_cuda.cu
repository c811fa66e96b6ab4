/* hashgraph_cuda.cu - the HashGraph design on the GPU: the steps of hashgraph_bulk.h, one thread
 * per element (the counts and cursors with global atomics: Green's build V1), and Green's build V2:
 * the entries binned by vertex range (a bin = kVerticesPerBin consecutive vertices), then a block
 * per bin builds its part of the CSR with the bin's vertex counters in shared memory. */
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include "core/kernels.cuh"

extern "C" {
#include "core/toolkit.h"
#include "hashgraph/hashgraph_table.h"
}

static const int kBlockThreads = 256;

__global__ void hg_bulk_kernel(gh_hg_bulk a, uint64_t n) {
  for (uint64_t i = gh_thread_index(); i < n; i += gh_grid_threads()) gh_hg_bulk_one(&a, i);
}

static gh_status cuda_bulk(gh_table *t, const gh_hg_bulk *a, uint64_t n, void *stream) {
  gh_hg_bulk copy = *a;
  void *args[] = {&copy, &n};
  return gh__cuda_launch(t, (const void *)hg_bulk_kernel, n, kBlockThreads, args, stream);
}

/* ---- Build V2 ------------------------------------------------------------------------------------ */

/* Vertices per bin: their 32-bit counters fill 128 KB of a block's shared memory. */
static const uint64_t kVerticesPerBin = 32768;
/* Bins counted in shared memory by the binning kernels (64 KB): up to 2^29 vertices. */
static const uint64_t kMaxBins = 16384;
static const int kBinBlockThreads = 1024;

static __device__ __forceinline__ uint64_t entry_vertex(const gh_hg_bulk &a, uint64_t i) {
  return gh_hg_vertex(a.key_bits, a.seed, a.vertices, gh_hg_entry_key(&a, i));
}

/* Phase 1: entries per bin, counted per block in shared memory, added to bin_counts once a block. */
__global__ void hg_bin_count_kernel(gh_hg_bulk a, uint64_t n, uint64_t bins, unsigned long long *bin_counts) {
  extern __shared__ unsigned local[];
  for (uint64_t j = threadIdx.x; j < bins; j += blockDim.x) local[j] = 0;
  __syncthreads();
  for (uint64_t i = gh_thread_index(); i < n; i += gh_grid_threads())
    if (gh_hg_entry_kept(&a, i)) atomicAdd(&local[entry_vertex(a, i) / kVerticesPerBin], 1u);
  __syncthreads();
  for (uint64_t j = threadIdx.x; j < bins; j += blockDim.x)
    if (local[j]) atomicAdd(&bin_counts[j], (unsigned long long)local[j]);
}

/* Phase 2: each entry to the next place of its bin (bin_cursor starts at the bins' offsets). */
__global__ void hg_relabel_kernel(gh_hg_bulk a, uint64_t n, unsigned long long *bin_cursor, void *keys_out,
                                  void *values_out) {
  for (uint64_t i = gh_thread_index(); i < n; i += gh_grid_threads()) {
    if (!gh_hg_entry_kept(&a, i)) continue;
    const uint64_t key = gh_hg_entry_key(&a, i);
    const uint64_t at = atomicAdd(&bin_cursor[gh_hg_vertex(a.key_bits, a.seed, a.vertices, key) / kVerticesPerBin], 1ull);
    gh__write_word(keys_out, at, a.key_bits, key);
    if (a.value_bits) gh__write_word(values_out, at, a.value_bits, gh_hg_entry_value(&a, i));
  }
}

/* Phase 3: a block per bin: its vertices' counts in shared memory, summed there into offsets (the
 * bin's edges start at its offset among the bins, since bins are vertex ranges), written out, then
 * each entry placed at its vertex's offset plus a shared cursor. */
__global__ void __launch_bounds__(kBinBlockThreads) hg_bin_build_kernel(gh_hg_bulk a, const void *keys_in,
                                                                         const void *values_in,
                                                                         const unsigned long long *bin_offsets) {
  typedef cub::BlockScan<unsigned, kBinBlockThreads> scan_t;
  __shared__ typename scan_t::TempStorage scan_storage;
  extern __shared__ unsigned counts[];
  const uint64_t bin = blockIdx.x, first = bin * kVerticesPerBin;
  const unsigned vertices = (unsigned)min(kVerticesPerBin, a.vertices - first);
  const uint64_t begin = bin_offsets[bin], end = bin_offsets[bin + 1u];
  for (unsigned j = threadIdx.x; j < vertices; j += blockDim.x) counts[j] = 0;
  __syncthreads();
  for (uint64_t e = begin + threadIdx.x; e < end; e += blockDim.x)
    atomicAdd(&counts[gh_hg_vertex(a.key_bits, a.seed, a.vertices, gh__read_word(keys_in, e, a.key_bits)) - first], 1u);
  __syncthreads();
  /* Exclusive sum in place: each thread a run of consecutive counters. */
  const unsigned per = (vertices + kBinBlockThreads - 1u) / kBinBlockThreads, from = threadIdx.x * per;
  unsigned sum = 0;
  for (unsigned j = from; j < from + per && j < vertices; ++j) sum += counts[j];
  unsigned prefix;
  scan_t(scan_storage).ExclusiveSum(sum, prefix);
  for (unsigned j = from; j < from + per && j < vertices; ++j) {
    const unsigned count = counts[j];
    counts[j] = prefix;
    prefix += count;
  }
  __syncthreads();
  for (unsigned j = threadIdx.x; j < vertices; j += blockDim.x) a.offsets[first + j] = begin + counts[j];
  if (bin + 1u == gridDim.x && threadIdx.x == 0) a.offsets[a.vertices] = end;
  __syncthreads();
  for (uint64_t e = begin + threadIdx.x; e < end; e += blockDim.x) {
    const uint64_t key = gh__read_word(keys_in, e, a.key_bits);
    const uint64_t at = begin + atomicAdd(&counts[gh_hg_vertex(a.key_bits, a.seed, a.vertices, key) - first], 1u);
    gh__write_word(a.edge_keys, at, a.key_bits, key);
    if (a.value_bits) gh__write_word(a.edge_values, at, a.value_bits, gh__read_word(values_in, e, a.value_bits));
  }
}

/* A launch's (or a setting's) error as the table's status, naming what failed. */
static gh_status launch_status(gh_table *t, cudaError_t err, const char *what) {
  if (err == cudaSuccess) return GH_OK;
  return gh__fail(t, GH_ERR_CUDA, "%s failed: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

static gh_status cuda_build_binned(gh_table *t, const gh_hg_bulk *a, uint64_t n_entries, uint64_t kept, void *stream) {
  const uint64_t bins = (a->vertices + kVerticesPerBin - 1u) / kVerticesPerBin;
  if (bins > kMaxBins) return GH_ERR_UNSUPPORTED; /* (one relabelling pass only, for now) */
  const size_t kb = (kept * (a->key_bits / 8u) + 7u) / 8u * 8u, vb = kept * (a->value_bits / 8u);
  const size_t bin_bytes = (bins + 1u) * sizeof(unsigned long long);
  gh_scratch block = {NULL, 0, GH_MEMORY_DEVICE};
  gh_status status = gh__scratch_alloc(t, &block, 2u * bin_bytes + kb + vb);
  if (status != GH_OK) return status;
  unsigned long long *bin_offsets = (unsigned long long *)block.ptr, *bin_cursor = bin_offsets + bins + 1u;
  char *keys = (char *)(bin_cursor + bins + 1u), *values = keys + kb;
  const cudaStream_t s = (cudaStream_t)stream;
  const int binning_grid = gh_cuda_resident_grid(n_entries, (const void *)hg_relabel_kernel, kBlockThreads);
  const size_t count_bytes = bins * sizeof(unsigned), build_bytes = kVerticesPerBin * sizeof(unsigned);
  status = launch_status(t, cudaFuncSetAttribute(hg_bin_count_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 (int)count_bytes), "cudaFuncSetAttribute");
  if (status == GH_OK)
    status = launch_status(t, cudaFuncSetAttribute(hg_bin_build_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   (int)build_bytes), "cudaFuncSetAttribute");
  if (status == GH_OK) status = gh__fill(t, bin_offsets, 0, bin_bytes, stream);
  if (status == GH_OK) {
    hg_bin_count_kernel<<<binning_grid, kBlockThreads, count_bytes, s>>>(*a, n_entries, bins, bin_offsets);
    status = launch_status(t, cudaGetLastError(), "the bin count kernel");
  }
  if (status == GH_OK) status = gh__exclusive_sum_u64(t, (uint64_t *)bin_offsets, (uint64_t *)bin_offsets, bins + 1u, stream);
  if (status == GH_OK) status = gh__copy(t, bin_cursor, bin_offsets, bin_bytes, stream);
  if (status == GH_OK) {
    hg_relabel_kernel<<<binning_grid, kBlockThreads, 0, s>>>(*a, n_entries, bin_cursor, keys, values);
    status = launch_status(t, cudaGetLastError(), "the relabel kernel");
  }
  if (status == GH_OK) {
    hg_bin_build_kernel<<<(unsigned)bins, kBinBlockThreads, build_bytes, s>>>(*a, keys, values, bin_offsets);
    status = launch_status(t, cudaGetLastError(), "the bin build kernel");
  }
  gh__scratch_free(t, &block, stream);
  return status;
}

static const gh_hg_backend cuda_backend = {cuda_bulk, cuda_build_binned};

static gh_status cuda_init(gh_table *t) { return gh__hg_init(t, &cuda_backend); }

extern "C" const gh_table_ops gh__hashgraph_cuda_ops = GH_HG_OPS("hashgraph/cuda", cuda_init);
