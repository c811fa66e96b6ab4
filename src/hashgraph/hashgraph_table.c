/* hashgraph_table.c - the HashGraph design's descriptor and the drivers both backends share: a
 * build is a counting sort by vertex (Green's build V1: count with atomics, exclusive sum, place
 * with atomics), a probe scans the query's vertex. The backends only run the per-element steps of
 * hashgraph_bulk.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/toolkit.h"
#include "hashgraph/hashgraph_table.h"

static gh_hg_table *state(gh_table *t) { return (gh_hg_table *)t->impl; }

static size_t key_bytes(const gh_table *t) { return t->config.key_bits / 8u; }
static size_t value_bytes(const gh_table *t) { return t->config.value_bits / 8u; }
static gh_slot_format edge_format(const gh_table *t) { return gh_slot_format_make(t->config.key_bits, t->config.value_bits); }

/* Vertices for `entries` entries at the config's load factor (keys per vertex); at least one. */
static uint64_t vertices_for(const gh_config *c, uint64_t entries) {
  const double wanted = (double)entries / c->load_factor;
  const uint64_t vertices = (uint64_t)wanted + ((double)(uint64_t)wanted < wanted);
  return vertices ? vertices : 1u;
}

/* ---- The descriptor ----------------------------------------------------------------------------- */

static gh_status check_config(const gh_config *c, char *message, size_t size) {
  if (!(c->load_factor >= 0.25 && c->load_factor <= 4.0)) {
    if (size) snprintf(message, size, "load_factor = %g must be in [0.25, 4] (keys per vertex)", c->load_factor);
    return GH_ERR_INVALID_ARGUMENT;
  }
  const unsigned bins = c->bin_vertices;
  if (bins != 0 && (bins < GH_HG_MIN_BIN_VERTICES || bins > GH_HG_MAX_BIN_VERTICES || (bins & (bins - 1u)))) {
    if (size)
      snprintf(message, size, "bin_vertices = %u must be 0 (chosen per build) or a power of two from %u to %u", bins,
               GH_HG_MIN_BIN_VERTICES, GH_HG_MAX_BIN_VERTICES);
    return GH_ERR_INVALID_ARGUMENT;
  }
  return GH_OK;
}

/* A table holding `capacity` entries. */
static gh_status estimate(const gh_config *c, size_t *host_bytes, size_t *device_bytes) {
  const size_t table = (size_t)(vertices_for(c, c->capacity) + 1u) * sizeof(uint64_t) +
                       (size_t)c->capacity * gh_slot_bytes(c->key_bits, c->value_bits);
  return gh__estimate_split(c, sizeof(gh_hg_table), table, host_bytes, device_bytes);
}

const gh_design_descriptor gh__design_hashgraph = {
    .id = GH_HASHGRAPH,
    .name = "hashgraph",
    .host_ops = &gh__hashgraph_host_ops,
    .cuda_ops = GH_CUDA_OPS(gh__hashgraph_cuda_ops),
    .check_config = check_config,
    .estimate = estimate,
    .variants = (1u << GH_VARIANT_MAP) | (1u << GH_VARIANT_MULTIVALUE),
    .map_policies = GH_MAP_POLICIES_ALL,
    .capabilities = GH_CAP_ERASE | GH_CAP_GROWS | GH_CAP_INDEX_PAYLOADS | GH_CAP_JOIN_INTERSECT,
    .did_not_fit = "memory for the rebuilt table ran out",
};

/* ---- Storage ------------------------------------------------------------------------------------ */

/* The arrays of a table: room for vertex_room vertices and edge_room edges, vertices and edges of
 * them in use. */
typedef struct csr_arrays {
  uint64_t vertices, vertex_room, edges, edge_room;
  uint64_t *offsets;
  void *edge_slots; /* edge_room slots */
} csr_arrays;

static void free_arrays(gh_table *t, csr_arrays *a, void *stream) {
  const gh_memory_kind kind = state(t)->kind;
  gh__free_after(t, a->offsets, (a->vertex_room + 1u) * sizeof(uint64_t), kind, stream);
  gh__free_after(t, a->edge_slots, a->edge_room * edge_format(t).slot_bytes, kind, stream);
  memset(a, 0, sizeof *a);
}

