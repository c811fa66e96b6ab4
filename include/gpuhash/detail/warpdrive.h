/* gpuhash/detail/warpdrive.h - slot layout and probing logic of the warpdrive design, shared by
 * the host backend, the CUDA kernels and the device-side API (include/gpuhash/warpdrive.cuh).
 * Internal: not part of the stable API, it may change with any release.
 *
 * Layout. The table is an array of window_count * window_width slots followed by two side slots,
 * in the shared slot format of gpuhash/detail/slot.h (one CAS publishes a whole pair; empty = all
 * ones). A tombstone has the key field all ones minus one and the rest all ones. Those two key
 * values are stored out of band in the side slots (side slot 0 for the all-ones key, 1 for
 * all-ones minus one), whose key field is 0 when the key is present and all ones when it is absent.
 *
 * Probing. A key's probe sequence is a chain of windows of window_width consecutive slots,
 * chained by double hashing (gpuhash/detail/probe.h). A cooperative group whose size equals the
 * window width reads a window in one coalesced load; smaller groups, a single thread, or the host
 * walk the window in pieces and see the same sequence. Large tables group their windows into a
 * prime number of regions of 2^local_shift windows (at most 64 KB of slots each), and the first
 * local_windows windows of a sequence stay in the region of its first window before the sequence
 * goes on over the whole table. A key almost always lies in its first region, so the cache-
 * partitioned bulk insert places nearly a whole batch in one pass, a region at a time in shared
 * memory; lookups read as many windows as with plain double hashing.
 *
 * Invariant (checked by validate): every key lies on its probe sequence within the probe limit,
 * with no empty slot before it, and appears once. Inserts keep it under concurrency because all
 * inserters of a key scan for the key up to the first empty slot and then claim the FIRST free
 * (empty or tombstone) slot of the sequence, rescanning after a lost CAS: two copies of one key
 * would need two inserters to each see the other's slot as free and then occupied, which
 * cannot happen while slots only go from free to occupied during an insert batch (erase is a
 * separate batch). This is what prevents the insert -> erase -> insert duplicate of
 * cuCollections #606 and SlabHash #17. */
#ifndef GH_DETAIL_WARPDRIVE_H
#define GH_DETAIL_WARPDRIVE_H

#include "gpuhash.h"
#include "gpuhash/detail/atomics.h"
#include "gpuhash/detail/hash.h"
#include "gpuhash/detail/probe.h"
#include "gpuhash/detail/slot.h"

/* Default probe limit in slots: at load 0.99 a key needs ~100 slots on average and the chance
 * of needing 2^17 is below 1e-500, so this cap only ever trips on a genuinely full table. */
#define GH_WD_DEFAULT_PROBE_SLOTS (4096u * 32u)
#define GH_WD_SIDE_SLOTS 2u
#define GH_WD_MAX_WINDOW_WIDTH 32u
/* Locality regions: the slots of a region fill at most 64 KB (a block's shared memory in the bulk
 * insert), a table has at least GH_WD_LOCAL_MIN_REGIONS of them (rounding their count up to a prime
 * then adds at most a few per cent of slots; smaller tables are plain double hashing over a prime
 * number of windows), and a sequence's first 16 windows (fewer in regions of fewer windows) stay
 * in its region: at load 0.95 an insert with windows of 4 slots needs 1.6 of them on average. */
#define GH_WD_LOCAL_REGION_BYTES (64u * 1024u)
#define GH_WD_LOCAL_MIN_REGIONS 1024u
#define GH_WD_LOCAL_WINDOWS 16u

typedef struct gh_wd_geometry {
  uint64_t window_count;
  uint64_t max_probe_windows;
  uint64_t seed;
  unsigned window_width;
  unsigned key_bits;
  unsigned value_bits;
  unsigned slot_bytes;
  unsigned local_shift;   /* a region is 2^local_shift windows; window_count >> local_shift is prime */
  unsigned local_windows; /* windows of a sequence within its first region (0: no locality) */
} gh_wd_geometry;

/* The slot format (gpuhash/detail/slot.h) under warpdrive's names. */
typedef gh_slot_bits gh_wd_bits;

