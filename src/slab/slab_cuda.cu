/* slab_cuda.cu - the slab hash on the GPU: cooperative work sharing (Ashkiani et al. section IV),
 * by tiles of 8 lanes instead of the paper's whole warps. Every thread holds one operation; its
 * tile forms a work queue with a ballot and runs the queued operations one at a time, all 8 lanes
 * together: one slab is one coalesced 128-byte read (lane r reads words 4r .. 4r + 3 in one 16-byte
 * load, lane 7 the next address), and the decisions are OR-reductions of per-word masks (match,
 * EMPTY, TOMBSTONE). Why tiles: an operation is a chain of dependent slab reads, so a warp that
 * runs one at a time waits a full memory latency per operation; four tiles per warp keep four
 * reads in flight, and the 16-byte loads bring each entry's value with its key (no second read).
 * One kernel serves every operation (insert, erase, find, count, fill, and the two phases of a
 * multivalue erase), so a mixed batch is one kernel. SlabAlloc is per tile too: a tile keeps a
 * resident memory block whose 32 bitmap words are four per lane; a free bit is taken by ballot +
 * atomicCAS, a full block is replaced by a hashed choice, and after GH_SLAB_ALLOC_ATTEMPTS blocks
 * every block is scanned, so the host's reservation always suffices.
 *
 * The same decisions as the host backend (slab_host.c): EMPTY entries are the tail of a list,
 * map inserts of mixed batches claim only the first EMPTY entry, gh_insert also reuses tombstones
 * (first free entry after a scan to the first EMPTY one, re-decided after a lost CAS), erases swap
 * the key field for the tombstone. */
#include <cuda_runtime.h>

#include "core/kernels.cuh"
#include "gpuhash_device.cuh"

extern "C" {
#include "core/toolkit.h"
#include "slab/slab_table.h"
}

/* Launch shape. Each tile of kTile lanes may hold one spare slab: the host reserves one per
 * resident tile on top of a batch's count. */
static const int kBlockThreads = 128;
/* Lanes per operation: one 16-byte load per lane reads the whole 128-byte slab. */
static const unsigned kTile = 8;
static const unsigned kTileWords = GH_SLAB_LANES / kTile; /* slab words per lane: 4 */

static gh_slab_table *state(gh_table *t) { return (gh_slab_table *)t->impl; }

/* Internal operation codes: the public three, then the passes of count / find_all / erase. */
enum slab_op {
  SLAB_INSERT = GH_OP_INSERT,
  SLAB_ERASE = GH_OP_ERASE,
  SLAB_FIND = GH_OP_FIND,
  SLAB_COUNT = 4, /* values of the key: numbers[i] */
  SLAB_FILL = 5,  /* its values to values_out[numbers[i] ...] */
  SLAB_FIRST = 6, /* multivalue erase, phase 1: the key's first entry to first[i] */
  SLAB_ELECT = 7, /* phase 2: tombstone first[i] (the one op that does wins), then erase the rest */
  SLAB_ANY = -1   /* a kernel for every operation (slab_ops_kernel's ONLY) */
};

/* One kernel launch's arguments (by value, read in place as a __grid_constant__). */
typedef struct slab_args {
  gh_slab_geometry g;
  uint32_t *base;
  gh_slab_pool pool;
  gh_slab_counters *counters;
  const uint8_t *ops; /* per operation, or NULL: every operation is `op` */
  int op;
  const void *keys;
  const void *values;
  uint64_t n;
  void *values_out;      /* finds: the value or default_value; fill: the values */
  uint8_t *results_out;  /* per operation: the result byte (or, insert_failed_only, result == 2) */
  uint64_t *numbers;     /* count: counts out; fill: offsets in */
  void **first;          /* multivalue erase */
  uint64_t default_value;
  int policy;
  int mode;
  int erase_all;         /* multivalue: an erase removes every value */
  int insert_failed_only;
} slab_args;

template <unsigned KB, unsigned VB>
struct slab_shape {
  static const unsigned bytes = KB + VB <= 32 ? 4u : (KB + VB <= 64 ? 8u : 16u);
  static const unsigned words = bytes / 4u;       /* words per entry */
  static const unsigned per_slab = 120u / bytes;  /* entries per slab */
};

/* What a tile learns from one read of a slab, with as little traffic between lanes as possible
 * (lane exchanges share one pipe with the loads, which they would crowd out): which lanes hold a
 * match / an EMPTY / a TOMBSTONE entry (one ballot each), and on each lane its own four words and
 * which of them start such entries (bit k = word 4 rank + k). The next address (word 31, on the
 * last lane) is exchanged only when the walk goes on. */
