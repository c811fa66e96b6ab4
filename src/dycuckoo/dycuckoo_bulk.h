/* dycuckoo_bulk.h - the bulk steps of the DyCuckoo design, one element each (GH_HD): the host
 * backend runs them in a parallel loop, the CUDA backend one thread per element. Merging the
 * duplicates among a batch's keys that found no free slot, flagging the inputs of keys not placed,
 * doubling and halving a subtable (the CUDA backend runs those a warp per bucket, through the slot
 * steps below).
 * Internal to the library (the device-side headers do not need them). */
#ifndef GH_DYCUCKOO_BULK_H
#define GH_DYCUCKOO_BULK_H

#include "core/words.h"
#include "gpuhash/detail/dycuckoo.h"

typedef enum gh_dy_bulk_kind {
  GH_DY_GATHER,      /* key j of a batch's keys that found no free slot, by its input position */
  GH_DY_REDUCE_RUNS, /* run r of a sorted batch: its values merged by the policy */
  GH_DY_FLAG_RUNS,   /* run r not placed: every input position of its key flagged */
  GH_DY_UPSIZE,      /* old bucket b of subtable `table` into 2b and 2b + 1 of its double */
  GH_DY_MERGE_COUNT, /* new bucket b of a halved subtable: how many keys do not fit */
  GH_DY_MERGE        /* new bucket b: old 2b and 2b + 1 merged, the rest to the residuals */
} gh_dy_bulk_kind;

/* The arguments of a bulk step (the fields its kind reads). The keys of a batch that found no free
 * slot are gathered by their input positions (index, index_bits wide) and sorted by key with those
 * positions as payload; their runs of equal keys start at starts[r] and hold counts[r] inputs. */
typedef struct gh_dy_bulk {
  gh_dy_geometry g;
  int kind;
  int policy;
  unsigned table;
  unsigned index_bits;
  void *index;
  const uint64_t *starts;
  const uint64_t *counts;
  const void *keys_in;     /* the caller's keys (GATHER) */
  void *gathered_keys;     /* GATHER */
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

GH_HD void gh_dy_bulk_one(const gh_dy_bulk *a, uint64_t i) {
  const gh_dy_geometry *g = &a->g;
  const uint64_t empty = gh_dy_empty_key(g);
  switch (a->kind) {
    case GH_DY_GATHER:
      gh__write_word(a->gathered_keys, i, g->key_bits,
                     gh__read_word(a->keys_in, gh__read_word(a->index, i, a->index_bits), g->key_bits));
      break;
    case GH_DY_REDUCE_RUNS: {
      /* The run's values in input order (the sort is stable), merged into the first one's copy. */
      void *merged = (char *)a->run_values + i * g->value_bytes;
      for (uint64_t j = 0; j < a->counts[i]; ++j) {
        const void *value = (const char *)a->values_in +
                            gh__read_word(a->index, a->starts[i] + j, a->index_bits) * g->value_bytes;
        if (j == 0) gh_dy_value_copy(g, merged, value);
        else gh_dy_value_merge(g, a->policy, merged, value);
      }
      break;
    }
    case GH_DY_FLAG_RUNS: {
      if (!a->run_failed[i]) break;
      if (a->failed_out)
        for (uint64_t j = 0; j < a->counts[i]; ++j) a->failed_out[gh__read_word(a->index, a->starts[i] + j, a->index_bits)] = 1;
      gh_add_u64(a->flagged, a->counts[i]);
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

#endif /* GH_DYCUCKOO_BULK_H */
