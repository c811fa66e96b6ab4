/* dist_cuda.cu - the distributed table's CUDA backend: one CUDA table per GPU, the pieces moved
 * with NCCL (WarpDrive's multi-GPU cascade, section IV-B of the paper).
 *
 * Every GPU this process drives is a `rank`: its table, its streams, its NCCL communicator, its
 * exchange buffers, and (when the process drives several) its own host thread, so that the GPUs'
 * blocking table calls run side by side. A slice call on a rank:
 *   1. multisplit of its slice by p(k): a count kernel (per warp and partition, in shared
 *      memory), an exclusive scan of the counts (partition-major, so that the scan gives each
 *      warp's place in each piece: a stable split), a place kernel that writes the pieces;
 *   2. the piece sizes' all-gather (an m x (m + 1) matrix: every rank's m sizes and its status,
 *      so that a rank that failed to split stops every rank before anything moves), the receive
 *      buffers' allocation (agreed the same way), and the all-to-all: one grouped ncclSend /
 *      ncclRecv per rank, the rank's own piece by a device copy;
 *   3. the table's operation on what arrived;
 *   4. the statuses' all-gather, and the results' way back when anyone wants them: the reverse
 *      all-to-all, then the place kernel again in gather mode, which recomputes each key's place
 *      (no permutation is stored) and reads its result from there.
 * Every wait for a peer polls the stream and the communicator's error with a deadline
 * (timeout_seconds); an error or the deadline aborts the communicator (ncclCommAbort) and the call
 * returns GH_ERR_PEER. NCCL is loaded with dlopen when the first table is created, so the library
 * does not need it at link time. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/kernels.cuh"
extern "C" {
#include "core/parallel.h"
#include "core/toolkit.h"
#include "dist/dist_internal.h"
}
#include "gpuhash/detail/hash.h"

/* ---- NCCL, loaded at run time ------------------------------------------------------------------ */

typedef struct nccl_api {
  void *library;
  ncclResult_t (*get_unique_id)(ncclUniqueId *);
  ncclResult_t (*comm_init_all)(ncclComm_t *, int, const int *);
  ncclResult_t (*comm_init_rank_config)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *);
  ncclResult_t (*comm_destroy)(ncclComm_t);
  ncclResult_t (*comm_abort)(ncclComm_t);
  ncclResult_t (*comm_get_async_error)(ncclComm_t, ncclResult_t *);
  const char *(*get_error_string)(ncclResult_t);
  ncclResult_t (*group_start)(void);
  ncclResult_t (*group_end)(void);
  ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*all_gather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
} nccl_api;

static nccl_api nccl;
static pthread_once_t nccl_once = PTHREAD_ONCE_INIT;
static char nccl_load_error[512];

static void nccl_load(void) {
  const char *name = getenv("GH_NCCL_LIBRARY");
  if (name == NULL || name[0] == '\0') name = "libnccl.so.2";
  void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    snprintf(nccl_load_error, sizeof nccl_load_error,
             "the CUDA backend of the distributed table needs NCCL, and %s could not be loaded (%s): install "
             "NCCL or name its library in GH_NCCL_LIBRARY", name, dlerror());
    return;
  }
  nccl_api api;
  memset(&api, 0, sizeof api);
  struct {
    void **slot;
    const char *symbol;
  } wanted[] = {
      {(void **)&api.get_unique_id, "ncclGetUniqueId"},
      {(void **)&api.comm_init_all, "ncclCommInitAll"},
      {(void **)&api.comm_init_rank_config, "ncclCommInitRankConfig"},
      {(void **)&api.comm_destroy, "ncclCommDestroy"},
      {(void **)&api.comm_abort, "ncclCommAbort"},
      {(void **)&api.comm_get_async_error, "ncclCommGetAsyncError"},
      {(void **)&api.get_error_string, "ncclGetErrorString"},
      {(void **)&api.group_start, "ncclGroupStart"},
      {(void **)&api.group_end, "ncclGroupEnd"},
      {(void **)&api.send, "ncclSend"},
      {(void **)&api.recv, "ncclRecv"},
      {(void **)&api.all_gather, "ncclAllGather"},
  };
  for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; ++i) {
    *wanted[i].slot = dlsym(library, wanted[i].symbol);
    if (*wanted[i].slot == NULL) {
      snprintf(nccl_load_error, sizeof nccl_load_error, "%s has no %s: NCCL 2.14 or newer is needed", name,
               wanted[i].symbol);
      dlclose(library);
      return;
    }
  }
  api.library = library;
  nccl = api;
}

#define say gh__dist_say

static gh_status nccl_ready(char *error, size_t size) {
  pthread_once(&nccl_once, nccl_load);
  return nccl.library ? GH_OK : say(error, size, GH_ERR_UNSUPPORTED, "%s", nccl_load_error);
}

extern "C" gh_status gh__dist_cuda_id_new(gh_dist_id *id, char *error, size_t size) {
  gh_status status = nccl_ready(error, size);
  if (status != GH_OK) return status;
  ncclUniqueId unique;
  const ncclResult_t got = nccl.get_unique_id(&unique);
  if (got != ncclSuccess) return say(error, size, GH_ERR_PEER, "ncclGetUniqueId: %s", nccl.get_error_string(got));
  memcpy(id->bytes, unique.internal, sizeof id->bytes < sizeof unique.internal ? sizeof id->bytes : sizeof unique.internal);
  return GH_OK;
}

/* ---- Ranks ------------------------------------------------------------------------------------ */

/* A rank's device buffers, kept between calls and grown as calls need (through the table's
 * allocator). The first three are allocated at create, so that a rank can always take part in
 * the agreements that stop a call on every rank. */
enum {
  BUF_ROW,      /* m + 1 words: this rank's piece sizes and its status */
  BUF_MATRIX,   /* m * (m + 1) words: every rank's row */
  BUF_RECORDS,  /* m * GH_DIST_RECORD_BYTES: all-gathered records (statuses, statistics) */
  BUF_COUNTS,   /* per warp and partition: the multisplit's counts */
  BUF_OFFSETS,  /* their exclusive scan: where each warp's keys of each piece go */
  BUF_SEND_KEYS, BUF_SEND_VALUES, BUF_RECV_KEYS, BUF_RECV_VALUES,
  BUF_RESULT_VALUES, BUF_RESULT_FLAGS, BUF_BACK_VALUES, BUF_BACK_FLAGS, BUF_ONES,
  BUF_STAGE_KEYS,   /* host-sided calls: two batches' keys, then values, then the outputs */
  BUF_STAGE_KEYS_2, BUF_STAGE_VALUES, BUF_STAGE_VALUES_2, BUF_STAGE_OUT_VALUES, BUF_STAGE_OUT_VALUES_2,
  BUF_STAGE_OUT_FLAGS, BUF_STAGE_OUT_FLAGS_2,
  BUF_COUNT
};
#define GH_DIST_RECORD_BYTES 1024u
#define GH_DIST_MARKS 11
#define GH_DIST_MESSAGE 512

typedef struct buffer {
  void *ptr;
  size_t bytes;
} buffer;

typedef struct rank rank;
typedef void (*rank_job)(rank *r, void *context);

struct rank {
  gh_dist_cuda *owner;
  unsigned partition;
  int device;
  gh_table *table;
  /* The table cannot grow: its only partial insert is GH_ERR_TABLE_FULL, after which the keys that
   * did not fit are the ones it does not hold (gpuhash.h, gh_insert). */
  int fills_up;
  cudaStream_t stream;       /* the multisplit, NCCL, the table's work on the pieces received */
  cudaStream_t own_stream;   /* the table's work on the GPU's own piece, during the exchange */
  cudaStream_t copy_stream;  /* host-sided calls: batches to the GPU */
  cudaStream_t drain_stream; /* host-sided calls: results to the host */
  cudaEvent_t drained[2];    /* an output slot's results have reached the host */
  ncclComm_t comm;
  int broken;                 /* the communicator failed and was aborted */
  int reported_other;         /* the last call's message reports another partition's failure */
  cudaEvent_t marks[GH_DIST_MARKS];
  buffer buffers[BUF_COUNT];
  uint64_t *matrix;           /* host copy of BUF_MATRIX */
  void *pinned[4];            /* host-sided calls: pinned staging of two batches' keys and values */
  size_t pinned_bytes[4];
  gh_dist_times times;
  gh_status status;           /* the last job's */
  char message[GH_DIST_MESSAGE];
  /* The worker thread (processes that drive several GPUs). */
  pthread_t thread;
  int has_thread, stop;
  rank_job job;
  void *job_context;
  unsigned long long job_serial, done_serial;
};

struct gh_dist_cuda {
  unsigned m, local, multi_process;
  unsigned key_bytes, value_bytes;
  uint64_t seed, staging_bytes;
  double timeout_seconds;
  int overlap; /* the table works on a GPU's own piece while the others travel */
  int aborting; /* a local communicator failed: every rank aborts its own at its next wait */
  rank *ranks;
  pthread_mutex_t lock;
  pthread_cond_t wake, done;
};

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void nap(void) {
  const struct timespec t = {0, 20000};
  nanosleep(&t, NULL);
}

/* The rank's message for this call. */
#define rank_fail(r, status, ...) say((r)->message, sizeof (r)->message, (status), __VA_ARGS__)

static gh_status cuda_fail(rank *r, cudaError_t e, const char *what) {
  return rank_fail(r, e == cudaErrorMemoryAllocation ? GH_ERR_OUT_OF_MEMORY : GH_ERR_CUDA,
                   "partition %u: %s: %s (%s)", r->partition, what, cudaGetErrorName(e), cudaGetErrorString(e));
}

