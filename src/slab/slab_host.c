/* slab_host.c - the slab hash on CPU threads: the same slabs, lists and SlabAlloc bitmaps as the
 * GPU, one operation per thread at a time, C11 atomics (gpuhash/detail/atomics.h) for every
 * shared word. No mutex: entries are claimed with a CAS of the whole slot, slabs are linked with
 * a CAS of the tail's next lane, SlabAlloc bits are set with a CAS of their bitmap word. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "core/toolkit.h"
#include "core/words.h"
#include "slab/slab_table.h"

static gh_slab_table *state(gh_table *t) { return (gh_slab_table *)t->impl; }

typedef enum outcome { OUT_MERGED = 0, OUT_INSERTED = 1, OUT_NOT_FITTED = 2 } outcome;

/* A worker thread's SlabAlloc state: its resident memory block. */
typedef struct alloc_state {
  uint32_t who;
  uint32_t attempt;
  uint32_t resident; /* global block number, or GH_SLAB_NULL before the first choice */
} alloc_state;

/* One bulk call, shared by its worker threads. */
typedef struct host_call {
  gh_slab_table *s;
  gh_slab_pool pool;
  const uint8_t *ops;
  const void *keys;
  const void *values;
  void *values_out;
  uint8_t *flags_out;
  uint64_t default_value;
  int policy;
  gh_slab_insert_mode mode;
  void **first_match; /* multivalue erase: phase 1's first match per key */
  uint32_t *new_base;   /* a split: the base slabs of twice the buckets */
  uint32_t *retry_bits; /* a batch: see gh_slab_batch */
  int rerun;
  uint32_t next_who;
} host_call;

/* ---- SlabAlloc on the host ---------------------------------------------------------------------- */

/* Takes a free slab of a memory block (global number); GH_SLAB_NULL when it is full. */
static uint32_t take_from_block(const gh_slab_pool *p, uint32_t global) {
  uint32_t super, block;
  gh_slab_block_locate(p, global, &super, &block);
  uint32_t *words = p->bitmap[super] + (uint64_t)block * GH_SLAB_BLOCK_WORDS;
  for (unsigned w = 0; w < GH_SLAB_BLOCK_WORDS; ++w) {
    uint32_t seen = gh_load_u32(&words[w]);
    while (seen != 0xFFFFFFFFu) {
      const unsigned bit = (unsigned)__builtin_ctz(~seen);
      const uint32_t before = gh_cas_u32(&words[w], seen, seen | (1u << bit));
      if (before == seen) return gh_slab_address(super, block, w * 32u + bit);
      seen = before;
    }
  }
  return GH_SLAB_NULL;
}

static uint32_t slab_alloc(const host_call *c, alloc_state *a) {
  const gh_slab_pool *p = &c->pool;
  if (p->total_blocks == 0) return GH_SLAB_NULL;
  for (unsigned i = 0; i < GH_SLAB_ALLOC_ATTEMPTS; ++i) {
    if (a->resident == GH_SLAB_NULL) a->resident = gh_slab_resident_block(p, a->who, a->attempt++);
    const uint32_t address = take_from_block(p, a->resident);
    if (address != GH_SLAB_NULL) {
      __atomic_fetch_add(&c->s->counters->slabs_in_use, 1ull, __ATOMIC_RELAXED);
      return address;
    }
    a->resident = GH_SLAB_NULL; /* full: a hashed choice of the next one */
  }
  /* The host falls back to every block, so a reservation always suffices. */
  for (uint32_t b = 0; b < p->total_blocks; ++b) {
    const uint32_t address = take_from_block(p, b);
    if (address != GH_SLAB_NULL) {
      a->resident = b;
      __atomic_fetch_add(&c->s->counters->slabs_in_use, 1ull, __ATOMIC_RELAXED);
      return address;
    }
  }
  return GH_SLAB_NULL;
}

/* ---- One operation on one list ------------------------------------------------------------------- */

