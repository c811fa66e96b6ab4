/*
 * slab - the slab hash's own behaviour (Ashkiani et al.), beyond the registry-driven matrix:
 *
 *   slab BACKEND [--part growth|race|mixed|compact|bad|config|alloc] [--seed S]
 *
 *   growth   a table of 16 buckets grown to 2^16 keys (several SlabAlloc super blocks, chains of
 *            hundreds of slabs) and one sized for 2^14 keys grown to 2^20, both SlabAlloc
 *            variants, checked against a reference after every batch
 *   race     insert -> erase -> insert of the same keys racing in one gh_mixed batch (maps, sets
 *            and multivalue): no key twice, results consistent with what the table holds, validate;
 *            gh_insert of hot keys (hundreds of copies racing for one entry): GH_ADD adds each once
 *   mixed    > 10^6 random operations in gh_mixed batches (map and multivalue) against a reference
 *   compact  gh_compact: keys and values kept, tombstones gone, slabs back in SlabAlloc
 *   bad      gh_mixed's bad inputs (op codes, NULL arrays) and designs without gh_mixed / gh_compact
 *   config   slab_load / slab_light checks, and a gh_config of 0.2's size gets their defaults
 *   alloc    gh_mixed and gh_compact with each allocation failing in turn, and a memory limit that
 *            stops SlabAlloc's growth: GH_ERR_OUT_OF_MEMORY, nothing executed, nothing written
 *
 * Every failure prints the case, the phase and the seed.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "alloc_inject.h"
#include "tracking_alloc.h"

#define SL_BASE_SEED 0x51AB0A11C0ull

static gh_backend sl_backend;
static uint64_t sl_seed;
static unsigned sl_host_threads; /* gh_config.host_threads of the tables made (0 = the default) */

/* ---- A reference: open addressing over (key -> count, value, sum) ------------------------------ */

typedef struct sl_ref {
  uint64_t *keys, *values, *sums, *counts;
  uint8_t *used; /* 0 free, 1 present */
  uint64_t cap, size;
} sl_ref;

static void ref_init(sl_ref *r, uint64_t expected) {
  r->cap = 1;
  while (r->cap < expected * 2 + 16) r->cap <<= 1;
  r->keys = (uint64_t *)tu_xmalloc(r->cap * 8);
  r->values = (uint64_t *)tu_xmalloc(r->cap * 8);
  r->sums = (uint64_t *)tu_xmalloc(r->cap * 8);
  r->counts = (uint64_t *)tu_xmalloc(r->cap * 8);
  r->used = (uint8_t *)calloc(r->cap, 1);
  REQUIRE(r->used != NULL, "out of memory");
  r->size = 0;
}
static void ref_free(sl_ref *r) {
  free(r->keys);
  free(r->values);
  free(r->sums);
  free(r->counts);
  free(r->used);
}
/* The slot of key: present, or the free one where it would go (keys are never removed from the
 * reference's slots: a count of 0 means absent). */
static uint64_t ref_slot(sl_ref *r, uint64_t key) {
  uint64_t h = key * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  for (uint64_t i = h & (r->cap - 1);; i = (i + 1) & (r->cap - 1)) {
    if (!r->used[i]) {
      REQUIRE(r->size + 1 < r->cap, "reference full");
      r->used[i] = 1;
      r->keys[i] = key;
      r->counts[i] = 0;
      r->sums[i] = 0;
      r->values[i] = 0;
      r->size += 1;
      return i;
    }
    if (r->keys[i] == key) return i;
  }
}

static uint64_t value_mask(unsigned bits) { return bits == 64 ? ~0ull : (bits == 32 ? 0xFFFFFFFFull : 0); }

/* A table of base slabs filled to slab_load on average at `capacity` keys. */
static gh_table *make_table_at(unsigned key_bits, unsigned value_bits, gh_variant variant, uint64_t capacity, int light,
                               double slab_load) {
  gh_config cfg = gh_config_default(GH_SLAB);
  gh_table *t = NULL;
  cfg.slab_load = slab_load;
  cfg.backend = sl_backend;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  cfg.variant = variant;
  cfg.capacity = capacity;
  cfg.slab_light = light;
  cfg.seed = sl_seed;
  cfg.host_threads = sl_host_threads;
  const gh_status st = gh_create(&cfg, &t);
  REQUIRE(st == GH_OK, "gh_create: %s: %s", gh_status_name(st), gh_last_create_error());
  return t;
}

static gh_table *make_table(unsigned key_bits, unsigned value_bits, gh_variant variant, uint64_t capacity, int light) {
  return make_table_at(key_bits, value_bits, variant, capacity, light, 0.6);
}

static uint64_t table_size(gh_table *t) {
  uint64_t n = 0;
  CHECK_OK(t, gh_size(t, &n));
  return n;
}

/* The keys the reference has seen (present or not), into a fresh array; their number in *n. */
static uint64_t *ref_keys(const sl_ref *r, uint64_t *n) {
  uint64_t *keys = (uint64_t *)tu_xmalloc(r->size * 8 + 8);
  *n = 0;
  for (uint64_t i = 0; i < r->cap; ++i)
    if (r->used[i]) keys[(*n)++] = r->keys[i];
  return keys;
}

/* Every reference key in the map table with its value (found_out and values_out). */
static void check_map(gh_table *t, sl_ref *r, unsigned key_bits, unsigned value_bits) {
  uint64_t n = 0, present = 0;
  uint64_t *keys = ref_keys(r, &n);
  void *packed = tu_pack(keys, n, key_bits);
  uint8_t *found = (uint8_t *)tu_xmalloc(n + 1);
  void *values = value_bits ? tu_xmalloc(n * 8 + 8) : NULL;
  uint64_t *unpacked = (uint64_t *)tu_xmalloc(n * 8 + 8);
  if (CHECK_OK(t, gh_find(t, packed, n, values, found, NULL, NULL))) {
    if (values) tu_unpack(values, n, value_bits, unpacked);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t slot = ref_slot(r, keys[i]);
      const int want = r->counts[slot] > 0;
      present += (uint64_t)want;
      if (!CHECK(found[i] == want, "key 0x%llx: found %u, reference %d", (unsigned long long)keys[i], found[i], want)) break;
      if (want && values && !CHECK(unpacked[i] == r->values[slot], "key 0x%llx: value 0x%llx, reference 0x%llx",
                                   (unsigned long long)keys[i], (unsigned long long)unpacked[i],
                                   (unsigned long long)r->values[slot]))
        break;
    }
  }
  CHECK(table_size(t) == present, "gh_size %llu, reference %llu", (unsigned long long)table_size(t), (unsigned long long)present);
  CHECK_OK(t, gh_validate(t));
  free(keys);
  free(packed);
  free(found);
  free(values);
  free(unpacked);
}

/* Every reference key's count and value sum (gh_count, gh_find_all). */
static void check_multi(gh_table *t, sl_ref *r, unsigned key_bits, unsigned value_bits) {
  uint64_t n = 0, total = 0, pairs = 0;
  uint64_t *keys = ref_keys(r, &n);
  void *packed = tu_pack(keys, n, key_bits);
  uint64_t *counts = (uint64_t *)tu_xmalloc(n * 8 + 8), *offsets = (uint64_t *)tu_xmalloc(n * 8 + 16);
  if (CHECK_OK(t, gh_count(t, packed, n, counts, &total, NULL))) {
    void *values = tu_xmalloc(total * 8 + 8);
    uint64_t *unpacked = (uint64_t *)tu_xmalloc(total * 8 + 8);
    if (CHECK_OK(t, gh_find_all(t, packed, n, offsets, values, total, NULL))) {
      tu_unpack(values, total, value_bits, unpacked);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t slot = ref_slot(r, keys[i]);
        uint64_t sum = 0;
        for (uint64_t j = offsets[i]; j < offsets[i + 1]; ++j) sum += unpacked[j];
        pairs += r->counts[slot];
        if (!CHECK(counts[i] == r->counts[slot] && offsets[i + 1] - offsets[i] == counts[i] && sum == r->sums[slot],
                   "key 0x%llx: %llu values (sum 0x%llx), reference %llu (sum 0x%llx)", (unsigned long long)keys[i],
                   (unsigned long long)counts[i], (unsigned long long)sum, (unsigned long long)r->counts[slot],
                   (unsigned long long)r->sums[slot]))
          break;
      }
    }
    free(values);
    free(unpacked);
  }
  CHECK(table_size(t) == pairs, "gh_size %llu, reference pairs %llu", (unsigned long long)table_size(t), (unsigned long long)pairs);
  CHECK_OK(t, gh_validate(t));
  free(keys);
  free(packed);
  free(counts);
  free(offsets);
}

