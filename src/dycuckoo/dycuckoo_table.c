/* dycuckoo_table.c - what both backends of the DyCuckoo design share: the descriptor, sizing,
 * storage, the insert and erase drivers with their resizing, export, validate and statistics
 * (Li et al., "Dynamic Hash Tables on GPUs"; docs/architecture.md, "dycuckoo"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/design.h"
#include "core/toolkit.h"
#include "core/words.h"
#include "dycuckoo/dycuckoo_table.h"

#define GH_DY_MIN_TABLES 2u

static gh_dy_table *state(gh_table *t) { return (gh_dy_table *)t->impl; }

/* The buckets each subtable needs for capacity keys at fill_max (before rounding up). */
static double wanted_buckets(const gh_config *c) {
  const double slots = (double)(GH_DY_LINE_BYTES / (c->key_bits / 8u));
  return (double)c->capacity / (double)c->hash_functions / (slots * c->fill_max);
}

/* More buckets than that per subtable (128 bytes each: 128 TiB) no memory holds; a config that
 * asks for them is refused, so sizes stay far from 64-bit overflow. */
#define DY_MAX_INITIAL_BUCKETS 0x1p40

gh_dy_geometry gh__dy_geometry(const gh_config *c) {
  gh_dy_geometry g;
  memset(&g, 0, sizeof g);
  g.key_bits = c->key_bits;
  g.value_bytes = c->value_bits / 8u;
  g.tables = c->hash_functions;
  g.slots = GH_DY_LINE_BYTES / (c->key_bits / 8u);
  /* Equal subtables, enough for capacity keys at fill_max. Sizes only double and halve from
   * here (never below this one), so a halved subtable always has an even count to merge. */
  const double wanted = wanted_buckets(c);
  const uint64_t buckets = wanted < 1.0 ? 1u : (uint64_t)wanted + (wanted > (double)(uint64_t)wanted);
  for (unsigned i = 0; i < g.tables; ++i) {
    g.buckets[i] = buckets;
    g.seed[i] = gh_fmix64(c->seed + 0x9E3779B97F4A7C15ull * (i + 1u));
  }
  g.choice_seed = gh_fmix64(c->seed ^ 0xD1B54A32D192ED03ull);
  const unsigned long long none[GH_DY_MAX_TABLES] = {0};
  gh__dy_set_choice(&g, none);
  return g;
}

void gh__dy_set_choice(gh_dy_geometry *g, const unsigned long long *keys) {
  double weight[GH_DY_MAX_TABLES], total = 0.0, sum = 0.0;
  for (unsigned i = 0; i < g->tables; ++i) {
    const double m = (double)keys[i], pairs = m * (m - 1.0) / 2.0;
    weight[i] = (double)gh_dy_table_slots(g, i) / (pairs < 1.0 ? 1.0 : pairs);
    total += weight[i];
  }
  for (unsigned i = 0; i < g->tables; ++i) {
    sum += weight[i];
    g->choose[i] = i + 1 == g->tables ? (1ull << 32) : (uint64_t)(sum / total * 4294967296.0);
  }
}

static uint64_t total_slots(const gh_dy_geometry *g) {
  uint64_t slots = 0;
  for (unsigned i = 0; i < g->tables; ++i) slots += gh_dy_table_slots(g, i);
  return slots;
}

static size_t keys_bytes(uint64_t buckets) { return (size_t)buckets * GH_DY_LINE_BYTES; }
static size_t values_bytes(const gh_dy_geometry *g, uint64_t buckets) {
  return (size_t)buckets * g->slots * g->value_bytes;
}
static size_t locks_bytes(uint64_t buckets) { return (size_t)buckets * sizeof(uint32_t); }
static size_t line_multiple(size_t bytes) { return (bytes + GH_DY_LINE_BYTES - 1u) / GH_DY_LINE_BYTES * GH_DY_LINE_BYTES; }
/* A subtable's arrays share one allocation: key lines, then values, then lock words, each from a
 * line boundary. (A resize asks the allocator once instead of three times: on an H200 a cudaMalloc
 * and cudaFree pair costs about 0.1 ms at any size up to tens of MB, the resizes of the dynamic
 * workload average 0.45 ms each: bench/results/2026-11-23-h200-dycuckoo-resize-warps.txt.) */
static size_t subtable_bytes(const gh_dy_geometry *g, uint64_t buckets) {
  return keys_bytes(buckets) + line_multiple(values_bytes(g, buckets)) + locks_bytes(buckets);
}

/* ---- The descriptor ----------------------------------------------------------------------------- */

/* The fields this design reads: d (hash_functions) and the filled-factor bounds. */
static gh_status check_config(const gh_config *c, char *message, size_t size) {
  if (c->hash_functions < GH_DY_MIN_TABLES || c->hash_functions > GH_DY_MAX_TABLES) {
    if (size) snprintf(message, size, "hash_functions = %u: dycuckoo has 2..8 subtables", c->hash_functions);
    return GH_ERR_INVALID_ARGUMENT;
  }
  const double d = (double)c->hash_functions;
  if (!(c->fill_max > 0.0 && c->fill_max <= 0.95)) {
    if (size) snprintf(message, size, "fill_max = %g must be in (0, 0.95]", c->fill_max);
    return GH_ERR_INVALID_ARGUMENT;
  }
  /* Halving the largest subtable takes theta up by at most (d + 1) / d (Li et al. 5.1): a lower
   * bound at or above fill_max * d / (d + 1) would make a halving overshoot fill_max. */
  if (!(c->fill_min > 0.0 && c->fill_min < c->fill_max * d / (d + 1.0))) {
    if (size)
      snprintf(message, size, "fill_min = %g must be above 0 and below fill_max * d / (d + 1) = %g (fill_max %g, d %u)",
               c->fill_min, c->fill_max * d / (d + 1.0), c->fill_max, c->hash_functions);
    return GH_ERR_INVALID_ARGUMENT;
  }
  if ((c->key_bits == 32 || c->key_bits == 64) && !(wanted_buckets(c) <= DY_MAX_INITIAL_BUCKETS)) {
    if (size)
      snprintf(message, size, "capacity %llu at fill_max %g needs %g buckets per subtable: more than any memory holds",
               (unsigned long long)c->capacity, c->fill_max, wanted_buckets(c));
    return GH_ERR_INVALID_ARGUMENT;
  }
  return GH_OK;
}

