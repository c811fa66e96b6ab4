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
 *   ranks    (--ranks R) one process per GPU: R copies of this program, the id through a file,
 *            device-sided insert and find of 2^L pairs (the first --log2n), rank 0 reporting;
 *            against "strong" of a single process run separately
 *   host     host-sided insert and find of 2^L pairs (--host-log2n, default 28) from pinned and
 *            from pageable host memory over G GPUs, against the host-to-device bandwidth measured
 *            in the same run (every GPU copying at once)
 *   big      (--big-log2n L,...) a table built from 2^L pairs in pinned host memory, more than there
 *            are 32-bit keys (each key 2^(L-32) times): the insert against the same bandwidth, the
 *            table's size and a find of its first pairs checked
 *
 * --staging-mib M sets the host-sided calls' staging (gh_dist_config.staging_bytes, per GPU and
 * slot; the library's default otherwise).
 * Warpdrive partitions at load 0.8, 32-bit keys and values; keys are distinct (an odd multiplier
 * and a seed: a bijection of the index). Each time is the median of R runs, measured with CUDA
 * events on GPU 0's default stream around the call (which waits for every GPU). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
static uint64_t staging_bytes; /* --staging-mib: the host-sided calls' staging per GPU and slot (0: the default) */

static void emit(const char *scenario, const char *op, unsigned gpus, uint64_t n, double ms, const gh_dist_times *t,
                 double extra_name_value, const char *extra_name) {
  const double rate = n / (ms * 1e6);
  printf("%-8s %-22s gpus %u n 2^%-2d %9.3f ms %7.2f G/s", scenario, op, gpus, __builtin_ctzll(n), ms, rate);
  if (t) printf("  [split %.2f exch %.2f (agree %.2f) table %.2f ms, %.2f GB sent]", t->multisplit_ms, t->exchange_ms,
                t->agreement_ms, t->table_ms, t->exchanged_bytes / 1e9);
  if (extra_name) printf("  %s %.3f", extra_name, extra_name_value);
  printf("\n");
  if (!json) return;
  fprintf(json, "%s\n  {\"scenario\": \"%s\", \"op\": \"%s\", \"gpus\": %u, \"n\": %llu, \"ms\": %.4f, \"g_per_s\": %.4f",
          json_first ? "" : ",", scenario, op, gpus, (unsigned long long)n, ms, rate);
  if (t)
    fprintf(json, ", \"multisplit_ms\": %.4f, \"exchange_ms\": %.4f, \"agreement_ms\": %.4f, \"table_ms\": %.4f, "
            "\"exchanged_bytes\": %llu", t->multisplit_ms, t->exchange_ms, t->agreement_ms, t->table_ms,
            (unsigned long long)t->exchanged_bytes);
  if (extra_name) fprintf(json, ", \"%s\": %.4f", extra_name, extra_name_value);
  fprintf(json, "}");
  json_first = 0;
}

static void die(const char *what, gh_dist *d) {
  fprintf(stderr, "%s: %s\n", what, d ? gh_dist_last_error(d) : gh_dist_last_create_error());
  exit(1);
}

/* Events on one GPU's default stream (GPU 0, or a rank's own). */
typedef struct timer {
  cudaEvent_t start, stop;
  int device;
} timer;

static timer timer_make(int device) {
  timer t;
  t.device = device;
  cudaSetDevice(device);
  cudaEventCreate(&t.start), cudaEventCreate(&t.stop);
  return t;
}

