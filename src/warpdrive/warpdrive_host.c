/* warpdrive_host.c - the warpdrive design on CPU threads: the same slots, probe sequences and
 * state machine as the GPU (gpuhash/detail/warpdrive.h), one key per thread at a time, C11 atomics for CAS. */
#include "core/parallel.h"
#include "core/toolkit.h"
#include "core/words.h"
#include "warpdrive/warpdrive_table.h"

static gh_wd_table *state(gh_table *t) { return (gh_wd_table *)t->impl; }

static void add_flags(gh_wd_table *w, unsigned flags) {
  if (flags) __atomic_fetch_or(&w->counters->status, flags, __ATOMIC_RELAXED);
}

/* The arguments of one bulk call, shared by its worker threads. */
typedef struct host_call {
  gh_wd_table *w;
  const void *keys;
  const void *values;
  void *values_out;
  uint8_t *flags_out;
  uint64_t default_value;
  int policy;
} host_call;

/* Counters: [0] keys inserted (or erased, or found), [1] keys that did not fit. */
static gh_counters insert_chunk(void *context, uint64_t begin, uint64_t end) {
  const host_call *c = (const host_call *)context;
  const gh_wd_geometry *g = &c->w->geometry;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    const uint64_t key = gh__read_word(c->keys, i, g->key_bits);
    const uint64_t value = c->values ? gh__read_word(c->values, i, g->value_bits) : 0;
    const gh_wd_outcome outcome = gh_wd_insert_serial(g, c->w->slots, key, value, c->policy, 0u);
    counted.value[0] += outcome == GH_WD_INSERTED;
    counted.value[1] += outcome == GH_WD_NOT_FITTED;
    if (c->flags_out) c->flags_out[i] = outcome == GH_WD_NOT_FITTED;
  }
  return counted;
}

/* ---- The bulk insert's steps (warpdrive_table.h) --------------------------------------------------
 * Not the default here (gh_config.bulk_min_keys = 0 leaves it off): CPU caches are small and the
 * partition runs on one thread. It runs when asked, with the GPU's rounds (a thread an entry on the
 * table itself, where the GPU builds regions in shared memory), so that the host backend tests
 * them. */
static const size_t kHostRegionBytes = 256u * 1024u;

static size_t host_region_bytes(gh_table *t) {
  (void)t;
  return kHostRegionBytes;
}

/* The round's entries as the partition sees them. */
typedef struct host_round {
  gh_wd_table *w;
  const gh_wd_round *r;
  gh_wd_geometry limited; /* non-last rounds: the probe limit cut to the round's windows */
  const void *entries;
  uint64_t passed;        /* entries passed on so far (atomic) */
} host_round;

static gh_slot_bits round_entry(const host_round *h, uint64_t i) {
  const gh_wd_round *r = h->r;
  const gh_wd_geometry *g = &h->w->geometry;
  if (r->pending) return gh_slot_read(gh_wd_format(g), (const char *)r->pending + i * g->slot_bytes);
  const uint64_t key = gh__read_word(r->keys, i, g->key_bits);
  return gh_wd_pack(g, key, g->value_bits && r->values ? gh__read_word(r->values, i, g->value_bits) : 0);
}

static unsigned entry_region(const void *context, uint64_t i) {
  const host_round *h = (const host_round *)context;
  const gh_wd_geometry *g = &h->w->geometry;
  const uint64_t key = gh_slot_bits_key(gh_wd_format(g), round_entry(h, i));
  return (unsigned)gh_wd_region_of(gh_wd_probe_at(g, key, h->r->attempt).window, h->r->region_shift);
}

static void move_entry(const void *context, uint64_t i, uint64_t to) {
  const host_round *h = (const host_round *)context;
  const gh_wd_geometry *g = &h->w->geometry;
  gh_slot_write(gh_wd_format(g), (char *)h->r->sorted + to * g->slot_bytes, round_entry(h, i));
}

static size_t host_partition_bytes(gh_table *t, uint64_t n, unsigned regions) {
  (void)t, (void)n;
  return (size_t)regions * sizeof(uint64_t);
}

static gh_status host_partition(gh_table *t, const gh_wd_round *r, uint64_t *longest, void *stream) {
  host_round h = {state(t), r, state(t)->geometry, NULL, 0};
  (void)stream;
  const uint64_t most = gh__host_partition(r->n, r->regions, entry_region, move_entry, &h, (uint64_t *)r->work);
  if (longest) *longest = most;
  return GH_OK;
}

/* Appends an entry the round passes on to the round's output (threads share the cursor). */
static void pass_on(host_round *h, gh_slot_format f, gh_slot_bits entry) {
  const uint64_t at = __atomic_fetch_add(&h->passed, 1u, __ATOMIC_RELAXED);
  gh_slot_write(f, (char *)h->r->passed + at * f.slot_bytes, entry);
}

