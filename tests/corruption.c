/*
 * corruption - gh_validate finds what gpuhash.h says it checks.
 *
 *   corruption BACKEND --design NAME [--seed S]
 *
 * Every other test calls gh_validate on tables that are fine, which shows only that it accepts
 * them. Here a table of random keys that validates has one invariant at a time broken by writing
 * its memory directly (through the design's own structs, on either backend), gh_validate must
 * answer GH_ERR_CORRUPT and name the violation in gh_last_error(), and once the bytes are put
 * back the table must validate again (so the break alone was what it found). The breaks:
 *   misplaced    two stored keys of different homes (window, bucket, vertex) swap places
 *   copied       a stored key written over a stored key of another home (held twice then, once
 *                out of place: which of the two gh_validate names first is its own affair)
 *   counted      the design's count of its keys one too high
 *   noncanonical an empty slot with some of its other bits cleared (designs whose empty slots
 *                hold a whole pattern)
 *   padding      a stored 16-byte slot's padding cleared (those designs, a 64-bit key and a 32-bit
 *                value)
 *   twice        a stored key copied into an empty slot where it could also live (later on its
 *                probe sequence, another of its buckets, another subtable, its list; hashgraph:
 *                over another edge of its vertex), with the counts raised to match: a key held
 *                twice and nothing else wrong
 *   and the design's own: warpdrive's side slot holding neither the marker nor the empty
 *   pattern; cuckoo's compacting ids and multi-value runs and counts; dycuckoo's bucket lock or
 *   side entry held between calls and its size counter off; hashgraph's offsets decreasing; slab's
 *   auxiliary lane cleared, an empty entry before a stored one, a next address naming no slab.
 * For a map (32-bit keys, 32-bit values), a set (64-bit keys), a map of 64-bit keys and 32-bit
 * values, and the compacting and multi-value tables of designs that have them (32- and 64-bit
 * keys; the multi-value ones with a third of their keys given a second value). A design this file
 * has no hooks for fails: a new design adds its own here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/table.h"
#include "core/toolkit.h"
#include "cuckoo/cuckoo_table.h"
#include "dycuckoo/dycuckoo_table.h"
#include "hashgraph/hashgraph_table.h"
#include "slab/slab_table.h"
#include "test_util.h"
#include "warpdrive/warpdrive_table.h"

#define CORRUPTION_BASE_SEED 0xC0DDu
#define CORRUPTION_KEYS 1500u

/* A design's entries as the breaks see them: `homes` groups (a window, a bucket, a slab) of
 * per_home entries, home_stride bytes apart, on the table's side; each entry entry_bytes long
 * with its key in the first key_bits / 8 bytes. Where empty entries hold the all-ones key and the
 * rest of an empty slot is a pattern too, noncanonical names the message gh_validate gives for
 * one that is not (NULL: no such break). */
typedef struct entry_view {
  void *base;
  uint64_t homes;
  unsigned per_home;
  size_t home_stride, entry_bytes;
  unsigned key_bits;
  const char *noncanonical;
} entry_view;

/* The entries copied to the host, and the first stored one. */
typedef struct entry_copy {
  entry_view v;
  char *bytes;
  uint64_t positions;
} entry_copy;

/* A count the design keeps of its keys: an unsigned long long on the table's side, or a uint64_t
 * on the host (on_host), and the words gh_validate's message then has. */
typedef struct count_view {
  void *count;
  int on_host;
  const char *message;
} count_view;

/* A break of one design's own: it patches the table (patch_bytes) and returns the message
 * gh_validate must give; NULL when this table offers no place for it. */
typedef const char *(*own_break)(gh_table *t);

/* A break of the design's own, for the variants in `variants` (bit v: gh_variant v). */
typedef struct named_break {
  const char *name;
  own_break apply;
  unsigned variants;
} named_break;
#define ANY_VARIANT 7u
#define ONE_VALUE_A_KEY (1u << GH_VARIANT_MAP | 1u << GH_VARIANT_COMPACTING)

/* One design's hooks into its state (t->impl): its entries, its count, and up to seven breaks of its
 * own (a NULL apply ends them), "twice" first (not for the multi-value tables that store each
 * pair as an entry: they may hold a key twice). */
typedef struct design_hooks {
  const char *design;
  entry_view (*entries)(gh_table *t);
  count_view (*count)(gh_table *t);
  named_break own[7];
} design_hooks;

