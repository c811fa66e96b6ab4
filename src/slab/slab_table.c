/* slab_table.c - slab hash logic common to both backends: the descriptor, geometry, memory
 * estimate, SlabAlloc's growth from the host (super blocks, or the light variant's single array),
 * clear, size, stats and validate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/design.h"
#include "core/toolkit.h"
#include "slab/slab_table.h"

static gh_slab_table *state(gh_table *t) { return (gh_slab_table *)t->impl; }

gh_slab_geometry gh__slab_geometry(const gh_config *c) {
  gh_slab_geometry g;
  g.format = gh_slot_format_make(c->key_bits, c->value_bits);
  g.per_slab = gh_slab_per_slab(c->key_bits, c->value_bits);
  const double wanted = (double)c->capacity / ((double)g.per_slab * c->slab_load);
  g.buckets = (uint64_t)wanted;
  if ((double)g.buckets < wanted) g.buckets += 1;
  if (g.buckets == 0) g.buckets = 1;
  g.seed = c->seed;
  return g;
}

gh_slab_device_table gh__slab_device_table(const gh_slab_table *s) {
  gh_slab_device_table d;
  d.g = s->geometry;
  d.base = s->base;
  d.pool = s->pool;
  d.size = &s->counters->size;
  d.slabs_in_use = &s->counters->slabs_in_use;
  return d;
}

gh_status gh__slab_publish(gh_table *t, void *stream) {
  gh_slab_table *s = state(t);
  if (s->published == NULL) return GH_OK;
  /* From a stack copy: a pageable source is read before the call returns. */
  const gh_slab_device_table now = gh__slab_device_table(s);
  return gh__copy(t, s->published, &now, sizeof now, stream);
}

static size_t base_bytes(const gh_slab_geometry *g) { return (size_t)(g->buckets + 2) * GH_SLAB_BYTES; }

static gh_status check_config(const gh_config *c, char *message, size_t size) {
  if (!(c->slab_load >= 0.05 && c->slab_load <= 16.0)) {
    if (size) snprintf(message, size, "slab_load = %g must be in 0.05..16 (the wanted average fill of base slabs)", c->slab_load);
    return GH_ERR_INVALID_ARGUMENT;
  }
  if (c->slab_light != 0 && c->slab_light != 1) {
    if (size) snprintf(message, size, "slab_light = %d must be 0 (super blocks) or 1 (one array)", c->slab_light);
    return GH_ERR_INVALID_ARGUMENT;
  }
  const gh_slab_geometry g = gh__slab_geometry(c);
  if (g.buckets > GH_SLAB_MAX_BUCKETS) {
    if (size) snprintf(message, size, "capacity / slab_load asks for %llu buckets; at most 2^36", (unsigned long long)g.buckets);
    return GH_ERR_INVALID_ARGUMENT;
  }
  return GH_OK;
}

static gh_status estimate(const gh_config *c, size_t *host_bytes, size_t *device_bytes) {
  const gh_slab_geometry g = gh__slab_geometry(c);
  /* SlabAlloc starts empty: its first memory comes with the first insert that needs a slab. */
  const size_t table = base_bytes(&g) + sizeof(gh_slab_counters);
  return gh__estimate_split(c, sizeof(gh_slab_table), table, host_bytes, device_bytes);
}

/* The registry's entry for the slab hash (src/registry.h). */
const gh_design_descriptor gh__design_slab = {
    .id = GH_SLAB,
    .name = "slab",
    .host_ops = &gh__slab_host_ops,
    .cuda_ops = GH_CUDA_OPS(gh__slab_cuda_ops),
    .check_config = check_config,
    .estimate = estimate,
    .variants = (1u << GH_VARIANT_MAP) | (1u << GH_VARIANT_MULTIVALUE),
    .map_policies = GH_MAP_POLICIES_ALL,
    .capabilities = GH_CAP_ERASE | GH_CAP_GROWS | GH_CAP_MIXED | GH_CAP_COMPACT | GH_CAP_DEVICE_VIEW,
    .did_not_fit = "memory for new slabs ran out",
};

/* ---- SlabAlloc: memory ------------------------------------------------------------------------ */