static uint32_t *head_of(const host_call *c, uint64_t bucket) { return c->s->base + bucket * GH_SLAB_LANES; }
static void *entry_of(const gh_slab_geometry *g, uint32_t *slab, unsigned i) { return gh_slab_entry(g->format, slab, i); }
static uint32_t *next_slab(const host_call *c, const uint32_t *slab) { return gh_slab_next(&c->pool, slab); }

static outcome insert_one(const host_call *c, alloc_state *a, uint64_t key, uint64_t value, gh_slab_insert_mode mode) {
  const gh_slab_geometry *g = &c->s->geometry;
  const gh_slot_format f = g->format;
  const uint64_t empty = gh_slab_empty_key(g), tomb = gh_slab_tombstone_key(g);
  uint64_t stored;
  const uint64_t bucket = gh_slab_bucket(g, key, &stored);
  const gh_slot_bits desired = gh_slot_pack(f, stored, value);
  uint32_t spare = GH_SLAB_NULL;
  outcome result = OUT_NOT_FITTED;
  for (;;) {
    uint32_t *slab = head_of(c, bucket), *tail = slab;
    void *target = NULL;
    gh_slot_bits target_bits = desired;
    int done = 0;
    for (; slab != NULL && !done; slab = next_slab(c, slab)) {
      tail = slab;
      for (unsigned i = 0; i < g->per_slab; ++i) {
        void *e = entry_of(g, slab, i);
        const gh_slot_bits bits = gh_slot_load(f, e);
        const uint64_t k = gh_slot_bits_key(f, bits);
        if (k == stored && mode != GH_SLAB_APPEND) {
          gh_slot_update_value(f, e, c->policy, value);
          result = OUT_MERGED;
          goto finish;
        }
        if (k == empty || (k == tomb && mode != GH_SLAB_FRONTIER && target == NULL)) {
          if (target == NULL) {
            target = e;
            target_bits = bits;
          }
          /* EMPTY entries are the tail of a list: nothing follows. GH_SLAB_APPEND takes the first free. */
          if (k == empty || mode == GH_SLAB_APPEND) {
            done = 1;
            break;
          }
        }
      }
    }
    if (target != NULL) {
      if (gh_slot_bits_equal(gh_slot_cas(f, target, target_bits, desired), target_bits)) {
        result = OUT_INSERTED;
        goto finish;
      }
      continue; /* lost the entry: decide again from the list's start */
    }
    /* No free entry: link a new slab that already holds the entry. */
    if (spare == GH_SLAB_NULL && (spare = slab_alloc(c, a)) == GH_SLAB_NULL) goto finish;
    uint32_t *fresh = gh_slab_at(&c->pool, spare);
    memset(fresh, 0xFF, GH_SLAB_BYTES);
    gh_slot_write(f, fresh, desired);
    if (gh_cas_u32(&tail[GH_SLAB_NEXT_LANE], GH_SLAB_NULL, spare) == GH_SLAB_NULL) {
      spare = GH_SLAB_NULL;
      result = OUT_INSERTED;
      goto finish;
    }
    /* Another thread linked first: its slab may hold the key now; keep ours for later. */
  }
finish:
  if (spare != GH_SLAB_NULL) gh_slab_free(&c->pool, &c->s->counters->slabs_in_use, spare);
  return result;
}

/* The entries of one key in list order: an iterator that stops at the first EMPTY entry (nothing
 * follows it) or the list's end. */
typedef struct match_iter {
  uint32_t *slab;
  unsigned next; /* entry of slab to read next */
  uint64_t stored;
} match_iter;

static match_iter match_begin(const host_call *c, uint64_t key) {
  match_iter it;
  it.slab = head_of(c, gh_slab_bucket(&c->s->geometry, key, &it.stored));
  it.next = 0;
  return it;
}

/* The next entry holding the key, or NULL when there is none. */
static void *match_next(const host_call *c, match_iter *it) {
  const gh_slab_geometry *g = &c->s->geometry;
  const uint64_t empty = gh_slab_empty_key(g);
  for (; it->slab != NULL; it->slab = next_slab(c, it->slab), it->next = 0) {
    while (it->next < g->per_slab) {
      void *e = entry_of(g, it->slab, it->next++);
      const uint64_t k = gh_slot_load_key(g->format, e);
      if (k == it->stored) return e;
      if (k == empty) return it->slab = NULL;
    }
  }
  return NULL;
}

