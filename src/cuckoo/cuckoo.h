/* cuckoo.h - hash functions, eviction chains, lookups and duplicate clean-up of the cuckoo design
 * (Alcantara et al., GPU Computing Gems ch. 4), shared by the host backend and the CUDA kernels.
 *
 * Layout. slot_count slots in the shared slot format (gpuhash/detail/slot.h: one atomic exchange moves a
 * whole (key, value) pair), then one side slot for the all-ones key, which marks empty slots. The
 * slots form buckets of 2^bucket_shift consecutive slots: one slot each in the chapter's layout,
 * 4, 8 or 16 in the bucketed one (4 slots of 8 bytes are one 32-byte sector, read at once), where
 * a key may sit in any slot of its d buckets. The hash functions pick buckets.
 *
 * Hashing. Key k may live in the d buckets h_i(k) = (a_i k + b_i) mod p mod bucket_count (or
 * ((a_i xor k) + b_i) mod p mod bucket_count), p = 2^32 - 5 for 32-bit keys, so that distinct keys
 * below p never share all their slots (the chapter's p = 334214459 would make every 13th key of a
 * dense 32-bit range alias another, which dooms large builds). 64-bit keys are first mixed by a
 * bijection (so that structured keys spread), and the image x = hi 2^32 + lo is hashed over
 * p = 2^61 - 1 as a polynomial in a_i, (a_i^2 hi + a_i lo + b_i) mod p, or exactly reduced after the
 * xor, ((a_i xor x) mod p + b_i) mod p. Both keep every bit of the key: two distinct keys collide
 * in one function for at most 2 of the ~2^61 values of a_i, so no set of keys fails together for
 * all constants (reducing x mod p first, or shifting bits out, would make keys x and x + p, or
 * x and x xor 1, share all d slots forever, and a handful of them would never place).
 * "mod slot_count" is exact, through a precomputed multiplier (Lemire's fastmod), so dense key
 * ranges still spread over consecutive slots.
 *
 * Insert. An entry is exchanged into its first slot; whatever it displaces moves to the next of
 * ITS d slots, round robin, skipping functions that point at the slot it was evicted from. The
 * chain ends at an empty slot, when two copies of one key meet (their values are merged by the
 * duplicate policy), or after max_evictions exchanges: then the entry still held is handed back
 * to the caller, so nothing is ever lost, and the table is rebuilt with fresh constants.
 * Bucketed: an entry takes an empty slot of its first bucket by CAS, else of its next buckets in
 * turn; when all d are full it evicts a slot of the last one picked by a hash of the key and the
 * step (a random walk, as in bucketed cuckoo hashing), and the evicted entry tries its other
 * buckets the same way. A key met in a bucket it scans takes the merge instead.
 *
 * Invariant (validate): every key lies in one of its d buckets and appears once. Two copies of one
 * key can survive a batch (one copy evicted before the other arrived, or two placed in one bucket
 * at once), so each batch ends with a clean-up: a copy that finds its key at an EARLIER position
 * (ordered by the first function that picks the bucket, then by the slot in it) merges into it and
 * leaves. Nothing moves during the clean-up, so the earliest copy is stable and every copy merges
 * into the same one.
 * Bucketed, the clean-up need not read the whole table: the batch's new keys take empty slots in
 * a fixed order (their buckets' first empty slot, buckets in function order, a lost CAS read
 * again) and slots never empty during a batch, so two copies of a key that only ever took empty
 * slots would have met; one of them came through an eviction. The chains mark every slot they
 * write with an exchange, and every slot where a key they displaced comes to rest, in a bitmap
 * (`moved`); the clean-up then resolves only the keys of marked slots, every copy at once
 * (gh_ck_resolve_copies). That needs phase 1 of the insert to have taken the keys the table
 * already held out of the batch (an erase can empty an earlier bucket of a stored key), and no
 * restart (a rebuild re-places everything): otherwise the whole table is read.
 *
 * Stash (Kirsch, Mitzenmacher and Wieder, "More robust hashing: cuckoo hashing with a stash").
 * Entries that could not be placed, because the same few keys kept failing across restarts or
 * because a rebuild could not get memory, wait in a small array beside the slots that every
 * lookup scans after its d reads; each later insert takes them up again. Positions name every
 * place an entry can be: the main slots [0, slot_count), the side slot (slot_count), then the
 * stash (slot_count + 1 + j). */
