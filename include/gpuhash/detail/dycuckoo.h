/* gpuhash/detail/dycuckoo.h - the DyCuckoo design's layout and the logic its host backend, CUDA
 * kernels and device-side API share (GH_HD): subtables of 128-byte key lines, their hashes, the
 * choice of a new key's subtable, and the bucket arithmetic of resizing (Li et al., "Dynamic Hash
 * Tables on GPUs"). Internal: not part of the stable API, it may change with any release.
 *
 * d subtables; subtable i has buckets[i] buckets. A bucket is one 128-byte line of keys (32 keys
 * of 32 bits or 16 of 64 bits, EMPTY = all ones); its values are a separate array at the same
 * (bucket, slot) index, and a lock word per bucket is a third. A key's bucket in subtable i is
 * mulhi(h_i(key), buckets[i]) with h_i = fmix(key ^ seed[i]): doubling subtable i sends bucket b to
 * 2b and 2b + 1, halving merges 2b and 2b + 1 into b, both without conflicts.
 *
 * Values are value_bytes each (0 for a set, up to 128). Values of 4 and 8 bytes are unsigned
 * integers that the duplicate policies combine; values of any other size are opaque records that
 * GH_KEEP_FIRST keeps and GH_OVERWRITE replaces. The all-ones key (EMPTY) lives beside the
 * subtables in a side entry of its own: a lock word, a presence word and the value. */
#ifndef GH_DETAIL_DYCUCKOO_H
#define GH_DETAIL_DYCUCKOO_H

#include <string.h>

#include "gpuhash/detail/atomics.h"
#include "gpuhash/detail/hash.h"
#include "gpuhash/detail/hd.h"
#include "gpuhash/detail/slot.h"

#define GH_DY_MAX_TABLES 8u
#define GH_DY_LINE_BYTES 128u
#define GH_DY_LOCK_FREE 0u
#define GH_DY_LOCK_HELD 1u
#define GH_DY_MAX_VALUE_BYTES 128u

typedef struct gh_dy_geometry {
  unsigned key_bits;    /* 32 or 64 */
  unsigned value_bytes; /* 0 (a set) .. GH_DY_MAX_VALUE_BYTES */
  unsigned tables;      /* d */
  unsigned slots;       /* keys per bucket: 128 / (key_bits / 8) */
  uint64_t buckets[GH_DY_MAX_TABLES];
  uint64_t seed[GH_DY_MAX_TABLES];
  uint64_t choice_seed;
  /* The choice of a new key's subtable: subtable i when the key's choice hash (32 bits) is below
   * choose[i] and not below choose[i - 1] (cumulative shares of 2^32; the last is 2^32). */
  uint64_t choose[GH_DY_MAX_TABLES];
} gh_dy_geometry;

GH_HD uint64_t gh_dy_empty_key(const gh_dy_geometry *g) { return g->key_bits == 32 ? 0xFFFFFFFFull : ~0ull; }

/* The bucket of a key_bits-wide key in a subtable of `buckets` buckets hashed with seed. */
GH_HD uint64_t gh_dy_bucket_with(unsigned key_bits, uint64_t seed, uint64_t buckets, uint64_t key) {
  return gh_hash_to_range(key_bits, seed, buckets, key);
}

/* The key's bucket in subtable i if that subtable had `buckets` buckets. */
GH_HD uint64_t gh_dy_bucket_of(const gh_dy_geometry *g, unsigned i, uint64_t buckets, uint64_t key) {
  return gh_dy_bucket_with(g->key_bits, g->seed[i], buckets, key);
}

GH_HD uint64_t gh_dy_bucket(const gh_dy_geometry *g, unsigned i, uint64_t key) {
  return gh_dy_bucket_of(g, i, g->buckets[i], key);
}

/* The subtable a new key goes to first. */
GH_HD unsigned gh_dy_target(const gh_dy_geometry *g, uint64_t key) {
  const uint64_t draw = gh_fmix32((uint32_t)(gh_fmix64(key ^ g->choice_seed) >> 32));
  for (unsigned i = 0; i + 1 < g->tables; ++i)
    if (draw < g->choose[i]) return i;
  return g->tables - 1;
}