/* ---- Bytes on the table's side, patched and put back -------------------------------------------- */

static void read_bytes(gh_table *t, void *host, const void *at, size_t bytes) {
  REQUIRE(gh__to_host(t, host, at, bytes, NULL) == GH_OK, "reading %zu bytes of the table: %s", bytes, gh_last_error(t));
}

static void write_bytes(gh_table *t, void *at, const void *host, size_t bytes) {
  REQUIRE(gh__copy(t, at, host, bytes, NULL) == GH_OK && gh__sync(t, NULL) == GH_OK,
          "writing %zu bytes into the table: %s", bytes, gh_last_error(t));
}

/* What a break changed, to be put back. */
typedef struct patch {
  void *at;
  int on_host;
  size_t bytes;
  unsigned char was[16];
} patch;
static patch patches[8];
static unsigned patch_count;

static void patch_bytes(gh_table *t, void *at, int on_host, const void *bytes, size_t n) {
  REQUIRE(patch_count < sizeof patches / sizeof patches[0] && n <= sizeof patches[0].was, "too many patches");
  patch *p = &patches[patch_count++];
  p->at = at, p->on_host = on_host, p->bytes = n;
  if (on_host) {
    memcpy(p->was, at, n);
    memcpy(at, bytes, n);
  } else {
    read_bytes(t, p->was, at, n);
    write_bytes(t, at, bytes, n);
  }
}

/* Adds 1 to a design's count (count_view). */
static void patch_count_up(gh_table *t, count_view c) {
  if (c.on_host) {
    const uint64_t more = *(const uint64_t *)c.count + 1u;
    patch_bytes(t, c.count, 1, &more, sizeof more);
  } else {
    unsigned long long more = 0;
    read_bytes(t, &more, c.count, sizeof more);
    more += 1u;
    patch_bytes(t, c.count, 0, &more, sizeof more);
  }
}

static void undo_patches(gh_table *t) {
  while (patch_count > 0) {
    const patch *p = &patches[--patch_count];
    if (p->on_host) memcpy(p->at, p->was, p->bytes);
    else write_bytes(t, p->at, p->was, p->bytes);
  }
}

/* ---- Entries --------------------------------------------------------------------------------------- */

static char *entry_at(const entry_view *v, void *array, uint64_t i) {
  return (char *)array + (i / v->per_home) * v->home_stride + (i % v->per_home) * v->entry_bytes;
}
static uint64_t entry_key(const entry_view *v, const char *entry) {
  uint64_t key = 0;
  memcpy(&key, entry, v->key_bits / 8u); /* (little-endian, as the slots are written) */
  return key;
}
/* Stored keys here are below all-ones - 1 (the inserts leave out both patterns), so an entry
 * whose key is one of them is empty or a tombstone. */
static int entry_held(const entry_view *v, const char *entry) { return entry_key(v, entry) < tu_mask(v->key_bits) - 1u; }
static int entry_empty(const entry_view *v, const char *entry) { return entry_key(v, entry) == tu_mask(v->key_bits); }

static entry_copy copy_entries(gh_table *t, entry_view v) {
  entry_copy c = {v, NULL, v.homes * v.per_home};
  c.bytes = (char *)tu_xmalloc((size_t)v.homes * v.home_stride);
  read_bytes(t, c.bytes, v.base, (size_t)v.homes * v.home_stride);
  return c;
}
static const char *copied_entry(const entry_copy *c, uint64_t i) { return entry_at(&c->v, c->bytes, i); }
/* Patches position `to` with the bytes position `from` holds (in the copy). */
static void patch_entry(gh_table *t, const entry_copy *c, uint64_t to, uint64_t from) {
  patch_bytes(t, entry_at(&c->v, c->v.base, to), 0, copied_entry(c, from), c->v.entry_bytes);
}

/* The first stored key that has a second place (second_place: an empty position where the key
 * could also live, or c->positions) copied there, the design's count raised: the "twice" break of
 * designs whose second places are in the same entries. */
static const char *copy_to_second_place(gh_table *t, entry_view v, count_view count, const char *message,
                                        uint64_t (*second_place)(gh_table *t, const entry_copy *c, uint64_t i)) {
  entry_copy c = copy_entries(t, v);
  uint64_t i = 0, j = c.positions;
  for (; i < c.positions && j == c.positions; ++i)
    if (entry_held(&c.v, copied_entry(&c, i))) j = second_place(t, &c, i);
  if (j < c.positions) {
    patch_entry(t, &c, j, i - 1u);
    patch_count_up(t, count);
  }
  free(c.bytes);
  return j < c.positions ? message : NULL;
}

