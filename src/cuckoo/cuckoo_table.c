/* cuckoo_table.c - the cuckoo design over the backend primitives: config checks, sizing, hash
 * constants, the insert phases with transparent restarts and growth, the compacting and
 * multivalue variants, and validate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/design.h"
#include "core/words.h"
#include "cuckoo/cuckoo_table.h"

/* The smallest table factors per d that build reliably (the chapter's "smallest practical table
 * sizes", section 4.3.1.1); index = d. */
static const double min_table_factor[GH_CK_MAX_FUNCTIONS + 1] = {0, 0, 2.1, 1.1, 1.03, 1.02};
#define GH_CK_MAX_TABLE_FACTOR 16.0
/* Slots are addressed with 32-bit hashes. */
#define GH_CK_MAX_SLOTS 0xFFFFFFFEull
/* Restarts at one size before the table grows by GH_CK_GROWTH_STEP. */
#define GH_CK_RESTARTS_PER_SIZE 3u
#define GH_CK_GROWTH_STEP 1.125
/* A batch that overflows the capacity grows it by at least half, so growth amortises. */
#define GH_CK_GROWTH_MIN 1.5
/* Chain limit while a batch that may repeat keys may overflow the table (see map_insert). */
#define GH_CK_OVERFLOW_PROBE_EVICTIONS 8u

static gh_ck_table *state(gh_table *t) { return (gh_ck_table *)t->impl; }

gh_status gh__cuckoo_check_config(const gh_config *c, char *message, size_t size) {
  const unsigned d = c->hash_functions;
  if (d < 2 || d > GH_CK_MAX_FUNCTIONS) {
    if (size > 0) snprintf(message, size, "hash_functions = %u must be 2, 3, 4 or 5", d);
    return GH_ERR_INVALID_ARGUMENT;
  }
  if (c->hash_family != GH_HASH_MULTIPLY && c->hash_family != GH_HASH_XOR) {
    if (size > 0) snprintf(message, size, "hash_family = %d is not a gh_hash_family value", (int)c->hash_family);
    return GH_ERR_INVALID_ARGUMENT;
  }
  if (!(c->table_factor >= min_table_factor[d]) || !(c->table_factor <= GH_CK_MAX_TABLE_FACTOR)) {
    if (size > 0)
      snprintf(message, size, "table_factor = %g is outside [%.2f, %.0f]: %u hash functions cannot hold a "
               "table fuller than 1/%.2f of its slots reliably", c->table_factor, min_table_factor[d],
               GH_CK_MAX_TABLE_FACTOR, d, min_table_factor[d]);
    return GH_ERR_INVALID_ARGUMENT;
  }
  if ((double)c->capacity * c->table_factor > (double)GH_CK_MAX_SLOTS) {
    if (size > 0)
      snprintf(message, size, "capacity = %llu with table_factor %g needs more than 2^32 - 2 slots, the most a "
               "cuckoo table addresses", (unsigned long long)c->capacity, c->table_factor);
    return GH_ERR_INVALID_ARGUMENT;
  }
  return GH_OK;
}

static uint64_t ceil_u64(double x) {
  const uint64_t whole = (uint64_t)x;
  return whole + ((double)whole < x);
}

static uint64_t slots_for(uint64_t capacity, double factor) {
  const double wanted = (double)ceil_u64((double)capacity * factor);
  uint64_t slots = wanted < 2.0 ? 2u : (uint64_t)wanted;
  return slots > GH_CK_MAX_SLOTS ? GH_CK_MAX_SLOTS : slots;
}

/* The map's slot format: multivalue tables map keys to 32-bit ids. */
static gh_slot_format map_format(const gh_config *c) {
  return gh_slot_format_make(c->key_bits, c->variant == GH_VARIANT_MULTIVALUE ? 32u : c->value_bits);
}

gh_status gh__cuckoo_estimate(const gh_config *c, size_t *host_bytes, size_t *device_bytes) {
  const gh_slot_format f = map_format(c);
  size_t table = (size_t)(slots_for(c->capacity, c->table_factor) + 1) * f.slot_bytes + sizeof(gh_ck_counters);
  if (c->variant == GH_VARIANT_COMPACTING) table += (size_t)c->capacity * (c->key_bits / 8u);
  const int on_device = c->backend == GH_BACKEND_CUDA;
  if (host_bytes) *host_bytes = sizeof(gh_table) + sizeof(gh_ck_table) + (on_device ? 0 : table);
  if (device_bytes) *device_bytes = on_device ? table : 0;
  return GH_OK;
}

void gh__cuckoo_force_failures(gh_table *t, unsigned attempts) {
  if (t != NULL && t->config.design == GH_CUCKOO) state(t)->forced_failures = attempts;
}

/* ---- Hash constants, sizing ------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Fresh random constants for the next build attempt (a derived from the seed and the attempt). */
static void draw_constants(gh_table *t) {
  gh_ck_table *w = state(t);
  gh_ck_geometry *g = &w->geometry;
  const uint64_t prime = g->format.key_bits == 32 ? GH_CK_PRIME32 : GH_CK_PRIME61;
  uint64_t x = t->config.seed ^ (w->attempts++ * 0xD1B54A32D192ED03ull);
  for (unsigned i = 0; i < GH_CK_MAX_FUNCTIONS; ++i) {
    g->a[i] = 1u + splitmix64(&x) % (prime - 1u);
    g->b[i] = splitmix64(&x) % prime;
  }
  if (w->forced_failures > 0) {
    w->forced_failures -= 1;
    for (unsigned i = 0; i < GH_CK_MAX_FUNCTIONS; ++i) {
      g->a[i] = g->a[0];
      g->b[i] = g->b[0];
    }
  }
}