#ifndef GH_CUCKOO_H
#define GH_CUCKOO_H

#include "gpuhash/detail/hash.h"
#include "gpuhash/detail/slot.h"
#include "core/region_words.h"

#define GH_CK_MAX_FUNCTIONS 5u
#define GH_CK_PRIME32 4294967291ull          /* 2^32 - 5 */
#define GH_CK_PRIME61 0x1FFFFFFFFFFFFFFFull /* 2^61 - 1 */
/* The compacting table's value for "no id yet" while a batch is being placed. */
#define GH_CK_NO_ID (~0ull)

typedef struct gh_ck_geometry {
  uint64_t slot_count;     /* main slots (< 2^32), bucket_count << bucket_shift; the side slot follows */
  uint64_t bucket_count;
  uint64_t bucket_magic;   /* ceil(2^64 / bucket_count): exact mod by multiplication */
  unsigned bucket_shift;   /* log2 of the slots in a bucket: 0, 2, 3 or 4 */
  uint64_t a[GH_CK_MAX_FUNCTIONS];
  uint64_t b[GH_CK_MAX_FUNCTIONS];
  unsigned functions;      /* d */
  unsigned family;         /* gh_hash_family */
  unsigned max_evictions;  /* exchanges one chain may do before it gives up */
  gh_slot_format format;
  void *stash;             /* stash_slots entries; empty ones (erased) hold the empty key */
  uint64_t stash_slots;
} gh_ck_geometry;

/* x mod (2^32 - 5) for any 64-bit x: 2^32 = 5 (mod p). */
GH_HD uint64_t gh_ck_mod_prime32(uint64_t x) {
  x = (x >> 32) * 5u + (x & 0xFFFFFFFFull);
  x = (x >> 32) * 5u + (x & 0xFFFFFFFFull);
  return x >= GH_CK_PRIME32 ? x - GH_CK_PRIME32 : x;
}

/* x mod (2^61 - 1) for any 64-bit x: 2^61 = 1 (mod p), and (x mod 2^61) + (x >> 61) < p + 8. */
GH_HD uint64_t gh_ck_fold61(uint64_t x) {
  x = (x & GH_CK_PRIME61) + (x >> 61);
  return x >= GH_CK_PRIME61 ? x - GH_CK_PRIME61 : x;
}

/* (a * k) mod (2^61 - 1) for a < 2^61 and any 64-bit k. */
GH_HD uint64_t gh_ck_mulmod61(uint64_t a, uint64_t k) {
  uint64_t lo = a * k, hi;
#if defined(__CUDA_ARCH__)
  hi = __umul64hi(a, k);
#else
  hi = (uint64_t)(((unsigned __int128)a * k) >> 64);
#endif
  /* a * k = hi 2^64 + lo, and 2^64 = 8 (mod p); hi < 2^61 so every term stays below 2^62. */
  return gh_ck_fold61((lo & GH_CK_PRIME61) + (lo >> 61) + ((hi << 3) & GH_CK_PRIME61) + (hi >> 58));
}

/* x mod divisor, exact for x < 2^32 (Lemire, Kaser and Kurz, "Faster remainder by direct
 * computation"). */
GH_HD uint64_t gh_ck_fastmod(uint64_t x, uint64_t magic, uint64_t divisor) {
  const uint64_t low = magic * x;
#if defined(__CUDA_ARCH__)
  return __umul64hi(low, divisor);
#else
  return (uint64_t)(((unsigned __int128)low * divisor) >> 64);
#endif
}

GH_HD uint64_t gh_ck_magic(uint64_t divisor) { return ~0ull / divisor + 1u; }