typedef struct slab_view {
  unsigned match, empties, tombs;          /* lanes of the tile */
  unsigned my_match, my_empties, my_tombs; /* this lane's words */
  uint4 mine;                              /* words 4 rank .. 4 rank + 3 */
} slab_view;

/* Word k of four (selects, not an indexed array: that would go through local memory). */
static __device__ __forceinline__ uint32_t word_of(uint4 w, unsigned k) {
  return k == 0 ? w.x : (k == 1 ? w.y : (k == 2 ? w.z : w.w));
}

/* The bits of the entry that starts at word k of four words (k a multiple of the entry's words). */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ gh_slot_bits entry_in(uint4 w, unsigned k) {
  typedef slab_shape<KB, VB> S;
  gh_slot_bits b;
  b.lo = S::words == 1 ? word_of(w, k) : (word_of(w, k) | (uint64_t)word_of(w, k + 1u) << 32);
  b.hi = S::words == 4 ? (w.z | (uint64_t)w.w << 32) : ~0ull;
  return b;
}

static __device__ __forceinline__ unsigned lowest(unsigned mask) { return (unsigned)__ffs((int)mask) - 1u; }

/* The address of this lane's word k of slab. */
static __device__ __forceinline__ uint32_t *own_word(const gh_device_group &tile, uint32_t *slab, unsigned k) {
  return slab + tile.rank * kTileWords + k;
}

/* A word-sized value from lane src of the tile (one exchange for 32 bits, two for 64). */
template <unsigned BITS>
static __device__ __forceinline__ uint64_t broadcast_word(const gh_device_group &tile, uint64_t value, unsigned src) {
  if (BITS == 64) return gh_device_group_broadcast(tile, value, src);
  return __shfl_sync(tile.mask, (uint32_t)value, (int)(tile.first_lane + src));
}

/* One coalesced 128-byte read of a slab (L2, not L1: other SMs write slabs during a batch). A
 * 16-byte load holds whole entries, so an entry's key and value are read together. */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ slab_view read_slab(const gh_device_group &tile, const uint32_t *slab,
                                                      uint64_t stored) {
  typedef slab_shape<KB, VB> S;
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  const uint64_t empty = gh_slot_empty_key(KB);
  slab_view v;
  v.mine = __ldcg((const uint4 *)slab + tile.rank);
  v.my_match = v.my_empties = v.my_tombs = 0;
#pragma unroll
  for (unsigned k = 0; k < kTileWords; k += S::words) {
    if ((tile.rank * kTileWords + k) / S::words >= S::per_slab) continue; /* the auxiliary and next lanes */
    const uint64_t key = gh_slot_bits_key(f, entry_in<KB, VB>(v.mine, k));
    v.my_match |= (unsigned)(key == stored) << k;
    v.my_empties |= (unsigned)(key == empty) << k;
    v.my_tombs |= (unsigned)(key == empty - 1u) << k;
  }
  v.match = gh_device_group_ballot(tile, v.my_match != 0);
  v.empties = gh_device_group_ballot(tile, v.my_empties != 0);
  v.tombs = gh_device_group_ballot(tile, v.my_tombs != 0);
  return v;
}

/* The slab after this one, or NULL at the list's end. */
static __device__ __forceinline__ uint32_t *next_slab(const gh_device_group &tile, const gh_slab_pool *p,
                                                      const slab_view &v) {
  const uint32_t next = (uint32_t)broadcast_word<32>(tile, v.mine.w, kTile - 1u);
  return next == GH_SLAB_NULL ? NULL : gh_slab_at(p, next);
}

/* ---- SlabAlloc, a tile at a time ----------------------------------------------------------------- */

typedef struct tile_alloc {
  uint32_t who, attempt, resident; /* the same on every lane of the tile */
} tile_alloc;

/* The first of four bitmap words with a free bit (4 when none). */
static __device__ __forceinline__ unsigned first_free_word(uint4 w) {
  const uint32_t full = 0xFFFFFFFFu;
  return w.x != full ? 0u : (w.y != full ? 1u : (w.z != full ? 2u : (w.w != full ? 3u : 4u)));
}

static __device__ __forceinline__ void set_word(uint4 *w, unsigned k, uint32_t value) {
  w->x = k == 0 ? value : w->x;
  w->y = k == 1 ? value : w->y;
  w->z = k == 2 ? value : w->z;
  w->w = k == 3 ? value : w->w;
}

/* A free slab of the pool, taken by one CAS on a bitmap word of the tile's resident memory block
 * (the tile reads the block's 32 bitmap words, four per lane); GH_SLAB_NULL when none is left. */