static size_t super_slab_bytes(uint32_t blocks) { return (size_t)blocks * GH_SLAB_BLOCK_SLABS * GH_SLAB_BYTES; }
static size_t super_bitmap_bytes(uint32_t blocks) { return (size_t)blocks * GH_SLAB_BLOCK_WORDS * sizeof(uint32_t); }

static void release_pool(gh_table *t) {
  gh_slab_table *s = state(t);
  for (uint32_t i = 0; i < s->pool.supers; ++i) {
    gh__free(t, s->pool.slabs[i], super_slab_bytes(s->pool.blocks[i]), s->kind);
    gh__free(t, s->pool.bitmap[i], super_bitmap_bytes(s->pool.blocks[i]), s->kind);
  }
  memset(&s->pool, 0, sizeof s->pool);
}

static uint64_t total_slabs(const gh_slab_table *s) { return (uint64_t)s->pool.total_blocks * GH_SLAB_BLOCK_SLABS; }

/* Adds `blocks` memory blocks: a new super block, or (light) a larger copy of the one array.
 * All or nothing: on failure nothing changed. */
static gh_status add_blocks(gh_table *t, uint32_t blocks, void *stream) {
  gh_slab_table *s = state(t);
  const uint32_t old_blocks = s->light && s->pool.supers ? s->pool.blocks[0] : 0;
  const uint32_t new_blocks = old_blocks + blocks;
  if (new_blocks > GH_SLAB_MAX_BLOCKS || (!s->light && s->pool.supers == GH_SLAB_MAX_SUPERS))
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "SlabAlloc is at its limit (%u super blocks of at most %u memory blocks)",
                    GH_SLAB_MAX_SUPERS, GH_SLAB_MAX_BLOCKS);
  uint32_t *slabs = (uint32_t *)gh__alloc(t, super_slab_bytes(new_blocks), s->kind);
  uint32_t *bitmap = slabs ? (uint32_t *)gh__alloc(t, super_bitmap_bytes(new_blocks), s->kind) : NULL;
  gh_status status = GH_OK;
  if (bitmap == NULL) {
    gh__free(t, slabs, super_slab_bytes(new_blocks), s->kind);
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "could not allocate %zu bytes for %u more memory blocks of slabs",
                    super_slab_bytes(new_blocks), blocks);
  }
  const size_t keep_slabs = super_slab_bytes(old_blocks), keep_bitmap = super_bitmap_bytes(old_blocks);
  if (old_blocks) {
    status = gh__copy(t, slabs, s->pool.slabs[0], keep_slabs, stream);
    if (status == GH_OK) status = gh__copy(t, bitmap, s->pool.bitmap[0], keep_bitmap, stream);
  }
  if (status == GH_OK) status = gh__fill(t, (char *)slabs + keep_slabs, 0xFF, super_slab_bytes(new_blocks) - keep_slabs, stream);
  if (status == GH_OK) status = gh__fill(t, (char *)bitmap + keep_bitmap, 0, super_bitmap_bytes(new_blocks) - keep_bitmap, stream);
  if (status != GH_OK) {
    gh__free(t, slabs, super_slab_bytes(new_blocks), s->kind);
    gh__free(t, bitmap, super_bitmap_bytes(new_blocks), s->kind);
    return status;
  }
  if (s->light && s->pool.supers) {
    gh__free_after(t, s->pool.slabs[0], keep_slabs, s->kind, stream);
    gh__free_after(t, s->pool.bitmap[0], keep_bitmap, s->kind, stream);
    s->pool.slabs[0] = slabs;
    s->pool.bitmap[0] = bitmap;
    s->pool.blocks[0] = new_blocks;
  } else {
    s->pool.slabs[s->pool.supers] = slabs;
    s->pool.bitmap[s->pool.supers] = bitmap;
    s->pool.blocks[s->pool.supers] = new_blocks;
    s->pool.supers += 1;
  }
  s->pool.total_blocks += blocks;
  return GH_OK;
}

gh_status gh__slab_refresh(gh_table *t, void *stream) {
  gh_slab_table *s = state(t);
  unsigned long long used = 0;
  const gh_status status = gh__to_host(t, &used, &s->counters->slabs_in_use, sizeof used, stream);
  if (status == GH_OK) t->config.capacity = (s->geometry.buckets + 2 + used) * s->geometry.per_slab;
  return status;
}

