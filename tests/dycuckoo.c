/*
 * dycuckoo - the DyCuckoo table's own promises (Li et al.), beyond the registry-driven matrix:
 *
 *   dycuckoo BACKEND [--part resize|resize-large|duplicates|config|alloc] [--seed S]
 *
 *   resize      from one bucket per subtable up to many keys (GPU 2^20, host 2^18) in batches,
 *               then erased batch by batch back to none; after every batch: validate, theta =
 *               size / slots within [fill_min, fill_max] (below only once every subtable is back
 *               at its size at creation), subtable sizes within 2x, results against a reference
 *   resize-large  the same to 2^24 keys on the GPU (left out of compute-sanitizer: too slow there)
 *   duplicates  batches where every key comes many times, under every policy (the racing copies
 *               of one key never store it twice), 32- and 64-bit keys
 *   config      d out of 2..8, fill_min >= fill_max, fill_min too close to fill_max for a halving,
 *               fill_max above 0.95: GH_ERR_INVALID_ARGUMENT naming the field
 *   alloc       an insert that must double subtables and an erase that halves them, with each of
 *               their allocations failing in turn: the table stays valid and keeps every key it
 *               acknowledged; an insert may report keys it could not place (GH_ERR_OUT_OF_MEMORY,
 *               flagged), nothing else
 *
 * Every failure prints the case, the phase and the seed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_inject.h"
#include "test_util.h"
#include "tracking_alloc.h"

#define DY_BASE_SEED 0xD1CC0011ull

static gh_backend dy_backend;
static uint64_t dy_seed;

static gh_config dy_config(unsigned key_bits, unsigned value_bits, uint64_t capacity) {
  gh_config cfg = gh_config_default(GH_DYCUCKOO);
  cfg.backend = dy_backend;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  cfg.capacity = capacity;
  cfg.seed = dy_seed;
  return cfg;
}

/* theta and the subtable sizes against what the header promises. */
static void check_bounds(tu_table *h, const char *when) {
  gh_stats s;
  if (!CHECK_OK(h->table, gh_get_stats(h->table, &s))) return;
  uint64_t least = ~0ull, most = 0, keys = 0;
  CHECK(s.subtables == h->config.hash_functions, "%s: %llu subtables, d = %u", when, (unsigned long long)s.subtables,
        h->config.hash_functions);
  for (uint64_t i = 0; i < s.subtables && i < 8; ++i) {
    if (s.subtable_buckets[i] < least) least = s.subtable_buckets[i];
    if (s.subtable_buckets[i] > most) most = s.subtable_buckets[i];
    keys += s.subtable_keys[i];
    CHECK(s.subtable_keys[i] <= s.subtable_buckets[i] * 128 / (h->config.key_bits / 8), "%s: subtable %llu holds %llu keys in %llu buckets", when,
          (unsigned long long)i, (unsigned long long)s.subtable_keys[i], (unsigned long long)s.subtable_buckets[i]);
  }
  /* (the all-ones key, kept beside the subtables, is the one key they may lack) */
  CHECK(keys == s.size || keys + 1 == s.size, "%s: the subtables hold %llu keys, the size is %llu", when,
        (unsigned long long)keys, (unsigned long long)s.size);
  CHECK(most <= 2 * least, "%s: subtables of %llu and %llu buckets", when, (unsigned long long)least,
        (unsigned long long)most);
  const double theta = s.slots ? (double)s.size / (double)s.slots : 0.0;
  CHECK(theta <= h->config.fill_max, "%s: theta %.4f above fill_max %g", when, theta, h->config.fill_max);
  CHECK(theta >= h->config.fill_min || most == 1, "%s: theta %.4f below fill_min %g with subtables of up to %llu buckets",
        when, theta, h->config.fill_min, (unsigned long long)most);
  CHECK(s.insert_failures == 0, "%s: %llu insert failures", when, (unsigned long long)s.insert_failures);
}

