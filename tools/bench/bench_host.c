/* bench_host.c - the host backend, on one thread, so that the scenarios run, checked, without a
 * GPU: malloc, CLOCK_MONOTONIC around the (synchronous) calls, the sorted baseline on qsort. */
#define _DEFAULT_SOURCE /* clock_gettime, sysconf(_SC_AVPHYS_PAGES) */

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static struct timespec g_start, g_laps[BENCH_LAPS][2];

static const char *host_error(void) { return "out of host memory, or an output too small"; }
static int host_release(void *ptr) { return free(ptr), 0; }
static int host_timer_start(void) { return clock_gettime(CLOCK_MONOTONIC, &g_start); }
static int host_memory(size_t *free_bytes) {
  return *free_bytes = (size_t)sysconf(_SC_AVPHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE), 0;
}
static int host_alloc(void **ptr, size_t bytes) { /* a cache line, as gpuhash asks of allocators */
  return (*ptr = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64 * !bytes)) == NULL ? -1 : 0;
}
static int host_generate(void *out, uint64_t n, bench_gen_spec spec, uint8_t *rank_map) {
  if (rank_map) memset(rank_map, 0, spec.zipf_n);
  for (uint64_t i = 0; i < n; ++i) bench_gen_store(out, i, &spec, rank_map);
  return 0;
}
static int host_count_differ(const void *a, const void *b, uint64_t value, uint64_t n,
                             unsigned bytes, uint64_t *count) {
  *count = 0;
  for (uint64_t i = 0; i < n; ++i)
    *count += bench_load(a, i, bytes) != (b ? bench_load(b, i, bytes) : value);
  return 0;
}
static double ms_between(const struct timespec *from, const struct timespec *to) {
  return (double)(to->tv_sec - from->tv_sec) * 1e3 + (double)(to->tv_nsec - from->tv_nsec) * 1e-6;
}
static int host_timer_stop(double *ms) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return *ms = ms_between(&g_start, &now), 0;
}
static int host_lap_start(unsigned lap) { return clock_gettime(CLOCK_MONOTONIC, &g_laps[lap][0]); }
static int host_lap_stop(unsigned lap) { return clock_gettime(CLOCK_MONOTONIC, &g_laps[lap][1]); }
static int host_lap_ms(unsigned lap, double *ms) {
  return *ms = ms_between(&g_laps[lap][0], &g_laps[lap][1]), 0;
}