static gh_status estimate(const gh_config *c, size_t *host_bytes, size_t *device_bytes) {
  const gh_dy_geometry g = gh__dy_geometry(c);
  size_t table = sizeof(gh_dy_counters) + gh_dy_side_bytes(&g); /* (as init allocates them) */
  for (unsigned i = 0; i < g.tables; ++i)
    table += subtable_bytes(&g, g.buckets[i]);
  return gh__estimate_split(c, sizeof(gh_dy_table), table, host_bytes, device_bytes);
}

/* The registry's entry for dycuckoo (src/registry.h). */
const gh_design_descriptor gh__design_dycuckoo = {
    .id = GH_DYCUCKOO,
    .name = "dycuckoo",
    .host_ops = &gh__dycuckoo_host_ops,
    .cuda_ops = GH_CUDA_OPS(gh__dycuckoo_cuda_ops),
    .check_config = check_config,
    .estimate = estimate,
    .variants = 1u << GH_VARIANT_MAP,
    .map_policies = GH_MAP_POLICIES_ALL,
    .capabilities = GH_CAP_ERASE | GH_CAP_GROWS | GH_CAP_DEVICE_VIEW | GH_CAP_VALUE_RECORDS,
    .did_not_fit = "memory for a larger subtable ran out",
};

/* ---- Storage ------------------------------------------------------------------------------------- */

static void free_subtable(gh_table *t, gh_dy_subtable *sub, uint64_t buckets, void *stream) {
  gh_dy_table *s = state(t);
  gh__free_after(t, sub->keys, subtable_bytes(&s->geometry, buckets), s->kind, stream);
  memset(sub, 0, sizeof *sub);
}

/* An empty subtable of `buckets` buckets (cleared on stream); all or nothing. */
static gh_status new_subtable(gh_table *t, gh_dy_subtable *sub, uint64_t buckets, void *stream) {
  gh_dy_table *s = state(t);
  const gh_dy_geometry *g = &s->geometry;
  memset(sub, 0, sizeof *sub);
  char *block = (char *)gh__alloc(t, subtable_bytes(g, buckets), s->kind);
  if (block == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no %s memory for a subtable of %llu buckets (%zu bytes); nothing was changed",
                    s->kind == GH_MEMORY_DEVICE ? "device" : "host", (unsigned long long)buckets, subtable_bytes(g, buckets));
  sub->keys = block;
  sub->values = g->value_bytes ? block + keys_bytes(buckets) : NULL;
  sub->locks = (uint32_t *)(block + keys_bytes(buckets) + line_multiple(values_bytes(g, buckets)));
  gh_status status = gh__fill(t, sub->keys, 0xFF, keys_bytes(buckets), stream);
  if (status == GH_OK) status = gh__fill(t, sub->locks, 0, locks_bytes(buckets), stream);
  if (status != GH_OK) free_subtable(t, sub, buckets, stream);
  return status;
}

/* Slots and keys as gh_get_config and the messages report them. */
static void note_capacity(gh_table *t) { t->config.capacity = total_slots(&state(t)->geometry); }

gh_status gh__dy_init(gh_table *t) {
  const gh_memory_kind kind = gh__backend_memory(t);
  gh_dy_table *s = (gh_dy_table *)gh__alloc(t, sizeof *s, GH_MEMORY_HOST);
  if (s == NULL) return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "out of host memory for the table state");
  memset(s, 0, sizeof *s);
  t->impl = s;
  s->kind = kind;
  s->geometry = gh__dy_geometry(&t->config);
  s->floor_buckets = s->geometry.buckets[0];
  const unsigned side_bytes = gh_dy_side_bytes(&s->geometry);
  s->counters = (gh_dy_counters *)gh__alloc(t, sizeof(gh_dy_counters), kind);
  s->side = s->counters ? gh__alloc(t, side_bytes, kind) : NULL;
  gh_status status = s->side ? GH_OK : gh__fail(t, GH_ERR_OUT_OF_MEMORY, "out of memory for the table's counters");
  /* Queued on the default stream; gh_create waits for it. */
  if (status == GH_OK) status = gh__fill(t, s->counters, 0, sizeof(gh_dy_counters), NULL);
  if (status == GH_OK) status = gh__fill(t, s->side, 0, side_bytes, NULL);
  for (unsigned i = 0; status == GH_OK && i < s->geometry.tables; ++i)
    status = new_subtable(t, &s->sub[i], s->geometry.buckets[i], NULL);
  if (status != GH_OK) {
    gh__dy_release(t);
    return status;
  }
  note_capacity(t);
  return GH_OK;
}

void gh__dy_release(gh_table *t) {
  gh_dy_table *s = state(t);
  if (s == NULL) return;
  for (unsigned i = 0; i < s->geometry.tables; ++i) free_subtable(t, &s->sub[i], s->geometry.buckets[i], NULL);
  gh__free_after(t, s->side, gh_dy_side_bytes(&s->geometry), s->kind, NULL);
  gh__free_after(t, s->published, sizeof *s->published, GH_MEMORY_DEVICE, NULL);
  gh__free_after(t, s->counters, sizeof(gh_dy_counters), s->kind, NULL);
  gh__release_all_deferred(t);
  gh__free(t, s, sizeof *s, GH_MEMORY_HOST);
  t->impl = NULL;
}

static gh_status read_counters(gh_table *t, gh_dy_counters *c, void *stream) {
  return gh__to_host(t, c, state(t)->counters, sizeof *c, stream);
}

static uint64_t stored_keys(const gh_dy_counters *c, unsigned tables) {
  uint64_t keys = c->side;
  for (unsigned i = 0; i < tables; ++i) keys += c->keys[i];
  return keys;
}

gh_status gh__dy_size(gh_table *t, uint64_t *size) {
  gh_dy_counters c;
  const gh_status status = read_counters(t, &c, NULL);
  if (status == GH_OK) *size = stored_keys(&c, state(t)->geometry.tables);
  return status;
}

gh_dy_device gh__dy_device(gh_table *t) {
  gh_dy_table *s = state(t);
  gh_dy_device d;
  memset(&d, 0, sizeof d);
  d.g = s->geometry;
  for (unsigned i = 0; i < s->geometry.tables; ++i) {
    d.keys[i] = s->sub[i].keys;
    d.values[i] = s->sub[i].values;
    d.locks[i] = s->sub[i].locks;
  }
  d.side = s->side;
  d.counters = s->counters;
  return d;
}

