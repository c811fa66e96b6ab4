/* cuckoo_cuda.cu - the cuckoo primitives on the GPU: one thread per key (the chapter's design:
 * eviction chains are per-item and gain nothing from cooperation), grid-stride loops over a
 * resident grid, warp-aggregated counters and output cursors (core/kernels.cuh); sorting and
 * prefix sums come from the core toolkit.
 *
 * Only the hot kernels (prepare, place, find) are instantiated per (key, value) width pair so the
 * slot layout folds at compile time; the bookkeeping kernels take the format at run time, which
 * keeps the build small. */
#include <cuda_runtime.h>
#include <stdio.h>

#include "core/kernels.cuh"

extern "C" {
#include "core/toolkit.h"
#include "core/words.h"
#include "cuckoo/cuckoo_table.h"
}

static const int kBlockThreads = 256;

static gh_ck_table *state(gh_table *t) { return (gh_ck_table *)t->impl; }


/* The geometry with the widths as compile-time constants. */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ gh_ck_geometry constant_geometry(gh_ck_geometry g) {
  g.format = gh_slot_format_make(KB, VB);
  return g;
}


/* ---- Kernels --------------------------------------------------------------------------------- */

template <unsigned KB, unsigned VB>
__global__ void ck_prepare_kernel(gh_ck_geometry geometry, void *slots, const void *keys, const void *values,
                                  int source, uint64_t n, int policy, int check_present, void *entries,
                                  gh_ck_counters *counters) {
  const gh_ck_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_slot_format f = g.format;
  unsigned long long side_new = 0;
  for (uint64_t i = gh_thread_index(); i < gh_block_rounded(n); i += gh_grid_threads()) {
    int keep = 0;
    uint64_t key = 0, value = 0;
    if (i < n) {
      key = gh__read_word(keys, i, KB);
      value = source == GH_CK_VALUE_INDEX ? i : (source == GH_CK_VALUE_NO_ID ? GH_CK_NO_ID : (VB ? gh__read_word(values, i, VB) : 0));
      if (gh_ck_is_sentinel(&g, key)) {
        side_new += (unsigned long long)gh_side_insert(f, gh_ck_side_slot(&g, slots), value, policy);
      } else {
        const uint64_t at = check_present ? gh_ck_locate(&g, slots, key) : ~0ull;
        if (at != ~0ull) gh_slot_update_value(f, gh_ck_entry_at(&g, slots, at), policy, value);
        else keep = 1;
      }
    }
    const uint64_t position = gh_block_reserve(&counters->count, keep);
    if (keep) gh_slot_write(f, gh_slot_at(f, entries, position), gh_slot_pack(f, key, value));
  }
  gh_warp_add(&counters->side, side_new);
}

template <unsigned KB, unsigned VB>
__global__ void ck_place_kernel(gh_ck_geometry geometry, void *slots, void *entries, uint64_t m, int policy,
                                uint8_t *failed, uint32_t *moved, gh_ck_counters *counters) {
  const gh_ck_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_slot_format f = g.format;
  unsigned long long placed = 0, gave_up = 0;
  for (uint64_t i = gh_thread_index(); i < m; i += gh_grid_threads()) {
    void *entry = gh_slot_at(f, entries, i);
    gh_slot_bits held = gh_slot_read(f, entry);
    unsigned marks = 0; /* (the chapter's layout makes none) */
    const gh_ck_outcome outcome = gh_ck_insert_chain(&g, slots, &held, policy, moved, &marks);
    placed += outcome == GH_CK_PLACED;
    gave_up += outcome == GH_CK_GAVE_UP;
    gh_ck_chain_end(f, outcome, entry, held, &failed[i]);
  }
  gh_warp_add(&counters->placed, placed);
  gh_warp_add(&counters->gave_up, gave_up);
}

/* Keys one thread looks up together. A lookup is a chain of up to d dependent reads, and on a
 * table far larger than the TLB's reach each read waits long, so one key per thread leaves the
 * memory system idle; a thread that walks several keys' chains in lockstep keeps that many reads
 * in flight. H200, n = 2^27, d = 4, 1.25 n slots: 1 key per thread 6.4 G finds/s (all d reads of
 * a key at once: 7.5), 4 keys 18.3, 8 keys 18.9 (docs/benchmarks.md). */
#ifndef GH_CK_FIND_KEYS_PER_THREAD
#define GH_CK_FIND_KEYS_PER_THREAD 4
#endif

/* A lookup's start, shared by both find kernels: the key of position i (when i < n), the default
 * value, and the all-ones key answered from the side slot. Returns whether the key still needs
 * the table's slots. */
template <unsigned KB>
static __device__ __forceinline__ int ck_find_start(const gh_ck_geometry *g, void *slots, const void *keys, uint64_t i,
                                                    uint64_t n, uint64_t default_value, uint64_t *key,
                                                    uint64_t *value, int *found) {
  *key = i < n ? gh__read_word(keys, i, KB) : 0;
  *value = default_value;
  *found = 0;
  if (i >= n) return 0;
  if (!gh_ck_is_sentinel(g, *key)) return 1;
  *found = gh_side_find(g->format, gh_ck_side_slot(g, slots), value);
  return 0;
}

/* A lookup's end, shared by both find kernels: a key still pending is looked for in the stash
 * (STASH), then position i's outputs are written. */
template <unsigned VB, bool STASH>
static __device__ __forceinline__ void ck_find_finish(const gh_ck_geometry *g, void *slots, uint64_t i, int pending,
                                                      uint64_t key, uint64_t value, int found, void *values_out,
                                                      uint8_t *found_out) {
  if (STASH && pending) {
    const uint64_t at = gh_ck_stash_locate(g, key);
    if (at != ~0ull) {
      found = 1;
      value = gh_slot_load_value(g->format, gh_ck_entry_at(g, slots, at));
    }
  }
  if (VB && values_out) gh__write_word(values_out, i, VB, value);
  if (found_out) found_out[i] = (uint8_t)found;
}

