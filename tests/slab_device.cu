/*
 * slab_device - the slab hash's device-side API (include/gpuhash/slab.cuh) from a test's own
 * kernels, checked against the bulk API and a reference: inserts (new keys, the two special key
 * patterns, merges by policy), finds of present and absent keys, erases (twice: the second finds
 * nothing), a multivalue table's appends and erase-all, one view kept across host calls that grow
 * the buckets, and a kernel where every key is inserted and erased by many warps at once (a map
 * never holds a key twice). gh_validate after every phase.
 *
 *   slab_device
 *
 * Built only when the CUDA backend is (GH_HAVE_CUDA); without a GPU it exits 77.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuhash/slab.cuh"
#include "test_util.h"

#define SLAB_DEVICE_SEED 0x51ABDE71CEull

enum device_op { DEV_INSERT, DEV_FIND, DEV_ERASE };

/* One operation per thread of a grid-stride loop; whole warps go round together (the calls are
 * warp-wide), lanes past n calling with active = 0. */
__global__ void run_ops(gh_device_view view, int op, const uint64_t *keys, const uint64_t *values, uint64_t n,
                        int policy, int *results, uint64_t *values_out) {
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n + 31u) / 32u * 32u; i += stride) {
    const int active = i < n;
    const uint64_t key = active ? keys[i] : 0, value = active && values ? values[i] : 0;
    int r = 0;
    uint64_t found = 0;
    if (op == DEV_INSERT) r = gh_slab_device_insert(view, active, key, value, (gh_dup_policy)policy);
    if (op == DEV_FIND) r = gh_slab_device_find(view, active, key, &found);
    if (op == DEV_ERASE) r = gh_slab_device_erase(view, active, key);
    if (active) {
      results[i] = r;
      if (values_out) values_out[i] = found;
    }
  }
}