/* ---- The designs ------------------------------------------------------------------------------ */

static entry_view warpdrive_entries(gh_table *t) {
  const gh_wd_table *w = (const gh_wd_table *)t->impl;
  const gh_wd_geometry *g = &w->geometry;
  entry_view v = {w->slots, g->window_count, g->window_width, (size_t)g->window_width * g->slot_bytes, g->slot_bytes,
                  g->key_bits, "non-canonical"};
  return v;
}
static count_view warpdrive_count(gh_table *t) {
  count_view c = {&((gh_wd_table *)t->impl)->counters->size, 0, "size counter"};
  return c;
}
/* The first empty slot after stored slot i on its key's probe sequence (slots numbered window by
 * window, as entry_view has them). */
static uint64_t warpdrive_later_slot(gh_table *t, const entry_copy *c, uint64_t i) {
  const gh_wd_geometry *g = &((const gh_wd_table *)t->impl)->geometry;
  int passed = 0;
  gh_probe p = gh_wd_probe_begin(g, entry_key(&c->v, copied_entry(c, i)));
  for (; !gh_probe_done(&p, g->max_probe_windows); gh_wd_probe_next(g, &p))
    for (unsigned lane = 0; lane < g->window_width; ++lane) {
      const uint64_t j = gh_wd_window_slot(g, p.window, lane);
      passed |= j == i;
      if (passed && entry_empty(&c->v, copied_entry(c, j))) return j;
    }
  return c->positions;
}
/* The all-ones key's side slot (after the main slots) holding neither that key's marker nor the
 * empty pattern. */
static const char *warpdrive_side_garbage(gh_table *t) {
  const gh_wd_table *w = (const gh_wd_table *)t->impl;
  const gh_wd_geometry *g = &w->geometry;
  const uint32_t garbage = 5u;
  patch_bytes(t, (char *)w->slots + g->window_count * g->window_width * g->slot_bytes, 0, &garbage, sizeof garbage);
  return "neither present nor canonically absent";
}
static const char *warpdrive_twice(gh_table *t) {
  return copy_to_second_place(t, warpdrive_entries(t), warpdrive_count(t), "stored twice", warpdrive_later_slot);
}

static entry_view cuckoo_entries(gh_table *t) {
  const gh_ck_table *w = (const gh_ck_table *)t->impl;
  const gh_ck_geometry *g = &w->geometry;
  const unsigned per_bucket = 1u << g->bucket_shift;
  entry_view v = {w->slots, g->bucket_count, per_bucket, (size_t)per_bucket * g->format.slot_bytes, g->format.slot_bytes,
                  g->format.key_bits, "non-canonical"};
  return v;
}
static count_view cuckoo_count(gh_table *t) {
  count_view c = {&((gh_ck_table *)t->impl)->main_keys, 1, "the table counts"};
  return c;
}
/* An empty slot of another bucket of the key in stored slot i. */
static uint64_t cuckoo_other_bucket(gh_table *t, const entry_copy *c, uint64_t i) {
  const gh_ck_geometry *g = &((const gh_ck_table *)t->impl)->geometry;
  const uint64_t key = entry_key(&c->v, copied_entry(c, i));
  for (unsigned f = 0; f < g->functions; ++f) {
    const uint64_t bucket = gh_ck_bucket(g, key, f);
    for (unsigned s = 0; bucket != i / c->v.per_home && s < c->v.per_home; ++s)
      if (entry_empty(&c->v, copied_entry(c, bucket * c->v.per_home + s))) return bucket * c->v.per_home + s;
  }
  return c->positions;
}
static const char *cuckoo_twice(gh_table *t) {
  return copy_to_second_place(t, cuckoo_entries(t), cuckoo_count(t), "stored twice", cuckoo_other_bucket);
}

/* A compacting table's id (the slot's value) in its first stored slot set to the key count (one
 * past the last id), or (from_second) to the id of the second stored slot. */
