/* hashgraph_bulk.h - the per-element steps of the HashGraph design (GH_HD): the host backend runs
 * them in a parallel loop, the CUDA backend one thread per element. A build is a counting sort of
 * the entries by vertex (the key's hash value): count per vertex, exclusive sum (the CSR offsets),
 * place each entry at its vertex's offset plus a per-vertex cursor. A probe hashes a query key and
 * scans its vertex's edges. An edge is one slot of slot.h, its key and value side by side, so that
 * a probe's hit costs one random read for both (separate key and value arrays cost two: a
 * first-match probe took 1.4 times as long on an H100). Internal to the library. */
#ifndef GH_HASHGRAPH_BULK_H
#define GH_HASHGRAPH_BULK_H

#include "core/words.h"
#include "gpuhash/detail/atomics.h"
#include "gpuhash/detail/hash.h"
#include "gpuhash/detail/slot.h"

typedef enum gh_hg_bulk_kind {
  GH_HG_COUNT,         /* entry i: one more edge for its vertex (offsets[v] += 1) */
  GH_HG_PLACE,         /* entry i: into its vertex's edges, at offsets[v] + cursor[v]++ */
  GH_HG_PROBE_COUNT,   /* query i: how many edges hold its key */
  GH_HG_PROBE_FIRST,   /* query i: the value of its first edge, or the default; found or not */
  GH_HG_PROBE_FILL,    /* query i: the values of all its edges, from out_offsets[i] on */
  GH_HG_REDUCE_RUNS,   /* run r of a sorted batch (map): its values merged by the policy */
  GH_HG_MERGE_STORED,  /* run r (map): whether its key is stored (then skipped by the build); with
                        * merge_values, its value merged into the stored one */
  GH_HG_ERASE,         /* query i: every edge of its key marked dead; one position of a key wins */
  /* Green's intersection probe, vertex v of both tables (the join's left rows built into a second
   * table over the same vertices): */
  GH_HG_MEET_COUNT,    /* out_counts[v] = the pairs of equal keys between its left and right edges */
  GH_HG_MEET_FILL,     /* those pairs from out_offsets[v] on: (left row, right value) */
  GH_HG_MEET_SEMI,     /* out_found[left row] = 1 for each of its left edges with a right match */
  GH_HG_UNPACK         /* edge i: its key to out_keys[i], its value (if out_values) to out_values[i] */
} gh_hg_bulk_kind;

/* The arguments of a step (the fields its kind reads). The entries of a build are the table's
 * edges not marked dead (old_edges, n_old of them, old_dead per edge) followed by the new entries
 * (keys / values) new_skip does not mark. Edge arrays hold slots of (key_bits, value_bits); the
 * left table of the MEET steps slots of (key_bits, row_bits). */
typedef struct gh_hg_bulk {
  int kind;
  int policy;
  int merge_values;        /* MERGE_STORED */
  const uint8_t *only;     /* MERGE_STORED: when given, the runs to do (the others are left alone) */
  unsigned key_bits, value_bits;
  uint64_t seed;
  uint64_t vertices;
  uint64_t *offsets;       /* vertices + 1: counts before the sum, offsets after */
  uint64_t *cursor;        /* PLACE: vertices, zeroed */
  void *edges;             /* the edges PLACE writes, or those probes and merges read */
  const void *old_edges;
  const uint32_t *old_dead; /* NULL: every old edge lives */
  uint64_t n_old;
  const void *keys, *values; /* new entries, queries, or a sorted batch (REDUCE_RUNS) */
  const uint8_t *new_skip;   /* NULL: every new entry goes in */
  void *out_keys;            /* UNPACK */
  uint64_t *out_counts;      /* PROBE_COUNT: per query (NULL: none wanted) */
  const uint64_t *out_offsets; /* PROBE_FILL; REDUCE_RUNS: where run r starts (r + 1: where it ends) */
  void *out_values;          /* PROBE_FIRST, PROBE_FILL, UNPACK (NULL: none wanted); REDUCE_RUNS: per run */
  void *stash;               /* PROBE_COUNT (NULL: none): query i's first value at i (value_bits wide)
                              * where it has one; PROBE_FILL: read for the queries of one value */
  uint8_t *out_found;        /* PROBE_FIRST (NULL: none wanted); MERGE_STORED: 1 where merged; ERASE: won */
  uint64_t default_value;    /* PROBE_FIRST */
  uint32_t *dead;            /* ERASE: per edge, zeroed */
  uint64_t *counters;        /* MERGE_STORED: [0] runs merged; ERASE: [0] keys erased, [1] edges marked;
                              * PROBE_COUNT (NULL: not wanted): [0] += the matches, added up by the
                              * backend (gh_hg_bulk_one returns each query's) */
  /* MEET_*: the left table: its offsets (same vertices) and edges, each edge's value its left row
   * (row_bits wide; none for MEET_COUNT) */
  const uint64_t *left_offsets;
  const void *left_edges;
  unsigned row_bits;
  uint64_t *out_rows;        /* MEET_FILL: the pairs' left rows (out_values: their right values) */
} gh_hg_bulk;