gh_status gh__dy_publish(gh_table *t, void *stream) {
  gh_dy_table *s = state(t);
  if (s->published == NULL) return GH_OK;
  gh_dy_counters c;
  gh_status status = read_counters(t, &c, stream);
  if (status != GH_OK) return status;
  gh_dy_device d = gh__dy_device(t);
  const double limit = t->config.fill_max * (double)total_slots(&s->geometry);
  const double keys = (double)(stored_keys(&c, s->geometry.tables) - c.side);
  d.room = limit > keys ? (unsigned long long)(limit - keys) : 0u;
  s->published_keys = (uint64_t)keys;
  return gh__copy(t, s->published, &d, sizeof d, stream);
}

/* Zeroes the counters of one pass. */
gh_status gh__dy_reset_pass(gh_table *t, void *stream) {
  gh_dy_counters *c = state(t)->counters;
  return gh__fill(t, &c->failed, 0, sizeof *c - offsetof(gh_dy_counters, failed), stream);
}

/* ---- Resizing ------------------------------------------------------------------------------------ */

static gh_status run_bulk(gh_table *t, const gh_dy_backend *be, gh_dy_bulk *a, int kind, uint64_t n, void *stream) {
  a->g = state(t)->geometry;
  a->kind = kind;
  return n ? be->bulk(t, a, n, stream) : GH_OK;
}

/* The bulk step's arguments for moving subtable i's entries into `to` (a resize). */
static gh_dy_bulk move_args(const gh_dy_table *s, unsigned i, const gh_dy_subtable *to) {
  gh_dy_bulk a;
  memset(&a, 0, sizeof a);
  a.table = i;
  a.old_keys = s->sub[i].keys;
  a.old_values = s->sub[i].values;
  a.new_keys = to->keys;
  a.new_values = to->values;
  return a;
}

/* Puts `to`, of `buckets` buckets, in the place of subtable i (whose old arrays go once the work
 * queued on stream has run). */
static void replace_subtable(gh_table *t, unsigned i, const gh_dy_subtable *to, uint64_t buckets, void *stream) {
  gh_dy_table *s = state(t);
  free_subtable(t, &s->sub[i], s->geometry.buckets[i], stream);
  s->sub[i] = *to;
  s->geometry.buckets[i] = buckets;
  note_capacity(t);
}

/* Doubles subtable i: old bucket b goes to 2b and 2b + 1 of a new array, no other subtable is
 * touched and nothing conflicts. All or nothing. */
static gh_status upsize(gh_table *t, const gh_dy_backend *be, unsigned i, void *stream) {
  gh_dy_table *s = state(t);
  const uint64_t buckets = s->geometry.buckets[i];
  gh_stopwatch watch;
  gh__stopwatch_start(t, &watch, stream);
  gh_dy_subtable grown;
  gh_status status = new_subtable(t, &grown, 2u * buckets, stream);
  gh_dy_bulk a = move_args(s, i, &grown);
  if (status == GH_OK) status = run_bulk(t, be, &a, GH_DY_UPSIZE, buckets, stream);
  if (status == GH_OK) {
    replace_subtable(t, i, &grown, 2u * buckets, stream);
    s->upsizes += 1;
  } else if (grown.keys != NULL) {
    free_subtable(t, &grown, 2u * buckets, stream);
  }
  s->resize_seconds += gh__stopwatch_seconds(t, &watch, stream);
  return status;
}

/* The subtable an upsize doubles (the smallest, the first of equals) and a downsize halves (the
 * largest, the last of equals): either keeps the sizes within 2x of each other. */
static unsigned smallest(const gh_dy_geometry *g) {
  unsigned best = 0;
  for (unsigned i = 1; i < g->tables; ++i)
    if (g->buckets[i] < g->buckets[best]) best = i;
  return best;
}
static unsigned largest(const gh_dy_geometry *g) {
  unsigned best = 0;
  for (unsigned i = 1; i < g->tables; ++i)
    if (g->buckets[i] >= g->buckets[best]) best = i;
  return best;
}

/* The scratch arrays of a downsize. */
typedef struct merge_scratch {
  gh_scratch offsets;   /* per bucket of the halved subtable: where its residuals go */
  gh_scratch residuals; /* their keys, values and failed flags, in one allocation */
} merge_scratch;

static void free_merge_scratch(gh_table *t, merge_scratch *m, void *stream) {
  gh__scratch_free(t, &m->offsets, stream);
  gh__scratch_free(t, &m->residuals, stream);
}

/* Halves subtable i: old buckets 2b and 2b + 1 merge into b; what does not fit (the residuals)
 * is inserted into the other subtables. All or nothing: when a residual finds no room, the ones
 * placed are erased again and subtable i stays as it was. 1 in *done when it was halved. */