/* ---- growth ----------------------------------------------------------------------------------- */

static void grow_case(uint64_t capacity, uint64_t total, uint64_t batch, int light) {
  tu_rng rng = tu_rng_make(tu_mix_seed(sl_seed, capacity, total, (uint64_t)light));
  gh_table *t = make_table(32, 32, GH_VARIANT_MAP, capacity, light);
  sl_ref r;
  gh_stats before, after;
  uint64_t *keys = (uint64_t *)tu_xmalloc(total * 8), *values = (uint64_t *)tu_xmalloc(total * 8);
  tu_set_context("growth backend=%s capacity=%llu keys=%llu light=%d seed=0x%016llx", tu_backend_name(sl_backend),
                 (unsigned long long)capacity, (unsigned long long)total, light, (unsigned long long)sl_seed);
  ref_init(&r, total);
  tu_gen_unique_keys(&rng, 32, total, NULL, keys);
  tu_gen_values(&rng, 32, total, values);
  CHECK_OK(t, gh_get_stats(t, &before));
  for (uint64_t done = 0; done < total; done += batch) {
    const uint64_t n = total - done < batch ? total - done : batch;
    void *pk = tu_pack(keys + done, n, 32), *pv = tu_pack(values + done, n, 32);
    tu_set_phase("insert batch at %llu", (unsigned long long)done);
    CHECK_OK(t, gh_insert(t, pk, pv, n, GH_OVERWRITE, NULL, NULL));
    for (uint64_t i = done; i < done + n; ++i) {
      const uint64_t s = ref_slot(&r, keys[i]);
      r.counts[s] = 1;
      r.values[s] = values[i];
    }
    free(pk);
    free(pv);
    if (done == 0 || done + n >= total) check_map(t, &r, 32, 32);
  }
  CHECK_OK(t, gh_get_stats(t, &after));
  /* The buckets kept up: room for the keys, and a bounded multiple of what the configured fill
   * needs (a doubling leaves the base slabs 0.625 x slab_load full), overflow slabs included. */
  CHECK(after.grows > before.grows && after.slots >= total && after.slots < 8 * total,
        "after %llu keys: grows %llu -> %llu, slots %llu", (unsigned long long)total, (unsigned long long)before.grows,
        (unsigned long long)after.grows, (unsigned long long)after.slots);
  CHECK(after.resize_seconds > before.resize_seconds, "the buckets grew in %g seconds (before: %g)",
        after.resize_seconds, before.resize_seconds);
  printf("  growth capacity %llu -> %llu keys (light %d): the buckets grew %llu times, %llu entries of room\n",
         (unsigned long long)capacity, (unsigned long long)total, light, (unsigned long long)after.grows,
         (unsigned long long)after.slots);
  gh_destroy(t);
  ref_free(&r);
  free(keys);
  free(values);
}

/* Doubling splits every list in two, reusing its own slabs: lists many slabs long (a multivalue
 * table's hot keys), tombstones to drop, and the side buckets' special keys. Batch A fills the
 * table, erases leave tombstones, batch B doubles the buckets at least once. */
static void split_case(unsigned key_bits, unsigned value_bits, gh_variant variant) {
  const uint64_t hot = 8, per_hot = variant == GH_VARIANT_MULTIVALUE ? 200 : 1, spread = 3000, more = 6000;
  const uint64_t first_n = hot * per_hot + spread, all_keys = hot + spread + more;
  tu_rng rng = tu_rng_make(tu_mix_seed(sl_seed, key_bits, value_bits, 77u + (uint64_t)variant));
  tu_set_context("split backend=%s k%u v%u variant=%s seed=0x%016llx", tu_backend_name(sl_backend), key_bits,
                 value_bits, tu_variant_name(variant, value_bits), (unsigned long long)sl_seed);
  gh_table *t = make_table(key_bits, value_bits, variant, 144, 0);
  uint64_t *keys = (uint64_t *)tu_xmalloc(all_keys * 8), *batch = (uint64_t *)tu_xmalloc((first_n + more) * 8);
  uint64_t *values = (uint64_t *)tu_xmalloc((first_n + more) * 8), *counts = (uint64_t *)tu_xmalloc(all_keys * 8);
  uint8_t *found = (uint8_t *)tu_xmalloc(all_keys);
  tu_gen_unique_keys(&rng, key_bits, all_keys, NULL, keys);
  /* The two keys the side buckets hold. */
  const uint64_t ones = key_bits == 32 ? 0xFFFFFFFFull : ~0ull;
  keys[hot] = ones;
  keys[hot + 1] = ones - 1u;
  uint64_t n = 0;
  for (uint64_t h = 0; h < hot; ++h)
    for (uint64_t c = 0; c < per_hot; ++c) batch[n++] = keys[h];
  for (uint64_t i = 0; i < spread; ++i) batch[n++] = keys[hot + i];
  tu_gen_values(&rng, value_bits ? value_bits : 32, first_n + more, values);
  void *pk = tu_pack(batch, n, key_bits), *pv = value_bits ? tu_pack(values, n, value_bits) : NULL;
  const gh_dup_policy policy = variant == GH_VARIANT_MULTIVALUE ? GH_APPEND : GH_KEEP_FIRST;
  tu_set_phase("batch A");
  CHECK_OK(t, gh_insert(t, pk, pv, n, policy, NULL, NULL));
  free(pk);
  free(pv);
  /* Erase every other spread key (not the special two). */
  uint64_t erased_n = 0;
  for (uint64_t i = 2; i < spread; i += 2) batch[erased_n++] = keys[hot + i];
  pk = tu_pack(batch, erased_n, key_bits);
  tu_set_phase("erases");
  CHECK_OK(t, gh_erase(t, pk, erased_n, NULL, NULL, NULL));
  free(pk);
  gh_stats before, after;
  CHECK_OK(t, gh_get_stats(t, &before));
  for (uint64_t i = 0; i < more; ++i) batch[i] = keys[hot + spread + i];
  pk = tu_pack(batch, more, key_bits);
  pv = value_bits ? tu_pack(values + first_n, more, value_bits) : NULL;
  tu_set_phase("batch B, which doubles the buckets");
  CHECK_OK(t, gh_insert(t, pk, pv, more, policy, NULL, NULL));
  free(pk);
  free(pv);
  CHECK_OK(t, gh_validate(t));
  CHECK_OK(t, gh_get_stats(t, &after));
  CHECK(after.grows > before.grows, "batch B did not grow the buckets (grows %llu)", (unsigned long long)after.grows);
  pk = tu_pack(keys, all_keys, key_bits);
  if (variant == GH_VARIANT_MULTIVALUE) {
    uint64_t total = 0;
    CHECK_OK(t, gh_count(t, pk, all_keys, counts, &total, NULL));
    for (uint64_t i = 0; i < all_keys; ++i) {
      const uint64_t expect = i < hot ? per_hot : (i >= hot + 2 && i < hot + spread && i % 2 == 0 ? 0 : 1);
      if (!CHECK(counts[i] == expect, "key %llu (0x%llx): %llu values, expected %llu", (unsigned long long)i,
                 (unsigned long long)keys[i], (unsigned long long)counts[i], (unsigned long long)expect))
        break;
    }
  } else {
    CHECK_OK(t, gh_contains(t, pk, all_keys, found, NULL));
    for (uint64_t i = 0; i < all_keys; ++i) {
      const int expect = !(i >= hot + 2 && i < hot + spread && i % 2 == 0);
      if (!CHECK(found[i] == expect, "key %llu (0x%llx): found %u", (unsigned long long)i, (unsigned long long)keys[i],
                 found[i]))
        break;
    }
  }
  CHECK(table_size(t) == first_n - erased_n + more, "size %llu, expected %llu", (unsigned long long)table_size(t),
        (unsigned long long)(first_n - erased_n + more));
  free(pk);
  gh_destroy(t);
  free(keys);
  free(batch);
  free(values);
  free(counts);
  free(found);
}

