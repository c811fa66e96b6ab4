/*
 * cuckoo - what the cuckoo design (Alcantara et al.) promises beyond the behaviour conformance
 * and differential check for every single-value design:
 *
 *   restarts      builds that fail (table factors at each d's minimum, degenerate hash constants
 *                 forced through the test hook) restart transparently: nothing is lost, the
 *                 table validates, gh_stats counts the restarts
 *   functions     d = 2..5 hash functions x both hash families, for maps, sets, compacting and
 *                 multi-value tables
 *   incremental   many small batches far past the configured capacity: the table grows
 *                 (gh_stats.grows > 0) and is checked against the reference after every batch;
 *                 erase and re-insert on maps and sets
 *   multiplicity  keys repeated 1, 2, 7, 64 and 512 times in a batch: a set holds each once, a
 *                 map with ADD counts every copy, a compacting table gives dense ids that stay
 *                 put across batches, a multi-value table keeps every pair
 *   bad           configurations out of range and calls each variant must refuse: the right
 *                 status, a message, and the table unchanged
 *
 *   cuckoo BACKEND --part PART [--seed S]
 *
 * Every case derives its seed from the part's base seed (--seed replaces it) and prints it with
 * any failure, together with the command line that reruns the part. The all-ones key patterns
 * take part in every variant. Compacting and multi-value tables are compared with their own
 * reference models below (key -> id with id -> key; a multiset of pairs); maps and sets with
 * tu_ref through test_util's wrappers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include "cuckoo/cuckoo_table.h"

/* The test hook of src/cuckoo/cuckoo_table.h, declared again so that a changed signature breaks
 * the build rather than the test: the next `attempts` build attempts of the table use degenerate
 * hash constants (every function sends a key to the same slot), so they fail and restart. */
void gh__cuckoo_force_failures(gh_table *table, unsigned attempts);

#define CK_BASE_SEED 0xC0C0057AB1Eull

/* Smallest table factor per d (index d - 2), as gpuhash.h documents. */
static const double ck_min_factor[4] = {2.1, 1.1, 1.03, 1.02};

/* The run: backend, part and base seed, for the context line of every case. */
static gh_backend ck_backend;
static const char *ck_program;
static const char *ck_part;
static uint64_t ck_seed;

static uint64_t ck_min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static double ck_min_factor_of(unsigned d) { return ck_min_factor[d - 2]; }

static const char *ck_variant_name(const gh_config *c) {
  switch (c->variant) {
    case GH_VARIANT_MAP: return c->value_bits == 0 ? "set" : "map";
    case GH_VARIANT_COMPACTING: return "compacting";
    case GH_VARIANT_MULTIVALUE: return "multivalue";
  }
  return "invalid";
}

static gh_config ck_config(tu_rng *rng, gh_variant variant, unsigned key_bits,
                           unsigned value_bits, uint64_t capacity, unsigned d,
                           gh_hash_family family, double factor) {
  gh_config c = gh_config_default(GH_CUCKOO);
  c.backend = ck_backend;
  c.variant = variant;
  c.key_bits = key_bits;
  c.value_bits = value_bits;
  c.capacity = capacity;
  c.hash_functions = d;
  c.hash_family = family;
  c.table_factor = factor;
  c.seed = tu_next(rng);
  c.host_threads = (unsigned)tu_below(rng, 4);
  return c;
}

static void ck_context(const char *what, const gh_config *c, uint64_t case_seed) {
  tu_set_context("cuckoo %s: %s backend=%s key_bits=%u value_bits=%u capacity=%llu "
                 "hash_functions=%u hash_family=%s table_factor=%.3f host_threads=%u "
                 "case_seed=0x%016llx\n  rerun: %s %s --part %s --seed 0x%016llx",
                 what, ck_variant_name(c), tu_backend_name(ck_backend), c->key_bits,
                 c->value_bits, (unsigned long long)c->capacity, c->hash_functions,
                 c->hash_family == GH_HASH_XOR ? "xor" : "multiply", c->table_factor,
                 c->host_threads, (unsigned long long)case_seed, ck_program,
                 tu_backend_name(ck_backend), ck_part, (unsigned long long)ck_seed);
}

static void ck_no_error_text(gh_table *table, const char *call) {
  const char *text = gh_last_error(table);
  CHECK(text != NULL && text[0] == '\0', "gh_last_error after a successful %s: \"%s\"", call,
        text ? text : "(NULL)");
}

static gh_stats ck_stats(gh_table *table) {
  gh_stats s;
  memset(&s, 0, sizeof s);
  CHECK_OK(table, gh_get_stats(table, &s));
  return s;
}

/* The rules every cuckoo table's counters follow; size and distinct keys as given. */
static void ck_check_stats(gh_table *table, uint64_t size, uint64_t distinct) {
  gh_stats s = ck_stats(table);
  uint64_t capacity = 0;
  CHECK_OK(table, gh_capacity(table, &capacity));
  CHECK(s.size == size, "gh_stats.size %llu, expected %llu", (unsigned long long)s.size,
        (unsigned long long)size);
  CHECK(s.distinct_keys == distinct, "gh_stats.distinct_keys %llu, expected %llu",
        (unsigned long long)s.distinct_keys, (unsigned long long)distinct);
  CHECK(s.eviction_limit > 0, "gh_stats.eviction_limit is 0");
  CHECK(distinct <= capacity, "%llu distinct keys but gh_capacity %llu (the keys it holds "
        "before growing)", (unsigned long long)distinct, (unsigned long long)capacity);
  CHECK(s.slots >= capacity, "gh_stats.slots %llu < gh_capacity %llu",
        (unsigned long long)s.slots, (unsigned long long)capacity);
}

/* Keys absent from `avoid` (may be NULL) and from the special patterns, unique. */
static void ck_unique_keys(tu_rng *rng, unsigned key_bits, uint64_t n, const tu_ref *avoid,
                           uint64_t *out) {
  tu_ref excluded;
  uint64_t special[8], *present;
  size_t n_special = tu_special_keys(key_bits, special);
  uint64_t n_present = avoid ? tu_ref_size(avoid) : 0;
  tu_ref_init(&excluded, key_bits, 0);
  tu_ref_insert(&excluded, special, NULL, n_special, GH_KEEP_FIRST, NULL);
  present = (uint64_t *)tu_xmalloc((size_t)(n_present + 1) * sizeof *present);
  if (avoid) tu_ref_keys(avoid, present);
  tu_ref_insert(&excluded, present, NULL, n_present, GH_KEEP_FIRST, NULL);
  tu_gen_unique_keys(rng, key_bits, n, &excluded, out);
  free(present);
  tu_ref_free(&excluded);
}

/* n keys: the special patterns first (when n allows), then unique random ones. */
static uint64_t *ck_keys_with_specials(tu_rng *rng, unsigned key_bits, uint64_t n) {
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *keys);
  uint64_t special[8];
  size_t n_special = tu_special_keys(key_bits, special);
  uint64_t head = ck_min_u64(n, n_special);
  memcpy(keys, special, (size_t)head * sizeof *keys);
  ck_unique_keys(rng, key_bits, n - head, NULL, keys + head);
  tu_shuffle(rng, keys, n);
  return keys;
}

/* ---------------------------------------------------------------------------------------- */
/* Maps and sets: tu_table                                                                   */
/* ---------------------------------------------------------------------------------------- */

static const gh_dup_policy ck_policies[] = {GH_KEEP_FIRST, GH_OVERWRITE, GH_ADD, GH_MIN, GH_MAX};
static const char *const ck_policy_names[] = {"KEEP_FIRST", "OVERWRITE", "ADD", "MIN", "MAX"};

/* Inserts keys[0, n) (values drawn here) in `batches` batches under random policies. */
static void ck_map_fill(tu_rng *rng, tu_table *h, const uint64_t *keys, uint64_t n,
                        unsigned batches) {
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *values);
  unsigned b;
  tu_gen_values(rng, h->value_bits, n, values);
  for (b = 0; b < batches; ++b) {
    uint64_t lo = n * b / batches, hi = n * (b + 1) / batches;
    size_t p = (size_t)tu_below(rng, 5);
    tu_set_phase("fill: batch %u of %u (%llu keys, %s)", b + 1, batches,
                 (unsigned long long)(hi - lo), ck_policy_names[p]);
    tu_insert(h, keys + lo, values + lo, hi - lo, ck_policies[p], 0, NULL);
    tu_check_all(h);
  }
  free(values);
}

/* Each of pool[0, n) 1..max_copies times with fresh values, under `policy`. */
static void ck_map_insert_repeats(tu_rng *rng, tu_table *h, const uint64_t *pool, uint64_t n,
                                  unsigned max_copies, gh_dup_policy policy) {
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)(n * max_copies + 1) * sizeof *keys);
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(n * max_copies + 1) * sizeof *values);
  uint64_t m = tu_gen_repeats(rng, pool, n, max_copies, keys);
  tu_gen_values(rng, h->value_bits, m, values);
  tu_insert(h, keys, values, m, policy, 0, NULL);
  free(values);
  free(keys);
}

/* find (present, absent, mixed) / erase a third / re-insert with repeats / every policy, with
 * the reference compared and the table validated after each phase. keys[0, n) are present. */
