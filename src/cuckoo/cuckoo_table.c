/* cuckoo_table.c - the cuckoo design over the backend primitives: config checks, sizing, hash
 * constants, the insert phases with transparent restarts and growth, the compacting and
 * multivalue variants, and validate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/design.h"
#include "core/toolkit.h"
#include "core/words.h"
#include "cuckoo/cuckoo_table.h"

/* The smallest table factors per d that build reliably (the chapter's "smallest practical table
 * sizes", section 4.3.1.1); index = d. */
static const double min_table_factor[GH_CK_MAX_FUNCTIONS + 1] = {0, 0, 2.1, 1.1, 1.03, 1.02};
/* Buckets hold far fuller tables (two choices of 4 slots reach about 0.98 in the limit, of 8
 * about 0.998): the bucketed table's floors, for every d, by bucket size. */
#define GH_CK_MIN_BUCKETED_FACTOR 1.02
#define GH_CK_MIN_FACTOR_4_SLOTS 1.05
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
/* After this many restarts in one call, a handful of entries still left over (at most
 * GH_CK_STASH_MAX) go to the stash instead of forcing more rebuilds: keys that fail together. */
#define GH_CK_RESTARTS_BEFORE_STASH 6u
#define GH_CK_STASH_MAX 64u
/* No call restarts more often than this; what is left then waits in the stash. */
#define GH_CK_MAX_RESTARTS_PER_CALL 24u

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
  if (c->bucket_slots != 1 && c->bucket_slots != 4 && c->bucket_slots != 8 && c->bucket_slots != 16) {
    if (size > 0) snprintf(message, size, "bucket_slots = %u must be 1, 4, 8 or 16", c->bucket_slots);
    return GH_ERR_INVALID_ARGUMENT;
  }
  const double least = c->bucket_slots == 1   ? min_table_factor[d]
                       : c->bucket_slots == 4 ? GH_CK_MIN_FACTOR_4_SLOTS
                                              : GH_CK_MIN_BUCKETED_FACTOR;
  if (!(c->table_factor >= least) || !(c->table_factor <= GH_CK_MAX_TABLE_FACTOR)) {
    if (size > 0)
      snprintf(message, size, "table_factor = %g is outside [%.2f, %.0f]: %u hash functions with buckets of %u "
               "slots cannot hold a table fuller than 1/%.2f of its slots reliably", c->table_factor, least,
               GH_CK_MAX_TABLE_FACTOR, d, c->bucket_slots, least);
    return GH_ERR_INVALID_ARGUMENT;
  }
  if ((double)c->capacity * c->table_factor + c->bucket_slots > (double)GH_CK_MAX_SLOTS) {
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

/* capacity * factor slots (at least 2), rounded up to whole buckets of `bucket_slots`. */
static uint64_t slots_for(uint64_t capacity, double factor, unsigned bucket_slots) {
  const double wanted = (double)ceil_u64((double)capacity * factor);
  uint64_t slots = wanted < 2.0 ? 2u : (uint64_t)wanted;
  slots = (slots + bucket_slots - 1u) / bucket_slots * bucket_slots;
  return slots > GH_CK_MAX_SLOTS ? GH_CK_MAX_SLOTS / bucket_slots * bucket_slots : slots;
}

static unsigned log2_of(unsigned power_of_two) {
  unsigned shift = 0;
  while ((1u << shift) < power_of_two) ++shift;
  return shift;
}

/* The map's slot format: multivalue tables map keys to 32-bit ids. */
static gh_slot_format map_format(const gh_config *c) {
  return gh_slot_format_make(c->key_bits, c->variant == GH_VARIANT_MULTIVALUE ? 32u : c->value_bits);
}

gh_status gh__cuckoo_estimate(const gh_config *c, size_t *host_bytes, size_t *device_bytes) {
  const gh_slot_format f = map_format(c);
  size_t table = (size_t)(slots_for(c->capacity, c->table_factor, c->bucket_slots) + 1) * f.slot_bytes +
                 sizeof(gh_ck_counters);
  if (c->variant == GH_VARIANT_COMPACTING) table += (size_t)c->capacity * (c->key_bits / 8u);
  return gh__estimate_split(c, sizeof(gh_ck_table), table, host_bytes, device_bytes);
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
  w->forced_attempt = w->forced_failures > 0;
  if (w->forced_failures > 0) {
    w->forced_failures -= 1;
    for (unsigned i = 0; i < GH_CK_MAX_FUNCTIONS; ++i) {
      g->a[i] = g->a[0];
      g->b[i] = g->b[0];
    }
  }
}

/* The chapter's chain limit, 7 lg N, for N keys in the table. A bucketed chain counts bucket
 * scans too (d of them between evictions) and runs at loads up to 0.98, where random walks are
 * longer: 4 x 7 lg N steps (at 7 lg N, tables of 8-slot buckets at load 0.98 restarted and grew
 * in 2 of the tests' 128 builds at loads 0.95 and 0.98; at 4x, in none). */
static void set_eviction_limit(gh_ck_geometry *g, uint64_t keys) {
  unsigned lg = 1;
  while (lg < 63 && (1ull << lg) < keys) ++lg;
  g->max_evictions = 7u * (lg < 4 ? 4 : lg) * (g->bucket_shift ? 4u : 1u);
}

static size_t entry_bytes(const gh_ck_table *w) { return w->geometry.format.slot_bytes; }
static uint64_t key_bytes(const gh_table *t) { return t->config.key_bits / 8u; }
static uint64_t value_bytes(const gh_table *t) { return t->config.value_bits / 8u; }

/* Keys stored in the map: main slots, side slot and stash. */
static uint64_t stored_keys(const gh_ck_table *w) { return w->main_keys + w->side_keys + w->stash_keys; }

static gh_status out_of_memory(gh_table *t, const char *what, size_t bytes) {
  return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "could not allocate %zu bytes for %s; nothing was changed", bytes, what);
}

/* Frees backend memory once the work queued on stream so far has run (it may still be read). */
static void discard(gh_table *t, void *ptr, size_t bytes, void *stream) {
  gh__free_after(t, ptr, bytes, gh__backend_memory(t), stream);
}

/* A slot array for `capacity` keys, every slot empty; NULL (and nothing held) on failure. */
static void *new_slots(gh_table *t, uint64_t capacity, uint64_t *slot_count, size_t *bytes, void *stream) {
  gh_ck_table *w = state(t);
  *slot_count = slots_for(capacity, t->config.table_factor, t->config.bucket_slots);
  *bytes = (size_t)(*slot_count + 1) * entry_bytes(w);
  void *slots = gh__alloc(t, *bytes, gh__backend_memory(t));
  if (slots != NULL && gh__fill(t, slots, 0xFF, *bytes, stream) != GH_OK) {
    discard(t, slots, *bytes, stream);
    return NULL;
  }
  return slots;
}

static void set_slot_count(gh_ck_geometry *g, uint64_t slot_count) {
  g->slot_count = slot_count;
  g->bucket_count = slot_count >> g->bucket_shift;
  g->bucket_magic = gh_ck_magic(g->bucket_count);
}

/* Makes `slots` (from new_slots) the table's, sized for `capacity` keys, and frees the old ones. */
static void install_slots(gh_table *t, void *slots, uint64_t slot_count, size_t bytes, uint64_t capacity,
                          void *stream) {
  gh_ck_table *w = state(t);
  discard(t, w->slots, w->slots_bytes, stream);
  w->slots = slots;
  w->slots_bytes = bytes;
  set_slot_count(&w->geometry, slot_count);
  w->capacity = t->config.capacity = capacity;
}

