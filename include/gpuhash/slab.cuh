/*
 * gpuhash/slab.cuh - use a slab hash table from your own CUDA kernels.
 *
 * On the host: gh_get_device_view(table, &view) for a slab table on the CUDA backend; pass the view
 * to your kernel by value. The calls below are warp-wide, in the paper's work-sharing style: every
 * lane of a converged warp calls with its own operation (active = 0 for a lane without one), the
 * warp queues them with ballots and runs them a tile of 8 lanes at a time, each slab one coalesced
 * 128-byte read. Every lane gets its own result.
 *
 *   gh_slab_device_find(view, active, key, &value)      1 found (value set), 0 not
 *   gh_slab_device_insert(view, active, key, value, p)  1 inserted, 0 merged into the key's entry by
 *                                                       policy p (map), 2 no free slab (nothing changed)
 *   gh_slab_device_erase(view, active, key)             1 erased, 0 absent (multivalue: every value)
 *
 * Semantics are those of a gh_mixed batch: operations of one kernel (or of kernels running at the
 * same time) are concurrent, a find racing with an insert or an erase of its key sees it or not,
 * and a map never gets a second entry for a key. A multivalue insert appends (p is ignored).
 * Inserts and erases keep the size counter (gh_size reads it after your kernel).
 *
 * Memory: an insert that needs a new slab takes it from SlabAlloc, which only grows between host
 * calls (each gh_insert / gh_mixed leaves at least a quarter of its slabs free). An insert that
 * finds no free slab returns 2 and changes nothing; insert those keys with gh_insert. The view stays
 * valid across host calls (it follows the table when its buckets grow), but no host call may run
 * on the table while a kernel uses the view.
 */
#ifndef GPUHASH_SLAB_CUH
#define GPUHASH_SLAB_CUH

#include "gpuhash_device.cuh"
#include "gpuhash/detail/slab.h"

/* ---- Tile-level operations (the library's kernels use these too) ---------------------------- */

/* Lanes per operation: lane r of a tile reads words 4r .. 4r + 3 of a slab in one 16-byte load,
 * so the tile reads the whole 128-byte slab at once and each entry's value with its key. */
#define GH_SLAB_TILE 8u
#define GH_SLAB_TILE_WORDS (GH_SLAB_LANES / GH_SLAB_TILE)

/* Entry size in words and entries per slab for a (key, value) width pair. */
template <unsigned KB, unsigned VB>
struct gh_slab_shape {
  static const unsigned bytes = KB + VB <= 32 ? 4u : (KB + VB <= 64 ? 8u : 16u);
  static const unsigned words = bytes / 4u;
  static const unsigned per_slab = 120u / bytes;
};

/* What a tile learns from one read of a slab, with as little traffic between lanes as possible
 * (lane exchanges share one pipe with the loads, which they would crowd out): which lanes hold a
 * match / an EMPTY / a TOMBSTONE entry (one ballot each), and on each lane its own four words and
 * which of them start such entries (bit k = word 4 rank + k). The next address (word 31, on the
 * last lane) is exchanged only when the walk goes on. */
typedef struct gh_slab_view {
  unsigned match, empties, tombs;          /* lanes of the tile */
  unsigned my_match, my_empties, my_tombs; /* this lane's words */
  uint4 mine;                              /* words 4 rank .. 4 rank + 3 */
} gh_slab_view;

/* Word k of four (selects, not an indexed array: that would go through local memory). */
static __device__ __forceinline__ uint32_t gh_slab_word_of(uint4 w, unsigned k) {
  return k == 0 ? w.x : (k == 1 ? w.y : (k == 2 ? w.z : w.w));
}

static __device__ __forceinline__ void gh_slab_set_word(uint4 *w, unsigned k, uint32_t value) {
  w->x = k == 0 ? value : w->x;
  w->y = k == 1 ? value : w->y;
  w->z = k == 2 ? value : w->z;
  w->w = k == 3 ? value : w->w;
}