static void ck_map_workout(tu_rng *rng, tu_table *h, uint64_t *keys, uint64_t n) {
  uint64_t n_absent = 256, third = n / 3, i;
  uint64_t *absent = (uint64_t *)tu_xmalloc((size_t)n_absent * sizeof *absent);
  uint64_t *erase_keys = (uint64_t *)tu_xmalloc((size_t)(third + 40) * sizeof *erase_keys);
  uint64_t n_erase = 0;
  size_t p;

  tu_set_phase("find present and absent keys");
  tu_check_find(h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_contains(h, keys, n);
  ck_unique_keys(rng, h->key_bits, n_absent, &h->ref, absent);
  tu_check_find(h, absent, n_absent, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_find(h, absent, n_absent, TU_FIND_VALUES);
  tu_check_contains(h, absent, n_absent);

  tu_shuffle(rng, keys, n);
  for (i = 0; i < third; ++i) erase_keys[n_erase++] = keys[i];
  for (i = 0; i < 20 && third > 0; ++i) erase_keys[n_erase++] = keys[tu_below(rng, third)];
  for (i = 0; i < 20; ++i) erase_keys[n_erase++] = absent[i];
  tu_shuffle(rng, erase_keys, n_erase);
  tu_set_phase("erase a third (%llu keys, with repeats and absent keys)",
               (unsigned long long)third);
  tu_erase(h, erase_keys, n_erase);
  tu_check_all(h);
  tu_check_find(h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);

  /* Erased keys come back next to present ones; each must be stored exactly once (the export
   * comparison of tu_check_all reports a key held twice). */
  tu_set_phase("re-insert the erased third and as many present keys, up to 3 copies each");
  ck_map_insert_repeats(rng, h, keys, ck_min_u64(n, 2 * third), 3, GH_OVERWRITE);
  tu_check_all(h);
  tu_check_find(h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);

  for (p = 0; p < 5; ++p) {
    uint64_t pool_n = ck_min_u64(n, 100) + 20;
    uint64_t *pool = (uint64_t *)tu_xmalloc((size_t)pool_n * sizeof *pool);
    memcpy(pool, keys + (n - ck_min_u64(n, 100)), (size_t)ck_min_u64(n, 100) * sizeof *pool);
    ck_unique_keys(rng, h->key_bits, 20, &h->ref, pool + ck_min_u64(n, 100));
    tu_set_phase("policy %s: %llu present and 20 new keys, up to 4 copies each",
                 ck_policy_names[p], (unsigned long long)ck_min_u64(n, 100));
    ck_map_insert_repeats(rng, h, pool, pool_n, 4, ck_policies[p]);
    tu_check_find(h, pool, pool_n, TU_FIND_VALUES | TU_FIND_FOUND);
    free(pool);
  }
  tu_set_phase("after the policy batches");
  tu_check_all(h);
  free(erase_keys);
  free(absent);
}

/* ---------------------------------------------------------------------------------------- */
/* Compacting tables: a reference of key -> id and id -> key                                 */
/* ---------------------------------------------------------------------------------------- */

typedef struct ck_compact {
  gh_table *table;
  unsigned key_bits;
  unsigned id_bits;
  tu_ref ids;           /* key -> its id (a 64-bit value) */
  uint64_t *keys_by_id; /* id -> key */
  uint64_t size;        /* distinct keys = the next id */
  uint64_t room;
  int broken;           /* ids could not be learned: later comparisons would only repeat it */
} ck_compact;

static int ck_compact_create(ck_compact *cc, const gh_config *cfg) {
  gh_status st;
  gh_config eff;
  memset(cc, 0, sizeof *cc);
  st = gh_create(cfg, &cc->table);
  if (!CHECK(st == GH_OK && cc->table != NULL, "gh_create returned %s: \"%s\"",
             gh_status_name(st), gh_last_create_error())) {
    cc->table = NULL;
    return 0;
  }
  memset(&eff, 0, sizeof eff);
  CHECK_OK(cc->table, gh_get_config(cc->table, &eff));
  CHECK(eff.variant == GH_VARIANT_COMPACTING, "effective variant %d", (int)eff.variant);
  cc->key_bits = cfg->key_bits;
  cc->id_bits = cfg->value_bits;
  tu_ref_init(&cc->ids, cc->key_bits, 64);
  cc->room = 64;
  cc->keys_by_id = (uint64_t *)tu_xmalloc((size_t)cc->room * sizeof *cc->keys_by_id);
  CHECK_OK(cc->table, gh_validate(cc->table));
  return 1;
}

/* gh_clear: no keys left, so the next keys get the ids from 0 again (ids stay below the size). */
static void ck_compact_clear(ck_compact *cc) {
  if (CHECK_OK(cc->table, gh_clear(cc->table, NULL))) {
    ck_no_error_text(cc->table, "gh_clear");
    tu_ref_clear(&cc->ids);
    cc->size = 0;
  } else {
    cc->broken = 1;
  }
}

static void ck_compact_destroy(ck_compact *cc) {
  gh_destroy(cc->table);
  cc->table = NULL;
  tu_ref_free(&cc->ids);
  free(cc->keys_by_id);
  cc->keys_by_id = NULL;
}

/* gh_find with values_out (ids), found_out and a default; returns 1 on GH_OK. */
static int ck_compact_find(ck_compact *cc, const uint64_t *keys, uint64_t n, uint64_t *ids,
                           uint8_t *found, uint64_t default_id) {
  size_t ib = cc->id_bits / 8;
  void *packed = tu_pack(keys, n, cc->key_bits);
  void *packed_default = tu_pack(&default_id, 1, cc->id_bits);
  void *out = tu_xmalloc((size_t)n * ib);
  int ok;
  memset(out, 0xA5, (size_t)n * ib);
  memset(found, 0xA5, (size_t)n);
  ok = CHECK_OK(cc->table, gh_find(cc->table, packed, n, out, found, packed_default, NULL));
  if (ok) {
    ck_no_error_text(cc->table, "gh_find");
    tu_unpack(out, n, cc->id_bits, ids);
  }
  free(out);
  free(packed_default);
  free(packed);
  return ok;
}

/* The keys of fresh[0, nfresh) (new to the table, in no particular order) got the ids
 * [size, size + nfresh): each exactly one of them. */
static void ck_compact_learn(ck_compact *cc, const uint64_t *fresh, uint64_t nfresh) {
  uint64_t old = cc->size, size = UINT64_MAX, i;
  uint64_t *ids = (uint64_t *)tu_xmalloc((size_t)(nfresh + 1) * sizeof *ids);
  uint8_t *found = (uint8_t *)tu_xmalloc((size_t)nfresh + 1);
  uint8_t *taken = (uint8_t *)calloc((size_t)nfresh + 1, 1);
  REQUIRE(taken != NULL, "out of memory");
  if (CHECK_OK(cc->table, gh_size(cc->table, &size))) {
    if (!CHECK(size == old + nfresh, "gh_size %llu after the batch: %llu keys before and %llu "
               "new ones", (unsigned long long)size, (unsigned long long)old,
               (unsigned long long)nfresh))
      cc->broken = 1;
  }
  if (old + nfresh > cc->room) {
    while (old + nfresh > cc->room) cc->room *= 2;
    cc->keys_by_id = (uint64_t *)realloc(cc->keys_by_id, (size_t)cc->room * sizeof(uint64_t));
    REQUIRE(cc->keys_by_id != NULL, "out of memory");
  }
  if (nfresh > 0 && ck_compact_find(cc, fresh, nfresh, ids, found, 0)) {
    for (i = 0; i < nfresh; ++i) {
      if (!CHECK(found[i] == 1, "new key 0x%llx not found after the insert",
                 (unsigned long long)fresh[i]) ||
          !CHECK(ids[i] >= old && ids[i] < old + nfresh,
                 "new key 0x%llx got id %llu; the new keys should have the ids [%llu, %llu)",
                 (unsigned long long)fresh[i], (unsigned long long)ids[i],
                 (unsigned long long)old, (unsigned long long)(old + nfresh)) ||
          !CHECK(!taken[ids[i] - old], "id %llu given to two keys (again to 0x%llx)",
                 (unsigned long long)ids[i], (unsigned long long)fresh[i])) {
        cc->broken = 1;
        continue;
      }
      taken[ids[i] - old] = 1;
      cc->keys_by_id[ids[i]] = fresh[i];
      tu_ref_insert(&cc->ids, &fresh[i], &ids[i], 1, GH_OVERWRITE, NULL);
    }
  } else if (nfresh > 0) {
    cc->broken = 1;
  }
  cc->size = old + nfresh;
  free(taken);
  free(found);
  free(ids);
}

/* The keys of keys[0, n) that are new to the table, each once, in batch order. */
static uint64_t ck_compact_fresh(const ck_compact *cc, const uint64_t *keys, uint64_t n,
                                 uint64_t *fresh) {
  tu_ref seen;
  uint64_t nfresh = 0, i;
  tu_ref_init(&seen, cc->key_bits, 0);
  for (i = 0; i < n; ++i) {
    if (tu_ref_contains(&cc->ids, keys[i]) || tu_ref_contains(&seen, keys[i])) continue;
    tu_ref_insert(&seen, &keys[i], NULL, 1, GH_KEEP_FIRST, NULL);
    fresh[nfresh++] = keys[i];
  }
  tu_ref_free(&seen);
  return nfresh;
}

static void ck_compact_insert(ck_compact *cc, const uint64_t *keys, uint64_t n) {
  void *packed = tu_pack(keys, n, cc->key_bits);
  uint8_t *failed = (uint8_t *)tu_xmalloc((size_t)n + 1);
  uint64_t *fresh = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *fresh);
  uint64_t nfresh = ck_compact_fresh(cc, keys, n, fresh), i;
  memset(failed, 0xA5, (size_t)n);
  if (CHECK_OK(cc->table, gh_insert(cc->table, packed, NULL, n, GH_KEEP_FIRST, failed, NULL))) {
    ck_no_error_text(cc->table, "gh_insert");
    for (i = 0; i < n; ++i) {
      if (!CHECK(failed[i] == 0, "insert returned GH_OK but failed_out[%llu] = %u",
                 (unsigned long long)i, failed[i]))
        break;
    }
    ck_compact_learn(cc, fresh, nfresh);
  } else {
    cc->broken = 1;
  }
  free(fresh);
  free(failed);
  free(packed);
}

/* Everything a compacting table must show: size, key -> id for every key, id -> key for every
 * id, the exported (key, id) pairs a bijection onto [0, size), absent keys absent, the counters,
 * validate. */
static void ck_compact_check(tu_rng *rng, ck_compact *cc) {
  uint64_t size = UINT64_MAX, n = cc->size, i, count = UINT64_MAX;
  uint64_t n_absent = 64, default_id = 0x5A5A5A5A5A5A5A5Aull & tu_mask(cc->id_bits);
  uint64_t *ids, *order, *keys_back, *absent;
  uint8_t *found, *seen;
  size_t kb = cc->key_bits / 8, ib = cc->id_bits / 8;
  unsigned char *ek, *ev;
  void *packed_ids, *keys_out;
  if (cc->broken) return;
  ids = (uint64_t *)tu_xmalloc((size_t)(n + n_absent + 1) * sizeof *ids);
  found = (uint8_t *)tu_xmalloc((size_t)(n + n_absent + 1));

  if (CHECK_OK(cc->table, gh_size(cc->table, &size)))
    CHECK(size == n, "gh_size %llu, %llu distinct keys inserted", (unsigned long long)size,
          (unsigned long long)n);

  /* key -> id */
  if (n > 0 && ck_compact_find(cc, cc->keys_by_id, n, ids, found, default_id)) {
    for (i = 0; i < n; ++i) {
      if (!CHECK(found[i] == 1 && ids[i] == i, "key 0x%llx: found %u id %llu, expected id %llu "
                 "(ids never change)", (unsigned long long)cc->keys_by_id[i], found[i],
                 (unsigned long long)ids[i], (unsigned long long)i))
        break;
    }
  }

  /* id -> key, the ids in random order and some twice */
  order = (uint64_t *)tu_xmalloc((size_t)(n + 17) * sizeof *order);
  for (i = 0; i < n; ++i) order[i] = i;
  for (i = 0; i < 16 && n > 0; ++i) order[n + i] = tu_below(rng, n);
  tu_shuffle(rng, order, n > 0 ? n + 16 : 0);
  if (n > 0) {
    keys_back = (uint64_t *)tu_xmalloc((size_t)(n + 16) * sizeof *keys_back);
    packed_ids = tu_pack(order, n + 16, cc->id_bits);
    keys_out = tu_xmalloc((size_t)(n + 16) * kb);
    memset(keys_out, 0xA5, (size_t)(n + 16) * kb);
    if (CHECK_OK(cc->table, gh_keys_of_ids(cc->table, packed_ids, n + 16, keys_out, NULL))) {
      ck_no_error_text(cc->table, "gh_keys_of_ids");
      tu_unpack(keys_out, n + 16, cc->key_bits, keys_back);
      for (i = 0; i < n + 16; ++i) {
        if (!CHECK(keys_back[i] == cc->keys_by_id[order[i]],
                   "gh_keys_of_ids: id %llu gives key 0x%llx, it belongs to 0x%llx",
                   (unsigned long long)order[i], (unsigned long long)keys_back[i],
                   (unsigned long long)cc->keys_by_id[order[i]]))
          break;
      }
    }
    free(keys_out);
    free(packed_ids);
    free(keys_back);
  }
  free(order);

  /* export: (key, id) pairs, each id once */
  ek = (unsigned char *)tu_xmalloc((size_t)(n + 2) * kb);
  ev = (unsigned char *)tu_xmalloc((size_t)(n + 2) * ib);
  memset(ek, 0xA5, (size_t)(n + 2) * kb);
  memset(ev, 0xA5, (size_t)(n + 2) * ib);
  seen = (uint8_t *)calloc((size_t)n + 1, 1);
  REQUIRE(seen != NULL, "out of memory");
  if (CHECK_OK(cc->table, gh_export(cc->table, ek, ev, n + 2, &count, NULL)) &&
      CHECK(count == n, "export wrote %llu pairs, the table holds %llu keys",
            (unsigned long long)count, (unsigned long long)n)) {
    uint64_t *xk = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *xk);
    uint64_t *xv = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *xv);
    ck_no_error_text(cc->table, "gh_export");
    tu_unpack(ek, n, cc->key_bits, xk);
    tu_unpack(ev, n, cc->id_bits, xv);
    for (i = 0; i < n; ++i) {
      if (!CHECK(xv[i] < n && !seen[xv[i]] && cc->keys_by_id[xv[i]] == xk[i],
                 "export pair %llu: key 0x%llx id %llu (%s)", (unsigned long long)i,
                 (unsigned long long)xk[i], (unsigned long long)xv[i],
                 xv[i] >= n ? "id out of range"
                            : seen[xv[i]] ? "id exported twice" : "the id belongs to another key"))
        break;
      seen[xv[i]] = 1;
    }
    for (i = n * kb; i < (n + 2) * kb; ++i) {
      if (!CHECK(ek[i] == 0xA5, "export wrote keys_out past count")) break;
    }
    free(xv);
    free(xk);
  }
  free(seen);
  free(ev);
  free(ek);

  /* absent keys */
  absent = (uint64_t *)tu_xmalloc((size_t)n_absent * sizeof *absent);
  tu_gen_unique_keys(rng, cc->key_bits, n_absent, &cc->ids, absent);
  if (ck_compact_find(cc, absent, n_absent, ids, found, default_id)) {
    for (i = 0; i < n_absent; ++i) {
      if (!CHECK(found[i] == 0 && ids[i] == default_id,
                 "absent key 0x%llx: found %u id %llu (default %llu)",
                 (unsigned long long)absent[i], found[i], (unsigned long long)ids[i],
                 (unsigned long long)default_id))
        break;
    }
  }
  free(absent);

  ck_check_stats(cc->table, n, n);
  if (CHECK_OK(cc->table, gh_validate(cc->table))) ck_no_error_text(cc->table, "gh_validate");
  free(found);
  free(ids);
}

