/*
 * join - the joins of gpuhash.h (gh_join_count, gh_join, gh_semi_join) on every design of the
 * registry, as a user joining two key arrays would run them:
 *
 *   join BACKEND --design NAME [--seed S]
 *
 * Designs with a multi-value variant: the right rows inserted (values NULL on designs with
 * GH_CAP_INDEX_PAYLOADS, else each row's index given), the left rows joined with every method the
 * design offers (GH_JOIN_AUTO, GH_JOIN_PROBE, GH_JOIN_INTERSECT where it has
 * GH_CAP_JOIN_INTERSECT), the count, the pairs (as a sorted list) and the semi-join mask checked
 * against a reference:
 *   small   nested-loop reference (itself checked against the sort-merge one): keys from a small
 *           pool, so that rows repeat on both sides, the patterns a table may keep for itself (0,
 *           all ones, ...) among them; 32- and 64-bit keys and values; a set too
 *   large   sort-merge reference: match rates 1 %, 50 % and 100 %, keys repeated 1..8 times on the
 *           right
 *   edges   an empty table, an empty left side, the output one pair too small
 *           (GH_ERR_BUFFER_TOO_SMALL, the count given, nothing written), bad arguments (each
 *           refused with GH_ERR_INVALID_ARGUMENT, the table unchanged)
 * Every design: a map joins by semi-join only (every method it offers; gh_join_count / gh_join answer
 * GH_ERR_UNSUPPORTED), and GH_JOIN_INTERSECT is refused where the design lacks GH_CAP_JOIN_INTERSECT.
 * After every phase the table validates and holds what it held. Failures print the case and the seed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static const tu_design *jn_design;
static gh_backend jn_backend;
static uint64_t jn_seed = 0x10A17EEDull;

typedef struct jn_pair {
  uint64_t left, right;
} jn_pair;

static int compare_pairs(const void *a, const void *b) {
  const jn_pair *x = (const jn_pair *)a, *y = (const jn_pair *)b;
  if (x->left != y->left) return x->left < y->left ? -1 : 1;
  return x->right < y->right ? -1 : (x->right > y->right);
}

/* The reference joins: every (i, j) with left[i] == right[j], sorted. */
static jn_pair *nested_loop_join(const uint64_t *left, uint64_t nl, const uint64_t *right, uint64_t nr,
                                 uint64_t *count) {
  uint64_t pairs = 0;
  for (uint64_t i = 0; i < nl; ++i)
    for (uint64_t j = 0; j < nr; ++j) pairs += left[i] == right[j];
  jn_pair *out = (jn_pair *)tu_xmalloc((pairs + 1u) * sizeof *out);
  *count = 0;
  for (uint64_t i = 0; i < nl; ++i)
    for (uint64_t j = 0; j < nr; ++j)
      if (left[i] == right[j]) out[(*count)++] = (jn_pair){i, j};
  return out;
}

static const uint64_t *sort_keys_base;
static int compare_rows_by_key(const void *a, const void *b) {
  const uint64_t x = sort_keys_base[*(const uint64_t *)a], y = sort_keys_base[*(const uint64_t *)b];
  if (x != y) return x < y ? -1 : 1;
  return *(const uint64_t *)a < *(const uint64_t *)b ? -1 : 1;
}

/* The right rows sorted by key; each left key's run found by binary search. */
static jn_pair *sort_merge_join(const uint64_t *left, uint64_t nl, const uint64_t *right, uint64_t nr,
                                uint64_t *count) {
  uint64_t *rows = (uint64_t *)tu_xmalloc((nr + 1u) * 8u);
  for (uint64_t j = 0; j < nr; ++j) rows[j] = j;
  sort_keys_base = right;
  qsort(rows, nr, 8u, compare_rows_by_key);
  uint64_t pairs = 0, capacity = nl + 1u;
  jn_pair *out = (jn_pair *)tu_xmalloc(capacity * sizeof *out);
  for (uint64_t i = 0; i < nl; ++i) {
    uint64_t lo = 0, hi = nr;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2u;
      if (right[rows[mid]] < left[i]) lo = mid + 1u;
      else hi = mid;
    }
    for (; lo < nr && right[rows[lo]] == left[i]; ++lo) {
      if (pairs == capacity) {
        capacity *= 2u;
        out = (jn_pair *)realloc(out, capacity * sizeof *out);
        REQUIRE(out != NULL, "out of memory for the reference join");
      }
      out[pairs++] = (jn_pair){i, rows[lo]};
    }
  }
  free(rows);
  qsort(out, pairs, sizeof *out, compare_pairs);
  *count = pairs;
  return out;
}