/* ---- The sorted baseline ------------------------------------------------------------------ */
typedef struct host_pair { uint64_t key, value; } host_pair;
static int compare_pairs(const void *a, const void *b) {
  const host_pair *x = a, *y = b;
  return x->key != y->key ? (x->key > y->key) - (x->key < y->key)
                          : (x->value > y->value) - (x->value < y->value);
}
static int host_sorted_temp_bytes(uint64_t n, unsigned key_bytes, unsigned value_bytes,
                                  size_t *bytes) {
  (void)key_bytes, (void)value_bytes;
  return *bytes = (size_t)(n > 0 ? n : 1) * sizeof(host_pair), 0;
}
static int host_sorted_build(bench_sorted *s, const void *keys_in, const void *values_in,
                             gh_variant variant) {
  host_pair *pairs = s->temp;
  for (uint64_t i = 0; i < s->n; ++i)
    pairs[i] = (host_pair){bench_load(keys_in, i, s->key_bytes),
                           s->value_bytes ? bench_load(values_in, i, s->value_bytes) : 0};
  qsort(pairs, s->n, sizeof *pairs, compare_pairs);
  for (uint64_t i = 0; i < s->n; ++i) {
    bench_store(s->keys, i, s->key_bytes, pairs[i].key);
    if (s->value_bytes) bench_store(s->values, i, s->value_bytes, pairs[i].value);
  }
  s->unique = 0;
  for (uint64_t i = 0; variant != GH_VARIANT_MAP && i < s->n; ++i) {
    const uint64_t key = bench_load(s->keys, i, s->key_bytes);
    if (i == 0 || key != bench_load(s->keys, i - 1, s->key_bytes)) {
      bench_store(s->unique_keys, s->unique, s->key_bytes, key);
      if (variant == GH_VARIANT_MULTIVALUE) s->run_offsets[s->unique] = i;
      s->run_counts[s->unique++] = 0;
    }
    ++s->run_counts[s->unique - 1];
  }
  return 0;
}
static int host_sorted_find(const void *keys, const void *values, uint64_t m, unsigned key_bytes,
                            unsigned out_bytes, const void *queries, uint64_t n, void *values_out,
                            uint8_t *found_out) {
  for (uint64_t i = 0; i < n; ++i)
    bench_sorted_find_one(keys, values, m, key_bytes, out_bytes, queries, i, values_out, found_out);
  return 0;
}
static int host_sorted_find_all(const bench_sorted *s, const void *queries, uint64_t n,
                                uint64_t *offsets_out, uint64_t *positions, void *values_out,
                                uint64_t values_capacity, uint64_t *total) {
  const unsigned vb = s->value_bytes;
  offsets_out[0] = 0; /* the counts land one up, and their running sum makes the offsets */
  for (uint64_t i = 0; i < n; ++i) {
    bench_sorted_count_one(s, queries, i, offsets_out + 1, positions);
    offsets_out[i + 1] += offsets_out[i];
  }
  if ((*total = offsets_out[n]) > values_capacity) return -1;
  for (uint64_t i = 0; i < n; ++i)
    memcpy((char *)values_out + offsets_out[i] * vb, (const char *)s->values + positions[i] * vb,
           (offsets_out[i + 1] - offsets_out[i]) * vb);
  return 0;
}
static int host_sorted_join(const bench_sorted *s, const void *left_keys, uint64_t n, uint64_t *left_out,
                            void *right_out, uint64_t capacity, uint64_t *pairs) {
  host_pair *left = malloc((n + 1) * sizeof *left); /* (key, row) */
  uint64_t *counts = malloc((n + 1) * sizeof *counts), *positions = malloc((n + 1) * sizeof *positions);
  void *keys = malloc((n + 1) * s->key_bytes);
  int failed = left == NULL || counts == NULL || positions == NULL || keys == NULL;
  for (uint64_t i = 0; !failed && i < n; ++i) left[i] = (host_pair){bench_load(left_keys, i, s->key_bytes), i};
  if (!failed) qsort(left, n, sizeof *left, compare_pairs);
  for (uint64_t i = 0; !failed && i < n; ++i) bench_store(keys, i, s->key_bytes, left[i].key);
  *pairs = 0;
  for (uint64_t i = 0; !failed && i < n; ++i) {
    bench_sorted_count_one(s, keys, i, counts, positions);
    *pairs += counts[i];
  }
  failed |= *pairs > capacity;
  for (uint64_t i = 0, at = 0; !failed && i < n; ++i)
    for (uint64_t k = 0; k < counts[i]; ++k, ++at) {
      left_out[at] = left[i].value;
      bench_store(right_out, at, s->value_bytes, bench_load(s->values, positions[i] + k, s->value_bytes));
    }
  free(left), free(counts), free(positions), free(keys);
  return failed ? -1 : 0;
}
void bench_host_open(bench_backend *b) {
  *b = (bench_backend){
      .name = "host", .kind = GH_BACKEND_HOST, .device = "host", .error = host_error,
      .memory = host_memory, .alloc = host_alloc, .release = host_release,
      .generate = host_generate, .count_differ = host_count_differ,
      .timer_start = host_timer_start, .timer_stop = host_timer_stop,
      .lap_start = host_lap_start, .lap_stop = host_lap_stop, .lap_ms = host_lap_ms,
      .sorted_temp_bytes = host_sorted_temp_bytes, .sorted_build = host_sorted_build,
      .sorted_find = host_sorted_find, .sorted_find_all = host_sorted_find_all,
      .sorted_join = host_sorted_join};
}