static void release_stash(gh_table *t, void *stream) {
  gh_ck_table *w = state(t);
  discard(t, w->geometry.stash, w->stash_bytes, stream);
  w->geometry.stash = NULL;
  w->geometry.stash_slots = 0;
  w->stash_bytes = 0;
  w->stash_keys = 0;
}

static gh_status clear_main_slots(gh_table *t, void *stream) {
  gh_ck_table *w = state(t);
  w->main_keys = 0;
  return gh__fill(t, w->slots, 0xFF, (size_t)w->geometry.slot_count * entry_bytes(w), stream);
}

/* Empties the main slots, the side slot and the stash. */
static gh_status clear_all_slots(gh_table *t, void *stream) {
  gh_ck_table *w = state(t);
  release_stash(t, stream);
  w->main_keys = w->side_keys = 0;
  return gh__fill(t, w->slots, 0xFF, w->slots_bytes, stream);
}

/* ---- Building: placement with restarts, growth and the stash --------------------------------- */

/* Entries being placed, with one flag each (1: the entry is left over). */
typedef struct gh_ck_batch {
  void *entries;
  uint8_t *flags;
  uint64_t room;  /* entries (and flags) allocated */
  uint64_t count; /* entries in use */
} gh_ck_batch;

static size_t batch_entry_bytes(gh_table *t, const gh_ck_batch *b) { return (size_t)(b->room ? b->room : 1) * entry_bytes(state(t)); }

static void batch_free(gh_table *t, gh_ck_batch *b, void *stream) {
  discard(t, b->entries, batch_entry_bytes(t, b), stream);
  discard(t, b->flags, (size_t)(b->room ? b->room : 1), stream);
  b->entries = NULL;
  b->flags = NULL;
}

/* Allocates room for `room` entries and flags; on failure holds nothing. */
static gh_status batch_alloc(gh_table *t, gh_ck_batch *b, uint64_t room) {
  const gh_memory_kind kind = gh__backend_memory(t);
  b->room = room;
  b->count = 0;
  b->entries = gh__alloc(t, batch_entry_bytes(t, b), kind);
  b->flags = (uint8_t *)gh__alloc(t, (size_t)(room ? room : 1), kind);
  if (b->entries != NULL && b->flags != NULL) return GH_OK;
  /* Nothing was queued on them: freed at once (a deferred free would cost a device-wide wait). */
  gh__free(t, b->entries, batch_entry_bytes(t, b), kind);
  gh__free(t, b->flags, (size_t)(room ? room : 1), kind);
  b->entries = NULL;
  b->flags = NULL;
  return GH_ERR_OUT_OF_MEMORY;
}

/* Rebuild for a restart: every key of the main slots plus the batch's entries (the flagged ones
 * when use_flags, `leftovers` of them) move into a fresh batch, and the main slots empty, with fresh
 * constants, on new slots for `capacity` keys when that is more than now. Everything is allocated
 * first: on GH_ERR_OUT_OF_MEMORY nothing has changed (and no message is set: the caller decides). */
static gh_status rebuild(gh_table *t, gh_ck_batch *batch, int use_flags, uint64_t leftovers, uint64_t capacity,
                         void *stream) {
  gh_ck_table *w = state(t);
  gh_ck_batch next;
  if (batch_alloc(t, &next, w->main_keys + leftovers) != GH_OK) return GH_ERR_OUT_OF_MEMORY;
  void *grown = NULL;
  uint64_t slot_count = 0;
  size_t bytes = 0;
  if (capacity > w->capacity && (grown = new_slots(t, capacity, &slot_count, &bytes, stream)) == NULL) {
    batch_free(t, &next, stream);
    return GH_ERR_OUT_OF_MEMORY;
  }
  gh_status status = w->backend->gather(t, &w->geometry, 1, batch->entries, use_flags ? batch->flags : NULL,
                                        batch->count, next.entries, &next.count, stream);
  if (status == GH_OK && grown != NULL) {
    /* The side slot moves with the slots. */
    status = gh__copy(t, (char *)grown + slot_count * entry_bytes(w),
                              (char *)w->slots + w->geometry.slot_count * entry_bytes(w), entry_bytes(w), stream);
    if (status == GH_OK) {
      install_slots(t, grown, slot_count, bytes, capacity, stream);
      grown = NULL;
      w->grows += 1;
    }
  } else if (status == GH_OK) {
    status = clear_main_slots(t, stream);
  }
  if (status != GH_OK) {
    discard(t, grown, bytes, stream);
    batch_free(t, &next, stream);
    return status;
  }
  w->main_keys = 0;
  draw_constants(t);
  batch_free(t, batch, stream);
  *batch = next;
  return GH_OK;
}

/* The batch's flagged entries (`leftovers` of them, none of whose keys the slots hold) become the
 * stash. Needs no memory: when a compact copy cannot be had, the batch's own array is kept, its
 * other entries emptied. */
static gh_status stash_leftovers(gh_table *t, gh_ck_batch *batch, uint64_t leftovers, int policy, void *stream) {
  gh_ck_table *w = state(t);
  const gh_ck_backend *b = w->backend;
  const size_t bytes = (size_t)leftovers * entry_bytes(w);
  void *stash = gh__alloc(t, bytes, gh__backend_memory(t));
  uint64_t slots = 0;
  gh_status status;
  if (stash != NULL) {
    status = b->gather(t, &w->geometry, 0, batch->entries, batch->flags, batch->count, stash, &slots, stream);
    w->stash_bytes = bytes;
  } else {
    status = b->clear_unflagged(t, &w->geometry, batch->entries, batch->flags, batch->count, stream);
    stash = batch->entries;
    slots = batch->count;
    w->stash_bytes = batch_entry_bytes(t, batch);
    batch->entries = NULL; /* the stash owns it now */
    discard(t, batch->flags, (size_t)(batch->room ? batch->room : 1), stream);
    batch->flags = NULL;
  }
  w->geometry.stash = stash;
  w->geometry.stash_slots = slots;
  w->stash_keys = leftovers;
  uint64_t removed = 0;
  if (status == GH_OK) status = b->dedupe_stash(t, &w->geometry, policy, &removed, stream);
  w->stash_keys -= removed;
  batch->count = 0;
  return status;
}

/* The bucketed chains' marks for placing m entries (cuckoo.h, Invariant): a zeroed bitmap of the
 * slots, *bytes long. NULL (the clean-up then reads the whole table) for the chapter's layout, when
 * its memory is refused, and for a batch that is large (four marks an entry would read more
 * buckets than the table has) and fills the table past 85 %: there the chains' marks outnumber
 * the buckets, and marking cost the placement more than the clean-up saved (H100s, 2^27 keys, d = 2:
 * builds to load 0.95 with 16 slots a bucket at 3.62 G/s with marks, 3.93 without in an earlier
 * run; to 0.8 with 8 slots at 6.03 against 5.48; bench/results/2026-11-28-h100-cuckoo-marks.txt). */