static gh_config join_config(gh_variant variant, unsigned key_bits, unsigned value_bits, uint64_t capacity) {
  gh_config cfg = gh_config_default(jn_design->design);
  cfg.backend = jn_backend;
  cfg.variant = variant;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  cfg.capacity = capacity ? capacity : 1u;
  cfg.seed = jn_seed;
  return cfg;
}

/* A table of the right rows, each row's value its index (given, or taken from the row's position
 * on designs with GH_CAP_INDEX_PAYLOADS); NULL when it could not be made. */
static gh_table *right_table(gh_variant variant, unsigned key_bits, unsigned value_bits, const uint64_t *right,
                             uint64_t nr) {
  const gh_config cfg = join_config(variant, key_bits, value_bits, nr);
  gh_table *t = NULL;
  if (!CHECK_OK(NULL, gh_create(&cfg, &t))) return NULL;
  if (nr == 0) return t;
  uint64_t *rows = (uint64_t *)tu_xmalloc(nr * 8u);
  for (uint64_t j = 0; j < nr; ++j) rows[j] = j;
  void *keys = tu_pack(right, nr, key_bits);
  const int positions = value_bits && variant == GH_VARIANT_MULTIVALUE && tu_design_has(jn_design, GH_CAP_INDEX_PAYLOADS);
  /* (a compacting table assigns its ids itself) */
  void *values = value_bits && !positions && variant != GH_VARIANT_COMPACTING ? tu_pack(rows, nr, value_bits) : NULL;
  const gh_dup_policy policy = variant == GH_VARIANT_MULTIVALUE ? GH_APPEND : GH_KEEP_FIRST;
  if (!CHECK_OK(t, gh_insert(t, keys, values, nr, policy, NULL, NULL))) {
    gh_destroy(t);
    t = NULL;
  }
  free(keys);
  free(values);
  free(rows);
  return t;
}

/* The table still validates and holds `size` entries. */
static void check_unchanged(gh_table *t, uint64_t size) {
  uint64_t now = 0;
  CHECK_OK(t, gh_validate(t));
  if (CHECK_OK(t, gh_size(t, &now)))
    CHECK(now == size, "the table holds %llu entries after the joins, %llu before", (unsigned long long)now,
          (unsigned long long)size);
}

static const char *method_name(gh_join_method method) {
  return method == GH_JOIN_AUTO ? "GH_JOIN_AUTO" : method == GH_JOIN_PROBE ? "GH_JOIN_PROBE" : "GH_JOIN_INTERSECT";
}