static __device__ uint32_t tile_slab_alloc(const gh_device_group &tile, const gh_slab_pool *p,
                                           unsigned long long *in_use, tile_alloc *a) {
  if (p->total_blocks == 0) return GH_SLAB_NULL;
  const uint32_t tries = GH_SLAB_ALLOC_ATTEMPTS + p->total_blocks;
  for (uint32_t attempt = 0; attempt < tries; ++attempt) {
    uint32_t global;
    if (attempt < GH_SLAB_ALLOC_ATTEMPTS) {
      if (a->resident == GH_SLAB_NULL) a->resident = gh_slab_resident_block(p, a->who, a->attempt++);
      global = a->resident;
    } else {
      global = attempt - GH_SLAB_ALLOC_ATTEMPTS; /* the full scan */
    }
    uint32_t super, block;
    gh_slab_block_locate(p, global, &super, &block);
    uint32_t *bitmap = p->bitmap[super] + (uint64_t)block * GH_SLAB_BLOCK_WORDS + tile.rank * kTileWords;
    uint4 words = __ldcg((const uint4 *)bitmap);
    unsigned free_lanes = gh_device_group_ballot(tile, first_free_word(words) < 4);
    while (free_lanes) {
      const unsigned src = (unsigned)__ffs((int)free_lanes) - 1u;
      int ok = 0;
      unsigned unit = 0;
      if (tile.rank == src) {
        const unsigned k = first_free_word(words);
        const uint32_t seen = word_of(words, k), bit = (unsigned)__ffs((int)~seen) - 1u;
        const uint32_t before = atomicCAS(bitmap + k, seen, seen | (1u << bit));
        ok = before == seen;
        set_word(&words, k, ok ? (seen | (1u << bit)) : before);
        unit = (src * kTileWords + k) * 32u + bit;
      }
      ok = (int)gh_device_group_broadcast(tile, (uint64_t)ok, src);
      unit = (unsigned)gh_device_group_broadcast(tile, unit, src);
      if (ok) {
        if (tile.rank == 0) atomicAdd(in_use, 1ull);
        a->resident = global;
        return gh_slab_address(super, block, unit);
      }
      free_lanes = gh_device_group_ballot(tile, first_free_word(words) < 4);
    }
    if (attempt < GH_SLAB_ALLOC_ATTEMPTS) a->resident = GH_SLAB_NULL;
  }
  return GH_SLAB_NULL;
}

/* ---- One operation, the whole tile ------------------------------------------------------------------ */

/* What an operation leaves: code, removed and count on every lane; a find's value on lane `owner`
 * (the lane that read it: it writes the value out, no exchange). */
typedef struct op_result {
  uint8_t code;       /* the result byte (gh_mixed's meaning) */
  unsigned owner;     /* find: the lane holding the value */
  uint64_t removed;   /* entries erased */
  uint64_t value;     /* find: the value, on lane owner */
  uint64_t count;     /* count: values */
} op_result;

