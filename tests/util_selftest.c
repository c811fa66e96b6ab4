/*
 * util_selftest - tests of the test helpers themselves. Every other test trusts the reference
 * map and the generators; a bug there would hide library bugs or invent them. Needs no table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* Membership and size against a plain array over a small universe, through enough inserts and
 * erases to rebuild the reference map many times and fill it with erased slots. */
static void test_membership(void) {
  enum { UNIVERSE = 300, STEPS = 20000 };
  uint64_t universe[UNIVERSE], listed[UNIVERSE];
  unsigned char present[UNIVERSE];
  uint64_t size = 0, i, step;
  tu_rng rng = tu_rng_make(12345);
  tu_ref ref;
  tu_set_context("util_selftest membership");
  tu_ref_init(&ref, 64, 32);
  tu_gen_unique_keys(&rng, 64, UNIVERSE, NULL, universe);
  universe[0] = ~(uint64_t)0; /* the map's own "empty" must not be a key value */
  universe[1] = 0;
  memset(present, 0, sizeof present);
  for (step = 0; step < STEPS; ++step) {
    uint64_t j = tu_below(&rng, UNIVERSE), value = step;
    if (tu_below(&rng, 2) == 0) {
      tu_ref_insert(&ref, &universe[j], &value, 1, GH_OVERWRITE, NULL);
      size += !present[j];
      present[j] = 1;
    } else {
      CHECK(tu_ref_erase(&ref, &universe[j], 1) == present[j], "erase count at step %llu",
            (unsigned long long)step);
      size -= present[j];
      present[j] = 0;
    }
    if (step % 97 == 0) {
      CHECK(tu_ref_size(&ref) == size, "size %llu, expected %llu",
            (unsigned long long)tu_ref_size(&ref), (unsigned long long)size);
      for (i = 0; i < UNIVERSE; ++i) {
        CHECK(tu_ref_contains(&ref, universe[i]) == present[i], "membership of %llu",
              (unsigned long long)i);
      }
      CHECK(tu_ref_keys(&ref, listed) == size, "tu_ref_keys count");
    }
  }
  tu_ref_clear(&ref);
  CHECK(tu_ref_size(&ref) == 0 && !tu_ref_contains(&ref, universe[0]), "clear");
  tu_ref_free(&ref);
}

/* The policy semantics, value by value. */
static void test_policies(void) {
  tu_ref ref;
  uint64_t k = 7, other = 8;
  uint64_t keys2[2] = {7, 7}, vals2[2], v;
  uint8_t skip[2] = {0, 1};
  tu_set_context("util_selftest policies");
  tu_ref_init(&ref, 32, 32);

  /* A new key repeated in one batch: KEEP_FIRST keeps an arbitrary one of its values. */
  vals2[0] = 5;
  vals2[1] = 3;
  tu_ref_insert(&ref, keys2, vals2, 2, GH_KEEP_FIRST, NULL);
  CHECK(tu_ref_value_allowed(&ref, k, 5) && tu_ref_value_allowed(&ref, k, 3) &&
            !tu_ref_value_allowed(&ref, k, 4),
        "new key, KEEP_FIRST, repeated: {5, 3}");
  CHECK(tu_ref_observe(&ref, k, 3), "observe 3");
  CHECK(!tu_ref_value_allowed(&ref, k, 5), "observing collapses the set");

  /* A present key: KEEP_FIRST keeps it whatever the batch holds. */
  vals2[0] = 9;
  vals2[1] = 10;
  tu_ref_insert(&ref, keys2, vals2, 2, GH_KEEP_FIRST, NULL);
  CHECK(tu_ref_value_allowed(&ref, k, 3) && !tu_ref_value_allowed(&ref, k, 9),
        "present key, KEEP_FIRST: stays 3");

  /* OVERWRITE with two values: either may win. */
  tu_ref_insert(&ref, keys2, vals2, 2, GH_OVERWRITE, NULL);
  CHECK(tu_ref_value_allowed(&ref, k, 9) && tu_ref_value_allowed(&ref, k, 10) &&
            !tu_ref_value_allowed(&ref, k, 3),
        "OVERWRITE repeated: {9, 10}");

  /* ADD applies to every possible value and wraps at the value width. */
  v = 0xFFFFFFFFull;
  tu_ref_insert(&ref, &k, &v, 1, GH_ADD, NULL);
  CHECK(tu_ref_value_allowed(&ref, k, 8) && tu_ref_value_allowed(&ref, k, 9), "ADD wraps: {8, 9}");
  /* MIN merges both possibilities into one. */
  v = 2;
  tu_ref_insert(&ref, &k, &v, 1, GH_MIN, NULL);
  CHECK(tu_ref_value_allowed(&ref, k, 2) && !tu_ref_value_allowed(&ref, k, 8), "MIN: {2}");
  vals2[0] = 4;
  vals2[1] = 6;
  tu_ref_insert(&ref, keys2, vals2, 2, GH_MAX, NULL);
  CHECK(tu_ref_value_allowed(&ref, k, 6) && !tu_ref_value_allowed(&ref, k, 4), "MAX: {6}");
  tu_ref_insert(&ref, keys2, vals2, 2, GH_ADD, NULL);
  CHECK(tu_ref_value_allowed(&ref, k, 16), "ADD over a batch: 6 + 4 + 6");

  /* A new key under ADD sums the batch; skipped positions do not count. */
  keys2[0] = keys2[1] = other;
  vals2[0] = 1;
  vals2[1] = 100;
  tu_ref_insert(&ref, keys2, vals2, 2, GH_ADD, skip);
  CHECK(tu_ref_value_allowed(&ref, other, 1), "skip mask: only the first position counts");
  CHECK(tu_ref_erase(&ref, keys2, 2) == 1, "erase a repeated key counts it once");
  CHECK(!tu_ref_contains(&ref, other), "erased");
  tu_ref_free(&ref);

  /* 64-bit values wrap at 64 bits. */
  tu_ref_init(&ref, 64, 64);
  v = ~(uint64_t)0;
  tu_ref_insert(&ref, &k, &v, 1, GH_ADD, NULL);
  v = 2;
  tu_ref_insert(&ref, &k, &v, 1, GH_ADD, NULL);
  CHECK(tu_ref_value_allowed(&ref, k, 1), "64-bit ADD wraps");
  tu_ref_free(&ref);
}