/* Count, pairs and semi-join of one method against the reference pairs. */
static void check_method(gh_table *t, gh_join_method method, unsigned key_bits, unsigned value_bits,
                         const uint64_t *left, uint64_t nl, const jn_pair *want, uint64_t n_want) {
  tu_set_phase("%s over %llu left rows (%llu pairs expected)", method_name(method), (unsigned long long)nl,
               (unsigned long long)n_want);
  void *keys = tu_pack(left, nl, key_bits);
  uint64_t pairs = ~0ull;
  if (CHECK_OK(t, gh_join_count(t, keys, nl, method, &pairs, NULL)))
    CHECK(pairs == n_want, "gh_join_count: %llu pairs, expected %llu", (unsigned long long)pairs,
          (unsigned long long)n_want);
  /* One spare pair each side of the expected count: it must keep the caller's bytes. */
  const uint64_t room = n_want + 1u;
  uint64_t *left_out = (uint64_t *)tu_xmalloc(room * 8u);
  void *right_out = value_bits ? tu_xmalloc(room * (value_bits / 8u)) : NULL;
  memset(left_out, TU_CANARY, room * 8u);
  if (right_out) memset(right_out, TU_CANARY, room * (value_bits / 8u));
  pairs = ~0ull;
  if (CHECK_OK(t, gh_join(t, keys, nl, method, left_out, right_out, room, &pairs, NULL)) &&
      CHECK(pairs == n_want, "gh_join: %llu pairs, expected %llu", (unsigned long long)pairs, (unsigned long long)n_want)) {
    CHECK(tu_first_non_canary(left_out + n_want, 8u) == 8u, "gh_join wrote left_out past its pairs");
    jn_pair *got = (jn_pair *)tu_xmalloc(room * sizeof *got);
    uint64_t *rights = (uint64_t *)tu_xmalloc(room * 8u);
    if (right_out) tu_unpack(right_out, n_want, value_bits, rights);
    int ordered = 1;
    for (uint64_t p = 0; p < n_want; ++p) {
      got[p] = (jn_pair){left_out[p], right_out ? rights[p] : 0};
      if (p && left_out[p] < left_out[p - 1u]) ordered = 0;
    }
    if (method != GH_JOIN_INTERSECT) CHECK(ordered, "%s: the pairs are not in left-row order", method_name(method));
    /* GH_JOIN_PROBE: "each row's entries in gh_find_all's order", so its values in that order */
    if (method != GH_JOIN_INTERSECT && right_out != NULL) {
      uint64_t *offsets = (uint64_t *)tu_xmalloc((nl + 1u) * 8u);
      void *values = tu_xmalloc(room * (value_bits / 8u));
      uint64_t *found = (uint64_t *)tu_xmalloc(room * 8u);
      if (CHECK_OK(t, gh_find_all(t, keys, nl, offsets, values, room, NULL)) &&
          CHECK(offsets[nl] == n_want, "gh_find_all: %llu values, the join %llu pairs", (unsigned long long)offsets[nl],
                (unsigned long long)n_want)) {
        tu_unpack(values, n_want, value_bits, found);
        for (uint64_t p = 0; p < n_want; ++p)
          if (!CHECK(rights[p] == found[p], "%s: pair %llu (left row %llu) has value %llu, gh_find_all's %llu there",
                     method_name(method), (unsigned long long)p, (unsigned long long)left_out[p],
                     (unsigned long long)rights[p], (unsigned long long)found[p]))
            break;
      }
      free(found);
      free(values);
      free(offsets);
    }
    qsort(got, n_want, sizeof *got, compare_pairs);
    for (uint64_t p = 0; p < n_want; ++p) {
      const uint64_t want_right = right_out ? want[p].right : 0;
      if (!CHECK(got[p].left == want[p].left && got[p].right == want_right,
                 "pair %llu (sorted): got (%llu, %llu), expected (%llu, %llu)", (unsigned long long)p,
                 (unsigned long long)got[p].left, (unsigned long long)got[p].right,
                 (unsigned long long)want[p].left, (unsigned long long)want_right))
        break;
    }
    free(got);
    free(rights);
  }
  uint8_t *match = (uint8_t *)tu_xmalloc(nl + 1u);
  memset(match, TU_CANARY, nl + 1u);
  if (CHECK_OK(t, gh_semi_join(t, keys, nl, method, match, NULL))) {
    uint8_t *want_match = (uint8_t *)calloc(nl + 1u, 1);
    for (uint64_t p = 0; p < n_want; ++p) want_match[want[p].left] = 1;
    for (uint64_t i = 0; i < nl; ++i)
      if (!CHECK(match[i] == want_match[i], "gh_semi_join: row %llu (key %llu) gives %u, expected %u",
                 (unsigned long long)i, (unsigned long long)left[i], match[i], want_match[i]))
        break;
    CHECK(match[nl] == TU_CANARY, "gh_semi_join wrote past its n bytes");
    free(want_match);
  }
  free(match);
  free(left_out);
  free(right_out);
  free(keys);
}

static int offers_intersect(void) { return tu_design_has(jn_design, GH_CAP_JOIN_INTERSECT); }