/* The chapter's chain limit, 7 lg N, for N keys in the table. */
static void set_eviction_limit(gh_ck_geometry *g, uint64_t keys) {
  unsigned lg = 1;
  while (lg < 63 && (1ull << lg) < keys) ++lg;
  g->max_evictions = 7u * (lg < 4 ? 4 : lg);
}

static size_t entry_bytes(const gh_ck_table *w) { return w->geometry.format.slot_bytes; }

/* Allocates slots for `capacity` keys (replacing, not copying, the current ones) and clears them. */
static gh_status allocate_slots(gh_table *t, uint64_t capacity, void *stream) {
  gh_ck_table *w = state(t);
  const uint64_t slot_count = slots_for(capacity, t->config.table_factor);
  const size_t bytes = (size_t)(slot_count + 1) * entry_bytes(w);
  void *slots = gh__alloc(t, bytes, w->backend->kind);
  if (slots == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "could not allocate %zu bytes for %llu cuckoo slots", bytes,
                    (unsigned long long)slot_count);
  gh_status status = w->backend->fill(t, slots, 0xFF, bytes, stream);
  if (status != GH_OK) {
    gh__free(t, slots, bytes, w->backend->kind);
    return status;
  }
  /* The side slot moves with the slots. */
  if (w->slots != NULL) {
    status = w->backend->copy(t, (char *)slots + slot_count * entry_bytes(w),
                              (char *)w->slots + w->geometry.slot_count * entry_bytes(w), entry_bytes(w), stream);
    gh__free(t, w->slots, w->slots_bytes, w->backend->kind);
  }
  w->slots = slots;
  w->slots_bytes = bytes;
  w->geometry.slot_count = slot_count;
  w->geometry.slot_magic = gh_ck_magic(slot_count);
  w->capacity = capacity;
  t->config.capacity = capacity;
  return status;
}

static gh_status clear_main_slots(gh_table *t, void *stream) {
  gh_ck_table *w = state(t);
  w->main_keys = 0;
  return w->backend->fill(t, w->slots, 0xFF, (size_t)w->geometry.slot_count * entry_bytes(w), stream);
}

/* Empties the main slots and the side slot. */
static gh_status clear_all_slots(gh_table *t, void *stream) {
  gh_ck_table *w = state(t);
  w->main_keys = w->side_keys = 0;
  return w->backend->fill(t, w->slots, 0xFF, w->slots_bytes, stream);
}

/* ---- Building: placement with restarts and growth -------------------------------------------- */

/* Moves every key of the main slots plus entries[i] with failed[i] (every entry when failed is
 * NULL) into a fresh entry array, then empties the main slots, on `capacity` keys' worth of slots
 * when that is more than now, with fresh constants. On success *entries / *m describe the new
 * array (the old one is freed). On failure the table and the old array are untouched. */
static gh_status collect_and_reset(gh_table *t, void **entries, uint64_t *m, const uint8_t *failed,
                                   uint64_t extra, uint64_t capacity, void *stream) {
  gh_ck_table *w = state(t);
  const gh_ck_backend *b = w->backend;
  const uint64_t room = w->main_keys + extra;
  void *gathered = gh__alloc(t, (size_t)(room ? room : 1) * entry_bytes(w), b->kind);
  if (gathered == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no memory to rebuild the cuckoo table (%llu entries)",
                    (unsigned long long)room);
  uint64_t count = 0;
  gh_status status = b->gather(t, &w->geometry, *entries, failed, *m, gathered, &count, stream);
  if (status == GH_OK && capacity > w->capacity) {
    status = allocate_slots(t, capacity, stream);
    if (status == GH_OK) w->grows += 1;
  } else if (status == GH_OK) {
    status = clear_main_slots(t, stream);
  }
  if (status != GH_OK) {
    gh__free(t, gathered, (size_t)(room ? room : 1) * entry_bytes(w), b->kind);
    return status;
  }
  w->main_keys = 0;
  draw_constants(t);
  gh__free(t, *entries, (size_t)(*m ? *m : 1) * entry_bytes(w), b->kind);
  *entries = gathered;
  *m = count;
  return GH_OK;
}

/* Places m prepared entries; restarts with fresh constants until every entry is in. The table
 * grows when the keys it holds plus the entries left over exceed its capacity, and by 1/8 after a
 * few restarts at one size. overflow_limit (when not 0) caps the chains of attempts whose entries
 * may not fit. Frees the entry array. */
