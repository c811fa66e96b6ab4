/*
 * dist - the distributed table (gpuhash_dist.h) on its host backend: m simulated partitions.
 *
 *   dist host [--seed S]
 *
 * For each map design tried (warpdrive, open addressing with a fixed capacity; dycuckoo, which
 * resizes its subtables; hashgraph, a static table rebuilt per insert) and m = 1, 2, 3, 4, 7
 * partitions:
 *   slices      random unique keys cut into m slices of uneven sizes (one empty when m > 1):
 *               insert; size, statistics (the partitions' summed), validate (each key in the
 *               partition p(k) names), find of every key
 *               (values in each slice's order), find of absent keys (the default value), export
 *               against the model; a third erased through other slices (erased flags: once per
 *               key, also for a key given in two slices), then all of it again
 *   one part    keys chosen so that all have p(k) = 0: every other partition stays empty
 *   add         a key in every slice, policy GH_ADD: its value is the sum of its copies
 *   full        warpdrive partitions of 2048 slots given 3x that many keys: GH_ERR_TABLE_FULL,
 *               failed_out flags exactly the keys that are not found, *failed counts them
 *   alloc       an allocator (the tables' and the layer's) that fails the k-th allocation of an
 *               insert, a find, an erase, for every k until the call gets through: insert's
 *               failed flags and erase's erased flags against a find of every key, the size,
 *               validate; a find changes nothing; no leak, no bad free
 *   refusals    NULL keys / n, a NULL slice with keys, a map without values: refused, nothing
 *               changed; configs with 0 or too many partitions, a multi-value variant or the
 *               CUDA backend (not built yet) refused with a message
 *
 * Every failure prints the case, the phase and the seed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuhash_dist.h"
#include "test_util.h"
#include "tracking_alloc.h"

#define DIST_BASE_SEED 0x71D157ull
#define DIST_MAX_M 7

static uint64_t dist_seed;

static gh_dist_config dist_config(gh_design design, unsigned m) {
  gh_dist_config c = gh_dist_config_default(design);
  c.table.backend = GH_BACKEND_HOST;
  c.table.capacity = 1u << 14;
  c.table.seed = dist_seed;
  c.partitions = m;
  return c;
}

/* n keys cut into m slices of uneven sizes: slice s gets a share growing with s, slice 1 none. */
typedef struct slices {
  unsigned m;
  uint64_t n[DIST_MAX_M];
  uint32_t *keys[DIST_MAX_M], *values[DIST_MAX_M];
} slices;

static void cut(slices *x, unsigned m, const uint64_t *keys, const uint64_t *values, uint64_t n) {
  memset(x, 0, sizeof *x);
  x->m = m;
  uint64_t weight = 0, at = 0;
  for (unsigned s = 0; s < m; ++s) weight += (m > 1 && s == 1) ? 0 : s + 1u;
  for (unsigned s = 0; s < m; ++s) {
    const uint64_t share = (m > 1 && s == 1) ? 0 : (s + 1 == m ? n - at : n * (s + 1u) / weight);
    x->n[s] = share;
    x->keys[s] = (uint32_t *)tu_xmalloc(share * 4 + 4);
    x->values[s] = (uint32_t *)tu_xmalloc(share * 4 + 4);
    for (uint64_t i = 0; i < share; ++i) {
      x->keys[s][i] = (uint32_t)keys[at + i];
      x->values[s][i] = (uint32_t)(values ? values[at + i] : 0);
    }
    at += share;
  }
}

static void free_slices(slices *x) {
  for (unsigned s = 0; s < x->m; ++s) free(x->keys[s]), free(x->values[s]);
}

/* Finds every slice's keys; each must be found (present) or not, with value (present: its own). */
static void check_find(gh_dist *d, const slices *x, int present) {
  uint32_t *values[DIST_MAX_M];
  uint8_t *found[DIST_MAX_M];
  for (unsigned s = 0; s < x->m; ++s) {
    values[s] = (uint32_t *)tu_xmalloc(x->n[s] * 4 + 4);
    found[s] = (uint8_t *)tu_xmalloc(x->n[s] + 1);
  }
  const uint32_t fallback = 0xDEFA017u;
  if (CHECK_STATUS(NULL, gh_dist_find(d, (const void *const *)x->keys, x->n, (void *const *)values, found, &fallback),
                   GH_OK))
    for (unsigned s = 0; s < x->m; ++s)
      for (uint64_t i = 0; i < x->n[s]; ++i)
        if (!CHECK(found[s][i] == present && values[s][i] == (present ? x->values[s][i] : fallback),
                   "slice %u key %u: found %d value %u, expected found %d value %u", s, x->keys[s][i], found[s][i],
                   values[s][i], present, present ? x->values[s][i] : fallback))
          break;
  for (unsigned s = 0; s < x->m; ++s) free(values[s]), free(found[s]);
}