static const char *cuckoo_patch_id(gh_table *t, int from_second, const char *message) {
  const gh_ck_table *w = (const gh_ck_table *)t->impl;
  entry_copy c = copy_entries(t, cuckoo_entries(t));
  uint64_t first = c.positions, second = c.positions;
  for (uint64_t i = 0; i < c.positions && second == c.positions; ++i)
    if (!entry_held(&c.v, copied_entry(&c, i))) continue;
    else if (first == c.positions) first = i;
    else second = i;
  const size_t at = gh_slot_value_offset(w->geometry.format.slot_bytes), bytes = t->config.value_bits / 8u;
  const uint64_t limit = w->main_keys + w->side_keys + w->stash_keys;
  const char *id = from_second ? copied_entry(&c, second) + at : (const char *)&limit;
  if (second < c.positions) patch_bytes(t, entry_at(&c.v, c.v.base, first) + at, 0, id, bytes);
  free(c.bytes);
  return second < c.positions ? message : NULL;
}
static const char *cuckoo_id_too_large(gh_table *t) { return cuckoo_patch_id(t, 0, "not below"); }
static const char *cuckoo_id_twice(gh_table *t) { return cuckoo_patch_id(t, 1, "given to two keys"); }
/* The compacted key list's first entry (id 0) changed to a key no slot holds with that id. */
static const char *cuckoo_id_list(gh_table *t) {
  const gh_ck_table *w = (const gh_ck_table *)t->impl;
  uint64_t key = 0;
  read_bytes(t, &key, w->keys_by_id, t->config.key_bits / 8u);
  key ^= 1u;
  patch_bytes(t, w->keys_by_id, 0, &key, t->config.key_bits / 8u);
  return "compacted key list holds";
}
/* A multi-value table's first key with one value more than its run of values has. */
static const char *cuckoo_value_runs(gh_table *t) {
  const gh_ck_table *w = (const gh_ck_table *)t->impl;
  gh_ck_key_info first;
  read_bytes(t, &first, w->info, sizeof first);
  first.count += 1u;
  patch_bytes(t, w->info, 0, &first, sizeof first);
  return w->id_used > 1u ? "do not follow" : "key offsets cover";
}
/* A multi-value table's count of stored values one more than its keys' runs cover. */
static const char *cuckoo_value_count(gh_table *t) {
  gh_ck_table *w = (gh_ck_table *)t->impl;
  const uint64_t more = w->value_count + 1u;
  patch_bytes(t, &w->value_count, 1, &more, sizeof more);
  return "key offsets cover";
}
static const char *cuckoo_pairs(gh_table *t) {
  gh_ck_table *w = (gh_ck_table *)t->impl;
  const uint64_t more = w->pairs + 1u;
  patch_bytes(t, &w->pairs, 1, &more, sizeof more);
  return "pairs but its keys hold";
}

static entry_view dycuckoo_entries(gh_table *t) {
  const gh_dy_table *s = (const gh_dy_table *)t->impl;
  const gh_dy_geometry *g = &s->geometry;
  entry_view v = {s->sub[0].keys, g->buckets[0], g->slots, GH_DY_LINE_BYTES, g->key_bits / 8u, g->key_bits, NULL};
  return v;
}
static count_view dycuckoo_count(gh_table *t) {
  count_view c = {&((gh_dy_table *)t->impl)->counters->keys[0], 0, "its counter says"};
  return c;
}
/* A key of subtable 0 copied into an empty slot of its bucket in subtable 1, that subtable's count
 * and the size raised. */
static const char *dycuckoo_twice(gh_table *t) {
  gh_dy_table *s = (gh_dy_table *)t->impl;
  const gh_dy_geometry *g = &s->geometry;
  entry_copy c = copy_entries(t, dycuckoo_entries(t));
  const char *message = NULL;
  char line[GH_DY_LINE_BYTES];
  for (uint64_t i = 0; i < c.positions && message == NULL; ++i) {
    if (!entry_held(&c.v, copied_entry(&c, i))) continue;
    const uint64_t bucket = gh_dy_bucket(g, 1, entry_key(&c.v, copied_entry(&c, i)));
    char *at = (char *)s->sub[1].keys + bucket * GH_DY_LINE_BYTES;
    read_bytes(t, line, at, sizeof line);
    for (unsigned k = 0; k < g->slots && message == NULL; ++k)
      if (gh_dy_line_key(g, line, k) == gh_dy_empty_key(g)) {
        patch_bytes(t, at + k * c.v.entry_bytes, 0, copied_entry(&c, i), c.v.entry_bytes);
        count_view in_1 = {&s->counters->keys[1], 0, NULL}, size = {&s->counters->size, 0, NULL};
        patch_count_up(t, in_1);
        patch_count_up(t, size);
        message = "stored twice";
      }
  }
  free(c.bytes);
  return message;
}
/* The all-ones key's side entry (a lock word, then a presence word) locked between calls. */
static const char *dycuckoo_side_locked(gh_table *t) {
  const uint32_t held = GH_DY_LOCK_FREE + 1u;
  patch_bytes(t, ((gh_dy_table *)t->impl)->side, 0, &held, sizeof held);
  return "side entry is locked";
}
/* The size counter (the subtables' and the side entry's keys) one too high, the subtables' own
 * counts right. */