template <unsigned KB, unsigned VB>
static __device__ op_result tile_insert(const gh_device_group &tile, const slab_args &A, tile_alloc *ta,
                                        uint32_t *head, uint64_t stored, uint64_t value) {
  typedef slab_shape<KB, VB> S;
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  const uint64_t empty = gh_slot_empty_key(KB);
  const gh_slot_bits desired = gh_slot_pack(f, stored, value), blank = gh_slot_pack(f, empty, ~0ull);
  op_result r = {2, 0, 0, 0, 0};
  uint32_t spare = GH_SLAB_NULL;
  for (;;) {
    uint32_t *slab = head, *tail = head;
    /* The first free entry: the lane that holds it (kTile: none yet), and on that lane its address
     * and whether it is EMPTY. */
    unsigned target_lane = kTile;
    uint32_t *target = NULL;
    bool merged = false, target_empty = false;
    for (;;) {
      const slab_view v = read_slab<KB, VB>(tile, slab, stored);
      if (A.mode != GH_SLAB_APPEND && v.match) {
        if (tile.rank == lowest(v.match))
          gh_slot_update_value(f, own_word(tile, slab, lowest(v.my_match)), A.policy, value);
        merged = true;
        break;
      }
      const bool reuse = A.mode != GH_SLAB_FRONTIER;
      const unsigned candidates = v.empties | (reuse ? v.tombs : 0u);
      if (target_lane == kTile && candidates) {
        target_lane = lowest(candidates);
        if (tile.rank == target_lane) {
          const unsigned k = lowest(v.my_empties | (reuse ? v.my_tombs : 0u));
          target = own_word(tile, slab, k);
          target_empty = (v.my_empties >> k) & 1u;
        }
      }
      /* EMPTY entries are the tail of the list; multivalue takes the first free entry. */
      if (v.empties || (A.mode == GH_SLAB_APPEND && target_lane != kTile)) break;
      tail = slab;
      slab = next_slab(tile, &A.pool, v);
      if (slab == NULL) break;
    }
    if (merged) {
      r.code = 0;
      break;
    }
    if (target_lane != kTile) {
      int ok = 0;
      if (tile.rank == target_lane) {
        /* An EMPTY entry is all ones; a tombstone keeps old value bits, so it is read first. */
        const gh_slot_bits seen = target_empty ? blank : gh_slot_load(f, target);
        const uint64_t k = gh_slot_bits_key(f, seen);
        if (k == empty || (A.mode != GH_SLAB_FRONTIER && k == empty - 1u))
          ok = gh_slot_bits_equal(gh_slot_cas(f, target, seen, desired), seen);
      }
      if (gh_device_group_ballot(tile, ok)) {
        r.code = 1;
        break;
      }
      continue; /* lost the entry: decide again from the list's start */
    }
    /* No free entry: link a new slab that already holds the entry. */
    if (spare == GH_SLAB_NULL) spare = tile_slab_alloc(tile, &A.pool, &A.counters->slabs_in_use, ta);
    if (spare == GH_SLAB_NULL) break; /* r.code 2: no memory */
    uint32_t *fresh = gh_slab_at(&A.pool, spare);
    uint4 words;
#pragma unroll
    for (unsigned j = 0; j < kTileWords; ++j) {
      const unsigned at = tile.rank * kTileWords + j;
      set_word(&words, j, at < S::words ? (uint32_t)((at < 2 ? desired.lo : desired.hi) >> (32u * (at % 2u))) : ~0u);
    }
    __stcg((uint4 *)fresh + tile.rank, words);
    __threadfence();
    __syncwarp(tile.mask);
    int linked = 0;
    if (tile.rank == 0) linked = atomicCAS(&tail[GH_SLAB_NEXT_LANE], GH_SLAB_NULL, spare) == GH_SLAB_NULL;
    if (gh_device_group_ballot(tile, linked)) {
      spare = GH_SLAB_NULL;
      r.code = 1;
      break;
    }
    /* Another tile linked first: its slab may hold the key now; ours is kept for the next try. */
  }
  if (spare != GH_SLAB_NULL && tile.rank == 0) gh_slab_free(&A.pool, &A.counters->slabs_in_use, spare);
  __syncwarp(tile.mask);
  return r;
}

/* The sum of x over the lanes of the tile before this one. */
static __device__ __forceinline__ unsigned lanes_before(const gh_device_group &tile, unsigned x) {
  unsigned sum = x;
#pragma unroll
  for (unsigned d = 1; d < kTile; d <<= 1) {
    const unsigned below = __shfl_up_sync(tile.mask, sum, d, kTile);
    if (tile.rank >= d) sum += below;
  }
  return sum - x;
}