static gh_status place_all(gh_table *t, void *entries, uint64_t m, int policy, int may_repeat, unsigned overflow_limit,
                           void *stream) {
  gh_ck_table *w = state(t);
  const gh_ck_backend *b = w->backend;
  unsigned restarts_here = 0;
  gh_status status = GH_OK;
  uint8_t *failed = NULL;
  size_t failed_bytes = 0;
  while (m > 0) {
    if ((size_t)m > failed_bytes) {
      gh__free(t, failed, failed_bytes, b->kind);
      failed_bytes = (size_t)m;
      failed = (uint8_t *)gh__alloc(t, failed_bytes, b->kind);
      if (failed == NULL) {
        status = gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no memory for %llu placement flags", (unsigned long long)m);
        break;
      }
    }
    uint64_t placed = 0, gave_up = 0;
    set_eviction_limit(&w->geometry, w->main_keys + m);
    /* While the entries may overflow the table, chains are kept short: an overfull table then
     * fails fast and the restart grows it. */
    if (overflow_limit && w->main_keys + w->side_keys + m > w->capacity) w->geometry.max_evictions = overflow_limit;
    status = b->place(t, &w->geometry, entries, m, policy, failed, &placed, &gave_up, stream);
    if (status != GH_OK) break;
    w->main_keys += placed;
    if (gave_up == 0) break;
    /* An eviction chain gave up: rebuild from everything with fresh constants. Entries left over
     * whose key the table holds (repeats that never met their copy) merge first, so that only
     * genuinely new keys count towards the size the rebuild needs. */
    w->restarts += 1;
    status = b->absorb(t, &w->geometry, entries, failed, m, policy, &gave_up, stream);
    if (status != GH_OK) break;
    uint64_t capacity = w->capacity;
    const uint64_t needed = w->main_keys + w->side_keys + gave_up;
    if (needed > capacity) {
      /* needed may count repeats of a key several times: grow by at most 2x per restart. */
      const uint64_t most = capacity * 2u;
      capacity = ceil_u64((double)capacity * GH_CK_GROWTH_MIN);
      if (capacity < needed) capacity = needed < most ? needed : most;
      restarts_here = 0;
    } else if (++restarts_here >= GH_CK_RESTARTS_PER_SIZE) {
      capacity = ceil_u64((double)capacity * GH_CK_GROWTH_STEP) + 1u;
      restarts_here = 0;
    }
    status = collect_and_reset(t, &entries, &m, failed, gave_up, capacity, stream);
    if (status != GH_OK) break;
    may_repeat = 1;
  }
  gh__free(t, failed, failed_bytes, b->kind);
  gh__free(t, entries, (size_t)(m ? m : 1) * entry_bytes(w), b->kind);
  if (status == GH_OK && may_repeat) {
    uint64_t removed = 0;
    status = b->dedupe(t, &w->geometry, policy, &removed, stream);
    w->main_keys -= removed;
  }
  /* A batch placed beyond the capacity without needing more slots: the slots demonstrably hold it. */
  if (w->main_keys + w->side_keys > w->capacity) w->capacity = t->config.capacity = w->main_keys + w->side_keys;
  return status;
}

/* Inserts n keys into the map: phase 1 (present keys, the all-ones key), growth when the batch
 * overflows the capacity, then placement. */
