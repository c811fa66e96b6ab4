/* gpuhash/detail/dycuckoo.h - the DyCuckoo design's layout and the logic its host backend, CUDA
 * kernels and device-side API share (GH_HD): subtables of 128-byte key lines, their hashes, the
 * choice of a new key's subtable, and the bucket arithmetic of resizing (Li et al., "Dynamic Hash
 * Tables on GPUs"). Internal: not part of the stable API, it may change with any release.
 *
 * d subtables; subtable i has buckets[i] buckets. A bucket is one 128-byte line of keys (32 keys
 * of 32 bits or 16 of 64 bits, EMPTY = all ones); its values are a separate array at the same
 * (bucket, slot) index, and a lock word per bucket is a third. A key's bucket in subtable i is
 * mulhi(h_i(key), buckets[i]) with h_i = fmix(key ^ seed[i]): doubling subtable i sends bucket b to
 * 2b and 2b + 1, halving merges 2b and 2b + 1 into b, both without conflicts. */
#ifndef GH_DETAIL_DYCUCKOO_H
#define GH_DETAIL_DYCUCKOO_H

#include "gpuhash/detail/hash.h"
#include "gpuhash/detail/hd.h"
#include "gpuhash/detail/slot.h"

#define GH_DY_MAX_TABLES 8u
#define GH_DY_LINE_BYTES 128u
#define GH_DY_LOCK_FREE 0u
#define GH_DY_LOCK_HELD 1u

typedef struct gh_dy_geometry {
  unsigned key_bits;    /* 32 or 64 */
  unsigned value_bytes; /* 0 (a set), 4 or 8 */
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
  if (key_bits == 32) return gh_range32(gh_fmix32((uint32_t)key ^ (uint32_t)seed), buckets);
  return gh_range64(gh_fmix64(key ^ seed), buckets);
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

/* Values of 4 or 8 bytes as integers (plain accesses: writers hold the bucket's lock). */
GH_HD uint64_t gh_dy_value_read(const gh_dy_geometry *g, const void *v) {
  if (g->value_bytes == 4) return *(const uint32_t *)v;
  return g->value_bytes == 8 ? *(const uint64_t *)v : 0u;
}
GH_HD void gh_dy_value_write(const gh_dy_geometry *g, void *v, uint64_t value) {
  if (g->value_bytes == 4) *(uint32_t *)v = (uint32_t)value;
  else if (g->value_bytes == 8) *(uint64_t *)v = value;
}

/* The all-ones key's side slot has the slot format of (key_bits, value_bytes * 8). */
GH_HD gh_slot_format gh_dy_side_format(const gh_dy_geometry *g) {
  return gh_slot_format_make(g->key_bits, g->value_bytes * 8u);
}

#endif /* GH_DETAIL_DYCUCKOO_H */