/* The bucket of key under hash function i (its slot, with one slot a bucket). */
GH_HD uint64_t gh_ck_bucket(const gh_ck_geometry *g, uint64_t key, unsigned i) {
  uint64_t h;
  if (g->format.key_bits == 32) {
    h = g->family == GH_HASH_XOR ? gh_ck_mod_prime32((g->a[i] ^ key) + g->b[i])
                                 : gh_ck_mod_prime32(g->a[i] * key + g->b[i]);
    return gh_ck_fastmod(h, g->bucket_magic, g->bucket_count);
  }
  const uint64_t mixed = gh_fmix64(key);
  if (g->family == GH_HASH_XOR) {
    h = gh_ck_fold61(gh_ck_fold61(g->a[i] ^ mixed) + g->b[i]);
  } else {
    const uint64_t inner = gh_ck_fold61(gh_ck_mulmod61(g->a[i], mixed >> 32) + (mixed & 0xFFFFFFFFull));
    h = gh_ck_fold61(gh_ck_mulmod61(g->a[i], inner) + g->b[i]);
  }
  /* h < 2^61: fold to 32 bits without losing uniformity, then the exact mod. */
  return gh_ck_fastmod(gh_ck_mod_prime32(h), g->bucket_magic, g->bucket_count);
}

/* Where an entry evicted from bucket `from` goes next: the bucket of the function after the first
 * one that points at `from`, skipping functions that point at `from` too. An entry whose functions
 * all point at `from` can only go back there; its chain then runs out and the table restarts. */
GH_HD uint64_t gh_ck_next_bucket(const gh_ck_geometry *g, uint64_t key, uint64_t from) {
  uint64_t location[GH_CK_MAX_FUNCTIONS];
  unsigned current = g->functions;
  for (unsigned i = 0; i < g->functions; ++i) {
    location[i] = gh_ck_bucket(g, key, i);
    if (current == g->functions && location[i] == from) current = i;
  }
  if (current == g->functions) return location[0];
  for (unsigned step = 1; step < g->functions; ++step) {
    const unsigned next = (current + step) % g->functions;
    if (location[next] != from) return location[next];
  }
  return from;
}

typedef enum gh_ck_outcome {
  GH_CK_PLACED = 0,  /* the chain ended in an empty slot: one more key in the table */
  GH_CK_MERGED = 1,  /* it ended by meeting another copy of the key held: merged by policy */
  GH_CK_GAVE_UP = 2  /* max_evictions exchanges: *held is the entry left over */
} gh_ck_outcome;

/* The slot a bucketed chain evicts at its step: a hash of the key held and the step, so that
 * walks through a full region of the table take different turns. */
GH_HD unsigned gh_ck_victim(const gh_ck_geometry *g, uint64_t key, unsigned step) {
  return (unsigned)(gh_fmix64(key + 0x9E3779B97F4A7C15ull * (step + 1u)) >> (64u - g->bucket_shift));
}

/* The key of slot s, given the 16 bytes (lo, hi) that hold it (bytes (s * slot_bytes) & ~15 on). */
GH_HD uint64_t gh_ck_key_in_chunk(gh_slot_format f, uint64_t lo, uint64_t hi, uint64_t s) {
  const unsigned at = (unsigned)((s * f.slot_bytes) & 15u);
  const uint64_t word = at < 8u ? lo : hi;
  return (f.slot_bytes == 4 ? word >> (8u * (at & 7u)) : word) & gh_slot_key_mask(f.key_bits);
}

/* The value of slot s, given the 16 bytes (lo, hi) that hold it (0 for sets). */
GH_HD uint64_t gh_ck_value_in_chunk(gh_slot_format f, uint64_t lo, uint64_t hi, uint64_t s) {
  if (f.value_bits == 0) return 0;
  if (f.slot_bytes == 16) return hi & gh_slot_value_mask(f.value_bits); /* (above a 32-bit value: padding) */
  return ((s * f.slot_bytes) & 8u ? hi : lo) >> 32;
}

/* One scan of a bucket for a bucketed chain (the host's; the CUDA kernels scan a bucket with a
 * group of lanes): *match = the slot holding key, else *empty = the first empty slot (either ~0
 * when there is none), reading 16 bytes at a time. */
