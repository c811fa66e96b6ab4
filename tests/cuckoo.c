/*
 * cuckoo - what the cuckoo design (Alcantara et al.) promises beyond the behaviour conformance
 * and differential check for every single-value design:
 *
 *   restarts      builds that fail (table factors at each d's minimum, degenerate hash constants
 *                 forced through the test hook) restart transparently: nothing is lost, the
 *                 table validates, gh_stats counts the restarts
 *   functions     d = 2..5 hash functions x both hash families, for maps, sets, compacting and
 *                 multi-value tables
 *   incremental   many small batches far past the configured capacity: the table grows
 *                 (gh_stats.grows > 0) and is checked against the reference after every batch;
 *                 erase and re-insert on maps and sets
 *   multiplicity  keys repeated 1, 2, 7, 64 and 512 times in a batch: a set holds each once, a
 *                 map with ADD counts every copy, a compacting table gives dense ids that stay
 *                 put across batches, a multi-value table keeps every pair
 *   bad           configurations out of range and calls each variant must refuse: the right
 *                 status, a message, and the table unchanged
 *   alloc         every allocation of an insert whose builds are forced to restart (and of one
 *                 that also grows the table) fails in turn: each failure leaves the table exactly
 *                 as it was (tests/alloc_inject.h), for maps, sets, compacting and multi-value
 *                 tables, on the tracking allocator
 *
 *   buckets       the bucketed layout's own promises (bucket_slots 4, 8 and 16, d = 2 and 3, every
 *                 slot width): distinct keys filled to load 0.95 and 0.98 in one batch and in
 *                 many do not make the table grow; new keys twice in one batch land once; the
 *                 table takes repeats, erases, re-inserts and every policy. First, the clean-up
 *                 of the slots eviction chains marked, on hand-made tables of 4-, 8- and 16-byte
 *                 slots (copies of keys in their buckets, some copies marked, resolved by 8
 *                 threads: each key once, at its earliest position, with its copies' values
 *                 merged)
 *
 *   cuckoo BACKEND --part PART [--seed S] [--bucket-slots 1|4|8|16]
 *
 * --bucket-slots runs the parts on the bucketed layout (every table of the part gets it, and the
 * smallest table factor is the bucketed one); CTest runs restarts, functions, incremental,
 * multiplicity and alloc both ways.
 *
 * Every case derives its seed from the part's base seed (--seed replaces it) and prints it with
 * any failure, together with the command line that reruns the part. The all-ones key patterns
 * take part in every variant. Compacting and multi-value tables are compared with the reference
 * models of tests/ref_models.h (key -> id with id -> key; a multiset of pairs); maps and sets
 * with tu_ref through test_util's wrappers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_inject.h"
#include "core/parallel.h"
#include "cuckoo/cuckoo_table.h"
#include "ref_models.h"
#include "test_util.h"
#include "tracking_alloc.h"

/* The test hook of src/cuckoo/cuckoo_table.h, declared again so that a changed signature breaks
 * the build rather than the test: the next `attempts` build attempts of the table use degenerate
 * hash constants (every function sends a key to the same slot), so they fail and restart. */
void gh__cuckoo_force_failures(gh_table *table, unsigned attempts);

#define CK_BASE_SEED 0xC0C0057AB1Eull

/* Smallest table factor per d (index d - 2), as gpuhash.h documents. */
static const double ck_min_factor[4] = {2.1, 1.1, 1.03, 1.02};

/* The run: backend, part and base seed, for the context line of every case. */
static gh_backend ck_backend;
static const char *ck_program;
static const char *ck_part;
static uint64_t ck_seed;

/* Slots per bucket of every table the run makes (--bucket-slots). */
static unsigned ck_bucket_slots = 1;
/* The bucketed layout's smallest table factors, for every d (gpuhash.h): 4 slots, 8 or 16. */
#define CK_MIN_FACTOR_4_SLOTS 1.05
#define CK_MIN_BUCKETED_FACTOR 1.02

static uint64_t ck_min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static double ck_min_bucketed_factor(unsigned slots) { return slots == 4 ? CK_MIN_FACTOR_4_SLOTS : CK_MIN_BUCKETED_FACTOR; }
static double ck_min_factor_of(unsigned d) {
  return ck_bucket_slots > 1 ? ck_min_bucketed_factor(ck_bucket_slots) : ck_min_factor[d - 2];
}

static const char *ck_variant_name(const gh_config *c) {
  switch (c->variant) {
    case GH_VARIANT_MAP: return c->value_bits == 0 ? "set" : "map";
    case GH_VARIANT_COMPACTING: return "compacting";
    case GH_VARIANT_MULTIVALUE: return "multivalue";
  }
  return "invalid";
}

static gh_config ck_config(tu_rng *rng, gh_variant variant, unsigned key_bits,
                           unsigned value_bits, uint64_t capacity, unsigned d,
                           gh_hash_family family, double factor) {
  gh_config c = gh_config_default(GH_CUCKOO);
  c.backend = ck_backend;
  c.variant = variant;
  c.key_bits = key_bits;
  c.value_bits = value_bits;
  c.capacity = capacity;
  c.hash_functions = d;
  c.hash_family = family;
  c.table_factor = factor;
  c.bucket_slots = ck_bucket_slots;
  c.seed = tu_next(rng);
  c.host_threads = (unsigned)tu_below(rng, 4);
  return c;
}

static void ck_context(const char *what, const gh_config *c, uint64_t case_seed) {
  tu_set_context("cuckoo %s: %s backend=%s key_bits=%u value_bits=%u capacity=%llu "
                 "hash_functions=%u hash_family=%s table_factor=%.3f bucket_slots=%u host_threads=%u "
                 "case_seed=0x%016llx\n  rerun: %s %s --part %s --seed 0x%016llx --bucket-slots %u",
                 what, ck_variant_name(c), tu_backend_name(ck_backend), c->key_bits,
                 c->value_bits, (unsigned long long)c->capacity, c->hash_functions,
                 c->hash_family == GH_HASH_XOR ? "xor" : "multiply", c->table_factor, c->bucket_slots,
                 c->host_threads, (unsigned long long)case_seed, ck_program,
                 tu_backend_name(ck_backend), ck_part, (unsigned long long)ck_seed, ck_bucket_slots);
}

static gh_stats ck_stats(gh_table *table) {
  gh_stats s;
  memset(&s, 0, sizeof s);
  CHECK_OK(table, gh_get_stats(table, &s));
  return s;
}

/* Keys absent from `avoid` (may be NULL) and from the special patterns, unique. */
static void ck_unique_keys(tu_rng *rng, unsigned key_bits, uint64_t n, const tu_ref *avoid,
                           uint64_t *out) {
  tu_ref excluded;
  uint64_t special[8], *present;
  size_t n_special = tu_special_keys(key_bits, special);
  uint64_t n_present = avoid ? tu_ref_size(avoid) : 0;
  tu_ref_init(&excluded, key_bits, 0);
  tu_ref_insert(&excluded, special, NULL, n_special, GH_KEEP_FIRST, NULL);
  present = (uint64_t *)tu_xmalloc((size_t)(n_present + 1) * sizeof *present);
  if (avoid) tu_ref_keys(avoid, present);
  tu_ref_insert(&excluded, present, NULL, n_present, GH_KEEP_FIRST, NULL);
  tu_gen_unique_keys(rng, key_bits, n, &excluded, out);
  free(present);
  tu_ref_free(&excluded);
}

/* n keys: the special patterns first (when n allows), then unique random ones. */
static uint64_t *ck_keys_with_specials(tu_rng *rng, unsigned key_bits, uint64_t n) {
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *keys);
  uint64_t special[8];
  size_t n_special = tu_special_keys(key_bits, special);
  uint64_t head = ck_min_u64(n, n_special);
  memcpy(keys, special, (size_t)head * sizeof *keys);
  ck_unique_keys(rng, key_bits, n - head, NULL, keys + head);
  tu_shuffle(rng, keys, n);
  return keys;
}

/* ---------------------------------------------------------------------------------------- */
/* Maps and sets: tu_table                                                                   */
/* ---------------------------------------------------------------------------------------- */

static const gh_dup_policy ck_policies[] = {GH_KEEP_FIRST, GH_OVERWRITE, GH_ADD, GH_MIN, GH_MAX};
static const char *const ck_policy_names[] = {"KEEP_FIRST", "OVERWRITE", "ADD", "MIN", "MAX"};

/* Inserts keys[0, n) (values drawn here) in `batches` batches under random policies. */
static void ck_map_fill(tu_rng *rng, tu_table *h, const uint64_t *keys, uint64_t n,
                        unsigned batches) {
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *values);
  unsigned b;
  tu_gen_values(rng, h->value_bits, n, values);
  for (b = 0; b < batches; ++b) {
    uint64_t lo = n * b / batches, hi = n * (b + 1) / batches;
    size_t p = (size_t)tu_below(rng, 5);
    tu_set_phase("fill: batch %u of %u (%llu keys, %s)", b + 1, batches,
                 (unsigned long long)(hi - lo), ck_policy_names[p]);
    tu_insert(h, keys + lo, values + lo, hi - lo, ck_policies[p], 0, NULL);
    tu_check_all(h);
  }
  free(values);
}

/* Each of pool[0, n) 1..max_copies times with fresh values, under `policy`. */
static void ck_map_insert_repeats(tu_rng *rng, tu_table *h, const uint64_t *pool, uint64_t n,
                                  unsigned max_copies, gh_dup_policy policy) {
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)(n * max_copies + 1) * sizeof *keys);
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(n * max_copies + 1) * sizeof *values);
  uint64_t m = tu_gen_repeats(rng, pool, n, max_copies, keys);
  tu_gen_values(rng, h->value_bits, m, values);
  tu_insert(h, keys, values, m, policy, 0, NULL);
  free(values);
  free(keys);
}

/* find (present, absent, mixed) / erase a third / re-insert with repeats / every policy, with
 * the reference compared and the table validated after each phase. keys[0, n) are present. */