/* Counters: [0] keys inserted, [1] keys that did not fit (last round). */
static gh_counters round_chunk(void *context, uint64_t begin, uint64_t end) {
  host_round *h = (host_round *)context;
  const gh_wd_round *r = h->r;
  const gh_wd_geometry *g = &h->w->geometry;
  const gh_slot_format f = gh_wd_format(g);
  gh_counters counted = {{0}};
  unsigned flags = 0;
  for (uint64_t i = begin; i < end; ++i) {
    const gh_slot_bits entry = gh_slot_read(f, (const char *)h->entries + i * g->slot_bytes);
    const gh_wd_outcome outcome = gh_wd_insert_serial(&h->limited, h->w->slots, gh_slot_bits_key(f, entry),
                                                      gh_slot_bits_value(f, entry), r->policy, r->attempt);
    if (outcome == GH_WD_NOT_FITTED && !r->last) {
      pass_on(h, f, entry);
      continue;
    }
    counted.value[0] += outcome == GH_WD_INSERTED;
    counted.value[1] += outcome == GH_WD_NOT_FITTED;
    flags |= gh_wd_outcome_flags(outcome);
  }
  add_flags(h->w, flags);
  return counted;
}

static gh_status host_round_step(gh_table *t, const gh_wd_round *r, const void *entries, gh_wd_call_counters *after,
                                 void *stream) {
  gh_wd_table *w = state(t);
  host_round h = {w, r, w->geometry, entries, 0};
  (void)stream;
  if (!r->last) h.limited.max_probe_windows = r->until;
  const gh_counters counted = gh__parallel_for(r->n, t->config.host_threads, round_chunk, &h);
  w->counters->size += counted.value[0];
  after->failed = counted.value[1];
  after->cursor = h.passed;
  return GH_OK;
}

/* Counters: [0] keys erased. */
static gh_counters erase_round_chunk(void *context, uint64_t begin, uint64_t end) {
  host_round *h = (host_round *)context;
  const gh_wd_round *r = h->r;
  const gh_wd_geometry *g = &h->w->geometry;
  const gh_slot_format f = gh_wd_format(g);
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    const gh_slot_bits entry = gh_slot_read(f, (const char *)h->entries + i * g->slot_bytes);
    const gh_wd_erased erased = gh_wd_erase_within(g, h->w->slots, gh_slot_bits_key(f, entry), r->last ? UINT32_MAX : r->until);
    if (erased == GH_WD_ERASE_UNDECIDED) pass_on(h, f, entry);
    counted.value[0] += erased == GH_WD_ERASE_REMOVED;
  }
  return counted;
}

static gh_status host_erase_round(gh_table *t, const gh_wd_round *r, const void *entries, gh_wd_call_counters *after,
                                  void *stream) {
  gh_wd_table *w = state(t);
  host_round h = {w, r, w->geometry, entries, 0};
  (void)stream;
  const gh_counters counted = gh__parallel_for(r->n, t->config.host_threads, erase_round_chunk, &h);
  w->counters->size -= counted.value[0];
  after->erased = counted.value[0];
  after->cursor = h.passed;
  return GH_OK;
}

static int host_takes_by_default(gh_table *t, uint64_t n, unsigned regions) {
  (void)t, (void)n, (void)regions;
  return 0;
}

static const gh_wd_bulk_backend host_bulk = {host_region_bytes, host_takes_by_default, host_partition_bytes,
                                             host_partition,    host_round_step,       host_erase_round,
                                             GH_PARTITION_MAX_DIGITS};

static gh_status host_insert(gh_table *t, const void *keys, const void *values, uint64_t n,
                             gh_dup_policy policy, uint8_t *failed_out, uint64_t *failed, void *stream) {
  gh_wd_table *w = state(t);
  int taken = 0;
  const gh_status bulk = gh__wd_bulk_insert(t, &host_bulk, keys, values, n, (int)policy, failed_out, failed, &taken,
                                            stream);
  if (bulk != GH_OK || taken) return bulk;
  host_call c = {w, keys, values, NULL, failed_out, 0, (int)policy};
  (void)stream;
  const gh_counters counted = gh__parallel_for(n, t->config.host_threads, insert_chunk, &c);
  w->counters->size += counted.value[0];
  *failed = counted.value[1];
  add_flags(w, (counted.value[1] ? GH_FLAG_PROBE_LIMIT : 0u) |
                   (counted.value[0] + counted.value[1] < n ? GH_FLAG_DUPLICATE : 0u));
  return GH_OK;
}

static gh_counters find_chunk(void *context, uint64_t begin, uint64_t end) {
  const host_call *c = (const host_call *)context;
  const gh_wd_geometry *g = &c->w->geometry;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    uint64_t value = c->default_value;
    const int found = gh_wd_find_serial(g, c->w->slots, gh__read_word(c->keys, i, g->key_bits), &value);
    if (c->values_out) gh__write_word(c->values_out, i, g->value_bits, value);
    if (c->flags_out) c->flags_out[i] = (uint8_t)found;
    counted.value[0] += (uint64_t)found;
  }
  return counted;
}

