/* cuckoo_host.c - the cuckoo primitives on CPU threads: the same chains, lookups and clean-up as
 * the GPU (cuckoo.h) with C11 atomics; the bookkeeping passes (gather, ids, sorting) run on one
 * thread. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "core/toolkit.h"
#include "core/words.h"
#include "cuckoo/cuckoo_table.h"

/* The arguments of one parallel pass. */
typedef struct pass {
  const gh_ck_geometry *g;
  void *slots;
  const void *keys;
  const void *values;
  void *entries;
  uint8_t *flags;
  void *values_out;
  uint64_t default_value;
  uint64_t cursor; /* atomic output position */
  int policy;
  int check_present;
  gh_ck_value_source source;
  uint32_t *moved; /* the bucketed chains' marks (place, dedupe_moved) */
} pass;

static uint64_t entry_value(const pass *p, uint64_t i) {
  switch (p->source) {
    case GH_CK_VALUE_INDEX: return i;
    case GH_CK_VALUE_NO_ID: return GH_CK_NO_ID;
    default: return p->g->format.value_bits ? gh__read_word(p->values, i, p->g->format.value_bits) : 0;
  }
}

/* Counters: [0] the all-ones key newly stored. */
static gh_counters prepare_chunk(void *context, uint64_t begin, uint64_t end) {
  pass *p = (pass *)context;
  const gh_ck_geometry *g = p->g;
  const gh_slot_format f = g->format;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    const uint64_t key = gh__read_word(p->keys, i, f.key_bits);
    const uint64_t value = entry_value(p, i);
    if (gh_ck_is_sentinel(g, key)) {
      counted.value[0] += (uint64_t)gh_side_insert(f, gh_ck_side_slot(g, p->slots), value, p->policy);
      continue;
    }
    if (p->check_present) {
      const uint64_t at = gh_ck_locate(g, p->slots, key);
      if (at != ~0ull) {
        gh_slot_update_value(f, gh_ck_entry_at(g, p->slots, at), p->policy, value);
        continue;
      }
    }
    const uint64_t position = __atomic_fetch_add(&p->cursor, 1u, __ATOMIC_RELAXED);
    gh_slot_write(f, gh_slot_at(f, p->entries, position), gh_slot_pack(f, key, value));
  }
  return counted;
}

static gh_status host_prepare(gh_table *t, const gh_ck_geometry *g, const void *keys, const void *values,
                              gh_ck_value_source source, uint64_t n, int policy, int check_present, void *entries,
                              uint64_t *entry_count, uint64_t *side_new, void *stream) {
  gh_ck_table *w = (gh_ck_table *)t->impl;
  pass p = {.g = g, .slots = w->slots, .keys = keys, .values = values, .entries = entries, .policy = policy,
            .check_present = check_present, .source = source};
  (void)stream;
  const gh_counters counted = gh__parallel_for(n, t->config.host_threads, prepare_chunk, &p);
  *entry_count = p.cursor;
  *side_new = counted.value[0];
  return GH_OK;
}

/* Counters: [0] placed, [1] gave up. */
static gh_counters place_chunk(void *context, uint64_t begin, uint64_t end) {
  pass *p = (pass *)context;
  const gh_slot_format f = p->g->format;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    void *entry = gh_slot_at(f, p->entries, i);
    gh_slot_bits held = gh_slot_read(f, entry);
    unsigned marks = 0;
    const gh_ck_outcome outcome = gh_ck_insert_chain(p->g, p->slots, &held, p->policy, p->moved, &marks);
    counted.value[2] += marks;
    counted.value[0] += outcome == GH_CK_PLACED;
    counted.value[1] += outcome == GH_CK_GAVE_UP;
    gh_ck_chain_end(f, outcome, entry, held, &p->flags[i]);
  }
  return counted;
}

static gh_status host_place(gh_table *t, const gh_ck_geometry *g, void *entries, uint64_t m, int policy,
                            uint8_t *failed, uint32_t *moved, uint64_t *placed, uint64_t *gave_up, uint64_t *marks,
                            void *stream) {
  gh_ck_table *w = (gh_ck_table *)t->impl;
  pass p = {.g = g, .slots = w->slots, .entries = entries, .flags = failed, .policy = policy, .moved = moved};
  (void)stream;
  const gh_counters counted = gh__parallel_for(m, t->config.host_threads, place_chunk, &p);
  *placed = counted.value[0];
  *gave_up = counted.value[1];
  *marks = counted.value[2];
  return GH_OK;
}