static void ck_map_workout(tu_rng *rng, tu_table *h, uint64_t *keys, uint64_t n) {
  uint64_t n_absent = 256, third = n / 3, i;
  uint64_t *absent = (uint64_t *)tu_xmalloc((size_t)n_absent * sizeof *absent);
  uint64_t *erase_keys = (uint64_t *)tu_xmalloc((size_t)(third + 40) * sizeof *erase_keys);
  uint64_t n_erase = 0;
  size_t p;

  tu_set_phase("find present and absent keys");
  tu_check_find(h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_contains(h, keys, n);
  ck_unique_keys(rng, h->key_bits, n_absent, &h->ref, absent);
  tu_check_find(h, absent, n_absent, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_find(h, absent, n_absent, TU_FIND_VALUES);
  tu_check_contains(h, absent, n_absent);

  tu_shuffle(rng, keys, n);
  for (i = 0; i < third; ++i) erase_keys[n_erase++] = keys[i];
  for (i = 0; i < 20 && third > 0; ++i) erase_keys[n_erase++] = keys[tu_below(rng, third)];
  for (i = 0; i < 20; ++i) erase_keys[n_erase++] = absent[i];
  tu_shuffle(rng, erase_keys, n_erase);
  tu_set_phase("erase a third (%llu keys, with repeats and absent keys)",
               (unsigned long long)third);
  tu_erase(h, erase_keys, n_erase);
  tu_check_all(h);
  tu_check_find(h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);

  /* Erased keys come back next to present ones; each must be stored exactly once (the export
   * comparison of tu_check_all reports a key held twice). */
  tu_set_phase("re-insert the erased third and as many present keys, up to 3 copies each");
  ck_map_insert_repeats(rng, h, keys, ck_min_u64(n, 2 * third), 3, GH_OVERWRITE);
  tu_check_all(h);
  tu_check_find(h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);

  for (p = 0; p < 5; ++p) {
    uint64_t pool_n = ck_min_u64(n, 100) + 20;
    uint64_t *pool = (uint64_t *)tu_xmalloc((size_t)pool_n * sizeof *pool);
    memcpy(pool, keys + (n - ck_min_u64(n, 100)), (size_t)ck_min_u64(n, 100) * sizeof *pool);
    ck_unique_keys(rng, h->key_bits, 20, &h->ref, pool + ck_min_u64(n, 100));
    tu_set_phase("policy %s: %llu present and 20 new keys, up to 4 copies each",
                 ck_policy_names[p], (unsigned long long)ck_min_u64(n, 100));
    ck_map_insert_repeats(rng, h, pool, pool_n, 4, ck_policies[p]);
    tu_check_find(h, pool, pool_n, TU_FIND_VALUES | TU_FIND_FOUND);
    free(pool);
  }
  tu_set_phase("after the policy batches");
  tu_check_all(h);
  free(erase_keys);
  free(absent);
}

/* ---------------------------------------------------------------------------------------- */
/* Part: restarts                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* A map / set at the smallest table factor of each d, filled to its capacity and then past it:
 * builds fail near the load threshold and restart; every key must survive. */
static void restarts_min_factor(void) {
  uint64_t total_restarts = 0, total_grows = 0;
  unsigned d;
  for (d = 2; d <= 5; ++d) {
    static const unsigned value_bits[4] = {32, 0, 64, 32};
    uint64_t case_seed = tu_mix_seed(ck_seed, 1, d, 0), n = 3000, *keys, *more;
    tu_rng rng = tu_rng_make(case_seed);
    gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, d % 2 ? 64 : 32, value_bits[d - 2], n, d,
                              (gh_hash_family)(d % 2), ck_min_factor_of(d));
    tu_table h;
    gh_stats s;
    unsigned b;
    ck_context("restarts at the smallest table factor", &cfg, case_seed);
    tu_set_phase("create");
    if (!tu_table_create(&h, &cfg)) continue;
    keys = ck_keys_with_specials(&rng, h.key_bits, n);
    ck_map_fill(&rng, &h, keys, n, 1);
    tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
    s = ck_stats(h.table);
    printf("  d=%u factor %.2f: %llu keys in one batch: restarts %llu grows %llu slots %llu\n",
           d, cfg.table_factor, (unsigned long long)n, (unsigned long long)s.restarts,
           (unsigned long long)s.grows, (unsigned long long)s.slots);
    /* Past the capacity in six batches: the table grows and rebuilds at the same factor. */
    more = (uint64_t *)tu_xmalloc((size_t)n * sizeof *more);
    ck_unique_keys(&rng, h.key_bits, n, &h.ref, more);
    for (b = 0; b < 6; ++b) {
      uint64_t *values = (uint64_t *)tu_xmalloc(500 * sizeof *values);
      tu_gen_values(&rng, h.value_bits, 500, values);
      tu_set_phase("grow: batch %u of 6 (500 new keys)", b + 1);
      tu_insert(&h, more + 500 * b, values, 500, GH_OVERWRITE, 0, NULL);
      tu_check_all(&h);
      free(values);
    }
    tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
    tu_check_find(&h, more, n, TU_FIND_VALUES | TU_FIND_FOUND);
    s = ck_stats(h.table);
    CHECK(s.grows > 0, "%llu keys in a table sized for %llu, yet gh_stats.grows = 0",
          (unsigned long long)(2 * n), (unsigned long long)n);
    printf("  d=%u factor %.2f: after growing to %llu keys: restarts %llu grows %llu slots "
           "%llu\n", d, cfg.table_factor, (unsigned long long)(2 * n),
           (unsigned long long)s.restarts, (unsigned long long)s.grows,
           (unsigned long long)s.slots);
    total_restarts += s.restarts;
    total_grows += s.grows;
    free(more);
    free(keys);
    tu_table_destroy(&h);
  }
  tu_set_context("cuckoo restarts at the smallest table factor, over d = 2..5\n  rerun: %s %s "
                 "--part %s --seed 0x%016llx", ck_program, tu_backend_name(ck_backend), ck_part,
                 (unsigned long long)ck_seed);
  /* At the smallest practical factors some build among the eight must hit the eviction limit
   * (buckets hold 1 / 1.02 with room to spare: there, restarts come from the forced cases). */
  CHECK(total_restarts > 0 || ck_bucket_slots > 1, "no build restarted at the smallest table factors (grows %llu): "
        "the eviction limit or the restart counter does not work",
        (unsigned long long)total_grows);
}

/* Degenerate constants forced through the hook, on a fresh table and before a batch that makes
 * the table grow, for each variant. Every forced attempt is a restart; nothing is lost. */
static void restarts_forced(void) {
  static const gh_variant variants[] = {GH_VARIANT_MAP, GH_VARIANT_MAP, GH_VARIANT_COMPACTING,
                                        GH_VARIANT_MULTIVALUE};
  static const unsigned value_bits[] = {32, 0, 64, 32};
  static const unsigned forced[] = {1, 3, 12};
  size_t v, f;
  for (v = 0; v < 4; ++v) {
    for (f = 0; f < 3; ++f) {
      uint64_t case_seed = tu_mix_seed(ck_seed, 2, v, f), cap = 1000, n1 = 800, n2 = 700, i;
      tu_rng rng = tu_rng_make(case_seed);
      unsigned d = 2 + (unsigned)tu_below(&rng, 4);
      gh_config cfg = ck_config(&rng, variants[v], (v + f) % 2 ? 64 : 32, value_bits[v], cap, d,
                                (gh_hash_family)tu_below(&rng, 2), ck_min_factor_of(d) + 0.2);
      uint64_t *keys = ck_keys_with_specials(&rng, cfg.key_bits, n1 + n2);
      uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(n1 + n2) * sizeof *values);
      gh_stats before, after;
      tu_table h;
      tu_compact cc;
      tu_multi cm;
      gh_table *table = NULL;
      unsigned round;
      memset(&h, 0, sizeof h);
      memset(&cc, 0, sizeof cc);
      memset(&cm, 0, sizeof cm);
      ck_context("forced restarts (degenerate hash constants)", &cfg, case_seed);
      tu_set_phase("create");
      if (variants[v] == GH_VARIANT_MAP) {
        if (!tu_table_create(&h, &cfg)) goto next;
        table = h.table;
      } else if (variants[v] == GH_VARIANT_COMPACTING) {
        if (!tu_compact_create(&cc, &cfg)) goto next;
        table = cc.table;
      } else {
        if (!tu_multi_create(&cm, &cfg)) goto next;
        table = cm.table;
      }
      tu_multi_values(&rng, cfg.value_bits, n1 + n2, values);
      for (round = 0; round < 2; ++round) {
        /* Round 0: the first build of an empty table; round 1: the batch that outgrows it. */
        const uint64_t *bk = keys + (round ? n1 : 0), *bv = values + (round ? n1 : 0);
        uint64_t bn = round ? n2 : n1;
        before = ck_stats(table);
        gh__cuckoo_force_failures(table, forced[f]);
        tu_set_phase("%s with %u forced failures (%llu keys)",
                     round ? "a batch past the capacity" : "the first batch", forced[f],
                     (unsigned long long)bn);
        if (variants[v] == GH_VARIANT_MAP) {
          tu_insert(&h, bk, bv, bn, round ? GH_MAX : GH_OVERWRITE, 0, NULL);
          tu_check_find(&h, keys, n1 + n2, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
          tu_check_all(&h);
        } else if (variants[v] == GH_VARIANT_COMPACTING) {
          tu_compact_insert(&cc, bk, bn);
          tu_compact_check(&rng, &cc);
        } else {
          tu_multi_insert(&cm, bk, bv, bn);
          /* The same keys again with other values: each key then has two. */
          for (i = 0; i < 50; ++i) {
            uint64_t extra_v = tu_next(&rng) & tu_mask(cfg.value_bits);
            tu_multi_insert(&cm, &bk[i], &extra_v, 1);
          }
          tu_multi_check(&rng, &cm);
        }
        after = ck_stats(table);
        CHECK(after.restarts >= before.restarts + forced[f],
              "%u build attempts were forced to fail, but gh_stats.restarts went from %llu to "
              "%llu", forced[f], (unsigned long long)before.restarts,
              (unsigned long long)after.restarts);
        if (round == 1) {
          CHECK(after.grows > before.grows, "%llu keys in a table sized for %llu, but "
                "gh_stats.grows stayed %llu", (unsigned long long)(n1 + n2),
                (unsigned long long)cap, (unsigned long long)after.grows);
        }
      }
      if (variants[v] == GH_VARIANT_MAP) tu_table_destroy(&h);
      else if (variants[v] == GH_VARIANT_COMPACTING)
        tu_compact_destroy(&cc);
      else
        tu_multi_destroy(&cm);
    next:
      free(values);
      free(keys);
    }
  }
}

/* ---------------------------------------------------------------------------------------- */
/* Part: functions                                                                           */
/* ---------------------------------------------------------------------------------------- */

static void functions_all(void) {
  static const double extra[] = {0.0, 0.1, 1.0, 3.0};
  unsigned d, family;
  for (d = 2; d <= 5; ++d) {
    for (family = 0; family < 2; ++family) {
      static const unsigned value_bits[3] = {0, 32, 64};
      uint64_t case_seed = tu_mix_seed(ck_seed, 3, d, family), n, *keys, i;
      tu_rng rng = tu_rng_make(case_seed);
      unsigned key_bits = (d + family) % 2 ? 64 : 32;
      double factor = ck_min_factor_of(d) + extra[tu_below(&rng, 4)];
      gh_config cfg;
      tu_table h;
      tu_compact cc;
      tu_multi cm;
      if (d == 5 && family == 1) factor = 16.0; /* the largest factor allowed */
      cfg = ck_config(&rng, GH_VARIANT_MAP, key_bits, value_bits[(d + family) % 3],
                      1500 + tu_below(&rng, 1500), d, (gh_hash_family)family, factor);

      /* map or set */
      ck_context("hash functions and families", &cfg, case_seed);
      tu_set_phase("create");
      if (tu_table_create(&h, &cfg)) {
        n = cfg.capacity * (85 + tu_below(&rng, 30)) / 100; /* 0.85 to 1.15 of the capacity */
        keys = ck_keys_with_specials(&rng, h.key_bits, n);
        ck_map_fill(&rng, &h, keys, n, 2);
        ck_map_workout(&rng, &h, keys, n);
        tu_set_phase("clear, then insert again");
        tu_clear(&h);
        tu_check_all(&h);
        ck_map_fill(&rng, &h, keys, ck_min_u64(n, 500), 1);
        tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
        free(keys);
        tu_table_destroy(&h);
      }

      /* compacting */
      cfg = ck_config(&rng, GH_VARIANT_COMPACTING, key_bits, family ? 64 : 32, 600, d,
                      (gh_hash_family)family, factor);
      ck_context("hash functions and families", &cfg, case_seed);
      tu_set_phase("compacting: two batches with repeats");
      if (tu_compact_create(&cc, &cfg)) {
        uint64_t *pool = ck_keys_with_specials(&rng, key_bits, 500);
        uint64_t *batch = (uint64_t *)tu_xmalloc(500 * 3 * sizeof *batch), m;
        m = tu_gen_repeats(&rng, pool, 300, 3, batch);
        tu_compact_insert(&cc, batch, m);
        tu_compact_check(&rng, &cc);
        m = tu_gen_repeats(&rng, pool + 150, 350, 3, batch);
        tu_compact_insert(&cc, batch, m);
        tu_compact_check(&rng, &cc);
        tu_set_phase("compacting: clear, then keys again from id 0");
        tu_compact_clear(&cc);
        tu_compact_check(&rng, &cc);
        m = tu_gen_repeats(&rng, pool + 100, 200, 2, batch);
        tu_compact_insert(&cc, batch, m);
        tu_compact_check(&rng, &cc);
        free(batch);
        free(pool);
        tu_compact_destroy(&cc);
      }

      /* multi-value */
      cfg = ck_config(&rng, GH_VARIANT_MULTIVALUE, key_bits, family ? 32 : 64, 400, d,
                      (gh_hash_family)family, factor);
      ck_context("hash functions and families", &cfg, case_seed);
      tu_set_phase("multivalue: two batches, then erase");
      if (tu_multi_create(&cm, &cfg)) {
        uint64_t *pool = ck_keys_with_specials(&rng, key_bits, 300);
        uint64_t *batch = (uint64_t *)tu_xmalloc(300 * 4 * sizeof *batch), m;
        uint64_t *values = (uint64_t *)tu_xmalloc(300 * 4 * sizeof *values);
        m = tu_gen_repeats(&rng, pool, 200, 4, batch);
        tu_multi_values(&rng, cfg.value_bits, m, values);
        tu_multi_insert(&cm, batch, values, m);
        tu_multi_check(&rng, &cm);
        m = tu_gen_repeats(&rng, pool + 100, 200, 4, batch);
        tu_multi_values(&rng, cfg.value_bits, m, values);
        tu_multi_insert(&cm, batch, values, m);
        tu_multi_check(&rng, &cm);
        for (i = 0; i < 60; ++i) batch[i] = pool[tu_below(&rng, 300)];
        tu_multi_erase(&cm, batch, 60);
        tu_multi_check(&rng, &cm);
        tu_set_phase("multivalue: clear, then append again");
        tu_multi_clear(&cm);
        tu_multi_check(&rng, &cm);
        m = tu_gen_repeats(&rng, pool + 50, 100, 3, batch);
        tu_multi_values(&rng, cfg.value_bits, m, values);
        tu_multi_insert(&cm, batch, values, m);
        tu_multi_check(&rng, &cm);
        free(values);
        free(batch);
        free(pool);
        tu_multi_destroy(&cm);
      }
    }
  }
}

/* ---------------------------------------------------------------------------------------- */
/* Part: incremental                                                                         */
/* ---------------------------------------------------------------------------------------- */

/* A map or set from a small capacity to several times it, in small batches mixing new keys,
 * present keys and erased keys, with erase batches between; the reference is compared and the
 * table validated after every batch. */
static void incremental_map(unsigned index, unsigned key_bits, unsigned value_bits,
                            uint64_t capacity, unsigned batches, unsigned max_batch) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 4, index, 0), u_n = 0, e_n = 0, b, i;
  tu_rng rng = tu_rng_make(case_seed);
  unsigned d = 2 + (unsigned)tu_below(&rng, 4);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, key_bits, value_bits, capacity, d,
                            (gh_hash_family)tu_below(&rng, 2),
                            ck_min_factor_of(d) + (tu_below(&rng, 2) ? 0.0 : 0.25));
  uint64_t room = (uint64_t)batches * max_batch + 8;
  uint64_t *inserted = (uint64_t *)tu_xmalloc((size_t)room * sizeof *inserted);
  uint64_t *erased = (uint64_t *)tu_xmalloc((size_t)room * sizeof *erased);
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)(max_batch + 8) * sizeof *keys);
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(max_batch + 8) * sizeof *values);
  uint64_t special[8], cap_now = 0;
  size_t n_special = tu_special_keys(key_bits, special);
  gh_stats s;
  tu_table h;
  const unsigned long failures_before = tu_failure_count();
  ck_context("incremental batches past the capacity", &cfg, case_seed);
  tu_set_phase("create");
  if (!tu_table_create(&h, &cfg)) goto out;
  for (b = 0; b < batches; ++b) {
    uint64_t n = 1 + tu_below(&rng, max_batch), n_new = 0, op = tu_below(&rng, 6);
    if (op == 0 && u_n > 0) {
      /* erase: present keys (some twice) and a few absent ones */
      for (i = 0; i < n; ++i) keys[i] = inserted[tu_below(&rng, u_n)];
      keys[0] = special[tu_below(&rng, n_special)];
      tu_set_phase("batch %llu: erase %llu keys", (unsigned long long)b, (unsigned long long)n);
      for (i = 0; i < n; ++i) {
        if (tu_ref_contains(&h.ref, keys[i])) erased[e_n++] = keys[i];
      }
      tu_erase(&h, keys, n);
    } else {
      size_t p = (size_t)tu_below(&rng, 5);
      /* about 2/3 new keys, the rest present or erased ones, with repeats */
      for (i = 0; i < n; ++i) {
        uint64_t pick = tu_below(&rng, 6);
        if (pick < 4 || u_n == 0) {
          ck_unique_keys(&rng, key_bits, 1, &h.ref, &keys[i]);
          ++n_new;
        } else if (pick == 4 || e_n == 0) {
          keys[i] = inserted[tu_below(&rng, u_n)];
        } else {
          keys[i] = erased[tu_below(&rng, e_n)];
        }
      }
      if (tu_below(&rng, 8) == 0) keys[tu_below(&rng, n)] = special[tu_below(&rng, n_special)];
      tu_gen_values(&rng, value_bits, n, values);
      tu_set_phase("batch %llu: insert %llu keys (%llu new, %s), table size %llu",
                   (unsigned long long)b, (unsigned long long)n, (unsigned long long)n_new,
                   ck_policy_names[p], (unsigned long long)tu_ref_size(&h.ref));
      for (i = 0; i < n; ++i) {
        if (!tu_ref_contains(&h.ref, keys[i])) inserted[u_n++] = keys[i];
      }
      tu_insert(&h, keys, values, n, ck_policies[p], 0, NULL);
      tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
    }
    tu_check_all(&h);
    if (tu_failure_count() != failures_before) break; /* later batches only repeat it */
  }
  tu_set_phase("after %u batches", batches);
  tu_check_find(&h, inserted, u_n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_find(&h, erased, e_n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  s = ck_stats(h.table);
  CHECK_OK(h.table, gh_capacity(h.table, &cap_now));
  CHECK(s.grows > 0 && cap_now > capacity, "%llu keys went into a table sized for %llu: grows "
        "%llu, gh_capacity %llu", (unsigned long long)u_n, (unsigned long long)capacity,
        (unsigned long long)s.grows, (unsigned long long)cap_now);
  printf("  incremental map k%u v%u: capacity %llu -> %llu, %llu keys, restarts %llu grows "
         "%llu\n", key_bits, value_bits, (unsigned long long)capacity,
         (unsigned long long)cap_now, (unsigned long long)tu_ref_size(&h.ref),
         (unsigned long long)s.restarts, (unsigned long long)s.grows);
  tu_table_destroy(&h);
out:
  free(values);
  free(keys);
  free(erased);
  free(inserted);
}

/* One key at a time into a table sized for one key. */
static void incremental_single_keys(unsigned key_bits, unsigned value_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 5, key_bits, value_bits), n = 150, i;
  tu_rng rng = tu_rng_make(case_seed);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, key_bits, value_bits, 1, 4, GH_HASH_MULTIPLY,
                            1.25);
  uint64_t *keys = ck_keys_with_specials(&rng, key_bits, n), value;
  const unsigned long failures_before = tu_failure_count();
  tu_table h;
  ck_context("one key at a time from capacity 1", &cfg, case_seed);
  tu_set_phase("create");
  if (tu_table_create(&h, &cfg)) {
    for (i = 0; i < n; ++i) {
      tu_gen_values(&rng, value_bits, 1, &value);
      tu_set_phase("single key %llu (0x%llx)", (unsigned long long)i,
                   (unsigned long long)keys[i]);
      tu_insert(&h, &keys[i], &value, 1, GH_KEEP_FIRST, 0, NULL);
      tu_check_find(&h, keys, i + 1, TU_FIND_VALUES | TU_FIND_FOUND);
      tu_check_all(&h);
      if (tu_failure_count() != failures_before) break;
    }
    tu_table_destroy(&h);
  }
  free(keys);
}