/* ---------------------------------------------------------------------------------------- */
/* Multi-value tables: a multiset of (key, value) pairs                                      */
/* ---------------------------------------------------------------------------------------- */

typedef struct ck_pair {
  uint64_t key;
  uint64_t value;
} ck_pair;

static int ck_pair_cmp(const void *a, const void *b) {
  const ck_pair *x = (const ck_pair *)a, *y = (const ck_pair *)b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->value < y->value ? -1 : x->value > y->value;
}

static int ck_u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct ck_multi {
  gh_table *table;
  unsigned key_bits;
  unsigned value_bits;
  ck_pair *pairs; /* every pair inserted and not erased, in no order */
  uint64_t n;
  uint64_t room;
  tu_ref keys;    /* the distinct keys present */
} ck_multi;

static int ck_multi_create(ck_multi *cm, const gh_config *cfg) {
  gh_status st;
  gh_config eff;
  memset(cm, 0, sizeof *cm);
  st = gh_create(cfg, &cm->table);
  if (!CHECK(st == GH_OK && cm->table != NULL, "gh_create returned %s: \"%s\"",
             gh_status_name(st), gh_last_create_error())) {
    cm->table = NULL;
    return 0;
  }
  memset(&eff, 0, sizeof eff);
  CHECK_OK(cm->table, gh_get_config(cm->table, &eff));
  CHECK(eff.variant == GH_VARIANT_MULTIVALUE, "effective variant %d", (int)eff.variant);
  cm->key_bits = cfg->key_bits;
  cm->value_bits = cfg->value_bits;
  cm->room = 64;
  cm->pairs = (ck_pair *)tu_xmalloc((size_t)cm->room * sizeof *cm->pairs);
  tu_ref_init(&cm->keys, cm->key_bits, 0);
  CHECK_OK(cm->table, gh_validate(cm->table));
  return 1;
}

static void ck_multi_clear(ck_multi *cm) {
  if (CHECK_OK(cm->table, gh_clear(cm->table, NULL))) {
    ck_no_error_text(cm->table, "gh_clear");
    cm->n = 0;
    tu_ref_clear(&cm->keys);
  }
}

static void ck_multi_destroy(ck_multi *cm) {
  gh_destroy(cm->table);
  cm->table = NULL;
  free(cm->pairs);
  cm->pairs = NULL;
  tu_ref_free(&cm->keys);
}

static void ck_multi_insert(ck_multi *cm, const uint64_t *keys, const uint64_t *values,
                            uint64_t n) {
  void *pk = tu_pack(keys, n, cm->key_bits), *pv = tu_pack(values, n, cm->value_bits);
  uint8_t *failed = (uint8_t *)tu_xmalloc((size_t)n + 1);
  uint64_t i;
  memset(failed, 0xA5, (size_t)n);
  if (CHECK_OK(cm->table, gh_insert(cm->table, pk, pv, n, GH_APPEND, failed, NULL))) {
    ck_no_error_text(cm->table, "gh_insert");
    for (i = 0; i < n; ++i) {
      if (!CHECK(failed[i] == 0, "insert returned GH_OK but failed_out[%llu] = %u",
                 (unsigned long long)i, failed[i]))
        break;
    }
    if (cm->n + n > cm->room) {
      while (cm->n + n > cm->room) cm->room *= 2;
      cm->pairs = (ck_pair *)realloc(cm->pairs, (size_t)cm->room * sizeof *cm->pairs);
      REQUIRE(cm->pairs != NULL, "out of memory");
    }
    for (i = 0; i < n; ++i) {
      cm->pairs[cm->n].key = keys[i];
      cm->pairs[cm->n].value = values[i] & tu_mask(cm->value_bits);
      ++cm->n;
    }
    tu_ref_insert(&cm->keys, keys, NULL, n, GH_KEEP_FIRST, NULL);
  }
  free(failed);
  free(pv);
  free(pk);
}

static void ck_multi_erase(ck_multi *cm, const uint64_t *keys, uint64_t n) {
  void *pk = tu_pack(keys, n, cm->key_bits);
  uint8_t *erased = (uint8_t *)tu_xmalloc((size_t)n + 1);
  uint64_t count = 0xBADC0FFEEull, expected, i, kept = 0;
  tu_ref present, flagged;
  tu_ref_init(&present, cm->key_bits, 0);
  tu_ref_init(&flagged, cm->key_bits, 0);
  for (i = 0; i < n; ++i) {
    if (tu_ref_contains(&cm->keys, keys[i]))
      tu_ref_insert(&present, &keys[i], NULL, 1, GH_KEEP_FIRST, NULL);
  }
  expected = tu_ref_size(&present);
  memset(erased, 0xA5, (size_t)n);
  if (CHECK_OK(cm->table, gh_erase(cm->table, pk, n, erased, &count, NULL))) {
    ck_no_error_text(cm->table, "gh_erase");
    for (i = 0; i < n; ++i) {
      if (erased[i] == 1) {
        CHECK(tu_ref_contains(&present, keys[i]) && !tu_ref_contains(&flagged, keys[i]),
              "erased_out flags key 0x%llx at position %llu: %s", (unsigned long long)keys[i],
              (unsigned long long)i,
              tu_ref_contains(&present, keys[i]) ? "flagged twice" : "it was absent");
        tu_ref_insert(&flagged, &keys[i], NULL, 1, GH_KEEP_FIRST, NULL);
      } else {
        CHECK(erased[i] == 0, "erased_out[%llu] = %u: not written", (unsigned long long)i,
              erased[i]);
      }
    }
    CHECK(tu_ref_size(&flagged) == expected && count == expected,
          "erase flagged %llu keys and counted %llu; %llu distinct keys were present",
          (unsigned long long)tu_ref_size(&flagged), (unsigned long long)count,
          (unsigned long long)expected);
    /* Every value of an erased key goes. */
    for (i = 0; i < cm->n; ++i) {
      if (!tu_ref_contains(&present, cm->pairs[i].key)) cm->pairs[kept++] = cm->pairs[i];
    }
    cm->n = kept;
    tu_ref_erase(&cm->keys, keys, n);
  }
  tu_ref_free(&flagged);
  tu_ref_free(&present);
  free(erased);
  free(pk);
}

/* The pairs sorted by (key, value), malloc'd. */
static ck_pair *ck_multi_sorted(const ck_multi *cm) {
  ck_pair *s = (ck_pair *)tu_xmalloc((size_t)(cm->n + 1) * sizeof *s);
  if (cm->n > 0) memcpy(s, cm->pairs, (size_t)cm->n * sizeof *s);
  qsort(s, (size_t)cm->n, sizeof *s, ck_pair_cmp);
  return s;
}

/* [*lo, *hi): the pairs of key in sorted. */
static void ck_range(const ck_pair *sorted, uint64_t n, uint64_t key, uint64_t *lo,
                     uint64_t *hi) {
  uint64_t a = 0, b = n;
  while (a < b) {
    uint64_t m = a + (b - a) / 2;
    if (sorted[m].key < key) a = m + 1;
    else b = m;
  }
  *lo = a;
  b = n;
  while (a < b) {
    uint64_t m = a + (b - a) / 2;
    if (sorted[m].key <= key) a = m + 1;
    else b = m;
  }
  *hi = a;
}

/* gh_count, gh_find_all (values compared as multisets per key), gh_find and gh_contains for the
 * query keys q[0, nq), which may repeat and include absent keys. */