/* STASH: the table has a stash to scan for keys missing from their d slots (rare: a separate
 * instantiation keeps the common kernel exactly the chapter's d reads). */
template <unsigned KB, unsigned VB, bool STASH>
__global__ void ck_find_kernel(gh_ck_geometry geometry, void *slots, const void *keys, uint64_t n, void *values_out,
                               uint8_t *found_out, uint64_t default_value) {
  const gh_ck_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_slot_format f = g.format;
  const uint64_t stride = gh_grid_threads();
  for (uint64_t first = gh_thread_index(); first < n; first += stride * GH_CK_FIND_KEYS_PER_THREAD) {
    uint64_t key[GH_CK_FIND_KEYS_PER_THREAD], value[GH_CK_FIND_KEYS_PER_THREAD];
    int pending[GH_CK_FIND_KEYS_PER_THREAD], found[GH_CK_FIND_KEYS_PER_THREAD];
#pragma unroll
    for (int j = 0; j < GH_CK_FIND_KEYS_PER_THREAD; ++j)
      pending[j] = ck_find_start<KB>(&g, slots, keys, first + j * stride, n, default_value, &key[j], &value[j], &found[j]);
    /* Round r reads every pending key's r-th slot; the reads of one round are independent. */
    for (unsigned r = 0; r < g.functions; ++r) {
      gh_slot_bits seen[GH_CK_FIND_KEYS_PER_THREAD];
#pragma unroll
      for (int j = 0; j < GH_CK_FIND_KEYS_PER_THREAD; ++j)
        if (pending[j]) seen[j] = gh_slot_load(f, gh_slot_at(f, slots, gh_ck_bucket(&g, key[j], r)));
#pragma unroll
      for (int j = 0; j < GH_CK_FIND_KEYS_PER_THREAD; ++j) {
        if (pending[j] && gh_slot_bits_key(f, seen[j]) == key[j]) {
          found[j] = 1;
          value[j] = gh_slot_bits_value(f, seen[j]);
          pending[j] = 0;
        }
      }
    }
#pragma unroll
    for (int j = 0; j < GH_CK_FIND_KEYS_PER_THREAD; ++j) {
      const uint64_t i = first + j * stride;
      if (i < n) ck_find_finish<VB, STASH>(&g, slots, i, pending[j], key[j], value[j], found[j], values_out, found_out);
    }
  }
}

/* A bucket read by a group of lanes in 16-byte pieces, one a lane (a piece holds 16 / slot_bytes
 * slots): fewer lanes a key than one a slot, so more keys in flight a warp. */
typedef struct ck_pieces {
  unsigned per;   /* slots a piece */
  unsigned lanes; /* lanes a bucket (the group's size) */
} ck_pieces;

static __device__ __forceinline__ ck_pieces ck_pieces_of(const gh_ck_geometry *g) {
  ck_pieces p;
  p.per = 16u / g->format.slot_bytes;
  p.lanes = (1u << g->bucket_shift) > p.per ? (1u << g->bucket_shift) / p.per : 1u;
  return p;
}

/* This lane's piece of a bucket: the first of its slots holding key (*match) and the first empty
 * one (*empty), p.per where none; *lo, *hi: the piece's bytes. */
static __device__ __forceinline__ void ck_scan_piece(const gh_ck_geometry *g, ck_pieces p, void *slots,
                                                     uint64_t bucket, unsigned rank, uint64_t key, unsigned *match,
                                                     unsigned *empty, uint64_t *lo, uint64_t *hi) {
  const gh_slot_format f = g->format;
  const uint64_t first = (bucket << g->bucket_shift) + (uint64_t)rank * p.per;
  const ulonglong2 piece = __ldcg((const ulonglong2 *)gh_slot_at(f, slots, first));
  *lo = piece.x;
  *hi = piece.y;
  *match = *empty = p.per;
  for (unsigned j = 0; j < p.per; ++j) {
    const uint64_t seen = gh_ck_key_in_chunk(f, piece.x, piece.y, first + j);
    if (seen == key && *match == p.per) *match = j;
    if (seen == gh_slot_empty_key(f.key_bits) && *empty == p.per) *empty = j;
  }
}

/* The bucketed chain of cuckoo.h (Insert) with a group of lanes per entry reading each bucket in
 * 16-byte pieces: one coalesced load a bucket scan, a ballot for the key and for an empty slot
 * (the lowest such slot, as the host's scan), the CAS or the eviction by the lane whose piece holds
 * the slot, the entry held broadcast to all. Same steps, same counting of steps and the same
 * choices (gh_ck_next_bucket, gh_ck_victim) as the host's thread per entry. */
