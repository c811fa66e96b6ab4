/*
 * dycuckoo_device - the DyCuckoo table's device-side API (include/gpuhash/dycuckoo.cuh) from a
 * test's own kernels, one operation per thread, checked against the bulk API:
 *   - inserts of new keys into a table created with one bucket per subtable: those the view has no
 *     room for come back GH_DYCUCKOO_NEEDS_RESIZE and go in with gh_insert, as the header says; the
 *     same view is used again after those host calls grew the table
 *   - finds (present with their values, absent), merges by policy (GH_ADD), erases (twice: the second
 *     finds nothing), the all-ones key; values of 4, 8 and 24 bytes, 32- and 64-bit keys
 *   - a race: every key inserted by many threads at once with GH_ADD 1: each key is stored once,
 *     exactly one thread reports it new, and its value counts every thread that stored or merged
 * gh_validate and gh_size after every phase.
 *
 *   dycuckoo_device
 *
 * Built only when the CUDA backend is (GH_HAVE_CUDA); without a GPU it exits 77.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuhash/dycuckoo.cuh"
#include "test_util.h"

#define DY_DEVICE_SEED 0xD1DE71CE5EEDull

enum dy_device_op { OP_INSERT, OP_FIND, OP_ERASE };

/* keys[i] (key_bits wide) with values[i] (value_bytes each) per thread, grid-stride. */
__global__ void dy_ops(gh_device_view view, int op, const void *keys, unsigned key_bits, const unsigned char *values,
                       unsigned value_bytes, uint64_t n, int policy, int *results, unsigned char *values_out) {
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint64_t key = key_bits == 32 ? ((const uint32_t *)keys)[i] : ((const uint64_t *)keys)[i];
    int r = -1;
    if (op == OP_INSERT)
      r = gh_dycuckoo_device_insert(view, key, values ? values + i * value_bytes : NULL, (gh_dup_policy)policy);
    if (op == OP_FIND) r = gh_dycuckoo_device_find(view, key, values_out ? values_out + i * value_bytes : NULL);
    if (op == OP_ERASE) r = gh_dycuckoo_device_erase(view, key);
    results[i] = r;
  }
}

