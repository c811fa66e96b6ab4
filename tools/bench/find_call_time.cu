/* gpuhash-find-call-time: the wall time of one gh_find call from C, the baseline of the Python
 * package's call overhead (scripts/python-overhead times the same call through gpuhash.Table.find
 * and compares). A warpdrive map of n 32-bit keys and values at load 0.8 on the GPU, the keys
 * device-resident; gh_find of all n keys into device outputs, on the default stream, `reps` times;
 * prints one JSON line with the median and the quartiles in microseconds. Keys: key(i) =
 * (i + 1) * 2654435761 mod 2^32 for i < n (distinct, never a sentinel for n < 2^31), the same in
 * the script. Usage: gpuhash-find-call-time [n] [reps] (defaults 2^20 and 1000). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "gpuhash.h"

__global__ void make_keys(uint32_t *keys, uint32_t *values, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
    keys[i] = (uint32_t)((i + 1u) * 2654435761ull);
    values[i] = (uint32_t)i;
  }
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
  const uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : (1ull << 20);
  const int reps = argc > 2 ? atoi(argv[2]) : 1000;
  if (n == 0 || n >= (1ull << 31) || reps < 1) {
    fprintf(stderr, "usage: gpuhash-find-call-time [n (1 .. 2^31 - 1)] [reps (>= 1)]\n");
    return 2;
  }
  if (!gh_cuda_available()) {
    printf("SKIPPED: no GPU here\n");
    return 77;
  }
  uint32_t *keys, *values, *values_out;
  uint8_t *found;
  if (cudaMalloc(&keys, n * 4) != cudaSuccess || cudaMalloc(&values, n * 4) != cudaSuccess ||
      cudaMalloc(&values_out, n * 4) != cudaSuccess || cudaMalloc(&found, n) != cudaSuccess) {
    fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  make_keys<<<1024, 256>>>(keys, values, n);
  gh_config config = gh_config_default(GH_WARPDRIVE);
  config.backend = GH_BACKEND_CUDA;
  config.capacity = (uint64_t)(n / 0.8);
  gh_table *table = NULL;
  gh_status status = gh_create(&config, &table);
  if (status == GH_OK) status = gh_insert(table, keys, values, n, GH_KEEP_FIRST, NULL, NULL);
  std::vector<double> us((size_t)reps);
  for (int r = -10; r < reps && status == GH_OK; ++r) { /* 10 unrecorded calls warm up */
    const double start = now_us();
    status = gh_find(table, keys, n, values_out, found, NULL, NULL);
    if (r >= 0) us[(size_t)r] = now_us() - start;
  }
  if (status != GH_OK) {
    fprintf(stderr, "%s: %s\n", gh_status_name(status), table ? gh_last_error(table) : gh_last_create_error());
    return 1;
  }
  std::sort(us.begin(), us.end());
  printf("{\"call\": \"gh_find\", \"from\": \"C\", \"n\": %llu, \"reps\": %d, \"median_us\": %.2f, \"q1_us\": %.2f, "
         "\"q3_us\": %.2f}\n",
         (unsigned long long)n, reps, us[us.size() / 2], us[us.size() / 4], us[us.size() * 3 / 4]);
  gh_destroy(table);
  cudaFree(keys), cudaFree(values), cudaFree(values_out), cudaFree(found);
  return 0;
}
