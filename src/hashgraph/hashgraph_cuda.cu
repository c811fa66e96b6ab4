/* hashgraph_cuda.cu - the HashGraph design on the GPU: the steps of hashgraph_bulk.h, one thread
 * per element (the counts and cursors with global atomics: Green's build V1; the multi-value
 * probes hand long vertices to the warp), and Green's build V2: the entries binned by vertex range
 * (a bin = gh_config.bin_vertices consecutive vertices) by partition passes, then a block per bin
 * builds its part of the CSR with the bin's vertex counters in shared memory. */
#include <cuda_runtime.h>

#include "core/kernels.cuh"

extern "C" {
#include "core/toolkit.h"
#include "hashgraph/hashgraph_table.h"
}

static const int kBlockThreads = 256;

__global__ void hg_bulk_kernel(gh_hg_bulk a, uint64_t n) {
  for (uint64_t i = gh_thread_index(); i < n; i += gh_grid_threads()) (void)gh_hg_bulk_one(&a, i);
}

/* Vertices of more edges than this are scanned by the whole warp (gh_count, gh_find_all): a thread
 * alone would take one dependent step an edge, a key of 1024 values 1024 of them, with its warp's
 * reads and writes 32 lines apart. At load factors up to 4, unique keys' vertices rarely reach it. */
static const uint64_t kWarpScanEdges = 8;

/* PROBE_COUNT / PROBE_FILL of one query by the warp, 32 edges a read; a fill writes each read's
 * matches together, in edge order (as a thread alone would). Returns the matches (every lane). */
static __device__ uint64_t warp_scan(const gh_hg_bulk &a, uint64_t query, uint64_t key, uint64_t begin, uint64_t end) {
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
  if (a.kind == GH_HG_PROBE_COUNT && a.out_counts && lane == 0) a.out_counts[query] = matches;
  return matches;
}

/* PROBE_COUNT / PROBE_FILL: a thread per query, but queries of long vertices handed to the warp. A
 * fill with the count pass's stash probes only the queries of more than one value. A count's total
 * (counters) is kept per thread and added once a warp at the end: an atomic a query on one word
 * would serialise the pass. */
__global__ void hg_probe_kernel(gh_hg_bulk a, uint64_t n) {
  const unsigned lane = threadIdx.x % 32u;
  uint64_t counted = 0;
  for (uint64_t warp_first = gh_thread_index() - lane; warp_first < n; warp_first += gh_grid_threads()) {
    const uint64_t i = warp_first + lane;
    uint64_t key = 0, begin = 0, end = 0;
    if (i < n && !(a.kind == GH_HG_PROBE_FILL && a.stash && gh_hg_fill_from_stash(&a, i))) {
      key = gh__read_word(a.keys, i, a.key_bits);
      const uint64_t v = gh_hg_vertex(a.key_bits, a.seed, a.vertices, key);
      begin = a.offsets[v];
      end = a.offsets[v + 1u];
      if (end - begin <= kWarpScanEdges) counted += gh_hg_lookup(&a, i, key, begin, end);
    }
    for (unsigned long_ones = __ballot_sync(0xFFFFFFFFu, end - begin > kWarpScanEdges); long_ones;
         long_ones &= long_ones - 1u) {
      const int owner = __ffs(long_ones) - 1;
      const uint64_t matches = warp_scan(a, warp_first + owner, __shfl_sync(0xFFFFFFFFu, key, owner),
                                         __shfl_sync(0xFFFFFFFFu, begin, owner), __shfl_sync(0xFFFFFFFFu, end, owner));
      if (lane == 0) counted += matches;
    }
  }
  if (a.kind != GH_HG_PROBE_COUNT || a.counters == NULL) return;
  for (unsigned lanes = 16; lanes > 0; lanes /= 2) counted += __shfl_xor_sync(0xFFFFFFFFu, counted, lanes);
  if (lane == 0 && counted) atomicAdd((unsigned long long *)a.counters, (unsigned long long)counted);
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
 * block keeps a 32-bit counter per vertex in shared memory). The bin count kernel counts up to
 * kMaxBins bins in shared memory (128 KB). */