GH_HD void gh_ck_scan_bucket(const gh_ck_geometry *g, void *slots, uint64_t bucket, uint64_t key, uint64_t *match,
                             uint64_t *empty) {
  const gh_slot_format f = g->format;
  const uint64_t first = bucket << g->bucket_shift, end = first + (1ull << g->bucket_shift);
  const uint64_t per_chunk = 16u / f.slot_bytes;
  *match = *empty = ~0ull;
  for (uint64_t chunk = first; chunk < end; chunk += per_chunk) {
    const void *at = gh_slot_at(f, slots, chunk);
    const uint64_t lo = gh_load_u64(at), hi = gh_load_u64((const char *)at + 8);
    for (uint64_t s = chunk; s < chunk + per_chunk; ++s) {
      const uint64_t seen = gh_ck_key_in_chunk(f, lo, hi, s);
      if (seen == key) {
        *match = s;
        return;
      }
      if (seen == gh_slot_empty_key(f.key_bits) && *empty == ~0ull) *empty = s;
    }
  }
}

/* Marks slot s in `moved` (bit s; NULL: no bitmap) and counts the mark. */
GH_HD void gh_ck_mark_moved(uint32_t *moved, uint64_t s, unsigned *marks) {
  if (moved == NULL) return;
  gh_bitmap_set(moved, s);
  *marks += 1;
}

/* The bucketed chain (see Insert above). Every scan and exchange counts as a step. Slots it writes
 * by exchange, and the slot where a displaced key comes to rest, are marked in `moved` (counted
 * into *marks). */
GH_HD gh_ck_outcome gh_ck_insert_bucketed(const gh_ck_geometry *g, void *slots, gh_slot_bits *held, int policy,
                                          uint32_t *moved, unsigned *marks) {
  const gh_slot_format f = g->format;
  const gh_slot_bits empty_bits = gh_slot_pack(f, gh_slot_empty_key(f.key_bits), ~0ull);
  uint64_t key = gh_slot_bits_key(f, *held), bucket = gh_ck_bucket(g, key, 0);
  unsigned others_to_try = g->functions - 1u; /* buckets of the held key still to scan before evicting */
  int displaced_held = 0;                     /* the entry held was evicted from a slot */
  for (unsigned step = 0; step < g->max_evictions; ++step) {
    uint64_t match, empty;
    gh_ck_scan_bucket(g, slots, bucket, key, &match, &empty);
    if (match != ~0ull) {
      if (gh_slot_merge_if_key(f, gh_slot_at(f, slots, match), key, policy, gh_slot_bits_value(f, *held)))
        return GH_CK_MERGED;
      continue; /* the copy moved on meanwhile: scan again */
    }
    if (empty != ~0ull) {
      if (gh_slot_bits_key(f, gh_slot_cas(f, gh_slot_at(f, slots, empty), empty_bits, *held)) ==
          gh_slot_empty_key(f.key_bits)) {
        if (displaced_held) gh_ck_mark_moved(moved, empty, marks);
        return GH_CK_PLACED;
      }
      continue; /* another chain took the slot: scan again */
    }
    if (others_to_try > 0) {
      others_to_try -= 1;
      bucket = gh_ck_next_bucket(g, key, bucket);
      continue;
    }
    const uint64_t victim_at = (bucket << g->bucket_shift) + gh_ck_victim(g, key, step);
    void *victim = gh_slot_at(f, slots, victim_at);
    const gh_slot_bits displaced = gh_slot_exchange(f, victim, *held);
    const uint64_t displaced_key = gh_slot_bits_key(f, displaced);
    gh_ck_mark_moved(moved, victim_at, marks);
    if (displaced_key == gh_slot_empty_key(f.key_bits)) return GH_CK_PLACED;
    if (displaced_key == key && gh_slot_merge_if_key(f, victim, key, policy, gh_slot_bits_value(f, displaced)))
      return GH_CK_MERGED;
    *held = displaced;
    key = displaced_key;
    bucket = gh_ck_next_bucket(g, key, bucket);
    others_to_try = g->functions - 2u;
    displaced_held = 1;
  }
  return GH_CK_GAVE_UP;
}