static void resize_case(unsigned key_bits, unsigned value_bits, uint64_t n) {
  const uint64_t batches = 16, per = n / batches;
  tu_rng rng = tu_rng_make(tu_mix_seed(dy_seed, key_bits, value_bits, 1));
  uint64_t *keys = (uint64_t *)tu_xmalloc(n * 8), *values = (uint64_t *)tu_xmalloc(n * 8);
  tu_gen_unique_keys(&rng, key_bits, n, NULL, keys);
  tu_gen_values(&rng, value_bits, n, values);
  tu_table h;
  const gh_config cfg = dy_config(key_bits, value_bits, 1); /* one bucket per subtable */
  tu_set_context("dycuckoo resize %s k%u v%u n %llu seed 0x%016llx", tu_backend_name(dy_backend), key_bits,
                 value_bits, (unsigned long long)n, (unsigned long long)dy_seed);
  if (!tu_table_create(&h, &cfg)) {
    free(keys);
    free(values);
    return;
  }
  check_bounds(&h, "created");
  for (uint64_t b = 0; b < batches && tu_failure_count() == 0; ++b) {
    tu_set_phase("insert batch %llu of %llu keys", (unsigned long long)b, (unsigned long long)per);
    tu_insert(&h, keys + b * per, value_bits ? values + b * per : NULL, per, GH_OVERWRITE, 0, NULL);
    check_bounds(&h, "after an insert batch");
    /* validate copies and sorts every key: every fourth batch keeps the GPU case within limits. */
    if (b % 4 == 3) {
      tu_check_valid(&h);
      tu_check_find(&h, keys, (b + 1) * per, TU_FIND_FOUND | TU_FIND_VALUES);
    }
  }
  gh_stats grown;
  CHECK_OK(h.table, gh_get_stats(h.table, &grown));
  tu_shuffle(&rng, keys, n);
  for (uint64_t b = 0; b < batches && tu_failure_count() == 0; ++b) {
    tu_set_phase("erase batch %llu of %llu keys", (unsigned long long)b, (unsigned long long)per);
    tu_erase(&h, keys + b * per, per);
    check_bounds(&h, "after an erase batch");
    if (b % 4 == 3) {
      tu_check_valid(&h);
      tu_check_find(&h, keys, n, TU_FIND_FOUND);
    }
  }
  gh_stats shrunk;
  CHECK_OK(h.table, gh_get_stats(h.table, &shrunk));
  CHECK(shrunk.size == 0 && grown.upsizes > 0 && shrunk.downsizes > 0, "size %llu, upsizes %llu, downsizes %llu",
        (unsigned long long)shrunk.size, (unsigned long long)grown.upsizes, (unsigned long long)shrunk.downsizes);
  /* Resizes took time, and halving added to what doubling had taken. */
  CHECK(grown.resize_seconds > 0 && shrunk.resize_seconds > grown.resize_seconds,
        "resize_seconds %g after growing, %g after shrinking", grown.resize_seconds, shrunk.resize_seconds);
  for (uint64_t i = 0; i < shrunk.subtables; ++i)
    CHECK(shrunk.subtable_buckets[i] == 1, "empty again, subtable %llu has %llu buckets", (unsigned long long)i,
          (unsigned long long)shrunk.subtable_buckets[i]);
  printf("  resize k%u v%u: 1 bucket per subtable -> %llu keys (%llu upsizes, %llu evictions, longest search %llu "
         "buckets) -> 0 keys (%llu downsizes)\n",
         key_bits, value_bits, (unsigned long long)n, (unsigned long long)grown.upsizes,
         (unsigned long long)grown.evictions, (unsigned long long)grown.longest_search,
         (unsigned long long)shrunk.downsizes);
  tu_table_destroy(&h);
  free(keys);
  free(values);
}

static void part_resize(void) {
  const int gpu = dy_backend == GH_BACKEND_CUDA;
  resize_case(32, 32, gpu ? 1ull << 20 : 1ull << 18);
  resize_case(64, 64, gpu ? 1ull << 18 : 1ull << 16);
  resize_case(32, 0, gpu ? 1ull << 18 : 1ull << 16);
}

