/*
 * device_arrays - the CUDA backend with arrays in device memory (cudaMalloc), managed memory
 * (cudaMallocManaged) and pinned host memory (cudaMallocHost), on a non-default stream: the
 * header promises that any of them may be passed and that each call has synchronised its stream
 * before it returns. The other tests pass pageable host arrays; this one checks every output
 * written to these memories against the reference, and the table's content through the host
 * path after each operation.
 *
 *   device_arrays
 *
 * Built only when the CUDA backend is (GH_HAVE_CUDA); without a GPU it exits 77.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define DEVICE_SEED 0xDE71CEull

enum memory { MEM_DEVICE, MEM_MANAGED, MEM_PINNED };
static const char *const memory_names[] = {"device (cudaMalloc)", "managed", "pinned host"};

static void cuda_ok(cudaError_t err, const char *what) {
  REQUIRE(err == cudaSuccess, "%s: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

static void *mem_alloc(memory kind, size_t bytes) {
  void *p = NULL;
  if (bytes == 0) bytes = 1;
  if (kind == MEM_DEVICE) cuda_ok(cudaMalloc(&p, bytes), "cudaMalloc");
  else if (kind == MEM_MANAGED) cuda_ok(cudaMallocManaged(&p, bytes), "cudaMallocManaged");
  else cuda_ok(cudaMallocHost(&p, bytes), "cudaMallocHost");
  return p;
}

static void mem_free(memory kind, void *p) {
  if (kind == MEM_PINNED) cuda_ok(cudaFreeHost(p), "cudaFreeHost");
  else cuda_ok(cudaFree(p), "cudaFree");
}

/* Copies host data into / out of any of the memories (cudaMemcpyDefault handles all three).
 * Inputs are followed by a device-wide synchronisation: a cudaMemcpy from pageable memory may
 * return before its DMA lands, and the stream handed to the library is non-blocking, so nothing
 * else would order the two (what any caller of a stream-ordered API must do). Outputs are read
 * on the default stream on purpose: the library must already have synchronised its stream. */