/* Arrays for `edges` entries at the load factor (room for at least the config's capacity and its
 * vertices, so that a table sized ahead holds what it was sized for and is built in place); all or
 * nothing. The offsets are the build's to write; an empty table's are zeroed here. */
static gh_status alloc_arrays(gh_table *t, csr_arrays *a, uint64_t edges, void *stream) {
  const gh_memory_kind kind = state(t)->kind;
  memset(a, 0, sizeof *a);
  a->vertices = vertices_for(&t->config, edges);
  const uint64_t floor = state(t)->capacity_floor;
  a->edge_room = edges > floor ? edges : floor;
  a->vertex_room = vertices_for(&t->config, a->edge_room);
  a->offsets = (uint64_t *)gh__alloc(t, (a->vertex_room + 1u) * sizeof(uint64_t), kind);
  if (a->offsets) a->edge_slots = gh__alloc(t, a->edge_room * edge_format(t).slot_bytes, kind);
  if (a->edge_slots == NULL) {
    const uint64_t room = a->edge_room;
    free_arrays(t, a, stream);
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no %s memory for a table of %llu edges; nothing was changed",
                    kind == GH_MEMORY_DEVICE ? "device" : "host", (unsigned long long)room);
  }
  return edges ? GH_OK : gh__fill(t, a->offsets, 0, (a->vertices + 1u) * sizeof(uint64_t), stream);
}

static csr_arrays current(const gh_hg_table *s) {
  const csr_arrays a = {s->vertices, s->vertex_room, s->edges, s->edge_room, s->offsets, s->edge_slots};
  return a;
}

static void adopt(gh_table *t, const csr_arrays *a, void *stream) {
  gh_hg_table *s = state(t);
  csr_arrays old = current(s);
  if (old.edge_room && a->edge_room > old.edge_room) s->grows += 1;
  free_arrays(t, &old, stream);
  s->vertices = a->vertices;
  s->vertex_room = a->vertex_room;
  s->edges = a->edges;
  s->edge_room = a->edge_room;
  s->offsets = a->offsets;
  s->edge_slots = a->edge_slots;
  t->config.capacity = a->edge_room; /* gh_capacity: the entries it holds before it is built larger */
}

gh_status gh__hg_init(gh_table *t, const gh_hg_backend *backend) {
  gh_hg_table *s = (gh_hg_table *)gh__alloc(t, sizeof *s, GH_MEMORY_HOST);
  if (s == NULL) return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "out of host memory for the table state");
  memset(s, 0, sizeof *s);
  t->impl = s;
  s->backend = backend;
  s->kind = gh__backend_memory(t);
  s->capacity_floor = t->config.capacity;
  csr_arrays empty;
  const gh_status status = alloc_arrays(t, &empty, 0u, NULL);
  if (status != GH_OK) {
    gh__hg_release(t);
    return status;
  }
  adopt(t, &empty, NULL);
  return GH_OK;
}

void gh__hg_release(gh_table *t) {
  gh_hg_table *s = state(t);
  if (s == NULL) return;
  csr_arrays a = current(s);
  free_arrays(t, &a, NULL);
  gh__release_all_deferred(t);
  gh__free(t, s, sizeof *s, GH_MEMORY_HOST);
  t->impl = NULL;
}

gh_status gh__hg_size(gh_table *t, uint64_t *size) {
  *size = state(t)->edges;
  return GH_OK;
}

gh_status gh__hg_clear(gh_table *t, void *stream) {
  gh_hg_table *s = state(t);
  /* At the size it was created with, the table keeps its arrays (what it was sized for stays
   * allocated, and the next build goes into them); grown, it goes back to that size. */
  if (s->edge_room == s->capacity_floor && s->vertex_room == vertices_for(&t->config, s->capacity_floor)) {
    const uint64_t vertices = vertices_for(&t->config, 0);
    const gh_status status = gh__fill(t, s->offsets, 0, (vertices + 1u) * sizeof(uint64_t), stream);
    if (status == GH_OK) s->vertices = vertices, s->edges = 0;
    return status;
  }
  csr_arrays empty;
  const gh_status status = alloc_arrays(t, &empty, 0u, stream);
  if (status == GH_OK) adopt(t, &empty, stream);
  return status;
}

