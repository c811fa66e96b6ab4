/*
 * warpdrive - the warpdrive table's own promises, beyond the registry-driven matrix: its
 * cache-partitioned bulk insert (gh_config.bulk_min_keys).
 *
 *   warpdrive BACKEND [--part bulk|large|taken|config|sequence] [--seed S]
 *
 *   bulk    two tables of one config, one inserting every batch the ordinary way (bulk_min_keys
 *           UINT64_MAX), the other in the bulk rounds (bulk_min_keys 1): 32- and 64-bit keys, sets
 *           and 32- and 64-bit values, group sizes 1, 4 and 32, loads up to 0.5 and 0.95 in two
 *           batches with keys repeated inside and across batches and the special keys (the two
 *           out-of-band ones among them), under GH_ADD (every copy counted once) and GH_KEEP_FIRST.
 *           After each batch both tables validate (every key on its probe sequence, no empty slot
 *           before it, once), gh_find, gh_contains, the size and the export agree with the
 *           reference, and the two hold the same keys (under GH_ADD the same values); GH_MIN, GH_MAX
 *           and GH_OVERWRITE once each. Then two erase batches without erased_out (the bulk erase
 *           in the bulk table: present and absent keys, repeats, the special keys, the second
 *           batch meeting the first's tombstones): the counts gh_erase gives, validate, find,
 *           contains, size, export, and the two tables' keys agree. On the host the tables span 3 to 9 regions of 256 KB (on
 *           the GPU about 8 or 16 regions of 64 KB in shared memory for 4- and 8-byte slots, one
 *           region through L2 for 16-byte slots), so the rounds' partitions are tested too; a probe
 *           limit of two windows at load 0.95: GH_ERR_TABLE_FULL with the count of keys that did
 *           not fit, every other key stored, the table valid
 *   large   (CUDA) a table of 2^23 slots (1031 regions of 64 KB) filled to 0.9 in one batch under
 *           the default rule (bulk_min_keys 0), which takes the bulk insert (its one block of
 *           scratch asked for), against the reference and an ordinary table, then half its keys
 *           erased in one batch (the bulk erase); 64-bit keys and values (16-byte slots: rounds
 *           through L2, several quarter-L2 regions; the ordinary erase) in a table of 2^22 slots;
 *           2^24 keys into two tables of 2^29 + 2^24 slots (about 67600 regions, past the 65536 of
 *           16-bit region numbers) with bulk_min_keys 1, the same checks
 *   taken   when the bulk insert runs, through an allocator that records requests: a batch with
 *           the default bulk_min_keys on the host takes no scratch; with bulk_min_keys 1 it takes
 *           one block (the entries' two copies and the partition's work space) and gives it back;
 *           not with failed_out, and not after an erase (tombstones) until gh_compact; when that
 *           block is refused (an armed failure, or a memory limit) the batch goes in the ordinary
 *           way: GH_OK, no error text, the table as the reference says; the bulk erase asks for its
 *           block too, not with erased_out, and refused it erases the ordinary way; (CUDA) neither
 *           after gh_get_device_view
 *   config  bulk_min_keys given back by gh_get_config; a config of the size before the field (a
 *           program built against the older header) gets the default, 0
 *   sequence the probe sequence's locality (gpuhash/detail/probe.h), on a prime number of regions
 *           of 2^shift windows: a key's local windows are distinct and lie in the region of its
 *           first window, and the window_count windows after them are all distinct (the whole
 *           table); plain double hashing (shift 0) the same. For group sizes 1, 4 and 32 and
 *           capacities from 1000 to 2^22: gh_get_config's capacity at most 3 % above the one asked
 *           (plus a few windows), and the default probe limit as gpuhash.h documents it
 *
 * Every failure prints the case, the phase and the seed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuhash/detail/warpdrive.h"
#include "test_util.h"
#include "tracking_alloc.h"

#define WD_BASE_SEED 0x57A7D21Eull

static gh_backend wd_backend;
static uint64_t wd_seed;

static gh_config wd_config(unsigned key_bits, unsigned value_bits, unsigned group_size, uint64_t capacity,
                           uint64_t bulk_min_keys) {
  gh_config cfg = gh_config_default(GH_WARPDRIVE);
  cfg.backend = wd_backend;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  cfg.group_size = group_size;
  cfg.capacity = capacity;
  cfg.bulk_min_keys = bulk_min_keys;
  return cfg;
}

static void bulk_case(unsigned key_bits, unsigned value_bits, unsigned group_size, double load, gh_dup_policy policy) {
  const uint64_t capacity = 1ull << 17;
  tu_rng rng = tu_rng_make(tu_mix_seed(wd_seed, key_bits * 100u + value_bits, group_size, (uint64_t)(load * 100) * 8u + policy));
  tu_set_context("bulk k%u v%u g%u load %.2f policy %d seed 0x%016llx", key_bits, value_bits, group_size, load,
                 (int)policy, (unsigned long long)wd_seed);
  tu_table plain, bulk;
  gh_config a = wd_config(key_bits, value_bits, group_size, capacity, UINT64_MAX);
  gh_config b = wd_config(key_bits, value_bits, group_size, capacity, 1);
  if (!tu_table_create(&plain, &a)) return;
  if (!tu_table_create(&bulk, &b)) {
    tu_table_destroy(&plain);
    return;
  }
  /* Distinct keys for about load x the slots, each drawn about 1.5 times over two batches. */
  const uint64_t distinct = (uint64_t)(load * (double)plain.capacity) - 2u, n = distinct * 3u / 4u;
  uint64_t *pool = (uint64_t *)tu_xmalloc((size_t)distinct * 8u);
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)n * 8u), *values = (uint64_t *)tu_xmalloc((size_t)n * 8u);
  tu_gen_unique_keys(&rng, key_bits, distinct, NULL, pool);
  for (int batch = 0; batch < 2; ++batch) {
    tu_set_phase("batch %d", batch + 1);
    /* The first batch draws from the pool's first half, the second from all of it: repeats inside
     * each batch, and across them. */
    tu_gen_batch(&rng, key_bits, value_bits, pool, batch == 0 ? distinct / 2u : distinct, n, keys, values);
    const gh_dup_policy p = value_bits ? policy : GH_KEEP_FIRST;
    tu_insert_unreported(&plain, keys, values, n, p, 0);
    tu_insert_unreported(&bulk, keys, values, n, p, 0);
    tu_check_table(&plain, keys, n);
    tu_check_table(&bulk, keys, n);
    /* (GH_ADD, GH_MIN and GH_MAX give one value whatever the order) */
    tu_check_same_contents(&plain, &bulk, p == GH_ADD || p == GH_MIN || p == GH_MAX);
  }
  /* Two erase batches from the whole pool (present and absent keys, repeats, the special keys):
   * the second meets the first's tombstones. */
  for (int batch = 0; batch < 2; ++batch) {
    tu_set_phase("erase batch %d", batch + 1);
    tu_gen_batch(&rng, key_bits, value_bits, pool, distinct, n / 2u, keys, values);
    tu_erase_unreported(&plain, keys, n / 2u);
    tu_erase_unreported(&bulk, keys, n / 2u);
    tu_check_table(&plain, keys, n / 2u);
    tu_check_table(&bulk, keys, n / 2u);
    tu_check_same_contents(&plain, &bulk, value_bits && (policy == GH_ADD || policy == GH_MIN || policy == GH_MAX));
  }
  free(pool), free(keys), free(values);
  tu_table_destroy(&plain);
  tu_table_destroy(&bulk);
}

