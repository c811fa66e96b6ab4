/* gpuhash-dist-bench - the distributed table's benchmark (issue 13's scenarios, WarpDrive section V):
 *
 *   gpuhash-dist-bench [--gpus G] [--log2n L,...] [--repeats R] [--json FILE]
 *
 *   strong   n pairs (each L) over 1 .. G GPUs, device-sided insert and find (keys already spread
 *            over the GPUs), the time split into multisplit / exchange / table op, the all-to-all
 *            ceiling of the same communicator (gh_dist_measure_exchange), and the efficiency
 *            against 1 GPU (the default config: the exchange, then the table); on several GPUs
 *            also with exchange_overlap = 1 ("_overlap": the table works on a GPU's own piece
 *            during the exchange)
 *   weak     2^28 pairs per GPU
 *   host     host-sided insert and find of 2^28 pairs from pinned and from pageable host memory
 *            over G GPUs, against the host-to-device bandwidth measured in the same run (every GPU
 *            copying at once); "serial" adds the copy time to the device-sided time instead
 *            (what the pipeline saves)
 *
 * Warpdrive partitions at load 0.8, 32-bit keys and values; keys are distinct (an odd multiplier
 * and a seed: a bijection of the index). Each time is the median of R runs, measured with CUDA
 * events on GPU 0's default stream around the call (which waits for every GPU). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuhash_dist.h"

#define MAX_GPUS 8

__global__ void make_pairs(uint32_t *keys, uint32_t *values, uint64_t first, uint64_t n, uint32_t seed) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
    const uint32_t k = (uint32_t)((first + i) * 2654435761ull) ^ seed;
    keys[i] = k == 0xFFFFFFFFu || k == 0xFFFFFFFEu ? 1u : k; /* (clear of the tables' sentinels) */
    if (values) values[i] = k * 7u + 1u;
  }
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static FILE *json;
static int json_first = 1;

static void emit(const char *scenario, const char *op, unsigned gpus, uint64_t n, double ms, const gh_dist_times *t,
                 double extra_name_value, const char *extra_name) {
  const double rate = n / (ms * 1e6);
  printf("%-8s %-22s gpus %u n 2^%-2d %9.3f ms %7.2f G/s", scenario, op, gpus, __builtin_ctzll(n), ms, rate);
  if (t) printf("  [split %.2f exch %.2f table %.2f ms, %.2f GB sent]", t->multisplit_ms, t->exchange_ms, t->table_ms,
                t->exchanged_bytes / 1e9);
  if (extra_name) printf("  %s %.3f", extra_name, extra_name_value);
  printf("\n");
  if (!json) return;
  fprintf(json, "%s\n  {\"scenario\": \"%s\", \"op\": \"%s\", \"gpus\": %u, \"n\": %llu, \"ms\": %.4f, \"g_per_s\": %.4f",
          json_first ? "" : ",", scenario, op, gpus, (unsigned long long)n, ms, rate);
  if (t)
    fprintf(json, ", \"multisplit_ms\": %.4f, \"exchange_ms\": %.4f, \"table_ms\": %.4f, \"exchanged_bytes\": %llu",
            t->multisplit_ms, t->exchange_ms, t->table_ms, (unsigned long long)t->exchanged_bytes);
  if (extra_name) fprintf(json, ", \"%s\": %.4f", extra_name, extra_name_value);
  fprintf(json, "}");
  json_first = 0;
}

static void die(const char *what, gh_dist *d) {
  fprintf(stderr, "%s: %s\n", what, d ? gh_dist_last_error(d) : gh_dist_last_create_error());
  exit(1);
}

typedef struct timer {
  cudaEvent_t start, stop;
} timer;

static void timer_start(timer *t) {
  cudaSetDevice(0);
  cudaEventRecord(t->start, 0);
}
static double timer_stop(timer *t) {
  float ms = 0;
  cudaSetDevice(0);
  cudaEventRecord(t->stop, 0);
  cudaEventSynchronize(t->stop);
  cudaEventElapsedTime(&ms, t->start, t->stop);
  return ms;
}

static gh_dist *make_table(unsigned gpus, uint64_t n, uint64_t staging_bytes, int overlap) {
  gh_dist_config c = gh_dist_config_default(GH_WARPDRIVE);
  c.table.backend = GH_BACKEND_CUDA;
  c.table.capacity = (uint64_t)(n / gpus / 0.8);
  c.partitions = gpus;
  if (staging_bytes) c.staging_bytes = staging_bytes;
  c.exchange_overlap = overlap;
  gh_dist *d = NULL;
  if (gh_dist_create(&c, &d) != GH_OK) die("gh_dist_create", NULL);
  return d;
}

