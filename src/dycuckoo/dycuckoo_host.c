/* dycuckoo_host.c - the DyCuckoo design on CPU threads, one operation per thread: the same
 * subtables, buckets and locks as the GPU. Lookups scan the key's bucket in each subtable in
 * order; an insert takes a bucket's lock word with a CAS (a forward move holds two, the lower
 * subtable's first: no cycle), writes the value, then the key; an erase writes EMPTY over the key
 * under the lock. The drivers around these passes (and what a claim pass and a place pass are)
 * are shared: dycuckoo_table.{h,c}. */
#include <sched.h>
#include <string.h>

#include "core/parallel.h"
#include "core/toolkit.h"
#include "core/words.h"
#include "dycuckoo/dycuckoo_table.h"

static gh_dy_table *state(gh_table *t) { return (gh_dy_table *)t->impl; }

static void *key_line(const gh_dy_table *s, unsigned i, uint64_t b) {
  return gh_dy_line(&s->geometry, s->sub[i].keys, b);
}

static void *value_at(const gh_dy_table *s, unsigned i, uint64_t b, unsigned k) {
  return gh_dy_value_at(&s->geometry, s->sub[i].values, b, k);
}

static uint64_t load_key(const gh_dy_geometry *g, const void *line, unsigned k) {
  return g->key_bits == 32 ? gh_load_u32((const uint32_t *)line + k) : gh_load_u64((const uint64_t *)line + k);
}

static void store_key(const gh_dy_geometry *g, void *line, unsigned k, uint64_t key) {
  if (g->key_bits == 32) gh_store_u32((uint32_t *)line + k, (uint32_t)key);
  else gh_store_u64((uint64_t *)line + k, key);
}

/* Waits for a bucket's lock (a thread holds at most two, taken in subtable order: no cycle). */
static void lock(const gh_dy_table *s, unsigned i, uint64_t b) {
  while (gh_cas_u32(&s->sub[i].locks[b], GH_DY_LOCK_FREE, GH_DY_LOCK_HELD) != GH_DY_LOCK_FREE) sched_yield();
}

static void unlock(const gh_dy_table *s, unsigned i, uint64_t b) { gh_store_u32(&s->sub[i].locks[b], GH_DY_LOCK_FREE); }

/* Where key is: 1 with (*table, *bucket, *slot), scanning the subtables in order (which never
 * misses a key being moved: moves copy before they delete and go to later subtables). */
static int locate(const gh_dy_table *s, uint64_t key, unsigned skip, unsigned *table, uint64_t *bucket, unsigned *slot) {
  const gh_dy_geometry *g = &s->geometry;
  for (unsigned i = 0; i < g->tables; ++i) {
    if (i == skip) continue;
    const uint64_t b = gh_dy_bucket(g, i, key);
    const void *line = key_line(s, i, b);
    for (unsigned k = 0; k < g->slots; ++k)
      if (load_key(g, line, k) == key) {
        *table = i;
        *bucket = b;
        *slot = k;
        return 1;
      }
  }
  return 0;
}

/* A free slot of a locked bucket, or g->slots. */
static unsigned free_slot(const gh_dy_table *s, unsigned i, uint64_t b) {
  const gh_dy_geometry *g = &s->geometry;
  const void *line = key_line(s, i, b);
  for (unsigned k = 0; k < g->slots; ++k)
    if (load_key(g, line, k) == gh_dy_empty_key(g)) return k;
  return g->slots;
}

/* Stores key with the value at `value` (NULL for a set) in slot k of the locked bucket (i, b). */
static void put(gh_dy_table *s, unsigned i, uint64_t b, unsigned k, uint64_t key, const void *value) {
  if (value) gh_dy_value_copy(&s->geometry, value_at(s, i, b, k), value);
  store_key(&s->geometry, key_line(s, i, b), k, key);
}

/* The arguments of one pass, shared by its worker threads. */
typedef struct host_pass {
  gh_dy_table *s;
  const gh_dy_place *place;
  const void *keys;
  const uint8_t *skip_flags;
  unsigned skip_table;
  uint8_t *flags_out;
  void *values_out;
  const void *default_value;
} host_pass;

