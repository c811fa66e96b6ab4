/*
 * gpuhash_dist.h - one table spread over partitions (GPUs): WarpDrive's distributed multisplit
 * (Juenger et al., "WarpDrive: Massively Parallel Hashing on Multi-GPU Nodes", section IV-B).
 * Plain C, like gpuhash.h, which it includes.
 *
 * A distributed table is m partitions, each a gpuhash table of one config (any map design). Key
 * k lives in partition p(k): the low 32 bits of a 64-bit mix of k and the partition seed, modulo
 * m. The tables place keys by the high bits of their own hash (another mix, another seed), so a
 * partition's keys spread over all of its table.
 *
 * Slices. An operation takes its keys as slices, one per partition the calling process drives:
 * keys[i] holds n[i] keys (n[i] may be 0). Each slice is split by p(k) (the multisplit), the
 * m x m piece sizes are exchanged, every piece goes to its partition (the all-to-all), each
 * partition runs the operation on what it received, and per-key results travel back the same way
 * into the caller's slices, in the caller's order (find's values and found flags, insert's
 * failed flags, erase's erased flags). The CUDA backend runs the operation on a GPU's own piece
 * (in place) and on the pieces it received as two batches: a key given in several slices is
 * merged as gh_insert merges a batch's copies (GH_KEEP_FIRST, GH_OVERWRITE: one of them wins).
 *
 * Devices. The CUDA backend's calls (create and destroy included) leave the calling thread's
 * current CUDA device as they found it (and make no context on a thread that had none).
 *
 * Backends. The host backend (table.backend = GH_BACKEND_HOST): the m partitions are host tables
 * in this process and the all-to-all is memcpy; it runs the whole layer's bookkeeping (what CI
 * tests). The CUDA backend (GH_BACKEND_CUDA; GH_BACKEND_AUTO when a device is usable): partition
 * p is a CUDA table on its own GPU, and the pieces move with NCCL, which the library loads when
 * the first CUDA distributed table is created (libnccl.so.2 on the loader's path, or the file
 * named by the environment variable GH_NCCL_LIBRARY). Two ways to run it:
 *   - one process drives every GPU of a node (id NULL): partition p on devices[p], the
 *     communicators made by ncclCommInitAll; slices are arrays of m entries, slice p in the
 *     memory of partition p's GPU; the GPUs' work runs on one host thread per GPU.
 *   - one process per GPU (id set; the way that crosses nodes): every rank creates the table
 *     with the same id, partitions and table config, and its own rank; slices are arrays of one
 *     entry, in this rank's GPU memory. Every call on the table is then collective: every rank
 *     makes it, in the same order (a rank that does not gets a GH_ERR_PEER after timeout_seconds).
 *
 * Failures. Bad arguments are refused before anything is split: nothing changes, no output is
 * written. Past that, each partition's operation is all-or-nothing, as in gpuhash.h; partitions
 * are separate tables, so a call that fails in one partition (out of memory, a full table) may
 * have changed others. Every partition runs all the same, and the per-key outputs say what
 * happened: gh_dist_insert's failed_out marks exactly the keys that are not in the table and
 * *failed counts them; gh_dist_erase's erased_out marks exactly the keys it removed and *erased
 * counts them; the status is the first failure's, the message names its partition. No
 * acknowledged key is lost. Memory: the host backend's own buffers come from table.allocator
 * too, and so do the CUDA backend's device buffers (the pieces, kept between calls and counted in
 * the partition table's memory); the CUDA backend's pinned staging (host-sided calls) comes from
 * cudaHostAlloc and its per-call bookkeeping (a few words per partition) from malloc.
 *
 * Peers. With the CUDA backend, an NCCL error, a wait longer than timeout_seconds (a rank that
 * left, a GPU that hangs) or a rank that failed before the exchange fails the call on every rank
 * with the same status: GH_ERR_OUT_OF_MEMORY (and the rest, as above) when a rank could not
 * allocate its part before anything moved (nothing changed anywhere), GH_ERR_PEER when the
 * communicator failed. After GH_ERR_PEER the communicator is aborted and every later operation
 * that needs it returns GH_ERR_PEER; the local tables stay valid: gh_dist_partition_size,
 * gh_dist_partition_stats, gh_dist_validate, gh_dist_export of this process's partitions still
 * work (for its partitions only), and gh_dist_destroy frees everything. A call that returns
 * GH_ERR_PEER may leave its per-key outputs unwritten, and keys it could not confirm may or may
 * not be in other partitions. One process per GPU: arguments a rank refuses (NULL arrays,
 * host arrays in a slice call, a NULL output) are refused on that rank before anything else,
 * so the other ranks' call fails with GH_ERR_PEER after timeout_seconds: check arguments alike
 * on every rank. A host-sided find that fails in a later batch has written the earlier batches'
 * results.
 */