template <unsigned KB, unsigned VB>
static __device__ op_result tile_op(const gh_device_group &tile, const slab_args &A, tile_alloc *ta, int op,
                                    uint64_t key, uint64_t value, uint64_t index) {
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  uint64_t stored;
  uint32_t *head = A.base + gh_slab_bucket(&A.g, key, &stored) * GH_SLAB_LANES;
  op_result r = {0, 0, 0, 0, 0};
  if (op == SLAB_INSERT) return tile_insert<KB, VB>(tile, A, ta, head, stored, value);
  if (op == SLAB_ELECT) {
    int won = 0;
    if (tile.rank == 0) won = A.first[index] != NULL && gh_slab_tombstone_entry(&A.g, A.first[index], stored);
    won = gh_device_group_ballot(tile, won) != 0;
    r.code = (uint8_t)won;
    r.removed = (uint64_t)won;
  }
  const uint64_t at = op == SLAB_FILL ? A.numbers[index] : 0;
  for (uint32_t *slab = head; slab != NULL;) {
    const slab_view v = read_slab<KB, VB>(tile, slab, stored);
    if (op == SLAB_ERASE || op == SLAB_ELECT) {
      const bool all = A.erase_all || op == SLAB_ELECT;
      const bool first_lane = v.match && tile.rank == lowest(v.match);
      unsigned tries = all ? v.my_match : (first_lane ? v.my_match & (0u - v.my_match) : 0u);
      unsigned removed = 0;
      for (; tries; tries &= tries - 1u)
        removed += (unsigned)gh_slab_tombstone_entry(&A.g, own_word(tile, slab, lowest(tries)), stored);
      removed = __reduce_add_sync(tile.mask, removed);
      r.removed += removed;
      if (op == SLAB_ERASE) r.code = r.removed > 0;
      if (!all && removed) break;
    } else if (op == SLAB_FIND || op == SLAB_FIRST) {
      if (v.match) {
        r.owner = lowest(v.match);
        if (tile.rank == r.owner) {
          const unsigned k = lowest(v.my_match);
          if (op == SLAB_FIND) r.value = gh_slot_bits_value(f, entry_in<KB, VB>(v.mine, k));
          if (op == SLAB_FIRST) A.first[index] = own_word(tile, slab, k);
        }
        r.code = 1;
        return r;
      }
    } else { /* SLAB_COUNT, SLAB_FILL */
      const unsigned here = __reduce_add_sync(tile.mask, (unsigned)__popc((int)v.my_match));
      if (op == SLAB_FILL && A.values_out && v.match) {
        /* Values in list order: those of the lanes before this one come first. */
        const uint64_t first = at + r.count + lanes_before(tile, (unsigned)__popc((int)v.my_match));
        for (unsigned mine = v.my_match; mine; mine &= mine - 1u) {
          const unsigned k = lowest(mine);
          const uint64_t position = first + (uint64_t)__popc((int)(v.my_match & ((1u << k) - 1u)));
          gh__write_word(A.values_out, position, VB, gh_slot_bits_value(f, entry_in<KB, VB>(v.mine, k)));
        }
      }
      r.count += here;
    }
    if (v.empties) break;
    slab = next_slab(tile, &A.pool, v);
  }
  if (op == SLAB_FIRST && tile.rank == 0) A.first[index] = NULL;
  return r;
}

/* The work queue: each lane brings one operation; its tile runs them one after the other, and the
 * four tiles of a warp have four slab reads in flight at once (one load instruction). ONLY is
 * SLAB_ANY (operations from A.ops or A.op) or the one operation of a gh_insert / gh_find: those
 * instantiations leave the other operations' code and registers out (more warps per SM). */
template <unsigned KB, unsigned VB, int ONLY>
__global__ void __launch_bounds__(kBlockThreads, ONLY == SLAB_FIND ? 16 : 1)
    slab_ops_kernel(const __grid_constant__ slab_args A) {
  const gh_device_group tile = gh_device_group_make(kTile);
  tile_alloc ta = {(uint32_t)(gh_thread_index() / kTile), 0u, GH_SLAB_NULL};
  unsigned long long inserted = 0, failed = 0, removed = 0, erased = 0, total = 0;
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(A.n); i += gh_grid_threads()) {
    const bool active = i < A.n;
    const int my_op = ONLY != SLAB_ANY ? ONLY : (active ? (A.ops ? (int)A.ops[i] : A.op) : 0);
    const uint64_t my_key = active ? gh__read_word(A.keys, i, KB) : 0;
    const uint64_t my_value = active && VB && A.values ? gh__read_word(A.values, i, VB) : 0;
    /* The tiles of a warp step through their queues together, one operation each per step, and
     * meet at the end of every step: a warp whose tiles drifted apart would run them one after
     * the other, each waiting for its own read. */
    const unsigned queue = gh_device_group_ballot(tile, active);
    for (unsigned src = 0; src < kTile; ++src) {
      const int op = ONLY != SLAB_ANY ? ONLY : (int)broadcast_word<32>(tile, (uint32_t)my_op, src);
      const uint64_t key = broadcast_word<KB>(tile, my_key, src);
      const uint64_t value = ONLY == SLAB_FIND || VB == 0 ? 0 : broadcast_word<VB == 0 ? 32 : VB>(tile, my_value, src);
      const uint64_t index = i - tile.rank + src; /* the lanes of a tile hold consecutive operations */
      if ((queue >> src) & 1u) {
        const op_result r = tile_op<KB, VB>(tile, A, &ta, op, key, value, index);
        const unsigned writer = op == SLAB_FIND && r.code ? r.owner : src;
        if (op == SLAB_FIND && VB && A.values_out && tile.rank == writer)
          gh__write_word(A.values_out, index, VB, r.code ? r.value : A.default_value);
        if (tile.rank == src) {
          if (op == SLAB_INSERT) {
            inserted += r.code == 1;
            failed += r.code == 2;
          }
          if (op == SLAB_ERASE || op == SLAB_ELECT) erased += r.code;
          removed += r.removed;
          total += r.count;
          if (op == SLAB_COUNT && A.numbers) A.numbers[i] = r.count;
          if (A.results_out && (op <= SLAB_FIND || op == SLAB_ELECT))
            A.results_out[i] = (uint8_t)(op == SLAB_INSERT && A.insert_failed_only ? r.code == 2 : r.code);
        }
      }
      __syncwarp();
    }
  }
  gh_warp_add(&A.counters->call.inserted, inserted);
  gh_warp_add(&A.counters->call.failed, failed);
  gh_warp_add(&A.counters->call.removed, removed);
  gh_warp_add(&A.counters->call.erased, erased);
  gh_warp_add(&A.counters->call.total, total);
  gh_warp_add(&A.counters->size, inserted - removed);
}