/* Every method the design offers, on a table of the right rows. */
static void join_case(unsigned key_bits, unsigned value_bits, const uint64_t *left, uint64_t nl,
                      const uint64_t *right, uint64_t nr, const jn_pair *want, uint64_t n_want) {
  gh_table *t = right_table(GH_VARIANT_MULTIVALUE, key_bits, value_bits, right, nr);
  if (t == NULL) return;
  const gh_join_method methods[] = {GH_JOIN_AUTO, GH_JOIN_PROBE, GH_JOIN_INTERSECT};
  for (size_t m = 0; m < 3u && tu_failure_count() == 0; ++m) {
    if (methods[m] == GH_JOIN_INTERSECT && !offers_intersect()) continue;
    check_method(t, methods[m], key_bits, value_bits, left, nl, want, n_want);
    check_unchanged(t, nr);
  }
  gh_destroy(t);
}

static int multivalue_accepts(unsigned key_bits, unsigned value_bits) {
  const gh_config cfg = join_config(GH_VARIANT_MULTIVALUE, key_bits, value_bits, 16);
  char message[256];
  return gh_config_validate(&cfg, message, sizeof message) == GH_OK;
}

static void part_small(void) {
  static const unsigned widths[][2] = {{32, 32}, {64, 64}, {32, 64}, {64, 32}, {32, 0}};
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
    const unsigned kb = widths[w][0], vb = widths[w][1];
    if (!multivalue_accepts(kb, vb)) continue;
    tu_rng rng = tu_rng_make(tu_mix_seed(jn_seed, kb, vb, 1));
    const uint64_t pool_n = 40, nl = 300, nr = 500;
    uint64_t pool[40], *left = (uint64_t *)tu_xmalloc(nl * 8u), *right = (uint64_t *)tu_xmalloc(nr * 8u);
    tu_gen_unique_keys(&rng, kb, pool_n, NULL, pool);
    /* the patterns a table may keep for itself, as keys on both sides (pool[10, 20) is) */
    uint64_t special[8];
    const size_t specials = tu_special_keys(kb, special);
    for (size_t k = 0; k < specials; ++k) pool[10 + k] = special[k];
    tu_gen_from_pool(&rng, pool, pool_n / 2u, nr, right);    /* the first half of the pool on the right */
    tu_gen_from_pool(&rng, pool + 10, pool_n - 10u, nl, left); /* a quarter of it never matches */
    tu_set_context("join small %s %s k%u v%u seed 0x%016llx", jn_design->name, tu_backend_name(jn_backend), kb, vb,
                   (unsigned long long)jn_seed);
    uint64_t n_nested = 0, n_sorted = 0;
    jn_pair *nested = nested_loop_join(left, nl, right, nr, &n_nested);
    jn_pair *sorted = sort_merge_join(left, nl, right, nr, &n_sorted);
    REQUIRE(n_nested == n_sorted && memcmp(nested, sorted, n_nested * sizeof *nested) == 0,
            "the two reference joins disagree (%llu and %llu pairs)", (unsigned long long)n_nested,
            (unsigned long long)n_sorted);
    join_case(kb, vb, left, nl, right, nr, nested, n_nested);
    printf("  small k%u v%u: %llu pairs: %s\n", kb, vb, (unsigned long long)n_nested, tu_failure_count() ? "FAILED" : "ok");
    free(nested);
    free(sorted);
    free(left);
    free(right);
  }
}