/* A chain's end for the entry it started from: a chain that gave up flags the entry and writes back
 * the entry it still holds (placement passes of both backends). */
GH_HD void gh_ck_chain_end(gh_slot_format f, gh_ck_outcome outcome, void *entry, gh_slot_bits held, uint8_t *failed) {
  *failed = outcome == GH_CK_GAVE_UP;
  if (outcome == GH_CK_GAVE_UP) gh_slot_write(f, entry, held);
}

/* Runs one eviction chain for *held, starting at its first bucket (moved, marks: the bucketed
 * chain's). */
GH_HD gh_ck_outcome gh_ck_insert_chain(const gh_ck_geometry *g, void *slots, gh_slot_bits *held, int policy,
                                       uint32_t *moved, unsigned *marks) {
  if (g->bucket_shift > 0) return gh_ck_insert_bucketed(g, slots, held, policy, moved, marks);
  const gh_slot_format f = g->format;
  const uint64_t empty = gh_slot_empty_key(f.key_bits);
  uint64_t location = gh_ck_bucket(g, gh_slot_bits_key(f, *held), 0);
  for (unsigned evictions = 0; evictions < g->max_evictions; ++evictions) {
    void *slot = gh_slot_at(f, slots, location);
    const gh_slot_bits displaced = gh_slot_exchange(f, slot, *held);
    const uint64_t key = gh_slot_bits_key(f, displaced);
    if (key == empty) return GH_CK_PLACED;
    if (key == gh_slot_bits_key(f, *held) &&
        gh_slot_merge_if_key(f, slot, key, policy, gh_slot_bits_value(f, displaced)))
      return GH_CK_MERGED;
    *held = displaced;
    location = gh_ck_next_bucket(g, key, location);
  }
  return GH_CK_GAVE_UP;
}

/* The entry at a position (see the stash above). */
GH_HD void *gh_ck_entry_at(const gh_ck_geometry *g, void *slots, uint64_t position) {
  return position <= g->slot_count ? gh_slot_at(g->format, slots, position)
                                   : gh_slot_at(g->format, g->stash, position - g->slot_count - 1);
}

/* The stash position holding key, or ~0: a scan, since the stash is small (and usually empty). */
GH_HD uint64_t gh_ck_stash_locate(const gh_ck_geometry *g, uint64_t key) {
  for (uint64_t j = 0; j < g->stash_slots; ++j)
    if (gh_slot_load_key(g->format, gh_slot_at(g->format, g->stash, j)) == key) return g->slot_count + 1 + j;
  return ~0ull;
}

/* The position holding key (not the all-ones key), or ~0 when absent: at most d bucket reads, in
 * function order, then the stash. */
GH_HD uint64_t gh_ck_locate(const gh_ck_geometry *g, void *slots, uint64_t key) {
  const uint64_t width = 1ull << g->bucket_shift;
  for (unsigned i = 0; i < g->functions; ++i) {
    const uint64_t first = gh_ck_bucket(g, key, i) << g->bucket_shift;
    for (uint64_t s = first; s < first + width; ++s)
      if (gh_slot_load_key(g->format, gh_slot_at(g->format, slots, s)) == key) return s;
  }
  return g->stash_slots ? gh_ck_stash_locate(g, key) : ~0ull;
}

GH_HD int gh_ck_is_sentinel(const gh_ck_geometry *g, uint64_t key) {
  return key == gh_slot_empty_key(g->format.key_bits);
}

GH_HD void *gh_ck_side_slot(const gh_ck_geometry *g, void *slots) {
  return gh_slot_at(g->format, slots, g->slot_count);
}

/* Finds key (sentinel or not); returns 1 and its value when present. */
GH_HD int gh_ck_find(const gh_ck_geometry *g, void *slots, uint64_t key, uint64_t *value) {
  if (gh_ck_is_sentinel(g, key)) return gh_side_find(g->format, gh_ck_side_slot(g, slots), value);
  const uint64_t at = gh_ck_locate(g, slots, key);
  if (at == ~0ull) return 0;
  *value = gh_slot_load_value(g->format, gh_ck_entry_at(g, slots, at));
  return 1;
}