static gh_status downsize(gh_table *t, const gh_dy_backend *be, unsigned i, int *done, void *stream) {
  gh_dy_table *s = state(t);
  const gh_dy_geometry *g = &s->geometry;
  const uint64_t buckets = g->buckets[i] / 2u;
  merge_scratch m;
  memset(&m, 0, sizeof m);
  *done = 0;
  gh_stopwatch watch;
  gh__stopwatch_start(t, &watch, stream);
  gh_dy_subtable halved;
  gh_status status = new_subtable(t, &halved, buckets, stream);
  if (status != GH_OK) {
    s->resize_seconds += gh__stopwatch_seconds(t, &watch, stream);
    return status;
  }
  gh_dy_bulk a = move_args(s, i, &halved);
  status = gh__scratch_alloc(t, &m.offsets, (buckets + 1u) * sizeof(uint64_t));
  a.residuals = (uint64_t *)m.offsets.ptr;
  if (status == GH_OK) status = gh__fill(t, a.residuals + buckets, 0, sizeof(uint64_t), stream);
  if (status == GH_OK) status = run_bulk(t, be, &a, GH_DY_MERGE_COUNT, buckets, stream);
  if (status == GH_OK) status = gh__exclusive_sum_u64(t, a.residuals, a.residuals, buckets + 1u, stream);
  uint64_t residuals = 0;
  if (status == GH_OK) status = gh__to_host(t, &residuals, a.residuals + buckets, sizeof residuals, stream);
  const size_t residual_keys_bytes = line_multiple(residuals * (g->key_bits / 8u));
  const size_t residual_values_bytes = line_multiple(residuals * g->value_bytes);
  if (status == GH_OK) status = gh__scratch_alloc(t, &m.residuals, residual_keys_bytes + residual_values_bytes + residuals);
  char *residual_keys = (char *)m.residuals.ptr;
  uint8_t *residual_failed = (uint8_t *)m.residuals.ptr + residual_keys_bytes + residual_values_bytes;
  a.residual_keys = residual_keys;
  a.residual_values = residual_keys + residual_keys_bytes;
  if (status == GH_OK) status = run_bulk(t, be, &a, GH_DY_MERGE, buckets, stream);
  gh_dy_counters after;
  memset(&after, 0, sizeof after);
  if (status == GH_OK && residuals) {
    const gh_dy_place p = {residual_keys, g->value_bytes ? a.residual_values : NULL, residuals, GH_KEEP_FIRST,
                           residual_failed, 0, i, 0, 0};
    status = gh__dy_reset_pass(t, stream);
    if (status == GH_OK) status = be->place(t, &p, stream);
    if (status == GH_OK) status = read_counters(t, &after, stream);
    /* No room for some: take back those placed; subtable i still holds them all. */
    if (status == GH_OK && after.failed)
      status = be->erase(t, residual_keys, residuals, residual_failed, i, NULL, stream);
  }
  /* The residuals now count in the subtables that took them. */
  if (status == GH_OK && !after.failed && residuals) {
    const unsigned long long keys_i = after.keys[i] - residuals, size = after.size - residuals;
    status = gh__copy(t, &s->counters->keys[i], &keys_i, sizeof keys_i, stream);
    if (status == GH_OK) status = gh__copy(t, &s->counters->size, &size, sizeof size, stream);
  }
  if (status == GH_OK && !after.failed) {
    replace_subtable(t, i, &halved, buckets, stream);
    s->downsizes += 1;
    *done = 1;
  } else {
    free_subtable(t, &halved, buckets, stream);
  }
  free_merge_scratch(t, &m, stream);
  s->resize_seconds += gh__stopwatch_seconds(t, &watch, stream);
  return status;
}

/* Doubles the smallest subtables until `keys` fit at fill_max. Out of memory stops it without
 * error: the table holds what it holds, and inserts that find no room are reported. */
static gh_status grow_for(gh_table *t, const gh_dy_backend *be, uint64_t keys, void *stream) {
  gh_dy_table *s = state(t);
  while ((double)keys > t->config.fill_max * (double)total_slots(&s->geometry)) {
    const gh_status status = upsize(t, be, smallest(&s->geometry), stream);
    if (status == GH_ERR_OUT_OF_MEMORY) {
      gh__clear_error(t);
      s->growth_starved = 1;
      return GH_OK;
    }
    if (status != GH_OK) return status;
  }
  s->growth_starved = 0;
  return GH_OK;
}

/* Halves the largest subtables while theta is below fill_min and one is above the size the
 * config's capacity gave (the floor: a table sized ahead never shrinks below it). A halving that finds no room for its residuals, or no memory, ends it without error.
 * *c: the counters, as read just before (a wait saved), read again after each halving. */
static gh_status shrink_to_bounds(gh_table *t, const gh_dy_backend *be, gh_dy_counters *c, void *stream) {
  gh_dy_table *s = state(t);
  for (int fresh = 1;; fresh = 0) {
    gh_status status = fresh ? GH_OK : read_counters(t, c, stream);
    if (status != GH_OK) return status;
    const uint64_t keys = stored_keys(c, s->geometry.tables) - c->side;
    const unsigned i = largest(&s->geometry);
    if ((double)keys >= t->config.fill_min * (double)total_slots(&s->geometry) || s->geometry.buckets[i] <= s->floor_buckets) {
      s->shrink_blocked = 0;
      return GH_OK;
    }
    int done = 0;
    status = downsize(t, be, i, &done, stream);
    if (status == GH_ERR_OUT_OF_MEMORY || (status == GH_OK && !done)) {
      gh__clear_error(t);
      s->shrink_blocked = 1;
      return GH_OK;
    }
    if (status != GH_OK) return status;
  }
}

/* Sets the subtable choice of new keys from the keys each subtable holds (counters just read). */
static void refresh_choice(gh_table *t, const gh_dy_counters *c) { gh__dy_set_choice(&state(t)->geometry, c->keys); }

/* ---- Insert and erase ----------------------------------------------------------------------------- */

/* The flagged set (dycuckoo_bulk.h) in one scratch block: keys, values, a failed byte an entry. */
typedef struct flagged_set {
  gh_scratch block;
  uint64_t capacity;
  void *keys, *values;
  uint8_t *failed;
} flagged_set;

static size_t to_16(size_t bytes) { return (bytes + 15u) / 16u * 16u; }

/* The m inputs flagged in a->claim_flags (positions of a->keys_in / values_in; copies of a key among
 * them), each key once in a new flagged set with its copies' values merged: one pass over the chunk, no sort and
 * nothing read back (the merge path it replaced gathered, sorted and run-length encoded them, a
 * dozen launches and a wait, for the few keys a chunk flags). */
static gh_status collect_flagged(gh_table *t, const gh_dy_backend *be, flagged_set *set, gh_dy_bulk *a, uint64_t chunk,
                                 uint64_t m, void *stream) {
  const gh_dy_geometry *g = &state(t)->geometry;
  set->capacity = 32u;
  while (set->capacity < 2u * m) set->capacity *= 2u;
  const size_t key_bytes = to_16(set->capacity * (g->key_bits / 8u)), value_bytes = to_16(set->capacity * g->value_bytes);
  gh_status status = gh__scratch_alloc_on(t, &set->block, key_bytes + value_bytes + set->capacity, stream);
  if (status != GH_OK) return status;
  set->keys = set->block.ptr;
  set->values = (char *)set->block.ptr + key_bytes;
  set->failed = (uint8_t *)set->block.ptr + key_bytes + value_bytes;
  const int combines = a->policy == GH_ADD || a->policy == GH_MIN || a->policy == GH_MAX;
  status = gh__fill(t, set->keys, 0xFF, key_bytes, stream); /* the empty key, all ones at either width */
  if (status == GH_OK && a->values_in && combines && gh_dy_values_are_words(g))
    status = gh__fill(t, set->values, a->policy == GH_MIN ? 0xFF : 0, value_bytes, stream);
  if (status == GH_OK) status = gh__fill(t, set->failed, 0, set->capacity, stream);
  a->set_keys = set->keys;
  a->set_values = set->values;
  a->set_failed = set->failed;
  a->set_mask = set->capacity - 1u;
  return status == GH_OK ? run_bulk(t, be, a, GH_DY_COLLECT, chunk, stream) : status;
}