static void part_large(void) {
  static const unsigned rates[] = {1, 50, 100};
  const uint64_t nl = jn_backend == GH_BACKEND_CUDA ? (1u << 20) : (1u << 14), pool_n = nl / 4u;
  for (unsigned kb = 32; kb <= 64; kb += 32)
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; ++r) {
      tu_rng rng = tu_rng_make(tu_mix_seed(jn_seed, kb, rates[r], 2));
      uint64_t *pool = (uint64_t *)tu_xmalloc(2u * pool_n * 8u), *left = (uint64_t *)tu_xmalloc(nl * 8u),
               *right = (uint64_t *)tu_xmalloc(pool_n * 8u * 8u);
      tu_gen_unique_keys(&rng, kb, 2u * pool_n, NULL, pool); /* [0, pool_n) on the right, the rest absent */
      const uint64_t nr = tu_gen_repeats(&rng, pool, pool_n, 8, right);
      for (uint64_t i = 0; i < nl; ++i)
        left[i] = pool[tu_below(&rng, pool_n) + (tu_below(&rng, 100) < rates[r] ? 0u : pool_n)];
      tu_set_context("join large %s %s k%u match rate %u %% seed 0x%016llx", jn_design->name,
                     tu_backend_name(jn_backend), kb, rates[r], (unsigned long long)jn_seed);
      uint64_t n_want = 0;
      jn_pair *want = sort_merge_join(left, nl, right, nr, &n_want);
      join_case(kb, 32, left, nl, right, nr, want, n_want);
      printf("  large k%u rate %3u %%: %llu left, %llu right, %llu pairs: %s\n", kb, rates[r], (unsigned long long)nl,
             (unsigned long long)nr, (unsigned long long)n_want, tu_failure_count() ? "FAILED" : "ok");
      free(want);
      free(pool);
      free(left);
      free(right);
    }
}

/* A call refused with `want`, its message non-empty, the table unchanged. */
static void expect_refused(gh_table *t, gh_status got, gh_status want, uint64_t size, const char *what) {
  if (CHECK_STATUS(t, got, want)) CHECK(gh_last_error(t)[0] != '\0', "%s: refused without a message", what);
  check_unchanged(t, size);
}