/* The rank's communicator is given up (only its own thread touches it), and the process's other
 * ranks abort theirs at their next wait, so that none waits for a peer that will not come: later
 * calls that need a communicator answer GH_ERR_PEER at once. status: GH_ERR_PEER, or GH_ERR_CUDA
 * for a CUDA failure in the middle of a collective call. */
static gh_status comm_fail(rank *r, gh_status status, const char *what, const char *why) {
  __atomic_store_n(&r->owner->aborting, 1, __ATOMIC_RELEASE);
  if (r->comm && !r->broken) nccl.comm_abort(r->comm);
  r->broken = 1;
  return rank_fail(r, status, "partition %u: %s: %s; the communicator was aborted, the local tables stay valid",
                   r->partition, what, why);
}

/* GH_OK while the rank's communicator can be used; otherwise it is aborted (if not yet) and the
 * call answers GH_ERR_PEER. */
static gh_status usable(rank *r, const char *what) {
  if (r->broken) return rank_fail(r, GH_ERR_PEER, "partition %u: %s: the communicator failed earlier", r->partition, what);
  if (__atomic_load_n(&r->owner->aborting, __ATOMIC_ACQUIRE))
    return comm_fail(r, GH_ERR_PEER, what, "another GPU's communicator failed");
  return GH_OK;
}

/* Waits for an NCCL call's enqueueing (non-blocking communicators) and then for the rank's
 * stream, polling the communicator's error, with the table's deadline. */
static gh_status wait_peers(rank *r, ncclResult_t queued, const char *what) {
  if (queued != ncclSuccess && queued != ncclInProgress)
    return comm_fail(r, GH_ERR_PEER, what, nccl.get_error_string(queued));
  const double deadline = now_seconds() + r->owner->timeout_seconds;
  for (;;) {
    const gh_status still = usable(r, what);
    if (still != GH_OK) return still;
    ncclResult_t async = ncclSuccess;
    if (r->comm) nccl.comm_get_async_error(r->comm, &async);
    if (async != ncclSuccess && async != ncclInProgress)
      return comm_fail(r, GH_ERR_PEER, what, nccl.get_error_string(async));
    cudaError_t e = cudaErrorNotReady;
    if (async == ncclSuccess) {
      e = cudaStreamQuery(r->stream);
      if (e == cudaSuccess) return GH_OK;
      /* (A CUDA failure here leaves this rank out of the collective: the communicator goes.) */
      if (e != cudaErrorNotReady) return comm_fail(r, GH_ERR_CUDA, what, cudaGetErrorString(e));
    }
    if (now_seconds() > deadline) {
      char why[96];
      snprintf(why, sizeof why, "no progress for %.3g s (timeout_seconds): a peer left or hangs",
               r->owner->timeout_seconds);
      return comm_fail(r, GH_ERR_PEER, what, why);
    }
    nap();
  }
}

/* A buffer of at least `bytes` (contents not kept), in whole 256-byte units: NCCL's copy kernels
 * read a buffer's last bytes in wider words than the bytes sent (compute-sanitizer saw a 4-byte
 * read end 1 byte past a 5,035-byte flag array). */
static void *ensure(rank *r, int which, size_t bytes) {
  buffer *b = &r->buffers[which];
  bytes = (bytes + 255u) / 256u * 256u;
  if (bytes == 0) bytes = 256u;
  if (b->bytes >= bytes) return b->ptr;
  if (b->ptr) gh__free(r->table, b->ptr, b->bytes, GH_MEMORY_DEVICE);
  b->ptr = gh__alloc(r->table, bytes, GH_MEMORY_DEVICE);
  b->bytes = b->ptr ? bytes : 0;
  return b->ptr;
}

static void *buf(rank *r, int which) { return r->buffers[which].ptr; }

static void mark(rank *r, int which) { cudaEventRecord(r->marks[which], r->stream); }
static double between(rank *r, int from, int to) {
  float ms = 0;
  return cudaEventElapsedTime(&ms, r->marks[from], r->marks[to]) == cudaSuccess ? (double)ms : 0.0;
}

/* ---- Kernels ----------------------------------------------------------------------------------- */

#define SPLIT_WARPS 8u /* warps per block of the multisplit kernels */

typedef struct split_shape {
  uint64_t n, seed;
  unsigned m, key_bytes, rounds; /* rounds of 32 keys per warp */
  uint64_t warps;                /* warps over the slice */
} split_shape;

static __device__ __forceinline__ unsigned key_partition(uint64_t key, const split_shape s) {
  return (unsigned)((uint32_t)gh_fmix64(key ^ s.seed) % s.m);
}

/* row[p]: the slice's keys of partition p (from the scanned counts), row[m]: the status. */
__global__ void split_row_kernel(const uint64_t *offsets, split_shape s, uint64_t status, uint64_t *row) {
  for (unsigned p = threadIdx.x; p <= s.m; p += blockDim.x) {
    if (p == s.m) {
      row[p] = status;
    } else if (s.warps == 0) {
      row[p] = 0;
    } else {
      const uint64_t end = p + 1u < s.m ? offsets[(uint64_t)(p + 1u) * s.warps] : s.n;
      row[p] = end - offsets[(uint64_t)p * s.warps];
    }
  }
}

/* Copies one element of `bytes` bytes in words of `word` bytes (8, 4 or 1, dividing bytes and
 * the arrays' alignment). */
static __device__ __forceinline__ void copy_element(void *dst, uint64_t to, const void *src, uint64_t from,
                                                    unsigned bytes, unsigned word) {
  if (word == 8u) {
    for (unsigned k = 0; k < bytes / 8u; ++k)
      ((uint64_t *)dst)[to * (bytes / 8u) + k] = ((const uint64_t *)src)[from * (bytes / 8u) + k];
  } else if (word == 4u) {
    for (unsigned k = 0; k < bytes / 4u; ++k)
      ((uint32_t *)dst)[to * (bytes / 4u) + k] = ((const uint32_t *)src)[from * (bytes / 4u) + k];
  } else {
    for (unsigned k = 0; k < bytes; ++k) ((uint8_t *)dst)[to * bytes + k] = ((const uint8_t *)src)[from * bytes + k];
  }
}

/* The arrays of one place pass: scatter (the keys, and values when given, into the pieces) or
 * gather (each key's result from the pieces' layout back to the key's own position). */
typedef struct place_arrays {
  const void *keys;
  const void *values;   /* scatter: the slice's values (NULL: none) */
  void *piece_keys, *piece_values;
  const void *back_values; /* gather */
  const uint8_t *back_flags;
  void *values_out;
  uint8_t *flags_out;
  unsigned value_bytes, word;
} place_arrays;

/* Rounds a warp has in flight together: their keys (and then their values or results) are
 * loaded before any is used, so that a warp waits for memory once per chunk, not once a round.
 * Two H100s, 2^29 keys (bench/results/2026-11-27-h100x2-dist-multisplit-chunks.txt): the insert's
 * multisplit of a 2^28-key slice took 4.0 ms one round at a time, 3.2 with 4 and 3.3 with 8; the
 * find's (keys out, results back) 4.4, 4.5 and 5.2: more rounds hold more registers, fewer
 * threads. */
#define SPLIT_CHUNK 4u

/* One pass over the slice, warp w taking keys [w * rounds * 32, (w + 1) * rounds * 32) in rounds
 * of 32 and ranking each key among the warp's keys of its partition (match_any: the lanes of a
 * partition, in lane order, after the rounds before). SPLIT_COUNT: counts[p * warps + w] = warp
 * w's keys of partition p. SPLIT_SCATTER / SPLIT_GATHER: each key's place in the pieces is its
 * warp's scanned offset for p plus its rank; the key and its value go there, or the key's result
 * comes back from there, by place_arrays (values of one word, a.word == bytes, loaded a chunk at a
 * time; others element by element). One instantiation a pass: each keeps only its own arrays of a
 * chunk in registers. */
enum { SPLIT_COUNT, SPLIT_SCATTER, SPLIT_GATHER };