static const char *dycuckoo_size_counter(gh_table *t) {
  const count_view size = {&((gh_dy_table *)t->impl)->counters->size, 0, NULL};
  patch_count_up(t, size);
  return "the size counter says";
}
static const char *dycuckoo_lock_held(gh_table *t) {
  const uint32_t held = GH_DY_LOCK_FREE + 1u;
  patch_bytes(t, ((gh_dy_table *)t->impl)->sub[0].locks, 0, &held, sizeof held);
  return "lock is held between calls";
}

static entry_view hashgraph_entries(gh_table *t) {
  const gh_hg_table *s = (const gh_hg_table *)t->impl;
  const unsigned bytes = gh_slot_bytes(t->config.key_bits, t->config.value_bits);
  /* (every edge is its own home: the first and the last edge lie under different vertices) */
  entry_view v = {s->edge_slots, s->edges, 1u, bytes, bytes, t->config.key_bits, NULL};
  return v;
}
/* (its count of edges is the end of the CSR, offsets[vertices]) */
static count_view hashgraph_count(gh_table *t) {
  const gh_hg_table *s = (const gh_hg_table *)t->impl;
  count_view c = {&s->offsets[s->vertices], 0, "offsets run from"};
  return c;
}
/* The start of a vertex w after edges (offsets[w - 1] > 0) set to 0: the offsets decrease there,
 * and the vertices before it keep their edges. */
static const char *hashgraph_decrease(gh_table *t) {
  const gh_hg_table *s = (const gh_hg_table *)t->impl;
  uint64_t *offsets = (uint64_t *)tu_xmalloc((size_t)(s->vertices + 1u) * sizeof *offsets);
  read_bytes(t, offsets, s->offsets, (size_t)(s->vertices + 1u) * sizeof *offsets);
  uint64_t w = 1;
  while (w < s->vertices && offsets[w - 1u] == 0) ++w;
  const uint64_t zero = 0;
  if (w < s->vertices) patch_bytes(t, &s->offsets[w], 0, &zero, sizeof zero);
  free(offsets);
  return w < s->vertices ? "offsets decrease" : NULL;
}

/* The first edge of a vertex with two or more written over its second: a map's key held twice, each
 * copy under its vertex, the edge count unchanged. */
static const char *hashgraph_twice(gh_table *t) {
  const gh_hg_table *s = (const gh_hg_table *)t->impl;
  uint64_t *offsets = (uint64_t *)tu_xmalloc((size_t)(s->vertices + 1u) * sizeof *offsets);
  read_bytes(t, offsets, s->offsets, (size_t)(s->vertices + 1u) * sizeof *offsets);
  uint64_t v = 0;
  while (v < s->vertices && offsets[v + 1u] - offsets[v] < 2u) ++v;
  const char *message = NULL;
  if (v < s->vertices) {
    entry_copy c = copy_entries(t, hashgraph_entries(t));
    patch_entry(t, &c, offsets[v] + 1u, offsets[v]);
    free(c.bytes);
    message = "stored twice";
  }
  free(offsets);
  return message;
}

static entry_view slab_entries(gh_table *t) {
  const gh_slab_table *s = (const gh_slab_table *)t->impl;
  const gh_slab_geometry *g = &s->geometry;
  entry_view v = {s->base, g->buckets, g->per_slab, GH_SLAB_BYTES, g->format.slot_bytes, g->format.key_bits,
                  "an empty entry with value"};
  return v;
}
static count_view slab_count(gh_table *t) {
  count_view c = {&((gh_slab_table *)t->impl)->counters->size, 0, "size counter"};
  return c;
}
/* The first empty entry of the base slab of stored entry i (entries fill a slab from its start). */
static uint64_t slab_later_entry(gh_table *t, const entry_copy *c, uint64_t i) {
  (void)t;
  const uint64_t first = i / c->v.per_home * c->v.per_home;
  for (uint64_t j = first; j < first + c->v.per_home; ++j)
    if (entry_empty(&c->v, copied_entry(c, j))) return j;
  return c->positions;
}
static const char *slab_twice(gh_table *t) {
  return copy_to_second_place(t, slab_entries(t), slab_count(t), "stored twice in a map", slab_later_entry);
}

