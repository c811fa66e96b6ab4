/*
 * differential - random operation sequences on a small table, compared with the reference map
 * after every step.
 *
 *   differential BACKEND KEY_BITS VALUE_BITS [--design NAME] [--seed S] [--steps N]
 *                [--universe full|quarter]
 *
 * The key universe is about as large as the table (or a quarter of it), so the table runs near
 * 100% occupancy, keys collide, and erased slots (tombstones) are met and reused all the time.
 * The universe always holds the special key patterns (0, all-ones, all-ones minus 1, ...).
 * Every step ends with a size and a full export comparison (which also catches a key stored
 * twice); the table is validated every few steps. A failure prints the seed and the step; the
 * sequence stops at the first failing step, since the states after it are no longer comparable.
 *
 * Designs with GH_CAP_GROWS (their capacity counts keys; the table grows when more arrive) get a
 * full universe of 1.5 times the capacity, so the table grows and rebuilds under the sequence;
 * designs with GH_CAP_HASH_FUNCTIONS draw the number of hash functions, the family and the table
 * factor (down to the smallest allowed) from the sequence seed. Statistics are checked with
 * every validation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define DIFF_BASE_SEED 0xD1FFE2E17ull
#define DIFF_SEEDS 4
#define DIFF_STEPS 2500
#define DIFF_VALIDATE_EVERY 8

static const char *const diff_policy_names[] = {"KEEP_FIRST", "OVERWRITE", "ADD", "MIN", "MAX"};

/* Batch sizes: mostly small (single keys and a few), sometimes up to half the table. */
static uint64_t diff_batch_size(tu_rng *rng, uint64_t capacity) {
  uint64_t pick = tu_below(rng, 4);
  if (pick == 0) return 1;
  if (pick == 1) return 1 + tu_below(rng, 8);
  return 1 + tu_below(rng, capacity / 2 > 1 ? capacity / 2 : 1);
}

/* full: a universe of `capacity` keys (the table can be 100% occupied); otherwise a quarter of
 * that (a sparse table whose erased slots pile up as tombstones). */