/* Counters: [0] entries still flagged. */
static gh_counters absorb_chunk(void *context, uint64_t begin, uint64_t end) {
  pass *p = (pass *)context;
  const gh_slot_format f = p->g->format;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    if (!p->flags[i]) continue;
    const gh_slot_bits entry = gh_slot_read(f, gh_slot_at(f, p->entries, i));
    const uint64_t at = gh_ck_locate(p->g, p->slots, gh_slot_bits_key(f, entry));
    if (at == ~0ull) {
      counted.value[0] += 1;
      continue;
    }
    gh_slot_update_value(f, gh_ck_entry_at(p->g, p->slots, at), p->policy, gh_slot_bits_value(f, entry));
    p->flags[i] = 0;
  }
  return counted;
}

static gh_status host_absorb(gh_table *t, const gh_ck_geometry *g, const void *entries, uint8_t *failed, uint64_t m,
                             int policy, uint64_t *remaining, void *stream) {
  gh_ck_table *w = (gh_ck_table *)t->impl;
  pass p = {.g = g, .slots = w->slots, .entries = (void *)entries, .flags = failed, .policy = policy};
  (void)stream;
  *remaining = gh__parallel_for(m, t->config.host_threads, absorb_chunk, &p).value[0];
  return GH_OK;
}

static gh_counters dedupe_chunk(void *context, uint64_t begin, uint64_t end) {
  pass *p = (pass *)context;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) counted.value[0] += (uint64_t)gh_ck_dedupe_slot(p->g, p->slots, i, p->policy);
  return counted;
}

static gh_status host_dedupe(gh_table *t, const gh_ck_geometry *g, int policy, uint64_t *removed, void *stream) {
  gh_ck_table *w = (gh_ck_table *)t->impl;
  pass p = {.g = g, .slots = w->slots, .policy = policy};
  (void)stream;
  *removed = gh__parallel_for(g->slot_count, t->config.host_threads, dedupe_chunk, &p).value[0];
  return GH_OK;
}

/* Counters: [0] copies removed. A thread a word of the bitmap (32 slots). */
static gh_counters dedupe_moved_chunk(void *context, uint64_t begin, uint64_t end) {
  pass *p = (pass *)context;
  gh_counters counted = {{0}};
  for (uint64_t word = begin; word < end; ++word)
    for (uint32_t bits = p->moved[word]; bits != 0; bits &= bits - 1u)
      counted.value[0] += gh_ck_resolve_copies(p->g, p->slots, word * 32u + (uint64_t)__builtin_ctz(bits), p->policy);
  return counted;
}

static gh_status host_dedupe_moved(gh_table *t, const gh_ck_geometry *g, const uint32_t *moved, int policy,
                                   uint64_t *removed, void *stream) {
  gh_ck_table *w = (gh_ck_table *)t->impl;
  pass p = {.g = g, .slots = w->slots, .policy = policy, .moved = (uint32_t *)moved};
  (void)stream;
  *removed = gh__parallel_for((g->slot_count + 31u) / 32u, t->config.host_threads, dedupe_moved_chunk, &p).value[0];
  return GH_OK;
}

static gh_status host_dedupe_stash(gh_table *t, const gh_ck_geometry *g, int policy, uint64_t *removed, void *stream) {
  uint64_t count = 0;
  (void)t, (void)stream;
  for (uint64_t j = 0; j < g->stash_slots; ++j) count += (uint64_t)gh_ck_dedupe_stash_entry(g, j, policy);
  *removed = count;
  return GH_OK;
}

static gh_status host_clear_unflagged(gh_table *t, const gh_ck_geometry *g, void *entries, const uint8_t *flags,
                                      uint64_t m, void *stream) {
  const gh_slot_format f = g->format;
  (void)t, (void)stream;
  for (uint64_t i = 0; i < m; ++i)
    if (!flags[i]) gh_slot_write(f, gh_slot_at(f, entries, i), gh_slot_pack(f, gh_slot_empty_key(f.key_bits), ~0ull));
  return GH_OK;
}