/* ---- Build -------------------------------------------------------------------------------------- */

/* A step's arguments on the table as it is. */
static gh_hg_bulk bulk_args(const gh_table *t, int kind) {
  const gh_hg_table *s = state((gh_table *)t);
  gh_hg_bulk a;
  memset(&a, 0, sizeof a);
  a.kind = kind;
  a.key_bits = t->config.key_bits;
  a.value_bits = t->config.value_bits;
  a.seed = t->config.seed;
  a.vertices = s->vertices;
  a.offsets = s->offsets;
  a.edges = s->edge_slots;
  return a;
}

static gh_status run(gh_table *t, const gh_hg_bulk *a, uint64_t n, void *stream) {
  return n ? state(t)->backend->bulk(t, a, n, stream) : GH_OK;
}

/* Builds below this many entries run V1 even where the backend has V2: binning pays off once the
 * entries outgrow the caches. */
#define GH_HG_BINNED_MIN (1u << 16)

/* The entries of a build that keeps the table's edges: those (but the old_dead marks) first, then
 * the new entries (but the new_skip marks). */
static gh_hg_bulk stored_entries(const gh_table *t) {
  const gh_hg_table *s = state((gh_table *)t);
  gh_hg_bulk a = bulk_args(t, GH_HG_COUNT);
  a.old_edges = s->edge_slots;
  a.n_old = s->edges;
  return a;
}

/* A build into `built` (arrays with room for the entries that go in) of the n_entries entries
 * described: V2 where the backend has it (it writes every offset), else Green's build V1 (the
 * entries counted per vertex into zeroed offsets, the counts summed into offsets, each entry placed
 * at its vertex's offset plus a cursor). Nothing else is touched. */
static gh_status build_into(gh_table *t, const gh_hg_bulk *entries, uint64_t n_entries, csr_arrays *built,
                            void *stream) {
  gh_hg_table *s = state(t);
  gh_hg_bulk a = *entries;
  a.kind = GH_HG_COUNT;
  a.vertices = built->vertices;
  a.offsets = built->offsets;
  a.edges = built->edge_slots;
  const gh_hg_backend *be = s->backend;
  if (be->build_binned && built->edges >= GH_HG_BINNED_MIN) {
    /* (Without memory for its bins V2 steps aside too: V1 needs none beyond the table.) */
    const gh_status binned = be->build_binned(t, &a, n_entries, built->edges, stream);
    if (binned != GH_ERR_UNSUPPORTED && binned != GH_ERR_OUT_OF_MEMORY) return binned;
    gh__clear_error(t);
  }
  /* V1: a cursor per vertex. */
  gh_scratch cursor = {NULL, 0, s->kind, 0, NULL};
  gh_status status = gh__scratch_alloc_on(t, &cursor, built->vertices * sizeof(uint64_t), stream);
  if (status == GH_OK) status = gh__fill(t, cursor.ptr, 0, cursor.bytes, stream);
  if (status == GH_OK) status = gh__fill(t, built->offsets, 0, (built->vertices + 1u) * sizeof(uint64_t), stream);
  a.cursor = (uint64_t *)cursor.ptr;
  if (status == GH_OK) status = run(t, &a, n_entries, stream);
  if (status == GH_OK) status = gh__exclusive_sum_u64(t, built->offsets, built->offsets, built->vertices + 1u, stream);
  a.kind = GH_HG_PLACE;
  if (status == GH_OK) status = run(t, &a, n_entries, stream);
  gh__scratch_free(t, &cursor, stream);
  return status;
}

/* A multi-value insert: every entry becomes an edge. An empty table whose arrays have room (one
 * created for the entries it is built with, or cleared and built again) is built in place: no
 * allocation of the table, no free. */