/* Makes sure SlabAlloc has `needed` free slabs when `used` are in use (growing it, all or nothing),
 * and grows it past the 3/4 threshold when memory allows. New memory is cleared on the call's
 * stream, ahead of the batch's kernel. GH_ERR_OUT_OF_MEMORY with the table unchanged when the
 * needed slabs cannot be had. */
static gh_status reserve_slabs(gh_table *t, uint64_t used, uint64_t needed, void *stream) {
  gh_slab_table *s = state(t);
  if (needed == 0) return GH_OK;
  const uint64_t total = total_slabs(s), free_slabs = total - used;
  const uint64_t after = used + needed;
  if ((after * GH_SLAB_GROW_DEN) <= total * GH_SLAB_GROW_NUM) return GH_OK;
  /* Doubling (capped), or what the batch needs when that is more. */
  uint64_t grow = total < GH_SLAB_BLOCK_SLABS ? GH_SLAB_BLOCK_SLABS : total;
  if (grow > GH_SLAB_SUPER_CAP_SLABS) grow = GH_SLAB_SUPER_CAP_SLABS;
  const uint64_t wanted = after * GH_SLAB_GROW_DEN / GH_SLAB_GROW_NUM + 1;
  if (total + grow < wanted) grow = wanted - total;
  const uint64_t blocks = (grow + GH_SLAB_BLOCK_SLABS - 1) / GH_SLAB_BLOCK_SLABS;
  const gh_status status =
      blocks > GH_SLAB_MAX_BLOCKS ? gh__fail(t, GH_ERR_OUT_OF_MEMORY, "a batch needs %llu new slabs, more than one super block holds",
                                             (unsigned long long)needed)
                                  : add_blocks(t, (uint32_t)blocks, stream);
  if (status == GH_OK || free_slabs >= needed) {
    /* Past the threshold but enough free slabs: growing was an optimisation. */
    gh__clear_error(t);
    return GH_OK;
  }
  char reason[GH_ERROR_CAPACITY / 2];
  /* Not formatted into itself; the reason is the first part of the message. */
  memcpy(reason, t->last_error, sizeof reason - 1);
  reason[sizeof reason - 1] = '\0';
  return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "SlabAlloc could not grow: %llu free slabs, the batch may need %llu (%s); "
                  "nothing was changed", (unsigned long long)free_slabs, (unsigned long long)needed, reason);
}

/* The slabs beyond its base slab that a list of X ~ Poisson(lambda) entries takes, on average.
 * The weights are taken relative to the mode and normalised at the end (no exp(), no libm), summed
 * both ways from the mode until they no longer count. */
static double overflow_per_list(double lambda, unsigned per_slab) {
  const unsigned mode = (unsigned)lambda;
  double weight = 1.0, total = 0.0, sum = 0.0;
  for (unsigned k = mode;; --k) {
    total += weight;
    sum += weight * (double)(k ? (k + per_slab - 1) / per_slab - 1 : 0);
    if (k == 0 || weight < 1e-15) break;
    weight *= k / lambda;
  }
  weight = 1.0;
  for (unsigned k = mode + 1; weight >= 1e-15; ++k) {
    weight *= lambda / k;
    total += weight;
    sum += weight * (double)((k + per_slab - 1) / per_slab - 1);
  }
  return sum / total;
}

/* The new slabs to reserve for a batch of up to n inserts into the lists of geometry g that hold
 * `size` entries: what uniformly hashed keys need on average, with a margin, plus the workers'
 * spares. An estimate, not a bound (keys that pile into few lists need more): the inserts that
 * find no slab are run again once SlabAlloc has grown (gh__slab_run_batch), so a short estimate
 * costs a second pass, never a key. */
static uint64_t slabs_estimate(gh_table *t, const gh_slab_batch_runner *r, const gh_slab_geometry *g, uint64_t size,
                               const gh_slab_batch *b) {
  const double lists = (double)g->buckets;
  const double more = lists * (overflow_per_list(((double)size + (double)b->n) / lists, g->per_slab) -
                               overflow_per_list((double)size / lists, g->per_slab));
  return (uint64_t)(1.5 * more) + GH_SLAB_BLOCK_SLABS + r->spares(t, b);
}