template <unsigned KB, unsigned VB>
__global__ void ck_place_bucketed_kernel(gh_ck_geometry geometry, void *slots, void *entries, uint64_t m, int policy,
                                         uint8_t *failed, uint32_t *moved, gh_ck_counters *counters) {
  const gh_ck_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_slot_format f = g.format;
  const ck_pieces p = ck_pieces_of(&g);
  const gh_group_loop l = gh_group_loop_make(p.lanes);
  const uint64_t empty_key = gh_slot_empty_key(KB);
  const gh_slot_bits empty_bits = gh_slot_pack(f, empty_key, ~0ull);
  unsigned long long placed = 0, gave_up = 0;
  unsigned marks = 0;
  for (uint64_t i = l.first; i < m; i += l.stride) {
    void *entry = gh_slot_at(f, entries, i);
    gh_slot_bits held = gh_slot_read(f, entry);
    uint64_t key = gh_slot_bits_key(f, held), bucket = gh_ck_bucket(&g, key, 0);
    unsigned others_to_try = g.functions - 1u;
    int displaced_held = 0; /* the entry held was evicted from a slot */
    gh_ck_outcome outcome = GH_CK_GAVE_UP;
    for (unsigned step = 0; step < g.max_evictions; ++step) {
      unsigned match, empty;
      uint64_t lo, hi;
      ck_scan_piece(&g, p, slots, bucket, l.group.rank, key, &match, &empty, &lo, &hi);
      const uint64_t mine = (bucket << g.bucket_shift) + (uint64_t)l.group.rank * p.per;
      const uint32_t matching = gh_device_group_ballot(l.group, match < p.per);
      if (matching) {
        int merged = 0;
        if (l.group.rank == (unsigned)__ffs((int)matching) - 1u)
          merged = gh_slot_merge_if_key(f, gh_slot_at(f, slots, mine + match), key, policy, gh_slot_bits_value(f, held));
        if (gh_device_group_ballot(l.group, merged)) {
          outcome = GH_CK_MERGED;
          break;
        }
        continue; /* the copy moved on meanwhile: scan again */
      }
      const uint32_t emptying = gh_device_group_ballot(l.group, empty < p.per);
      if (emptying) {
        int taken = 0;
        if (l.group.rank == (unsigned)__ffs((int)emptying) - 1u) {
          taken = gh_slot_bits_key(f, gh_slot_cas(f, gh_slot_at(f, slots, mine + empty), empty_bits, held)) == empty_key;
          if (taken && displaced_held) gh_ck_mark_moved(moved, mine + empty, &marks);
        }
        if (gh_device_group_ballot(l.group, taken)) {
          outcome = GH_CK_PLACED;
          break;
        }
        continue; /* another chain took the slot: scan again */
      }
      if (others_to_try > 0) {
        others_to_try -= 1;
        bucket = gh_ck_next_bucket(&g, key, bucket);
        continue;
      }
      const unsigned victim = gh_ck_victim(&g, key, step), owner = victim / p.per;
      gh_slot_bits displaced = {0, 0};
      int merged = 0;
      if (l.group.rank == owner) {
        void *slot = gh_slot_at(f, slots, (bucket << g.bucket_shift) + victim);
        displaced = gh_slot_exchange(f, slot, held);
        gh_ck_mark_moved(moved, (bucket << g.bucket_shift) + victim, &marks);
        merged = gh_slot_bits_key(f, displaced) == key &&
                 gh_slot_merge_if_key(f, slot, key, policy, gh_slot_bits_value(f, displaced));
      }
      displaced.lo = gh_device_group_broadcast(l.group, displaced.lo, owner);
      displaced.hi = gh_device_group_broadcast(l.group, displaced.hi, owner);
      const uint64_t displaced_key = gh_slot_bits_key(f, displaced);
      if (displaced_key == empty_key) {
        outcome = GH_CK_PLACED;
        break;
      }
      if (gh_device_group_ballot(l.group, merged)) {
        outcome = GH_CK_MERGED;
        break;
      }
      held = displaced;
      key = displaced_key;
      bucket = gh_ck_next_bucket(&g, key, bucket);
      others_to_try = g.functions - 2u;
      displaced_held = 1;
    }
    if (l.group.rank != 0) continue;
    placed += outcome == GH_CK_PLACED;
    gave_up += outcome == GH_CK_GAVE_UP;
    gh_ck_chain_end(f, outcome, entry, held, &failed[i]);
  }
  gh_warp_add(&counters->placed, placed);
  gh_warp_add(&counters->gave_up, gave_up);
  gh_warp_add(&counters->count, marks);
}

/* Keys a group looks up together in the bucketed table: their bucket reads are in flight at once. */
#define GH_CK_BUCKET_FIND_KEYS 2

/* The bucketed table's lookups: a group of lanes reads a bucket in 16-byte pieces (one load a
 * lane, a coalesced 16- to 256-byte read) and ballots on the key; buckets in function order until
 * the key is seen, then the stash (STASH) for keys missing from all d. */
template <unsigned KB, unsigned VB, bool STASH>
__global__ void ck_find_bucketed_kernel(gh_ck_geometry geometry, void *slots, const void *keys, uint64_t n,
                                        void *values_out, uint8_t *found_out, uint64_t default_value) {
  const gh_ck_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_slot_format f = g.format;
  const ck_pieces p = ck_pieces_of(&g);
  const gh_group_loop l = gh_group_loop_make(p.lanes);
  const unsigned K = GH_CK_BUCKET_FIND_KEYS;
  for (uint64_t first = l.first; first < n; first += l.stride * K) {
    uint64_t key[K], value[K];
    int pending[K], found[K];
#pragma unroll
    for (unsigned j = 0; j < K; ++j)
      pending[j] = ck_find_start<KB>(&g, slots, keys, first + j * l.stride, n, default_value, &key[j], &value[j], &found[j]);
    for (unsigned r = 0; r < g.functions; ++r) {
      unsigned match[K], empty;
      uint64_t lo[K], hi[K];
#pragma unroll
      for (unsigned j = 0; j < K; ++j)
        if (pending[j])
          ck_scan_piece(&g, p, slots, gh_ck_bucket(&g, key[j], r), l.group.rank, key[j], &match[j], &empty, &lo[j],
                        &hi[j]);
#pragma unroll
      for (unsigned j = 0; j < K; ++j) {
        if (!pending[j]) continue;
        const uint32_t hits = gh_device_group_ballot(l.group, match[j] < p.per);
        if (hits == 0) continue;
        const unsigned owner = (unsigned)__ffs((int)hits) - 1u;
        const uint64_t mine = gh_ck_value_in_chunk(f, lo[j], hi[j], (uint64_t)l.group.rank * p.per + match[j]);
        value[j] = gh_device_group_broadcast(l.group, mine, owner);
        found[j] = 1;
        pending[j] = 0;
      }
    }
#pragma unroll
    for (unsigned j = 0; j < K; ++j) {
      const uint64_t i = first + j * l.stride;
      if (i < n && l.group.rank == 0)
        ck_find_finish<VB, STASH>(&g, slots, i, pending[j], key[j], value[j], found[j], values_out, found_out);
    }
  }
}

