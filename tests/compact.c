/*
 * compact - gh_compact on every design that has it (GH_CAP_COMPACT), on either backend.
 *
 *   compact host|cuda [--design NAME] [--seed S]
 *
 * For key widths 32 / 64 and value widths 0 / 32 / 64: random keys (a few sentinel patterns among
 * them: all ones, all ones minus one, 0) inserted, 90 % erased in
 * rounds with new keys inserted between them (the tombstones pile up), then gh_compact: the
 * export before and after is the same set of pairs, every key is found with its value and every
 * erased key absent, gh_size and validate hold, and gh_get_stats' tombstones is 0 (warpdrive
 * counts more than 0 before); then an insert of new keys and a second gh_compact (nothing left to
 * remove) keep it so; gh_compact of an empty table. An allocator that fails the k-th allocation
 * of gh_compact for every k until it gets through: the call succeeds (warpdrive then rehashes in
 * place) or fails with GH_ERR_OUT_OF_MEMORY and the table is unchanged (the same export, size,
 * validate, the same tombstones); either way the pairs are the same and nothing leaks.
 * warpdrive also at load 0.95 after rounds of churn, every window and slot width, compacted with
 * memory (the rebuild), with room for both, one or none of the rehash's bitmaps, and within
 * gh_config.compact_scratch_bytes budgets that fit the bitmaps or nothing (case_churn).
 * A design without GH_CAP_COMPACT must answer GH_ERR_UNSUPPORTED naming gh_compact.
 * Every failure prints the case, the phase and the seed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuhash.h"
#include "test_util.h"
#include "tracking_alloc.h"

#define COMPACT_BASE_SEED 0xC0C0A7ull

static uint64_t compact_seed;

typedef struct pair {
  uint64_t key, value;
} pair;

static int by_key(const void *a, const void *b) {
  const uint64_t x = ((const pair *)a)->key, y = ((const pair *)b)->key;
  return (x > y) - (x < y);
}

/* The table's pairs sorted by key (keys are unique in a map), count in *n; freed by the caller. */
static pair *sorted_pairs(gh_table *t, unsigned key_bits, unsigned value_bits, uint64_t *n) {
  uint64_t size = 0, count = 0;
  *n = 0;
  if (!CHECK_OK(t, gh_size(t, &size))) return NULL;
  void *keys = tu_xmalloc(size * 8 + 8), *values = value_bits ? tu_xmalloc(size * 8 + 8) : NULL;
  pair *pairs = (pair *)tu_xmalloc(size * sizeof(pair) + sizeof(pair));
  if (CHECK_OK(t, gh_export(t, keys, values, size, &count, NULL))) {
    for (uint64_t i = 0; i < count; ++i) {
      pairs[i].key = key_bits == 32 ? ((uint32_t *)keys)[i] : ((uint64_t *)keys)[i];
      pairs[i].value = value_bits == 0 ? 0 : value_bits == 32 ? ((uint32_t *)values)[i] : ((uint64_t *)values)[i];
    }
    qsort(pairs, count, sizeof *pairs, by_key);
    *n = count;
  }
  free(keys), free(values);
  return pairs;
}

static uint64_t tombstones(gh_table *t) {
  gh_stats stats;
  return CHECK_OK(t, gh_get_stats(t, &stats)) ? stats.tombstones : 0;
}

static void write_words(void *array, const uint64_t *words, uint64_t n, unsigned bits) {
  for (uint64_t i = 0; i < n; ++i) {
    if (bits == 32) ((uint32_t *)array)[i] = (uint32_t)words[i];
    else if (bits == 64) ((uint64_t *)array)[i] = words[i];
  }
}

