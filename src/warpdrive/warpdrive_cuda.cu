/* warpdrive_cuda.cu - the warpdrive design on the GPU.
 *
 * Thin kernels: a grid-stride loop hands one key to each cooperative group of group_size lanes
 * (gh_group_loop), which runs the group operation of gpuhash/warpdrive.cuh (the same code user
 * kernels call); lane 0 of the group writes the per-key output; per-thread counts are added to the
 * table's counters once per warp (gh_warp_add), so no counter is a hot spot. Kernels are
 * instantiated once per supported (key, value) width pair (GH_WIDTHS), with the group size a
 * run-time value: that keeps the build to a handful of kernels. Ops only queue work on the
 * caller's stream, except where they need a count on the host (insert's failed keys, erase's
 * erased keys, export's count): one gh__cuda_launch_counted, the op's one synchronisation. */
#include <cuda_runtime.h>

#include "gpuhash/warpdrive.cuh"

#include "core/kernels.cuh"

extern "C" {
#include "core/toolkit.h"
#include "warpdrive/warpdrive_table.h"
}

/* Launch shape: enough resident threads to hide DRAM latency on every multiprocessor. */
typedef struct gh_wd_launch_policy {
  int block_threads;
} gh_wd_launch_policy;
static const gh_wd_launch_policy kLaunch = {256};

static gh_wd_table *state(gh_table *t) { return (gh_wd_table *)t->impl; }

/* The geometry with the widths as compile-time constants, so the slot-layout branches fold. */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ gh_wd_geometry constant_geometry(gh_wd_geometry g) {
  g.key_bits = KB;
  g.value_bits = VB;
  g.slot_bytes = gh_wd_slot_bytes(KB, VB);
  return g;
}

/* Finds read windows in pieces (gpuhash/warpdrive.cuh): on an H100 at n = 2^27, g = 2, 4 and 8,
 * loads 0.5 to 0.95, 1.02x to 1.40x the slot-by-slot rate, fewer lanes per key putting more keys
 * in flight a warp (bench/results/2026-11-27-h100-warpdrive-reading*), and wide pieces of 32 bytes
 * where a window has 64 or more (gh_wd_find_piece_bytes). Inserts and erases read slot by slot, so
 * that their claiming CAS and tombstone write have a lane for each slot: pieces ran at 0.66x to
 * 1.01x for them at g <= 4 (faster at g = 8, 1.04x to 1.11x, but g = 4 slot by slot is the fastest
 * of either). */
static __host__ __device__ __forceinline__ gh_wd_reading find_reading(const gh_wd_geometry &g) {
  return gh_wd_find_piece_bytes(&g) == 32u ? GH_WD_BY_WIDE_PIECE : GH_WD_BY_PIECE;
}

/* Lanes of the group that handles one key: the window's pieces for a find, its slots else. */
static __host__ __device__ __forceinline__ unsigned lanes_per_key(const gh_wd_geometry &g, gh_wd_reading reading) {
  return reading == GH_WD_BY_SLOT ? g.window_width
                                  : g.window_width / gh_wd_pieces_slots(&g, gh_wd_reading_piece_bytes(reading));
}

/* Resident blocks per multiprocessor the insert kernel is compiled for (a register cap): inserts
 * wait on two dependent memory round trips, so more resident groups mean more throughput, up
 * to the point where capped registers spill. On an H100 at load 0.9 (n = 2^27, g = 4): no cap
 * (43 registers, 5 blocks) 7.62 G inserts/s, 6 blocks 8.40, 8 blocks (spills) 4.02. */
#ifndef GH_WD_INSERT_MIN_BLOCKS
#define GH_WD_INSERT_MIN_BLOCKS 6
#endif

template <unsigned KB, unsigned VB>
__global__ void __launch_bounds__(256, GH_WD_INSERT_MIN_BLOCKS)
    wd_insert_kernel(gh_wd_geometry geometry, void *slots, const void *keys, const void *values,
                     uint64_t n, int policy, uint8_t *failed_out, gh_wd_counters *counters) {
  const gh_wd_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_group_loop l = gh_group_loop_make(lanes_per_key(g, GH_WD_BY_SLOT));
  /* 32-bit per-thread counts: a thread sees at most n / (resident threads) keys. */
  unsigned inserted = 0, failed = 0, flags = 0;
  for (uint64_t i = l.first; i < n; i += l.stride) {
    const uint64_t key = gh__read_word(keys, i, KB);
    const uint64_t value = VB ? gh__read_word(values, i, VB) : 0;
    const gh_wd_outcome outcome = gh_wd_insert_group(&g, slots, l.group, key, value, policy, 0u);
    if (l.group.rank == 0) {
      inserted += outcome == GH_WD_INSERTED;
      failed += outcome == GH_WD_NOT_FITTED;
      flags |= gh_wd_outcome_flags(outcome);
      if (failed_out) failed_out[i] = outcome == GH_WD_NOT_FITTED;
    }
  }
  gh_warp_add(&counters->size, inserted);
  gh_warp_add(&counters->call.failed, failed);
  gh_warp_or(&counters->status, flags);
}