static const uint64_t kMaxBins = 32768;
static const int kBinBlockThreads = 512, kBinningThreads = 1024;
/* Entries a thread loads before it works on them: loads in flight together hide their latency. */
static const int kUnroll = 4;

/* Phase 1: entries per bin, counted per block in shared memory, added to bin_counts once a block
 * (blocks of 1024 threads: with 32768 bins a block takes 128 KB, one block an SM; 256 threads there
 * took 1.19 ms at 2^27 entries on an H200, 2.5x the time of a pass over the pairs). */
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


/* ---- Binning: the entries moved into bin order by one or two partition passes ------------------
 * A pass sorts tiles of kTileEntries entries by a digit of their bin (at most kMaxDigits digits): a
 * block counts its tile per digit in shared memory (the atomic gives each entry its rank), reserves
 * each digit's run in the output with one global atomic, places the tile in digit order in shared
 * memory and writes it out run by run, so consecutive threads write consecutive slots. With 256
 * digits and 8192 entries a tile, a run averages 32 entries: whole sectors. Binning by the bin in
 * one step (tens of thousands of bins) left about one entry per bin and tile: a global atomic and a
 * lone 8-byte write per entry, 4.7 ms of a 13 ms build at 2^27 on an H100. So up to 256 bins take
 * one pass; more take two: the first by the bin's high digit (into coarse ranges of bins), the
 * second, within each coarse range, by its low digit. */
static const int kPartitionThreads = 512, kPartitionPerThread = 16;
static const uint64_t kTileEntries = (uint64_t)kPartitionThreads * kPartitionPerThread;
static const unsigned kMaxDigits = 256;

typedef struct hg_pass {
  const void *from;      /* edges in coarse bin order (the second pass), or NULL: the build's entries */
  uint64_t entries;      /* from == NULL: the build's entries (kept or not) */
  void *to;
  unsigned bin_shift;    /* vertex >> bin_shift: its bin */
  unsigned digit_shift;  /* (bin >> digit_shift) & digit_mask: the digit this pass sorts by */
  unsigned digit_mask;
  unsigned range_shift;  /* from != NULL: range r holds bins [r << range_shift, (r + 1) << range_shift) */
  unsigned ranges;       /* from != NULL (at most kMaxDigits); 1 otherwise */
  uint64_t bins;
  const unsigned long long *bin_offsets; /* where each bin's entries start in bin order (bins + 1) */
  unsigned long long *cursor;            /* per bin: its next free place in `to` (a copy of bin_offsets) */
} hg_pass;

/* The exclusive sum of `count` 32-bit counters in shared memory, in place, by the block's warps:
 * warp w owns the w-th run of consecutive counters and reads them 32 at a time, lane i the i-th (a
 * lane per bank; a thread per run of counters would have the 32 lanes of a warp wait on one bank).
 * Every thread of the block calls it, after the counters are written. */
static __device__ void block_exclusive_sum(unsigned *counts, unsigned count) {
  __shared__ unsigned warp_base[32];
  const unsigned lane = threadIdx.x % 32u, warp = threadIdx.x / 32u, warps = blockDim.x / 32u;
  const unsigned run = (count + warps - 1u) / warps, from = min(warp * run, count), to = min(from + run, count);
  unsigned total = 0;
  for (unsigned j = from + lane; j < to; j += 32u) total += counts[j];
  for (unsigned lanes = 16; lanes > 0; lanes /= 2) total += __shfl_xor_sync(0xFFFFFFFFu, total, lanes);
  if (lane == 0) warp_base[warp] = total;
  __syncthreads();
  if (warp == 0) {
    const unsigned mine = lane < warps ? warp_base[lane] : 0u;
    unsigned inclusive = mine;
    for (unsigned lanes = 1; lanes < 32u; lanes *= 2) {
      const unsigned below = __shfl_up_sync(0xFFFFFFFFu, inclusive, lanes);
      if (lane >= lanes) inclusive += below;
    }
    if (lane < warps) warp_base[lane] = inclusive - mine;
  }
  __syncthreads();
  unsigned carried = warp_base[warp];
  for (unsigned base = from; base < to; base += 32u) {
    const unsigned j = base + lane, value = j < to ? counts[j] : 0u;
    unsigned inclusive = value;
    for (unsigned lanes = 1; lanes < 32u; lanes *= 2) {
      const unsigned below = __shfl_up_sync(0xFFFFFFFFu, inclusive, lanes);
      if (lane >= lanes) inclusive += below;
    }
    if (j < to) counts[j] = carried + inclusive - value;
    carried += __shfl_sync(0xFFFFFFFFu, inclusive, 31);
  }
  __syncthreads();
}