#ifndef GPUHASH_DIST_H
#define GPUHASH_DIST_H

#include "gpuhash.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most partitions a distributed table has. */
#define GH_DIST_MAX_PARTITIONS 1024u

typedef struct gh_dist gh_dist;

/** Distributed table configuration. Start from gh_dist_config_default(design). */
typedef struct gh_dist_config {
  size_t struct_size; /* sizeof(gh_dist_config) as the caller compiled it */
  unsigned version;   /* GH_VERSION_NUMBER the caller compiled with */
  /* Every partition's table: design, widths, variant (map designs: GH_VARIANT_MAP), capacity (a
   * partition's), seed, allocator, backend (GH_BACKEND_HOST, GH_BACKEND_CUDA, or GH_BACKEND_AUTO:
   * the CUDA backend when a device is usable; see Backends above). */
  gh_config table;
  unsigned partitions;     /* m, 1 .. GH_DIST_MAX_PARTITIONS; default 1 */
  uint64_t partition_seed; /* p(k)'s seed; default a constant unlike gh_config's seed */
  /* The CUDA backend (the host backend ignores these). */
  const int *devices;       /* one process: partition p's device ordinal is devices[p] (partitions
                             * entries, each different; NULL: 0 .. m - 1). One process per GPU:
                             * devices[0] is this rank's (NULL: table.device) */
  const struct gh_dist_id *id; /* NULL: one process drives all m partitions. Else one process per
                                * GPU: this process is rank `rank` of `partitions` ranks */
  unsigned rank;            /* this process's partition (0 .. partitions - 1) when id is set */
  double timeout_seconds;   /* the longest wait for a peer (NCCL); default 300 */
  uint64_t staging_bytes;   /* the host-sided calls' batch, per GPU and buffer (two each, pinned);
                             * default 256 MiB; at least one key's pair */
  int exchange_overlap;     /* 1: a GPU's table works on its own piece (which stays in place)
                             * while the other pieces travel; 0: once they have arrived; -1
                             * (default): 1 from 3 partitions on. Measured on H100s over NVLink:
                             * overlapping is 3 % slower on 2 GPUs (the table and NCCL share the
                             * memory), 2-6 % faster on 4 (more of the keys travel) */
} gh_dist_config;

/* ---- One process per GPU: the communicator's id --------------------------------------------
 * Rank 0 makes an id, the caller hands it to every other rank by its own means (MPI, a file, a
 * socket), and every rank passes it to gh_dist_create. The text form is 2 * GH_DIST_ID_BYTES hex
 * digits and a NUL. */
#define GH_DIST_ID_BYTES 128u
#define GH_DIST_ID_TEXT_SIZE (2u * GH_DIST_ID_BYTES + 1u)
typedef struct gh_dist_id {
  unsigned char bytes[GH_DIST_ID_BYTES];
} gh_dist_id;
/** A fresh id (ncclGetUniqueId). GH_ERR_UNSUPPORTED when NCCL cannot be loaded, GH_ERR_NO_DEVICE
 * without a usable CUDA device (or a library built without CUDA); gh_dist_last_create_error()
 * says why. */
gh_status gh_dist_id_new(gh_dist_id *id);
/** The id as text (text_size at least GH_DIST_ID_TEXT_SIZE), and back: GH_ERR_INVALID_ARGUMENT
 * for text that is not exactly 2 * GH_DIST_ID_BYTES hex digits (nothing written then). */