/* Where an erase removed its key. */
typedef enum gh_ck_erased { GH_CK_ABSENT = 0, GH_CK_ERASED_MAIN = 1, GH_CK_ERASED_SIDE = 2, GH_CK_ERASED_STASH = 3 } gh_ck_erased;

/* Erases key; says where if this caller removed it. No tombstones: lookups read all d slots. */
GH_HD gh_ck_erased gh_ck_erase(const gh_ck_geometry *g, void *slots, uint64_t key) {
  const uint64_t empty = gh_slot_empty_key(g->format.key_bits);
  if (gh_ck_is_sentinel(g, key))
    return gh_side_erase(g->format, gh_ck_side_slot(g, slots)) ? GH_CK_ERASED_SIDE : GH_CK_ABSENT;
  const uint64_t at = gh_ck_locate(g, slots, key);
  if (at == ~0ull || !gh_slot_erase(g->format, gh_ck_entry_at(g, slots, at), key, empty)) return GH_CK_ABSENT;
  return at < g->slot_count ? GH_CK_ERASED_MAIN : GH_CK_ERASED_STASH;
}

/* Index (0..d-1) of the first function that points at the bucket of slot `at` for key, or d if
 * none does. */
GH_HD unsigned gh_ck_function_of(const gh_ck_geometry *g, uint64_t key, uint64_t at) {
  for (unsigned i = 0; i < g->functions; ++i)
    if (gh_ck_bucket(g, key, i) == at >> g->bucket_shift) return i;
  return g->functions;
}

/* The earliest position before slot `at` that holds key: in the buckets of the functions before
 * the first that points at at's bucket, then before `at` in its own bucket; ~0 if none. */
GH_HD uint64_t gh_ck_earlier_copy(const gh_ck_geometry *g, void *slots, uint64_t key, uint64_t at) {
  const unsigned own = gh_ck_function_of(g, key, at);
  const uint64_t width = 1ull << g->bucket_shift;
  for (unsigned i = 0; i <= own && i < g->functions; ++i) {
    const uint64_t first = gh_ck_bucket(g, key, i) << g->bucket_shift;
    const uint64_t end = i == own ? at : first + width;
    for (uint64_t s = first; s < end; ++s)
      if (gh_slot_load_key(g->format, gh_slot_at(g->format, slots, s)) == key) return s;
  }
  return ~0ull;
}

/* Clean-up of slot `at` after a batch: if its key also sits at an earlier position, the value
 * merges into that copy and this slot empties. Returns 1 when it removed a copy. */
GH_HD int gh_ck_dedupe_slot(const gh_ck_geometry *g, void *slots, uint64_t at, int policy) {
  const gh_slot_format f = g->format;
  void *slot = gh_slot_at(f, slots, at);
  const gh_slot_bits bits = gh_slot_load(f, slot);
  const uint64_t key = gh_slot_bits_key(f, bits);
  if (key == gh_slot_empty_key(f.key_bits)) return 0;
  const uint64_t earlier = gh_ck_earlier_copy(g, slots, key, at);
  if (earlier == ~0ull) return 0;
  gh_slot_merge_if_key(f, gh_slot_at(f, slots, earlier), key, policy, gh_slot_bits_value(f, bits));
  gh_slot_exchange(f, slot, gh_slot_pack(f, gh_slot_empty_key(f.key_bits), ~0ull));
  return 1;
}

/* Clean-up of a slot marked in `moved` (see Invariant above): every copy of its key in the key's
 * buckets but the earliest (the first in function order, then slot order, as gh_ck_locate finds
 * it) merges into that one and empties, in one read of each bucket, 16 bytes at a time. Each copy
 * is taken by a CAS of the bits read from it, so that callers resolving one key at once (from two
 * marked slots) remove each copy once; the earliest copy, which none of them takes, is the same
 * for all. Returns the copies this caller removed. */