/* Runs place passes over p (rerun after the first), the smallest subtable doubling before each
 * rerun, until every key fits or memory runs out. *c: the counters after the last pass. */
static gh_status place_until_stored(gh_table *t, const gh_dy_backend *be, gh_dy_place *p, gh_dy_counters *c,
                                    void *stream) {
  gh_dy_table *s = state(t);
  gh_status status = gh__dy_reset_pass(t, stream);
  if (status == GH_OK) status = be->place(t, p, stream);
  if (status == GH_OK) status = read_counters(t, c, stream);
  /* Keys that found no room (a crowded bucket in every subtable): the smallest subtable doubles
   * and they run again. */
  while (status == GH_OK && c->failed > 0) {
    status = upsize(t, be, smallest(&s->geometry), stream);
    if (status == GH_ERR_OUT_OF_MEMORY) break;
    p->rerun = 1;
    if (status == GH_OK) refresh_choice(t, c);
    if (status == GH_OK) status = gh__dy_reset_pass(t, stream);
    if (status == GH_OK) status = be->place(t, p, stream);
    if (status == GH_OK) status = read_counters(t, c, stream);
  }
  if (status == GH_ERR_OUT_OF_MEMORY && c->failed > 0) {
    gh__clear_error(t);
    s->growth_starved = 1;
    return GH_OK;
  }
  return status;
}

/* Stores the m keys of positions [begin, begin + chunk) that the claim pass flagged (flags): each
 * once (collect_flagged), then placed with moves (place_until_stored). Keys that still found no
 * room (memory ran out) are flagged in failed_out and counted in *failed. Without memory for the
 * set, the keys go one at a time instead: slow, but it needs none, so a failure never leaves the
 * batch half done. *c: the counters after it. */
static gh_status place_flagged(gh_table *t, const gh_dy_backend *be, uint8_t *flags, uint64_t begin, uint64_t chunk,
                               uint64_t m, const void *keys, const void *values, gh_dup_policy policy,
                               uint8_t *failed_out, uint64_t *failed, gh_dy_counters *c, void *stream) {
  gh_dy_table *s = state(t);
  const gh_dy_geometry *g = &s->geometry;
  const char *chunk_keys = (const char *)keys + begin * (g->key_bits / 8u);
  const char *chunk_values = values ? (const char *)values + begin * g->value_bytes : NULL;
  flagged_set set;
  memset(&set, 0, sizeof set);
  gh_dy_bulk a;
  memset(&a, 0, sizeof a);
  a.policy = (int)policy;
  a.claim_flags = flags;
  a.keys_in = chunk_keys;
  a.values_in = chunk_values;
  gh_status status = collect_flagged(t, be, &set, &a, chunk, m, stream);
  if (status == GH_OK) {
    gh_dy_place p = {set.keys, chunk_values ? set.values : NULL, set.capacity, (int)policy, set.failed, 0, g->tables, 0, 0};
    status = place_until_stored(t, be, &p, c, stream);
    if (status == GH_OK && c->failed > 0) {
      a.failed_out = failed_out ? failed_out + begin : NULL;
      a.flagged = &s->counters->flagged;
      status = run_bulk(t, be, &a, GH_DY_FLAG_UNPLACED, chunk, stream);
      if (status == GH_OK) status = read_counters(t, c, stream);
      if (status == GH_OK) *failed += c->flagged;
    }
  } else if (status == GH_ERR_OUT_OF_MEMORY) {
    gh__clear_error(t);
    gh_dy_place p = {chunk_keys, chunk_values, chunk, (int)policy, flags, 1, g->tables, 1, 0};
    status = place_until_stored(t, be, &p, c, stream);
    /* What is still flagged did not fit. */
    if (status == GH_OK && c->failed > 0) {
      if (failed_out) status = gh__copy(t, failed_out + begin, flags, chunk, stream);
      *failed += c->failed;
    }
  }
  gh__scratch_free(t, &set.block, stream);
  return status;
}

/* A claim pass over the n keys of p (its flags zeroed here), then the keys it flagged placed
 * (place_flagged: keys and values are the batch, p's keys its positions begin on). *c: the
 * counters after it. */
static gh_status claim_then_place(gh_table *t, const gh_dy_backend *be, const gh_dy_place *p, uint64_t begin,
                                  const void *keys, const void *values, uint8_t *failed_out, uint64_t *failed,
                                  gh_dy_counters *c, void *stream) {
  gh_status status = gh__fill(t, p->failed, 0, p->n, stream);
  if (status == GH_OK) status = gh__dy_reset_pass(t, stream);
  if (status == GH_OK) status = be->claim(t, p, stream);
  if (status == GH_OK) status = read_counters(t, c, stream);
  if (status == GH_OK && c->failed)
    status = place_flagged(t, be, p->failed, begin, p->n, c->failed, keys, values, (gh_dup_policy)p->policy,
                           failed_out, failed, c, stream);
  return status;
}

/* ---- Building an empty table by regions (dycuckoo_bulk.h) ---------------------------------------- */

/* Whether a chunk goes by regions: subtables that hold no keys (a key stored before can then be
 * nowhere, and the build needs to look in no other bucket than the key's first), a key and its
 * value in one word, no per-key report asked for (the partition does not keep input positions),
 * no device view given out (the caller's kernels could change the table while a region is built
 * apart from it and written over it), and gh_config.bulk_min_keys' size rule. */
static int regions_apply(gh_table *t, const gh_dy_backend *be, const gh_dy_place *p, const uint8_t *failed_out,
                         uint64_t regions) {
  const gh_dy_table *s = state(t);
  const uint64_t least = t->config.bulk_min_keys;
  if (p->look_tables != 0 || failed_out != NULL || s->published != NULL || !gh_dy_regions_fit(&s->geometry)) return 0;
  if (p->n == 0 || (least != 0 && p->n < least) || regions > be->max_regions) return 0;
  return least != 0 || be->regions_by_default(t, p->n, regions, total_slots(&s->geometry));
}