__global__ void ck_absorb_kernel(gh_ck_geometry g, void *slots, const void *entries, uint8_t *failed, uint64_t m,
                                 int policy, gh_ck_counters *counters) {
  const gh_slot_format f = g.format;
  unsigned long long remaining = 0;
  for (uint64_t i = gh_thread_index(); i < m; i += gh_grid_threads()) {
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
  gh_warp_add(&counters->count, remaining);
}

__global__ void ck_dedupe_kernel(gh_ck_geometry g, void *slots, int policy, gh_ck_counters *counters) {
  unsigned long long removed = 0;
  for (uint64_t i = gh_thread_index(); i < g.slot_count; i += gh_grid_threads())
    removed += (unsigned long long)gh_ck_dedupe_slot(&g, slots, i, policy);
  gh_warp_add(&counters->count, removed);
}

/* gh_ck_dedupe_slot for the bucketed table, a group per bucket (a lane per slot): copies in the
 * same bucket find each other by __match_any_sync; a key whose bucket is not its first function's
 * has its earlier buckets read by the whole group, one coalesced load each. Each copy merges into
 * the earliest (the same order as gh_ck_earlier_copy: earlier functions' buckets, then earlier
 * slots of its own). */
__global__ void ck_dedupe_bucketed_kernel(gh_ck_geometry g, void *slots, int policy, gh_ck_counters *counters) {
  const gh_slot_format f = g.format;
  const gh_group_loop l = gh_group_loop_make(1u << g.bucket_shift);
  const uint64_t empty_key = gh_slot_empty_key(f.key_bits);
  unsigned long long removed = 0;
  for (uint64_t bucket = l.first; bucket < g.bucket_count; bucket += l.stride) {
    const uint64_t at = (bucket << g.bucket_shift) + l.group.rank;
    void *slot = gh_slot_at(f, slots, at);
    const gh_slot_bits bits = gh_slot_load(f, slot);
    const uint64_t key = gh_slot_bits_key(f, bits);
    const int holds = key != empty_key;
    const unsigned own = holds ? gh_ck_function_of(&g, key, at) : 0u;
    uint64_t earlier = ~0ull;
    /* Keys held in a later function's bucket: the group reads their earlier buckets, key by key. */
    uint32_t searching = gh_device_group_ballot(l.group, holds && own > 0);
    while (searching) {
      const unsigned lane = (unsigned)__ffs((int)searching) - 1u;
      searching &= searching - 1u;
      const uint64_t wanted = gh_device_group_broadcast(l.group, key, lane);
      const unsigned functions = (unsigned)gh_device_group_broadcast(l.group, own, lane);
      uint64_t found = ~0ull;
      for (unsigned i = 0; i < functions && found == ~0ull; ++i) {
        const uint64_t other = (gh_ck_bucket(&g, wanted, i) << g.bucket_shift) + l.group.rank;
        const uint32_t hits =
            gh_device_group_ballot(l.group, gh_slot_load_key(f, gh_slot_at(f, slots, other)) == wanted);
        if (hits) found = other - l.group.rank + (unsigned)__ffs((int)hits) - 1u;
      }
      if (l.group.rank == lane) earlier = found;
    }
    /* Copies in this bucket: the lowest lane holding the key is the earliest of them. */
    const unsigned same = __match_any_sync(l.group.mask, (unsigned long long)key) >> l.group.first_lane;
    const unsigned first_same = (unsigned)__ffs((int)same) - 1u;
    if (holds && earlier == ~0ull && first_same != l.group.rank) earlier = at - l.group.rank + first_same;
    if (holds && earlier != ~0ull) {
      gh_slot_merge_if_key(f, gh_slot_at(f, slots, earlier), key, policy, gh_slot_bits_value(f, bits));
      gh_slot_exchange(f, slot, gh_slot_pack(f, empty_key, ~0ull));
      removed += 1;
    }
  }
  gh_warp_add(&counters->count, removed);
}

/* gh_ck_resolve_copies for each slot marked in `moved`: a thread a word of the bitmap (mostly
 * zero: the marked slots are the few the eviction chains wrote). */
__global__ void ck_dedupe_moved_kernel(gh_ck_geometry g, void *slots, const uint32_t *moved, int policy,
                                       gh_ck_counters *counters) {
  unsigned long long removed = 0;
  const uint64_t words = (g.slot_count + 31u) / 32u;
  for (uint64_t word = gh_thread_index(); word < gh_warp_rounded(words); word += gh_grid_threads())
    for (uint32_t bits = word < words ? moved[word] : 0u; bits != 0; bits &= bits - 1u)
      removed += gh_ck_resolve_copies(&g, slots, word * 32u + (uint64_t)(__ffs((int)bits) - 1), policy);
  gh_warp_add(&counters->count, removed);
}

__global__ void ck_dedupe_stash_kernel(gh_ck_geometry g, int policy, gh_ck_counters *counters) {
  unsigned long long removed = 0;
  for (uint64_t j = gh_thread_index(); j < gh_warp_rounded(g.stash_slots); j += gh_grid_threads())
    removed += j < g.stash_slots ? (unsigned long long)gh_ck_dedupe_stash_entry(&g, j, policy) : 0ull;
  gh_warp_add(&counters->count, removed);
}

__global__ void ck_clear_unflagged_kernel(gh_slot_format f, void *entries, const uint8_t *flags, uint64_t m) {
  for (uint64_t i = gh_thread_index(); i < m; i += gh_grid_threads())
    if (!flags[i]) gh_slot_write(f, gh_slot_at(f, entries, i), gh_slot_pack(f, gh_slot_empty_key(f.key_bits), ~0ull));
}

__global__ void ck_gather_kernel(gh_ck_geometry g, int include_slots, const void *slots, const void *entries,
                                 const uint8_t *failed, uint64_t m, void *out, gh_ck_counters *counters) {
  const gh_slot_format f = g.format;
  const uint64_t empty = gh_slot_empty_key(f.key_bits);
  const uint64_t main = include_slots ? g.slot_count : 0, total = main + m;
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(total); i += gh_grid_threads()) {
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
    const uint64_t position = gh_warp_reserve(&counters->count, keep);
    if (keep) gh_slot_write(f, gh_slot_at(f, out, position), bits);
  }
}

