/* hash_join.c - an inner join of two generated tables with gpuhash's join API, checked against a
 * sort-merge join.
 *
 *   example_hash_join [ORDERS [LINES [OVERLAP]]]     (defaults 200000, 800000, 0.8)
 *
 * orders: ORDERS rows with a unique 32-bit key (a primary key, spread over the 32-bit range).
 * lineitem: LINES rows of a foreign key: with probability OVERLAP the key of an order drawn
 * uniformly, otherwise a key that no order has. Both come from a fixed seed (printed).
 *
 * The join lineitem JOIN orders USING (key) as (lineitem row, orders row) pairs: a multi-value
 * hashgraph table is built over orders' keys, inserted without values so that each entry's value
 * is its orders row (GH_CAP_INDEX_PAYLOADS), and probed with lineitem's keys by gh_join_count
 * (the pair count) and gh_join (the pairs, by lineitem row). The reference: both tables sorted by
 * key and merged; the two pair lists, sorted, must be identical.
 *
 * Runs on the GPU when there is one (GH_BACKEND_AUTO; the host arrays are passed as they are and
 * the library copies them), otherwise on the host backend. The time printed is the table's work:
 * the build (gh_create + gh_insert) and the probe (gh_join_count + gh_join), copies included.
 * Exit status 0: checked; 1: anything else.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gpuhash.h"

#define SEED 20261127u

typedef struct {
  uint64_t left;  /* lineitem row */
  uint64_t right; /* orders row */
} pair;

typedef struct {
  uint32_t key;
  uint32_t row;
} keyed_row;

/* 32 random bits: a 64-bit LCG's state, its bits mixed by an xor-shift, an odd multiplier and
 * another xor-shift (the raw outputs of an LCG lie on a lattice, too evenly spread: a share of
 * draws below 0.8 came out exactly 0.8). */
static uint32_t next_random(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  uint64_t x = *state ^ (*state >> 29);
  x *= 0x8f3a5c19e2b7d46bull;
  return (uint32_t)((x ^ (x >> 32)) >> 32);
}

static double uniform01(uint64_t *state) { return (double)next_random(state) / 4294967296.0; }

/* count distinct 32-bit keys that look random: 0 .. count-1 through a bijection of the 32-bit
 * integers (odd multipliers and an added constant, xor-shifts: each step is invertible modulo 2^32,
 * so distinct inputs stay distinct), its constants drawn from the generator. */
static void distinct_keys(uint32_t *keys, uint64_t count, uint64_t *state) {
  const uint32_t multiplier_a = next_random(state) | 1u;
  const uint32_t multiplier_b = next_random(state) | 1u;
  const uint32_t offset = next_random(state);
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t x = (uint32_t)i * multiplier_a + offset;
    x ^= x >> 15;
    x *= multiplier_b;
    x ^= x >> 13;
    keys[i] = x;
  }
}

static int compare_pair(const void *a, const void *b) {
  const pair *x = a, *y = b;
  if (x->left != y->left) return x->left < y->left ? -1 : 1;
  return (x->right > y->right) - (x->right < y->right);
}

static int compare_keyed_row(const void *a, const void *b) {
  const keyed_row *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->row > y->row) - (x->row < y->row);
}

static double seconds_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