static uint32_t *moved_marks(gh_table *t, uint64_t m, size_t *bytes, void *stream) {
  const gh_ck_table *w = state(t);
  const gh_ck_geometry *g = &w->geometry;
  *bytes = 0;
  if (g->bucket_shift == 0) return NULL;
  const int large = m * g->functions * 4u >= g->bucket_count;
  if (large && (w->main_keys + m) * 100u > g->slot_count * 85u) return NULL;
  const size_t size = (size_t)((g->slot_count + 31u) / 32u) * sizeof(uint32_t);
  uint32_t *moved = (uint32_t *)gh__alloc(t, size, gh__backend_memory(t));
  if (moved != NULL && gh__fill(t, moved, 0, size, stream) != GH_OK) {
    discard(t, moved, size, stream);
    moved = NULL;
  }
  if (moved == NULL) {
    gh__clear_error(t);
    return NULL;
  }
  *bytes = size;
  return moved;
}

/* First buckets by regions (cuckoo.h) take by default a batch of at least 2^20 entries and a
 * sixteenth of the slots: every region that has entries is written out whole, which costs more
 * than it saves for a small batch into a large table. */
#define GH_CK_REGIONS_MIN_BATCH (1ull << 20)

/* Whether a batch of m entries goes to its first buckets by regions: a bucketed table of 4- or
 * 8-byte slots that holds no keys, no test-forced failure in force, and gh_config.bulk_min_keys'
 * size rule (0: the default above, where the backend takes it). */
static int first_by_regions(gh_table *t, uint64_t m) {
  const gh_ck_table *w = state(t);
  const gh_ck_geometry *g = &w->geometry;
  if (m == 0 || w->main_keys != 0 || g->bucket_shift == 0 || g->format.slot_bytes > 8u || w->forced_failures > 0 ||
      w->forced_attempt || gh_ck_regions(g) > w->backend->max_regions)
    return 0;
  if (t->config.bulk_min_keys != 0) return m >= t->config.bulk_min_keys;
  return w->backend->first_by_default && m >= GH_CK_REGIONS_MIN_BATCH && m * 16u >= g->slot_count;
}

/* The batch's first buckets by regions where first_by_regions says so; the batch keeps the
 * entries whose first bucket was full, *distinct when they repeat no key. Its scratch (a sorted
 * copy of the entries and the partition's work space) comes first: without it, or when the
 * partition shows a run several regions long (a few keys repeated: one block would apply them one
 * after another), the batch goes to the chains whole. */
static gh_status place_first_buckets(gh_table *t, gh_ck_batch *batch, int policy, int *distinct, void *stream) {
  gh_ck_table *w = state(t);
  const gh_ck_backend *b = w->backend;
  const uint64_t m = batch->count;
  if (!first_by_regions(t, m)) return GH_OK;
  /* (the work space after the copy, aligned as an allocation would be: 4-byte slots leave the copy
   * at any multiple of 4) */
  const size_t copy_bytes = ((size_t)m * entry_bytes(w) + 255u) / 256u * 256u;
  const size_t work_bytes = b->first_work_bytes(t, m, gh_ck_regions(&w->geometry));
  gh_scratch sorting = {NULL, 0, gh__backend_memory(t), 0, NULL};
  if (gh__scratch_alloc_on(t, &sorting, copy_bytes + work_bytes, stream) != GH_OK) {
    gh__clear_error(t);
    return GH_OK;
  }
  void *work = (char *)sorting.ptr + copy_bytes;
  uint64_t longest = 0, placed = 0, passed = 0, spilled = 0;
  gh_status status = b->partition_first(t, &w->geometry, batch->entries, m, sorting.ptr, work, work_bytes, &longest, stream);
  if (status == GH_OK && !gh_partition_too_skewed(longest, GH_REGION_WORDS)) {
    status = b->place_first(t, &w->geometry, sorting.ptr, work, work_bytes, m, policy, batch->entries, &placed, &passed,
                            &spilled, stream);
    if (status == GH_OK) {
      w->main_keys += placed;
      batch->count = passed;
      *distinct = spilled == 0;
      w->region_builds += 1;
      w->region_passed += passed;
      w->region_spilled += spilled;
    }
  }
  gh__scratch_free(t, &sorting, stream);
  return status;
}

/* Places the batch; restarts with fresh constants until every entry is in. The table grows when
 * the keys it holds plus the entries left over exceed its capacity, and by 1/8 after a few
 * restarts at one size while it holds fewer slots than twice its keys need. Entries still left
 * after many restarts (keys that keep failing together), or when a rebuild cannot get memory, go
 * to the stash: placement itself never fails for want of memory. overflow_limit (when not 0) caps
 * the chains of attempts whose entries may not fit. Frees the batch. */
static gh_status place_all(gh_table *t, gh_ck_batch *batch, int policy, int may_repeat, unsigned overflow_limit,
                           void *stream) {
  gh_ck_table *w = state(t);
  const gh_ck_backend *b = w->backend;
  unsigned restarts_here = 0, restarts_now = 0;
  size_t moved_bytes = 0;
  int distinct = 0;
  gh_status status = place_first_buckets(t, batch, policy, &distinct, stream);
  /* (a batch that phase 1 emptied places nothing, and one whose first buckets merged its copies
   * hands the chains none: no copies to clean up) */
  if (status != GH_OK || batch->count == 0 || distinct) may_repeat = 0;
  uint32_t *moved = may_repeat ? moved_marks(t, batch->count, &moved_bytes, stream) : NULL;
  uint64_t marks = 0;
  while (status == GH_OK && batch->count > 0) {
    uint64_t placed = 0, left = 0;
    set_eviction_limit(&w->geometry, w->main_keys + batch->count);
    /* While the entries may overflow the table, chains are kept short: an overfull table then
     * fails fast and the restart grows it. */
    if (overflow_limit && w->main_keys + w->side_keys + batch->count > w->capacity)
      w->geometry.max_evictions = overflow_limit;
    /* A forced attempt fails for sure: degenerate constants alone leave each key one bucket,
     * which a bucketed table may still hold. */
    if (w->forced_attempt) w->geometry.max_evictions = 0;
    status = b->place(t, &w->geometry, batch->entries, batch->count, policy, batch->flags, moved, &placed, &left,
                      &marks, stream);
    if (status != GH_OK) break;
    w->main_keys += placed;
    if (left == 0) break;
    /* An eviction chain gave up. Entries left over whose key the table holds (repeats that never
     * met their copy) merge first, so that only genuinely new keys count towards the rebuild. The
     * marks no longer cover every copy that moved (cuckoo.h, Invariant): the whole table is read. */
    w->restarts += 1;
    restarts_now += 1;
    discard(t, moved, moved_bytes, stream);
    moved = NULL;
    status = b->absorb(t, &w->geometry, batch->entries, batch->flags, batch->count, policy, &left, stream);
    if (status != GH_OK || left == 0) break;
    uint64_t capacity = w->capacity;
    const uint64_t needed = w->main_keys + w->side_keys + left;
    int give_to_stash = restarts_now >= GH_CK_MAX_RESTARTS_PER_CALL ||
                        (restarts_now >= GH_CK_RESTARTS_BEFORE_STASH && left <= GH_CK_STASH_MAX);
    if (needed > capacity) {
      /* needed may count repeats of a key several times: grow by at most 2x per restart. */
      const uint64_t most = capacity * 2u;
      capacity = ceil_u64((double)capacity * GH_CK_GROWTH_MIN);
      if (capacity < needed) capacity = needed < most ? needed : most;
      restarts_here = 0;
      give_to_stash = 0;
    } else if (++restarts_here >= GH_CK_RESTARTS_PER_SIZE) {
      /* Growth is bounded by what the keys need: past twice that, only fresh constants help. */
      if (capacity < 2u * needed) capacity = ceil_u64((double)capacity * GH_CK_GROWTH_STEP) + 1u;
      restarts_here = 0;
    }
    /* Degenerate test constants (gh__cuckoo_force_failures) say nothing about the keys. */
    if (w->forced_failures > 0) give_to_stash = 0;
    if (!give_to_stash) {
      status = rebuild(t, batch, 1, left, capacity, stream);
      if (status == GH_OK) {
        may_repeat = 1;
        continue;
      }
      if (status != GH_ERR_OUT_OF_MEMORY) break;
    }
    status = stash_leftovers(t, batch, left, policy, stream);
    break;
  }
  batch_free(t, batch, stream);
  if (status == GH_OK && may_repeat) {
    uint64_t removed = 0;
    /* Each mark reads the d buckets of its key, the whole clean-up each bucket once: the marks go
     * while they read fewer. */
    const int by_marks = moved && marks * w->geometry.functions < w->geometry.bucket_count;
    status = by_marks ? b->dedupe_moved(t, &w->geometry, moved, policy, &removed, stream)
                      : b->dedupe(t, &w->geometry, policy, &removed, stream);
    w->main_keys -= removed;
  }
  discard(t, moved, moved_bytes, stream);
  /* A batch placed beyond the capacity without needing more slots: the slots demonstrably hold it
   * (the stash's keys are on top of the capacity: they wait there because no slot took them). */
  const uint64_t in_slots = w->main_keys + w->side_keys;
  if (in_slots > w->capacity) w->capacity = t->config.capacity = in_slots;
  if (status == GH_OK) gh__clear_error(t);
  return status;
}