static void run_sequence(const char *program, const tu_design *design, gh_backend backend,
                         unsigned key_bits, unsigned value_bits, uint64_t seed, uint64_t steps,
                         int full) {
  tu_rng rng = tu_rng_make(seed);
  gh_config cfg = gh_config_default(design->design);
  /* A design that grows (its capacity counts keys) gets a universe larger than its capacity. */
  const int grows = tu_design_has(design, GH_CAP_GROWS);
  char params[160] = "";
  tu_table h;
  uint64_t universe_n, outsiders_n = 16, n_special, step, max_batch, peak = 0, steps_near_full = 0;
  uint64_t *universe, *outsiders, *keys, *values;
  unsigned long failures_before = tu_failure_count();
  unsigned long ops[7] = {0, 0, 0, 0, 0, 0, 0};

  cfg.backend = backend;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  cfg.group_size = tu_group_sizes[tu_below(&rng, 6)];
  if (!tu_design_has(design, GH_CAP_GROUP_SIZE))
    cfg.group_size = gh_config_default(design->design).group_size;
  cfg.capacity = 64 + tu_below(&rng, 960);
  cfg.host_threads = (unsigned)tu_below(&rng, 4);
  cfg.seed = tu_next(&rng);
  if (tu_design_has(design, GH_CAP_HASH_FUNCTIONS)) {
    static const double extra[] = {0.0, 0.0, 0.05, 0.4};
    tu_random_cuckoo_params(&rng, &cfg, extra, sizeof extra / sizeof extra[0], params, sizeof params);
  }
  tu_set_context("differential design=%s backend=%s key_bits=%u value_bits=%u group_size=%u "
                 "capacity=%llu host_threads=%u%s universe=%s seed=0x%016llx\n"
                 "  rerun: %s %s %u %u --design %s --seed 0x%016llx --universe %s",
                 design->name, tu_backend_name(backend), key_bits, value_bits, cfg.group_size,
                 (unsigned long long)cfg.capacity, cfg.host_threads, params,
                 full ? "full" : "quarter", (unsigned long long)seed, program,
                 tu_backend_name(backend), key_bits, value_bits, design->name,
                 (unsigned long long)seed, full ? "full" : "quarter");
  tu_set_phase("create");
  if (!tu_table_create(&h, &cfg)) return;

  /* Every universe key may be present at once and all of them fit (the special patterns are
   * counted as needing a slot even though two of them are stored out of band), so an insert
   * must never fail here. */
  universe_n = full ? h.capacity : h.capacity / 4 + 8;
  /* A design that grows instead of refusing keys: let the universe outgrow the table. */
  if (grows && full) universe_n = h.capacity + h.capacity / 2;
  universe = (uint64_t *)tu_xmalloc((size_t)universe_n * sizeof *universe);
  n_special = tu_special_keys(key_bits, universe);
  tu_gen_unique_keys(&rng, key_bits, universe_n - n_special, NULL, universe + n_special);
  {
    /* Outsiders: keys never inserted, for lookups and erases of absent keys. */
    tu_ref in_universe;
    tu_ref_init(&in_universe, key_bits, 0);
    tu_ref_insert(&in_universe, universe, NULL, universe_n, GH_KEEP_FIRST, NULL);
    outsiders = (uint64_t *)tu_xmalloc((size_t)outsiders_n * sizeof *outsiders);
    tu_gen_unique_keys(&rng, key_bits, outsiders_n, &in_universe, outsiders);
    tu_ref_free(&in_universe);
  }
  max_batch = h.capacity / 2 + 1;
  keys = (uint64_t *)tu_xmalloc((size_t)max_batch * sizeof *keys);
  values = (uint64_t *)tu_xmalloc((size_t)max_batch * sizeof *values);

  for (step = 0; step < steps; ++step) {
    uint64_t op = tu_below(&rng, 200), n = diff_batch_size(&rng, h.capacity), i;
    unsigned long failures_at_step = tu_failure_count();
    tu_gen_from_pool(&rng, universe, universe_n, n, keys);
    /* Lookups and erases also meet a few keys that were never inserted; inserts stay inside
     * the universe so that everything always fits. */
    for (i = 0; op >= 80 && i < n; ++i) {
      if (tu_below(&rng, 16) == 0) keys[i] = outsiders[tu_below(&rng, outsiders_n)];
    }
    if (op < 80) {
      size_t p = (size_t)tu_below(&rng, 5);
      tu_gen_values(&rng, value_bits, n, values);
      tu_set_phase("step %llu: insert %llu keys (%s)", (unsigned long long)step,
                   (unsigned long long)n, diff_policy_names[p]);
      tu_insert(&h, keys, values, n, (gh_dup_policy)p, 0, NULL);
      ++ops[0];
    } else if (op < 110) {
      tu_set_phase("step %llu: erase %llu keys", (unsigned long long)step, (unsigned long long)n);
      tu_erase(&h, keys, n);
      ++ops[1];
    } else if (op < 150) {
      unsigned mode = 1 + (unsigned)tu_below(&rng, 7);
      tu_set_phase("step %llu: find %llu keys (mode %u)", (unsigned long long)step,
                   (unsigned long long)n, mode);
      tu_check_find(&h, keys, n, mode);
      ++ops[2];
    } else if (op < 175) {
      tu_set_phase("step %llu: contains %llu keys", (unsigned long long)step,
                   (unsigned long long)n);
      tu_check_contains(&h, keys, n);
      ++ops[3];
    } else if (op < 176) {
      tu_set_phase("step %llu: clear", (unsigned long long)step);
      tu_clear(&h);
      ++ops[4];
    } else if (op < 190) {
      uint64_t slack = tu_below(&rng, 4);
      tu_set_phase("step %llu: export with %llu spare slots", (unsigned long long)step,
                   (unsigned long long)slack);
      tu_check_export(&h, slack);
      ++ops[5];
    } else {
      tu_set_phase("step %llu: size", (unsigned long long)step);
      tu_check_size(&h);
      ++ops[6];
    }
    /* The comparison after every step. */
    if (tu_ref_size(&h.ref) > peak) peak = tu_ref_size(&h.ref);
    if (tu_ref_size(&h.ref) * 10 >= h.capacity * 9) ++steps_near_full;
    tu_check_size(&h);
    tu_check_export(&h, 0);
    if (step % DIFF_VALIDATE_EVERY == DIFF_VALIDATE_EVERY - 1) {
      tu_check_stats(&h);
      tu_check_valid(&h);
    }
    if (tu_failure_count() != failures_at_step) {
      fprintf(stderr, "differential: stopping this sequence at step %llu (seed 0x%016llx)\n",
              (unsigned long long)step, (unsigned long long)seed);
      break;
    }
  }
  tu_set_phase("end of sequence");
  tu_check_stats(&h);
  tu_check_valid(&h);
  {
    gh_stats stats;
    memset(&stats, 0, sizeof stats);
    if (CHECK_OK(h.table, gh_get_stats(h.table, &stats)) && (grows || stats.restarts > 0)) {
      snprintf(params + strlen(params), sizeof params - strlen(params),
               " restarts=%llu grows=%llu", (unsigned long long)stats.restarts,
               (unsigned long long)stats.grows);
    }
  }
  tu_table_destroy(&h);
  free(values);
  free(keys);
  free(outsiders);
  free(universe);
  printf("%-4s %s k%u v%u group %2u%s capacity %4llu universe %4llu seed 0x%016llx: %llu steps "
         "(insert %lu, erase %lu, find %lu, contains %lu, clear %lu, export %lu, size %lu), "
         "peak load %.2f, %llu steps at load >= 0.9: %s\n",
         tu_backend_name(backend), design->name, key_bits, value_bits, cfg.group_size, params,
         (unsigned long long)h.capacity, (unsigned long long)universe_n,
         (unsigned long long)seed, (unsigned long long)steps, ops[0], ops[1], ops[2], ops[3],
         ops[4], ops[5], ops[6], (double)peak / (double)h.capacity,
         (unsigned long long)steps_near_full,
         tu_failure_count() == failures_before ? "ok" : "FAILED");
  fflush(stdout);
}