/* Device-sided insert and find of n pairs over `gpus` GPUs: medians; *insert_ms / *find_ms. */
static void device_sided(const char *scenario, unsigned gpus, uint64_t n, unsigned repeats, int overlap,
                         double *insert_ms, double *find_ms) {
  gh_dist *d = make_table(gpus, n, 0, overlap);
  void *keys[MAX_GPUS], *values[MAX_GPUS], *found_values[MAX_GPUS];
  uint8_t *found[MAX_GPUS];
  uint64_t counts[MAX_GPUS];
  for (unsigned g = 0; g < gpus; ++g) {
    const uint64_t first = n * g / gpus;
    counts[g] = n * (g + 1u) / gpus - first;
    cudaSetDevice((int)g);
    if (cudaMalloc(&keys[g], counts[g] * 4) != cudaSuccess || cudaMalloc(&values[g], counts[g] * 4) != cudaSuccess ||
        cudaMalloc(&found_values[g], counts[g] * 4) != cudaSuccess || cudaMalloc((void **)&found[g], counts[g]) != cudaSuccess) {
      fprintf(stderr, "out of device memory for %llu pairs on GPU %u\n", (unsigned long long)counts[g], g);
      exit(1);
    }
    make_pairs<<<1024, 256>>>((uint32_t *)keys[g], (uint32_t *)values[g], first, counts[g], 0x9E3779B9u);
    cudaDeviceSynchronize();
  }
  timer t;
  cudaSetDevice(0);
  cudaEventCreate(&t.start), cudaEventCreate(&t.stop);
  double *ins = (double *)calloc(repeats, sizeof(double)), *fnd = (double *)calloc(repeats, sizeof(double));
  gh_dist_times insert_times, find_times;
  for (unsigned r = 0; r < repeats; ++r) {
    if (gh_dist_clear(d) != GH_OK) die("gh_dist_clear", d);
    uint64_t failed = 0;
    timer_start(&t);
    if (gh_dist_insert(d, (const void *const *)keys, (const void *const *)values, counts, GH_KEEP_FIRST, NULL, &failed) != GH_OK)
      die("gh_dist_insert", d);
    ins[r] = timer_stop(&t);
    gh_dist_last_times(d, &insert_times);
    timer_start(&t);
    if (gh_dist_find(d, (const void *const *)keys, counts, found_values, found, NULL) != GH_OK) die("gh_dist_find", d);
    fnd[r] = timer_stop(&t);
    gh_dist_last_times(d, &find_times);
  }
  uint64_t size = 0;
  gh_dist_size(d, &size);
  if (size != n) fprintf(stderr, "warning: size %llu after inserting %llu distinct keys\n", (unsigned long long)size,
                         (unsigned long long)n);
  qsort(ins, repeats, sizeof *ins, by_value);
  qsort(fnd, repeats, sizeof *fnd, by_value);
  *insert_ms = ins[repeats / 2], *find_ms = fnd[repeats / 2];
  /* The ceiling: the same communicator's all-to-all of the insert's bytes (keys and values). */
  double alltoall = 0;
  if (gpus > 1 && gh_dist_measure_exchange(d, n / gpus * 8u, 5, &alltoall) != GH_OK) die("measure exchange", d);
  const double insert_exchange = insert_times.exchange_ms > 0 ? insert_times.exchanged_bytes / gpus / (insert_times.exchange_ms * 1e6) : 0;
  const double find_exchange = find_times.exchange_ms > 0 ? find_times.exchanged_bytes / gpus / (find_times.exchange_ms * 1e6) : 0;
  emit(scenario, overlap ? "insert_overlap" : "insert", gpus, n, *insert_ms, &insert_times,
       alltoall > 0 ? insert_exchange / alltoall : 0, "exchange_fraction_of_alltoall");
  emit(scenario, overlap ? "find_overlap" : "find", gpus, n, *find_ms, &find_times,
       alltoall > 0 ? find_exchange / alltoall : 0, "exchange_fraction_of_alltoall");
  if (gpus > 1) emit(scenario, "alltoall_ceiling", gpus, n, (double)n * 8 / gpus * (gpus - 1) / gpus / (alltoall * 1e6), NULL,
                     alltoall, "alltoall_gb_per_s_per_gpu");
  for (unsigned g = 0; g < gpus; ++g) {
    cudaSetDevice((int)g);
    cudaFree(keys[g]), cudaFree(values[g]), cudaFree(found_values[g]), cudaFree(found[g]);
  }
  free(ins), free(fnd);
  gh_dist_destroy(d);
}