__global__ void ck_erase_kernel(gh_ck_geometry g, void *slots, const void *keys, uint64_t n, uint8_t *erased_out,
                                gh_ck_counters *counters) {
  unsigned long long erased = 0, side = 0, stash = 0;
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(n); i += gh_grid_threads()) {
    gh_ck_erased where = GH_CK_ABSENT;
    if (i < n) {
      where = gh_ck_erase(&g, slots, gh__read_word(keys, i, g.format.key_bits));
      if (erased_out) erased_out[i] = where != GH_CK_ABSENT;
    }
    erased += where == GH_CK_ERASED_MAIN;
    side += where == GH_CK_ERASED_SIDE;
    stash += where == GH_CK_ERASED_STASH;
  }
  gh_warp_add(&counters->count, erased);
  gh_warp_add(&counters->side, side);
  gh_warp_add(&counters->stash, stash);
}

/* Exports (key, value) of every position holding a key (main slots, side slot, stash). */
__global__ void ck_export_kernel(gh_ck_geometry g, const void *slots, void *keys_out, void *values_out,
                                 gh_ck_counters *counters) {
  const gh_slot_format f = g.format;
  const uint64_t positions = gh_ck_position_count(&g);
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(positions); i += gh_grid_threads()) {
    int keep = 0;
    uint64_t key = 0, value = 0;
    if (i < positions) {
      const gh_slot_bits bits = gh_slot_read(f, gh_ck_entry_at(&g, (void *)slots, i));
      key = gh_slot_bits_key(f, bits);
      value = gh_slot_bits_value(f, bits);
      keep = gh_ck_holds_key(&g, i, &key);
    }
    const uint64_t position = gh_warp_reserve(&counters->count, keep);
    if (keep) {
      gh__write_word(keys_out, position, f.key_bits, key);
      if (values_out && f.value_bits) gh__write_word(values_out, position, f.value_bits, value);
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
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(positions); i += gh_grid_threads()) {
    void *slot = i < positions ? gh_ck_entry_at(&g, slots, i) : NULL;
    gh_slot_bits bits = {0, 0};
    uint64_t key = 0;
    int unassigned = 0;
    if (slot) {
      bits = gh_slot_read(f, slot);
      key = gh_slot_bits_key(f, bits);
      unassigned = gh_ck_holds_key(&g, i, &key) && gh_slot_bits_value(f, bits) == no_id;
    }
    const uint64_t id = first_id + gh_warp_reserve(&counters->count, unassigned);
    if (!unassigned) continue;
    gh_slot_write(f, slot, gh_slot_pack(f, gh_slot_bits_key(f, bits), id));
    gh__write_word(keys_by_id, id, f.key_bits, key);
  }
}

__global__ void ck_keys_of_ids_kernel(const void *keys_by_id, uint64_t id_count, const void *ids, uint64_t n,
                                      unsigned key_bits, unsigned id_bits, void *keys_out, gh_ck_counters *counters) {
  unsigned long long bad = 0;
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(n); i += gh_grid_threads()) {
    if (i >= n) continue;
    const uint64_t id = gh__read_word(ids, i, id_bits);
    if (id >= id_count) {
      bad += 1;
      continue;
    }
    gh__write_word(keys_out, i, key_bits, gh__read_word(keys_by_id, id, key_bits));
  }
  gh_warp_add(&counters->count, bad);
}

__global__ void ck_info_kernel(const uint64_t *firsts, const uint64_t *counts, uint64_t unique, gh_ck_key_info *info) {
  for (uint64_t i = gh_thread_index(); i < unique; i += gh_grid_threads()) {
    info[i].first = firsts[i];
    info[i].count = counts[i];
  }
}

/* counts[i] for n keys; counts[n] = 0 so one exclusive scan of n + 1 gives the total too. */
__global__ void ck_counts_kernel(const gh_ck_key_info *info, const uint32_t *ids, const uint8_t *found, uint64_t n,
                                 uint64_t *counts) {
  for (uint64_t i = gh_thread_index(); i <= n; i += gh_grid_threads())
    counts[i] = i < n && (found == NULL || found[i]) ? info[ids[i]].count : 0;
}