/* Base slab 0's auxiliary lane 30 (kept all ones) cleared. */
static const char *slab_aux_lane(gh_table *t) {
  const uint32_t cleared = 0;
  patch_bytes(t, ((gh_slab_table *)t->impl)->base + GH_SLAB_AUX_LANE, 0, &cleared, sizeof cleared);
  return "unused lanes";
}
/* In a base slab of k entries (0 < k < per_slab), its last entry moved one place on: an empty
 * entry before a stored one. */
static const char *slab_gap(gh_table *t) {
  entry_copy c = copy_entries(t, slab_entries(t));
  const char *message = NULL;
  for (uint64_t home = 0; home < c.v.homes && message == NULL; ++home) {
    const uint64_t first = home * c.v.per_home;
    uint64_t k = 0;
    while (k < c.v.per_home && entry_held(&c.v, copied_entry(&c, first + k))) ++k;
    if (k == 0 || k == c.v.per_home) continue;
    unsigned char empty[16];
    memset(empty, 0xFF, sizeof empty);
    patch_entry(t, &c, first + k, first + k - 1u);
    patch_bytes(t, entry_at(&c.v, c.v.base, first + k - 1u), 0, empty, c.v.entry_bytes);
    message = "an entry after an empty one";
  }
  free(c.bytes);
  return message;
}
/* Base slab 0 linked to an address of a super block SlabAlloc does not have. */
static const char *slab_dangling_next(gh_table *t) {
  const gh_slab_table *s = (const gh_slab_table *)t->impl;
  if (s->pool.supers >= GH_SLAB_MAX_SUPERS) return NULL;
  const uint32_t next = gh_slab_address(GH_SLAB_MAX_SUPERS - 1u, 0, 0);
  patch_bytes(t, s->base + GH_SLAB_NEXT_LANE, 0, &next, sizeof next);
  return "names no slab";
}

static const design_hooks hooks[] = {
    {"warpdrive",
     warpdrive_entries,
     warpdrive_count,
     {{"twice", warpdrive_twice, ANY_VARIANT}, {"side slot", warpdrive_side_garbage, ANY_VARIANT}}},
    {"cuckoo",
     cuckoo_entries,
     cuckoo_count,
     {{"twice", cuckoo_twice, ANY_VARIANT},
      {"id too large", cuckoo_id_too_large, 1u << GH_VARIANT_COMPACTING},
      {"id twice", cuckoo_id_twice, 1u << GH_VARIANT_COMPACTING},
      {"id list", cuckoo_id_list, 1u << GH_VARIANT_COMPACTING},
      {"value runs", cuckoo_value_runs, 1u << GH_VARIANT_MULTIVALUE},
      {"value count", cuckoo_value_count, 1u << GH_VARIANT_MULTIVALUE},
      {"pairs", cuckoo_pairs, 1u << GH_VARIANT_MULTIVALUE}}},
    {"dycuckoo",
     dycuckoo_entries,
     dycuckoo_count,
     {{"twice", dycuckoo_twice, ANY_VARIANT},
      {"lock held", dycuckoo_lock_held, ANY_VARIANT},
      {"side locked", dycuckoo_side_locked, ANY_VARIANT},
      {"size", dycuckoo_size_counter, ANY_VARIANT}}},
    {"hashgraph",
     hashgraph_entries,
     hashgraph_count,
     {{"twice", hashgraph_twice, ONE_VALUE_A_KEY}, {"decreasing", hashgraph_decrease, ANY_VARIANT}}},
    {"slab",
     slab_entries,
     slab_count,
     {{"twice", slab_twice, ONE_VALUE_A_KEY},
      {"aux lane", slab_aux_lane, ANY_VARIANT},
      {"gap", slab_gap, ANY_VARIANT},
      {"dangling", slab_dangling_next, ANY_VARIANT}}},
};

/* ---- The breaks ------------------------------------------------------------------------------- */

/* gh_validate must find the break (its message naming it, when given); then the bytes go back and
 * the table must validate. */
