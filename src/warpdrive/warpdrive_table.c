/* warpdrive_table.c - warpdrive logic common to both backends: the design's descriptor, geometry,
 * allocation, memory estimate and validate. */
#include <stdio.h>
#include <string.h>

#include "core/design.h"
#include "core/parallel.h"
#include "core/prime.h"
#include "core/toolkit.h"
#include "warpdrive/warpdrive_table.h"

gh_wd_geometry gh__wd_geometry(const gh_config *c) {
  gh_wd_geometry g;
  const uint64_t windows_wanted = (c->capacity + c->group_size - 1) / c->group_size;
  const uint64_t default_limit = GH_WD_DEFAULT_PROBE_SLOTS / c->group_size;
  g.seed = c->seed;
  g.window_width = c->group_size;
  g.key_bits = c->key_bits;
  g.value_bits = c->value_bits;
  g.slot_bytes = gh_wd_slot_bytes(c->key_bits, c->value_bits);
  /* Regions as large as GH_WD_LOCAL_REGION_BYTES allows while there are GH_WD_LOCAL_MIN_REGIONS of
   * them; their count is the prime at or above what the capacity asks. */
  const uint64_t region_fit = GH_WD_LOCAL_REGION_BYTES / ((uint64_t)g.window_width * g.slot_bytes);
  g.local_shift = 0;
  while ((2ull << g.local_shift) <= region_fit && (windows_wanted >> (g.local_shift + 1u)) >= GH_WD_LOCAL_MIN_REGIONS)
    g.local_shift += 1u;
  if (g.local_shift == 0) {
    g.window_count = gh__next_prime(windows_wanted);
    g.local_windows = 0;
  } else {
    const uint64_t regions = (windows_wanted + (1ull << g.local_shift) - 1u) >> g.local_shift;
    g.window_count = gh__next_prime(regions) << g.local_shift;
    g.local_windows = (1u << g.local_shift) < GH_WD_LOCAL_WINDOWS ? (1u << g.local_shift) : GH_WD_LOCAL_WINDOWS;
  }
  /* After its local windows a sequence visits every window within window_count steps: a limit of
   * that many more finds a free slot wherever one is left. */
  const uint64_t whole_table = g.window_count + g.local_windows;
  g.max_probe_windows = c->max_probe_windows ? c->max_probe_windows : default_limit;
  if (g.max_probe_windows > whole_table) g.max_probe_windows = whole_table;
  /* Probe iterators count attempts in 32 bits. */
  if (g.max_probe_windows > UINT32_MAX) g.max_probe_windows = UINT32_MAX;
  return g;
}

static size_t slots_bytes(const gh_wd_geometry *g) {
  return (size_t)(g->window_count * g->window_width + GH_WD_SIDE_SLOTS) * g->slot_bytes;
}

static gh_status estimate(const gh_config *c, size_t *host_bytes, size_t *device_bytes) {
  const gh_wd_geometry g = gh__wd_geometry(c);
  const size_t table = slots_bytes(&g) + sizeof(gh_wd_counters);
  return gh__estimate_split(c, sizeof(gh_wd_table), table, host_bytes, device_bytes);
}

/* The registry's entry for warpdrive (src/registry.h). */
const gh_design_descriptor gh__design_warpdrive = {
    .id = GH_WARPDRIVE,
    .name = "warpdrive",
    .host_ops = &gh__warpdrive_host_ops,
    .cuda_ops = GH_CUDA_OPS(gh__warpdrive_cuda_ops),
    .check_config = NULL, /* every field it reads (group_size, max_probe_windows) is common */
    .estimate = estimate,
    .variants = 1u << GH_VARIANT_MAP,
    .map_policies = GH_MAP_POLICIES_ALL,
    .capabilities = GH_CAP_ERASE | GH_CAP_REPORTS_FULL | GH_CAP_DEVICE_VIEW | GH_CAP_STATUS_FLAGS | GH_CAP_GROUP_SIZE |
                    GH_CAP_COMPACT,
    .did_not_fit = "no free slot within the probe limit",
};

/* ---- The ops both backends share --------------------------------------------------------------- */