static gh_status map_insert(gh_table *t, const void *keys, const void *values, gh_ck_value_source source,
                            uint64_t n, int policy, int may_repeat, void *stream) {
  gh_ck_table *w = state(t);
  const gh_ck_backend *b = w->backend;
  size_t bytes = (size_t)n * entry_bytes(w);
  void *entries = gh__alloc(t, bytes, b->kind);
  if (entries == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no memory to stage %llu entries; nothing was changed", (unsigned long long)n);
  uint64_t m = 0, side_new = 0;
  gh_status status = b->prepare(t, &w->geometry, keys, values, source, n, policy, w->main_keys > 0, entries, &m,
                                &side_new, stream);
  w->side_keys += side_new;
  const uint64_t keys_after = w->main_keys + w->side_keys + m;
  const int overflow = keys_after > w->capacity;
  /* A batch that may repeat keys overstates what it adds (m counts the repeats): it is placed with
   * short chains first. Repeats merge where they meet; what does not fit comes back after a few
   * exchanges, and the restart then sizes the table by the keys actually held plus those left. */
  const unsigned overflow_limit = overflow && may_repeat ? GH_CK_OVERFLOW_PROBE_EVICTIONS : 0u;
  if (status == GH_OK && m > 0 && ((overflow && !may_repeat) || w->forced_failures > 0)) {
    /* Rebuild from the table and the batch: on more slots when distinct keys overflow the
     * capacity, with fresh constants either way (which is how forced failures take effect). */
    uint64_t capacity = w->capacity;
    if (overflow && !may_repeat) {
      capacity = ceil_u64((double)w->capacity * GH_CK_GROWTH_MIN);
      if (capacity < keys_after) capacity = keys_after;
    }
    status = collect_and_reset(t, &entries, &m, NULL, m, capacity, stream);
    may_repeat = 1;
  }
  if (status != GH_OK) {
    gh__free(t, entries, bytes, b->kind);
    return status;
  }
  return place_all(t, entries, m, policy, may_repeat, overflow_limit, stream);
}

/* ---- Variants --------------------------------------------------------------------------------- */

static uint64_t key_bytes(const gh_table *t) { return t->config.key_bits / 8u; }
static uint64_t value_bytes(const gh_table *t) { return t->config.value_bits / 8u; }

/* Compacting: new keys enter with GH_CK_NO_ID, then get the next dense ids in slot order. */
static gh_status compacting_insert(gh_table *t, const void *keys, uint64_t n, void *stream) {
  gh_ck_table *w = state(t);
  const uint64_t before = w->main_keys + w->side_keys;
  gh_status status = map_insert(t, keys, NULL, GH_CK_VALUE_NO_ID, n, GH_KEEP_FIRST, 1, stream);
  if (status != GH_OK) return status;
  const uint64_t after = w->main_keys + w->side_keys;
  if (after > w->keys_by_id_capacity) {
    uint64_t capacity = w->keys_by_id_capacity * 2u;
    if (capacity < after) capacity = after;
    void *grown = gh__alloc(t, (size_t)(capacity * key_bytes(t)), w->backend->kind);
    if (grown == NULL)
      return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no memory for the compacted key list (%llu keys)", (unsigned long long)capacity);
    status = w->backend->copy(t, grown, w->keys_by_id, (size_t)(before * key_bytes(t)), stream);
    gh__free(t, w->keys_by_id, (size_t)(w->keys_by_id_capacity * key_bytes(t)), w->backend->kind);
    w->keys_by_id = grown;
    w->keys_by_id_capacity = capacity;
    if (status != GH_OK) return status;
  }
  uint64_t assigned = 0;
  status = w->backend->assign_ids(t, &w->geometry, before, w->keys_by_id, &assigned, stream);
  if (status == GH_OK && before + assigned != after)
    return gh__fail(t, GH_ERR_INTERNAL, "compacting: %llu new keys but %llu ids assigned",
                    (unsigned long long)(after - before), (unsigned long long)assigned);
  return status;
}

static void multivalue_release_arrays(gh_table *t) {
  gh_ck_table *w = state(t);
  gh__free(t, w->sorted_values, (size_t)(w->value_count * value_bytes(t)), w->backend->kind);
  gh__free(t, w->info, (size_t)w->id_count * sizeof(gh_ck_key_info), w->backend->kind);
  w->sorted_values = NULL;
  w->info = NULL;
  w->value_count = w->id_count = w->id_used = w->pairs = 0;
}

static gh_status export_multivalue(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream);

/* Multivalue: the pairs already stored and the new ones are sorted together (Algorithm 1 of the
 * chapter: radix sort, unique keys, counts, ids by prefix sum), and the map of unique key -> id
 * is built afresh. */
static gh_status multivalue_insert(gh_table *t, const void *keys, const void *values, uint64_t n, void *stream) {
  gh_ck_table *w = state(t);
  const gh_ck_backend *b = w->backend;
  const gh_memory_kind kind = b->kind;
  const uint64_t total = w->pairs + n;
  const size_t kb = (size_t)key_bytes(t), vb = (size_t)value_bytes(t);
  void *all_keys = gh__alloc(t, (size_t)total * kb, kind);
  void *all_values = gh__alloc(t, (size_t)total * vb, kind);
  void *sorted_values = gh__alloc(t, (size_t)total * vb, kind);
  void *unique_keys = gh__alloc(t, (size_t)total * kb, kind);
  gh_ck_key_info *info = (gh_ck_key_info *)gh__alloc(t, (size_t)total * sizeof *info, kind);
  gh_status status = GH_OK;
  uint64_t exported = 0, unique = 0;
  if (!all_keys || !all_values || !sorted_values || !unique_keys || !info)
    status = gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no memory to rebuild the multivalue table (%llu pairs); nothing was changed",
                      (unsigned long long)total);
  if (status == GH_OK && w->pairs > 0) status = export_multivalue(t, all_keys, all_values, &exported, stream);
  if (status == GH_OK) status = b->copy(t, (char *)all_keys + exported * kb, keys, (size_t)n * kb, stream);
  if (status == GH_OK) status = b->copy(t, (char *)all_values + exported * vb, values, (size_t)n * vb, stream);
  if (status == GH_OK) status = b->group_pairs(t, all_keys, all_values, total, sorted_values, unique_keys, info, &unique, stream);
  if (status == GH_OK) {
    /* From here on the old structure is replaced. */
    multivalue_release_arrays(t);
    w->sorted_values = sorted_values;
    w->value_count = total;
    w->info = info;
    w->id_count = total;
    w->id_used = unique;
    w->pairs = total;
    sorted_values = NULL;
    info = NULL;
    status = clear_all_slots(t, stream);
    if (status == GH_OK) status = map_insert(t, unique_keys, NULL, GH_CK_VALUE_INDEX, unique, GH_KEEP_FIRST, 0, stream);
  }
  gh__free(t, all_keys, (size_t)total * kb, kind);
  gh__free(t, all_values, (size_t)total * vb, kind);
  gh__free(t, sorted_values, (size_t)total * vb, kind);
  gh__free(t, unique_keys, (size_t)total * kb, kind);
  gh__free(t, info, (size_t)total * sizeof(gh_ck_key_info), kind);
  return status;
}

/* The ids of n keys in the multivalue map (32-bit) and whether each was found. */
typedef struct id_lookup {
  uint32_t *ids;
  uint8_t *found;
  uint64_t n;
} id_lookup;

static void id_lookup_free(gh_table *t, id_lookup *l) {
  gh__free(t, l->ids, (size_t)l->n * sizeof(uint32_t), state(t)->backend->kind);
  gh__free(t, l->found, (size_t)l->n, state(t)->backend->kind);
}

static gh_status id_lookup_run(gh_table *t, const void *keys, uint64_t n, id_lookup *l, void *stream) {
  gh_ck_table *w = state(t);
  l->n = n;
  l->ids = (uint32_t *)gh__alloc(t, (size_t)n * sizeof(uint32_t), w->backend->kind);
  l->found = (uint8_t *)gh__alloc(t, (size_t)n, w->backend->kind);
  if (l->ids == NULL || l->found == NULL) {
    id_lookup_free(t, l);
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no memory to look up %llu keys", (unsigned long long)n);
  }
  return w->backend->find(t, &w->geometry, keys, n, l->ids, l->found, 0, stream);
}