/* Moves a resident of the locked bucket (i, b) to its bucket in a later subtable (copied there
 * before its slot is reused) and puts key in its slot. 1 when done; *locked counts the buckets. */
static int place_by_move(gh_dy_table *s, unsigned i, uint64_t b, unsigned skip, uint64_t key, const void *value,
                         unsigned *locked) {
  const gh_dy_geometry *g = &s->geometry;
  for (unsigned k = 0; k < g->slots; ++k) {
    const uint64_t resident = load_key(g, key_line(s, i, b), k);
    for (unsigned j = i + 1; j < g->tables; ++j) {
      if (j == skip) continue;
      const uint64_t y = gh_dy_bucket(g, j, resident);
      lock(s, j, y);
      *locked += 1;
      const unsigned u = free_slot(s, j, y);
      if (u < g->slots) {
        put(s, j, y, u, resident, g->value_bytes ? value_at(s, i, b, k) : NULL);
        put(s, i, b, k, key, value);
        gh_dy_count_key(s->counters, j, 1u);
        gh_add_u64(&s->counters->evictions, 1u);
        unlock(s, j, y);
        return 1;
      }
      unlock(s, j, y);
    }
  }
  return 0;
}

/* Stores an absent key: a free slot in its buckets (the chosen subtable first, then the others),
 * else a forward move out of one of them. 1 when stored. */
static int place_absent(gh_dy_table *s, uint64_t key, const void *value, unsigned skip) {
  const gh_dy_geometry *g = &s->geometry;
  const unsigned first = gh_dy_target(g, key);
  unsigned locked = 0;
  int placed = 0;
  for (unsigned pass = 0; pass < 2u && !placed; ++pass)
    for (unsigned step = 0; step < g->tables && !placed; ++step) {
      const unsigned i = (first + step) % g->tables;
      if (i == skip || (pass == 1u && i + 1u == g->tables)) continue;
      const uint64_t b = gh_dy_bucket(g, i, key);
      lock(s, i, b);
      locked += 1;
      /* A free slot (in pass 1 too: another thread may have taken one meanwhile, or not). */
      const unsigned k = free_slot(s, i, b);
      if (k < g->slots) {
        put(s, i, b, k, key, value);
        gh_dy_count_key(s->counters, i, 1u);
        placed = 1;
      } else if (pass == 1u) {
        placed = place_by_move(s, i, b, skip, key, value, &locked);
      }
      unlock(s, i, b);
    }
  gh_max_u64(&s->counters->longest_search, locked);
  return placed;
}

/* Merges the value at `value` (NULL for a set) into the stored one of slot k of the locked bucket
 * (i, b) by the policy. */
static void merge_value(gh_dy_table *s, unsigned i, uint64_t b, unsigned k, int policy, const void *value) {
  if (value) gh_dy_value_merge(&s->geometry, policy, value_at(s, i, b, k), value);
}

/* The slot of key in the locked bucket (i, b), or g->slots. */
static unsigned slot_of(const gh_dy_table *s, unsigned i, uint64_t b, uint64_t key) {
  const gh_dy_geometry *g = &s->geometry;
  const void *line = key_line(s, i, b);
  for (unsigned k = 0; k < g->slots; ++k)
    if (load_key(g, line, k) == key) return k;
  return g->slots;
}

/* One key of a claim pass (gh_dy_backend.claim): 0 stored or merged, 1 all its buckets full. */
static int claim_one(gh_dy_table *s, const gh_dy_place *p, uint64_t key, const void *value) {
  const gh_dy_geometry *g = &s->geometry;
  if (key == gh_dy_empty_key(g)) {
    if (gh_dy_side_insert(g, s->side, value, p->policy)) gh_dy_count_side(s->counters, 1u);
    return 0;
  }
  unsigned i, k;
  uint64_t b;
  /* Stored before the pass: it stays where it is (nothing moves in a claim pass). */
  if (locate(s, key, g->tables, &i, &b, &k)) {
    lock(s, i, b);
    merge_value(s, i, b, k, p->policy, value);
    unlock(s, i, b);
    return 0;
  }
  const unsigned first = gh_dy_target(g, key);
  for (unsigned step = 0; step < g->tables; ++step) {
    i = (first + step) % g->tables;
    b = gh_dy_bucket(g, i, key);
    lock(s, i, b);
    /* A copy of the key from this batch, stored here meanwhile; else a free slot. */
    k = slot_of(s, i, b, key);
    const int copy = k < g->slots;
    if (copy) {
      merge_value(s, i, b, k, p->policy, value);
    } else if ((k = free_slot(s, i, b)) < g->slots) {
      put(s, i, b, k, key, value);
      gh_dy_count_key(s->counters, i, 1u);
    }
    unlock(s, i, b);
    if (k < g->slots) {
      gh_max_u64(&s->counters->longest_search, step + 1u);
      return 0;
    }
  }
  gh_max_u64(&s->counters->longest_search, g->tables);
  return 1;
}

