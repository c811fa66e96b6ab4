/* hashgraph_cuda.cu - the HashGraph design on the GPU: the steps of hashgraph_bulk.h, one thread
 * per element (the counts and cursors with global atomics: Green's build V1; the multi-value
 * probes hand long vertices to the warp), and Green's build V2: the entries binned by vertex range
 * (a bin = gh_config.bin_vertices consecutive vertices), then a block per bin builds its part of
 * the CSR with the bin's vertex counters in shared memory. */
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

/* Vertices of more edges than this are scanned by the whole warp (gh_count, gh_find_all): a thread
 * alone would take one dependent step an edge, a key of 1024 values 1024 of them, with its warp's
 * reads and writes 32 lines apart. At load factors up to 4, unique keys' vertices rarely reach it. */
static const uint64_t kWarpScanEdges = 8;

/* PROBE_COUNT / PROBE_FILL of one query by the warp, 32 edges a read; a fill writes each read's
 * matches together, in edge order (as a thread alone would). */
static __device__ void warp_scan(const gh_hg_bulk &a, uint64_t query, uint64_t key, uint64_t begin, uint64_t end) {
  const gh_slot_format f = gh_hg_format(&a);
  const unsigned lane = threadIdx.x % 32u, lanes_below = (1u << lane) - 1u;
  const uint64_t out = a.kind == GH_HG_PROBE_FILL ? a.out_offsets[query] : 0;
  uint64_t matches = 0;
  for (uint64_t from = begin; from < end; from += 32u) {
    const uint64_t e = from + lane;
    const gh_slot_bits edge = e < end ? gh_hg_edge(f, a.edges, e) : gh_slot_bits{0, 0};
    const bool hit = e < end && gh_slot_bits_key(f, edge) == key;
    const unsigned hits = __ballot_sync(0xFFFFFFFFu, hit);
    if (hit && a.kind == GH_HG_PROBE_FILL && a.out_values)
      gh__write_word(a.out_values, out + matches + __popc(hits & lanes_below), a.value_bits, gh_slot_bits_value(f, edge));
    else if (hit && a.kind == GH_HG_PROBE_COUNT && a.stash && matches == 0 && (hits & lanes_below) == 0)
      gh__write_word(a.stash, query, a.value_bits, gh_slot_bits_value(f, edge)); /* the first match */
    matches += __popc(hits);
  }
  if (a.kind == GH_HG_PROBE_COUNT && lane == 0) a.out_counts[query] = matches;
}

/* PROBE_COUNT / PROBE_FILL: a thread per query, but queries of long vertices handed to the warp. A
 * fill with the count pass's stash probes only the queries of more than one value. */
__global__ void hg_probe_kernel(gh_hg_bulk a, uint64_t n) {
  const unsigned lane = threadIdx.x % 32u;
  for (uint64_t warp_first = gh_thread_index() - lane; warp_first < n; warp_first += gh_grid_threads()) {
    const uint64_t i = warp_first + lane;
    uint64_t key = 0, begin = 0, end = 0;
    if (i < n && !(a.kind == GH_HG_PROBE_FILL && a.stash && gh_hg_fill_from_stash(&a, i))) {
      key = gh__read_word(a.keys, i, a.key_bits);
      const uint64_t v = gh_hg_vertex(a.key_bits, a.seed, a.vertices, key);
      begin = a.offsets[v];
      end = a.offsets[v + 1u];
      if (end - begin <= kWarpScanEdges) gh_hg_lookup(&a, i, key, begin, end);
    }
    for (unsigned long_ones = __ballot_sync(0xFFFFFFFFu, end - begin > kWarpScanEdges); long_ones;
         long_ones &= long_ones - 1u) {
      const int owner = __ffs(long_ones) - 1;
      warp_scan(a, warp_first + owner, __shfl_sync(0xFFFFFFFFu, key, owner), __shfl_sync(0xFFFFFFFFu, begin, owner),
                __shfl_sync(0xFFFFFFFFu, end, owner));
    }
  }
}