static void part_growth(void) {
  split_case(32, 32, GH_VARIANT_MULTIVALUE);
  split_case(32, 0, GH_VARIANT_MAP);
  split_case(64, 64, GH_VARIANT_MAP);
  for (int light = 0; light <= 1; ++light) {
    /* 16 buckets: capacity 144 = 16 buckets x 15 entries x 0.6. */
    grow_case(144, 1u << 16, 1u << 13, light);
    grow_case(1u << 14, 1u << 20, 1u << 17, light);
  }
  /* The size, where a GPU makes it quick: 16 buckets to 2^24 keys in 16 batches. */
  if (sl_backend == GH_BACKEND_CUDA) grow_case(144, 1u << 24, 1u << 20, 0);
}

/* ---- race ------------------------------------------------------------------------------------- */

/* keys_n keys, each with `copies` operations in one batch: insert, erase, insert, erase, ... */
static void race_case(unsigned key_bits, unsigned value_bits, gh_variant variant, uint64_t keys_n, uint64_t copies) {
  const uint64_t n = keys_n * copies;
  tu_rng rng = tu_rng_make(tu_mix_seed(sl_seed, key_bits, value_bits, (uint64_t)variant));
  gh_table *t = make_table(key_bits, value_bits, variant, 4096, 0);
  uint64_t *pool = (uint64_t *)tu_xmalloc(keys_n * 8), *keys = (uint64_t *)tu_xmalloc(n * 8);
  uint64_t *values = (uint64_t *)tu_xmalloc(n * 8), *order = (uint64_t *)tu_xmalloc(n * 8);
  uint8_t *ops = (uint8_t *)tu_xmalloc(n), *results = (uint8_t *)tu_xmalloc(n), *found = (uint8_t *)tu_xmalloc(keys_n);
  tu_set_context("race backend=%s k%u v%u variant=%s keys=%llu copies=%llu seed=0x%016llx", tu_backend_name(sl_backend),
                 key_bits, value_bits, tu_variant_name(variant, value_bits), (unsigned long long)keys_n,
                 (unsigned long long)copies, (unsigned long long)sl_seed);
  tu_gen_unique_keys(&rng, key_bits, keys_n, NULL, pool);
  /* Half the keys are present before the batch. */
  void *half = tu_pack(pool, keys_n / 2, key_bits);
  tu_gen_values(&rng, value_bits ? value_bits : 32, n, values);
  void *half_values = value_bits ? tu_pack(values, keys_n / 2, value_bits) : NULL;
  CHECK_OK(t, gh_insert(t, half, half_values, keys_n / 2, variant == GH_VARIANT_MULTIVALUE ? GH_APPEND : GH_KEEP_FIRST, NULL, NULL));
  for (uint64_t i = 0; i < n; ++i) order[i] = i;
  tu_shuffle(&rng, order, n);
  /* insert, erase, insert of every key, in random positions of one batch. */
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t k = order[i] / copies, which = order[i] % copies;
    keys[i] = pool[k];
    ops[i] = which % 2 ? GH_OP_ERASE : GH_OP_INSERT;
  }
  void *pk = tu_pack(keys, n, key_bits), *pv = value_bits ? tu_pack(values, n, value_bits) : NULL;
  tu_set_phase("the racing batch");
  const uint64_t size_before = table_size(t);
  CHECK_OK(t, gh_mixed(t, ops, pk, pv, n, variant == GH_VARIANT_MULTIVALUE ? GH_APPEND : GH_OVERWRITE, NULL, results, NULL));
  CHECK_OK(t, gh_validate(t));
  /* Per key: stored - erased + present before = what is there now. */
  int64_t *net = (int64_t *)calloc(keys_n, sizeof *net);
  REQUIRE(net != NULL, "out of memory");
  uint64_t *index_of = (uint64_t *)tu_xmalloc(n * 8);
  for (uint64_t i = 0; i < n; ++i) index_of[i] = order[i] / copies;
  int64_t total = (int64_t)size_before;
  for (uint64_t i = 0; i < n; ++i) {
    CHECK(results[i] <= (ops[i] == GH_OP_INSERT ? 1 : 1), "results[%llu] = %u", (unsigned long long)i, results[i]);
    if (ops[i] == GH_OP_INSERT && results[i] == 1) net[index_of[i]] += 1, total += 1;
    if (ops[i] == GH_OP_ERASE && results[i] == 1) net[index_of[i]] -= 1;
  }
  void *pool_packed = tu_pack(pool, keys_n, key_bits);
  uint64_t *counts = (uint64_t *)tu_xmalloc(keys_n * 8), count_total = 0;
  if (variant == GH_VARIANT_MULTIVALUE) {
    CHECK_OK(t, gh_count(t, pool_packed, keys_n, counts, &count_total, NULL));
    CHECK(count_total == table_size(t), "gh_count total %llu, gh_size %llu", (unsigned long long)count_total,
          (unsigned long long)table_size(t));
  } else {
    CHECK_OK(t, gh_contains(t, pool_packed, keys_n, found, NULL));
    uint64_t present = 0;
    for (uint64_t k = 0; k < keys_n; ++k) {
      const int64_t expect = (k < keys_n / 2 ? 1 : 0) + net[k];
      present += found[k];
      /* A map holds a key once: an erase that removed it and two inserts that stored it. */
      if (!CHECK(expect == found[k], "key 0x%llx: present before %d, inserts stored - erases removed = %lld, found %u",
                 (unsigned long long)pool[k], k < keys_n / 2, (long long)net[k], found[k]))
        break;
    }
    CHECK(present == table_size(t), "found %llu keys, gh_size %llu", (unsigned long long)present,
          (unsigned long long)table_size(t));
  }
  if (keys_n >= 1000)
    printf("  race k%u v%u %s: %llu keys x %llu operations, %llu entries after\n", key_bits, value_bits,
           tu_variant_name(variant, value_bits), (unsigned long long)keys_n, (unsigned long long)copies,
           (unsigned long long)table_size(t));
  gh_destroy(t);
  free(pool);
  free(keys);
  free(values);
  free(order);
  free(ops);
  free(results);
  free(found);
  free(half);
  free(half_values);
  free(pk);
  free(pv);
  free(net);
  free(index_of);
  free(pool_packed);
  free(counts);
}

/* gh_insert of hot keys: every copy of a key in one batch races for the same entry of the same
 * list (the head pass's CAS, then the walk after a lost one). A map adds each value exactly once
 * (GH_ADD), a multivalue table keeps every copy; gh_find then reads the sums. */