/* The join by gpuhash: *pairs_out (malloc'ed, sorted) and *count. */
static int join_with_table(const uint32_t *orders_key, uint64_t n_orders, const uint32_t *lineitem_key,
                           uint64_t n_lines, pair **pairs_out, uint64_t *count) {
  uint64_t *left = NULL;
  uint32_t *right = NULL;
  gh_table *table = NULL;
  int ok = 0;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  gh_config config = gh_config_default(GH_HASHGRAPH);
  config.variant = GH_VARIANT_MULTIVALUE;
  config.capacity = n_orders;
  gh_status status = gh_create(&config, &table);
  if (status != GH_OK) {
    fprintf(stderr, "gh_create: %s: %s\n", gh_status_name(status), gh_last_create_error());
    return 0;
  }
  status = gh_insert(table, orders_key, NULL, n_orders, GH_APPEND, NULL, NULL); /* values: orders rows */
  const double build_seconds = seconds_since(&start);
  clock_gettime(CLOCK_MONOTONIC, &start);
  if (status == GH_OK) status = gh_join_count(table, lineitem_key, n_lines, GH_JOIN_PROBE, count, NULL);
  if (status == GH_OK) {
    left = malloc((*count ? *count : 1) * sizeof *left);
    right = malloc((*count ? *count : 1) * sizeof *right);
    if (!left || !right) {
      fprintf(stderr, "out of memory for %" PRIu64 " pairs\n", *count);
      goto done;
    }
    status = gh_join(table, lineitem_key, n_lines, GH_JOIN_PROBE, left, right, *count, count, NULL);
  }
  const double probe_seconds = seconds_since(&start);
  if (status != GH_OK) {
    fprintf(stderr, "%s: %s\n", gh_status_name(status), gh_last_error(table));
    goto done;
  }
  printf("gpuhash: hashgraph on the %s backend, %.4f s (build %.4f, probe %.4f)\n",
         gh_table_backend(table) == GH_BACKEND_CUDA ? "CUDA" : "host", build_seconds + probe_seconds,
         build_seconds, probe_seconds);
  *pairs_out = malloc((*count ? *count : 1) * sizeof **pairs_out);
  if (!*pairs_out) {
    fprintf(stderr, "out of memory for %" PRIu64 " pairs\n", *count);
    goto done;
  }
  for (uint64_t j = 0; j < *count; ++j) (*pairs_out)[j] = (pair){left[j], right[j]};
  qsort(*pairs_out, *count, sizeof **pairs_out, compare_pair);
  ok = 1;
done:
  gh_destroy(table);
  free(left);
  free(right);
  return ok;
}

/* The reference: both sides sorted by key, then merged: each run of equal keys on one side meets
 * the run of the same key on the other, every combination a pair. *pairs_out: malloc'ed, sorted. */
static int sort_merge_join(const uint32_t *orders_key, uint64_t n_orders, const uint32_t *lineitem_key,
                           uint64_t n_lines, pair **pairs_out, uint64_t *count) {
  keyed_row *orders = malloc((n_orders ? n_orders : 1) * sizeof *orders);
  keyed_row *lines = malloc((n_lines ? n_lines : 1) * sizeof *lines);
  uint64_t capacity = n_lines ? n_lines : 1, n = 0;
  pair *pairs = malloc(capacity * sizeof *pairs);
  if (!orders || !lines || !pairs) {
    fprintf(stderr, "out of memory for the sort-merge join\n");
    free(orders);
    free(lines);
    free(pairs);
    return 0;
  }
  for (uint64_t i = 0; i < n_orders; ++i) orders[i] = (keyed_row){orders_key[i], (uint32_t)i};
  for (uint64_t i = 0; i < n_lines; ++i) lines[i] = (keyed_row){lineitem_key[i], (uint32_t)i};
  qsort(orders, n_orders, sizeof *orders, compare_keyed_row);
  qsort(lines, n_lines, sizeof *lines, compare_keyed_row);
  uint64_t o = 0, l = 0;
  while (o < n_orders && l < n_lines) {
    if (orders[o].key < lines[l].key) {
      ++o;
    } else if (lines[l].key < orders[o].key) {
      ++l;
    } else {
      uint64_t o_end = o, l_end = l;
      while (o_end < n_orders && orders[o_end].key == orders[o].key) ++o_end;
      while (l_end < n_lines && lines[l_end].key == lines[l].key) ++l_end;
      for (uint64_t a = l; a < l_end; ++a)
        for (uint64_t b = o; b < o_end; ++b) {
          if (n == capacity) {
            pair *grown = realloc(pairs, 2 * capacity * sizeof *pairs);
            if (!grown) {
              fprintf(stderr, "out of memory for %" PRIu64 " pairs\n", 2 * capacity);
              free(orders);
              free(lines);
              free(pairs);
              return 0;
            }
            pairs = grown;
            capacity *= 2;
          }
          pairs[n++] = (pair){lines[a].row, orders[b].row};
        }
      o = o_end;
      l = l_end;
    }
  }
  qsort(pairs, n, sizeof *pairs, compare_pair);
  free(orders);
  free(lines);
  *pairs_out = pairs;
  *count = n;
  return 1;
}