static gh_status insert_entries(gh_table *t, const void *keys, const void *values, uint64_t n,
                                void *stream) {
  gh_hg_table *s = state(t);
  const uint64_t edges = s->edges + n;
  const int in_place = s->edges == 0 && edges <= s->edge_room && vertices_for(&t->config, edges) <= s->vertex_room;
  csr_arrays built = current(s);
  gh_status status = GH_OK;
  if (in_place) built.vertices = vertices_for(&t->config, edges);
  else status = alloc_arrays(t, &built, edges, stream);
  gh_hg_bulk entries = stored_entries(t);
  entries.keys = keys;
  entries.values = values;
  built.edges = edges;
  if (status == GH_OK) status = build_into(t, &entries, edges, &built, stream);
  if (status != GH_OK) {
    /* (In place: the empty table's offsets again, those a failed build may have written.) */
    if (in_place) gh__fill(t, s->offsets, 0, (s->vertices + 1u) * sizeof(uint64_t), stream);
    else free_arrays(t, &built, stream);
    return status;
  }
  if (in_place) s->vertices = built.vertices, s->edges = built.edges;
  else adopt(t, &built, stream);
  s->builds += 1;
  return GH_OK;
}

/* The scratch of a map insert, one allocation: the batch sorted by key, its runs of equal keys and
 * their merged values, which runs merged into a stored key, and two counters. */
typedef struct map_batch {
  gh_scratch block;
  void *sorted_keys, *sorted_values, *run_keys, *run_values;
  uint64_t *run_starts; /* runs + 1 */
  uint8_t *merged;
  uint64_t *counters;   /* [0] runs merged, [1] runs */
} map_batch;

static size_t align8(size_t bytes) { return (bytes + 7u) / 8u * 8u; }

static gh_status alloc_map_batch(gh_table *t, map_batch *m, uint64_t n) {
  const size_t kb = align8(n * key_bytes(t)), vb = align8(n * value_bytes(t));
  const size_t starts = (n + 1u) * sizeof(uint64_t), counters = 2u * sizeof(uint64_t);
  memset(m, 0, sizeof *m);
  const gh_status status = gh__scratch_alloc(t, &m->block, 2u * kb + 2u * vb + starts + counters + align8(n));
  if (status != GH_OK) return status;
  char *at = (char *)m->block.ptr;
  m->counters = (uint64_t *)at, at += counters;
  m->run_starts = (uint64_t *)at, at += starts;
  m->sorted_keys = at, at += kb;
  m->run_keys = at, at += kb;
  m->sorted_values = at, at += vb;
  m->run_values = at, at += vb;
  m->merged = (uint8_t *)at;
  return GH_OK;
}

/* A map insert: the batch's copies of a key merged by the policy (sorted by key, runs reduced),
 * each run merged into its stored edge if the key is there, the others built in as new edges (no
 * build when every key is stored). The new table's arrays are had before any stored value changes,
 * so a failure changes nothing. */