static gh_status host_gather(gh_table *t, const gh_ck_geometry *g, int include_slots, const void *entries,
                             const uint8_t *failed, uint64_t m, void *out, uint64_t *count, void *stream) {
  gh_ck_table *w = (gh_ck_table *)t->impl;
  const gh_slot_format f = g->format;
  const uint64_t empty = gh_slot_empty_key(f.key_bits);
  uint64_t written = 0;
  (void)stream;
  for (uint64_t i = 0; include_slots && i < g->slot_count; ++i) {
    const gh_slot_bits bits = gh_slot_load(f, gh_slot_at(f, w->slots, i));
    if (gh_slot_bits_key(f, bits) != empty) gh_slot_write(f, gh_slot_at(f, out, written++), bits);
  }
  for (uint64_t i = 0; i < m; ++i) {
    const gh_slot_bits bits = gh_slot_read(f, gh_slot_at(f, (void *)entries, i));
    if ((failed == NULL || failed[i]) && gh_slot_bits_key(f, bits) != empty)
      gh_slot_write(f, gh_slot_at(f, out, written++), bits);
  }
  *count = written;
  return GH_OK;
}

/* Counters: [0] found. */
static gh_counters find_chunk(void *context, uint64_t begin, uint64_t end) {
  pass *p = (pass *)context;
  const gh_slot_format f = p->g->format;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    uint64_t value = p->default_value;
    const int found = gh_ck_find(p->g, p->slots, gh__read_word(p->keys, i, f.key_bits), &value);
    if (p->values_out) gh__write_word(p->values_out, i, f.value_bits, value);
    if (p->flags) p->flags[i] = (uint8_t)found;
    counted.value[0] += (uint64_t)found;
  }
  return counted;
}

static gh_status host_find(gh_table *t, const gh_ck_geometry *g, const void *keys, uint64_t n, void *values_out,
                           uint8_t *found_out, uint64_t default_value, void *stream) {
  gh_ck_table *w = (gh_ck_table *)t->impl;
  pass p = {.g = g, .slots = w->slots, .keys = keys, .flags = found_out, .values_out = values_out,
            .default_value = default_value};
  (void)stream;
  gh__parallel_for(n, t->config.host_threads, find_chunk, &p);
  return GH_OK;
}

/* Counters: erased keys by gh_ck_erased place. */
static gh_counters erase_chunk(void *context, uint64_t begin, uint64_t end) {
  pass *p = (pass *)context;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) {
    const gh_ck_erased where = gh_ck_erase(p->g, p->slots, gh__read_word(p->keys, i, p->g->format.key_bits));
    if (p->flags) p->flags[i] = where != GH_CK_ABSENT;
    counted.value[where] += 1;
  }
  return counted;
}

static gh_status host_erase(gh_table *t, const gh_ck_geometry *g, const void *keys, uint64_t n, uint8_t *erased_out,
                            gh_ck_erase_counts *erased, void *stream) {
  gh_ck_table *w = (gh_ck_table *)t->impl;
  pass p = {.g = g, .slots = w->slots, .keys = keys, .flags = erased_out};
  (void)stream;
  const gh_counters counted = gh__parallel_for(n, t->config.host_threads, erase_chunk, &p);
  erased->main = counted.value[GH_CK_ERASED_MAIN];
  erased->side = counted.value[GH_CK_ERASED_SIDE];
  erased->stash = counted.value[GH_CK_ERASED_STASH];
  return GH_OK;
}

static gh_status host_export(gh_table *t, const gh_ck_geometry *g, void *keys_out, void *values_out, uint64_t *count,
                             void *stream) {
  gh_ck_table *w = (gh_ck_table *)t->impl;
  const gh_slot_format f = g->format;
  uint64_t written = 0;
  (void)stream;
  for (uint64_t i = 0; i < gh_ck_position_count(g); ++i) {
    const void *slot = gh_ck_entry_at(g, w->slots, i);
    uint64_t key = gh_slot_load_key(f, slot);
    if (!gh_ck_holds_key(g, i, &key)) continue;
    gh__write_word(keys_out, written, f.key_bits, key);
    if (values_out) gh__write_word(values_out, written, f.value_bits, gh_slot_load_value(f, slot));
    written += 1;
  }
  *count = written;
  return GH_OK;
}

static gh_status host_assign_ids(gh_table *t, const gh_ck_geometry *g, uint64_t first_id, void *keys_by_id,
                                 uint64_t *assigned, void *stream) {
  gh_ck_table *w = (gh_ck_table *)t->impl;
  const gh_slot_format f = g->format;
  const uint64_t no_id = gh_slot_value_mask(f.value_bits) & GH_CK_NO_ID;
  uint64_t next = first_id;
  (void)stream;
  for (uint64_t i = 0; i < gh_ck_position_count(g); ++i) {
    void *slot = gh_ck_entry_at(g, w->slots, i);
    const uint64_t marker = gh_slot_load_key(f, slot);
    uint64_t key = marker;
    if (!gh_ck_holds_key(g, i, &key) || gh_slot_load_value(f, slot) != no_id) continue;
    gh_slot_write(f, slot, gh_slot_pack(f, marker, next));
    gh__write_word(keys_by_id, next, f.key_bits, key);
    next += 1;
  }
  *assigned = next - first_id;
  return GH_OK;
}