template <int kPass>
__global__ void split_kernel(split_shape s, uint64_t *counts, const uint64_t *offsets, place_arrays a) {
  extern __shared__ unsigned tallies[];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x / 32u;
  unsigned *mine = tallies + warp * s.m;
  for (unsigned p = lane; p < s.m; p += 32u) mine[p] = 0;
  __syncwarp();
  const uint64_t w = (uint64_t)blockIdx.x * SPLIT_WARPS + warp;
  if (w >= s.warps) return;
  const uint64_t base = w * s.rounds * 32u;
  const unsigned key_bits = s.key_bytes * 8u;
  const unsigned value_bits = a.word == a.value_bytes && a.word >= 4u ? a.word * 8u : 0u; /* 0: by copy_element */
  const void *word_source = kPass == SPLIT_GATHER ? (a.values_out ? a.back_values : NULL) : a.values;
  for (unsigned chunk = 0; chunk < s.rounds; chunk += SPLIT_CHUNK) {
    unsigned part[SPLIT_CHUNK];
    uint64_t key[SPLIT_CHUNK], at[SPLIT_CHUNK], word[SPLIT_CHUNK];
    uint8_t flag[SPLIT_CHUNK];
#pragma unroll
    for (unsigned c = 0; c < SPLIT_CHUNK; ++c) {
      const uint64_t i = base + (uint64_t)(chunk + c) * 32u + lane;
      const bool here = chunk + c < s.rounds && i < s.n;
      key[c] = here ? gh__read_word(a.keys, i, key_bits) : 0u;
      part[c] = here ? key_partition(key[c], s) : s.m;
    }
#pragma unroll
    for (unsigned c = 0; c < SPLIT_CHUNK; ++c) {
      const unsigned p = part[c], peers = __match_any_sync(0xFFFFFFFFu, p);
      const unsigned before = p < s.m ? mine[p] : 0u;
      __syncwarp();
      if (p < s.m && lane == (unsigned)__ffs(peers) - 1u) mine[p] = before + __popc(peers);
      __syncwarp();
      at[c] = p < s.m && kPass != SPLIT_COUNT ? offsets[(uint64_t)p * s.warps + w] + before + __popc(peers & ((1u << lane) - 1u)) : 0u;
    }
    if constexpr (kPass != SPLIT_COUNT) {
#pragma unroll
      for (unsigned c = 0; c < SPLIT_CHUNK; ++c) { /* the chunk's loads, all in flight together */
        const uint64_t i = base + (uint64_t)(chunk + c) * 32u + lane, from = kPass == SPLIT_GATHER ? at[c] : i;
        const bool here = part[c] < s.m;
        word[c] = here && value_bits && word_source ? gh__read_word(word_source, from, value_bits) : 0u;
        flag[c] = here && kPass == SPLIT_GATHER && a.flags_out ? a.back_flags[at[c]] : 0u;
      }
#pragma unroll
      for (unsigned c = 0; c < SPLIT_CHUNK; ++c) {
        const uint64_t i = base + (uint64_t)(chunk + c) * 32u + lane;
        if (part[c] >= s.m) continue;
        if (kPass == SPLIT_SCATTER) {
          gh__write_word(a.piece_keys, at[c], key_bits, key[c]);
          if (a.values && value_bits) gh__write_word(a.piece_values, at[c], value_bits, word[c]);
          else if (a.values) copy_element(a.piece_values, at[c], a.values, i, a.value_bytes, a.word);
        } else {
          if (a.values_out && value_bits) gh__write_word(a.values_out, i, value_bits, word[c]);
          else if (a.values_out) copy_element(a.values_out, i, a.back_values, at[c], a.value_bytes, a.word);
          if (a.flags_out) a.flags_out[i] = flag[c];
        }
      }
    }
  }
  if (kPass == SPLIT_COUNT)
    for (unsigned p = lane; p < s.m; p += 32u) counts[(uint64_t)p * s.warps + w] = mine[p];
}

__global__ void invert_flags_kernel(uint8_t *flags, uint64_t n) {
  for (uint64_t i = gh_thread_index(); i < n; i += gh_grid_threads()) flags[i] = !flags[i];
}

__global__ void count_ones_kernel(const uint8_t *flags, uint64_t n, unsigned long long *ones) {
  unsigned long long local = 0;
  for (uint64_t i = gh_thread_index(); i < n; i += gh_grid_threads()) local += flags[i];
  gh_warp_add(ones, local);
}

/* The widest word (8, 4, 1) that divides the value size and every array's address. */
static unsigned value_word(unsigned bytes, const void *a, const void *b) {
  const uintptr_t any = (uintptr_t)a | (uintptr_t)b;
  if (bytes % 8u == 0 && any % 8u == 0) return 8u;
  if (bytes % 4u == 0 && any % 4u == 0) return 4u;
  return 1u;
}

static split_shape shape_of(const gh_dist_cuda *x, uint64_t n) {
  split_shape s;
  s.n = n;
  s.seed = x->seed;
  s.m = x->m;
  s.key_bytes = x->key_bytes;
  /* Enough keys per warp that the counts (m per warp) stay a small fraction of the keys. */
  s.rounds = x->m > 32u ? x->m : 32u;
  const uint64_t per_warp = (uint64_t)s.rounds * 32u;
  s.warps = (n + per_warp - 1u) / per_warp;
  return s;
}

static gh_status launched(rank *r, const char *what) {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? GH_OK : cuda_fail(r, e, what);
}

static unsigned split_blocks(const split_shape s) { return (unsigned)((s.warps + SPLIT_WARPS - 1u) / SPLIT_WARPS); }
static size_t split_shared(const split_shape s) { return (size_t)SPLIT_WARPS * s.m * sizeof(unsigned); }

/* Step 1: the slice's pieces in BUF_SEND_*, their sizes in BUF_ROW. */
static gh_status multisplit(rank *r, const split_shape s, const void *keys, const void *values) {
  gh_dist_cuda *x = r->owner;
  const size_t count_bytes = (size_t)s.m * s.warps * sizeof(uint64_t);
  uint64_t *counts = (uint64_t *)ensure(r, BUF_COUNTS, count_bytes);
  uint64_t *offsets = (uint64_t *)ensure(r, BUF_OFFSETS, count_bytes);
  void *send_keys = ensure(r, BUF_SEND_KEYS, s.n * x->key_bytes);
  void *send_values = values ? ensure(r, BUF_SEND_VALUES, s.n * x->value_bytes) : NULL;
  if (!counts || !offsets || !send_keys || (values && !send_values))
    return rank_fail(r, GH_ERR_OUT_OF_MEMORY, "partition %u: out of device memory for the multisplit of %llu keys",
                     r->partition, (unsigned long long)s.n);
  if (s.warps) {
    place_arrays a;
    memset(&a, 0, sizeof a);
    a.keys = keys, a.values = values, a.piece_keys = send_keys, a.piece_values = send_values;
    a.value_bytes = x->value_bytes, a.word = value_word(x->value_bytes, values, send_values);
    split_kernel<SPLIT_COUNT><<<split_blocks(s), SPLIT_WARPS * 32u, split_shared(s), r->stream>>>(s, counts, NULL, a);
    gh_status status = launched(r, "the multisplit's count kernel");
    if (status == GH_OK && gh__cuda_exclusive_sum_u64(r->table, counts, offsets, (uint64_t)s.m * s.warps, r->stream) != GH_OK)
      status = rank_fail(r, GH_ERR_OUT_OF_MEMORY, "partition %u: %s", r->partition, gh_last_error(r->table));
    if (status != GH_OK) return status;
    split_kernel<SPLIT_SCATTER><<<split_blocks(s), SPLIT_WARPS * 32u, split_shared(s), r->stream>>>(s, NULL, offsets, a);
    status = launched(r, "the multisplit's place kernel");
    if (status != GH_OK) return status;
  }
  split_row_kernel<<<1, 256, 0, r->stream>>>(offsets, s, GH_OK, (uint64_t *)buf(r, BUF_ROW));
  return launched(r, "the multisplit's row kernel");
}

/* ---- Collectives ------------------------------------------------------------------------------- */

/* Every rank's `bytes` (host, at mine) into all (host, m records), through BUF_RECORDS. */
static gh_status gather_records(rank *r, const void *mine, size_t bytes, void *all, const char *what) {
  gh_dist_cuda *x = r->owner;
  const gh_status still = usable(r, what);
  if (still != GH_OK) return still;
  char *records = (char *)buf(r, BUF_RECORDS);
  char *own = records + (size_t)r->partition * bytes;
  cudaMemcpyAsync(own, mine, bytes, cudaMemcpyHostToDevice, r->stream);
  const gh_status status = wait_peers(r, nccl.all_gather(own, records, bytes, ncclUint8, r->comm, r->stream), what);
  if (status != GH_OK) return status;
  const cudaError_t e = cudaMemcpy(all, records, (size_t)x->m * bytes, cudaMemcpyDeviceToHost);
  /* (A rank that cannot read the records cannot follow the others: the communicator goes.) */
  return e == cudaSuccess ? GH_OK : comm_fail(r, GH_ERR_CUDA, what, cudaGetErrorString(e));
}

/* The first failing partition's status in words[p * stride + at], its message when it is this
 * rank's and a short one otherwise; GH_OK when none failed. */
static gh_status agreed(rank *r, const uint64_t *words, size_t stride, size_t at, const char *phase) {
  for (unsigned p = 0; p < r->owner->m; ++p) {
    const gh_status status = (gh_status)words[(size_t)p * stride + at];
    if (status == GH_OK) continue;
    if (p != r->partition) {
      r->reported_other = 1;
      rank_fail(r, status, "partition %u failed %s (%s: see that rank's gh_dist_last_error)", p, phase,
                gh_status_name(status));
    }
    return status;
  }
  return GH_OK;
}

/* The arrays one all-to-all moves together: elements of `width` bytes. */
typedef struct exchange_array {
  const char *send;
  char *recv;
  size_t width;
} exchange_array;

/* One grouped all-to-all of `count` arrays: piece q of each send array (send_count[q] elements at
 * send_start[q]) to rank q's recv array at its recv_start[me]. A rank's own piece does not move
 * (the caller works on it in place). Queued on the rank's stream; waited for when `wait`, else
 * the caller waits with wait_peers(r, ncclSuccess, what). */
static gh_status all_to_all(rank *r, const exchange_array *arrays, int count, const uint64_t *send_start,
                            const uint64_t *send_count, const uint64_t *recv_start, const uint64_t *recv_count,
                            int wait, const char *what) {
  const unsigned m = r->owner->m, me = r->partition;
  const gh_status still = usable(r, what);
  if (still != GH_OK) return still;
  ncclResult_t queued = nccl.group_start();
  for (unsigned q = 0; queued == ncclSuccess && q < m; ++q) {
    if (q == me) continue;
    for (int k = 0; queued == ncclSuccess && k < count; ++k) {
      const exchange_array *a = &arrays[k];
      if (send_count[q]) {
        queued = nccl.send(a->send + send_start[q] * a->width, send_count[q] * a->width, ncclUint8, (int)q, r->comm,
                           r->stream);
        r->times.exchanged_bytes += send_count[q] * a->width;
      }
      if (queued == ncclSuccess && recv_count[q])
        queued = nccl.recv(a->recv + recv_start[q] * a->width, recv_count[q] * a->width, ncclUint8, (int)q, r->comm,
                           r->stream);
    }
  }
  const ncclResult_t ended = nccl.group_end();
  if (queued == ncclSuccess) queued = ended;
  if (queued != ncclSuccess && queued != ncclInProgress)
    return comm_fail(r, GH_ERR_PEER, what, nccl.get_error_string(queued));
  return wait ? wait_peers(r, queued, what) : GH_OK;
}

