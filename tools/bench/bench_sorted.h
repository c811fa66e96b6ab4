/*
 * bench_sorted.h - the sorted-array structure the cuckoo scenarios compare with (Alcantara et
 * al., section 4.5): the (key, value) pairs sorted by key and searched by binary search, and for
 * compacting / multivalue inputs the run-length encoding of the sorted keys (distinct keys, their
 * counts and the offsets of their runs).
 *
 * The per-query bodies below are shared by the host loops (bench_sorted_host.c) and the CUDA
 * kernels (bench_cuda.cu), as bench_gen.h's are; sorting and run-length encoding are qsort and
 * loops on the host, CUB on the device.
 */
#ifndef GPUHASH_BENCH_SORTED_H
#define GPUHASH_BENCH_SORTED_H

#include <stddef.h>
#include <stdint.h>

#include "bench_gen.h"

/* One sorted structure; plain data (passed to kernels by value). The caller allocates every
 * array on the backend; the build functions fill them. */
typedef struct bench_sorted {
  unsigned key_bytes, value_bytes; /* 4 or 8; value_bytes 0: keys only (compacting) */
  uint64_t n;                      /* pairs (or keys) sorted */
  void *keys, *values;             /* n sorted keys; their values (NULL for keys only) */
  void *unique_keys;               /* n slots; the first `unique` hold the distinct keys */
  uint64_t *run_counts;            /* n slots: pairs per distinct key */
  uint64_t *run_offsets;           /* n slots: first position of each distinct key's run */
  uint64_t unique;                 /* distinct keys, set by the run-length encoding */
  void *temp;                      /* scratch of the sort and scans (CUB temporary storage) */
  size_t temp_bytes;
} bench_sorted;

/* The baseline's steps, one signature each: bcu_sorted_* in bench_cuda.h (CUB; documented
 * there) and bench_host_sorted_* in bench.h implement them, bench_backend points to one set. */
typedef int bench_sorted_temp_bytes_fn(uint64_t n, unsigned key_bytes, unsigned value_bytes,
                                       size_t *bytes);
typedef int bench_sorted_build_fn(bench_sorted *s, const void *keys_in, const void *values_in);
typedef int bench_sorted_runs_fn(bench_sorted *s, int with_offsets);
typedef int bench_sorted_find_fn(const void *keys, const void *values, uint64_t m,
                                 unsigned key_bytes, unsigned out_bytes, const void *queries,
                                 uint64_t n, void *values_out, uint8_t *found_out);
typedef int bench_sorted_find_all_fn(const bench_sorted *s, const void *queries, uint64_t n,
                                     uint64_t *offsets_out, uint64_t *positions, void *values_out,
                                     uint64_t values_capacity, uint64_t *total);

/* Stores v into element i of an array of 4- or 8-byte elements. */
static inline BENCH_HD void bench_store_element(void *base, uint64_t i, unsigned elem_bytes,
                                                uint64_t v) {
  if (elem_bytes == 4)
    ((uint32_t *)base)[i] = (uint32_t)v;
  else
    ((uint64_t *)base)[i] = v;
}

/* The first position of sorted keys[0, m) whose key is >= key; m when there is none. */
static inline BENCH_HD uint64_t bench_lower_bound(const void *keys, uint64_t m, uint64_t key,
                                                  unsigned key_bytes) {
  uint64_t first = 0, count = m;
  while (count > 0) {
    const uint64_t half = count / 2;
    if (bench_load_element(keys, first + half, key_bytes) < key) {
      first += half + 1;
      count -= half + 1;
    } else {
      count = half;
    }
  }
  return first;
}

/* Where query key lies in sorted keys[0, m); -1 (all ones) when it is absent. */
static inline BENCH_HD uint64_t bench_sorted_position(const void *keys, uint64_t m, uint64_t key,
                                                      unsigned key_bytes) {
  const uint64_t pos = bench_lower_bound(keys, m, key, key_bytes);
  return pos < m && bench_load_element(keys, pos, key_bytes) == key ? pos : ~0ull;
}

/* Query i of a lookup in sorted keys[0, m) (keys of key_bytes): on a hit values_out[i] =
 * values[pos], or pos itself when values is NULL (the id of a distinct key: compacting), and
 * found_out[i] = 1; a miss writes 0 and 0. values_out elements are out_bytes wide. */
static inline BENCH_HD void bench_sorted_find_one(const void *keys, const void *values, uint64_t m,
                                                  unsigned key_bytes, unsigned out_bytes,
                                                  const void *queries, uint64_t i, void *values_out,
                                                  uint8_t *found_out) {
  const uint64_t pos =
      bench_sorted_position(keys, m, bench_load_element(queries, i, key_bytes), key_bytes);
  const int found = pos != ~0ull;
  const uint64_t value = !found           ? 0
                         : values != NULL ? bench_load_element(values, pos, out_bytes)
                                          : pos;
  bench_store_element(values_out, i, out_bytes, value);
  found_out[i] = (uint8_t)found;
}

/* Query i of the count pass of a multivalue lookup over the run-length encoding of s:
 * counts[i] = values of the key (0 if absent), positions[i] = where they start in s->values. */
static inline BENCH_HD void bench_sorted_count_one(const bench_sorted *s, const void *queries,
                                                   uint64_t i, uint64_t *counts,
                                                   uint64_t *positions) {
  const uint64_t run = bench_sorted_position(
      s->unique_keys, s->unique, bench_load_element(queries, i, s->key_bytes), s->key_bytes);
  counts[i] = run != ~0ull ? s->run_counts[run] : 0;
  positions[i] = run != ~0ull ? s->run_offsets[run] : 0;
}

#endif /* GPUHASH_BENCH_SORTED_H */