GH_HD gh_slot_format gh_wd_format(const gh_wd_geometry *g) {
  gh_slot_format f;
  f.key_bits = g->key_bits;
  f.value_bits = g->value_bits;
  f.slot_bytes = g->slot_bytes;
  return f;
}
GH_HD unsigned gh_wd_slot_bytes(unsigned key_bits, unsigned value_bits) {
  return gh_slot_bytes(key_bits, value_bits);
}
GH_HD uint64_t gh_wd_key_mask(unsigned key_bits) { return gh_slot_key_mask(key_bits); }
GH_HD uint64_t gh_wd_empty_key(unsigned key_bits) { return gh_slot_empty_key(key_bits); }
GH_HD uint64_t gh_wd_tombstone_key(unsigned key_bits) { return gh_slot_key_mask(key_bits) - 1u; }
GH_HD int gh_wd_is_sentinel(uint64_t key, unsigned key_bits) {
  return key >= gh_wd_tombstone_key(key_bits);
}

/* Side-slot marker held in the key field (gpuhash/detail/slot.h). */
#define GH_WD_SIDE_PRESENT GH_SIDE_PRESENT

GH_HD gh_wd_bits gh_wd_pack(const gh_wd_geometry *g, uint64_t key, uint64_t value) {
  return gh_slot_pack(gh_wd_format(g), key, value);
}

/* Where the slot bits of a free slot can be predicted exactly: empty slots are all ones, and
 * erase rewrites the whole slot to the canonical tombstone, so a claiming CAS never needs the
 * bits it loaded. */
GH_HD gh_wd_bits gh_wd_free_bits(const gh_wd_geometry *g, uint64_t marker_key) {
  return gh_wd_pack(g, marker_key, ~0ull);
}

GH_HD void *gh_wd_slot_at(const gh_wd_geometry *g, void *slots, uint64_t index) {
  return gh_slot_at(gh_wd_format(g), slots, index);
}
GH_HD uint64_t gh_wd_window_slot(const gh_wd_geometry *g, uint64_t window, unsigned lane) {
  return window * g->window_width + lane;
}
GH_HD uint64_t gh_wd_side_slot(const gh_wd_geometry *g, uint64_t key) {
  return g->window_count * g->window_width + (key == gh_wd_empty_key(g->key_bits) ? 0u : 1u);
}

GH_HD uint64_t gh_wd_load_key(const gh_wd_geometry *g, const void *slot) {
  return gh_slot_load_key(gh_wd_format(g), slot);
}
GH_HD uint64_t gh_wd_load_value(const gh_wd_geometry *g, const void *slot) {
  return gh_slot_load_value(gh_wd_format(g), slot);
}
GH_HD uint64_t gh_wd_cas_slot(const gh_wd_geometry *g, void *slot, gh_wd_bits expected, gh_wd_bits desired) {
  return gh_slot_cas_key(gh_wd_format(g), slot, expected, desired);
}
GH_HD void gh_wd_update_value(const gh_wd_geometry *g, void *slot, int policy, uint64_t value) {
  gh_slot_update_value(gh_wd_format(g), slot, policy, value);
}

/* Writes the canonical tombstone (or, for side slots, the empty marker) over a slot holding key. */
GH_HD int gh_wd_erase_slot(const gh_wd_geometry *g, void *slot, uint64_t key, uint64_t new_marker) {
  return gh_slot_erase(gh_wd_format(g), slot, key, new_marker);
}

/* The first window and step of key's probe sequence. 32-bit keys hash with 32-bit arithmetic,
 * which is several times cheaper on the GPU than 64-bit multiplies. The offset step comes from
 * the low bits of the second hash, the region step from its high bits (the range reduction is a
 * multiply-high). */
