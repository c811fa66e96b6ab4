/* dycuckoo_bulk.h - the bulk steps of the DyCuckoo design, one element each (GH_HD): the host
 * backend runs them in a parallel loop, the CUDA backend one thread per element. Collecting the
 * keys of a batch that found no free slot into a set (their copies merged), flagging the inputs of
 * keys not placed, doubling and halving a subtable (the CUDA backend runs those a warp per bucket,
 * through the slot steps below).
 * Internal to the library (the device-side headers do not need them). */
#ifndef GH_DYCUCKOO_BULK_H
#define GH_DYCUCKOO_BULK_H

#include "core/region_words.h"
#include "core/words.h"
#include "gpuhash/detail/dycuckoo.h"

typedef enum gh_dy_bulk_kind {
  GH_DY_COLLECT,        /* input position i, flagged by its claim pass: its key into the flagged set,
                         * its value merged into that key's */
  GH_DY_FLAG_UNPLACED,  /* input position i, flagged: failed_out[i] when its key's set entry was not placed */
  GH_DY_UPSIZE,      /* old bucket b of subtable `table` into 2b and 2b + 1 of its double */
  GH_DY_MERGE_COUNT, /* new bucket b of a halved subtable: how many keys do not fit */
  GH_DY_MERGE        /* new bucket b: old 2b and 2b + 1 merged, the rest to the residuals */
} gh_dy_bulk_kind;

/* The arguments of a bulk step (the fields its kind reads). The keys of a chunk that found no free
 * slot (claim_flags) go into the flagged set: open addressing with linear probing over set_mask + 1
 * entries (a power of two, at least twice the flagged inputs, so probing always ends), a free
 * entry holding the empty key (never a flagged one: the all-ones key lives beside the subtables);
 * values beside the keys, each entry's merged from its key's copies. */
typedef struct gh_dy_bulk {
  gh_dy_geometry g;
  int kind;
  int policy;
  unsigned table;
  const uint8_t *claim_flags; /* per input position of the chunk (COLLECT, FLAG_UNPLACED) */
  const void *keys_in;        /* the chunk's keys */
  const void *values_in;      /* the chunk's values, or NULL */
  void *set_keys;
  void *set_values;           /* ADD, MIN, MAX: filled with the policy's identity before COLLECT */
  const uint8_t *set_failed;  /* per entry: not placed (FLAG_UNPLACED) */
  uint64_t set_mask;
  uint8_t *failed_out;        /* per input position of the chunk (FLAG_UNPLACED), or NULL */
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
  gh__write_word(to_line, at, g->key_bits, gh_dy_line_key(g, from_line, k));
  if (g->value_bytes)
    gh_dy_value_copy(g, gh_dy_value_at(g, to_values, to_b, at), gh_dy_value_at(g, (void *)from_values, from_b, k));
}

GH_HD unsigned gh_dy_live_keys(const gh_dy_geometry *g, const void *line) {
  unsigned live = 0;
  for (unsigned k = 0; k < g->slots; ++k) live += gh_dy_line_key(g, line, k) != gh_dy_empty_key(g);
  return live;
}

/* Doubling: the half (0: bucket 2b, 1: 2b + 1) of the doubled subtable that a key of old bucket b
 * goes to. */
GH_HD unsigned gh_dy_upsize_half(const gh_dy_bulk *a, uint64_t b, uint64_t key) {
  return (unsigned)(gh_dy_bucket_of(&a->g, a->table, 2u * a->g.buckets[a->table], key) - 2u * b);
}

/* Doubling: old slot k of bucket b to slot `at` of new bucket 2b + half. Both backends fill a new
 * bucket in old slot order. */
GH_HD void gh_dy_upsize_slot(const gh_dy_bulk *a, uint64_t b, unsigned k, unsigned half, unsigned at) {
  const uint64_t to = 2u * b + half;
  gh_dy_move_slot(&a->g, gh_dy_line(&a->g, (void *)a->old_keys, b), a->old_values, b, k, gh_dy_line(&a->g, a->new_keys, to),
                  a->new_values, to, at);
}