static void ck_multi_query(ck_multi *cm, const uint64_t *q, uint64_t nq) {
  ck_pair *sorted = ck_multi_sorted(cm);
  uint64_t *want = (uint64_t *)tu_xmalloc((size_t)(nq + 1) * sizeof *want);
  uint64_t *counts = (uint64_t *)tu_xmalloc((size_t)(nq + 1) * sizeof *counts);
  uint64_t *offsets = (uint64_t *)tu_xmalloc((size_t)(nq + 2) * sizeof *offsets);
  uint64_t *starts = (uint64_t *)tu_xmalloc((size_t)(nq + 1) * sizeof *starts);
  uint64_t total_want = 0, total = 0xBADull, i, j, vb = cm->value_bits / 8;
  uint64_t default_value = 0x5A5A5A5A5A5A5A5Aull & tu_mask(cm->value_bits);
  void *pk = tu_pack(q, nq, cm->key_bits), *values_out, *packed_default;
  uint64_t *values;
  uint8_t *found = (uint8_t *)tu_xmalloc((size_t)nq + 1);
  for (i = 0; i < nq; ++i) {
    uint64_t lo, hi;
    ck_range(sorted, cm->n, q[i], &lo, &hi);
    starts[i] = lo;
    want[i] = hi - lo;
    total_want += want[i];
  }

  tu_set_phase("%s", "multivalue query: gh_count");
  memset(counts, 0xA5, (size_t)nq * sizeof *counts);
  if (CHECK_OK(cm->table, gh_count(cm->table, pk, nq, counts, &total, NULL))) {
    ck_no_error_text(cm->table, "gh_count");
    for (i = 0; i < nq; ++i) {
      if (!CHECK(counts[i] == want[i], "gh_count: key 0x%llx (position %llu) has %llu values, "
                 "expected %llu", (unsigned long long)q[i], (unsigned long long)i,
                 (unsigned long long)counts[i], (unsigned long long)want[i]))
        break;
    }
    CHECK(total == total_want, "gh_count total %llu, expected %llu", (unsigned long long)total,
          (unsigned long long)total_want);
  }

  tu_set_phase("%s", "multivalue query: gh_find_all");
  values_out = tu_xmalloc((size_t)(total_want + 2) * vb);
  memset(values_out, 0xA5, (size_t)(total_want + 2) * vb);
  memset(offsets, 0xA5, (size_t)(nq + 2) * sizeof *offsets);
  values = (uint64_t *)tu_xmalloc((size_t)(total_want + 2) * sizeof *values);
  if (CHECK_OK(cm->table,
               gh_find_all(cm->table, pk, nq, offsets, values_out, total_want, NULL))) {
    int offsets_ok = CHECK(offsets[0] == 0, "find_all offsets[0] = %llu", (unsigned long long)offsets[0]);
    ck_no_error_text(cm->table, "gh_find_all");
    for (i = 0; i < nq && offsets_ok; ++i) {
      offsets_ok = CHECK(offsets[i + 1] >= offsets[i] && offsets[i + 1] - offsets[i] == want[i],
                         "find_all offsets[%llu] = %llu, offsets[%llu] = %llu: key 0x%llx has "
                         "%llu values", (unsigned long long)i, (unsigned long long)offsets[i],
                         (unsigned long long)(i + 1), (unsigned long long)offsets[i + 1],
                         (unsigned long long)q[i], (unsigned long long)want[i]);
    }
    CHECK(offsets[nq + 1] == 0xA5A5A5A5A5A5A5A5ull, "find_all wrote offsets past n + 1 entries");
    if (offsets_ok) {
      tu_unpack(values_out, total_want, cm->value_bits, values);
      for (i = 0; i < nq; ++i) {
        uint64_t *slice = values + offsets[i];
        qsort(slice, (size_t)want[i], sizeof *slice, ck_u64_cmp);
        for (j = 0; j < want[i]; ++j) {
          if (!CHECK(slice[j] == sorted[starts[i] + j].value,
                     "find_all: the values of key 0x%llx (position %llu) differ from the "
                     "inserted multiset at sorted index %llu: %llu, expected %llu",
                     (unsigned long long)q[i], (unsigned long long)i, (unsigned long long)j,
                     (unsigned long long)slice[j],
                     (unsigned long long)sorted[starts[i] + j].value))
            break;
        }
      }
      for (i = total_want * vb; i < (total_want + 2) * vb; ++i) {
        if (!CHECK(((unsigned char *)values_out)[i] == 0xA5,
                   "find_all wrote values past values_capacity"))
          break;
      }
    }
  }

  tu_set_phase("%s", "multivalue query: gh_find and gh_contains");
  packed_default = tu_pack(&default_value, 1, cm->value_bits);
  free(values_out);
  values_out = tu_xmalloc((size_t)(nq + 1) * vb);
  memset(found, 0xA5, (size_t)nq);
  if (CHECK_OK(cm->table, gh_find(cm->table, pk, nq, values_out, found, packed_default, NULL))) {
    uint64_t *v = (uint64_t *)tu_xmalloc((size_t)(nq + 1) * sizeof *v);
    tu_unpack(values_out, nq, cm->value_bits, v);
    for (i = 0; i < nq; ++i) {
      int ok = found[i] == (want[i] > 0);
      if (ok && want[i] > 0) {
        ck_pair probe;
        probe.key = q[i];
        probe.value = v[i];
        ok = bsearch(&probe, sorted + starts[i], (size_t)want[i], sizeof probe, ck_pair_cmp) !=
             NULL;
      } else if (ok) {
        ok = v[i] == default_value;
      }
      if (!CHECK(ok, "find: key 0x%llx (position %llu, %llu values) gave found %u value %llu",
                 (unsigned long long)q[i], (unsigned long long)i, (unsigned long long)want[i],
                 found[i], (unsigned long long)v[i]))
        break;
    }
    free(v);
  }
  memset(found, 0xA5, (size_t)nq);
  if (CHECK_OK(cm->table, gh_contains(cm->table, pk, nq, found, NULL))) {
    for (i = 0; i < nq; ++i) {
      if (!CHECK(found[i] == (want[i] > 0), "contains: key 0x%llx gave %u, it has %llu values",
                 (unsigned long long)q[i], found[i], (unsigned long long)want[i]))
        break;
    }
  }
  free(packed_default);
  free(values_out);
  free(values);
  free(found);
  free(pk);
  free(starts);
  free(offsets);
  free(counts);
  free(want);
  free(sorted);
}

/* size, counters, export (the same multiset of pairs), validate, and every query for the
 * distinct keys (shuffled, some twice) plus absent ones. */
static void ck_multi_check(tu_rng *rng, ck_multi *cm) {
  uint64_t size = UINT64_MAX, count = UINT64_MAX, distinct = tu_ref_size(&cm->keys), i;
  uint64_t kb = cm->key_bits / 8, vb = cm->value_bits / 8, nq, n_absent = 32;
  unsigned char *ek = (unsigned char *)tu_xmalloc((size_t)(cm->n + 3) * kb);
  unsigned char *ev = (unsigned char *)tu_xmalloc((size_t)(cm->n + 3) * vb);
  uint64_t *q = (uint64_t *)tu_xmalloc((size_t)(distinct + 16 + n_absent + 1) * sizeof *q);
  ck_pair *sorted = ck_multi_sorted(cm);
  const char *phase_note = "multivalue: size, export, counters, validate";
  tu_set_phase("%s", phase_note);
  if (CHECK_OK(cm->table, gh_size(cm->table, &size)))
    CHECK(size == cm->n, "gh_size %llu, %llu pairs inserted", (unsigned long long)size,
          (unsigned long long)cm->n);
  ck_check_stats(cm->table, cm->n, distinct);

  memset(ek, 0xA5, (size_t)(cm->n + 3) * kb);
  memset(ev, 0xA5, (size_t)(cm->n + 3) * vb);
  if (CHECK_OK(cm->table, gh_export(cm->table, ek, ev, cm->n + 3, &count, NULL)) &&
      CHECK(count == cm->n, "export wrote %llu pairs, %llu inserted", (unsigned long long)count,
            (unsigned long long)cm->n)) {
    ck_pair *got = (ck_pair *)tu_xmalloc((size_t)(count + 1) * sizeof *got);
    uint64_t *xk = (uint64_t *)tu_xmalloc((size_t)(count + 1) * sizeof *xk);
    uint64_t *xv = (uint64_t *)tu_xmalloc((size_t)(count + 1) * sizeof *xv);
    tu_unpack(ek, count, cm->key_bits, xk);
    tu_unpack(ev, count, cm->value_bits, xv);
    for (i = 0; i < count; ++i) {
      got[i].key = xk[i];
      got[i].value = xv[i];
    }
    qsort(got, (size_t)count, sizeof *got, ck_pair_cmp);
    for (i = 0; i < count; ++i) {
      if (!CHECK(got[i].key == sorted[i].key && got[i].value == sorted[i].value,
                 "export differs from the inserted pairs at sorted index %llu: (0x%llx, %llu), "
                 "expected (0x%llx, %llu)", (unsigned long long)i,
                 (unsigned long long)got[i].key, (unsigned long long)got[i].value,
                 (unsigned long long)sorted[i].key, (unsigned long long)sorted[i].value))
        break;
    }
    for (i = count * kb; i < (count + 3) * kb; ++i) {
      if (!CHECK(ek[i] == 0xA5, "export wrote keys_out past count")) break;
    }
    free(xv);
    free(xk);
    free(got);
  }
  if (CHECK_OK(cm->table, gh_validate(cm->table))) ck_no_error_text(cm->table, "gh_validate");

  nq = tu_ref_keys(&cm->keys, q);
  for (i = 0; i < 16 && distinct > 0; ++i) q[nq++] = q[tu_below(rng, distinct)];
  tu_gen_unique_keys(rng, cm->key_bits, n_absent, &cm->keys, q + nq);
  nq += n_absent;
  tu_shuffle(rng, q, nq);
  ck_multi_query(cm, q, nq);
  tu_set_phase("%s", "");
  free(sorted);
  free(q);
  free(ev);
  free(ek);
}

/* Values for multi-value inserts: often tiny (so identical pairs occur), sometimes any. */
static void ck_multi_values(tu_rng *rng, unsigned value_bits, uint64_t n, uint64_t *out) {
  uint64_t i;
  for (i = 0; i < n; ++i) {
    out[i] = tu_below(rng, 3) == 0 ? tu_next(rng) & tu_mask(value_bits) : tu_below(rng, 3);
  }
}

/* ---------------------------------------------------------------------------------------- */
/* Part: restarts                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* A map / set at the smallest table factor of each d, filled to its capacity and then past it:
 * builds fail near the load threshold and restart; every key must survive. */
static void restarts_min_factor(void) {
  uint64_t total_restarts = 0, total_grows = 0;
  unsigned d;
  for (d = 2; d <= 5; ++d) {
    static const unsigned value_bits[4] = {32, 0, 64, 32};
    uint64_t case_seed = tu_mix_seed(ck_seed, 1, d, 0), n = 3000, *keys, *more;
    tu_rng rng = tu_rng_make(case_seed);
    gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, d % 2 ? 64 : 32, value_bits[d - 2], n, d,
                              (gh_hash_family)(d % 2), ck_min_factor_of(d));
    tu_table h;
    gh_stats s;
    unsigned b;
    ck_context("restarts at the smallest table factor", &cfg, case_seed);
    tu_set_phase("create");
    if (!tu_table_create(&h, &cfg)) continue;
    keys = ck_keys_with_specials(&rng, h.key_bits, n);
    ck_map_fill(&rng, &h, keys, n, 1);
    tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
    s = ck_stats(h.table);
    printf("  d=%u factor %.2f: %llu keys in one batch: restarts %llu grows %llu slots %llu\n",
           d, cfg.table_factor, (unsigned long long)n, (unsigned long long)s.restarts,
           (unsigned long long)s.grows, (unsigned long long)s.slots);
    /* Past the capacity in six batches: the table grows and rebuilds at the same factor. */
    more = (uint64_t *)tu_xmalloc((size_t)n * sizeof *more);
    ck_unique_keys(&rng, h.key_bits, n, &h.ref, more);
    for (b = 0; b < 6; ++b) {
      uint64_t *values = (uint64_t *)tu_xmalloc(500 * sizeof *values);
      tu_gen_values(&rng, h.value_bits, 500, values);
      tu_set_phase("grow: batch %u of 6 (500 new keys)", b + 1);
      tu_insert(&h, more + 500 * b, values, 500, GH_OVERWRITE, 0, NULL);
      tu_check_all(&h);
      free(values);
    }
    tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
    tu_check_find(&h, more, n, TU_FIND_VALUES | TU_FIND_FOUND);
    s = ck_stats(h.table);
    CHECK(s.grows > 0, "%llu keys in a table sized for %llu, yet gh_stats.grows = 0",
          (unsigned long long)(2 * n), (unsigned long long)n);
    printf("  d=%u factor %.2f: after growing to %llu keys: restarts %llu grows %llu slots "
           "%llu\n", d, cfg.table_factor, (unsigned long long)(2 * n),
           (unsigned long long)s.restarts, (unsigned long long)s.grows,
           (unsigned long long)s.slots);
    total_restarts += s.restarts;
    total_grows += s.grows;
    free(more);
    free(keys);
    tu_table_destroy(&h);
  }
  tu_set_context("cuckoo restarts at the smallest table factor, over d = 2..5\n  rerun: %s %s "
                 "--part %s --seed 0x%016llx", ck_program, tu_backend_name(ck_backend), ck_part,
                 (unsigned long long)ck_seed);
  /* At the smallest practical factors some build among the eight must hit the eviction limit. */
  CHECK(total_restarts > 0, "no build restarted at the smallest table factors (grows %llu): "
        "the eviction limit or the restart counter does not work",
        (unsigned long long)total_grows);
}

/* Degenerate constants forced through the hook, on a fresh table and before a batch that makes
 * the table grow, for each variant. Every forced attempt is a restart; nothing is lost. */