/* The bulk table against the reference and the ordinary table (values too: GH_ADD, GH_OVERWRITE of
 * distinct keys). */
static void check_bulk_table(tu_table *plain, tu_table *bulk, const uint64_t *keys, uint64_t n) {
  tu_check_table(bulk, keys, n);
  tu_check_same_contents(plain, bulk, 1);
}

/* After an insert of keys[0, n) into both tables: the checks, then keys[0, n / 2) erased from both
 * (the bulk one by the bulk erase, where it takes them) and the checks again. */
static void check_and_erase_half(tu_table *plain, tu_table *bulk, const uint64_t *keys, uint64_t n) {
  check_bulk_table(plain, bulk, keys, n);
  tu_set_phase("erase half the keys");
  tu_erase_unreported(plain, keys, n / 2u);
  tu_erase_unreported(bulk, keys, n / 2u);
  check_bulk_table(plain, bulk, keys, n);
}

/* A probe limit of two windows at load 0.95: some keys do not fit. */
static void bulk_full_case(unsigned key_bits) {
  tu_rng rng = tu_rng_make(tu_mix_seed(wd_seed, key_bits, 2, 95));
  tu_set_context("bulk into a full table k%u v32 g4, probe limit 2 windows seed 0x%016llx", key_bits,
                 (unsigned long long)wd_seed);
  gh_config cfg = wd_config(key_bits, 32, 4, 1ull << 17, 1);
  cfg.max_probe_windows = 2;
  tu_table h;
  if (!tu_table_create(&h, &cfg)) return;
  const uint64_t n = (uint64_t)(0.95 * (double)h.capacity);
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)n * 8u), *values = (uint64_t *)tu_xmalloc((size_t)n * 8u);
  tu_gen_unique_keys(&rng, key_bits, n, NULL, keys);
  tu_gen_values(&rng, 32, n, values);
  tu_set_phase("insert");
  if (CHECK(tu_insert_unreported(&h, keys, values, n, GH_OVERWRITE, 1) == GH_ERR_TABLE_FULL,
            "%llu distinct keys at load 0.95 with two windows each all fitted", (unsigned long long)n)) {
    /* Which keys fitted: every key found has its value; the rest are what the message counts. */
    const char *text = gh_last_error(h.table);
    char message[512];
    snprintf(message, sizeof message, "%s", text);
    void *packed = tu_pack(keys, n, key_bits);
    uint8_t *found = (uint8_t *)tu_xmalloc((size_t)n);
    void *got = tu_xmalloc((size_t)n * 4u);
    uint64_t *got_values = (uint64_t *)tu_xmalloc((size_t)n * 8u), stored = 0;
    if (CHECK_OK(h.table, gh_find(h.table, packed, n, got, found, NULL, NULL))) {
      tu_unpack(got, n, 32, got_values);
      uint8_t *missing = (uint8_t *)tu_xmalloc((size_t)n);
      for (uint64_t i = 0; i < n; ++i) {
        missing[i] = !found[i];
        stored += found[i];
        if (found[i] && !CHECK(got_values[i] == values[i], "key 0x%llx: value %llu, inserted %llu",
                               (unsigned long long)keys[i], (unsigned long long)got_values[i],
                               (unsigned long long)values[i]))
          break;
      }
      CHECK(tu_mentions_count(message, n - stored), "gh_last_error does not give the count %llu of keys that did "
            "not fit: \"%s\"", (unsigned long long)(n - stored), message);
      tu_ref_insert(&h.ref, keys, values, n, GH_OVERWRITE, missing);
      tu_check_status_flags(&h, 1);
      free(missing);
      tu_set_phase("after");
      tu_check_table(&h, keys, n);
    }
    free(packed), free(found), free(got), free(got_values);
  }
  free(keys), free(values);
  tu_table_destroy(&h);
}

