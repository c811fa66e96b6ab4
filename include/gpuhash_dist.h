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
 * failed flags, erase's erased flags).
 *
 * Backends. Landed: the host backend (table.backend = GH_BACKEND_HOST): the m partitions are host
 * tables in this process, the all-to-all is memcpy; it runs the whole layer's bookkeeping (what
 * CI tests). Not yet: the CUDA backend over NCCL, one process for all GPUs of a node or one
 * process per GPU; gh_dist_create refuses it with GH_ERR_UNSUPPORTED saying so.
 *
 * Failures. Bad arguments are refused before anything is split: nothing changes, no output is
 * written. Past that, each partition's operation is all-or-nothing, as in gpuhash.h; partitions
 * are separate tables, so a call that fails in one partition (out of memory, a full table) may
 * have changed others. Every partition runs all the same, and the per-key outputs say what
 * happened: gh_dist_insert's failed_out marks exactly the keys that are not in the table and
 * *failed counts them; gh_dist_erase's erased_out marks exactly the keys it removed and *erased
 * counts them; the status is the first failure's, the message names its partition. No
 * acknowledged key is lost. The layer's own host memory comes from table.allocator too.
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
   * partition's), seed, allocator, backend (GH_BACKEND_HOST today; GH_BACKEND_AUTO is taken as
   * the host). */
  gh_config table;
  unsigned partitions;     /* m, 1 .. GH_DIST_MAX_PARTITIONS; default 1 */
  uint64_t partition_seed; /* p(k)'s seed; default a constant unlike gh_config's seed */
} gh_dist_config;

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
 * by policy in its partition as gh_insert does, its copies taken in slice order. failed_out
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

/* ---- The whole table ------------------------------------------------------------------------ */

/** Keys stored, over all partitions; capacity likewise (the sum of the tables' gh_capacity). */
gh_status gh_dist_size(gh_dist *table, uint64_t *size);
gh_status gh_dist_capacity(gh_dist *table, uint64_t *capacity);
/** Keys stored in partition p. */
gh_status gh_dist_partition_size(gh_dist *table, unsigned p, uint64_t *size);
/** Partition p's table statistics (gh_get_stats), and the whole table's: counts summed over the
 * partitions (size, distinct keys, slots, restarts, grows, stash keys, resizes, evictions, insert
 * failures, resize seconds, each subtable's buckets and keys), limits their largest (eviction
 * limit, longest search), subtables as every partition has them. */
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