/* The first entry holding the key (map: the only one), or NULL. */
static void *find_entry(const host_call *c, uint64_t key) {
  match_iter it = match_begin(c, key);
  return match_next(c, &it);
}

/* Erases every entry of the key (all) or the first; returns how many this caller removed. */
static uint64_t erase_from(const host_call *c, uint64_t key, int all) {
  match_iter it = match_begin(c, key);
  uint64_t removed = 0;
  for (void *e; (e = match_next(c, &it)) != NULL;) {
    if (!gh_slab_tombstone_entry(&c->s->geometry, e, it.stored)) continue;
    removed += 1;
    if (!all) break;
  }
  return removed;
}

/* Writes every value of the key to out[at..] (when out is given), in list order; returns how many. */
static uint64_t each_value(const host_call *c, uint64_t key, void *out, uint64_t at) {
  const gh_slot_format f = c->s->geometry.format;
  match_iter it = match_begin(c, key);
  uint64_t count = 0;
  for (void *e; (e = match_next(c, &it)) != NULL; ++count)
    if (out) gh__write_word(out, at + count, f.value_bits, gh_slot_load_value(f, e));
  return count;
}

/* ---- Bulk operations ------------------------------------------------------------------------------ */

static void begin_call(gh_table *t, host_call *c) {
  memset(c, 0, sizeof *c);
  c->s = state(t);
  c->pool = c->s->pool;
}

static alloc_state alloc_begin(host_call *c) {
  alloc_state a;
  a.who = __atomic_fetch_add(&c->next_who, 1u, __ATOMIC_RELAXED);
  a.attempt = 0;
  a.resident = GH_SLAB_NULL;
  return a;
}

/* The call's state for a batch of updates. */
static host_call batch_call(gh_table *t, const gh_slab_batch *b) {
  host_call c;
  begin_call(t, &c);
  c.ops = b->ops;
  c.keys = b->keys;
  c.values = b->values;
  c.values_out = b->values_out;
  c.flags_out = b->results_out;
  c.retry_bits = b->retry_bits;
  c.rerun = b->rerun;
  c.policy = b->policy;
  c.mode = b->mode;
  return c;
}

/* A worker thread holds at most one spare slab at a time. */
static uint64_t spares(gh_table *t, const gh_slab_batch *b) {
  (void)t;
  (void)b;
  return gh__cpu_count() + 1;
}

/* Whether operation i runs in this pass: every one, or on a rerun the flagged ones. */
static int runs_now(const host_call *c, uint64_t i) {
  return !c->rerun || (__atomic_load_n(&c->retry_bits[i / 32], __ATOMIC_RELAXED) >> (i % 32)) & 1u;
}

/* Keeps the retry bit of insert i: set when it found no slab, cleared when a rerun placed it. */
static void note_insert(const host_call *c, uint64_t i, int not_fitted) {
  if (c->retry_bits == NULL) return;
  if (not_fitted && !c->rerun) __atomic_fetch_or(&c->retry_bits[i / 32], 1u << (i % 32), __ATOMIC_RELAXED);
  if (!not_fitted && c->rerun) __atomic_fetch_and(&c->retry_bits[i / 32], ~(1u << (i % 32)), __ATOMIC_RELAXED);
}

/* Counters: [0] inserted, [1] not fitted. */
static gh_counters insert_chunk(void *context, uint64_t begin, uint64_t end) {
  host_call *c = (host_call *)context;
  const gh_slab_geometry *g = &c->s->geometry;
  alloc_state a = alloc_begin(c);
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    if (!runs_now(c, i)) continue;
    const uint64_t key = gh__read_word(c->keys, i, g->format.key_bits);
    const uint64_t value = c->values ? gh__read_word(c->values, i, g->format.value_bits) : 0;
    const outcome o = insert_one(c, &a, key, value, c->mode);
    counted.value[0] += o == OUT_INSERTED;
    counted.value[1] += o == OUT_NOT_FITTED;
    note_insert(c, i, o == OUT_NOT_FITTED);
    if (c->flags_out) c->flags_out[i] = o == OUT_NOT_FITTED;
  }
  return counted;
}

