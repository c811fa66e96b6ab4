/*
 * gpuhash/warpdrive.cuh - use a warpdrive table from your own CUDA kernels.
 *
 * On the host: gh_get_device_view(table, &view) for a warpdrive table on the CUDA backend; pass
 * the view to your kernel by value and call
 *
 *   per thread:  gh_device_insert(view, key, value, policy)   gh_device_find(view, key, &value)
 *   per group:   gh_device_insert_group(view, group, ...)     gh_device_find_group(view, group, ...)
 *
 * Groups (gpuhash_device.cuh) of up to the table's group_size lanes read a probing window in one
 * coalesced load: with size == the table's group_size they are the fastest way in.
 *
 * Semantics are those of the bulk API: inserts and finds may run concurrently (a find sees a
 * concurrent insert or not); erase is not offered here because tombstones are only safe between
 * whole batches. Keys equal to the internal sentinels are handled (side slots). Inserts keep the
 * table's size counter and status word (GH_FLAG_*) up to date; gh_size() and
 * gh_take_status_flags() read them after your kernel.
 *
 * The view's layout: layout[0] window_count, layout[1] max_probe_windows, layout[2] window_width
 * (the table's group_size), layout[3] and layout[4] the probe sequence's locality (log2 of a
 * region's windows, windows within the first region).
 */
#ifndef GPUHASH_WARPDRIVE_CUH
#define GPUHASH_WARPDRIVE_CUH

#include "gpuhash_device.cuh"
#include "gpuhash/detail/warpdrive.h"

/* ---- Group-level warpdrive operations (the library's kernels use these too) ----------------- */

/* The raw bits of a slot in one load (4, 8 or 16 bytes), through L2. */
static __device__ __forceinline__ gh_wd_bits gh_wd_load_bits(const gh_wd_geometry *g, const void *slot) {
  return gh_slot_load(gh_wd_format(g), slot);
}

static __device__ __forceinline__ uint64_t gh_wd_bits_key(const gh_wd_geometry *g, gh_wd_bits b) {
  return gh_slot_bits_key(gh_wd_format(g), b);
}

static __device__ __forceinline__ uint64_t gh_wd_bits_value(const gh_wd_geometry *g, gh_wd_bits b) {
  return gh_slot_bits_value(gh_wd_format(g), b);
}

/* How a group reads a window for a find: in pieces (the library's find kernel: each lane loads
 * gh_wd_pieces_slots consecutive slots at once, 16 bytes of them or, wide, 32 in two loads, and the
 * group has window_width / that many lanes) or slot by slot (one slot per lane per pass,
 * window_width / size passes: inserts, erases and the groups users pass to the device API). A piece
 * is loaded as 32-bit words, so an 8-byte slot is not read in one single-copy-atomic access: pieces
 * are for batches no writer runs alongside. */
typedef enum gh_wd_reading { GH_WD_BY_SLOT = 0, GH_WD_BY_PIECE = 1, GH_WD_BY_WIDE_PIECE = 2 } gh_wd_reading;

/* The bytes of a piece read as `reading` says (16 or 32; slot by slot: none). */
static __host__ __device__ __forceinline__ unsigned gh_wd_reading_piece_bytes(gh_wd_reading reading) {
  return reading == GH_WD_BY_WIDE_PIECE ? 32u : reading == GH_WD_BY_PIECE ? 16u : 0u;
}

/* The rank of the lane that read slot `lane` of a window slot by slot. */
static __device__ __forceinline__ unsigned gh_wd_slot_owner(gh_device_group grp, unsigned lane) {
  return lane & (grp.size - 1u);
}

/* One slot seen by this lane at position `lane` of the window: its bits go into the lane's masks,
 * and the value of the lane's first match into *value. */
static __device__ __forceinline__ void gh_wd_note_slot(const gh_wd_geometry *g, gh_wd_bits bits, unsigned lane,
                                                       uint64_t key, gh_wd_masks *m, uint64_t *value) {
  const uint64_t k = gh_wd_bits_key(g, bits);
  if (k == key && !m->match) *value = gh_wd_bits_value(g, bits);
  gh_wd_note_key(g, k, lane, key, m);
}

/* This lane's piece of a window: the gh_wd_pieces_slots slots of piece_bytes (16 or 32) from slot
 * `first`, in one load of 4, 8 or 16 bytes, or two of 16. */