__global__ void ck_removed_values_kernel(const gh_ck_key_info *info, const uint32_t *ids, const uint8_t *removed,
                                         uint64_t n, gh_ck_counters *counters) {
  unsigned long long values = 0;
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(n); i += gh_grid_threads())
    values += i < n && removed[i] ? info[ids[i]].count : 0;
  gh_warp_add(&counters->count, values);
}

/* One thread per key copies its values (keys are few values each on average; a key with many
 * values is one long loop, which the chapter's retrieval has too). */
__global__ void ck_gather_values_kernel(const gh_ck_key_info *info, const void *sorted_values, const uint32_t *ids,
                                        const uint8_t *found, const uint64_t *offsets, uint64_t n,
                                        uint64_t default_value, const void *keys,
                                        void *keys_out, void *values_out, unsigned key_bits, unsigned value_bits) {
  for (uint64_t i = gh_thread_index(); i < n; i += gh_grid_threads()) {
    const int present = found == NULL || found[i];
    if (offsets == NULL) {
      const uint64_t value = present ? gh__read_word(sorted_values, info[ids[i]].first, value_bits) : default_value;
      gh__write_word(values_out, i, value_bits, value);
      continue;
    }
    if (!present) continue;
    const gh_ck_key_info key_info = info[ids[i]];
    const uint64_t key = keys_out ? gh__read_word(keys, i, key_bits) : 0;
    for (uint64_t j = 0; j < key_info.count; ++j) {
      gh__write_word(values_out, offsets[i] + j, value_bits, gh__read_word(sorted_values, key_info.first + j, value_bits));
      if (keys_out) gh__write_word(keys_out, offsets[i] + j, key_bits, key);
    }
  }
}

/* ---- First buckets by regions (cuckoo.h) -------------------------------------------------------- */

/* The partition's digits: each entry's region. */
template <unsigned KB, unsigned VB>
__global__ void ck_first_digits_kernel(gh_ck_geometry geometry, const void *entries, uint64_t m, void *digits,
                                       unsigned digit_bytes) {
  const gh_ck_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_slot_format f = g.format;
  for (uint64_t i = gh_thread_index(); i < m; i += gh_grid_threads()) {
    const uint64_t key = gh_slot_bits_key(f, gh_slot_read(f, gh_slot_at(f, (void *)entries, i)));
    gh_partition_digit(digits, digit_bytes, i, gh_ck_first_region(&g, key));
  }
}

/* A block a region, in shared memory: 512 threads, three blocks an SM (64 KB each, and the set of
 * passed entries, 8 KB). */
static const int kRegionThreads = 512;
static const int kRegionBlocksPerSM = 3;

/* The lanes that pass a word on write it at the next places of the batch's entries (*cursor: one
 * atomic a warp; every lane calls it). */
static __device__ __forceinline__ void ck_pass_on(const gh_ck_geometry *g, void *entries, unsigned long long *cursor,
                                                  int passes, uint64_t word) {
  if (__ballot_sync(0xFFFFFFFFu, passes) == 0) return;
  const uint64_t at = gh_warp_reserve_n(cursor, passes ? 1u : 0u);
  if (passes) gh_slot_write(g->format, gh_slot_at(g->format, entries, at), gh_ck_word_entry(g, word));
}

/* Block r builds region r: its words start empty (the table holds no keys); each warp puts its
 * share of the region's run of sorted entries in (a lane's next entry loaded while it puts one),
 * its warps apart (no barrier until the region is done); an entry whose first bucket is full goes
 * into the region's set of passed entries (merged with a copy there), or, the set full, straight
 * to the batch's entries. Then the block appends the set to them and writes the region out whole,
 * coalesced. A region without entries keeps its empty slots. */
template <unsigned KB, unsigned VB>
__global__ void __launch_bounds__(kRegionThreads, kRegionBlocksPerSM)
    ck_first_region_kernel(gh_ck_geometry geometry, void *slots, const void *sorted, const uint64_t *starts,
                           void *entries, int policy, gh_ck_counters *counters) {
  extern __shared__ unsigned long long ck_region_words[];
  __shared__ uint64_t passed_set[GH_REGION_SET_WORDS];
  const uint64_t region = blockIdx.x, begin = starts[region], end = starts[region + 1u];
  if (begin == end) return;
  const gh_ck_geometry g = constant_geometry<KB, VB>(geometry);
  const gh_slot_format f = g.format;
  const uint64_t region_slots = gh_ck_region_slots(&g, region);
  uint64_t *words = (uint64_t *)ck_region_words;
  for (uint64_t j = threadIdx.x; j < region_slots; j += blockDim.x) words[j] = GH_REGION_EMPTY;
  for (unsigned j = threadIdx.x; j < GH_REGION_SET_WORDS; j += blockDim.x) passed_set[j] = GH_REGION_EMPTY;
  __syncthreads();
  const unsigned lane = threadIdx.x % 32u;
  unsigned long long inserted = 0, spilled = 0;
  const uint64_t warp_first = begin + (threadIdx.x - lane);
  gh_slot_bits next = {~0ull, ~0ull};
  if (warp_first + lane < end) next = gh_slot_read(f, gh_slot_at(f, (void *)sorted, warp_first + lane));
  for (uint64_t step = warp_first; step < end; step += blockDim.x) {
    const uint64_t i = step + lane;
    const gh_slot_bits entry = next;
    if (i + blockDim.x < end) next = gh_slot_read(f, gh_slot_at(f, (void *)sorted, i + blockDim.x));
    gh_region_outcome outcome = GH_REGION_MERGED;
    uint64_t word = 0;
    if (i < end) outcome = gh_ck_first_put(&g, words, passed_set, region, entry, policy, &word);
    inserted += outcome == GH_REGION_INSERTED;
    spilled += outcome == GH_REGION_FULL;
    ck_pass_on(&g, entries, &counters->count, outcome == GH_REGION_FULL, word);
  }
  gh_warp_add(&counters->placed, inserted);
  gh_warp_add(&counters->gave_up, spilled);
  __syncthreads();
  for (unsigned j = threadIdx.x; j < GH_REGION_SET_WORDS; j += blockDim.x)
    ck_pass_on(&g, entries, &counters->count, passed_set[j] != GH_REGION_EMPTY, passed_set[j]);
  for (uint64_t j = threadIdx.x; j < region_slots; j += blockDim.x) gh_ck_first_store(&g, slots, region, words, j);
}