static void cuda_ok(cudaError_t err, const char *what) {
  REQUIRE(err == cudaSuccess, "%s: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

static void *to_device(const void *host, size_t bytes) {
  void *d = NULL;
  cuda_ok(cudaMalloc(&d, bytes ? bytes : 1), "cudaMalloc");
  if (host && bytes) cuda_ok(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice), "to the device");
  return d;
}

/* One kernel over n operations; results (and values found, when values_out) back on the host. */
static void run(const gh_device_view &view, int op, const void *keys, unsigned key_bits, const unsigned char *values,
                unsigned value_bytes, uint64_t n, gh_dup_policy policy, int *results, unsigned char *values_out) {
  void *dk = to_device(keys, n * (key_bits / 8));
  unsigned char *dv = values ? (unsigned char *)to_device(values, n * value_bytes) : NULL;
  unsigned char *dout = values_out ? (unsigned char *)to_device(NULL, n * value_bytes) : NULL;
  int *dr = (int *)to_device(NULL, n * sizeof(int));
  const uint64_t blocks = (n + 255) / 256;
  dy_ops<<<(unsigned)(blocks < 2048 ? blocks : 2048), 256>>>(view, op, dk, key_bits, dv, value_bytes, n, (int)policy,
                                                           dr, dout);
  cuda_ok(cudaGetLastError(), "kernel launch");
  cuda_ok(cudaDeviceSynchronize(), "the kernel");
  cuda_ok(cudaMemcpy(results, dr, n * sizeof(int), cudaMemcpyDeviceToHost), "results back");
  if (values_out) cuda_ok(cudaMemcpy(values_out, dout, n * value_bytes, cudaMemcpyDeviceToHost), "values back");
  cudaFree(dk);
  cudaFree(dv);
  cudaFree(dout);
  cudaFree(dr);
}

static gh_table *make(unsigned key_bits, unsigned value_bytes, uint64_t capacity) {
  gh_config cfg = gh_config_default(GH_DYCUCKOO);
  gh_table *t = NULL;
  cfg.backend = GH_BACKEND_CUDA;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bytes * 8;
  cfg.capacity = capacity;
  cfg.seed = DY_DEVICE_SEED;
  REQUIRE(gh_create(&cfg, &t) == GH_OK, "gh_create: %s", gh_last_create_error());
  return t;
}

static void check_size(gh_table *t, uint64_t want) {
  uint64_t size = 0;
  if (CHECK_OK(t, gh_size(t, &size)))
    CHECK(size == want, "gh_size %llu, expected %llu", (unsigned long long)size, (unsigned long long)want);
  CHECK_OK(t, gh_validate(t));
}

/* Values of `bytes` bytes with an integer in their first bytes (what GH_ADD adds to). */
static void fill_values(tu_rng *rng, unsigned bytes, uint64_t n, unsigned char *out) {
  for (uint64_t i = 0; i < n * bytes; ++i) out[i] = (unsigned char)tu_next(rng);
}

/* Bulk finds: keys present with exactly these values. */
static void bulk_find(gh_table *t, const void *keys, uint64_t n, unsigned bytes, const unsigned char *want) {
  unsigned char *got = (unsigned char *)tu_xmalloc(n * bytes + 1);
  uint8_t *found = (uint8_t *)tu_xmalloc(n);
  if (CHECK_OK(t, gh_find(t, keys, n, bytes ? got : NULL, found, NULL, NULL)))
    for (uint64_t i = 0; i < n; ++i)
      if (!CHECK(found[i] && (!bytes || memcmp(got + i * bytes, want + i * bytes, bytes) == 0),
                 "bulk find of position %llu: found %u, value %s", (unsigned long long)i, found[i],
                 found[i] ? "differs" : "-"))
        break;
  free(got);
  free(found);
}

static void map_case(unsigned key_bits, unsigned bytes) {
  const uint64_t n = 300000;
  tu_rng rng = tu_rng_make(tu_mix_seed(DY_DEVICE_SEED, key_bits, bytes, 1));
  tu_set_context("dycuckoo device map k%u %u-byte values seed 0x%016llx", key_bits, bytes,
                 (unsigned long long)DY_DEVICE_SEED);
  uint64_t *all = (uint64_t *)tu_xmalloc(2 * n * 8);
  tu_gen_unique_keys(&rng, key_bits, 2 * n, NULL, all);
  for (uint64_t i = 1; i < 2 * n; ++i)
    if (all[i] == tu_mask(key_bits)) all[i] = all[0];
  all[0] = tu_mask(key_bits); /* the all-ones key, kept beside the subtables */
  void *keys = tu_pack(all, n, key_bits), *absent = tu_pack(all + n, n, key_bits);
  unsigned char *values = (unsigned char *)tu_xmalloc(n * bytes + 1), *got = (unsigned char *)tu_xmalloc(n * bytes + 1);
  int *results = (int *)tu_xmalloc(n * sizeof(int));
  fill_values(&rng, bytes, n, values);
  gh_table *t = make(key_bits, bytes, 1); /* one bucket per subtable: most inserts need a resize */
  gh_device_view view;
  REQUIRE(gh_get_device_view(t, &view) == GH_OK, "gh_get_device_view: %s", gh_last_error(t));
  CHECK(view.design == GH_DYCUCKOO && view.key_bits == key_bits && view.value_bits == bytes * 8 && view.size != NULL,
        "the view describes another table");

  /* Rounds of device inserts; those needing a resize go in by gh_insert, which grows the table, and
   * the same view sees it. */
  uint64_t on_device = 0, by_host = 0;
  uint8_t *stored = (uint8_t *)calloc(n, 1);
  for (int round = 0; round < 3 && tu_failure_count() == 0; ++round) {
    tu_set_phase("device inserts, round %d", round);
    run(view, OP_INSERT, keys, key_bits, bytes ? values : NULL, bytes, n, GH_OVERWRITE, results, NULL);
    uint64_t *retry = (uint64_t *)tu_xmalloc(n * 8);
    unsigned char *retry_values = (unsigned char *)tu_xmalloc(n * bytes + 1);
    uint64_t retries = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const int want = stored[i] ? GH_DYCUCKOO_MERGED : GH_DYCUCKOO_INSERTED;
      if (results[i] == GH_DYCUCKOO_NEEDS_RESIZE && !stored[i]) {
        retry[retries] = all[i];
        memcpy(retry_values + retries * bytes, values + i * bytes, bytes);
        retries += 1;
      } else if (!CHECK(results[i] == want, "device insert of position %llu returned %d, expected %d",
                        (unsigned long long)i, results[i], want)) {
        break;
      }
      on_device += results[i] == GH_DYCUCKOO_INSERTED;
      stored[i] = results[i] != GH_DYCUCKOO_NEEDS_RESIZE;
    }
    check_size(t, on_device);
    tu_set_phase("gh_insert of the %llu keys that needed a resize, round %d", (unsigned long long)retries, round);
    void *pk = tu_pack(retry, retries, key_bits);
    if (retries) CHECK_OK(t, gh_insert(t, pk, bytes ? retry_values : NULL, retries, GH_OVERWRITE, NULL, NULL));
    for (uint64_t i = 0; i < n; ++i) stored[i] = 1;
    by_host += retries;
    check_size(t, n);
    free(pk);
    free(retry);
    free(retry_values);
    on_device = n; /* every key stored now: later rounds merge */
    if (retries == 0) break;
  }
  free(stored);
  CHECK(by_host > 0, "no device insert needed a resize in a table of one bucket per subtable");

  tu_set_phase("device finds of present and absent keys");
  run(view, OP_FIND, keys, key_bits, NULL, bytes, n, GH_KEEP_FIRST, results, bytes ? got : NULL);
  for (uint64_t i = 0; i < n; ++i)
    if (!CHECK(results[i] == 1 && (!bytes || memcmp(got + i * bytes, values + i * bytes, bytes) == 0),
               "device find of position %llu: %d, value %s", (unsigned long long)i, results[i],
               results[i] == 1 ? "differs" : "-"))
      break;
  run(view, OP_FIND, absent, key_bits, NULL, bytes, n, GH_KEEP_FIRST, results, bytes ? got : NULL);
  for (uint64_t i = 0; i < n; ++i)
    if (!CHECK(results[i] == 0, "device find of absent position %llu: %d", (unsigned long long)i, results[i])) break;
  bulk_find(t, keys, n, bytes, values);

  if (bytes == 4 || bytes == 8) {
    tu_set_phase("device merges with GH_ADD");
    unsigned char *ones = (unsigned char *)calloc(n, bytes);
    for (uint64_t i = 0; i < n; ++i) ones[i * bytes] = 1;
    run(view, OP_INSERT, keys, key_bits, ones, bytes, n, GH_ADD, results, NULL);
    for (uint64_t i = 0; i < n; ++i) {
      if (!CHECK(results[i] == GH_DYCUCKOO_MERGED, "merge of position %llu returned %d", (unsigned long long)i, results[i]))
        break;
      uint64_t v = 0;
      memcpy(&v, values + i * bytes, bytes);
      v += 1;
      memcpy(values + i * bytes, &v, bytes);
    }
    free(ones);
    check_size(t, n);
    bulk_find(t, keys, n, bytes, values);
  }

  tu_set_phase("device erases of every other key, twice");
  uint64_t *half = (uint64_t *)tu_xmalloc(n / 2 * 8);
  for (uint64_t i = 0; i < n / 2; ++i) half[i] = all[2 * i];
  void *half_keys = tu_pack(half, n / 2, key_bits);
  for (int again = 0; again < 2; ++again) {
    run(view, OP_ERASE, half_keys, key_bits, NULL, bytes, n / 2, GH_KEEP_FIRST, results, NULL);
    for (uint64_t i = 0; i < n / 2; ++i)
      if (!CHECK(results[i] == !again, "erase %d of key %llu returned %d", again, (unsigned long long)half[i], results[i]))
        break;
    check_size(t, n - n / 2);
  }
  run(view, OP_FIND, keys, key_bits, NULL, bytes, n, GH_KEEP_FIRST, results, NULL);
  for (uint64_t i = 0; i < n; ++i)
    if (!CHECK(results[i] == (int)(i % 2), "find after the erases, position %llu: %d", (unsigned long long)i, results[i]))
      break;

  free(half);
  free(half_keys);
  free(all);
  free(keys);
  free(absent);
  free(values);
  free(got);
  free(results);
  gh_destroy(t);
}

