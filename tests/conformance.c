/*
 * conformance - the behaviour every single-value design must show, on one backend and one
 * key/value width, over every group size and a range of load factors.
 *
 *   conformance BACKEND KEY_BITS VALUE_BITS [--design NAME] [--group G] [--load L] [--seed S]
 *
 * BACKEND is host or cuda; KEY_BITS 32 or 64; VALUE_BITS 0 (a set), 32 or 64. --group and
 * --load restrict the loops to one case and --seed replaces the derived case seed: together
 * they rerun exactly the case a failure message names.
 *
 * Each case fills a table to the load factor, then goes through find / contains / export /
 * erase / re-insert (the insert -> erase -> insert sequence of cuco #606 and SlabHash #17) /
 * every duplicate policy / keys repeated thousands of times in one batch / the internal sentinel
 * key patterns / clear, comparing every result
 * with the reference map and validating the table after each phase.
 *
 * What varies with the design comes from its traits (gh_design_info): designs without
 * GH_CAP_GROUP_SIZE run the loads once; designs with GH_CAP_HASH_FUNCTIONS draw the number of
 * hash functions, the hash family and the table factor (down to the smallest accepted) from the
 * case seed; designs with GH_CAP_GROWS (whose capacity counts keys) add a load of 1.5: more keys
 * than the table was sized for, so it must grow on its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* Loads above 1 only for designs that grow by themselves (GH_CAP_GROWS). */
static const double conf_loads[] = {0.5, 0.7, 0.9, 0.95, 0.99, 1.5};
#define CONF_LOAD_COUNT (sizeof conf_loads / sizeof conf_loads[0])

/* The fixed base of every case seed; a case's own seed is derived from it and the case
 * parameters, and printed with every failure. */
#define CONF_BASE_SEED 0xC0F0A11CE5EEDull

typedef struct conf_case {
  const char *program;
  const tu_design *design;
  gh_backend backend;
  unsigned key_bits;
  unsigned value_bits;
  unsigned group_size;
  double load;
  uint64_t seed;
} conf_case;

static const gh_dup_policy conf_policies[] = {GH_KEEP_FIRST, GH_OVERWRITE, GH_ADD, GH_MIN,
                                              GH_MAX};
static const char *const conf_policy_names[] = {"KEEP_FIRST", "OVERWRITE", "ADD", "MIN", "MAX"};

/* Keys and values for a batch of n keys, freed by batch_free. */
typedef struct batch {
  uint64_t *keys;
  uint64_t *values;
  uint64_t n;
} batch;

static batch batch_alloc(uint64_t n) {
  batch b;
  b.keys = (uint64_t *)tu_xmalloc((size_t)n * sizeof *b.keys);
  b.values = (uint64_t *)tu_xmalloc((size_t)n * sizeof *b.values);
  b.n = n;
  return b;
}

static void batch_free(batch *b) {
  free(b->keys);
  free(b->values);
  b->keys = b->values = NULL;
  b->n = 0;
}

/* Every pool key 1..max_copies times with fresh random values. */
static batch batch_of_repeats(tu_rng *rng, const tu_table *h, const uint64_t *pool,
                              uint64_t pool_n, unsigned max_copies) {
  batch b = batch_alloc(pool_n * max_copies);
  b.n = tu_gen_repeats(rng, pool, pool_n, max_copies, b.keys);
  tu_gen_values(rng, h->value_bits, b.n, b.values);
  return b;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Fill to the load factor in three batches, each under a different policy: for new keys every
 * policy must store the given value. Returns the keys inserted (n_fill of them). */
static uint64_t *phase_fill(tu_rng *rng, tu_table *h, uint64_t n_fill) {
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)n_fill * sizeof *keys);
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)n_fill * sizeof *values);
  uint64_t cuts[4], i;
  size_t first_policy = (size_t)tu_below(rng, 5);
  tu_gen_unique_keys(rng, h->key_bits, n_fill, NULL, keys);
  tu_gen_values(rng, h->value_bits, n_fill, values);
  cuts[0] = 0;
  cuts[1] = n_fill / 2;
  cuts[2] = n_fill / 2 + n_fill / 4;
  cuts[3] = n_fill;
  for (i = 0; i < 3; ++i) {
    size_t p = (first_policy + i) % 5;
    tu_set_phase("fill to the load factor: batch %llu of 3 (%llu keys, %s)",
                 (unsigned long long)i + 1, (unsigned long long)(cuts[i + 1] - cuts[i]),
                 conf_policy_names[p]);
    tu_insert(h, keys + cuts[i], values + cuts[i], cuts[i + 1] - cuts[i], conf_policies[p], 0,
              NULL);
  }
  tu_set_phase("after fill");
  tu_check_all(h);
  free(values);
  return keys;
}

