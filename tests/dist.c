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
 *   host-sided  gh_dist_insert_host / gh_dist_find_host with a staging size of a few keys (many
 *               batches): keys repeated in the array keep their first value (GH_KEEP_FIRST) or
 *               add up (GH_ADD) batch after batch, found values against the model
 *   refusals    NULL keys / n, a NULL slice with keys, a map without values: refused, nothing
 *               changed; configs with 0 or too many partitions, a multi-value variant, no
 *               timeout or staging, an exchange_overlap out of range, the CUDA backend where
 *               there is no GPU refused with a message; the communicator id's text form and
 *               file, there and back, bad texts and files, a file that never comes (GH_ERR_PEER)
 *
 *   dist cuda [--seed S]
 *
 * The CUDA backend over NCCL (skipped without a GPU): on 1 GPU (m = 1) and, where the machine
 * has more, 2 GPUs and all of them, driven by this process, for warpdrive, dycuckoo and
 * hashgraph (warpdrive also with exchange_overlap), random keys in
 * device slices (a key given in two slices too) inserted, found, erased and exported, every
 * result identical to one plain CUDA table given the same keys; the host-sided calls with small
 * batches against the same plain table; a full warpdrive: GH_ERR_TABLE_FULL with failed_out
 * flagging exactly the keys not found; an allocator failing the k-th allocation of an insert, an
 * erase and a find for every k (on 1 and 2 GPUs: flags, size, validate, no leak); slices in host
 * memory refused. (One process per GPU:
 * examples/dist_ranks.c, run as the test dist_ranks_cuda.)
 *
 * Every failure prints the case, the phase and the seed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuhash_dist.h"
#include "test_util.h"
#include "tracking_alloc.h"
#if defined(GH_TEST_HAVE_CUDART)
#include <cuda_runtime_api.h>
#endif

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
static const char *const alloc_op_names[] = {"insert", "erase", "find"};

/* op on the slices (keys as values for an insert) with the tracker's k-th allocation armed to
 * fail: the status must be GH_OK or GH_ERR_OUT_OF_MEMORY, GH_OK once no allocation failed
 * (*reached_end). */
static gh_status armed_call(gh_dist *d, tu_tracker *tracker, uint64_t k, alloc_op op, const void *const *keys,
                            const uint64_t *n, uint8_t *const *flags, uint64_t *count, int *reached_end) {
  tu_tracker_fail_nth(tracker, k);
  gh_status got;
  if (op == ALLOC_INSERT) got = gh_dist_insert(d, keys, keys, n, GH_OVERWRITE, flags, count);
  else if (op == ALLOC_ERASE) got = gh_dist_erase(d, keys, n, flags, count);
  else got = gh_dist_find(d, keys, n, NULL, flags, NULL);
  *reached_end = !tu_tracker_injected(tracker);
  tu_tracker_fail_nth(tracker, 0);
  CHECK(got == GH_OK || got == GH_ERR_OUT_OF_MEMORY, "status %s: %s", gh_status_name(got), gh_dist_last_error(d));
  CHECK(got == GH_OK || !*reached_end, "%s failed with no allocation failing", alloc_op_names[op]);
  return got;
}

/* After an armed call: each flag written (0 or 1) and the count theirs (insert, erase). */
static void check_flags(alloc_op op, const uint8_t *flags, uint64_t n, uint64_t count) {
  uint64_t flagged = 0;
  for (uint64_t i = 0; op != ALLOC_FIND && i < n; ++i) {
    if (!CHECK(flags[i] <= 1, "key %llu: flag %d not written", (unsigned long long)i, flags[i])) return;
    flagged += flags[i];
  }
  if (op != ALLOC_FIND)
    CHECK(flagged == count, "%llu flagged, the count says %llu", (unsigned long long)flagged, (unsigned long long)count);
}

/* After an armed call: key i of all is found exactly when in[i] (found: a find of them), the size
 * counts them, validate; then the table goes, leaving nothing. */
static void check_after_armed(gh_dist *d, tu_tracker *tracker, const uint32_t *all, uint64_t n, const uint8_t *found,
                              const uint8_t *in, alloc_op op, gh_status got) {
  uint64_t expected = 0, size = 0;
  for (uint64_t i = 0; i < n; ++i) {
    expected += in[i];
    if (!CHECK(found[i] == in[i], "key %u: found %d, expected %d after %s returned %s", all[i], found[i], in[i],
               alloc_op_names[op], gh_status_name(got)))
      break;
  }
  if (CHECK_OK(NULL, gh_dist_size(d, &size)))
    CHECK(size == expected, "size %llu, expected %llu", (unsigned long long)size, (unsigned long long)expected);
  CHECK_OK(NULL, gh_dist_validate(d));
  gh_dist_destroy(d);
  tu_tracker_check_clean(tracker, "after gh_dist_destroy");
  tu_tracker_reset(tracker);
}