/* ---- One rank's share of a slice call ----------------------------------------------------------- */

typedef struct slice_work {
  const gh_dist_call *call;
  const void *keys, *values;
  uint64_t n;
  uint8_t *flags_out;
  void *values_out;
  gh_status refused; /* the rank's arguments were refused: it still takes part, to stop the others */
  uint64_t count;
} slice_work;

/* The flags set among n (device); all n when they cannot be counted (no memory for the count). */
static uint64_t count_flags(rank *r, const uint8_t *flags, uint64_t n, cudaStream_t stream) {
  unsigned long long *ones = (unsigned long long *)ensure(r, BUF_ONES, sizeof *ones), host_ones = n;
  if (n && ones && cudaMemsetAsync(ones, 0, sizeof *ones, stream) == cudaSuccess) {
    count_ones_kernel<<<gh_cuda_resident_grid(n, (const void *)count_ones_kernel, 256), 256, 0, stream>>>(flags, n, ones);
    cudaMemcpyAsync(&host_ones, ones, sizeof host_ones, cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
  }
  return n ? host_ones : 0;
}

/* The table's operation on n keys at keys; flags (n bytes, device) per key as gh_dist_call says. */
static gh_status table_op(rank *r, const slice_work *w, const void *keys, const void *values, uint64_t n,
                          uint8_t *flags, void *values_out, uint64_t *count, cudaStream_t stream) {
  const gh_dist_call *c = w->call;
  gh_status status = GH_OK;
  *count = 0;
  if (c->op == GH_DIST_INSERT) {
    cudaMemsetAsync(flags, 1, n, stream); /* a failure that changes nothing writes no flags */
    /* A table that fills up is asked without per-key flags, so that a large piece may take
     * warpdrive's bulk insert (which gives none); in the rare full case they come from a find. */
    status = gh_insert(r->table, keys, values, n, c->policy, r->fills_up ? NULL : flags, stream);
    if (status == GH_OK) cudaMemsetAsync(flags, 0, n, stream);
    if (status == GH_ERR_TABLE_FULL && r->fills_up) {
      char full[GH_DIST_MESSAGE];
      snprintf(full, sizeof full, "%s", gh_last_error(r->table));
      const gh_status found = gh_find(r->table, keys, n, NULL, flags, NULL, stream);
      if (found == GH_OK) {
        invert_flags_kernel<<<gh_cuda_resident_grid(n, (const void *)invert_flags_kernel, 256), 256, 0, stream>>>(flags, n);
        *count = count_flags(r, flags, n, stream);
        rank_fail(r, status, "partition %u: %s", r->partition, full);
      } else {
        cudaMemsetAsync(flags, 1, n, stream); /* (which keys went in is unknown: all are flagged) */
        *count = n;
        rank_fail(r, found, "partition %u: %s; then reading which keys went in failed: %s", r->partition, full,
                  gh_last_error(r->table));
        status = found;
      }
      return status;
    }
    if (status != GH_OK) *count = count_flags(r, flags, n, stream);
  } else if (c->op == GH_DIST_FIND) {
    status = gh_find(r->table, keys, n, values_out, flags, c->default_value, stream);
  } else {
    status = gh_erase(r->table, keys, n, flags, count, stream);
    if (status != GH_OK && flags) cudaMemsetAsync(flags, 0, n, stream);
  }
  if (status != GH_OK) rank_fail(r, status, "partition %u: %s", r->partition, gh_last_error(r->table));
  return status;
}

/* The outputs of a call that changed nothing: insert's keys all failed, erase erased none. */
static void unchanged(rank *r, slice_work *w) {
  const gh_dist_call *c = w->call;
  if (w->refused != GH_OK) return; /* (a refused call writes nothing) */
  if (c->op == GH_DIST_INSERT) w->count = w->n;
  if (w->flags_out && w->n && c->op != GH_DIST_FIND) {
    cudaMemsetAsync(w->flags_out, c->op == GH_DIST_INSERT ? 1 : 0, w->n, r->stream);
    cudaStreamSynchronize(r->stream);
  }
}

/* One partition alone: the slice goes straight to the table. */
static gh_status single_partition(rank *r, slice_work *w) {
  if (w->refused != GH_OK) return w->refused;
  uint8_t *flags = w->flags_out;
  if (flags == NULL && w->call->op == GH_DIST_INSERT) {
    flags = (uint8_t *)ensure(r, BUF_RESULT_FLAGS, w->n);
    if (flags == NULL)
      return rank_fail(r, GH_ERR_OUT_OF_MEMORY, "partition 0: out of device memory for %llu flags",
                       (unsigned long long)w->n);
  }
  mark(r, 2);
  const gh_status status = table_op(r, w, w->keys, w->values, w->n, flags, w->values_out, &w->count, r->stream);
  mark(r, 3);
  cudaStreamSynchronize(r->stream);
  r->times.table_ms = between(r, 2, 3);
  return status;
}

static gh_status slice_op(rank *r, slice_work *w) {
  gh_dist_cuda *x = r->owner;
  const gh_dist_call *c = w->call;
  const unsigned m = x->m, me = r->partition;
  const size_t kb = x->key_bytes, vb = x->value_bytes;
  memset(&r->times, 0, sizeof r->times);
  w->count = 0;
  if (m == 1) return single_partition(r, w);
  gh_status status = usable(r, "a slice call");
  if (status != GH_OK) return status;

  /* 1. Multisplit (skipped by a rank whose arguments were refused, or that has no host memory for
   * the call's plan: its row carries the status, so that every rank stops). Whether values move
   * is the operation's, the same on every rank (a rank's empty slice may have no values array). */
  const int moves_values = c->op == GH_DIST_INSERT && vb;
  uint64_t *plan = (uint64_t *)calloc(4u * m, sizeof(uint64_t)), *records = (uint64_t *)calloc(2u * m, sizeof(uint64_t));
  if (w->refused == GH_OK && (plan == NULL || records == NULL))
    w->refused = rank_fail(r, GH_ERR_OUT_OF_MEMORY, "partition %u: out of host memory", me);
  const split_shape s = shape_of(x, w->refused == GH_OK ? w->n : 0);
  mark(r, 0);
  status = w->refused != GH_OK ? w->refused : multisplit(r, s, w->keys, moves_values ? w->values : NULL);
  if (status != GH_OK) {
    cudaMemsetAsync(buf(r, BUF_ROW), 0, (m + 1u) * sizeof(uint64_t), r->stream);
    const uint64_t word = (uint64_t)status;
    cudaMemcpyAsync((uint64_t *)buf(r, BUF_ROW) + m, &word, sizeof word, cudaMemcpyHostToDevice, r->stream);
  }
  mark(r, 1);

  /* 2. The piece sizes, the receive buffers, the pieces. */
  uint64_t *matrix_dev = (uint64_t *)buf(r, BUF_MATRIX);
  status = wait_peers(r, nccl.all_gather(buf(r, BUF_ROW), matrix_dev, m + 1u, ncclUint64, r->comm, r->stream),
                      "the all-gather of the piece sizes");
  if (status == GH_OK) {
    const cudaError_t e = cudaMemcpy(r->matrix, matrix_dev, (size_t)m * (m + 1u) * sizeof(uint64_t), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) status = comm_fail(r, GH_ERR_CUDA, "reading the piece sizes", cudaGetErrorString(e));
  }
  if (status == GH_OK) status = agreed(r, r->matrix, m + 1u, m, "before the exchange; nothing was changed");
  if (status != GH_OK) {
    if (status != GH_ERR_PEER) unchanged(r, w);
    free(plan), free(records);
    return status;
  }
  /* The rank's own piece stays where the multisplit put it; the receive buffers hold the others'. */
  uint64_t *send_start = plan, *send_count = plan + m, *recv_start = plan + 2u * m, *recv_count = plan + 3u * m;
  uint64_t recv_n = 0, at = 0;
  for (unsigned q = 0; q < m; ++q) {
    send_count[q] = r->matrix[(size_t)me * (m + 1u) + q];
    send_start[q] = at, at += send_count[q];
    recv_count[q] = q == me ? 0 : r->matrix[(size_t)q * (m + 1u) + me];
    recv_start[q] = recv_n, recv_n += recv_count[q];
  }
  const int find = c->op == GH_DIST_FIND;
  const size_t result_vb = find ? vb : 0;
  void *recv_keys = ensure(r, BUF_RECV_KEYS, recv_n * kb);
  void *recv_values = moves_values ? ensure(r, BUF_RECV_VALUES, recv_n * vb) : NULL;
  void *result_values = result_vb ? ensure(r, BUF_RESULT_VALUES, recv_n * vb) : NULL;
  uint8_t *result_flags = (uint8_t *)ensure(r, BUF_RESULT_FLAGS, recv_n);
  void *back_values = result_vb ? ensure(r, BUF_BACK_VALUES, w->n * vb) : NULL;
  uint8_t *back_flags = (uint8_t *)ensure(r, BUF_BACK_FLAGS, w->n);
  uint64_t record[2] = {GH_OK, 0};
  if (!recv_keys || (moves_values && !recv_values) || (result_vb && (!result_values || !back_values)) ||
      !result_flags || !back_flags)
    record[0] = rank_fail(r, GH_ERR_OUT_OF_MEMORY, "partition %u: out of memory for the %llu keys it receives",
                          me, (unsigned long long)recv_n);
  status = gather_records(r, record, sizeof record, records, "the agreement on the receive buffers");
  if (status == GH_OK) status = agreed(r, records, 2, 0, "before the exchange; nothing was changed");

  /* 3. The pieces travel; the table works on the rank's own piece (in place; its results go
   * straight to where the way back would put them) during the exchange (exchange_overlap, on
   * the own stream) or after it, then on the pieces received. */
  const char *send_keys = (const char *)buf(r, BUF_SEND_KEYS), *send_values = (const char *)buf(r, BUF_SEND_VALUES);
  exchange_array forward[2] = {{send_keys, (char *)recv_keys, kb}, {send_values, (char *)recv_values, vb}};
  mark(r, 10);
  if (status == GH_OK)
    status = all_to_all(r, forward, moves_values ? 2 : 1, send_start, send_count, recv_start, recv_count, !x->overlap,
                        "the all-to-all of the pieces");
  mark(r, 2);
  gh_status table_status = GH_OK;
  if (status == GH_OK) {
    uint64_t ignored;
    cudaStream_t own = x->overlap ? r->own_stream : r->stream;
    cudaEventRecord(r->marks[6], own);
    table_status = table_op(r, w, send_keys + send_start[me] * kb,
                            moves_values && send_count[me] ? send_values + send_start[me] * vb : NULL, send_count[me],
                            back_flags + send_start[me], result_vb ? (char *)back_values + send_start[me] * vb : NULL,
                            &ignored, own);
    cudaEventRecord(r->marks[7], own);
    cudaStreamWaitEvent(r->stream, r->marks[7], 0); /* (the own piece's flags, before anyone reads them) */
    if (x->overlap) status = wait_peers(r, ncclSuccess, "the all-to-all of the pieces");
  } else if (status != GH_ERR_PEER) {
    unchanged(r, w);
  }
  mark(r, 3);
  if (status == GH_OK) {
    uint64_t ignored;
    const gh_status others = table_op(r, w, recv_keys, recv_values, recv_n, result_flags, result_values, &ignored, r->stream);
    if (table_status == GH_OK) table_status = others;
    mark(r, 4);
    record[0] = (uint64_t)table_status;
    status = gather_records(r, record, sizeof record, records, "the agreement on the results");
  }

  /* 4. The results back: erase's always (its flags give this process's count), insert's when a
   * partition failed (which keys are in), find's when none did (a failed find writes nothing). */
  int any_failed = 0;
  for (unsigned p = 0; status == GH_OK && p < m; ++p) any_failed |= (gh_status)records[2u * p] != GH_OK;
  const int back = c->op == GH_DIST_ERASE || (c->op == GH_DIST_INSERT ? any_failed : !any_failed);
  exchange_array backward[2] = {{(const char *)result_flags, (char *)back_flags, 1},
                                {(const char *)result_values, (char *)back_values, vb}};
  mark(r, 5);
  if (status == GH_OK && back)
    status = all_to_all(r, backward, result_vb ? 2 : 1, recv_start, recv_count, send_start, send_count, 1,
                        "the all-to-all of the results");
  cudaEventRecord(r->marks[8], r->stream);
  if (status == GH_OK && back && s.warps) {
    if (c->op != GH_DIST_FIND) w->count = count_flags(r, back_flags, w->n, r->stream);
    if (w->flags_out || (result_vb && w->values_out)) {
      place_arrays a;
      memset(&a, 0, sizeof a);
      a.keys = w->keys, a.back_values = back_values, a.back_flags = back_flags;
      a.values_out = result_vb ? w->values_out : NULL, a.flags_out = w->flags_out;
      a.value_bytes = (unsigned)vb, a.word = value_word((unsigned)vb, a.values_out, back_values);
      split_kernel<SPLIT_GATHER><<<split_blocks(s), SPLIT_WARPS * 32u, split_shared(s), r->stream>>>(s, NULL, (const uint64_t *)buf(r, BUF_OFFSETS), a);
      const cudaError_t e = cudaGetLastError();
      if (e != cudaSuccess) status = comm_fail(r, GH_ERR_CUDA, "the multisplit's gather kernel", cudaGetErrorString(e));
    }
  } else if (status == GH_OK && !back && c->op == GH_DIST_INSERT && w->flags_out && w->n) {
    cudaMemsetAsync(w->flags_out, 0, w->n, r->stream); /* every key went in */
  }
  cudaEventRecord(r->marks[9], r->stream);
  const cudaError_t e = cudaStreamSynchronize(r->stream);
  if (status == GH_OK && e != cudaSuccess) status = comm_fail(r, GH_ERR_CUDA, "the results' way back", cudaGetErrorString(e));
  if (status == GH_OK) status = agreed(r, records, 2, 0, "in its table operation");
  if (status == GH_OK) {
    r->times.multisplit_ms = between(r, 0, 1) + between(r, 8, 9);
    r->times.exchange_ms = between(r, 1, 2) + between(r, 5, 8);
    r->times.agreement_ms = between(r, 1, 10);
    r->times.table_ms = between(r, 6, 7) + between(r, 3, 4);
  }
  free(plan), free(records);
  return status;
}

/* ---- Running the ranks -------------------------------------------------------------------------- */

static void *worker_main(void *arg) {
  rank *r = (rank *)arg;
  gh_dist_cuda *x = r->owner;
  cudaSetDevice(r->device);
  unsigned long long seen = 0;
  pthread_mutex_lock(&x->lock);
  for (;;) {
    while (!r->stop && r->job_serial == seen) pthread_cond_wait(&x->wake, &x->lock);
    if (r->stop) break;
    seen = r->job_serial;
    rank_job job = r->job;
    void *context = r->job_context;
    pthread_mutex_unlock(&x->lock);
    job(r, context);
    pthread_mutex_lock(&x->lock);
    r->done_serial = seen;
    pthread_cond_broadcast(&x->done);
  }
  pthread_mutex_unlock(&x->lock);
  return NULL;
}

/* Runs job on every local rank at once (contexts[i] for rank i; stride bytes apart) and waits. */
static void run_ranks(gh_dist_cuda *x, rank_job job, void *contexts, size_t stride) {
  if (x->local == 1) {
    const int caller = gh__dist_cuda_current_device();
    cudaSetDevice(x->ranks[0].device);
    job(&x->ranks[0], contexts);
    gh__dist_cuda_set_device(caller);
    return;
  }
  pthread_mutex_lock(&x->lock);
  for (unsigned i = 0; i < x->local; ++i) {
    x->ranks[i].job = job;
    x->ranks[i].job_context = (char *)contexts + i * stride;
    x->ranks[i].job_serial += 1;
  }
  pthread_cond_broadcast(&x->wake);
  for (unsigned i = 0; i < x->local; ++i)
    while (x->ranks[i].done_serial != x->ranks[i].job_serial) pthread_cond_wait(&x->done, &x->lock);
  pthread_mutex_unlock(&x->lock);
}

/* The call's status: the first local rank's that failed (every rank agrees on the status; the
 * failing partition's rank has the full message). */
static gh_status collect(gh_dist_cuda *x, char *error, size_t size) {
  gh_status status = GH_OK;
  for (unsigned i = 0; i < x->local && status == GH_OK; ++i)
    if (x->ranks[i].status != GH_OK) status = x->ranks[i].status;
  if (status == GH_OK) return GH_OK;
  /* Prefer the message of a rank that failed itself over one that reports another's failure. */
  for (unsigned i = 0; i < x->local; ++i)
    if (x->ranks[i].status != GH_OK && !x->ranks[i].reported_other) return say(error, size, status, "%s", x->ranks[i].message);
  for (unsigned i = 0; i < x->local; ++i)
    if (x->ranks[i].status != GH_OK) return say(error, size, status, "%s", x->ranks[i].message);
  return status;
}

static void slice_job(rank *r, void *context) {
  slice_work *w = (slice_work *)context;
  if (w->refused == GH_OK) r->message[0] = '\0'; /* (a refusal's message is kept) */
  r->reported_other = 0;
  r->status = slice_op(r, w);
}

/* A slice's arrays must be in its GPU's memory. */
static gh_status check_resident(rank *r, const void *p, const char *name) {
  if (p == NULL) return GH_OK;
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    a.type = cudaMemoryTypeUnregistered;
  }
  if (a.type == cudaMemoryTypeDevice && a.device == r->device) return GH_OK;
  if (a.type == cudaMemoryTypeManaged) return GH_OK;
  return rank_fail(r, GH_ERR_INVALID_ARGUMENT,
                   "partition %u: %s is not in the memory of its GPU (device %d): the slice calls of the CUDA "
                   "backend take device arrays (host arrays: the host-sided calls)", r->partition, name, r->device);
}