/* Every key of the model present with its value, every erased one absent. */
static void check_contents(gh_table *t, const tu_ref *ref, const uint64_t *keys, uint64_t n, unsigned key_bits,
                           unsigned value_bits) {
  void *packed = tu_xmalloc(n * 8 + 8), *values = tu_xmalloc(n * 8 + 8);
  uint8_t *found = (uint8_t *)tu_xmalloc(n + 1);
  write_words(packed, keys, n, key_bits);
  if (CHECK_OK(t, gh_find(t, packed, n, value_bits ? values : NULL, found, NULL, NULL)))
    for (uint64_t i = 0; i < n; ++i) {
      const int present = tu_ref_contains(ref, keys[i]);
      const uint64_t value = value_bits == 32 ? ((uint32_t *)values)[i] : value_bits == 64 ? ((uint64_t *)values)[i] : 0;
      if (!CHECK(found[i] == present && (!present || tu_ref_value_allowed(ref, keys[i], value)),
                 "key %llu: found %d value %llu, expected %s", (unsigned long long)keys[i], found[i],
                 (unsigned long long)value, present ? "present" : "absent"))
        break;
    }
  free(packed), free(values), free(found);
}

static void same_pairs(const pair *a, uint64_t na, const pair *b, uint64_t nb, const char *what) {
  CHECK(na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0), "%s: %llu pairs before, %llu after, or different",
        what, (unsigned long long)na, (unsigned long long)nb);
}

static void case_widths(const tu_design *design, gh_backend backend, unsigned key_bits, unsigned value_bits) {
  tu_rng rng = tu_rng_make(tu_mix_seed(compact_seed, key_bits, value_bits, backend));
  const uint64_t n = 6000, rounds = 3;
  uint64_t *keys = (uint64_t *)tu_xmalloc((n * (rounds + 1) + 3) * 8), *values = (uint64_t *)tu_xmalloc((n + 3) * 8);
  tu_gen_unique_keys(&rng, key_bits, n * (rounds + 1), NULL, keys);
  /* Sentinel patterns among the first round's keys that stay: what a table keeps apart from its
   * slots. */
  keys[n - 1] = tu_mask(key_bits), keys[n - 2] = tu_mask(key_bits) - 1u, keys[n - 3] = 0;
  gh_config c = gh_config_default(design->design);
  c.backend = backend;
  c.key_bits = key_bits;
  c.value_bits = value_bits;
  c.capacity = 2 * n;
  c.seed = compact_seed;
  gh_table *t = NULL;
  tu_ref ref;
  tu_ref_init(&ref, key_bits, value_bits);
  void *packed = tu_xmalloc(n * 8), *packed_values = tu_xmalloc(n * 8);
  tu_set_phase("create k%u v%u", key_bits, value_bits);
  if (!CHECK_OK(NULL, gh_create(&c, &t))) goto done;
  /* Rounds: insert n keys, erase 90 % of them; the erased slots stay as tombstones. */
  for (uint64_t r = 0; r < rounds && tu_failure_count() == 0; ++r) {
    const uint64_t *batch = keys + r * n;
    tu_set_phase("round %llu: insert", (unsigned long long)r);
    tu_gen_values(&rng, value_bits, n, values);
    write_words(packed, batch, n, key_bits), write_words(packed_values, values, n, value_bits);
    CHECK_OK(t, gh_insert(t, packed, value_bits ? packed_values : NULL, n, GH_OVERWRITE, NULL, NULL));
    tu_ref_insert(&ref, batch, value_bits ? values : NULL, n, GH_OVERWRITE, NULL);
    tu_set_phase("round %llu: erase 90 %%", (unsigned long long)r);
    const uint64_t gone = n * 9 / 10;
    write_words(packed, batch, gone, key_bits);
    CHECK_OK(t, gh_erase(t, packed, gone, NULL, NULL, NULL));
    tu_ref_erase(&ref, batch, gone);
  }
  const uint64_t before_tombstones = tombstones(t);
  if (design->design == GH_WARPDRIVE)
    CHECK(before_tombstones > 0, "no tombstones counted after erasing %llu keys", (unsigned long long)(rounds * n * 9 / 10));
  uint64_t before_n = 0, after_n = 0;
  pair *before = sorted_pairs(t, key_bits, value_bits, &before_n);

  tu_set_phase("gh_compact");
  CHECK_OK(t, gh_compact(t, NULL));
  pair *after = sorted_pairs(t, key_bits, value_bits, &after_n);
  same_pairs(before, before_n, after, after_n, "gh_compact");
  CHECK(tombstones(t) == 0, "%llu tombstones after gh_compact (%llu before)", (unsigned long long)tombstones(t),
        (unsigned long long)before_tombstones);
  CHECK_OK(t, gh_validate(t));
  check_contents(t, &ref, keys, rounds * n, key_bits, value_bits);
  free(after);

  tu_set_phase("insert after gh_compact, then gh_compact again");
  const uint64_t *fresh = keys + rounds * n;
  tu_gen_values(&rng, value_bits, n, values);
  write_words(packed, fresh, n, key_bits), write_words(packed_values, values, n, value_bits);
  CHECK_OK(t, gh_insert(t, packed, value_bits ? packed_values : NULL, n, GH_OVERWRITE, NULL, NULL));
  tu_ref_insert(&ref, fresh, value_bits ? values : NULL, n, GH_OVERWRITE, NULL);
  free(before);
  before = sorted_pairs(t, key_bits, value_bits, &before_n);
  CHECK_OK(t, gh_compact(t, NULL));
  after = sorted_pairs(t, key_bits, value_bits, &after_n);
  same_pairs(before, before_n, after, after_n, "a second gh_compact");
  CHECK_OK(t, gh_validate(t));
  check_contents(t, &ref, keys, (rounds + 1) * n, key_bits, value_bits);
  free(before), free(after);

  tu_set_phase("gh_compact of an empty table");
  CHECK_OK(t, gh_clear(t, NULL));
  CHECK_OK(t, gh_compact(t, NULL));
  uint64_t size = 99;
  if (CHECK_OK(t, gh_size(t, &size))) CHECK(size == 0, "size %llu", (unsigned long long)size);
  CHECK_OK(t, gh_validate(t));
done:
  gh_destroy(t);
  tu_ref_free(&ref);
  free(keys), free(values), free(packed), free(packed_values);
}

