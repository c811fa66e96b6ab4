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

/* The key's bucket in subtable i if that subtable had `buckets` buckets. */
GH_HD uint64_t gh_dy_bucket_of(const gh_dy_geometry *g, unsigned i, uint64_t buckets, uint64_t key) {
  if (g->key_bits == 32) return gh_range32(gh_fmix32((uint32_t)key ^ (uint32_t)g->seed[i]), buckets);
  return gh_range64(gh_fmix64(key ^ g->seed[i]), buckets);
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

/* The value of slot k of bucket b in a subtable's value array. */
GH_HD void *gh_dy_value_at(const gh_dy_geometry *g, void *values, uint64_t b, unsigned k) {
  return (char *)values + ((uint64_t)b * g->slots + k) * g->value_bytes;
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

GH_HD void gh_dy_key_write(const gh_dy_geometry *g, void *line, unsigned k, uint64_t key) {
  if (g->key_bits == 32) ((uint32_t *)line)[k] = (uint32_t)key;
  else ((uint64_t *)line)[k] = key;
}

/* The all-ones key's side slot has the slot format of (key_bits, value_bytes * 8). */
GH_HD gh_slot_format gh_dy_side_format(const gh_dy_geometry *g) {
  return gh_slot_format_make(g->key_bits, g->value_bytes * 8u);
}

/* ---- Bulk steps: one element each, run by a host loop or one GPU thread per element ---------- */

/* Integers of `bits` (32 or 64) in an array. */
GH_HD uint64_t gh_dy_word(const void *array, uint64_t i, unsigned bits) {
  return bits == 32 ? ((const uint32_t *)array)[i] : ((const uint64_t *)array)[i];
}

typedef enum gh_dy_bulk_kind {
  GH_DY_IOTA = 5,        /* index[i] = i: the input positions a batch is sorted with */
  GH_DY_REDUCE_RUNS = 0, /* run r of a sorted batch: its values merged by the policy */
  GH_DY_FLAG_RUNS = 1,   /* run r not placed: every input position of its key flagged */
  GH_DY_UPSIZE = 2,      /* old bucket b of subtable `table` into 2b and 2b + 1 of its double */
  GH_DY_MERGE_COUNT = 3, /* new bucket b of a halved subtable: how many keys do not fit */
  GH_DY_MERGE = 4        /* new bucket b: old 2b and 2b + 1 merged, the rest to the residuals */
} gh_dy_bulk_kind;

/* The arguments of a bulk step (the fields its kind reads). A batch of inserts is sorted by key
 * with the input positions as payload (index, index_bits wide); its runs of equal keys start at
 * starts[r] and hold counts[r] inputs. */
typedef struct gh_dy_bulk {
  gh_dy_geometry g;
  int kind;
  int policy;
  unsigned table;
  unsigned index_bits;
  void *index;
  const uint64_t *starts;
  const uint64_t *counts;
  const void *values_in;   /* the caller's values (REDUCE_RUNS) */
  void *run_values;        /* one merged value per run (REDUCE_RUNS) */
  const uint8_t *run_failed;
  uint8_t *failed_out;     /* per input position (FLAG_RUNS) */
  unsigned long long *flagged;
  const void *old_keys;
  const void *old_values;
  void *new_keys;          /* filled with EMPTY before the step */
  void *new_values;
  uint64_t *residuals;     /* MERGE_COUNT: per new bucket; MERGE: exclusive sums of those */
  void *residual_keys;
  void *residual_values;
} gh_dy_bulk;

/* Appends old slot k of a line to a destination line at *fill. */
GH_HD void gh_dy_move_slot(const gh_dy_geometry *g, const void *from_line, const void *from_values, uint64_t from_b,
                           unsigned k, void *to_line, void *to_values, uint64_t to_b, unsigned at) {
  gh_dy_key_write(g, to_line, at, gh_dy_line_key(g, from_line, k));
  if (g->value_bytes)
    gh_dy_value_write(g, gh_dy_value_at(g, to_values, to_b, at),
                      gh_dy_value_read(g, gh_dy_value_at(g, (void *)from_values, from_b, k)));
}

GH_HD unsigned gh_dy_live_keys(const gh_dy_geometry *g, const void *line) {
  unsigned live = 0;
  for (unsigned k = 0; k < g->slots; ++k) live += gh_dy_line_key(g, line, k) != gh_dy_empty_key(g);
  return live;
}

GH_HD void gh_dy_bulk_one(const gh_dy_bulk *a, uint64_t i) {
  const gh_dy_geometry *g = &a->g;
  const uint64_t empty = gh_dy_empty_key(g);
  switch (a->kind) {
    case GH_DY_IOTA:
      if (a->index_bits == 32) ((uint32_t *)a->index)[i] = (uint32_t)i;
      else ((uint64_t *)a->index)[i] = i;
      break;
    case GH_DY_REDUCE_RUNS: {
      const unsigned bits = g->value_bytes * 8u;
      const uint64_t first = a->starts[i];
      uint64_t merged = gh_dy_word(a->values_in, gh_dy_word(a->index, first, a->index_bits), bits);
      for (uint64_t j = 1; j < a->counts[i]; ++j)
        merged = gh_policy_combine(a->policy, bits, merged,
                                   gh_dy_word(a->values_in, gh_dy_word(a->index, first + j, a->index_bits), bits));
      gh_dy_value_write(g, (char *)a->run_values + i * g->value_bytes, merged);
      break;
    }
    case GH_DY_FLAG_RUNS: {
      if (!a->run_failed[i]) break;
      if (a->failed_out)
        for (uint64_t j = 0; j < a->counts[i]; ++j) a->failed_out[gh_dy_word(a->index, a->starts[i] + j, a->index_bits)] = 1;
      gh_add_u64(a->flagged, a->counts[i]);
      break;
    }
    case GH_DY_UPSIZE: {
      const uint64_t doubled = 2u * g->buckets[a->table];
      const void *line = gh_dy_line(g, (void *)a->old_keys, i);
      unsigned fill[2] = {0, 0};
      for (unsigned k = 0; k < g->slots; ++k) {
        const uint64_t key = gh_dy_line_key(g, line, k);
        if (key == empty) continue;
        const uint64_t to = gh_dy_bucket_of(g, a->table, doubled, key);
        const unsigned half = (unsigned)(to - 2u * i);
        gh_dy_move_slot(g, line, a->old_values, i, k, gh_dy_line(g, a->new_keys, to), a->new_values, to, fill[half]++);
      }
      break;
    }
    case GH_DY_MERGE_COUNT:
    case GH_DY_MERGE: {
      const unsigned live = gh_dy_live_keys(g, gh_dy_line(g, (void *)a->old_keys, 2u * i)) +
                            gh_dy_live_keys(g, gh_dy_line(g, (void *)a->old_keys, 2u * i + 1u));
      if (a->kind == GH_DY_MERGE_COUNT) {
        a->residuals[i] = live > g->slots ? live - g->slots : 0u;
        break;
      }
      unsigned fill = 0;
      uint64_t spill = a->residuals[i];
      for (unsigned half = 0; half < 2u; ++half) {
        const uint64_t from = 2u * i + half;
        const void *line = gh_dy_line(g, (void *)a->old_keys, from);
        for (unsigned k = 0; k < g->slots; ++k) {
          if (gh_dy_line_key(g, line, k) == empty) continue;
          if (fill < g->slots) {
            gh_dy_move_slot(g, line, a->old_values, from, k, gh_dy_line(g, a->new_keys, i), a->new_values, i, fill++);
            continue;
          }
          /* A residual: kept as (key, value) pairs for the inserts into the other subtables. */
          if (g->key_bits == 32) ((uint32_t *)a->residual_keys)[spill] = (uint32_t)gh_dy_line_key(g, line, k);
          else ((uint64_t *)a->residual_keys)[spill] = gh_dy_line_key(g, line, k);
          if (g->value_bytes)
            gh_dy_value_write(g, (char *)a->residual_values + spill * g->value_bytes,
                              gh_dy_value_read(g, gh_dy_value_at(g, (void *)a->old_values, from, k)));
          spill += 1;
        }
      }
      break;
    }
    default: break;
  }
}

#endif /* GH_DETAIL_DYCUCKOO_H */