/* Halving: old slot k of bucket 2i + half, the index-th live key of old buckets 2i and 2i + 1 (in
 * that order, slot order within each), to slot `index` of new bucket i, or past its slots to the
 * residuals (as a (key, value) pair for the inserts into the other subtables), after the
 * a->residuals[i] of the buckets before. */
GH_HD void gh_dy_merge_slot(const gh_dy_bulk *a, uint64_t i, unsigned half, unsigned k, unsigned index) {
  const gh_dy_geometry *g = &a->g;
  const uint64_t from = 2u * i + half;
  const void *line = gh_dy_line(g, (void *)a->old_keys, from);
  if (index < g->slots) {
    gh_dy_move_slot(g, line, a->old_values, from, k, gh_dy_line(g, a->new_keys, i), a->new_values, i, index);
    return;
  }
  const uint64_t spill = a->residuals[i] + (index - g->slots);
  gh__write_word(a->residual_keys, spill, g->key_bits, gh_dy_line_key(g, line, k));
  if (g->value_bytes)
    gh_dy_value_copy(g, (char *)a->residual_values + spill * g->value_bytes, gh_dy_value_at(g, (void *)a->old_values, from, k));
}

/* Halving: how many of the live keys of old buckets 2i and 2i + 1 do not fit new bucket i. */
GH_HD uint64_t gh_dy_merge_residuals(const gh_dy_geometry *g, unsigned live) { return live > g->slots ? live - g->slots : 0u; }

/* The flagged set's entry of key (linear probing from a mix of its bits). With insert, the key takes
 * the first free entry on its way unless a copy has one already (*won: this call took it); without,
 * the entry a COLLECT gave it. */
GH_HD uint64_t gh_dy_set_entry(const gh_dy_bulk *a, uint64_t key, int insert, int *won) {
  const unsigned bits = a->g.key_bits;
  const uint64_t empty = gh_dy_empty_key(&a->g);
  uint64_t h = key ^ (key >> 33);
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  *won = 0;
  for (uint64_t e = h & a->set_mask;; e = (e + 1u) & a->set_mask) {
    void *at = (char *)a->set_keys + e * (bits / 8u);
    const uint64_t seen = !insert ? gh__read_word(at, 0, bits)
                          : bits == 32u ? gh_cas_u32(at, (uint32_t)empty, (uint32_t)key)
                                        : gh_cas_u64(at, empty, key);
    if (seen == key) return e;
    if (seen == empty) {
      *won = insert;
      return e;
    }
  }
}

/* COLLECT's value: copies combine in the entry by the policy's atomic (ADD, MIN, MAX on integer
 * values), else the copy that took the entry leaves its value (KEEP_FIRST, OVERWRITE, records: of a
 * batch's copies an arbitrary one wins, gpuhash.h). */
GH_HD void gh_dy_collect_value(const gh_dy_bulk *a, uint64_t entry, const void *value, int won) {
  const gh_dy_geometry *g = &a->g;
  void *to = (char *)a->set_values + entry * g->value_bytes;
  const int combines = a->policy == GH_ADD || a->policy == GH_MIN || a->policy == GH_MAX;
  if (!combines || !gh_dy_values_are_words(g)) {
    if (won) gh_dy_value_copy(g, to, value);
    return;
  }
  uint64_t v = 0;
  memcpy(&v, value, g->value_bytes);
  const int wide = g->value_bytes == 8u;
  if (a->policy == GH_ADD) {
    if (wide) gh_add_u64(to, v); else gh_add_u32(to, (uint32_t)v);
  } else if (a->policy == GH_MIN) {
    if (wide) gh_min_u64(to, v); else gh_min_u32(to, (uint32_t)v);
  } else {
    if (wide) gh_max_u64(to, v); else gh_max_u32(to, (uint32_t)v);
  }
}