static __device__ __forceinline__ void gh_wd_note_piece(const gh_wd_geometry *g, void *slots, uint64_t window,
                                                        unsigned first, unsigned piece_bytes, uint64_t key,
                                                        gh_wd_masks *m, uint64_t *value) {
  const void *piece = gh_wd_slot_at(g, slots, gh_wd_window_slot(g, window, first));
  const unsigned per_lane = gh_wd_pieces_slots(g, piece_bytes), bytes = per_lane * g->slot_bytes;
  uint32_t word[8] = {0u};
  if (bytes >= 16u) {
#pragma unroll
    for (unsigned c = 0; c < 2u; ++c) {
      if (c * 16u < piece_bytes && c * 16u < bytes) { /* (a 16-byte piece: folded to one load) */
        const uint4 raw = __ldcg((const uint4 *)piece + c);
        word[4 * c] = raw.x, word[4 * c + 1] = raw.y, word[4 * c + 2] = raw.z, word[4 * c + 3] = raw.w;
      }
    }
  } else if (bytes == 8u) {
    const uint2 raw = __ldcg((const uint2 *)piece);
    word[0] = raw.x, word[1] = raw.y;
  } else {
    word[0] = __ldcg((const unsigned *)piece);
  }
  for (unsigned s = 0; s < per_lane; ++s) {
    gh_wd_bits bits;
    const unsigned at = s * g->slot_bytes / 4u;
    bits.lo = g->slot_bytes == 4u ? word[at] : word[at] | (uint64_t)word[at + 1] << 32;
    bits.hi = g->slot_bytes == 16u ? word[at + 2] | (uint64_t)word[at + 3] << 32 : ~0ull;
    gh_wd_note_slot(g, bits, first + s, key, m, value);
  }
}

/* This lane's part of a window: its slots' bits at their window positions, and *value, the value of
 * its first match. */
static __device__ __forceinline__ gh_wd_masks gh_wd_lane_masks(const gh_wd_geometry *g, void *slots,
                                                               gh_device_group grp, gh_wd_reading reading,
                                                               uint64_t window, uint64_t key, uint64_t *value) {
  gh_wd_masks mine = {0u, 0u, 0u};
  if (reading != GH_WD_BY_SLOT) {
    const unsigned piece_bytes = gh_wd_reading_piece_bytes(reading);
    gh_wd_note_piece(g, slots, window, grp.rank * gh_wd_pieces_slots(g, piece_bytes), piece_bytes, key, &mine, value);
  } else {
    for (unsigned pass = 0; pass < g->window_width; pass += grp.size)
      gh_wd_note_slot(g, gh_wd_load_bits(g, gh_wd_slot_at(g, slots, gh_wd_window_slot(g, window, pass + grp.rank))),
                      pass + grp.rank, key, &mine, value);
  }
  return mine;
}

/* One mask of the whole window from the lanes' parts read slot by slot, with ballots (which,
 * unlike reductions, do not queue behind the shuffles of other groups). */
static __device__ __forceinline__ uint32_t gh_wd_window_mask(const gh_wd_geometry *g, gh_device_group grp,
                                                             uint32_t mine) {
  uint32_t window = 0u;
  for (unsigned pass = 0; pass < g->window_width; pass += grp.size)
    window |= gh_device_group_ballot(grp, (mine >> (pass + grp.rank)) & 1u) << pass;
  return window;
}

/* Inserts key with the group (reading slot by slot) from window number `attempt` of its sequence
 * (0: from the start; see gh_wd_insert_begin); every lane returns the same outcome. */