GH_HD gh_probe gh_wd_probe_begin(const gh_wd_geometry *g, uint64_t key) {
  const uint64_t regions = g->window_count >> g->local_shift, mask = (1ull << g->local_shift) - 1u;
  uint64_t first, region_step, h2_low;
  if (g->key_bits == 32) {
    const uint32_t h1 = gh_fmix32((uint32_t)key ^ (uint32_t)g->seed);
    const uint32_t h2 = gh_fmix32((uint32_t)key ^ (uint32_t)(g->seed >> 32) ^ 0x9e3779b9u);
    first = gh_range32(h1, g->window_count);
    region_step = gh_range32(h2, regions - 1u) + 1u;
    h2_low = h2;
  } else {
    const uint64_t h1 = gh_fmix64(key ^ g->seed);
    const uint64_t h2 = gh_fmix64(key ^ (g->seed * 0x9e3779b97f4a7c15ull) ^ 0x632be59bd9b4e019ull);
    first = gh_range64(h1, g->window_count);
    region_step = gh_range64(h2, regions - 1u) + 1u;
    h2_low = h2;
  }
  return gh_probe_begin(first, region_step, (h2_low | 1u) & mask, g->local_shift);
}

/* The window after p's in key's sequence (gpuhash/detail/probe.h). */
GH_HD void gh_wd_probe_next(const gh_wd_geometry *g, gh_probe *p) {
  gh_probe_next(p, g->window_count, g->local_shift, g->local_windows);
}

/* Key's probe sequence from its window number `attempt` on (the bulk insert resumes keys there,
 * round by round, so attempt stays small): stepped there as a walk would, with no 64-bit
 * division, which the GPU emulates in tens of instructions. */
GH_HD gh_probe gh_wd_probe_at(const gh_wd_geometry *g, uint64_t key, uint32_t attempt) {
  gh_probe p = gh_wd_probe_begin(g, key);
  while (p.attempt < attempt) gh_wd_probe_next(g, &p);
  return p;
}

/* The bulk insert's regions: runs of 2^shift consecutive windows (the last one shorter). */
GH_HD uint64_t gh_wd_region_of(uint64_t window, unsigned shift) { return window >> shift; }

/* How a find reads a window in the library's find kernel: in pieces of 16 or 32 bytes (one or two
 * 16-byte loads; the whole window where it is narrower), so a key needs window_width /
 * gh_wd_pieces_slots lanes. A find waits on memory latency, and the fewer lanes a key takes, the
 * more keys a warp has in flight. Measured on an H100 at n = 2^27 (32/32-bit keys,
 * bench/results/2026-12-07-h100-warpdrive-find-pieces-ab.txt): one slot per lane -> 16 bytes a lane
 * gained 1.02x to 1.40x; at g = 8, 32 bytes a lane (2 lanes a key, not 4) another 0.99x to 1.19x;
 * at g = 4, 32 bytes a lane (1 lane a key) lost 11 % at load 0.5 (the lane's two loads of one
 * sector are two requests to the L2). So windows under 64 bytes are read in 16-byte pieces and
 * wider ones in 32-byte pieces: two lanes a key for 32- and 64-byte windows, four for 128 (a
 * piece wider than 32 bytes spills the kernel's 32 registers). */
GH_HD unsigned gh_wd_find_piece_bytes(const gh_wd_geometry *g) {
  return g->window_width * g->slot_bytes >= 64u ? 32u : 16u;
}

/* Slots in one piece of piece_bytes (16 or 32), or the whole window where it is narrower. */
GH_HD unsigned gh_wd_pieces_slots(const gh_wd_geometry *g, unsigned piece_bytes) {
  const unsigned per_piece = piece_bytes / g->slot_bytes;
  return g->window_width < per_piece ? g->window_width : per_piece;
}

/* What one window holds for a key, one bit per slot of the window. */
typedef struct gh_wd_masks {
  uint32_t match; /* slots holding the key */
  uint32_t empty; /* empty slots */
  uint32_t free;  /* empty or tombstone slots */
} gh_wd_masks;

/* Adds what the slot at position `lane` of a window holds (key field k) to masks m, for key. */
GH_HD void gh_wd_note_key(const gh_wd_geometry *g, uint64_t k, unsigned lane, uint64_t key, gh_wd_masks *m) {
  const uint64_t empty = gh_wd_empty_key(g->key_bits);
  m->match |= (uint32_t)(k == key) << lane;
  m->empty |= (uint32_t)(k == empty) << lane;
  m->free |= (uint32_t)(k == empty || k == gh_wd_tombstone_key(g->key_bits)) << lane;
}