/* ---- The bulk insert's steps (warpdrive_table.h) ------------------------------------------------ */

/* The partition of a round, before the sort: each entry's region (of its window `attempt`), and in
 * round 0 the batch's pairs packed into slots. */
template <unsigned KB, unsigned VB>
__global__ void wd_regions_kernel(gh_wd_geometry geometry, const void *keys, const void *values, void *entries,
                                  int pack, uint64_t n, uint32_t attempt, unsigned region_shift, void *regions,
                                  unsigned id_bytes) {
  const gh_wd_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_slot_format f = gh_wd_format(&g);
  for (uint64_t i = gh_thread_index(); i < n; i += gh_grid_threads()) {
    uint64_t key;
    if (pack) {
      key = gh__read_word(keys, i, KB);
      gh_slot_write(f, (char *)entries + i * f.slot_bytes,
                    gh_wd_pack(&g, key, VB && values ? gh__read_word(values, i, VB) : 0));
    } else {
      key = gh_slot_bits_key(f, gh_slot_read(f, (const char *)entries + i * f.slot_bytes));
    }
    gh_partition_digit(regions, id_bytes, i, gh_wd_region_of(gh_wd_probe_at(&g, key, attempt).window, region_shift));
  }
}

/* Writes an entry a round passes on into the passed array (the warp's held buffers append them). */
struct wd_pass_on {
  gh_slot_format f;
  void *passed;
  __device__ void operator()(uint64_t at, const gh_slot_bits &entry) const {
    gh_slot_write(f, (char *)passed + at * f.slot_bytes, entry);
  }
};

/* The bulk insert's rounds build each region in shared memory, a block a region, where the slots
 * are 4 or 8 bytes (one CAS-able word); 16-byte slots go through L2 (wd_round_kernel, regions of a
 * quarter of the L2). A region holds a whole locality region of the table (gpuhash/detail/
 * warpdrive.h), so that the first round walks a sequence's local windows. Regions of 64 KB and of
 * 32 KB measured within 3 % of each other on an H200 when a round tried one window
 * (bench/results/2026-11-27-h200-warpdrive-bulk-tuning-d0081e5.txt). Three blocks of 64 KB and
 * their held entries fit an SM. */
static const size_t kRegionBytes = GH_WD_LOCAL_REGION_BYTES;
static const int kRegionThreads = 512;
static const int kRegionBlocksPerSM = 3;

static int builds_in_shared(const gh_wd_geometry &g) { return g.slot_bytes <= 8u; }

static size_t cuda_region_bytes(gh_table *t) {
  if (builds_in_shared(state(t)->geometry)) return kRegionBytes;
  int device = 0, l2 = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
  return l2 >= 4 ? (size_t)l2 / 4u : 1u;
}

/* The partition's work space (core/toolkit.h). */
static size_t cuda_partition_bytes(gh_table *t, uint64_t n, unsigned regions) {
  return gh__cuda_partition_bytes(n, state(t)->geometry.slot_bytes, regions);
}
static gh_partition_work work_of(const gh_wd_round *r) {
  return gh__cuda_partition_work(r->work, r->work_bytes, r->n, r->regions);
}

template <unsigned KB, unsigned VB>
static gh_status wd_partition(gh_table *t, const gh_wd_round *r, uint64_t *longest, void *stream) {
  gh_wd_geometry g = state(t)->geometry;
  /* Round 0 packs the batch into the passed entries' buffer (free until the round), then every
   * round sorts that buffer into r->sorted. */
  const void *keys = r->keys, *values = r->values;
  void *entries = r->pending ? (void *)r->pending : r->passed;
  int pack = r->pending == NULL;
  uint64_t n = r->n;
  uint32_t attempt = r->attempt;
  unsigned shift = r->region_shift;
  gh_partition_work w = work_of(r);
  void *args[] = {&g, (void *)&keys, (void *)&values, &entries, &pack, &n, &attempt, &shift, &w.digits_in, &w.digit_bytes};
  gh_status status = gh__cuda_launch(t, (const void *)wd_regions_kernel<KB, VB>, n, kLaunch.block_threads, args, stream);
  if (status == GH_OK)
    status = gh__cuda_partition(t, &w, entries, r->sorted, n, g.slot_bytes, r->regions, longest, stream);
  return status;
}

/* One entry of a region built in shared memory (4- or 8-byte slots: one word each, W), its window
 * `window` of the region: the rules of the walk (gpuhash/detail/warpdrive.h) on one window and no
 * tombstones: the key where it is (the policy applied), else the first empty slot claimed; a lost
 * claim reads the window again. GH_WD_NOT_FITTED: the window is full without the key. */