/* ---- Growing the base buckets ------------------------------------------------------------------- */

/* The buckets the table should have before a batch of up to `incoming` new entries: as many as now
 * while the base slabs' average fill stays within GH_SLAB_GROW_FILL x slab_load; past that, twice
 * as many, doubled again until the fill is at most slab_load (a big batch into a small table). */
static uint64_t buckets_wanted(const gh_table *t, uint64_t size, uint64_t incoming) {
  const gh_slab_geometry *g = &state((gh_table *)t)->geometry;
  const double entries = (double)size + (double)incoming, per_bucket = g->per_slab * t->config.slab_load;
  uint64_t buckets = g->buckets;
  if (entries <= (double)buckets * per_bucket * GH_SLAB_GROW_FILL) return buckets;
  do buckets *= 2u;
  while (entries > (double)buckets * per_bucket && buckets * 2u <= GH_SLAB_MAX_BUCKETS);
  return buckets <= GH_SLAB_MAX_BUCKETS ? buckets : g->buckets;
}

/* New base slabs for `buckets` buckets, or NULL (the message set). */
static uint32_t *new_base(gh_table *t, const gh_slab_geometry *g, size_t *bytes) {
  gh_slab_table *s = state(t);
  *bytes = base_bytes(g);
  uint32_t *base = (uint32_t *)gh__alloc(t, *bytes, s->kind);
  if (base == NULL)
    gh__fail(t, GH_ERR_OUT_OF_MEMORY, "could not allocate %zu bytes for %llu base buckets", *bytes,
             (unsigned long long)g->buckets);
  return base;
}

static void take_base(gh_table *t, const gh_slab_geometry *g, uint32_t *base, size_t bytes, void *stream) {
  gh_slab_table *s = state(t);
  gh__free_after(t, s->base, s->base_bytes, s->kind, stream);
  s->base = base;
  s->base_bytes = bytes;
  s->geometry = *g;
  s->bucket_grows += 1;
}

/* Doubles the buckets: every list split in two into new base slabs (the backend runs
 * gh_slab_split_list on each). All or nothing: without memory for the new base slabs nothing
 * changed. */
static gh_status double_buckets(gh_table *t, const gh_slab_batch_runner *r, void *stream) {
  gh_slab_geometry g = state(t)->geometry;
  g.buckets *= 2u;
  size_t bytes;
  uint32_t *base = new_base(t, &g, &bytes);
  if (base == NULL) return GH_ERR_OUT_OF_MEMORY;
  const gh_status status = r->split(t, base, stream);
  if (status != GH_OK) {
    gh__free_after(t, base, bytes, state(t)->kind, stream);
    return status;
  }
  take_base(t, &g, base, bytes, stream);
  return GH_OK;
}

/* Grows an empty table (nothing stored, no slab handed out) to `buckets` at once: no list to
 * split, new base slabs all EMPTY. */
static gh_status renew_buckets(gh_table *t, uint64_t buckets, void *stream) {
  gh_slab_geometry g = state(t)->geometry;
  g.buckets = buckets;
  size_t bytes;
  uint32_t *base = new_base(t, &g, &bytes);
  if (base == NULL) return GH_ERR_OUT_OF_MEMORY;
  const gh_status status = gh__fill(t, base, 0xFF, bytes, stream);
  if (status != GH_OK) {
    gh__free_after(t, base, bytes, state(t)->kind, stream);
    return status;
  }
  take_base(t, &g, base, bytes, stream);
  return GH_OK;
}

/* Grows the buckets to `wanted` (held: the size and the slabs in use). Growing is an optimisation:
 * when memory for it is short, the table stays at the buckets reached (longer chains hold every
 * key too) and the call goes on. */
static gh_status grow_buckets(gh_table *t, const gh_slab_batch_runner *r, const unsigned long long held[2],
                              uint64_t wanted, void *stream) {
  gh_status status = GH_OK;
  if (wanted == state(t)->geometry.buckets) return GH_OK;
  gh_stopwatch watch;
  gh__stopwatch_start(t, &watch, stream);
  if (held[0] == 0 && held[1] == 0) {
    status = renew_buckets(t, wanted, stream);
  } else {
    while (status == GH_OK && state(t)->geometry.buckets < wanted) status = double_buckets(t, r, stream);
  }
  state(t)->resize_seconds += gh__stopwatch_seconds(t, &watch, stream);
  if (status == GH_ERR_OUT_OF_MEMORY) {
    gh__clear_error(t);
    status = GH_OK;
  }
  return status;
}