static gh_status insert_map(gh_table *t, const void *keys, const void *values, uint64_t n,
                            gh_dup_policy policy, void *stream) {
  gh_hg_table *s = state(t);
  map_batch m;
  csr_arrays built;
  memset(&built, 0, sizeof built);
  uint64_t runs = 0, merged = 0;
  gh_status status = alloc_map_batch(t, &m, n);
  if (status == GH_OK)
    status = gh__sort_pairs(t, keys, m.sorted_keys, values, value_bytes(t) ? m.sorted_values : NULL, n,
                            t->config.key_bits, t->config.value_bits, stream);
  if (status == GH_OK)
    status = gh__run_length_encode(t, m.sorted_keys, n, t->config.key_bits, m.run_keys, m.run_starts, &m.counters[1], stream);
  if (status == GH_OK) status = gh__to_host(t, &runs, &m.counters[1], sizeof runs, stream);
  if (status == GH_OK) status = gh__fill(t, m.run_starts + runs, 0, sizeof(uint64_t), stream);
  if (status == GH_OK) status = gh__exclusive_sum_u64(t, m.run_starts, m.run_starts, runs + 1u, stream);
  gh_hg_bulk a = bulk_args(t, GH_HG_REDUCE_RUNS);
  a.policy = (int)policy;
  a.values = m.sorted_values;
  a.out_offsets = m.run_starts;
  a.out_values = m.run_values;
  if (status == GH_OK && value_bytes(t)) status = run(t, &a, runs, stream);
  /* Which runs' keys are stored; then everything the build needs, before a stored value changes. */
  if (status == GH_OK) status = gh__fill(t, m.counters, 0, sizeof(uint64_t), stream);
  a = bulk_args(t, GH_HG_MERGE_STORED);
  a.policy = (int)policy;
  a.keys = m.run_keys;
  a.values = m.run_values;
  a.out_found = m.merged;
  a.counters = m.counters;
  if (status == GH_OK) status = run(t, &a, runs, stream);
  if (status == GH_OK) status = gh__to_host(t, &merged, &m.counters[0], sizeof merged, stream);
  const int grows = status == GH_OK && merged < runs;
  if (grows) status = alloc_arrays(t, &built, s->edges + runs - merged, stream);
  gh_hg_bulk entries = stored_entries(t);
  entries.keys = m.run_keys;
  entries.values = m.run_values;
  entries.new_skip = m.merged;
  built.edges = s->edges + runs - merged;
  if (grows && status == GH_OK) status = build_into(t, &entries, s->edges + runs, &built, stream);
  /* The runs of stored keys merge into the new table's copies (into the table itself when every key
   * was stored: then nothing was allocated and nothing can fail after this). */
  a.merge_values = 1;
  a.only = m.merged;
  a.out_found = NULL;
  a.counters = NULL;
  if (grows) {
    a.vertices = built.vertices;
    a.offsets = built.offsets;
    a.edges = built.edge_slots;
  }
  if (status == GH_OK && merged && value_bytes(t)) status = run(t, &a, runs, stream);
  gh__scratch_free(t, &m.block, stream);
  if (status != GH_OK) {
    free_arrays(t, &built, stream);
    return status;
  }
  if (grows) {
    adopt(t, &built, stream);
    s->builds += 1;
  }
  return GH_OK;
}

gh_status gh__hg_insert(gh_table *t, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                        uint8_t *failed_out, uint64_t *failed, void *stream) {
  const gh_status status = t->config.variant == GH_VARIANT_MULTIVALUE ? insert_entries(t, keys, values, n, stream)
                                                                      : insert_map(t, keys, values, n, policy, stream);
  /* Every key goes in (or the call fails and changes nothing). */
  *failed = 0;
  return status == GH_OK && failed_out ? gh__fill(t, failed_out, 0, n, stream) : status;
}

/* Erase: every edge of the keys marked dead in scratch, then (if any was) the table built again
 * from the others. The marks and the per-key results stay in scratch until the build is done. */
gh_status gh__hg_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out,
                       uint64_t *erased, void *stream) {
  gh_hg_table *s = state(t);
  gh_scratch marks = {NULL, 0, s->kind, 0, NULL};
  const size_t dead_bytes = align8(s->edges * sizeof(uint32_t)), won_bytes = align8(n);
  uint64_t counted[2] = {0, 0};
  csr_arrays built;
  memset(&built, 0, sizeof built);
  *erased = 0;
  gh_status status = gh__scratch_alloc_on(t, &marks, 2u * sizeof(uint64_t) + dead_bytes + won_bytes, stream);
  uint64_t *counters = (uint64_t *)marks.ptr;
  uint32_t *dead = (uint32_t *)(counters + 2);
  uint8_t *won = (uint8_t *)dead + dead_bytes;
  if (status == GH_OK) status = gh__fill(t, marks.ptr, 0, 2u * sizeof(uint64_t) + dead_bytes, stream);
  gh_hg_bulk a = bulk_args(t, GH_HG_ERASE);
  a.keys = keys;
  a.dead = dead;
  a.out_found = won;
  a.counters = counters;
  if (status == GH_OK) status = run(t, &a, n, stream);
  if (status == GH_OK) status = gh__to_host(t, counted, counters, sizeof counted, stream);
  if (status == GH_OK && counted[1]) {
    status = alloc_arrays(t, &built, s->edges - counted[1], stream);
    gh_hg_bulk entries = stored_entries(t);
    entries.old_dead = dead;
    built.edges = s->edges - counted[1];
    if (status == GH_OK) status = build_into(t, &entries, s->edges, &built, stream);
  }
  if (status == GH_OK && erased_out) status = gh__copy(t, erased_out, won, n, stream);
  gh__scratch_free(t, &marks, stream);
  if (status != GH_OK) {
    free_arrays(t, &built, stream);
    return status;
  }
  if (counted[1]) {
    adopt(t, &built, stream);
    s->builds += 1;
  }
  *erased = counted[0];
  return GH_OK;
}