static void cuda_ok(cudaError_t err, const char *what) {
  REQUIRE(err == cudaSuccess, "%s: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

/* Device copies of host arrays, and a run of one kernel with its results back on the host. */
typedef struct device_run {
  uint64_t *keys, *values, *values_out;
  int *results;
  uint64_t n;
} device_run;

static device_run run_make(const uint64_t *keys, const uint64_t *values, uint64_t n) {
  device_run d;
  cuda_ok(cudaMalloc(&d.keys, n * 8 + 8), "cudaMalloc");
  cuda_ok(cudaMalloc(&d.values, n * 8 + 8), "cudaMalloc");
  cuda_ok(cudaMalloc(&d.values_out, n * 8 + 8), "cudaMalloc");
  cuda_ok(cudaMalloc(&d.results, n * sizeof(int) + 4), "cudaMalloc");
  cuda_ok(cudaMemcpy(d.keys, keys, n * 8, cudaMemcpyHostToDevice), "keys to the device");
  if (values) cuda_ok(cudaMemcpy(d.values, values, n * 8, cudaMemcpyHostToDevice), "values to the device");
  d.n = n;
  return d;
}

static void run_free(device_run *d) {
  cudaFree(d->keys);
  cudaFree(d->values);
  cudaFree(d->values_out);
  cudaFree(d->results);
}

static void run_kernel(const gh_device_view &view, device_run *d, int op, gh_dup_policy policy, int *results,
                       uint64_t *values_out) {
  run_ops<<<(unsigned)((d->n + 255) / 256 < 1024 ? (d->n + 255) / 256 : 1024), 256>>>(
      view, op, d->keys, op == DEV_INSERT ? d->values : NULL, d->n, (int)policy, d->results, d->values_out);
  cuda_ok(cudaGetLastError(), "kernel launch");
  cuda_ok(cudaDeviceSynchronize(), "the kernel");
  cuda_ok(cudaMemcpy(results, d->results, d->n * sizeof(int), cudaMemcpyDeviceToHost), "results back");
  if (values_out) cuda_ok(cudaMemcpy(values_out, d->values_out, d->n * 8, cudaMemcpyDeviceToHost), "values back");
}

static gh_table *make(unsigned key_bits, unsigned value_bits, gh_variant variant, uint64_t capacity) {
  gh_config cfg = gh_config_default(GH_SLAB);
  gh_table *t = NULL;
  cfg.backend = GH_BACKEND_CUDA;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  cfg.variant = variant;
  cfg.capacity = capacity;
  cfg.seed = SLAB_DEVICE_SEED;
  REQUIRE(gh_create(&cfg, &t) == GH_OK, "gh_create: %s", gh_last_create_error());
  return t;
}

static uint64_t size_of(gh_table *t) {
  uint64_t n = 0;
  CHECK_OK(t, gh_size(t, &n));
  return n;
}

/* Inserts on the device; keys that found no free slab (code 2) go in with gh_insert, as the header
 * says. Returns how many did. */
static uint64_t device_insert(gh_table *t, const gh_device_view &view, const uint64_t *keys, const uint64_t *values,
                              uint64_t n, unsigned key_bits, unsigned value_bits, int expect) {
  const gh_dup_policy bulk_policy = view.layout[0] == GH_VARIANT_MULTIVALUE ? GH_APPEND : GH_OVERWRITE;
  device_run d = run_make(keys, values, n);
  int *results = (int *)tu_xmalloc(n * sizeof(int));
  uint64_t *retry_keys = (uint64_t *)tu_xmalloc(n * 8 + 8), *retry_values = (uint64_t *)tu_xmalloc(n * 8 + 8);
  uint64_t retries = 0;
  run_kernel(view, &d, DEV_INSERT, GH_OVERWRITE, results, NULL);
  for (uint64_t i = 0; i < n; ++i) {
    if (results[i] == 2) {
      retry_keys[retries] = keys[i];
      retry_values[retries++] = values ? values[i] : 0;
    } else if (!CHECK(results[i] == expect, "device insert of key %llu returned %d, expected %d",
                      (unsigned long long)keys[i], results[i], expect)) {
      break;
    }
  }
  if (retries) {
    void *pk = tu_pack(retry_keys, retries, key_bits), *pv = value_bits ? tu_pack(retry_values, retries, value_bits) : NULL;
    CHECK_OK(t, gh_insert(t, pk, pv, retries, bulk_policy, NULL, NULL));
    free(pk);
    free(pv);
  }
  free(results);
  free(retry_keys);
  free(retry_values);
  run_free(&d);
  return retries;
}

/* Finds on the device: every key present with want_values (or none present when want_values is NULL). */
static void device_find(const gh_device_view &view, const uint64_t *keys, uint64_t n, const uint64_t *want_values,
                        unsigned value_bits) {
  device_run d = run_make(keys, NULL, n);
  int *results = (int *)tu_xmalloc(n * sizeof(int));
  uint64_t *got = (uint64_t *)tu_xmalloc(n * 8);
  run_kernel(view, &d, DEV_FIND, GH_OVERWRITE, results, got);
  for (uint64_t i = 0; i < n; ++i) {
    const int want = want_values != NULL;
    if (!CHECK(results[i] == want, "device find of key %llu returned %d, expected %d", (unsigned long long)keys[i],
               results[i], want))
      break;
    if (want && value_bits && !CHECK(got[i] == want_values[i], "device find of key %llu: value %llu, expected %llu",
                                     (unsigned long long)keys[i], (unsigned long long)got[i],
                                     (unsigned long long)want_values[i]))
      break;
  }
  free(results);
  free(got);
  run_free(&d);
}

static void device_erase(const gh_device_view &view, const uint64_t *keys, uint64_t n, int expect) {
  device_run d = run_make(keys, NULL, n);
  int *results = (int *)tu_xmalloc(n * sizeof(int));
  run_kernel(view, &d, DEV_ERASE, GH_OVERWRITE, results, NULL);
  for (uint64_t i = 0; i < n; ++i)
    if (!CHECK(results[i] == expect, "device erase of key %llu returned %d, expected %d", (unsigned long long)keys[i],
               results[i], expect))
      break;
  free(results);
  run_free(&d);
}

/* A map: inserts, merges, finds, erases, then growth through the bulk API under the same view. */
static void map_case(unsigned key_bits, unsigned value_bits) {
  const uint64_t n = 200000, more = 1500000;
  tu_rng rng = tu_rng_make(tu_mix_seed(SLAB_DEVICE_SEED, key_bits, value_bits, 1));
  gh_table *t = make(key_bits, value_bits, GH_VARIANT_MAP, 1u << 18);
  gh_device_view view;
  uint64_t *keys = (uint64_t *)tu_xmalloc((n + more) * 8), *values = (uint64_t *)tu_xmalloc((n + more) * 8);
  uint64_t *values2 = (uint64_t *)tu_xmalloc(n * 8), *absent = (uint64_t *)tu_xmalloc(n * 8);
  tu_set_context("slab device map k%u v%u seed=0x%016llx", key_bits, value_bits, (unsigned long long)SLAB_DEVICE_SEED);
  uint64_t *all = (uint64_t *)tu_xmalloc((2 * n + more) * 8);
  tu_gen_unique_keys(&rng, key_bits, 2 * n + more, NULL, all);
  /* The two special key patterns go in like any other key. */
  uint64_t special[8];
  const size_t specials = tu_special_keys(key_bits, special);
  for (size_t i = 0; i < specials && i < 2; ++i) all[i] = special[i];
  memcpy(keys, all, (n + more) * 8);
  memcpy(absent, all + n + more, n * 8);
  tu_gen_values(&rng, value_bits ? value_bits : 32, n + more, values);
  tu_gen_values(&rng, value_bits ? value_bits : 32, n, values2);
  REQUIRE(gh_get_device_view(t, &view) == GH_OK, "gh_get_device_view: %s", gh_last_error(t));
  CHECK(view.design == GH_SLAB && view.key_bits == key_bits && view.value_bits == value_bits, "view of another table");

  tu_set_phase("device inserts of new keys");
  const uint64_t retried = device_insert(t, view, keys, values, n, key_bits, value_bits, 1);
  CHECK(size_of(t) == n, "size %llu after %llu device inserts", (unsigned long long)size_of(t), (unsigned long long)n);
  CHECK_OK(t, gh_validate(t));
  tu_set_phase("device finds");
  device_find(view, keys, n, values, value_bits);
  device_find(view, absent, n, NULL, value_bits);
  tu_set_phase("device inserts of present keys (overwrite)");
  device_insert(t, view, keys, values2, n, key_bits, value_bits, 0);
  CHECK(size_of(t) == n, "size %llu after merges", (unsigned long long)size_of(t));
  device_find(view, keys, n, values2, value_bits);
  CHECK_OK(t, gh_validate(t));
  tu_set_phase("device erases");
  device_erase(view, keys, n / 2, 1);
  device_erase(view, keys, n / 2, 0);
  CHECK(size_of(t) == n - n / 2, "size %llu after erasing %llu", (unsigned long long)size_of(t), (unsigned long long)(n / 2));
  device_find(view, keys, n / 2, NULL, value_bits);
  device_find(view, keys + n / 2, n - n / 2, values2 + n / 2, value_bits);
  CHECK_OK(t, gh_validate(t));
  tu_set_phase("the same view after gh_insert grew the buckets");
  gh_stats before, after;
  CHECK_OK(t, gh_get_stats(t, &before));
  void *pk = tu_pack(keys + n, more, key_bits), *pv = value_bits ? tu_pack(values + n, more, value_bits) : NULL;
  CHECK_OK(t, gh_insert(t, pk, pv, more, GH_OVERWRITE, NULL, NULL));
  CHECK_OK(t, gh_get_stats(t, &after));
  CHECK(after.grows > before.grows, "%llu keys in a table sized for 2^18 did not grow its buckets",
        (unsigned long long)size_of(t));
  device_find(view, keys + n, more, values + n, value_bits);
  device_find(view, keys + n / 2, n - n / 2, values2 + n / 2, value_bits);
  device_insert(t, view, keys, values, n / 2, key_bits, value_bits, 1);
  CHECK(size_of(t) == n + more, "size %llu, expected %llu", (unsigned long long)size_of(t), (unsigned long long)(n + more));
  CHECK_OK(t, gh_validate(t));
  printf("  map k%u v%u: %llu device inserts, %llu of them by gh_insert (no free slab); buckets grew %llu times\n",
         key_bits, value_bits, (unsigned long long)n, (unsigned long long)retried, (unsigned long long)after.grows);
  free(pk);
  free(pv);
  gh_destroy(t);
  free(all);
  free(keys);
  free(values);
  free(values2);
  free(absent);
}

/* Multivalue: three device inserts of each key append three values; a device erase removes all. */
static void multivalue_case(void) {
  const uint64_t n = 50000;
  tu_rng rng = tu_rng_make(tu_mix_seed(SLAB_DEVICE_SEED, 2, 2, 2));
  gh_table *t = make(32, 32, GH_VARIANT_MULTIVALUE, 1u << 18);
  gh_device_view view;
  uint64_t *keys = (uint64_t *)tu_xmalloc(n * 8), *values = (uint64_t *)tu_xmalloc(n * 8);
  tu_set_context("slab device multivalue seed=0x%016llx", (unsigned long long)SLAB_DEVICE_SEED);
  tu_gen_unique_keys(&rng, 32, n, NULL, keys);
  tu_gen_values(&rng, 32, n, values);
  REQUIRE(gh_get_device_view(t, &view) == GH_OK, "gh_get_device_view: %s", gh_last_error(t));
  tu_set_phase("three appends per key");
  for (int round = 0; round < 3; ++round) device_insert(t, view, keys, values, n, 32, 32, 1);
  CHECK(size_of(t) == 3 * n, "size %llu after %llu appends", (unsigned long long)size_of(t), (unsigned long long)(3 * n));
  void *pk = tu_pack(keys, n, 32);
  uint64_t total = 0, *counts = (uint64_t *)tu_xmalloc(n * 8);
  CHECK_OK(t, gh_count(t, pk, n, counts, &total, NULL));
  free(counts);
  CHECK(total == 3 * n, "gh_count total %llu, expected %llu", (unsigned long long)total, (unsigned long long)(3 * n));
  CHECK_OK(t, gh_validate(t));
  tu_set_phase("erase all values");
  device_erase(view, keys, n / 2, 1);
  CHECK(size_of(t) == 3 * (n - n / 2), "size %llu after erasing %llu keys", (unsigned long long)size_of(t),
        (unsigned long long)(n / 2));
  device_find(view, keys, n / 2, NULL, 32);
  CHECK_OK(t, gh_validate(t));
  free(pk);
  gh_destroy(t);
  free(keys);
  free(values);
}

/* Many warps insert and erase the same few keys at once: whatever the interleaving, the map holds
 * each key at most once, and the size counter agrees with the lists. */
__global__ void churn(gh_device_view view, uint64_t keys_n, unsigned rounds) {
  const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, warp = i / 32;
  const uint64_t key = (i * 0x9E3779B97F4A7C15ull >> 7) % keys_n;
  /* The calls are warp-wide: a whole warp inserts or erases in a round, warps alternating. */
  for (unsigned r = 0; r < rounds; ++r) {
    if ((r + warp) % 2 == 0) gh_slab_device_insert(view, 1, key, i, GH_OVERWRITE);
    else gh_slab_device_erase(view, 1, key);
  }
}

static void race_case(void) {
  gh_table *t = make(32, 32, GH_VARIANT_MAP, 1u << 12);
  gh_device_view view;
  tu_set_context("slab device race seed=0x%016llx", (unsigned long long)SLAB_DEVICE_SEED);
  /* Room for the racing inserts first: a bulk insert and erase leave SlabAlloc with free slabs. */
  const uint64_t warm_n = 1u << 14;
  uint64_t *warm = (uint64_t *)tu_xmalloc(warm_n * 8);
  for (uint64_t i = 0; i < warm_n; ++i) warm[i] = 1000000 + i;
  void *pw = tu_pack(warm, warm_n, 32);
  CHECK_OK(t, gh_insert(t, pw, pw, warm_n, GH_OVERWRITE, NULL, NULL));
  CHECK_OK(t, gh_erase(t, pw, warm_n, NULL, NULL, NULL));
  REQUIRE(gh_get_device_view(t, &view) == GH_OK, "gh_get_device_view: %s", gh_last_error(t));
  tu_set_phase("inserts and erases of 64 keys by 64k threads");
  churn<<<256, 256>>>(view, 64, 8);
  cuda_ok(cudaGetLastError(), "churn launch");
  cuda_ok(cudaDeviceSynchronize(), "churn");
  CHECK_OK(t, gh_validate(t));
  CHECK(size_of(t) <= 64, "size %llu with 64 distinct keys", (unsigned long long)size_of(t));
  gh_destroy(t);
  free(warm);
  free(pw);
}

int main(void) {
  tu_skip_unless_backend_usable(GH_BACKEND_CUDA);
  map_case(32, 32);
  map_case(64, 64);
  map_case(32, 0);
  multivalue_case();
  race_case();
  return tu_finish("slab_device");
}