gh_status gh_dist_id_to_text(const gh_dist_id *id, char *text, size_t text_size);
gh_status gh_dist_id_from_text(const char *text, gh_dist_id *id);
/** The id through a file (ranks on one machine, or a shared file system): save writes its text to
 * a temporary file renamed to `path`, so that a reader never sees part of an id; load waits up to
 * wait_seconds for the file to appear, then reads it: GH_ERR_PEER when none appeared in time,
 * GH_ERR_INVALID_ARGUMENT when it holds no id (nothing written then). gh_dist_last_create_error()
 * says why a call failed. */
gh_status gh_dist_id_save(const gh_dist_id *id, const char *path);
gh_status gh_dist_id_load(const char *path, double wait_seconds, gh_dist_id *id);

/** Fills *config with the defaults (table = gh_config_default(design), one partition).
 * struct_size must be sizeof(gh_dist_config) (its first version); otherwise nothing is written
 * and GH_ERR_INVALID_ARGUMENT returned. */
gh_status gh_dist_config_init(gh_dist_config *config, size_t struct_size, unsigned version, gh_design design);

static inline gh_dist_config gh_dist_config_default(gh_design design) {
  gh_dist_config config;
  gh_dist_config_init(&config, sizeof config, GH_VERSION_NUMBER, design);
  return config;
}

/** Creates the m partitions' tables (all or none). On failure *table is NULL and
 * gh_dist_last_create_error() says why. */
gh_status gh_dist_create(const gh_dist_config *config, gh_dist **table);
/** The reason the last gh_dist_create() on this thread failed; "" if it succeeded. */
const char *gh_dist_last_create_error(void);
void gh_dist_destroy(gh_dist *table);
/** What the last call on the table did wrong; "" after a call that returned GH_OK. */
const char *gh_dist_last_error(const gh_dist *table);

/** Partitions in the table, and how many of them this process drives (slices per call). */
unsigned gh_dist_partitions(const gh_dist *table);
unsigned gh_dist_local_partitions(const gh_dist *table);
/** The partition of a key (key_bits wide), 0 .. m - 1. */
unsigned gh_dist_partition_of(const gh_dist *table, uint64_t key);

/* ---- Operations on slices ------------------------------------------------------------------
 * keys, values, n and the outputs are arrays of gh_dist_local_partitions() entries: slice i is
 * keys[i] (n[i] keys, key_bits wide, packed), values[i], and so on. A slice with n[i] = 0 may
 * have NULL pointers. The calls wait for their work to finish. */

/** Inserts the slices' (key, value) pairs; a key in several slices (or twice in one) is merged
 * by policy in its partition as gh_insert merges copies in a batch (see Slices). failed_out
 * (optional; per slice) is written by every call that gets past the argument checks: 1 for the
 * keys not in the table (none on GH_OK); *failed (optional) counts them. */
gh_status gh_dist_insert(gh_dist *table, const void *const *keys, const void *const *values, const uint64_t *n,
                         gh_dup_policy policy, uint8_t *const *failed_out, uint64_t *failed);

/** Looks the slices' keys up: values_out[i] (optional) and found_out[i] (optional) per key, in
 * the slice's order; absent keys get *default_value (NULL: 0). On failure: writes nothing. */
gh_status gh_dist_find(gh_dist *table, const void *const *keys, const uint64_t *n, void *const *values_out,
                       uint8_t *const *found_out, const void *default_value);

/** Erases the slices' keys; erased_out (optional) is 1 where this call removed the key (one
 * position of a key repeated across or within slices), written by every call that gets past the
 * argument checks; *erased (optional) counts them. On failure the keys of the partitions that
 * failed stay (see Failures). */
gh_status gh_dist_erase(gh_dist *table, const void *const *keys, const uint64_t *n, uint8_t *const *erased_out,
                        uint64_t *erased);

/* ---- Host-sided operations -------------------------------------------------------------------
 * keys, values and the outputs are one array each in host memory (pageable or pinned), n keys,
 * larger than the GPUs' memory if need be. They are cut into batches of staging_bytes per GPU,
 * each batch split evenly over this process's GPUs and run as the slice calls above (a key
 * repeated in the array is merged batch after batch, and within a batch as gh_insert merges
 * one); with the CUDA backend
 * the copy of the next batch to the GPUs overlaps the work on this one. One process per GPU:
 * each rank passes its own array (n may differ, also 0). Outputs and failures as the slice
 * calls; an insert or erase that fails in a batch runs the later batches all the same, and its
 * flags say which keys are in, except after GH_ERR_PEER, a CUDA error or a batch that could not
 * reach its GPU, which stop the call (the batches left are flagged failed / not erased). */