/* A key's vertex (ranges of vertices are ranges of hash values). */
GH_HD uint64_t gh_hg_vertex(unsigned key_bits, uint64_t seed, uint64_t vertices, uint64_t key) {
  return gh_hash_to_range(key_bits, seed, vertices, key);
}

/* The slots of the table's edges. */
GH_HD gh_slot_format gh_hg_format(const gh_hg_bulk *a) { return gh_slot_format_make(a->key_bits, a->value_bits); }
/* Edge e of an edge array (plain loads: nothing writes the edges a step reads). */
GH_HD gh_slot_bits gh_hg_edge(gh_slot_format f, const void *edges, uint64_t e) {
  return gh_slot_read(f, (const char *)edges + e * f.slot_bytes);
}
GH_HD uint64_t gh_hg_edge_key(gh_slot_format f, const void *edges, uint64_t e) {
  return gh_slot_bits_key(f, gh_hg_edge(f, edges, e));
}
GH_HD void gh_hg_put_edge(gh_slot_format f, void *edges, uint64_t e, uint64_t key, uint64_t value) {
  gh_slot_write(f, (char *)edges + e * f.slot_bytes, gh_slot_pack(f, key, value));
}

/* Entry i of a build (the old edges first, then the new entries) and whether it goes in. */
GH_HD int gh_hg_entry_kept(const gh_hg_bulk *a, uint64_t i) {
  if (i < a->n_old) return a->old_dead == 0 || a->old_dead[i] == 0;
  return a->new_skip == 0 || a->new_skip[i - a->n_old] == 0;
}
GH_HD uint64_t gh_hg_entry_key(const gh_hg_bulk *a, uint64_t i) {
  return i < a->n_old ? gh_hg_edge_key(gh_hg_format(a), a->old_edges, i) : gh__read_word(a->keys, i - a->n_old, a->key_bits);
}
/* (New entries without values: their positions among the new entries, GH_CAP_INDEX_PAYLOADS.) */
GH_HD uint64_t gh_hg_entry_value(const gh_hg_bulk *a, uint64_t i) {
  if (a->value_bits == 0) return 0;
  if (i < a->n_old) return gh_slot_bits_value(gh_hg_format(a), gh_hg_edge(gh_hg_format(a), a->old_edges, i));
  return a->values ? gh__read_word(a->values, i - a->n_old, a->value_bits) : i - a->n_old;
}

/* The first edge of key at or after edge `from` (before `end`, its vertex's end), or end; *edge
 * its slot when found. */
GH_HD uint64_t gh_hg_next_edge(gh_slot_format f, const void *edges, uint64_t from, uint64_t end, uint64_t key,
                               gh_slot_bits *edge) {
  for (; from < end; ++from) {
    *edge = gh_hg_edge(f, edges, from);
    if (gh_slot_bits_key(f, *edge) == key) break;
  }
  return from;
}

