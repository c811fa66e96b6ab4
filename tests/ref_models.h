/*
 * ref_models.h - the reference models of the table variants beyond one value per key, for every
 * design that has them: a compacting table (key -> dense id, id -> key) and a multi-value table
 * (a multiset of (key, value) pairs). Maps and sets use tu_ref and tu_table (test_util.h).
 *
 * Like tu_table, each model holds its table and compares it with the model; the wrappers call
 * the API once, check the status and every output, then bring the model up to date. Tests that
 * drive the API themselves (a call expected to fail, say) use the tu_*_note_* functions to tell
 * the model what a successful call did.
 *
 * Plain C11; also compiles as C++.
 */
#ifndef GH_REF_MODELS_H
#define GH_REF_MODELS_H

#include <stdint.h>

#include "test_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gh_get_stats of a table holding `size` entries of `distinct` keys: those counts and
 * tu_check_stats_rules. */
void tu_check_counts(gh_table *table, uint64_t size, uint64_t distinct);

/* ---------------------------------------------------------------------------------------- */
/* Compacting tables: key -> id and id -> key                                                */
/* ---------------------------------------------------------------------------------------- */

typedef struct tu_compact {
  gh_table *table;
  unsigned key_bits;
  unsigned id_bits;
  tu_ref ids;           /* key -> its id (a 64-bit value) */
  uint64_t *keys_by_id; /* id -> key */
  uint64_t size;        /* distinct keys = the next id */
  uint64_t room;
  int broken; /* ids could not be learned: later comparisons would only repeat it */
} tu_compact;

/* gh_create with cfg (variant GH_VARIANT_COMPACTING); 1 on success. */
int tu_compact_create(tu_compact *cc, const gh_config *cfg);
void tu_compact_destroy(tu_compact *cc);
/* gh_clear: the next keys get the ids from 0 again. */
void tu_compact_clear(tu_compact *cc);
/* gh_insert of keys[0, n) (GH_KEEP_FIRST), then learns the new keys' ids. */
void tu_compact_insert(tu_compact *cc, const uint64_t *keys, uint64_t n);
/* The keys of keys[0, n) new to the table, each once, in batch order, into fresh; the count. */
uint64_t tu_compact_fresh(const tu_compact *cc, const uint64_t *keys, uint64_t n, uint64_t *fresh);
/* After an insert that returned GH_OK: the keys of fresh[0, nfresh) (from tu_compact_fresh
 * before the insert) got the ids [size, size + nfresh), each exactly one; the model learns them. */
void tu_compact_learn(tu_compact *cc, const uint64_t *fresh, uint64_t nfresh);
/* Everything a compacting table must show: size, key -> id for every key, id -> key for every id
 * (in random order, some twice), the exported (key, id) pairs a bijection onto [0, size), absent
 * keys absent, the counters, validate. */
void tu_compact_check(tu_rng *rng, tu_compact *cc);

/* ---------------------------------------------------------------------------------------- */
/* Multi-value tables: a multiset of (key, value) pairs                                      */
/* ---------------------------------------------------------------------------------------- */

typedef struct tu_kv {
  uint64_t key;
  uint64_t value;
} tu_kv;

typedef struct tu_multi {
  gh_table *table;
  unsigned key_bits;
  unsigned value_bits;
  tu_kv *pairs; /* every pair inserted and not erased, in no order */
  uint64_t n;
  uint64_t room;
  tu_ref keys; /* the distinct keys present */
} tu_multi;

/* qsort's comparison of uint64_t values (the multi-value checks sort each key's values). */
int tu_u64_cmp(const void *a, const void *b);

/* gh_create with cfg (variant GH_VARIANT_MULTIVALUE); 1 on success. */
int tu_multi_create(tu_multi *cm, const gh_config *cfg);
void tu_multi_destroy(tu_multi *cm);
void tu_multi_clear(tu_multi *cm);
/* gh_insert (GH_APPEND) of the pairs, then the model takes them. */
void tu_multi_insert(tu_multi *cm, const uint64_t *keys, const uint64_t *values, uint64_t n);
/* gh_erase: erased_out, erased_count against the model; every value of an erased key goes. */
void tu_multi_erase(tu_multi *cm, const uint64_t *keys, uint64_t n);
/* What a successful insert / erase did, for tests that make the call themselves. */
void tu_multi_note_insert(tu_multi *cm, const uint64_t *keys, const uint64_t *values, uint64_t n);
void tu_multi_note_erase(tu_multi *cm, const uint64_t *keys, uint64_t n);
/* gh_count, gh_find_all (values compared as multisets per key), gh_find and gh_contains for the
 * query keys q[0, nq), which may repeat and include absent keys. */
void tu_multi_query(tu_multi *cm, const uint64_t *q, uint64_t nq);
/* size, counters, export (the same multiset of pairs), validate, and every query for the
 * distinct keys (shuffled, some twice) plus absent ones. */
void tu_multi_check(tu_rng *rng, tu_multi *cm);
/* Values for multi-value inserts: often tiny (so identical pairs occur), sometimes any. */
void tu_multi_values(tu_rng *rng, unsigned value_bits, uint64_t n, uint64_t *out);

/* ---------------------------------------------------------------------------------------- */
/* A table of any variant with its model                                                     */
/* ---------------------------------------------------------------------------------------- */

typedef struct tu_model {
  gh_variant variant;
  tu_table map;       /* GH_VARIANT_MAP (a set when value_bits is 0) */
  tu_compact compact; /* GH_VARIANT_COMPACTING */
  tu_multi multi;     /* GH_VARIANT_MULTIVALUE */
} tu_model;

/* Creates the table of cfg->variant with its model; 1 on success. */
int tu_model_create(tu_model *m, const gh_config *cfg);
void tu_model_destroy(tu_model *m);
gh_table *tu_model_table(const tu_model *m);
unsigned tu_model_key_bits(const tu_model *m);
unsigned tu_model_value_bits(const tu_model *m);
/* The entries gh_size must report (pairs for multi-value tables). */
uint64_t tu_model_size(const tu_model *m);
/* Whether key is present. */
int tu_model_contains(const tu_model *m, uint64_t key);
/* The table against its model, completely: size, every key found with its value(s), export,
 * absent keys absent, counters, validate. */
void tu_model_check(tu_rng *rng, tu_model *m);
/* Through the API, checked (the status must be GH_OK, or GH_ERR_TABLE_FULL where allow_full),
 * and the model brought up to date: for setting a table up. */
void tu_model_insert(tu_model *m, const uint64_t *keys, const uint64_t *values, uint64_t n,
                     gh_dup_policy policy, int allow_full);
void tu_model_erase(tu_model *m, const uint64_t *keys, uint64_t n);
void tu_model_clear(tu_model *m);
/* What a successful call the caller made did. Inserts: compacting tables learn their new keys
 * from fresh (tu_compact_fresh before the call); skip (optional) flags keys that did not fit. */
void tu_model_note_insert(tu_model *m, const uint64_t *keys, const uint64_t *values, uint64_t n,
                          gh_dup_policy policy, const uint8_t *skip, const uint64_t *fresh,
                          uint64_t nfresh);
void tu_model_note_erase(tu_model *m, const uint64_t *keys, uint64_t n);
void tu_model_note_clear(tu_model *m);

#ifdef __cplusplus
}
#endif

#endif /* GH_REF_MODELS_H */