/* Compacting: ids stay where they are while the table grows batch by batch. */
static void incremental_compacting(unsigned index, unsigned key_bits, unsigned id_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 6, index, 0), b, cap_now = 0;
  tu_rng rng = tu_rng_make(case_seed);
  unsigned d = 2 + (unsigned)tu_below(&rng, 4);
  gh_config cfg = ck_config(&rng, GH_VARIANT_COMPACTING, key_bits, id_bits, 100, d,
                            (gh_hash_family)tu_below(&rng, 2), ck_min_factor_of(d));
  uint64_t *pool = ck_keys_with_specials(&rng, key_bits, 1200);
  uint64_t *batch = (uint64_t *)tu_xmalloc(200 * sizeof *batch);
  uint64_t pool_used = 0;
  gh_stats s;
  tu_compact cc;
  ck_context("incremental compacting batches past the capacity", &cfg, case_seed);
  tu_set_phase("create");
  if (tu_compact_create(&cc, &cfg)) {
    for (b = 0; b < 40 && !cc.broken; ++b) {
      uint64_t n = 1 + tu_below(&rng, 60), i;
      /* new keys from the pool, and keys already given an id */
      for (i = 0; i < n; ++i) {
        if (pool_used < 1200 && (tu_below(&rng, 3) > 0 || pool_used == 0)) {
          batch[i] = pool[pool_used++];
        } else {
          batch[i] = pool[tu_below(&rng, pool_used)];
        }
      }
      tu_set_phase("batch %llu: %llu keys, %llu ids so far", (unsigned long long)b,
                   (unsigned long long)n, (unsigned long long)cc.size);
      tu_compact_insert(&cc, batch, n);
      tu_compact_check(&rng, &cc);
    }
    s = ck_stats(cc.table);
    CHECK_OK(cc.table, gh_capacity(cc.table, &cap_now));
    CHECK(s.grows > 0 && cap_now > 100, "%llu keys in a compacting table sized for 100: grows "
          "%llu, gh_capacity %llu", (unsigned long long)cc.size, (unsigned long long)s.grows,
          (unsigned long long)cap_now);
    printf("  incremental compacting k%u v%u: %llu ids, capacity %llu, restarts %llu grows "
           "%llu\n", key_bits, id_bits, (unsigned long long)cc.size,
           (unsigned long long)cap_now, (unsigned long long)s.restarts,
           (unsigned long long)s.grows);
    tu_compact_destroy(&cc);
  }
  free(batch);
  free(pool);
}

/* Multi-value: batches append; erases drop every value of a key; erased keys come back. */
static void incremental_multivalue(unsigned index, unsigned key_bits, unsigned value_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 7, index, 0), b;
  tu_rng rng = tu_rng_make(case_seed);
  unsigned d = 2 + (unsigned)tu_below(&rng, 4);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MULTIVALUE, key_bits, value_bits, 100, d,
                            (gh_hash_family)tu_below(&rng, 2), ck_min_factor_of(d) + 0.1);
  uint64_t *pool = ck_keys_with_specials(&rng, key_bits, 600);
  uint64_t *batch = (uint64_t *)tu_xmalloc(100 * sizeof *batch);
  uint64_t *values = (uint64_t *)tu_xmalloc(100 * sizeof *values);
  uint64_t pool_used = 0;
  gh_stats s;
  tu_multi cm;
  const unsigned long failures_before = tu_failure_count();
  ck_context("incremental multivalue batches past the capacity", &cfg, case_seed);
  tu_set_phase("create");
  if (tu_multi_create(&cm, &cfg)) {
    for (b = 0; b < 30; ++b) {
      uint64_t n = 1 + tu_below(&rng, 50), i;
      for (i = 0; i < n; ++i) {
        if (pool_used < 600 && (tu_below(&rng, 2) == 0 || pool_used == 0)) {
          batch[i] = pool[pool_used++];
        } else {
          batch[i] = pool[tu_below(&rng, pool_used)];
        }
      }
      if (b % 5 == 4) {
        tu_set_phase("batch %llu: erase %llu keys", (unsigned long long)b, (unsigned long long)n);
        tu_multi_erase(&cm, batch, n);
      } else {
        tu_multi_values(&rng, value_bits, n, values);
        tu_set_phase("batch %llu: append %llu pairs", (unsigned long long)b,
                     (unsigned long long)n);
        tu_multi_insert(&cm, batch, values, n);
      }
      tu_multi_check(&rng, &cm);
      if (tu_failure_count() != failures_before) break;
    }
    s = ck_stats(cm.table);
    printf("  incremental multivalue k%u v%u: %llu pairs of %llu keys, restarts %llu grows "
           "%llu\n", key_bits, value_bits, (unsigned long long)cm.n,
           (unsigned long long)tu_ref_size(&cm.keys), (unsigned long long)s.restarts,
           (unsigned long long)s.grows);
    tu_multi_destroy(&cm);
  }
  free(values);
  free(batch);
  free(pool);
}

static void incremental_all(void) {
  incremental_map(0, 32, 32, 200, 60, 40);
  incremental_map(1, 64, 64, 200, 60, 40);
  incremental_map(2, 64, 0, 150, 60, 30);
  incremental_map(3, 32, 0, 300, 40, 80);
  incremental_single_keys(32, 32);
  incremental_single_keys(64, 0);
  incremental_compacting(0, 32, 32);
  incremental_compacting(1, 64, 64);
  incremental_multivalue(0, 32, 64);
  incremental_multivalue(1, 64, 32);
}

/* ---------------------------------------------------------------------------------------- */
/* Part: multiplicity                                                                        */
/* ---------------------------------------------------------------------------------------- */

static const unsigned tu_multiplicities[5] = {1, 2, 7, 64, 512};

/* Each of pool[0, n) repeated tu_multiplicities[(i + shift) % 5] times, shuffled. */
static uint64_t ck_gen_multiplied(tu_rng *rng, const uint64_t *pool, uint64_t n, unsigned shift,
                                  uint64_t *out) {
  uint64_t m = 0, i, c;
  for (i = 0; i < n; ++i) {
    for (c = 0; c < tu_multiplicities[(i + shift) % 5]; ++c) out[m++] = pool[i];
  }
  tu_shuffle(rng, out, m);
  return m;
}