/* ---- Probes ------------------------------------------------------------------------------------- */

gh_status gh__hg_find(gh_table *t, const void *keys, uint64_t n, void *values_out,
                      uint8_t *found_out, const void *default_value, void *stream) {
  gh_hg_bulk a = bulk_args(t, GH_HG_PROBE_FIRST);
  a.keys = keys;
  a.out_values = values_out;
  a.out_found = found_out;
  a.default_value = gh__value_word(t, default_value);
  return run(t, &a, n, stream);
}

gh_status gh__hg_count(gh_table *t, const void *keys, uint64_t n, uint64_t *counts_out,
                       uint64_t *total, void *stream) {
  /* Counted into counts_out when it is wanted; the total added up by the probe itself into one
   * scratch word (a join's count wants only that: no array of n counts). The word is had first, so
   * that counts_out is written only by a call that succeeds. */
  gh_scratch sum = {NULL, 0, state(t)->kind, 0, NULL};
  gh_status status = total ? gh__scratch_alloc_on(t, &sum, sizeof(uint64_t), stream) : GH_OK;
  if (status == GH_OK && total) status = gh__fill(t, sum.ptr, 0, sizeof(uint64_t), stream);
  gh_hg_bulk a = bulk_args(t, GH_HG_PROBE_COUNT);
  a.keys = keys;
  a.out_counts = counts_out;
  a.counters = (uint64_t *)sum.ptr;
  if (status == GH_OK) status = run(t, &a, n, stream);
  if (status == GH_OK && total) status = gh__to_host(t, total, sum.ptr, sizeof *total, stream);
  gh__scratch_free(t, &sum, stream);
  return status;
}

gh_status gh__hg_find_all(gh_table *t, const void *keys, uint64_t n, uint64_t *offsets_out,
                          void *values_out, uint64_t values_capacity, void *stream) {
  /* The count pass keeps each query's first value (the stash), so that the fill probes again only
   * the queries of more than one value and copies the others' (unique keys: one probe, not two).
   * The stash is taken first, so that a call without memory for it writes nothing; a call with no
   * room for values (values_capacity 0, values_out NULL: sizing) takes none. */
  const int fills = values_out != NULL && values_capacity != 0 && t->config.value_bits != 0 && n != 0;
  gh_scratch stash = {NULL, 0, state(t)->kind, 0, NULL};
  gh_status status = fills ? gh__scratch_alloc_on(t, &stash, n * (t->config.value_bits / 8u), stream) : GH_OK;
  gh_hg_bulk a = bulk_args(t, GH_HG_PROBE_COUNT);
  a.keys = keys;
  a.out_counts = offsets_out;
  a.stash = stash.ptr;
  if (status == GH_OK) status = run(t, &a, n, stream);
  if (status == GH_OK) status = gh__find_all_offsets(t, offsets_out, n, values_capacity, stream);
  if (status == GH_OK && fills) {
    a.kind = GH_HG_PROBE_FILL;
    a.out_offsets = offsets_out;
    a.out_values = values_out;
    status = run(t, &a, n, stream);
  }
  gh__scratch_free(t, &stash, stream);
  return status;
}

/* Green's intersection probe: the left keys built into a second table over the table's vertices
 * (their rows as values; none when only counting), then both tables met vertex by vertex. Reads
 * both tables in order where a probe reads the table at random, at the price of the second build. */