GH_HD void gh_dy_bulk_one(const gh_dy_bulk *a, uint64_t i) {
  const gh_dy_geometry *g = &a->g;
  const uint64_t empty = gh_dy_empty_key(g);
  switch (a->kind) {
    case GH_DY_COLLECT: {
      if (!a->claim_flags[i]) break;
      int won;
      const uint64_t entry = gh_dy_set_entry(a, gh__read_word(a->keys_in, i, g->key_bits), 1, &won);
      if (a->values_in && g->value_bytes)
        gh_dy_collect_value(a, entry, (const char *)a->values_in + i * g->value_bytes, won);
      break;
    }
    case GH_DY_FLAG_UNPLACED: {
      int won;
      if (!a->claim_flags[i] || !a->set_failed[gh_dy_set_entry(a, gh__read_word(a->keys_in, i, g->key_bits), 0, &won)]) break;
      if (a->failed_out) a->failed_out[i] = 1;
      gh_add_u64(a->flagged, 1u);
      break;
    }
    case GH_DY_UPSIZE: {
      const void *line = gh_dy_line(g, (void *)a->old_keys, i);
      unsigned fill[2] = {0, 0};
      for (unsigned k = 0; k < g->slots; ++k) {
        const uint64_t key = gh_dy_line_key(g, line, k);
        if (key == empty) continue;
        const unsigned half = gh_dy_upsize_half(a, i, key);
        gh_dy_upsize_slot(a, i, k, half, fill[half]++);
      }
      break;
    }
    case GH_DY_MERGE_COUNT:
      a->residuals[i] = gh_dy_merge_residuals(g, gh_dy_live_keys(g, gh_dy_line(g, (void *)a->old_keys, 2u * i)) +
                                                     gh_dy_live_keys(g, gh_dy_line(g, (void *)a->old_keys, 2u * i + 1u)));
      break;
    case GH_DY_MERGE: {
      unsigned index = 0;
      for (unsigned half = 0; half < 2u; ++half) {
        const void *line = gh_dy_line(g, (void *)a->old_keys, 2u * i + half);
        for (unsigned k = 0; k < g->slots; ++k)
          if (gh_dy_line_key(g, line, k) != empty) gh_dy_merge_slot(a, i, half, k, index++);
      }
      break;
    }
    default: break;
  }
}

/* ---- Building an empty table by regions (gh_config.bulk_min_keys) ---------------------------------
 * A large batch into a table whose subtables hold no keys: each key goes to its bucket in the
 * subtable the balancing rule chose for it, which is where all but a few percent of the keys end up
 * (a bucket of 32 slots gets 28.8 keys on average at theta 0.9). The batch is put in runs by region
 * (2^shift consecutive buckets of one subtable), and each region is built apart from the table (in
 * shared memory on the GPU, a block a region), its slots then written out whole; the keys whose
 * bucket filled go on to the claim pass. A region holds a key and its value in one 8-byte word, so
 * that a slot is claimed, and a duplicate merged, with one CAS: 32-bit keys with values of at most 4
 * bytes, and sets of 64-bit keys. */

typedef enum gh_dy_region_outcome {
  GH_DY_REGION_INSERTED = GH_REGION_INSERTED,
  GH_DY_REGION_MERGED = GH_REGION_MERGED,
  GH_DY_REGION_FULL = GH_REGION_FULL,
  GH_DY_REGION_SIDE /* the all-ones key: the side entry's (gh_dy_region_put) */
} gh_dy_region_outcome;

/* The regions of a table: subtable i's buckets in runs of 2^shift, numbered first[i] up to first[i + 1]. */
typedef struct gh_dy_regions {
  unsigned shift;
  uint64_t first[GH_DY_MAX_TABLES + 1u];
} gh_dy_regions;

/* A chunk built by regions (gh_config.bulk_min_keys): the chunk's keys and values packed into
 * region words, put in runs by region, each region built apart and written out; the keys whose
 * bucket filled are passed on to the claim pass. */
typedef struct gh_dy_by_regions {
  gh_dy_regions map;
  uint64_t regions;          /* map.first[tables] */
  const void *keys;
  const void *values;        /* NULL for a set */
  uint64_t n;
  int policy;
  void *words;               /* n words the partition may use (CUDA: the packed chunk, before the sort) */
  void *sorted;              /* n words: the partition's output, in runs by region */
  void *work;                /* the partition's work space: regions_partition_bytes */
  size_t work_bytes;
  void *passed_keys;         /* the build's output (in `words`, free by then): keys whose bucket was */
  void *passed_values;       /* full, and their values; counters->cursor = how many */
} gh_dy_by_regions;