/* warpdrive at load 0.95 (windows of 1 to 32 slots with 8-byte slots, 4-, 8- and 16-byte slots at
 * g = 4; 8000 slots, so locality regions at g = 1 and 2, which make 2048 windows or more, and
 * plain double hashing from g = 4 on): rounds that erase a quarter of the keys and insert as many
 * new ones, which take the tombstones, so empty slots grow scarce and keys sit far along their
 * sequences. Then gh_compact six ways: with memory (the rebuild); with the allocator refusing the
 * rebuild but leaving room for both, one or none of the in-place rehash's bitmaps (the rehash with
 * its bitmaps, then twice without); within a compact_scratch_bytes budget that fits the bitmaps,
 * or of 1 byte (gh_compact asks for 2 allocations, or none). The refusals and asks as expected,
 * the same pairs after it, every key found, every erased one absent, validate (no key with an
 * empty slot before it), no tombstones, nothing leaked. */
enum {
  COMPACT_WITH_MEMORY, COMPACT_BITMAPS_ONLY, COMPACT_ONE_BITMAP, COMPACT_NO_MEMORY, COMPACT_BUDGET_BITMAPS,
  COMPACT_BUDGET_NOTHING, COMPACT_WAYS
};
static const char *const compact_ways[] = {"with memory", "with room for the bitmaps only",
                                           "with room for one bitmap only", "with no memory",
                                           "within a scratch budget that fits the bitmaps only",
                                           "within a scratch budget of 1 byte"};