static gh_wd_table *state(gh_table *t) { return (gh_wd_table *)t->impl; }

gh_status gh__wd_init(gh_table *t) {
  const gh_memory_kind kind = gh__backend_memory(t);
  gh_wd_table *w = (gh_wd_table *)gh__alloc(t, sizeof *w, GH_MEMORY_HOST);
  if (w == NULL) return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "out of host memory for the table state");
  memset(w, 0, sizeof *w);
  t->impl = w;
  w->kind = kind;
  w->geometry = gh__wd_geometry(&t->config);
  w->slots_bytes = slots_bytes(&w->geometry);
  /* gh_get_config reports the effective values. */
  t->config.capacity = w->geometry.window_count * w->geometry.window_width;
  t->config.max_probe_windows = w->geometry.max_probe_windows;
  w->slots = gh__alloc(t, w->slots_bytes, kind);
  w->counters = (gh_wd_counters *)gh__alloc(t, sizeof(gh_wd_counters), kind);
  if (w->slots == NULL || w->counters == NULL) {
    const size_t bytes = w->slots_bytes;
    gh__wd_release(t);
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "could not allocate %zu bytes of %s memory for %llu slots",
                    bytes, kind == GH_MEMORY_DEVICE ? "device" : "host",
                    (unsigned long long)t->config.capacity);
  }
  /* Queued on the default stream; gh_create waits for it. */
  gh_status status = gh__fill(t, w->counters, 0, sizeof(gh_wd_counters), NULL);
  if (status == GH_OK) status = gh__wd_clear(t, NULL);
  if (status != GH_OK) gh__wd_release(t);
  return status;
}

void gh__wd_release(gh_table *t) {
  gh_wd_table *w = state(t);
  if (w == NULL) return;
  gh__free(t, w->slots, w->slots_bytes, w->kind);
  gh__free(t, w->counters, sizeof(gh_wd_counters), w->kind);
  gh__free(t, w, sizeof *w, GH_MEMORY_HOST);
  t->impl = NULL;
}

/* Every slot empty (all ones), size 0; queued on the stream. */
gh_status gh__wd_clear(gh_table *t, void *stream) {
  gh_wd_table *w = state(t);
  gh_status status = gh__fill(t, w->slots, 0xFF, w->slots_bytes, stream);
  if (status == GH_OK) status = gh__fill(t, &w->counters->size, 0, sizeof w->counters->size, stream);
  if (status == GH_OK) w->tombstones_possible = 0;
  return status;
}

gh_status gh__wd_size(gh_table *t, uint64_t *size) {
  unsigned long long value = 0;
  const gh_status status = gh__to_host(t, &value, &state(t)->counters->size, sizeof value, NULL);
  if (status == GH_OK) *size = value;
  return status;
}

gh_status gh__wd_take_flags(gh_table *t, unsigned *flags) {
  unsigned *word = &state(t)->counters->status;
  /* Kernels of any stream may still be setting flags (user kernels on a device view). */
  gh_status status = gh__device_sync(t);
  if (status == GH_OK) status = gh__to_host(t, flags, word, sizeof *flags, NULL);
  if (status == GH_OK) status = gh__fill(t, word, 0, sizeof *word, NULL);
  return status == GH_OK ? gh__sync(t, NULL) : status;
}

/* ---- Validate -------------------------------------------------------------------------------- */

typedef struct validate_context {
  const gh_wd_geometry *geometry;
  const void *slots;
  uint64_t first_bad;  /* lowest slot index with a violation (atomic min) */
} validate_context;

static int slot_is_canonical(const gh_wd_geometry *g, const void *slot, uint64_t key, uint64_t value) {
  const gh_wd_bits expected = gh_wd_pack(g, key, value);
  unsigned char bytes[16];
  memcpy(bytes, &expected.lo, 8);
  memcpy(bytes + 8, &expected.hi, 8);
  return memcmp(bytes, slot, g->slot_bytes) == 0;
}