/* ---- Launching -------------------------------------------------------------------------------- */

static gh_status launch(gh_table *t, const void *kernel, uint64_t threads, void *stream, void **args) {
  return gh__cuda_launch(t, kernel, threads, kBlockThreads, args, stream);
}

/* Launches a kernel that accumulates into the table's counters and reads them back (the point
 * where an operation that needs a count on the host waits). */
static gh_status run_counted(gh_table *t, const void *kernel, uint64_t threads, void **args, gh_ck_counters *after,
                             void *stream) {
  return gh__cuda_launch_counted(t, kernel, threads, kBlockThreads, args, state(t)->counters, after, sizeof *after,
                                 stream);
}

/* The lanes of a bucketed kernel's group (ck_pieces_of, on the host). */
static uint64_t piece_lanes(const gh_ck_geometry *g) {
  const uint64_t per = 16u / g->format.slot_bytes, slots = 1ull << g->bucket_shift;
  return slots > per ? slots / per : 1u;
}

typedef struct hot_kernels {
  const void *prepare, *place, *place_bucketed, *find, *find_with_stash, *find_bucketed, *find_bucketed_with_stash;
  const void *first_digits, *first_region; /* NULL where a slot takes 16 bytes */
} hot_kernels;

/* The first-bucket kernels of a width pair, or NULL where a slot is wider than a region's word. */
template <unsigned KB, unsigned VB, bool ONE_WORD = (KB + VB <= 64u)>
struct ck_first_kernels_of {
  static const void *digits(void) { return (const void *)ck_first_digits_kernel<KB, VB>; }
  static const void *region(void) { return (const void *)ck_first_region_kernel<KB, VB>; }
};
template <unsigned KB, unsigned VB>
struct ck_first_kernels_of<KB, VB, false> {
  static const void *digits(void) { return NULL; }
  static const void *region(void) { return NULL; }
};


static hot_kernels kernels_for(gh_slot_format f) {
  hot_kernels k = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
#define GH_CK_KERNELS_CASE(kb, vb)                                                   \
  if (f.key_bits == kb && f.value_bits == vb) {                                      \
    k.prepare = (const void *)ck_prepare_kernel<kb, vb>;                             \
    k.place = (const void *)ck_place_kernel<kb, vb>;                                 \
    k.place_bucketed = (const void *)ck_place_bucketed_kernel<kb, vb>;               \
    k.find = (const void *)ck_find_kernel<kb, vb, false>;                            \
    k.find_with_stash = (const void *)ck_find_kernel<kb, vb, true>;                  \
    k.find_bucketed = (const void *)ck_find_bucketed_kernel<kb, vb, false>;          \
    k.find_bucketed_with_stash = (const void *)ck_find_bucketed_kernel<kb, vb, true>; \
    k.first_digits = ck_first_kernels_of<kb, vb>::digits();                          \
    k.first_region = ck_first_kernels_of<kb, vb>::region();                          \
  }
  GH_WIDTHS(GH_CK_KERNELS_CASE)
#undef GH_CK_KERNELS_CASE
  return k;
}

/* ---- Primitives ------------------------------------------------------------------------------- */

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
                            uint8_t *failed, uint32_t *moved, uint64_t *placed, uint64_t *gave_up, uint64_t *marks,
                            void *stream) {
  gh_ck_geometry geometry = *g;
  void *slots = state(t)->slots;
  gh_ck_counters *counters = state(t)->counters;
  void *args[] = {&geometry, &slots, &entries, &m, &policy, &failed, &moved, &counters};
  gh_ck_counters after;
  const hot_kernels kernels = kernels_for(g->format);
  gh_status status = g->bucket_shift > 0 ? run_counted(t, kernels.place_bucketed, m * piece_lanes(g), args, &after, stream)
                                         : run_counted(t, kernels.place, m, args, &after, stream);
  if (status != GH_OK) return status;
  *placed = after.placed;
  *gave_up = after.gave_up;
  *marks = after.count;
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
  gh_status status = g->bucket_shift > 0
                         ? run_counted(t, (const void *)ck_dedupe_bucketed_kernel, g->slot_count, args, &after, stream)
                         : run_counted(t, (const void *)ck_dedupe_kernel, g->slot_count, args, &after, stream);
  if (status == GH_OK) *removed = after.count;
  return status;
}