static void restarts_forced(void) {
  static const gh_variant variants[] = {GH_VARIANT_MAP, GH_VARIANT_MAP, GH_VARIANT_COMPACTING,
                                        GH_VARIANT_MULTIVALUE};
  static const unsigned value_bits[] = {32, 0, 64, 32};
  static const unsigned forced[] = {1, 3, 12};
  size_t v, f;
  for (v = 0; v < 4; ++v) {
    for (f = 0; f < 3; ++f) {
      uint64_t case_seed = tu_mix_seed(ck_seed, 2, v, f), cap = 1000, n1 = 800, n2 = 700, i;
      tu_rng rng = tu_rng_make(case_seed);
      unsigned d = 2 + (unsigned)tu_below(&rng, 4);
      gh_config cfg = ck_config(&rng, variants[v], (v + f) % 2 ? 64 : 32, value_bits[v], cap, d,
                                (gh_hash_family)tu_below(&rng, 2), ck_min_factor_of(d) + 0.2);
      uint64_t *keys = ck_keys_with_specials(&rng, cfg.key_bits, n1 + n2);
      uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(n1 + n2) * sizeof *values);
      gh_stats before, after;
      tu_table h;
      ck_compact cc;
      ck_multi cm;
      gh_table *table = NULL;
      unsigned round;
      memset(&h, 0, sizeof h);
      memset(&cc, 0, sizeof cc);
      memset(&cm, 0, sizeof cm);
      ck_context("forced restarts (degenerate hash constants)", &cfg, case_seed);
      tu_set_phase("create");
      if (variants[v] == GH_VARIANT_MAP) {
        if (!tu_table_create(&h, &cfg)) goto next;
        table = h.table;
      } else if (variants[v] == GH_VARIANT_COMPACTING) {
        if (!ck_compact_create(&cc, &cfg)) goto next;
        table = cc.table;
      } else {
        if (!ck_multi_create(&cm, &cfg)) goto next;
        table = cm.table;
      }
      ck_multi_values(&rng, cfg.value_bits, n1 + n2, values);
      for (round = 0; round < 2; ++round) {
        /* Round 0: the first build of an empty table; round 1: the batch that outgrows it. */
        const uint64_t *bk = keys + (round ? n1 : 0), *bv = values + (round ? n1 : 0);
        uint64_t bn = round ? n2 : n1;
        before = ck_stats(table);
        gh__cuckoo_force_failures(table, forced[f]);
        tu_set_phase("%s with %u forced failures (%llu keys)",
                     round ? "a batch past the capacity" : "the first batch", forced[f],
                     (unsigned long long)bn);
        if (variants[v] == GH_VARIANT_MAP) {
          tu_insert(&h, bk, bv, bn, round ? GH_MAX : GH_OVERWRITE, 0, NULL);
          tu_check_find(&h, keys, n1 + n2, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
          tu_check_all(&h);
        } else if (variants[v] == GH_VARIANT_COMPACTING) {
          ck_compact_insert(&cc, bk, bn);
          ck_compact_check(&rng, &cc);
        } else {
          ck_multi_insert(&cm, bk, bv, bn);
          /* The same keys again with other values: each key then has two. */
          for (i = 0; i < 50; ++i) {
            uint64_t extra_v = tu_next(&rng) & tu_mask(cfg.value_bits);
            ck_multi_insert(&cm, &bk[i], &extra_v, 1);
          }
          ck_multi_check(&rng, &cm);
        }
        after = ck_stats(table);
        CHECK(after.restarts >= before.restarts + forced[f],
              "%u build attempts were forced to fail, but gh_stats.restarts went from %llu to "
              "%llu", forced[f], (unsigned long long)before.restarts,
              (unsigned long long)after.restarts);
        if (round == 1) {
          CHECK(after.grows > before.grows, "%llu keys in a table sized for %llu, but "
                "gh_stats.grows stayed %llu", (unsigned long long)(n1 + n2),
                (unsigned long long)cap, (unsigned long long)after.grows);
        }
      }
      if (variants[v] == GH_VARIANT_MAP) tu_table_destroy(&h);
      else if (variants[v] == GH_VARIANT_COMPACTING) ck_compact_destroy(&cc);
      else ck_multi_destroy(&cm);
    next:
      free(values);
      free(keys);
    }
  }
}

/* ---------------------------------------------------------------------------------------- */
/* Part: functions                                                                           */
/* ---------------------------------------------------------------------------------------- */

static void functions_all(void) {
  static const double extra[] = {0.0, 0.1, 1.0, 3.0};
  unsigned d, family;
  for (d = 2; d <= 5; ++d) {
    for (family = 0; family < 2; ++family) {
      static const unsigned value_bits[3] = {0, 32, 64};
      uint64_t case_seed = tu_mix_seed(ck_seed, 3, d, family), n, *keys, i;
      tu_rng rng = tu_rng_make(case_seed);
      unsigned key_bits = (d + family) % 2 ? 64 : 32;
      double factor = ck_min_factor_of(d) + extra[tu_below(&rng, 4)];
      gh_config cfg;
      tu_table h;
      ck_compact cc;
      ck_multi cm;
      if (d == 5 && family == 1) factor = 16.0; /* the largest factor allowed */
      cfg = ck_config(&rng, GH_VARIANT_MAP, key_bits, value_bits[(d + family) % 3],
                      1500 + tu_below(&rng, 1500), d, (gh_hash_family)family, factor);

      /* map or set */
      ck_context("hash functions and families", &cfg, case_seed);
      tu_set_phase("create");
      if (tu_table_create(&h, &cfg)) {
        n = cfg.capacity * (85 + tu_below(&rng, 30)) / 100; /* 0.85 to 1.15 of the capacity */
        keys = ck_keys_with_specials(&rng, h.key_bits, n);
        ck_map_fill(&rng, &h, keys, n, 2);
        ck_map_workout(&rng, &h, keys, n);
        tu_set_phase("clear, then insert again");
        tu_clear(&h);
        tu_check_all(&h);
        ck_map_fill(&rng, &h, keys, ck_min_u64(n, 500), 1);
        tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
        free(keys);
        tu_table_destroy(&h);
      }

      /* compacting */
      cfg = ck_config(&rng, GH_VARIANT_COMPACTING, key_bits, family ? 64 : 32, 600, d,
                      (gh_hash_family)family, factor);
      ck_context("hash functions and families", &cfg, case_seed);
      tu_set_phase("compacting: two batches with repeats");
      if (ck_compact_create(&cc, &cfg)) {
        uint64_t *pool = ck_keys_with_specials(&rng, key_bits, 500);
        uint64_t *batch = (uint64_t *)tu_xmalloc(500 * 3 * sizeof *batch), m;
        m = tu_gen_repeats(&rng, pool, 300, 3, batch);
        ck_compact_insert(&cc, batch, m);
        ck_compact_check(&rng, &cc);
        m = tu_gen_repeats(&rng, pool + 150, 350, 3, batch);
        ck_compact_insert(&cc, batch, m);
        ck_compact_check(&rng, &cc);
        tu_set_phase("compacting: clear, then keys again from id 0");
        ck_compact_clear(&cc);
        ck_compact_check(&rng, &cc);
        m = tu_gen_repeats(&rng, pool + 100, 200, 2, batch);
        ck_compact_insert(&cc, batch, m);
        ck_compact_check(&rng, &cc);
        free(batch);
        free(pool);
        ck_compact_destroy(&cc);
      }

      /* multi-value */
      cfg = ck_config(&rng, GH_VARIANT_MULTIVALUE, key_bits, family ? 32 : 64, 400, d,
                      (gh_hash_family)family, factor);
      ck_context("hash functions and families", &cfg, case_seed);
      tu_set_phase("multivalue: two batches, then erase");
      if (ck_multi_create(&cm, &cfg)) {
        uint64_t *pool = ck_keys_with_specials(&rng, key_bits, 300);
        uint64_t *batch = (uint64_t *)tu_xmalloc(300 * 4 * sizeof *batch), m;
        uint64_t *values = (uint64_t *)tu_xmalloc(300 * 4 * sizeof *values);
        m = tu_gen_repeats(&rng, pool, 200, 4, batch);
        ck_multi_values(&rng, cfg.value_bits, m, values);
        ck_multi_insert(&cm, batch, values, m);
        ck_multi_check(&rng, &cm);
        m = tu_gen_repeats(&rng, pool + 100, 200, 4, batch);
        ck_multi_values(&rng, cfg.value_bits, m, values);
        ck_multi_insert(&cm, batch, values, m);
        ck_multi_check(&rng, &cm);
        for (i = 0; i < 60; ++i) batch[i] = pool[tu_below(&rng, 300)];
        ck_multi_erase(&cm, batch, 60);
        ck_multi_check(&rng, &cm);
        tu_set_phase("multivalue: clear, then append again");
        ck_multi_clear(&cm);
        ck_multi_check(&rng, &cm);
        m = tu_gen_repeats(&rng, pool + 50, 100, 3, batch);
        ck_multi_values(&rng, cfg.value_bits, m, values);
        ck_multi_insert(&cm, batch, values, m);
        ck_multi_check(&rng, &cm);
        free(values);
        free(batch);
        free(pool);
        ck_multi_destroy(&cm);
      }
    }
  }
}

/* ---------------------------------------------------------------------------------------- */
/* Part: incremental                                                                         */
/* ---------------------------------------------------------------------------------------- */

/* A map or set from a small capacity to several times it, in small batches mixing new keys,
 * present keys and erased keys, with erase batches between; the reference is compared and the
 * table validated after every batch. */
static void incremental_map(unsigned index, unsigned key_bits, unsigned value_bits,
                            uint64_t capacity, unsigned batches, unsigned max_batch) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 4, index, 0), u_n = 0, e_n = 0, b, i;
  tu_rng rng = tu_rng_make(case_seed);
  unsigned d = 2 + (unsigned)tu_below(&rng, 4);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, key_bits, value_bits, capacity, d,
                            (gh_hash_family)tu_below(&rng, 2),
                            ck_min_factor_of(d) + (tu_below(&rng, 2) ? 0.0 : 0.25));
  uint64_t room = (uint64_t)batches * max_batch + 8;
  uint64_t *inserted = (uint64_t *)tu_xmalloc((size_t)room * sizeof *inserted);
  uint64_t *erased = (uint64_t *)tu_xmalloc((size_t)room * sizeof *erased);
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)(max_batch + 8) * sizeof *keys);
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(max_batch + 8) * sizeof *values);
  uint64_t special[8], cap_now = 0;
  size_t n_special = tu_special_keys(key_bits, special);
  gh_stats s;
  tu_table h;
  const unsigned long failures_before = tu_failure_count();
  ck_context("incremental batches past the capacity", &cfg, case_seed);
  tu_set_phase("create");
  if (!tu_table_create(&h, &cfg)) goto out;
  for (b = 0; b < batches; ++b) {
    uint64_t n = 1 + tu_below(&rng, max_batch), n_new = 0, op = tu_below(&rng, 6);
    if (op == 0 && u_n > 0) {
      /* erase: present keys (some twice) and a few absent ones */
      for (i = 0; i < n; ++i) keys[i] = inserted[tu_below(&rng, u_n)];
      keys[0] = special[tu_below(&rng, n_special)];
      tu_set_phase("batch %llu: erase %llu keys", (unsigned long long)b, (unsigned long long)n);
      for (i = 0; i < n; ++i) {
        if (tu_ref_contains(&h.ref, keys[i])) erased[e_n++] = keys[i];
      }
      tu_erase(&h, keys, n);
    } else {
      size_t p = (size_t)tu_below(&rng, 5);
      /* about 2/3 new keys, the rest present or erased ones, with repeats */
      for (i = 0; i < n; ++i) {
        uint64_t pick = tu_below(&rng, 6);
        if (pick < 4 || u_n == 0) {
          ck_unique_keys(&rng, key_bits, 1, &h.ref, &keys[i]);
          ++n_new;
        } else if (pick == 4 || e_n == 0) {
          keys[i] = inserted[tu_below(&rng, u_n)];
        } else {
          keys[i] = erased[tu_below(&rng, e_n)];
        }
      }
      if (tu_below(&rng, 8) == 0) keys[tu_below(&rng, n)] = special[tu_below(&rng, n_special)];
      tu_gen_values(&rng, value_bits, n, values);
      tu_set_phase("batch %llu: insert %llu keys (%llu new, %s), table size %llu",
                   (unsigned long long)b, (unsigned long long)n, (unsigned long long)n_new,
                   ck_policy_names[p], (unsigned long long)tu_ref_size(&h.ref));
      for (i = 0; i < n; ++i) {
        if (!tu_ref_contains(&h.ref, keys[i])) inserted[u_n++] = keys[i];
      }
      tu_insert(&h, keys, values, n, ck_policies[p], 0, NULL);
      tu_check_find(&h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
    }
    tu_check_all(&h);
    if (tu_failure_count() != failures_before) break; /* later batches only repeat it */
  }
  tu_set_phase("after %u batches", batches);
  tu_check_find(&h, inserted, u_n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  tu_check_find(&h, erased, e_n, TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
  s = ck_stats(h.table);
  CHECK_OK(h.table, gh_capacity(h.table, &cap_now));
  CHECK(s.grows > 0 && cap_now > capacity, "%llu keys went into a table sized for %llu: grows "
        "%llu, gh_capacity %llu", (unsigned long long)u_n, (unsigned long long)capacity,
        (unsigned long long)s.grows, (unsigned long long)cap_now);
  printf("  incremental map k%u v%u: capacity %llu -> %llu, %llu keys, restarts %llu grows "
         "%llu\n", key_bits, value_bits, (unsigned long long)capacity,
         (unsigned long long)cap_now, (unsigned long long)tu_ref_size(&h.ref),
         (unsigned long long)s.restarts, (unsigned long long)s.grows);
  tu_table_destroy(&h);
out:
  free(values);
  free(keys);
  free(erased);
  free(inserted);
}

/* One key at a time into a table sized for one key. */
static void incremental_single_keys(unsigned key_bits, unsigned value_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 5, key_bits, value_bits), n = 150, i;
  tu_rng rng = tu_rng_make(case_seed);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, key_bits, value_bits, 1, 4, GH_HASH_MULTIPLY,
                            1.25);
  uint64_t *keys = ck_keys_with_specials(&rng, key_bits, n), value;
  const unsigned long failures_before = tu_failure_count();
  tu_table h;
  ck_context("one key at a time from capacity 1", &cfg, case_seed);
  tu_set_phase("create");
  if (tu_table_create(&h, &cfg)) {
    for (i = 0; i < n; ++i) {
      tu_gen_values(&rng, value_bits, 1, &value);
      tu_set_phase("single key %llu (0x%llx)", (unsigned long long)i,
                   (unsigned long long)keys[i]);
      tu_insert(&h, &keys[i], &value, 1, GH_KEEP_FIRST, 0, NULL);
      tu_check_find(&h, keys, i + 1, TU_FIND_VALUES | TU_FIND_FOUND);
      tu_check_all(&h);
      if (tu_failure_count() != failures_before) break;
    }
    tu_table_destroy(&h);
  }
  free(keys);
}