/* The whole table's statistics: the partitions' summed, the size and distinct keys the size (a
 * map), a design with subtables (dycuckoo) holding the keys in them. */
static void check_stats(gh_dist *d, uint64_t size) {
  gh_stats whole, part;
  uint64_t slots = 0, sizes = 0, in_subtables = 0;
  if (!CHECK_OK(NULL, gh_dist_get_stats(d, &whole))) return;
  for (unsigned p = 0; p < gh_dist_partitions(d); ++p)
    if (CHECK_OK(NULL, gh_dist_partition_stats(d, p, &part))) slots += part.slots, sizes += part.size;
  for (uint64_t i = 0; i < whole.subtables; ++i) in_subtables += whole.subtable_keys[i];
  CHECK(whole.size == size && whole.distinct_keys == size && sizes == size && whole.slots == slots &&
            (whole.subtables == 0 || in_subtables == size),
        "stats: size %llu distinct %llu slots %llu (partitions: size %llu slots %llu; in subtables %llu), expected size %llu",
        (unsigned long long)whole.size, (unsigned long long)whole.distinct_keys, (unsigned long long)whole.slots,
        (unsigned long long)sizes, (unsigned long long)slots, (unsigned long long)in_subtables, (unsigned long long)size);
  CHECK_STATUS(NULL, gh_dist_partition_stats(d, gh_dist_partitions(d), &part), GH_ERR_INVALID_ARGUMENT);
}

/* Size, validate and the export against the keys of x (all present, with their values). */
static void check_whole(gh_dist *d, const slices *x) {
  uint64_t total = 0, size = 0, count = 0;
  for (unsigned s = 0; s < x->m; ++s) total += x->n[s];
  CHECK_OK(NULL, gh_dist_validate(d));
  if (CHECK_OK(NULL, gh_dist_size(d, &size))) CHECK(size == total, "size %llu, expected %llu",
                                                  (unsigned long long)size, (unsigned long long)total);
  check_stats(d, total);
  uint32_t *keys = (uint32_t *)tu_xmalloc(total * 4 + 4), *values = (uint32_t *)tu_xmalloc(total * 4 + 4);
  if (CHECK_OK(NULL, gh_dist_export(d, keys, values, total, &count)) && CHECK(count == total, "exported %llu", (unsigned long long)count)) {
    /* Every exported pair is one of x's: found by key among the slices (n is small enough). */
    tu_ref ref;
    tu_ref_init(&ref, 32, 32);
    for (unsigned s = 0; s < x->m; ++s)
      for (uint64_t i = 0; i < x->n[s]; ++i) {
        const uint64_t k = x->keys[s][i], v = x->values[s][i];
        tu_ref_insert(&ref, &k, &v, 1, GH_OVERWRITE, NULL);
      }
    for (uint64_t i = 0; i < count; ++i)
      if (!CHECK(tu_ref_value_allowed(&ref, keys[i], values[i]), "exported (%u, %u) is not an inserted pair", keys[i],
                 values[i]))
        break;
    tu_ref_free(&ref);
  }
  free(keys), free(values);
}