/* A skewed batch (GH_PARTITION_LONGEST_RUN_REGIONS): one key repeated more times than four of the
 * host's 256 KB regions hold slots, beside distinct keys, inserted under GH_ADD and then erased with
 * its repeats, into a bulk table and an ordinary one: the same contents, the reference's values. The
 * bulk calls see the one run too long and leave the batch to the ordinary calls (that they do is not
 * visible here: on the GPU it is the difference between 1.46 s and 17 ms at 2^27 Zipf keys). */
static void bulk_skewed_case(unsigned key_bits) {
  tu_rng rng = tu_rng_make(tu_mix_seed(wd_seed, key_bits, 3, 4));
  tu_set_context("bulk of a skewed batch k%u v32 g4 seed 0x%016llx", key_bits, (unsigned long long)wd_seed);
  const uint64_t hot = 4u * (256u * 1024u / 8u) + 1000u, distinct = 20000u, n = hot + distinct;
  tu_table plain, bulk;
  gh_config a = wd_config(key_bits, 32, 4, 1ull << 17, UINT64_MAX), b = wd_config(key_bits, 32, 4, 1ull << 17, 1);
  if (!tu_table_create(&plain, &a)) return;
  if (tu_table_create(&bulk, &b)) {
    uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)n * 8u), *values = (uint64_t *)tu_xmalloc((size_t)n * 8u);
    tu_gen_skewed_batch(&rng, key_bits, distinct, hot, keys, values);
    tu_set_phase("insert");
    tu_insert_unreported(&plain, keys, values, n, GH_ADD, 0);
    tu_insert_unreported(&bulk, keys, values, n, GH_ADD, 0);
    check_and_erase_half(&plain, &bulk, keys, n);
    free(keys), free(values);
    tu_table_destroy(&bulk);
  }
  tu_table_destroy(&plain);
}