static gh_status cuda_dedupe_moved(gh_table *t, const gh_ck_geometry *g, const uint32_t *moved, int policy,
                                   uint64_t *removed, void *stream) {
  gh_ck_geometry geometry = *g;
  void *slots = state(t)->slots;
  gh_ck_counters *counters = state(t)->counters;
  void *args[] = {&geometry, &slots, (void *)&moved, &policy, &counters};
  gh_ck_counters after;
  const gh_status status =
      run_counted(t, (const void *)ck_dedupe_moved_kernel, (g->slot_count + 31u) / 32u, args, &after, stream);
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
  if (g->bucket_shift > 0)
    return launch(t, g->stash_slots ? kernels.find_bucketed_with_stash : kernels.find_bucketed,
                  (n + GH_CK_BUCKET_FIND_KEYS - 1u) / GH_CK_BUCKET_FIND_KEYS * piece_lanes(g), stream, args);
  return launch(t, g->stash_slots ? kernels.find_with_stash : kernels.find, n, stream, args);
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

static gh_status cuda_key_info(gh_table *t, const uint64_t *firsts, const uint64_t *counts, uint64_t unique,
                               gh_ck_key_info *info, void *stream) {
  void *args[] = {(void *)&firsts, (void *)&counts, &unique, &info};
  return launch(t, (const void *)ck_info_kernel, unique, stream, args);
}

static gh_status cuda_value_counts(gh_table *t, const gh_ck_key_info *info, const uint32_t *ids, const uint8_t *found,
                                   uint64_t n, uint64_t *counts, void *stream) {
  void *args[] = {(void *)&info, (void *)&ids, (void *)&found, &n, &counts};
  return launch(t, (const void *)ck_counts_kernel, n + 1, stream, args);
}

static gh_status cuda_removed_values(gh_table *t, const gh_ck_key_info *info, const uint32_t *ids,
                                     const uint8_t *removed, uint64_t n, uint64_t *total, void *stream) {
  gh_ck_counters *counters = state(t)->counters;
  void *args[] = {(void *)&info, (void *)&ids, (void *)&removed, &n, &counters};
  gh_ck_counters after;
  gh_status status = run_counted(t, (const void *)ck_removed_values_kernel, n, args, &after, stream);
  if (status == GH_OK) *total = after.count;
  return status;
}

static gh_status cuda_gather_values(gh_table *t, const gh_ck_key_info *info, const void *sorted_values,
                                    const uint32_t *ids, const uint8_t *found, const uint64_t *offsets, uint64_t n,
                                    uint64_t default_value, const void *keys, void *keys_out, void *values_out,
                                    void *stream) {
  unsigned key_bits = t->config.key_bits, value_bits = t->config.value_bits;
  void *args[] = {(void *)&info, (void *)&sorted_values, (void *)&ids, (void *)&found, (void *)&offsets, &n,
                  &default_value, (void *)&keys, &keys_out, &values_out, &key_bits, &value_bits};
  return launch(t, (const void *)ck_gather_values_kernel, n, stream, args);
}

static size_t cuda_first_work_bytes(gh_table *t, uint64_t m, uint64_t regions) {
  return gh__cuda_partition_bytes(m, state(t)->geometry.format.slot_bytes, (unsigned)regions);
}

static gh_status cuda_partition_first(gh_table *t, const gh_ck_geometry *g, const void *entries, uint64_t m, void *sorted,
                                      void *work, size_t work_bytes, uint64_t *longest, void *stream) {
  const unsigned regions = (unsigned)gh_ck_regions(g);
  gh_partition_work w = gh__cuda_partition_work(work, work_bytes, m, regions);
  gh_ck_geometry geometry = *g;
  void *args[] = {&geometry, (void *)&entries, &m, &w.digits_in, &w.digit_bytes};
  gh_status status = launch(t, kernels_for(g->format).first_digits, m, stream, args);
  if (status == GH_OK)
    status = gh__cuda_partition(t, &w, entries, sorted, m, g->format.slot_bytes, regions, longest, stream);
  return status;
}

static gh_status cuda_place_first(gh_table *t, const gh_ck_geometry *g, const void *sorted, void *work, size_t work_bytes,
                                  uint64_t m, int policy, void *entries, uint64_t *placed, uint64_t *passed,
                                  uint64_t *spilled, void *stream) {
  const uint64_t regions = gh_ck_regions(g);
  const gh_partition_work w = gh__cuda_partition_work(work, work_bytes, m, (unsigned)regions);
  gh_ck_geometry geometry = *g;
  void *slots = state(t)->slots;
  gh_ck_counters *counters = state(t)->counters;
  const uint64_t *starts = w.starts;
  void *args[] = {&geometry, &slots, (void *)&sorted, (void *)&starts, &entries, &policy, &counters};
  gh_ck_counters after;
  gh_status status = gh__fill(t, counters, 0, sizeof *counters, stream);
  if (status == GH_OK)
    status = gh__cuda_launch_regions(t, kernels_for(g->format).first_region, regions, kRegionThreads,
                                     GH_REGION_WORDS * sizeof(uint64_t), args, stream);
  if (status == GH_OK) status = gh__to_host(t, &after, counters, sizeof after, stream);
  if (status != GH_OK) return status;
  *placed = after.placed;
  *passed = after.count;
  *spilled = after.gave_up;
  return GH_OK;
}

extern "C" const gh_ck_backend gh__cuckoo_cuda_backend = {
    .prepare = cuda_prepare,
    .place = cuda_place,
    .absorb = cuda_absorb,
    .dedupe = cuda_dedupe,
    .dedupe_moved = cuda_dedupe_moved,
    .dedupe_stash = cuda_dedupe_stash,
    .clear_unflagged = cuda_clear_unflagged,
    .gather = cuda_gather,
    .find = cuda_find,
    .erase = cuda_erase,
    .export_pairs = cuda_export,
    .assign_ids = cuda_assign_ids,
    .keys_of_ids = cuda_keys_of_ids,
    .key_info = cuda_key_info,
    .value_counts = cuda_value_counts,
    .removed_values = cuda_removed_values,
    .gather_values = cuda_gather_values,
    .first_work_bytes = cuda_first_work_bytes,
    .partition_first = cuda_partition_first,
    .place_first = cuda_place_first,
    .first_by_default = 1,
    /* (a block a region, up to the grid's 2^31 - 1) */
    .max_regions = 0x7FFFFFFFu,
};