static void hot_insert_case(unsigned key_bits, unsigned value_bits, gh_variant variant, uint64_t keys_n,
                            uint64_t copies) {
  const uint64_t n = keys_n * copies, mask = value_mask(value_bits);
  const int multi = variant == GH_VARIANT_MULTIVALUE;
  tu_rng rng = tu_rng_make(tu_mix_seed(sl_seed, key_bits, value_bits, 100u + (uint64_t)variant));
  gh_table *t = make_table(key_bits, value_bits, variant, 4096, 0);
  uint64_t *pool = (uint64_t *)tu_xmalloc(keys_n * 8), *keys = (uint64_t *)tu_xmalloc(n * 8);
  uint64_t *values = (uint64_t *)tu_xmalloc(n * 8), *sums = (uint64_t *)calloc(keys_n, 8);
  uint64_t *got = (uint64_t *)tu_xmalloc(keys_n * 8), *counts = (uint64_t *)tu_xmalloc(keys_n * 8);
  uint8_t *found = (uint8_t *)tu_xmalloc(keys_n);
  REQUIRE(sums != NULL, "out of memory");
  tu_set_context("hot insert backend=%s k%u v%u variant=%s keys=%llu copies=%llu seed=0x%016llx",
                 tu_backend_name(sl_backend), key_bits, value_bits, tu_variant_name(variant, value_bits),
                 (unsigned long long)keys_n, (unsigned long long)copies, (unsigned long long)sl_seed);
  tu_gen_unique_keys(&rng, key_bits, keys_n, NULL, pool);
  tu_gen_values(&rng, value_bits ? value_bits : 32, n, values);
  for (uint64_t i = 0; i < n; ++i) keys[i] = i; /* positions first, then shuffled into keys */
  tu_shuffle(&rng, keys, n);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t k = keys[i] % keys_n;
    keys[i] = pool[k];
    sums[k] = (sums[k] + values[i]) & mask;
  }
  void *pk = tu_pack(keys, n, key_bits), *pv = value_bits ? tu_pack(values, n, value_bits) : NULL;
  void *pool_packed = tu_pack(pool, keys_n, key_bits), *out = value_bits ? tu_xmalloc(keys_n * 8) : NULL;
  tu_set_phase("one gh_insert of every copy");
  CHECK_OK(t, gh_insert(t, pk, pv, n, multi ? GH_APPEND : GH_ADD, NULL, NULL));
  CHECK_OK(t, gh_validate(t));
  CHECK(table_size(t) == (multi ? n : keys_n), "gh_size %llu, expected %llu", (unsigned long long)table_size(t),
        (unsigned long long)(multi ? n : keys_n));
  tu_set_phase("gh_find / gh_count of every key");
  if (multi) {
    CHECK_OK(t, gh_count(t, pool_packed, keys_n, counts, NULL, NULL));
    for (uint64_t k = 0; k < keys_n; ++k)
      if (!CHECK(counts[k] == copies, "key 0x%llx: %llu values, expected %llu", (unsigned long long)pool[k],
                 (unsigned long long)counts[k], (unsigned long long)copies))
        break;
  } else {
    CHECK_OK(t, gh_find(t, pool_packed, keys_n, out, found, NULL, NULL));
    if (value_bits) tu_unpack(out, keys_n, value_bits, got);
    for (uint64_t k = 0; k < keys_n; ++k)
      if (!CHECK(found[k] && (!value_bits || got[k] == sums[k]), "key 0x%llx: found %u, value 0x%llx, sum 0x%llx",
                 (unsigned long long)pool[k], found[k], (unsigned long long)(value_bits ? got[k] : 0),
                 (unsigned long long)sums[k]))
        break;
  }
  gh_destroy(t);
  free(pool);
  free(keys);
  free(values);
  free(sums);
  free(got);
  free(counts);
  free(found);
  free(pk);
  free(pv);
  free(pool_packed);
  free(out);
}

static void part_race(void) {
  race_case(32, 32, GH_VARIANT_MAP, 20000, 3);
  race_case(64, 0, GH_VARIANT_MAP, 20000, 3);
  race_case(64, 64, GH_VARIANT_MAP, 20000, 3);
  race_case(32, 32, GH_VARIANT_MULTIVALUE, 20000, 3);
  /* Hot keys: many inserts and erases of a few keys, all racing (WarpSpeed's adversarial replay),
   * on more host threads than cores so that they interleave. */
  sl_host_threads = 8;
  for (uint64_t round = 0; round < 20 && tu_failure_count() == 0; ++round) {
    sl_seed += 1;
    race_case(32, 32, GH_VARIANT_MAP, 64, 513);
    race_case(64, 64, GH_VARIANT_MAP, 64, 513);
    race_case(32, 32, GH_VARIANT_MULTIVALUE, 64, 513);
  }
  sl_host_threads = 0;
  printf("  race: 20 rounds of 64 hot keys x 513 operations on 8 threads (map k32, map k64, multivalue)\n");
  hot_insert_case(32, 32, GH_VARIANT_MAP, 64, 513);
  hot_insert_case(64, 64, GH_VARIANT_MAP, 64, 513);
  hot_insert_case(32, 0, GH_VARIANT_MAP, 2000, 7);
  hot_insert_case(32, 32, GH_VARIANT_MULTIVALUE, 64, 513);
  printf("  race: gh_insert of hot keys (64 x 513 copies, 2000 x 7) added once each, every multivalue copy kept\n");
}

/* ---- mixed differential ----------------------------------------------------------------------- */

/* Batches whose keys are distinct (concurrent operations on one key have no order), so every
 * result is determined; the reference applies them after. */
static void mixed_case(unsigned key_bits, unsigned value_bits, gh_variant variant, uint64_t total_ops) {
  const uint64_t pool_n = 1u << 17, batch = 1u << 16;
  const int multi = variant == GH_VARIANT_MULTIVALUE;
  tu_rng rng = tu_rng_make(tu_mix_seed(sl_seed, key_bits, value_bits, (uint64_t)variant + 100));
  gh_table *t = make_table(key_bits, value_bits, variant, 1u << 14, 0);
  sl_ref r;
  uint64_t *pool = (uint64_t *)tu_xmalloc(pool_n * 8), *keys = (uint64_t *)tu_xmalloc(batch * 8);
  uint64_t *values = (uint64_t *)tu_xmalloc(batch * 8), *got = (uint64_t *)tu_xmalloc(batch * 8);
  uint8_t *ops = (uint8_t *)tu_xmalloc(batch), *results = (uint8_t *)tu_xmalloc(batch);
  const uint64_t mask = value_mask(value_bits);
  tu_set_context("mixed backend=%s k%u v%u variant=%s seed=0x%016llx", tu_backend_name(sl_backend), key_bits, value_bits,
                 tu_variant_name(variant, value_bits), (unsigned long long)sl_seed);
  ref_init(&r, pool_n);
  tu_gen_unique_keys(&rng, key_bits, pool_n, NULL, pool);
  uint64_t special[8];
  const size_t n_special = tu_special_keys(key_bits, special);
  for (size_t i = 0; i < n_special && i < 8; ++i) pool[i] = special[i];
  const gh_dup_policy policies[] = {GH_KEEP_FIRST, GH_OVERWRITE, GH_ADD, GH_MIN, GH_MAX};
  uint64_t done = 0, step = 0;
  while (done < total_ops) {
    const gh_dup_policy policy = multi ? GH_APPEND : policies[step % 5];
    tu_shuffle(&rng, pool, pool_n);
    for (uint64_t i = 0; i < batch; ++i) {
      keys[i] = pool[i];
      const uint64_t roll = tu_below(&rng, 10);
      ops[i] = roll < 5 ? GH_OP_INSERT : (roll < 7 ? GH_OP_ERASE : GH_OP_FIND);
      values[i] = tu_next(&rng) & mask;
    }
    void *pk = tu_pack(keys, batch, key_bits), *pv = value_bits ? tu_pack(values, batch, value_bits) : NULL;
    void *vo = value_bits ? tu_xmalloc(batch * 8) : NULL;
    if (vo) memset(vo, TU_CANARY, batch * 8);
    tu_set_phase("batch %llu (policy %d)", (unsigned long long)step, (int)policy);
    if (CHECK_OK(t, gh_mixed(t, ops, pk, pv, batch, policy, vo, results, NULL))) {
      if (vo) tu_unpack(vo, batch, value_bits, got);
      for (uint64_t i = 0; i < batch; ++i) {
        /* "values_out: at GH_OP_FIND positions the value found ...; other positions are not written" */
        const size_t value_bytes = value_bits / 8u;
        if (vo && ops[i] != GH_OP_FIND &&
            !CHECK(tu_first_non_canary((char *)vo + i * value_bytes, value_bytes) == value_bytes,
                   "op %u on key 0x%llx wrote values_out[%llu]: only finds write it", ops[i],
                   (unsigned long long)keys[i], (unsigned long long)i))
          break;
        const uint64_t s = ref_slot(&r, keys[i]);
        const int present = r.counts[s] > 0;
        uint8_t want = 0;
        if (ops[i] == GH_OP_FIND) {
          want = (uint8_t)present;
          if (vo && ops[i] == GH_OP_FIND && present && !multi &&
              !CHECK(got[i] == r.values[s], "find 0x%llx: value 0x%llx, reference 0x%llx", (unsigned long long)keys[i],
                     (unsigned long long)got[i], (unsigned long long)r.values[s]))
            break;
        } else if (ops[i] == GH_OP_ERASE) {
          want = (uint8_t)present;
          r.counts[s] = 0;
          r.sums[s] = 0;
        } else if (multi) {
          want = 1;
          r.counts[s] += 1;
          r.sums[s] += values[i];
          if (r.counts[s] == 1) r.values[s] = values[i];
        } else {
          want = (uint8_t)!present;
          if (!present) r.values[s] = values[i];
          else if (policy == GH_OVERWRITE) r.values[s] = values[i];
          else if (policy == GH_ADD) r.values[s] = (r.values[s] + values[i]) & mask;
          else if (policy == GH_MIN && values[i] < r.values[s]) r.values[s] = values[i];
          else if (policy == GH_MAX && values[i] > r.values[s]) r.values[s] = values[i];
          if (value_bits == 0) r.values[s] = 0;
          r.counts[s] = 1;
        }
        if (!CHECK(results[i] == want, "op %u on key 0x%llx: result %u, reference %u", ops[i],
                   (unsigned long long)keys[i], results[i], want))
          break;
      }
    }
    free(pk);
    free(pv);
    free(vo);
    done += batch;
    step += 1;
    if (step % 4 == 0) CHECK_OK(t, gh_compact(t, NULL));
    if (step % 8 == 0 || done >= total_ops) {
      if (multi) check_multi(t, &r, key_bits, value_bits);
      else check_map(t, &r, key_bits, value_bits);
    }
    if (tu_failure_count() > 0) break;
  }
  printf("  mixed k%u v%u %s: %llu operations in %llu batches\n", key_bits, value_bits, tu_variant_name(variant, value_bits),
         (unsigned long long)done, (unsigned long long)step);
  gh_destroy(t);
  ref_free(&r);
  free(pool);
  free(keys);
  free(values);
  free(got);
  free(ops);
  free(results);
}