/* Reservation pass: one count per bucket; a new slab is needed for every per_slab inserts. */
template <unsigned KB>
__global__ void slab_count_kernel(gh_slab_geometry g, const uint8_t *ops, const void *keys, uint64_t n,
                                  uint32_t *bucket_counts, gh_slab_counters *counters) {
  unsigned long long needed = 0;
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(n); i += gh_grid_threads()) {
    if (i >= n || (ops && ops[i] != GH_OP_INSERT)) continue;
    uint64_t stored;
    const uint64_t b = gh_slab_bucket(&g, gh__read_word(keys, i, KB), &stored);
    needed += atomicAdd(&bucket_counts[b], 1u) % g.per_slab == 0;
  }
  gh_warp_add(&counters->call.total, needed);
}

/* FLUSH: one thread per list. */
__global__ void slab_compact_kernel(gh_slab_geometry g, uint32_t *base, gh_slab_pool pool, gh_slab_counters *counters) {
  for (uint64_t b = gh_thread_index(); b < g.buckets + 2; b += gh_grid_threads())
    gh_slab_compact_list(&g, &pool, &counters->slabs_in_use, base + b * GH_SLAB_LANES);
}

/* Export: one thread per list, positions from the call's cursor. */
template <unsigned KB, unsigned VB>
__global__ void slab_export_kernel(gh_slab_geometry g, uint32_t *base, gh_slab_pool pool, void *keys_out,
                                   void *values_out, gh_slab_counters *counters) {
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  const uint64_t empty = gh_slot_empty_key(KB);
  for (uint64_t b = gh_thread_index(); b < g.buckets + 2; b += gh_grid_threads()) {
    for (uint32_t *slab = base + b * GH_SLAB_LANES; slab != NULL; slab = gh_slab_next(&pool, slab)) {
      for (unsigned i = 0; i < g.per_slab; ++i) {
        const void *e = gh_slab_entry(f, slab, i);
        const uint64_t k = gh_slot_load_key(f, e);
        if (k == empty || k == empty - 1u) continue; /* as the host backend: every entry is looked at */
        const uint64_t at = atomicAdd(&counters->call.total, 1ull);
        gh__write_word(keys_out, at, KB, gh_slab_user_key(&g, b, k));
        if (VB && values_out) gh__write_word(values_out, at, VB, gh_slot_load_value(f, e));
      }
    }
  }
}

/* ---- Launching --------------------------------------------------------------------------------------- */

typedef struct slab_kernels {
  const void *ops, *insert, *find, *count, *export_all;
} slab_kernels;

static slab_kernels kernels_for(const gh_slab_geometry &g) {
  slab_kernels k = {NULL, NULL, NULL, NULL, NULL};
#define GH_SLAB_KERNELS_CASE(kb, vb)                                                   \
  if (g.format.key_bits == kb && g.format.value_bits == vb) {                          \
    k.ops = (const void *)slab_ops_kernel<kb, vb, SLAB_ANY>;                           \
    k.insert = (const void *)slab_ops_kernel<kb, vb, SLAB_INSERT>;                     \
    k.find = (const void *)slab_ops_kernel<kb, vb, SLAB_FIND>;                         \
    k.count = (const void *)slab_count_kernel<kb>;                                     \
    k.export_all = (const void *)slab_export_kernel<kb, vb>;                           \
  }
  GH_WIDTHS(GH_SLAB_KERNELS_CASE)
#undef GH_SLAB_KERNELS_CASE
  return k;
}

static slab_args args_for(gh_table *t) {
  gh_slab_table *s = state(t);
  slab_args a;
  memset(&a, 0, sizeof a);
  a.g = s->geometry;
  a.base = s->base;
  a.pool = s->pool;
  a.counters = s->counters;
  return a;
}

/* The instantiation that runs a launch: gh_insert's and gh_find's own, the general one otherwise. */
static const void *ops_kernel(const slab_args *a) {
  const slab_kernels k = kernels_for(a->g);
  if (a->ops == NULL && a->op == SLAB_INSERT) return k.insert;
  return a->ops == NULL && a->op == SLAB_FIND ? k.find : k.ops;
}

