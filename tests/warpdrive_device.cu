/*
 * warpdrive_device - warpdrive's device-side API (include/gpuhash/warpdrive.cuh) from a test's own
 * kernels, with every group size a table's window allows. For 32- and 64-bit keys, values of 0, 32
 * and 64 bits, and tables of group_size g = 1, 2, 4, 8, 16, 32:
 *   - each group size s dividing g inserts its share of the keys with gh_device_insert_group (and
 *     single threads with gh_device_insert), the sentinel patterns (all ones, all ones minus one,
 *     0) among them; every insert returns GH_OK
 *   - every key is then found by groups of every size s dividing g and by single threads
 *     (gh_device_find), with the value inserted, and the bulk gh_find agrees; keys never inserted
 *     are found by none
 *   - a group larger than g is refused: -1 from gh_device_find_group, GH_ERR_INVALID_ARGUMENT from
 *     gh_device_insert_group, GH_FLAG_BAD_GROUP in gh_take_status_flags, and nothing inserted
 * gh_size and gh_validate after every phase. Every failure prints the case and the seed.
 *
 *   warpdrive_device
 *
 * Built only when the CUDA backend is (GH_HAVE_CUDA); without a GPU it exits 77.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuhash/warpdrive.cuh"
#include "test_util.h"

#define WD_DEVICE_SEED 0x3DE71CEC0FFEEull

static __device__ uint64_t word_at(const void *array, uint64_t i, unsigned bits) {
  return bits == 64 ? ((const uint64_t *)array)[i] : ((const uint32_t *)array)[i];
}

/* Keys [0, n) inserted by groups of `size` lanes (size 0: single threads, gh_device_insert). */
__global__ void wd_insert_ops(gh_device_view view, unsigned size, const void *keys, const void *values, uint64_t n,
                              int *status) {
  const unsigned lanes = size ? size : 1u;
  const gh_device_group group = gh_device_group_make(lanes);
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x / lanes;
  for (uint64_t i = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / lanes; i < n; i += stride) {
    const uint64_t key = word_at(keys, i, view.key_bits);
    const uint64_t value = view.value_bits ? word_at(values, i, view.value_bits) : 0;
    const gh_status s = size ? gh_device_insert_group(view, group, key, value, GH_OVERWRITE)
                             : gh_device_insert(view, key, value, GH_OVERWRITE);
    if (group.rank == 0) status[i] = (int)s;
  }
}

/* Keys [0, n) found by groups of `size` lanes (0: single threads): found[i] (1, 0, or -1 for a
 * refused group) and the value found. */
__global__ void wd_find_ops(gh_device_view view, unsigned size, const void *keys, uint64_t n, int *found,
                            uint64_t *values_out) {
  const unsigned lanes = size ? size : 1u;
  const gh_device_group group = gh_device_group_make(lanes);
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x / lanes;
  for (uint64_t i = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / lanes; i < n; i += stride) {
    uint64_t value = 0;
    const int f = size ? gh_device_find_group(view, group, word_at(keys, i, view.key_bits), &value)
                       : gh_device_find(view, word_at(keys, i, view.key_bits), &value);
    if (group.rank == 0) found[i] = f, values_out[i] = value;
  }
}