static void part_bulk(void) {
  static const unsigned widths[][2] = {{32, 0}, {32, 32}, {32, 64}, {64, 0}, {64, 32}, {64, 64}};
  static const unsigned groups[] = {1, 4, 32};
  static const double loads[] = {0.5, 0.95};
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w)
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; ++g)
      for (size_t l = 0; l < sizeof loads / sizeof loads[0]; ++l) {
        bulk_case(widths[w][0], widths[w][1], groups[g], loads[l], GH_ADD);
        if (widths[w][1] == 32 && groups[g] == 4) bulk_case(widths[w][0], widths[w][1], groups[g], loads[l], GH_KEEP_FIRST);
      }
  static const gh_dup_policy others[] = {GH_MIN, GH_MAX, GH_OVERWRITE};
  for (size_t p = 0; p < sizeof others / sizeof others[0]; ++p) bulk_case(32, 32, 4, 0.95, others[p]);
  bulk_full_case(32);
  bulk_full_case(64);
  bulk_skewed_case(32);
  bulk_skewed_case(64);
  printf("  bulk: %s\n", tu_failure_count() ? "FAILED" : "ok");
}

/* (CUDA) one batch of `keys` keys (0: enough to fill the table to load 0.9) into a large table: the
 * ordinary insert's table and the bulk insert's (asked for by bulk_min_keys, or left to the default)
 * hold the same pairs; the bulk one asked for its block of scratch. */
static void large_case(unsigned key_bits, unsigned value_bits, uint64_t slots, uint64_t bulk_min_keys, uint64_t keys_wanted) {
  tu_rng rng = tu_rng_make(tu_mix_seed(wd_seed, key_bits, value_bits, slots));
  tu_set_context("large: %llu slots k%u v%u g4, %llu keys (0: load 0.9), bulk_min_keys %llu seed 0x%016llx",
                 (unsigned long long)slots, key_bits, value_bits, (unsigned long long)keys_wanted,
                 (unsigned long long)bulk_min_keys, (unsigned long long)wd_seed);
  tu_tracker *tracker = tu_tracker_new();
  tu_table plain, bulk;
  gh_config a = wd_config(key_bits, value_bits, 4, slots, UINT64_MAX), b = wd_config(key_bits, value_bits, 4, slots, bulk_min_keys);
  tu_tracker_attach(tracker, &a);
  tu_tracker_attach(tracker, &b);
  if (tu_table_create(&plain, &a)) {
    if (tu_table_create(&bulk, &b)) {
      const uint64_t n = keys_wanted ? keys_wanted : (uint64_t)(0.9 * (double)plain.capacity);
      uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)n * 8u), *values = (uint64_t *)tu_xmalloc((size_t)n * 8u);
      tu_gen_unique_keys(&rng, key_bits, n, NULL, keys);
      tu_gen_values(&rng, value_bits, n, values);
      tu_set_phase("one batch");
      uint64_t before = tu_tracker_requests(tracker, GH_MEMORY_DEVICE) + tu_tracker_requests(tracker, GH_MEMORY_HOST);
      tu_insert_unreported(&plain, keys, values, n, GH_OVERWRITE, 0);
      uint64_t middle = tu_tracker_requests(tracker, GH_MEMORY_DEVICE) + tu_tracker_requests(tracker, GH_MEMORY_HOST);
      tu_insert_unreported(&bulk, keys, values, n, GH_OVERWRITE, 0);
      uint64_t after = tu_tracker_requests(tracker, GH_MEMORY_DEVICE) + tu_tracker_requests(tracker, GH_MEMORY_HOST);
      CHECK(after - middle == middle - before + 1u, "the bulk table's insert asked for %llu allocations, the ordinary "
            "one's %llu: the bulk insert's block was not asked for", (unsigned long long)(after - middle),
            (unsigned long long)(middle - before));
      check_and_erase_half(&plain, &bulk, keys, n);
      free(keys), free(values);
      tu_table_destroy(&bulk);
    }
    tu_table_destroy(&plain);
  }
  tu_tracker_check_clean(tracker, "after gh_destroy");
  tu_tracker_delete(tracker);
}

static void part_large(void) {
  if (wd_backend != GH_BACKEND_CUDA) {
    printf("  large: on the CUDA backend only (the host's default never takes the bulk insert)\n");
    return;
  }
  large_case(32, 32, 1ull << 23, 0, 0);
  large_case(64, 64, 1ull << 22, 1, 0);
  /* More than 65536 regions of 64 KB (4.3 GB of slots each table): region numbers of 4 bytes. */
  large_case(32, 32, (1ull << 29) + (1ull << 24), 1, 1ull << 24);
  printf("  large: %s\n", tu_failure_count() ? "FAILED" : "ok");
}

/* One batch of fresh keys through the tracker (with a memory limit for the insert alone when
 * limit is not 0); returns the allocations the insert asked for. */