static void case_slices(gh_design design, unsigned m) {
  tu_rng rng = tu_rng_make(tu_mix_seed(dist_seed, design, m, 1));
  const uint64_t n = 12000;
  uint64_t *keys = (uint64_t *)tu_xmalloc(2 * n * 8), *values = (uint64_t *)tu_xmalloc(2 * n * 8);
  tu_gen_unique_keys(&rng, 32, 2 * n, NULL, keys);
  tu_gen_values(&rng, 32, 2 * n, values);
  slices present, absent, gone;
  cut(&present, m, keys, values, n);
  cut(&absent, m, keys + n, values + n, n);
  gh_dist_config c = dist_config(design, m);
  gh_dist *d = NULL;
  tu_set_phase("create");
  if (!CHECK_OK(NULL, gh_dist_create(&c, &d))) {
    printf("    %s\n", gh_dist_last_create_error());
    goto done;
  }
  tu_set_phase("insert");
  uint8_t *failed[DIST_MAX_M];
  for (unsigned s = 0; s < m; ++s) failed[s] = (uint8_t *)tu_xmalloc(present.n[s] + 1), memset(failed[s], 7, present.n[s]);
  uint64_t failed_count = 99;
  CHECK_OK(NULL, gh_dist_insert(d, (const void *const *)present.keys, (const void *const *)present.values, present.n,
                                GH_OVERWRITE, failed, &failed_count));
  CHECK(failed_count == 0, "failed %llu", (unsigned long long)failed_count);
  for (unsigned s = 0; s < m; ++s)
    for (uint64_t i = 0; i < present.n[s]; ++i)
      if (!CHECK(failed[s][i] == 0, "slice %u key %llu flagged %d", s, (unsigned long long)i, failed[s][i])) break;
  for (unsigned s = 0; s < m; ++s) free(failed[s]);
  tu_set_phase("after the insert");
  check_whole(d, &present);
  check_find(d, &present, 1);
  check_find(d, &absent, 0);
  /* Erase every third key of the keys, given in other slices than they came in (reversed order
   * of slices), the first of them twice (in two slices). */
  tu_set_phase("erase a third");
  uint64_t *erase_keys = (uint64_t *)tu_xmalloc(n * 8), erase_n = 0;
  for (uint64_t i = 0; i < n; i += 3) erase_keys[erase_n++] = keys[n - 1 - i];
  erase_keys[erase_n++] = erase_keys[0];
  cut(&gone, m, erase_keys, NULL, erase_n);
  uint8_t *erased[DIST_MAX_M];
  for (unsigned s = 0; s < m; ++s) erased[s] = (uint8_t *)tu_xmalloc(gone.n[s] + 1);
  uint64_t erased_count = 0, flagged = 0;
  if (CHECK_OK(NULL, gh_dist_erase(d, (const void *const *)gone.keys, gone.n, erased, &erased_count))) {
    for (unsigned s = 0; s < m; ++s)
      for (uint64_t i = 0; i < gone.n[s]; ++i) flagged += erased[s][i];
    CHECK(erased_count == erase_n - 1 && flagged == erase_n - 1, "erased %llu, %llu flagged, expected %llu",
          (unsigned long long)erased_count, (unsigned long long)flagged, (unsigned long long)(erase_n - 1));
  }
  for (unsigned s = 0; s < m; ++s) free(erased[s]);
  tu_set_phase("after the erase");
  check_find(d, &gone, 0);
  uint64_t size = 0;
  if (CHECK_OK(NULL, gh_dist_size(d, &size)))
    CHECK(size == n - (erase_n - 1), "size %llu after erasing %llu of %llu", (unsigned long long)size,
          (unsigned long long)(erase_n - 1), (unsigned long long)n);
  CHECK_OK(NULL, gh_dist_validate(d));
  tu_set_phase("insert it all again");
  CHECK_OK(NULL, gh_dist_insert(d, (const void *const *)present.keys, (const void *const *)present.values, present.n,
                                GH_OVERWRITE, NULL, NULL));
  check_whole(d, &present);
  check_find(d, &present, 1);
  free_slices(&gone);
  free(erase_keys);
done:
  gh_dist_destroy(d);
  free_slices(&present);
  free_slices(&absent);
  free(keys), free(values);
}