/* One key of a place pass that goes one key at a time (gh_dy_place.one_by_one): merged into its
 * stored copy, else placed. 1 when it found no room. */
static int place_one_by_one(gh_dy_table *s, const gh_dy_place *p, uint64_t key, const void *value) {
  unsigned i, k;
  uint64_t b;
  if (!locate(s, key, p->skip_table, &i, &b, &k)) return !place_absent(s, key, value, p->skip_table);
  merge_value(s, i, b, k, p->policy, value);
  return 0;
}

/* claim_one or place (place_absent, or place_one_by_one) over the keys of a chunk. */
static gh_counters pass_chunk(void *context, uint64_t begin, uint64_t end, int claim) {
  const host_pass *c = (const host_pass *)context;
  const gh_dy_place *p = c->place;
  const gh_dy_geometry *g = &c->s->geometry;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    if (p->rerun && !p->failed[i]) continue;
    const uint64_t key = gh__read_word(p->keys, i, g->key_bits);
    if (!claim && key == gh_dy_empty_key(g)) continue; /* (a flagged set's free entries) */
    const void *value = p->values ? (const char *)p->values + i * g->value_bytes : NULL;
    const int failed = claim            ? claim_one(c->s, p, key, value)
                       : p->one_by_one ? place_one_by_one(c->s, p, key, value)
                                       : !place_absent(c->s, key, value, p->skip_table);
    p->failed[i] = (uint8_t)failed;
    counted.value[0] += (uint64_t)failed;
  }
  return counted;
}

static gh_counters claim_chunk(void *context, uint64_t begin, uint64_t end) { return pass_chunk(context, begin, end, 1); }
static gh_counters place_chunk(void *context, uint64_t begin, uint64_t end) { return pass_chunk(context, begin, end, 0); }

static gh_status run_pass(gh_table *t, const gh_dy_place *p, gh_counters (*chunk)(void *, uint64_t, uint64_t)) {
  host_pass c = {state(t), p, NULL, NULL, 0, NULL, NULL, NULL};
  const gh_counters counted = gh__parallel_for(p->n, p->one_by_one ? 1u : t->config.host_threads, chunk, &c);
  c.s->counters->failed = counted.value[0];
  return GH_OK;
}

static gh_status host_claim(gh_table *t, const gh_dy_place *p, void *stream) {
  (void)stream;
  return run_pass(t, p, claim_chunk);
}

static gh_status host_place(gh_table *t, const gh_dy_place *p, void *stream) {
  (void)stream;
  return run_pass(t, p, place_chunk);
}

/* Erases one key (every subtable but skip): 1 when it was there. */
static int erase_one(gh_dy_table *s, uint64_t key, unsigned skip) {
  const gh_dy_geometry *g = &s->geometry;
  if (key == gh_dy_empty_key(g)) {
    const int erased = gh_dy_side_erase(s->side);
    if (erased) gh_dy_count_side(s->counters, ~0ull); /* minus one */
    return erased;
  }
  for (;;) {
    unsigned i, k;
    uint64_t b;
    if (!locate(s, key, skip, &i, &b, &k)) return 0;
    lock(s, i, b);
    const int still = load_key(g, key_line(s, i, b), k) == key;
    if (still) store_key(g, key_line(s, i, b), k, gh_dy_empty_key(g));
    unlock(s, i, b);
    if (still) {
      gh_dy_count_key(s->counters, i, ~0ull); /* minus one */
      return 1;
    }
  }
}