/* The chunk p by regions when regions_apply (*taken = 1), its passed keys then claimed and placed
 * as any chunk's; else *taken = 0 and nothing was done. All the scratch comes first (the chunk's
 * words, then their sorted copy with the partition's work space): without it, or when the
 * partition shows a run several regions long (a few keys repeated: a block would apply them one
 * after another), the claim pass takes the chunk as it would have. The sorted copy goes before the
 * passed keys are claimed, whose placing may have to grow the table. */
static gh_status insert_by_regions(gh_table *t, const gh_dy_backend *be, gh_dy_place *p, const uint8_t *failed_out,
                                   uint64_t *failed, gh_dy_counters *c, int *taken, void *stream) {
  gh_dy_table *s = state(t);
  const gh_dy_geometry *g = &s->geometry;
  gh_dy_by_regions r;
  memset(&r, 0, sizeof r);
  r.map = gh_dy_regions_of(g);
  r.regions = r.map.first[g->tables];
  *taken = 0;
  if (!regions_apply(t, be, p, failed_out, r.regions)) return GH_OK;
  gh_scratch words = {NULL, 0, s->kind, 0, NULL}, sorting = words;
  const size_t copy_bytes = (size_t)p->n * sizeof(uint64_t);
  r.work_bytes = be->regions_partition_bytes(t, p->n, r.regions);
  if (gh__scratch_alloc_on(t, &words, copy_bytes, stream) != GH_OK ||
      gh__scratch_alloc_on(t, &sorting, copy_bytes + r.work_bytes, stream) != GH_OK) {
    gh__clear_error(t);
    gh__scratch_free(t, &words, stream);
    return GH_OK;
  }
  r.keys = p->keys, r.values = p->values, r.n = p->n, r.policy = p->policy;
  r.words = words.ptr;
  r.sorted = sorting.ptr;
  r.work = (char *)sorting.ptr + copy_bytes;
  uint64_t longest = 0;
  gh_status status = be->regions_partition(t, &r, &longest, stream);
  if (status == GH_OK && !gh_partition_too_skewed(longest, GH_REGION_WORDS)) {
    *taken = 1;
    r.passed_keys = r.words;
    r.passed_values = (char *)r.words + p->n * (g->key_bits / 8u);
    status = gh__dy_reset_pass(t, stream);
    if (status == GH_OK) status = be->regions_build(t, &r, stream);
    if (status == GH_OK) status = read_counters(t, c, stream);
    gh__scratch_free(t, &sorting, stream);
    /* The passed keys are stored nowhere: the claim pass needs no lookup. */
    gh_dy_place passed = {r.passed_keys, p->values ? r.passed_values : NULL, c->cursor, p->policy, p->failed, 0,
                          g->tables, 0, 0};
    if (status == GH_OK && passed.n)
      status = claim_then_place(t, be, &passed, 0, passed.keys, passed.values, NULL, failed, c, stream);
  }
  gh__scratch_free(t, &sorting, stream);
  gh__scratch_free(t, &words, stream);
  return status;
}

static uint64_t table_keys(const gh_dy_table *s, const gh_dy_counters *c) {
  return stored_keys(c, s->geometry.tables) - c->side;
}

/* How a call that may have resized ends, failed or not: a subtable replaced before a later step failed
 * must still reach the device views' record (its old arrays are freed). The call's own failure comes
 * first. */
static gh_status publish_after(gh_table *t, gh_status status, void *stream) {
  if (status == GH_OK) return gh__dy_publish(t, stream);
  if (state(t)->published != NULL) {
    char message[sizeof t->last_error];
    memcpy(message, t->last_error, sizeof message);
    gh__dy_publish(t, stream); /* (a failure of its own would only hide the first one's message) */
    memcpy(t->last_error, message, sizeof message);
  }
  return status;
}

/* The batch goes in chunks no larger than the room below fill_max (one chunk when the table has
 * room for the whole batch): before each, the smallest subtables double until there is room for
 * the rest or an eighth of the table, so theta never passes fill_max even when every key is new,
 * while a batch of keys already stored (which needs no room) grows the table by no more than room
 * for an eighth of it. Each chunk is a claim pass, then its flagged keys are placed (before any
 * later resize can open a bucket they found full). */
gh_status gh__dy_insert(gh_table *t, const gh_dy_backend *be, const void *keys, const void *values, uint64_t n,
                        gh_dup_policy policy, uint8_t *failed_out, uint64_t *failed, void *stream) {
  gh_dy_table *s = state(t);
  const gh_dy_geometry *g = &s->geometry;
  gh_scratch flags;
  gh_dy_counters c;
  *failed = 0;
  gh_status status = gh__scratch_alloc_on(t, &flags, n, stream);
  if (status != GH_OK) return status;
  if (failed_out) status = gh__fill(t, failed_out, 0, n, stream);
  /* (each chunk's passes end with the counters read: only the first chunk reads them first) */
  if (status == GH_OK) status = read_counters(t, &c, stream);
  for (uint64_t begin = 0; status == GH_OK && begin < n;) {
    const uint64_t rest = n - begin, eighth = total_slots(g) / 8u + 1u;
    status = grow_for(t, be, table_keys(s, &c) + (rest < eighth ? rest : eighth), stream);
    if (status != GH_OK) break;
    const double limit = t->config.fill_max * (double)total_slots(g) - (double)table_keys(s, &c);
    const uint64_t room = s->growth_starved ? rest : limit < 1.0 ? 1u : (uint64_t)limit;
    const uint64_t chunk = rest < room ? rest : room;
    refresh_choice(t, &c);
    const char *at = (const char *)keys + begin * (g->key_bits / 8u);
    gh_dy_place p = {at, values ? (const char *)values + begin * g->value_bytes : NULL, chunk, (int)policy,
                     (uint8_t *)flags.ptr, 0, g->tables, 0, 0};
    for (unsigned i = 0; i < g->tables; ++i) p.look_tables |= (c.keys[i] > 0u) << i;
    int by_regions = 0;
    status = insert_by_regions(t, be, &p, failed_out, failed, &c, &by_regions, stream);
    if (status == GH_OK && !by_regions)
      status = claim_then_place(t, be, &p, begin, keys, values, failed_out, failed, &c, stream);
    begin += chunk;
  }
  gh__scratch_free(t, &flags, stream);
  s->insert_failures += *failed;
  /* A batch of keys already present can leave theta below fill_min in a table sized by capacity. */
  if (status == GH_OK) status = shrink_to_bounds(t, be, &c, stream);
  if (status == GH_OK) refresh_choice(t, &c);
  return publish_after(t, status, stream);
}