/* Range r's entries in the input of pass p: all of them in a first (or only) pass, the entries of
 * its coarse range of bins in a second. */
static __device__ uint64_t range_begin(const hg_pass *p, unsigned r) {
  return p->from ? p->bin_offsets[(uint64_t)r << p->range_shift] : 0u;
}
static __device__ uint64_t range_end(const hg_pass *p, unsigned r) {
  return p->from ? p->bin_offsets[min((uint64_t)(r + 1u) << p->range_shift, p->bins)] : p->entries;
}

/* One partition pass (see above) over slots of SLOT_BYTES (a constant, so that a tile's entries
 * held in registers take only the words they have: two blocks of 512 threads an SM). Dynamic shared
 * memory: kTileEntries slots, then a byte per slot (its digit). Tiles never straddle two ranges,
 * so a tile's digits are bins of one range. */
template <unsigned SLOT_BYTES>
__global__ void __launch_bounds__(kPartitionThreads, 2) hg_partition_kernel(gh_hg_bulk a, hg_pass p) {
  extern __shared__ unsigned long long tile_slots[];
  __shared__ unsigned digit_count[kMaxDigits], digit_start[kMaxDigits];
  __shared__ unsigned long long digit_at[kMaxDigits];
  __shared__ unsigned tiles_before[kMaxDigits + 1u]; /* each range's first tile, and the tiles in all */
  gh_slot_format f = gh_hg_format(&a);
  f.slot_bytes = SLOT_BYTES;
  unsigned char *slot_digit = (unsigned char *)tile_slots + kTileEntries * f.slot_bytes;
  const unsigned digits = p.digit_mask + 1u;
  for (unsigned r = threadIdx.x; r <= p.ranges; r += blockDim.x)
    tiles_before[r] = r < p.ranges ? (unsigned)((range_end(&p, r) - range_begin(&p, r) + kTileEntries - 1u) / kTileEntries) : 0u;
  __syncthreads();
  block_exclusive_sum(tiles_before, p.ranges + 1u);
  for (uint64_t tile = blockIdx.x; tile < tiles_before[p.ranges]; tile += gridDim.x) {
    unsigned r = 0; /* the last range whose tiles start at or before this one (a range with tiles) */
    for (unsigned step = kMaxDigits; step > 0; step /= 2u)
      if (r + step <= p.ranges && tiles_before[r + step] <= tile) r += step;
    const uint64_t start = range_begin(&p, r) + (tile - tiles_before[r]) * kTileEntries;
    const uint64_t stop = min(start + kTileEntries, range_end(&p, r));
    const uint64_t first_bin = p.from ? (uint64_t)r << p.range_shift : 0u;
    for (unsigned d = threadIdx.x; d < digits; d += blockDim.x) digit_count[d] = 0;
    __syncthreads();
    gh_slot_bits entry[kPartitionPerThread];
    unsigned placed[kPartitionPerThread]; /* digit << 16 | rank among the tile's entries of that digit; ~0u: none */
#pragma unroll
    for (int k = 0; k < kPartitionPerThread; ++k) {
      const uint64_t i = start + (uint64_t)k * kPartitionThreads + threadIdx.x;
      placed[k] = ~0u;
      if (i >= stop) continue;
      uint64_t key;
      if (p.from) {
        entry[k] = gh_hg_edge(f, p.from, i);
        key = gh_slot_bits_key(f, entry[k]);
      } else {
        if (!gh_hg_entry_kept(&a, i)) continue;
        key = gh_hg_entry_key(&a, i);
        entry[k] = gh_slot_pack(f, key, gh_hg_entry_value(&a, i));
      }
      const uint64_t bin = gh_hg_vertex(a.key_bits, a.seed, a.vertices, key) >> p.bin_shift;
      const unsigned digit = (unsigned)(bin >> p.digit_shift) & p.digit_mask;
      placed[k] = digit << 16 | atomicAdd(&digit_count[digit], 1u);
    }
    __syncthreads();
    for (unsigned d = threadIdx.x; d < digits; d += blockDim.x) {
      digit_start[d] = digit_count[d];
      if (digit_count[d])
        digit_at[d] = atomicAdd(&p.cursor[first_bin + ((uint64_t)d << p.digit_shift)], (unsigned long long)digit_count[d]);
    }
    __syncthreads();
    block_exclusive_sum(digit_start, digits);
    const unsigned placed_in_tile = digit_start[digits - 1u] + digit_count[digits - 1u];
#pragma unroll
    for (int k = 0; k < kPartitionPerThread; ++k) {
      if (placed[k] == ~0u) continue;
      const unsigned digit = placed[k] >> 16, at = digit_start[digit] + (placed[k] & 0xFFFFu);
      gh_slot_write(f, (char *)tile_slots + (uint64_t)at * f.slot_bytes, entry[k]);
      slot_digit[at] = (unsigned char)digit;
    }
    __syncthreads();
    for (unsigned at = threadIdx.x; at < placed_in_tile; at += blockDim.x) {
      const unsigned digit = slot_digit[at];
      gh_slot_write(f, (char *)p.to + (digit_at[digit] + (at - digit_start[digit])) * f.slot_bytes,
                    gh_slot_read(f, (const char *)tile_slots + (uint64_t)at * f.slot_bytes));
    }
    __syncthreads();
  }
}