static gh_status export_multivalue(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_ck_table *w = state(t);
  const gh_ck_backend *b = w->backend;
  const uint64_t keys = w->main_keys + w->side_keys;
  const size_t kb = (size_t)key_bytes(t);
  void *map_keys = gh__alloc(t, (keys ? keys : 1) * kb, b->kind);
  uint32_t *ids = (uint32_t *)gh__alloc(t, (keys ? keys : 1) * sizeof(uint32_t), b->kind);
  uint64_t *offsets = (uint64_t *)gh__alloc(t, (keys + 1) * sizeof(uint64_t), b->kind);
  uint64_t exported = 0, total = 0;
  gh_status status = map_keys && ids && offsets ? GH_OK : gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no memory to export");
  if (status == GH_OK) status = b->export_pairs(t, &w->geometry, map_keys, ids, &exported, stream);
  if (status == GH_OK) status = b->count_values(t, w->info, ids, NULL, exported, NULL, offsets, &total, stream);
  if (status == GH_OK)
    status = b->gather_values(t, w->info, w->sorted_values, ids, NULL, offsets, exported, 0, map_keys, keys_out, values_out,
                             stream);
  if (status == GH_OK) *count = total;
  gh__free(t, map_keys, (keys ? keys : 1) * kb, b->kind);
  gh__free(t, ids, (keys ? keys : 1) * sizeof(uint32_t), b->kind);
  gh__free(t, offsets, (keys + 1) * sizeof(uint64_t), b->kind);
  return status;
}

/* ---- Ops ------------------------------------------------------------------------------------- */

static gh_status ck_init_with(gh_table *t, const gh_ck_backend *backend) {
  gh_ck_table *w = (gh_ck_table *)gh__alloc(t, sizeof *w, GH_MEMORY_HOST);
  if (w == NULL) return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "out of host memory for the table state");
  memset(w, 0, sizeof *w);
  t->impl = w;
  w->backend = backend;
  w->geometry.functions = t->config.hash_functions;
  w->geometry.family = (unsigned)t->config.hash_family;
  w->geometry.format = map_format(&t->config);
  w->counters = (gh_ck_counters *)gh__alloc(t, sizeof(gh_ck_counters), backend->kind);
  gh_status status = w->counters ? backend->fill(t, w->counters, 0, sizeof(gh_ck_counters), NULL)
                                 : gh__fail(t, GH_ERR_OUT_OF_MEMORY, "out of memory for the table counters");
  if (status == GH_OK) status = allocate_slots(t, t->config.capacity, NULL);
  if (status == GH_OK && t->config.variant == GH_VARIANT_COMPACTING) {
    w->keys_by_id_capacity = t->config.capacity;
    w->keys_by_id = gh__alloc(t, (size_t)(w->keys_by_id_capacity * key_bytes(t)), backend->kind);
    if (w->keys_by_id == NULL) status = gh__fail(t, GH_ERR_OUT_OF_MEMORY, "out of memory for the compacted key list");
  }
  draw_constants(t);
  set_eviction_limit(&w->geometry, t->config.capacity);
  return status;
}

static void ck_release(gh_table *t) {
  gh_ck_table *w = state(t);
  if (w == NULL) return;
  const gh_memory_kind kind = w->backend->kind;
  multivalue_release_arrays(t);
  gh__free(t, w->keys_by_id, (size_t)(w->keys_by_id_capacity * key_bytes(t)), kind);
  gh__free(t, w->slots, w->slots_bytes, kind);
  gh__free(t, w->counters, sizeof(gh_ck_counters), kind);
  gh__free(t, w, sizeof *w, GH_MEMORY_HOST);
  t->impl = NULL;
}

static gh_status ck_insert(gh_table *t, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                           uint8_t *failed_out, uint64_t *failed, void *stream) {
  gh_ck_table *w = state(t);
  *failed = 0;
  /* A cuckoo insert never leaves a key out: the flags say so. */
  gh_status status = failed_out ? w->backend->fill(t, failed_out, 0, (size_t)n, stream) : GH_OK;
  if (status != GH_OK) return status;
  switch (t->config.variant) {
    case GH_VARIANT_COMPACTING: return compacting_insert(t, keys, n, stream);
    case GH_VARIANT_MULTIVALUE: return multivalue_insert(t, keys, values, n, stream);
    default: return map_insert(t, keys, values, GH_CK_VALUE_GIVEN, n, (int)policy, 1, stream);
  }
}

static gh_status ck_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                         uint64_t default_value, void *stream) {
  gh_ck_table *w = state(t);
  if (t->config.variant != GH_VARIANT_MULTIVALUE)
    return w->backend->find(t, &w->geometry, keys, n, values_out, found_out, default_value, stream);
  id_lookup l;
  gh_status status = id_lookup_run(t, keys, n, &l, stream);
  if (status != GH_OK) return status;
  if (found_out) status = w->backend->copy(t, found_out, l.found, (size_t)n, stream);
  if (status == GH_OK && values_out) {
    /* The first value of each key; default_value for the others. */
    status = w->backend->gather_values(t, w->info, w->sorted_values, l.ids, l.found, NULL, n, default_value, NULL, NULL,
                                       values_out, stream);
  }
  id_lookup_free(t, &l);
  return status;
}

/* Multivalue: the pairs that leave with the keys this call erased (flagged in removed). */
static gh_status count_erased_pairs(gh_table *t, const id_lookup *before, const uint8_t *removed, uint64_t n,
                                    uint64_t *pairs, void *stream) {
  gh_ck_table *w = state(t);
  uint64_t *offsets = (uint64_t *)gh__alloc(t, (size_t)(n + 1) * sizeof(uint64_t), w->backend->kind);
  if (offsets == NULL) return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no memory to count erased values");
  gh_status status = w->backend->count_values(t, w->info, before->ids, removed, n, NULL, offsets, pairs, stream);
  gh__free(t, offsets, (size_t)(n + 1) * sizeof(uint64_t), w->backend->kind);
  return status;
}