/* Slabs SlabAlloc has handed out, read back. */
static gh_status slabs_in_use(gh_table *t, unsigned long long *used, void *stream) {
  return gh__to_host(t, used, &state(t)->counters->slabs_in_use, sizeof *used, stream);
}

gh_status gh__slab_run_batch(gh_table *t, const gh_slab_batch_runner *r, const gh_slab_batch *batch, uint64_t *failed,
                             void *stream) {
  gh_slab_table *s = state(t);
  gh_slab_batch b = *batch;
  gh_scratch retry = {0};
  /* The size and the slabs in use (adjacent counters) in one read: the batch's one wait before
   * its kernel. A split only frees slabs, so the count read stays an upper bound after growing. */
  unsigned long long held[2] = {0, 0};
  gh_status status = gh__to_host(t, held, &s->counters->size, sizeof held, stream);
  if (status != GH_OK) return status;
  /* The estimate for the lists the batch will find, and the bits that mark the inserts that find
   * no slab, come first: a batch refused for memory leaves the table as it was. */
  gh_slab_geometry grown = s->geometry;
  grown.buckets = buckets_wanted(t, held[0], b.n);
  status = gh__scratch_alloc(t, &retry, (size_t)((b.n + 31) / 32) * sizeof(uint32_t));
  if (status == GH_OK) status = gh__fill(t, retry.ptr, 0, retry.bytes, stream);
  if (status == GH_OK) status = reserve_slabs(t, held[1], slabs_estimate(t, r, &grown, held[0], &b), stream);
  if (status == GH_OK) status = grow_buckets(t, r, held, grown.buckets, stream);
  b.retry_bits = (uint32_t *)retry.ptr;
  b.rerun = 0;
  /* The base slabs or the pool may have moved: device views follow them before anything else. */
  if (status == GH_OK) status = gh__slab_publish(t, stream);
  if (status == GH_OK) status = r->run(t, &b, failed, stream);
  /* Inserts that found no slab changed nothing: SlabAlloc grows by one slab for each (all they can
   * need) and they run again. When it cannot grow, they stay flagged (the call reports them). */
  while (status == GH_OK && *failed > 0) {
    unsigned long long used = 0;
    status = slabs_in_use(t, &used, stream);
    if (status == GH_OK) status = reserve_slabs(t, used, *failed + r->spares(t, &b), stream);
    if (status == GH_ERR_OUT_OF_MEMORY) {
      gh__clear_error(t);
      status = GH_OK;
      break;
    }
    b.rerun = 1;
    if (status == GH_OK) status = gh__slab_publish(t, stream);
    if (status == GH_OK) status = r->run(t, &b, failed, stream);
  }
  gh__scratch_free(t, &retry, stream);
  return status == GH_OK ? gh__slab_refresh(t, stream) : status;
}

/* ---- The ops both backends share ---------------------------------------------------------------- */

gh_status gh__slab_init(gh_table *t) {
  const gh_memory_kind kind = gh__backend_memory(t);
  gh_slab_table *s = (gh_slab_table *)gh__alloc(t, sizeof *s, GH_MEMORY_HOST);
  if (s == NULL) return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "out of host memory for the table state");
  memset(s, 0, sizeof *s);
  t->impl = s;
  s->kind = kind;
  s->light = t->config.slab_light;
  s->geometry = gh__slab_geometry(&t->config);
  s->base_bytes = base_bytes(&s->geometry);
  s->base = (uint32_t *)gh__alloc(t, s->base_bytes, kind);
  s->counters = (gh_slab_counters *)gh__alloc(t, sizeof(gh_slab_counters), kind);
  if (s->base == NULL || s->counters == NULL) {
    const size_t bytes = s->base_bytes;
    gh__slab_release(t);
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "could not allocate %zu bytes of %s memory for the base slabs of a %llu-key table", bytes,
                    kind == GH_MEMORY_DEVICE ? "device" : "host", (unsigned long long)(t->config.capacity));
  }
  t->config.capacity = (s->geometry.buckets + 2) * s->geometry.per_slab;
  gh_status status = gh__fill(t, s->counters, 0, sizeof(gh_slab_counters), NULL);
  if (status == GH_OK) status = gh__slab_clear(t, NULL);
  if (status != GH_OK) gh__slab_release(t);
  return status;
}