/* Compacting: ids stay where they are while the table grows batch by batch. */
static void incremental_compacting(unsigned index, unsigned key_bits, unsigned id_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 6, index, 0), b, cap_now = 0;
  tu_rng rng = tu_rng_make(case_seed);
  unsigned d = 2 + (unsigned)tu_below(&rng, 4);
  gh_config cfg = ck_config(&rng, GH_VARIANT_COMPACTING, key_bits, id_bits, 100, d,
                            (gh_hash_family)tu_below(&rng, 2), ck_min_factor_of(d));
  uint64_t *pool = ck_keys_with_specials(&rng, key_bits, 1200);
  uint64_t *batch = (uint64_t *)tu_xmalloc(200 * sizeof *batch);
  uint64_t pool_used = 0;
  gh_stats s;
  ck_compact cc;
  ck_context("incremental compacting batches past the capacity", &cfg, case_seed);
  tu_set_phase("create");
  if (ck_compact_create(&cc, &cfg)) {
    for (b = 0; b < 40 && !cc.broken; ++b) {
      uint64_t n = 1 + tu_below(&rng, 60), i;
      /* new keys from the pool, and keys already given an id */
      for (i = 0; i < n; ++i) {
        if (pool_used < 1200 && (tu_below(&rng, 3) > 0 || pool_used == 0)) {
          batch[i] = pool[pool_used++];
        } else {
          batch[i] = pool[tu_below(&rng, pool_used)];
        }
      }
      tu_set_phase("batch %llu: %llu keys, %llu ids so far", (unsigned long long)b,
                   (unsigned long long)n, (unsigned long long)cc.size);
      ck_compact_insert(&cc, batch, n);
      ck_compact_check(&rng, &cc);
    }
    s = ck_stats(cc.table);
    CHECK_OK(cc.table, gh_capacity(cc.table, &cap_now));
    CHECK(s.grows > 0 && cap_now > 100, "%llu keys in a compacting table sized for 100: grows "
          "%llu, gh_capacity %llu", (unsigned long long)cc.size, (unsigned long long)s.grows,
          (unsigned long long)cap_now);
    printf("  incremental compacting k%u v%u: %llu ids, capacity %llu, restarts %llu grows "
           "%llu\n", key_bits, id_bits, (unsigned long long)cc.size,
           (unsigned long long)cap_now, (unsigned long long)s.restarts,
           (unsigned long long)s.grows);
    ck_compact_destroy(&cc);
  }
  free(batch);
  free(pool);
}

/* Multi-value: batches append; erases drop every value of a key; erased keys come back. */
static void incremental_multivalue(unsigned index, unsigned key_bits, unsigned value_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 7, index, 0), b;
  tu_rng rng = tu_rng_make(case_seed);
  unsigned d = 2 + (unsigned)tu_below(&rng, 4);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MULTIVALUE, key_bits, value_bits, 100, d,
                            (gh_hash_family)tu_below(&rng, 2), ck_min_factor_of(d) + 0.1);
  uint64_t *pool = ck_keys_with_specials(&rng, key_bits, 600);
  uint64_t *batch = (uint64_t *)tu_xmalloc(100 * sizeof *batch);
  uint64_t *values = (uint64_t *)tu_xmalloc(100 * sizeof *values);
  uint64_t pool_used = 0;
  gh_stats s;
  ck_multi cm;
  const unsigned long failures_before = tu_failure_count();
  ck_context("incremental multivalue batches past the capacity", &cfg, case_seed);
  tu_set_phase("create");
  if (ck_multi_create(&cm, &cfg)) {
    for (b = 0; b < 30; ++b) {
      uint64_t n = 1 + tu_below(&rng, 50), i;
      for (i = 0; i < n; ++i) {
        if (pool_used < 600 && (tu_below(&rng, 2) == 0 || pool_used == 0)) {
          batch[i] = pool[pool_used++];
        } else {
          batch[i] = pool[tu_below(&rng, pool_used)];
        }
      }
      if (b % 5 == 4) {
        tu_set_phase("batch %llu: erase %llu keys", (unsigned long long)b, (unsigned long long)n);
        ck_multi_erase(&cm, batch, n);
      } else {
        ck_multi_values(&rng, value_bits, n, values);
        tu_set_phase("batch %llu: append %llu pairs", (unsigned long long)b,
                     (unsigned long long)n);
        ck_multi_insert(&cm, batch, values, n);
      }
      ck_multi_check(&rng, &cm);
      if (tu_failure_count() != failures_before) break;
    }
    s = ck_stats(cm.table);
    printf("  incremental multivalue k%u v%u: %llu pairs of %llu keys, restarts %llu grows "
           "%llu\n", key_bits, value_bits, (unsigned long long)cm.n,
           (unsigned long long)tu_ref_size(&cm.keys), (unsigned long long)s.restarts,
           (unsigned long long)s.grows);
    ck_multi_destroy(&cm);
  }
  free(values);
  free(batch);
  free(pool);
}

static void incremental_all(void) {
  incremental_map(0, 32, 32, 200, 60, 40);
  incremental_map(1, 64, 64, 200, 60, 40);
  incremental_map(2, 64, 0, 150, 60, 30);
  incremental_map(3, 32, 0, 300, 40, 80);
  incremental_single_keys(32, 32);
  incremental_single_keys(64, 0);
  incremental_compacting(0, 32, 32);
  incremental_compacting(1, 64, 64);
  incremental_multivalue(0, 32, 64);
  incremental_multivalue(1, 64, 32);
}

/* ---------------------------------------------------------------------------------------- */
/* Part: multiplicity                                                                        */
/* ---------------------------------------------------------------------------------------- */

static const unsigned ck_multiplicities[5] = {1, 2, 7, 64, 512};

/* Each of pool[0, n) repeated ck_multiplicities[(i + shift) % 5] times, shuffled. */
static uint64_t ck_gen_multiplied(tu_rng *rng, const uint64_t *pool, uint64_t n, unsigned shift,
                                  uint64_t *out) {
  uint64_t m = 0, i, c;
  for (i = 0; i < n; ++i) {
    for (c = 0; c < ck_multiplicities[(i + shift) % 5]; ++c) out[m++] = pool[i];
  }
  tu_shuffle(rng, out, m);
  return m;
}

static void multiplicity_case(unsigned index, gh_variant variant, unsigned key_bits,
                              unsigned value_bits) {
  enum { DISTINCT = 300, MAX_BATCH = DISTINCT * 512 };
  uint64_t case_seed = tu_mix_seed(ck_seed, 8, index, 0), m, i, round;
  tu_rng rng = tu_rng_make(case_seed);
  unsigned d = 2 + (unsigned)tu_below(&rng, 4);
  gh_config cfg = ck_config(&rng, variant, key_bits, value_bits, 2 * DISTINCT / 3, d,
                            (gh_hash_family)tu_below(&rng, 2), ck_min_factor_of(d) + 0.15);
  /* 450 distinct keys: the first batch uses [0, 300), the second [150, 450). */
  uint64_t *pool = ck_keys_with_specials(&rng, key_bits, DISTINCT + DISTINCT / 2);
  uint64_t *batch = (uint64_t *)tu_xmalloc((size_t)MAX_BATCH * sizeof *batch);
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)MAX_BATCH * sizeof *values);
  tu_table h;
  ck_compact cc;
  ck_multi cm;
  int made;
  memset(&h, 0, sizeof h);
  memset(&cc, 0, sizeof cc);
  memset(&cm, 0, sizeof cm);
  ck_context(variant == GH_VARIANT_MAP && value_bits > 0
                 ? "multiplicities 1..512 (map, ADD 1 per copy)"
                 : "multiplicities 1..512",
             &cfg, case_seed);
  tu_set_phase("create");
  if (variant == GH_VARIANT_MAP) made = tu_table_create(&h, &cfg);
  else if (variant == GH_VARIANT_COMPACTING) made = ck_compact_create(&cc, &cfg);
  else made = ck_multi_create(&cm, &cfg);
  if (!made) goto out;
  for (round = 0; round < 2; ++round) {
    m = ck_gen_multiplied(&rng, pool + round * DISTINCT / 2, DISTINCT, (unsigned)round, batch);
    tu_set_phase("batch %llu: %d distinct keys, each 1, 2, 7, 64 or 512 times (%llu keys)",
                 (unsigned long long)round + 1, DISTINCT, (unsigned long long)m);
    if (variant == GH_VARIANT_MAP) {
      /* A set holds each key once; a map adding 1 per copy counts the copies exactly. */
      for (i = 0; i < m; ++i) values[i] = 1;
      tu_insert(&h, batch, values, m, GH_ADD, 0, NULL);
      tu_check_find(&h, pool, DISTINCT + DISTINCT / 2,
                    TU_FIND_VALUES | TU_FIND_FOUND | TU_FIND_DEFAULT);
      tu_check_all(&h);
    } else if (variant == GH_VARIANT_COMPACTING) {
      ck_compact_insert(&cc, batch, m);
      ck_compact_check(&rng, &cc);
    } else {
      ck_multi_values(&rng, value_bits, m, values);
      ck_multi_insert(&cm, batch, values, m);
      ck_multi_check(&rng, &cm);
    }
  }
  if (variant == GH_VARIANT_MULTIVALUE) {
    /* Erase a third of the keys (each a few times in the batch), then bring some back: they
     * start again from nothing. */
    for (i = 0; i < 150; ++i) batch[i] = pool[tu_below(&rng, DISTINCT + DISTINCT / 2)];
    tu_set_phase("erase 150 keys drawn with repeats");
    ck_multi_erase(&cm, batch, 150);
    ck_multi_check(&rng, &cm);
    m = ck_gen_multiplied(&rng, batch, 50, 3, batch + 150);
    ck_multi_values(&rng, value_bits, m, values);
    tu_set_phase("re-insert 50 of them, 1..512 times each");
    ck_multi_insert(&cm, batch + 150, values, m);
    ck_multi_check(&rng, &cm);
  } else if (variant == GH_VARIANT_MAP) {
    for (i = 0; i < 150; ++i) batch[i] = pool[tu_below(&rng, DISTINCT + DISTINCT / 2)];
    tu_set_phase("erase 150 keys drawn with repeats, re-insert 50 of them 1..512 times");
    tu_erase(&h, batch, 150);
    tu_check_all(&h);
    m = ck_gen_multiplied(&rng, batch, 50, 3, batch + 150);
    for (i = 0; i < m; ++i) values[i] = 1;
    tu_insert(&h, batch + 150, values, m, GH_ADD, 0, NULL);
    tu_check_find(&h, pool, DISTINCT + DISTINCT / 2, TU_FIND_VALUES | TU_FIND_FOUND);
    tu_check_all(&h);
  }
  if (variant == GH_VARIANT_MAP) tu_table_destroy(&h);
  else if (variant == GH_VARIANT_COMPACTING) ck_compact_destroy(&cc);
  else ck_multi_destroy(&cm);