/* A block per bin: its vertices' counts in shared memory, summed there into offsets (the bin's
 * edges start where its entries do, since bins are vertex ranges), written out, then each entry
 * placed at its vertex's offset plus a shared cursor: into shared memory when the bin's entries fit
 * there (stage_capacity of them), written out in order afterwards (consecutive threads,
 * consecutive slots: whole sectors), else straight into the edges (a lone 8-byte write each, into
 * a region the L2 holds). Dynamic shared memory: the bin's counters, then the staged slots. */
__global__ void __launch_bounds__(kBinBlockThreads) hg_bin_build_kernel(gh_hg_bulk a, unsigned bin_shift,
                                                                         const void *binned,
                                                                         const unsigned long long *bin_offsets,
                                                                         unsigned stage_capacity) {
  extern __shared__ unsigned long long bin_shared[];
  unsigned *counts = (unsigned *)bin_shared;
  char *staged = (char *)bin_shared + ((uint64_t)sizeof(unsigned) << bin_shift); /* (4 KB at least: aligned) */
  const gh_slot_format f = gh_hg_format(&a);
  const uint64_t bin = blockIdx.x, first = bin << bin_shift;
  const unsigned vertices = (unsigned)min((uint64_t)1 << bin_shift, a.vertices - first);
  const uint64_t begin = bin_offsets[bin], end = bin_offsets[bin + 1u];
  const bool staging = end - begin <= stage_capacity;
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
  block_exclusive_sum(counts, vertices);
  for (unsigned j = threadIdx.x; j < vertices; j += blockDim.x) a.offsets[first + j] = begin + counts[j];
  if (bin + 1u == gridDim.x && threadIdx.x == 0) a.offsets[a.vertices] = end;
  __syncthreads(); /* (every offset read before the cursors move) */
  char *const placed = staging ? staged : (char *)a.edges + begin * f.slot_bytes;
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
      gh_slot_write(f, placed + (uint64_t)atomicAdd(&counts[v - first], 1u) * f.slot_bytes, edge[u]);
    }
  }
  if (!staging) return;
  __syncthreads();
  for (uint64_t e = threadIdx.x; e < end - begin; e += blockDim.x)
    gh_slot_write(f, (char *)a.edges + (begin + e) * f.slot_bytes, gh_slot_read(f, staged + e * f.slot_bytes));
}