/* Inserts n keys into the map. All the memory the insert cannot do without (entries and flags for
 * the batch and the stash) is allocated before anything changes; then phase 1 (present keys, the
 * all-ones key), growth when the batch overflows the capacity, and placement. */
static gh_status map_insert(gh_table *t, const void *keys, const void *values, gh_ck_value_source source,
                            uint64_t n, int policy, int may_repeat, void *stream) {
  gh_ck_table *w = state(t);
  const gh_ck_backend *b = w->backend;
  gh_ck_batch batch;
  if (batch_alloc(t, &batch, n + w->stash_keys) != GH_OK)
    return out_of_memory(t, "the entries of the batch", (size_t)(n + w->stash_keys) * (entry_bytes(w) + 1));
  uint64_t side_new = 0;
  gh_status status = b->prepare(t, &w->geometry, keys, values, source, n, policy, stored_keys(w) > 0, batch.entries,
                                &batch.count, &side_new, stream);
  w->side_keys += side_new;
  /* The stash's keys (updated by phase 1 where the batch repeats them) are placed again with it. */
  if (status == GH_OK && w->geometry.stash_slots > 0) {
    uint64_t taken = 0;
    status = b->gather(t, &w->geometry, 0, w->geometry.stash, NULL, w->geometry.stash_slots,
                       (char *)batch.entries + batch.count * entry_bytes(w), &taken, stream);
    batch.count += taken;
    if (status == GH_OK) release_stash(t, stream);
  }
  const uint64_t keys_after = stored_keys(w) + batch.count;
  const int overflow = keys_after > w->capacity;
  /* A batch that may repeat keys overstates what it adds (m counts the repeats): it is placed with
   * short chains first. Repeats merge where they meet; what does not fit comes back after a few
   * exchanges, and the restart then sizes the table by the keys actually held plus those left. */
  const unsigned overflow_limit = overflow && may_repeat ? GH_CK_OVERFLOW_PROBE_EVICTIONS : 0u;
  if (status == GH_OK && batch.count > 0 && ((overflow && !may_repeat) || w->forced_failures > 0)) {
    /* Rebuild from the table and the batch: on more slots when distinct keys overflow the
     * capacity, with fresh constants either way (which is how forced failures take effect). When
     * that memory cannot be had the batch is placed where it is (what does not fit waits in the
     * stash). */
    uint64_t capacity = w->capacity;
    if (overflow && !may_repeat) {
      capacity = ceil_u64((double)w->capacity * GH_CK_GROWTH_MIN);
      if (capacity < keys_after) capacity = keys_after;
    }
    status = rebuild(t, &batch, 0, batch.count, capacity, stream);
    if (status == GH_ERR_OUT_OF_MEMORY) status = GH_OK;
    may_repeat = 1;
  }
  if (status != GH_OK) {
    batch_free(t, &batch, stream);
    return status;
  }
  return place_all(t, &batch, policy, may_repeat, overflow_limit, stream);
}

/* ---- Variants --------------------------------------------------------------------------------- */

/* Compacting: new keys enter with GH_CK_NO_ID, then get the next dense ids. The id list is grown
 * first, for the most keys the batch can add, so that no key is ever left without an id. */
static gh_status compacting_insert(gh_table *t, const void *keys, uint64_t n, void *stream) {
  gh_ck_table *w = state(t);
  const gh_memory_kind kind = gh__backend_memory(t);
  const uint64_t before = stored_keys(w);
  uint64_t room = w->keys_by_id_capacity;
  void *grown = NULL;
  if (before + n > room) {
    room = room * 2u > before + n ? room * 2u : before + n;
    grown = gh__alloc(t, (size_t)(room * key_bytes(t)), kind);
    if (grown == NULL) return out_of_memory(t, "the compacted key list", (size_t)(room * key_bytes(t)));
  }
  gh_status status = map_insert(t, keys, NULL, GH_CK_VALUE_NO_ID, n, GH_KEEP_FIRST, 1, stream);
  if (status != GH_OK) {
    discard(t, grown, (size_t)(room * key_bytes(t)), stream);
    return status;
  }
  const uint64_t after = stored_keys(w);
  if (grown != NULL) {
    status = gh__copy(t, grown, w->keys_by_id, (size_t)(before * key_bytes(t)), stream);
    discard(t, w->keys_by_id, (size_t)(w->keys_by_id_capacity * key_bytes(t)), stream);
    w->keys_by_id = grown;
    w->keys_by_id_capacity = room;
  }
  uint64_t assigned = 0;
  if (status == GH_OK) status = w->backend->assign_ids(t, &w->geometry, before, w->keys_by_id, &assigned, stream);
  if (status == GH_OK && before + assigned != after)
    return gh__fail(t, GH_ERR_INTERNAL, "compacting: %llu new keys but %llu ids assigned",
                    (unsigned long long)(after - before), (unsigned long long)assigned);
  return status;
}

/* The multivalue arrays: values grouped by key id, and each id's range. */
typedef struct gh_ck_groups {
  void *sorted_values;
  uint64_t value_count;
  gh_ck_key_info *info;
  uint64_t id_count;
} gh_ck_groups;

static void groups_free(gh_table *t, gh_ck_groups *g, void *stream) {
  discard(t, g->sorted_values, (size_t)((g->value_count ? g->value_count : 1) * value_bytes(t)), stream);
  discard(t, g->info, (size_t)(g->id_count ? g->id_count : 1) * sizeof(gh_ck_key_info), stream);
  g->sorted_values = NULL;
  g->info = NULL;
}