static void part_edges(void) {
  tu_set_context("join edges %s %s seed 0x%016llx", jn_design->name, tu_backend_name(jn_backend),
                 (unsigned long long)jn_seed);
  const uint64_t nr = 64, nl = 32;
  uint64_t right[64], left[32];
  for (uint64_t j = 0; j < nr; ++j) right[j] = 1000u + j % 16u; /* 16 keys, 4 rows each */
  for (uint64_t i = 0; i < nl; ++i) left[i] = 1000u + i;        /* rows 0..15 match 4 times */
  uint64_t n_want = 0;
  jn_pair *want = nested_loop_join(left, nl, right, nr, &n_want);
  const gh_join_method last = offers_intersect() ? GH_JOIN_INTERSECT : GH_JOIN_PROBE;

  tu_set_phase("an empty table");
  gh_table *t = right_table(GH_VARIANT_MULTIVALUE, 32, 32, right, 0);
  if (t != NULL) {
    for (gh_join_method m = GH_JOIN_AUTO; m <= last; m = (gh_join_method)(m + 1)) check_method(t, m, 32, 32, left, nl, NULL, 0);
    gh_destroy(t);
  }
  t = right_table(GH_VARIANT_MULTIVALUE, 32, 32, right, nr);
  if (t == NULL) return;
  uint32_t keys[32], right_out[64];
  uint64_t left_out[64], pairs = 7;
  for (uint64_t i = 0; i < nl; ++i) keys[i] = (uint32_t)left[i];

  tu_set_phase("an empty left side");
  for (gh_join_method m = GH_JOIN_AUTO; m <= last; m = (gh_join_method)(m + 1)) {
    pairs = 7;
    CHECK(gh_join_count(t, NULL, 0, m, &pairs, NULL) == GH_OK && pairs == 0, "%s: n = 0 counts %llu pairs",
          method_name(m), (unsigned long long)pairs);
    pairs = 7;
    CHECK(gh_join(t, NULL, 0, m, NULL, NULL, 0, &pairs, NULL) == GH_OK && pairs == 0, "%s: n = 0 gives %llu pairs",
          method_name(m), (unsigned long long)pairs);
    CHECK_OK(t, gh_semi_join(t, NULL, 0, m, NULL, NULL));
  }

  tu_set_phase("output one pair too small");
  for (gh_join_method m = GH_JOIN_AUTO; m <= last; m = (gh_join_method)(m + 1)) {
    memset(left_out, TU_CANARY, sizeof left_out);
    memset(right_out, TU_CANARY, sizeof right_out);
    pairs = 0;
    const gh_status got = gh_join(t, keys, nl, m, left_out, right_out, n_want - 1u, &pairs, NULL);
    CHECK(tu_mentions_count(gh_last_error(t), n_want), "%s: the message does not say %llu pairs: \"%s\"", method_name(m),
          (unsigned long long)n_want, gh_last_error(t));
    expect_refused(t, got, GH_ERR_BUFFER_TOO_SMALL, nr, method_name(m));
    CHECK(pairs == n_want, "%s: too small: *pairs = %llu, the join has %llu", method_name(m), (unsigned long long)pairs,
          (unsigned long long)n_want);
    CHECK(tu_first_non_canary(left_out, sizeof left_out) == sizeof left_out &&
              tu_first_non_canary(right_out, sizeof right_out) == sizeof right_out,
          "%s: a refused join wrote its outputs", method_name(m));
  }

  tu_set_phase("bad arguments");
  uint8_t match[32];
  memset(match, TU_CANARY, sizeof match);
  /* "On failure: *pairs is 0" (a count left from an earlier call must not pass for this one's). */
#define REFUSED_WITH_PAIRS_ZEROED(call, want, what)                                                        \
  do {                                                                                                   \
    pairs = 12345;                                                                                       \
    expect_refused(t, (call), (want), nr, (what));                                                       \
    CHECK(pairs == 0, "%s: refused, but *pairs = %llu, not 0", (what), (unsigned long long)pairs);       \
  } while (0)
  expect_refused(t, gh_join_count(t, keys, nl, GH_JOIN_PROBE, NULL, NULL), GH_ERR_INVALID_ARGUMENT, nr, "pairs NULL");
  REFUSED_WITH_PAIRS_ZEROED(gh_join_count(t, NULL, nl, GH_JOIN_PROBE, &pairs, NULL), GH_ERR_INVALID_ARGUMENT, "keys NULL");
  REFUSED_WITH_PAIRS_ZEROED(gh_join_count(t, keys, nl, (gh_join_method)7, &pairs, NULL), GH_ERR_INVALID_ARGUMENT,
                            "method 7");
  REFUSED_WITH_PAIRS_ZEROED(gh_join(t, keys, nl, GH_JOIN_PROBE, NULL, right_out, 64, &pairs, NULL),
                            GH_ERR_INVALID_ARGUMENT, "left_out NULL");
  REFUSED_WITH_PAIRS_ZEROED(gh_join(t, keys, nl, GH_JOIN_PROBE, left_out, NULL, 64, &pairs, NULL),
                            GH_ERR_INVALID_ARGUMENT, "right_out NULL on a table of values");
  expect_refused(t, gh_join(t, keys, nl, GH_JOIN_PROBE, left_out, right_out, 64, NULL, NULL), GH_ERR_INVALID_ARGUMENT,
                 nr, "pairs NULL");
  REFUSED_WITH_PAIRS_ZEROED(gh_join(t, keys, nl, GH_JOIN_PROBE, left_out, right_out, ~0ull, &pairs, NULL),
                            GH_ERR_INVALID_ARGUMENT, "a capacity no array can have");
  expect_refused(t, gh_semi_join(t, keys, nl, GH_JOIN_PROBE, NULL, NULL), GH_ERR_INVALID_ARGUMENT, nr, "match_out NULL");
  expect_refused(t, gh_semi_join(t, keys, nl, (gh_join_method)-1, match, NULL), GH_ERR_INVALID_ARGUMENT, nr,
                 "method -1");
  if (!offers_intersect()) {
    REFUSED_WITH_PAIRS_ZEROED(gh_join_count(t, keys, nl, GH_JOIN_INTERSECT, &pairs, NULL), GH_ERR_UNSUPPORTED,
                              "GH_JOIN_INTERSECT without GH_CAP_JOIN_INTERSECT");
    REFUSED_WITH_PAIRS_ZEROED(gh_join(t, keys, nl, GH_JOIN_INTERSECT, left_out, right_out, 64, &pairs, NULL),
                              GH_ERR_UNSUPPORTED, "gh_join's GH_JOIN_INTERSECT without GH_CAP_JOIN_INTERSECT");
    expect_refused(t, gh_semi_join(t, keys, nl, GH_JOIN_INTERSECT, match, NULL), GH_ERR_UNSUPPORTED, nr,
                   "GH_JOIN_INTERSECT without GH_CAP_JOIN_INTERSECT");
  }
#undef REFUSED_WITH_PAIRS_ZEROED
  CHECK(tu_first_non_canary(match, sizeof match) == sizeof match, "a refused gh_semi_join wrote match_out");
  gh_destroy(t);
  free(want);
  printf("  edges: %s\n", tu_failure_count() ? "FAILED" : "ok");
}