out:
  free(values);
  free(batch);
  free(pool);
}

static void multiplicity_all(void) {
  multiplicity_case(0, GH_VARIANT_MAP, 32, 0);
  multiplicity_case(1, GH_VARIANT_MAP, 64, 0);
  multiplicity_case(2, GH_VARIANT_MAP, 32, 32);
  multiplicity_case(3, GH_VARIANT_MAP, 64, 64);
  multiplicity_case(4, GH_VARIANT_COMPACTING, 32, 32);
  multiplicity_case(5, GH_VARIANT_COMPACTING, 64, 64);
  multiplicity_case(6, GH_VARIANT_MULTIVALUE, 32, 64);
  multiplicity_case(7, GH_VARIANT_MULTIVALUE, 64, 32);
}

/* ---------------------------------------------------------------------------------------- */
/* Part: bad                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* A configuration that must be refused: by gh_config_validate and gh_create (naming `field`),
 * and by gh_memory_estimate. */
static void bad_config(const gh_config *c, const char *field, const char *what) {
  char message[512];
  gh_table *table = (gh_table *)&message; /* gh_create must reset it */
  size_t hb = 0, db = 0;
  tu_set_phase("configuration: %s", what);
  memset(message, 'x', sizeof message);
  CHECK_STATUS(NULL, gh_config_validate(c, message, sizeof message), GH_ERR_INVALID_ARGUMENT);
  message[sizeof message - 1] = '\0';
  CHECK(strstr(message, field) != NULL, "gh_config_validate message does not name %s: \"%s\"",
        field, message);
  CHECK_STATUS(NULL, gh_create(c, &table), GH_ERR_INVALID_ARGUMENT);
  CHECK(table == NULL, "failed gh_create left *table non-NULL");
  CHECK(strstr(gh_last_create_error(), field) != NULL,
        "gh_last_create_error does not name %s: \"%s\"", field, gh_last_create_error());
  CHECK_STATUS(NULL, gh_memory_estimate(c, &hb, &db), GH_ERR_INVALID_ARGUMENT);
  if (table != NULL && table != (gh_table *)&message) gh_destroy(table);
}

/* A configuration at the edge of the allowed range: accepted, and the table works. */
static void good_config(const gh_config *c, const char *what) {
  gh_table *table = NULL;
  size_t hb = 0, db = 0;
  tu_set_phase("configuration: %s (allowed)", what);
  CHECK_OK(NULL, gh_config_validate(c, NULL, 0));
  CHECK_OK(NULL, gh_memory_estimate(c, &hb, &db));
  CHECK(hb + db > 0, "gh_memory_estimate gives 0 bytes");
  if (CHECK_OK(NULL, gh_create(c, &table))) {
    CHECK(gh_last_create_error()[0] == '\0', "gh_last_create_error after success: \"%s\"",
          gh_last_create_error());
    CHECK_OK(table, gh_validate(table));
    gh_destroy(table);
  }
}

static void bad_configs(void) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 9, 0, 0);
  tu_rng rng = tu_rng_make(case_seed);
  gh_config base = ck_config(&rng, GH_VARIANT_MAP, 32, 32, 1000, 4, GH_HASH_MULTIPLY, 1.25), c;
  gh_config def = gh_config_default(GH_CUCKOO);
  unsigned d;
  ck_context("configurations", &base, case_seed);

  tu_set_phase("gh_config_default(GH_CUCKOO)");
  CHECK(def.design == GH_CUCKOO && def.variant == GH_VARIANT_MAP && def.hash_functions == 4 &&
            def.hash_family == GH_HASH_MULTIPLY && def.table_factor == 1.25 &&
            def.key_bits == 32 && def.value_bits == 32 && def.capacity == ((uint64_t)1 << 20) &&
            def.backend == GH_BACKEND_AUTO,
        "gh_config_default(GH_CUCKOO) differs from the documented defaults (d=%u family=%d "
        "factor=%g variant=%d)", def.hash_functions, (int)def.hash_family, def.table_factor,
        (int)def.variant);
  CHECK_OK(NULL, gh_config_validate(&def, NULL, 0));

  for (d = 2; d <= 5; ++d) {
    char what[96];
    c = base;
    c.hash_functions = d;
    c.table_factor = ck_min_factor_of(d) - 0.01;
    snprintf(what, sizeof what, "d = %u, table_factor %.2f below its minimum %.2f", d,
             c.table_factor, ck_min_factor_of(d));
    bad_config(&c, "table_factor", what);
    c.table_factor = ck_min_factor_of(d);
    snprintf(what, sizeof what, "d = %u at its minimum table_factor %.2f", d, c.table_factor);
    good_config(&c, what);
    c.table_factor = 16.0;
    snprintf(what, sizeof what, "d = %u, table_factor 16", d);
    good_config(&c, what);
  }
  {
    static const unsigned bad_d[] = {0, 1, 6, 100};
    size_t i;
    for (i = 0; i < sizeof bad_d / sizeof bad_d[0]; ++i) {
      char what[64];
      c = base;
      c.hash_functions = bad_d[i];
      snprintf(what, sizeof what, "hash_functions = %u", bad_d[i]);
      bad_config(&c, "hash_functions", what);
    }
  }
  {
    const double bad_factor[] = {16.01, 1000.0, 0.0, 1.0, -1.25, NAN, INFINITY, -INFINITY};
    size_t i;
    for (i = 0; i < sizeof bad_factor / sizeof bad_factor[0]; ++i) {
      char what[64];
      c = base;
      c.table_factor = bad_factor[i];
      snprintf(what, sizeof what, "table_factor = %g", bad_factor[i]);
      bad_config(&c, "table_factor", what);
    }
  }
  c = base;
  c.hash_family = (gh_hash_family)2;
  bad_config(&c, "hash_family", "hash_family = 2");
  c.hash_family = (gh_hash_family)-1;
  bad_config(&c, "hash_family", "hash_family = -1");
  c = base;
  c.variant = (gh_variant)3;
  bad_config(&c, "variant", "variant = 3");
  c.variant = (gh_variant)-1;
  bad_config(&c, "variant", "variant = -1");
  c = base;
  c.variant = GH_VARIANT_COMPACTING;
  c.value_bits = 0;
  bad_config(&c, "value_bits", "compacting with value_bits 0");
  c.variant = GH_VARIANT_MULTIVALUE;
  bad_config(&c, "value_bits", "multivalue with value_bits 0");
  /* Designs without these variants refuse them: bad_inputs checks that for every design. */
  c = base;
  c.variant = GH_VARIANT_COMPACTING;
  c.value_bits = 64;
  c.key_bits = 64;
  good_config(&c, "compacting k64 v64");
  c.variant = GH_VARIANT_MULTIVALUE;
  good_config(&c, "multivalue k64 v64");
}

/* A refused call: status, message, and (through `check`) the table as it was. */
#define REFUSED(table, call, want, check)                                                     \
  do {                                                                                        \
    gh_status st_ = (call);                                                                   \
    const char *text_ = gh_last_error(table);                                                 \
    tu_set_phase("refused call: %s", #call);                                                  \
    CHECK(st_ == (want), "%s returned %s, expected %s (gh_last_error \"%s\")", #call,          \
          gh_status_name(st_), gh_status_name(want), text_ ? text_ : "(NULL)");               \
    CHECK(text_ != NULL && text_[0] != '\0', "gh_last_error is empty after a refused %s",     \
          #call);                                                                             \
    check;                                                                                    \
  } while (0)

static void bad_map_calls(unsigned value_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 10, value_bits, 0), u = 0;
  tu_rng rng = tu_rng_make(case_seed);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MAP, 32, value_bits, 300, 3, GH_HASH_XOR, 1.5);
  uint64_t *keys64 = ck_keys_with_specials(&rng, 32, 200), values64[200], counts[8];
  uint32_t keys[200], values[200], out[200];
  void *vals;
  int i;
  tu_table h;
  ck_context("refused calls", &cfg, case_seed);
  tu_set_phase("create");
  if (!tu_table_create(&h, &cfg)) goto out;
  tu_gen_values(&rng, value_bits, 200, values64);
  tu_insert(&h, keys64, values64, 200, GH_OVERWRITE, 0, NULL);
  tu_check_all(&h);
  for (i = 0; i < 200; ++i) {
    keys[i] = (uint32_t)keys64[i];
    values[i] = (uint32_t)values64[i] + 1;
  }
  vals = value_bits ? values : NULL;
  REFUSED(h.table, gh_insert(h.table, keys, vals, 10, GH_APPEND, NULL, NULL), GH_ERR_UNSUPPORTED,
          tu_check_all(&h));
  REFUSED(h.table, gh_insert(h.table, keys, vals, 10, (gh_dup_policy)6, NULL, NULL),
          GH_ERR_INVALID_ARGUMENT, tu_check_all(&h));
  if (value_bits) {
    REFUSED(h.table, gh_insert(h.table, keys, NULL, 10, GH_OVERWRITE, NULL, NULL),
            GH_ERR_INVALID_ARGUMENT, tu_check_all(&h));
  } else {
    REFUSED(h.table, gh_insert(h.table, keys, values, 10, GH_OVERWRITE, NULL, NULL),
            GH_ERR_INVALID_ARGUMENT, tu_check_all(&h));
  }
  REFUSED(h.table, gh_count(h.table, keys, 8, counts, &u, NULL), GH_ERR_UNSUPPORTED,
          tu_check_all(&h));
  REFUSED(h.table, gh_find_all(h.table, keys, 8, counts, out, 200, NULL), GH_ERR_UNSUPPORTED,
          tu_check_all(&h));
  REFUSED(h.table, gh_keys_of_ids(h.table, keys, 8, out, NULL), GH_ERR_UNSUPPORTED,
          tu_check_all(&h));
  REFUSED(h.table, gh_export(h.table, out, value_bits ? values : NULL, 199, &u, NULL),
          GH_ERR_BUFFER_TOO_SMALL, tu_check_all(&h));
  REFUSED(h.table, gh_find(h.table, keys, 8, NULL, NULL, NULL, NULL), GH_ERR_INVALID_ARGUMENT,
          tu_check_all(&h));
  REFUSED(h.table, gh_get_stats(h.table, NULL), GH_ERR_INVALID_ARGUMENT, tu_check_all(&h));
  tu_table_destroy(&h);
out:
  free(keys64);
}