static void multivalue_release_arrays(gh_table *t, void *stream) {
  gh_ck_table *w = state(t);
  gh_ck_groups held = {w->sorted_values, w->value_count, w->info, w->id_count};
  groups_free(t, &held, stream);
  w->sorted_values = NULL;
  w->info = NULL;
  w->value_count = w->id_count = w->id_used = w->pairs = 0;
}

/* Every scratch array of a NULL-terminated list (bytes set, ptr NULL), or none: an operation
 * allocates all it needs before it changes anything. */
static int scratch_all(gh_table *t, gh_scratch *const *list) {
  for (size_t i = 0; list[i] != NULL; ++i) {
    if (gh__scratch_alloc(t, list[i], list[i]->bytes) != GH_OK) {
      /* Nothing was queued on them yet: freed at once. */
      while (i-- > 0) {
        gh__free(t, list[i]->ptr, list[i]->bytes, list[i]->kind);
        list[i]->ptr = NULL;
      }
      return 0;
    }
  }
  return 1;
}

/* Releases the list once the work queued on stream has run. */
static void scratch_release(gh_table *t, gh_scratch *const *list, void *stream) {
  for (size_t i = 0; list[i] != NULL; ++i) gh__scratch_free(t, list[i], stream);
}

static size_t scratch_total(gh_scratch *const *list) {
  size_t total = 0;
  for (size_t i = 0; list[i] != NULL; ++i) total += list[i]->bytes;
  return total;
}

/* A scratch array of `bytes` still to be allocated (scratch_all). */
static gh_scratch want(size_t bytes) {
  gh_scratch s = {NULL, bytes, GH_MEMORY_HOST, 0, NULL};
  return s;
}

/* Algorithm 1 of the chapter on the toolkit: a stable radix sort of the pairs, the runs of equal
 * keys (the distinct keys, in order) and their starts by an exclusive scan; info[r] = the values
 * of the r-th distinct key. Allocates first (nothing changes on failure). */
static gh_status group_pairs(gh_table *t, const void *keys, const void *values, uint64_t n, void *sorted_values,
                             void *unique_keys, gh_ck_key_info *info, uint64_t *unique, void *stream) {
  const unsigned kb = t->config.key_bits, vb = t->config.value_bits;
  gh_scratch sorted_keys = want((size_t)n * (kb / 8u)), counts = want((size_t)(n + 1) * 8u),
             firsts = want((size_t)(n + 1) * 8u), runs = want(8u);
  gh_scratch *const scratch[] = {&sorted_keys, &counts, &firsts, &runs, NULL};
  if (!scratch_all(t, scratch)) return out_of_memory(t, "grouping the pairs", scratch_total(scratch));
  uint64_t run_count = 0;
  gh_status status = gh__sort_pairs(t, keys, sorted_keys.ptr, values, sorted_values, n, kb, vb, stream);
  if (status == GH_OK)
    status = gh__run_length_encode(t, sorted_keys.ptr, n, kb, unique_keys, (uint64_t *)counts.ptr, (uint64_t *)runs.ptr,
                                   stream);
  if (status == GH_OK) status = gh__to_host(t, &run_count, runs.ptr, sizeof run_count, stream);
  if (status == GH_OK) status = gh__fill(t, (uint64_t *)counts.ptr + run_count, 0, sizeof(uint64_t), stream);
  if (status == GH_OK)
    status = gh__exclusive_sum_u64(t, (const uint64_t *)counts.ptr, (uint64_t *)firsts.ptr, run_count + 1, stream);
  if (status == GH_OK)
    status = state(t)->backend->key_info(t, (const uint64_t *)firsts.ptr, (const uint64_t *)counts.ptr, run_count, info,
                                         stream);
  if (status == GH_OK) *unique = run_count;
  scratch_release(t, scratch, stream);
  return status;
}

/* counts_out[i] (optional) = the number of values of ids[i] where found[i]; offsets[0..n] (n + 1)
 * = their exclusive prefix sum; *total = offsets[n] (read back: the operation waits here). */
static gh_status count_values(gh_table *t, const uint32_t *ids, const uint8_t *found, uint64_t n,
                              uint64_t *counts_out, uint64_t *offsets, uint64_t *total, void *stream) {
  gh_status status = state(t)->backend->value_counts(t, state(t)->info, ids, found, n, offsets, stream);
  if (status == GH_OK && counts_out) status = gh__copy(t, counts_out, offsets, (size_t)n * sizeof(uint64_t), stream);
  if (status == GH_OK) status = gh__exclusive_sum_u64(t, offsets, offsets, n + 1, stream);
  if (status == GH_OK) status = gh__to_host(t, total, offsets + n, sizeof *total, stream);
  return status;
}

static gh_status export_multivalue(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream);

/* Multivalue: the pairs already stored and the new ones are sorted together (Algorithm 1 of the
 * chapter: radix sort, unique keys, counts, ids by prefix sum), and the map of unique key -> id
 * is built afresh on new slots. The old structure is released only once the new one is complete;
 * a failure on the way frees the new one and leaves the table as it was. */
static gh_status multivalue_insert(gh_table *t, const void *keys, const void *values, uint64_t n, void *stream) {
  gh_ck_table *w = state(t);
  const uint64_t total = w->pairs + n;
  const size_t kb = (size_t)key_bytes(t), vb = (size_t)value_bytes(t);
  gh_scratch all_keys = want((size_t)total * kb), all_values = want((size_t)total * vb),
                unique_keys = want((size_t)total * kb);
  gh_scratch *const scratch[] = {&all_keys, &all_values, &unique_keys, NULL};
  gh_ck_groups groups = {NULL, total, NULL, total};
  uint64_t slot_count = 0, exported = 0, unique = 0;
  size_t slot_bytes = 0;
  if (!scratch_all(t, scratch)) return out_of_memory(t, "rebuilding the multivalue table", scratch_total(scratch));
  groups.sorted_values = gh__alloc(t, (size_t)total * vb, gh__backend_memory(t));
  groups.info = (gh_ck_key_info *)gh__alloc(t, (size_t)total * sizeof(gh_ck_key_info), gh__backend_memory(t));
  void *slots = new_slots(t, w->capacity, &slot_count, &slot_bytes, stream);
  gh_status status = GH_OK;
  if (groups.sorted_values == NULL || groups.info == NULL || slots == NULL)
    status = out_of_memory(t, "rebuilding the multivalue table", (size_t)total * (vb + sizeof(gh_ck_key_info)) + slot_bytes);
  if (status == GH_OK && w->pairs > 0) status = export_multivalue(t, all_keys.ptr, all_values.ptr, &exported, stream);
  if (status == GH_OK) status = gh__copy(t, (char *)all_keys.ptr + exported * kb, keys, (size_t)n * kb, stream);
  if (status == GH_OK) status = gh__copy(t, (char *)all_values.ptr + exported * vb, values, (size_t)n * vb, stream);
  if (status == GH_OK)
    status = group_pairs(t, all_keys.ptr, all_values.ptr, total, groups.sorted_values, unique_keys.ptr, groups.info,
                            &unique, stream);
  if (status == GH_OK) {
    /* Build the new map on the new slots; the old state waits in `before` until it succeeds. */
    const gh_ck_table before = *w;
    w->slots = slots;
    w->slots_bytes = slot_bytes;
    set_slot_count(&w->geometry, slot_count);
    w->geometry.stash = NULL;
    w->geometry.stash_slots = 0;
    w->stash_bytes = 0;
    w->main_keys = w->side_keys = w->stash_keys = 0;
    w->sorted_values = groups.sorted_values;
    w->value_count = total;
    w->info = groups.info;
    w->id_count = total;
    w->id_used = unique;
    w->pairs = total;
    slots = NULL;
    status = map_insert(t, unique_keys.ptr, NULL, GH_CK_VALUE_INDEX, unique, GH_KEEP_FIRST, 0, stream);
    /* Whichever structure lost is freed: the old one after success, the new one after failure. */
    gh_ck_table retired = before;
    if (status == GH_OK) {
      gh_ck_groups previous = {before.sorted_values, before.value_count, before.info, before.id_count};
      groups_free(t, &previous, stream);
      groups.sorted_values = NULL; /* now the table's */
      groups.info = NULL;
    } else {
      retired = *w;
      *w = before;
      t->config.capacity = w->capacity;
    }
    discard(t, retired.slots, retired.slots_bytes, stream);
    discard(t, retired.geometry.stash, retired.stash_bytes, stream);
  }
  discard(t, slots, slot_bytes, stream);
  groups_free(t, &groups, stream);
  scratch_release(t, scratch, stream);
  return status;
}