static void case_churn(gh_backend backend, unsigned group_size, unsigned key_bits, unsigned value_bits, int way) {
  tu_rng rng = tu_rng_make(tu_mix_seed(compact_seed, 7 + way, group_size * 1000u + key_bits + value_bits, backend));
  tu_tracker *tracker = tu_tracker_new();
  gh_config c = gh_config_default(GH_WARPDRIVE);
  tu_tracker_attach(tracker, &c);
  c.backend = backend;
  c.key_bits = key_bits;
  c.value_bits = value_bits;
  c.capacity = 8000;
  c.group_size = group_size;
  c.seed = compact_seed;
  /* (the bitmaps take at most a quarter byte a slot, the rebuild more than 3 bytes) */
  c.compact_scratch_bytes = way == COMPACT_BUDGET_BITMAPS ? c.capacity : way == COMPACT_BUDGET_NOTHING ? 1u : 0u;
  gh_table *t = NULL;
  tu_set_phase("churn g%u k%u v%u, compact %s: create", group_size, key_bits, value_bits, compact_ways[way]);
  if (!CHECK_OK(NULL, gh_create(&c, &t))) {
    tu_tracker_delete(tracker);
    return;
  }
  uint64_t slots = 0;
  CHECK_OK(t, gh_capacity(t, &slots));
  const uint64_t live_n = slots * 95 / 100, turnover = live_n / 4, rounds = 4, universe = live_n + rounds * turnover;
  uint64_t *keys = (uint64_t *)tu_xmalloc(universe * 8), *live = (uint64_t *)tu_xmalloc(live_n * 8);
  uint64_t *values = (uint64_t *)tu_xmalloc(live_n * 8);
  void *packed = tu_xmalloc(live_n * 8), *packed_values = tu_xmalloc(live_n * 8);
  tu_ref ref;
  tu_ref_init(&ref, key_bits, value_bits);
  tu_gen_unique_keys(&rng, key_bits, universe, NULL, keys);
  memcpy(live, keys, live_n * 8);
  uint64_t next = live_n;
  tu_set_phase("churn: fill to 0.95");
  tu_gen_values(&rng, value_bits, live_n, values);
  write_words(packed, keys, live_n, key_bits), write_words(packed_values, values, live_n, value_bits);
  CHECK_OK(t, gh_insert(t, packed, value_bits ? packed_values : NULL, live_n, GH_OVERWRITE, NULL, NULL));
  tu_ref_insert(&ref, keys, value_bits ? values : NULL, live_n, GH_OVERWRITE, NULL);
  for (uint64_t r = 0; r < rounds && tu_failure_count() == 0; ++r) {
    tu_set_phase("churn round %llu: erase a quarter", (unsigned long long)r);
    tu_shuffle(&rng, live, live_n);
    write_words(packed, live, turnover, key_bits);
    CHECK_OK(t, gh_erase(t, packed, turnover, NULL, NULL, NULL));
    tu_ref_erase(&ref, live, turnover);
    tu_set_phase("churn round %llu: insert as many new keys", (unsigned long long)r);
    memcpy(live, keys + next, turnover * 8);
    next += turnover;
    tu_gen_values(&rng, value_bits, turnover, values);
    write_words(packed, live, turnover, key_bits), write_words(packed_values, values, turnover, value_bits);
    CHECK_OK(t, gh_insert(t, packed, value_bits ? packed_values : NULL, turnover, GH_OVERWRITE, NULL, NULL));
    tu_ref_insert(&ref, live, value_bits ? values : NULL, turnover, GH_OVERWRITE, NULL);
  }
  uint64_t before_n = 0, after_n = 0;
  pair *before = sorted_pairs(t, key_bits, value_bits, &before_n);
  tu_set_phase("churn: gh_compact %s", compact_ways[way]);
  CHECK(tombstones(t) > 0, "no tombstones after the churn");
  /* The rebuild asks for the keys', values' and slots' copies, each larger than both bitmaps (a bit
   * a window each) together; the allocator's limits let through both bitmaps, one, or nothing; the
   * budgets keep gh_compact from asking for more. */
  const uint64_t bitmap_bytes = (slots / group_size + 31u) / 32u * 4u, rebuild_asks = value_bits ? 3u : 2u;
  const uint64_t room[COMPACT_WAYS] = {0, 2 * bitmap_bytes + bitmap_bytes / 2, bitmap_bytes + bitmap_bytes / 2, 0, 0, 0};
  const uint64_t refused[COMPACT_WAYS] = {0, rebuild_asks, rebuild_asks + 1u, rebuild_asks + 2u, 0, 0};
  const size_t live_bytes = tu_tracker_live_bytes(tracker, GH_MEMORY_HOST) + tu_tracker_live_bytes(tracker, GH_MEMORY_DEVICE);
  if (room[way] || way == COMPACT_NO_MEMORY) tu_tracker_set_limit(tracker, live_bytes + room[way]);
  tu_tracker_fail_nth(tracker, 0);
  CHECK_OK(t, gh_compact(t, NULL));
  tu_tracker_set_limit(tracker, 0);
  CHECK(tu_tracker_limit_refusals(tracker) == refused[way], "%llu allocations refused by the limit, expected %llu",
        (unsigned long long)tu_tracker_limit_refusals(tracker), (unsigned long long)refused[way]);
  if (way == COMPACT_BUDGET_BITMAPS || way == COMPACT_BUDGET_NOTHING)
    CHECK(tu_tracker_calls(tracker) == (way == COMPACT_BUDGET_BITMAPS ? 2u : 0u),
          "gh_compact asked for %llu allocations within its budget", (unsigned long long)tu_tracker_calls(tracker));
  pair *after = sorted_pairs(t, key_bits, value_bits, &after_n);
  same_pairs(before, before_n, after, after_n, "gh_compact after the churn");
  CHECK(tombstones(t) == 0, "%llu tombstones after gh_compact", (unsigned long long)tombstones(t));
  CHECK_OK(t, gh_validate(t));
  check_contents(t, &ref, keys, next, key_bits, value_bits);
  free(before), free(after);
  gh_destroy(t);
  tu_tracker_check_clean(tracker, "after gh_destroy");
  tu_tracker_delete(tracker);
  tu_ref_free(&ref);
  free(keys), free(live), free(values), free(packed), free(packed_values);
}

