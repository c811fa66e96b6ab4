/*
 * dist_ranks - one distributed table over 2 GPUs, one process per GPU, the NCCL id passed through
 * a file (gpuhash_dist.h, "One process per GPU").
 *
 *   dist_ranks                       starts ranks 0 and 1 (itself, twice) and waits for them
 *   dist_ranks RANK ID_FILE          one rank: rank 0 writes the id, rank 1 reads it
 *
 * Each rank puts its half of one key set (keys in its GPU's memory) into the table, then looks up
 * the whole set (its slice: every key), checks every value, the size and validate, and exports its
 * own partition. Then rank 1 leaves without a word, and rank 0's next call must come back with
 * GH_ERR_PEER within the timeout, its partition still valid, exportable and counted (the other
 * partition's size: GH_ERR_PEER).
 * Exit status 0: checked; 77: fewer than 2 GPUs here; 1: a check failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuhash_dist.h"

#define KEYS (1u << 20)
#define TIMEOUT_SECONDS 20.0

static int failures;

static void check(int ok, int rank, const char *what, const char *detail) {
  if (ok) return;
  fprintf(stderr, "rank %d: %s%s%s\n", rank, what, detail ? ": " : "", detail ? detail : "");
  failures += 1;
}

/* Key i and its value: distinct keys (an odd multiplier is a bijection on 32 bits), never 0. */
static uint32_t key_of(uint64_t i) { return (uint32_t)(i * 2654435761u + 12345u) | 1u; }
static uint32_t value_of(uint32_t key) { return key ^ 0x5A5A5A5Au; }

/* Rank 0 makes the id and saves it; rank 1 waits for the file. */
static int share_id(int rank, const char *path, gh_dist_id *id) {
  const gh_status status = rank == 0 ? gh_dist_id_new(id) : gh_dist_id_load(path, 60.0, id);
  if (status == GH_OK && (rank != 0 || gh_dist_id_save(id, path) == GH_OK)) return 0;
  fprintf(stderr, "rank %d: %s\n", rank, gh_dist_last_create_error());
  return 1;
}