/* One table per k: base keys in, the k-th allocation of op armed to fail, then the promises. */
static void case_alloc(gh_design design, unsigned m, alloc_op op) {
  tu_rng rng = tu_rng_make(tu_mix_seed(dist_seed, design, m, 4 + op));
  const uint64_t n = 1500, base = n / 2;
  uint64_t *keys = (uint64_t *)tu_xmalloc(n * 8);
  tu_gen_unique_keys(&rng, 32, n, NULL, keys);
  slices first, batch;
  cut(&first, m, keys, keys, base);                      /* in before the armed call */
  if (op == ALLOC_INSERT) cut(&batch, m, keys + base, keys + base, n - base);
  else cut(&batch, m, keys, keys, base / 3);             /* erase / find: keys of the first part */
  uint32_t *all = (uint32_t *)tu_xmalloc(n * 4);
  for (uint64_t i = 0; i < n; ++i) all[i] = (uint32_t)keys[i];
  uint8_t *found = (uint8_t *)tu_xmalloc(n), *in = (uint8_t *)tu_xmalloc(n), *flags[DIST_MAX_M];
  for (unsigned s = 0; s < m; ++s) flags[s] = (uint8_t *)tu_xmalloc(batch.n[s] + 1);
  tu_tracker *tracker = tu_tracker_new();
  int reached_end = 0;
  for (uint64_t k = 1; k < 400 && !reached_end && tu_failure_count() == 0; ++k) {
    tu_set_phase("%s with allocation %llu failing", alloc_op_names[op], (unsigned long long)k);
    gh_dist_config c = dist_config(design, m);
    tu_tracker_attach(tracker, &c.table);
    gh_dist *d = NULL;
    if (!CHECK_OK(NULL, gh_dist_create(&c, &d))) break;
    if (!CHECK_OK(NULL, gh_dist_insert(d, (const void *const *)first.keys, (const void *const *)first.keys, first.n,
                                       GH_OVERWRITE, NULL, NULL))) {
      gh_dist_destroy(d);
      break;
    }
    uint64_t count = 0;
    for (unsigned s = 0; s < m; ++s) memset(flags[s], 7, batch.n[s]);
    const gh_status got = armed_call(d, tracker, k, op, (const void *const *)batch.keys, batch.n, flags, &count,
                                     &reached_end);
    /* The slices' flags in one array, and which keys must be in: every key of the first part
     * unless this erase flagged it; a new key unless this insert flagged it. */
    uint8_t *flat = (uint8_t *)tu_xmalloc(n + 1);
    uint64_t at = 0;
    for (unsigned s = 0; s < m; ++s) memcpy(flat + at, flags[s], batch.n[s]), at += batch.n[s];
    check_flags(op, flat, at, count);
    for (uint64_t i = 0; i < n; ++i) {
      in[i] = i < base;
      for (unsigned s = 0; s < m; ++s)
        for (uint64_t j = 0; j < batch.n[s]; ++j)
          if (batch.keys[s][j] == all[i]) {
            if (op == ALLOC_INSERT) in[i] = !flags[s][j];
            if (op == ALLOC_ERASE && flags[s][j]) in[i] = 0;
          }
    }
    free(flat);
    if (find_all(d, all, n, found)) check_after_armed(d, tracker, all, n, found, in, op, got);
    else gh_dist_destroy(d), tu_tracker_reset(tracker);
  }
  CHECK(reached_end, "%s still hit the armed failure after 400 allocations", alloc_op_names[op]);
  tu_tracker_delete(tracker);
  for (unsigned s = 0; s < m; ++s) free(flags[s]);
  free(found), free(in), free(all);
  free_slices(&first), free_slices(&batch);
  free(keys);
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
  if (!gh_cuda_available()) {
    c = dist_config(GH_WARPDRIVE, 2);
    c.table.backend = GH_BACKEND_CUDA;
    expect_create_refused(&c, GH_ERR_NO_DEVICE, "CUDA");
    gh_dist_id id;
    CHECK(gh_dist_id_new(&id) == GH_ERR_NO_DEVICE, "gh_dist_id_new without a GPU");
  }
  c = dist_config(GH_WARPDRIVE, 2);
  c.timeout_seconds = 0;
  expect_create_refused(&c, GH_ERR_INVALID_ARGUMENT, "timeout_seconds");
  c = dist_config(GH_WARPDRIVE, 2);
  c.staging_bytes = 0;
  expect_create_refused(&c, GH_ERR_INVALID_ARGUMENT, "staging_bytes");
  c = dist_config(GH_WARPDRIVE, 2);
  c.exchange_overlap = 2;
  expect_create_refused(&c, GH_ERR_INVALID_ARGUMENT, "exchange_overlap");
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
  CHECK_STATUS(NULL, gh_dist_insert_host(d, NULL, values, 3, GH_OVERWRITE, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_dist_insert_host(d, keys, NULL, 3, GH_OVERWRITE, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_dist_find_host(d, NULL, 3, NULL, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_OK(NULL, gh_dist_insert_host(d, NULL, NULL, 0, GH_OVERWRITE, NULL, NULL));
  if (CHECK_OK(NULL, gh_dist_size(d, &size))) CHECK(size == 3, "size %llu after refused calls", (unsigned long long)size);
  double rate = 0;
  CHECK_STATUS(NULL, gh_dist_measure_exchange(d, 1 << 20, 3, &rate), GH_ERR_UNSUPPORTED);
  gh_dist_times times;
  CHECK_OK(NULL, gh_dist_last_times(d, &times));
  CHECK_OK(NULL, gh_dist_clear(d));
  if (CHECK_OK(NULL, gh_dist_size(d, &size))) CHECK(size == 0, "size %llu after clear", (unsigned long long)size);
  gh_dist_destroy(d);

  tu_set_phase("the id's text");
  gh_dist_id id, back;
  for (unsigned i = 0; i < GH_DIST_ID_BYTES; ++i) id.bytes[i] = (unsigned char)(i * 37u + 5u);
  char text[GH_DIST_ID_TEXT_SIZE];
  CHECK_OK(NULL, gh_dist_id_to_text(&id, text, sizeof text));
  CHECK(strlen(text) == 2 * GH_DIST_ID_BYTES, "text of %zu characters", strlen(text));
  CHECK_OK(NULL, gh_dist_id_from_text(text, &back));
  CHECK(memcmp(&id, &back, sizeof id) == 0, "the id did not come back from its text");
  CHECK_STATUS(NULL, gh_dist_id_to_text(&id, text, sizeof text - 1), GH_ERR_INVALID_ARGUMENT);
  memset(&back, 0, sizeof back);
  text[7] = 'g';
  CHECK_STATUS(NULL, gh_dist_id_from_text(text, &back), GH_ERR_INVALID_ARGUMENT);
  text[7] = '0';
  text[100] = '\0';
  CHECK_STATUS(NULL, gh_dist_id_from_text(text, &back), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_dist_id_from_text("", &back), GH_ERR_INVALID_ARGUMENT);
  CHECK(back.bytes[0] == 0, "a refused text wrote the id");

  tu_set_phase("the id through a file");
  char path[] = "/tmp/gpuhash-test-id-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0, "mkstemp");
  close(fd);
  CHECK_OK(NULL, gh_dist_id_save(&id, path));
  CHECK_OK(NULL, gh_dist_id_load(path, 0.0, &back));
  CHECK(memcmp(&id, &back, sizeof id) == 0, "the id did not come back from its file");
  FILE *f = fopen(path, "w");
  REQUIRE(f != NULL, "rewrite %s", path);
  fputs("not an id", f);
  fclose(f);
  memset(&back, 0, sizeof back);
  CHECK_STATUS(NULL, gh_dist_id_load(path, 0.0, &back), GH_ERR_INVALID_ARGUMENT);
  CHECK(back.bytes[0] == 0, "a bad file wrote the id");
  remove(path);
  const double before = tu_seconds();
  CHECK_STATUS(NULL, gh_dist_id_load(path, 0.2, &back), GH_ERR_PEER);
  CHECK(tu_seconds() - before >= 0.2, "gave up on a missing file after %.3f s", tu_seconds() - before);
  CHECK(strstr(gh_dist_last_create_error(), path) != NULL, "message: %s", gh_dist_last_create_error());
  CHECK_STATUS(NULL, gh_dist_id_save(&id, "/nonexistent-dir/id"), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_dist_id_save(NULL, path), GH_ERR_INVALID_ARGUMENT);
}

/* The host-sided calls: an array of n keys with repeats (a third of the positions repeat an
 * earlier key with another value), batches of `batch` keys per partition. */
static void case_host_sided(gh_design design, unsigned m, gh_dup_policy policy) {
  tu_rng rng = tu_rng_make(tu_mix_seed(dist_seed, design, m, 7 + (unsigned)policy));
  const uint64_t unique = 3000, n = 4500, absent = 1000;
  uint64_t *pool = (uint64_t *)tu_xmalloc((unique + absent) * 8);
  tu_gen_unique_keys(&rng, 32, unique + absent, NULL, pool);
  uint32_t *keys = (uint32_t *)tu_xmalloc(n * 4), *values = (uint32_t *)tu_xmalloc(n * 4);
  uint64_t *wide_keys = (uint64_t *)tu_xmalloc(n * 8), *wide_values = (uint64_t *)tu_xmalloc(n * 8);
  for (uint64_t i = 0; i < n; ++i) {
    keys[i] = (uint32_t)(i < unique ? pool[i] : pool[tu_below(&rng, unique)]);
    values[i] = (uint32_t)(tu_next(&rng) & 0xFFFFu);
    wide_keys[i] = keys[i], wide_values[i] = values[i];
  }
  /* The model takes the array batch by batch: in array order across batches, as one gh_insert
   * (any copy may win) within a batch. */
  const uint64_t batch = 37u * m;
  tu_ref ref;
  tu_ref_init(&ref, 32, 32);
  for (uint64_t lo = 0; lo < n; lo += batch)
    tu_ref_insert(&ref, wide_keys + lo, wide_values + lo, n - lo < batch ? n - lo : batch, policy, NULL);
  free(wide_keys), free(wide_values);
  gh_dist_config c = dist_config(design, m);
  c.staging_bytes = 8u * 37u; /* 37 pairs per partition and batch */
  gh_dist *d = NULL;
  uint8_t *failed = (uint8_t *)tu_xmalloc(n);
  uint32_t *queries = (uint32_t *)tu_xmalloc((unique + absent) * 4), *found_values = (uint32_t *)tu_xmalloc((unique + absent) * 4);
  uint8_t *found = (uint8_t *)tu_xmalloc(unique + absent);
  tu_set_phase("host-sided, policy %d", (int)policy);
  if (!CHECK_OK(NULL, gh_dist_create(&c, &d))) goto done;
  uint64_t failed_count = 99;
  memset(failed, 7, n);
  CHECK_OK(NULL, gh_dist_insert_host(d, keys, values, n, policy, failed, &failed_count));
  CHECK(failed_count == 0, "failed %llu", (unsigned long long)failed_count);
  for (uint64_t i = 0; i < n; ++i)
    if (!CHECK(failed[i] == 0, "key %llu flagged %d", (unsigned long long)i, failed[i])) break;
  for (uint64_t i = 0; i < unique + absent; ++i) queries[i] = (uint32_t)pool[i];
  const uint32_t fallback = 0xABCDu;
  if (CHECK_OK(NULL, gh_dist_find_host(d, queries, unique + absent, found_values, found, &fallback)))
    for (uint64_t i = 0; i < unique + absent; ++i) {
      const int present = tu_ref_contains(&ref, pool[i]);
      char allowed[64];
      tu_ref_describe(&ref, pool[i], allowed, sizeof allowed);
      if (!CHECK(found[i] == present && (present ? tu_ref_value_allowed(&ref, pool[i], found_values[i])
                                                 : found_values[i] == fallback),
                 "key %u: found %d value %u, expected %s", queries[i], found[i], found_values[i], allowed))
        break;
    }
  uint64_t size = 0;
  if (CHECK_OK(NULL, gh_dist_size(d, &size))) CHECK(size == unique, "size %llu, expected %llu", (unsigned long long)size,
                                                  (unsigned long long)unique);
  CHECK_OK(NULL, gh_dist_validate(d));
done:
  gh_dist_destroy(d);
  tu_ref_free(&ref);
  free(pool), free(keys), free(values), free(failed), free(queries), free(found_values), free(found);
}

/* ---- The CUDA backend --------------------------------------------------------------------------- */
#if defined(GH_TEST_HAVE_CUDART)

static void *to_device(int device, const void *host, size_t bytes) {
  void *p = NULL;
  cudaSetDevice(device);
  REQUIRE(cudaMalloc(&p, bytes ? bytes : 1) == cudaSuccess, "cudaMalloc of %zu bytes on device %d", bytes, device);
  if (host && bytes) cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
  return p;
}

static void to_host(void *host, const void *device, size_t bytes) {
  if (bytes) REQUIRE(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy to the host");
}

/* n 32-bit words cut into m device slices (slice s: [s n / m, (s + 1) n / m) on device s). */
#define DIST_MAX_GPUS 8

typedef struct device_slices {
  unsigned m;
  uint64_t n[DIST_MAX_GPUS], at[DIST_MAX_GPUS];
  void *ptr[DIST_MAX_GPUS];
} device_slices;

static device_slices to_slices(unsigned m, const void *words, uint64_t n, size_t width) {
  device_slices x;
  memset(&x, 0, sizeof x);
  x.m = m;
  for (unsigned s = 0; s < m; ++s) {
    x.at[s] = n * s / m;
    x.n[s] = n * (s + 1u) / m - x.at[s];
    x.ptr[s] = to_device((int)s, words ? (const char *)words + x.at[s] * width : NULL, x.n[s] * width);
  }
  return x;
}

static void slices_to_host(const device_slices *x, void *words, size_t width) {
  for (unsigned s = 0; s < x->m; ++s) to_host((char *)words + x->at[s] * width, x->ptr[s], x->n[s] * width);
}

static void free_device_slices(device_slices *x) {
  for (unsigned s = 0; s < x->m; ++s) cudaFree(x->ptr[s]);
}

static int by_key(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Both tables' contents, as sorted (key << 32 | value) words, must be the same. */
static void check_same_contents(gh_dist *d, gh_table *plain, uint64_t capacity) {
  uint32_t *keys = (uint32_t *)tu_xmalloc(capacity * 4 + 4), *values = (uint32_t *)tu_xmalloc(capacity * 4 + 4);
  uint64_t *a = (uint64_t *)tu_xmalloc(capacity * 8 + 8), *b = (uint64_t *)tu_xmalloc(capacity * 8 + 8);
  uint64_t count_d = 0, count_p = 0;
  if (CHECK_OK(NULL, gh_dist_export(d, keys, values, capacity, &count_d))) {
    for (uint64_t i = 0; i < count_d; ++i) a[i] = (uint64_t)keys[i] << 32 | values[i];
    if (CHECK_OK(plain, gh_export(plain, keys, values, capacity, &count_p, NULL))) {
      for (uint64_t i = 0; i < count_p; ++i) b[i] = (uint64_t)keys[i] << 32 | values[i];
      qsort(a, count_d, 8, by_key);
      qsort(b, count_p, 8, by_key);
      CHECK(count_d == count_p && memcmp(a, b, count_d * 8) == 0, "exports differ: %llu pairs against the plain "
            "table's %llu", (unsigned long long)count_d, (unsigned long long)count_p);
    }
  }
  free(keys), free(values), free(a), free(b);
}

/* Finds the queries in both (device slices; host for the plain table): the same values and
 * found flags; the results are left in values / found. */
static void check_same_finds(gh_dist *d, gh_table *plain, unsigned m, const uint32_t *queries, uint64_t n,
                             uint32_t *values, uint8_t *found) {
  device_slices q = to_slices(m, queries, n, 4), v = to_slices(m, NULL, n, 4), f = to_slices(m, NULL, n, 1);
  const uint32_t fallback = 0xFA11u;
  uint32_t *plain_values = (uint32_t *)tu_xmalloc(n * 4 + 4);
  uint8_t *plain_found = (uint8_t *)tu_xmalloc(n + 1);
  if (CHECK_OK(NULL, gh_dist_find(d, (const void *const *)q.ptr, q.n, v.ptr, (uint8_t *const *)f.ptr, &fallback)) &&
      CHECK_OK(plain, gh_find(plain, queries, n, plain_values, plain_found, &fallback, NULL))) {
    slices_to_host(&v, values, 4);
    slices_to_host(&f, found, 1);
    for (uint64_t i = 0; i < n; ++i)
      if (!CHECK(values[i] == plain_values[i] && found[i] == plain_found[i],
                 "query %llu (key %u): found %d value %u, the plain table %d %u", (unsigned long long)i, queries[i],
                 found[i], values[i], plain_found[i], plain_values[i]))
        break;
  }
  free(plain_values), free(plain_found);
  free_device_slices(&q), free_device_slices(&v), free_device_slices(&f);
}

static int exchange_overlap; /* the config the CUDA cases run with */

static gh_dist_config cuda_config(gh_design design, unsigned m, uint64_t capacity) {
  gh_dist_config c = dist_config(design, m);
  c.exchange_overlap = exchange_overlap;
  c.table.backend = GH_BACKEND_CUDA;
  c.table.capacity = capacity;
  c.timeout_seconds = 60;
  return c;
}

/* Slices on m GPUs against one plain CUDA table of the same keys. */
static void case_cuda(gh_design design, unsigned m) {
  tu_rng rng = tu_rng_make(tu_mix_seed(dist_seed, design, m, 11));
  const uint64_t unique = 100000, n = 110000, absent = 20000;
  uint64_t *pool = (uint64_t *)tu_xmalloc((unique + absent) * 8);
  tu_gen_unique_keys(&rng, 32, unique + absent, NULL, pool);
  /* The last positions repeat earlier keys (in the other slice, mostly): GH_ADD sums them. */
  uint32_t *keys = (uint32_t *)tu_xmalloc(n * 4), *values = (uint32_t *)tu_xmalloc(n * 4);
  for (uint64_t i = 0; i < n; ++i) {
    keys[i] = (uint32_t)(i < unique ? pool[i] : pool[tu_below(&rng, unique)]);
    values[i] = (uint32_t)(tu_next(&rng) & 0xFFFFu);
  }
  uint32_t *queries = (uint32_t *)tu_xmalloc((unique + absent) * 4);
  for (uint64_t i = 0; i < unique + absent; ++i) queries[i] = (uint32_t)pool[(i * 7919u) % (unique + absent)];
  uint32_t *before_values = (uint32_t *)tu_xmalloc((unique + absent) * 4), *after_values = (uint32_t *)tu_xmalloc((unique + absent) * 4);
  uint8_t *before_found = (uint8_t *)tu_xmalloc(unique + absent), *after_found = (uint8_t *)tu_xmalloc(unique + absent);
  const uint64_t capacity = design == GH_HASHGRAPH ? 2 * n : 2 * unique;
  gh_dist_config c = cuda_config(design, m, capacity / m);
  gh_config plain_config = c.table;
  plain_config.capacity = capacity;
  gh_dist *d = NULL;
  gh_table *plain = NULL;
  device_slices k = to_slices(m, keys, n, 4), v = to_slices(m, values, n, 4), failed = to_slices(m, NULL, n, 1);
  uint8_t *flags = (uint8_t *)tu_xmalloc(n);
  tu_set_phase("create");
  if (!CHECK_OK(NULL, gh_dist_create(&c, &d))) {
    printf("    %s\n", gh_dist_last_create_error());
    goto done;
  }
  REQUIRE(gh_create(&plain_config, &plain) == GH_OK, "the plain table: %s", gh_last_create_error());
  CHECK(gh_dist_local_partitions(d) == m, "local partitions %u", gh_dist_local_partitions(d));

  tu_set_phase("insert");
  uint64_t failed_count = 99;
  CHECK_OK(NULL, gh_dist_insert(d, (const void *const *)k.ptr, (const void *const *)v.ptr, k.n, GH_ADD,
                                (uint8_t *const *)failed.ptr, &failed_count));
  CHECK(failed_count == 0, "failed %llu", (unsigned long long)failed_count);
  slices_to_host(&failed, flags, 1);
  for (uint64_t i = 0; i < n; ++i)
    if (!CHECK(flags[i] == 0, "key %llu flagged", (unsigned long long)i)) break;
  CHECK_OK(plain, gh_insert(plain, keys, values, n, GH_ADD, NULL, NULL));
  gh_dist_times times;
  if (CHECK_OK(NULL, gh_dist_last_times(d, &times)))
    CHECK(times.table_ms > 0 && (m == 1 || (times.multisplit_ms > 0 && times.exchange_ms > 0)),
          "times: multisplit %g exchange %g table %g ms", times.multisplit_ms, times.exchange_ms, times.table_ms);
  tu_set_phase("after the insert");
  CHECK_OK(NULL, gh_dist_validate(d));
  uint64_t size = 0, plain_size = 0;
  if (CHECK_OK(NULL, gh_dist_size(d, &size)) && CHECK_OK(plain, gh_size(plain, &plain_size)))
    CHECK(size == plain_size && size == unique, "size %llu, the plain table's %llu, keys %llu", (unsigned long long)size,
          (unsigned long long)plain_size, (unsigned long long)unique);
  check_same_contents(d, plain, capacity);
  check_same_finds(d, plain, m, queries, unique + absent, before_values, before_found);

  tu_set_phase("erase a third");
  uint32_t *gone = (uint32_t *)tu_xmalloc(unique / 3 * 4 + 4);
  const uint64_t gone_n = unique / 3;
  for (uint64_t i = 0; i < gone_n; ++i) gone[i] = (uint32_t)pool[3 * i];
  device_slices g = to_slices(m, gone, gone_n, 4), erased = to_slices(m, NULL, gone_n, 1);
  uint64_t erased_count = 0, plain_erased = 0;
  if (CHECK_OK(NULL, gh_dist_erase(d, (const void *const *)g.ptr, g.n, (uint8_t *const *)erased.ptr, &erased_count))) {
    slices_to_host(&erased, flags, 1);
    uint64_t flagged = 0;
    for (uint64_t i = 0; i < gone_n; ++i) flagged += flags[i];
    CHECK(erased_count == gone_n && flagged == gone_n, "erased %llu, flagged %llu of %llu",
          (unsigned long long)erased_count, (unsigned long long)flagged, (unsigned long long)gone_n);
  }
  CHECK_OK(plain, gh_erase(plain, gone, gone_n, NULL, &plain_erased, NULL));
  CHECK_OK(NULL, gh_dist_validate(d));
  check_same_contents(d, plain, capacity);
  check_same_finds(d, plain, m, queries, unique + absent, after_values, after_found);
  free_device_slices(&g), free_device_slices(&erased);
  free(gone);

  tu_set_phase("slices in host memory");
  const void *host_keys[DIST_MAX_GPUS] = {keys, keys + 1, keys, keys, keys, keys, keys, keys};
  const uint64_t host_n[DIST_MAX_GPUS] = {1, 1, 1, 1, 1, 1, 1, 1};
  CHECK_STATUS(NULL, gh_dist_find(d, host_keys, host_n, NULL, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK(strstr(gh_dist_last_error(d), "memory") != NULL, "message: %s", gh_dist_last_error(d));

  tu_set_phase("host-sided");
  gh_dist_destroy(d);
  d = NULL;
  c.staging_bytes = 8u * 5000u; /* 5000 pairs per GPU and batch */
  if (CHECK_OK(NULL, gh_dist_create(&c, &d))) {
    memset(flags, 7, n);
    failed_count = 99;
    CHECK_OK(NULL, gh_dist_insert_host(d, keys, values, n, GH_ADD, flags, &failed_count));
    CHECK(failed_count == 0, "host-sided insert: failed %llu", (unsigned long long)failed_count);
    for (uint64_t i = 0; i < n; ++i)
      if (!CHECK(flags[i] == 0, "host-sided insert: key %llu flagged %d", (unsigned long long)i, flags[i])) break;
    const uint32_t fallback = 0xFA11u;
    if (CHECK_OK(NULL, gh_dist_find_host(d, queries, unique + absent, after_values, after_found, &fallback)))
      for (uint64_t i = 0; i < unique + absent; ++i)
        if (!CHECK(after_values[i] == before_values[i] && after_found[i] == before_found[i],
                   "host-sided find of key %u: %d %u, the slices' %d %u", queries[i], after_found[i], after_values[i],
                   before_found[i], before_values[i]))
          break;
    CHECK_OK(NULL, gh_dist_validate(d));
  }
done:
  gh_dist_destroy(d);
  gh_destroy(plain);
  free_device_slices(&k), free_device_slices(&v), free_device_slices(&failed);
  free(pool), free(keys), free(values), free(queries), free(flags);
  free(before_values), free(after_values), free(before_found), free(after_found);
}

/* As case_alloc, on the GPUs: the allocator (the tables' and the exchange buffers', host and
 * device) fails the k-th allocation of an insert, an erase or a find of device slices, for every
 * k until the call gets through; the flags against a find of every key, the size, validate, no
 * leak. */
static void case_cuda_alloc(unsigned m, alloc_op op) {
  tu_rng rng = tu_rng_make(tu_mix_seed(dist_seed, 77, m, 4 + op));
  const uint64_t n = 20000, base = n / 2;
  uint64_t *wide = (uint64_t *)tu_xmalloc(n * 8);
  tu_gen_unique_keys(&rng, 32, n, NULL, wide);
  uint32_t *all = (uint32_t *)tu_xmalloc(n * 4);
  for (uint64_t i = 0; i < n; ++i) all[i] = (uint32_t)wide[i];
  const uint32_t *batch_keys = op == ALLOC_INSERT ? all + base : all;
  const uint64_t batch_n = op == ALLOC_INSERT ? n - base : base / 3;
  device_slices first = to_slices(m, all, base, 4), batch = to_slices(m, batch_keys, batch_n, 4);
  device_slices flags = to_slices(m, NULL, batch_n, 1);
  uint8_t *host_flags = (uint8_t *)tu_xmalloc(batch_n), *found = (uint8_t *)tu_xmalloc(n), *in = (uint8_t *)tu_xmalloc(n);
  tu_tracker *tracker = tu_tracker_new();
  int reached_end = 0;
  for (uint64_t k = 1; k < 400 && !reached_end && tu_failure_count() == 0; ++k) {
    tu_set_phase("%s on %u GPUs with allocation %llu failing", alloc_op_names[op], m, (unsigned long long)k);
    gh_dist_config c = cuda_config(GH_WARPDRIVE, m, 2 * n / m);
    tu_tracker_attach(tracker, &c.table);
    gh_dist *d = NULL;
    if (!CHECK_OK(NULL, gh_dist_create(&c, &d))) break;
    if (!CHECK_OK(NULL, gh_dist_insert(d, (const void *const *)first.ptr, (const void *const *)first.ptr, first.n,
                                       GH_OVERWRITE, NULL, NULL))) {
      gh_dist_destroy(d);
      break;
    }
    for (unsigned s = 0; s < m; ++s) cudaSetDevice((int)s), cudaMemset(flags.ptr[s], 7, flags.n[s] ? flags.n[s] : 1);
    for (unsigned s = 0; s < m; ++s) cudaSetDevice((int)s), cudaDeviceSynchronize(); /* (before the library's streams) */
    uint64_t count = 0;
    const gh_status got = armed_call(d, tracker, k, op, (const void *const *)batch.ptr, batch.n,
                                     (uint8_t *const *)flags.ptr, &count, &reached_end);
    slices_to_host(&flags, host_flags, 1);
    check_flags(op, host_flags, batch_n, count);
    /* Batch key j is all[j], or all[base + j] for an insert. */
    for (uint64_t i = 0; i < n; ++i) {
      in[i] = i < base;
      if (op == ALLOC_INSERT && i >= base) in[i] = !host_flags[i - base];
      if (op == ALLOC_ERASE && i < batch_n && host_flags[i]) in[i] = 0;
    }
    if (CHECK_OK(NULL, gh_dist_find_host(d, all, n, NULL, found, NULL))) check_after_armed(d, tracker, all, n, found, in, op, got);
    else gh_dist_destroy(d), tu_tracker_reset(tracker);
  }
  CHECK(reached_end, "%s still hit the armed failure after 400 allocations", alloc_op_names[op]);
  tu_tracker_delete(tracker);
  free_device_slices(&first), free_device_slices(&batch), free_device_slices(&flags);
  free(wide), free(all), free(host_flags), free(found), free(in);
}

/* Partitions of 2048 slots given 3x as many keys: GH_ERR_TABLE_FULL on every GPU, failed_out
 * flags exactly the keys a find does not see. */
static void case_cuda_full(unsigned m) {
  tu_rng rng = tu_rng_make(tu_mix_seed(dist_seed, 99, m, 12));
  const uint64_t n = 3u * 2048u * m;
  uint64_t *wide = (uint64_t *)tu_xmalloc(n * 8);
  tu_gen_unique_keys(&rng, 32, n, NULL, wide);
  uint32_t *keys = (uint32_t *)tu_xmalloc(n * 4);
  for (uint64_t i = 0; i < n; ++i) keys[i] = (uint32_t)wide[i];
  gh_dist_config c = cuda_config(GH_WARPDRIVE, m, 2048);
  gh_dist *d = NULL;
  device_slices k = to_slices(m, keys, n, 4), failed = to_slices(m, NULL, n, 1), found = to_slices(m, NULL, n, 1);
  uint8_t *flags = (uint8_t *)tu_xmalloc(n), *seen = (uint8_t *)tu_xmalloc(n);
  tu_set_phase("full");
  if (CHECK_OK(NULL, gh_dist_create(&c, &d))) {
    uint64_t failed_count = 0, flagged = 0;
    CHECK_STATUS(NULL, gh_dist_insert(d, (const void *const *)k.ptr, (const void *const *)k.ptr, k.n, GH_OVERWRITE,
                                      (uint8_t *const *)failed.ptr, &failed_count), GH_ERR_TABLE_FULL);
    CHECK(strstr(gh_dist_last_error(d), "partition") != NULL, "message: %s", gh_dist_last_error(d));
    slices_to_host(&failed, flags, 1);
    if (CHECK_OK(NULL, gh_dist_find(d, (const void *const *)k.ptr, k.n, NULL, (uint8_t *const *)found.ptr, NULL))) {
      slices_to_host(&found, seen, 1);
      for (uint64_t i = 0; i < n; ++i) {
        flagged += flags[i];
        if (!CHECK(flags[i] == !seen[i], "key %u: failed flag %d, found %d", keys[i], flags[i], seen[i])) break;
      }
    }
    uint64_t size = 0;
    if (CHECK_OK(NULL, gh_dist_size(d, &size)))
      CHECK(failed_count == flagged && size + flagged == n, "failed %llu, flagged %llu, size %llu of %llu keys",
            (unsigned long long)failed_count, (unsigned long long)flagged, (unsigned long long)size, (unsigned long long)n);
    CHECK_OK(NULL, gh_dist_validate(d));
  }
  gh_dist_destroy(d);
  free_device_slices(&k), free_device_slices(&failed), free_device_slices(&found);
  free(wide), free(keys), free(flags), free(seen);
}

static int run_cuda(void) {
  int gpus = 0;
  if (!gh_cuda_available() || cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    printf("SKIPPED: no GPU here\n");
    return 77;
  }
  static const gh_design designs[] = {GH_WARPDRIVE, GH_DYCUCKOO, GH_HASHGRAPH};
  /* 1 GPU, 2, and every GPU here (up to DIST_MAX_GPUS); warpdrive also with the exchange overlapped. */
  const unsigned all = gpus > DIST_MAX_GPUS ? DIST_MAX_GPUS : (unsigned)gpus;
  const unsigned counts[3] = {1, all >= 2 ? 2u : 0u, all > 2 ? all : 0u};
  for (unsigned j = 0; j < 3; ++j) {
    const unsigned m = counts[j];
    if (m == 0) continue;
    for (size_t k = 0; k < sizeof designs / sizeof designs[0]; ++k)
      for (exchange_overlap = 0; exchange_overlap <= (designs[k] == GH_WARPDRIVE && m > 1); ++exchange_overlap) {
        const char *name = tu_design_of(designs[k])->name;
        tu_set_context("dist cuda %s m = %u overlap %d seed 0x%016llx", name, m, exchange_overlap,
                       (unsigned long long)dist_seed);
        case_cuda(designs[k], m);
        printf("dist cuda %s m = %u overlap %d: %s\n", name, m, exchange_overlap, tu_failure_count() ? "FAILED" : "ok");
        fflush(stdout);
      }
    exchange_overlap = 0;
    tu_set_context("dist cuda full m = %u seed 0x%016llx", m, (unsigned long long)dist_seed);
    case_cuda_full(m);
    tu_set_context("dist cuda alloc m = %u seed 0x%016llx", m, (unsigned long long)dist_seed);
    for (int op = ALLOC_INSERT; op <= ALLOC_FIND && m <= 2; ++op) case_cuda_alloc(m, (alloc_op)op);
  }
  if (gpus < 2) printf("dist cuda: one GPU here, the cases on several GPUs did not run\n");
  return tu_finish("dist cuda");
}
#else
static int run_cuda(void) {
  printf("SKIPPED: no GPU here (built without CUDA)\n");
  return 77;
}
#endif

int main(int argc, char **argv) {
  dist_seed = DIST_BASE_SEED;
  if (argc < 2 || (strcmp(argv[1], "host") != 0 && strcmp(argv[1], "cuda") != 0)) goto usage;
  for (int a = 2; a < argc; a += 2) {
    if (a + 1 < argc && strcmp(argv[a], "--seed") == 0 && tu_parse_u64(argv[a + 1], &dist_seed)) continue;
    goto usage;
  }
  if (strcmp(argv[1], "cuda") == 0) return run_cuda();
  static const gh_design designs[] = {GH_WARPDRIVE, GH_DYCUCKOO, GH_HASHGRAPH};
  static const unsigned parts[] = {1, 2, 3, 4, 7};
  for (size_t k = 0; k < sizeof designs / sizeof designs[0]; ++k)
    for (size_t j = 0; j < sizeof parts / sizeof parts[0]; ++j) {
      const char *name = tu_design_of(designs[k])->name;
      tu_set_context("dist host %s m = %u seed 0x%016llx", name, parts[j], (unsigned long long)dist_seed);
      case_slices(designs[k], parts[j]);
      case_one_partition(designs[k], parts[j]);
      case_add(designs[k], parts[j]);
      case_host_sided(designs[k], parts[j], GH_KEEP_FIRST);
      case_host_sided(designs[k], parts[j], GH_ADD);
      if (designs[k] == GH_WARPDRIVE) case_full(parts[j]);
      for (int op = ALLOC_INSERT; op <= ALLOC_FIND && parts[j] <= 4; ++op) case_alloc(designs[k], parts[j], (alloc_op)op);
      printf("dist host %s m = %u: %s\n", name, parts[j], tu_failure_count() ? "FAILED" : "ok");
      fflush(stdout);
    }
  tu_set_context("dist host refusals seed 0x%016llx", (unsigned long long)dist_seed);
  case_refusals();
  return tu_finish("dist");
usage:
  fprintf(stderr, "usage: %s host|cuda [--seed S]\n", argv[0]);
  return 2;
}
