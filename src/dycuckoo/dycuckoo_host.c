/* dycuckoo_host.c - the DyCuckoo design on the host backend, one operation per thread (work in
 * progress on branch wip/dycuckoo, docs/dycuckoo-plan.md): lookups scan the key's bucket in each
 * subtable in order; inserts take a bucket's lock word with a CAS (the lower subtable first when a
 * forward move holds two), write the value, then the key; erases CAS the key to EMPTY.
 * Not yet: downsizing, statistics, validate, the batch reduction to unique keys (so far the
 * inserts of one batch must hold distinct keys), the CUDA backend. */
#include <sched.h>
#include <string.h>

#include "core/parallel.h"
#include "gpuhash/detail/slot.h"
#include "core/toolkit.h"
#include "dycuckoo/dycuckoo_table.h"

static gh_dy_table *state(gh_table *t) { return (gh_dy_table *)t->impl; }

static void *key_line(const gh_dy_table *s, unsigned i, uint64_t b) {
  return (char *)s->sub[i].keys + b * GH_DY_LINE_BYTES;
}

static void *value_at(const gh_dy_table *s, unsigned i, uint64_t b, unsigned k) {
  const gh_dy_geometry *g = &s->geometry;
  return (char *)s->sub[i].values + ((size_t)b * g->slots + k) * g->value_bytes;
}

static uint64_t load_key(const gh_dy_geometry *g, const void *line, unsigned k) {
  if (g->key_bits == 32) return __atomic_load_n((const uint32_t *)line + k, __ATOMIC_ACQUIRE);
  return __atomic_load_n((const uint64_t *)line + k, __ATOMIC_ACQUIRE);
}

static void store_key(const gh_dy_geometry *g, void *line, unsigned k, uint64_t key) {
  if (g->key_bits == 32) __atomic_store_n((uint32_t *)line + k, (uint32_t)key, __ATOMIC_RELEASE);
  else __atomic_store_n((uint64_t *)line + k, key, __ATOMIC_RELEASE);
}

static int try_lock(const gh_dy_table *s, unsigned i, uint64_t b) {
  uint32_t expected = GH_DY_LOCK_FREE;
  return __atomic_compare_exchange_n(&s->sub[i].locks[b], &expected, GH_DY_LOCK_HELD, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED);
}

/* Waits for the lock (a thread holds at most two, taken in subtable order: no cycle). */
static void lock(const gh_dy_table *s, unsigned i, uint64_t b) {
  while (!try_lock(s, i, b)) sched_yield();
}

static void unlock(const gh_dy_table *s, unsigned i, uint64_t b) {
  __atomic_store_n(&s->sub[i].locks[b], GH_DY_LOCK_FREE, __ATOMIC_RELEASE);
}

/* Where key is: 1 with (*table, *bucket, *slot), scanning the subtables in order (which never
 * misses a key being moved: moves copy before they delete and go to later subtables). */