static void test_helpers(void) {
  uint64_t wide[5] = {0, 1, 0xFFFFFFFFull, 0xFFFFFFFEull, 123456789}, back[5], keys[1000], sp[8];
  void *packed;
  tu_rng rng = tu_rng_make(99);
  tu_ref seen;
  size_t i, n;
  tu_set_context("util_selftest helpers");
  CHECK(tu_mentions_count("1,523 of 1,000,000 keys did not fit", 1523), "grouped count");
  CHECK(tu_mentions_count("1,523 of 1,000,000 keys did not fit", 1000000), "grouped million");
  CHECK(!tu_mentions_count("1,523 of 1,000,000 keys did not fit", 523), "a digit group alone");
  CHECK(!tu_mentions_count("1,523 of 1,000,000 keys did not fit", 152), "a prefix");
  CHECK(tu_mentions_count("300 keys did not fit", 300), "plain count");
  CHECK(tu_mentions_count("did not fit: 1523 keys", 1523), "plain count, 4 digits");
  CHECK(!tu_mentions_count("77 keys did not fit", 7), "7 in 77");
  CHECK(!tu_mentions_count("", 0), "empty text");

  packed = tu_pack(wide, 5, 32);
  tu_unpack(packed, 5, 32, back);
  CHECK(memcmp(wide, back, sizeof wide) == 0, "32-bit pack round trip");
  free(packed);
  wide[4] = ~(uint64_t)0;
  packed = tu_pack(wide, 5, 64);
  tu_unpack(packed, 5, 64, back);
  CHECK(memcmp(wide, back, sizeof wide) == 0, "64-bit pack round trip");
  free(packed);

  tu_ref_init(&seen, 32, 0);
  tu_gen_unique_keys(&rng, 32, 500, NULL, keys);
  tu_ref_insert(&seen, keys, NULL, 500, GH_KEEP_FIRST, NULL);
  CHECK(tu_ref_size(&seen) == 500, "500 unique keys are distinct");
  tu_gen_unique_keys(&rng, 32, 500, &seen, keys + 500);
  for (i = 500; i < 1000; ++i) CHECK(!tu_ref_contains(&seen, keys[i]), "avoided key");
  tu_ref_free(&seen);

  n = tu_special_keys(32, sp);
  CHECK(n == 3 && sp[1] == 0xFFFFFFFFull && sp[2] == 0xFFFFFFFEull, "32-bit special keys");
  n = tu_special_keys(64, sp);
  CHECK(n == 6 && sp[1] == ~(uint64_t)0 && sp[2] == ~(uint64_t)0 - 1, "64-bit special keys");
  {
    uint64_t pool[3] = {1, 2, 3}, out[12];
    uint64_t count = tu_gen_repeats(&rng, pool, 3, 4, out), ones = 0;
    CHECK(count >= 3 && count <= 12, "tu_gen_repeats count %llu", (unsigned long long)count);
    for (i = 0; i < count; ++i) ones += out[i] == 1;
    CHECK(ones >= 1 && ones <= 4, "every pool key 1..4 times");
  }
}

int main(void) {
  test_membership();
  test_policies();
  test_helpers();
  return tu_finish("util_selftest");
}