static uint64_t tracked_batch(tu_table *h, tu_tracker *tracker, tu_rng *rng, uint64_t n, int with_failed_out,
                              size_t limit) {
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)n * 8u), *values = (uint64_t *)tu_xmalloc((size_t)n * 8u);
  tu_gen_unique_keys(rng, 32, n, &h->ref, keys);
  tu_gen_values(rng, 32, n, values);
  const uint64_t before = tu_tracker_requests(tracker, GH_MEMORY_HOST) + tu_tracker_requests(tracker, GH_MEMORY_DEVICE);
  tu_tracker_set_limit(tracker, limit);
  if (with_failed_out)
    tu_insert(h, keys, values, n, GH_OVERWRITE, 0, NULL);
  else
    tu_insert_unreported(h, keys, values, n, GH_OVERWRITE, 0);
  tu_tracker_set_limit(tracker, 0);
  const uint64_t asked =
      tu_tracker_requests(tracker, GH_MEMORY_HOST) + tu_tracker_requests(tracker, GH_MEMORY_DEVICE) - before;
  tu_check_find(h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
  tu_check_valid(h);
  free(keys), free(values);
  return asked;
}

/* Allocations an insert batch asks for besides the bulk insert's (a CUDA table stages host
 * inputs), measured with the bulk insert off. */
static uint64_t staging_requests(tu_tracker *tracker, tu_rng *rng) {
  gh_config cfg = wd_config(32, 32, 4, 1ull << 17, UINT64_MAX);
  tu_tracker_attach(tracker, &cfg);
  tu_table h;
  uint64_t asked = 0;
  if (tu_table_create(&h, &cfg)) {
    asked = tracked_batch(&h, tracker, rng, 1000, 0, 0);
    tu_table_destroy(&h);
  }
  tu_tracker_reset(tracker);
  return asked;
}

/* Whether a batch (32-bit keys and values) asks for the bulk insert's block: under a memory limit
 * that leaves room for the batch's staging (keys, values and flags: 9 bytes a key) but not for that
 * block (the entries twice: 16 bytes a key, and more), an ask is a refusal; the batch goes in all
 * the same. */
static int asks_for_bulk(tu_table *h, tu_tracker *tracker, tu_rng *rng, uint64_t n, int with_failed_out) {
  const size_t live = tu_tracker_live_bytes(tracker, GH_MEMORY_HOST) + tu_tracker_live_bytes(tracker, GH_MEMORY_DEVICE);
  const uint64_t refused = tu_tracker_limit_refusals(tracker);
  tracked_batch(h, tracker, rng, n, with_failed_out, live + (size_t)n * 10u + 1024u);
  return tu_tracker_limit_refusals(tracker) > refused;
}

/* Whether an erase of n of the stored keys asks for the bulk erase's block, under the same kind of
 * limit (room for the keys' staging, not for two copies of them as slots); with erased_out it goes
 * through tu_erase. The erase happens all the same. */
static int asks_for_bulk_erase(tu_table *h, tu_tracker *tracker, uint64_t n, int with_erased_out) {
  const uint64_t stored = tu_ref_size(&h->ref);
  uint64_t *all = (uint64_t *)tu_xmalloc((size_t)(stored + 1) * 8u);
  tu_ref_keys(&h->ref, all);
  if (n > stored) n = stored;
  const size_t live = tu_tracker_live_bytes(tracker, GH_MEMORY_HOST) + tu_tracker_live_bytes(tracker, GH_MEMORY_DEVICE);
  const uint64_t refused = tu_tracker_limit_refusals(tracker);
  tu_tracker_set_limit(tracker, live + (size_t)n * 10u + 1024u);
  if (with_erased_out)
    tu_erase(h, all, n);
  else
    tu_erase_unreported(h, all, n);
  tu_tracker_set_limit(tracker, 0);
  tu_check_valid(h);
  tu_check_size(h);
  free(all);
  return tu_tracker_limit_refusals(tracker) > refused;
}