/* Reads a window slot by slot (host backend, single-thread device API). A cooperative group
 * builds the same masks with one ballot per mask instead. */
GH_HD gh_wd_masks gh_wd_read_window(const gh_wd_geometry *g, void *slots, uint64_t window, uint64_t key) {
  gh_wd_masks m = {0u, 0u, 0u};
  for (unsigned lane = 0; lane < g->window_width; ++lane)
    gh_wd_note_key(g, gh_wd_load_key(g, gh_wd_slot_at(g, slots, gh_wd_window_slot(g, window, lane))), lane, key, &m);
  return m;
}

/* ---- Insert: a small state machine, driven identically by every caller ----------------------- */

typedef enum gh_wd_step {
  GH_WD_STEP_LOAD = 0,   /* (re)load the window at walk->probe and decide again */
  GH_WD_STEP_CLAIM = 1,  /* CAS the key into free slot *lane of the current window */
  GH_WD_STEP_UPDATE = 2, /* the key is at slot *lane: apply the duplicate policy */
  GH_WD_STEP_FULL = 3    /* no free slot within the probe limit */
} gh_wd_step;

typedef struct gh_wd_insert_walk {
  gh_probe probe;              /* window being looked at */
  uint64_t candidate_window;   /* first window seen with a free slot ... */
  uint32_t candidate_attempt;  /* ... and its place in the sequence */
  uint32_t state;              /* GH_WD_HAVE_CANDIDATE | GH_WD_ABSENT_VERIFIED */
} gh_wd_insert_walk;

#define GH_WD_HAVE_CANDIDATE 1u
#define GH_WD_ABSENT_VERIFIED 2u /* the key was seen absent up to the first empty slot or the limit */

/* A walk from window number `attempt` of the key's sequence: the windows before it are known to
 * be full without the key (the bulk insert's earlier rounds, on a table without tombstones). */
GH_HD gh_wd_insert_walk gh_wd_insert_begin(const gh_wd_geometry *g, uint64_t key, uint32_t attempt) {
  gh_wd_insert_walk w;
  w.probe = gh_wd_probe_at(g, key, attempt);
  w.candidate_window = w.probe.window;
  w.candidate_attempt = attempt;
  w.state = 0;
  return w;
}

/* Decides the next step from the masks of the window at w->probe. Callers that lose a CAS at
 * lane L to another key clear bit L from m.free and m.empty and call again: the other slots'
 * state is still what was loaded, as occupied slots stay occupied during an insert batch. */
GH_HD gh_wd_step gh_wd_insert_decide(const gh_wd_geometry *g, gh_wd_insert_walk *w, gh_wd_masks m,
                                     unsigned *lane) {
  if (m.match) {
    *lane = gh_lowest_bit(m.match);
    return GH_WD_STEP_UPDATE;
  }
  if (w->state & GH_WD_ABSENT_VERIFIED) {
    if (m.free) {
      *lane = gh_lowest_bit(m.free);
      return GH_WD_STEP_CLAIM;
    }
    gh_wd_probe_next(g, &w->probe);
    return gh_probe_done(&w->probe, g->max_probe_windows) ? GH_WD_STEP_FULL : GH_WD_STEP_LOAD;
  }
  if (m.free && !(w->state & GH_WD_HAVE_CANDIDATE)) {
    w->candidate_window = w->probe.window;
    w->candidate_attempt = w->probe.attempt;
    w->state |= GH_WD_HAVE_CANDIDATE;
  }
  if (!m.empty) {
    /* No empty slot: the key may still lie further on (tombstones can precede it). */
    gh_wd_probe_next(g, &w->probe);
    if (!gh_probe_done(&w->probe, g->max_probe_windows)) return GH_WD_STEP_LOAD;
    if (!(w->state & GH_WD_HAVE_CANDIDATE)) return GH_WD_STEP_FULL;
  }
  /* The key is absent; claim the first free slot from the candidate window on. */
  w->state |= GH_WD_ABSENT_VERIFIED;
  if (w->candidate_attempt == w->probe.attempt) {
    *lane = gh_lowest_bit(m.free);
    return GH_WD_STEP_CLAIM;
  }
  w->probe.window = w->candidate_window;
  w->probe.attempt = w->candidate_attempt;
  return GH_WD_STEP_LOAD;
}