static gh_status cuda_bulk(gh_table *t, const gh_hg_bulk *a, uint64_t n, void *stream) {
  gh_hg_bulk copy = *a;
  void *args[] = {&copy, &n};
  const int probe = a->kind == GH_HG_PROBE_COUNT || a->kind == GH_HG_PROBE_FILL;
  return gh__cuda_launch(t, probe ? (const void *)hg_probe_kernel : (const void *)hg_bulk_kernel, n, kBlockThreads,
                         args, stream);
}

/* ---- Build V2 ------------------------------------------------------------------------------------ */

/* A bin is 1 << bin_shift vertices (gh_config.bin_vertices, or default_bin_vertices below; a bin
 * block keeps a 32-bit counter per vertex in shared memory). Bins counted in shared memory by the
 * binning kernels (128 KB): with the largest bins up to 2^30 vertices, and so (at most 4 entries a
 * vertex) at most 2^32 entries, whose places within a bin the relabelling keeps in 32 bits. */
static const uint64_t kMaxBins = 32768;
static const int kBinBlockThreads = 1024, kBinningThreads = 256;
/* Entries a thread loads before it works on them: loads in flight together hide their latency. */
static const int kUnroll = 4;

/* Phase 1: entries per bin, counted per block in shared memory, added to bin_counts once a block. */
__global__ void hg_bin_count_kernel(gh_hg_bulk a, uint64_t n, unsigned bin_shift, uint64_t bins,
                                    unsigned long long *bin_counts) {
  extern __shared__ unsigned local[];
  for (uint64_t j = threadIdx.x; j < bins; j += blockDim.x) local[j] = 0;
  __syncthreads();
  for (uint64_t base = gh_thread_index(); base < n; base += gh_grid_threads() * kUnroll) {
    uint64_t key[kUnroll];
    bool kept[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const uint64_t i = base + (uint64_t)u * gh_grid_threads();
      kept[u] = i < n && gh_hg_entry_kept(&a, i);
      key[u] = kept[u] ? gh_hg_entry_key(&a, i) : 0;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (kept[u]) atomicAdd(&local[gh_hg_vertex(a.key_bits, a.seed, a.vertices, key[u]) >> bin_shift], 1u);
  }
  __syncthreads();
  for (uint64_t j = threadIdx.x; j < bins; j += blockDim.x)
    if (local[j]) atomicAdd(&bin_counts[j], (unsigned long long)local[j]);
}

/* A relabelling tile: 8192 entries, each one's place among its bin's in the tile in kRankBits
 * (with the bin's 15 bits: 28 of 32). Tiles of 32768 (1024 threads of 32) make a third of the
 * global atomics but leave one block an SM: the relabelling 30 % slower on an H100. */
static const int kRelabelThreads = 512, kRelabelPerThread = 16;
static const unsigned kRankBits = 13;

/* Phase 2, by tiles: a block counts its tile's entries per bin in shared memory (each entry's rank
 * among its bin's in the tile from the same atomic), reserves each bin's run with one global
 * atomic, then writes every entry at its bin's run plus its rank. One global atomic per entry would
 * bound the relabelling at the device's atomic rate; per-block places reserved ahead (an exclusive
 * sum of per-block counts) leave each block a write front in every bin, more partly written
 * sectors than L2 holds (measured: twice the time). */
__global__ void __launch_bounds__(kRelabelThreads) hg_relabel_kernel(gh_hg_bulk a, uint64_t n, unsigned bin_shift,
                                                                     uint64_t bins,
                                                                     unsigned long long *bin_cursor,
                                                                     const unsigned long long *bin_offsets,
                                                                     void *binned) {
  extern __shared__ unsigned tile_runs[];
  const gh_slot_format f = gh_hg_format(&a);
  const uint64_t tile = (uint64_t)kRelabelThreads * kRelabelPerThread;
  for (uint64_t j = threadIdx.x; j < bins; j += blockDim.x) tile_runs[j] = 0;
  __syncthreads();
  for (uint64_t start = blockIdx.x * tile; start < n; start += gridDim.x * tile) {
    unsigned placed[kRelabelPerThread]; /* bin << kRankBits | rank; ~0u: none */
#pragma unroll
    for (int k = 0; k < kRelabelPerThread; ++k) {
      const uint64_t i = start + (uint64_t)k * kRelabelThreads + threadIdx.x;
      placed[k] = ~0u;
      if (i < n && gh_hg_entry_kept(&a, i)) {
        const unsigned bin = (unsigned)(gh_hg_vertex(a.key_bits, a.seed, a.vertices, gh_hg_entry_key(&a, i)) >> bin_shift);
        placed[k] = bin << kRankBits | atomicAdd(&tile_runs[bin], 1u);
      }
    }
    __syncthreads();
    for (uint64_t j = threadIdx.x; j < bins; j += blockDim.x)
      if (tile_runs[j]) tile_runs[j] = (unsigned)(atomicAdd(&bin_cursor[j], (unsigned long long)tile_runs[j]) - bin_offsets[j]);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kRelabelPerThread; ++k) {
      if (placed[k] == ~0u) continue;
      const uint64_t i = start + (uint64_t)k * kRelabelThreads + threadIdx.x;
      const unsigned bin = placed[k] >> kRankBits;
      const uint64_t at = bin_offsets[bin] + tile_runs[bin] + (placed[k] & ((1u << kRankBits) - 1u));
      gh_hg_put_edge(f, binned, at, gh_hg_entry_key(&a, i), gh_hg_entry_value(&a, i));
    }
    __syncthreads();
    for (uint64_t j = threadIdx.x; j < bins; j += blockDim.x) tile_runs[j] = 0;
    __syncthreads();
  }
}