static void multiplicity_case(unsigned index, gh_variant variant, unsigned key_bits,
                              unsigned value_bits) {
  enum { DISTINCT = 300, MAX_BATCH = DISTINCT * 512 };
  uint64_t case_seed = tu_mix_seed(ck_seed, 8, index, 0), m, i, round;
  tu_rng rng = tu_rng_make(case_seed);
  unsigned d = 2 + (unsigned)tu_below(&rng, 4);
  gh_config cfg = ck_config(&rng, variant, key_bits, value_bits, 2 * DISTINCT / 3, d,
                            (gh_hash_family)tu_below(&rng, 2), ck_min_factor_of(d) + 0.15);
  /* 450 distinct keys: the first batch uses [0, 300), the second [150, 450). */
  uint64_t *pool = ck_keys_with_specials(&rng, key_bits, DISTINCT + DISTINCT / 2);
  uint64_t *batch = (uint64_t *)tu_xmalloc((size_t)MAX_BATCH * sizeof *batch);
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)MAX_BATCH * sizeof *values);
  tu_table h;
  tu_compact cc;
  tu_multi cm;
  int made;
  memset(&h, 0, sizeof h);
  memset(&cc, 0, sizeof cc);
  memset(&cm, 0, sizeof cm);
  ck_context(variant == GH_VARIANT_MAP && value_bits > 0
                 ? "multiplicities 1..512 (map, ADD 1 per copy)"
                 : "multiplicities 1..512",
             &cfg, case_seed);
  tu_set_phase("create");
  if (variant == GH_VARIANT_MAP) made = tu_table_create(&h, &cfg);
  else if (variant == GH_VARIANT_COMPACTING)
    made = tu_compact_create(&cc, &cfg);
  else
    made = tu_multi_create(&cm, &cfg);
  if (!made) goto out;
  for (round = 0; round < 2; ++round) {
    m = ck_gen_multiplied(&rng, pool + round * DISTINCT / 2, DISTINCT, (unsigned)round, batch);
    tu_set_phase("batch %llu: %d distinct keys, each 1, 2, 7, 64 or 512 times (%llu keys)",
                 (unsigned long long)round + 1, DISTINCT, (unsigned long long)m);
    if (variant == GH_VARIANT_MAP) {
      /* A set holds each key once; a map adding 1 per copy counts the copies exactly. */
      for (i = 0; i < m; ++i) values[i] = 1;
      tu_insert(&h, batch, values, m, GH_ADD, 0, NULL);
      tu_check_find(&h, pool, DISTINCT + DISTINCT / 2,
                    TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
      tu_check_all(&h);
    } else if (variant == GH_VARIANT_COMPACTING) {
      tu_compact_insert(&cc, batch, m);
      tu_compact_check(&rng, &cc);
    } else {
      tu_multi_values(&rng, value_bits, m, values);
      tu_multi_insert(&cm, batch, values, m);
      tu_multi_check(&rng, &cm);
    }
  }
  if (variant == GH_VARIANT_MULTIVALUE) {
    /* Erase a third of the keys (each a few times in the batch), then bring some back: they
     * start again from nothing. */
    for (i = 0; i < 150; ++i) batch[i] = pool[tu_below(&rng, DISTINCT + DISTINCT / 2)];
    tu_set_phase("erase 150 keys drawn with repeats");
    tu_multi_erase(&cm, batch, 150);
    tu_multi_check(&rng, &cm);
    m = ck_gen_multiplied(&rng, batch, 50, 3, batch + 150);
    tu_multi_values(&rng, value_bits, m, values);
    tu_set_phase("re-insert 50 of them, 1..512 times each");
    tu_multi_insert(&cm, batch + 150, values, m);
    tu_multi_check(&rng, &cm);
  } else if (variant == GH_VARIANT_MAP) {
    for (i = 0; i < 150; ++i) batch[i] = pool[tu_below(&rng, DISTINCT + DISTINCT / 2)];
    tu_set_phase("erase 150 keys drawn with repeats, re-insert 50 of them 1..512 times");
    tu_erase(&h, batch, 150);
    tu_check_all(&h);
    m = ck_gen_multiplied(&rng, batch, 50, 3, batch + 150);
    for (i = 0; i < m; ++i) values[i] = 1;
    tu_insert(&h, batch + 150, values, m, GH_ADD, 0, NULL);
    tu_check_find(&h, pool, DISTINCT + DISTINCT / 2, TU_FIND_VALUES | TU_FIND_FOUND);
    tu_check_all(&h);
  }
  if (variant == GH_VARIANT_MAP) tu_table_destroy(&h);
  else if (variant == GH_VARIANT_COMPACTING)
    tu_compact_destroy(&cc);
  else
    tu_multi_destroy(&cm);
out:
  free(values);
  free(batch);
  free(pool);
}

static void multiplicity_all(void) {
  multiplicity_case(0, GH_VARIANT_MAP, 32, 0);
  multiplicity_case(1, GH_VARIANT_MAP, 64, 0);
  multiplicity_case(2, GH_VARIANT_MAP, 32, 32);
  multiplicity_case(3, GH_VARIANT_MAP, 64, 64);
  multiplicity_case(4, GH_VARIANT_COMPACTING, 32, 32);
  multiplicity_case(5, GH_VARIANT_COMPACTING, 64, 64);
  multiplicity_case(6, GH_VARIANT_MULTIVALUE, 32, 64);
  multiplicity_case(7, GH_VARIANT_MULTIVALUE, 64, 32);
}

/* ---------------------------------------------------------------------------------------- */
/* Part: bad                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* A configuration that must be refused: by gh_config_validate and gh_create (naming `field`),
 * and by gh_memory_estimate. */
static void bad_config(const gh_config *c, const char *field, const char *what) {
  char message[512];
  gh_table *table = (gh_table *)&message; /* gh_create must reset it */
  size_t hb = 0, db = 0;
  tu_set_phase("configuration: %s", what);
  memset(message, 'x', sizeof message);
  CHECK_STATUS(NULL, gh_config_validate(c, message, sizeof message), GH_ERR_INVALID_ARGUMENT);
  message[sizeof message - 1] = '\0';
  CHECK(strstr(message, field) != NULL, "gh_config_validate message does not name %s: \"%s\"",
        field, message);
  CHECK_STATUS(NULL, gh_create(c, &table), GH_ERR_INVALID_ARGUMENT);
  CHECK(table == NULL, "failed gh_create left *table non-NULL");
  CHECK(strstr(gh_last_create_error(), field) != NULL,
        "gh_last_create_error does not name %s: \"%s\"", field, gh_last_create_error());
  CHECK_STATUS(NULL, gh_memory_estimate(c, &hb, &db), GH_ERR_INVALID_ARGUMENT);
  if (table != NULL && table != (gh_table *)&message) gh_destroy(table);
}

/* A configuration at the edge of the allowed range: accepted, and the table works. */
static void good_config(const gh_config *c, const char *what) {
  gh_table *table = NULL;
  size_t hb = 0, db = 0;
  tu_set_phase("configuration: %s (allowed)", what);
  CHECK_OK(NULL, gh_config_validate(c, NULL, 0));
  CHECK_OK(NULL, gh_memory_estimate(c, &hb, &db));
  CHECK(hb + db > 0, "gh_memory_estimate gives 0 bytes");
  if (CHECK_OK(NULL, gh_create(c, &table))) {
    CHECK(gh_last_create_error()[0] == '\0', "gh_last_create_error after success: \"%s\"",
          gh_last_create_error());
    CHECK_OK(table, gh_validate(table));
    gh_destroy(table);
  }
}

/* base with the unsigned field at `offset` (named `field`) set to each of values: refused. */
static void bad_unsigned_values(const gh_config *base, const char *field, size_t offset, const unsigned *values,
                                size_t count) {
  for (size_t i = 0; i < count; ++i) {
    char what[64];
    gh_config c = *base;
    memcpy((char *)&c + offset, &values[i], sizeof values[i]);
    snprintf(what, sizeof what, "%s = %u", field, values[i]);
    bad_config(&c, field, what);
  }
}

static void bad_configs(void) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 9, 0, 0);
  tu_rng rng = tu_rng_make(case_seed);
  gh_config base = ck_config(&rng, GH_VARIANT_MAP, 32, 32, 1000, 4, GH_HASH_MULTIPLY, 1.25), c;
  gh_config def = gh_config_default(GH_CUCKOO);
  unsigned d;
  ck_context("configurations", &base, case_seed);

  tu_set_phase("gh_config_default(GH_CUCKOO)");
  CHECK(def.design == GH_CUCKOO && def.variant == GH_VARIANT_MAP && def.hash_functions == 4 &&
            def.hash_family == GH_HASH_MULTIPLY && def.table_factor == 1.25 &&
            def.key_bits == 32 && def.value_bits == 32 && def.capacity == ((uint64_t)1 << 20) &&
            def.backend == GH_BACKEND_AUTO,
        "gh_config_default(GH_CUCKOO) differs from the documented defaults (d=%u family=%d "
        "factor=%g variant=%d)", def.hash_functions, (int)def.hash_family, def.table_factor,
        (int)def.variant);
  CHECK_OK(NULL, gh_config_validate(&def, NULL, 0));

  for (d = 2; d <= 5; ++d) {
    char what[96];
    c = base;
    c.hash_functions = d;
    c.table_factor = ck_min_factor_of(d) - 0.01;
    snprintf(what, sizeof what, "d = %u, table_factor %.2f below its minimum %.2f", d,
             c.table_factor, ck_min_factor_of(d));
    bad_config(&c, "table_factor", what);
    c.table_factor = ck_min_factor_of(d);
    snprintf(what, sizeof what, "d = %u at its minimum table_factor %.2f", d, c.table_factor);
    good_config(&c, what);
    c.table_factor = 16.0;
    snprintf(what, sizeof what, "d = %u, table_factor 16", d);
    good_config(&c, what);
  }
  {
    static const unsigned bad_d[] = {0, 1, 6, 100};
    bad_unsigned_values(&base, "hash_functions", offsetof(gh_config, hash_functions), bad_d,
                        sizeof bad_d / sizeof bad_d[0]);
  }
  {
    const double bad_factor[] = {16.01, 1000.0, 0.0, 1.0, -1.25, NAN, INFINITY, -INFINITY};
    size_t i;
    for (i = 0; i < sizeof bad_factor / sizeof bad_factor[0]; ++i) {
      char what[64];
      c = base;
      c.table_factor = bad_factor[i];
      snprintf(what, sizeof what, "table_factor = %g", bad_factor[i]);
      bad_config(&c, "table_factor", what);
    }
  }
  {
    static const unsigned bad_buckets[] = {0, 2, 3, 32, 1000};
    bad_unsigned_values(&base, "bucket_slots", offsetof(gh_config, bucket_slots), bad_buckets,
                        sizeof bad_buckets / sizeof bad_buckets[0]);
    /* Buckets lower the smallest factor for every d (1.05 with 4 slots, 1.02 with 8 or 16); single
     * slots keep theirs. */
    for (d = 2; d <= 5; ++d) {
      static const unsigned bucket_sizes[] = {4, 8, 16};
      for (size_t b = 0; b < 3; ++b) {
        char what[96];
        c = base;
        c.hash_functions = d;
        c.bucket_slots = bucket_sizes[b];
        c.table_factor = ck_min_bucketed_factor(c.bucket_slots);
        snprintf(what, sizeof what, "d = %u, %u slots a bucket, table_factor %.2f", d, c.bucket_slots, c.table_factor);
        good_config(&c, what);
        c.table_factor -= 0.01;
        snprintf(what, sizeof what, "d = %u, %u slots a bucket, table_factor %.2f", d, c.bucket_slots, c.table_factor);
        bad_config(&c, "table_factor", what);
      }
    }
    CHECK(def.bucket_slots == 1, "gh_config_default(GH_CUCKOO).bucket_slots = %u, documented 1", def.bucket_slots);
  }
  c = base;
  c.hash_family = (gh_hash_family)2;
  bad_config(&c, "hash_family", "hash_family = 2");
  c.hash_family = (gh_hash_family)-1;
  bad_config(&c, "hash_family", "hash_family = -1");
  c = base;
  c.variant = (gh_variant)3;
  bad_config(&c, "variant", "variant = 3");
  c.variant = (gh_variant)-1;
  bad_config(&c, "variant", "variant = -1");
  c = base;
  c.variant = GH_VARIANT_COMPACTING;
  c.value_bits = 0;
  bad_config(&c, "value_bits", "compacting with value_bits 0");
  c.variant = GH_VARIANT_MULTIVALUE;
  bad_config(&c, "value_bits", "multivalue with value_bits 0");
  /* Designs without these variants refuse them: bad_inputs checks that for every design. */
  c = base;
  c.variant = GH_VARIANT_COMPACTING;
  c.value_bits = 64;
  c.key_bits = 64;
  good_config(&c, "compacting k64 v64");
  c.variant = GH_VARIANT_MULTIVALUE;
  good_config(&c, "multivalue k64 v64");
}