/* Describes the violation at slot i into message, or returns 0 when slot i is fine. */
static int check_slot(const gh_wd_geometry *g, const void *slots, uint64_t i, char *message, size_t size) {
  const void *slot = (const char *)slots + i * g->slot_bytes;
  const uint64_t key = gh_wd_load_key(g, slot);
  const uint64_t empty = gh_wd_empty_key(g->key_bits), tomb = gh_wd_tombstone_key(g->key_bits);
  const unsigned long long k = (unsigned long long)key, at = (unsigned long long)i;
  if (key == empty || key == tomb) {
    if (slot_is_canonical(g, slot, key, ~0ull)) return 0;
    snprintf(message, size, "slot %llu: %s slot with non-canonical bits", at, key == empty ? "empty" : "tombstone");
    return 1;
  }
  if (!slot_is_canonical(g, slot, key, gh_wd_load_value(g, slot))) {
    snprintf(message, size, "slot %llu (key %llu): padding bits are not all ones", at, k);
    return 1;
  }
  gh_probe p = gh_wd_probe_begin(g, key);
  for (; !gh_probe_done(&p, g->max_probe_windows); gh_wd_probe_next(g, &p)) {
    for (unsigned lane = 0; lane < g->window_width; ++lane) {
      const uint64_t j = gh_wd_window_slot(g, p.window, lane);
      if (j == i) return 0;
      const uint64_t other = gh_wd_load_key(g, (const char *)slots + j * g->slot_bytes);
      if (other == empty) {
        snprintf(message, size, "slot %llu (key %llu): empty slot %llu precedes it on its probe sequence", at, k,
                 (unsigned long long)j);
        return 1;
      }
      if (other == key) {
        snprintf(message, size, "key %llu is stored twice: slots %llu and %llu", k, (unsigned long long)j, at);
        return 1;
      }
    }
  }
  snprintf(message, size, "slot %llu (key %llu): not within the first %llu windows of its probe sequence", at, k,
           (unsigned long long)g->max_probe_windows);
  return 1;
}

