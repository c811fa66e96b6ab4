/* device_kmers.cu - the device-side API in a user kernel: count k-mers of a random DNA sequence
 * with one thread per position (gh_device_insert, GH_ADD), then look them up with cooperative
 * groups (gh_device_find_group), and check everything against a host count. Exits 77 (skipped)
 * when no GPU is present. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuhash/warpdrive.cuh"

#define K 11                      /* k-mer length: 22 bits, so the host can count densely */
#define SEQUENCE_LENGTH (1u << 22)
#define KMER_COUNT (SEQUENCE_LENGTH - K + 1)

static __device__ __host__ uint32_t kmer_at(const uint8_t *bases, uint32_t i) {
  uint32_t code = 0;
  for (int j = 0; j < K; ++j) code = (code << 2) | bases[i + j];
  return code;
}

__global__ void count_kmers(gh_device_view table, const uint8_t *bases, unsigned *failures) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= KMER_COUNT) return;
  if (gh_device_insert(table, kmer_at(bases, i), 1, GH_ADD) != GH_OK) atomicAdd(failures, 1u);
}

__global__ void lookup_kmers(gh_device_view table, uint32_t universe, uint32_t *counts) {
  const gh_device_group group = gh_device_group_make((unsigned)table.layout[2]);
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x / group.size;
  for (uint64_t code = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / group.size; code < universe;
       code += stride) {
    uint64_t value = 0;
    const int found = gh_device_find_group(table, group, code, &value);
    if (group.rank == 0) counts[code] = found ? (uint32_t)value : 0u;
  }
}

#define CHECK_CUDA(call)                                                                       \
  do {                                                                                         \
    cudaError_t err_ = (call);                                                                 \
    if (err_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(err_)); \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

int main(void) {
  if (!gh_cuda_available()) {
    printf("SKIPPED: no GPU here\n");
    return 77;
  }
  const uint32_t universe = 1u << (2 * K);
  uint8_t *bases = (uint8_t *)malloc(SEQUENCE_LENGTH);
  uint32_t *expected = (uint32_t *)calloc(universe, sizeof(uint32_t));
  uint32_t *got = (uint32_t *)malloc(universe * sizeof(uint32_t));
  uint64_t state = 12345;
  for (uint32_t i = 0; i < SEQUENCE_LENGTH; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    bases[i] = (uint8_t)(state >> 62);
  }
  for (uint32_t i = 0; i < KMER_COUNT; ++i) expected[kmer_at(bases, i)] += 1;

  gh_config config = gh_config_default(GH_WARPDRIVE);
  config.backend = GH_BACKEND_CUDA;
  config.capacity = universe * 2; /* load <= 0.5 */
  config.group_size = 8;
  gh_table *table = NULL;
  if (gh_create(&config, &table) != GH_OK) {
    fprintf(stderr, "gh_create: %s\n", gh_last_create_error());
    return 1;
  }
  gh_device_view view;
  if (gh_get_device_view(table, &view) != GH_OK) return 1;

  uint8_t *d_bases;
  uint32_t *d_counts;
  unsigned *d_failures, failures = 0;
  CHECK_CUDA(cudaMalloc(&d_bases, SEQUENCE_LENGTH));
  CHECK_CUDA(cudaMalloc(&d_counts, universe * sizeof(uint32_t)));
  CHECK_CUDA(cudaMalloc(&d_failures, sizeof(unsigned)));
  CHECK_CUDA(cudaMemset(d_failures, 0, sizeof(unsigned)));
  CHECK_CUDA(cudaMemcpy(d_bases, bases, SEQUENCE_LENGTH, cudaMemcpyHostToDevice));
  count_kmers<<<(KMER_COUNT + 255) / 256, 256>>>(view, d_bases, d_failures);
  CHECK_CUDA(cudaGetLastError());
  lookup_kmers<<<1024, 256>>>(view, universe, d_counts);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(got, d_counts, universe * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&failures, d_failures, sizeof failures, cudaMemcpyDeviceToHost));

  uint64_t distinct = 0, size = 0, wrong = 0;
  for (uint32_t c = 0; c < universe; ++c) {
    distinct += expected[c] != 0;
    wrong += expected[c] != got[c];
  }
  gh_size(table, &size);
  const gh_status valid = gh_validate(table);
  printf("k-mers: %u, distinct: %llu, table size: %llu, wrong counts: %llu, failures: %u, validate: %s\n",
         KMER_COUNT, (unsigned long long)distinct, (unsigned long long)size, (unsigned long long)wrong, failures,
         gh_status_name(valid));
  gh_destroy(table);
  cudaFree(d_bases);
  cudaFree(d_counts);
  cudaFree(d_failures);
  free(bases);
  free(expected);
  free(got);
  return (wrong == 0 && failures == 0 && size == distinct && valid == GH_OK) ? 0 : 1;
}