gh_status gh_dist_insert_host(gh_dist *table, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                              uint8_t *failed_out, uint64_t *failed);
gh_status gh_dist_find_host(gh_dist *table, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                            const void *default_value);

/* ---- Timings and the exchange's ceiling (for benchmarks) ------------------------------------- */

/** What the last slice call's phases took on this process's slowest GPU, measured with CUDA
 * events (all 0 on the host backend): the multisplit and the placing of results back
 * (multisplit_ms), the piece sizes' all-gather and the all-to-alls there and back (exchange_ms),
 * the partition table's operation (table_ms: on the GPU's own piece and on the pieces received;
 * with exchange_overlap the first overlaps the all-to-all); exchanged_bytes: the bytes this
 * process's GPUs sent in the all-to-alls. */
typedef struct gh_dist_times {
  double multisplit_ms, exchange_ms, table_ms;
  uint64_t exchanged_bytes;
  double agreement_ms; /* the part of exchange_ms before the pieces move: the piece sizes' and the
                        * receive buffers' all-gathers */
} gh_dist_times;
gh_status gh_dist_last_times(const gh_dist *table, gh_dist_times *times);
/** Measures the communicator's all-to-all as the slice calls use it: every GPU's bytes_per_gpu
 * split evenly over the m partitions, the m - 1 pieces for the others sent as one grouped
 * ncclSend / ncclRecv (a GPU's own piece does not move); *gb_per_s (median of `repeats` runs,
 * each timed with CUDA events) is the bytes one GPU sent / the slowest GPU's time, comparable to
 * gh_dist_times' exchanged_bytes / exchange_ms. Collective. GH_ERR_UNSUPPORTED on the host
 * backend. */
gh_status gh_dist_measure_exchange(gh_dist *table, uint64_t bytes_per_gpu, unsigned repeats, double *gb_per_s);

/* ---- The whole table ------------------------------------------------------------------------
 * One process per GPU: these calls are collective; size, capacity, partition_size,
 * partition_stats and get_stats cover every rank's partition, clear and validate act on each
 * rank's own partition (validate's status is the first failing partition's, on every rank), and
 * export returns this rank's partition. */

/** Keys stored, over all partitions; capacity likewise (the sum of the tables' gh_capacity). */
gh_status gh_dist_size(gh_dist *table, uint64_t *size);
gh_status gh_dist_capacity(gh_dist *table, uint64_t *capacity);
/** Keys stored in partition p. */
gh_status gh_dist_partition_size(gh_dist *table, unsigned p, uint64_t *size);
/** Partition p's table statistics (gh_get_stats), and the whole table's: counts summed over the
 * partitions (size, distinct keys, slots, restarts, grows, stash keys, resizes, evictions, insert
 * failures, resize seconds, each subtable's buckets and keys, tombstones), limits their largest
 * (eviction limit, longest search), subtables as every partition has them. */
gh_status gh_dist_partition_stats(gh_dist *table, unsigned p, gh_stats *stats);
gh_status gh_dist_get_stats(gh_dist *table, gh_stats *stats);
/** Every partition emptied. */
gh_status gh_dist_clear(gh_dist *table);
/** Every partition's table validated, and every key stored in the partition p(k) names. */
gh_status gh_dist_validate(gh_dist *table);
/** Every stored (key, value), partition by partition, into keys_out / values_out (host memory;
 * values_out NULL for sets, required otherwise, as gh_export) of out_capacity entries; *count how
 * many. GH_ERR_BUFFER_TOO_SMALL (nothing written, *count the size) if they do not fit. */
gh_status gh_dist_export(gh_dist *table, void *keys_out, void *values_out, uint64_t out_capacity, uint64_t *count);

#ifdef __cplusplus
}
#endif

#endif /* GPUHASH_DIST_H */