/* The 2^24 keys (on the GPU; the host's CI run keeps to 2^18, like part resize). */
static void part_resize_large(void) { resize_case(32, 32, dy_backend == GH_BACKEND_CUDA ? 1ull << 24 : 1ull << 18); }

static void part_duplicates(void) {
  static const unsigned widths[][2] = {{32, 32}, {64, 64}, {64, 32}};
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
    const unsigned kb = widths[w][0], vb = widths[w][1];
    tu_rng rng = tu_rng_make(tu_mix_seed(dy_seed, kb, vb, 2));
    const uint64_t distinct = 4096, n = 64 * distinct;
    uint64_t *pool = (uint64_t *)tu_xmalloc(distinct * 8), *keys = (uint64_t *)tu_xmalloc(n * 8);
    uint64_t *values = (uint64_t *)tu_xmalloc(n * 8);
    tu_gen_unique_keys(&rng, kb, distinct, NULL, pool);
    tu_table h;
    const gh_config cfg = dy_config(kb, vb, 64);
    tu_set_context("dycuckoo duplicates %s k%u v%u seed 0x%016llx", tu_backend_name(dy_backend), kb, vb,
                   (unsigned long long)dy_seed);
    if (!tu_table_create(&h, &cfg)) {
      free(pool);
      free(keys);
      free(values);
      continue;
    }
    for (int policy = GH_KEEP_FIRST; policy <= GH_MAX && tu_failure_count() == 0; ++policy) {
      tu_gen_from_pool(&rng, pool, distinct, n, keys);
      tu_gen_values(&rng, vb, n, values);
      tu_set_phase("%llu copies of %llu keys in one batch, policy %d", (unsigned long long)(n / distinct),
                   (unsigned long long)distinct, policy);
      tu_insert(&h, keys, values, n, (gh_dup_policy)policy, 0, NULL);
      tu_check_valid(&h);
      check_bounds(&h, "after a batch of duplicates");
      tu_check_find(&h, pool, distinct, TU_FIND_FOUND | TU_FIND_VALUES);
    }
    tu_table_destroy(&h);
    free(pool);
    free(keys);
    free(values);
  }
  printf("  duplicates: 64 copies of each of 4096 keys per batch, every policy: ok\n");
}

static void expect_invalid(gh_config cfg, const char *field, const char *what) {
  gh_table *t = NULL;
  tu_set_phase("%s", what);
  const gh_status st = gh_create(&cfg, &t);
  CHECK(st == GH_ERR_INVALID_ARGUMENT && t == NULL, "%s: gh_create returned %s", what, gh_status_name(st));
  CHECK(strstr(gh_last_create_error(), field) != NULL, "%s: the message does not name %s: \"%s\"", what, field,
        gh_last_create_error());
  if (t) gh_destroy(t);
}

static void part_config(void) {
  tu_set_context("dycuckoo config %s", tu_backend_name(dy_backend));
  gh_config c = dy_config(32, 32, 1000);
  c.hash_functions = 1;
  expect_invalid(c, "hash_functions", "one subtable");
  c.hash_functions = 9;
  expect_invalid(c, "hash_functions", "nine subtables");
  c = dy_config(32, 32, 1000);
  c.fill_min = 0.9, c.fill_max = 0.9;
  expect_invalid(c, "fill_min", "fill_min = fill_max");
  c.fill_min = 0.8, c.fill_max = 0.9; /* d = 4: above 0.9 * 4 / 5 = 0.72 */
  expect_invalid(c, "fill_min", "fill_min too close to fill_max for a halving");
  c.fill_min = 0.4, c.fill_max = 0.97;
  expect_invalid(c, "fill_max", "fill_max above 0.95");
  c.fill_min = 0.0, c.fill_max = 0.9;
  expect_invalid(c, "fill_min", "fill_min 0");
  /* The bounds that are fine: d = 2 with a low fill_min, d = 8. */
  for (unsigned d = 2; d <= 8; d += 6) {
    gh_table *t = NULL;
    c = dy_config(64, 0, 1000);
    c.hash_functions = d;
    c.fill_min = 0.2;
    tu_set_phase("d = %u", d);
    if (CHECK(gh_create(&c, &t) == GH_OK, "d = %u: %s", d, gh_last_create_error())) gh_destroy(t);
  }
  printf("  config: bad d, fill_min and fill_max refused with the field named\n");
}