extern "C" gh_status gh__dist_cuda_slices(gh_dist_cuda *x, gh_dist_call *c, char *error, size_t size) {
  slice_work *work = (slice_work *)calloc(x->local, sizeof *work);
  if (work == NULL) return say(error, size, GH_ERR_OUT_OF_MEMORY, "out of host memory");
  for (unsigned i = 0; i < x->local; ++i) {
    rank *r = &x->ranks[i];
    slice_work *w = &work[i];
    w->call = c, w->n = c->n[i], w->keys = c->keys[i];
    w->values = c->values ? c->values[i] : NULL;
    w->flags_out = c->flags_out ? c->flags_out[i] : NULL;
    w->values_out = c->values_out ? c->values_out[i] : NULL;
    if (w->n) {
      w->refused = check_resident(r, w->keys, "keys");
      if (w->refused == GH_OK) w->refused = check_resident(r, w->values, "values");
      if (w->refused == GH_OK) w->refused = check_resident(r, w->flags_out, "a flags output");
      if (w->refused == GH_OK) w->refused = check_resident(r, w->values_out, "values_out");
    }
  }
  run_ranks(x, slice_job, work, sizeof *work);
  c->count = 0;
  for (unsigned i = 0; i < x->local; ++i) c->count += work[i].count;
  free(work);
  return collect(x, error, size);
}