static void part_taken(void) {
  tu_tracker *tracker = tu_tracker_new();
  tu_rng rng = tu_rng_make(tu_mix_seed(wd_seed, 7, 7, 7));
  tu_set_context("taken seed 0x%016llx", (unsigned long long)wd_seed);
  const uint64_t staging = staging_requests(tracker, &rng);
  tu_table h;
  if (wd_backend == GH_BACKEND_HOST) {
    tu_set_phase("default bulk_min_keys on the host");
    gh_config cfg = wd_config(32, 32, 4, 1ull << 17, 0);
    tu_tracker_attach(tracker, &cfg);
    if (tu_table_create(&h, &cfg)) {
      CHECK(!asks_for_bulk(&h, tracker, &rng, 50000, 0), "the host's default took the bulk insert");
      tu_table_destroy(&h);
    }
    tu_tracker_reset(tracker);
  }
  gh_config cfg = wd_config(32, 32, 4, 1ull << 17, 1);
  tu_tracker_attach(tracker, &cfg);
  if (!tu_table_create(&h, &cfg)) {
    tu_tracker_delete(tracker);
    return;
  }
  const size_t live = tu_tracker_live_bytes(tracker, GH_MEMORY_HOST) + tu_tracker_live_bytes(tracker, GH_MEMORY_DEVICE);
  tu_set_phase("bulk_min_keys 1");
  uint64_t asked = tracked_batch(&h, tracker, &rng, 20000, 0, 0);
  CHECK(asked == staging + 1u, "a batch asked for %llu allocations; the bulk insert takes one block besides the %llu "
        "of staging", (unsigned long long)asked, (unsigned long long)staging);
  CHECK(tu_tracker_live_bytes(tracker, GH_MEMORY_HOST) + tu_tracker_live_bytes(tracker, GH_MEMORY_DEVICE) == live,
        "the bulk insert kept memory");
  tu_set_phase("the bulk insert's block refused: a memory limit");
  CHECK(asks_for_bulk(&h, tracker, &rng, 20000, 0), "a batch under the limit did not ask for the bulk insert's block");
  tu_set_phase("the bulk insert's block refused: an armed failure");
  tu_tracker_fail_nth(tracker, staging + 1u);
  tracked_batch(&h, tracker, &rng, 20000, 0, 0);
  CHECK(tu_tracker_injected(tracker), "the armed failure of the allocation after staging did not happen");
  tu_tracker_fail_nth(tracker, 0);
  tu_set_phase("with failed_out");
  CHECK(!asks_for_bulk(&h, tracker, &rng, 20000, 1), "a batch with failed_out asked for the bulk insert's block");
  tu_set_phase("after an erase");
  const uint64_t stored = tu_ref_size(&h.ref);
  uint64_t *all = (uint64_t *)tu_xmalloc((size_t)(stored + 1) * 8u);
  tu_ref_keys(&h.ref, all);
  tu_erase(&h, all, 100);
  free(all);
  CHECK(!asks_for_bulk(&h, tracker, &rng, 2000, 0), "a batch into a table with tombstones asked for the bulk insert");
  tu_set_phase("after gh_compact");
  CHECK_OK(h.table, gh_compact(h.table, NULL));
  CHECK(asks_for_bulk(&h, tracker, &rng, 2000, 0), "a batch after gh_compact did not ask for the bulk insert");
  tu_check_export(&h, 4);
  tu_set_phase("after gh_clear");
  tu_clear(&h);
  CHECK(asks_for_bulk(&h, tracker, &rng, 2000, 0), "a batch after gh_clear did not ask for the bulk insert");
  tu_set_phase("erase");
  CHECK(asks_for_bulk_erase(&h, tracker, 500, 0), "an erase batch did not ask for the bulk erase's block");
  tu_set_phase("erase with erased_out");
  CHECK(!asks_for_bulk_erase(&h, tracker, 500, 1), "an erase batch with erased_out asked for the bulk erase's block");
  if (wd_backend == GH_BACKEND_CUDA) {
    tu_set_phase("after gh_get_device_view");
    gh_device_view view;
    if (CHECK_OK(h.table, gh_get_device_view(h.table, &view))) {
      CHECK(!asks_for_bulk(&h, tracker, &rng, 2000, 0), "a batch into a table whose device view was taken asked for "
            "the bulk insert");
      CHECK(!asks_for_bulk_erase(&h, tracker, 500, 0), "an erase from a table whose device view was taken asked for "
            "the bulk erase's block");
    }
  }
  tu_table_destroy(&h);
  tu_tracker_check_clean(tracker, "after gh_destroy");
  tu_tracker_delete(tracker);
  printf("  taken: %s\n", tu_failure_count() ? "FAILED" : "ok");
}