gh_status gh__hg_join(gh_table *t, const void *keys, uint64_t n, const gh_join_request *request, void *stream) {
  gh_hg_table *s = state(t);
  const int semi = request->kind == GH_JOIN_KIND_SEMI;
  const unsigned row_bits = request->kind == GH_JOIN_KIND_COUNT ? 0u : n > (1ull << 32) ? 64u : 32u;
  const size_t offsets_bytes = (s->vertices + 1u) * sizeof(uint64_t);
  const size_t left_bytes = align8(n * gh_slot_bytes(t->config.key_bits, row_bits));
  gh_scratch block = {NULL, 0, s->kind, 0, NULL};
  gh_status status = gh__scratch_alloc_on(t, &block, 2u * offsets_bytes + left_bytes, stream);
  char *at = (char *)block.ptr;
  csr_arrays left = {s->vertices, s->vertices, n, n, (uint64_t *)at, at + offsets_bytes};
  uint64_t *pair_offsets = (uint64_t *)(at + offsets_bytes + left_bytes);
  gh_hg_bulk entries = bulk_args(t, GH_HG_COUNT);
  entries.keys = keys;
  entries.value_bits = row_bits; /* no values given: each entry's row */
  if (status == GH_OK) status = build_into(t, &entries, n, &left, stream);
  gh_hg_bulk a = bulk_args(t, semi ? GH_HG_MEET_SEMI : GH_HG_MEET_COUNT);
  a.left_offsets = left.offsets;
  a.left_edges = left.edge_slots;
  a.row_bits = row_bits;
  a.out_found = request->match_out;
  a.out_counts = pair_offsets;
  uint64_t total = 0;
  if (status == GH_OK) status = run(t, &a, s->vertices, stream);
  if (status == GH_OK && !semi) {
    status = gh__fill(t, pair_offsets + s->vertices, 0, sizeof(uint64_t), stream);
    if (status == GH_OK) status = gh__exclusive_sum_u64(t, pair_offsets, pair_offsets, s->vertices + 1u, stream);
    if (status == GH_OK) status = gh__to_host(t, &total, pair_offsets + s->vertices, sizeof total, stream);
    if (status == GH_OK) *request->pairs = total;
  }
  if (status == GH_OK && request->kind == GH_JOIN_KIND_PAIRS) {
    if (total > request->capacity) {
      status = gh__fail(t, GH_ERR_BUFFER_TOO_SMALL, "gh_join: the join has %llu pairs but capacity is %llu; *pairs "
                        "says how many, nothing was written", (unsigned long long)total,
                        (unsigned long long)request->capacity);
    } else {
      a.kind = GH_HG_MEET_FILL;
      a.out_offsets = pair_offsets;
      a.out_rows = request->left_out;
      a.out_values = request->right_out;
      status = run(t, &a, s->vertices, stream);
    }
  }
  gh__scratch_free(t, &block, stream);
  return status;
}

/* ---- Export, validate --------------------------------------------------------------------------- */

gh_status gh__hg_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_hg_bulk a = bulk_args(t, GH_HG_UNPACK);
  a.out_keys = keys_out;
  a.out_values = value_bytes(t) ? values_out : NULL;
  const gh_status status = run(t, &a, state(t)->edges, stream);
  if (status == GH_OK) *count = state(t)->edges;
  return status;
}

/* Offsets from 0 to the edge count, never decreasing; every edge under the vertex its key hashes to. */
static int check_csr(const gh_table *t, const uint64_t *offsets, const void *edge_slots, char *message, size_t size) {
  const gh_hg_table *s = state((gh_table *)t);
  if (offsets[0] != 0 || offsets[s->vertices] != s->edges) {
    snprintf(message, size, "offsets run from %llu to %llu, not from 0 to the %llu edges", (unsigned long long)offsets[0],
             (unsigned long long)offsets[s->vertices], (unsigned long long)s->edges);
    return 1;
  }
  for (uint64_t v = 0; v < s->vertices; ++v) {
    if (offsets[v + 1u] < offsets[v]) {
      snprintf(message, size, "offsets decrease at vertex %llu (%llu then %llu)", (unsigned long long)v,
               (unsigned long long)offsets[v], (unsigned long long)offsets[v + 1u]);
      return 1;
    }
    for (uint64_t e = offsets[v]; e < offsets[v + 1u]; ++e) {
      const uint64_t key = gh_hg_edge_key(edge_format(t), edge_slots, e);
      const uint64_t home = gh_hg_vertex(t->config.key_bits, t->config.seed, s->vertices, key);
      if (home != v) {
        snprintf(message, size, "edge %llu (key %llu) is under vertex %llu, its key hashes to %llu", (unsigned long long)e,
                 (unsigned long long)key, (unsigned long long)v, (unsigned long long)home);
        return 1;
      }
    }
  }
  return 0;
}