/* Vertex v of both tables: each left edge against each right edge (MEET_* steps). */
GH_HD void gh_hg_meet(const gh_hg_bulk *a, uint64_t v) {
  const gh_slot_format f = gh_hg_format(a), left = gh_slot_format_make(a->key_bits, a->row_bits);
  const uint64_t begin = a->offsets[v], end = a->offsets[v + 1u];
  uint64_t pairs = 0;
  for (uint64_t l = a->left_offsets[v]; l < a->left_offsets[v + 1u]; ++l) {
    const gh_slot_bits left_edge = gh_hg_edge(left, a->left_edges, l);
    const uint64_t key = gh_slot_bits_key(left, left_edge), row = gh_slot_bits_value(left, left_edge);
    int matched = 0;
    gh_slot_bits edge = {0, 0};
    for (uint64_t r = gh_hg_next_edge(f, a->edges, begin, end, key, &edge); r < end;
         r = gh_hg_next_edge(f, a->edges, r + 1u, end, key, &edge)) {
      if (a->kind == GH_HG_MEET_FILL) {
        a->out_rows[a->out_offsets[v] + pairs] = row;
        if (a->value_bits)
          gh__write_word(a->out_values, a->out_offsets[v] + pairs, a->value_bits, gh_slot_bits_value(f, edge));
      }
      pairs += 1;
      matched = 1;
      if (a->kind == GH_HG_MEET_SEMI) break;
    }
    if (a->kind == GH_HG_MEET_SEMI) a->out_found[row] = (uint8_t)matched;
  }
  if (a->kind == GH_HG_MEET_COUNT) a->out_counts[v] = pairs;
}

/* PROBE_FILL with the count pass's stash: query i of at most one value (its out_offsets say so) is
 * written from the stash, without probing again; 1 when done, 0 for a query of more values. */
GH_HD int gh_hg_fill_from_stash(const gh_hg_bulk *a, uint64_t i) {
  const uint64_t at = a->out_offsets[i], count = a->out_offsets[i + 1u] - at;
  if (count > 1u) return 0;
  if (count == 1u) gh__write_word(a->out_values, at, a->value_bits, gh__read_word(a->stash, i, a->value_bits));
  return 1;
}

/* Query i (key, its vertex's edges begin .. end) of the probing steps: PROBE_*, MERGE_STORED, ERASE.
 * Returns the matches a PROBE_COUNT counted (0 for the others). */
GH_HD uint64_t gh_hg_lookup(const gh_hg_bulk *a, uint64_t i, uint64_t key, uint64_t begin, uint64_t end) {
  const gh_slot_format f = gh_hg_format(a);
  gh_slot_bits edge = {0, 0};
  uint64_t e = gh_hg_next_edge(f, a->edges, begin, end, key, &edge);
  const int found = e < end;
  if (a->kind == GH_HG_PROBE_FIRST) {
    if (a->out_values)
      gh__write_word(a->out_values, i, a->value_bits, found ? gh_slot_bits_value(f, edge) : a->default_value);
    if (a->out_found) a->out_found[i] = (uint8_t)found;
  } else if (a->kind == GH_HG_MERGE_STORED) {
    /* A map holds a key once: its one edge takes the run's merged value. */
    if (found && a->value_bits && a->merge_values)
      gh_hg_put_edge(f, a->edges, e, key,
                     gh_policy_combine(a->policy, a->value_bits, gh_slot_bits_value(f, edge),
                                       gh__read_word(a->values, i, a->value_bits)));
    if (a->out_found) a->out_found[i] = (uint8_t)found;
    if (found && a->counters) gh_add_u64(&a->counters[0], 1u);
  } else if (a->kind == GH_HG_ERASE) {
    /* Copies of the key in the batch race for its first edge's mark: one wins. Each edge is
     * counted by whoever marks it first. */
    const uint64_t first = e;
    int won = 0;
    for (; e < end; e = gh_hg_next_edge(f, a->edges, e + 1u, end, key, &edge)) {
      const int marked_now = gh_exchange_u32(&a->dead[e], 1u) == 0u;
      if (e == first) won = marked_now;
      if (marked_now) gh_add_u64(&a->counters[1], 1u);
    }
    if (a->out_found) a->out_found[i] = (uint8_t)won;
    if (won) gh_add_u64(&a->counters[0], 1u);
  } else {
    uint64_t matches = 0;
    for (; e < end; e = gh_hg_next_edge(f, a->edges, e + 1u, end, key, &edge)) {
      if (a->kind == GH_HG_PROBE_FILL && a->out_values)
        gh__write_word(a->out_values, a->out_offsets[i] + matches, a->value_bits, gh_slot_bits_value(f, edge));
      else if (a->kind == GH_HG_PROBE_COUNT && a->stash && matches == 0)
        gh__write_word(a->stash, i, a->value_bits, gh_slot_bits_value(f, edge));
      matches += 1;
    }
    if (a->kind == GH_HG_PROBE_COUNT && a->out_counts) a->out_counts[i] = matches;
    return a->kind == GH_HG_PROBE_COUNT ? matches : 0u;
  }
  return 0;
}