/* The keys of a table after a call with allocation k failing: `kept` must be present with their
 * values, `gone` absent. */
static void check_keys(gh_table *t, unsigned vb, const uint64_t *keys, const uint64_t *values, uint64_t n, int present,
                       const uint8_t *except) {
  void *pk = tu_pack(keys, n, 32);
  uint8_t *found = (uint8_t *)tu_xmalloc(n);
  uint32_t *got = (uint32_t *)tu_xmalloc(n * 4);
  if (CHECK_OK(t, gh_find(t, pk, n, vb ? got : NULL, found, NULL, NULL)))
    for (uint64_t i = 0; i < n; ++i) {
      const int want = except && except[i] ? !present : present;
      if (!CHECK(found[i] == want && (!want || !vb || got[i] == (uint32_t)values[i]),
                 "key %llu: found %u (value %u), expected %s (value %u)", (unsigned long long)keys[i], found[i], got[i],
                 want ? "present" : "absent", (unsigned)values[i]))
        break;
    }
  free(pk);
  free(found);
  free(got);
}

static void part_alloc(void) {
  tu_tracker *tr = tu_tracker_new();
  const uint64_t base_n = 20000, more_n = 40000;
  tu_rng rng = tu_rng_make(tu_mix_seed(dy_seed, 3, 3, 3));
  uint64_t *keys = (uint64_t *)tu_xmalloc((base_n + more_n) * 8), *values = (uint64_t *)tu_xmalloc((base_n + more_n) * 8);
  tu_gen_unique_keys(&rng, 32, base_n + more_n, NULL, keys);
  tu_gen_values(&rng, 32, base_n + more_n, values);
  void *pk = tu_pack(keys, base_n + more_n, 32), *pv = tu_pack(values, base_n + more_n, 32);
  uint8_t *failed = (uint8_t *)tu_xmalloc(more_n);
  /* Created small, so that the base keys grow it and the erase can halve it again. */
  gh_config cfg = dy_config(32, 32, 64);
  tu_tracker_attach(tr, &cfg);
  tu_set_context("dycuckoo alloc %s seed 0x%016llx", tu_backend_name(dy_backend), (unsigned long long)dy_seed);
  uint64_t runs[2] = {0, 0}, flagged_runs = 0;
  for (int op = 0; op < 2; ++op) {
    for (uint64_t k = 1; k < 400; ++k) {
      gh_table *t = NULL;
      REQUIRE(gh_create(&cfg, &t) == GH_OK, "gh_create: %s", gh_last_create_error());
      REQUIRE(gh_insert(t, pk, pv, base_n, GH_OVERWRITE, NULL, NULL) == GH_OK, "base insert: %s", gh_last_error(t));
      /* op 0: an insert of twice the keys (subtables double); op 1: an erase of 90 % (they halve). */
      tu_set_phase("%s with allocation %llu failing", op == 0 ? "an insert that grows" : "an erase that shrinks",
                   (unsigned long long)k);
      memset(failed, 0xA5, more_n);
      uint64_t erased = 0;
      tu_tracker_fail_nth(tr, k);
      const gh_status st = op == 0 ? gh_insert(t, (uint32_t *)pk + base_n, (uint32_t *)pv + base_n, more_n, GH_OVERWRITE,
                                               failed, NULL)
                                   : gh_erase(t, pk, base_n * 9 / 10, NULL, &erased, NULL);
      const int injected = tu_tracker_injected(tr);
      tu_tracker_fail_nth(tr, 0);
      char message[512];
      snprintf(message, sizeof message, "%s", gh_last_error(t));
      CHECK_OK(t, gh_validate(t));
      if (op == 0) {
        CHECK(st == GH_OK || st == GH_ERR_OUT_OF_MEMORY, "insert returned %s: %s", gh_status_name(st), message);
        const int refused = st != GH_OK && tu_first_non_canary(failed, more_n) == more_n;
        if (st == GH_ERR_OUT_OF_MEMORY && !refused) {
          flagged_runs += 1;
          CHECK(strstr(message, "did not fit") != NULL, "partial insert: %s", message);
        }
        check_keys(t, 32, keys, values, base_n, 1, NULL);
        check_keys(t, 32, keys + base_n, values + base_n, more_n, !refused, st == GH_OK || refused ? NULL : failed);
      } else {
        /* Halving is an optimisation: without memory for it the erase still completes. Refused
         * outright (no memory to stage the keys, say): nothing changed. */
        const int refused = st == GH_ERR_OUT_OF_MEMORY && erased == 0 && tu_says_what_was_kept(message);
        CHECK((st == GH_OK && erased == base_n * 9 / 10) || refused, "erase returned %s, %llu erased: %s",
              gh_status_name(st), (unsigned long long)erased, message);
        check_keys(t, 32, keys, values, base_n * 9 / 10, refused, NULL);
        check_keys(t, 32, keys + base_n * 9 / 10, values + base_n * 9 / 10, base_n - base_n * 9 / 10, 1, NULL);
      }
      gh_destroy(t);
      runs[op] = k;
      if ((st == GH_OK && !injected) || tu_failure_count() > 0) break;
    }
  }
  tu_tracker_check_clean(tr, "after the allocation-failure runs");
  tu_tracker_delete(tr);
  CHECK(runs[0] > 1 && runs[1] > 1, "allocations met: insert %llu, erase %llu", (unsigned long long)runs[0],
        (unsigned long long)runs[1]);
  printf("  alloc: an insert that grows (%llu allocations failed in turn, %llu left flagged keys), an erase that "
         "shrinks (%llu): valid, every acknowledged key kept\n",
         (unsigned long long)(runs[0] - 1), (unsigned long long)flagged_runs, (unsigned long long)(runs[1] - 1));
  free(keys);
  free(values);
  free(pk);
  free(pv);
  free(failed);
}

