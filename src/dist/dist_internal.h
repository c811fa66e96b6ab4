/* dist_internal.h - what the distributed table's layer (dist/dist.c) and its CUDA backend
 * (dist/dist_cuda.cu, NCCL) share. dist.c owns the config checks, the partitions' tables and the
 * whole-table calls; the CUDA backend owns the communicators, streams, exchange buffers and the
 * per-GPU worker threads, and runs the slice and host-sided calls. */
#ifndef GH_DIST_INTERNAL_H
#define GH_DIST_INTERNAL_H

#include <stddef.h>

#include "gpuhash_dist.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes a message (printf's format) into error; returns status. */
gh_status gh__dist_say(char *error, size_t size, gh_status status, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

typedef enum gh_dist_op { GH_DIST_INSERT = 0, GH_DIST_FIND = 1, GH_DIST_ERASE = 2 } gh_dist_op;

/* One call, as the caller passed it: arrays of one entry per local partition (slice calls), or
 * of one entry (host-sided calls). flags_out: insert's failed_out, find's found_out, erase's
 * erased_out; values: insert's input, values_out find's output. count: insert's keys not in the
 * table, erase's keys erased (summed over every partition). */
typedef struct gh_dist_call {
  gh_dist_op op;
  const void *const *keys;
  const void *const *values;
  const uint64_t *n;
  gh_dup_policy policy;
  uint8_t *const *flags_out;
  void *const *values_out;
  const void *default_value;
  uint64_t count;
} gh_dist_call;

/* The CUDA backend's state for the partitions this process drives. */
typedef struct gh_dist_cuda gh_dist_cuda;

/* Connects the local tables (tables[i] is partition first + i on devices[i]) to the other
 * partitions: ncclCommInitAll (config->id NULL) or ncclCommInitRankConfig. Writes a message on
 * failure. */
gh_status gh__dist_cuda_create(const gh_dist_config *config, gh_table *const *tables, const int *devices,
                               unsigned local, gh_dist_cuda **out, char *error, size_t error_size);
void gh__dist_cuda_destroy(gh_dist_cuda *cuda);
/* A slice call (call->keys has `local` entries in the local GPUs' memory) or a host-sided one. */
gh_status gh__dist_cuda_slices(gh_dist_cuda *cuda, gh_dist_call *call, char *error, size_t error_size);
gh_status gh__dist_cuda_host(gh_dist_cuda *cuda, gh_dist_call *call, char *error, size_t error_size);
/* Every partition's record of `bytes` (mine: the local partitions', one after another) gathered
 * into all (m records, in partition order). */
gh_status gh__dist_cuda_allgather(gh_dist_cuda *cuda, const void *mine, size_t bytes, void *all, char *error,
                                  size_t error_size);
void gh__dist_cuda_times(const gh_dist_cuda *cuda, gh_dist_times *times);
gh_status gh__dist_cuda_measure_exchange(gh_dist_cuda *cuda, uint64_t bytes_per_gpu, unsigned repeats,
                                         double *gb_per_s, char *error, size_t error_size);
gh_status gh__dist_cuda_id_new(gh_dist_id *id, char *error, size_t error_size);
/* 0 once a communicator of this process failed (every collective call then answers GH_ERR_PEER). */
int gh__dist_cuda_connected(const gh_dist_cuda *cuda);
/* The calling thread's current CUDA device, and setting it back (create changes it per GPU). */
int gh__dist_cuda_current_device(void);
void gh__dist_cuda_set_device(int device);

#ifdef __cplusplus
}
#endif

#endif /* GH_DIST_INTERNAL_H */