/* Slots of subtable i (keys it can hold). */
GH_HD uint64_t gh_dy_table_slots(const gh_dy_geometry *g, unsigned i) { return g->buckets[i] * g->slots; }

/* Key k of a line (plain read: callers that race with writers use the atomics of their side). */
GH_HD uint64_t gh_dy_line_key(const gh_dy_geometry *g, const void *line, unsigned k) {
  return g->key_bits == 32 ? ((const uint32_t *)line)[k] : ((const uint64_t *)line)[k];
}

GH_HD void *gh_dy_line(const gh_dy_geometry *g, void *keys, uint64_t b) {
  (void)g;
  return (char *)keys + b * GH_DY_LINE_BYTES;
}

/* The value of slot k of bucket b in a subtable's value array (buckets of `slots` slots). */
GH_HD void *gh_dy_value_with(unsigned slots, unsigned value_bytes, void *values, uint64_t b, unsigned k) {
  return (char *)values + ((uint64_t)b * slots + k) * value_bytes;
}
GH_HD void *gh_dy_value_at(const gh_dy_geometry *g, void *values, uint64_t b, unsigned k) {
  return gh_dy_value_with(g->slots, g->value_bytes, values, b, k);
}

/* 1 when values are integers the policies combine (4 or 8 bytes), 0 for records (and sets). */
GH_HD int gh_dy_values_are_words(const gh_dy_geometry *g) { return g->value_bytes == 4u || g->value_bytes == 8u; }

/* Copies bytes, in the widest words both addresses and the length allow (a caller's record array
 * may start anywhere). */
GH_HD void gh_dy_copy_bytes(void *to, const void *from, unsigned bytes) {
  const uintptr_t align = (uintptr_t)to | (uintptr_t)from | bytes;
  if ((align & 7u) == 0) {
    for (unsigned j = 0; j < bytes / 8u; ++j) ((uint64_t *)to)[j] = ((const uint64_t *)from)[j];
  } else if ((align & 3u) == 0) {
    for (unsigned j = 0; j < bytes / 4u; ++j) ((uint32_t *)to)[j] = ((const uint32_t *)from)[j];
  } else {
    for (unsigned j = 0; j < bytes; ++j) ((unsigned char *)to)[j] = ((const unsigned char *)from)[j];
  }
}

/* Copies one value (any size; nothing for a set). */
GH_HD void gh_dy_value_copy(const gh_dy_geometry *g, void *to, const void *from) {
  gh_dy_copy_bytes(to, from, g->value_bytes);
}

/* Merges the value at `from` into the stored value at `to` by the policy: integers combine,
 * records are kept (GH_KEEP_FIRST) or replaced (GH_OVERWRITE). The caller excludes other writers
 * of `to`. */
GH_HD void gh_dy_value_merge(const gh_dy_geometry *g, int policy, void *to, const void *from) {
  if (gh_dy_values_are_words(g)) {
    /* (through memcpy: `from` may be a caller's value at any address; both sides little-endian) */
    uint64_t stored = 0, incoming = 0;
    memcpy(&stored, to, g->value_bytes);
    memcpy(&incoming, from, g->value_bytes);
    const uint64_t merged = gh_policy_combine(policy, g->value_bytes * 8u, stored, incoming);
    memcpy(to, &merged, g->value_bytes);
  } else if (policy == GH_OVERWRITE) {
    gh_dy_value_copy(g, to, from);
  }
}

/* ---- The all-ones key's side entry ----------------------------------------------------------- */

/* A lock word, a presence word, then the value (8-byte aligned). Inserts and erases of the
 * all-ones key take the lock (they are rare: one key of 2^key_bits); a find reads the presence word
 * and then the value, which is written before the presence word is set. */