static gh_status ck_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out, uint64_t *erased,
                          void *stream) {
  gh_ck_table *w = state(t);
  const gh_ck_backend *b = w->backend;
  if (t->config.variant == GH_VARIANT_COMPACTING)
    return gh__fail(t, GH_ERR_UNSUPPORTED, "gh_erase: a compacting table's ids are dense (0..size-1); erasing a key "
                    "would leave a hole in them, so compacting tables do not erase; nothing was changed");
  uint64_t side_erased = 0;
  if (t->config.variant != GH_VARIANT_MULTIVALUE) {
    gh_status status = b->erase(t, &w->geometry, keys, n, erased_out, erased, &side_erased, stream);
    if (status != GH_OK) return status;
    w->side_keys -= side_erased;
    w->main_keys -= *erased - side_erased;
    return GH_OK;
  }
  /* Multivalue: the keys' ids are read before the keys leave the map, to count their values. */
  id_lookup before;
  uint64_t pairs = 0;
  gh_status status = id_lookup_run(t, keys, n, &before, stream);
  if (status != GH_OK) return status;
  uint8_t *removed = (uint8_t *)gh__alloc(t, (size_t)n, b->kind);
  if (removed == NULL) status = gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no memory to erase");
  if (status == GH_OK) status = b->erase(t, &w->geometry, keys, n, removed, erased, &side_erased, stream);
  if (status == GH_OK) {
    w->side_keys -= side_erased;
    w->main_keys -= *erased - side_erased;
    status = count_erased_pairs(t, &before, removed, n, &pairs, stream);
  }
  if (status == GH_OK) w->pairs -= pairs;
  if (status == GH_OK && erased_out) status = b->copy(t, erased_out, removed, (size_t)n, stream);
  gh__free(t, removed, (size_t)n, b->kind);
  id_lookup_free(t, &before);
  return status;
}

static gh_status ck_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_ck_table *w = state(t);
  if (t->config.variant == GH_VARIANT_MULTIVALUE) return export_multivalue(t, keys_out, values_out, count, stream);
  return w->backend->export_pairs(t, &w->geometry, keys_out, values_out, count, stream);
}

static gh_status ck_clear(gh_table *t, void *stream) {
  gh_status status = clear_all_slots(t, stream);
  if (t->config.variant == GH_VARIANT_MULTIVALUE) multivalue_release_arrays(t);
  return status == GH_OK ? state(t)->backend->sync(t, stream) : status;
}

static gh_status ck_size(gh_table *t, uint64_t *size) {
  gh_ck_table *w = state(t);
  *size = t->config.variant == GH_VARIANT_MULTIVALUE ? w->pairs : w->main_keys + w->side_keys;
  return GH_OK;
}

static gh_status ck_count(gh_table *t, const void *keys, uint64_t n, uint64_t *counts_out, uint64_t *total,
                          void *stream) {
  gh_ck_table *w = state(t);
  if (t->config.variant != GH_VARIANT_MULTIVALUE)
    return gh__fail(t, GH_ERR_UNSUPPORTED, "gh_count: this cuckoo table holds one value per key (variant %s); "
                    "create it with variant GH_VARIANT_MULTIVALUE to store several",
                    t->config.variant == GH_VARIANT_COMPACTING ? "compacting" : "map");
  id_lookup l;
  gh_status status = id_lookup_run(t, keys, n, &l, stream);
  uint64_t *offsets = NULL;
  if (status == GH_OK) {
    offsets = (uint64_t *)gh__alloc(t, (size_t)(n + 1) * sizeof(uint64_t), w->backend->kind);
    if (offsets == NULL) status = gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no memory to count");
  }
  uint64_t sum = 0;
  if (status == GH_OK) status = w->backend->count_values(t, w->info, l.ids, l.found, n, counts_out, offsets, &sum, stream);
  if (status == GH_OK && total) *total = sum;
  gh__free(t, offsets, (size_t)(n + 1) * sizeof(uint64_t), w->backend->kind);
  if (l.ids) id_lookup_free(t, &l);
  return status;
}

static gh_status ck_find_all(gh_table *t, const void *keys, uint64_t n, uint64_t *offsets_out, void *values_out,
                             uint64_t values_capacity, void *stream) {
  gh_ck_table *w = state(t);
  if (t->config.variant != GH_VARIANT_MULTIVALUE)
    return gh__fail(t, GH_ERR_UNSUPPORTED, "gh_find_all: this cuckoo table holds one value per key; create it with "
                    "variant GH_VARIANT_MULTIVALUE to store several");
  id_lookup l;
  gh_status status = id_lookup_run(t, keys, n, &l, stream);
  uint64_t total = 0;
  if (status == GH_OK) status = w->backend->count_values(t, w->info, l.ids, l.found, n, NULL, offsets_out, &total, stream);
  if (status == GH_OK && total > values_capacity)
    status = gh__fail(t, GH_ERR_BUFFER_TOO_SMALL, "gh_find_all: the keys have %llu values but values_capacity is %llu; "
                      "offsets_out holds the offsets, no value was written (call gh_count first)",
                      (unsigned long long)total, (unsigned long long)values_capacity);
  if (status == GH_OK && total > 0 && values_out == NULL)
    status = gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_find_all: values_out is NULL but the keys have %llu values",
                      (unsigned long long)total);
  if (status == GH_OK && total > 0)
    status = w->backend->gather_values(t, w->info, w->sorted_values, l.ids, l.found, offsets_out, n, 0, NULL, NULL,
                                       values_out, stream);
  if (l.ids) id_lookup_free(t, &l);
  return status;
}