/* The exclusive sum of a bin's vertex counters in place, by the block's 32 warps: warp w owns the
 * w-th run of consecutive counters and reads them 32 at a time, lane i the i-th (a lane per bank;
 * a thread per run of counters would have the 32 lanes of a warp wait on one bank). */
static __device__ void bin_exclusive_sum(unsigned *counts, unsigned vertices) {
  __shared__ unsigned warp_base[kBinBlockThreads / 32];
  const unsigned lane = threadIdx.x % 32u, warp = threadIdx.x / 32u, warps = kBinBlockThreads / 32;
  const unsigned run = (vertices + warps - 1u) / warps, from = warp * run, to = min(from + run, vertices);
  unsigned total = 0;
  for (unsigned j = from + lane; j < to; j += 32u) total += counts[j];
  for (unsigned lanes = 16; lanes > 0; lanes /= 2) total += __shfl_xor_sync(0xFFFFFFFFu, total, lanes);
  if (lane == 0) warp_base[warp] = total;
  __syncthreads();
  if (warp == 0) {
    const unsigned mine = warp_base[lane];
    unsigned inclusive = mine;
    for (unsigned lanes = 1; lanes < 32u; lanes *= 2) {
      const unsigned below = __shfl_up_sync(0xFFFFFFFFu, inclusive, lanes);
      if (lane >= lanes) inclusive += below;
    }
    warp_base[lane] = inclusive - mine;
  }
  __syncthreads();
  unsigned carried = warp_base[warp];
  for (unsigned base = from; base < to; base += 32u) {
    const unsigned j = base + lane, count = j < to ? counts[j] : 0u;
    unsigned inclusive = count;
    for (unsigned lanes = 1; lanes < 32u; lanes *= 2) {
      const unsigned below = __shfl_up_sync(0xFFFFFFFFu, inclusive, lanes);
      if (lane >= lanes) inclusive += below;
    }
    if (j < to) counts[j] = carried + inclusive - count;
    carried += __shfl_sync(0xFFFFFFFFu, inclusive, 31);
  }
  __syncthreads();
}