/* Outcome of one key's operation, as reported by every caller. */
typedef enum gh_wd_outcome {
  GH_WD_INSERTED = 0,  /* a new key was stored */
  GH_WD_UPDATED = 1,   /* the key was present; the policy was applied */
  GH_WD_NOT_FITTED = 2 /* the probe limit was reached */
} gh_wd_outcome;

/* The status flags (gh_take_flags) an insert's outcome raises. */
GH_HD unsigned gh_wd_outcome_flags(gh_wd_outcome outcome) {
  return outcome == GH_WD_NOT_FITTED ? GH_FLAG_PROBE_LIMIT : (outcome == GH_WD_UPDATED ? GH_FLAG_DUPLICATE : 0u);
}

/* Sentinel keys live in their side slot: one CAS claims it, otherwise the policy applies. */
GH_HD gh_wd_outcome gh_wd_side_insert(const gh_wd_geometry *g, void *slots, uint64_t key,
                                      uint64_t value, int policy) {
  void *slot = gh_wd_slot_at(g, slots, gh_wd_side_slot(g, key));
  return gh_side_insert(gh_wd_format(g), slot, value, policy) ? GH_WD_INSERTED : GH_WD_UPDATED;
}

GH_HD int gh_wd_side_find(const gh_wd_geometry *g, void *slots, uint64_t key, uint64_t *value) {
  return gh_side_find(gh_wd_format(g), gh_wd_slot_at(g, slots, gh_wd_side_slot(g, key)), value);
}

GH_HD int gh_wd_side_erase(const gh_wd_geometry *g, void *slots, uint64_t key) {
  return gh_side_erase(gh_wd_format(g), gh_wd_slot_at(g, slots, gh_wd_side_slot(g, key)));
}

/* Inserts one key walking windows slot by slot from window number `attempt` of its sequence (0:
 * from the start; see gh_wd_insert_begin) (host backend; single-thread device API). */
GH_HD gh_wd_outcome gh_wd_insert_serial(const gh_wd_geometry *g, void *slots, uint64_t key,
                                        uint64_t value, int policy, uint32_t attempt) {
  if (gh_wd_is_sentinel(key, g->key_bits)) return gh_wd_side_insert(g, slots, key, value, policy);
  gh_wd_insert_walk w = gh_wd_insert_begin(g, key, attempt);
  const gh_wd_bits desired = gh_wd_pack(g, key, value);
  const uint64_t empty = gh_wd_empty_key(g->key_bits);
  for (;;) {
    gh_wd_masks m = gh_wd_read_window(g, slots, w.probe.window, key);
    unsigned lane = 0;
    gh_wd_step step;
    while ((step = gh_wd_insert_decide(g, &w, m, &lane)) == GH_WD_STEP_CLAIM) {
      void *slot = gh_wd_slot_at(g, slots, gh_wd_window_slot(g, w.probe.window, lane));
      const uint64_t marker = (m.empty >> lane) & 1u ? empty : gh_wd_tombstone_key(g->key_bits);
      const uint64_t before = gh_wd_cas_slot(g, slot, gh_wd_free_bits(g, marker), desired);
      if (before == marker) return GH_WD_INSERTED;
      if (before == key) {
        gh_wd_update_value(g, slot, policy, value);
        return GH_WD_UPDATED;
      }
      m.free &= ~(1u << lane);
      m.empty &= ~(1u << lane);
    }
    if (step == GH_WD_STEP_UPDATE) {
      gh_wd_update_value(g, gh_wd_slot_at(g, slots, gh_wd_window_slot(g, w.probe.window, lane)),
                         policy, value);
      return GH_WD_UPDATED;
    }
    if (step == GH_WD_STEP_FULL) return GH_WD_NOT_FITTED;
  }
}

/* ---- Find and erase: stop at the key, at an empty slot, or at the probe limit ---------------- */