static gh_counters erase_chunk(void *context, uint64_t begin, uint64_t end) {
  const host_pass *c = (const host_pass *)context;
  const gh_dy_geometry *g = &c->s->geometry;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    if (c->skip_flags && c->skip_flags[i]) continue;
    const int erased = erase_one(c->s, gh__read_word(c->keys, i, g->key_bits), c->skip_table);
    if (c->flags_out) c->flags_out[i] = (uint8_t)erased;
    counted.value[0] += (uint64_t)erased;
  }
  return counted;
}

static gh_status host_erase_pass(gh_table *t, const void *keys, uint64_t n, const uint8_t *skip_flags, unsigned skip_table,
                                 uint8_t *erased_out, void *stream) {
  host_pass c = {state(t), NULL, keys, skip_flags, skip_table, erased_out, NULL, NULL};
  (void)stream;
  const gh_counters counted = gh__parallel_for(n, t->config.host_threads, erase_chunk, &c);
  c.s->counters->erased = counted.value[0];
  return GH_OK;
}

static gh_counters bulk_chunk(void *context, uint64_t begin, uint64_t end) {
  const gh_dy_bulk *a = (const gh_dy_bulk *)context;
  for (uint64_t i = begin; i < end; ++i) gh_dy_bulk_one(a, i);
  gh_counters none = {{0}};
  return none;
}

static gh_status host_bulk(gh_table *t, const gh_dy_bulk *a, uint64_t n, void *stream) {
  (void)stream;
  gh__parallel_for(n, t->config.host_threads, bulk_chunk, (void *)a);
  return GH_OK;
}

/* ---- The build by regions (dycuckoo_bulk.h) ----------------------------------------------------
 * Not the default here (gh_config.bulk_min_keys = 0 leaves it off: the partition runs on one
 * thread, and CPU caches hold the claim pass's lines no worse). When asked, it runs the GPU's
 * steps, a thread a region at a time in a buffer of its own, so that the host backend tests them. */
typedef struct host_regions {
  gh_dy_table *s;
  const gh_dy_by_regions *r;
} host_regions;

static unsigned word_region(const void *context, uint64_t i) {
  const host_regions *h = (const host_regions *)context;
  const gh_dy_geometry *g = &h->s->geometry;
  return (unsigned)gh_dy_region_of(g, &h->r->map, gh__read_word(h->r->keys, i, g->key_bits));
}

static void move_word(const void *context, uint64_t i, uint64_t to) {
  const host_regions *h = (const host_regions *)context;
  const gh_dy_geometry *g = &h->s->geometry;
  const uint64_t value = h->r->values ? gh__read_word(h->r->values, i, 32u) : 0u;
  ((uint64_t *)h->r->sorted)[to] = gh_region_word(g->key_bits, gh__read_word(h->r->keys, i, g->key_bits), value);
}

/* The partition's work space: where each region's run ends. */
static size_t host_regions_partition_bytes(gh_table *t, uint64_t n, uint64_t regions) {
  (void)t, (void)n;
  return (size_t)regions * sizeof(uint64_t);
}

static gh_status host_regions_partition(gh_table *t, const gh_dy_by_regions *r, uint64_t *longest, void *stream) {
  host_regions h = {state(t), r};
  (void)stream;
  *longest = gh__host_partition(r->n, (unsigned)r->regions, word_region, move_word, &h, (uint64_t *)r->work);
  return GH_OK;
}