void gh__slab_release(gh_table *t) {
  gh_slab_table *s = state(t);
  if (s == NULL) return;
  release_pool(t);
  gh__free(t, s->base, s->base_bytes, s->kind);
  gh__free(t, s->counters, sizeof(gh_slab_counters), s->kind);
  gh__free(t, s->published, sizeof *s->published, GH_MEMORY_DEVICE);
  gh__free(t, s, sizeof *s, GH_MEMORY_HOST);
  t->impl = NULL;
}

/* Every base slab empty, every slab back in SlabAlloc (the memory stays), size 0. Slabs in
 * SlabAlloc need no clearing: an insert writes a new slab whole before it links it. */
gh_status gh__slab_clear(gh_table *t, void *stream) {
  gh_slab_table *s = state(t);
  gh_status status = gh__fill(t, s->base, 0xFF, s->base_bytes, stream);
  for (uint32_t i = 0; status == GH_OK && i < s->pool.supers; ++i)
    status = gh__fill(t, s->pool.bitmap[i], 0, super_bitmap_bytes(s->pool.blocks[i]), stream);
  if (status == GH_OK) status = gh__fill(t, s->counters, 0, sizeof(gh_slab_counters), stream);
  if (status == GH_OK) t->config.capacity = (s->geometry.buckets + 2) * s->geometry.per_slab;
  return status;
}


gh_status gh__slab_size(gh_table *t, uint64_t *size) {
  unsigned long long value = 0;
  const gh_status status = gh__to_host(t, &value, &state(t)->counters->size, sizeof value, NULL);
  if (status == GH_OK) *size = value;
  return status;
}

/* ---- Walking a host copy: stats and validate ------------------------------------------------------ */

/* Walks every list (host memory), checking the invariants; collects the live keys into keys_out
 * (room for `room`). Returns 0 and a message on the first violation. */