/* The bits of the entry that starts at word k of four words (k a multiple of the entry's words). */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ gh_slot_bits gh_slab_entry_in(uint4 w, unsigned k) {
  typedef gh_slab_shape<KB, VB> S;
  gh_slot_bits b;
  b.lo = S::words == 1 ? gh_slab_word_of(w, k) : (gh_slab_word_of(w, k) | (uint64_t)gh_slab_word_of(w, k + 1u) << 32);
  b.hi = S::words == 4 ? (w.z | (uint64_t)w.w << 32) : ~0ull;
  return b;
}

static __device__ __forceinline__ unsigned gh_slab_lowest(unsigned mask) { return (unsigned)__ffs((int)mask) - 1u; }

/* The address of this lane's word k of slab. */
static __device__ __forceinline__ uint32_t *gh_slab_own_word(const gh_device_group &tile, uint32_t *slab, unsigned k) {
  return slab + tile.rank * GH_SLAB_TILE_WORDS + k;
}

/* A word-sized value from lane src of the tile (one exchange for 32 bits, two for 64). */
template <unsigned BITS>
static __device__ __forceinline__ uint64_t gh_slab_broadcast_word(const gh_device_group &tile, uint64_t value,
                                                                  unsigned src) {
  if (BITS == 64) return gh_device_group_broadcast(tile, value, src);
  return __shfl_sync(tile.mask, (uint32_t)value, (int)(tile.first_lane + src));
}

/* This lane's part of one coalesced 128-byte read of a slab (L2, not L1: other SMs write slabs
 * during a batch). */
static __device__ __forceinline__ uint4 gh_slab_load(const gh_device_group &tile, const uint32_t *slab) {
  return __ldcg((const uint4 *)slab + tile.rank);
}

/* The words of this lane's four that start an entry (bit k = word 4 rank + k): every entry-sized
 * step, except on the last lane, whose words past the data (the auxiliary and next lanes) are not. */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ unsigned gh_slab_entry_words(const gh_device_group &tile) {
  typedef gh_slab_shape<KB, VB> S;
  unsigned all = 0, last = 0;
#pragma unroll
  for (unsigned k = 0; k < GH_SLAB_TILE_WORDS; k += S::words) {
    all |= 1u << k;
    last |= (unsigned)(((GH_SLAB_TILE - 1u) * GH_SLAB_TILE_WORDS + k) / S::words < S::per_slab) << k;
  }
  return tile.rank == GH_SLAB_TILE - 1u ? last : all;
}

/* What the tile learns from the words `mine` it read of a slab, looking for the key `stored`
 * (without branches: the masks are computed for every word and cut to the entries'). TOMBS = false
 * leaves the tombstones out (a find needs none). */
template <unsigned KB, unsigned VB, bool TOMBS = true>
static __device__ __forceinline__ gh_slab_view gh_slab_classify(const gh_device_group &tile, uint4 mine,
                                                                uint64_t stored) {
  typedef gh_slab_shape<KB, VB> S;
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  const uint64_t empty = gh_slot_empty_key(KB);
  const unsigned entries = gh_slab_entry_words<KB, VB>(tile);
  gh_slab_view v;
  v.mine = mine;
  v.my_match = v.my_empties = v.my_tombs = 0;
#pragma unroll
  for (unsigned k = 0; k < GH_SLAB_TILE_WORDS; k += S::words) {
    const uint64_t key = gh_slot_bits_key(f, gh_slab_entry_in<KB, VB>(v.mine, k));
    v.my_match |= (unsigned)(key == stored) << k;
    v.my_empties |= (unsigned)(key == empty) << k;
    if (TOMBS) v.my_tombs |= (unsigned)(key == empty - 1u) << k;
  }
  v.my_match &= entries;
  v.my_empties &= entries;
  v.my_tombs &= entries;
  v.match = gh_device_group_ballot(tile, v.my_match != 0);
  v.empties = gh_device_group_ballot(tile, v.my_empties != 0);
  v.tombs = TOMBS ? gh_device_group_ballot(tile, v.my_tombs != 0) : 0u;
  return v;
}