/* A launch's (or a setting's) error as the table's status, naming what failed. */
static gh_status launch_status(gh_table *t, cudaError_t err, const char *what) {
  if (err == cudaSuccess) return GH_OK;
  cudaGetLastError(); /* (a failed setting stays the runtime's last error: the next launch's check would see it) */
  return gh__fail(t, GH_ERR_CUDA, "%s failed: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

/* Entries a bin of the default size holds. MEASURE: the best of bins of 1024 .. 32768 vertices at
 * load factors 0.25, 1 and 4 held 4096 .. 8192 of them (an H100 at 2^27 entries, before the bins
 * were staged in shared memory); the smaller end leaves a staged bin block room for two more on
 * its SM. */
static const uint64_t kBinEntries = 4096;

/* gh_config.bin_vertices = 0: the smallest bins of at least kBinEntries entries (at the build's
 * entries per vertex), larger while there would be more bins than the binning kernels count. */
static unsigned default_bin_vertices(uint64_t vertices, uint64_t kept) {
  uint64_t bin_vertices = GH_HG_MIN_BIN_VERTICES;
  while (bin_vertices < GH_HG_MAX_BIN_VERTICES && bin_vertices * kept < kBinEntries * vertices) bin_vertices *= 2u;
  while (bin_vertices < GH_HG_MAX_BIN_VERTICES && (vertices + bin_vertices - 1u) / bin_vertices > kMaxBins)
    bin_vertices *= 2u;
  return (unsigned)bin_vertices;
}

/* Dynamic shared memory a block may have on the current device (227 KB on sm_90, 163 on sm_80,
 * 99 on sm_86 / sm_89), less room for what the kernels declare statically (under 8 KB). */
static size_t shared_limit(void) {
  int device = 0, optin = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  const size_t declared = 8u * 1024u;
  return (size_t)optin > declared ? (size_t)optin - declared : 0u;
}

/* Entries a bin block stages in shared memory: half as many again as a bin holds on average (bins
 * of a good hash spread by a few percent; a bin with more, from skewed keys, writes its edges
 * straight to the table), as far as shared memory beside the counters allows. */
static unsigned stage_capacity(uint64_t kept, uint64_t bins, size_t count_bytes, unsigned slot_bytes, size_t limit) {
  const uint64_t wanted = kept / bins + kept / bins / 2u + 256u;
  const uint64_t room = count_bytes < limit ? (limit - count_bytes) / slot_bytes : 0u;
  return (unsigned)(wanted < room ? wanted : room);
}

/* One partition pass over at most `tiles` tiles: the cursors reset to the bins' starts, then the
 * tiles. */
static gh_status partition(gh_table *t, const gh_hg_bulk *a, const hg_pass *p, size_t bin_bytes, uint64_t tiles,
                           void *stream) {
  gh_status status = gh__copy(t, p->cursor, p->bin_offsets, bin_bytes, stream);
  const unsigned slot_bytes = gh_hg_format(a).slot_bytes;
  void (*kernel)(gh_hg_bulk, hg_pass) = slot_bytes == 4   ? hg_partition_kernel<4>
                                        : slot_bytes == 8 ? hg_partition_kernel<8>
                                                          : hg_partition_kernel<16>;
  const size_t shared = kTileEntries * (slot_bytes + 1u);
  if (status == GH_OK)
    status = launch_status(t, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared),
                           "cudaFuncSetAttribute");
  if (status != GH_OK) return status;
  const unsigned grid =
      (unsigned)gh_cuda_resident_grid_shared(tiles * kPartitionThreads, (const void *)kernel, kPartitionThreads, shared);
  kernel<<<grid, kPartitionThreads, shared, (cudaStream_t)stream>>>(*a, *p);
  return launch_status(t, cudaGetLastError(), "the partition kernel");
}

static uint64_t tiles_of(uint64_t entries) { return (entries + kTileEntries - 1u) / kTileEntries; }

static gh_status cuda_build_binned(gh_table *t, const gh_hg_bulk *a, uint64_t n_entries, uint64_t kept, void *stream) {
  const unsigned bin_vertices = t->config.bin_vertices ? t->config.bin_vertices : default_bin_vertices(a->vertices, kept);
  const unsigned bin_shift = 31u - (unsigned)__builtin_clz(bin_vertices);
  const uint64_t bins = (a->vertices + bin_vertices - 1u) / bin_vertices;
  if (bins > kMaxBins) return GH_ERR_UNSUPPORTED;
  const unsigned slot_bytes = gh_hg_format(a).slot_bytes;
  const size_t count_bytes = bins * sizeof(unsigned), counter_bytes = bin_vertices * sizeof(unsigned);
  /* (Where a kernel's shared memory does not fit this GPU, V1 builds.) */
  const size_t limit = shared_limit();
  if (count_bytes > limit || counter_bytes > limit || kTileEntries * (slot_bytes + 1u) > limit) return GH_ERR_UNSUPPORTED;
  const size_t bin_bytes = (bins + 1u) * sizeof(unsigned long long);
  gh_scratch block = {NULL, 0, GH_MEMORY_DEVICE, 0, NULL};
  gh_status status = gh__scratch_alloc_on(t, &block, 2u * bin_bytes + kept * slot_bytes, stream);
  if (status != GH_OK) return status;
  unsigned long long *bin_offsets = (unsigned long long *)block.ptr, *bin_cursor = bin_offsets + bins + 1u;
  void *binned = bin_cursor + bins + 1u;
  const cudaStream_t s = (cudaStream_t)stream;
  const unsigned staged = stage_capacity(kept, bins, counter_bytes, slot_bytes, limit);
  const size_t build_bytes = counter_bytes + (size_t)staged * slot_bytes;
  const unsigned count_grid = (unsigned)gh_cuda_resident_grid(n_entries, (const void *)hg_bin_count_kernel, kBinningThreads);
  status = launch_status(t, cudaFuncSetAttribute(hg_bin_count_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
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
  /* Into bin order: the entries straight into `binned` by the bin (up to kMaxDigits bins), or first
   * into the table's edge array (free until the bin blocks write it) by the bin's high digit, then
   * from there into `binned` by its low digit within each coarse range. */
  unsigned bin_bits = 0;
  while (((uint64_t)1 << bin_bits) < bins) ++bin_bits;
  hg_pass p = {NULL, n_entries, binned, bin_shift, 0, (1u << bin_bits) - 1u, 0, 1, bins, bin_offsets, bin_cursor};
  if (status == GH_OK && bin_bits > 8u) {
    const unsigned fine_bits = (bin_bits + 1u) / 2u;
    p.to = a->edges;
    p.digit_shift = fine_bits;
    p.digit_mask = (1u << (bin_bits - fine_bits)) - 1u;
    status = partition(t, a, &p, bin_bytes, tiles_of(n_entries), stream);
    p.from = a->edges;
    p.to = binned;
    p.digit_shift = 0;
    p.digit_mask = (1u << fine_bits) - 1u;
    p.range_shift = fine_bits;
    p.ranges = (unsigned)((bins + p.digit_mask) >> fine_bits);
    if (status == GH_OK) status = partition(t, a, &p, bin_bytes, tiles_of(kept) + p.ranges, stream);
  } else if (status == GH_OK) {
    status = partition(t, a, &p, bin_bytes, tiles_of(n_entries), stream);
  }
  if (status == GH_OK) {
    hg_bin_build_kernel<<<(unsigned)bins, kBinBlockThreads, build_bytes, s>>>(*a, bin_shift, binned, bin_offsets, staged);
    status = launch_status(t, cudaGetLastError(), "the bin build kernel");
  }
  gh__scratch_free(t, &block, stream);
  return status;
}

static const gh_hg_backend cuda_backend = {cuda_bulk, cuda_build_binned};

static gh_status cuda_init(gh_table *t) { return gh__hg_init(t, &cuda_backend); }

extern "C" const gh_table_ops gh__hashgraph_cuda_ops = GH_HG_OPS("hashgraph/cuda", cuda_init);