static gh_counters mixed_chunk(void *context, uint64_t begin, uint64_t end);

/* Counters of both chunk kinds: [0] inserted, [1] not fitted, [2] pairs erased (mixed only). */
static gh_status run_batch(gh_table *t, const gh_slab_batch *b, uint64_t *failed, void *stream) {
  host_call c = batch_call(t, b);
  (void)stream;
  const gh_counters counted = gh__parallel_for(b->n, t->config.host_threads, b->ops ? mixed_chunk : insert_chunk, &c);
  c.s->counters->size += counted.value[0];
  c.s->counters->size -= counted.value[2];
  *failed = counted.value[1];
  return GH_OK;
}

static gh_counters split_chunk(void *context, uint64_t begin, uint64_t end) {
  host_call *c = (host_call *)context;
  gh_counters counted = {{0}};
  for (uint64_t b = begin; b < end; ++b)
    gh_slab_split_list(&c->s->geometry, &c->pool, &c->s->counters->slabs_in_use, c->s->base, b, c->new_base);
  return counted;
}

static gh_status split_lists(gh_table *t, uint32_t *new_base, void *stream) {
  host_call c;
  (void)stream;
  begin_call(t, &c);
  c.new_base = new_base;
  gh__parallel_for(c.s->geometry.buckets + 2, t->config.host_threads, split_chunk, &c);
  return GH_OK;
}

static const gh_slab_batch_runner host_runner = {spares, run_batch, split_lists};

static gh_status host_insert(gh_table *t, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                             uint8_t *failed_out, uint64_t *failed, void *stream) {
  const gh_slab_batch b = {NULL, keys, values, n, NULL, failed_out, (int)policy,
                           gh_slab_insert_mode_for(t->config.variant == GH_VARIANT_MULTIVALUE, 0), NULL, 0};
  return gh__slab_run_batch(t, &host_runner, &b, failed, stream);
}

static gh_counters find_chunk(void *context, uint64_t begin, uint64_t end) {
  host_call *c = (host_call *)context;
  const gh_slab_geometry *g = &c->s->geometry;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    const void *e = find_entry(c, gh__read_word(c->keys, i, g->format.key_bits));
    if (c->values_out) gh__write_word(c->values_out, i, g->format.value_bits, e ? gh_slot_load_value(g->format, e) : c->default_value);
    if (c->flags_out) c->flags_out[i] = e != NULL;
  }
  return counted;
}

static gh_status host_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                           const void *default_value, void *stream) {
  host_call c;
  (void)stream;
  begin_call(t, &c);
  c.keys = keys;
  c.values_out = values_out;
  c.flags_out = found_out;
  c.default_value = gh__value_word(t, default_value);
  gh__parallel_for(n, t->config.host_threads, find_chunk, &c);
  return GH_OK;
}

/* Map: [0] keys erased. Multivalue phase 1 records each key's first entry; phase 2 (erase_chunk with
 * first_match set) elects the op that tombstones that entry, then removes the rest:
 * [0] keys erased (one position per key), [1] pairs removed. */
static gh_counters first_match_chunk(void *context, uint64_t begin, uint64_t end) {
  host_call *c = (host_call *)context;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i)
    c->first_match[i] = find_entry(c, gh__read_word(c->keys, i, c->s->geometry.format.key_bits));
  return counted;
}

static gh_counters erase_chunk(void *context, uint64_t begin, uint64_t end) {
  host_call *c = (host_call *)context;
  const gh_slab_geometry *g = &c->s->geometry;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    const uint64_t key = gh__read_word(c->keys, i, g->format.key_bits);
    int erased;
    if (c->first_match) {
      uint64_t stored;
      gh_slab_bucket(g, key, &stored);
      erased = c->first_match[i] != NULL && gh_slab_tombstone_entry(g, c->first_match[i], stored);
      const uint64_t removed = (uint64_t)erased + erase_from(c, key, 1);
      counted.value[1] += removed;
    } else {
      erased = erase_from(c, key, 0) > 0;
      counted.value[1] += (uint64_t)erased;
    }
    counted.value[0] += (uint64_t)erased;
    if (c->flags_out) c->flags_out[i] = (uint8_t)erased;
  }
  return counted;
}