template <unsigned KB, unsigned VB>
static __device__ __forceinline__ gh_slab_view gh_slab_read(const gh_device_group &tile, const uint32_t *slab,
                                                            uint64_t stored) {
  return gh_slab_classify<KB, VB>(tile, gh_slab_load(tile, slab), stored);
}

/* The slab after the one read into v, or NULL at the list's end. */
static __device__ __forceinline__ uint32_t *gh_slab_after(const gh_device_group &tile, const gh_slab_pool *p,
                                                          const gh_slab_view &v) {
  const uint32_t next = (uint32_t)gh_slab_broadcast_word<32>(tile, v.mine.w, GH_SLAB_TILE - 1u);
  return next == GH_SLAB_NULL ? NULL : gh_slab_at(p, next);
}

/* ---- SlabAlloc, a tile at a time ---------------------------------------------------------------- */

/* A tile's allocator state: its resident memory block (the same on every lane of the tile). */
typedef struct gh_slab_tile_alloc {
  uint32_t who, attempt, resident;
} gh_slab_tile_alloc;

static __device__ __forceinline__ gh_slab_tile_alloc gh_slab_tile_alloc_make(uint32_t who) {
  gh_slab_tile_alloc a = {who, 0u, GH_SLAB_NULL};
  return a;
}

/* The first of four bitmap words with a free bit (4 when none). */
static __device__ __forceinline__ unsigned gh_slab_first_free_word(uint4 w) {
  const uint32_t full = 0xFFFFFFFFu;
  return w.x != full ? 0u : (w.y != full ? 1u : (w.z != full ? 2u : (w.w != full ? 3u : 4u)));
}

/* A free slab of the pool, taken by one CAS on a bitmap word of the tile's resident memory block
 * (the tile reads the block's 32 bitmap words, four per lane); a full block is replaced by a hashed
 * choice, and after GH_SLAB_ALLOC_ATTEMPTS blocks every block is scanned, so a reservation made by
 * the host always suffices. GH_SLAB_NULL when none is left. */
static __device__ uint32_t gh_slab_tile_take(const gh_device_group &tile, const gh_slab_pool *p,
                                             unsigned long long *in_use, gh_slab_tile_alloc *a) {
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
    uint32_t *bitmap = p->bitmap[super] + (uint64_t)block * GH_SLAB_BLOCK_WORDS + tile.rank * GH_SLAB_TILE_WORDS;
    uint4 words = __ldcg((const uint4 *)bitmap);
    unsigned free_lanes = gh_device_group_ballot(tile, gh_slab_first_free_word(words) < 4);
    while (free_lanes) {
      const unsigned src = gh_slab_lowest(free_lanes);
      int ok = 0;
      unsigned unit = 0;
      if (tile.rank == src) {
        const unsigned k = gh_slab_first_free_word(words);
        const uint32_t seen = gh_slab_word_of(words, k), bit = (unsigned)__ffs((int)~seen) - 1u;
        const uint32_t before = atomicCAS(bitmap + k, seen, seen | (1u << bit));
        ok = before == seen;
        gh_slab_set_word(&words, k, ok ? (seen | (1u << bit)) : before);
        unit = (src * GH_SLAB_TILE_WORDS + k) * 32u + bit;
      }
      ok = (int)gh_device_group_broadcast(tile, (uint64_t)ok, src);
      unit = (unsigned)gh_device_group_broadcast(tile, unit, src);
      if (ok) {
        if (tile.rank == 0) atomicAdd(in_use, 1ull);
        a->resident = global;
        return gh_slab_address(super, block, unit);
      }
      free_lanes = gh_device_group_ballot(tile, gh_slab_first_free_word(words) < 4);
    }
    if (attempt < GH_SLAB_ALLOC_ATTEMPTS) a->resident = GH_SLAB_NULL;
  }
  return GH_SLAB_NULL;
}