/* ---- Host-sided calls ------------------------------------------------------------------------------
 * Batch b of this process's array is keys [b * L * B, (b + 1) * L * B) (L GPUs here, B keys per GPU
 * and batch), cut into L consecutive slices: slice g to GPU g. Per GPU a feeder thread fills the
 * two staging slots (through pinned buffers when the array is pageable) and copies them to the GPU
 * on the copy stream, while the rank runs the slice call of the previous batch. */

typedef struct host_work {
  const gh_dist_call *call;
  uint64_t batch_keys; /* B */
  uint64_t batches;    /* this process's */
  int pinned_in;       /* the input arrays are pinned (copied to the GPU directly) */
  sem_t free_slots, ready_slots;
  int stop;
  gh_status feeder_status;
  char feeder_message[GH_DIST_MESSAGE];
  uint64_t count;
} host_work;

/* This rank's slice of batch b: [*begin, *begin + *n). */
static void batch_slice(const rank *r, const host_work *h, uint64_t b, uint64_t *begin, uint64_t *n) {
  const uint64_t total = h->call->n[0], L = r->owner->local, local_index = (uint64_t)(r - r->owner->ranks);
  const uint64_t lo = b * L * h->batch_keys;
  const uint64_t len = lo >= total ? 0 : (total - lo < L * h->batch_keys ? total - lo : L * h->batch_keys);
  *begin = lo + len * local_index / L;
  *n = lo + len * (local_index + 1u) / L - *begin;
}

/* A pageable batch into pinned staging on several host threads (one thread copies far slower
 * than the host-to-device link). */
typedef struct copy_job {
  char *to;
  const char *from;
} copy_job;

static gh_counters copy_bytes(void *context, uint64_t begin, uint64_t end) {
  const copy_job *job = (const copy_job *)context;
  memcpy(job->to + begin, job->from + begin, end - begin);
  gh_counters none;
  memset(&none, 0, sizeof none);
  return none;
}

static void parallel_copy(void *to, const void *from, size_t bytes, unsigned threads) {
  copy_job job = {(char *)to, (const char *)from};
  gh__parallel_for(bytes, threads, copy_bytes, &job);
}

typedef struct feeder_args {
  rank *r;
  host_work *h;
} feeder_args;

static void *feeder_main(void *arg) {
  rank *r = ((feeder_args *)arg)->r;
  host_work *h = ((feeder_args *)arg)->h;
  gh_dist_cuda *x = r->owner;
  const gh_dist_call *c = h->call;
  const size_t kb = x->key_bytes, vb = c->op == GH_DIST_INSERT ? x->value_bytes : 0;
  cudaSetDevice(r->device);
  for (uint64_t b = 0; b < h->batches; ++b) {
    sem_wait(&h->free_slots);
    if (h->stop) break;
    uint64_t begin, n;
    batch_slice(r, h, b, &begin, &n);
    const int slot = (int)(b & 1u);
    const char *sources[2] = {(const char *)c->keys[0] + begin * kb, vb ? (const char *)c->values[0] + begin * vb : NULL};
    const size_t bytes[2] = {n * kb, n * vb};
    void *targets[2] = {buf(r, BUF_STAGE_KEYS + slot), buf(r, BUF_STAGE_VALUES + slot)};
    cudaError_t e = cudaSuccess;
    for (int k = 0; k < 2 && e == cudaSuccess; ++k) {
      if (bytes[k] == 0) continue;
      const void *from = sources[k];
      if (!h->pinned_in) {
        const unsigned threads = gh__cpu_count() / x->local;
        parallel_copy(r->pinned[2 * k + slot], sources[k], bytes[k], threads ? threads : 1u);
        from = r->pinned[2 * k + slot];
      }
      e = cudaMemcpyAsync(targets[k], from, bytes[k], cudaMemcpyHostToDevice, r->copy_stream);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(r->copy_stream);
    if (e != cudaSuccess && h->feeder_status == GH_OK) {
      h->feeder_status = GH_ERR_CUDA;
      snprintf(h->feeder_message, sizeof h->feeder_message, "partition %u: copying a batch to the GPU: %s",
               r->partition, cudaGetErrorString(e));
    }
    sem_post(&h->ready_slots);
  }
  return NULL;
}

static int is_pinned(const void *p) {
  if (p == NULL) return 1;
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return a.type == cudaMemoryTypeHost;
}

/* The staging of a host-sided call: device slots, and pinned ones for a pageable array. */
static gh_status host_staging(rank *r, host_work *h) {
  gh_dist_cuda *x = r->owner;
  const gh_dist_call *c = h->call;
  const size_t kb = x->key_bytes, vb_in = c->op == GH_DIST_INSERT ? x->value_bytes : 0;
  const size_t vb_out = c->op == GH_DIST_FIND ? x->value_bytes : 0, B = h->batch_keys;
  int ok = ensure(r, BUF_STAGE_KEYS, B * kb) && ensure(r, BUF_STAGE_KEYS_2, B * kb) &&
           (!vb_in || (ensure(r, BUF_STAGE_VALUES, B * vb_in) && ensure(r, BUF_STAGE_VALUES_2, B * vb_in))) &&
           (!vb_out || (ensure(r, BUF_STAGE_OUT_VALUES, B * vb_out) && ensure(r, BUF_STAGE_OUT_VALUES_2, B * vb_out))) &&
           ensure(r, BUF_STAGE_OUT_FLAGS, B) && ensure(r, BUF_STAGE_OUT_FLAGS_2, B);
  const size_t pinned_bytes[4] = {B * kb, B * kb, B * vb_in, B * vb_in};
  for (int k = 0; ok && !h->pinned_in && k < 4; ++k) {
    if (r->pinned_bytes[k] >= pinned_bytes[k]) continue;
    if (r->pinned[k]) cudaFreeHost(r->pinned[k]);
    r->pinned[k] = NULL, r->pinned_bytes[k] = 0;
    if (pinned_bytes[k] == 0) continue;
    ok = cudaHostAlloc(&r->pinned[k], pinned_bytes[k], cudaHostAllocDefault) == cudaSuccess;
    if (ok) r->pinned_bytes[k] = pinned_bytes[k];
    else cudaGetLastError();
  }
  return ok ? GH_OK
            : rank_fail(r, GH_ERR_OUT_OF_MEMORY, "partition %u: out of memory for the staging of %llu keys per batch",
                        r->partition, (unsigned long long)B);
}

/* Host-sided insert / erase flags of this rank's batches [from, to) that did not run: nothing
 * changed for them (insert: failed, counted; erase: not erased). */
static void flag_batches_not_run(rank *r, host_work *h, uint64_t from, uint64_t to) {
  const gh_dist_call *c = h->call;
  for (uint64_t b = from; c->op != GH_DIST_FIND && b < to; ++b) {
    uint64_t begin, n;
    batch_slice(r, h, b, &begin, &n);
    if (c->flags_out && c->flags_out[0]) memset(c->flags_out[0] + begin, c->op == GH_DIST_INSERT ? 1 : 0, n);
    if (c->op == GH_DIST_INSERT) h->count += n;
  }
}

static void host_job(rank *r, void *context) {
  host_work *h = (host_work *)context;
  gh_dist_cuda *x = r->owner;
  const gh_dist_call *c = h->call;
  const size_t vb_in = c->op == GH_DIST_INSERT ? x->value_bytes : 0;
  const size_t vb_out = c->op == GH_DIST_FIND ? x->value_bytes : 0;
  r->message[0] = '\0';
  r->reported_other = 0;
  h->count = 0;
  /* The staging and the feeder first, so that a rank without them still takes part in the
   * agreement (every rank runs as many batches as the process with the most; the others' are
   * empty). The agreement's records go to r->matrix (m (m + 1) words, kept from create). */
  gh_status status = host_staging(r, h);
  pthread_t feeder;
  feeder_args args = {r, h};
  int feeding = 0;
  if (status == GH_OK && h->batches) {
    feeding = pthread_create(&feeder, NULL, feeder_main, &args) == 0;
    if (!feeding) status = rank_fail(r, GH_ERR_OUT_OF_MEMORY, "partition %u: no thread for the batches' copies", r->partition);
  }
  uint64_t record[2] = {h->batches, (uint64_t)status}, batches = h->batches;
  if (x->m > 1) {
    const gh_status agreement = gather_records(r, record, sizeof record, r->matrix, "the agreement on the batches");
    status = agreement != GH_OK ? agreement : agreed(r, r->matrix, 2, 1, "before its first batch; nothing was changed");
    for (unsigned p = 0; status == GH_OK && p < x->m; ++p) batches = r->matrix[2u * p] > batches ? r->matrix[2u * p] : batches;
  }
  gh_status first = status;
  uint64_t next = 0; /* this rank's first batch whose results have not gone to the host */
  for (uint64_t b = 0; status == GH_OK && b < batches; ++b) {
    uint64_t begin = 0, n = 0;
    if (b < h->batches) {
      batch_slice(r, h, b, &begin, &n);
      sem_wait(&h->ready_slots);
    }
    const int slot = (int)(b & 1u);
    slice_work w;
    memset(&w, 0, sizeof w);
    w.call = c, w.n = n, w.keys = buf(r, BUF_STAGE_KEYS + slot);
    w.values = vb_in ? buf(r, BUF_STAGE_VALUES + slot) : NULL;
    /* The output slot's previous results (batch b - 2) must have left for the host. */
    if (b >= 2) cudaEventSynchronize(r->drained[slot]);
    w.flags_out = c->flags_out && c->flags_out[0] ? (uint8_t *)buf(r, BUF_STAGE_OUT_FLAGS + slot) : NULL;
    w.values_out = vb_out && c->values_out && c->values_out[0] ? buf(r, BUF_STAGE_OUT_VALUES + slot) : NULL;
    w.refused = h->feeder_status; /* (a batch that did not reach the GPU stops every rank) */
    if (w.refused != GH_OK) snprintf(r->message, sizeof r->message, "%s", h->feeder_message);
    const gh_status got = slice_op(r, &w);
    if (b < h->batches) sem_post(&h->free_slots);
    if (first == GH_OK) first = got;
    /* The batch's device flags and count are valid unless a peer failed, this rank refused the
     * batch, or it is a failed find (which writes nothing). Valid ones go to the host while the
     * next batch runs (slice_op has waited for them); otherwise nothing of this rank's batch
     * changed (or, after GH_ERR_PEER, nothing can be confirmed): insert's flags 1, erase's 0. */
    const int ran = got != GH_ERR_PEER && w.refused == GH_OK && !(c->op == GH_DIST_FIND && got != GH_OK);
    if (ran) h->count += w.count;
    if (n && !ran) flag_batches_not_run(r, h, b, b + 1);
    if (n && ran) {
      cudaError_t e = cudaSuccess;
      if (w.flags_out) e = cudaMemcpyAsync(c->flags_out[0] + begin, w.flags_out, n, cudaMemcpyDeviceToHost, r->drain_stream);
      if (e == cudaSuccess && w.values_out)
        e = cudaMemcpyAsync((char *)c->values_out[0] + begin * vb_out, w.values_out, n * vb_out, cudaMemcpyDeviceToHost,
                            r->drain_stream);
      if (e == cudaSuccess) e = cudaEventRecord(r->drained[slot], r->drain_stream);
      if (e != cudaSuccess && first == GH_OK) first = cuda_fail(r, e, "copying a batch's results to the host");
    }
    if (b < h->batches) next = b + 1;
    /* Every rank has the same status (agreed): insert and erase go on after a partition's failure
     * (their flags say which keys are in); a find stops, and so does every call once a peer, a
     * GPU or a batch's copy failed. */
    if (got != GH_OK && (c->op == GH_DIST_FIND || got == GH_ERR_PEER || got == GH_ERR_CUDA || got == GH_ERR_INVALID_ARGUMENT))
      status = got;
  }
  const cudaError_t drained = cudaStreamSynchronize(r->drain_stream);
  if (drained != cudaSuccess && first == GH_OK) first = cuda_fail(r, drained, "copying the results to the host");
  if (first != GH_OK) flag_batches_not_run(r, h, next, h->batches); /* (those a stop left out) */
  if (feeding) {
    h->stop = 1;
    sem_post(&h->free_slots);
    sem_post(&h->free_slots);
    pthread_join(feeder, NULL);
  }
  r->status = first;
}

extern "C" gh_status gh__dist_cuda_host(gh_dist_cuda *x, gh_dist_call *c, char *error, size_t size) {
  const size_t kb = x->key_bytes, vb_in = c->op == GH_DIST_INSERT ? x->value_bytes : 0;
  uint64_t B = x->staging_bytes / (kb + vb_in);
  if (B == 0) B = 1;
  host_work *work = (host_work *)calloc(x->local, sizeof *work);
  if (work == NULL) return say(error, size, GH_ERR_OUT_OF_MEMORY, "out of host memory");
  const int pinned = is_pinned(c->keys[0]) && (vb_in == 0 || is_pinned(c->values[0]));
  for (unsigned i = 0; i < x->local; ++i) {
    host_work *h = &work[i];
    h->call = c, h->batch_keys = B, h->pinned_in = pinned;
    h->batches = (c->n[0] + x->local * B - 1u) / (x->local * B);
    sem_init(&h->free_slots, 0, 2);
    sem_init(&h->ready_slots, 0, 0);
  }
  run_ranks(x, host_job, work, sizeof *work);
  c->count = 0;
  for (unsigned i = 0; i < x->local; ++i) {
    c->count += work[i].count;
    sem_destroy(&work[i].free_slots);
    sem_destroy(&work[i].ready_slots);
  }
  free(work);
  return collect(x, error, size);
}

/* ---- Records, timings, the exchange's ceiling --------------------------------------------------- */

extern "C" gh_status gh__dist_cuda_allgather(gh_dist_cuda *x, const void *mine, size_t bytes, void *all, char *error,
                                             size_t size) {
  if (!x->multi_process) {
    memcpy(all, mine, (size_t)x->m * bytes);
    return GH_OK;
  }
  if (bytes > GH_DIST_RECORD_BYTES) return say(error, size, GH_ERR_INTERNAL, "a record of %zu bytes", bytes);
  rank *r = &x->ranks[0];
  r->message[0] = '\0';
  const int caller = gh__dist_cuda_current_device();
  cudaSetDevice(r->device);
  const gh_status status = gather_records(r, mine, bytes, all, "an all-gather of the partitions' records");
  gh__dist_cuda_set_device(caller);
  return status == GH_OK ? GH_OK : say(error, size, status, "%s", r->message);
}

extern "C" int gh__dist_cuda_connected(const gh_dist_cuda *x) {
  return !__atomic_load_n(&x->aborting, __ATOMIC_ACQUIRE);
}

/* The calling thread's device when it has a current context, else -1: setting device 0 back on a
 * thread that never chose one would make a context on GPU 0 (for every rank of a one-process-
 * per-GPU job). cuCtxGetCurrent through the runtime's driver entry point (no link to libcuda). */
extern "C" int gh__dist_cuda_current_device(void) {
  typedef int (*ctx_get_current_fn)(void **);
  static ctx_get_current_fn ctx_get_current;
  static int looked_up;
  if (!__atomic_load_n(&looked_up, __ATOMIC_ACQUIRE)) {
    void *fn = NULL;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, NULL) != cudaSuccess) {
      cudaGetLastError();
      fn = NULL;
    }
    ctx_get_current = (ctx_get_current_fn)fn;
    __atomic_store_n(&looked_up, 1, __ATOMIC_RELEASE);
  }
  void *context = NULL;
  if (ctx_get_current == NULL || ctx_get_current(&context) != 0 || context == NULL) return -1;
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return device;
}

