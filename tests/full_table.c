/*
 * full_table - a table asked to hold more keys than it has slots (cuco #647, BGHT #15: a full
 * table must return a status and flag the keys that did not fit, never fail silently or hang).
 *
 *   full_table BACKEND [--design NAME] [--seed S]
 *
 * For designs with a fixed capacity (GH_CAP_REPORTS_FULL; a design that grows instead passes
 * with a note), for every key/value width and group size (GH_CAP_GROUP_SIZE): overfill a small
 * table, then at 100% occupancy update present keys, look up absent keys, insert the
 * out-of-band sentinel patterns, erase and refill through tombstones only, churn one free slot
 * between two new keys; finally (designs that probe in group-size windows) a table whose probe
 * limit is one window.
 * A hang shows up as the ctest timeout of the entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define FULL_BASE_SEED 0xF011AB1Eull
#define FULL_CAPACITY 1024
#define FULL_OVERFLOW 300
#define FULL_CHURN_ROUNDS 200

static uint64_t *alloc_keys(uint64_t n) {
  return (uint64_t *)tu_xmalloc((size_t)n * sizeof(uint64_t));
}

/* Random unique keys that are none of the special patterns, so that every one of them needs a
 * slot (the all-ones patterns are stored out of band and would not fill the table). */
static void gen_slot_keys(tu_rng *rng, const tu_table *h, uint64_t n, uint64_t *out) {
  tu_ref avoid;
  uint64_t special[8], present_n = tu_ref_size(&h->ref);
  uint64_t *present = alloc_keys(present_n + 1);
  size_t n_special = tu_special_keys(h->key_bits, special);
  tu_ref_init(&avoid, h->key_bits, 0);
  tu_ref_insert(&avoid, special, NULL, n_special, GH_KEEP_FIRST, NULL);
  tu_ref_keys(&h->ref, present);
  tu_ref_insert(&avoid, present, NULL, present_n, GH_KEEP_FIRST, NULL);
  tu_gen_unique_keys(rng, h->key_bits, n, &avoid, out);
  tu_ref_free(&avoid);
  free(present);
}