GH_HD unsigned gh_ck_resolve_copies(const gh_ck_geometry *g, void *slots, uint64_t at, int policy) {
  const gh_slot_format f = g->format;
  const uint64_t empty = gh_slot_empty_key(f.key_bits);
  const uint64_t key = gh_slot_load_key(f, gh_slot_at(f, slots, at));
  if (key == empty) return 0;
  const uint64_t width = 1ull << g->bucket_shift, per_chunk = 16u / f.slot_bytes;
  const gh_slot_bits emptied = gh_slot_pack(f, empty, ~0ull);
  uint64_t keeper = ~0ull;
  unsigned removed = 0;
  for (unsigned i = 0; i < g->functions; ++i) {
    const uint64_t bucket = gh_ck_bucket(g, key, i);
    if (gh_ck_function_of(g, key, bucket << g->bucket_shift) < i) continue; /* read already */
    for (uint64_t chunk = bucket << g->bucket_shift; chunk < (bucket << g->bucket_shift) + width; chunk += per_chunk) {
      const void *piece = gh_slot_at(f, slots, chunk);
      const uint64_t lo = gh_load_u64(piece), hi = gh_load_u64((const char *)piece + 8);
      for (uint64_t s = chunk; s < chunk + per_chunk; ++s) {
        if (gh_ck_key_in_chunk(f, lo, hi, s) != key) continue;
        if (keeper == ~0ull) {
          keeper = s;
          continue;
        }
        void *slot = gh_slot_at(f, slots, s);
        const gh_slot_bits seen = gh_slot_load(f, slot);
        if (gh_slot_bits_key(f, seen) != key || !gh_slot_bits_equal(gh_slot_cas(f, slot, seen, emptied), seen)) continue;
        gh_slot_merge_if_key(f, gh_slot_at(f, slots, keeper), key, policy, gh_slot_bits_value(f, seen));
        removed += 1;
      }
    }
  }
  return removed;
}

/* Every position an entry can occupy: main slots, side slot, stash. */
GH_HD uint64_t gh_ck_position_count(const gh_ck_geometry *g) { return g->slot_count + 1 + g->stash_slots; }

/* Whether the entry at a position holds a key, given the key bits loaded from it; the side slot's
 * marker is replaced by the key it stands for (all ones). */
GH_HD int gh_ck_holds_key(const gh_ck_geometry *g, uint64_t position, uint64_t *key) {
  const uint64_t empty = gh_slot_empty_key(g->format.key_bits);
  if (position != g->slot_count) return *key != empty;
  if (*key != GH_SIDE_PRESENT) return 0;
  *key = empty;
  return 1;
}

/* Clean-up of stash position j after a stash was formed: a copy whose key an earlier stash entry
 * holds merges into that one and empties. The earliest copy never empties, so all merge into it.
 * Returns 1 when it removed a copy. */
GH_HD int gh_ck_dedupe_stash_entry(const gh_ck_geometry *g, uint64_t j, int policy) {
  const gh_slot_format f = g->format;
  void *entry = gh_slot_at(f, g->stash, j);
  const gh_slot_bits bits = gh_slot_load(f, entry);
  const uint64_t key = gh_slot_bits_key(f, bits);
  if (key == gh_slot_empty_key(f.key_bits)) return 0;
  for (uint64_t i = 0; i < j; ++i) {
    void *earlier = gh_slot_at(f, g->stash, i);
    if (gh_slot_load_key(f, earlier) != key) continue;
    gh_slot_merge_if_key(f, earlier, key, policy, gh_slot_bits_value(f, bits));
    gh_slot_exchange(f, entry, gh_slot_pack(f, gh_slot_empty_key(f.key_bits), ~0ull));
    return 1;
  }
  return 0;
}