static gh_status host_find(gh_table *t, const void *keys, uint64_t n, void *values_out,
                           uint8_t *found_out, const void *default_value, void *stream) {
  host_call c = {state(t), keys, NULL, values_out, found_out, gh__value_word(t, default_value), 0};
  (void)stream;
  gh__parallel_for(n, t->config.host_threads, find_chunk, &c);
  return GH_OK;
}

static gh_counters erase_chunk(void *context, uint64_t begin, uint64_t end) {
  const host_call *c = (const host_call *)context;
  const gh_wd_geometry *g = &c->w->geometry;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    const int erased = gh_wd_erase_serial(g, c->w->slots, gh__read_word(c->keys, i, g->key_bits));
    if (c->flags_out) c->flags_out[i] = (uint8_t)erased;
    counted.value[0] += (uint64_t)erased;
  }
  return counted;
}

static gh_status host_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out,
                            uint64_t *erased, void *stream) {
  gh_wd_table *w = state(t);
  int taken = 0;
  gh_status status = gh__wd_bulk_erase(t, &host_bulk, keys, n, erased_out, erased, &taken, stream);
  if (!taken) {
    host_call c = {w, keys, NULL, NULL, erased_out, 0, 0};
    const gh_counters counted = gh__parallel_for(n, t->config.host_threads, erase_chunk, &c);
    w->counters->size -= counted.value[0];
    *erased = counted.value[0];
  }
  if (*erased) w->tombstones_possible = 1;
  return status;
}

static gh_status host_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_wd_table *w = state(t);
  const gh_wd_geometry *g = &w->geometry;
  const uint64_t main_slots = g->window_count * g->window_width;
  uint64_t written = 0;
  (void)stream;
  for (uint64_t i = 0; i < main_slots + GH_WD_SIDE_SLOTS; ++i) {
    const void *slot = gh_wd_slot_at(g, w->slots, i);
    const uint64_t key = gh_wd_load_key(g, slot);
    uint64_t stored_key = key;
    if (i >= main_slots) {
      if (key != GH_WD_SIDE_PRESENT) continue;
      stored_key = i == main_slots ? gh_wd_empty_key(g->key_bits) : gh_wd_tombstone_key(g->key_bits);
    } else if (gh_wd_is_sentinel(key, g->key_bits)) {
      continue;
    }
    gh__write_word(keys_out, written, g->key_bits, stored_key);
    if (values_out) gh__write_word(values_out, written, g->value_bits, gh_wd_load_value(g, slot));
    written += 1;
  }
  *count = written;
  return GH_OK;
}

/* gh_get_stats: the tombstones among the main slots (the generic fields are core's). */
static gh_counters tombstones_chunk(void *context, uint64_t begin, uint64_t end) {
  const gh_wd_table *w = (const gh_wd_table *)context;
  const uint64_t tomb = gh_wd_tombstone_key(w->geometry.key_bits);
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i)
    counted.value[0] += gh_wd_load_key(&w->geometry, gh_wd_slot_at(&w->geometry, w->slots, i)) == tomb;
  return counted;
}

static gh_status host_stats(gh_table *t, gh_stats *stats) {
  gh_wd_table *w = state(t);
  const uint64_t main_slots = w->geometry.window_count * w->geometry.window_width;
  stats->tombstones = gh__parallel_for(main_slots, t->config.host_threads, tombstones_chunk, w).value[0];
  return GH_OK;
}

/* A pass of gh_compact's in-place rehash (gpuhash/detail/warpdrive.h) over a range of slots. */
typedef struct rehash_call {
  const gh_wd_table *w;
  const uint32_t *marked_before;
  uint32_t *marked;
} rehash_call;

static gh_counters rehash_chunk(void *context, uint64_t begin, uint64_t end) {
  const rehash_call *c = (const rehash_call *)context;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i)
    counted.value[0] += (uint64_t)gh_wd_rehash_slot(&c->w->geometry, c->w->slots, i, c->marked_before, c->marked);
  return counted;
}

static gh_status host_rehash_pass(gh_table *t, const uint32_t *marked_before, uint32_t *marked, uint64_t *changed,
                                  void *stream) {
  rehash_call c = {state(t), marked_before, marked};
  (void)stream;
  *changed = gh__parallel_for(c.w->geometry.window_count * c.w->geometry.window_width, t->config.host_threads,
                              rehash_chunk, &c).value[0];
  return GH_OK;
}

static gh_status host_compact(gh_table *t, void *stream) { return gh__wd_compact(t, host_rehash_pass, stream); }

const gh_table_ops gh__warpdrive_host_ops = {
    .name = "warpdrive/host",
    .init = gh__wd_init,
    .release = gh__wd_release,
    .insert = host_insert,
    .find = host_find,
    .erase = host_erase,
    .count = NULL,
    .find_all = NULL,
    .export_all = host_export,
    .clear = gh__wd_clear,
    .size = gh__wd_size,
    .validate = gh__wd_validate,
    .keys_of_ids = NULL,
    .stats = host_stats,
    .device_view = NULL,
    .take_flags = gh__wd_take_flags,
    .mixed = NULL,
    .compact = host_compact,
    .join = NULL,
};