int main(int argc, char **argv) {
  gh_backend backend;
  unsigned key_bits, value_bits;
  uint64_t seed = 0, steps = DIFF_STEPS, s;
  int have_seed = 0, full = 1, i;
  const tu_design *design = tu_design_by_name("warpdrive");
  if (argc < 4 || !tu_parse_backend(argv[1], &backend) || !tu_parse_bits(argv[2], 0, &key_bits) ||
      !tu_parse_bits(argv[3], 1, &value_bits))
    goto usage;
  for (i = 4; i < argc; i += 2) {
    if (i + 1 >= argc) goto usage;
    if (strcmp(argv[i], "--design") == 0 && tu_design_by_name(argv[i + 1]) != NULL) {
      design = tu_design_by_name(argv[i + 1]);
    } else if (strcmp(argv[i], "--seed") == 0 && tu_parse_u64(argv[i + 1], &seed)) {
      have_seed = 1;
    } else if (strcmp(argv[i], "--steps") == 0 && tu_parse_u64(argv[i + 1], &steps)) {
    } else if (strcmp(argv[i], "--universe") == 0 &&
               (strcmp(argv[i + 1], "full") == 0 || strcmp(argv[i + 1], "quarter") == 0)) {
      full = strcmp(argv[i + 1], "full") == 0;
    } else {
      goto usage;
    }
  }
  tu_skip_unless_backend_usable(backend);
  if (have_seed) {
    run_sequence(argv[0], design, backend, key_bits, value_bits, seed, steps, full);
  } else {
    for (s = 0; s < DIFF_SEEDS; ++s) {
      run_sequence(argv[0], design, backend, key_bits, value_bits,
                   tu_mix_seed(DIFF_BASE_SEED, key_bits, value_bits, s), steps, s % 2 == 0);
    }
  }
  return tu_finish("differential");
usage:
  fprintf(stderr,
          "usage: %s host|cuda KEY_BITS(32|64) VALUE_BITS(0|32|64) [--design NAME] [--seed S] "
          "[--steps N] [--universe full|quarter]\n",
          argv[0]);
  return 2;
}