/* The ids of n keys in the multivalue map (32-bit) and whether each was found. */
typedef struct id_lookup {
  gh_scratch ids, found;
} id_lookup;

/* Looks up the keys' ids into buffers allocated with the rest of the call's scratch (list). */
static gh_status id_lookup_run(gh_table *t, const void *keys, uint64_t n, id_lookup *l, void *stream) {
  gh_ck_table *w = state(t);
  return w->backend->find(t, &w->geometry, keys, n, l->ids.ptr, (uint8_t *)l->found.ptr, 0, stream);
}

static gh_status export_multivalue(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_ck_table *w = state(t);
  const gh_ck_backend *b = w->backend;
  const uint64_t keys = stored_keys(w);
  gh_scratch map_keys = want((size_t)keys * key_bytes(t)), ids = want((size_t)keys * sizeof(uint32_t)),
                offsets = want((size_t)(keys + 1) * sizeof(uint64_t));
  gh_scratch *const scratch[] = {&map_keys, &ids, &offsets, NULL};
  if (!scratch_all(t, scratch)) return out_of_memory(t, "exporting the multivalue table", scratch_total(scratch));
  uint64_t exported = 0, total = 0;
  gh_status status = b->export_pairs(t, &w->geometry, map_keys.ptr, ids.ptr, &exported, stream);
  if (status == GH_OK)
    status = count_values(t, (const uint32_t *)ids.ptr, NULL, exported, NULL, (uint64_t *)offsets.ptr, &total,
                             stream);
  if (status == GH_OK)
    status = b->gather_values(t, w->info, w->sorted_values, (const uint32_t *)ids.ptr, NULL, (const uint64_t *)offsets.ptr,
                              exported, 0, map_keys.ptr, keys_out, values_out, stream);
  if (status == GH_OK) *count = total;
  scratch_release(t, scratch, stream);
  return status;
}

/* ---- Ops ------------------------------------------------------------------------------------- */

static void ck_release(gh_table *t) {
  gh_ck_table *w = state(t);
  if (w == NULL) return;
  const gh_memory_kind kind = gh__backend_memory(t);
  multivalue_release_arrays(t, NULL);
  release_stash(t, NULL);
  /* Nothing may still run on the table's memory: this also frees what was deferred above. */
  gh__device_sync(t);
  gh__free(t, w->keys_by_id, (size_t)(w->keys_by_id_capacity * key_bytes(t)), kind);
  gh__free(t, w->slots, w->slots_bytes, kind);
  gh__free(t, w->counters, sizeof(gh_ck_counters), kind);
  gh__free(t, w, sizeof *w, GH_MEMORY_HOST);
  t->impl = NULL;
}

/* On failure releases whatever it allocated (the table handle stays the caller's). */
static gh_status ck_init_with(gh_table *t, const gh_ck_backend *backend) {
  gh_ck_table *w = (gh_ck_table *)gh__alloc(t, sizeof *w, GH_MEMORY_HOST);
  if (w == NULL) return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "out of host memory for the table state");
  memset(w, 0, sizeof *w);
  t->impl = w;
  w->backend = backend;
  w->geometry.functions = t->config.hash_functions;
  w->geometry.family = (unsigned)t->config.hash_family;
  w->geometry.format = map_format(&t->config);
  w->geometry.bucket_shift = log2_of(t->config.bucket_slots);
  w->counters = (gh_ck_counters *)gh__alloc(t, sizeof(gh_ck_counters), gh__backend_memory(t));
  gh_status status = w->counters ? gh__fill(t, w->counters, 0, sizeof(gh_ck_counters), NULL)
                                 : out_of_memory(t, "the table counters", sizeof(gh_ck_counters));
  if (status == GH_OK) {
    uint64_t slot_count = 0;
    size_t bytes = 0;
    void *slots = new_slots(t, t->config.capacity, &slot_count, &bytes, NULL);
    if (slots == NULL) status = out_of_memory(t, "the cuckoo slots", bytes);
    else install_slots(t, slots, slot_count, bytes, t->config.capacity, NULL);
  }
  if (status == GH_OK && t->config.variant == GH_VARIANT_COMPACTING) {
    w->keys_by_id_capacity = t->config.capacity;
    w->keys_by_id = gh__alloc(t, (size_t)(w->keys_by_id_capacity * key_bytes(t)), gh__backend_memory(t));
    if (w->keys_by_id == NULL) {
      status = out_of_memory(t, "the compacted key list", (size_t)(w->keys_by_id_capacity * key_bytes(t)));
      w->keys_by_id_capacity = 0;
    }
  }
  if (status == GH_OK) status = gh__sync(t, NULL);
  if (status != GH_OK) {
    ck_release(t);
    return status;
  }
  draw_constants(t);
  set_eviction_limit(&w->geometry, t->config.capacity);
  return GH_OK;
}

static gh_status ck_insert(gh_table *t, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                           uint8_t *failed_out, uint64_t *failed, void *stream) {
  gh_status status;
  *failed = 0;
  switch (t->config.variant) {
    case GH_VARIANT_COMPACTING: status = compacting_insert(t, keys, n, stream); break;
    case GH_VARIANT_MULTIVALUE: status = multivalue_insert(t, keys, values, n, stream); break;
    default: status = map_insert(t, keys, values, GH_CK_VALUE_GIVEN, n, (int)policy, 1, stream); break;
  }
  /* A cuckoo insert never leaves a key out: the flags say so (written only on success). */
  if (status == GH_OK && failed_out) status = gh__fill(t, failed_out, 0, (size_t)n, stream);
  return status;
}