/* A refused call: status, message, and (through `check`) the table as it was. */
#define REFUSED(table, call, want, check)                                                     \
  do {                                                                                        \
    gh_status st_ = (call);                                                                   \
    const char *text_ = gh_last_error(table);                                                 \
    tu_set_phase("refused call: %s", #call);                                                  \
    CHECK(st_ == (want), "%s returned %s, expected %s (gh_last_error \"%s\")", #call,          \
          gh_status_name(st_), gh_status_name(want), text_ ? text_ : "(NULL)");               \
    CHECK(text_ != NULL && text_[0] != '\0', "gh_last_error is empty after a refused %s",     \
          #call);                                                                             \
    check;                                                                                    \
  } while (0)

static void bad_map_calls(unsigned value_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 10, value_bits, 0), u = 0;
  tu_rng rng = tu_rng_make(case_seed);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, 32, value_bits, 300, 3, GH_HASH_XOR, 1.5);
  uint64_t *keys64 = ck_keys_with_specials(&rng, 32, 200), values64[200], counts[8];
  uint32_t keys[200], values[200], out[200];
  void *vals;
  int i;
  tu_table h;
  ck_context("refused calls", &cfg, case_seed);
  tu_set_phase("create");
  if (!tu_table_create(&h, &cfg)) goto out;
  tu_gen_values(&rng, value_bits, 200, values64);
  tu_insert(&h, keys64, values64, 200, GH_OVERWRITE, 0, NULL);
  tu_check_all(&h);
  for (i = 0; i < 200; ++i) {
    keys[i] = (uint32_t)keys64[i];
    values[i] = (uint32_t)values64[i] + 1;
  }
  vals = value_bits ? values : NULL;
  REFUSED(h.table, gh_insert(h.table, keys, vals, 10, GH_APPEND, NULL, NULL), GH_ERR_UNSUPPORTED,
          tu_check_all(&h));
  REFUSED(h.table, gh_insert(h.table, keys, vals, 10, (gh_dup_policy)6, NULL, NULL),
          GH_ERR_INVALID_ARGUMENT, tu_check_all(&h));
  if (value_bits) {
    REFUSED(h.table, gh_insert(h.table, keys, NULL, 10, GH_OVERWRITE, NULL, NULL),
            GH_ERR_INVALID_ARGUMENT, tu_check_all(&h));
  } else {
    REFUSED(h.table, gh_insert(h.table, keys, values, 10, GH_OVERWRITE, NULL, NULL),
            GH_ERR_INVALID_ARGUMENT, tu_check_all(&h));
  }
  REFUSED(h.table, gh_count(h.table, keys, 8, counts, &u, NULL), GH_ERR_UNSUPPORTED,
          tu_check_all(&h));
  REFUSED(h.table, gh_find_all(h.table, keys, 8, counts, out, 200, NULL), GH_ERR_UNSUPPORTED,
          tu_check_all(&h));
  REFUSED(h.table, gh_keys_of_ids(h.table, keys, 8, out, NULL), GH_ERR_UNSUPPORTED,
          tu_check_all(&h));
  REFUSED(h.table, gh_export(h.table, out, value_bits ? values : NULL, 199, &u, NULL),
          GH_ERR_BUFFER_TOO_SMALL, tu_check_all(&h));
  REFUSED(h.table, gh_find(h.table, keys, 8, NULL, NULL, NULL, NULL), GH_ERR_INVALID_ARGUMENT,
          tu_check_all(&h));
  REFUSED(h.table, gh_get_stats(h.table, NULL), GH_ERR_INVALID_ARGUMENT, tu_check_all(&h));
  tu_table_destroy(&h);
out:
  free(keys64);
}

static void bad_compacting_calls(unsigned key_bits, unsigned id_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 11, key_bits, id_bits), u = 0, i, n_ids = 8;
  tu_rng rng = tu_rng_make(case_seed);
  gh_config cfg = ck_config(&rng, GH_VARIANT_COMPACTING, key_bits, id_bits, 300, 4,
                            GH_HASH_MULTIPLY, 1.25);
  uint64_t *keys64 = ck_keys_with_specials(&rng, key_bits, 200), counts[8];
  uint64_t ids64[8], back[8];
  void *keys, *ids, *keys_out, *values;
  tu_compact cc;
  size_t p;
  ck_context("refused calls", &cfg, case_seed);
  tu_set_phase("create");
  if (!tu_compact_create(&cc, &cfg)) {
    free(keys64);
    return;
  }
  tu_compact_insert(&cc, keys64, 200);
  tu_compact_check(&rng, &cc);
  keys = tu_pack(keys64, 200, key_bits);
  values = tu_pack(keys64, 200, key_bits); /* any values: a compacting insert takes none */
  keys_out = tu_xmalloc(200 * 8);

  REFUSED(cc.table, gh_insert(cc.table, keys, values, 10, GH_KEEP_FIRST, NULL, NULL),
          GH_ERR_INVALID_ARGUMENT, tu_compact_check(&rng, &cc));
  for (p = 1; p <= 5; ++p) {
    REFUSED(cc.table, gh_insert(cc.table, keys, NULL, 10, (gh_dup_policy)p, NULL, NULL),
            GH_ERR_UNSUPPORTED, tu_compact_check(&rng, &cc));
  }
  REFUSED(cc.table, gh_insert(cc.table, keys, NULL, 10, (gh_dup_policy)6, NULL, NULL),
          GH_ERR_INVALID_ARGUMENT, tu_compact_check(&rng, &cc));
  REFUSED(cc.table, gh_erase(cc.table, keys, 10, NULL, &u, NULL), GH_ERR_UNSUPPORTED,
          tu_compact_check(&rng, &cc));
  REFUSED(cc.table, gh_count(cc.table, keys, 8, counts, &u, NULL), GH_ERR_UNSUPPORTED,
          tu_compact_check(&rng, &cc));
  REFUSED(cc.table, gh_find_all(cc.table, keys, 8, counts, keys_out, 200, NULL), GH_ERR_UNSUPPORTED,
          tu_compact_check(&rng, &cc));
  REFUSED(cc.table, gh_export(cc.table, keys_out, keys_out, 199, &u, NULL), GH_ERR_BUFFER_TOO_SMALL,
          tu_compact_check(&rng, &cc));

  /* Ids at and past the size among valid ones: refused with their count, the rest written. */
  ids64[0] = 0;
  ids64[1] = cc.size;                    /* bad */
  ids64[2] = cc.size - 1;
  ids64[3] = cc.size + 5;                /* bad */
  ids64[4] = 7;
  ids64[5] = tu_mask(id_bits);           /* bad: all-ones */
  ids64[6] = cc.size / 2;
  ids64[7] = 1;
  ids = tu_pack(ids64, n_ids, id_bits);
  memset(keys_out, 0xA5, 200 * 8);
  REFUSED(cc.table, gh_keys_of_ids(cc.table, ids, n_ids, keys_out, NULL),
          GH_ERR_INVALID_ARGUMENT, (void)0);
  CHECK(tu_mentions_count(gh_last_error(cc.table), 3),
        "gh_keys_of_ids with 3 ids out of range: the message does not give the count 3: \"%s\"",
        gh_last_error(cc.table));
  if (!cc.broken) {
    tu_unpack(keys_out, n_ids, key_bits, back);
    for (i = 0; i < n_ids; ++i) {
      if (ids64[i] >= cc.size) continue;
      CHECK(back[i] == cc.keys_by_id[ids64[i]], "gh_keys_of_ids refused for other ids left "
            "position %llu (id %llu) as 0x%llx, expected 0x%llx", (unsigned long long)i,
            (unsigned long long)ids64[i], (unsigned long long)back[i],
            (unsigned long long)cc.keys_by_id[ids64[i]]);
    }
  }
  tu_compact_check(&rng, &cc);
  REFUSED(cc.table, gh_keys_of_ids(cc.table, ids, n_ids, NULL, NULL), GH_ERR_INVALID_ARGUMENT,
          tu_compact_check(&rng, &cc));
  REFUSED(cc.table, gh_keys_of_ids(cc.table, NULL, n_ids, keys_out, NULL), GH_ERR_INVALID_ARGUMENT,
          tu_compact_check(&rng, &cc));
  tu_set_phase("gh_keys_of_ids of 0 ids");
  CHECK_OK(cc.table, gh_keys_of_ids(cc.table, ids, 0, keys_out, NULL));
  REFUSED(cc.table, gh_get_stats(cc.table, NULL), GH_ERR_INVALID_ARGUMENT,
          tu_compact_check(&rng, &cc));

  /* After all that, new keys still get the next ids. */
  tu_set_phase("insert after the refused calls");
  {
    uint64_t more[50];
    ck_unique_keys(&rng, key_bits, 50, &cc.ids, more);
    tu_compact_insert(&cc, more, 50);
    tu_compact_check(&rng, &cc);
  }
  free(ids);
  free(keys_out);
  free(values);
  free(keys);
  free(keys64);
  tu_compact_destroy(&cc);
}

static void bad_multivalue_calls(unsigned key_bits, unsigned value_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 12, key_bits, value_bits), u = 0, total = 0, m;
  tu_rng rng = tu_rng_make(case_seed);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MULTIVALUE, key_bits, value_bits, 300, 2,
                            GH_HASH_XOR, 2.5);
  uint64_t *pool = ck_keys_with_specials(&rng, key_bits, 100);
  uint64_t *keys64 = (uint64_t *)tu_xmalloc(500 * sizeof *keys64);
  uint64_t *values64 = (uint64_t *)tu_xmalloc(500 * sizeof *values64);
  uint64_t counts[20], offsets[21];
  void *keys, *values, *out, *out_keys;
  tu_multi cm;
  size_t p;
  ck_context("refused calls", &cfg, case_seed);
  tu_set_phase("create");
  if (!tu_multi_create(&cm, &cfg)) goto out;
  m = tu_gen_repeats(&rng, pool, 100, 5, keys64);
  tu_multi_values(&rng, value_bits, m, values64);
  tu_multi_insert(&cm, keys64, values64, m);
  tu_multi_check(&rng, &cm);
  keys = tu_pack(pool, 100, key_bits);
  values = tu_pack(values64, 100, value_bits);
  out = tu_xmalloc((size_t)(m + 8) * 8);
  out_keys = tu_xmalloc((size_t)(m + 8) * 8);

  for (p = 0; p <= 4; ++p) {
    REFUSED(cm.table, gh_insert(cm.table, keys, values, 10, (gh_dup_policy)p, NULL, NULL),
            GH_ERR_UNSUPPORTED, tu_multi_check(&rng, &cm));
  }
  REFUSED(cm.table, gh_insert(cm.table, keys, values, 10, (gh_dup_policy)6, NULL, NULL),
          GH_ERR_INVALID_ARGUMENT, tu_multi_check(&rng, &cm));
  REFUSED(cm.table, gh_insert(cm.table, keys, NULL, 10, GH_APPEND, NULL, NULL),
          GH_ERR_INVALID_ARGUMENT, tu_multi_check(&rng, &cm));
  REFUSED(cm.table, gh_keys_of_ids(cm.table, values, 10, out_keys, NULL), GH_ERR_UNSUPPORTED,
          tu_multi_check(&rng, &cm));

  /* find_all into a buffer one value too small, and into none. */
  tu_set_phase("count the values of 20 keys");
  if (CHECK_OK(cm.table, gh_count(cm.table, keys, 20, counts, &total, NULL))) {
    CHECK(total > 0, "20 present keys have no values");
    REFUSED(cm.table, gh_find_all(cm.table, keys, 20, offsets, out, total - 1, NULL),
            GH_ERR_BUFFER_TOO_SMALL, tu_multi_check(&rng, &cm));
    REFUSED(cm.table, gh_find_all(cm.table, keys, 20, offsets, out, 0, NULL),
            GH_ERR_BUFFER_TOO_SMALL, tu_multi_check(&rng, &cm));
    REFUSED(cm.table, gh_find_all(cm.table, keys, 20, NULL, out, total, NULL),
            GH_ERR_INVALID_ARGUMENT, tu_multi_check(&rng, &cm));
    tu_set_phase("find_all into exactly the counted capacity");
    CHECK_OK(cm.table, gh_find_all(cm.table, keys, 20, offsets, out, total, NULL));
    CHECK(offsets[20] == total, "find_all offsets[20] = %llu, gh_count total %llu",
          (unsigned long long)offsets[20], (unsigned long long)total);
  }
  REFUSED(cm.table, gh_export(cm.table, out_keys, out, cm.n - 1, &u, NULL), GH_ERR_BUFFER_TOO_SMALL,
          tu_multi_check(&rng, &cm));
  REFUSED(cm.table, gh_count(cm.table, NULL, 5, counts, &u, NULL), GH_ERR_INVALID_ARGUMENT,
          tu_multi_check(&rng, &cm));
  REFUSED(cm.table, gh_get_stats(cm.table, NULL), GH_ERR_INVALID_ARGUMENT,
          tu_multi_check(&rng, &cm));
  free(out_keys);
  free(out);
  free(values);
  free(keys);
  tu_multi_destroy(&cm);
out:
  free(values64);
  free(keys64);
  free(pool);
}

static void bad_all(void) {
  bad_configs();
  bad_map_calls(32);
  bad_map_calls(0);
  bad_compacting_calls(32, 32);
  bad_compacting_calls(64, 64);
  bad_compacting_calls(64, 32);
  bad_multivalue_calls(32, 64);
  bad_multivalue_calls(64, 32);
}