#define GH_DY_SIDE_HEADER 8u
GH_HD unsigned gh_dy_side_bytes(const gh_dy_geometry *g) { return GH_DY_SIDE_HEADER + (g->value_bytes + 7u) / 8u * 8u; }
GH_HD void *gh_dy_side_value(void *side) { return (char *)side + GH_DY_SIDE_HEADER; }

GH_HD void gh_dy_side_lock(void *side) {
  while (gh_cas_u32(side, GH_DY_LOCK_FREE, GH_DY_LOCK_HELD) != GH_DY_LOCK_FREE) {
  }
  gh_fence(); /* the entry is read after the lock is ours */
}
GH_HD void gh_dy_side_unlock(void *side) {
  gh_fence(); /* the entry's writes are seen before the lock is free */
  gh_store_u32(side, GH_DY_LOCK_FREE);
}

GH_HD int gh_dy_side_present(const void *side) { return gh_load_u32((const char *)side + 4) != 0u; }

/* Inserts the all-ones key with the value at `value` (NULL for a set): 1 when it was absent. */
GH_HD int gh_dy_side_insert(const gh_dy_geometry *g, void *side, const void *value, int policy) {
  gh_dy_side_lock(side);
  const int absent = !gh_dy_side_present(side);
  if (absent) {
    if (value) gh_dy_value_copy(g, gh_dy_side_value(side), value);
    gh_fence(); /* a find that sees the key present sees its value */
    gh_store_u32((char *)side + 4, 1u);
  } else if (value) {
    gh_dy_value_merge(g, policy, gh_dy_side_value(side), value);
  }
  gh_dy_side_unlock(side);
  return absent;
}

/* Erases the all-ones key: 1 when this call removed it. */
GH_HD int gh_dy_side_erase(void *side) {
  gh_dy_side_lock(side);
  const int present = gh_dy_side_present(side);
  if (present) gh_store_u32((char *)side + 4, 0u);
  gh_dy_side_unlock(side);
  return present;
}

/* ---- Counters and the table as kernels see it ------------------------------------------------ */

/* Counters kept beside the subtables (device memory for CUDA). */
typedef struct gh_dy_counters {
  unsigned long long keys[GH_DY_MAX_TABLES]; /* keys stored in each subtable */
  unsigned long long side;                   /* 1 while the all-ones key is stored */
  unsigned long long size;                   /* keys stored: the subtables' and the side entry's */
  unsigned long long evictions;              /* forward moves made by inserts, ever */
  unsigned long long longest_search;         /* most buckets one insert locked, ever */
  /* Of the current pass (zeroed before it): */
  unsigned long long failed;                 /* inserts that found no room */
  unsigned long long erased;                 /* keys erased */
  unsigned long long flagged;                /* input positions flagged as not inserted */
  unsigned long long cursor;                 /* export's output position */
} gh_dy_counters;

/* A key more (delta 1) or less (~0: minus one) in subtable i. */
GH_HD void gh_dy_count_key(gh_dy_counters *c, unsigned i, uint64_t delta) {
  gh_add_u64(&c->keys[i], delta);
  gh_add_u64(&c->size, delta);
}

/* The all-ones key stored (delta 1) or erased (~0). */
GH_HD void gh_dy_count_side(gh_dy_counters *c, uint64_t delta) {
  gh_add_u64(&c->side, delta);
  gh_add_u64(&c->size, delta);
}

/* What a kernel needs of the table: the library's kernels take it by value, and a device view
 * points at a copy of it in device memory (refreshed by every host call that changes the table). */
typedef struct gh_dy_device {
  gh_dy_geometry g;
  void *keys[GH_DY_MAX_TABLES];
  void *values[GH_DY_MAX_TABLES];
  uint32_t *locks[GH_DY_MAX_TABLES];
  void *side;
  gh_dy_counters *counters;
  /* Device views: new keys the table takes before theta would pass fill_max (set by the host), and
   * how many device-side inserts have claimed (reset with every copy the host makes). */
  unsigned long long room;
  unsigned long long claimed;
} gh_dy_device;

#endif /* GH_DETAIL_DYCUCKOO_H */