/* ---- One operation, the whole tile ---------------------------------------------------------------- */

/* The result codes of an insert (gh_mixed's): merged into the key's entry, inserted, no memory. */
#define GH_SLAB_MERGED 0u
#define GH_SLAB_INSERTED 1u
#define GH_SLAB_NO_MEMORY 2u

/* A list's head slab as this lane read it ahead (a kernel loads the heads of several operations at
 * once, so that their reads are in flight together), or nothing yet (have = 0). By value: a pointer
 * into the caller's registers would put them in local memory. */
typedef struct gh_slab_ahead {
  uint4 words;
  bool have;
} gh_slab_ahead;

static __device__ __forceinline__ gh_slab_ahead gh_slab_no_ahead(void) {
  gh_slab_ahead a;
  a.words = make_uint4(0u, 0u, 0u, 0u);
  a.have = false;
  return a;
}

/* The tile's first read of a list: the head read ahead, or a read now. A read made earlier is as
 * good as a late one: every decision made on it is confirmed by a CAS, or stands as one that a
 * concurrent batch allows. */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ gh_slab_view gh_slab_read_first(const gh_device_group &tile, const uint32_t *head,
                                                                  uint64_t stored, gh_slab_ahead ahead) {
  return gh_slab_classify<KB, VB>(tile, ahead.have ? ahead.words : gh_slab_load(tile, head), stored);
}

/* Inserts (stored, value) into the list at head (see gh_slab_insert_mode for how it chooses its
 * entry); every lane gets the result code. ahead: the head read before, if it was. */