/* ---------------------------------------------------------------------------------------- */
/* Part: alloc                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* The tracker and arrays of an allocation-failure case (its context set): keys with the special
 * patterns, and room for batches of that many entries with their values. */
typedef struct ck_alloc_arrays {
  tu_tracker *tracker;
  uint64_t *keys, *batch, *values;
} ck_alloc_arrays;

static ck_alloc_arrays ck_alloc_arrays_make(tu_rng *rng, gh_config *cfg, const char *what, uint64_t case_seed,
                                            uint64_t keys, uint64_t room) {
  ck_alloc_arrays a;
  ck_context(what, cfg, case_seed);
  a.tracker = tu_tracker_new();
  a.keys = ck_keys_with_specials(rng, cfg->key_bits, keys);
  a.batch = (uint64_t *)tu_xmalloc((size_t)room * sizeof *a.batch);
  a.values = (uint64_t *)tu_xmalloc((size_t)room * sizeof *a.values);
  tu_tracker_attach(a.tracker, cfg);
  return a;
}

static void ck_alloc_arrays_free(ck_alloc_arrays *a) {
  tu_tracker_delete(a->tracker);
  free(a->values);
  free(a->batch);
  free(a->keys);
}

/* The policy a variant's inserts take: a map's is the caller's choice. */
static gh_dup_policy ck_variant_policy(gh_variant variant, gh_dup_policy map_policy) {
  return variant == GH_VARIANT_MULTIVALUE ? GH_APPEND : variant == GH_VARIANT_MAP ? map_policy : GH_KEEP_FIRST;
}

/* Before every run of the insert: its next two build attempts use degenerate constants, so the
 * insert restarts (gathers every key, clears the slots, places them again) at least twice. */
static void force_two_restarts(gh_table *table, void *arg) {
  (void)arg;
  gh__cuckoo_force_failures(table, 2);
}

static void alloc_case(unsigned index, gh_variant variant, unsigned key_bits, unsigned value_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 13, index, 0), n1 = 300, n2 = 200, i, m;
  tu_rng rng = tu_rng_make(case_seed);
  unsigned d = 2 + (unsigned)tu_below(&rng, 4);
  gh_config cfg = ck_config(&rng, variant, key_bits, value_bits, 400, d,
                            (gh_hash_family)tu_below(&rng, 2), ck_min_factor_of(d) + 0.25);
  ck_alloc_arrays a = ck_alloc_arrays_make(&rng, &cfg, "allocation failures during forced restarts", case_seed,
                                           n1 + n2 + 600, 3 * (n1 + n2 + 600));
  tu_tracker *tracker = a.tracker;
  uint64_t *keys = a.keys, *batch = a.batch, *values = a.values;
  const gh_dup_policy policy = ck_variant_policy(variant, GH_MAX);
  tu_model model;
  tu_op op;
  tu_set_phase("create");
  if (!tu_model_create(&model, &cfg)) goto out;
  /* A first batch, without failures. */
  m = tu_gen_repeats(&rng, keys, n1, 2, batch);
  tu_multi_values(&rng, value_bits, m, values);
  tu_set_phase("the first batch");
  tu_model_insert(&model, batch, values, m, policy, 0);

  /* Present and new keys with repeats, every build attempt forced to restart twice. */
  memset(&op, 0, sizeof op);
  op.kind = TU_OP_INSERT;
  op.policy = policy;
  op.before_attempt = force_two_restarts;
  m = tu_gen_repeats(&rng, keys + n1 / 2, n1 / 2 + n2, 2, batch);
  tu_multi_values(&rng, value_bits, m, values);
  op.name = "insert with two forced restarts";
  op.keys = batch;
  op.values = values;
  op.n = m;
  tu_fail_each_allocation(tracker, &model, &rng, &op);

  /* Past the capacity (the table grows), with forced restarts on the way. */
  m = 0;
  for (i = n1 + n2; i < n1 + n2 + 600; ++i) batch[m++] = keys[i];
  tu_multi_values(&rng, value_bits, m, values);
  op.name = "insert past the capacity, forced restarts";
  op.n = m;
  tu_fail_each_allocation(tracker, &model, &rng, &op);
  {
    /* The runs above end at the first that completes, which may be one that coped with a failed
     * rebuild by placing the batch where it was (the forced attempts then unused): the count is
     * checked on one more insert, with no failure injected. */
    const gh_stats before = ck_stats(tu_model_table(&model));
    uint64_t *fresh = ck_keys_with_specials(&rng, key_bits, n2); /* (random: nearly all new) */
    force_two_restarts(tu_model_table(&model), NULL);
    m = tu_gen_repeats(&rng, fresh, n2, 2, batch);
    free(fresh);
    tu_multi_values(&rng, value_bits, m, values);
    tu_set_phase("an insert with two forced restarts and no failures");
    tu_model_insert(&model, batch, values, m, policy, 0);
    const gh_stats after = ck_stats(tu_model_table(&model));
    CHECK(after.restarts >= before.restarts + 2, "2 build attempts were forced to fail, gh_stats.restarts went "
          "from %llu to %llu", (unsigned long long)before.restarts, (unsigned long long)after.restarts);
  }
  tu_set_phase("destroy");
  tu_model_destroy(&model);
  tu_tracker_check_clean(tracker, "after gh_destroy");
out:
  ck_alloc_arrays_free(&a);
}

/* A batch past the capacity that finds memory neither for the larger table nor for a compact stash
 * keeps the batch's own entries as the stash: live bytes capped at what the table held plus the
 * batch's entries and a flag byte each (with room for the entries' rounding up to 256 bytes) and
 * less than one more entry. The insert still stores every key (what the slots cannot hold waits in
 * the stash, in the batch's n2 entries: a compact stash would be smaller); then (odd cases)
 * gh_clear drops the stash and its memory, and the next insert takes back a stash still there and
 * frees that memory; nothing leaks and nothing is freed twice. */
static void stash_without_memory_case(unsigned index, unsigned key_bits, unsigned value_bits) {
  const uint64_t case_seed = tu_mix_seed(ck_seed, 14, index, 0), n1 = 400, n2 = 300;
  tu_rng rng = tu_rng_make(case_seed);
  const unsigned d = 2 + index % 2;
  gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, key_bits, value_bits, n1, d, (gh_hash_family)tu_below(&rng, 2),
                            ck_min_factor_of(d) + 0.05);
  ck_alloc_arrays a = ck_alloc_arrays_make(&rng, &cfg, "a stash kept in the batch's block", case_seed, n1 + n2, n1 + n2);
  const size_t entry = gh_slot_bytes(key_bits, value_bits);
  const size_t block = (n2 * entry + 255u) / 256u * 256u + n2;
  tu_model model;
  tu_set_phase("create");
  if (!tu_model_create(&model, &cfg)) goto out;
  tu_gen_values(&rng, value_bits, n1 + n2, a.values);
  tu_set_phase("the first batch");
  tu_model_insert(&model, a.keys, a.values, n1, GH_OVERWRITE, 0);
  gh_table *table = tu_model_table(&model);
  tu_set_phase("a batch past the capacity, with room for nothing but the batch");
  const size_t live_before = tu_tracker_live_bytes(a.tracker, GH_MEMORY_HOST) + tu_tracker_live_bytes(a.tracker, GH_MEMORY_DEVICE);
  /* (the CUDA backend stages the call's host arrays on the device: keys, values, failed_out) */
  const size_t staging = ck_backend == GH_BACKEND_CUDA ? n2 * (key_bits / 8u + value_bits / 8u + 1u) : 0u;
  tu_tracker_set_limit(a.tracker, live_before + staging + block + entry - 1u);
  tu_model_insert(&model, a.keys + n1, a.values + n1, n2, GH_OVERWRITE, 0);
  tu_tracker_set_limit(a.tracker, 0);
  const size_t live_after = tu_tracker_live_bytes(a.tracker, GH_MEMORY_HOST) + tu_tracker_live_bytes(a.tracker, GH_MEMORY_DEVICE);
  const gh_stats stashed = ck_stats(table);
  CHECK(stashed.stash_keys > 0 && stashed.stash_keys < n2, "%llu keys in the stash: the slots should have taken some "
        "of the %llu, not all", (unsigned long long)stashed.stash_keys, (unsigned long long)n2);
  CHECK(live_after >= live_before + n2 * entry, "the stash should hold the batch's %llu entries (%zu bytes), but "
        "live memory grew by %zu bytes: a compact stash was had", (unsigned long long)n2, (size_t)(n2 * entry),
        live_after - live_before);
  tu_model_check(&rng, &model);
  if (index % 2 == 1) {
    /* gh_clear with keys in the stash: the stash and its block go, the table is empty */
    tu_set_phase("gh_clear while the stash holds keys");
    const size_t held = tu_tracker_live_bytes(a.tracker, GH_MEMORY_HOST) + tu_tracker_live_bytes(a.tracker, GH_MEMORY_DEVICE);
    tu_model_clear(&model);
    const size_t after = tu_tracker_live_bytes(a.tracker, GH_MEMORY_HOST) + tu_tracker_live_bytes(a.tracker, GH_MEMORY_DEVICE);
    const gh_stats cleared = ck_stats(table);
    CHECK(cleared.size == 0 && cleared.stash_keys == 0, "after gh_clear: %llu keys, %llu in the stash",
          (unsigned long long)cleared.size, (unsigned long long)cleared.stash_keys);
    CHECK(after < held, "gh_clear kept the stash's memory: %zu bytes live before, %zu after", held, after);
    tu_model_check(&rng, &model);
  }
  tu_set_phase("the next batch (it takes back a stash that is still there)");
  tu_model_insert(&model, a.keys, a.values + n2, n1 / 2, GH_OVERWRITE, 0);
  CHECK(ck_stats(table).stash_keys == 0, "with memory to grow, the next insert left %llu keys in the stash",
        (unsigned long long)ck_stats(table).stash_keys);
  tu_model_check(&rng, &model);
  tu_set_phase("destroy");
  tu_model_destroy(&model);
  tu_tracker_check_clean(a.tracker, "after gh_destroy");
out:
  ck_alloc_arrays_free(&a);
}

static void alloc_all(void) {
  alloc_case(0, GH_VARIANT_MAP, 32, 32);
  alloc_case(1, GH_VARIANT_MAP, 64, 0);
  alloc_case(2, GH_VARIANT_COMPACTING, 64, 32);
  alloc_case(3, GH_VARIANT_MULTIVALUE, 32, 64);
  stash_without_memory_case(0, 32, 32);
  stash_without_memory_case(1, 64, 0);
  stash_without_memory_case(2, 32, 0);
}

/* ---------------------------------------------------------------------------------------- */
/* Part: buckets                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* A bucketed map or set at load 1 / factor: distinct keys filled in `batches` batches, which
 * buckets of 8 or 16 slots hold without growing; then a batch that repeats a third of them twice
 * (their values merge by the policy), and the workout (erase, re-insert with repeats, policies).
 * Then a table with room (load 0.8) takes new keys of which a third come twice in one batch: two
 * inserts of one key race, and the key must land once. */