/* Slot index of key, or -1 (as all ones) when absent. */
GH_HD uint64_t gh_wd_locate_serial(const gh_wd_geometry *g, void *slots, uint64_t key) {
  gh_probe p = gh_wd_probe_begin(g, key);
  for (; !gh_probe_done(&p, g->max_probe_windows); gh_wd_probe_next(g, &p)) {
    const gh_wd_masks m = gh_wd_read_window(g, slots, p.window, key);
    if (m.match) return gh_wd_window_slot(g, p.window, gh_lowest_bit(m.match));
    if (m.empty) break;
  }
  return ~0ull;
}

GH_HD int gh_wd_find_serial(const gh_wd_geometry *g, void *slots, uint64_t key, uint64_t *value) {
  if (gh_wd_is_sentinel(key, g->key_bits)) return gh_wd_side_find(g, slots, key, value);
  const uint64_t at = gh_wd_locate_serial(g, slots, key);
  if (at == ~0ull) return 0;
  *value = gh_wd_load_value(g, gh_wd_slot_at(g, slots, at));
  return 1;
}

/* What an erase walk that may stop before the probe limit (the bulk erase's first round) found. */
typedef enum gh_wd_erased {
  GH_WD_ERASE_ABSENT = 0,   /* an empty slot, or the probe limit, before the key (or another erased it) */
  GH_WD_ERASE_REMOVED = 1,  /* this caller turned the key's slot into a tombstone */
  GH_WD_ERASE_UNDECIDED = 2 /* windows 0 .. until - 1 are full without the key: it may lie further on */
} gh_wd_erased;

/* Erases key walking windows slot by slot, up to window `until` of its sequence (host backend;
 * single-thread device API). */
GH_HD gh_wd_erased gh_wd_erase_within(const gh_wd_geometry *g, void *slots, uint64_t key, uint32_t until) {
  if (gh_wd_is_sentinel(key, g->key_bits))
    return gh_wd_side_erase(g, slots, key) ? GH_WD_ERASE_REMOVED : GH_WD_ERASE_ABSENT;
  gh_probe p = gh_wd_probe_begin(g, key);
  for (; !gh_probe_done(&p, g->max_probe_windows) && p.attempt < until; gh_wd_probe_next(g, &p)) {
    const gh_wd_masks m = gh_wd_read_window(g, slots, p.window, key);
    if (m.match)
      return gh_wd_erase_slot(g, gh_wd_slot_at(g, slots, gh_wd_window_slot(g, p.window, gh_lowest_bit(m.match))), key,
                              gh_wd_tombstone_key(g->key_bits))
                 ? GH_WD_ERASE_REMOVED
                 : GH_WD_ERASE_ABSENT;
    if (m.empty) return GH_WD_ERASE_ABSENT;
  }
  return gh_probe_done(&p, g->max_probe_windows) ? GH_WD_ERASE_ABSENT : GH_WD_ERASE_UNDECIDED;
}

GH_HD int gh_wd_erase_serial(const gh_wd_geometry *g, void *slots, uint64_t key) {
  return gh_wd_erase_within(g, slots, key, UINT32_MAX) == GH_WD_ERASE_REMOVED;
}

/* ---- The in-place rehash (gh_compact) ---------------------------------------------------------
 * A pass over the main slots, slot by slot, in any order and concurrently: a tombstone becomes
 * empty; a key with an empty slot in a window before its own on its sequence moves into the first
 * such slot it can claim, or else into an empty slot of its own window's lower lanes (a CAS of the
 * whole pair into the empty slot, then its old slot emptied: never absent, two copies only for the
 * instant between the two writes). Passes repeat until one changes nothing. Then no key has an
 * empty slot before it, the invariant above. It ends: a move takes its key to an earlier window of
 * its sequence (its first visit of a window counts) or a lower lane of its window, so every pass
 * that changes something lowers the number of tombstones or some key's place and raises none. Only
 * the key's owner writes an occupied slot, so a move writes the whole pair it read.
 *
 * A move empties a slot, and keys whose sequences pass that window may move up: chains of moves,
 * a link a pass where the pass reaches the key before the slot is emptied (8 to 10 passes on the
 * host backend after the aging workload's 5 % tombstones). So that a pass need not reread every earlier
 * window of every key that sits past its first, each pass marks in a bitmap (a bit a window) the
 * windows where it emptied a slot, and a key reads only windows marked by the pass before or, so
 * far, by this one: a window it skips had no empty slot when this key last read it, or lost it to a
 * claim, and any slot emptied there since is marked. A key's own window is read every pass.
 * marked_before NULL: every window counts as marked (the first pass, or no memory for the
 * bitmaps); marked NULL: nothing is recorded. */