template <unsigned KB, unsigned VB>
static __device__ unsigned gh_slab_tile_insert(const gh_device_group &tile, const gh_slab_device_table &T,
                                               gh_slab_tile_alloc *ta, gh_slab_insert_mode mode, int policy,
                                               uint32_t *head, uint64_t stored, uint64_t value, gh_slab_ahead ahead) {
  typedef gh_slab_shape<KB, VB> S;
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  const uint64_t empty = gh_slot_empty_key(KB);
  const gh_slot_bits desired = gh_slot_pack(f, stored, value), blank = gh_slot_pack(f, empty, ~0ull);
  unsigned code = GH_SLAB_NO_MEMORY;
  uint32_t spare = GH_SLAB_NULL;
  for (;;) {
    uint32_t *slab = head, *tail = head;
    /* The first free entry: the lane that holds it (GH_SLAB_TILE: none yet), and on that lane its
     * address and whether it is EMPTY. */
    unsigned target_lane = GH_SLAB_TILE;
    uint32_t *target = NULL;
    bool merged = false, target_empty = false;
    for (;;) {
      const gh_slab_view v = slab == head ? gh_slab_read_first<KB, VB>(tile, head, stored, ahead)
                                          : gh_slab_read<KB, VB>(tile, slab, stored);
      if (mode != GH_SLAB_APPEND && v.match) {
        if (tile.rank == gh_slab_lowest(v.match))
          gh_slot_update_value(f, gh_slab_own_word(tile, slab, gh_slab_lowest(v.my_match)), policy, value);
        merged = true;
        break;
      }
      const bool reuse = mode != GH_SLAB_FRONTIER;
      const unsigned candidates = v.empties | (reuse ? v.tombs : 0u);
      if (target_lane == GH_SLAB_TILE && candidates) {
        target_lane = gh_slab_lowest(candidates);
        if (tile.rank == target_lane) {
          const unsigned k = gh_slab_lowest(v.my_empties | (reuse ? v.my_tombs : 0u));
          target = gh_slab_own_word(tile, slab, k);
          target_empty = (v.my_empties >> k) & 1u;
        }
      }
      /* EMPTY entries are the tail of the list; multivalue takes the first free entry. */
      if (v.empties || (mode == GH_SLAB_APPEND && target_lane != GH_SLAB_TILE)) break;
      tail = slab;
      slab = gh_slab_after(tile, &T.pool, v);
      if (slab == NULL) break;
    }
    if (merged) {
      code = GH_SLAB_MERGED;
      break;
    }
    if (target_lane != GH_SLAB_TILE) {
      int ok = 0;
      if (tile.rank == target_lane) {
        /* An EMPTY entry is all ones; a tombstone keeps old value bits, so it is read again. */
        const gh_slot_bits seen = target_empty ? blank : gh_slot_load(f, target);
        const uint64_t k = gh_slot_bits_key(f, seen);
        if (k == empty || (mode != GH_SLAB_FRONTIER && k == empty - 1u))
          ok = gh_slot_bits_equal(gh_slot_cas(f, target, seen, desired), seen);
      }
      if (gh_device_group_ballot(tile, ok)) {
        code = GH_SLAB_INSERTED;
        break;
      }
      ahead.have = false;
      continue; /* lost the entry: decide again from the list's start, read afresh */
    }
    /* No free entry: link a new slab that already holds the entry. */
    if (spare == GH_SLAB_NULL) spare = gh_slab_tile_take(tile, &T.pool, T.slabs_in_use, ta);
    if (spare == GH_SLAB_NULL) break; /* no memory */
    uint32_t *fresh = gh_slab_at(&T.pool, spare);
    uint4 words;
#pragma unroll
    for (unsigned j = 0; j < GH_SLAB_TILE_WORDS; ++j) {
      const unsigned at = tile.rank * GH_SLAB_TILE_WORDS + j;
      gh_slab_set_word(&words, j, at < S::words ? (uint32_t)((at < 2 ? desired.lo : desired.hi) >> (32u * (at % 2u))) : ~0u);
    }
    __stcg((uint4 *)fresh + tile.rank, words);
    __threadfence();
    __syncwarp(tile.mask);
    int linked = 0;
    if (tile.rank == 0) linked = atomicCAS(&tail[GH_SLAB_NEXT_LANE], GH_SLAB_NULL, spare) == GH_SLAB_NULL;
    if (gh_device_group_ballot(tile, linked)) {
      spare = GH_SLAB_NULL;
      code = GH_SLAB_INSERTED;
      break;
    }
    /* Another tile linked first: its slab may hold the key now; ours is kept for the next try. */
    ahead.have = false;
  }
  if (spare != GH_SLAB_NULL && tile.rank == 0) gh_slab_free(&T.pool, T.slabs_in_use, spare);
  __syncwarp(tile.mask);
  return code;
}

/* Looks stored up in the list at head: 1 on every lane when found; then on lane *owner (the lane
 * that read it) *value is its value and *entry its address. ahead: the head read before, if it was. */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ int gh_slab_tile_find(const gh_device_group &tile, const gh_slab_device_table &T,
                                                        uint32_t *head, uint64_t stored, unsigned *owner,
                                                        uint64_t *value, void **entry, gh_slab_ahead ahead) {
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  for (uint32_t *slab = head; slab != NULL;) {
    const gh_slab_view v = slab == head ? gh_slab_read_first<KB, VB>(tile, head, stored, ahead)
                                        : gh_slab_read<KB, VB>(tile, slab, stored);
    if (v.match) {
      *owner = gh_slab_lowest(v.match);
      if (tile.rank == *owner) {
        const unsigned k = gh_slab_lowest(v.my_match);
        *value = gh_slot_bits_value(f, gh_slab_entry_in<KB, VB>(v.mine, k));
        *entry = gh_slab_own_word(tile, slab, k);
      }
      return 1;
    }
    if (v.empties) break;
    slab = gh_slab_after(tile, &T.pool, v);
  }
  return 0;
}