static void buckets_case(unsigned index, unsigned slots, unsigned d, unsigned key_bits, unsigned value_bits,
                         double factor, unsigned batches) {
  const uint64_t case_seed = tu_mix_seed(ck_seed, 20, index, slots);
  tu_rng rng = tu_rng_make(case_seed);
  const uint64_t n = 6000 + tu_below(&rng, 4000);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, key_bits, value_bits, n, d, (gh_hash_family)(index % 2), factor);
  tu_table h;
  cfg.bucket_slots = slots;
  ck_context("buckets", &cfg, case_seed);
  tu_set_phase("create");
  if (!tu_table_create(&h, &cfg)) return;
  uint64_t *keys = ck_keys_with_specials(&rng, key_bits, n);
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)n * 2 * sizeof *values);
  uint64_t *batch = (uint64_t *)tu_xmalloc((size_t)n * 2 * sizeof *batch);
  tu_gen_values(&rng, value_bits, 2 * n, values);
  for (unsigned b = 0; b < batches; ++b) {
    const uint64_t lo = n * b / batches, hi = n * (b + 1) / batches;
    tu_set_phase("fill: batch %u of %u (%llu distinct keys)", b + 1, batches, (unsigned long long)(hi - lo));
    tu_insert(&h, keys + lo, values + lo, hi - lo, b % 2 ? GH_ADD : GH_KEEP_FIRST, 0, NULL);
    tu_check_all(&h);
  }
  const gh_stats s = ck_stats(h.table);
  tu_set_phase("statistics after the fill");
  CHECK(s.grows == 0 && s.stash_keys == 0,
        "%llu keys at load %.3f in buckets of %u: the table grew %llu times (restarts %llu, %llu keys in the stash)",
        (unsigned long long)n, 1.0 / factor, slots, (unsigned long long)s.grows, (unsigned long long)s.restarts,
        (unsigned long long)s.stash_keys);
  CHECK(s.slots % slots == 0 && s.slots >= (uint64_t)((double)n * factor),
        "gh_stats.slots = %llu: not whole buckets of %u, or fewer than capacity * table_factor = %.0f",
        (unsigned long long)s.slots, slots, (double)n * factor);
  printf("  %u slots a bucket, d=%u, k%u v%u, load %.3f in %u batches: %llu keys, restarts %llu\n", slots, d,
         key_bits, value_bits, 1.0 / factor, batches, (unsigned long long)n, (unsigned long long)s.restarts);
  tu_set_phase("a third of the keys, each twice in one batch (GH_ADD)");
  ck_map_insert_repeats(&rng, &h, keys, n / 3, 2, GH_ADD);
  tu_check_all(&h);
  ck_map_workout(&rng, &h, keys, n);
  tu_table_destroy(&h);

  gh_config roomy = cfg;
  roomy.table_factor = 1.25;
  ck_context("buckets: new keys twice in one batch", &roomy, case_seed);
  tu_set_phase("create");
  if (tu_table_create(&h, &roomy)) {
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; ++i) batch[m++] = keys[i];
    for (uint64_t i = 0; i < n / 3; ++i) batch[m++] = keys[i];
    tu_shuffle(&rng, batch, m);
    tu_set_phase("%llu new keys, a third of them twice (GH_ADD)", (unsigned long long)n);
    tu_insert(&h, batch, values, m, GH_ADD, 0, NULL);
    tu_check_all(&h);
    tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
    tu_table_destroy(&h);
  }
  free(batch);
  free(values);
  free(keys);
}

/* The marks of buckets_copies_case, resolved by several threads at once. */
typedef struct copies_job {
  const gh_ck_geometry *g;
  void *slots;
  const uint64_t *marked;
} copies_job;

static gh_counters resolve_marked(void *context, uint64_t begin, uint64_t end) {
  const copies_job *job = (const copies_job *)context;
  gh_counters counted = {{0}};
  for (uint64_t m = begin; m < end; ++m) counted.value[0] += gh_ck_resolve_copies(job->g, job->slots, job->marked[m], GH_ADD);
  return counted;
}

/* The clean-up of the slots the eviction chains marked (gh_ck_resolve_copies, src/cuckoo/cuckoo.h)
 * on a hand-made table of 97 buckets (4-, 8- and 16-byte slots): keys with 1 to 4 copies in their
 * buckets, some of each key's copies marked (the earliest among them or not, one or several, some
 * slots twice), resolved in random order by 8 threads under GH_ADD: every key once, at its
 * earliest position, with the sum of its copies' values; the calls count every copy removed once;
 * marked keys without copies stay as they were. */
static void buckets_copies_case(unsigned slots_per_bucket, unsigned functions, unsigned key_bits, unsigned value_bits) {
  tu_rng rng = tu_rng_make(tu_mix_seed(ck_seed, 0xC0B1E5u + key_bits + value_bits, slots_per_bucket, functions));
  tu_set_context("buckets copies: %u slots a bucket, d = %u, k%u v%u, seed 0x%016llx", slots_per_bucket, functions,
                 key_bits, value_bits, (unsigned long long)ck_seed);
  gh_ck_geometry g;
  memset(&g, 0, sizeof g);
  while ((1u << g.bucket_shift) < slots_per_bucket) g.bucket_shift += 1;
  g.bucket_count = 97;
  g.bucket_magic = gh_ck_magic(g.bucket_count);
  g.slot_count = g.bucket_count << g.bucket_shift;
  g.functions = functions;
  g.family = GH_HASH_MULTIPLY;
  g.format = gh_slot_format_make(key_bits, value_bits);
  for (unsigned i = 0; i < functions; ++i) {
    g.a[i] = 1u + tu_below(&rng, GH_CK_PRIME32 - 1u);
    g.b[i] = tu_below(&rng, GH_CK_PRIME32);
  }
  const gh_slot_format f = g.format;
  enum { KEYS = 60, MAX_COPIES = 4, MAX_MARKS = KEYS * MAX_COPIES * 2 };
  void *slots = tu_xmalloc((size_t)(g.slot_count + 1) * f.slot_bytes);
  memset(slots, 0xFF, (size_t)(g.slot_count + 1) * f.slot_bytes);
  const uint64_t value_mask = value_bits == 64 ? ~0ull : (1ull << value_bits) - 1u;
  uint64_t keys[KEYS], keeper[KEYS], sum[KEYS], marked[MAX_MARKS], expected_removed = 0;
  unsigned copies[KEYS], marks = 0;
  for (unsigned k = 0; k < KEYS; ++k) {
    keys[k] = 0x10000u + 7919u * k + tu_below(&rng, 7000u) + (key_bits == 64 ? tu_below(&rng, 1u << 30) << 32 : 0u);
    copies[k] = 0;
    sum[k] = 0;
    uint64_t at[MAX_COPIES];
    for (unsigned c = 0; c < 1u + k % MAX_COPIES; ++c) {
      const uint64_t first = gh_ck_bucket(&g, keys[k], (unsigned)tu_below(&rng, functions)) << g.bucket_shift;
      const uint64_t s = first + tu_below(&rng, slots_per_bucket);
      if (gh_slot_load_key(f, gh_slot_at(f, slots, s)) != gh_slot_empty_key(key_bits)) continue; /* one copy fewer */
      const uint64_t value = value_bits ? tu_below(&rng, 1000u) : 0u;
      gh_slot_write(f, gh_slot_at(f, slots, s), gh_slot_pack(f, keys[k], value));
      sum[k] = (sum[k] + value) & value_mask;
      at[copies[k]++] = s;
    }
    if (copies[k] == 0) continue;
    expected_removed += copies[k] - 1u;
    /* every key with copies has one marked at least (some twice); a key without, every other time */
    const unsigned first_mark = (unsigned)tu_below(&rng, copies[k]);
    for (unsigned c = 0; c < copies[k]; ++c) {
      if (c == first_mark ? (copies[k] > 1 || tu_below(&rng, 2)) : tu_below(&rng, 2) != 0) marked[marks++] = at[c];
      if (tu_below(&rng, 4) == 0) marked[marks++] = at[c];
    }
  }
  for (unsigned k = 0; k < KEYS; ++k) keeper[k] = copies[k] ? gh_ck_locate(&g, slots, keys[k]) : ~0ull;
  for (unsigned m = marks; m > 1; --m) { /* resolved in random order */
    const unsigned j = (unsigned)tu_below(&rng, m);
    const uint64_t swap = marked[m - 1];
    marked[m - 1] = marked[j];
    marked[j] = swap;
  }
  copies_job job = {&g, slots, marked};
  const uint64_t removed = gh__parallel_for(marks, 8, resolve_marked, &job).value[0];
  CHECK(removed == expected_removed, "the clean-up removed %llu copies, the table had %llu",
        (unsigned long long)removed, (unsigned long long)expected_removed);
  for (unsigned k = 0; k < KEYS; ++k) {
    if (copies[k] == 0) continue;
    unsigned seen = 0;
    for (uint64_t s = 0; s < g.slot_count; ++s) seen += gh_slot_load_key(f, gh_slot_at(f, slots, s)) == keys[k];
    if (!CHECK(seen == 1, "key 0x%llx is held %u times after the clean-up", (unsigned long long)keys[k], seen)) break;
    const gh_slot_bits kept = gh_slot_read(f, gh_slot_at(f, slots, keeper[k]));
    if (!CHECK(gh_slot_bits_key(f, kept) == keys[k] && gh_slot_bits_value(f, kept) == sum[k],
               "key 0x%llx: slot %llu holds key 0x%llx value %llu, expected the key with the sum %llu of its %u "
               "copies",
               (unsigned long long)keys[k], (unsigned long long)keeper[k], (unsigned long long)gh_slot_bits_key(f, kept),
               (unsigned long long)gh_slot_bits_value(f, kept), (unsigned long long)sum[k], copies[k]))
      break;
  }
  free(slots);
}

static void buckets_all(void) {
  static const unsigned widths[][2] = {{32, 32}, {32, 0}, {64, 64}, {64, 32}};
  for (unsigned slots = 4; slots <= 16; slots *= 2)
    for (unsigned d = 2; d <= 3; ++d) {
      buckets_copies_case(slots, d, 32, 0);
      buckets_copies_case(slots, d, 32, 32);
      buckets_copies_case(slots, d, 64, 64);
    }
  unsigned index = 0;
  for (unsigned slots = 4; slots <= 16; slots *= 2)
    for (unsigned d = 2; d <= 3; ++d)
      for (unsigned w = 0; w < 4; ++w, ++index) {
        /* load 0.95 and the layout's fullest (0.952 with 4 slots, 0.98 with more) */
        const double fullest = ck_min_bucketed_factor(slots);
        buckets_case(index, slots, d, widths[w][0], widths[w][1], w % 2 ? fullest : 1.0 / 0.95, 1 + 7 * (w / 2));
      }
}

/* ---------------------------------------------------------------------------------------- */

typedef struct ck_part_entry {
  const char *name;
  void (*run)(void);
} ck_part_entry;

/* ---------------------------------------------------------------------------------------- */
/* Part: regions (cuckoo.h, "First buckets by regions")                                     */
/* ---------------------------------------------------------------------------------------- */

static const gh_ck_table *ck_state(gh_table *table) { return (const gh_ck_table *)table->impl; }

/* A table of `slots`-slot buckets whose batches into an empty table go by regions from
 * bulk_min_keys keys, created with its context set; 0 when creation failed (reported). */
static int ck_regions_create(tu_table *h, gh_config *cfg, unsigned slots, uint64_t bulk_min_keys, const char *what,
                             uint64_t case_seed) {
  cfg->bucket_slots = slots;
  cfg->bulk_min_keys = bulk_min_keys;
  ck_context(what, cfg, case_seed);
  tu_set_phase("create");
  return tu_table_create(h, cfg);
}

/* The three arrays a regions case fills: keys, the batch and its values. */
static void ck_free_batch_arrays(uint64_t *keys, uint64_t *batch, uint64_t *values) {
  free(values);
  free(batch);
  free(keys);
}

/* A map or set whose batches into an empty table go by regions (bulk_min_keys = 1) or never
 * (UINT64_MAX), against the reference: a first batch with up to 3 copies a key under a random
 * policy (to 0.9 of `load`, so that first buckets overflow), new and present
 * keys, the workout (erase, re-insert, every policy), a clear and an empty table's batch again,
 * then one key more times than four regions hold slots (the partition's skew rule: the chains take
 * it). Tables of 16-byte slots never go by regions. */