static void part_mixed(void) {
  mixed_case(32, 32, GH_VARIANT_MAP, 1100000);
  mixed_case(32, 32, GH_VARIANT_MULTIVALUE, 1100000);
  mixed_case(64, 64, GH_VARIANT_MAP, 300000);
  mixed_case(64, 0, GH_VARIANT_MAP, 300000);
}

/* ---- compact ---------------------------------------------------------------------------------- */

static void compact_case(gh_variant variant, int light) {
  const uint64_t n = 200000;
  tu_rng rng = tu_rng_make(tu_mix_seed(sl_seed, (uint64_t)variant, (uint64_t)light, 7));
  /* Long chains (16 slabs per bucket, as far as the buckets grow), whose slabs compaction frees. */
  gh_table *t = make_table_at(32, 32, variant, 1u << 12, light, 16.0);
  sl_ref r;
  uint64_t *keys = (uint64_t *)tu_xmalloc(n * 8), *values = (uint64_t *)tu_xmalloc(n * 8);
  gh_stats full, erased, compacted;
  size_t host_before = 0, host_after = 0;
  tu_set_context("compact backend=%s variant=%s light=%d seed=0x%016llx", tu_backend_name(sl_backend),
                 tu_variant_name(variant, 32), light, (unsigned long long)sl_seed);
  ref_init(&r, n);
  tu_gen_unique_keys(&rng, 32, n, NULL, keys);
  tu_gen_values(&rng, 32, n, values);
  void *pk = tu_pack(keys, n, 32), *pv = tu_pack(values, n, 32);
  CHECK_OK(t, gh_insert(t, pk, pv, n, variant == GH_VARIANT_MULTIVALUE ? GH_APPEND : GH_KEEP_FIRST, NULL, NULL));
  CHECK_OK(t, gh_get_stats(t, &full));
  /* Erase 90 %: the lists keep their slabs, full of tombstones. */
  const uint64_t erase_n = n / 10 * 9;
  CHECK_OK(t, gh_erase(t, pk, erase_n, NULL, NULL, NULL));
  for (uint64_t i = erase_n; i < n; ++i) {
    const uint64_t s = ref_slot(&r, keys[i]);
    r.counts[s] = 1;
    r.values[s] = values[i];
    r.sums[s] = values[i];
  }
  CHECK_OK(t, gh_get_stats(t, &erased));
  CHECK_OK(t, gh_memory_usage(t, &host_before, NULL));
  tu_set_phase("gh_compact");
  CHECK_OK(t, gh_compact(t, NULL));
  CHECK(gh_last_error(t)[0] == '\0', "message after success: %s", gh_last_error(t));
  CHECK_OK(t, gh_get_stats(t, &compacted));
  CHECK_OK(t, gh_memory_usage(t, &host_after, NULL));
  CHECK(erased.slots == full.slots && compacted.slots * 3 < erased.slots,
        "slots: %llu full, %llu after erasing 90 %%, %llu after gh_compact (expected under a third)",
        (unsigned long long)full.slots, (unsigned long long)erased.slots, (unsigned long long)compacted.slots);
  CHECK(compacted.size == n - erase_n, "size %llu after compact, expected %llu", (unsigned long long)compacted.size,
        (unsigned long long)(n - erase_n));
  /* SlabAlloc keeps its super blocks: the slabs went back to it, not to the system. */
  CHECK(host_after == host_before, "memory %zu -> %zu", host_before, host_after);
  if (variant == GH_VARIANT_MULTIVALUE) check_multi(t, &r, 32, 32);
  else check_map(t, &r, 32, 32);
  /* Slabs freed by compaction are used again. */
  tu_set_phase("insert after gh_compact");
  CHECK_OK(t, gh_insert(t, pk, pv, erase_n, variant == GH_VARIANT_MULTIVALUE ? GH_APPEND : GH_KEEP_FIRST, NULL, NULL));
  for (uint64_t i = 0; i < erase_n; ++i) {
    const uint64_t s = ref_slot(&r, keys[i]);
    r.counts[s] = 1;
    r.values[s] = values[i];
    r.sums[s] = values[i];
  }
  if (variant == GH_VARIANT_MULTIVALUE) check_multi(t, &r, 32, 32);
  else check_map(t, &r, 32, 32);
  CHECK_OK(t, gh_compact(t, NULL)); /* nothing to remove */
  CHECK(table_size(t) == n, "size %llu after a second gh_compact", (unsigned long long)table_size(t));
  CHECK_OK(t, gh_validate(t));
  printf("  compact %s light %d: %llu -> %llu entries of room\n", tu_variant_name(variant, 32), light,
         (unsigned long long)erased.slots, (unsigned long long)compacted.slots);
  gh_destroy(t);
  ref_free(&r);
  free(keys);
  free(values);
  free(pk);
  free(pv);
}

static void part_compact(void) {
  compact_case(GH_VARIANT_MAP, 0);
  compact_case(GH_VARIANT_MAP, 1);
  compact_case(GH_VARIANT_MULTIVALUE, 0);
}

/* ---- bad inputs ------------------------------------------------------------------------------- */