static gh_status ck_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                         const void *default_bytes, void *stream) {
  gh_ck_table *w = state(t);
  const uint64_t default_value = gh__value_word(t, default_bytes);
  if (t->config.variant != GH_VARIANT_MULTIVALUE)
    return w->backend->find(t, &w->geometry, keys, n, values_out, found_out, default_value, stream);
  id_lookup l = {want((size_t)n * sizeof(uint32_t)), want((size_t)n)};
  gh_scratch *const scratch[] = {&l.ids, &l.found, NULL};
  if (!scratch_all(t, scratch)) return out_of_memory(t, "looking up the keys", scratch_total(scratch));
  gh_status status = id_lookup_run(t, keys, n, &l, stream);
  if (status == GH_OK && found_out) status = gh__copy(t, found_out, l.found.ptr, (size_t)n, stream);
  if (status == GH_OK && values_out) {
    /* The first value of each key; default_value for the others. */
    status = w->backend->gather_values(t, w->info, w->sorted_values, (const uint32_t *)l.ids.ptr,
                                       (const uint8_t *)l.found.ptr, NULL, n, default_value, NULL, NULL, values_out,
                                       stream);
  }
  if (status == GH_OK) status = gh__sync(t, stream);
  scratch_release(t, scratch, stream);
  return status;
}

static void count_erased(gh_ck_table *w, const gh_ck_erase_counts *erased) {
  w->main_keys -= erased->main;
  w->side_keys -= erased->side;
  w->stash_keys -= erased->stash;
}

static gh_status ck_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out, uint64_t *erased,
                          void *stream) {
  gh_ck_table *w = state(t);
  const gh_ck_backend *b = w->backend;
  gh_ck_erase_counts counts = {0, 0, 0};
  if (t->config.variant == GH_VARIANT_COMPACTING)
    return gh__fail(t, GH_ERR_UNSUPPORTED, "gh_erase: a compacting table's ids are dense (0..size-1); erasing a key "
                    "would leave a hole in them, so compacting tables do not erase; nothing was changed");
  if (t->config.variant != GH_VARIANT_MULTIVALUE) {
    gh_status status = b->erase(t, &w->geometry, keys, n, erased_out, &counts, stream);
    if (status != GH_OK) return status;
    count_erased(w, &counts);
    *erased = counts.main + counts.side + counts.stash;
    return GH_OK;
  }
  /* Multivalue: the keys' ids are read before the keys leave the map, to count their values; the
   * count after the erase allocates nothing, so a done erase is always accounted for. */
  id_lookup before = {want((size_t)n * sizeof(uint32_t)), want((size_t)n)};
  gh_scratch removed = want((size_t)n);
  gh_scratch *const scratch[] = {&before.ids, &before.found, &removed, NULL};
  if (!scratch_all(t, scratch)) return out_of_memory(t, "erasing", scratch_total(scratch));
  uint64_t pairs = 0;
  gh_status status = id_lookup_run(t, keys, n, &before, stream);
  if (status == GH_OK) status = b->erase(t, &w->geometry, keys, n, (uint8_t *)removed.ptr, &counts, stream);
  if (status == GH_OK) {
    count_erased(w, &counts);
    *erased = counts.main + counts.side + counts.stash;
    status = b->removed_values(t, w->info, (const uint32_t *)before.ids.ptr, (const uint8_t *)removed.ptr, n,
                               &pairs, stream);
  }
  if (status == GH_OK) w->pairs -= pairs;
  if (status == GH_OK && erased_out) status = gh__copy(t, erased_out, removed.ptr, (size_t)n, stream);
  if (status == GH_OK) status = gh__sync(t, stream);
  scratch_release(t, scratch, stream);
  return status;
}

static gh_status ck_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_ck_table *w = state(t);
  if (t->config.variant == GH_VARIANT_MULTIVALUE) return export_multivalue(t, keys_out, values_out, count, stream);
  return w->backend->export_pairs(t, &w->geometry, keys_out, values_out, count, stream);
}

static gh_status ck_clear(gh_table *t, void *stream) {
  gh_status status = clear_all_slots(t, stream);
  if (t->config.variant == GH_VARIANT_MULTIVALUE) multivalue_release_arrays(t, stream);
  return status == GH_OK ? gh__sync(t, stream) : status;
}

static gh_status ck_size(gh_table *t, uint64_t *size) {
  gh_ck_table *w = state(t);
  *size = t->config.variant == GH_VARIANT_MULTIVALUE ? w->pairs : stored_keys(w);
  return GH_OK;
}

/* The multivalue read path: ids of the keys, their counts and CSR offsets into offsets (n + 1),
 * *total values; then, when values_out is given, the values. */
static gh_status multivalue_read(gh_table *t, const void *keys, uint64_t n, uint64_t *counts_out, uint64_t *offsets,
                                 uint64_t *total, void *values_out, uint64_t values_capacity, void *stream) {
  gh_ck_table *w = state(t);
  id_lookup l = {want((size_t)n * sizeof(uint32_t)), want((size_t)n)};
  gh_scratch own_offsets = want(offsets ? 0 : (size_t)(n + 1) * sizeof(uint64_t));
  gh_scratch *const with_offsets[] = {&l.ids, &l.found, &own_offsets, NULL};
  gh_scratch *const without[] = {&l.ids, &l.found, NULL};
  gh_scratch *const *scratch = offsets ? without : with_offsets;
  if (!scratch_all(t, scratch)) return out_of_memory(t, "reading the values", scratch_total(scratch));
  if (offsets == NULL) offsets = (uint64_t *)own_offsets.ptr;
  gh_status status = id_lookup_run(t, keys, n, &l, stream);
  if (status == GH_OK)
    status = count_values(t, (const uint32_t *)l.ids.ptr, (const uint8_t *)l.found.ptr, n, counts_out,
                                      offsets, total, stream);
  if (status == GH_OK && values_out != NULL && *total > values_capacity)
    status = gh__fail(t, GH_ERR_BUFFER_TOO_SMALL, "gh_find_all: the keys have %llu values but values_capacity is %llu; "
                      "offsets_out holds the offsets, no value was written (call gh_count first)",
                      (unsigned long long)*total, (unsigned long long)values_capacity);
  if (status == GH_OK && values_out != NULL && *total > 0)
    status = w->backend->gather_values(t, w->info, w->sorted_values, (const uint32_t *)l.ids.ptr,
                                       (const uint8_t *)l.found.ptr, offsets, n, 0, NULL, NULL, values_out, stream);
  scratch_release(t, scratch, stream);
  return status;
}

static gh_status ck_count(gh_table *t, const void *keys, uint64_t n, uint64_t *counts_out, uint64_t *total,
                          void *stream) {
  uint64_t sum = 0;
  gh_status status = multivalue_read(t, keys, n, counts_out, NULL, &sum, NULL, 0, stream);
  if (status == GH_OK && total) *total = sum;
  return status;
}

static gh_status ck_find_all(gh_table *t, const void *keys, uint64_t n, uint64_t *offsets_out, void *values_out,
                             uint64_t values_capacity, void *stream) {
  uint64_t total = 0;
  gh_status status = multivalue_read(t, keys, n, NULL, offsets_out, &total, values_out, values_capacity, stream);
  if (status == GH_OK && total > 0 && values_out == NULL)
    status = gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_find_all: values_out is NULL but the keys have %llu values",
                      (unsigned long long)total);
  return status;
}

static gh_status ck_keys_of_ids(gh_table *t, const void *ids, uint64_t n, void *keys_out, uint64_t *bad, void *stream) {
  gh_ck_table *w = state(t);
  return w->backend->keys_of_ids(t, w->keys_by_id, stored_keys(w), ids, n, keys_out, bad, stream);
}