template <typename W, unsigned KB, unsigned VB>
static __device__ gh_wd_outcome region_insert(const gh_wd_geometry &g, W *window, uint64_t key, uint64_t value,
                                              int policy) {
  /* (other threads CAS these words: every read goes to shared memory) */
  const volatile W *seen_at = window;
  const gh_slot_format f = gh_wd_format(&g);
  const W empty = (W)~0ull, mine = (W)gh_wd_pack(&g, key, value).lo;
  for (;;) {
    unsigned first_empty = g.window_width;
    for (unsigned lane = 0; lane < g.window_width; ++lane) {
      W seen = seen_at[lane];
      if (gh_slot_bits_key(f, gh_slot_bits{(uint64_t)seen, ~0ull}) == key) {
        /* The policy's value, by CAS on the whole slot (sets have nothing to merge). */
        for (;;) {
          const uint64_t stored = gh_slot_bits_value(f, gh_slot_bits{(uint64_t)seen, ~0ull});
          const uint64_t merged = VB ? gh_policy_combine(policy, VB, stored, value) : stored;
          if (merged == stored) return GH_WD_UPDATED;
          const W before = atomicCAS(&window[lane], seen, (W)gh_wd_pack(&g, key, merged).lo);
          if (before == seen) return GH_WD_UPDATED;
          seen = before;
        }
      }
      if (seen == empty && first_empty == g.window_width) first_empty = lane;
    }
    if (first_empty == g.window_width) return GH_WD_NOT_FITTED;
    if (atomicCAS(&window[first_empty], empty, mine) == empty) return GH_WD_INSERTED;
  }
}

/* The word of a 4- or 8-byte slot. */
template <bool FOUR_BYTES>
struct wd_slot_word {
  typedef unsigned long long type;
};
template <>
struct wd_slot_word<true> {
  typedef unsigned int type;
};

/* Entries a warp holds back before it appends them to the passed ones with one atomic: few pass
 * the first round (its walk covers a sequence's local windows), so room for one step's 32 keeps
 * the block's shared memory small. */
static const unsigned kRegionHeld = 32;

/* One erase in a window of a region built in shared memory: the key's slot becomes the canonical
 * tombstone (GH_WD_ERASE_REMOVED; a lost CAS means another copy of the key in the batch took it,
 * and the window is read again), an empty slot without the key says it is absent, a full window
 * without it leaves the key undecided. */
template <typename W, unsigned KB, unsigned VB>
static __device__ gh_wd_erased region_erase(const gh_wd_geometry &g, W *window, uint64_t key) {
  const volatile W *seen_at = window;
  const gh_slot_format f = gh_wd_format(&g);
  const W empty = (W)~0ull, tombstone = (W)gh_wd_free_bits(&g, gh_wd_tombstone_key(KB)).lo;
  for (;;) {
    int has_empty = 0, lost = 0;
    for (unsigned lane = 0; lane < g.window_width && !lost; ++lane) {
      const W seen = seen_at[lane];
      if (gh_slot_bits_key(f, gh_slot_bits{(uint64_t)seen, ~0ull}) == key) {
        if (atomicCAS(&window[lane], seen, tombstone) == seen) return GH_WD_ERASE_REMOVED;
        lost = 1;
      }
      has_empty |= seen == empty;
    }
    if (!lost) return has_empty ? GH_WD_ERASE_ABSENT : GH_WD_ERASE_UNDECIDED;
  }
}

/* A round of the bulk insert (or erase) over regions in shared memory: block r loads region r's
 * slots, its threads insert (erase) the region's entries there (a window is a few shared-memory
 * words), and the block writes the slots back. An entry walks its windows attempt .. until - 1,
 * all in the region; those that find them all full (without the key) are passed on. Entries need
 * different numbers of windows (at load 0.9 a warp's slowest of 32 needs several), so a lane does
 * one window a step and takes the region's next entry as soon as its own is decided, instead of
 * the warp waiting for its slowest lane; the entry it takes next was loaded when it took the last,
 * so that the load's latency passes while it walks. */