/* Erases the first entry of stored in the list at head, or every one (all); returns on every lane
 * how many this call removed. ahead: the head read before, if it was. */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ uint64_t gh_slab_tile_erase(const gh_device_group &tile, const gh_slab_device_table &T,
                                                              uint32_t *head, uint64_t stored, bool all,
                                                              gh_slab_ahead ahead) {
  uint64_t removed = 0;
  for (uint32_t *slab = head; slab != NULL;) {
    const gh_slab_view v = slab == head ? gh_slab_read_first<KB, VB>(tile, head, stored, ahead)
                                        : gh_slab_read<KB, VB>(tile, slab, stored);
    const bool first_lane = v.match && tile.rank == gh_slab_lowest(v.match);
    unsigned tries = all ? v.my_match : (first_lane ? v.my_match & (0u - v.my_match) : 0u);
    unsigned here = 0;
    for (; tries; tries &= tries - 1u)
      here += (unsigned)gh_slab_tombstone_entry(&T.g, gh_slab_own_word(tile, slab, gh_slab_lowest(tries)), stored);
    here = __reduce_add_sync(tile.mask, here);
    removed += here;
    if ((!all && here) || v.empties) break;
    slab = gh_slab_after(tile, &T.pool, v);
  }
  return removed;
}

/* ---- Warp-wide calls on a device view -------------------------------------------------------- */

/* The operations of one warp, a tile at a time: each tile takes its lanes' operations one after
 * the other. body(tile, table, src, key, value, &result) runs one operation (the whole tile) and
 * leaves its result for lane src in result. Every lane of the warp must call. */
template <unsigned KB, unsigned VB, typename Body>
static __device__ __forceinline__ uint64_t gh_slab_warp_queue(const gh_device_view &view, int active, uint64_t key,
                                                              uint64_t value, Body body) {
  const gh_slab_device_table &T = *(const gh_slab_device_table *)view.slots;
  const gh_device_group tile = gh_device_group_make(GH_SLAB_TILE);
  const unsigned queue = gh_device_group_ballot(tile, active);
  uint64_t mine = 0;
  for (unsigned src = 0; src < GH_SLAB_TILE; ++src) {
    const uint64_t k = gh_slab_broadcast_word<KB>(tile, key, src);
    const uint64_t v = VB ? gh_slab_broadcast_word<VB == 0 ? 32 : VB>(tile, value, src) : 0;
    if ((queue >> src) & 1u) {
      const uint64_t r = body(tile, T, src, k, v);
      if (tile.rank == src) mine = r;
    }
    __syncwarp();
  }
  return mine;
}

/* The calls, for each width pair the table may have (the view says which). */
#define GH_SLAB_DEVICE_WIDTHS(X) X(32, 0) X(32, 32) X(32, 64) X(64, 0) X(64, 32) X(64, 64)

template <unsigned KB, unsigned VB>
static __device__ int gh_slab_device_find_w(const gh_device_view &view, int active, uint64_t key, uint64_t *value) {
  uint64_t found_value = 0;
  const uint64_t found = gh_slab_warp_queue<KB, VB>(
      view, active, key, 0,
      [&](const gh_device_group &tile, const gh_slab_device_table &T, unsigned src, uint64_t k, uint64_t) -> uint64_t {
        uint64_t stored, v = 0;
        unsigned owner = 0;
        void *entry = NULL;
        uint32_t *head = T.base + gh_slab_bucket(&T.g, k, &stored) * GH_SLAB_LANES;
        const int hit = gh_slab_tile_find<KB, VB>(tile, T, head, stored, &owner, &v, &entry, gh_slab_no_ahead());
        v = hit ? gh_device_group_broadcast(tile, v, owner) : 0;
        if (tile.rank == src) found_value = v;
        return (uint64_t)hit;
      });
  if (found && value) *value = found_value;
  return (int)found;
}