/* Runs the operations kernel; reads the call's counters back (the op's one wait). */
static gh_status run_ops(gh_table *t, slab_args *a, gh_slab_call_counters *after, void *stream) {
  void *args[] = {a};
  return gh__cuda_launch_counted(t, ops_kernel(a), a->n, kBlockThreads, args, &state(t)->counters->call,
                                 after, sizeof *after, stream);
}

typedef struct count_context {
  const uint8_t *ops;
  const void *keys;
  uint64_t n;
  void *stream;
} count_context;

static gh_status count_slabs(gh_table *t, void *context, uint32_t *bucket_counts, uint64_t *needed) {
  count_context *c = (count_context *)context;
  gh_slab_table *s = state(t);
  gh_slab_geometry g = s->geometry;
  void *args[] = {&g, (void *)&c->ops, (void *)&c->keys, &c->n, &bucket_counts, &s->counters};
  gh_slab_call_counters after;
  const gh_status status = gh__cuda_launch_counted(t, kernels_for(g).count, c->n, kBlockThreads, args,
                                                   &s->counters->call, &after, sizeof after, c->stream);
  if (status == GH_OK) *needed = after.total;
  return status;
}

/* Reserves a batch's slabs for the kernel that will run it: one spare per resident tile on top of
 * the count. */
static gh_status reserve_for(gh_table *t, const void *kernel, const uint8_t *ops, const void *keys, uint64_t n,
                             void *stream) {
  count_context c = {ops, keys, n, stream};
  const uint64_t tiles = (uint64_t)gh_cuda_resident_grid(n, kernel, kBlockThreads) * (uint64_t)(kBlockThreads / kTile);
  return gh__slab_reserve_batch(t, n, tiles + 1, count_slabs, &c, stream);
}

/* ---- Ops ----------------------------------------------------------------------------------------------- */

static gh_status cuda_insert(gh_table *t, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                             uint8_t *failed_out, uint64_t *failed, void *stream) {
  gh_status status = reserve_for(t, kernels_for(state(t)->geometry).insert, NULL, keys, n, stream);
  if (status != GH_OK) return status;
  slab_args a = args_for(t);
  a.op = SLAB_INSERT;
  a.keys = keys;
  a.values = values;
  a.n = n;
  a.results_out = failed_out;
  a.insert_failed_only = 1;
  a.policy = (int)policy;
  a.mode = gh_slab_insert_mode_for(t->config.variant == GH_VARIANT_MULTIVALUE, 0);
  gh_slab_call_counters after;
  status = run_ops(t, &a, &after, stream);
  if (status == GH_OK) *failed = after.failed;
  return status == GH_OK ? gh__slab_refresh(t, stream) : status;
}

static gh_status cuda_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                           uint64_t default_value, void *stream) {
  slab_args a = args_for(t);
  a.op = SLAB_FIND;
  a.keys = keys;
  a.n = n;
  a.values_out = values_out;
  a.results_out = found_out;
  a.default_value = default_value;
  void *args[] = {&a};
  return gh__cuda_launch(t, ops_kernel(&a), n, kBlockThreads, args, stream);
}

static gh_status cuda_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out, uint64_t *erased,
                            void *stream) {
  slab_args a = args_for(t);
  gh_scratch first = {NULL, 0, GH_MEMORY_DEVICE};
  gh_status status = GH_OK;
  a.keys = keys;
  a.n = n;
  a.results_out = erased_out;
  a.op = SLAB_ERASE;
  if (t->config.variant == GH_VARIANT_MULTIVALUE) {
    /* Two phases: every op finds its key's first entry, then the op whose CAS tombstones it is the
     * one position flagged, and all remove what is left. */
    status = gh__scratch_alloc(t, &first, (size_t)n * sizeof(void *));
    if (status != GH_OK) return status;
    a.first = (void **)first.ptr;
    a.op = SLAB_FIRST;
    void *args[] = {&a};
    status = gh__cuda_launch(t, kernels_for(a.g).ops, n, kBlockThreads, args, stream);
    a.op = SLAB_ELECT;
  }
  gh_slab_call_counters after;
  if (status == GH_OK) status = run_ops(t, &a, &after, stream);
  gh__scratch_free(t, &first, stream);
  if (status == GH_OK) *erased = after.erased;
  return status;
}