static void case_one_partition(gh_design design, unsigned m) {
  tu_rng rng = tu_rng_make(tu_mix_seed(dist_seed, design, m, 2));
  gh_dist_config c = dist_config(design, m);
  gh_dist *d = NULL;
  tu_set_phase("create");
  if (!CHECK_OK(NULL, gh_dist_create(&c, &d))) return;
  const uint64_t n = 3000;
  uint64_t *keys = (uint64_t *)tu_xmalloc(n * 8), *values = (uint64_t *)tu_xmalloc(n * 8), candidates[64];
  for (uint64_t got = 0; got < n;) { /* unique keys with p(k) = 0 */
    tu_gen_unique_keys(&rng, 32, 64, NULL, candidates);
    for (int i = 0; i < 64 && got < n; ++i) {
      int seen = 0;
      for (uint64_t j = 0; j < got && !seen; ++j) seen = keys[j] == candidates[i];
      if (!seen && gh_dist_partition_of(d, candidates[i]) == 0) keys[got++] = candidates[i];
    }
  }
  tu_gen_values(&rng, 32, n, values);
  slices x;
  cut(&x, m, keys, values, n);
  tu_set_phase("insert keys all of partition 0");
  CHECK_OK(NULL, gh_dist_insert(d, (const void *const *)x.keys, (const void *const *)x.values, x.n, GH_OVERWRITE, NULL,
                                NULL));
  for (unsigned p = 0; p < m; ++p) {
    uint64_t size = 0;
    if (CHECK_OK(NULL, gh_dist_partition_size(d, p, &size)))
      CHECK(size == (p == 0 ? n : 0), "partition %u holds %llu", p, (unsigned long long)size);
  }
  check_whole(d, &x);
  check_find(d, &x, 1);
  free_slices(&x);
  free(keys), free(values);
  gh_dist_destroy(d);
}

/* A key given once in every slice with value s + 1, policy GH_ADD: the sum of 1 .. m. */
static void case_add(gh_design design, unsigned m) {
  gh_dist_config c = dist_config(design, m);
  gh_dist *d = NULL;
  tu_set_phase("create");
  if (!CHECK_OK(NULL, gh_dist_create(&c, &d))) return;
  uint32_t keys[DIST_MAX_M], values[DIST_MAX_M];
  const void *key_slices[DIST_MAX_M], *value_slices[DIST_MAX_M];
  uint64_t n[DIST_MAX_M];
  for (unsigned s = 0; s < m; ++s) {
    keys[s] = 0xABCD1234u, values[s] = s + 1u, n[s] = 1;
    key_slices[s] = &keys[s], value_slices[s] = &values[s];
  }
  tu_set_phase("one key in every slice, GH_ADD");
  if (CHECK_OK(NULL, gh_dist_insert(d, key_slices, value_slices, n, GH_ADD, NULL, NULL))) {
    uint32_t got = 0;
    uint8_t found = 0;
    const uint64_t one[DIST_MAX_M] = {1};
    const void *query[DIST_MAX_M] = {&keys[0]};
    void *out[DIST_MAX_M] = {&got};
    uint8_t *flags[DIST_MAX_M] = {&found};
    if (CHECK_OK(NULL, gh_dist_find(d, query, one, out, flags, NULL)))
      CHECK(found && got == m * (m + 1u) / 2u, "found %d value %u, expected %u", found, got, m * (m + 1u) / 2u);
  }
  gh_dist_destroy(d);
}

static void case_full(unsigned m) {
  tu_rng rng = tu_rng_make(tu_mix_seed(dist_seed, m, 3, 3));
  gh_dist_config c = dist_config(GH_WARPDRIVE, m);
  c.table.capacity = 2048;
  gh_dist *d = NULL;
  tu_set_phase("create");
  if (!CHECK_OK(NULL, gh_dist_create(&c, &d))) return;
  uint64_t capacity = 0;
  CHECK_OK(NULL, gh_dist_capacity(d, &capacity));
  const uint64_t n = 3 * capacity;
  uint64_t *keys = (uint64_t *)tu_xmalloc(n * 8), *values = (uint64_t *)tu_xmalloc(n * 8);
  tu_gen_unique_keys(&rng, 32, n, NULL, keys);
  tu_gen_values(&rng, 32, n, values);
  slices x;
  cut(&x, m, keys, values, n);
  uint8_t *failed[DIST_MAX_M], *found[DIST_MAX_M];
  for (unsigned s = 0; s < m; ++s) failed[s] = (uint8_t *)tu_xmalloc(x.n[s] + 1), found[s] = (uint8_t *)tu_xmalloc(x.n[s] + 1);
  uint64_t failed_count = 0, flagged = 0, size = 0;
  tu_set_phase("insert 3x the capacity");
  CHECK_STATUS(NULL, gh_dist_insert(d, (const void *const *)x.keys, (const void *const *)x.values, x.n, GH_OVERWRITE,
                                    failed, &failed_count),
               GH_ERR_TABLE_FULL);
  CHECK(strstr(gh_dist_last_error(d), "partition") != NULL, "message: %s", gh_dist_last_error(d));
  tu_set_phase("the flags against the table");
  if (CHECK_OK(NULL, gh_dist_find(d, (const void *const *)x.keys, x.n, NULL, found, NULL)))
    for (unsigned s = 0; s < m; ++s)
      for (uint64_t i = 0; i < x.n[s]; ++i) {
        flagged += failed[s][i];
        if (!CHECK(failed[s][i] == !found[s][i], "slice %u key %u: flagged %d, found %d", s, x.keys[s][i],
                   failed[s][i], found[s][i]))
          break;
      }
  if (CHECK_OK(NULL, gh_dist_size(d, &size)))
    CHECK(failed_count == flagged && size == n - flagged, "failed %llu, flagged %llu, size %llu of %llu",
          (unsigned long long)failed_count, (unsigned long long)flagged, (unsigned long long)size,
          (unsigned long long)n);
  CHECK_OK(NULL, gh_dist_validate(d));
  for (unsigned s = 0; s < m; ++s) free(failed[s]), free(found[s]);
  free_slices(&x);
  free(keys), free(values);
  gh_dist_destroy(d);
}