/* Every GPU copying `bytes` from pinned host memory at once: GB/s of all of them. */
static double h2d_bandwidth(unsigned gpus, uint64_t bytes) {
  void *host = NULL, *dev[MAX_GPUS];
  cudaStream_t streams[MAX_GPUS];
  cudaHostAlloc(&host, bytes * gpus, cudaHostAllocPortable);
  memset(host, 1, bytes * gpus);
  for (unsigned g = 0; g < gpus; ++g) {
    cudaSetDevice((int)g);
    cudaMalloc(&dev[g], bytes);
    cudaStreamCreate(&streams[g]);
  }
  double best = 0;
  timer t;
  cudaSetDevice(0);
  cudaEventCreate(&t.start), cudaEventCreate(&t.stop);
  for (int r = 0; r < 5; ++r) {
    timer_start(&t);
    for (unsigned g = 0; g < gpus; ++g) {
      cudaSetDevice((int)g);
      cudaMemcpyAsync(dev[g], (char *)host + g * bytes, bytes, cudaMemcpyHostToDevice, streams[g]);
    }
    for (unsigned g = 0; g < gpus; ++g) cudaSetDevice((int)g), cudaStreamSynchronize(streams[g]);
    const double ms = timer_stop(&t), rate = (double)bytes * gpus / (ms * 1e6);
    best = rate > best ? rate : best;
  }
  for (unsigned g = 0; g < gpus; ++g) cudaSetDevice((int)g), cudaFree(dev[g]), cudaStreamDestroy(streams[g]);
  cudaFreeHost(host);
  return best;
}

static void host_sided(unsigned gpus, uint64_t n, unsigned repeats, int pinned) {
  const double bandwidth = h2d_bandwidth(gpus, 1ull << 30);
  uint32_t *keys, *values, *found_values;
  uint8_t *found;
  if (pinned) {
    cudaHostAlloc((void **)&keys, n * 4, cudaHostAllocPortable), cudaHostAlloc((void **)&values, n * 4, cudaHostAllocPortable);
    cudaHostAlloc((void **)&found_values, n * 4, cudaHostAllocPortable), cudaHostAlloc((void **)&found, n, cudaHostAllocPortable);
  } else {
    keys = (uint32_t *)malloc(n * 4), values = (uint32_t *)malloc(n * 4);
    found_values = (uint32_t *)malloc(n * 4), found = (uint8_t *)malloc(n);
  }
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t k = (uint32_t)(i * 2654435761ull) ^ 0x9E3779B9u;
    keys[i] = k == 0xFFFFFFFFu || k == 0xFFFFFFFEu ? 1u : k;
    values[i] = k * 7u + 1u;
  }
  gh_dist *d = make_table(gpus, n, 0, 0);
  timer t;
  cudaSetDevice(0);
  cudaEventCreate(&t.start), cudaEventCreate(&t.stop);
  double *ins = (double *)calloc(repeats, sizeof(double)), *fnd = (double *)calloc(repeats, sizeof(double));
  for (unsigned r = 0; r < repeats; ++r) {
    gh_dist_clear(d);
    timer_start(&t);
    if (gh_dist_insert_host(d, keys, values, n, GH_KEEP_FIRST, NULL, NULL) != GH_OK) die("gh_dist_insert_host", d);
    ins[r] = timer_stop(&t);
    timer_start(&t);
    if (gh_dist_find_host(d, keys, n, found_values, found, NULL) != GH_OK) die("gh_dist_find_host", d);
    fnd[r] = timer_stop(&t);
  }
  uint64_t missing = 0;
  for (uint64_t i = 0; i < n; ++i) missing += !found[i] || found_values[i] != values[i];
  if (missing) fprintf(stderr, "warning: %llu keys not found with their values\n", (unsigned long long)missing);
  qsort(ins, repeats, sizeof *ins, by_value);
  qsort(fnd, repeats, sizeof *fnd, by_value);
  const double insert_gbps = n * 8.0 / (ins[repeats / 2] * 1e6), find_gbps = n * 4.0 / (fnd[repeats / 2] * 1e6);
  emit("host", pinned ? "insert_pinned" : "insert_pageable", gpus, n, ins[repeats / 2], NULL, insert_gbps / bandwidth,
       "fraction_of_h2d");
  emit("host", pinned ? "find_pinned" : "find_pageable", gpus, n, fnd[repeats / 2], NULL, find_gbps / bandwidth,
       "fraction_of_h2d");
  emit("host", "h2d_ceiling", gpus, n, n * 8.0 / (bandwidth * 1e6), NULL, bandwidth, "h2d_gb_per_s");
  gh_dist_destroy(d);
  if (pinned) cudaFreeHost(keys), cudaFreeHost(values), cudaFreeHost(found_values), cudaFreeHost(found);
  else free(keys), free(values), free(found_values), free(found);
  free(ins), free(fnd);
}