static __device__ __forceinline__ gh_wd_outcome gh_wd_insert_group(const gh_wd_geometry *g, void *slots,
                                                                   gh_device_group grp, uint64_t key,
                                                                   uint64_t value, int policy, uint32_t attempt) {
  if (gh_wd_is_sentinel(key, g->key_bits)) {
    unsigned outcome = 0;
    if (grp.rank == 0) outcome = gh_wd_side_insert(g, slots, key, value, policy);
    return (gh_wd_outcome)gh_device_group_broadcast(grp, outcome, 0);
  }
  gh_wd_insert_walk w = gh_wd_insert_begin(g, key, attempt);
  const gh_wd_bits desired = gh_wd_pack(g, key, value);
  const uint64_t empty = gh_wd_empty_key(g->key_bits);
  for (;;) {
    uint64_t unused = 0;
    const gh_wd_masks mine = gh_wd_lane_masks(g, slots, grp, GH_WD_BY_SLOT, w.probe.window, key, &unused);
    gh_wd_masks m;
    m.match = gh_wd_window_mask(g, grp, mine.match);
    m.empty = gh_wd_window_mask(g, grp, mine.empty);
    m.free = gh_wd_window_mask(g, grp, mine.free);
    unsigned lane = 0;
    gh_wd_step step;
    while ((step = gh_wd_insert_decide(g, &w, m, &lane)) == GH_WD_STEP_CLAIM) {
      /* The leftmost free slot is tried; the paper's scheme, with the state machine's rules. */
      const uint64_t marker = (m.empty >> lane) & 1u ? empty : gh_wd_tombstone_key(g->key_bits);
      const unsigned owner = gh_wd_slot_owner(grp, lane);
      uint64_t before = 0;
      if (grp.rank == owner) {
        void *slot = gh_wd_slot_at(g, slots, gh_wd_window_slot(g, w.probe.window, lane));
        before = gh_wd_cas_slot(g, slot, gh_wd_free_bits(g, marker), desired);
      }
      before = gh_device_group_broadcast(grp, before, owner);
      if (before == marker) return GH_WD_INSERTED;
      if (before == key) {
        step = GH_WD_STEP_UPDATE;
        break;
      }
      m.free &= ~(1u << lane);
      m.empty &= ~(1u << lane);
    }
    if (step == GH_WD_STEP_UPDATE) {
      if (grp.rank == gh_wd_slot_owner(grp, lane))
        gh_wd_update_value(g, gh_wd_slot_at(g, slots, gh_wd_window_slot(g, w.probe.window, lane)), policy, value);
      return GH_WD_UPDATED;
    }
    if (step == GH_WD_STEP_FULL) return GH_WD_NOT_FITTED;
  }
}

/* Finds key with the group; every lane returns the same answer (and *value when found). */
static __device__ __forceinline__ int gh_wd_find_group(const gh_wd_geometry *g, void *slots, gh_device_group grp,
                                                       gh_wd_reading reading, uint64_t key, uint64_t *value) {
  if (gh_wd_is_sentinel(key, g->key_bits)) {
    uint64_t v = 0;
    int found = 0;
    if (grp.rank == 0) found = gh_wd_side_find(g, slots, key, &v);
    found = (int)gh_device_group_broadcast(grp, (uint64_t)found, 0);
    if (found) *value = gh_device_group_broadcast(grp, v, 0);
    return found;
  }
  gh_probe p = gh_wd_probe_begin(g, key);
  for (; !gh_probe_done(&p, g->max_probe_windows); gh_wd_probe_next(g, &p)) {
    uint64_t v = 0;
    const gh_wd_masks mine = gh_wd_lane_masks(g, slots, grp, reading, p.window, key, &v);
    /* Keys are stored once: any lane's match is the match. */
    const uint32_t matched = gh_device_group_ballot(grp, mine.match != 0u);
    if (matched) {
      *value = gh_device_group_broadcast(grp, v, gh_lowest_bit(matched));
      return 1;
    }
    if (gh_device_group_ballot(grp, mine.empty != 0u)) return 0;
  }
  return 0;
}

/* Erases key with the group (bulk erase batches only; reading slot by slot); returns 1 in every
 * lane if this group removed it. */
static __device__ __forceinline__ int gh_wd_erase_group(const gh_wd_geometry *g, void *slots, gh_device_group grp,
                                                        uint64_t key) {
  if (gh_wd_is_sentinel(key, g->key_bits)) {
    int erased = 0;
    if (grp.rank == 0) erased = gh_wd_side_erase(g, slots, key);
    return (int)gh_device_group_broadcast(grp, (uint64_t)erased, 0);
  }
  gh_probe p = gh_wd_probe_begin(g, key);
  for (; !gh_probe_done(&p, g->max_probe_windows); gh_wd_probe_next(g, &p)) {
    uint64_t unused = 0;
    const gh_wd_masks mine = gh_wd_lane_masks(g, slots, grp, GH_WD_BY_SLOT, p.window, key, &unused);
    const uint32_t matched = gh_device_group_ballot(grp, mine.match != 0u);
    if (matched) {
      const unsigned owner = gh_lowest_bit(matched);
      int erased = 0;
      if (grp.rank == owner)
        erased = gh_wd_erase_slot(g, gh_wd_slot_at(g, slots, gh_wd_window_slot(g, p.window, gh_lowest_bit(mine.match))),
                                  key, gh_wd_tombstone_key(g->key_bits));
      return (int)gh_device_group_broadcast(grp, (uint64_t)erased, owner);
    }
    if (gh_device_group_ballot(grp, mine.empty != 0u)) return 0;
  }
  return 0;
}