template <unsigned KB, unsigned VB>
static __device__ int gh_slab_device_insert_w(const gh_device_view &view, int active, uint64_t key, uint64_t value,
                                              gh_dup_policy policy) {
  const int multivalue = view.layout[0] == (uint64_t)GH_VARIANT_MULTIVALUE;
  const gh_slab_insert_mode mode = gh_slab_insert_mode_for(multivalue, 1);
  gh_slab_tile_alloc ta = gh_slab_tile_alloc_make((uint32_t)(((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / GH_SLAB_TILE));
  const uint64_t code = gh_slab_warp_queue<KB, VB>(
      view, active, key, value,
      [&](const gh_device_group &tile, const gh_slab_device_table &T, unsigned, uint64_t k, uint64_t v) -> uint64_t {
        uint64_t stored;
        uint32_t *head = T.base + gh_slab_bucket(&T.g, k, &stored) * GH_SLAB_LANES;
        return gh_slab_tile_insert<KB, VB>(tile, T, &ta, mode, (int)policy, head, stored, v, gh_slab_no_ahead());
      });
  gh_device_record(&view, active && code == GH_SLAB_INSERTED, 0);
  return (int)code;
}

template <unsigned KB, unsigned VB>
static __device__ int gh_slab_device_erase_w(const gh_device_view &view, int active, uint64_t key) {
  const bool all = view.layout[0] == (uint64_t)GH_VARIANT_MULTIVALUE;
  const uint64_t removed = gh_slab_warp_queue<KB, VB>(
      view, active, key, 0,
      [&](const gh_device_group &tile, const gh_slab_device_table &T, unsigned, uint64_t k, uint64_t) -> uint64_t {
        uint64_t stored;
        uint32_t *head = T.base + gh_slab_bucket(&T.g, k, &stored) * GH_SLAB_LANES;
        return gh_slab_tile_erase<KB, VB>(tile, T, head, stored, all, gh_slab_no_ahead());
      });
  const unsigned long long total = __reduce_add_sync(0xFFFFFFFFu, (unsigned)removed);
  if (gh_device_lane() == 0 && total) atomicAdd(view.size, 0ull - total);
  return removed > 0;
}

/** Finds key: 1 (and *value, when value is not NULL) or 0. Warp-wide: every lane calls. */
static __device__ int gh_slab_device_find(const gh_device_view &view, int active, uint64_t key, uint64_t *value) {
#define GH_SLAB_DEVICE_FIND(kb, vb) \
  if (view.key_bits == kb && view.value_bits == vb) return gh_slab_device_find_w<kb, vb>(view, active, key, value);
  GH_SLAB_DEVICE_WIDTHS(GH_SLAB_DEVICE_FIND)
#undef GH_SLAB_DEVICE_FIND
  return 0;
}

/** Inserts (key, value): 1 inserted, 0 merged (map, by policy), 2 no free slab. Warp-wide. */
static __device__ int gh_slab_device_insert(const gh_device_view &view, int active, uint64_t key, uint64_t value,
                                            gh_dup_policy policy) {
#define GH_SLAB_DEVICE_INSERT(kb, vb) \
  if (view.key_bits == kb && view.value_bits == vb) return gh_slab_device_insert_w<kb, vb>(view, active, key, value, policy);
  GH_SLAB_DEVICE_WIDTHS(GH_SLAB_DEVICE_INSERT)
#undef GH_SLAB_DEVICE_INSERT
  return GH_SLAB_NO_MEMORY;
}

/** Erases key (multivalue: every value of it): 1 when something was erased. Warp-wide. */
static __device__ int gh_slab_device_erase(const gh_device_view &view, int active, uint64_t key) {
#define GH_SLAB_DEVICE_ERASE(kb, vb) \
  if (view.key_bits == kb && view.value_bits == vb) return gh_slab_device_erase_w<kb, vb>(view, active, key);
  GH_SLAB_DEVICE_WIDTHS(GH_SLAB_DEVICE_ERASE)
#undef GH_SLAB_DEVICE_ERASE
  return 0;
}

#endif /* GPUHASH_SLAB_CUH */