GH_HD int gh_wd_window_unchanged(const uint32_t *marked_before, const uint32_t *marked, uint64_t window) {
  return marked_before != NULL && !gh_bitmap_test(marked_before, window) &&
         (marked == NULL || !gh_bitmap_test(marked, window));
}
GH_HD void gh_wd_mark_window(uint32_t *marks, uint64_t window) {
  if (marks != NULL) gh_bitmap_set(marks, window);
}

/* The tombstone at index becomes empty. */
GH_HD void gh_wd_rehash_tombstone(const gh_wd_geometry *g, void *slots, uint64_t index, uint32_t *marked) {
  gh_slot_exchange(gh_wd_format(g), gh_wd_slot_at(g, slots, index), gh_wd_free_bits(g, gh_wd_empty_key(g->key_bits)));
  gh_wd_mark_window(marked, index / g->window_width);
}

/* The pair at index (its bits as the caller loaded them, in one load: no other thread writes an
 * occupied slot during a pass) moves up if it can: own_empty = the empty slots of its own window
 * below it (one bit a lane), as the caller read them. Returns 1 when it moved. */
GH_HD int gh_wd_rehash_key(const gh_wd_geometry *g, void *slots, uint64_t index, gh_wd_bits pair, uint32_t own_empty,
                           const uint32_t *marked_before, uint32_t *marked) {
  const gh_slot_format f = gh_wd_format(g);
  const uint64_t key = gh_slot_bits_key(f, pair), empty = gh_wd_empty_key(g->key_bits);
  const gh_wd_bits emptied = gh_wd_free_bits(g, empty);
  const uint64_t own = index / g->window_width;
  for (gh_probe p = gh_wd_probe_begin(g, key); !gh_probe_done(&p, g->max_probe_windows); gh_wd_probe_next(g, &p)) {
    uint32_t open = own_empty;
    if (p.window != own) {
      if (gh_wd_window_unchanged(marked_before, marked, p.window)) continue;
      open = gh_wd_read_window(g, slots, p.window, key).empty;
    }
    for (; open != 0u; open &= open - 1u) {
      void *target = gh_wd_slot_at(g, slots, gh_wd_window_slot(g, p.window, gh_lowest_bit(open)));
      if (gh_wd_cas_slot(g, target, emptied, pair) == empty) {
        gh_slot_exchange(f, gh_wd_slot_at(g, slots, index), emptied);
        gh_wd_mark_window(marked, own);
        return 1;
      }
    }
    if (p.window == own) break;
  }
  return 0;
}

/* The pass's work on slot index, reading the slot's own window itself (the host backend; the CUDA
 * pass has a warp's slots in its lanes and takes the window's empty slots from one ballot).
 * Returns 1 when it changed a slot. */
GH_HD int gh_wd_rehash_slot(const gh_wd_geometry *g, void *slots, uint64_t index, const uint32_t *marked_before,
                            uint32_t *marked) {
  const gh_wd_bits pair = gh_slot_load(gh_wd_format(g), gh_wd_slot_at(g, slots, index));
  const uint64_t key = gh_slot_bits_key(gh_wd_format(g), pair);
  if (key == gh_wd_empty_key(g->key_bits)) return 0;
  if (key == gh_wd_tombstone_key(g->key_bits)) {
    gh_wd_rehash_tombstone(g, slots, index, marked);
    return 1;
  }
  const unsigned lane = (unsigned)(index % g->window_width);
  const uint32_t below = gh_wd_read_window(g, slots, index / g->window_width, key).empty & ((1u << lane) - 1u);
  return gh_wd_rehash_key(g, slots, index, pair, below, marked_before, marked);
}

#endif /* GH_DETAIL_WARPDRIVE_H */