static void cuda_ok(cudaError_t err, const char *what) {
  REQUIRE(err == cudaSuccess, "%s: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

/* A device copy of n words of `bits` (32 or 64) from host uint64_t. */
static void *device_words(const uint64_t *words, uint64_t n, unsigned bits) {
  void *packed = tu_pack(words, n, bits), *d = NULL;
  cuda_ok(cudaMalloc(&d, n * 8 + 8), "cudaMalloc");
  cuda_ok(cudaMemcpy(d, packed, n * (bits / 8), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  free(packed);
  return d;
}

/* Runs one of the kernels over n operations on 64 blocks of 128 threads and waits. */
static void run_ops(void (*launch)(void *), void *args) {
  launch(args);
  cuda_ok(cudaGetLastError(), "kernel launch");
  cuda_ok(cudaDeviceSynchronize(), "kernel");
}

typedef struct find_call {
  gh_device_view view;
  unsigned size;
  const void *keys;
  uint64_t n;
  int *found;
  uint64_t *values;
} find_call;
static void launch_find(void *a) {
  const find_call *c = (const find_call *)a;
  wd_find_ops<<<64, 128>>>(c->view, c->size, c->keys, c->n, c->found, c->values);
}

/* Finds keys[0, n) with groups of `size` (0: threads): every one found with want_values[i]
 * (present) or none (absent). */
static void check_finds(const gh_device_view *view, unsigned size, const void *d_keys, const uint64_t *keys,
                        const uint64_t *want_values, uint64_t n, int present, const char *what) {
  int *d_found = NULL, *found = (int *)tu_xmalloc(n * sizeof(int));
  uint64_t *d_values = NULL, *values = (uint64_t *)tu_xmalloc(n * 8);
  cuda_ok(cudaMalloc(&d_found, n * sizeof(int)), "cudaMalloc");
  cuda_ok(cudaMalloc(&d_values, n * 8), "cudaMalloc");
  find_call c = {*view, size, d_keys, n, d_found, d_values};
  run_ops(launch_find, &c);
  cuda_ok(cudaMemcpy(found, d_found, n * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  cuda_ok(cudaMemcpy(values, d_values, n * 8, cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t want = present && view->value_bits ? want_values[i] : 0;
    if (!CHECK(found[i] == present && (!present || values[i] == want),
               "%s, groups of %u: key %llu found %d value %llu, expected %s value %llu", what, size,
               (unsigned long long)keys[i], found[i], (unsigned long long)values[i], present ? "present" : "absent",
               (unsigned long long)want))
      break;
  }
  cudaFree(d_found), cudaFree(d_values);
  free(found), free(values);
}

typedef struct insert_call {
  gh_device_view view;
  unsigned size;
  const void *keys, *values;
  uint64_t n;
  int *status;
} insert_call;
static void launch_insert(void *a) {
  const insert_call *c = (const insert_call *)a;
  wd_insert_ops<<<64, 128>>>(c->view, c->size, c->keys, c->values, c->n, c->status);
}

/* Inserts keys[0, n) with groups of `size` (0: threads); every status must be `want`. */
static void insert_with(const gh_device_view *view, unsigned size, const void *d_keys, const void *d_values,
                        const uint64_t *keys, uint64_t n, gh_status want) {
  int *d_status = NULL, *status = (int *)tu_xmalloc(n * sizeof(int) + 4);
  cuda_ok(cudaMalloc(&d_status, n * sizeof(int) + 4), "cudaMalloc");
  insert_call c = {*view, size, d_keys, d_values, n, d_status};
  run_ops(launch_insert, &c);
  cuda_ok(cudaMemcpy(status, d_status, n * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (uint64_t i = 0; i < n; ++i)
    if (!CHECK(status[i] == (int)want, "groups of %u: insert of key %llu returned %s, expected %s", size,
               (unsigned long long)keys[i], gh_status_name((gh_status)status[i]), gh_status_name(want)))
      break;
  cudaFree(d_status);
  free(status);
}

static void check_table(gh_table *t, uint64_t expected) {
  uint64_t size = 0;
  if (CHECK_OK(t, gh_size(t, &size)))
    CHECK(size == expected, "gh_size %llu, expected %llu", (unsigned long long)size, (unsigned long long)expected);
  CHECK_OK(t, gh_validate(t));
}

static void case_widths(unsigned key_bits, unsigned value_bits, unsigned g) {
  tu_rng rng = tu_rng_make(tu_mix_seed(WD_DEVICE_SEED, key_bits, value_bits, g));
  const uint64_t n = 3000, absent_n = 1000;
  uint64_t *keys = (uint64_t *)tu_xmalloc((n + absent_n) * 8), *values = (uint64_t *)tu_xmalloc(n * 8 + 8);
  tu_gen_unique_keys(&rng, key_bits, n + absent_n, NULL, keys);
  uint64_t special[8];
  const size_t specials = tu_special_keys(key_bits, special);
  memcpy(keys, special, specials * 8); /* the patterns a table keeps apart, among the inserted */
  tu_gen_values(&rng, value_bits ? value_bits : 32, n, values);
  tu_set_phase("k%u v%u, table group_size %u", key_bits, value_bits, g);
  gh_config c = gh_config_default(GH_WARPDRIVE);
  c.backend = GH_BACKEND_CUDA;
  c.key_bits = key_bits, c.value_bits = value_bits, c.group_size = g;
  c.capacity = 2 * n;
  c.seed = WD_DEVICE_SEED;
  gh_table *t = NULL;
  gh_device_view view;
  if (!CHECK_OK(NULL, gh_create(&c, &t)) || !CHECK_OK(t, gh_get_device_view(t, &view))) {
    gh_destroy(t);
    free(keys), free(values);
    return;
  }
  void *d_keys = device_words(keys, n + absent_n, key_bits), *d_values = device_words(values, n, value_bits ? value_bits : 32);
  const unsigned key_bytes = key_bits / 8, value_bytes = value_bits / 8;
  /* The sizes s dividing g, then single threads (0): each inserts an equal share of the keys. */
  unsigned sizes[8], count = 0;
  for (unsigned s = 1; s <= g; s *= 2) sizes[count++] = s;
  sizes[count++] = 0;
  for (unsigned k = 0; k < count; ++k) {
    const uint64_t from = n * k / count, to = n * (k + 1) / count;
    insert_with(&view, sizes[k], (char *)d_keys + from * key_bytes, (char *)d_values + from * value_bytes,
                keys + from, to - from, GH_OK);
  }
  check_table(t, n);
  for (unsigned k = 0; k < count && tu_failure_count() == 0; ++k) {
    check_finds(&view, sizes[k], d_keys, keys, values, n, 1, "inserted keys");
    check_finds(&view, sizes[k], (char *)d_keys + n * key_bytes, keys + n, NULL, absent_n, 0, "keys never inserted");
  }
  /* The bulk API sees what the device API stored. */
  uint8_t *found = (uint8_t *)tu_xmalloc(n);
  void *got = tu_xmalloc(n * 8);
  void *packed_keys = tu_pack(keys, n, key_bits);
  if (CHECK_OK(t, gh_find(t, packed_keys, n, value_bits ? got : NULL, found, NULL, NULL)))
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t v = value_bits == 64 ? ((uint64_t *)got)[i] : value_bits == 32 ? ((uint32_t *)got)[i] : 0;
      if (!CHECK(found[i] && (!value_bits || v == values[i]), "gh_find: key %llu found %d value %llu",
                 (unsigned long long)keys[i], found[i], (unsigned long long)v))
        break;
    }
  /* A group wider than the table's window is refused and inserts nothing. */
  if (g < 32) {
    unsigned flags = 0;
    CHECK_OK(t, gh_take_status_flags(t, &flags));
    insert_with(&view, 2 * g, (char *)d_keys + n * key_bytes, d_values, keys + n, absent_n, GH_ERR_INVALID_ARGUMENT);
    int *d_found = NULL, refused = 0;
    uint64_t *d_value = NULL;
    cuda_ok(cudaMalloc(&d_found, sizeof(int) * 32), "cudaMalloc");
    cuda_ok(cudaMalloc(&d_value, 8 * 32), "cudaMalloc");
    find_call fc = {view, 2 * g, d_keys, 1, d_found, d_value};
    run_ops(launch_find, &fc);
    cuda_ok(cudaMemcpy(&refused, d_found, sizeof refused, cudaMemcpyDeviceToHost), "cudaMemcpy");
    CHECK(refused == -1, "gh_device_find_group with groups of %u on a table of group_size %u returned %d", 2 * g, g,
          refused);
    if (CHECK_OK(t, gh_take_status_flags(t, &flags)))
      CHECK(flags & GH_FLAG_BAD_GROUP, "groups of %u: status flags 0x%x lack GH_FLAG_BAD_GROUP", 2 * g, flags);
    cudaFree(d_found), cudaFree(d_value);
    check_table(t, n);
  }
  gh_destroy(t);
  cudaFree(d_keys), cudaFree(d_values);
  free(keys), free(values), free(found), free(got), free(packed_keys);
}

int main(void) {
  tu_skip_unless_backend_usable(GH_BACKEND_CUDA);
  tu_set_context("warpdrive_device seed 0x%016llx", (unsigned long long)WD_DEVICE_SEED);
  static const unsigned key_widths[] = {32, 64}, value_widths[] = {0, 32, 64};
  for (size_t k = 0; k < 2; ++k)
    for (size_t v = 0; v < 3; ++v)
      for (unsigned g = 1; g <= 32; g *= 2) case_widths(key_widths[k], value_widths[v], g);
  return tu_finish("warpdrive_device");
}