static gh_counters validate_chunk(void *context, uint64_t begin, uint64_t end) {
  validate_context *c = (validate_context *)context;
  const gh_wd_geometry *g = c->geometry;
  gh_counters counted = {{0}};
  char ignored[8];
  for (uint64_t i = begin; i < end; ++i) {
    const uint64_t key = gh_wd_load_key(g, (const char *)c->slots + i * g->slot_bytes);
    if (!gh_wd_is_sentinel(key, g->key_bits)) counted.value[0] += 1;
    if (check_slot(g, c->slots, i, ignored, sizeof ignored)) {
      uint64_t seen = __atomic_load_n(&c->first_bad, __ATOMIC_RELAXED);
      while (i < seen && !__atomic_compare_exchange_n(&c->first_bad, &seen, i, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      }
      break;
    }
  }
  return counted;
}

/* Checks every invariant on a host copy of the slots; recorded_size is the size counter. */
static gh_status validate_snapshot(gh_table *t, const void *host_slots, uint64_t recorded_size) {
  const gh_wd_geometry *g = &((gh_wd_table *)t->impl)->geometry;
  const uint64_t main_slots = g->window_count * g->window_width;
  validate_context context = {g, host_slots, ~0ull};
  const gh_counters counted = gh__parallel_for(main_slots, t->config.host_threads, validate_chunk, &context);
  char message[GH_ERROR_CAPACITY - 64];
  if (context.first_bad != ~0ull) {
    check_slot(g, host_slots, context.first_bad, message, sizeof message);
    return gh__fail(t, GH_ERR_CORRUPT, "validate: %s", message);
  }
  uint64_t keys = counted.value[0];
  for (uint64_t side = 0; side < GH_WD_SIDE_SLOTS; ++side) {
    const void *slot = (const char *)host_slots + (main_slots + side) * g->slot_bytes;
    const uint64_t marker = gh_wd_load_key(g, slot);
    const int present = marker == GH_WD_SIDE_PRESENT;
    if (!present && !slot_is_canonical(g, slot, gh_wd_empty_key(g->key_bits), ~0ull))
      return gh__fail(t, GH_ERR_CORRUPT, "validate: side slot %llu (key all-ones%s) is neither present nor canonically absent",
                      (unsigned long long)side, side ? " minus one" : "");
    if (present && !slot_is_canonical(g, slot, GH_WD_SIDE_PRESENT, gh_wd_load_value(g, slot)))
      return gh__fail(t, GH_ERR_CORRUPT, "validate: side slot %llu has padding bits that are not all ones",
                      (unsigned long long)side);
    keys += (uint64_t)present;
  }
  if (keys != recorded_size)
    return gh__fail(t, GH_ERR_CORRUPT, "validate: the size counter says %llu keys but %llu are stored",
                    (unsigned long long)recorded_size, (unsigned long long)keys);
  return GH_OK;
}

gh_status gh__wd_validate(gh_table *t) {
  gh_wd_table *w = state(t);
  uint64_t size = 0;
  gh_status status = gh__wd_size(t, &size);
  if (status != GH_OK) return status;
  if (w->kind == GH_MEMORY_HOST) return validate_snapshot(t, w->slots, size);
  void *snapshot = gh__alloc(t, w->slots_bytes, GH_MEMORY_HOST);
  if (snapshot == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "validate: no host memory for a %zu-byte copy of the table; it is "
                    "unchanged", w->slots_bytes);
  status = gh__to_host(t, snapshot, w->slots, w->slots_bytes, NULL);
  if (status == GH_OK) status = validate_snapshot(t, snapshot, size);
  gh__free(t, snapshot, w->slots_bytes, GH_MEMORY_HOST);
  return status;
}

/* ---- gh_compact (warpdrive_table.h) ----------------------------------------------------------------
 * Two ways to the same keys with no tombstone left. The rebuild exports the pairs to scratch, swaps
 * the slots for fresh ones (cleared), inserts the pairs there and copies the fresh slots over the
 * old ones (whose address device views hold): a second slot array and the pairs' size of scratch.
 * The in-place rehash (gpuhash/detail/warpdrive.h) needs two bits a window at most. On an H100 in
 * the aging workload (2^23 and 2^25 resident keys at load 0.85) the rebuild compacted in 1.4 and
 * 4.7 ms, the rehash (as of 48c06ae) in 4.2 and 16.3 (20 passes; bench/results/2026-11-28-h100-
 * warpdrive-aging-inplace.txt), so the rebuild runs whenever its memory can be had within
 * gh_config.compact_scratch_bytes, and the rehash when it cannot (or when the rebuild runs out of
 * memory or room part-way, which puts the table back first). */

/* Whether gh_compact may take this much scratch (gh_config.compact_scratch_bytes). */
static int within_scratch(const gh_table *t, uint64_t bytes) {
  return t->config.compact_scratch_bytes == 0 || bytes <= t->config.compact_scratch_bytes;
}

/* Anything that fails before the copy puts the old slots and the size counter back: the table is
 * as it was, and *retry (memory ran out, or keys did not fit again) says the rehash may still do
 * it. The caller syncs and frees the scratch. */
static gh_status rebuild(gh_table *t, void *keys, void *values, void *fresh, uint64_t size, int *retry,
                         void *stream) {
  gh_wd_table *w = state(t);
  const int had_tombstones = w->tombstones_possible;
  void *old = w->slots;
  uint64_t count = 0, failed = 0;
  gh_status status = t->ops->export_all(t, keys, values, &count, stream);
  if (status != GH_OK) return status;
  w->slots = fresh;
  status = gh__wd_clear(t, stream);
  if (status == GH_OK) status = t->ops->insert(t, keys, values, count, GH_OVERWRITE, NULL, &failed, stream);
  *retry = status == GH_ERR_OUT_OF_MEMORY || (status == GH_OK && failed);
  if (status == GH_OK && failed)
    status = gh__fail(t, GH_ERR_INTERNAL, "gh_compact: %llu keys did not fit again; the table is unchanged",
                      (unsigned long long)failed);
  if (status == GH_OK) status = gh__copy(t, old, fresh, w->slots_bytes, stream);
  w->slots = old;
  if (status != GH_OK) {
    /* (gh__wd_clear above spoke of the fresh slots; the old ones are back, tombstones and all) */
    w->tombstones_possible = had_tombstones;
    /* (the size counter as it was; the old slots were never written) */
    const unsigned long long recorded = size;
    gh__copy(t, &w->counters->size, &recorded, sizeof recorded, stream);
  }
  return status;
}

/* Passes until one changes nothing; each waits for its count. Two bitmaps of a bit a window hold
 * the marks of the pass before and take this pass's, then swap; without memory for them every pass
 * reads every window it needs (slower, the same result). A pass that fails part-way leaves keys
 * behind empty slots; a later gh_compact, which starts from any such table, completes the rehash
 * (a failure that ends the CUDA context ends the table with it). */
static gh_status rehash_in_place(gh_table *t, gh_wd_rehash_pass pass, void *stream) {
  gh_wd_table *w = state(t);
  const size_t words = (size_t)((w->geometry.window_count + 31u) / 32u), marks_bytes = words * sizeof(uint32_t);
  uint32_t *marks[2] = {NULL, NULL};
  if (within_scratch(t, 2u * (uint64_t)marks_bytes))
    marks[0] = gh__alloc(t, marks_bytes, w->kind), marks[1] = gh__alloc(t, marks_bytes, w->kind);
  const int marking = marks[0] != NULL && marks[1] != NULL;
  uint64_t changed = 0, passes = 0;
  gh_status status = GH_OK;
  do {
    uint32_t *marked = marking ? marks[passes % 2u] : NULL;
    const uint32_t *marked_before = marking && passes > 0 ? marks[(passes + 1u) % 2u] : NULL;
    if (marked != NULL) status = gh__fill(t, marked, 0, marks_bytes, stream);
    if (status == GH_OK) status = pass(t, marked_before, marked, &changed, stream);
    passes += 1;
  } while (status == GH_OK && changed != 0);
  if (status == GH_OK) {
    w->tombstones_possible = 0;
  } else {
    char cause[256];
    snprintf(cause, sizeof cause, "%s", gh_last_error(t));
    gh__fail(t, status, "gh_compact: pass %llu of the in-place rehash failed (%s); keys may lie behind empty "
             "slots, out of a lookup's reach, until a gh_compact completes", (unsigned long long)passes, cause);
  }
  /* (the passes waited for their counts: nothing queued still uses the bitmaps) */
  for (int k = 0; k < 2; ++k) gh__free(t, marks[k], marks_bytes, w->kind);
  return status;
}

gh_status gh__wd_compact(gh_table *t, gh_wd_rehash_pass pass, void *stream) {
  gh_wd_table *w = state(t);
  const gh_wd_geometry *g = &w->geometry;
  uint64_t size = 0;
  gh_status status = gh__wd_size(t, &size);
  if (status != GH_OK) return status;
  const size_t key_bytes = size * (g->key_bits / 8u), value_bytes = size * (g->value_bits / 8u);
  void *keys = NULL, *values = NULL, *fresh = NULL;
  if (within_scratch(t, (uint64_t)key_bytes + value_bytes + w->slots_bytes)) {
    keys = gh__alloc(t, key_bytes, w->kind), values = g->value_bits ? gh__alloc(t, value_bytes, w->kind) : NULL;
    fresh = gh__alloc(t, w->slots_bytes, w->kind);
  }
  int retry = keys == NULL || (g->value_bits && values == NULL) || fresh == NULL;
  if (!retry) {
    status = rebuild(t, keys, values, fresh, size, &retry, stream);
    /* (Nothing queued may still use the scratch when it goes.) */
    const gh_status synced = gh__sync(t, stream);
    if (status == GH_OK) status = synced;
  }
  gh__free(t, fresh, w->slots_bytes, w->kind);
  gh__free(t, keys, key_bytes, w->kind);
  gh__free(t, values, value_bytes, w->kind);
  return retry ? rehash_in_place(t, pass, stream) : status;
}

/* ---- The cache-partitioned bulk insert (warpdrive_table.h) ---------------------------------------- */

/* Rounds sort their entries while more remain than a quarter of the table's windows and than this
 * many (or a sixteenth of the batch, where that is fewer): the last few walk on unsorted, where a
 * partition would cost more in launches, and a round over the table in shared memory (the CUDA
 * backend's) more in reading and writing it, than it saves. */
#define GH_WD_BULK_DIRECT_BELOW (1ull << 16)
/* The last round at the latest: it walks the rest of the sequences. */
#define GH_WD_BULK_MAX_ROUNDS 32u

/* Where a round that starts at window `attempt` stops: a sequence's local windows all lie in the
 * region of its first (one round, when the bulk regions hold the locality regions); after them,
 * each window may lie anywhere. */
static uint32_t round_until(const gh_wd_geometry *g, unsigned shift, uint32_t attempt) {
  uint32_t until = attempt < g->local_windows && shift >= g->local_shift ? g->local_windows : attempt + 1u;
  return until < g->max_probe_windows ? until : (uint32_t)g->max_probe_windows;
}

/* Regions of the largest power of two of windows that fits the backend's region; 0 when that
 * makes more than a partition takes. */
static unsigned bulk_regions(gh_table *t, const gh_wd_bulk_backend *b, unsigned *shift) {
  const gh_wd_geometry *g = &state(t)->geometry;
  const uint64_t fit = b->region_bytes(t) / ((uint64_t)g->window_width * g->slot_bytes);
  *shift = 0;
  while ((2ull << *shift) <= fit) *shift += 1u;
  const uint64_t regions = (g->window_count + (1ull << *shift) - 1u) >> *shift;
  return regions <= b->max_regions ? (unsigned)regions : 0u;
}

/* Every insert and erase asks (refused: what the caller rules out): the cheap refusals come first,
 * the regions (a device query for some tables) only for a batch that could go. */
static int bulk_applies(gh_table *t, const gh_wd_bulk_backend *b, uint64_t n, int refused, unsigned *regions,
                        unsigned *shift) {
  const gh_wd_table *w = state(t);
  if (refused || w->device_view_given || n == 0) return 0;
  if (t->config.bulk_min_keys != 0 && n < t->config.bulk_min_keys) return 0;
  *regions = bulk_regions(t, b, shift);
  if (*regions == 0) return 0;
  return t->config.bulk_min_keys != 0 || b->takes_by_default(t, n, *regions);
}

/* Whether a partition's longest run is too long for a block (gh_partition_too_skewed): a region
 * holds 2^shift windows of slots. */
static int runs_too_long(const gh_wd_geometry *g, unsigned shift, uint64_t longest) {
  return gh_partition_too_skewed(longest, (uint64_t)g->window_width << shift);
}

/* All the scratch of a bulk call, before anything changes: two copies of the batch's entries and
 * the partition's work space. Refused, the ordinary call runs (no error). */
static int take_scratch(gh_table *t, const gh_wd_bulk_backend *b, uint64_t n, unsigned regions, gh_scratch *scratch,
                        size_t *copy_bytes, size_t *work_bytes, void *stream) {
  /* (16-byte slots and the work space stay aligned: every part is a multiple of 256 bytes) */
  *copy_bytes = ((size_t)n * state(t)->geometry.slot_bytes + 255u) / 256u * 256u;
  *work_bytes = b->partition_bytes(t, n, regions);
  if (gh__scratch_alloc_on(t, scratch, 2u * *copy_bytes + *work_bytes, stream) == GH_OK) return 1;
  gh__clear_error(t);
  return 0;
}

gh_status gh__wd_bulk_insert(gh_table *t, const gh_wd_bulk_backend *b, const void *keys, const void *values,
                             uint64_t n, int policy, const uint8_t *failed_out, uint64_t *failed, int *taken,
                             void *stream) {
  gh_wd_table *w = state(t);
  unsigned regions = 0, shift = 0;
  *taken = 0;
  if (!bulk_applies(t, b, n, w->tombstones_possible || failed_out != NULL, &regions, &shift)) return GH_OK;
  gh_scratch scratch = {NULL, 0, w->kind, 0, NULL};
  size_t copy_bytes = 0, work_bytes = 0;
  if (!take_scratch(t, b, n, regions, &scratch, &copy_bytes, &work_bytes, stream)) return GH_OK;
  *taken = 1;
  *failed = 0;
  uint64_t direct_below = n / 16u < GH_WD_BULK_DIRECT_BELOW ? n / 16u : GH_WD_BULK_DIRECT_BELOW;
  if (direct_below < w->geometry.window_count / 4u) direct_below = w->geometry.window_count / 4u;
  char *base = (char *)scratch.ptr;
  gh_wd_round r = {keys, values, NULL, n, 0u, 0u, regions, shift, 0, policy, base, base + copy_bytes,
                   base + 2u * copy_bytes, work_bytes};
  gh_status status = GH_OK;
  for (unsigned round = 1;; ++round) {
    r.until = round_until(&w->geometry, shift, r.attempt);
    r.last = r.until >= w->geometry.max_probe_windows || round >= GH_WD_BULK_MAX_ROUNDS ||
             (r.attempt > 0 && r.n <= direct_below);
    const int sorts = !(r.last && r.attempt > 0);
    gh_wd_call_counters after = {0, 0, 0, 0};
    uint64_t longest = 0;
    if (sorts) status = b->partition(t, &r, round == 1 ? &longest : NULL, stream);
    if (status == GH_OK && round == 1 && runs_too_long(&w->geometry, shift, longest)) {
      *taken = 0; /* (nothing has changed yet: the ordinary insert takes the batch) */
      break;
    }
    if (status == GH_OK) status = b->round(t, &r, sorts ? r.sorted : r.pending, &after, stream);
    if (status != GH_OK) break;
    *failed += after.failed;
    if (r.last || after.cursor == 0) break;
    r.keys = r.values = NULL;
    r.pending = r.passed;
    r.n = after.cursor;
    r.attempt = r.until;
  }
  gh__scratch_free(t, &scratch, stream);
  return status;
}

gh_status gh__wd_bulk_erase(gh_table *t, const gh_wd_bulk_backend *b, const void *keys, uint64_t n,
                            const uint8_t *erased_out, uint64_t *erased, int *taken, void *stream) {
  gh_wd_table *w = state(t);
  unsigned regions = 0, shift = 0;
  *taken = 0;
  if (w->geometry.local_windows == 0 || !bulk_applies(t, b, n, erased_out != NULL, &regions, &shift)) return GH_OK;
  const uint32_t until = round_until(&w->geometry, shift, 0);
  /* (a round of one window would leave most keys of a loaded table undecided) */
  if (until < w->geometry.local_windows) return GH_OK;
  gh_scratch scratch = {NULL, 0, w->kind, 0, NULL};
  size_t copy_bytes = 0, work_bytes = 0;
  if (!take_scratch(t, b, n, regions, &scratch, &copy_bytes, &work_bytes, stream)) return GH_OK;
  *taken = 1;
  char *base = (char *)scratch.ptr;
  gh_wd_round r = {keys, NULL, NULL, n, 0u, until, regions, shift, 0, 0, base, base + copy_bytes, base + 2u * copy_bytes,
                   work_bytes};
  gh_wd_call_counters first = {0, 0, 0, 0}, rest = {0, 0, 0, 0};
  uint64_t longest = 0;
  gh_status status = b->partition(t, &r, &longest, stream);
  if (status == GH_OK && runs_too_long(&w->geometry, shift, longest)) {
    *taken = 0; /* (nothing has changed yet: the ordinary erase takes the batch) */
    gh__scratch_free(t, &scratch, stream);
    return GH_OK;
  }
  if (status == GH_OK) status = b->erase_round(t, &r, r.sorted, &first, stream);
  if (status == GH_OK && first.cursor) {
    gh_wd_round left = r;
    left.keys = NULL;
    left.pending = r.passed;
    left.n = first.cursor;
    left.last = 1;
    left.passed = NULL;
    status = b->erase_round(t, &left, r.passed, &rest, stream);
  }
  *erased = first.erased + rest.erased;
  gh__scratch_free(t, &scratch, stream);
  return status;
}