/* Phase 3: a block per bin: its vertices' counts in shared memory, summed there into offsets (the
 * bin's edges start where its entries do, since bins are vertex ranges), written out, then each
 * entry placed at its vertex's offset plus a shared cursor. */
__global__ void __launch_bounds__(kBinBlockThreads) hg_bin_build_kernel(gh_hg_bulk a, unsigned bin_shift,
                                                                         const void *binned,
                                                                         const unsigned long long *bin_offsets) {
  extern __shared__ unsigned counts[];
  const gh_slot_format f = gh_hg_format(&a);
  const uint64_t bin = blockIdx.x, first = bin << bin_shift;
  const unsigned vertices = (unsigned)min((uint64_t)1 << bin_shift, a.vertices - first);
  const uint64_t begin = bin_offsets[bin], end = bin_offsets[bin + 1u];
  for (unsigned j = threadIdx.x; j < vertices; j += blockDim.x) counts[j] = 0;
  __syncthreads();
  for (uint64_t base = begin + threadIdx.x; base < end; base += (uint64_t)blockDim.x * kUnroll) {
    uint64_t key[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const uint64_t e = base + (uint64_t)u * blockDim.x;
      key[u] = e < end ? gh_hg_edge_key(f, binned, e) : 0;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (base + (uint64_t)u * blockDim.x < end)
        atomicAdd(&counts[gh_hg_vertex(a.key_bits, a.seed, a.vertices, key[u]) - first], 1u);
  }
  __syncthreads();
  bin_exclusive_sum(counts, vertices);
  for (unsigned j = threadIdx.x; j < vertices; j += blockDim.x) a.offsets[first + j] = begin + counts[j];
  if (bin + 1u == gridDim.x && threadIdx.x == 0) a.offsets[a.vertices] = end;
  __syncthreads();
  for (uint64_t base = begin + threadIdx.x; base < end; base += (uint64_t)blockDim.x * kUnroll) {
    gh_slot_bits edge[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const uint64_t e = base + (uint64_t)u * blockDim.x;
      if (e < end) edge[u] = gh_hg_edge(f, binned, e);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + (uint64_t)u * blockDim.x >= end) continue;
      const uint64_t v = gh_hg_vertex(a.key_bits, a.seed, a.vertices, gh_slot_bits_key(f, edge[u]));
      gh_slot_write(f, (char *)a.edges + (begin + atomicAdd(&counts[v - first], 1u)) * f.slot_bytes, edge[u]);
    }
  }
}