/* Every key inserted by many threads at once (GH_ADD of 1): stored once, one thread told it is new,
 * and its value counts exactly the threads that stored or merged it. */
static void race_case(unsigned key_bits) {
  const uint64_t distinct = 4096, copies = 64, n = distinct * copies;
  tu_rng rng = tu_rng_make(tu_mix_seed(DY_DEVICE_SEED, key_bits, 2, 2));
  tu_set_context("dycuckoo device race k%u seed 0x%016llx", key_bits, (unsigned long long)DY_DEVICE_SEED);
  uint64_t *pool = (uint64_t *)tu_xmalloc(distinct * 8), *batch = (uint64_t *)tu_xmalloc(n * 8);
  tu_gen_unique_keys(&rng, key_bits, distinct, NULL, pool);
  for (uint64_t i = 0; i < n; ++i) batch[i] = i % distinct;
  tu_shuffle(&rng, batch, n);
  uint64_t *order = (uint64_t *)tu_xmalloc(n * 8);
  for (uint64_t i = 0; i < n; ++i) order[i] = pool[batch[i]];
  void *keys = tu_pack(order, n, key_bits);
  uint32_t *ones = (uint32_t *)tu_xmalloc(n * 4);
  for (uint64_t i = 0; i < n; ++i) ones[i] = 1;
  int *results = (int *)tu_xmalloc(n * sizeof(int));
  gh_table *t = make(key_bits, 4, 2 * distinct);
  gh_device_view view;
  REQUIRE(gh_get_device_view(t, &view) == GH_OK, "gh_get_device_view: %s", gh_last_error(t));
  tu_set_phase("%llu threads insert each of %llu keys", (unsigned long long)copies, (unsigned long long)distinct);
  run(view, OP_INSERT, keys, key_bits, (const unsigned char *)ones, 4, n, GH_ADD, results, NULL);
  uint64_t *news = (uint64_t *)calloc(distinct, 8), *counted = (uint64_t *)calloc(distinct, 8), stored_keys = 0;
  for (uint64_t i = 0; i < n; ++i) {
    news[batch[i]] += results[i] == GH_DYCUCKOO_INSERTED;
    counted[batch[i]] += results[i] != GH_DYCUCKOO_NEEDS_RESIZE;
  }
  uint32_t *got = (uint32_t *)tu_xmalloc(distinct * 4);
  uint8_t *found = (uint8_t *)tu_xmalloc(distinct);
  void *pool_keys = tu_pack(pool, distinct, key_bits);
  if (CHECK_OK(t, gh_find(t, pool_keys, distinct, got, found, NULL, NULL)))
    for (uint64_t u = 0; u < distinct; ++u) {
      stored_keys += found[u];
      if (!CHECK(news[u] == (uint64_t)found[u] && (!found[u] || got[u] == counted[u]),
                 "key %llu: %llu threads told it new, found %u, value %u, %llu threads stored or merged it",
                 (unsigned long long)pool[u], (unsigned long long)news[u], found[u], got[u],
                 (unsigned long long)counted[u]))
        break;
    }
  check_size(t, stored_keys);
  CHECK(stored_keys > 0, "no key stored");
  free(pool);
  free(batch);
  free(order);
  free(keys);
  free(ones);
  free(results);
  free(news);
  free(counted);
  free(got);
  free(found);
  free(pool_keys);
  gh_destroy(t);
}

int main(void) {
  tu_skip_unless_backend_usable(GH_BACKEND_CUDA);
  map_case(32, 4);
  map_case(64, 8);
  map_case(32, 24);
  map_case(64, 0);
  race_case(32);
  race_case(64);
  return tu_finish("dycuckoo_device");
}