static gh_status cuda_count(gh_table *t, const void *keys, uint64_t n, uint64_t *counts_out, uint64_t *total,
                            void *stream) {
  if (t->config.variant != GH_VARIANT_MULTIVALUE) return gh__slab_single_value(t, "gh_count");
  slab_args a = args_for(t);
  a.op = SLAB_COUNT;
  a.keys = keys;
  a.n = n;
  a.numbers = counts_out;
  gh_slab_call_counters after;
  const gh_status status = run_ops(t, &a, &after, stream);
  if (status == GH_OK && total) *total = after.total;
  return status;
}

static gh_status cuda_find_all(gh_table *t, const void *keys, uint64_t n, uint64_t *offsets_out, void *values_out,
                               uint64_t values_capacity, void *stream) {
  if (t->config.variant != GH_VARIANT_MULTIVALUE) return gh__slab_single_value(t, "gh_find_all");
  slab_args a = args_for(t);
  a.op = SLAB_COUNT;
  a.keys = keys;
  a.n = n;
  a.numbers = offsets_out;
  gh_slab_call_counters after;
  uint64_t needed = 0;
  gh_status status = gh__fill(t, offsets_out + n, 0, sizeof(uint64_t), stream);
  if (status == GH_OK) status = run_ops(t, &a, &after, stream);
  if (status == GH_OK) status = gh__exclusive_sum_u64(t, offsets_out, offsets_out, n + 1, stream);
  if (status == GH_OK) status = gh__to_host(t, &needed, offsets_out + n, sizeof needed, stream);
  if (status != GH_OK) return status;
  if (needed > values_capacity)
    return gh__fail(t, GH_ERR_BUFFER_TOO_SMALL, "gh_find_all: the keys have %llu values but values_capacity is %llu; "
                    "offsets_out says where each key's values would go, no value was written",
                    (unsigned long long)needed, (unsigned long long)values_capacity);
  if (values_out == NULL) return GH_OK;
  a.op = SLAB_FILL;
  a.values_out = values_out;
  void *args[] = {&a};
  return gh__cuda_launch(t, kernels_for(a.g).ops, n, kBlockThreads, args, stream);
}

static gh_status cuda_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_slab_table *s = state(t);
  gh_slab_geometry g = s->geometry;
  gh_slab_pool pool = s->pool;
  void *args[] = {&g, &s->base, &pool, &keys_out, &values_out, &s->counters};
  gh_slab_call_counters after;
  const gh_status status = gh__cuda_launch_counted(t, kernels_for(g).export_all, g.buckets + 2, kBlockThreads,
                                                   args, &s->counters->call, &after, sizeof after, stream);
  if (status == GH_OK) *count = after.total;
  return status;
}

static gh_status cuda_mixed(gh_table *t, const uint8_t *ops, const void *keys, const void *values, uint64_t n,
                            gh_dup_policy policy, void *values_out, uint8_t *results_out, uint64_t *failed,
                            void *stream) {
  gh_status status = reserve_for(t, kernels_for(state(t)->geometry).ops, ops, keys, n, stream);
  if (status != GH_OK) return status;
  slab_args a = args_for(t);
  a.ops = ops;
  a.keys = keys;
  a.values = values;
  a.n = n;
  a.values_out = values_out;
  a.results_out = results_out;
  a.policy = (int)policy;
  a.mode = gh_slab_insert_mode_for(t->config.variant == GH_VARIANT_MULTIVALUE, 1);
  a.erase_all = t->config.variant == GH_VARIANT_MULTIVALUE;
  gh_slab_call_counters after;
  status = run_ops(t, &a, &after, stream);
  if (status == GH_OK) *failed = after.failed;
  return status == GH_OK ? gh__slab_refresh(t, stream) : status;
}

static gh_status cuda_compact(gh_table *t, void *stream) {
  gh_slab_table *s = state(t);
  gh_slab_geometry g = s->geometry;
  gh_slab_pool pool = s->pool;
  void *args[] = {&g, &s->base, &pool, &s->counters};
  const gh_status status =
      gh__cuda_launch(t, (const void *)slab_compact_kernel, g.buckets + 2, kBlockThreads, args, stream);
  return status == GH_OK ? gh__slab_refresh(t, stream) : status;
}

extern "C" const gh_table_ops gh__slab_cuda_ops = {
    .name = "slab/cuda",
    .init = gh__slab_init,
    .release = gh__slab_release,
    .insert = cuda_insert,
    .find = cuda_find,
    .erase = cuda_erase,
    .count = cuda_count,
    .find_all = cuda_find_all,
    .export_all = cuda_export,
    .clear = gh__slab_clear,
    .size = gh__slab_size,
    .validate = gh__slab_validate,
    .keys_of_ids = NULL,
    .stats = gh__slab_stats,
    .device_view = NULL,
    .take_flags = NULL,
    .mixed = cuda_mixed,
    .compact = cuda_compact,
};