template <unsigned KB, unsigned VB, bool ERASE>
__global__ void __launch_bounds__(kRegionThreads, kRegionBlocksPerSM)
    wd_region_kernel(gh_wd_geometry geometry, void *slots, const void *entries, const uint64_t *starts,
                     unsigned region_shift, uint32_t attempt, uint32_t until, int policy, void *passed,
                     gh_wd_counters *counters) {
  typedef typename wd_slot_word<KB + VB <= 32u>::type W;
  extern __shared__ unsigned long long gh_region_words[];
  __shared__ gh_slot_bits held_entries[kRegionThreads / 32][kRegionHeld];
  __shared__ unsigned long long next_entry, region_end;
  /* The region's entries: a run of the sorted order (wd_region_starts_kernel). */
  if (threadIdx.x == 0) {
    next_entry = starts[blockIdx.x];
    region_end = starts[blockIdx.x + 1u];
  }
  __syncthreads();
  const uint64_t end = region_end;
  if (next_entry == end) return;
  const gh_wd_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_slot_format f = gh_wd_format(&g);
  W *region = (W *)gh_region_words;
  const uint64_t first_window = (uint64_t)blockIdx.x << region_shift;
  const uint64_t windows_here = g.window_count - first_window < (1ull << region_shift) ? g.window_count - first_window
                                                                                      : (1ull << region_shift);
  W *table = (W *)slots + first_window * g.window_width;
  gh_block_copy(region, (const W *)table, windows_here * g.window_width);
  __syncthreads();
  const unsigned lane = threadIdx.x % 32u;
  gh_slot_bits *held = held_entries[threadIdx.x / 32u];
  unsigned inserted = 0, flags = 0, holding = 0;
  unsigned long long erased = 0;
  /* The lane's entry in work (walking), the one it takes next (loaded ahead), and whether the
   * region's entries have run out for it. */
  gh_slot_bits entry = {0, 0}, ahead = {0, 0};
  gh_probe p = {0, 0, 0};
  int walking = 0, has_ahead = 0, drained = 0;
  for (;;) {
    if (!walking && has_ahead) {
      entry = ahead;
      has_ahead = 0;
      const uint64_t key = gh_slot_bits_key(f, entry);
      if (gh_wd_is_sentinel(key, KB) && ERASE) {
        erased += (unsigned long long)gh_wd_side_erase(&g, slots, key);
      } else if (gh_wd_is_sentinel(key, KB)) {
        const gh_wd_outcome outcome = gh_wd_side_insert(&g, slots, key, gh_slot_bits_value(f, entry), policy);
        inserted += outcome == GH_WD_INSERTED;
        flags |= gh_wd_outcome_flags(outcome);
      } else {
        p = gh_wd_probe_at(&g, key, attempt);
        walking = 1;
      }
    }
    /* Lanes without an entry ahead claim the region's next ones together and start their loads. */
    const unsigned taking = __ballot_sync(0xFFFFFFFFu, !has_ahead && !drained);
    if (taking) {
      uint64_t from = 0;
      if (lane == 0) from = atomicAdd(&next_entry, (unsigned long long)__popc(taking));
      from = __shfl_sync(0xFFFFFFFFu, from, 0);
      if ((taking >> lane) & 1u) {
        const uint64_t i = from + __popc(taking & ((1u << lane) - 1u));
        has_ahead = i < end;
        drained = !has_ahead;
        if (has_ahead) ahead = gh_slot_read(f, (const char *)entries + i * f.slot_bytes);
      }
    }
    int passes = 0;
    if (walking) {
      W *window = region + (p.window - first_window) * g.window_width;
      int decided;
      if (ERASE) {
        const gh_wd_erased outcome = region_erase<W, KB, VB>(g, window, gh_slot_bits_key(f, entry));
        decided = outcome != GH_WD_ERASE_UNDECIDED;
        erased += outcome == GH_WD_ERASE_REMOVED;
      } else {
        const gh_wd_outcome outcome =
            region_insert<W, KB, VB>(g, window, gh_slot_bits_key(f, entry), gh_slot_bits_value(f, entry), policy);
        decided = outcome != GH_WD_NOT_FITTED;
        if (decided) inserted += outcome == GH_WD_INSERTED, flags |= gh_wd_outcome_flags(outcome);
      }
      if (decided) {
        walking = 0;
      } else {
        gh_wd_probe_next(&g, &p);
        if (p.attempt >= until) passes = 1, walking = 0;
      }
    }
    gh_warp_hold(held, kRegionHeld, &holding, passes, entry, &counters->call.cursor, wd_pass_on{f, passed});
    if (!__any_sync(0xFFFFFFFFu, walking || has_ahead || !drained)) break;
  }
  gh_warp_append_held(held, holding, &counters->call.cursor, wd_pass_on{f, passed});
  if (ERASE) gh_warp_add(&counters->call.erased, erased);
  gh_warp_add(&counters->size, ERASE ? 0ull - erased : (unsigned long long)inserted);
  gh_warp_or(&counters->status, flags);
  __syncthreads();
  gh_block_copy(table, (const W *)region, windows_here * g.window_width);
}

/* The region kernel of a width pair, or NULL where slots take 16 bytes (those go through L2). */
template <unsigned KB, unsigned VB, bool ERASE, bool ONE_WORD = (KB + VB <= 64u)>
struct wd_region_kernel_of {
  static const void *get(void) { return (const void *)wd_region_kernel<KB, VB, ERASE>; }
};
template <unsigned KB, unsigned VB, bool ERASE>
struct wd_region_kernel_of<KB, VB, ERASE, false> {
  static const void *get(void) { return NULL; }
};

/* Entries a warp of the round kernel holds back before it appends them to the passed ones with one
 * atomic: one atomic a warp and step (about 3 entries at load 0.9) queued on the one counter for
 * 10 ms on an H100 at 2^27 keys. */
static const unsigned kRoundHeld = 128;
static const unsigned kRoundWarps = 256 / 32;
/* Steps of a block's groups in a chunk of the round kernel. */
static const unsigned kRoundChunkSteps = 8;

/* A round: each entry tries its windows `attempt` .. `until` - 1 (the last round: walks on from
 * `attempt`). Blocks take
 * chunks of consecutive entries in order, as they finish the last, so that the entries in work at
 * any time stay within a short span of the sorted order, one region's windows in cache (a
 * grid-stride loop lets its warps drift apart over the round: on an H100 at 2^27 keys its first
 * round read 6 GB from memory, the table 5 times over). Each warp gathers its passed entries in
 * shared memory and appends them a batch at a time. */