gh_status gh__dy_erase(gh_table *t, const gh_dy_backend *be, const void *keys, uint64_t n, uint8_t *erased_out,
                       uint64_t *erased, void *stream) {
  gh_dy_counters c;
  gh_status status = gh__dy_reset_pass(t, stream);
  if (status == GH_OK) status = be->erase(t, keys, n, NULL, state(t)->geometry.tables, erased_out, stream);
  if (status == GH_OK) status = read_counters(t, &c, stream);
  if (status != GH_OK) return status;
  *erased = c.erased;
  status = shrink_to_bounds(t, be, &c, stream);
  if (status == GH_OK) refresh_choice(t, &c);
  return publish_after(t, status, stream);
}

/* Every subtable back to the size the table was created with, no key. All or nothing. */
gh_status gh__dy_clear(gh_table *t, void *stream) {
  gh_dy_table *s = state(t);
  gh_dy_subtable fresh[GH_DY_MAX_TABLES];
  gh_status status = GH_OK;
  unsigned made = 0;
  const uint64_t floor = s->floor_buckets;
  for (; status == GH_OK && made < s->geometry.tables; ++made) status = new_subtable(t, &fresh[made], floor, stream);
  if (status != GH_OK) {
    for (unsigned i = 0; i + 1 < made; ++i) free_subtable(t, &fresh[i], floor, stream);
    return status;
  }
  status = gh__fill(t, s->side, 0, gh_dy_side_bytes(&s->geometry), stream);
  if (status == GH_OK) status = gh__fill(t, s->counters->keys, 0, offsetof(gh_dy_counters, size) + sizeof s->counters->size, stream);
  if (status != GH_OK) {
    for (unsigned i = 0; i < made; ++i) free_subtable(t, &fresh[i], floor, stream);
    return status;
  }
  for (unsigned i = 0; i < s->geometry.tables; ++i) {
    free_subtable(t, &s->sub[i], s->geometry.buckets[i], stream);
    s->sub[i] = fresh[i];
    s->geometry.buckets[i] = floor;
  }
  const unsigned long long none[GH_DY_MAX_TABLES] = {0};
  gh__dy_set_choice(&s->geometry, none);
  note_capacity(t);
  return gh__dy_publish(t, stream);
}

/* ---- Host copies: export, validate --------------------------------------------------------------- */

/* The subtables on the host: the table's own arrays (host backend) or copies of them. */
typedef struct snapshot {
  const void *keys[GH_DY_MAX_TABLES];
  const void *values[GH_DY_MAX_TABLES];
  const uint32_t *locks[GH_DY_MAX_TABLES];
  gh_dy_counters counters;
  uint64_t side[(GH_DY_SIDE_HEADER + GH_DY_MAX_VALUE_BYTES) / 8u];
  void *copy;
  size_t copy_bytes;
} snapshot;

static gh_status take_snapshot(gh_table *t, snapshot *shot) {
  gh_dy_table *s = state(t);
  const gh_dy_geometry *g = &s->geometry;
  memset(shot, 0, sizeof *shot);
  gh_status status = read_counters(t, &shot->counters, NULL);
  if (status == GH_OK)
    status = gh__to_host(t, shot->side, s->side, gh_dy_side_bytes(g), NULL);
  if (status != GH_OK) return status;
  if (s->kind == GH_MEMORY_HOST) {
    for (unsigned i = 0; i < g->tables; ++i) {
      shot->keys[i] = s->sub[i].keys;
      shot->values[i] = s->sub[i].values;
      shot->locks[i] = s->sub[i].locks;
    }
    return GH_OK;
  }
  for (unsigned i = 0; i < g->tables; ++i)
    shot->copy_bytes += keys_bytes(g->buckets[i]) + values_bytes(g, g->buckets[i]) + locks_bytes(g->buckets[i]);
  shot->copy = gh__alloc(t, shot->copy_bytes, GH_MEMORY_HOST);
  if (shot->copy == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no host memory for a %zu-byte copy of the table; it is unchanged",
                    shot->copy_bytes);
  char *at = (char *)shot->copy;
  for (unsigned i = 0; status == GH_OK && i < g->tables; ++i) {
    const uint64_t buckets = g->buckets[i];
    shot->keys[i] = at;
    status = gh__to_host(t, at, s->sub[i].keys, keys_bytes(buckets), NULL);
    at += keys_bytes(buckets);
    shot->values[i] = at;
    if (status == GH_OK && g->value_bytes) status = gh__to_host(t, at, s->sub[i].values, values_bytes(g, buckets), NULL);
    at += values_bytes(g, buckets);
    shot->locks[i] = (const uint32_t *)at;
    if (status == GH_OK) status = gh__to_host(t, at, s->sub[i].locks, locks_bytes(buckets), NULL);
    at += locks_bytes(buckets);
  }
  return status;
}

static void drop_snapshot(gh_table *t, snapshot *shot) {
  if (shot->copy) gh__free(t, shot->copy, shot->copy_bytes, GH_MEMORY_HOST);
  shot->copy = NULL;
}

gh_status gh__dy_export_host(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  const gh_dy_geometry *g = &state(t)->geometry;
  snapshot shot;
  (void)stream;
  gh_status status = take_snapshot(t, &shot);
  if (status != GH_OK) return status;
  uint64_t written = 0;
  if (gh_dy_side_present(shot.side)) {
    gh__write_word(keys_out, 0, g->key_bits, gh_dy_empty_key(g));
    if (values_out) gh_dy_value_copy(g, values_out, gh_dy_side_value(shot.side));
    written = 1;
  }
  for (unsigned i = 0; i < g->tables; ++i)
    for (uint64_t b = 0; b < g->buckets[i]; ++b)
      for (unsigned k = 0; k < g->slots; ++k) {
        const uint64_t key = gh_dy_line_key(g, (const char *)shot.keys[i] + b * GH_DY_LINE_BYTES, k);
        if (key == gh_dy_empty_key(g)) continue;
        gh__write_word(keys_out, written, g->key_bits, key);
        if (values_out)
          gh_dy_value_copy(g, (char *)values_out + written * g->value_bytes, gh_dy_value_at(g, (void *)shot.values[i], b, k));
        written += 1;
      }
  drop_snapshot(t, &shot);
  *count = written;
  return GH_OK;
}