static gh_status host_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out, uint64_t *erased,
                            void *stream) {
  host_call c;
  gh_scratch first = {0};
  (void)stream;
  begin_call(t, &c);
  c.keys = keys;
  c.flags_out = erased_out;
  if (t->config.variant == GH_VARIANT_MULTIVALUE) {
    gh_status status = gh__scratch_alloc(t, &first, (size_t)n * sizeof(void *));
    if (status != GH_OK) return status;
    c.first_match = (void **)first.ptr;
    gh__parallel_for(n, t->config.host_threads, first_match_chunk, &c);
  }
  const gh_counters counted = gh__parallel_for(n, t->config.host_threads, erase_chunk, &c);
  gh__scratch_free(t, &first, NULL);
  c.s->counters->size -= counted.value[1];
  *erased = counted.value[0];
  return GH_OK;
}

static gh_counters count_values_chunk(void *context, uint64_t begin, uint64_t end) {
  host_call *c = (host_call *)context;
  gh_counters counted = {{0}};
  uint64_t *counts = (uint64_t *)c->values_out;
  for (uint64_t i = begin; i < end; ++i) {
    const uint64_t k = each_value(c, gh__read_word(c->keys, i, c->s->geometry.format.key_bits), NULL, 0);
    if (counts) counts[i] = k;
    counted.value[0] += k;
  }
  return counted;
}

static gh_status host_count(gh_table *t, const void *keys, uint64_t n, uint64_t *counts_out, uint64_t *total,
                            void *stream) {
  host_call c;
  (void)stream;
  begin_call(t, &c);
  c.keys = keys;
  c.values_out = counts_out;
  const gh_counters counted = gh__parallel_for(n, t->config.host_threads, count_values_chunk, &c);
  if (total) *total = counted.value[0];
  return GH_OK;
}

static gh_status host_find_all(gh_table *t, const void *keys, uint64_t n, uint64_t *offsets_out, void *values_out,
                               uint64_t values_capacity, void *stream) {
  host_call c;
  (void)stream;
  begin_call(t, &c);
  c.keys = keys;
  c.values_out = offsets_out;
  gh__parallel_for(n, t->config.host_threads, count_values_chunk, &c);
  offsets_out[n] = 0;
  gh_status status = gh__host_exclusive_sum_u64(t, offsets_out, offsets_out, n + 1);
  if (status != GH_OK) return status;
  if (offsets_out[n] > values_capacity)
    return gh__fail(t, GH_ERR_BUFFER_TOO_SMALL, "gh_find_all: the keys have %llu values but values_capacity is %llu; "
                    "offsets_out says where each key's values would go, no value was written",
                    (unsigned long long)offsets_out[n], (unsigned long long)values_capacity);
  for (uint64_t i = 0; i < n && values_out; ++i)
    each_value(&c, gh__read_word(keys, i, c.s->geometry.format.key_bits), values_out, offsets_out[i]);
  return GH_OK;
}

static gh_status host_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  host_call c;
  (void)stream;
  begin_call(t, &c);
  const gh_slab_geometry *g = &c.s->geometry;
  const gh_slot_format f = g->format;
  const uint64_t empty = gh_slab_empty_key(g), tomb = gh_slab_tombstone_key(g);
  uint64_t written = 0;
  for (uint64_t b = 0; b < g->buckets + 2; ++b) {
    for (uint32_t *slab = head_of(&c, b); slab != NULL; slab = next_slab(&c, slab)) {
      for (unsigned i = 0; i < g->per_slab; ++i) {
        const void *e = entry_of(g, slab, i);
        const uint64_t k = gh_slot_load_key(f, e);
        if (k == empty || k == tomb) continue;
        gh__write_word(keys_out, written, f.key_bits, gh_slab_user_key(g, b, k));
        if (values_out) gh__write_word(values_out, written, f.value_bits, gh_slot_load_value(f, e));
        written += 1;
      }
    }
  }
  *count = written;
  return GH_OK;
}

