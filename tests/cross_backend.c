/*
 * cross_backend - the host backend is the oracle for the CUDA backend: the same batches (with
 * repeats, under the deterministic policies ADD / MIN / MAX) go into a CUDA table and a host
 * table of identical configuration, and both must end up holding the same pairs and answer
 * lookups identically. Each table is also checked against its own reference on the way.
 *
 *   cross_backend [--design NAME] [--seed S]
 *
 * NAME is a design the library has (gh_design_by_name; warpdrive by default); group sizes are
 * looped over only for designs with GH_CAP_GROUP_SIZE.
 *
 * Without a GPU it prints "SKIPPED: no GPU here" and exits 77.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define CROSS_BASE_SEED 0xC2055BAC4ull

static void compare_exports(tu_table *cuda, tu_table *host) {
  uint64_t *ck = NULL, *cv = NULL, *hk = NULL, *hv = NULL, i;
  uint64_t cn = tu_export_sorted(cuda->table, cuda->key_bits, cuda->value_bits, &ck, &cv);
  uint64_t hn = tu_export_sorted(host->table, host->key_bits, host->value_bits, &hk, &hv);
  if (cn != UINT64_MAX && hn != UINT64_MAX &&
      CHECK(cn == hn, "CUDA table exports %llu pairs, host table %llu", (unsigned long long)cn,
            (unsigned long long)hn)) {
    for (i = 0; i < cn; ++i) {
      if (!CHECK(ck[i] == hk[i], "sorted export differs at %llu: CUDA key 0x%llx, host key 0x%llx",
                 (unsigned long long)i, (unsigned long long)ck[i], (unsigned long long)hk[i]))
        break;
      if (cuda->value_bits > 0 &&
          !CHECK(cv[i] == hv[i], "key 0x%llx: CUDA value %llu, host value %llu",
                 (unsigned long long)ck[i], (unsigned long long)cv[i],
                 (unsigned long long)hv[i]))
        break;
    }
  }
  free(ck);
  free(cv);
  free(hk);
  free(hv);
}

/* The same gh_find on both tables must give byte-identical outputs. */
static void compare_finds(tu_table *cuda, tu_table *host, const uint64_t *keys, uint64_t n) {
  size_t vbytes = cuda->value_bits / 8;
  void *packed = tu_pack(keys, n, cuda->key_bits);
  unsigned char *cvals = NULL, *hvals = NULL;
  uint8_t *cfound = (uint8_t *)tu_xmalloc((size_t)n), *hfound = (uint8_t *)tu_xmalloc((size_t)n);
  uint64_t i, default_value = 0x0123456789ABCDEFull & tu_mask(cuda->value_bits);
  void *packed_default = NULL;
  if (vbytes > 0) {
    cvals = (unsigned char *)tu_xmalloc((size_t)n * vbytes);
    hvals = (unsigned char *)tu_xmalloc((size_t)n * vbytes);
    packed_default = tu_pack(&default_value, 1, cuda->value_bits);
  }
  if (CHECK_OK(cuda->table, gh_find(cuda->table, packed, n, cvals, cfound, packed_default, NULL)) &&
      CHECK_OK(host->table, gh_find(host->table, packed, n, hvals, hfound, packed_default, NULL))) {
    for (i = 0; i < n; ++i) {
      if (!CHECK(cfound[i] == hfound[i], "key 0x%llx: found %u on CUDA, %u on host",
                 (unsigned long long)keys[i], cfound[i], hfound[i]))
        break;
      if (vbytes > 0 &&
          !CHECK(memcmp(cvals + i * vbytes, hvals + i * vbytes, vbytes) == 0,
                 "key 0x%llx: find returns different values on CUDA and host",
                 (unsigned long long)keys[i]))
        break;
    }
  }
  free(packed_default);
  free(hvals);
  free(cvals);
  free(hfound);
  free(cfound);
  free(packed);
}

