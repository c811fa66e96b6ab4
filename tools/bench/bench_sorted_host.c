/*
 * bench_sorted_host.c - the sorted-array baseline of the cuckoo scenarios on the host backend:
 * qsort of the pairs, a loop for the run-length encoding and the scans, and the per-query bodies
 * of bench_sorted.h (the ones the CUDA kernels run) in plain loops. One thread: these numbers
 * are only there so that the scenarios run (and are checked) without a GPU.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct host_pair {
  uint64_t key, value;
} host_pair;

static int compare_pairs(const void *a, const void *b) {
  const host_pair *x = a, *y = b;
  if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
  return (x->value > y->value) - (x->value < y->value);
}

int bench_host_sorted_temp_bytes(uint64_t n, unsigned key_bytes, unsigned value_bytes,
                                 size_t *bytes) {
  (void)key_bytes, (void)value_bytes;
  *bytes = (size_t)(n > 0 ? n : 1) * sizeof(host_pair);
  return 0;
}

int bench_host_sorted_build(bench_sorted *s, const void *keys_in, const void *values_in) {
  host_pair *pairs = s->temp;
  for (uint64_t i = 0; i < s->n; ++i) {
    pairs[i].key = bench_load_element(keys_in, i, s->key_bytes);
    pairs[i].value = s->value_bytes != 0 ? bench_load_element(values_in, i, s->value_bytes) : 0;
  }
  qsort(pairs, s->n, sizeof *pairs, compare_pairs);
  for (uint64_t i = 0; i < s->n; ++i) {
    bench_store_element(s->keys, i, s->key_bytes, pairs[i].key);
    if (s->value_bytes != 0) bench_store_element(s->values, i, s->value_bytes, pairs[i].value);
  }
  return 0;
}

int bench_host_sorted_runs(bench_sorted *s, int with_offsets) {
  uint64_t runs = 0;
  for (uint64_t i = 0; i < s->n; ++i) {
    const uint64_t key = bench_load_element(s->keys, i, s->key_bytes);
    if (i == 0 || key != bench_load_element(s->keys, i - 1, s->key_bytes)) {
      bench_store_element(s->unique_keys, runs, s->key_bytes, key);
      if (with_offsets) s->run_offsets[runs] = i;
      s->run_counts[runs++] = 0;
    }
    ++s->run_counts[runs - 1];
  }
  s->unique = runs;
  return 0;
}

int bench_host_sorted_find(const void *keys, const void *values, uint64_t m, unsigned key_bytes,
                           unsigned out_bytes, const void *queries, uint64_t n, void *values_out,
                           uint8_t *found_out) {
  for (uint64_t i = 0; i < n; ++i)
    bench_sorted_find_one(keys, values, m, key_bytes, out_bytes, queries, i, values_out, found_out);
  return 0;
}

int bench_host_sorted_find_all(const bench_sorted *s, const void *queries, uint64_t n,
                               uint64_t *offsets_out, uint64_t *positions, void *values_out,
                               uint64_t values_capacity, uint64_t *total) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; ++i) {
    bench_sorted_count_one(s, queries, i, offsets_out, positions);
    const uint64_t count = offsets_out[i];
    offsets_out[i] = sum;
    sum += count;
  }
  offsets_out[n] = sum;
  *total = sum;
  if (sum > values_capacity) return bench_host_fail("sorted find_all: the values do not fit");
  for (uint64_t i = 0; i < n; ++i)
    memcpy((char *)values_out + offsets_out[i] * s->value_bytes,
           (const char *)s->values + positions[i] * s->value_bytes,
           (offsets_out[i + 1] - offsets_out[i]) * s->value_bytes);
  return 0;
}