/* The semi-join "on any table: maps and sets too" (and compacting tables, whose values are ids);
 * the pair joins refused there. */
static void semi_join_of(gh_variant variant, unsigned value_bits) {
  tu_set_phase("a %s of 64 keys", tu_variant_name(variant, value_bits));
  uint64_t right[64], left[128];
  for (uint64_t j = 0; j < 64; ++j) right[j] = 5000u + 3u * j;
  for (uint64_t i = 0; i < 128; ++i) left[i] = 5000u + i;
  gh_table *t = right_table(variant, 32, value_bits, right, 64);
  if (t == NULL) return;
  uint32_t keys[128];
  uint8_t match[128];
  uint64_t pairs = 0, left_out[4];
  uint32_t right_out[4];
  for (uint64_t i = 0; i < 128; ++i) keys[i] = (uint32_t)left[i];
  const gh_join_method methods[] = {GH_JOIN_AUTO, GH_JOIN_PROBE, GH_JOIN_INTERSECT};
  for (size_t m = 0; m < 3u; ++m) {
    if (methods[m] == GH_JOIN_INTERSECT && !offers_intersect()) continue;
    memset(match, TU_CANARY, sizeof match);
    if (CHECK_OK(t, gh_semi_join(t, keys, 128, methods[m], match, NULL)))
      for (uint64_t i = 0; i < 128; ++i)
        if (!CHECK(match[i] == (i % 3u == 0 && i < 192u), "%s: row %llu (key %llu): match %u", method_name(methods[m]),
                   (unsigned long long)i, (unsigned long long)left[i], match[i]))
          break;
    check_unchanged(t, 64);
  }
  expect_refused(t, gh_join_count(t, keys, 128, GH_JOIN_AUTO, &pairs, NULL), GH_ERR_UNSUPPORTED, 64,
                 "gh_join_count on a table of one value a key");
  expect_refused(t, gh_join(t, keys, 128, GH_JOIN_AUTO, left_out, value_bits ? right_out : NULL, 4, &pairs, NULL),
                 GH_ERR_UNSUPPORTED, 64, "gh_join on a table of one value a key");
  gh_destroy(t);
}

static void part_map(void) {
  tu_set_context("join map %s %s seed 0x%016llx", jn_design->name, tu_backend_name(jn_backend), (unsigned long long)jn_seed);
  semi_join_of(GH_VARIANT_MAP, 32);
  semi_join_of(GH_VARIANT_MAP, 0);
  if (tu_design_accepts_variant(jn_design, GH_VARIANT_COMPACTING)) semi_join_of(GH_VARIANT_COMPACTING, 32);
  printf("  map, set%s: %s\n", tu_design_accepts_variant(jn_design, GH_VARIANT_COMPACTING) ? ", compacting" : "",
         tu_failure_count() ? "FAILED" : "ok");
}

int main(int argc, char **argv) {
  if (!tu_parse_case_args(argc, argv, &jn_backend, &jn_design, NULL, &jn_seed)) return tu_case_usage(argv[0]);
  tu_skip_unless_backend_usable(jn_backend);
  printf("join %s %s (seed 0x%016llx)\n", jn_design->name, tu_backend_name(jn_backend), (unsigned long long)jn_seed);
  if (tu_design_accepts_variant(jn_design, GH_VARIANT_MAP)) part_map();
  if (tu_design_accepts_variant(jn_design, GH_VARIANT_MULTIVALUE)) {
    part_small();
    part_edges();
    part_large();
  } else {
    printf("  %s has no multi-value variant: the pair joins are refused (part map)\n", jn_design->name);
  }
  return tu_finish("join");
}