static void part_config(void) {
  tu_set_context("config");
  gh_config cfg = wd_config(32, 32, 4, 1000, 12345);
  gh_table *t = NULL;
  if (CHECK_OK(NULL, gh_create(&cfg, &t))) {
    gh_config got;
    if (CHECK_OK(t, gh_get_config(t, &got)))
      CHECK(got.bulk_min_keys == 12345, "gh_get_config gives bulk_min_keys %llu for 12345",
            (unsigned long long)got.bulk_min_keys);
    gh_destroy(t);
  }
  /* A program built against the header before bulk_min_keys: its struct ends with bin_vertices
   * (and the padding after it); what lies beyond is not read. */
  tu_set_phase("a config of the size before bulk_min_keys");
  gh_config old;
  memset(&old, 0x5A, sizeof old);
  if (CHECK_OK(NULL, gh_config_init(&old, offsetof(gh_config, bulk_min_keys), GH_VERSION_NUMBER, GH_WARPDRIVE))) {
    old.backend = wd_backend;
    if (CHECK_OK(NULL, gh_create(&old, &t))) {
      gh_config got;
      if (CHECK_OK(t, gh_get_config(t, &got)))
        CHECK(got.bulk_min_keys == 0, "bulk_min_keys %llu, not the default 0", (unsigned long long)got.bulk_min_keys);
      gh_destroy(t);
    }
  }
  printf("  config: %s\n", tu_failure_count() ? "FAILED" : "ok");
}

/* One key's sequence on geometry g: the local windows distinct and in the region of the first,
 * then any window_count consecutive windows all distinct. */
static void check_sequence(const gh_wd_geometry *g, uint64_t key, uint8_t *seen) {
  const uint64_t span = 1ull << g->local_shift;
  gh_probe p = gh_wd_probe_begin(g, key);
  const uint64_t region = p.window >> g->local_shift;
  memset(seen, 0, (size_t)g->window_count);
  for (uint32_t a = 0; a < g->local_windows; ++a, gh_wd_probe_next(g, &p)) {
    if (!CHECK(p.attempt == a && p.window >> g->local_shift == region && p.window < g->window_count,
               "key 0x%llx: window %u of its sequence is %llu, outside region %llu (%llu windows each, %llu in all)",
               (unsigned long long)key, a, (unsigned long long)p.window, (unsigned long long)region,
               (unsigned long long)span, (unsigned long long)g->window_count) ||
        !CHECK(!seen[p.window], "key 0x%llx: window %llu twice among its first %u", (unsigned long long)key,
               (unsigned long long)p.window, g->local_windows))
      return;
    seen[p.window] = 1;
  }
  memset(seen, 0, (size_t)g->window_count);
  uint64_t distinct = 0;
  for (uint64_t step = 0; step < g->window_count; ++step, gh_wd_probe_next(g, &p)) {
    if (!CHECK(p.window < g->window_count, "key 0x%llx: window %llu of %llu", (unsigned long long)key,
               (unsigned long long)p.window, (unsigned long long)g->window_count))
      return;
    distinct += !seen[p.window];
    seen[p.window] = 1;
  }
  CHECK(distinct == g->window_count, "key 0x%llx: its sequence after the local windows visits %llu of %llu windows",
        (unsigned long long)key, (unsigned long long)distinct, (unsigned long long)g->window_count);
}