/* Describes the first violation into message; 0 when the snapshot is sound. */
static int check_snapshot(const gh_table *t, const snapshot *shot, char *message, size_t size) {
  const gh_dy_table *s = (const gh_dy_table *)t->impl;
  const gh_dy_geometry *g = &s->geometry;
  const uint64_t empty = gh_dy_empty_key(g);
  uint64_t min_buckets = g->buckets[0], max_buckets = g->buckets[0], keys = 0;
  for (unsigned i = 0; i < g->tables; ++i) {
    if (g->buckets[i] < min_buckets) min_buckets = g->buckets[i];
    if (g->buckets[i] > max_buckets) max_buckets = g->buckets[i];
    const uint64_t doublings = g->buckets[i] / s->floor_buckets;
    if (g->buckets[i] % s->floor_buckets != 0 || (doublings & (doublings - 1u)) != 0) {
      snprintf(message, size, "subtable %u has %llu buckets, not %llu (its size at creation) times a power of two", i,
               (unsigned long long)g->buckets[i], (unsigned long long)s->floor_buckets);
      return 1;
    }
    uint64_t live = 0;
    for (uint64_t b = 0; b < g->buckets[i]; ++b) {
      if (shot->locks[i][b] != GH_DY_LOCK_FREE) {
        snprintf(message, size, "subtable %u bucket %llu: its lock is held between calls", i, (unsigned long long)b);
        return 1;
      }
      const void *line = (const char *)shot->keys[i] + b * GH_DY_LINE_BYTES;
      for (unsigned k = 0; k < g->slots; ++k) {
        const uint64_t key = gh_dy_line_key(g, line, k);
        if (key == empty) continue;
        live += 1;
        if (gh_dy_bucket(g, i, key) != b) {
          snprintf(message, size, "key %llu sits in bucket %llu of subtable %u; its bucket there is %llu",
                   (unsigned long long)key, (unsigned long long)b, i, (unsigned long long)gh_dy_bucket(g, i, key));
          return 1;
        }
      }
    }
    if (live != shot->counters.keys[i]) {
      snprintf(message, size, "subtable %u holds %llu keys but its counter says %llu", i, (unsigned long long)live,
               shot->counters.keys[i]);
      return 1;
    }
    keys += live;
  }
  if (max_buckets > 2u * min_buckets) {
    snprintf(message, size, "subtable sizes differ by more than 2x: %llu and %llu buckets", (unsigned long long)min_buckets,
             (unsigned long long)max_buckets);
    return 1;
  }
  if (gh_load_u32(shot->side) != GH_DY_LOCK_FREE) {
    snprintf(message, size, "the all-ones key's side entry is locked between calls");
    return 1;
  }
  const int side_present = gh_dy_side_present(shot->side);
  if ((unsigned long long)side_present != shot->counters.side) {
    snprintf(message, size, "the all-ones key's side slot says %s but its counter says %llu",
             side_present ? "present" : "absent", shot->counters.side);
    return 1;
  }
  if (shot->counters.size != keys + shot->counters.side) {
    snprintf(message, size, "the size counter says %llu, the subtables and the side entry hold %llu", shot->counters.size,
             (unsigned long long)(keys + shot->counters.side));
    return 1;
  }
  /* theta within [fill_min, fill_max]: above only where a growth lacked memory, below only where
   * no subtable can halve (all at the floor) or the last halving found no room. */
  const double theta = (double)keys / (double)total_slots(g);
  if (theta > t->config.fill_max && !s->growth_starved) {
    snprintf(message, size, "theta = %.4f is above fill_max = %g", theta, t->config.fill_max);
    return 1;
  }
  /* (kernels erasing through a device view leave theta where they leave it: resizing is the host's,
   * at its next call) */
  const int erased_on_device = s->published != NULL && keys < s->published_keys;
  if (theta < t->config.fill_min && max_buckets > s->floor_buckets && !s->shrink_blocked && !erased_on_device) {
    snprintf(message, size, "theta = %.4f is below fill_min = %g with subtables that could halve", theta,
             t->config.fill_min);
    return 1;
  }
  /* No key twice across subtables. */
  uint64_t *all = (uint64_t *)malloc((keys ? keys : 1u) * sizeof *all);
  if (all == NULL) {
    snprintf(message, size, "no host memory to check %llu keys for duplicates", (unsigned long long)keys);
    return 2;
  }
  uint64_t at = 0;
  for (unsigned i = 0; i < g->tables; ++i)
    for (uint64_t b = 0; b < g->buckets[i]; ++b)
      for (unsigned k = 0; k < g->slots; ++k) {
        const uint64_t key = gh_dy_line_key(g, (const char *)shot->keys[i] + b * GH_DY_LINE_BYTES, k);
        if (key != empty) all[at++] = key;
      }
  int repeat = 0;
  uint64_t twice = 0;
  gh__distinct_keys_host(all, at, &repeat, &twice);
  free(all);
  if (repeat) snprintf(message, size, "key %llu is stored twice", (unsigned long long)twice);
  return repeat;
}

gh_status gh__dy_validate(gh_table *t) {
  snapshot shot;
  gh_status status = take_snapshot(t, &shot);
  if (status == GH_OK) {
    char message[GH_ERROR_CAPACITY - 64];
    const int bad = check_snapshot(t, &shot, message, sizeof message);
    if (bad == 1) status = gh__fail(t, GH_ERR_CORRUPT, "validate: %s", message);
    if (bad == 2) status = gh__fail(t, GH_ERR_OUT_OF_MEMORY, "validate: %s", message);
  }
  drop_snapshot(t, &shot);
  return status;
}

gh_status gh__dy_stats(gh_table *t, gh_stats *stats) {
  gh_dy_table *s = state(t);
  gh_dy_counters c;
  const gh_status status = read_counters(t, &c, NULL);
  if (status != GH_OK) return status;
  stats->subtables = s->geometry.tables;
  for (unsigned i = 0; i < s->geometry.tables; ++i) {
    stats->subtable_buckets[i] = s->geometry.buckets[i];
    stats->subtable_keys[i] = c.keys[i];
  }
  stats->grows = s->upsizes;
  stats->upsizes = s->upsizes;
  stats->downsizes = s->downsizes;
  stats->resize_seconds = s->resize_seconds;
  stats->evictions = c.evictions;
  stats->longest_search = c.longest_search;
  stats->insert_failures = s->insert_failures;
  return GH_OK;
}