template <unsigned KB, unsigned VB>
__global__ void __launch_bounds__(256, GH_WD_INSERT_MIN_BLOCKS)
    wd_round_kernel(gh_wd_geometry geometry, void *slots, const void *entries, uint64_t n, uint32_t attempt,
                    uint32_t until, int last, int policy, void *passed, gh_wd_counters *counters) {
  __shared__ gh_slot_bits held_entries[kRoundWarps][kRoundHeld];
  __shared__ unsigned long long chunk_first;
  gh_wd_geometry g = constant_geometry<KB, VB>(geometry);
  if (!last) g.max_probe_windows = until;
  const gh_slot_format f = gh_wd_format(&g);
  const gh_device_group group = gh_device_group_make(g.window_width);
  const unsigned warp = threadIdx.x / 32u;
  const uint64_t per_block = blockDim.x / g.window_width, mine = threadIdx.x / g.window_width;
  gh_slot_bits *held = held_entries[warp];
  unsigned inserted = 0, failed = 0, flags = 0, holding = 0;
  for (;;) {
    if (threadIdx.x == 0) chunk_first = atomicAdd(&counters->call.work, per_block * kRoundChunkSteps);
    __syncthreads();
    const uint64_t from = chunk_first;
    __syncthreads();
    if (from >= n) break;
    for (unsigned step = 0; step < kRoundChunkSteps; ++step) {
      const uint64_t i = from + step * per_block + mine;
      gh_slot_bits entry = {0, 0};
      int passes = 0;
      if (i < n) {
        entry = gh_slot_read(f, (const char *)entries + i * f.slot_bytes);
        const gh_wd_outcome outcome = gh_wd_insert_group(&g, slots, group, gh_slot_bits_key(f, entry),
                                                         gh_slot_bits_value(f, entry), policy, attempt);
        passes = outcome == GH_WD_NOT_FITTED && !last;
        if (group.rank == 0 && !passes) {
          inserted += outcome == GH_WD_INSERTED;
          failed += outcome == GH_WD_NOT_FITTED;
          flags |= gh_wd_outcome_flags(outcome);
        }
      }
      gh_warp_hold(held, kRoundHeld, &holding, passes && group.rank == 0, entry, &counters->call.cursor,
                   wd_pass_on{f, passed});
    }
  }
  gh_warp_append_held(held, holding, &counters->call.cursor, wd_pass_on{f, passed});
  gh_warp_add(&counters->size, inserted);
  gh_warp_add(&counters->call.failed, failed);
  gh_warp_or(&counters->status, flags);
}

/* Finds and erases are compiled for 32 registers, so that every thread slot of a multiprocessor
 * is filled (full occupancy): they wait on memory latency, and the loads in flight grow with the
 * resident groups. Uncapped they took 36 to 38 registers and 75 % occupancy; on an H100 at load
 * 0.8 (g = 4, n = 2^27) the cap and ballot-built masks took find from 10.6 to 18.0 G/s, with no
 * spills. */
#define WD_LATENCY_BOUND_MIN_BLOCKS 8

/* READING: the piece width, a constant, so that each kernel has only its own loads. */
template <unsigned KB, unsigned VB, gh_wd_reading READING>
__global__ void __launch_bounds__(256, WD_LATENCY_BOUND_MIN_BLOCKS)
    wd_find_kernel(gh_wd_geometry geometry, void *slots, const void *keys, uint64_t n, void *values_out,
                   uint8_t *found_out, uint64_t default_value) {
  const gh_wd_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_group_loop l = gh_group_loop_make(lanes_per_key(g, READING));
  for (uint64_t i = l.first; i < n; i += l.stride) {
    uint64_t value = default_value;
    const int found = gh_wd_find_group(&g, slots, l.group, READING, gh__read_word(keys, i, KB), &value);
    if (l.group.rank == 0) {
      if (VB && values_out) gh__write_word(values_out, i, VB, found ? value : default_value);
      if (found_out) found_out[i] = (uint8_t)found;
    }
  }
}

/* Erase also takes the erased keys off the size counter (adding 0 - count), so that the op needs
 * no second round trip for it. Key i is word i * key_stride of keys (the bulk erase passes slots). */
template <unsigned KB, unsigned VB>
__global__ void __launch_bounds__(256, WD_LATENCY_BOUND_MIN_BLOCKS)
    wd_erase_kernel(gh_wd_geometry geometry, void *slots, const void *keys, unsigned key_stride, uint64_t n,
                    uint8_t *erased_out, gh_wd_counters *counters) {
  const gh_wd_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_group_loop l = gh_group_loop_make(lanes_per_key(g, GH_WD_BY_SLOT));
  unsigned long long erased = 0;
  for (uint64_t i = l.first; i < n; i += l.stride) {
    const int removed = gh_wd_erase_group(&g, slots, l.group, gh__read_word(keys, i * key_stride, KB));
    if (l.group.rank == 0) {
      erased += (unsigned long long)removed;
      if (erased_out) erased_out[i] = (uint8_t)removed;
    }
  }
  gh_warp_add(&counters->call.erased, erased);
  gh_warp_add(&counters->size, 0ull - erased);
}

