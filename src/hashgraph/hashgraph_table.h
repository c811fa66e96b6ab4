/* hashgraph_table.h - the HashGraph design's state and the drivers both backends share
 * (hashgraph_table.c): a static multi-value table in CSR form (Green, "HashGraph - Scalable Hash
 * Tables Using a Sparse Graph Data Structure"). Vertices are hash values, edges the stored
 * (key, value) entries, grouped by vertex: the edges of vertex v are offsets[v] .. offsets[v + 1]. */
#ifndef GH_HASHGRAPH_TABLE_H
#define GH_HASHGRAPH_TABLE_H

#include "core/design.h"
#include "hashgraph/hashgraph_bulk.h"

struct gh_hg_backend;

/* gh_config.bin_vertices: its range (0: chosen per build). */
#define GH_HG_MIN_BIN_VERTICES 1024u
#define GH_HG_MAX_BIN_VERTICES 32768u

typedef struct gh_hg_table {
  const struct gh_hg_backend *backend;
  gh_memory_kind kind;
  uint64_t vertices, vertex_room; /* in use; allocated */
  uint64_t edges, edge_room;       /* entries stored; room for them */
  uint64_t *offsets;               /* vertices + 1 */
  void *edge_slots;                /* edge_room slots (slot.h): each edge's key and value */
  uint64_t capacity_floor;         /* the config's capacity: room for at least that many edges */
  uint64_t builds;                 /* inserts and erases that built the table, ever */
  uint64_t grows;                  /* builds that needed more room than the table had */
} gh_hg_table;

/* What a backend runs for the drivers, queued on stream:
 *  - bulk: a step of hashgraph_bulk.h over n elements;
 *  - build_binned (NULL: the backend has none): Green's build V2 of the n_entries entries a
 *    describes (a.kind GH_HG_COUNT; a.offsets zeroed, a.edge_* the new table's arrays), `kept` of
 *    which go in: the entries binned by vertex range first, then each bin's part of the CSR built
 *    in on-chip memory. Answers GH_ERR_UNSUPPORTED for geometries it does not take and
 *    GH_ERR_OUT_OF_MEMORY without memory for its bins (nothing done either way); the driver then
 *    builds with the steps (V1). */
typedef struct gh_hg_backend {
  gh_status (*bulk)(gh_table *t, const gh_hg_bulk *a, uint64_t n, void *stream);
  gh_status (*build_binned)(gh_table *t, const gh_hg_bulk *a, uint64_t n_entries, uint64_t kept, void *stream);
} gh_hg_backend;

/* The ops both backends share; init takes the backend the others then run on. */
gh_status gh__hg_init(gh_table *t, const gh_hg_backend *backend);
void gh__hg_release(gh_table *t);
gh_status gh__hg_size(gh_table *t, uint64_t *size);
gh_status gh__hg_clear(gh_table *t, void *stream);
gh_status gh__hg_validate(gh_table *t);
gh_status gh__hg_stats(gh_table *t, gh_stats *stats);
gh_status gh__hg_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream);
gh_status gh__hg_insert(gh_table *t, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                        uint8_t *failed_out, uint64_t *failed, void *stream);
gh_status gh__hg_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out, uint64_t *erased, void *stream);
gh_status gh__hg_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                      const void *default_value, void *stream);
gh_status gh__hg_count(gh_table *t, const void *keys, uint64_t n, uint64_t *counts_out, uint64_t *total, void *stream);
gh_status gh__hg_find_all(gh_table *t, const void *keys, uint64_t n, uint64_t *offsets_out, void *values_out,
                          uint64_t values_capacity, void *stream);
gh_status gh__hg_join(gh_table *t, const void *keys, uint64_t n, const gh_join_request *request, void *stream);

/* An ops table of a backend (name: "hashgraph/<backend>"), every entry shared but init. */
#define GH_HG_OPS(ops_name, init_fn)                                                                              \
  {                                                                                                               \
    .name = ops_name, .init = init_fn, .release = gh__hg_release, .insert = gh__hg_insert, .find = gh__hg_find,   \
    .erase = gh__hg_erase, .count = gh__hg_count, .find_all = gh__hg_find_all, .export_all = gh__hg_export,       \
    .clear = gh__hg_clear, .size = gh__hg_size, .validate = gh__hg_validate, .keys_of_ids = NULL,                 \
    .stats = gh__hg_stats, .device_view = NULL, .take_flags = NULL, .mixed = NULL, .compact = NULL,               \
    .join = gh__hg_join                                                                                           \
  }

extern const gh_table_ops gh__hashgraph_host_ops;
#if defined(GH_HAVE_CUDA)
extern const gh_table_ops gh__hashgraph_cuda_ops;
#endif

#endif /* GH_HASHGRAPH_TABLE_H */