static void to_mem(void *dst, const void *src, size_t bytes) {
  cuda_ok(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy to the test memory");
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize after an input copy");
}
/* Pre-fills an output with a canary, finished before the library's stream may write it. */
static void mem_fill(void *dst, int byte, size_t bytes) {
  cuda_ok(cudaMemset(dst, byte, bytes), "cudaMemset");
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize after cudaMemset");
}
static void from_mem(void *dst, const void *src, size_t bytes) {
  cuda_ok(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy from the test memory");
}

/* Packs keys (or values) of the width into a freshly allocated buffer of the memory kind. */
static void *mem_pack(memory kind, const uint64_t *src, uint64_t n, unsigned bits) {
  void *host = tu_pack(src, n, bits);
  void *p = mem_alloc(kind, (size_t)n * bits / 8);
  to_mem(p, host, (size_t)n * bits / 8);
  free(host);
  return p;
}

static void run_memory_case(unsigned key_bits, unsigned value_bits, memory kind,
                            cudaStream_t stream) {
  const uint64_t n = 6000;
  tu_rng rng = tu_rng_make(tu_mix_seed(DEVICE_SEED, key_bits, value_bits, (uint64_t)kind));
  gh_config cfg = gh_config_default(GH_WARPDRIVE);
  tu_table h;
  gh_stream gs = (gh_stream)stream;
  size_t kb = key_bits / 8, vb = value_bits / 8;
  uint64_t *keys = (uint64_t *)tu_xmalloc(n * sizeof *keys);
  uint64_t *values = (uint64_t *)tu_xmalloc(n * sizeof *values);
  uint64_t *wide = (uint64_t *)tu_xmalloc(2 * n * sizeof *wide);
  uint64_t *wide_values = (uint64_t *)tu_xmalloc(2 * n * sizeof *wide_values);
  uint8_t *flags = (uint8_t *)tu_xmalloc(2 * n);
  void *host_buf = tu_xmalloc(2 * n * 8);
  uint64_t i, count = 0, erased_count = 0, size = 0, special[8];
  uint64_t default_value = 77;
  void *d_keys, *d_values = NULL, *d_out_keys, *d_out_values = NULL, *d_default_host;
  uint8_t *d_flags;
  size_t n_special = tu_special_keys(key_bits, special);

  cfg.backend = GH_BACKEND_CUDA;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  cfg.capacity = 10000;
  cfg.group_size = 8;
  cfg.seed = tu_next(&rng);
  tu_set_context("device_arrays key_bits=%u value_bits=%u memory=%s stream=%s", key_bits,
                 value_bits, memory_names[kind], stream ? "created" : "default");
  tu_set_phase("create");
  if (!tu_table_create(&h, &cfg)) return;

  tu_gen_unique_keys(&rng, key_bits, n, NULL, keys);
  for (i = 0; i < n_special; ++i) keys[i] = special[i];
  tu_gen_values(&rng, value_bits, n, values);
  d_keys = mem_pack(kind, keys, n, key_bits);
  if (vb > 0) d_values = mem_pack(kind, values, n, value_bits);
  d_flags = (uint8_t *)mem_alloc(kind, 2 * n);
  d_out_keys = mem_alloc(kind, 2 * n * kb);
  if (vb > 0) d_out_values = mem_alloc(kind, 2 * n * vb);
  d_default_host = vb > 0 ? tu_pack(&default_value, 1, value_bits) : NULL;

  tu_set_phase("insert from %s memory", memory_names[kind]);
  mem_fill(d_flags, 0xA5, 2 * n);
  if (CHECK_OK(h.table, gh_insert(h.table, d_keys, d_values, n, GH_OVERWRITE, d_flags, gs))) {
    tu_ref_insert(&h.ref, keys, values, n, GH_OVERWRITE, NULL);
    from_mem(flags, d_flags, n);
    for (i = 0; i < n; ++i) {
      if (!CHECK(flags[i] == 0, "failed_out[%llu] = %u", (unsigned long long)i, flags[i])) break;
    }
  }
  tu_check_status_flags(&h, 0);
  tu_check_all(&h);

  tu_set_phase("find into %s memory", memory_names[kind]);
  mem_fill(d_flags, 0xA5, 2 * n);
  if (CHECK_OK(h.table, gh_find(h.table, d_keys, n, d_out_values, d_flags, d_default_host, gs))) {
    from_mem(flags, d_flags, n);
    if (vb > 0) {
      from_mem(host_buf, d_out_values, n * vb);
      tu_unpack(host_buf, n, value_bits, wide_values);
    }
    for (i = 0; i < n; ++i) {
      if (!CHECK(flags[i] == 1, "found_out[%llu] = %u", (unsigned long long)i, flags[i])) break;
      if (vb > 0 && !CHECK(tu_ref_observe(&h.ref, keys[i], wide_values[i]),
                           "key 0x%llx: value %llu", (unsigned long long)keys[i],
                           (unsigned long long)wide_values[i]))
        break;
    }
  }

  tu_set_phase("erase half, erased_out in %s memory", memory_names[kind]);
  mem_fill(d_flags, 0xA5, 2 * n);
  if (CHECK_OK(h.table, gh_erase(h.table, d_keys, n / 2, d_flags, &erased_count, gs))) {
    CHECK(erased_count == n / 2, "erased_count %llu, expected %llu",
          (unsigned long long)erased_count, (unsigned long long)(n / 2));
    from_mem(flags, d_flags, n / 2);
    for (i = 0; i < n / 2; ++i) {
      if (!CHECK(flags[i] == 1, "erased_out[%llu] = %u", (unsigned long long)i, flags[i])) break;
    }
    tu_ref_erase(&h.ref, keys, n / 2);
  }
  tu_check_all(&h);

  tu_set_phase("contains into %s memory", memory_names[kind]);
  mem_fill(d_flags, 0xA5, 2 * n);
  if (CHECK_OK(h.table, gh_contains(h.table, d_keys, n, d_flags, gs))) {
    from_mem(flags, d_flags, n);
    for (i = 0; i < n; ++i) {
      if (!CHECK(flags[i] == (uint8_t)(i >= n / 2), "contains[%llu] = %u",
                 (unsigned long long)i, flags[i]))
        break;
    }
  }

  tu_set_phase("find absent keys with a default, into %s memory", memory_names[kind]);
  if (vb > 0 && CHECK_OK(h.table, gh_find(h.table, d_keys, n / 2, d_out_values, NULL,
                                          d_default_host, gs))) {
    from_mem(host_buf, d_out_values, n / 2 * vb);
    tu_unpack(host_buf, n / 2, value_bits, wide_values);
    for (i = 0; i < n / 2; ++i) {
      if (!CHECK(wide_values[i] == default_value, "absent key got %llu, default %llu",
                 (unsigned long long)wide_values[i], (unsigned long long)default_value))
        break;
    }
  }

  tu_set_phase("export into %s memory", memory_names[kind]);
  CHECK_OK(h.table, gh_size(h.table, &size));
  if (CHECK_OK(h.table, gh_export(h.table, d_out_keys, d_out_values, 2 * n, &count, gs)) &&
      CHECK(count <= 2 * n, "export count %llu", (unsigned long long)count)) {
    from_mem(host_buf, d_out_keys, count * kb);
    tu_unpack(host_buf, count, key_bits, wide);
    if (vb > 0) {
      from_mem(host_buf, d_out_values, count * vb);
      tu_unpack(host_buf, count, value_bits, wide_values);
    }
    tu_check_pairs(&h, wide, vb > 0 ? wide_values : NULL, count);
  }
  tu_check_status_flags(&h, 0);
  tu_check_all(&h);

  tu_set_phase("clear on the stream");
  CHECK_OK(h.table, gh_clear(h.table, gs));
  tu_ref_clear(&h.ref);
  tu_check_all(&h);

  free(d_default_host);
  if (d_out_values != NULL) mem_free(kind, d_out_values);
  mem_free(kind, d_out_keys);
  mem_free(kind, d_flags);
  if (d_values != NULL) mem_free(kind, d_values);
  mem_free(kind, d_keys);
  free(host_buf);
  free(flags);
  free(wide_values);
  free(wide);
  free(values);
  free(keys);
  tu_table_destroy(&h);
  cuda_ok(cudaGetLastError(), "a CUDA error left pending");
  printf("k%u v%u %-20s stream %-8s: done\n", key_bits, value_bits, memory_names[kind],
         stream ? "created" : "default");
  fflush(stdout);
}

int main(void) {
  static const unsigned widths[][2] = {{32, 32}, {64, 64}, {32, 0}, {64, 32}};
  cudaStream_t stream = NULL;
  size_t w;
  int m, s;
  tu_skip_unless_backend_usable(GH_BACKEND_CUDA);
  cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  for (w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
    for (m = MEM_DEVICE; m <= MEM_PINNED; ++m) {
      for (s = 0; s < 2; ++s) {
        run_memory_case(widths[w][0], widths[w][1], (memory)m, s ? stream : NULL);
      }
    }
  }
  cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return tu_finish("device_arrays");
}