int main(int argc, char **argv) {
  unsigned gpus = 0, repeats = 5;
  unsigned log2n[4] = {28, 29}, sizes = 2;
  const char *json_path = NULL, *only = NULL;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "--gpus") == 0) gpus = (unsigned)atoi(argv[a + 1]);
    else if (strcmp(argv[a], "--repeats") == 0) repeats = (unsigned)atoi(argv[a + 1]);
    else if (strcmp(argv[a], "--json") == 0) json_path = argv[a + 1];
    else if (strcmp(argv[a], "--only") == 0) only = argv[a + 1];
    else if (strcmp(argv[a], "--log2n") == 0) {
      sizes = 0;
      for (char *p = argv[a + 1]; *p && sizes < 4; ++p) {
        log2n[sizes++] = (unsigned)strtoul(p, &p, 10);
        if (*p != ',') break;
      }
    } else {
      fprintf(stderr, "usage: %s [--gpus G] [--log2n L,...] [--repeats R] [--only strong|weak|host] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  int available = 0;
  if (cudaGetDeviceCount(&available) != cudaSuccess || available < 1) {
    printf("gpuhash-dist-bench: no GPU here\n");
    return 0;
  }
  if (gpus == 0 || gpus > (unsigned)available) gpus = (unsigned)available;
  if (gpus > MAX_GPUS) gpus = MAX_GPUS;
  if (repeats == 0) repeats = 1;
  if (json_path) {
    json = fopen(json_path, "w");
    if (json == NULL) return perror(json_path), 1;
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    fprintf(json, "{\"tool\": \"gpuhash-dist-bench\", \"device\": \"%s\", \"gpus_available\": %d, \"repeats\": %u,"
            " \"design\": \"warpdrive\", \"load\": 0.8, \"results\": [", prop.name, available, repeats);
  }
  printf("gpuhash-dist-bench: %u GPU(s) of %d, median of %u\n", gpus, available, repeats);
  for (unsigned s = 0; s < sizes && (!only || strcmp(only, "strong") == 0); ++s) {
    const uint64_t n = 1ull << log2n[s];
    double one_insert = 0, one_find = 0;
    for (unsigned g = 1; g <= gpus; g *= 2) {
      double insert_ms, find_ms;
      device_sided("strong", g, n, repeats, 0, &insert_ms, &find_ms);
      if (g == 1) one_insert = insert_ms, one_find = find_ms;
      else {
        double overlap_insert, overlap_find;
        device_sided("strong", g, n, repeats, 1, &overlap_insert, &overlap_find);
        emit("strong", "insert_efficiency", g, n, insert_ms, NULL, one_insert / (g * insert_ms), "efficiency");
        emit("strong", "find_efficiency", g, n, find_ms, NULL, one_find / (g * find_ms), "efficiency");
      }
    }
  }
  if (!only || strcmp(only, "weak") == 0) {
    double one_insert = 0, one_find = 0;
    for (unsigned g = 1; g <= gpus; g *= 2) {
      double insert_ms, find_ms;
      device_sided("weak", g, (1ull << 28) * g, repeats, 0, &insert_ms, &find_ms);
      if (g == 1) one_insert = insert_ms, one_find = find_ms;
      else {
        emit("weak", "insert_efficiency", g, (1ull << 28) * g, insert_ms, NULL, one_insert / insert_ms, "efficiency");
        emit("weak", "find_efficiency", g, (1ull << 28) * g, find_ms, NULL, one_find / find_ms, "efficiency");
      }
    }
  }
  if (!only || strcmp(only, "host") == 0) {
    host_sided(gpus, 1ull << 28, repeats, 1);
    host_sided(gpus, 1ull << 28, repeats > 3 ? 3 : repeats, 0);
  }
  if (json) {
    fprintf(json, "\n]}\n");
    fclose(json);
  }
  return 0;
}