static int walk(const gh_slab_table *s, uint8_t *seen, uint64_t *keys_out, uint64_t room, uint64_t *live_out,
                uint64_t *slabs_out, char *message, size_t size) {
  const gh_slab_geometry *g = &s->geometry;
  const gh_slot_format f = g->format;
  const uint64_t empty = gh_slab_empty_key(g), tomb = gh_slab_tombstone_key(g);
  uint64_t live = 0, slabs = 0;
  for (uint64_t b = 0; b < g->buckets + 2; ++b) {
    const uint32_t *slab = s->base + b * GH_SLAB_LANES;
    int seen_empty = 0;
    for (uint64_t hop = 0;; ++hop) {
      for (unsigned i = 0; i < g->per_slab; ++i) {
        const void *e = (const char *)slab + i * f.slot_bytes;
        const uint64_t stored = gh_slot_load_key(f, e);
        if (stored == empty) {
          if (!gh_slot_bits_equal(gh_slot_read(f, e), gh_slot_pack(f, empty, ~0ull))) {
            snprintf(message, size, "bucket %llu, slab %llu, entry %u: an empty entry with value or padding bits set",
                     (unsigned long long)b, (unsigned long long)hop, i);
            return 0;
          }
          seen_empty = 1;
          continue;
        }
        if (seen_empty) {
          snprintf(message, size, "bucket %llu, slab %llu, entry %u: an entry after an empty one (empty entries "
                   "must form the tail of a list)", (unsigned long long)b, (unsigned long long)hop, i);
          return 0;
        }
        if (stored == tomb) continue;
        /* (16-byte slots: the bits beside a 32-bit key or value are all ones, as every write of
         * the slot format leaves them (slot.h) and as warpdrive's and cuckoo's validate check) */
        if (!gh_slot_bits_equal(gh_slot_read(f, e), gh_slot_pack(f, stored, gh_slot_load_value(f, e)))) {
          snprintf(message, size, "bucket %llu, slab %llu, entry %u: padding bits are not all ones",
                   (unsigned long long)b, (unsigned long long)hop, i);
          return 0;
        }
        uint64_t expected_stored = 0;
        const uint64_t key = gh_slab_user_key(g, b, stored);
        if (b >= g->buckets ? stored != GH_SLAB_SIDE_KEY : gh_slab_bucket(g, key, &expected_stored) != b) {
          snprintf(message, size, "key %llu is in bucket %llu, not the bucket its hash names", (unsigned long long)key,
                   (unsigned long long)b);
          return 0;
        }
        if (live < room) keys_out[live] = key;
        live += 1;
      }
      const char *pad_begin = (const char *)slab + g->per_slab * f.slot_bytes;
      for (const char *p = pad_begin; p < (const char *)(slab + GH_SLAB_NEXT_LANE); ++p) {
        if ((unsigned char)*p != 0xFF) {
          snprintf(message, size, "bucket %llu, slab %llu: unused lanes (or the auxiliary lane 30) not all ones",
                   (unsigned long long)b, (unsigned long long)hop);
          return 0;
        }
      }
      const uint32_t next = slab[GH_SLAB_NEXT_LANE];
      if (next == GH_SLAB_NULL) break;
      if (!gh_slab_address_valid(&s->pool, next)) {
        snprintf(message, size, "bucket %llu, slab %llu: next address 0x%08x names no slab of SlabAlloc",
                 (unsigned long long)b, (unsigned long long)hop, next);
        return 0;
      }
      const uint32_t super = gh_slab_address_super(next);
      const uint64_t index = gh_slab_address_index(next);
      if (!(s->pool.bitmap[super][index / 32] >> (index % 32) & 1u)) {
        snprintf(message, size, "bucket %llu: slab 0x%08x is linked but free in SlabAlloc's bitmap", (unsigned long long)b, next);
        return 0;
      }
      uint64_t flat = index;
      for (uint32_t k = 0; k < super; ++k) flat += (uint64_t)s->pool.blocks[k] * GH_SLAB_BLOCK_SLABS;
      if (seen[flat]) {
        snprintf(message, size, "bucket %llu: slab 0x%08x is linked twice", (unsigned long long)b, next);
        return 0;
      }
      seen[flat] = 1;
      slabs += 1;
      slab = gh_slab_at(&s->pool, next);
    }
  }
  *live_out = live;
  *slabs_out = slabs;
  return 1;
}

static uint64_t bitmap_count(const gh_slab_table *s) {
  uint64_t bits = 0;
  for (uint32_t k = 0; k < s->pool.supers; ++k)
    for (uint64_t w = 0; w < (uint64_t)s->pool.blocks[k] * GH_SLAB_BLOCK_WORDS; ++w)
      bits += (uint64_t)__builtin_popcount(s->pool.bitmap[k][w]);
  return bits;
}

/* A host copy of a device table's lists and bitmaps (the host backend's own state otherwise). */
typedef struct snapshot {
  gh_slab_table copy;
  int owned;
} snapshot;

static void snapshot_free(snapshot *snap) {
  if (!snap->owned) return;
  free(snap->copy.base);
  for (uint32_t i = 0; i < snap->copy.pool.supers; ++i) {
    free(snap->copy.pool.slabs[i]);
    free(snap->copy.pool.bitmap[i]);
  }
}