/* A launch's (or a setting's) error as the table's status, naming what failed. */
static gh_status launch_status(gh_table *t, cudaError_t err, const char *what) {
  if (err == cudaSuccess) return GH_OK;
  return gh__fail(t, GH_ERR_CUDA, "%s failed: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

/* Entries a bin of the default size holds: the best of bins of 1024 .. 32768 vertices at load
 * factors 0.25, 1 and 4 held 4096 .. 8192 of them (an H100 at 2^27 entries; the fixed 16384
 * vertices were 1.6x slower at load 4). */
static const uint64_t kBinEntries = 8192;

/* gh_config.bin_vertices = 0: the smallest bins of at least kBinEntries entries (at the build's
 * entries per vertex), larger while there would be more bins than the binning kernels count. */
static unsigned default_bin_vertices(uint64_t vertices, uint64_t kept) {
  uint64_t bin_vertices = GH_HG_MIN_BIN_VERTICES;
  while (bin_vertices < GH_HG_MAX_BIN_VERTICES && bin_vertices * kept < kBinEntries * vertices) bin_vertices *= 2u;
  while (bin_vertices < GH_HG_MAX_BIN_VERTICES && (vertices + bin_vertices - 1u) / bin_vertices > kMaxBins)
    bin_vertices *= 2u;
  return (unsigned)bin_vertices;
}

static gh_status cuda_build_binned(gh_table *t, const gh_hg_bulk *a, uint64_t n_entries, uint64_t kept, void *stream) {
  const unsigned bin_vertices = t->config.bin_vertices ? t->config.bin_vertices : default_bin_vertices(a->vertices, kept);
  const unsigned bin_shift = 31u - (unsigned)__builtin_clz(bin_vertices);
  const uint64_t bins = (a->vertices + bin_vertices - 1u) / bin_vertices;
  if (bins > kMaxBins) return GH_ERR_UNSUPPORTED; /* (one relabelling pass only, for now) */
  const size_t bin_bytes = (bins + 1u) * sizeof(unsigned long long);
  gh_scratch block = {NULL, 0, GH_MEMORY_DEVICE};
  gh_status status = gh__scratch_alloc(t, &block, 2u * bin_bytes + kept * gh_hg_format(a).slot_bytes);
  if (status != GH_OK) return status;
  unsigned long long *bin_offsets = (unsigned long long *)block.ptr, *bin_cursor = bin_offsets + bins + 1u;
  void *binned = bin_cursor + bins + 1u;
  const cudaStream_t s = (cudaStream_t)stream;
  const size_t count_bytes = bins * sizeof(unsigned), build_bytes = bin_vertices * sizeof(unsigned);
  const uint64_t tiles = (n_entries + kRelabelThreads * kRelabelPerThread - 1u) / (kRelabelThreads * kRelabelPerThread);
  const unsigned count_grid = (unsigned)gh_cuda_resident_grid(n_entries, (const void *)hg_bin_count_kernel, kBinningThreads);
  const unsigned relabel_grid =
      (unsigned)gh_cuda_resident_grid(tiles * kRelabelThreads, (const void *)hg_relabel_kernel, kRelabelThreads);
  status = launch_status(t, cudaFuncSetAttribute(hg_bin_count_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 (int)count_bytes), "cudaFuncSetAttribute");
  if (status == GH_OK)
    status = launch_status(t, cudaFuncSetAttribute(hg_relabel_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   (int)count_bytes), "cudaFuncSetAttribute");
  if (status == GH_OK)
    status = launch_status(t, cudaFuncSetAttribute(hg_bin_build_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   (int)build_bytes), "cudaFuncSetAttribute");
  if (status == GH_OK) status = gh__fill(t, bin_offsets, 0, bin_bytes, stream);
  if (status == GH_OK) {
    hg_bin_count_kernel<<<count_grid, kBinningThreads, count_bytes, s>>>(*a, n_entries, bin_shift, bins, bin_offsets);
    status = launch_status(t, cudaGetLastError(), "the bin count kernel");
  }
  if (status == GH_OK) status = gh__exclusive_sum_u64(t, (uint64_t *)bin_offsets, (uint64_t *)bin_offsets, bins + 1u, stream);
  if (status == GH_OK) status = gh__copy(t, bin_cursor, bin_offsets, bin_bytes, stream);
  if (status == GH_OK) {
    hg_relabel_kernel<<<relabel_grid, kRelabelThreads, count_bytes, s>>>(*a, n_entries, bin_shift, bins, bin_cursor,
                                                                          bin_offsets, binned);
    status = launch_status(t, cudaGetLastError(), "the relabel kernel");
  }
  if (status == GH_OK) {
    hg_bin_build_kernel<<<(unsigned)bins, kBinBlockThreads, build_bytes, s>>>(*a, bin_shift, binned, bin_offsets);
    status = launch_status(t, cudaGetLastError(), "the bin build kernel");
  }
  gh__scratch_free(t, &block, stream);
  return status;
}

static const gh_hg_backend cuda_backend = {cuda_bulk, cuda_build_binned};

static gh_status cuda_init(gh_table *t) { return gh__hg_init(t, &cuda_backend); }

extern "C" const gh_table_ops gh__hashgraph_cuda_ops = GH_HG_OPS("hashgraph/cuda", cuda_init);