/* ---- First buckets by regions ------------------------------------------------------------------
 * A large batch into a table that holds no keys (a new or cleared one, of 4- or 8-byte slots):
 * each entry goes to its first bucket if that has room, which is where most keys end up (at load
 * 0.8, all but about 7 % with 8 slots a bucket, 3 % with 16: the Poisson overflow of a bucket). The
 * batch is put in runs by the region of its first bucket (GH_REGION_WORDS consecutive slots), each
 * region is built apart from the table (core/region_words.h: in shared memory on the GPU, a block a
 * region) and written out whole, and the entries whose first bucket was full go on to the eviction
 * chains as any batch does. A region is written out whole over the table's slots, hence only into
 * a table whose main slots hold no keys (and the device's shared memory must hold a region: 72 KB a
 * block with the set below, which sm_80 and later give);
 * the copies of a key meet in its first bucket and merge there. The copies of a key whose first
 * bucket was full meet in the region's set of passed entries (GH_REGION_SET_WORDS) and leave as
 * one, so the chains get a batch without copies and no clean-up follows; only when a region's set
 * fills do entries leave unmerged (spilled), and then the clean-up runs (a key passed on is stored
 * nowhere, so the chains' marks still cover its copies: Invariant above). */

GH_HD uint64_t gh_ck_regions(const gh_ck_geometry *g) { return (g->slot_count + GH_REGION_WORDS - 1u) / GH_REGION_WORDS; }

/* The region of key's first bucket. */
GH_HD uint64_t gh_ck_first_region(const gh_ck_geometry *g, uint64_t key) {
  return (gh_ck_bucket(g, key, 0) << g->bucket_shift) / GH_REGION_WORDS;
}

/* An entry (slot bits) of region `region` into its first bucket in the region's words, else into
 * the region's set of passed entries: GH_REGION_INSERTED (a key stored), GH_REGION_MERGED (into a
 * copy, in the bucket or the set, or a first copy into the set: nothing stored yet) or
 * GH_REGION_FULL (neither had room: *word leaves as it is). */
GH_HD gh_region_outcome gh_ck_first_put(const gh_ck_geometry *g, uint64_t *words, uint64_t *passed_set,
                                        uint64_t region, gh_slot_bits entry, int policy, uint64_t *word) {
  const gh_slot_format f = g->format;
  const uint64_t key = gh_slot_bits_key(f, entry);
  const uint64_t b = gh_ck_bucket(g, key, 0) - region * (GH_REGION_WORDS >> g->bucket_shift);
  const unsigned slots = 1u << g->bucket_shift;
  *word = gh_region_word(f.key_bits, key, gh_slot_bits_value(f, entry));
  const gh_region_outcome outcome = gh_region_insert(words + (b << g->bucket_shift), slots, gh_region_flip(b, slots),
                                                     f.key_bits, f.value_bits != 0, *word, policy);
  if (outcome != GH_REGION_FULL) return outcome;
  return gh_region_set_insert(passed_set, f.key_bits, f.value_bits != 0, *word, policy) == GH_REGION_FULL
             ? GH_REGION_FULL
             : GH_REGION_MERGED;
}

/* An entry back from a region word (an empty word gives an empty slot). */
GH_HD gh_slot_bits gh_ck_word_entry(const gh_ck_geometry *g, uint64_t word) {
  const gh_slot_format f = g->format;
  return gh_slot_pack(f, gh_region_word_key(f.key_bits, word), word >> 32);
}

/* Slot j of region `region`, out of its words into the table. */
GH_HD void gh_ck_first_store(const gh_ck_geometry *g, void *slots, uint64_t region, const uint64_t *words, uint64_t j) {
  const unsigned per = 1u << g->bucket_shift;
  const uint64_t b = j >> g->bucket_shift;
  const uint64_t word = words[(b << g->bucket_shift) + ((j & (per - 1u)) ^ gh_region_flip(b, per))];
  gh_slot_write(g->format, gh_slot_at(g->format, slots, region * GH_REGION_WORDS + j), gh_ck_word_entry(g, word));
}

/* How many slots region `region` has (the last may have fewer). */
GH_HD uint64_t gh_ck_region_slots(const gh_ck_geometry *g, uint64_t region) {
  const uint64_t first = region * GH_REGION_WORDS;
  return g->slot_count - first < GH_REGION_WORDS ? g->slot_count - first : GH_REGION_WORDS;
}

#endif /* GH_CUCKOO_H */
