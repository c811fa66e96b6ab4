/* cuckoo.h - hash functions, eviction chains, lookups and duplicate clean-up of the cuckoo design
 * (Alcantara et al., GPU Computing Gems ch. 4), shared by the host backend and the CUDA kernels.
 *
 * Layout. slot_count slots in the shared slot format (gpuhash/detail/slot.h: one atomic exchange moves a
 * whole (key, value) pair), then one side slot for the all-ones key, which marks empty slots.
 *
 * Hashing. Key k may live in the d slots h_i(k) = (a_i k + b_i) mod p mod slot_count (or
 * ((a_i xor k) + b_i) mod p mod slot_count), p = 2^32 - 5 for 32-bit keys, so that distinct keys
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
 *
 * Invariant (validate): every key lies in one of its d slots and appears once. Two copies of one
 * key can survive a batch (one copy evicted before the other arrived), so each batch ends with a
 * clean-up: a copy that finds its key in an EARLIER of the key's d slots merges into it and
 * leaves. Nothing moves during the clean-up, so the earliest copy is stable and every copy merges
 * into the same one.
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

#define GH_CK_MAX_FUNCTIONS 5u
#define GH_CK_PRIME32 4294967291ull          /* 2^32 - 5 */
#define GH_CK_PRIME61 0x1FFFFFFFFFFFFFFFull /* 2^61 - 1 */
/* The compacting table's value for "no id yet" while a batch is being placed. */
#define GH_CK_NO_ID (~0ull)

typedef struct gh_ck_geometry {
  uint64_t slot_count;     /* main slots (< 2^32); the side slot follows */
  uint64_t slot_magic;     /* ceil(2^64 / slot_count): exact mod by multiplication */
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

/* x mod slot_count, exact for x < 2^32 (Lemire, Kaser and Kurz, "Faster remainder by direct
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

/* The slot of key under hash function i. */
GH_HD uint64_t gh_ck_location(const gh_ck_geometry *g, uint64_t key, unsigned i) {
  uint64_t h;
  if (g->format.key_bits == 32) {
    h = g->family == GH_HASH_XOR ? gh_ck_mod_prime32((g->a[i] ^ key) + g->b[i])
                                 : gh_ck_mod_prime32(g->a[i] * key + g->b[i]);
    return gh_ck_fastmod(h, g->slot_magic, g->slot_count);
  }
  const uint64_t mixed = gh_fmix64(key);
  if (g->family == GH_HASH_XOR) {
    h = gh_ck_fold61(gh_ck_fold61(g->a[i] ^ mixed) + g->b[i]);
  } else {
    const uint64_t inner = gh_ck_fold61(gh_ck_mulmod61(g->a[i], mixed >> 32) + (mixed & 0xFFFFFFFFull));
    h = gh_ck_fold61(gh_ck_mulmod61(g->a[i], inner) + g->b[i]);
  }
  /* h < 2^61: fold to 32 bits without losing uniformity, then the exact mod. */
  return gh_ck_fastmod(gh_ck_mod_prime32(h), g->slot_magic, g->slot_count);
}

/* Where an entry evicted from slot `from` goes next: the slot of the function after the first one
 * that points at `from`, skipping functions that point at `from` too. An entry whose functions
 * all point at `from` can only go back there; its chain then runs out and the table restarts. */
GH_HD uint64_t gh_ck_next_location(const gh_ck_geometry *g, uint64_t key, uint64_t from) {
  uint64_t location[GH_CK_MAX_FUNCTIONS];
  unsigned current = g->functions;
  for (unsigned i = 0; i < g->functions; ++i) {
    location[i] = gh_ck_location(g, key, i);
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

/* Runs one eviction chain for *held, starting at its first slot. */
GH_HD gh_ck_outcome gh_ck_insert_chain(const gh_ck_geometry *g, void *slots, gh_slot_bits *held, int policy) {
  const gh_slot_format f = g->format;
  const uint64_t empty = gh_slot_empty_key(f.key_bits);
  uint64_t location = gh_ck_location(g, gh_slot_bits_key(f, *held), 0);
  for (unsigned evictions = 0; evictions < g->max_evictions; ++evictions) {
    void *slot = gh_slot_at(f, slots, location);
    const gh_slot_bits displaced = gh_slot_exchange(f, slot, *held);
    const uint64_t key = gh_slot_bits_key(f, displaced);
    if (key == empty) return GH_CK_PLACED;
    if (key == gh_slot_bits_key(f, *held) &&
        gh_slot_merge_if_key(f, slot, key, policy, gh_slot_bits_value(f, displaced)))
      return GH_CK_MERGED;
    *held = displaced;
    location = gh_ck_next_location(g, key, location);
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

/* The position holding key (not the all-ones key), or ~0 when absent: at most d reads, in
 * function order, then the stash. */
GH_HD uint64_t gh_ck_locate(const gh_ck_geometry *g, void *slots, uint64_t key) {
  for (unsigned i = 0; i < g->functions; ++i) {
    const uint64_t location = gh_ck_location(g, key, i);
    if (gh_slot_load_key(g->format, gh_slot_at(g->format, slots, location)) == key) return location;
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

/* Index (0..d-1) of the first function that points at slot `at` for key, or d if none does. */
GH_HD unsigned gh_ck_function_of(const gh_ck_geometry *g, uint64_t key, uint64_t at) {
  for (unsigned i = 0; i < g->functions; ++i)
    if (gh_ck_location(g, key, i) == at) return i;
  return g->functions;
}

/* Clean-up of slot `at` after a batch: if its key also sits in an earlier of the key's slots, the
 * value merges into that copy and this slot empties. Returns 1 when it removed a copy. */
GH_HD int gh_ck_dedupe_slot(const gh_ck_geometry *g, void *slots, uint64_t at, int policy) {
  const gh_slot_format f = g->format;
  void *slot = gh_slot_at(f, slots, at);
  const gh_slot_bits bits = gh_slot_load(f, slot);
  const uint64_t key = gh_slot_bits_key(f, bits);
  if (key == gh_slot_empty_key(f.key_bits)) return 0;
  const unsigned own = gh_ck_function_of(g, key, at);
  for (unsigned i = 0; i < own; ++i) {
    const uint64_t earlier = gh_ck_location(g, key, i);
    if (earlier == at) continue;
    void *first = gh_slot_at(f, slots, earlier);
    if (gh_slot_load_key(f, first) != key) continue;
    gh_slot_merge_if_key(f, first, key, policy, gh_slot_bits_value(f, bits));
    gh_slot_exchange(f, slot, gh_slot_pack(f, gh_slot_empty_key(f.key_bits), ~0ull));
    return 1;
  }
  return 0;
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

#endif /* GH_CUCKOO_H */