/* A map or set holds each key once (the edges of one key would be under one vertex, in the order the
 * builds left them: sorted here instead). */
static gh_status check_keys_once(gh_table *t, const void *edge_slots) {
  const gh_hg_table *s = state(t);
  uint64_t *keys = (uint64_t *)malloc((s->edges ? s->edges : 1u) * sizeof *keys);
  if (keys == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "validate: no host memory to check %llu keys for repeats",
                    (unsigned long long)s->edges);
  for (uint64_t e = 0; e < s->edges; ++e) keys[e] = gh_hg_edge_key(edge_format(t), edge_slots, e);
  int repeat = 0;
  uint64_t twice = 0;
  gh__distinct_keys_host(keys, s->edges, &repeat, &twice);
  const gh_status status = repeat ? gh__fail(t, GH_ERR_CORRUPT, "validate: key %llu is stored twice in a %s",
                                             (unsigned long long)twice, t->config.value_bits ? "map" : "set")
                                  : GH_OK;
  free(keys);
  return status;
}

gh_status gh__hg_validate(gh_table *t) {
  gh_hg_table *s = state(t);
  const size_t offsets_bytes = (s->vertices + 1u) * sizeof(uint64_t), edges_bytes = s->edges * edge_format(t).slot_bytes;
  char *copy = (char *)malloc(offsets_bytes + edges_bytes + 1u);
  if (copy == NULL) return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "validate: no host memory for a copy of the table");
  gh_status status = gh__to_host(t, copy, s->offsets, offsets_bytes, NULL);
  if (status == GH_OK) status = gh__to_host(t, copy + offsets_bytes, s->edge_slots, edges_bytes, NULL);
  char message[GH_ERROR_CAPACITY - 64];
  if (status == GH_OK && check_csr(t, (const uint64_t *)copy, copy + offsets_bytes, message, sizeof message))
    status = gh__fail(t, GH_ERR_CORRUPT, "validate: %s", message);
  if (status == GH_OK && t->config.variant != GH_VARIANT_MULTIVALUE) status = check_keys_once(t, copy + offsets_bytes);
  free(copy);
  return status;
}

/* Distinct keys of a multi-value table: its keys taken out of the edges (into `unique`, free until
 * the runs are counted) and sorted, runs of equal keys counted. */
static gh_status count_distinct(gh_table *t, uint64_t *distinct) {
  gh_hg_table *s = state(t);
  const size_t kb = align8(s->edges * key_bytes(t));
  gh_scratch block = {NULL, 0, s->kind, 0, NULL};
  gh_status status = gh__scratch_alloc_on(t, &block, 2u * kb + (s->edges + 1u) * sizeof(uint64_t), NULL);
  char *sorted = (char *)block.ptr, *unique = sorted + kb;
  uint64_t *runs = (uint64_t *)(unique + kb);
  gh_hg_bulk a = bulk_args(t, GH_HG_UNPACK);
  a.out_keys = unique;
  if (status == GH_OK) status = run(t, &a, s->edges, NULL);
  if (status == GH_OK)
    status = gh__sort_pairs(t, unique, sorted, NULL, NULL, s->edges, t->config.key_bits, 0u, NULL);
  if (status == GH_OK) status = gh__run_length_encode(t, sorted, s->edges, t->config.key_bits, unique, runs + 1, runs, NULL);
  if (status == GH_OK) status = gh__to_host(t, distinct, runs, sizeof *distinct, NULL);
  gh__scratch_free(t, &block, NULL);
  return status;
}

gh_status gh__hg_stats(gh_table *t, gh_stats *stats) {
  gh_hg_table *s = state(t);
  stats->slots = s->edge_room;
  stats->grows = s->grows;
  if (t->config.variant == GH_VARIANT_MULTIVALUE && s->edges) return count_distinct(t, &stats->distinct_keys);
  return GH_OK;
}