static gh_status ck_keys_of_ids(gh_table *t, const void *ids, uint64_t n, void *keys_out, uint64_t *bad, void *stream) {
  gh_ck_table *w = state(t);
  return w->backend->keys_of_ids(t, w->keys_by_id, w->main_keys + w->side_keys, ids, n, keys_out, bad, stream);
}

static gh_status ck_stats(gh_table *t, gh_stats *stats) {
  gh_ck_table *w = state(t);
  stats->distinct_keys = w->main_keys + w->side_keys;
  stats->slots = w->geometry.slot_count;
  stats->restarts = w->restarts;
  stats->grows = w->grows;
  stats->eviction_limit = w->geometry.max_evictions;
  return GH_OK;
}

/* ---- Validate -------------------------------------------------------------------------------- */

static int slot_canonical(gh_slot_format f, const void *slot, uint64_t key, uint64_t value) {
  const gh_slot_bits expected = gh_slot_pack(f, key, value);
  unsigned char bytes[16];
  memcpy(bytes, &expected.lo, 8);
  memcpy(bytes + 8, &expected.hi, 8);
  return memcmp(bytes, slot, f.slot_bytes) == 0;
}

/* Checks the map on a host snapshot; fills id_seen (when given, one byte per id) with the ids found. */
static gh_status validate_map(gh_table *t, const void *slots, uint8_t *id_seen, uint64_t id_limit) {
  gh_ck_table *w = state(t);
  const gh_ck_geometry *g = &w->geometry;
  const gh_slot_format f = g->format;
  const uint64_t empty = gh_slot_empty_key(f.key_bits);
  uint64_t keys = 0;
  for (uint64_t i = 0; i <= g->slot_count; ++i) {
    const void *slot = (const char *)slots + i * f.slot_bytes;
    const uint64_t key = gh_slot_load_key(f, slot), value = gh_slot_load_value(f, slot);
    const int side = i == g->slot_count;
    if ((side && key != GH_SIDE_PRESENT) || (!side && key == empty)) {
      if (!slot_canonical(f, slot, empty, ~0ull))
        return gh__fail(t, GH_ERR_CORRUPT, "validate: %s slot %llu is empty with non-canonical bits",
                        side ? "side" : "main", (unsigned long long)i);
      continue;
    }
    if (!slot_canonical(f, slot, key, value))
      return gh__fail(t, GH_ERR_CORRUPT, "validate: slot %llu (key %llu): padding bits are not all ones",
                      (unsigned long long)i, (unsigned long long)key);
    keys += 1;
    if (!side) {
      const unsigned own = gh_ck_function_of(g, key, i);
      if (own == g->functions)
        return gh__fail(t, GH_ERR_CORRUPT, "validate: slot %llu holds key %llu, which none of its %u hash functions "
                        "points at", (unsigned long long)i, (unsigned long long)key, g->functions);
      for (unsigned j = 0; j < g->functions; ++j) {
        const uint64_t other = gh_ck_location(g, key, j);
        if (other != i && gh_slot_load_key(f, (const char *)slots + other * f.slot_bytes) == key)
          return gh__fail(t, GH_ERR_CORRUPT, "validate: key %llu is stored twice: slots %llu and %llu",
                          (unsigned long long)key, (unsigned long long)i, (unsigned long long)other);
      }
    }
    if (id_seen != NULL) {
      if (value >= id_limit)
        return gh__fail(t, GH_ERR_CORRUPT, "validate: key %llu has id %llu, not below %llu", (unsigned long long)key,
                        (unsigned long long)value, (unsigned long long)id_limit);
      if (id_seen[value]++)
        return gh__fail(t, GH_ERR_CORRUPT, "validate: id %llu is given to two keys", (unsigned long long)value);
    }
  }
  if (keys != w->main_keys + w->side_keys)
    return gh__fail(t, GH_ERR_CORRUPT, "validate: the table counts %llu keys but %llu are stored",
                    (unsigned long long)(w->main_keys + w->side_keys), (unsigned long long)keys);
  return GH_OK;
}

/* Copies n bytes of backend memory into a fresh host buffer (freed with free()). */
static gh_status snapshot(gh_table *t, const void *src, size_t bytes, void **out) {
  *out = malloc(bytes ? bytes : 1);
  if (*out == NULL) return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "validate: no host memory for a %zu-byte copy", bytes);
  gh_status status = bytes ? state(t)->backend->to_host(t, *out, src, bytes, NULL) : GH_OK;
  if (status != GH_OK) {
    free(*out);
    *out = NULL;
  }
  return status;
}

static gh_status validate_compacting(gh_table *t, const void *slots, uint8_t *id_seen) {
  gh_ck_table *w = state(t);
  const uint64_t keys = w->main_keys + w->side_keys;
  const gh_slot_format f = w->geometry.format;
  void *by_id = NULL;
  gh_status status = snapshot(t, w->keys_by_id, (size_t)(keys * key_bytes(t)), &by_id);
  for (uint64_t i = 0; status == GH_OK && i <= w->geometry.slot_count; ++i) {
    const void *slot = (const char *)slots + i * f.slot_bytes;
    uint64_t key = gh_slot_load_key(f, slot);
    const int side = i == w->geometry.slot_count;
    if ((side && key != GH_SIDE_PRESENT) || (!side && key == gh_slot_empty_key(f.key_bits))) continue;
    if (side) key = gh_slot_empty_key(f.key_bits);
    const uint64_t id = gh_slot_load_value(f, slot);
    if (gh__read_word(by_id, id, t->config.key_bits) != key)
      status = gh__fail(t, GH_ERR_CORRUPT, "validate: key %llu has id %llu but the compacted key list holds %llu there",
                        (unsigned long long)key, (unsigned long long)id,
                        (unsigned long long)gh__read_word(by_id, id, t->config.key_bits));
  }
  for (uint64_t id = 0; status == GH_OK && id < keys; ++id)
    if (!id_seen[id]) status = gh__fail(t, GH_ERR_CORRUPT, "validate: id %llu is not given to any key (ids are not dense)",
                                        (unsigned long long)id);
  free(by_id);
  return status;
}