static void timer_start(timer *t) {
  cudaSetDevice(t->device);
  cudaEventRecord(t->start, 0);
}
static double timer_stop(timer *t) {
  float ms = 0;
  cudaSetDevice(t->device);
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

/* One process's slices: slice i on GPU device[i], pairs [first_i, first_i + counts[i]) of the
 * key sequence, with room for a find's results. */
typedef struct bench_slices {
  unsigned count;
  int device[MAX_GPUS];
  void *keys[MAX_GPUS], *values[MAX_GPUS], *found_values[MAX_GPUS];
  uint8_t *found[MAX_GPUS];
  uint64_t counts[MAX_GPUS];
} bench_slices;

static void make_slice(bench_slices *s, int device, uint64_t first, uint64_t count) {
  const unsigned i = s->count++;
  s->device[i] = device, s->counts[i] = count;
  cudaSetDevice(device);
  if (cudaMalloc(&s->keys[i], count * 4) != cudaSuccess || cudaMalloc(&s->values[i], count * 4) != cudaSuccess ||
      cudaMalloc(&s->found_values[i], count * 4) != cudaSuccess || cudaMalloc((void **)&s->found[i], count) != cudaSuccess) {
    fprintf(stderr, "out of device memory for %llu pairs on GPU %d\n", (unsigned long long)count, device);
    exit(1);
  }
  make_pairs<<<1024, 256>>>((uint32_t *)s->keys[i], (uint32_t *)s->values[i], first, count, 0x9E3779B9u);
  cudaDeviceSynchronize();
}

static void free_slices(bench_slices *s) {
  for (unsigned i = 0; i < s->count; ++i) {
    cudaSetDevice(s->device[i]);
    cudaFree(s->keys[i]), cudaFree(s->values[i]), cudaFree(s->found_values[i]), cudaFree(s->found[i]);
  }
}

static double median(double *ms, unsigned count) {
  qsort(ms, count, sizeof *ms, by_value);
  return ms[count / 2];
}

/* The medians of `repeats` inserts of the slices into the cleared table and finds of them, timed
 * on t's GPU, with the last call's phases. */
static void time_insert_find(gh_dist *d, bench_slices *s, unsigned repeats, timer *t, double *insert_ms, double *find_ms,
                             gh_dist_times *insert_times, gh_dist_times *find_times) {
  double *ins = (double *)calloc(repeats, sizeof(double)), *fnd = (double *)calloc(repeats, sizeof(double));
  for (unsigned r = 0; r < repeats; ++r) {
    if (gh_dist_clear(d) != GH_OK) die("gh_dist_clear", d);
    timer_start(t);
    if (gh_dist_insert(d, (const void *const *)s->keys, (const void *const *)s->values, s->counts, GH_KEEP_FIRST, NULL,
                       NULL) != GH_OK)
      die("gh_dist_insert", d);
    ins[r] = timer_stop(t);
    gh_dist_last_times(d, insert_times);
    timer_start(t);
    if (gh_dist_find(d, (const void *const *)s->keys, s->counts, s->found_values, s->found, NULL) != GH_OK)
      die("gh_dist_find", d);
    fnd[r] = timer_stop(t);
    gh_dist_last_times(d, find_times);
  }
  *insert_ms = median(ins, repeats), *find_ms = median(fnd, repeats);
  free(ins), free(fnd);
}

static void expect_size(gh_dist *d, uint64_t n) {
  uint64_t size = 0;
  if (gh_dist_size(d, &size) != GH_OK || size != n)
    fprintf(stderr, "warning: size %llu after inserting %llu distinct keys\n", (unsigned long long)size,
            (unsigned long long)n);
}

/* Device-sided insert and find of n pairs over `gpus` GPUs: medians; *insert_ms / *find_ms. */
static void device_sided(const char *scenario, unsigned gpus, uint64_t n, unsigned repeats, int overlap,
                         double *insert_ms, double *find_ms) {
  gh_dist *d = make_table(gpus, n, 0, overlap);
  bench_slices slices;
  memset(&slices, 0, sizeof slices);
  for (unsigned g = 0; g < gpus; ++g) make_slice(&slices, (int)g, n * g / gpus, n * (g + 1u) / gpus - n * g / gpus);
  timer t = timer_make(0);
  gh_dist_times insert_times, find_times;
  time_insert_find(d, &slices, repeats, &t, insert_ms, find_ms, &insert_times, &find_times);
  expect_size(d, n);
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
  free_slices(&slices);
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
  timer t = timer_make(0);
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

/* Pairs [0, n) of the key sequence into host memory: made on GPU 0 in pieces and copied down
 * (a host loop over 2^33 pairs takes about a minute). */
static void fill_host_pairs(uint32_t *keys, uint32_t *values, uint64_t n) {
  const uint64_t piece = 1ull << 26;
  uint32_t *piece_keys = NULL, *piece_values = NULL;
  cudaSetDevice(0);
  if (cudaMalloc((void **)&piece_keys, piece * 4) != cudaSuccess || cudaMalloc((void **)&piece_values, piece * 4) != cudaSuccess) {
    fprintf(stderr, "out of device memory for making the host's pairs\n");
    exit(1);
  }
  for (uint64_t at = 0; at < n; at += piece) {
    const uint64_t count = n - at < piece ? n - at : piece;
    make_pairs<<<1024, 256>>>(piece_keys, piece_values, at, count, 0x9E3779B9u);
    cudaMemcpy(keys + at, piece_keys, count * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(values + at, piece_values, count * 4, cudaMemcpyDeviceToHost);
  }
  cudaFree(piece_keys), cudaFree(piece_values);
}

/* Host memory of `bytes`, pinned or pageable; exits when there is none. */
static void *host_alloc(size_t bytes, int pinned) {
  void *p = NULL;
  if (pinned ? cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess : (p = malloc(bytes)) == NULL) {
    fprintf(stderr, "out of %s host memory for %zu bytes\n", pinned ? "pinned" : "pageable", bytes);
    exit(1);
  }
  return p;
}

static void host_free(void *p, int pinned) {
  if (pinned) cudaFreeHost(p);
  else free(p);
}

/* A host-sided find of pairs [0, n): each key found with its value (key 1 stands in for the two
 * sentinels too, and keeps its own value: not compared); a warning says how many were not. */
static void check_found(const uint32_t *keys, const uint32_t *values, const uint8_t *found, const uint32_t *found_values,
                        uint64_t n) {
  uint64_t missing = 0;
  for (uint64_t i = 0; i < n; ++i) missing += !found[i] || (keys[i] != 1u && found_values[i] != values[i]);
  if (missing) fprintf(stderr, "warning: %llu keys not found with their values\n", (unsigned long long)missing);
}

static void host_sided(unsigned gpus, uint64_t n, unsigned repeats, int pinned) {
  const double bandwidth = h2d_bandwidth(gpus, 1ull << 30);
  uint32_t *keys = (uint32_t *)host_alloc(n * 4, pinned), *values = (uint32_t *)host_alloc(n * 4, pinned);
  uint32_t *found_values = (uint32_t *)host_alloc(n * 4, pinned);
  uint8_t *found = (uint8_t *)host_alloc(n, pinned);
  fill_host_pairs(keys, values, n);
  gh_dist *d = make_table(gpus, n, staging_bytes, 0);
  timer t = timer_make(0);
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
  check_found(keys, values, found, found_values, n);
  const double insert_ms = median(ins, repeats), find_ms = median(fnd, repeats);
  const double insert_gbps = n * 8.0 / (insert_ms * 1e6), find_gbps = n * 4.0 / (find_ms * 1e6);
  emit("host", pinned ? "insert_pinned" : "insert_pageable", gpus, n, insert_ms, NULL, insert_gbps / bandwidth,
       "fraction_of_h2d");
  emit("host", pinned ? "find_pinned" : "find_pageable", gpus, n, find_ms, NULL, find_gbps / bandwidth,
       "fraction_of_h2d");
  emit("host", "h2d_ceiling", gpus, n, n * 8.0 / (bandwidth * 1e6), NULL, bandwidth, "h2d_gb_per_s");
  gh_dist_destroy(d);
  host_free(keys, pinned), host_free(values, pinned), host_free(found_values, pinned), host_free(found, pinned);
  free(ins), free(fnd);
}

/* A table built from host memory out of more pairs than there are 32-bit keys (issue 13: >= 2^33
 * pairs over 2 GPUs; issue 14: >= 2^34 over 4): key i of the sequence is key i + 2^32, so every
 * key comes n / 2^32 times and the table ends holding all 2^32 - 2 of them (the two sentinels are
 * mapped to key 1), at load 0.8. Host-sided inserts from pinned memory (medians); then the size
 * and a host-sided find of the first 2^28 pairs are checked. */
static void big_build(unsigned gpus, uint64_t n, unsigned repeats) {
  const uint64_t distinct = (1ull << 32) - 2u, checked = n < (1ull << 28) ? n : (1ull << 28);
  const double bandwidth = h2d_bandwidth(gpus, 1ull << 30);
  uint32_t *keys = (uint32_t *)host_alloc(n * 4, 1), *values = (uint32_t *)host_alloc(n * 4, 1);
  uint32_t *found_values = (uint32_t *)host_alloc(checked * 4, 1);
  uint8_t *found = (uint8_t *)host_alloc(checked, 1);
  fill_host_pairs(keys, values, n);
  gh_dist *d = make_table(gpus, n < distinct ? n : distinct, staging_bytes, 0);
  timer t = timer_make(0);
  double *ins = (double *)calloc(repeats, sizeof(double));
  for (unsigned r = 0; r < repeats; ++r) {
    if (gh_dist_clear(d) != GH_OK) die("gh_dist_clear", d);
    timer_start(&t);
    if (gh_dist_insert_host(d, keys, values, n, GH_KEEP_FIRST, NULL, NULL) != GH_OK) die("gh_dist_insert_host", d);
    ins[r] = timer_stop(&t);
  }
  expect_size(d, n < distinct ? n : distinct);
  if (gh_dist_validate(d) != GH_OK) die("gh_dist_validate", d);
  if (gh_dist_find_host(d, keys, checked, found_values, found, NULL) != GH_OK) die("gh_dist_find_host", d);
  check_found(keys, values, found, found_values, checked);
  uint64_t size = 0;
  gh_dist_size(d, &size);
  const double insert_ms = median(ins, repeats);
  emit("big", "insert_pinned", gpus, n, insert_ms, NULL, n * 8.0 / (insert_ms * 1e6) / bandwidth, "fraction_of_h2d");
  emit("big", "table_size", gpus, n, insert_ms, NULL, (double)size, "keys_held");
  emit("big", "h2d_ceiling", gpus, n, n * 8.0 / (bandwidth * 1e6), NULL, bandwidth, "h2d_gb_per_s");
  gh_dist_destroy(d);
  host_free(keys, 1), host_free(values, 1), host_free(found_values, 1), host_free(found, 1);
  free(ins);
}

static void open_json(const char *path, int available, unsigned repeats) {
  json = fopen(path, "w");
  if (json == NULL) {
    perror(path);
    exit(1);
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  fprintf(json, "{\"tool\": \"gpuhash-dist-bench\", \"device\": \"%s\", \"gpus_available\": %d, \"repeats\": %u,"
          " \"design\": \"warpdrive\", \"load\": 0.8, \"results\": [", prop.name, available, repeats);
}

/* One process per GPU: this process is rank `rank` of `ranks` (on GPU `rank`), the id through
 * id_file; n pairs over all of them, device-sided insert and find; rank 0 reports ("ranks"). */
static int rank_sided(unsigned rank, unsigned ranks, const char *id_file, uint64_t n, unsigned repeats,
                      const char *json_path) {
  gh_dist_id id;
  gh_status status = rank == 0 ? gh_dist_id_new(&id) : gh_dist_id_load(id_file, 60.0, &id);
  if (status == GH_OK && rank == 0) status = gh_dist_id_save(&id, id_file);
  if (status != GH_OK) die("the id", NULL);
  const int device = (int)rank;
  gh_dist_config c = gh_dist_config_default(GH_WARPDRIVE);
  c.table.backend = GH_BACKEND_CUDA;
  c.table.capacity = (uint64_t)(n / ranks / 0.8);
  c.partitions = ranks, c.id = &id, c.rank = rank, c.devices = &device;
  gh_dist *d = NULL;
  if (gh_dist_create(&c, &d) != GH_OK) die("gh_dist_create", NULL);
  bench_slices slices;
  memset(&slices, 0, sizeof slices);
  make_slice(&slices, device, n * rank / ranks, n * (rank + 1u) / ranks - n * rank / ranks);
  timer t = timer_make(device);
  double insert_ms, find_ms;
  gh_dist_times insert_times, find_times;
  time_insert_find(d, &slices, repeats, &t, &insert_ms, &find_ms, &insert_times, &find_times);
  expect_size(d, n);
  if (rank == 0) {
    int available = 0;
    cudaGetDeviceCount(&available);
    if (json_path) open_json(json_path, available, repeats);
    printf("gpuhash-dist-bench: %u ranks, one process per GPU, median of %u\n", ranks, repeats);
    emit("ranks", "insert", ranks, n, insert_ms, &insert_times, 0, NULL);
    emit("ranks", "find", ranks, n, find_ms, &find_times, 0, NULL);
    if (json) fprintf(json, "\n]}\n"), fclose(json);
  }
  gh_dist_destroy(d);
  free_slices(&slices);
  return 0;
}

/* Starts `ranks` copies of this program, one a GPU, and waits for them (before any CUDA call here). */
static int launch_ranks(const char *self, unsigned ranks, unsigned log2n, unsigned repeats, const char *json_path) {
  char path[] = "/tmp/gpuhash-dist-bench-id-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return perror("mkstemp"), 1;
  close(fd);
  unlink(path);
  char rank_text[16], ranks_text[16], log2n_text[16], repeats_text[16];
  snprintf(ranks_text, sizeof ranks_text, "%u", ranks);
  snprintf(log2n_text, sizeof log2n_text, "%u", log2n);
  snprintf(repeats_text, sizeof repeats_text, "%u", repeats);
  pid_t children[MAX_GPUS];
  for (unsigned r = 0; r < ranks; ++r) {
    snprintf(rank_text, sizeof rank_text, "%u", r);
    children[r] = fork();
    if (children[r] == 0) {
      execl(self, self, "--rank", rank_text, "--ranks", ranks_text, "--id-file", path, "--log2n", log2n_text,
            "--repeats", repeats_text, "--json", r == 0 && json_path ? json_path : "", (char *)NULL);
      _exit(127);
    }
  }
  int ok = 1;
  for (unsigned r = 0; r < ranks; ++r) {
    int status = 0;
    waitpid(children[r], &status, 0);
    ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  unlink(path);
  return ok ? 0 : 1;
}

/* "28,30" -> sizes[] = {28, 30}; how many (at most 4). */
static unsigned parse_sizes(char *list, unsigned *sizes) {
  unsigned count = 0;
  for (char *p = list; *p && count < 4; ++p) {
    sizes[count++] = (unsigned)strtoul(p, &p, 10);
    if (*p != ',') break;
  }
  return count;
}

int main(int argc, char **argv) {
  unsigned gpus = 0, repeats = 5;
  unsigned log2n[4] = {28, 29}, sizes = 2, host_log2n[4] = {28}, host_sizes = 1, big_log2n[4], big_sizes = 0;
  const char *json_path = NULL, *only = NULL, *id_file = NULL;
  int rank = -1;
  unsigned ranks = 0;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "--gpus") == 0) gpus = (unsigned)atoi(argv[a + 1]);
    else if (strcmp(argv[a], "--ranks") == 0) ranks = (unsigned)atoi(argv[a + 1]);
    else if (strcmp(argv[a], "--rank") == 0) rank = atoi(argv[a + 1]);
    else if (strcmp(argv[a], "--id-file") == 0) id_file = argv[a + 1];
    else if (strcmp(argv[a], "--repeats") == 0) repeats = (unsigned)atoi(argv[a + 1]);
    else if (strcmp(argv[a], "--json") == 0) json_path = argv[a + 1];
    else if (strcmp(argv[a], "--only") == 0) only = argv[a + 1];
    else if (strcmp(argv[a], "--log2n") == 0) sizes = parse_sizes(argv[a + 1], log2n);
    else if (strcmp(argv[a], "--host-log2n") == 0) host_sizes = parse_sizes(argv[a + 1], host_log2n);
    else if (strcmp(argv[a], "--big-log2n") == 0) big_sizes = parse_sizes(argv[a + 1], big_log2n);
    else if (strcmp(argv[a], "--staging-mib") == 0) staging_bytes = strtoull(argv[a + 1], NULL, 10) << 20;
    else {
      fprintf(stderr, "usage: %s [--gpus G] [--log2n L,...] [--host-log2n L,...] [--big-log2n L,...] [--staging-mib M]\n"
                      "          [--repeats R] [--only strong|weak|host|big] [--json FILE]\n"
                      "       %s --ranks R [--log2n L] [--repeats K] [--json FILE]   (one process per GPU)\n",
              argv[0], argv[0]);
      return 2;
    }
  }
  if (json_path && json_path[0] == '\0') json_path = NULL;
  if (repeats == 0) repeats = 1;
  if (rank >= 0 && id_file && ranks >= 1)
    return rank_sided((unsigned)rank, ranks, id_file, 1ull << log2n[0], repeats, json_path);
  if (ranks >= 1) {
    if (ranks > MAX_GPUS) ranks = MAX_GPUS;
    return launch_ranks(argv[0], ranks, log2n[0], repeats, json_path);
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
            " \"design\": \"warpdrive\", \"load\": 0.8, \"staging_bytes\": %llu, \"results\": [", prop.name, available,
            repeats, (unsigned long long)staging_bytes);
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
        /* The efficiency of the library's default (exchange_overlap -1: overlapped from 3 GPUs). */
        if (g > 2) insert_ms = overlap_insert, find_ms = overlap_find;
        emit("strong", "insert_efficiency", g, n, insert_ms, NULL, one_insert / (g * insert_ms), "efficiency");
        emit("strong", "find_efficiency", g, n, find_ms, NULL, one_find / (g * find_ms), "efficiency");
      }
    }
  }
  if (!only || strcmp(only, "weak") == 0) {
    double one_insert = 0, one_find = 0;
    for (unsigned g = 1; g <= gpus; g *= 2) {
      double insert_ms, find_ms;
      device_sided("weak", g, (1ull << 28) * g, repeats, g > 2, &insert_ms, &find_ms);
      if (g == 1) one_insert = insert_ms, one_find = find_ms;
      else {
        emit("weak", "insert_efficiency", g, (1ull << 28) * g, insert_ms, NULL, one_insert / insert_ms, "efficiency");
        emit("weak", "find_efficiency", g, (1ull << 28) * g, find_ms, NULL, one_find / find_ms, "efficiency");
      }
    }
  }
  for (unsigned s = 0; s < host_sizes && (!only || strcmp(only, "host") == 0); ++s) {
    host_sided(gpus, 1ull << host_log2n[s], repeats, 1);
    host_sided(gpus, 1ull << host_log2n[s], repeats > 3 ? 3 : repeats, 0);
  }
  for (unsigned s = 0; s < big_sizes && (!only || strcmp(only, "big") == 0); ++s)
    big_build(gpus, 1ull << big_log2n[s], repeats > 3 ? 3 : repeats);
  if (json) {
    fprintf(json, "\n]}\n");
    fclose(json);
  }
  return 0;
}