/* ---- The mixed batch ------------------------------------------------------------------------------ */

/* Counters: [0] inserted, [1] not fitted, [2] pairs erased. */
static gh_counters mixed_chunk(void *context, uint64_t begin, uint64_t end) {
  host_call *c = (host_call *)context;
  const gh_slab_geometry *g = &c->s->geometry;
  const int multi = c->mode == GH_SLAB_APPEND;
  alloc_state a = alloc_begin(c);
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    if (!runs_now(c, i)) continue;
    const uint64_t key = gh__read_word(c->keys, i, g->format.key_bits);
    uint8_t result = 0;
    if (c->ops[i] == GH_OP_INSERT) {
      const uint64_t value = c->values ? gh__read_word(c->values, i, g->format.value_bits) : 0;
      const outcome o = insert_one(c, &a, key, value, c->mode);
      counted.value[0] += o == OUT_INSERTED;
      counted.value[1] += o == OUT_NOT_FITTED;
      note_insert(c, i, o == OUT_NOT_FITTED);
      result = (uint8_t)o;
    } else if (c->ops[i] == GH_OP_ERASE) {
      const uint64_t removed = erase_from(c, key, multi);
      counted.value[2] += removed;
      result = removed > 0;
    } else {
      const void *e = find_entry(c, key);
      uint64_t value = 0;
      /* The key is read again after the value: an entry erased in between counts as absent. */
      if (e) value = gh_slot_load_value(g->format, e);
      uint64_t stored;
      gh_slab_bucket(g, key, &stored);
      const int found = e != NULL && gh_slot_load_key(g->format, e) == stored;
      if (c->values_out) gh__write_word(c->values_out, i, g->format.value_bits, found ? value : 0);
      result = (uint8_t)found;
    }
    if (c->flags_out) c->flags_out[i] = result;
  }
  return counted;
}

static gh_status host_mixed(gh_table *t, const uint8_t *ops, const void *keys, const void *values, uint64_t n,
                            gh_dup_policy policy, void *values_out, uint8_t *results_out, uint64_t *failed,
                            void *stream) {
  const gh_slab_batch b = {ops, keys, values, n, values_out, results_out, (int)policy,
                           gh_slab_insert_mode_for(t->config.variant == GH_VARIANT_MULTIVALUE, 1), NULL, 0};
  return gh__slab_run_batch(t, &host_runner, &b, failed, stream);
}

/* ---- FLUSH: compaction --------------------------------------------------------------------------- */

static gh_counters compact_chunk(void *context, uint64_t begin, uint64_t end) {
  host_call *c = (host_call *)context;
  gh_counters counted = {{0}};
  for (uint64_t b = begin; b < end; ++b)
    counted.value[0] += gh_slab_compact_list(&c->s->geometry, &c->pool, &c->s->counters->slabs_in_use, head_of(c, b));
  return counted;
}

static gh_status host_compact(gh_table *t, void *stream) {
  host_call c;
  (void)stream;
  begin_call(t, &c);
  gh__parallel_for(c.s->geometry.buckets + 2, t->config.host_threads, compact_chunk, &c);
  return gh__slab_refresh(t, NULL);
}

const gh_table_ops gh__slab_host_ops = {
    .name = "slab/host",
    .init = gh__slab_init,
    .release = gh__slab_release,
    .insert = host_insert,
    .find = host_find,
    .erase = host_erase,
    .count = host_count,
    .find_all = host_find_all,
    .export_all = host_export,
    .clear = gh__slab_clear,
    .size = gh__slab_size,
    .validate = gh__slab_validate,
    .keys_of_ids = NULL,
    .stats = gh__slab_stats,
    .device_view = NULL,
    .take_flags = NULL,
    .mixed = host_mixed,
    .compact = host_compact,
    .join = NULL,
};