/* Sets device back (nothing for -1: the thread had no context). */
extern "C" void gh__dist_cuda_set_device(int device) {
  if (device >= 0 && cudaSetDevice(device) != cudaSuccess) cudaGetLastError();
}

extern "C" void gh__dist_cuda_times(const gh_dist_cuda *x, gh_dist_times *t) {
  memset(t, 0, sizeof *t);
  for (unsigned i = 0; i < x->local; ++i) {
    const gh_dist_times *one = &x->ranks[i].times;
    if (one->multisplit_ms > t->multisplit_ms) t->multisplit_ms = one->multisplit_ms;
    if (one->exchange_ms > t->exchange_ms) t->exchange_ms = one->exchange_ms;
    if (one->table_ms > t->table_ms) t->table_ms = one->table_ms;
    if (one->agreement_ms > t->agreement_ms) t->agreement_ms = one->agreement_ms;
    t->exchanged_bytes += one->exchanged_bytes;
  }
}

typedef struct exchange_work {
  uint64_t bytes;
  unsigned repeats;
  double median_ms;
} exchange_work;

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void exchange_job(rank *r, void *context) {
  exchange_work *w = (exchange_work *)context;
  const unsigned m = r->owner->m;
  const uint64_t piece = w->bytes / m;
  r->message[0] = '\0';
  r->reported_other = 0;
  uint64_t *starts = (uint64_t *)calloc(2u * m, sizeof(uint64_t));
  double *ms = (double *)calloc(w->repeats, sizeof(double));
  char *send = (char *)ensure(r, BUF_SEND_KEYS, piece * m), *recv = (char *)ensure(r, BUF_RECV_KEYS, piece * m);
  uint64_t record[1] = {GH_OK}, *records = (uint64_t *)calloc(m, sizeof(uint64_t));
  if (!starts || !ms || !send || !recv || !records)
    record[0] = rank_fail(r, GH_ERR_OUT_OF_MEMORY, "partition %u: out of memory for the exchange's buffers", r->partition);
  gh_status status = records ? (m > 1 ? gather_records(r, record, sizeof record, records, "the exchange's agreement")
                                      : (gh_status)record[0])
                             : GH_ERR_OUT_OF_MEMORY;
  if (status == GH_OK && m > 1) status = agreed(r, records, 1, 0, "before the exchange");
  for (unsigned q = 0; status == GH_OK && q < m; ++q) starts[q] = q * piece, starts[m + q] = piece;
  const exchange_array bytes = {send, recv, 1};
  for (unsigned k = 0; status == GH_OK && k < w->repeats; ++k) {
    mark(r, 0);
    status = all_to_all(r, &bytes, 1, starts, starts + m, starts, starts + m, 1, "the measured all-to-all");
    mark(r, 1);
    cudaStreamSynchronize(r->stream);
    ms[k] = between(r, 0, 1);
  }
  if (status == GH_OK) {
    qsort(ms, w->repeats, sizeof *ms, by_value);
    w->median_ms = ms[w->repeats / 2u];
  }
  free(starts), free(ms), free(records);
  r->status = status;
}