static gh_status host_keys_of_ids(gh_table *t, const void *keys_by_id, uint64_t id_count, const void *ids, uint64_t n,
                                  void *keys_out, uint64_t *bad, void *stream) {
  uint64_t out_of_range = 0;
  (void)stream;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t id = gh__read_word(ids, i, t->config.value_bits);
    if (id >= id_count) {
      out_of_range += 1;
      continue;
    }
    gh__write_word(keys_out, i, t->config.key_bits, gh__read_word(keys_by_id, id, t->config.key_bits));
  }
  *bad = out_of_range;
  return GH_OK;
}

static gh_status host_key_info(gh_table *t, const uint64_t *firsts, const uint64_t *counts, uint64_t unique,
                               gh_ck_key_info *info, void *stream) {
  (void)t, (void)stream;
  for (uint64_t r = 0; r < unique; ++r) {
    info[r].first = firsts[r];
    info[r].count = counts[r];
  }
  return GH_OK;
}

static gh_status host_value_counts(gh_table *t, const gh_ck_key_info *info, const uint32_t *ids, const uint8_t *found,
                                   uint64_t n, uint64_t *counts, void *stream) {
  (void)t, (void)stream;
  for (uint64_t i = 0; i < n; ++i) counts[i] = found == NULL || found[i] ? info[ids[i]].count : 0;
  counts[n] = 0;
  return GH_OK;
}

static gh_status host_removed_values(gh_table *t, const gh_ck_key_info *info, const uint32_t *ids,
                                     const uint8_t *removed, uint64_t n, uint64_t *total, void *stream) {
  (void)t, (void)stream;
  *total = 0;
  for (uint64_t i = 0; i < n; ++i) *total += removed[i] ? info[ids[i]].count : 0;
  return GH_OK;
}

static gh_status host_gather_values(gh_table *t, const gh_ck_key_info *info, const void *sorted_values,
                                    const uint32_t *ids, const uint8_t *found, const uint64_t *offsets, uint64_t n,
                                    uint64_t default_value, const void *keys, void *keys_out, void *values_out,
                                    void *stream) {
  const unsigned kb = t->config.key_bits, vb = t->config.value_bits;
  (void)stream;
  for (uint64_t i = 0; i < n; ++i) {
    const int present = found == NULL || found[i];
    if (offsets == NULL) {
      const uint64_t value = present ? gh__read_word(sorted_values, info[ids[i]].first, vb) : default_value;
      gh__write_word(values_out, i, vb, value);
      continue;
    }
    if (!present) continue;
    const gh_ck_key_info key_info = info[ids[i]];
    for (uint64_t j = 0; j < key_info.count; ++j) {
      gh__write_word(values_out, offsets[i] + j, vb, gh__read_word(sorted_values, key_info.first + j, vb));
      if (keys_out) gh__write_word(keys_out, offsets[i] + j, kb, gh__read_word(keys, i, kb));
    }
  }
  return GH_OK;
}

/* ---- First buckets by regions (cuckoo.h) ----------------------------------------------------------
 * Not the default here (gh_config.bulk_min_keys = 0 leaves it off: the partition runs on one
 * thread, and CPU caches serve the chains' buckets no worse). When asked, it runs the GPU's steps,
 * a thread a region at a time in a buffer of its own, so that the host backend tests them. */
typedef struct host_first {
  const gh_ck_geometry *g;
  void *slots;
  const void *entries;
  void *sorted;
  const uint64_t *ends; /* where each region's run of `sorted` ends */
  void *passed_out;
  uint64_t passed; /* atomic output position */
  int policy;
} host_first;

static unsigned entry_region(const void *context, uint64_t i) {
  const host_first *h = (const host_first *)context;
  const gh_slot_format f = h->g->format;
  return (unsigned)gh_ck_first_region(h->g, gh_slot_bits_key(f, gh_slot_read(f, gh_slot_at(f, (void *)h->entries, i))));
}

static void move_entry(const void *context, uint64_t i, uint64_t to) {
  const host_first *h = (const host_first *)context;
  const gh_slot_format f = h->g->format;
  memcpy(gh_slot_at(f, h->sorted, to), gh_slot_at(f, (void *)h->entries, i), f.slot_bytes);
}