static void part_sequence(void) {
  tu_rng rng = tu_rng_make(tu_mix_seed(wd_seed, 5, 5, 5));
  tu_set_context("sequence seed 0x%016llx", (unsigned long long)wd_seed);
  /* A prime number of regions of 2^shift windows (shift 0: plain double hashing), local windows. */
  const struct {
    uint64_t regions;
    unsigned shift, local;
  } shapes[] = {{1031, 5, 16}, {1031, 2, 4}, {3, 11, 16}, {5003, 0, 0}, {2053, 4, 16}, {1, 0, 0}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    for (unsigned key_bits = 32; key_bits <= 64; key_bits += 32) {
      tu_set_phase("%llu regions of 2^%u windows, %u local, %u-bit keys", (unsigned long long)shapes[s].regions,
                   shapes[s].shift, shapes[s].local, key_bits);
      gh_wd_geometry g;
      memset(&g, 0, sizeof g);
      g.window_count = shapes[s].regions << shapes[s].shift;
      g.max_probe_windows = g.window_count + shapes[s].local;
      g.seed = tu_next(&rng);
      g.window_width = 4;
      g.key_bits = key_bits;
      g.value_bits = 32;
      g.slot_bytes = gh_wd_slot_bytes(key_bits, 32);
      g.local_shift = shapes[s].shift;
      g.local_windows = shapes[s].local;
      uint8_t *seen = (uint8_t *)tu_xmalloc((size_t)g.window_count);
      const unsigned long before = tu_failure_count();
      for (int k = 0; k < 200 && tu_failure_count() == before; ++k)
        check_sequence(&g, tu_next(&rng) & gh_slot_key_mask(key_bits), seen);
      free(seen);
    }
  }
  /* What gh_get_config gives back: at most a few per cent more slots than asked, and the default
   * probe limit as documented. */
  const unsigned groups[] = {1, 4, 32};
  const uint64_t capacities[] = {1000, 1ull << 14, 1ull << 16, 1ull << 19, 1ull << 22, 3000000};
  for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; ++gi) {
    for (size_t c = 0; c < sizeof capacities / sizeof capacities[0]; ++c) {
      tu_set_phase("group size %u, capacity %llu", groups[gi], (unsigned long long)capacities[c]);
      gh_config cfg = wd_config(32, 32, groups[gi], capacities[c], 0);
      gh_table *t = NULL;
      gh_config got;
      if (!CHECK_OK(NULL, gh_create(&cfg, &t))) continue;
      if (CHECK_OK(t, gh_get_config(t, &got))) {
        const uint64_t windows = got.capacity / groups[gi];
        CHECK(got.capacity >= capacities[c] && (double)got.capacity <= 1.03 * (double)capacities[c] + 64.0 * groups[gi],
              "capacity %llu for %llu asked", (unsigned long long)got.capacity, (unsigned long long)capacities[c]);
        uint64_t region_windows = 1;
        while (region_windows * 2u <= GH_WD_LOCAL_REGION_BYTES / (groups[gi] * 8u) &&
               (windows + region_windows * 2u - 1u) / (region_windows * 2u) >= GH_WD_LOCAL_MIN_REGIONS)
          region_windows *= 2u;
        const uint64_t local = region_windows == 1 ? 0 : (region_windows < 16 ? region_windows : 16);
        uint64_t expected = windows + local;
        if (expected > GH_WD_DEFAULT_PROBE_SLOTS / groups[gi]) expected = GH_WD_DEFAULT_PROBE_SLOTS / groups[gi];
        CHECK(got.max_probe_windows == expected, "probe limit %llu windows, documented %llu (%llu windows)",
              (unsigned long long)got.max_probe_windows, (unsigned long long)expected, (unsigned long long)windows);
        /* "larger values are cut to W" (W = the windows plus a region's local ones) */
        gh_table *unlimited = NULL;
        gh_config asked_more = cfg, cut;
        asked_more.max_probe_windows = UINT64_MAX;
        if (CHECK_OK(NULL, gh_create(&asked_more, &unlimited)) && CHECK_OK(unlimited, gh_get_config(unlimited, &cut)))
          CHECK(cut.max_probe_windows == windows + local, "max_probe_windows asked UINT64_MAX: %llu, W is %llu",
                (unsigned long long)cut.max_probe_windows, (unsigned long long)(windows + local));
        gh_destroy(unlimited);
      }
      gh_destroy(t);
    }
  }
  printf("  sequence: %s\n", tu_failure_count() ? "FAILED" : "ok");
}

typedef struct wd_part {
  const char *name;
  void (*run)(void);
} wd_part;

static const wd_part wd_parts[] = {{"bulk", part_bulk}, {"large", part_large}, {"taken", part_taken},
                                   {"config", part_config}, {"sequence", part_sequence}};

int main(int argc, char **argv) {
  const wd_part *part = NULL;
  wd_seed = WD_BASE_SEED;
  tu_install_crash_handler();
  if (argc < 2 || !tu_parse_backend(argv[1], &wd_backend)) goto usage;
  for (int a = 2; a < argc; a += 2) {
    if (a + 1 >= argc) goto usage;
    if (strcmp(argv[a], "--part") == 0) {
      for (size_t i = 0; i < sizeof wd_parts / sizeof wd_parts[0]; ++i)
        if (strcmp(argv[a + 1], wd_parts[i].name) == 0) part = &wd_parts[i];
      if (part == NULL) goto usage;
    } else if (strcmp(argv[a], "--seed") == 0) {
      if (!tu_parse_u64(argv[a + 1], &wd_seed)) goto usage;
    } else {
      goto usage;
    }
  }
  tu_skip_unless_backend_usable(wd_backend);
  for (size_t i = 0; i < sizeof wd_parts / sizeof wd_parts[0]; ++i) {
    if (part != NULL && part != &wd_parts[i]) continue;
    printf("warpdrive %s %s (seed 0x%016llx)\n", tu_backend_name(wd_backend), wd_parts[i].name,
           (unsigned long long)wd_seed);
    fflush(stdout);
    wd_parts[i].run();
  }
  return tu_finish("warpdrive");
usage:
  fprintf(stderr, "usage: %s host|cuda [--part bulk|large|taken|config|sequence] [--seed S]\n", argv[0]);
  return 2;
}