/* The k-th allocation of gh_compact fails, for every k until it gets through. */
static void case_alloc(const tu_design *design, gh_backend backend) {
  tu_rng rng = tu_rng_make(tu_mix_seed(compact_seed, 5, 5, backend));
  const uint64_t n = 3000;
  uint64_t *keys = (uint64_t *)tu_xmalloc(n * 8);
  tu_gen_unique_keys(&rng, 32, n, NULL, keys);
  uint32_t *packed = (uint32_t *)tu_xmalloc(n * 4);
  for (uint64_t i = 0; i < n; ++i) packed[i] = (uint32_t)keys[i];
  tu_tracker *tracker = tu_tracker_new();
  int reached_end = 0;
  for (uint64_t k = 1; k < 200 && !reached_end && tu_failure_count() == 0; ++k) {
    tu_set_phase("gh_compact with allocation %llu failing", (unsigned long long)k);
    gh_config c = gh_config_default(design->design);
    c.backend = backend;
    c.capacity = 2 * n;
    c.seed = compact_seed;
    tu_tracker_attach(tracker, &c);
    gh_table *t = NULL;
    if (!CHECK_OK(NULL, gh_create(&c, &t))) break;
    CHECK_OK(t, gh_insert(t, packed, packed, n, GH_OVERWRITE, NULL, NULL));
    CHECK_OK(t, gh_erase(t, packed, n / 2, NULL, NULL, NULL));
    uint64_t before_n = 0, after_n = 0;
    pair *before = sorted_pairs(t, 32, 32, &before_n);
    const uint64_t before_tombstones = tombstones(t);
    tu_tracker_fail_nth(tracker, k);
    const gh_status got = gh_compact(t, NULL);
    reached_end = !tu_tracker_injected(tracker);
    tu_tracker_fail_nth(tracker, 0);
    CHECK(got == GH_OK || got == GH_ERR_OUT_OF_MEMORY, "status %s: %s", gh_status_name(got), gh_last_error(t));
    CHECK(got == GH_OK || !reached_end, "gh_compact failed with no allocation failing: %s", gh_last_error(t));
    pair *after = sorted_pairs(t, 32, 32, &after_n);
    same_pairs(before, before_n, after, after_n, gh_status_name(got));
    if (got != GH_OK)
      CHECK(tombstones(t) == before_tombstones, "a failed gh_compact changed the tombstones: %llu, %llu before",
            (unsigned long long)tombstones(t), (unsigned long long)before_tombstones);
    CHECK_OK(t, gh_validate(t));
    free(before), free(after);
    gh_destroy(t);
    tu_tracker_check_clean(tracker, "after gh_destroy");
    tu_tracker_reset(tracker);
  }
  CHECK(reached_end, "gh_compact still hit the armed failure after 200 allocations");
  tu_tracker_delete(tracker);
  free(keys), free(packed);
}