static size_t host_first_work_bytes(gh_table *t, uint64_t m, uint64_t regions) {
  (void)t, (void)m;
  return (size_t)regions * sizeof(uint64_t);
}

static gh_status host_partition_first(gh_table *t, const gh_ck_geometry *g, const void *entries, uint64_t m, void *sorted,
                                      void *work, size_t work_bytes, uint64_t *longest, void *stream) {
  host_first h = {.g = g, .entries = entries, .sorted = sorted};
  (void)t, (void)work_bytes, (void)stream;
  *longest = gh__host_partition(m, (unsigned)gh_ck_regions(g), entry_region, move_entry, &h, (uint64_t *)work);
  return GH_OK;
}

static void pass_on(host_first *h, uint64_t word) {
  const gh_slot_format f = h->g->format;
  gh_slot_write(f, gh_slot_at(f, h->passed_out, gh_fetch_add_u64(&h->passed, 1u)), gh_ck_word_entry(h->g, word));
}

/* Counters: [0] keys added, [1] entries spilled (passed on unmerged). */
static gh_counters first_chunk(void *context, uint64_t begin, uint64_t end) {
  host_first *h = (host_first *)context;
  const gh_ck_geometry *g = h->g;
  const gh_slot_format f = g->format;
  uint64_t words[GH_REGION_WORDS], passed_set[GH_REGION_SET_WORDS];
  gh_counters counted = {{0}};
  for (uint64_t region = begin; region < end; ++region) {
    const uint64_t from = region ? h->ends[region - 1u] : 0u, slots = gh_ck_region_slots(g, region);
    if (from == h->ends[region]) continue;
    for (uint64_t j = 0; j < slots; ++j) words[j] = GH_REGION_EMPTY;
    for (uint64_t j = 0; j < GH_REGION_SET_WORDS; ++j) passed_set[j] = GH_REGION_EMPTY;
    for (uint64_t i = from; i < h->ends[region]; ++i) {
      uint64_t word = 0;
      const gh_slot_bits entry = gh_slot_read(f, gh_slot_at(f, h->sorted, i));
      const gh_region_outcome outcome = gh_ck_first_put(g, words, passed_set, region, entry, h->policy, &word);
      counted.value[0] += outcome == GH_REGION_INSERTED;
      counted.value[1] += outcome == GH_REGION_FULL;
      if (outcome == GH_REGION_FULL) pass_on(h, word);
    }
    for (uint64_t j = 0; j < GH_REGION_SET_WORDS; ++j)
      if (passed_set[j] != GH_REGION_EMPTY) pass_on(h, passed_set[j]);
    for (uint64_t j = 0; j < slots; ++j) gh_ck_first_store(g, h->slots, region, words, j);
  }
  return counted;
}

static gh_status host_place_first(gh_table *t, const gh_ck_geometry *g, const void *sorted, void *work, size_t work_bytes,
                                  uint64_t m, int policy, void *entries, uint64_t *placed, uint64_t *passed,
                                  uint64_t *spilled, void *stream) {
  host_first h = {.g = g, .slots = ((gh_ck_table *)t->impl)->slots, .sorted = (void *)sorted,
                  .ends = (const uint64_t *)work, .passed_out = entries, .policy = policy};
  (void)work_bytes, (void)m, (void)stream;
  const gh_counters counted = gh__parallel_for(gh_ck_regions(g), t->config.host_threads, first_chunk, &h);
  *placed = counted.value[0];
  *spilled = counted.value[1];
  *passed = h.passed;
  return GH_OK;
}

const gh_ck_backend gh__cuckoo_host_backend = {
    .prepare = host_prepare,
    .place = host_place,
    .absorb = host_absorb,
    .dedupe = host_dedupe,
    .dedupe_moved = host_dedupe_moved,
    .dedupe_stash = host_dedupe_stash,
    .clear_unflagged = host_clear_unflagged,
    .gather = host_gather,
    .find = host_find,
    .erase = host_erase,
    .export_pairs = host_export,
    .assign_ids = host_assign_ids,
    .keys_of_ids = host_keys_of_ids,
    .key_info = host_key_info,
    .value_counts = host_value_counts,
    .removed_values = host_removed_values,
    .gather_values = host_gather_values,
    .first_work_bytes = host_first_work_bytes,
    .partition_first = host_partition_first,
    .place_first = host_place_first,
    .first_by_default = 0,
    .max_regions = GH_PARTITION_MAX_DIGITS,
};