static void bad_compacting_calls(unsigned key_bits, unsigned id_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 11, key_bits, id_bits), u = 0, i, n_ids = 8;
  tu_rng rng = tu_rng_make(case_seed);
  gh_config cfg = ck_config(&rng, GH_VARIANT_COMPACTING, key_bits, id_bits, 300, 4,
                            GH_HASH_MULTIPLY, 1.25);
  uint64_t *keys64 = ck_keys_with_specials(&rng, key_bits, 200), counts[8];
  uint64_t ids64[8], back[8];
  void *keys, *ids, *keys_out, *values;
  ck_compact cc;
  size_t p;
  ck_context("refused calls", &cfg, case_seed);
  tu_set_phase("create");
  if (!ck_compact_create(&cc, &cfg)) {
    free(keys64);
    return;
  }
  ck_compact_insert(&cc, keys64, 200);
  ck_compact_check(&rng, &cc);
  keys = tu_pack(keys64, 200, key_bits);
  values = tu_pack(keys64, 200, key_bits); /* any values: a compacting insert takes none */
  keys_out = tu_xmalloc(200 * 8);

  REFUSED(cc.table, gh_insert(cc.table, keys, values, 10, GH_KEEP_FIRST, NULL, NULL),
          GH_ERR_INVALID_ARGUMENT, ck_compact_check(&rng, &cc));
  for (p = 1; p <= 5; ++p) {
    REFUSED(cc.table, gh_insert(cc.table, keys, NULL, 10, (gh_dup_policy)p, NULL, NULL),
            GH_ERR_UNSUPPORTED, ck_compact_check(&rng, &cc));
  }
  REFUSED(cc.table, gh_insert(cc.table, keys, NULL, 10, (gh_dup_policy)6, NULL, NULL),
          GH_ERR_INVALID_ARGUMENT, ck_compact_check(&rng, &cc));
  REFUSED(cc.table, gh_erase(cc.table, keys, 10, NULL, &u, NULL), GH_ERR_UNSUPPORTED,
          ck_compact_check(&rng, &cc));
  REFUSED(cc.table, gh_count(cc.table, keys, 8, counts, &u, NULL), GH_ERR_UNSUPPORTED,
          ck_compact_check(&rng, &cc));
  REFUSED(cc.table, gh_find_all(cc.table, keys, 8, counts, keys_out, 200, NULL),
          GH_ERR_UNSUPPORTED, ck_compact_check(&rng, &cc));
  REFUSED(cc.table, gh_export(cc.table, keys_out, keys_out, 199, &u, NULL),
          GH_ERR_BUFFER_TOO_SMALL, ck_compact_check(&rng, &cc));

  /* Ids at and past the size among valid ones: refused with their count, the rest written. */
  ids64[0] = 0;
  ids64[1] = cc.size;                    /* bad */
  ids64[2] = cc.size - 1;
  ids64[3] = cc.size + 5;                /* bad */
  ids64[4] = 7;
  ids64[5] = tu_mask(id_bits);           /* bad: all-ones */
  ids64[6] = cc.size / 2;
  ids64[7] = 1;
  ids = tu_pack(ids64, n_ids, id_bits);
  memset(keys_out, 0xA5, 200 * 8);
  REFUSED(cc.table, gh_keys_of_ids(cc.table, ids, n_ids, keys_out, NULL),
          GH_ERR_INVALID_ARGUMENT, (void)0);
  CHECK(tu_mentions_count(gh_last_error(cc.table), 3),
        "gh_keys_of_ids with 3 ids out of range: the message does not give the count 3: \"%s\"",
        gh_last_error(cc.table));
  if (!cc.broken) {
    tu_unpack(keys_out, n_ids, key_bits, back);
    for (i = 0; i < n_ids; ++i) {
      if (ids64[i] >= cc.size) continue;
      CHECK(back[i] == cc.keys_by_id[ids64[i]], "gh_keys_of_ids refused for other ids left "
            "position %llu (id %llu) as 0x%llx, expected 0x%llx", (unsigned long long)i,
            (unsigned long long)ids64[i], (unsigned long long)back[i],
            (unsigned long long)cc.keys_by_id[ids64[i]]);
    }
  }
  ck_compact_check(&rng, &cc);
  REFUSED(cc.table, gh_keys_of_ids(cc.table, ids, n_ids, NULL, NULL), GH_ERR_INVALID_ARGUMENT,
          ck_compact_check(&rng, &cc));
  REFUSED(cc.table, gh_keys_of_ids(cc.table, NULL, n_ids, keys_out, NULL),
          GH_ERR_INVALID_ARGUMENT, ck_compact_check(&rng, &cc));
  tu_set_phase("gh_keys_of_ids of 0 ids");
  CHECK_OK(cc.table, gh_keys_of_ids(cc.table, ids, 0, keys_out, NULL));
  REFUSED(cc.table, gh_get_stats(cc.table, NULL), GH_ERR_INVALID_ARGUMENT,
          ck_compact_check(&rng, &cc));

  /* After all that, new keys still get the next ids. */
  tu_set_phase("insert after the refused calls");
  {
    uint64_t more[50];
    ck_unique_keys(&rng, key_bits, 50, &cc.ids, more);
    ck_compact_insert(&cc, more, 50);
    ck_compact_check(&rng, &cc);
  }
  free(ids);
  free(keys_out);
  free(values);
  free(keys);
  free(keys64);
  ck_compact_destroy(&cc);
}

static void bad_multivalue_calls(unsigned key_bits, unsigned value_bits) {
  uint64_t case_seed = tu_mix_seed(ck_seed, 12, key_bits, value_bits), u = 0, total = 0, m;
  tu_rng rng = tu_rng_make(case_seed);
  gh_config cfg = ck_config(&rng, GH_VARIANT_MULTIVALUE, key_bits, value_bits, 300, 2,
                            GH_HASH_XOR, 2.5);
  uint64_t *pool = ck_keys_with_specials(&rng, key_bits, 100);
  uint64_t *keys64 = (uint64_t *)tu_xmalloc(500 * sizeof *keys64);
  uint64_t *values64 = (uint64_t *)tu_xmalloc(500 * sizeof *values64);
  uint64_t counts[20], offsets[21];
  void *keys, *values, *out, *out_keys;
  ck_multi cm;
  size_t p;
  ck_context("refused calls", &cfg, case_seed);
  tu_set_phase("create");
  if (!ck_multi_create(&cm, &cfg)) goto out;
  m = tu_gen_repeats(&rng, pool, 100, 5, keys64);
  ck_multi_values(&rng, value_bits, m, values64);
  ck_multi_insert(&cm, keys64, values64, m);
  ck_multi_check(&rng, &cm);
  keys = tu_pack(pool, 100, key_bits);
  values = tu_pack(values64, 100, value_bits);
  out = tu_xmalloc((size_t)(m + 8) * 8);
  out_keys = tu_xmalloc((size_t)(m + 8) * 8);

  for (p = 0; p <= 4; ++p) {
    REFUSED(cm.table, gh_insert(cm.table, keys, values, 10, (gh_dup_policy)p, NULL, NULL),
            GH_ERR_UNSUPPORTED, ck_multi_check(&rng, &cm));
  }
  REFUSED(cm.table, gh_insert(cm.table, keys, values, 10, (gh_dup_policy)6, NULL, NULL),
          GH_ERR_INVALID_ARGUMENT, ck_multi_check(&rng, &cm));
  REFUSED(cm.table, gh_insert(cm.table, keys, NULL, 10, GH_APPEND, NULL, NULL),
          GH_ERR_INVALID_ARGUMENT, ck_multi_check(&rng, &cm));
  REFUSED(cm.table, gh_keys_of_ids(cm.table, values, 10, out_keys, NULL), GH_ERR_UNSUPPORTED,
          ck_multi_check(&rng, &cm));

  /* find_all into a buffer one value too small, and into none. */
  tu_set_phase("count the values of 20 keys");
  if (CHECK_OK(cm.table, gh_count(cm.table, keys, 20, counts, &total, NULL))) {
    CHECK(total > 0, "20 present keys have no values");
    REFUSED(cm.table, gh_find_all(cm.table, keys, 20, offsets, out, total - 1, NULL),
            GH_ERR_BUFFER_TOO_SMALL, ck_multi_check(&rng, &cm));
    REFUSED(cm.table, gh_find_all(cm.table, keys, 20, offsets, out, 0, NULL),
            GH_ERR_BUFFER_TOO_SMALL, ck_multi_check(&rng, &cm));
    REFUSED(cm.table, gh_find_all(cm.table, keys, 20, NULL, out, total, NULL),
            GH_ERR_INVALID_ARGUMENT, ck_multi_check(&rng, &cm));
    tu_set_phase("find_all into exactly the counted capacity");
    CHECK_OK(cm.table, gh_find_all(cm.table, keys, 20, offsets, out, total, NULL));
    CHECK(offsets[20] == total, "find_all offsets[20] = %llu, gh_count total %llu",
          (unsigned long long)offsets[20], (unsigned long long)total);
  }
  REFUSED(cm.table, gh_export(cm.table, out_keys, out, cm.n - 1, &u, NULL),
          GH_ERR_BUFFER_TOO_SMALL, ck_multi_check(&rng, &cm));
  REFUSED(cm.table, gh_count(cm.table, NULL, 5, counts, &u, NULL), GH_ERR_INVALID_ARGUMENT,
          ck_multi_check(&rng, &cm));
  REFUSED(cm.table, gh_get_stats(cm.table, NULL), GH_ERR_INVALID_ARGUMENT,
          ck_multi_check(&rng, &cm));
  free(out_keys);
  free(out);
  free(values);
  free(keys);
  ck_multi_destroy(&cm);
out:
  free(values64);
  free(keys64);
  free(pool);
}

static void bad_all(void) {
  bad_configs();
  bad_map_calls(32);
  bad_map_calls(0);
  bad_compacting_calls(32, 32);
  bad_compacting_calls(64, 64);
  bad_compacting_calls(64, 32);
  bad_multivalue_calls(32, 64);
  bad_multivalue_calls(64, 32);
}

/* ---------------------------------------------------------------------------------------- */

typedef struct ck_part_entry {
  const char *name;
  void (*run)(void);
} ck_part_entry;

static void restarts_all(void) {
  restarts_min_factor();
  restarts_forced();
}

static const ck_part_entry ck_parts[] = {
    {"restarts", restarts_all},       {"functions", functions_all}, {"incremental", incremental_all},
    {"multiplicity", multiplicity_all}, {"bad", bad_all},
};

int main(int argc, char **argv) {
  const ck_part_entry *part = NULL;
  size_t i;
  int a;
  ck_program = argv[0];
  ck_seed = CK_BASE_SEED;
  if (argc < 2 || !tu_parse_backend(argv[1], &ck_backend)) goto usage;
  for (a = 2; a < argc; a += 2) {
    if (a + 1 >= argc) goto usage;
    if (strcmp(argv[a], "--part") == 0) {
      for (i = 0; i < sizeof ck_parts / sizeof ck_parts[0]; ++i) {
        if (strcmp(argv[a + 1], ck_parts[i].name) == 0) part = &ck_parts[i];
      }
      if (part == NULL) goto usage;
    } else if (strcmp(argv[a], "--seed") == 0) {
      if (!tu_parse_u64(argv[a + 1], &ck_seed)) goto usage;
    } else {
      goto usage;
    }
  }
  tu_skip_unless_backend_usable(ck_backend);
  for (i = 0; i < sizeof ck_parts / sizeof ck_parts[0]; ++i) {
    if (part != NULL && part != &ck_parts[i]) continue;
    ck_part = ck_parts[i].name;
    printf("cuckoo %s %s (seed 0x%016llx)\n", tu_backend_name(ck_backend), ck_part,
           (unsigned long long)ck_seed);
    fflush(stdout);
    ck_parts[i].run();
  }
  return tu_finish("cuckoo");
usage:
  fprintf(stderr,
          "usage: %s host|cuda [--part restarts|functions|incremental|multiplicity|bad] "
          "[--seed S]\n",
          argv[0]);
  return 2;
}