/* Element i of a step; returns what gh_hg_lookup returns for a probe (0 for the other steps). */
GH_HD uint64_t gh_hg_bulk_one(const gh_hg_bulk *a, uint64_t i) {
  switch (a->kind) {
    case GH_HG_MEET_COUNT:
    case GH_HG_MEET_FILL:
    case GH_HG_MEET_SEMI:
      gh_hg_meet(a, i);
      break;
    case GH_HG_COUNT:
      if (gh_hg_entry_kept(a, i))
        gh_add_u64(&a->offsets[gh_hg_vertex(a->key_bits, a->seed, a->vertices, gh_hg_entry_key(a, i))], 1u);
      break;
    case GH_HG_PLACE: {
      if (!gh_hg_entry_kept(a, i)) break;
      const uint64_t key = gh_hg_entry_key(a, i);
      const uint64_t v = gh_hg_vertex(a->key_bits, a->seed, a->vertices, key);
      const uint64_t at = a->offsets[v] + gh_fetch_add_u64(&a->cursor[v], 1u);
      gh_hg_put_edge(gh_hg_format(a), a->edges, at, key, gh_hg_entry_value(a, i));
      break;
    }
    case GH_HG_UNPACK: {
      const gh_slot_format f = gh_hg_format(a);
      const gh_slot_bits edge = gh_hg_edge(f, a->edges, i);
      gh__write_word(a->out_keys, i, a->key_bits, gh_slot_bits_key(f, edge));
      if (a->out_values) gh__write_word(a->out_values, i, a->value_bits, gh_slot_bits_value(f, edge));
      break;
    }
    case GH_HG_REDUCE_RUNS: {
      uint64_t merged = gh__read_word(a->values, a->out_offsets[i], a->value_bits);
      for (uint64_t j = a->out_offsets[i] + 1u; j < a->out_offsets[i + 1u]; ++j)
        merged = gh_policy_combine(a->policy, a->value_bits, merged, gh__read_word(a->values, j, a->value_bits));
      gh__write_word(a->out_values, i, a->value_bits, merged);
      break;
    }
    default: {
      if (a->only && !a->only[i]) break;
      if (a->kind == GH_HG_PROBE_FILL && a->stash && gh_hg_fill_from_stash(a, i)) break;
      const uint64_t key = gh__read_word(a->keys, i, a->key_bits);
      const uint64_t v = gh_hg_vertex(a->key_bits, a->seed, a->vertices, key);
      return gh_hg_lookup(a, i, key, a->offsets[v], a->offsets[v + 1u]);
    }
  }
  return 0;
}

#endif /* GH_HASHGRAPH_BULK_H */