/* Export: each thread looks at slots; a warp reserves output positions with one atomic. */
template <unsigned KB, unsigned VB>
__global__ void wd_export_kernel(gh_wd_geometry geometry, void *slots, void *keys_out, void *values_out,
                                 gh_wd_counters *counters) {
  const gh_wd_geometry g = constant_geometry<KB, VB>(geometry);
  const uint64_t main_slots = g.window_count * g.window_width;
  const uint64_t total = main_slots + GH_WD_SIDE_SLOTS;
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(total); i += gh_grid_threads()) {
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
    const uint64_t at = gh_warp_reserve(&counters->call.cursor, keep);
    if (keep) {
      gh__write_word(keys_out, at, KB, key);
      if (VB && values_out) gh__write_word(values_out, at, VB, value);
    }
  }
}

/* A pass of gh_compact's in-place rehash (gpuhash/detail/warpdrive.h): a thread a slot, a warp on
 * consecutive slots (whole windows), so the table streams through once and a key's own window
 * comes from one ballot of its lanes; only keys past their first window read further. The slots
 * changed are counted into the call counters' cursor (every lane reaches the warp's add). */
template <unsigned KB, unsigned VB>
__global__ void wd_rehash_kernel(gh_wd_geometry geometry, void *slots, const uint32_t *marked_before,
                                 uint32_t *marked, gh_wd_counters *counters) {
  const gh_wd_geometry g = constant_geometry<KB, VB>(geometry);
  const uint64_t main_slots = g.window_count * g.window_width, empty = gh_wd_empty_key(KB);
  const unsigned lane = threadIdx.x % 32u, window_lane = lane % g.window_width;
  const unsigned window_shift = lane - window_lane;
  const uint32_t window_lanes = g.window_width == 32u ? ~0u : (1u << g.window_width) - 1u;
  unsigned changed = 0;
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(main_slots); i += gh_grid_threads()) {
    gh_wd_bits pair = gh_wd_free_bits(&g, empty);
    if (i < main_slots) pair = gh_wd_load_bits(&g, gh_wd_slot_at(&g, slots, i));
    const uint64_t key = gh_wd_bits_key(&g, pair);
    const uint32_t own_empty = (__ballot_sync(0xFFFFFFFFu, key == empty) >> window_shift) & window_lanes &
                               ((1u << window_lane) - 1u);
    if (key == empty) continue;
    if (key == gh_wd_tombstone_key(KB)) {
      gh_wd_rehash_tombstone(&g, slots, i, marked);
      changed += 1;
    } else {
      changed += (unsigned)gh_wd_rehash_key(&g, slots, i, pair, own_empty, marked_before, marked);
    }
  }
  gh_warp_add(&counters->call.cursor, changed);
}

/* ---- Launching -------------------------------------------------------------------------------- */

/* The kernels of one (key, value) width pair. */
typedef struct wd_kernels {
  const void *insert, *find, *find_wide, *erase, *export_all, *rehash, *round, *region, *region_erase;
  gh_status (*partition)(gh_table *t, const gh_wd_round *r, uint64_t *longest, void *stream);
} wd_kernels;

static wd_kernels kernels_for(const gh_wd_geometry &g) {
  wd_kernels k = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
#define GH_WD_KERNELS_CASE(kb, vb)                                                            \
  if (g.key_bits == kb && g.value_bits == vb) {                                               \
    k.insert = (const void *)wd_insert_kernel<kb, vb>;                                        \
    k.round = (const void *)wd_round_kernel<kb, vb>;                                          \
    k.region = wd_region_kernel_of<kb, vb, false>::get();                                     \
    k.region_erase = wd_region_kernel_of<kb, vb, true>::get();                                \
    k.partition = wd_partition<kb, vb>;                                                       \
    k.find = (const void *)wd_find_kernel<kb, vb, GH_WD_BY_PIECE>;                            \
    k.find_wide = (const void *)wd_find_kernel<kb, vb, GH_WD_BY_WIDE_PIECE>;                  \
    k.erase = (const void *)wd_erase_kernel<kb, vb>;                                          \
    k.export_all = (const void *)wd_export_kernel<kb, vb>;                                    \
    k.rehash = (const void *)wd_rehash_kernel<kb, vb>;                                        \
  }
  GH_WIDTHS(GH_WD_KERNELS_CASE)
#undef GH_WD_KERNELS_CASE
  return k;
}

/* Launches a kernel that counts into the call counters and reads them back (the op's one wait). */
static gh_status run_counted(gh_table *t, const void *kernel, uint64_t threads, void **args,
                             gh_wd_call_counters *after, void *stream) {
  return gh__cuda_launch_counted(t, kernel, threads, kLaunch.block_threads, args, &state(t)->counters->call, after,
                                 sizeof *after, stream);
}

/* ---- Ops -------------------------------------------------------------------------------------- */

static gh_status cuda_partition(gh_table *t, const gh_wd_round *r, uint64_t *longest, void *stream) {
  return kernels_for(state(t)->geometry).partition(t, r, longest, stream);
}

/* A round over the regions in shared memory: a block a region (a region without entries returns at
 * once), counted as run_counted does. */