static void regions_case(unsigned index, unsigned slots, unsigned d, unsigned key_bits, unsigned value_bits,
                         double load, int by_regions) {
  const uint64_t case_seed = tu_mix_seed(ck_seed, 31, index, (uint64_t)by_regions);
  tu_rng rng = tu_rng_make(case_seed);
  const uint64_t n = (1u << 16) + tu_below(&rng, 1u << 14);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, key_bits, value_bits, n, d, (gh_hash_family)(index % 2), 1.0 / load);
  tu_table h;
  if (!ck_regions_create(&h, &cfg, slots, by_regions ? 1u : UINT64_MAX,
                         by_regions ? "regions: empty tables' batches by regions" : "regions: every batch by chains",
                         case_seed))
    return;
  const int wide = gh_slot_bytes(key_bits, value_bits) > 8u, expect = by_regions && !wide;
  uint64_t *keys = ck_keys_with_specials(&rng, key_bits, n);
  uint64_t *batch = (uint64_t *)tu_xmalloc((size_t)(3 * n) * sizeof *batch);
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(3 * n) * sizeof *values);
  const uint64_t first = n * 9 / 10;
  uint64_t m = tu_gen_repeats(&rng, keys, first, 3, batch);
  tu_gen_values(&rng, value_bits, m, values);
  size_t p = (size_t)tu_below(&rng, 5);
  tu_set_phase("%llu keys into the empty table, up to 3 copies each (%s)", (unsigned long long)first,
               ck_policy_names[p]);
  tu_insert(&h, batch, values, m, ck_policies[p], 0, NULL);
  tu_check_all(&h);
  CHECK(ck_state(h.table)->region_builds == (uint64_t)expect, "%llu batches went by regions, expected %d",
        (unsigned long long)ck_state(h.table)->region_builds, expect);
  /* Full first buckets leave entries to the chains: both halves of the path ran. */
  CHECK(!expect || ck_state(h.table)->region_passed > 0, "no entry of a table at load %.2f found its first bucket full",
        load * 0.9);
  const uint64_t passed = ck_state(h.table)->region_passed;
  tu_set_phase("the rest of the keys and a part of the first, up to twice each (a table with keys: chains)");
  m = tu_gen_repeats(&rng, keys + first / 2, n - first / 2, 2, batch);
  tu_gen_values(&rng, value_bits, m, values);
  tu_insert(&h, batch, values, m, GH_ADD, 0, NULL);
  tu_check_all(&h);
  CHECK(ck_state(h.table)->region_builds == (uint64_t)expect, "a batch into a table with keys went by regions");
  ck_map_workout(&rng, &h, keys, n);
  tu_set_phase("clear, then all keys into the empty table again, up to twice each (MIN)");
  tu_clear(&h);
  m = tu_gen_repeats(&rng, keys, n, 2, batch);
  tu_gen_values(&rng, value_bits, m, values);
  tu_insert(&h, batch, values, m, GH_MIN, 0, NULL);
  tu_check_all(&h);
  tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
  CHECK(ck_state(h.table)->region_builds == 2u * (uint64_t)expect, "%llu batches went by regions, expected %d",
        (unsigned long long)ck_state(h.table)->region_builds, 2 * expect);
  {
    /* One new key more times than four regions hold slots into an empty table: the partition's
     * longest run sends it to the chains (gh_partition_too_skewed). */
    const uint64_t copies = 4u * GH_REGION_WORDS + 100u, builds = ck_state(h.table)->region_builds;
    uint64_t *hot = (uint64_t *)tu_xmalloc((size_t)copies * sizeof *hot);
    uint64_t *hot_values = (uint64_t *)tu_xmalloc((size_t)copies * sizeof *hot_values);
    tu_clear(&h);
    ck_unique_keys(&rng, key_bits, 1, NULL, hot);
    for (uint64_t i = 1; i < copies; ++i) hot[i] = hot[0];
    tu_gen_values(&rng, value_bits, copies, hot_values);
    tu_set_phase("one key %llu times into the empty table (ADD)", (unsigned long long)copies);
    tu_insert(&h, hot, hot_values, copies, GH_ADD, 0, NULL);
    tu_check_all(&h);
    tu_check_find(&h, hot, 1, TU_FIND_VALUES | TU_FIND_FOUND);
    CHECK(ck_state(h.table)->region_builds == builds, "a batch of one key %llu times went by regions",
          (unsigned long long)copies);
    free(hot_values);
    free(hot);
  }
  printf("  %u slots a bucket, d=%u, k%u v%u, load %.2f, %s: %llu batches by regions, %llu entries passed on "
         "from the first (%llu unmerged), restarts %llu\n",
         slots, d, key_bits, value_bits, load, by_regions ? "by regions" : "chains only",
         (unsigned long long)ck_state(h.table)->region_builds, (unsigned long long)passed,
         (unsigned long long)ck_state(h.table)->region_spilled, (unsigned long long)ck_stats(h.table).restarts);
  tu_table_destroy(&h);
  ck_free_batch_arrays(keys, batch, values);
}

/* An empty table of 4-slot buckets filled to load 0.952 in one batch of up to 3 copies a key under
 * `policy`: its regions pass on more keys than their sets of passed entries hold, so entries leave
 * unmerged, copies among them, and the chains' clean-up must merge those. */
static void regions_spill_case(unsigned index, unsigned key_bits, unsigned value_bits, size_t policy) {
  const uint64_t case_seed = tu_mix_seed(ck_seed, 33, index, 0), n = 1u << 16;
  tu_rng rng = tu_rng_make(case_seed);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, key_bits, value_bits, n, 2, GH_HASH_MULTIPLY, 1.05);
  tu_table h;
  if (!ck_regions_create(&h, &cfg, 4, 1, "regions: sets of passed entries overflow", case_seed)) return;
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)n * sizeof *keys);
  uint64_t *batch = (uint64_t *)tu_xmalloc((size_t)(3 * n) * sizeof *batch);
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(3 * n) * sizeof *values);
  ck_unique_keys(&rng, key_bits, n, NULL, keys);
  const uint64_t m = tu_gen_repeats(&rng, keys, n, 3, batch);
  tu_gen_values(&rng, value_bits, m, values);
  tu_set_phase("%llu keys, up to 3 copies each, into the empty table (%s)", (unsigned long long)n,
               ck_policy_names[policy]);
  tu_insert(&h, batch, values, m, ck_policies[policy], 0, NULL);
  tu_check_all(&h);
  tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
  const gh_ck_table *w = ck_state(h.table);
  CHECK(w->region_builds == 1u && w->region_spilled > 0, "%llu batches by regions, %llu entries passed on unmerged: "
        "expected 1 and some", (unsigned long long)w->region_builds, (unsigned long long)w->region_spilled);
  printf("  4 slots a bucket, k%u v%u, load %.3f in one batch (%s): %llu entries passed on, %llu unmerged\n",
         key_bits, value_bits, 1.0 / 1.05, ck_policy_names[policy], (unsigned long long)w->region_passed,
         (unsigned long long)w->region_spilled);
  tu_table_destroy(&h);
  ck_free_batch_arrays(keys, batch, values);
}

/* Many copies of a few keys, below the partition's skew limit, among keys given once, into an empty
 * table by regions under each policy: the copies meet in one bucket word (or one word of the set of
 * passed entries) from many threads at once, and their values merge there. */
static void regions_hot_case(unsigned index, size_t policy) {
  const uint64_t case_seed = tu_mix_seed(ck_seed, 34, index, 0), n = 1u << 16, hot = 64, copies = 400;
  tu_rng rng = tu_rng_make(case_seed);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, 32, 32, n, 2, GH_HASH_MULTIPLY, 1.25);
  tu_table h;
  if (!ck_regions_create(&h, &cfg, 8, 1, "regions: hot keys", case_seed)) return;
  const uint64_t once = n / 2, m = once + hot * copies;
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)(once + hot) * sizeof *keys);
  uint64_t *batch = (uint64_t *)tu_xmalloc((size_t)m * sizeof *batch);
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)m * sizeof *values);
  ck_unique_keys(&rng, 32, once + hot, NULL, keys);
  for (uint64_t i = 0; i < once; ++i) batch[i] = keys[i];
  for (uint64_t i = 0; i < hot * copies; ++i) batch[once + i] = keys[once + i % hot];
  tu_shuffle(&rng, batch, m);
  tu_gen_values(&rng, 32, m, values);
  tu_set_phase("%llu keys once and %llu keys %llu times each into the empty table (%s)", (unsigned long long)once,
               (unsigned long long)hot, (unsigned long long)copies, ck_policy_names[policy]);
  tu_insert(&h, batch, values, m, ck_policies[policy], 0, NULL);
  tu_check_all(&h);
  tu_check_find(&h, keys, once + hot, TU_FIND_VALUES | TU_FIND_FOUND);
  CHECK(ck_state(h.table)->region_builds == 1u, "the batch did not go by regions");
  tu_table_destroy(&h);
  ck_free_batch_arrays(keys, batch, values);
}

/* Every variant by regions against the reference model: an insert into an empty table whose
 * allocations fail in turn, up to the regions' scratch, whose failure leaves the batch to the
 * chains (a failed insert must change nothing, the completed one hold every key); then the same
 * batch into another empty table with no failure, by regions. */
static void regions_variant_case(unsigned index, gh_variant variant, unsigned key_bits, unsigned value_bits) {
  const uint64_t case_seed = tu_mix_seed(ck_seed, 32, index, 0), n = 1u << 14;
  tu_rng rng = tu_rng_make(case_seed);
  gh_config cfg = ck_config(&rng, variant, key_bits, value_bits, n, 2, GH_HASH_MULTIPLY, 1.0 / 0.9);
  cfg.bucket_slots = 8;
  cfg.bulk_min_keys = 1;
  ck_alloc_arrays a = ck_alloc_arrays_make(&rng, &cfg, "regions: every variant, allocation failures", case_seed, n,
                                           2 * n);
  uint64_t *keys = a.keys, *batch = a.batch, *values = a.values;
  const gh_dup_policy policy = ck_variant_policy(variant, GH_ADD);
  tu_model model;
  tu_op op;
  tu_set_phase("create");
  if (!tu_model_create(&model, &cfg)) goto out;
  memset(&op, 0, sizeof op);
  op.kind = TU_OP_INSERT;
  op.policy = policy;
  op.keys = batch;
  op.values = values;
  op.n = tu_gen_repeats(&rng, keys, n, 2, batch);
  tu_multi_values(&rng, value_bits, op.n, values);
  op.name = "insert into an empty table by regions";
  tu_fail_each_allocation(a.tracker, &model, &rng, &op);
  /* The runs end at the first that completes: the one whose regions' scratch failed. */
  CHECK(ck_state(tu_model_table(&model))->region_builds == 0u, "the insert that completed went by regions: its "
        "scratch was expected to fail and leave the batch to the chains");
  tu_model_destroy(&model);
  tu_set_phase("the same batch into another empty table, no failures");
  if (!tu_model_create(&model, &cfg)) goto out;
  tu_model_insert(&model, batch, values, op.n, policy, 0);
  CHECK(ck_state(tu_model_table(&model))->region_builds == 1u, "%llu inserts went by regions, expected 1",
        (unsigned long long)ck_state(tu_model_table(&model))->region_builds);
  tu_set_phase("destroy");
  tu_model_destroy(&model);
  tu_tracker_check_clean(a.tracker, "after gh_destroy");
out:
  ck_alloc_arrays_free(&a);
}

static void regions_all(void) {
  static const unsigned widths[][2] = {{32, 32}, {32, 0}, {64, 0}};
  unsigned index = 0;
  for (unsigned slots = 4; slots <= 16; slots *= 2)
    for (unsigned w = 0; w < 3; ++w, ++index)
      regions_case(index, slots, 2 + index % 2, widths[w][0], widths[w][1], slots == 4 ? 0.85 : 0.95, 1);
  regions_case(index++, 8, 2, 32, 32, 0.8, 0);
  regions_case(index++, 8, 2, 64, 32, 0.8, 1);
  for (size_t p = 0; p < 5; ++p) {
    regions_spill_case((unsigned)p, 32, 32, p);
    regions_hot_case((unsigned)p, p);
  }
  regions_spill_case(5, 64, 0, 2);
  regions_variant_case(0, GH_VARIANT_MAP, 32, 32);
  regions_variant_case(1, GH_VARIANT_MAP, 64, 0);
  regions_variant_case(2, GH_VARIANT_COMPACTING, 32, 32);
  regions_variant_case(3, GH_VARIANT_MULTIVALUE, 32, 64);
}

static void restarts_all(void) {
  restarts_min_factor();
  restarts_forced();
}

static const ck_part_entry ck_parts[] = {
    {"restarts", restarts_all},
    {"functions", functions_all},
    {"incremental", incremental_all},
    {"multiplicity", multiplicity_all},
    {"bad", bad_all},
    {"alloc", alloc_all},
    {"buckets", buckets_all},
    {"regions", regions_all},
};

int main(int argc, char **argv) {
  const ck_part_entry *part = NULL;
  size_t i;
  int a;
  ck_program = argv[0];
  ck_seed = CK_BASE_SEED;
  if (argc < 2 || !tu_parse_backend(argv[1], &ck_backend)) goto usage;
  for (a = 2; a < argc; a += 2) {
    if (a + 1 >= argc) goto usage;
    if (strcmp(argv[a], "--part") == 0) {
      for (i = 0; i < sizeof ck_parts / sizeof ck_parts[0]; ++i) {
        if (strcmp(argv[a + 1], ck_parts[i].name) == 0) part = &ck_parts[i];
      }
      if (part == NULL) goto usage;
    } else if (strcmp(argv[a], "--seed") == 0) {
      if (!tu_parse_u64(argv[a + 1], &ck_seed)) goto usage;
    } else if (strcmp(argv[a], "--bucket-slots") == 0) {
      ck_bucket_slots = (unsigned)strtoul(argv[a + 1], NULL, 10);
      if (ck_bucket_slots != 1 && ck_bucket_slots != 4 && ck_bucket_slots != 8 && ck_bucket_slots != 16) goto usage;
    } else {
      goto usage;
    }
  }
  tu_skip_unless_backend_usable(ck_backend);
  for (i = 0; i < sizeof ck_parts / sizeof ck_parts[0]; ++i) {
    if (part != NULL && part != &ck_parts[i]) continue;
    ck_part = ck_parts[i].name;
    printf("cuckoo %s %s (seed 0x%016llx)\n", tu_backend_name(ck_backend), ck_part,
           (unsigned long long)ck_seed);
    fflush(stdout);
    ck_parts[i].run();
  }
  return tu_finish("cuckoo");
usage:
  fprintf(stderr,
          "usage: %s host|cuda [--part restarts|functions|incremental|multiplicity|bad|alloc|buckets|regions] "
          "[--seed S] [--bucket-slots 1|4|8|16]\n",
          argv[0]);
  return 2;
}