static int run_rank(int rank, const char *path) {
  gh_dist_id id;
  if (share_id(rank, path, &id) != 0) return 1;
  gh_dist_config config = gh_dist_config_default(GH_WARPDRIVE);
  config.table.backend = GH_BACKEND_CUDA;
  config.table.capacity = 2u * KEYS / 2u; /* per partition: about half the keys, at load 0.5 */
  config.partitions = 2;
  config.id = &id;
  config.rank = (unsigned)rank;
  config.devices = &rank; /* rank r on GPU r */
  config.timeout_seconds = TIMEOUT_SECONDS;
  gh_dist *table = NULL;
  if (gh_dist_create(&config, &table) != GH_OK)
    return fprintf(stderr, "rank %d: %s\n", rank, gh_dist_last_create_error()), 1;

  /* This rank's half of the keys, and every key to look up. */
  const uint64_t half = KEYS / 2u, begin = (uint64_t)rank * half;
  uint32_t *keys = malloc(KEYS * 4u), *values = malloc(KEYS * 4u), *found_values = malloc(KEYS * 4u);
  uint8_t *found = malloc(KEYS);
  for (uint64_t i = 0; i < KEYS; ++i) keys[i] = key_of(i), values[i] = value_of(keys[i]);
  void *d_keys, *d_values, *d_all, *d_found_values, *d_found;
  cudaSetDevice(rank);
  cudaMalloc(&d_keys, half * 4u), cudaMalloc(&d_values, half * 4u), cudaMalloc(&d_all, KEYS * 4u);
  cudaMalloc(&d_found_values, KEYS * 4u), cudaMalloc(&d_found, KEYS);
  cudaMemcpy(d_keys, keys + begin, half * 4u, cudaMemcpyHostToDevice);
  cudaMemcpy(d_values, values + begin, half * 4u, cudaMemcpyHostToDevice);
  cudaMemcpy(d_all, keys, KEYS * 4u, cudaMemcpyHostToDevice);

  const void *key_slice[1] = {d_keys}, *value_slice[1] = {d_values}, *all_slice[1] = {d_all};
  void *value_out[1] = {d_found_values};
  uint8_t *found_out[1] = {d_found};
  const uint64_t half_n[1] = {half}, all_n[1] = {KEYS};
  uint64_t failed = 1, size = 0, count = 0;
  check(gh_dist_insert(table, key_slice, value_slice, half_n, GH_KEEP_FIRST, NULL, &failed) == GH_OK && failed == 0,
        rank, "insert", gh_dist_last_error(table));
  check(gh_dist_find(table, all_slice, all_n, value_out, found_out, NULL) == GH_OK, rank, "find",
        gh_dist_last_error(table));
  cudaMemcpy(found_values, d_found_values, KEYS * 4u, cudaMemcpyDeviceToHost);
  cudaMemcpy(found, d_found, KEYS, cudaMemcpyDeviceToHost);
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < KEYS; ++i) wrong += !found[i] || found_values[i] != values[i];
  check(wrong == 0, rank, "find: keys missing or with a wrong value", NULL);
  check(gh_dist_size(table, &size) == GH_OK && size == KEYS, rank, "size", gh_dist_last_error(table));
  check(gh_dist_validate(table) == GH_OK, rank, "validate", gh_dist_last_error(table));
  uint32_t *out_keys = malloc(KEYS * 4u), *out_values = malloc(KEYS * 4u);
  check(gh_dist_export(table, out_keys, out_values, KEYS, &count) == GH_OK, rank, "export", gh_dist_last_error(table));
  uint64_t elsewhere = 0;
  for (uint64_t i = 0; i < count; ++i) elsewhere += gh_dist_partition_of(table, out_keys[i]) != (unsigned)rank;
  check(count > KEYS / 4u && count < 3u * KEYS / 4u && elsewhere == 0, rank, "export: not this rank's partition", NULL);
  printf("rank %d: %llu keys inserted, %llu found, table size %llu, %llu in this partition%s\n", rank,
         (unsigned long long)half, (unsigned long long)(KEYS - wrong), (unsigned long long)size,
         (unsigned long long)count, failures ? " - FAILED" : "");

  /* Rank 1 leaves; rank 0's next call must fail cleanly, and its partition stay. */
  if (rank == 0) {
    const gh_status status = gh_dist_find(table, all_slice, all_n, value_out, found_out, NULL);
    check(status == GH_ERR_PEER, rank, "a find after rank 1 left did not report GH_ERR_PEER", gh_status_name(status));
    printf("rank 0: after rank 1 left: %s (%s)\n", gh_status_name(status), gh_dist_last_error(table));
    uint64_t again = 0, own = 0;
    check(gh_dist_export(table, out_keys, out_values, KEYS, &again) == GH_OK && again == count, rank,
          "export after the peer left", gh_dist_last_error(table));
    check(gh_dist_partition_size(table, 0, &own) == GH_OK && own == count, rank,
          "partition_size of its own partition after the peer left", gh_dist_last_error(table));
    check(gh_dist_validate(table) == GH_OK, rank, "validate after the peer left", gh_dist_last_error(table));
    check(gh_dist_partition_size(table, 1, &own) == GH_ERR_PEER, rank,
          "partition_size of the partition that left is not GH_ERR_PEER", NULL);
    gh_dist_destroy(table);
  } else {
    _exit(failures ? 1 : 0); /* leaves without a word: no destroy */
  }
  free(keys), free(values), free(found_values), free(found), free(out_keys), free(out_values);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc == 3) return run_rank(atoi(argv[1]), argv[2]);
  int gpus = 0;
  if (argc != 1) return fprintf(stderr, "usage: %s [RANK ID_FILE]\n", argv[0]), 2;
  /* (The count comes from a child, so that this process starts no CUDA context before forking.) */
  pid_t probe = fork();
  if (probe == 0) _exit(cudaGetDeviceCount(&gpus) == cudaSuccess && gpus >= 2 ? 0 : 77);
  int probe_status = 0;
  waitpid(probe, &probe_status, 0);
  if (!WIFEXITED(probe_status) || WEXITSTATUS(probe_status) != 0) {
    printf("SKIPPED: dist_ranks needs 2 GPUs\n");
    return 77;
  }
  char path[] = "/tmp/gpuhash-dist-id-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return perror("mkstemp"), 1;
  close(fd);
  unlink(path); /* rank 0 renames the id into place */
  pid_t ranks[2];
  for (int r = 0; r < 2; ++r) {
    ranks[r] = fork();
    if (ranks[r] == 0) {
      char rank_text[4];
      snprintf(rank_text, sizeof rank_text, "%d", r);
      execl(argv[0], argv[0], rank_text, path, (char *)NULL);
      _exit(127);
    }
  }
  int ok = 1;
  for (int r = 0; r < 2; ++r) {
    int status = 0;
    waitpid(ranks[r], &status, 0);
    ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  unlink(path);
  printf("dist_ranks: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