/* Whether a key and its value fit one word (a table that can be built by regions). */
GH_HD int gh_dy_regions_fit(const gh_dy_geometry *g) {
  return g->value_bytes == 0 || (g->key_bits == 32 && g->value_bytes == 4u);
}

GH_HD gh_dy_regions gh_dy_regions_of(const gh_dy_geometry *g) {
  gh_dy_regions r;
  r.shift = 0;
  while ((2u << r.shift) * g->slots <= GH_REGION_WORDS) r.shift += 1u;
  r.first[0] = 0;
  for (unsigned i = 0; i < GH_DY_MAX_TABLES; ++i)
    r.first[i + 1u] = r.first[i] + (i < g->tables ? (g->buckets[i] + (1ull << r.shift) - 1u) >> r.shift : 0u);
  return r;
}

/* The region of a key's bucket in its chosen subtable. */
GH_HD uint64_t gh_dy_region_of(const gh_dy_geometry *g, const gh_dy_regions *r, uint64_t key) {
  const unsigned i = gh_dy_target(g, key);
  return r->first[i] + (gh_dy_bucket(g, i, key) >> r->shift);
}

/* The subtable of a region. */
GH_HD unsigned gh_dy_region_table(const gh_dy_geometry *g, const gh_dy_regions *r, uint64_t region) {
  unsigned i = 0;
  while (i + 1u < g->tables && region >= r->first[i + 1u]) i += 1u;
  return i;
}

/* The first bucket of a region in its subtable, and how many buckets it has (the last region of a
 * subtable may have fewer). */
GH_HD uint64_t gh_dy_region_bucket(const gh_dy_regions *r, unsigned table, uint64_t region) {
  return (region - r->first[table]) << r->shift;
}
GH_HD uint64_t gh_dy_region_buckets(const gh_dy_geometry *g, const gh_dy_regions *r, unsigned table, uint64_t region) {
  const uint64_t first = gh_dy_region_bucket(r, table, region), all = 1ull << r->shift;
  return g->buckets[table] - first < all ? g->buckets[table] - first : all;
}

/* One word of a region (words), whose key's bucket is bucket b of the region: the all-ones key into
 * the side entry (counted there: GH_DY_REGION_SIDE), any other key into its bucket. */
GH_HD gh_dy_region_outcome gh_dy_region_put(const gh_dy_geometry *g, uint64_t *words, uint64_t b, void *side,
                                            gh_dy_counters *counters, uint64_t word, int policy) {
  if (gh_region_word_key(g->key_bits, word) == gh_dy_empty_key(g)) {
    const uint64_t value = word >> 32; /* (its low 4 bytes: little-endian) */
    if (gh_dy_side_insert(g, side, g->value_bytes ? &value : NULL, policy)) gh_dy_count_side(counters, 1u);
    return GH_DY_REGION_SIDE;
  }
  return (gh_dy_region_outcome)gh_region_insert(words + b * g->slots, g->slots, gh_region_flip(b, g->slots), g->key_bits,
                                                g->value_bytes != 0, word, policy);
}

/* A word whose bucket was full, to position `at` of the passed keys and values. */
GH_HD void gh_dy_region_pass_on(const gh_dy_geometry *g, const gh_dy_by_regions *r, uint64_t at, uint64_t word) {
  gh__write_word(r->passed_keys, at, g->key_bits, gh_region_word_key(g->key_bits, word));
  if (g->value_bytes) gh__write_word(r->passed_values, at, 32u, word >> 32);
}

/* Writes word j of a built region (its buckets from bucket `first` of subtable keys / values on)
 * into the table: the key, and the value where there are values (an empty slot's too: nothing
 * reads it). A bucket's words stay within its line: a warp writes whole lines. */
GH_HD void gh_dy_region_store(const gh_dy_geometry *g, void *keys, void *values, uint64_t first, uint64_t j,
                              uint64_t word) {
  const uint64_t b = j / g->slots, slot = (first + b) * g->slots + ((j % g->slots) ^ gh_region_flip(b, g->slots));
  gh__write_word(keys, slot, g->key_bits, gh_region_word_key(g->key_bits, word));
  if (g->value_bytes) gh__write_word(values, slot, 32u, word >> 32);
}

#endif /* GH_DYCUCKOO_BULK_H */