static void expect_found(gh_table *t, const char *brk, const char *message) {
  const gh_status status = gh_validate(t);
  printf("    %-12s %s\n", brk, gh_last_error(t));
  if (CHECK(status == GH_ERR_CORRUPT, "%s: gh_validate returned %s (%s), not GH_ERR_CORRUPT", brk, gh_status_name(status),
            gh_last_error(t)) &&
      message != NULL)
    CHECK(strstr(gh_last_error(t), message) != NULL, "%s: gh_validate's message \"%s\" does not say \"%s\"", brk,
          gh_last_error(t), message);
  undo_patches(t);
  const gh_status after = gh_validate(t);
  CHECK(after == GH_OK, "%s, put back: gh_validate returned %s (%s)", brk, gh_status_name(after), gh_last_error(t));
}

static void break_entries(gh_table *t, const design_hooks *h) {
  entry_copy c = copy_entries(t, h->entries(t));
  uint64_t first = c.positions, last = c.positions, empty = c.positions;
  for (uint64_t i = 0; i < c.positions; ++i) {
    if (entry_held(&c.v, copied_entry(&c, i))) {
      if (first == c.positions) first = i;
    } else if (empty == c.positions && entry_empty(&c.v, copied_entry(&c, i))) {
      empty = i;
    }
  }
  for (uint64_t i = c.positions; i-- > 0 && first < c.positions;)
    if (entry_held(&c.v, copied_entry(&c, i)) && i / c.v.per_home != first / c.v.per_home) {
      last = i;
      break;
    }
  if (CHECK(last < c.positions, "no two stored keys in different homes among %llu positions",
            (unsigned long long)c.positions)) {
    tu_set_phase("misplaced: positions %llu and %llu swapped", (unsigned long long)first, (unsigned long long)last);
    patch_entry(t, &c, first, last);
    patch_entry(t, &c, last, first);
    expect_found(t, "misplaced", NULL);
    tu_set_phase("copied: position %llu written over position %llu", (unsigned long long)first,
                 (unsigned long long)last);
    patch_entry(t, &c, last, first);
    expect_found(t, "copied", NULL);
  }
  if (c.v.noncanonical != NULL && c.v.entry_bytes * 8u > c.v.key_bits && empty < c.positions) {
    tu_set_phase("noncanonical: the last byte of empty position %llu cleared", (unsigned long long)empty);
    const char cleared = 0;
    patch_bytes(t, entry_at(&c.v, c.v.base, empty) + c.v.entry_bytes - 1u, 0, &cleared, 1);
    expect_found(t, "noncanonical", c.v.noncanonical);
  }
  /* 16-byte slots of a 64-bit key and a 32-bit value: their last 4 bytes are padding, all ones */
  if (c.v.noncanonical != NULL && c.v.entry_bytes == 16u && t->config.value_bits == 32u && first < c.positions) {
    tu_set_phase("padding: the last byte of stored position %llu cleared", (unsigned long long)first);
    const char cleared = 0;
    patch_bytes(t, entry_at(&c.v, c.v.base, first) + c.v.entry_bytes - 1u, 0, &cleared, 1);
    expect_found(t, "padding", "padding bits are not all ones");
  }
  free(c.bytes);
}

static void run_own(gh_table *t, const char *brk, own_break apply) {
  if (apply == NULL) return;
  tu_set_phase("%s", brk);
  const char *message = apply(t);
  if (CHECK(message != NULL, "%s: the table offered no place for the break", brk)) expect_found(t, brk, message);
}

/* The --seed the cases' seeds are mixed from (the rerun hint gives it). */
static uint64_t corruption_seed = CORRUPTION_BASE_SEED;