static gh_counters regions_chunk(void *context, uint64_t begin, uint64_t end) {
  const host_regions *h = (const host_regions *)context;
  gh_dy_table *s = h->s;
  const gh_dy_by_regions *r = h->r;
  const gh_dy_geometry *g = &s->geometry;
  const uint64_t *ends = (const uint64_t *)r->work, *sorted = (const uint64_t *)r->sorted;
  uint64_t words[GH_REGION_WORDS];
  for (uint64_t region = begin; region < end; ++region) {
    const uint64_t from = region ? ends[region - 1u] : 0u;
    if (from == ends[region]) continue;
    const unsigned table = gh_dy_region_table(g, &r->map, region);
    const uint64_t first = gh_dy_region_bucket(&r->map, table, region);
    const uint64_t slots = gh_dy_region_buckets(g, &r->map, table, region) * g->slots;
    for (uint64_t j = 0; j < slots; ++j) words[j] = GH_REGION_EMPTY;
    uint64_t inserted = 0;
    for (uint64_t i = from; i < ends[region]; ++i) {
      const uint64_t b = gh_dy_bucket(g, table, gh_region_word_key(g->key_bits, sorted[i])) - first;
      const gh_dy_region_outcome outcome = gh_dy_region_put(g, words, b, s->side, s->counters, sorted[i], r->policy);
      inserted += outcome == GH_DY_REGION_INSERTED;
      if (outcome == GH_DY_REGION_FULL) gh_dy_region_pass_on(g, r, gh_fetch_add_u64(&s->counters->cursor, 1u), sorted[i]);
    }
    for (uint64_t j = 0; j < slots; ++j) gh_dy_region_store(g, s->sub[table].keys, s->sub[table].values, first, j, words[j]);
    gh_dy_count_key(s->counters, table, inserted);
  }
  gh_counters none = {{0}};
  return none;
}

static gh_status host_regions_build(gh_table *t, const gh_dy_by_regions *r, void *stream) {
  host_regions h = {state(t), r};
  (void)stream;
  gh__parallel_for(r->regions, t->config.host_threads, regions_chunk, &h);
  return GH_OK;
}

static int host_regions_by_default(gh_table *t, uint64_t n, uint64_t regions, uint64_t slots) {
  (void)t, (void)n, (void)regions, (void)slots;
  return 0;
}

static const gh_dy_backend host_backend = {host_bulk,
                                           host_claim,
                                           host_place,
                                           host_erase_pass,
                                           host_regions_by_default,
                                           host_regions_partition_bytes,
                                           host_regions_partition,
                                           host_regions_build,
                                           GH_PARTITION_MAX_DIGITS};

static gh_counters find_chunk(void *context, uint64_t begin, uint64_t end) {
  const host_pass *c = (const host_pass *)context;
  const gh_dy_table *s = c->s;
  const gh_dy_geometry *g = &s->geometry;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    const uint64_t key = gh__read_word(c->keys, i, g->key_bits);
    const void *value = c->default_value;
    unsigned table, k;
    uint64_t b;
    int found;
    if (key == gh_dy_empty_key(g)) {
      found = gh_dy_side_present(s->side);
      if (found) value = gh_dy_side_value(s->side);
    } else {
      found = locate(s, key, g->tables, &table, &b, &k);
      if (found) value = value_at(s, table, b, k);
    }
    if (c->values_out) gh_dy_value_copy(g, (char *)c->values_out + i * g->value_bytes, value);
    if (c->flags_out) c->flags_out[i] = (uint8_t)found;
  }
  return counted;
}

static gh_status host_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                           const void *default_value, void *stream) {
  host_pass c = {state(t), NULL, keys, NULL, 0, found_out, values_out, default_value};
  (void)stream;
  gh__parallel_for(n, t->config.host_threads, find_chunk, &c);
  return GH_OK;
}

static gh_status host_insert(gh_table *t, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                             uint8_t *failed_out, uint64_t *failed, void *stream) {
  return gh__dy_insert(t, &host_backend, keys, values, n, policy, failed_out, failed, stream);
}

static gh_status host_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out, uint64_t *erased,
                            void *stream) {
  return gh__dy_erase(t, &host_backend, keys, n, erased_out, erased, stream);
}

const gh_table_ops gh__dycuckoo_host_ops = {
    .name = "dycuckoo/host",
    .init = gh__dy_init,
    .release = gh__dy_release,
    .insert = host_insert,
    .find = host_find,
    .erase = host_erase,
    .count = NULL,
    .find_all = NULL,
    .export_all = gh__dy_export_host,
    .clear = gh__dy_clear,
    .size = gh__dy_size,
    .validate = gh__dy_validate,
    .keys_of_ids = NULL,
    .stats = gh__dy_stats,
    .device_view = NULL,
    .take_flags = NULL,
    .mixed = NULL,
    .compact = NULL,
    .join = NULL,
};