int main(int argc, char **argv) {
  if (argc > 4) {
    fprintf(stderr, "usage: %s [ORDERS [LINES [OVERLAP]]]\n", argv[0]);
    return 1;
  }
  /* Whole numbers only: "1e6" or "-5" would otherwise read as 1 or a huge count. */
  char *end[3] = {"", "", ""};
  const uint64_t n_orders = argc > 1 && argv[1][0] != '-' ? strtoull(argv[1], &end[0], 10) : argc > 1 ? 0 : 200000;
  const uint64_t n_lines = argc > 2 && argv[2][0] != '-' ? strtoull(argv[2], &end[1], 10) : argc > 2 ? 1ull << 33 : 800000;
  const double overlap = argc > 3 ? strtod(argv[3], &end[2]) : 0.8;
  /* Rows are 32-bit (the table's values), and twice n_orders distinct keys must exist. */
  if (*end[0] || *end[1] || *end[2] || n_orders < 1 || n_orders > (1ull << 31) || n_lines > (1ull << 32) ||
      !(overlap >= 0.0 && overlap <= 1.0)) {
    fprintf(stderr, "need 1 <= ORDERS <= 2^31, LINES <= 2^32, 0 <= OVERLAP <= 1\n");
    return 1;
  }
  uint32_t *keys = malloc(2 * n_orders * sizeof *keys);
  uint32_t *lineitem_key = malloc((n_lines ? n_lines : 1) * sizeof *lineitem_key);
  if (!keys || !lineitem_key) {
    fprintf(stderr, "out of memory for the tables\n");
    free(keys);
    free(lineitem_key);
    return 1;
  }
  /* The first n_orders keys are orders'; the next n_orders, keys no order has. */
  uint64_t state = SEED;
  distinct_keys(keys, 2 * n_orders, &state);
  const uint32_t *orders_key = keys, *absent_key = keys + n_orders;
  for (uint64_t i = 0; i < n_lines; ++i) {
    const int matched = uniform01(&state) < overlap;
    const uint64_t pick = (uint64_t)(uniform01(&state) * (double)n_orders);
    lineitem_key[i] = matched ? orders_key[pick] : absent_key[pick];
  }
  printf("orders %" PRIu64 " rows, lineitem %" PRIu64 " rows, overlap %g, seed %u\n", n_orders, n_lines, overlap,
         SEED);

  pair *got = NULL, *want = NULL;
  uint64_t got_count = 0, want_count = 0;
  int ok = join_with_table(orders_key, n_orders, lineitem_key, n_lines, &got, &got_count) &&
           sort_merge_join(orders_key, n_orders, lineitem_key, n_lines, &want, &want_count);
  if (ok) {
    printf("pairs: %" PRIu64 "\n", got_count);
    if (got_count != want_count) {
      printf("check: FAILED (seed %u): gpuhash found %" PRIu64 " pairs, the sort-merge join %" PRIu64 "\n", SEED,
             got_count, want_count);
      ok = 0;
    }
    for (uint64_t j = 0; ok && j < got_count; ++j)
      if (got[j].left != want[j].left || got[j].right != want[j].right) {
        printf("check: FAILED (seed %u): sorted pair %" PRIu64 " is (%" PRIu64 ", %" PRIu64
               "), the sort-merge join's (%" PRIu64 ", %" PRIu64 ")\n",
               SEED, j, got[j].left, got[j].right, want[j].left, want[j].right);
        ok = 0;
      }
    if (ok) printf("check: OK (every pair against a sort-merge join)\n");
  }
  free(got);
  free(want);
  free(keys);
  free(lineitem_key);
  return ok ? 0 : 1;
}