/* Finds keys[0, n) in one slice: found[i] per key. */
static int find_all(gh_dist *d, const uint32_t *keys, uint64_t n, uint8_t *found) {
  const void *key_slices[DIST_MAX_M] = {keys};
  const uint64_t counts[DIST_MAX_M] = {n};
  uint8_t *flags[DIST_MAX_M] = {found};
  return CHECK_OK(NULL, gh_dist_find(d, key_slices, counts, NULL, flags, NULL));
}

typedef enum { ALLOC_INSERT, ALLOC_ERASE, ALLOC_FIND } alloc_op;

/* One table per k: base keys in, the k-th allocation of op armed to fail, then the promises. */
static void case_alloc(gh_design design, unsigned m, alloc_op op) {
  static const char *const names[] = {"insert", "erase", "find"};
  tu_rng rng = tu_rng_make(tu_mix_seed(dist_seed, design, m, 4 + op));
  const uint64_t n = 1500, base = n / 2;
  uint64_t *keys = (uint64_t *)tu_xmalloc(n * 8), *values = (uint64_t *)tu_xmalloc(n * 8);
  tu_gen_unique_keys(&rng, 32, n, NULL, keys);
  tu_gen_values(&rng, 32, n, values);
  slices first, batch;
  cut(&first, m, keys, values, base);                    /* in before the armed call */
  if (op == ALLOC_INSERT) cut(&batch, m, keys + base, values + base, n - base);
  else cut(&batch, m, keys, values, base / 3);           /* erase / find: keys of the first part */
  uint32_t *all = (uint32_t *)tu_xmalloc(n * 4);
  for (uint64_t i = 0; i < n; ++i) all[i] = (uint32_t)keys[i];
  uint8_t *found = (uint8_t *)tu_xmalloc(n), *flags[DIST_MAX_M];
  for (unsigned s = 0; s < m; ++s) flags[s] = (uint8_t *)tu_xmalloc(batch.n[s] + 1);
  tu_tracker *tracker = tu_tracker_new();
  int reached_end = 0;
  for (uint64_t k = 1; k < 400 && !reached_end && tu_failure_count() == 0; ++k) {
    tu_set_phase("%s with allocation %llu failing", names[op], (unsigned long long)k);
    gh_dist_config c = dist_config(design, m);
    tu_tracker_attach(tracker, &c.table);
    gh_dist *d = NULL;
    if (!CHECK_OK(NULL, gh_dist_create(&c, &d))) break;
    if (!CHECK_OK(NULL, gh_dist_insert(d, (const void *const *)first.keys, (const void *const *)first.values, first.n,
                                       GH_OVERWRITE, NULL, NULL))) {
      gh_dist_destroy(d);
      break;
    }
    uint64_t count = 0, flagged = 0, size = 0;
    for (unsigned s = 0; s < m; ++s) memset(flags[s], 7, batch.n[s]);
    tu_tracker_fail_nth(tracker, k);
    gh_status got;
    if (op == ALLOC_INSERT)
      got = gh_dist_insert(d, (const void *const *)batch.keys, (const void *const *)batch.values, batch.n, GH_OVERWRITE,
                           flags, &count);
    else if (op == ALLOC_ERASE)
      got = gh_dist_erase(d, (const void *const *)batch.keys, batch.n, flags, &count);
    else
      got = gh_dist_find(d, (const void *const *)batch.keys, batch.n, NULL, flags, NULL);
    reached_end = !tu_tracker_injected(tracker);
    tu_tracker_fail_nth(tracker, 0);
    CHECK(got == GH_OK || got == GH_ERR_OUT_OF_MEMORY, "status %s: %s", gh_status_name(got), gh_dist_last_error(d));
    CHECK(got == GH_OK || !reached_end, "%s failed with no allocation failing", names[op]);
    if (op != ALLOC_FIND) {
      for (unsigned s = 0; s < m; ++s)
        for (uint64_t i = 0; i < batch.n[s]; ++i) {
          CHECK(flags[s][i] <= 1, "slice %u key %llu: flag %d not written", s, (unsigned long long)i, flags[s][i]);
          flagged += flags[s][i];
        }
      CHECK(flagged == count, "%llu flagged, the count says %llu", (unsigned long long)flagged, (unsigned long long)count);
    }
    /* Every key of the first part is in unless this erase flagged it; a new key is in unless
     * this insert flagged it. */
    if (find_all(d, all, n, found)) {
      uint64_t expected = 0;
      for (uint64_t i = 0; i < n; ++i) {
        int in = i < base;
        for (unsigned s = 0; s < m; ++s)
          for (uint64_t j = 0; j < batch.n[s]; ++j)
            if (batch.keys[s][j] == all[i]) {
              if (op == ALLOC_INSERT) in = !flags[s][j];
              if (op == ALLOC_ERASE && flags[s][j]) in = 0;
            }
        expected += (uint64_t)in;
        if (!CHECK(found[i] == in, "key %u: found %d, expected %d after %s returned %s", all[i], found[i], in,
                   names[op], gh_status_name(got)))
          break;
      }
      if (CHECK_OK(NULL, gh_dist_size(d, &size)))
        CHECK(size == expected, "size %llu, expected %llu", (unsigned long long)size, (unsigned long long)expected);
    }
    CHECK_OK(NULL, gh_dist_validate(d));
    gh_dist_destroy(d);
    tu_tracker_check_clean(tracker, "after gh_dist_destroy");
    tu_tracker_reset(tracker);
  }
  CHECK(reached_end, "%s still hit the armed failure after 400 allocations", names[op]);
  tu_tracker_delete(tracker);
  for (unsigned s = 0; s < m; ++s) free(flags[s]);
  free(found), free(all);
  free_slices(&first), free_slices(&batch);
  free(keys), free(values);
}