static gh_status snapshot_take(gh_table *t, const char *who, snapshot *snap) {
  gh_slab_table *s = state(t);
  memset(snap, 0, sizeof *snap);
  snap->copy = *s;
  if (s->kind == GH_MEMORY_HOST) return GH_OK;
  snap->owned = 1;
  memset(&snap->copy.pool, 0, sizeof snap->copy.pool);
  snap->copy.base = (uint32_t *)malloc(s->base_bytes);
  gh_status status = snap->copy.base ? gh__to_host(t, snap->copy.base, s->base, s->base_bytes, NULL)
                                     : gh__fail(t, GH_ERR_OUT_OF_MEMORY, "%s: no host memory for a copy of the table; "
                                                "it is unchanged", who);
  for (uint32_t i = 0; status == GH_OK && i < s->pool.supers; ++i) {
    const size_t slab_bytes = super_slab_bytes(s->pool.blocks[i]), bitmap_bytes = super_bitmap_bytes(s->pool.blocks[i]);
    snap->copy.pool.slabs[i] = (uint32_t *)malloc(slab_bytes);
    snap->copy.pool.bitmap[i] = (uint32_t *)malloc(bitmap_bytes);
    snap->copy.pool.blocks[i] = s->pool.blocks[i];
    snap->copy.pool.supers = i + 1;
    if (snap->copy.pool.slabs[i] == NULL || snap->copy.pool.bitmap[i] == NULL)
      status = gh__fail(t, GH_ERR_OUT_OF_MEMORY, "%s: no host memory for a copy of the table; it is unchanged", who);
    if (status == GH_OK) status = gh__to_host(t, snap->copy.pool.slabs[i], s->pool.slabs[i], slab_bytes, NULL);
    if (status == GH_OK) status = gh__to_host(t, snap->copy.pool.bitmap[i], s->pool.bitmap[i], bitmap_bytes, NULL);
  }
  snap->copy.pool.total_blocks = s->pool.total_blocks;
  if (status != GH_OK) snapshot_free(snap);
  return status;
}

/* Walks and sorts the keys: *distinct gets their number of distinct values. */
static gh_status walk_all(gh_table *t, const char *who, uint64_t *live, uint64_t *distinct, int check_unique) {
  gh_slab_table *s = state(t);
  uint64_t size = 0, slabs = 0;
  unsigned long long used = 0;
  snapshot snap;
  gh_status status = gh__slab_size(t, &size);
  if (status == GH_OK) status = gh__to_host(t, &used, &s->counters->slabs_in_use, sizeof used, NULL);
  if (status == GH_OK) status = snapshot_take(t, who, &snap);
  if (status != GH_OK) return status;
  const uint64_t total = total_slabs(s);
  uint64_t *keys = (uint64_t *)malloc((size_t)(size + 1) * sizeof *keys);
  uint8_t *seen = (uint8_t *)calloc((size_t)total + 1, 1);
  char message[GH_ERROR_CAPACITY - 64];
  if (keys == NULL || seen == NULL) {
    free(keys);
    free(seen);
    snapshot_free(&snap);
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "%s: no host memory to walk %llu keys", who, (unsigned long long)size);
  }
  if (!walk(&snap.copy, seen, keys, size, live, &slabs, message, sizeof message)) {
    status = gh__fail(t, GH_ERR_CORRUPT, "%s: %s", who, message);
  } else if (*live != size) {
    status = gh__fail(t, GH_ERR_CORRUPT, "%s: the size counter says %llu but %llu entries are stored", who,
                      (unsigned long long)size, (unsigned long long)*live);
  } else {
    const uint64_t bits = bitmap_count(&snap.copy);
    if (slabs != used || bits != used)
      status = gh__fail(t, GH_ERR_CORRUPT, "%s: SlabAlloc counts %llu slabs in use, its bitmaps %llu, the lists link %llu",
                        who, used, (unsigned long long)bits, (unsigned long long)slabs);
  }
  if (status == GH_OK) {
    int repeat = 0;
    uint64_t twice = 0;
    *distinct = gh__distinct_keys_host(keys, size, &repeat, &twice);
    if (check_unique && repeat)
      status = gh__fail(t, GH_ERR_CORRUPT, "%s: key %llu is stored twice in a map", who, (unsigned long long)twice);
  }
  free(keys);
  free(seen);
  snapshot_free(&snap);
  return status;
}

gh_status gh__slab_validate(gh_table *t) {
  uint64_t live = 0, distinct = 0;
  return walk_all(t, "validate", &live, &distinct, t->config.variant == GH_VARIANT_MAP);
}

gh_status gh__slab_stats(gh_table *t, gh_stats *stats) {
  gh_slab_table *s = state(t);
  uint64_t live = 0, distinct = stats->size;
  gh_status status = gh__slab_refresh(t, NULL);
  if (status != GH_OK) return status;
  if (t->config.variant == GH_VARIANT_MULTIVALUE) status = walk_all(t, "gh_get_stats", &live, &distinct, 0);
  if (status != GH_OK) return status;
  stats->distinct_keys = distinct;
  stats->slots = t->config.capacity;
  stats->grows = s->bucket_grows;
  stats->resize_seconds = s->resize_seconds;
  return GH_OK;
}