static void phase_find(tu_rng *rng, tu_table *h, const uint64_t *keys, uint64_t n_fill) {
  uint64_t n_absent = min_u64(n_fill, 4096), n_mixed, i;
  uint64_t *absent = (uint64_t *)tu_xmalloc((size_t)n_absent * sizeof *absent);
  uint64_t *mixed;
  tu_set_phase("find present keys");
  tu_check_find(h, keys, n_fill, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_find(h, keys, min_u64(n_fill, 1000), TU_FIND_VALUES);
  tu_check_find(h, keys, min_u64(n_fill, 1000), TU_FIND_FOUND);
  tu_check_contains(h, keys, n_fill);

  tu_set_phase("find absent keys");
  tu_gen_unique_keys(rng, h->key_bits, n_absent, &h->ref, absent);
  tu_check_find(h, absent, n_absent, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_find(h, absent, n_absent, TU_FIND_VALUES); /* default NULL: 0 */
  tu_check_contains(h, absent, n_absent);

  tu_set_phase("find a shuffled mix of present and absent keys");
  n_mixed = 2 * n_absent;
  mixed = (uint64_t *)tu_xmalloc((size_t)n_mixed * sizeof *mixed);
  for (i = 0; i < n_absent; ++i) {
    mixed[i] = absent[i];
    mixed[n_absent + i] = keys[tu_below(rng, n_fill)];
  }
  tu_shuffle(rng, mixed, n_mixed);
  tu_check_find(h, mixed, n_mixed, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_contains(h, mixed, n_mixed);
  free(mixed);
  free(absent);
}

/* Erases a random half of the keys in one batch that also holds absent keys and repeats of
 * erased keys. Leaves keys shuffled: keys[0, n/2) erased, keys[n/2, n) present. */
static void phase_erase_half(tu_rng *rng, tu_table *h, uint64_t *keys, uint64_t n_fill) {
  uint64_t half = n_fill / 2, extra = half / 8, n = 0, i;
  uint64_t *erase_keys = (uint64_t *)tu_xmalloc((size_t)(half + 2 * extra) * sizeof *erase_keys);
  tu_shuffle(rng, keys, n_fill);
  for (i = 0; i < half; ++i) erase_keys[n++] = keys[i];
  tu_gen_unique_keys(rng, h->key_bits, extra, &h->ref, erase_keys + n);
  n += extra;
  for (i = 0; i < extra && half > 0; ++i) erase_keys[n++] = keys[tu_below(rng, half)];
  tu_shuffle(rng, erase_keys, n);
  tu_set_phase("erase a random half (%llu keys, with absent keys and repeats)",
               (unsigned long long)half);
  tu_erase(h, erase_keys, n);
  tu_check_all(h);

  tu_set_phase("find after erasing half");
  tu_check_find(h, keys, n_fill, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_contains(h, keys, n_fill);

  tu_set_phase("erase the same keys again (nothing left to erase)");
  tu_erase(h, erase_keys, n);
  tu_check_size(h);
  free(erase_keys);
}

/* The insert -> erase -> insert sequence: erased keys come back (several copies of each in one
 * batch, racing for the tombstones) together with keys still present, which sit behind
 * tombstones on their probe sequences. Afterwards every key must be stored exactly once. */
static void phase_reinsert(tu_rng *rng, tu_table *h, const uint64_t *keys, uint64_t n_fill) {
  uint64_t half = n_fill / 2, n_back = half / 2, n_present = (n_fill - half) / 2, i;
  uint64_t pool_n = n_back + n_present;
  uint64_t *pool = (uint64_t *)tu_xmalloc((size_t)pool_n * sizeof *pool);
  batch b;
  for (i = 0; i < n_back; ++i) pool[i] = keys[i];
  for (i = 0; i < n_present; ++i) pool[n_back + i] = keys[half + i];

  b = batch_of_repeats(rng, h, pool, pool_n, 4);
  tu_set_phase("re-insert %llu erased and %llu present keys, up to 4 copies each (OVERWRITE)",
               (unsigned long long)n_back, (unsigned long long)n_present);
  tu_insert(h, b.keys, b.values, b.n, GH_OVERWRITE, 0, NULL);
  tu_check_all(h);
  tu_check_find(h, keys, n_fill, TU_FIND_VALUES | TU_FIND_FOUND);
  batch_free(&b);

  b = batch_of_repeats(rng, h, pool, pool_n, 3);
  tu_set_phase("the same keys once more (KEEP_FIRST: every value stays)");
  tu_insert(h, b.keys, b.values, b.n, GH_KEEP_FIRST, 0, NULL);
  tu_check_find(h, pool, pool_n, TU_FIND_VALUES | TU_FIND_FOUND);
  tu_check_all(h);
  batch_free(&b);
  free(pool);
}

/* Each policy on present and new keys, repeated within a batch and across two batches. */
static void phase_policies(tu_rng *rng, tu_table *h) {
  size_t p;
  for (p = 0; p < 5; ++p) {
    uint64_t size = tu_ref_size(&h->ref);
    uint64_t room = h->capacity > size ? h->capacity - size : 0;
    uint64_t n_new = min_u64(64, room / 10), n_old = min_u64(64, size), pool_n, round;
    uint64_t *present = (uint64_t *)tu_xmalloc((size_t)(size + 1) * sizeof *present);
    uint64_t *pool = (uint64_t *)tu_xmalloc((size_t)(n_new + n_old + 1) * sizeof *pool);
    tu_ref_keys(&h->ref, present);
    tu_shuffle(rng, present, size);
    memcpy(pool, present, (size_t)n_old * sizeof *pool);
    tu_gen_unique_keys(rng, h->key_bits, n_new, &h->ref, pool + n_old);
    pool_n = n_old + n_new;
    for (round = 1; round <= 2; ++round) {
      batch b = batch_of_repeats(rng, h, pool, pool_n, 5);
      tu_set_phase("policy %s, batch %llu of 2: %llu present and %llu new keys, up to 5 copies",
                   conf_policy_names[p], (unsigned long long)round, (unsigned long long)n_old,
                   (unsigned long long)n_new);
      tu_insert(h, b.keys, b.values, b.n, conf_policies[p], 0, NULL);
      tu_check_find(h, pool, pool_n, TU_FIND_VALUES | TU_FIND_FOUND);
      batch_free(&b);
    }
    free(pool);
    free(present);
  }
  tu_set_phase("after the policy batches");
  tu_check_all(h);
}

/* A few keys repeated thousands of times in one batch: every lane, thread or group of the batch
 * races for the same slot. ADD with value 1 must count every copy exactly; whatever the policy,
 * each key is stored once; an erase flags exactly one of its copies. */
static void phase_hot_keys(tu_rng *rng, tu_table *h) {
  enum { COPIES = 3000 };
  uint64_t hot[3], special[8], present_n = tu_ref_size(&h->ref), i;
  uint64_t *present = (uint64_t *)tu_xmalloc((size_t)(present_n + 1) * sizeof *present);
  batch b = batch_alloc(3 * COPIES);
  size_t p;
  tu_special_keys(h->key_bits, special);
  tu_gen_unique_keys(rng, h->key_bits, 1, &h->ref, &hot[0]); /* absent */
  tu_ref_keys(&h->ref, present);
  hot[1] = present_n > 0 ? present[tu_below(rng, present_n)] : special[0];
  hot[2] = special[1 + tu_below(rng, 2)]; /* an all-ones pattern, stored out of band */
  for (i = 0; i < b.n; ++i) {
    b.keys[i] = hot[i % 3];
    b.values[i] = 1;
  }
  tu_shuffle(rng, b.keys, b.n);
  tu_set_phase("hot keys: %d copies each of an absent, a present and a sentinel key (ADD 1)",
               COPIES);
  tu_insert(h, b.keys, b.values, b.n, GH_ADD, 0, NULL);
  tu_check_find(h, hot, 3, TU_FIND_VALUES | TU_FIND_FOUND);
  for (p = 0; p < 5; ++p) {
    tu_gen_values(rng, h->value_bits, b.n, b.values);
    tu_set_phase("hot keys: %d copies each (%s)", COPIES, conf_policy_names[p]);
    tu_insert(h, b.keys, b.values, b.n, conf_policies[p], 0, NULL);
    tu_check_find(h, hot, 3, TU_FIND_VALUES | TU_FIND_FOUND);
  }
  tu_check_all(h);
  tu_set_phase("hot keys: erase %d copies each", COPIES);
  tu_erase(h, b.keys, b.n);
  tu_check_find(h, hot, 3, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_all(h);
  batch_free(&b);
  free(present);
}

/* The key patterns a table may use internally are ordinary keys to the user. */
static void phase_special_keys(tu_rng *rng, tu_table *h) {
  uint64_t special[8], values[8], odd[8], n_odd = 0, i;
  size_t n = tu_special_keys(h->key_bits, special);
  batch b;
  for (i = 0; i < n; ++i) {
    if (i % 2 == 1) odd[n_odd++] = special[i];
  }
  tu_gen_values(rng, h->value_bits, n, values);
  tu_set_phase("insert the sentinel key patterns");
  tu_insert(h, special, values, n, GH_OVERWRITE, 0, NULL);
  tu_check_find(h, special, n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_contains(h, special, n);
  tu_check_all(h);

  tu_set_phase("erase every other sentinel key pattern");
  tu_erase(h, odd, n_odd);
  tu_check_find(h, special, n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_all(h);

  tu_set_phase("re-insert the sentinel key patterns, up to 3 copies each (ADD)");
  b = batch_of_repeats(rng, h, special, n, 3);
  tu_insert(h, b.keys, b.values, b.n, GH_ADD, 0, NULL);
  batch_free(&b);
  tu_check_find(h, special, n, TU_FIND_VALUES | TU_FIND_FOUND);
  tu_check_all(h);

  tu_set_phase("erase all sentinel key patterns, then insert them again (KEEP_FIRST)");
  tu_erase(h, special, n);
  tu_check_find(h, special, n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_size(h);
  tu_insert(h, special, values, n, GH_KEEP_FIRST, 0, NULL);
  tu_check_find(h, special, n, TU_FIND_VALUES | TU_FIND_FOUND);
  tu_check_all(h);
}

static void phase_clear(tu_rng *rng, tu_table *h, const uint64_t *keys, uint64_t n_fill) {
  uint64_t special[8], n_new = min_u64(500, h->capacity / 2), i;
  size_t n_special = tu_special_keys(h->key_bits, special);
  batch b = batch_alloc(n_new + n_special);
  tu_set_phase("clear");
  tu_clear(h);
  tu_check_all(h);
  tu_check_find(h, keys, n_fill, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_contains(h, special, n_special);

  tu_set_phase("insert after clear");
  tu_gen_unique_keys(rng, h->key_bits, n_new, NULL, b.keys);
  for (i = 0; i < n_special; ++i) b.keys[n_new + i] = special[i];
  tu_gen_values(rng, h->value_bits, b.n, b.values);
  tu_insert(h, b.keys, b.values, b.n, GH_MAX, 0, NULL);
  tu_check_find(h, b.keys, b.n, TU_FIND_VALUES | TU_FIND_FOUND);
  tu_check_all(h);
  batch_free(&b);
}

static void run_case(const conf_case *c) {
  static const uint64_t capacities[] = {1500, 4096, 12000, 30000, 65536};
  static const unsigned host_threads[] = {0, 1, 3};
  tu_rng rng = tu_rng_make(c->seed);
  gh_config cfg = gh_config_default(c->design->design);
  char params[160] = "";
  tu_table h;
  uint64_t n_fill, *keys;
  unsigned long failures_before = tu_failure_count();

  cfg.backend = c->backend;
  cfg.key_bits = c->key_bits;
  cfg.value_bits = c->value_bits;
  cfg.capacity = capacities[tu_below(&rng, sizeof capacities / sizeof capacities[0])];
  if (tu_design_has(c->design, GH_CAP_GROUP_SIZE)) cfg.group_size = c->group_size;
  cfg.seed = tu_next(&rng);
  /* One worker, as many as cores, and more workers than cores (more interleavings). */
  cfg.host_threads = host_threads[tu_below(&rng, 3)];
  if (tu_design_has(c->design, GH_CAP_HASH_FUNCTIONS)) {
    /* d = 2..5, either family, and a table factor from the smallest allowed to roomy. */
    static const double extra[] = {0.0, 0.0, 0.02, 0.15, 1.0};
    tu_random_cuckoo_params(&rng, &cfg, extra, sizeof extra / sizeof extra[0], params, sizeof params);
  }
  tu_set_context(
      "conformance design=%s backend=%s key_bits=%u value_bits=%u group_size=%u load=%.2f "
      "capacity=%llu host_threads=%u%s seed=0x%016llx\n"
      "  rerun: %s %s %u %u --design %s --group %u --load %.2f --seed 0x%016llx",
      c->design->name, tu_backend_name(c->backend), c->key_bits, c->value_bits, c->group_size,
      c->load, (unsigned long long)cfg.capacity, cfg.host_threads, params,
      (unsigned long long)c->seed,
      c->program, tu_backend_name(c->backend), c->key_bits, c->value_bits, c->design->name,
      c->group_size, c->load, (unsigned long long)c->seed);
  tu_set_phase("create");
  if (!tu_table_create(&h, &cfg)) return;

  n_fill = (uint64_t)(c->load * (double)h.capacity);
  if (n_fill < 2) n_fill = 2;
  keys = phase_fill(&rng, &h, n_fill);
  phase_find(&rng, &h, keys, n_fill);
  phase_erase_half(&rng, &h, keys, n_fill);
  phase_reinsert(&rng, &h, keys, n_fill);
  phase_policies(&rng, &h);
  phase_hot_keys(&rng, &h);
  phase_special_keys(&rng, &h);
  phase_clear(&rng, &h, keys, n_fill);
  free(keys);
  {
    gh_stats stats;
    memset(&stats, 0, sizeof stats);
    tu_set_phase("statistics at the end");
    CHECK_OK(h.table, gh_get_stats(h.table, &stats));
    if (tu_design_has(c->design, GH_CAP_GROWS) && c->load > 1.0) {
      CHECK(stats.grows > 0, "%llu keys went into a table sized for %llu, yet gh_stats.grows = 0",
            (unsigned long long)n_fill, (unsigned long long)h.capacity);
    }
    tu_table_destroy(&h);
    printf("%-4s %s k%u v%u group %2u load %.2f capacity %6llu%s (restarts %llu grows %llu "
           "slots %llu): %s\n",
           tu_backend_name(c->backend), c->design->name, c->key_bits, c->value_bits,
           c->group_size, c->load, (unsigned long long)h.capacity, params,
           (unsigned long long)stats.restarts, (unsigned long long)stats.grows,
           (unsigned long long)stats.slots,
           tu_failure_count() == failures_before ? "ok" : "FAILED");
  }
  fflush(stdout);
}

static int usage(const char *program) {
  fprintf(stderr,
          "usage: %s host|cuda KEY_BITS(32|64) VALUE_BITS(0|32|64) [--design NAME] [--group G] "
          "[--load L] [--seed S]\n",
          program);
  return 2;
}

int main(int argc, char **argv) {
  conf_case c;
  const char *design_name = "warpdrive";
  uint64_t seed_override = 0, group_filter = 0;
  int have_seed = 0, i;
  size_t g, l;
  double load_filter = -1.0;

  memset(&c, 0, sizeof c);
  c.program = argv[0];
  if (argc < 4 || !tu_parse_backend(argv[1], &c.backend) ||
      !tu_parse_bits(argv[2], 0, &c.key_bits) || !tu_parse_bits(argv[3], 1, &c.value_bits))
    return usage(argv[0]);
  for (i = 4; i < argc; i += 2) {
    if (i + 1 >= argc) return usage(argv[0]);
    if (strcmp(argv[i], "--design") == 0) {
      design_name = argv[i + 1];
    } else if (strcmp(argv[i], "--group") == 0) {
      if (!tu_parse_u64(argv[i + 1], &group_filter)) return usage(argv[0]);
    } else if (strcmp(argv[i], "--load") == 0) {
      load_filter = atof(argv[i + 1]);
    } else if (strcmp(argv[i], "--seed") == 0) {
      if (!tu_parse_u64(argv[i + 1], &seed_override)) return usage(argv[0]);
      have_seed = 1;
    } else {
      return usage(argv[0]);
    }
  }
  c.design = tu_design_by_name(design_name);
  if (c.design == NULL) return usage(argv[0]);
  tu_skip_unless_backend_usable(c.backend);

  for (g = 0; g < 6; ++g) {
    c.group_size = tu_group_sizes[g];
    if (group_filter != 0 && group_filter != c.group_size) continue;
    /* Designs without a group size run their loads once. */
    if (!tu_design_has(c.design, GH_CAP_GROUP_SIZE) && g > 0) break;
    for (l = 0; l < CONF_LOAD_COUNT; ++l) {
      c.load = conf_loads[l];
      if (c.load > 1.0 && !tu_design_has(c.design, GH_CAP_GROWS)) continue;
      if (load_filter >= 0 && (load_filter < c.load - 0.001 || load_filter > c.load + 0.001))
        continue;
      c.seed = have_seed ? seed_override
                         : tu_mix_seed(CONF_BASE_SEED, c.key_bits * 1000u + c.value_bits,
                                       c.group_size, l);
      run_case(&c);
    }
  }
  return tu_finish("conformance");
}