static void run_cross_case(const tu_design *design, unsigned key_bits, unsigned value_bits,
                           unsigned group_size, uint64_t seed) {
  static const gh_dup_policy policies[] = {GH_ADD, GH_ADD, GH_MIN, GH_MAX};
  tu_rng rng = tu_rng_make(seed);
  gh_config cfg = gh_config_default(design->design);
  tu_table cuda, host;
  uint64_t pool_n, n_special, n, round, *pool, *keys, *values, *lookups;
  unsigned long failures_before = tu_failure_count();

  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  if (tu_design_has(design, GH_CAP_GROUP_SIZE)) cfg.group_size = group_size;
  cfg.capacity = 2000 + tu_below(&rng, 30000);
  cfg.seed = tu_next(&rng);
  tu_set_context("cross_backend design=%s key_bits=%u value_bits=%u group_size=%u capacity=%llu "
                 "seed=0x%016llx (rerun: cross_backend --design %s --seed 0x%016llx)",
                 design->name, key_bits, value_bits, group_size, (unsigned long long)cfg.capacity,
                 (unsigned long long)seed, design->name, (unsigned long long)seed);
  tu_set_phase("create both tables");
  cfg.backend = GH_BACKEND_CUDA;
  if (!tu_table_create(&cuda, &cfg)) return;
  cfg.backend = GH_BACKEND_HOST;
  if (!tu_table_create(&host, &cfg)) {
    tu_table_destroy(&cuda);
    return;
  }
  CHECK(cuda.capacity == host.capacity, "CUDA capacity %llu, host capacity %llu",
        (unsigned long long)cuda.capacity, (unsigned long long)host.capacity);

  /* Up to 90% of the slots in distinct keys, the special patterns among them. */
  pool_n = (uint64_t)(0.9 * (double)cuda.capacity);
  pool = (uint64_t *)tu_xmalloc((size_t)pool_n * sizeof *pool);
  n_special = tu_special_keys(key_bits, pool);
  tu_gen_unique_keys(&rng, key_bits, pool_n - n_special, NULL, pool + n_special);
  keys = (uint64_t *)tu_xmalloc((size_t)pool_n * 4 * sizeof *keys);
  values = (uint64_t *)tu_xmalloc((size_t)pool_n * 4 * sizeof *values);

  for (round = 0; round < 4; ++round) {
    n = tu_gen_repeats(&rng, pool, pool_n, 4, keys);
    tu_gen_values(&rng, value_bits, n, values);
    tu_set_phase("round %llu: insert %llu keys with repeats (policy %d) into both tables",
                 (unsigned long long)round, (unsigned long long)n, (int)policies[round]);
    tu_insert(&cuda, keys, values, n, policies[round], 0, NULL);
    tu_insert(&host, keys, values, n, policies[round], 0, NULL);
    compare_exports(&cuda, &host);
    if (round == 1) {
      /* Erase a third, so later rounds meet tombstones on both backends. */
      n = pool_n / 3;
      tu_shuffle(&rng, pool, pool_n);
      tu_set_phase("erase %llu keys from both tables", (unsigned long long)n);
      tu_erase(&cuda, pool, n);
      tu_erase(&host, pool, n);
      compare_exports(&cuda, &host);
    }
  }

  tu_set_phase("compare lookups of present and absent keys");
  lookups = (uint64_t *)tu_xmalloc((size_t)pool_n * 2 * sizeof *lookups);
  memcpy(lookups, pool, (size_t)pool_n * sizeof *lookups);
  tu_gen_unique_keys(&rng, key_bits, pool_n, &host.ref, lookups + pool_n);
  tu_shuffle(&rng, lookups, 2 * pool_n);
  compare_finds(&cuda, &host, lookups, 2 * pool_n);
  tu_check_find(&cuda, lookups, 2 * pool_n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_find(&host, lookups, 2 * pool_n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_set_phase("final state of both tables");
  tu_check_all(&cuda);
  tu_check_all(&host);

  free(lookups);
  free(values);
  free(keys);
  free(pool);
  tu_table_destroy(&host);
  tu_table_destroy(&cuda);
  printf("%s k%u v%u group %2u capacity %6llu: %s\n", design->name, key_bits, value_bits, group_size,
         (unsigned long long)cfg.capacity,
         tu_failure_count() == failures_before ? "ok" : "FAILED");
  fflush(stdout);
}

int main(int argc, char **argv) {
  static const unsigned key_widths[] = {32, 64}, value_widths[] = {0, 32, 64};
  static const unsigned groups[] = {1, 4, 32};
  const tu_design *design = tu_design_by_name("warpdrive");
  uint64_t seed = 0;
  int have_seed = 0, i;
  size_t k, v, g;
  for (i = 1; i < argc; i += 2) {
    if (i + 1 < argc && strcmp(argv[i], "--seed") == 0 && tu_parse_u64(argv[i + 1], &seed)) {
      have_seed = 1;
    } else if (i + 1 < argc && strcmp(argv[i], "--design") == 0 && tu_design_by_name(argv[i + 1])) {
      design = tu_design_by_name(argv[i + 1]);
    } else {
      fprintf(stderr, "usage: %s [--design NAME] [--seed S]\n", argv[0]);
      return 2;
    }
  }
  tu_skip_unless_backend_usable(GH_BACKEND_CUDA);
  for (k = 0; k < 2; ++k) {
    for (v = 0; v < 3; ++v) {
      for (g = 0; g < (tu_design_has(design, GH_CAP_GROUP_SIZE) ? 3u : 1u); ++g) {
        run_cross_case(design, key_widths[k], value_widths[v], groups[g],
                       have_seed ? seed
                                 : tu_mix_seed(CROSS_BASE_SEED, key_widths[k], value_widths[v],
                                               groups[g]));
      }
    }
  }
  return tu_finish("cross_backend");
}