static int locate(const gh_dy_table *s, uint64_t key, unsigned *table, uint64_t *bucket, unsigned *slot) {
  const gh_dy_geometry *g = &s->geometry;
  for (unsigned i = 0; i < g->tables; ++i) {
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
  const uint64_t empty = gh_dy_empty_key(g);
  for (unsigned k = 0; k < g->slots; ++k)
    if (load_key(g, line, k) == empty) return k;
  return g->slots;
}

static void put(gh_dy_table *s, unsigned i, uint64_t b, unsigned k, uint64_t key, const void *value) {
  if (s->geometry.value_bytes) memcpy(value_at(s, i, b, k), value, s->geometry.value_bytes);
  store_key(&s->geometry, key_line(s, i, b), k, key);
}

/* Places key in the locked bucket b of subtable i: a free slot, or one made by moving a resident
 * forward (to its bucket in a later subtable, copied there before its slot is reused). 1 when
 * placed. */
static int place_locked(gh_dy_table *s, unsigned i, uint64_t b, uint64_t key, const void *value) {
  const gh_dy_geometry *g = &s->geometry;
  unsigned k = free_slot(s, i, b);
  if (k < g->slots) {
    put(s, i, b, k, key, value);
    __atomic_fetch_add(&s->counters->keys[i], 1ull, __ATOMIC_RELAXED);
    return 1;
  }
  for (k = 0; k < g->slots; ++k) {
    const uint64_t resident = load_key(g, key_line(s, i, b), k);
    for (unsigned j = i + 1; j < g->tables; ++j) {
      const uint64_t y = gh_dy_bucket(g, j, resident);
      lock(s, j, y);
      const unsigned u = free_slot(s, j, y);
      if (u < g->slots) {
        put(s, j, y, u, resident, g->value_bytes ? value_at(s, i, b, k) : NULL);
        put(s, i, b, k, key, value);
        __atomic_fetch_add(&s->counters->keys[j], 1ull, __ATOMIC_RELAXED);
        __atomic_fetch_add(&s->counters->evictions, 1ull, __ATOMIC_RELAXED);
        unlock(s, j, y);
        return 1;
      }
      unlock(s, j, y);
    }
  }
  return 0;
}

/* Inserts one key of a batch of distinct keys. 1 stored, 0 merged, 2 no room (nothing changed). */
static int insert_one(gh_dy_table *s, uint64_t key, const void *value, int policy) {
  const gh_dy_geometry *g = &s->geometry;
  for (;;) {
    unsigned i, k;
    uint64_t b;
    if (locate(s, key, &i, &b, &k)) {
      lock(s, i, b);
      const int still = load_key(g, key_line(s, i, b), k) == key;
      if (still && g->value_bytes) {
        void *v = value_at(s, i, b, k);
        uint64_t stored = 0, incoming = 0;
        memcpy(&stored, v, g->value_bytes);
        memcpy(&incoming, value, g->value_bytes);
        const uint64_t merged = gh_policy_combine(policy, g->value_bytes * 8u, stored, incoming);
        memcpy(v, &merged, g->value_bytes);
      }
      unlock(s, i, b);
      if (still) return 0;
      continue; /* moved meanwhile: look again */
    }
    const unsigned first = gh_dy_target(g, key);
    for (unsigned step = 0; step < g->tables; ++step) {
      i = (first + step) % g->tables;
      b = gh_dy_bucket(g, i, key);
      lock(s, i, b);
      const int placed = place_locked(s, i, b, key, value);
      unlock(s, i, b);
      if (placed) return 1;
    }
    return 2;
  }
}

/* ---- Storage ------------------------------------------------------------------------------------ */

static void free_subtable(gh_table *t, gh_dy_subtable *sub, uint64_t buckets) {
  const gh_dy_geometry *g = &state(t)->geometry;
  gh__free(t, sub->keys, (size_t)buckets * GH_DY_LINE_BYTES, GH_MEMORY_HOST);
  gh__free(t, sub->values, (size_t)buckets * g->slots * g->value_bytes, GH_MEMORY_HOST);
  gh__free(t, sub->locks, (size_t)buckets * sizeof(uint32_t), GH_MEMORY_HOST);
  memset(sub, 0, sizeof *sub);
}

/* An empty subtable of `buckets` buckets; all or nothing. */
static gh_status new_subtable(gh_table *t, gh_dy_subtable *sub, uint64_t buckets) {
  const gh_dy_geometry *g = &state(t)->geometry;
  memset(sub, 0, sizeof *sub);
  sub->keys = gh__alloc(t, (size_t)buckets * GH_DY_LINE_BYTES, GH_MEMORY_HOST);
  sub->values = g->value_bytes ? gh__alloc(t, (size_t)buckets * g->slots * g->value_bytes, GH_MEMORY_HOST) : NULL;
  sub->locks = (uint32_t *)gh__alloc(t, (size_t)buckets * sizeof(uint32_t), GH_MEMORY_HOST);
  if (sub->keys == NULL || (g->value_bytes && sub->values == NULL) || sub->locks == NULL) {
    free_subtable(t, sub, buckets);
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no host memory for a subtable of %llu buckets", (unsigned long long)buckets);
  }
  memset(sub->keys, 0xFF, (size_t)buckets * GH_DY_LINE_BYTES);
  memset(sub->locks, 0, (size_t)buckets * sizeof(uint32_t));
  return GH_OK;
}

/* Doubles subtable i: bucket b's keys go to 2b or 2b + 1 of a new array (no conflicts, no locks).
 * All or nothing. */
static gh_status upsize(gh_table *t, unsigned i) {
  gh_dy_table *s = state(t);
  gh_dy_geometry *g = &s->geometry;
  const uint64_t old_buckets = g->buckets[i], buckets = 2u * old_buckets;
  gh_dy_subtable grown;
  const gh_status status = new_subtable(t, &grown, buckets);
  if (status != GH_OK) return status;
  const uint64_t empty = gh_dy_empty_key(g);
  for (uint64_t b = 0; b < old_buckets; ++b) {
    unsigned fill[2] = {0, 0};
    for (unsigned k = 0; k < g->slots; ++k) {
      const uint64_t key = gh_dy_line_key(g, key_line(s, i, b), k);
      if (key == empty) continue;
      const uint64_t to = gh_dy_bucket_of(g, i, buckets, key);
      const unsigned half = (unsigned)(to - 2u * b);
      void *line = (char *)grown.keys + to * GH_DY_LINE_BYTES;
      if (g->value_bytes)
        memcpy((char *)grown.values + ((size_t)to * g->slots + fill[half]) * g->value_bytes, value_at(s, i, b, k),
               g->value_bytes);
      if (g->key_bits == 32) ((uint32_t *)line)[fill[half]++] = (uint32_t)key;
      else ((uint64_t *)line)[fill[half]++] = key;
    }
  }
  free_subtable(t, &s->sub[i], old_buckets);
  s->sub[i] = grown;
  g->buckets[i] = buckets;
  s->upsizes += 1;
  return GH_OK;
}