/* ---- The public device API over a gh_device_view -------------------------------------------- */

static __device__ __forceinline__ gh_wd_geometry gh_wd_view_geometry(const gh_device_view *v) {
  gh_wd_geometry g;
  g.window_count = v->layout[0];
  g.max_probe_windows = v->layout[1];
  g.seed = v->seed;
  g.window_width = (unsigned)v->layout[2];
  g.key_bits = v->key_bits;
  g.value_bits = v->value_bits;
  g.slot_bytes = v->slot_bytes;
  g.local_shift = (unsigned)v->layout[3];
  g.local_windows = (unsigned)v->layout[4];
  return g;
}

/** Inserts (key, value) from one thread; value is ignored for sets. Returns GH_OK, or
 * GH_ERR_TABLE_FULL when no free slot lies within the probe limit. */
static __device__ __forceinline__ gh_status gh_device_insert(gh_device_view v, uint64_t key, uint64_t value,
                                                             gh_dup_policy policy) {
  const gh_wd_geometry g = gh_wd_view_geometry(&v);
  const gh_wd_outcome outcome = gh_wd_insert_serial(&g, v.slots, key, value, (int)policy, 0u);
  gh_device_record(&v, outcome == GH_WD_INSERTED, gh_wd_outcome_flags(outcome));
  return outcome == GH_WD_NOT_FITTED ? GH_ERR_TABLE_FULL : GH_OK;
}

/** Finds key from one thread: 1 and *value when present, else 0. */
static __device__ __forceinline__ int gh_device_find(gh_device_view v, uint64_t key, uint64_t *value) {
  const gh_wd_geometry g = gh_wd_view_geometry(&v);
  return gh_wd_find_serial(&g, v.slots, key, value);
}

/** Inserts with a group (all its lanes, same key and value). group.size must divide the table's
 * group_size; otherwise GH_ERR_INVALID_ARGUMENT and GH_FLAG_BAD_GROUP. */
static __device__ __forceinline__ gh_status gh_device_insert_group(gh_device_view v, gh_device_group group,
                                                                   uint64_t key, uint64_t value,
                                                                   gh_dup_policy policy) {
  if (group.size > (unsigned)v.layout[2]) {
    if (group.rank == 0) atomicOr(v.status_word, GH_FLAG_BAD_GROUP);
    return GH_ERR_INVALID_ARGUMENT;
  }
  const gh_wd_geometry g = gh_wd_view_geometry(&v);
  const gh_wd_outcome outcome = gh_wd_insert_group(&g, v.slots, group, key, value, (int)policy, 0u);
  gh_device_record(&v, group.rank == 0 && outcome == GH_WD_INSERTED,
                   group.rank == 0 ? gh_wd_outcome_flags(outcome) : 0u);
  return outcome == GH_WD_NOT_FITTED ? GH_ERR_TABLE_FULL : GH_OK;
}

/** Finds with a group; every lane gets the answer. Returns -1 for a group larger than the table's
 * group_size (GH_FLAG_BAD_GROUP is set). */
static __device__ __forceinline__ int gh_device_find_group(gh_device_view v, gh_device_group group, uint64_t key,
                                                           uint64_t *value) {
  if (group.size > (unsigned)v.layout[2]) {
    if (group.rank == 0) atomicOr(v.status_word, GH_FLAG_BAD_GROUP);
    return -1;
  }
  const gh_wd_geometry g = gh_wd_view_geometry(&v);
  return gh_wd_find_group(&g, v.slots, group, GH_WD_BY_SLOT, key, value);
}

#endif /* GPUHASH_WARPDRIVE_CUH */