static void part_bad(void) {
  gh_table *t = make_table(32, 32, GH_VARIANT_MAP, 1000, 0);
  uint64_t keys64[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  void *keys = tu_pack(keys64, 8, 32), *values = tu_pack(keys64, 8, 32);
  uint8_t ops[8] = {GH_OP_INSERT, GH_OP_INSERT, GH_OP_INSERT, GH_OP_INSERT, GH_OP_FIND, GH_OP_ERASE, GH_OP_INSERT, GH_OP_INSERT};
  uint8_t results[8];
  uint32_t values_out[8];
  tu_set_context("bad backend=%s seed=0x%016llx", tu_backend_name(sl_backend), (unsigned long long)sl_seed);
  const uint8_t bad_codes[] = {0, 4, 255};
  for (size_t b = 0; b < sizeof bad_codes; ++b) {
    tu_set_phase("op code %u at position 5", bad_codes[b]);
    uint8_t with_bad[8];
    memcpy(with_bad, ops, 8);
    with_bad[5] = bad_codes[b];
    memset(results, 0xA5, sizeof results);
    memset(values_out, 0xA5, sizeof values_out);
    CHECK_STATUS(t, gh_mixed(t, with_bad, keys, values, 8, GH_OVERWRITE, values_out, results, NULL), GH_ERR_INVALID_ARGUMENT);
    CHECK(strstr(gh_last_error(t), "ops[5]") != NULL, "message does not name position 5: %s", gh_last_error(t));
    CHECK(tu_first_non_canary(results, sizeof results) == sizeof results &&
              tu_first_non_canary(values_out, sizeof values_out) == sizeof values_out,
          "a refused gh_mixed wrote its outputs");
    CHECK(table_size(t) == 0, "a refused gh_mixed executed operations (size %llu)", (unsigned long long)table_size(t));
  }
  tu_set_phase("NULL arrays");
  CHECK_STATUS(t, gh_mixed(t, NULL, keys, values, 8, GH_OVERWRITE, NULL, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(t, gh_mixed(t, ops, NULL, values, 8, GH_OVERWRITE, NULL, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(t, gh_mixed(t, ops, keys, NULL, 8, GH_OVERWRITE, NULL, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(t, gh_mixed(t, ops, keys, values, 8, GH_APPEND, NULL, NULL, NULL), GH_ERR_UNSUPPORTED);
  CHECK_STATUS(t, gh_mixed(t, ops, keys, values, 8, (gh_dup_policy)9, NULL, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_mixed(NULL, ops, keys, values, 8, GH_OVERWRITE, NULL, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_compact(NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK(table_size(t) == 0, "refused calls executed operations");
  tu_set_phase("n = 0 and a good batch");
  CHECK_OK(t, gh_mixed(t, NULL, NULL, NULL, 0, GH_OVERWRITE, NULL, NULL, NULL));
  memset(values_out, TU_CANARY, sizeof values_out);
  CHECK_OK(t, gh_mixed(t, ops, keys, values, 8, GH_OVERWRITE, values_out, results, NULL));
  for (int i = 0; i < 8; ++i)
    if (i != 4)
      CHECK(tu_first_non_canary(&values_out[i], sizeof values_out[i]) == sizeof values_out[i],
            "values_out[%d] (op %u) written: only finds write it", i, ops[i]);
  CHECK(table_size(t) == 6, "size %llu after 6 distinct inserts, an erase of an absent key and a find",
        (unsigned long long)table_size(t));
  CHECK(results[4] == 0 && results[5] == 0 && results[0] == 1, "results %u %u %u", results[0], results[4], results[5]);
  CHECK(values_out[4] == 0, "a find of an absent key wrote %u", values_out[4]);
  gh_destroy(t);

  tu_set_phase("a set refuses values_out");
  t = make_table(32, 0, GH_VARIANT_MAP, 1000, 0);
  CHECK_STATUS(t, gh_mixed(t, ops, keys, NULL, 8, GH_KEEP_FIRST, values_out, results, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(t, gh_mixed(t, ops, keys, values, 8, GH_KEEP_FIRST, NULL, results, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_OK(t, gh_mixed(t, ops, keys, NULL, 8, GH_KEEP_FIRST, NULL, results, NULL));
  gh_destroy(t);

  /* Designs without mixed batches say so, naming the call. */
  for (int d = 1; d <= 5; ++d) {
    gh_design_traits traits;
    if (d == GH_SLAB || gh_design_info((gh_design)d, &traits) != GH_OK) continue;
    gh_config cfg = gh_config_default((gh_design)d);
    cfg.backend = GH_BACKEND_HOST;
    cfg.capacity = 1000;
    if (gh_create(&cfg, &t) != GH_OK) continue;
    tu_set_phase("%s without gh_mixed", traits.name);
    CHECK_STATUS(t, gh_mixed(t, ops, keys, values, 8, GH_OVERWRITE, NULL, NULL, NULL), GH_ERR_UNSUPPORTED);
    CHECK(strstr(gh_last_error(t), "gh_mixed") != NULL, "message: %s", gh_last_error(t));
    if (!(traits.capabilities & GH_CAP_COMPACT)) { /* (the others: tests/compact.c) */
      CHECK_STATUS(t, gh_compact(t, NULL), GH_ERR_UNSUPPORTED);
      CHECK(strstr(gh_last_error(t), "gh_compact") != NULL, "message: %s", gh_last_error(t));
    }
    CHECK(!(traits.capabilities & GH_CAP_MIXED), "%s claims GH_CAP_MIXED", traits.name);
    gh_destroy(t);
  }
  free(keys);
  free(values);
}

/* ---- config ----------------------------------------------------------------------------------- */

static void part_config(void) {
  gh_config cfg = gh_config_default(GH_SLAB);
  char message[256];
  tu_set_context("config seed=0x%016llx", (unsigned long long)sl_seed);
  CHECK(cfg.slab_load == 0.6 && cfg.slab_light == 0, "defaults slab_load %g slab_light %d", cfg.slab_load, cfg.slab_light);
  cfg.slab_load = 0.01;
  CHECK_STATUS(NULL, gh_config_validate(&cfg, message, sizeof message), GH_ERR_INVALID_ARGUMENT);
  CHECK(strstr(message, "slab_load") != NULL, "message: %s", message);
  cfg.slab_load = 17;
  CHECK_STATUS(NULL, gh_config_validate(&cfg, message, sizeof message), GH_ERR_INVALID_ARGUMENT);
  cfg.slab_load = 16;
  CHECK_OK(NULL, gh_config_validate(&cfg, message, sizeof message));
  cfg.slab_light = 2;
  CHECK_STATUS(NULL, gh_config_validate(&cfg, message, sizeof message), GH_ERR_INVALID_ARGUMENT);
  CHECK(strstr(message, "slab_light") != NULL, "message: %s", message);
  /* A program built against 0.2.0's header: its struct ends before slab_load. */
  gh_config old;
  memset(&old, 0x5A, sizeof old);
  REQUIRE(gh_config_init(&old, offsetof(gh_config, slab_load), GH_VERSION_NUMBER, GH_SLAB) == GH_OK, "0.2 size refused");
  old.backend = sl_backend;
  old.capacity = 1000;
  gh_table *t = NULL;
  if (CHECK_OK(NULL, gh_create(&old, &t))) {
    gh_config got;
    CHECK_OK(t, gh_get_config(t, &got));
    CHECK(got.slab_load == 0.6 && got.slab_light == 0, "0.2 config: slab_load %g slab_light %d", got.slab_load,
          got.slab_light);
    gh_destroy(t);
  }
  CHECK_STATUS(NULL, gh_config_init(&old, offsetof(gh_config, slab_load) + 8, GH_VERSION_NUMBER, GH_SLAB),
               GH_ERR_INVALID_ARGUMENT);
}

/* ---- alloc ---------------------------------------------------------------------------------------- */

/* The state a refused call must leave: size, memory, every key of the first batch with its value. */
static void check_unchanged(gh_table *t, tu_tracker *tr, uint64_t size, size_t live, const void *keys, uint64_t n) {
  uint8_t *found = (uint8_t *)tu_xmalloc(n);
  CHECK(table_size(t) == size, "size %llu, was %llu", (unsigned long long)table_size(t), (unsigned long long)size);
  CHECK(tu_tracker_live_bytes(tr, GH_MEMORY_HOST) + tu_tracker_live_bytes(tr, GH_MEMORY_DEVICE) == live,
        "the allocator's live bytes changed: %zu, were %zu",
        tu_tracker_live_bytes(tr, GH_MEMORY_HOST) + tu_tracker_live_bytes(tr, GH_MEMORY_DEVICE), live);
  tu_tracker_check_frees(tr, "after a refused call");
  if (CHECK_OK(t, gh_contains(t, keys, n, found, NULL)))
    for (uint64_t i = 0; i < n; ++i)
      if (!CHECK(found[i], "key %llu of the first batch lost", (unsigned long long)i)) break;
  CHECK_OK(t, gh_validate(t));
  free(found);
}

/* Hot keys of a multivalue table need far more slabs than the estimate for uniform keys reserves:
 * the inserts that find none run again once SlabAlloc has grown. With each allocation failing in
 * turn, the call either completes, or refuses with nothing changed, or (SlabAlloc could not grow
 * for the rerun) returns GH_ERR_OUT_OF_MEMORY with the inserts that did not fit flagged and every
 * other one stored. */
/* through_mixed: the batch goes through gh_mixed, whose results_out says 2 for an insert that did
 * not fit (read here as failed_out's 1); its batch also erases half of PRESENT keys stored before it
 * (one value each) and finds the other half, which must have run, with their results and values
 * written, whenever the call did anything ("every other operation executed and its outputs
 * written"). */
#define PRESENT 64u
static void short_estimate_case(tu_tracker *tr, gh_config cfg, int through_mixed) {
  /* Enough slabs in hot lists to pass the estimate's margin and the workers' spares (a GPU has
   * tens of thousands of those: there many short hot lists, so that the runs stay quick under
   * compute-sanitizer too). */
  const int gpu = sl_backend == GH_BACKEND_CUDA;
  const uint64_t hot = gpu ? 16384 : 32, per_hot = gpu ? 64 : 1000, n = hot * per_hot;
  const uint64_t present = through_mixed ? PRESENT : 0, ops_n = n + present;
  tu_rng rng = tu_rng_make(tu_mix_seed(sl_seed, 21, 22, 23));
  uint64_t *hot_keys = (uint64_t *)tu_xmalloc((hot + PRESENT) * 8), *keys = (uint64_t *)tu_xmalloc(ops_n * 8);
  uint64_t *counts = (uint64_t *)tu_xmalloc((hot + PRESENT) * 8), *expect = (uint64_t *)tu_xmalloc(hot * 8);
  uint8_t *failed = (uint8_t *)tu_xmalloc(ops_n), *ops = (uint8_t *)tu_xmalloc(ops_n);
  uint32_t *found_values = (uint32_t *)tu_xmalloc(ops_n * 4);
  /* the hot keys, then the present ones (distinct from them); the present keys' values are key + 1 */
  tu_gen_unique_keys(&rng, 32, hot + PRESENT, NULL, hot_keys);
  const uint64_t *present_keys = hot_keys + hot;
  memset(ops, GH_OP_INSERT, n);
  for (uint64_t i = 0; i < n; ++i) keys[i] = hot_keys[i % hot];
  for (uint64_t j = 0; j < present; ++j) {
    ops[n + j] = j < present / 2u ? GH_OP_ERASE : GH_OP_FIND;
    keys[n + j] = present_keys[j];
  }
  uint64_t present_values[PRESENT];
  for (uint64_t j = 0; j < PRESENT; ++j) present_values[j] = (present_keys[j] + 1u) & 0xFFFFFFFFu;
  void *pk = tu_pack(keys, ops_n, 32), *ph = tu_pack(hot_keys, hot + PRESENT, 32);
  void *pp = tu_pack(present_keys, PRESENT, 32), *pv = tu_pack(present_values, PRESENT, 32);
  cfg.variant = GH_VARIANT_MULTIVALUE;
  cfg.capacity = 144;
  uint64_t k, partial = 0;
  for (k = 1; k < 200; ++k) {
    gh_table *t = NULL;
    REQUIRE(gh_create(&cfg, &t) == GH_OK, "gh_create: %s", gh_last_create_error());
    if (present) CHECK_OK(t, gh_insert(t, pp, pv, present, GH_APPEND, NULL, NULL));
    tu_set_phase("hot keys, %llu values each, with allocation %llu failing (%s)", (unsigned long long)per_hot,
                 (unsigned long long)k, through_mixed ? "gh_mixed" : "gh_insert");
    memset(failed, 0xA5, ops_n);
    memset(found_values, 0xA5, ops_n * 4);
    tu_tracker_fail_nth(tr, k);
    const gh_status st = through_mixed ? gh_mixed(t, ops, pk, pk, ops_n, GH_APPEND, found_values, failed, NULL)
                                       : gh_insert(t, pk, pk, n, GH_APPEND, failed, NULL);
    const int ran = tu_first_non_canary(failed, ops_n) != ops_n;
    if (through_mixed && ran) {
      for (uint64_t i = 0; i < n; ++i) {
        CHECK(failed[i] == 1 || failed[i] == 2, "gh_mixed results_out[%llu] = %u for an insert of a multi-value "
              "table (1 stored, 2 did not fit)", (unsigned long long)i, failed[i]);
        failed[i] = failed[i] == 2;
      }
      for (uint64_t j = 0; j < present; ++j)
        if (!CHECK(failed[n + j] == 1 && (ops[n + j] == GH_OP_ERASE || found_values[n + j] == present_values[j]),
                   "gh_mixed returned %s: the %s of present key %llu gave result %u, value %u (stored %llu)",
                   gh_status_name(st), ops[n + j] == GH_OP_ERASE ? "erase" : "find", (unsigned long long)present_keys[j],
                   failed[n + j], found_values[n + j], (unsigned long long)present_values[j]))
          break;
    }
    const int injected = tu_tracker_injected(tr);
    tu_tracker_fail_nth(tr, 0);
    char message[512];
    snprintf(message, sizeof message, "%s", gh_last_error(t));
    CHECK(st == GH_OK || st == GH_ERR_OUT_OF_MEMORY, "returned %s: %s", gh_status_name(st), message);
    CHECK_OK(t, gh_validate(t));
    uint64_t flagged = 0, total = 0;
    for (uint64_t h = 0; h < hot; ++h) expect[h] = per_hot;
    if (st == GH_OK) {
      for (uint64_t i = 0; i < n; ++i) CHECK(failed[i] == 0, "failed_out[%llu] = %u after GH_OK", (unsigned long long)i, failed[i]);
    } else if (!ran) {
      for (uint64_t h = 0; h < hot; ++h) expect[h] = 0; /* refused: nothing changed */
    } else {
      for (uint64_t i = 0; i < n; ++i) {
        CHECK(failed[i] <= 1, "failed_out[%llu] = %u", (unsigned long long)i, failed[i]);
        flagged += failed[i] == 1;
        expect[i % hot] -= failed[i] == 1;
      }
      CHECK(flagged > 0 && strstr(message, "did not fit") != NULL, "GH_ERR_OUT_OF_MEMORY, %llu flagged: %s",
            (unsigned long long)flagged, message);
      partial += 1;
    }
    CHECK_OK(t, gh_count(t, ph, hot + PRESENT, counts, &total, NULL));
    for (uint64_t h = 0; h < hot; ++h)
      if (!CHECK(counts[h] == expect[h], "hot key %llu: %llu values, expected %llu", (unsigned long long)h,
                 (unsigned long long)counts[h], (unsigned long long)expect[h]))
        break;
    /* the present keys: erased by a batch that ran, else all there */
    for (uint64_t j = 0; j < present; ++j)
      if (!CHECK(counts[hot + j] == (ran && j < present / 2u ? 0u : 1u), "present key %llu: %llu values after a batch "
                 "that %s", (unsigned long long)present_keys[j], (unsigned long long)counts[hot + j], ran ? "ran" : "was refused"))
        break;
    CHECK(table_size(t) == total, "size %llu, values counted %llu", (unsigned long long)table_size(t),
          (unsigned long long)total);
    gh_destroy(t);
    if ((st == GH_OK && !injected) || tu_failure_count() > 0) break;
  }
  CHECK(k > 1 && k < 200 && partial > 0, "%llu runs, %llu ended flagged", (unsigned long long)k, (unsigned long long)partial);
  printf("  hot keys (%llu x %llu values, %s): %llu allocations failed in turn, %llu of them left flagged inserts\n",
         (unsigned long long)hot, (unsigned long long)per_hot, through_mixed ? "gh_mixed" : "gh_insert",
         (unsigned long long)(k - 1), (unsigned long long)partial);
  free(hot_keys);
  free(keys);
  free(counts);
  free(expect);
  free(failed);
  free(ops);
  free(found_values);
  free(pk);
  free(ph);
  free(pp);
  free(pv);
}

static void part_alloc(void) {
  const uint64_t first_n = 3000, n = 40000;
  tu_rng rng = tu_rng_make(tu_mix_seed(sl_seed, 11, 12, 13));
  tu_tracker *tr = tu_tracker_new();
  gh_config cfg = gh_config_default(GH_SLAB);
  gh_table *t = NULL;
  cfg.backend = sl_backend;
  cfg.capacity = 2000;
  cfg.seed = sl_seed;
  tu_tracker_attach(tr, &cfg);
  tu_set_context("alloc backend=%s seed=0x%016llx", tu_backend_name(sl_backend), (unsigned long long)sl_seed);
  uint64_t *keys = (uint64_t *)tu_xmalloc((first_n + n) * 8);
  tu_gen_unique_keys(&rng, 32, first_n + n, NULL, keys);
  void *pk = tu_pack(keys, first_n + n, 32), *pv = tu_pack(keys, first_n + n, 32);
  /* A batch that grows the buckets and needs new super blocks: inserts of new keys, erases and
   * finds of the first ones. The batch's keys: the first batch's keys, then new ones. */
  uint8_t *ops = (uint8_t *)tu_xmalloc(n);
  for (uint64_t i = 0; i < n; ++i) ops[i] = i < first_n ? (i % 2 ? GH_OP_ERASE : GH_OP_FIND) : GH_OP_INSERT;
  uint8_t *results_big = (uint8_t *)tu_xmalloc(n);
  const uint64_t size_after = n - first_n + first_n / 2;
  uint64_t k, done_without = 0;
  /* Every allocation point in turn, each from the same table: a failure the batch could do
   * without (growing early) still runs it whole. */
  for (k = 1; k < 100; ++k) {
    t = NULL;
    REQUIRE(gh_create(&cfg, &t) == GH_OK, "gh_create: %s", gh_last_create_error());
    CHECK_OK(t, gh_insert(t, pk, pv, first_n, GH_KEEP_FIRST, NULL, NULL));
    const uint64_t size = table_size(t);
    const size_t live = tu_tracker_live_bytes(tr, GH_MEMORY_HOST) + tu_tracker_live_bytes(tr, GH_MEMORY_DEVICE);
    tu_set_phase("gh_mixed with its allocation %llu failing", (unsigned long long)k);
    memset(results_big, 0xA5, n);
    tu_tracker_fail_nth(tr, k);
    const gh_status st = gh_mixed(t, ops, pk, pv, n, GH_KEEP_FIRST, NULL, results_big, NULL);
    const int injected = tu_tracker_injected(tr);
    tu_tracker_fail_nth(tr, 0);
    if (st == GH_OK) {
      CHECK(table_size(t) == size_after, "size %llu after the mixed batch, expected %llu", (unsigned long long)table_size(t),
            (unsigned long long)size_after);
      CHECK_OK(t, gh_validate(t));
      done_without += injected;
    } else {
      CHECK(st == GH_ERR_OUT_OF_MEMORY, "gh_mixed with an allocation failing returned %s: %s", gh_status_name(st),
            gh_last_error(t));
      CHECK(tu_says_what_was_kept(gh_last_error(t)), "message does not say what was kept: %s", gh_last_error(t));
      CHECK(tu_first_non_canary(results_big, n) == n, "a failed gh_mixed wrote results_out");
      check_unchanged(t, tr, size, live, pk, first_n);
    }
    if ((st == GH_OK && !injected) || tu_failure_count() > 0) break;
    gh_destroy(t);
  }
  CHECK(k > 1 && k < 100, "gh_mixed: %llu runs", (unsigned long long)k);
  CHECK(table_size(t) == size_after, "size %llu after the mixed batch", (unsigned long long)table_size(t));
  printf("  gh_mixed: %llu allocations failed in turn (%llu of them it could do without)\n", (unsigned long long)(k - 1),
         (unsigned long long)done_without);
  for (k = 1; k < 100; ++k) {
    tu_set_phase("gh_compact with its allocation %llu failing", (unsigned long long)k);
    tu_tracker_fail_nth(tr, k);
    const gh_status st = gh_compact(t, NULL);
    const int injected = tu_tracker_injected(tr);
    tu_tracker_fail_nth(tr, 0);
    if (st == GH_OK && !injected) break;
    CHECK(st == GH_ERR_OUT_OF_MEMORY || st == GH_OK, "gh_compact returned %s", gh_status_name(st));
  }
  CHECK_OK(t, gh_validate(t));
  /* SlabAlloc cannot grow past the limit: the batch is refused whole. */
  tu_set_phase("an insert past a memory limit");
  {
    uint64_t *more = (uint64_t *)tu_xmalloc(400000 * 8);
    tu_gen_unique_keys(&rng, 32, 400000, NULL, more);
    void *pm = tu_pack(more, 400000, 32);
    const uint64_t size = table_size(t);
    const size_t live = tu_tracker_live_bytes(tr, GH_MEMORY_HOST) + tu_tracker_live_bytes(tr, GH_MEMORY_DEVICE);
    tu_tracker_set_limit(tr, live + 4096);
    const gh_status st = gh_insert(t, pm, pm, 400000, GH_KEEP_FIRST, NULL, NULL);
    CHECK(st == GH_ERR_OUT_OF_MEMORY, "an insert past the limit returned %s: %s", gh_status_name(st), gh_last_error(t));
    tu_tracker_set_limit(tr, 0);
    check_unchanged(t, tr, size, live, (const uint32_t *)pk + first_n, n - first_n);
    CHECK_OK(t, gh_insert(t, pm, pm, 400000, GH_KEEP_FIRST, NULL, NULL));
    CHECK_OK(t, gh_validate(t));
    free(more);
    free(pm);
  }
  gh_destroy(t);
  tu_tracker_check_clean(tr, "after gh_destroy");
  short_estimate_case(tr, cfg, 0);
  short_estimate_case(tr, cfg, 1);
  tu_tracker_check_clean(tr, "after the hot-key tables");
  tu_tracker_delete(tr);
  free(keys);
  free(pk);
  free(pv);
  free(ops);
  free(results_big);
}

/* ---- main ------------------------------------------------------------------------------------- */

typedef struct sl_part {
  const char *name;
  void (*run)(void);
} sl_part;

static const sl_part sl_parts[] = {{"growth", part_growth}, {"race", part_race},   {"mixed", part_mixed},
                                   {"compact", part_compact}, {"bad", part_bad}, {"config", part_config},
                                   {"alloc", part_alloc}};

int main(int argc, char **argv) {
  const sl_part *part = NULL;
  sl_seed = SL_BASE_SEED;
  if (argc < 2 || !tu_parse_backend(argv[1], &sl_backend)) goto usage;
  for (int a = 2; a < argc; a += 2) {
    if (a + 1 >= argc) goto usage;
    if (strcmp(argv[a], "--part") == 0) {
      for (size_t i = 0; i < sizeof sl_parts / sizeof sl_parts[0]; ++i)
        if (strcmp(argv[a + 1], sl_parts[i].name) == 0) part = &sl_parts[i];
      if (part == NULL) goto usage;
    } else if (strcmp(argv[a], "--seed") == 0) {
      if (!tu_parse_u64(argv[a + 1], &sl_seed)) goto usage;
    } else {
      goto usage;
    }
  }
  tu_skip_unless_backend_usable(sl_backend);
  for (size_t i = 0; i < sizeof sl_parts / sizeof sl_parts[0]; ++i) {
    if (part != NULL && part != &sl_parts[i]) continue;
    printf("slab %s %s (seed 0x%016llx)\n", tu_backend_name(sl_backend), sl_parts[i].name, (unsigned long long)sl_seed);
    fflush(stdout);
    sl_parts[i].run();
  }
  return tu_finish("slab");
usage:
  fprintf(stderr, "usage: %s host|cuda [--part growth|race|mixed|compact|bad|config|alloc] [--seed S]\n", argv[0]);
  return 2;
}