static void run_case(const tu_design *design, const design_hooks *h, gh_backend backend, gh_variant variant,
                     unsigned key_bits, unsigned value_bits, uint64_t seed) {
  tu_rng rng = tu_rng_make(seed);
  gh_config cfg = gh_config_default(design->design);
  cfg.backend = backend;
  cfg.variant = variant;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  cfg.capacity = 2u * CORRUPTION_KEYS;
  cfg.seed = tu_next(&rng);
  const char *variant_name = tu_variant_name(variant, value_bits);
  tu_set_context("corruption %s %s backend=%s key_bits=%u value_bits=%u case_seed=0x%016llx\n  rerun: corruption %s "
                 "--design %s --seed 0x%016llx",
                 design->name, variant_name, tu_backend_name(backend), key_bits, value_bits, (unsigned long long)seed,
                 tu_backend_name(backend), design->name, (unsigned long long)corruption_seed);
  printf("%s %s %s, %u-bit keys, %u-bit values:\n", design->name, variant_name, tu_backend_name(backend), key_bits,
         value_bits);
  tu_set_phase("create and fill");
  gh_table *t = NULL;
  if (!CHECK(gh_create(&cfg, &t) == GH_OK, "gh_create: %s", gh_last_create_error())) return;
  uint64_t keys[CORRUPTION_KEYS], values[CORRUPTION_KEYS];
  for (unsigned i = 0; i < CORRUPTION_KEYS; ++i) {
    /* none of the patterns a design keeps for itself (all ones, all ones - 1, 0) */
    do keys[i] = tu_next(&rng) & tu_mask(key_bits);
    while (keys[i] == 0 || keys[i] >= tu_mask(key_bits) - 1u);
  }
  tu_gen_values(&rng, value_bits, CORRUPTION_KEYS, values);
  void *packed_keys = tu_pack(keys, CORRUPTION_KEYS, key_bits);
  void *packed_values = value_bits ? tu_pack(values, CORRUPTION_KEYS, value_bits) : NULL;
  const int compacting = variant == GH_VARIANT_COMPACTING, multi = variant == GH_VARIANT_MULTIVALUE;
  const gh_dup_policy policy = multi ? GH_APPEND : compacting ? GH_KEEP_FIRST : GH_OVERWRITE;
  void *given = compacting ? NULL : packed_values;
  int filled = CHECK_OK(t, gh_insert(t, packed_keys, given, CORRUPTION_KEYS, policy, NULL, NULL));
  /* a multi-value table: a third of the keys with a second value (the values of the last third) */
  if (filled && multi)
    filled = CHECK_OK(t, gh_insert(t, packed_keys, (const char *)given + 2u * (CORRUPTION_KEYS / 3u) * (value_bits / 8u),
                                   CORRUPTION_KEYS / 3u, policy, NULL, NULL));
  if (filled && CHECK_OK(t, gh_validate(t))) {
    break_entries(t, h);
    tu_set_phase("counted: one key too many");
    patch_count_up(t, h->count(t));
    expect_found(t, "counted", h->count(t).message);
    for (unsigned k = 0; k < sizeof h->own / sizeof h->own[0] && h->own[k].apply != NULL; ++k)
      if (h->own[k].variants >> variant & 1u) run_own(t, h->own[k].name, h->own[k].apply);
  }
  free(packed_keys);
  free(packed_values);
  gh_destroy(t);
}

int main(int argc, char **argv) {
  /* maps: a map, a set, and a map of 16-byte slots (padding beside the value); compacting (ids) and
   * multi-value tables: 32- and 64-bit keys */
  static const unsigned map_widths[][2] = {{32, 32}, {64, 0}, {64, 32}}, other_widths[][2] = {{32, 32}, {64, 32}};
  gh_backend backend;
  const tu_design *design = NULL;
  uint64_t seed = CORRUPTION_BASE_SEED;
  if (!tu_parse_case_args(argc, argv, &backend, &design, NULL, &seed)) {
    fprintf(stderr, "usage: %s host|cuda --design NAME [--seed S]\n", argv[0]);
    return 2;
  }
  tu_skip_unless_backend_usable(backend);
  corruption_seed = seed;
  const design_hooks *h = NULL;
  for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; ++i)
    if (strcmp(hooks[i].design, design->name) == 0) h = &hooks[i];
  if (!CHECK(h != NULL, "tests/corruption.c has no hooks for the design %s: add them", design->name))
    return tu_finish("corruption");
  for (int v = GH_VARIANT_MAP; v <= GH_VARIANT_MULTIVALUE; ++v) {
    if (!tu_design_accepts_variant(design, (gh_variant)v)) continue;
    const unsigned(*widths)[2] = v == GH_VARIANT_MAP ? map_widths : other_widths;
    const size_t count = v == GH_VARIANT_MAP ? sizeof map_widths / sizeof map_widths[0] : 2u;
    for (size_t w = 0; w < count; ++w)
      run_case(design, h, backend, (gh_variant)v, widths[w][0], widths[w][1],
               tu_mix_seed(seed, widths[w][0], widths[w][1], (uint64_t)v));
  }
  return tu_finish("corruption");
}