static gh_status ck_stats(gh_table *t, gh_stats *stats) {
  gh_ck_table *w = state(t);
  stats->distinct_keys = stored_keys(w);
  stats->slots = w->geometry.slot_count;
  stats->restarts = w->restarts;
  stats->grows = w->grows;
  stats->eviction_limit = w->geometry.max_evictions;
  stats->stash_keys = w->stash_keys;
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

/* Checks the map on a host snapshot (g: the geometry with the stash pointing at its host copy);
 * fills id_seen (when given, one byte per id) with the ids found. */
static gh_status validate_map(gh_table *t, const gh_ck_geometry *g, const void *slots, uint8_t *id_seen,
                              uint64_t id_limit) {
  gh_ck_table *w = state(t);
  const gh_slot_format f = g->format;
  const uint64_t empty = gh_slot_empty_key(f.key_bits);
  uint64_t keys = 0;
  for (uint64_t i = 0; i < gh_ck_position_count(g); ++i) {
    const void *slot = gh_ck_entry_at(g, (void *)slots, i);
    const uint64_t marker = gh_slot_load_key(f, slot), value = gh_slot_load_value(f, slot);
    const char *where = i < g->slot_count ? "main" : (i == g->slot_count ? "side" : "stash");
    uint64_t key = marker;
    if (!gh_ck_holds_key(g, i, &key)) {
      if (!slot_canonical(f, slot, empty, ~0ull))
        return gh__fail(t, GH_ERR_CORRUPT, "validate: %s position %llu is empty with non-canonical bits", where,
                        (unsigned long long)i);
      continue;
    }
    if (!slot_canonical(f, slot, marker, value))
      return gh__fail(t, GH_ERR_CORRUPT, "validate: %s position %llu (key %llu): padding bits are not all ones", where,
                      (unsigned long long)i, (unsigned long long)key);
    keys += 1;
    if (i != g->slot_count) {
      const int stashed = i > g->slot_count;
      if (!stashed && gh_ck_function_of(g, key, i) == g->functions)
        return gh__fail(t, GH_ERR_CORRUPT, "validate: slot %llu holds key %llu, whose %u hash functions all point "
                        "at other buckets", (unsigned long long)i, (unsigned long long)key, g->functions);
      for (unsigned j = 0; j < g->functions; ++j) {
        const uint64_t first = gh_ck_bucket(g, key, j) << g->bucket_shift;
        for (uint64_t other = first; other < first + (1ull << g->bucket_shift); ++other)
          if (other != i && gh_slot_load_key(f, gh_slot_at(f, (void *)slots, other)) == key)
            return gh__fail(t, GH_ERR_CORRUPT, "validate: key %llu is stored twice: %s position %llu and slot %llu",
                            (unsigned long long)key, where, (unsigned long long)i, (unsigned long long)other);
      }
      for (uint64_t j = g->slot_count + 1; stashed && j < i; ++j)
        if (gh_slot_load_key(f, gh_ck_entry_at(g, (void *)slots, j)) == key)
          return gh__fail(t, GH_ERR_CORRUPT, "validate: key %llu is in the stash twice (positions %llu and %llu)",
                          (unsigned long long)key, (unsigned long long)j, (unsigned long long)i);
    }
    if (id_seen != NULL) {
      if (value >= id_limit)
        return gh__fail(t, GH_ERR_CORRUPT, "validate: key %llu has id %llu, not below %llu", (unsigned long long)key,
                        (unsigned long long)value, (unsigned long long)id_limit);
      if (id_seen[value]++)
        return gh__fail(t, GH_ERR_CORRUPT, "validate: id %llu is given to two keys", (unsigned long long)value);
    }
  }
  if (keys != stored_keys(w))
    return gh__fail(t, GH_ERR_CORRUPT, "validate: the table counts %llu keys (%llu of them in the stash) but %llu are "
                    "stored", (unsigned long long)stored_keys(w), (unsigned long long)w->stash_keys,
                    (unsigned long long)keys);
  return GH_OK;
}

/* Copies n bytes of backend memory into a fresh host buffer (freed with free()). */
static gh_status snapshot(gh_table *t, const void *src, size_t bytes, void **out) {
  *out = malloc(bytes ? bytes : 1);
  if (*out == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "validate: no host memory for a %zu-byte copy; the table is unchanged",
                    bytes);
  gh_status status = bytes ? gh__to_host(t, *out, src, bytes, NULL) : GH_OK;
  if (status != GH_OK) {
    free(*out);
    *out = NULL;
  }
  return status;
}

static gh_status validate_compacting(gh_table *t, const gh_ck_geometry *g, const void *slots, uint8_t *id_seen) {
  gh_ck_table *w = state(t);
  const uint64_t keys = stored_keys(w);
  const gh_slot_format f = g->format;
  void *by_id = NULL;
  gh_status status = snapshot(t, w->keys_by_id, (size_t)(keys * key_bytes(t)), &by_id);
  for (uint64_t i = 0; status == GH_OK && i < gh_ck_position_count(g); ++i) {
    const void *slot = gh_ck_entry_at(g, (void *)slots, i);
    uint64_t key = gh_slot_load_key(f, slot);
    if (!gh_ck_holds_key(g, i, &key)) continue;
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
  void *slots = NULL, *stash = NULL;
  gh_status status = snapshot(t, w->slots, w->slots_bytes, &slots);
  if (status == GH_OK)
    status = snapshot(t, w->geometry.stash, (size_t)w->geometry.stash_slots * entry_bytes(w), &stash);
  gh_ck_geometry host = w->geometry;
  host.stash = stash;
  const gh_variant variant = t->config.variant;
  uint64_t id_limit = 0;
  if (variant == GH_VARIANT_COMPACTING) id_limit = stored_keys(w);
  if (variant == GH_VARIANT_MULTIVALUE) id_limit = w->id_used;
  uint8_t *id_seen = variant != GH_VARIANT_MAP ? (uint8_t *)calloc(id_limit ? id_limit : 1, 1) : NULL;
  if (status == GH_OK && variant != GH_VARIANT_MAP && id_seen == NULL)
    status = gh__fail(t, GH_ERR_OUT_OF_MEMORY, "validate: no host memory");
  if (status == GH_OK) status = validate_map(t, &host, slots, id_seen, variant == GH_VARIANT_MAP ? 0 : id_limit);
  if (status == GH_OK && variant == GH_VARIANT_COMPACTING) status = validate_compacting(t, &host, slots, id_seen);
  if (status == GH_OK && variant == GH_VARIANT_MULTIVALUE && id_limit > 0) status = validate_multivalue(t, id_seen, id_limit);
  free(id_seen);
  free(stash);
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
    .mixed = NULL, .compact = NULL, .join = NULL,                                                   \
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
    .cuda_ops = GH_CUDA_OPS(cuda_ops),
    .check_config = gh__cuckoo_check_config,
    .estimate = gh__cuckoo_estimate,
    .variants = (1u << GH_VARIANT_MAP) | (1u << GH_VARIANT_COMPACTING) | (1u << GH_VARIANT_MULTIVALUE),
    .map_policies = GH_MAP_POLICIES_ALL,
    .capabilities = GH_CAP_ERASE | GH_CAP_GROWS | GH_CAP_HASH_FUNCTIONS,
    /* Inserts restart and grow until every key is in; only running out of memory stops them, and
     * that is reported as GH_ERR_OUT_OF_MEMORY. */
    .did_not_fit = "the table could not grow",
};