static void run_full_case(const tu_design *design, gh_backend backend, unsigned key_bits,
                          unsigned value_bits, unsigned group_size, uint64_t seed) {
  tu_rng rng = tu_rng_make(seed);
  gh_config cfg = gh_config_default(design->design);
  tu_table h;
  uint64_t cap, n, nfailed, i, round, n_present, n_new, pool_n, special[8], out_of_band[2];
  uint64_t *keys, *values, *present, *pool, *batch_keys, *batch_values;
  unsigned long failures_before = tu_failure_count();

  cfg.backend = backend;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  cfg.capacity = FULL_CAPACITY;
  if (tu_design_has(design, GH_CAP_GROUP_SIZE)) cfg.group_size = group_size;
  cfg.seed = tu_next(&rng);
  tu_set_context(
      "full_table design=%s backend=%s key_bits=%u value_bits=%u group_size=%u "
      "capacity=%d seed=0x%016llx (rerun: full_table %s --design %s --seed 0x%016llx, "
      "same width and group)",
      design->name, tu_backend_name(backend), key_bits, value_bits, group_size, FULL_CAPACITY,
      (unsigned long long)seed, tu_backend_name(backend), design->name, (unsigned long long)seed);
  tu_set_phase("create");
  if (!tu_table_create(&h, &cfg)) return;
  cap = h.capacity;

  /* 1. More keys than slots in one batch. The default probe limit covers every window of a
   * table this small, and the windows of a key's probe sequence are all distinct (double
   * hashing over a prime number of windows), so a key fails only when it saw every slot
   * occupied; slots do not empty during an insert, so the table ends exactly full. */
  n = cap + FULL_OVERFLOW;
  keys = alloc_keys(n);
  values = alloc_keys(n);
  gen_slot_keys(&rng, &h, n, keys);
  tu_gen_values(&rng, value_bits, n, values);
  tu_set_phase("insert %llu keys into %llu slots", (unsigned long long)n,
               (unsigned long long)cap);
  nfailed = tu_insert(&h, keys, values, n, GH_OVERWRITE, 1, NULL);
  CHECK(nfailed == n - cap, "%llu keys flagged as not fitting, expected %llu (table exactly full)",
        (unsigned long long)nfailed, (unsigned long long)(n - cap));
  tu_check_all(&h);
  tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);

  /* 2. At 100% occupancy, present keys still update and are never flagged; new keys fail. */
  n_present = tu_ref_size(&h.ref);
  present = alloc_keys(n_present + 1);
  tu_ref_keys(&h.ref, present);
  tu_shuffle(&rng, present, n_present);
  n_new = 50;
  pool_n = (n_present < 200 ? n_present : 200) + n_new;
  pool = alloc_keys(pool_n);
  memcpy(pool, present, (size_t)(pool_n - n_new) * sizeof *pool);
  gen_slot_keys(&rng, &h, n_new, pool + pool_n - n_new);
  batch_keys = alloc_keys(pool_n * 3);
  batch_values = alloc_keys(pool_n * 3);
  n = tu_gen_repeats(&rng, pool, pool_n, 3, batch_keys);
  tu_gen_values(&rng, value_bits, n, batch_values);
  tu_set_phase("full table: update 200 present keys (ADD, repeats) with 50 new keys");
  nfailed = tu_insert(&h, batch_keys, batch_values, n, GH_ADD, 1, NULL);
  {
    uint64_t new_positions = 0;
    for (i = 0; i < n; ++i) {
      uint64_t j;
      for (j = pool_n - n_new; j < pool_n; ++j) new_positions += batch_keys[i] == pool[j];
    }
    CHECK(nfailed == new_positions, "%llu positions flagged, %llu hold new keys",
          (unsigned long long)nfailed, (unsigned long long)new_positions);
  }
  tu_check_find(&h, pool, pool_n, TU_FIND_VALUES | TU_FIND_FOUND);
  tu_check_all(&h);

  tu_set_phase("full table: update present keys only (MAX, repeats): GH_OK");
  n = tu_gen_repeats(&rng, pool, pool_n - n_new, 3, batch_keys);
  tu_gen_values(&rng, value_bits, n, batch_values);
  tu_insert(&h, batch_keys, batch_values, n, GH_MAX, 0, NULL);
  tu_check_find(&h, pool, pool_n, TU_FIND_VALUES | TU_FIND_FOUND);
  if (tu_design_has(design, GH_CAP_STATUS_FLAGS)) {
    /* "Reads and clears the table's status word": an insert that met present keys sets
     * GH_FLAG_DUPLICATE (and, fitting them all, not GH_FLAG_PROBE_LIMIT); the next read is 0. */
    unsigned flags = 0;
    void *packed = tu_pack(pool, 20, key_bits), *packed_values = value_bits ? tu_pack(batch_values, 20, value_bits) : NULL;
    tu_set_phase("full table: status flags of an insert of present keys");
    CHECK_OK(h.table, gh_insert(h.table, packed, packed_values, 20, GH_KEEP_FIRST, NULL, NULL));
    if (CHECK_OK(h.table, gh_take_status_flags(h.table, &flags)))
      CHECK(flags == GH_FLAG_DUPLICATE, "status flags 0x%x after re-inserting present keys, expected GH_FLAG_DUPLICATE", flags);
    if (CHECK_OK(h.table, gh_take_status_flags(h.table, &flags)))
      CHECK(flags == 0, "status flags 0x%x on a second read: gh_take_status_flags did not clear them", flags);
    free(packed);
    free(packed_values);
  }

  /* 3. Lookups of absent keys in a table without an empty slot must end at the probe limit. */
  tu_set_phase("full table: find absent keys (must terminate)");
  gen_slot_keys(&rng, &h, cap, keys);
  tu_check_find(&h, keys, cap, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_contains(&h, keys, cap);

  /* 4. The all-ones patterns live out of band ("every key value is usable"), so they fit even
   * into a full table. */
  tu_special_keys(key_bits, special);
  out_of_band[0] = special[1];
  out_of_band[1] = special[2];
  tu_gen_values(&rng, value_bits, 2, values);
  tu_set_phase("full table: insert the all-ones and all-ones-minus-1 keys");
  tu_insert(&h, out_of_band, values, 2, GH_OVERWRITE, 0, NULL);
  tu_check_find(&h, out_of_band, 2, TU_FIND_VALUES | TU_FIND_FOUND);
  tu_check_all(&h);
  tu_erase(&h, out_of_band, 2);
  tu_check_find(&h, out_of_band, 2, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);

  /* 5. Erase some keys and insert as many others: the only free slots are tombstones. */
  n = n_present < 100 ? n_present : 100;
  tu_set_phase("full table: erase %llu keys, insert as many others into the tombstones",
               (unsigned long long)n);
  tu_erase(&h, present, n);
  gen_slot_keys(&rng, &h, n, keys);
  tu_gen_values(&rng, value_bits, n, values);
  tu_insert(&h, keys, values, n, GH_KEEP_FIRST, 0, NULL);
  tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
  tu_check_find(&h, present, n_present, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_all(&h);
  tu_set_phase("full table after tombstone reuse: find absent keys (must terminate)");
  gen_slot_keys(&rng, &h, 500, keys);
  tu_check_find(&h, keys, 500, TU_FIND_FOUND);

  /* 6. Churn at 100%: free one slot, then offer two new keys at once. With the default probe
   * limit every key reaches every window, so exactly one of the two fits, wherever the free
   * slot lies on their probe sequences (a limit one window short would show up here). */
  for (round = 0; round < FULL_CHURN_ROUNDS; ++round) {
    uint64_t victim, pair[2], pair_values[2], n_now;
    uint64_t *now = alloc_keys(tu_ref_size(&h.ref) + 1);
    n_now = tu_ref_keys(&h.ref, now);
    victim = n_now > 0 ? now[tu_below(&rng, n_now)] : 0;
    free(now);
    if (n_now == 0) break;
    tu_set_phase("full table churn, round %llu: erase 0x%llx, then insert two new keys",
                 (unsigned long long)round, (unsigned long long)victim);
    tu_erase(&h, &victim, 1);
    gen_slot_keys(&rng, &h, 2, pair);
    tu_gen_values(&rng, value_bits, 2, pair_values);
    nfailed = tu_insert(&h, pair, pair_values, 2, GH_OVERWRITE, 1, NULL);
    if (!CHECK(nfailed == 1, "%llu of 2 new keys failed with exactly one free slot",
               (unsigned long long)nfailed))
      break;
  }
  tu_set_phase("full table after churn");
  tu_check_all(&h);
  tu_table_destroy(&h);

  /* 7. A probe limit of one window: keys fail long before the table is full. */
  cfg.max_probe_windows = 1;
  tu_set_phase("create with max_probe_windows = 1");
  if (tu_design_has(design, GH_CAP_GROUP_SIZE) && tu_table_create(&h, &cfg)) {
    n = (uint64_t)(0.9 * (double)h.capacity);
    gen_slot_keys(&rng, &h, n, keys);
    tu_gen_values(&rng, value_bits, n, values);
    tu_set_phase("probe limit 1 window: insert %llu keys", (unsigned long long)n);
    tu_insert(&h, keys, values, n, GH_OVERWRITE, 1, NULL);
    tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
    tu_check_all(&h);
    tu_set_phase("probe limit 1 window: insert the same keys again");
    tu_insert(&h, keys, values, n, GH_MIN, 1, NULL);
    tu_check_all(&h);
    tu_table_destroy(&h);
  }

  free(batch_values);
  free(batch_keys);
  free(pool);
  free(present);
  free(values);
  free(keys);
  printf("%-4s %s k%u v%u group %2u: %s\n", tu_backend_name(backend), design->name, key_bits,
         value_bits, group_size, tu_failure_count() == failures_before ? "ok" : "FAILED");
  fflush(stdout);
}

int main(int argc, char **argv) {
  static const unsigned key_widths[] = {32, 64}, value_widths[] = {0, 32, 64};
  const tu_design *design = tu_design_by_name("warpdrive");
  gh_backend backend;
  uint64_t seed_override = 0;
  int have_seed = 0, i;
  size_t k, v, g;
  if (argc < 2 || !tu_parse_backend(argv[1], &backend)) goto usage;
  for (i = 2; i < argc; i += 2) {
    if (i + 1 >= argc) goto usage;
    if (strcmp(argv[i], "--design") == 0 && tu_design_by_name(argv[i + 1]) != NULL) {
      design = tu_design_by_name(argv[i + 1]);
    } else if (strcmp(argv[i], "--seed") == 0 && tu_parse_u64(argv[i + 1], &seed_override)) {
      have_seed = 1;
    } else {
      goto usage;
    }
  }
  if (design == NULL) goto usage;
  tu_skip_unless_backend_usable(backend);
  if (!tu_design_has(design, GH_CAP_REPORTS_FULL)) {
    printf(
        "%s has no fixed capacity (no GH_CAP_REPORTS_FULL): it never reports a full table, "
        "nothing to test here\n",
        design->name);
    return tu_finish("full_table");
  }
  for (k = 0; k < 2; ++k) {
    for (v = 0; v < 3; ++v) {
      for (g = 0; g < 6; ++g) {
        uint64_t seed = have_seed ? seed_override
                                  : tu_mix_seed(FULL_BASE_SEED, key_widths[k], value_widths[v],
                                                tu_group_sizes[g]);
        if (!tu_design_has(design, GH_CAP_GROUP_SIZE) && g > 0) break;
        run_full_case(design, backend, key_widths[k], value_widths[v], tu_group_sizes[g], seed);
      }
    }
  }
  return tu_finish("full_table");
usage:
  fprintf(stderr, "usage: %s host|cuda [--design NAME] [--seed S]\n", argv[0]);
  return 2;
}