typedef struct dy_part {
  const char *name;
  void (*run)(void);
} dy_part;

static const dy_part dy_parts[] = {
    {"resize", part_resize},   {"resize-large", part_resize_large}, {"duplicates", part_duplicates},
    {"config", part_config},   {"alloc", part_alloc}};

int main(int argc, char **argv) {
  const dy_part *part = NULL;
  dy_seed = DY_BASE_SEED;
  if (argc < 2 || !tu_parse_backend(argv[1], &dy_backend)) goto usage;
  for (int a = 2; a < argc; a += 2) {
    if (a + 1 >= argc) goto usage;
    if (strcmp(argv[a], "--part") == 0) {
      for (size_t i = 0; i < sizeof dy_parts / sizeof dy_parts[0]; ++i)
        if (strcmp(argv[a + 1], dy_parts[i].name) == 0) part = &dy_parts[i];
      if (part == NULL) goto usage;
    } else if (strcmp(argv[a], "--seed") == 0) {
      if (!tu_parse_u64(argv[a + 1], &dy_seed)) goto usage;
    } else {
      goto usage;
    }
  }
  tu_skip_unless_backend_usable(dy_backend);
  for (size_t i = 0; i < sizeof dy_parts / sizeof dy_parts[0]; ++i) {
    if (part != NULL && part != &dy_parts[i]) continue;
    printf("dycuckoo %s %s (seed 0x%016llx)\n", tu_backend_name(dy_backend), dy_parts[i].name,
           (unsigned long long)dy_seed);
    fflush(stdout);
    dy_parts[i].run();
  }
  return tu_finish("dycuckoo");
usage:
  fprintf(stderr, "usage: %s host|cuda [--part resize|resize-large|duplicates|config|alloc] [--seed S]\n", argv[0]);
  return 2;
}