extern "C" gh_status gh__dist_cuda_measure_exchange(gh_dist_cuda *x, uint64_t bytes_per_gpu, unsigned repeats,
                                                    double *gb_per_s, char *error, size_t size) {
  exchange_work *work = (exchange_work *)calloc(x->local, sizeof *work);
  if (work == NULL) return say(error, size, GH_ERR_OUT_OF_MEMORY, "out of host memory");
  for (unsigned i = 0; i < x->local; ++i) work[i].bytes = bytes_per_gpu, work[i].repeats = repeats;
  run_ranks(x, exchange_job, work, sizeof *work);
  gh_status status = collect(x, error, size);
  double slowest = 0;
  for (unsigned i = 0; i < x->local; ++i) slowest = work[i].median_ms > slowest ? work[i].median_ms : slowest;
  free(work);
  if (status == GH_OK && x->multi_process) {
    double *all = (double *)calloc(x->m, sizeof(double));
    status = all ? gh__dist_cuda_allgather(x, &slowest, sizeof slowest, all, error, size)
                 : say(error, size, GH_ERR_OUT_OF_MEMORY, "out of host memory");
    for (unsigned p = 0; status == GH_OK && p < x->m; ++p) slowest = all[p] > slowest ? all[p] : slowest;
    free(all);
  }
  /* (Each GPU sent its m - 1 pieces to the others: its own does not move.) */
  if (status == GH_OK) *gb_per_s = slowest > 0 ? (double)(bytes_per_gpu / x->m * (x->m - 1u)) / (slowest * 1e6) : 0.0;
  return status;
}

/* ---- Create, destroy --------------------------------------------------------------------------- */

static void free_rank(rank *r) {
  cudaSetDevice(r->device);
  for (int b = 0; b < BUF_COUNT; ++b)
    if (r->buffers[b].ptr) gh__free(r->table, r->buffers[b].ptr, r->buffers[b].bytes, GH_MEMORY_DEVICE);
  for (int k = 0; k < 4; ++k)
    if (r->pinned[k]) cudaFreeHost(r->pinned[k]);
  for (int k = 0; k < GH_DIST_MARKS; ++k)
    if (r->marks[k]) cudaEventDestroy(r->marks[k]);
  if (r->stream) cudaStreamDestroy(r->stream);
  for (int k = 0; k < 2; ++k)
    if (r->drained[k]) cudaEventDestroy(r->drained[k]);
  if (r->own_stream) cudaStreamDestroy(r->own_stream);
  if (r->copy_stream) cudaStreamDestroy(r->copy_stream);
  if (r->drain_stream) cudaStreamDestroy(r->drain_stream);
  free(r->matrix);
}

extern "C" void gh__dist_cuda_destroy(gh_dist_cuda *x) {
  if (x == NULL) return;
  pthread_mutex_lock(&x->lock);
  for (unsigned i = 0; i < x->local; ++i) x->ranks[i].stop = 1;
  pthread_cond_broadcast(&x->wake);
  pthread_mutex_unlock(&x->lock);
  for (unsigned i = 0; i < x->local; ++i)
    if (x->ranks[i].has_thread) pthread_join(x->ranks[i].thread, NULL);
  for (unsigned i = 0; i < x->local; ++i) {
    rank *r = &x->ranks[i];
    /* A communicator whose clique saw a failure is aborted (destroying it could wait for the
     * failed peer); one aborted already is not touched again. */
    if (r->comm && !r->broken) {
      cudaSetDevice(r->device);
      if (x->aborting) nccl.comm_abort(r->comm);
      else nccl.comm_destroy(r->comm);
    }
    free_rank(r);
  }
  pthread_mutex_destroy(&x->lock);
  pthread_cond_destroy(&x->wake);
  pthread_cond_destroy(&x->done);
  free(x->ranks);
  free(x);
}

static gh_status setup_rank(gh_dist_cuda *x, rank *r, char *error, size_t size) {
  cudaError_t e = cudaSetDevice(r->device);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&r->own_stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&r->copy_stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&r->drain_stream, cudaStreamNonBlocking);
  for (int k = 0; e == cudaSuccess && k < 2; ++k) e = cudaEventCreateWithFlags(&r->drained[k], cudaEventDisableTiming);
  for (int k = 0; e == cudaSuccess && k < GH_DIST_MARKS; ++k) e = cudaEventCreate(&r->marks[k]);
  if (e != cudaSuccess)
    return say(error, size, e == cudaErrorMemoryAllocation ? GH_ERR_OUT_OF_MEMORY : GH_ERR_CUDA,
               "gh_dist_create: partition %u on device %d: %s", r->partition, r->device, cudaGetErrorString(e));
  r->matrix = (uint64_t *)calloc((size_t)x->m * (x->m + 1u), sizeof(uint64_t));
  if (r->matrix == NULL || !ensure(r, BUF_ROW, (x->m + 1u) * sizeof(uint64_t)) ||
      !ensure(r, BUF_MATRIX, (size_t)x->m * (x->m + 1u) * sizeof(uint64_t)) ||
      !ensure(r, BUF_RECORDS, (size_t)x->m * GH_DIST_RECORD_BYTES))
    return say(error, size, GH_ERR_OUT_OF_MEMORY, "gh_dist_create: partition %u: out of memory for its exchange records",
               r->partition);
  return GH_OK;
}

/* Waits for a non-blocking communicator's initialisation, with the deadline. */
static gh_status wait_init(gh_dist_cuda *x, rank *r, ncclResult_t started, char *error, size_t size) {
  const double deadline = now_seconds() + x->timeout_seconds;
  ncclResult_t state = started;
  while (state == ncclInProgress || (state == ncclSuccess && r->comm)) {
    if (nccl.comm_get_async_error(r->comm, &state) != ncclSuccess) break;
    if (state != ncclInProgress) break;
    if (now_seconds() > deadline) {
      nccl.comm_abort(r->comm);
      r->comm = NULL;
      return say(error, size, GH_ERR_PEER, "gh_dist_create: rank %u: the other ranks did not join within %.3g s "
                 "(timeout_seconds)", r->partition, x->timeout_seconds);
    }
    nap();
  }
  if (state == ncclSuccess) return GH_OK;
  if (r->comm) nccl.comm_abort(r->comm);
  r->comm = NULL;
  return say(error, size, GH_ERR_PEER, "gh_dist_create: rank %u: NCCL: %s", r->partition, nccl.get_error_string(state));
}

extern "C" gh_status gh__dist_cuda_create(const gh_dist_config *c, gh_table *const *tables, const int *devices,
                                          unsigned local, gh_dist_cuda **out, char *error, size_t size) {
  *out = NULL;
  gh_status status = nccl_ready(error, size);
  if (status != GH_OK) return status;
  gh_dist_cuda *x = (gh_dist_cuda *)calloc(1, sizeof *x);
  if (x) x->ranks = (rank *)calloc(local, sizeof *x->ranks);
  if (x == NULL || x->ranks == NULL) {
    free(x);
    return say(error, size, GH_ERR_OUT_OF_MEMORY, "gh_dist_create: out of host memory");
  }
  x->m = c->partitions, x->local = local, x->multi_process = c->id != NULL;
  x->key_bytes = c->table.key_bits / 8u;
  x->value_bytes = c->table.value_bits / 8u;
  x->seed = c->partition_seed, x->staging_bytes = c->staging_bytes;
  x->timeout_seconds = c->timeout_seconds;
  /* (-1: on from 3 partitions, where it measured faster; on 2 it measured slower) */
  x->overlap = c->exchange_overlap < 0 ? c->partitions > 2 : c->exchange_overlap != 0;
  pthread_mutex_init(&x->lock, NULL);
  pthread_cond_init(&x->wake, NULL);
  pthread_cond_init(&x->done, NULL);
  for (unsigned i = 0; i < local; ++i) {
    rank *r = &x->ranks[i];
    r->owner = x, r->table = tables[i], r->device = devices[i];
    r->partition = x->multi_process ? c->rank : i;
    gh_design_traits traits;
    r->fills_up = gh_design_info(c->table.design, &traits) == GH_OK && !(traits.capabilities & GH_CAP_GROWS);
  }
  for (unsigned i = 0; status == GH_OK && i < local; ++i) status = setup_rank(x, &x->ranks[i], error, size);
  if (status == GH_OK && !x->multi_process) {
    ncclComm_t *comms = (ncclComm_t *)calloc(local, sizeof *comms);
    const ncclResult_t got = comms ? nccl.comm_init_all(comms, (int)local, devices) : ncclSystemError;
    if (got != ncclSuccess)
      status = say(error, size, GH_ERR_PEER, "gh_dist_create: ncclCommInitAll over %u GPUs: %s", local,
                   nccl.get_error_string(got));
    for (unsigned i = 0; got == ncclSuccess && i < local; ++i) x->ranks[i].comm = comms[i];
    free(comms);
  } else if (status == GH_OK) {
    rank *r = &x->ranks[0];
    ncclUniqueId unique;
    memset(&unique, 0, sizeof unique);
    memcpy(unique.internal, c->id->bytes, sizeof unique.internal < GH_DIST_ID_BYTES ? sizeof unique.internal : GH_DIST_ID_BYTES);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0; /* so that a rank that never joins cannot hang this one */
    cudaSetDevice(r->device);
    const ncclResult_t started = nccl.comm_init_rank_config(&r->comm, (int)x->m, unique, (int)c->rank, &config);
    status = wait_init(x, r, started, error, size);
  }
  for (unsigned i = 0; status == GH_OK && local > 1 && i < local; ++i) {
    if (pthread_create(&x->ranks[i].thread, NULL, worker_main, &x->ranks[i]) != 0)
      status = say(error, size, GH_ERR_OUT_OF_MEMORY, "gh_dist_create: no worker thread for partition %u", i);
    else
      x->ranks[i].has_thread = 1;
  }
  if (status != GH_OK) {
    gh__dist_cuda_destroy(x);
    return status;
  }
  *out = x;
  return GH_OK;
}