static void expect_create_refused(const gh_dist_config *c, gh_status want, const char *mention) {
  gh_dist *d = (gh_dist *)1;
  CHECK_STATUS(NULL, gh_dist_create(c, &d), want);
  CHECK(d == NULL, "a refused create left a table");
  CHECK(strstr(gh_dist_last_create_error(), mention) != NULL, "the message does not mention %s: %s", mention,
        gh_dist_last_create_error());
}

static void case_refusals(void) {
  gh_dist_config c = dist_config(GH_WARPDRIVE, 0);
  tu_set_phase("configs");
  expect_create_refused(&c, GH_ERR_INVALID_ARGUMENT, "partitions");
  c.partitions = GH_DIST_MAX_PARTITIONS + 1;
  expect_create_refused(&c, GH_ERR_INVALID_ARGUMENT, "partitions");
  c = dist_config(GH_HASHGRAPH, 2);
  c.table.variant = GH_VARIANT_MULTIVALUE;
  expect_create_refused(&c, GH_ERR_INVALID_ARGUMENT, "variant");
  c = dist_config(GH_WARPDRIVE, 2);
  c.table.backend = GH_BACKEND_CUDA;
  expect_create_refused(&c, GH_ERR_UNSUPPORTED, "NCCL");
  c = dist_config(GH_WARPDRIVE, 2);
  c.struct_size -= 8;
  expect_create_refused(&c, GH_ERR_INVALID_ARGUMENT, "struct_size");
  c = dist_config(GH_WARPDRIVE, 2);
  c.table.key_bits = 48;
  expect_create_refused(&c, GH_ERR_INVALID_ARGUMENT, "key_bits");

  tu_set_phase("calls");
  c = dist_config(GH_WARPDRIVE, 3);
  gh_dist *d = NULL;
  if (!CHECK_OK(NULL, gh_dist_create(&c, &d))) return;
  uint32_t keys[3] = {1, 2, 3}, values[3] = {10, 20, 30};
  const void *key_slices[3] = {&keys[0], &keys[1], &keys[2]}, *value_slices[3] = {&values[0], &values[1], &values[2]};
  const uint64_t n[3] = {1, 1, 1};
  CHECK_OK(NULL, gh_dist_insert(d, key_slices, value_slices, n, GH_OVERWRITE, NULL, NULL));
  const void *with_hole[3] = {&keys[0], NULL, &keys[2]};
  CHECK_STATUS(NULL, gh_dist_insert(d, NULL, value_slices, n, GH_OVERWRITE, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_dist_insert(d, key_slices, value_slices, NULL, GH_OVERWRITE, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_dist_insert(d, with_hole, value_slices, n, GH_OVERWRITE, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK(strstr(gh_dist_last_error(d), "keys[1]") != NULL, "message: %s", gh_dist_last_error(d));
  CHECK_STATUS(NULL, gh_dist_insert(d, key_slices, NULL, n, GH_OVERWRITE, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_dist_find(d, with_hole, n, NULL, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_dist_erase(d, with_hole, n, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  uint64_t size = 0, count = 0;
  if (CHECK_OK(NULL, gh_dist_size(d, &size))) CHECK(size == 3, "size %llu after refused calls", (unsigned long long)size);
  uint32_t out_keys[3], out_values[3];
  CHECK_STATUS(NULL, gh_dist_export(d, out_keys, out_values, 2, &count), GH_ERR_BUFFER_TOO_SMALL);
  CHECK(count == 3, "a too small export gives count %llu", (unsigned long long)count);
  CHECK_STATUS(NULL, gh_dist_export(d, out_keys, NULL, 3, &count), GH_ERR_INVALID_ARGUMENT);
  CHECK_OK(NULL, gh_dist_clear(d));
  if (CHECK_OK(NULL, gh_dist_size(d, &size))) CHECK(size == 0, "size %llu after clear", (unsigned long long)size);
  gh_dist_destroy(d);
}

int main(int argc, char **argv) {
  dist_seed = DIST_BASE_SEED;
  if (argc < 2 || strcmp(argv[1], "host") != 0) goto usage;
  for (int a = 2; a < argc; a += 2) {
    if (a + 1 < argc && strcmp(argv[a], "--seed") == 0 && tu_parse_u64(argv[a + 1], &dist_seed)) continue;
    goto usage;
  }
  static const gh_design designs[] = {GH_WARPDRIVE, GH_DYCUCKOO, GH_HASHGRAPH};
  static const unsigned parts[] = {1, 2, 3, 4, 7};
  for (size_t k = 0; k < sizeof designs / sizeof designs[0]; ++k)
    for (size_t j = 0; j < sizeof parts / sizeof parts[0]; ++j) {
      const char *name = tu_design_of(designs[k])->name;
      tu_set_context("dist host %s m = %u seed 0x%016llx", name, parts[j], (unsigned long long)dist_seed);
      case_slices(designs[k], parts[j]);
      case_one_partition(designs[k], parts[j]);
      case_add(designs[k], parts[j]);
      if (designs[k] == GH_WARPDRIVE) case_full(parts[j]);
      for (int op = ALLOC_INSERT; op <= ALLOC_FIND && parts[j] <= 4; ++op) case_alloc(designs[k], parts[j], (alloc_op)op);
      printf("dist host %s m = %u: %s\n", name, parts[j], tu_failure_count() ? "FAILED" : "ok");
      fflush(stdout);
    }
  tu_set_context("dist host refusals seed 0x%016llx", (unsigned long long)dist_seed);
  case_refusals();
  return tu_finish("dist");
usage:
  fprintf(stderr, "usage: %s host [--seed S]\n", argv[0]);
  return 2;
}
