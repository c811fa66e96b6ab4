/* toolkit_host.c - the host backend's scan, sort and run-length encode (core/toolkit.h). They run
 * on the calling thread: they serve bookkeeping passes (ids, multi-value builds) whose cost is
 * small next to the table operations around them. */
#include <stdlib.h>
#include <string.h>

#include "core/toolkit.h"
#include "core/words.h"

gh_status gh__host_exclusive_sum_u64(gh_table *t, const uint64_t *in, uint64_t *out, uint64_t count) {
  uint64_t sum = 0;
  (void)t;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t value = in[i]; /* read before the write: in == out is allowed */
    out[i] = sum;
    sum += value;
  }
  return GH_OK;
}

/* A pair's sort key: the key, then its input position, which makes qsort stable (as CUB's radix
 * sort is). */
typedef struct sort_item {
  uint64_t key;
  uint64_t position;
} sort_item;

static int compare_items(const void *a, const void *b) {
  const sort_item *x = (const sort_item *)a, *y = (const sort_item *)b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->position < y->position ? -1 : (x->position > y->position);
}

gh_status gh__host_sort_pairs(gh_table *t, const void *keys_in, void *keys_out, const void *values_in,
                              void *values_out, uint64_t n, unsigned key_bits, unsigned value_bits) {
  const size_t bytes = (size_t)(n ? n : 1) * sizeof(sort_item);
  sort_item *items = (sort_item *)gh__alloc(t, bytes, GH_MEMORY_HOST);
  if (items == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no host memory to sort %llu pairs; nothing was changed",
                    (unsigned long long)n);
  for (uint64_t i = 0; i < n; ++i) {
    items[i].key = gh__read_word(keys_in, i, key_bits);
    items[i].position = i;
  }
  qsort(items, (size_t)n, sizeof *items, compare_items);
  for (uint64_t i = 0; i < n; ++i) {
    gh__write_word(keys_out, i, key_bits, items[i].key);
    if (value_bits)
      gh__write_word(values_out, i, value_bits, gh__read_word(values_in, items[i].position, value_bits));
  }
  gh__free(t, items, bytes, GH_MEMORY_HOST);
  return GH_OK;
}

gh_status gh__host_run_length_encode(gh_table *t, const void *keys_in, uint64_t n, unsigned key_bits,
                                     void *unique_out, uint64_t *counts_out, uint64_t *runs_out) {
  uint64_t runs = 0, previous = 0;
  (void)t;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t key = gh__read_word(keys_in, i, key_bits);
    if (i == 0 || key != previous) {
      gh__write_word(unique_out, runs, key_bits, key);
      counts_out[runs] = 0;
      runs += 1;
    }
    counts_out[runs - 1] += 1;
    previous = key;
  }
  *runs_out = runs;
  return GH_OK;
}

gh_status gh__host_expand_offsets(gh_table *t, const uint64_t *offsets, uint64_t n, uint64_t *rows_out) {
  (void)t;
  for (uint64_t i = 0; i < n; ++i)
    for (uint64_t j = offsets[i]; j < offsets[i + 1u]; ++j) rows_out[j] = i;
  return GH_OK;
}

uint64_t gh__host_partition(uint64_t n, unsigned digits, unsigned (*digit)(const void *ctx, uint64_t i),
                            void (*move)(const void *ctx, uint64_t i, uint64_t to), const void *ctx, uint64_t *places) {
  memset(places, 0, (size_t)digits * sizeof *places);
  for (uint64_t i = 0; i < n; ++i) places[digit(ctx, i)] += 1u;
  uint64_t before = 0, longest = 0;
  for (unsigned d = 0; d < digits; ++d) {
    const uint64_t count = places[d];
    if (count > longest) longest = count;
    places[d] = before;
    before += count;
  }
  for (uint64_t i = 0; i < n; ++i) move(ctx, i, places[digit(ctx, i)]++);
  return longest;
}