static gh_status region_round(gh_table *t, const gh_wd_round *r, const void *entries, const void *kernel,
                              gh_wd_call_counters *after, void *stream) {
  gh_wd_table *w = state(t);
  gh_wd_geometry g = w->geometry;
  unsigned regions = r->regions, shift = r->region_shift;
  uint32_t attempt = r->attempt, until = r->until;
  int policy = r->policy;
  void *passed = r->passed;
  const uint64_t *starts = work_of(r).starts;
  void *args[] = {&g,     &w->slots, (void *)&entries, (void *)&starts, &shift, &attempt, &until,
                  &policy, &passed,  &w->counters};
  const size_t shared = ((size_t)1u << shift) * g.window_width * g.slot_bytes;
  gh_status status = gh__fill(t, &w->counters->call, 0, sizeof *after, stream);
  if (status == GH_OK) status = gh__cuda_launch_regions(t, kernel, regions, kRegionThreads, shared, args, stream);
  return status == GH_OK ? gh__to_host(t, after, &w->counters->call, sizeof *after, stream) : status;
}

static gh_status cuda_round(gh_table *t, const gh_wd_round *r, const void *entries, gh_wd_call_counters *after,
                            void *stream) {
  gh_wd_table *w = state(t);
  if (!r->last && builds_in_shared(w->geometry))
    return region_round(t, r, entries, kernels_for(w->geometry).region, after, stream);
  gh_wd_geometry g = w->geometry;
  uint64_t n = r->n;
  uint32_t attempt = r->attempt, until = r->until;
  int last = r->last, policy = r->policy;
  void *passed = r->passed;
  void *args[] = {&g, &w->slots, (void *)&entries, &n, &attempt, &until, &last, &policy, &passed, &w->counters};
  return run_counted(t, kernels_for(g).round, n * g.window_width, args, after, stream);
}

/* The default: tables of 4- and 8-byte slots (built in shared memory; through L2 the rounds were
 * slower than the ordinary insert), batches of at least 2^20 keys and one key a window (a round
 * reads and writes every region with entries: on an H100 at 2^27 keys it took the insert from
 * 12.4 to 7.7 ms at load 0.5 and from 17.5 to 12.6 ms at 0.9), tables of at least four regions
 * (smaller ones sit in the cache anyway). */
static int cuda_takes_by_default(gh_table *t, uint64_t n, unsigned regions) {
  const gh_wd_geometry *g = &state(t)->geometry;
  return builds_in_shared(*g) && n >= (1ull << 20) && n >= g->window_count && regions >= 4u;
}

static gh_status cuda_erase_round(gh_table *t, const gh_wd_round *r, const void *entries, gh_wd_call_counters *after,
                                  void *stream);

/* (regions: a block each, up to the grid's 2^31 - 1; region numbers of 4 bytes beyond 65536) */
static const gh_wd_bulk_backend cuda_bulk = {cuda_region_bytes, cuda_takes_by_default, cuda_partition_bytes,
                                             cuda_partition,    cuda_round,            cuda_erase_round,
                                             0x7FFFFFFFu};



static gh_status cuda_insert(gh_table *t, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                             uint8_t *failed_out, uint64_t *failed, void *stream) {
  gh_wd_table *w = state(t);
  int taken = 0;
  const gh_status bulk = gh__wd_bulk_insert(t, &cuda_bulk, keys, values, n, (int)policy, failed_out, failed, &taken,
                                            stream);
  if (bulk != GH_OK || taken) return bulk;
  gh_wd_geometry g = w->geometry;
  int policy_value = (int)policy;
  void *args[] = {&g, &w->slots, (void *)&keys, (void *)&values, &n, &policy_value, &failed_out, &w->counters};
  gh_wd_call_counters after;
  const gh_status status = run_counted(t, kernels_for(g).insert, n * lanes_per_key(g, GH_WD_BY_SLOT), args, &after, stream);
  if (status == GH_OK) *failed = after.failed;
  return status;
}

static gh_status cuda_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                           const void *default_bytes, void *stream) {
  gh_wd_table *w = state(t);
  gh_wd_geometry g = w->geometry;
  uint64_t default_value = gh__value_word(t, default_bytes);
  void *args[] = {&g, &w->slots, (void *)&keys, &n, &values_out, &found_out, &default_value};
  const gh_wd_reading reading = find_reading(g);
  const wd_kernels k = kernels_for(g);
  return gh__cuda_launch(t, reading == GH_WD_BY_WIDE_PIECE ? k.find_wide : k.find, n * lanes_per_key(g, reading),
                         kLaunch.block_threads, args, stream);
}

/* The ordinary erase kernel over n keys, word i * key_stride of keys each. */
static gh_status erase_keys(gh_table *t, const void *keys, unsigned key_stride, uint64_t n, uint8_t *erased_out,
                            gh_wd_call_counters *after, void *stream) {
  gh_wd_table *w = state(t);
  gh_wd_geometry g = w->geometry;
  void *args[] = {&g, &w->slots, (void *)&keys, &key_stride, &n, &erased_out, &w->counters};
  return run_counted(t, kernels_for(g).erase, n * lanes_per_key(g, GH_WD_BY_SLOT), args, after, stream);
}

/* The bulk erase's rounds: the first over the regions in shared memory, the last an ordinary erase
 * of the entries' keys (words of the slots). */