static void case_unsupported(const tu_design *design, gh_backend backend) {
  gh_config c = gh_config_default(design->design);
  c.backend = backend;
  c.capacity = 1000;
  gh_table *t = NULL;
  tu_set_phase("a design without gh_compact");
  if (!CHECK_OK(NULL, gh_create(&c, &t))) return;
  CHECK_STATUS(t, gh_compact(t, NULL), GH_ERR_UNSUPPORTED);
  CHECK(strstr(gh_last_error(t), "gh_compact") != NULL, "message: %s", gh_last_error(t));
  gh_destroy(t);
}

int main(int argc, char **argv) {
  const tu_design *design = tu_design_by_name("warpdrive");
  gh_backend backend;
  compact_seed = COMPACT_BASE_SEED;
  if (argc < 2 || !tu_parse_backend(argv[1], &backend)) goto usage;
  for (int i = 2; i < argc; i += 2) {
    if (i + 1 >= argc) goto usage;
    if (strcmp(argv[i], "--design") == 0 && tu_design_by_name(argv[i + 1]) != NULL) design = tu_design_by_name(argv[i + 1]);
    else if (strcmp(argv[i], "--seed") == 0 && tu_parse_u64(argv[i + 1], &compact_seed)) continue;
    else goto usage;
  }
  tu_skip_unless_backend_usable(backend);
  tu_set_context("compact %s %s seed 0x%016llx", tu_backend_name(backend), design->name,
                 (unsigned long long)compact_seed);
  if (!tu_design_has(design, GH_CAP_COMPACT)) {
    case_unsupported(design, backend);
    return tu_finish("compact");
  }
  static const unsigned key_widths[] = {32, 64}, value_widths[] = {0, 32, 64};
  for (size_t k = 0; k < 2; ++k)
    for (size_t v = 0; v < 3; ++v) case_widths(design, backend, key_widths[k], value_widths[v]);
  if (design->design == GH_WARPDRIVE) {
    /* Every window width with 8-byte slots; every slot width (4, 8 and 16 bytes) at g = 4. */
    static const unsigned group_sizes[] = {1, 2, 4, 8, 16, 32}, widths[][2] = {{32, 0}, {64, 0}, {32, 64}, {64, 32}, {64, 64}};
    for (int way = COMPACT_WITH_MEMORY; way < COMPACT_WAYS; ++way) {
      for (size_t g = 0; g < 6; ++g) case_churn(backend, group_sizes[g], 32, 32, way);
      for (size_t w = 0; w < 5; ++w) case_churn(backend, 4, widths[w][0], widths[w][1], way);
    }
  }
  case_alloc(design, backend);
  return tu_finish("compact");
usage:
  fprintf(stderr, "usage: %s host|cuda [--design NAME] [--seed S]\n", argv[0]);
  return 2;
}