static gh_status validate_multivalue(gh_table *t, const uint8_t *id_seen, uint64_t unique) {
  gh_ck_table *w = state(t);
  gh_ck_key_info *info = NULL;
  gh_status status = snapshot(t, w->info, (size_t)unique * sizeof *info, (void **)&info);
  uint64_t next = 0, pairs = 0;
  for (uint64_t id = 0; status == GH_OK && id < unique; ++id) {
    if (info[id].first != next || info[id].count == 0)
      status = gh__fail(t, GH_ERR_CORRUPT, "validate: key id %llu: values [%llu, +%llu) do not follow the previous "
                        "key's (next offset %llu) or are empty", (unsigned long long)id, (unsigned long long)info[id].first,
                        (unsigned long long)info[id].count, (unsigned long long)next);
    next += info[id].count;
    if (id_seen[id]) pairs += info[id].count;
  }
  if (status == GH_OK && next != w->value_count)
    status = gh__fail(t, GH_ERR_CORRUPT, "validate: key offsets cover %llu values but sortedValues holds %llu",
                      (unsigned long long)next, (unsigned long long)w->value_count);
  if (status == GH_OK && pairs != w->pairs)
    status = gh__fail(t, GH_ERR_CORRUPT, "validate: the table counts %llu pairs but its keys hold %llu",
                      (unsigned long long)w->pairs, (unsigned long long)pairs);
  free(info);
  return status;
}

static gh_status ck_validate(gh_table *t) {
  gh_ck_table *w = state(t);
  void *slots = NULL;
  gh_status status = snapshot(t, w->slots, w->slots_bytes, &slots);
  if (status != GH_OK) return status;
  const gh_variant variant = t->config.variant;
  uint64_t id_limit = 0;
  if (variant == GH_VARIANT_COMPACTING) id_limit = w->main_keys + w->side_keys;
  if (variant == GH_VARIANT_MULTIVALUE) id_limit = w->id_used;
  uint8_t *id_seen = variant != GH_VARIANT_MAP ? (uint8_t *)calloc(id_limit ? id_limit : 1, 1) : NULL;
  if (variant != GH_VARIANT_MAP && id_seen == NULL) status = gh__fail(t, GH_ERR_OUT_OF_MEMORY, "validate: no host memory");
  if (status == GH_OK) status = validate_map(t, slots, id_seen, variant == GH_VARIANT_MAP ? 0 : id_limit);
  if (status == GH_OK && variant == GH_VARIANT_COMPACTING) status = validate_compacting(t, slots, id_seen);
  if (status == GH_OK && variant == GH_VARIANT_MULTIVALUE && id_limit > 0) status = validate_multivalue(t, id_seen, id_limit);
  free(id_seen);
  free(slots);
  return status;
}

/* ---- The ops of both backends ------------------------------------------------------------------ */

static gh_status ck_init_host(gh_table *t) { return ck_init_with(t, &gh__cuckoo_host_backend); }

#define GH_CK_OPS(backend_name, init_fn)                                                              \
  {                                                                                                  \
    .name = "cuckoo/" backend_name, .init = init_fn, .release = ck_release, .insert = ck_insert,     \
    .find = ck_find, .erase = ck_erase, .count = ck_count, .find_all = ck_find_all,                  \
    .export_all = ck_export, .clear = ck_clear, .size = ck_size, .validate = ck_validate,            \
    .keys_of_ids = ck_keys_of_ids, .stats = ck_stats, .device_view = NULL, .take_flags = NULL,      \
  }

static const gh_table_ops host_ops = GH_CK_OPS("host", ck_init_host);
#if defined(GH_HAVE_CUDA)
static gh_status ck_init_cuda(gh_table *t) { return ck_init_with(t, &gh__cuckoo_cuda_backend); }
static const gh_table_ops cuda_ops = GH_CK_OPS("cuda", ck_init_cuda);
#endif

/* The registry's entry for cuckoo (src/registry.h). */
const gh_design_descriptor gh__design_cuckoo = {
    .id = GH_CUCKOO,
    .name = "cuckoo",
    .host_ops = &host_ops,
#if defined(GH_HAVE_CUDA)
    .cuda_ops = &cuda_ops,
#else
    .cuda_ops = NULL,
#endif
    .check_config = gh__cuckoo_check_config,
    .estimate = gh__cuckoo_estimate,
    .variants = (1u << GH_VARIANT_MAP) | (1u << GH_VARIANT_COMPACTING) | (1u << GH_VARIANT_MULTIVALUE),
    .map_policies = GH_MAP_POLICIES_ALL,
    .capabilities = GH_CAP_ERASE | GH_CAP_GROWS | GH_CAP_HASH_FUNCTIONS,
    /* Inserts restart and grow until every key is in; only running out of memory stops them, and
     * that is reported as GH_ERR_OUT_OF_MEMORY. */
    .did_not_fit = "the table could not grow",
};