static gh_status cuda_erase_round(gh_table *t, const gh_wd_round *r, const void *entries, gh_wd_call_counters *after,
                                  void *stream) {
  const gh_wd_geometry &g = state(t)->geometry;
  if (!r->last) return region_round(t, r, entries, kernels_for(g).region_erase, after, stream);
  return erase_keys(t, entries, g.slot_bytes * 8u / g.key_bits, r->n, NULL, after, stream);
}

static gh_status cuda_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out, uint64_t *erased,
                            void *stream) {
  gh_wd_table *w = state(t);
  int taken = 0;
  gh_status status = GH_OK;
  /* (16-byte slots have no erase in shared memory) */
  if (builds_in_shared(w->geometry)) status = gh__wd_bulk_erase(t, &cuda_bulk, keys, n, erased_out, erased, &taken, stream);
  if (!taken) {
    gh_wd_call_counters after = {0, 0, 0, 0};
    status = erase_keys(t, keys, 1u, n, erased_out, &after, stream);
    *erased = status == GH_OK ? after.erased : 0;
  }
  /* (a failure after a kernel ran may still have left tombstones) */
  if (status != GH_OK || *erased) w->tombstones_possible = 1;
  return status;
}

/* gh_get_stats: the tombstones among the main slots, counted into the call counters' cursor
 * (every lane reaches the warp's add). */
__global__ void wd_tombstones_kernel(gh_wd_geometry g, const void *slots, uint64_t main_slots, gh_wd_counters *counters) {
  const uint64_t tomb = gh_wd_tombstone_key(g.key_bits);
  unsigned long long found = 0;
  for (uint64_t i = gh_thread_index(); i < main_slots; i += gh_grid_threads())
    found += gh_wd_load_key(&g, (const char *)slots + i * g.slot_bytes) == tomb;
  gh_warp_add(&counters->call.cursor, found);
}

static gh_status cuda_stats(gh_table *t, gh_stats *stats) {
  gh_wd_table *w = state(t);
  gh_wd_geometry g = w->geometry;
  uint64_t main_slots = g.window_count * g.window_width;
  void *args[] = {&g, &w->slots, &main_slots, &w->counters};
  gh_wd_call_counters after;
  const gh_status status = run_counted(t, (const void *)wd_tombstones_kernel, main_slots, args, &after, NULL);
  if (status == GH_OK) stats->tombstones = after.cursor;
  return status;
}

static gh_status cuda_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_wd_table *w = state(t);
  gh_wd_geometry g = w->geometry;
  void *args[] = {&g, &w->slots, &keys_out, &values_out, &w->counters};
  gh_wd_call_counters after;
  const uint64_t slots = g.window_count * g.window_width + GH_WD_SIDE_SLOTS;
  const gh_status status = run_counted(t, kernels_for(g).export_all, slots, args, &after, stream);
  if (status == GH_OK) *count = after.cursor;
  return status;
}

static gh_status cuda_rehash_pass(gh_table *t, const uint32_t *marked_before, uint32_t *marked, uint64_t *changed,
                                  void *stream) {
  gh_wd_table *w = state(t);
  gh_wd_geometry g = w->geometry;
  void *args[] = {&g, &w->slots, (void *)&marked_before, &marked, &w->counters};
  gh_wd_call_counters after;
  const gh_status status = run_counted(t, kernels_for(g).rehash, g.window_count * g.window_width, args, &after, stream);
  if (status == GH_OK) *changed = after.cursor;
  return status;
}

static gh_status cuda_compact(gh_table *t, void *stream) { return gh__wd_compact(t, cuda_rehash_pass, stream); }

static gh_status cuda_device_view(gh_table *t, gh_device_view *view) {
  gh_wd_table *w = state(t);
  w->device_view_given = 1;
  view->slots = w->slots;
  view->size = &w->counters->size;
  view->status_word = &w->counters->status;
  view->design = GH_WARPDRIVE;
  view->layout[0] = w->geometry.window_count;
  view->layout[1] = w->geometry.max_probe_windows;
  view->layout[2] = w->geometry.window_width;
  view->layout[3] = w->geometry.local_shift;
  view->layout[4] = w->geometry.local_windows;
  view->seed = w->geometry.seed;
  view->key_bits = w->geometry.key_bits;
  view->value_bits = w->geometry.value_bits;
  view->slot_bytes = w->geometry.slot_bytes;
  return GH_OK;
}

extern "C" const gh_table_ops gh__warpdrive_cuda_ops = {
    .name = "warpdrive/cuda",
    .init = gh__wd_init,
    .release = gh__wd_release,
    .insert = cuda_insert,
    .find = cuda_find,
    .erase = cuda_erase,
    .count = NULL,
    .find_all = NULL,
    .export_all = cuda_export,
    .clear = gh__wd_clear,
    .size = gh__wd_size,
    .validate = gh__wd_validate,
    .keys_of_ids = NULL,
    .stats = cuda_stats,
    .device_view = cuda_device_view,
    .take_flags = gh__wd_take_flags,
    .mixed = NULL,
    .compact = cuda_compact,
    .join = NULL,
};
