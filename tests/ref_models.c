/* ref_models.c - see ref_models.h. (Moved here from tests/cuckoo.c, where they were private to
 * the cuckoo design's test, so that every design with these variants is checked against them.) */
#include "ref_models.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tu_check_counts(gh_table *table, uint64_t size, uint64_t distinct) {
  gh_stats s;
  uint64_t capacity = 0;
  gh_config config;
  memset(&s, TU_CANARY, sizeof s);
  memset(&config, 0, sizeof config);
  if (!CHECK_OK(table, gh_get_stats(table, &s))) return;
  tu_check_no_error_text(table, "gh_get_stats");
  if (!CHECK_OK(table, gh_capacity(table, &capacity))) return;
  if (!CHECK_OK(table, gh_get_config(table, &config))) return;
  CHECK(s.size == size, "gh_stats.size %llu, expected %llu", (unsigned long long)s.size,
        (unsigned long long)size);
  CHECK(s.distinct_keys == distinct, "gh_stats.distinct_keys %llu, expected %llu",
        (unsigned long long)s.distinct_keys, (unsigned long long)distinct);
  tu_check_stats_rules(table, &s, capacity, config.table_factor);
}

/* ---------------------------------------------------------------------------------------- */
/* Compacting tables: a reference of key -> id and id -> key                                 */
/* ---------------------------------------------------------------------------------------- */

int tu_compact_create(tu_compact *cc, const gh_config *cfg) {
  gh_status st;
  gh_config eff;
  memset(cc, 0, sizeof *cc);
  st = gh_create(cfg, &cc->table);
  if (!CHECK(st == GH_OK && cc->table != NULL, "gh_create returned %s: \"%s\"", gh_status_name(st),
             gh_last_create_error())) {
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
void tu_compact_clear(tu_compact *cc) {
  if (CHECK_OK(cc->table, gh_clear(cc->table, NULL))) {
    tu_check_no_error_text(cc->table, "gh_clear");
    tu_ref_clear(&cc->ids);
    cc->size = 0;
  } else {
    cc->broken = 1;
  }
}

void tu_compact_destroy(tu_compact *cc) {
  gh_destroy(cc->table);
  cc->table = NULL;
  tu_ref_free(&cc->ids);
  free(cc->keys_by_id);
  cc->keys_by_id = NULL;
}

/* gh_find with values_out (ids), found_out and a default; returns 1 on GH_OK. */
static int tu_compact_find(tu_compact *cc, const uint64_t *keys, uint64_t n, uint64_t *ids,
                           uint8_t *found, uint64_t default_id) {
  size_t ib = cc->id_bits / 8;
  void *packed = tu_pack(keys, n, cc->key_bits);
  void *packed_default = tu_pack(&default_id, 1, cc->id_bits);
  void *out = tu_xmalloc((size_t)n * ib);
  int ok;
  memset(out, TU_CANARY, (size_t)n * ib);
  memset(found, TU_CANARY, (size_t)n);
  ok = CHECK_OK(cc->table, gh_find(cc->table, packed, n, out, found, packed_default, NULL));
  if (ok) {
    tu_check_no_error_text(cc->table, "gh_find");
    tu_unpack(out, n, cc->id_bits, ids);
  }
  free(out);
  free(packed_default);
  free(packed);
  return ok;
}

/* The keys of fresh[0, nfresh) (new to the table, in no particular order) got the ids
 * [size, size + nfresh): each exactly one of them. */
void tu_compact_learn(tu_compact *cc, const uint64_t *fresh, uint64_t nfresh) {
  uint64_t old = cc->size, size = UINT64_MAX, i;
  uint64_t *ids = (uint64_t *)tu_xmalloc((size_t)(nfresh + 1) * sizeof *ids);
  uint8_t *found = (uint8_t *)tu_xmalloc((size_t)nfresh + 1);
  uint8_t *taken = (uint8_t *)calloc((size_t)nfresh + 1, 1);
  REQUIRE(taken != NULL, "out of memory");
  if (CHECK_OK(cc->table, gh_size(cc->table, &size))) {
    if (!CHECK(size == old + nfresh,
               "gh_size %llu after the batch: %llu keys before and %llu "
               "new ones",
               (unsigned long long)size, (unsigned long long)old, (unsigned long long)nfresh))
      cc->broken = 1;
  }
  if (old + nfresh > cc->room) {
    while (old + nfresh > cc->room) cc->room *= 2;
    cc->keys_by_id = (uint64_t *)realloc(cc->keys_by_id, (size_t)cc->room * sizeof(uint64_t));
    REQUIRE(cc->keys_by_id != NULL, "out of memory");
  }
  if (nfresh > 0 && tu_compact_find(cc, fresh, nfresh, ids, found, 0)) {
    for (i = 0; i < nfresh; ++i) {
      if (!CHECK(found[i] == 1, "new key 0x%llx not found after the insert",
                 (unsigned long long)fresh[i]) ||
          !CHECK(ids[i] >= old && ids[i] < old + nfresh,
                 "new key 0x%llx got id %llu; the new keys should have the ids [%llu, %llu)",
                 (unsigned long long)fresh[i], (unsigned long long)ids[i], (unsigned long long)old,
                 (unsigned long long)(old + nfresh)) ||
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
uint64_t tu_compact_fresh(const tu_compact *cc, const uint64_t *keys, uint64_t n, uint64_t *fresh) {
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

void tu_compact_insert(tu_compact *cc, const uint64_t *keys, uint64_t n) {
  void *packed = tu_pack(keys, n, cc->key_bits);
  uint8_t *failed = (uint8_t *)tu_xmalloc((size_t)n + 1);
  uint64_t *fresh = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *fresh);
  uint64_t nfresh = tu_compact_fresh(cc, keys, n, fresh), i;
  memset(failed, TU_CANARY, (size_t)n);
  if (CHECK_OK(cc->table, gh_insert(cc->table, packed, NULL, n, GH_KEEP_FIRST, failed, NULL))) {
    tu_check_no_error_text(cc->table, "gh_insert");
    for (i = 0; i < n; ++i) {
      if (!CHECK(failed[i] == 0, "insert returned GH_OK but failed_out[%llu] = %u",
                 (unsigned long long)i, failed[i]))
        break;
    }
    tu_compact_learn(cc, fresh, nfresh);
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
void tu_compact_check(tu_rng *rng, tu_compact *cc) {
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
  if (n > 0 && tu_compact_find(cc, cc->keys_by_id, n, ids, found, default_id)) {
    for (i = 0; i < n; ++i) {
      if (!CHECK(found[i] == 1 && ids[i] == i,
                 "key 0x%llx: found %u id %llu, expected id %llu "
                 "(ids never change)",
                 (unsigned long long)cc->keys_by_id[i], found[i], (unsigned long long)ids[i],
                 (unsigned long long)i))
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
    memset(keys_out, TU_CANARY, (size_t)(n + 16) * kb);
    if (CHECK_OK(cc->table, gh_keys_of_ids(cc->table, packed_ids, n + 16, keys_out, NULL))) {
      tu_check_no_error_text(cc->table, "gh_keys_of_ids");
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
  memset(ek, TU_CANARY, (size_t)(n + 2) * kb);
  memset(ev, TU_CANARY, (size_t)(n + 2) * ib);
  seen = (uint8_t *)calloc((size_t)n + 1, 1);
  REQUIRE(seen != NULL, "out of memory");
  if (CHECK_OK(cc->table, gh_export(cc->table, ek, ev, n + 2, &count, NULL)) &&
      CHECK(count == n, "export wrote %llu pairs, the table holds %llu keys",
            (unsigned long long)count, (unsigned long long)n)) {
    uint64_t *xk = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *xk);
    uint64_t *xv = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *xv);
    tu_check_no_error_text(cc->table, "gh_export");
    tu_unpack(ek, n, cc->key_bits, xk);
    tu_unpack(ev, n, cc->id_bits, xv);
    for (i = 0; i < n; ++i) {
      if (!CHECK(xv[i] < n && !seen[xv[i]] && cc->keys_by_id[xv[i]] == xk[i],
                 "export pair %llu: key 0x%llx id %llu (%s)", (unsigned long long)i,
                 (unsigned long long)xk[i], (unsigned long long)xv[i],
                 xv[i] >= n    ? "id out of range"
                 : seen[xv[i]] ? "id exported twice"
                               : "the id belongs to another key"))
        break;
      seen[xv[i]] = 1;
    }
    for (i = n * kb; i < (n + 2) * kb; ++i) {
      if (!CHECK(ek[i] == TU_CANARY, "export wrote keys_out past count")) break;
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
  if (tu_compact_find(cc, absent, n_absent, ids, found, default_id)) {
    for (i = 0; i < n_absent; ++i) {
      if (!CHECK(found[i] == 0 && ids[i] == default_id,
                 "absent key 0x%llx: found %u id %llu (default %llu)",
                 (unsigned long long)absent[i], found[i], (unsigned long long)ids[i],
                 (unsigned long long)default_id))
        break;
    }
  }
  free(absent);

  tu_check_counts(cc->table, n, n);
  if (CHECK_OK(cc->table, gh_validate(cc->table))) tu_check_no_error_text(cc->table, "gh_validate");
  free(found);
  free(ids);
}

/* ---------------------------------------------------------------------------------------- */
/* Multi-value tables: a multiset of (key, value) pairs                                      */
/* ---------------------------------------------------------------------------------------- */

static int tu_kv_cmp(const void *a, const void *b) {
  const tu_kv *x = (const tu_kv *)a, *y = (const tu_kv *)b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->value < y->value ? -1 : x->value > y->value;
}

int tu_u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int tu_multi_create(tu_multi *cm, const gh_config *cfg) {
  gh_status st;
  gh_config eff;
  memset(cm, 0, sizeof *cm);
  st = gh_create(cfg, &cm->table);
  if (!CHECK(st == GH_OK && cm->table != NULL, "gh_create returned %s: \"%s\"", gh_status_name(st),
             gh_last_create_error())) {
    cm->table = NULL;
    return 0;
  }
  memset(&eff, 0, sizeof eff);
  CHECK_OK(cm->table, gh_get_config(cm->table, &eff));
  CHECK(eff.variant == GH_VARIANT_MULTIVALUE, "effective variant %d", (int)eff.variant);
  cm->key_bits = cfg->key_bits;
  cm->value_bits = cfg->value_bits;
  cm->room = 64;
  cm->pairs = (tu_kv *)tu_xmalloc((size_t)cm->room * sizeof *cm->pairs);
  tu_ref_init(&cm->keys, cm->key_bits, 0);
  CHECK_OK(cm->table, gh_validate(cm->table));
  return 1;
}

void tu_multi_clear(tu_multi *cm) {
  if (CHECK_OK(cm->table, gh_clear(cm->table, NULL))) {
    tu_check_no_error_text(cm->table, "gh_clear");
    cm->n = 0;
    tu_ref_clear(&cm->keys);
  }
}

void tu_multi_destroy(tu_multi *cm) {
  gh_destroy(cm->table);
  cm->table = NULL;
  free(cm->pairs);
  cm->pairs = NULL;
  tu_ref_free(&cm->keys);
}

void tu_multi_insert(tu_multi *cm, const uint64_t *keys, const uint64_t *values, uint64_t n) {
  void *pk = tu_pack(keys, n, cm->key_bits), *pv = tu_pack(values, n, cm->value_bits);
  uint8_t *failed = (uint8_t *)tu_xmalloc((size_t)n + 1);
  uint64_t i;
  memset(failed, TU_CANARY, (size_t)n);
  if (CHECK_OK(cm->table, gh_insert(cm->table, pk, pv, n, GH_APPEND, failed, NULL))) {
    tu_check_no_error_text(cm->table, "gh_insert");
    for (i = 0; i < n; ++i) {
      if (!CHECK(failed[i] == 0, "insert returned GH_OK but failed_out[%llu] = %u",
                 (unsigned long long)i, failed[i]))
        break;
    }
    tu_multi_note_insert(cm, keys, values, n);
  }
  free(failed);
  free(pv);
  free(pk);
}

void tu_multi_note_insert(tu_multi *cm, const uint64_t *keys, const uint64_t *values, uint64_t n) {
  uint64_t i;
  if (cm->n + n > cm->room) {
    while (cm->n + n > cm->room) cm->room *= 2;
    cm->pairs = (tu_kv *)realloc(cm->pairs, (size_t)cm->room * sizeof *cm->pairs);
    REQUIRE(cm->pairs != NULL, "out of memory");
  }
  for (i = 0; i < n; ++i) {
    cm->pairs[cm->n].key = keys[i];
    cm->pairs[cm->n].value = values[i] & tu_mask(cm->value_bits);
    ++cm->n;
  }
  tu_ref_insert(&cm->keys, keys, NULL, n, GH_KEEP_FIRST, NULL);
}

void tu_multi_note_erase(tu_multi *cm, const uint64_t *keys, uint64_t n) {
  uint64_t i, kept = 0;
  tu_ref gone;
  tu_ref_init(&gone, cm->key_bits, 0);
  for (i = 0; i < n; ++i) {
    if (tu_ref_contains(&cm->keys, keys[i]))
      tu_ref_insert(&gone, &keys[i], NULL, 1, GH_KEEP_FIRST, NULL);
  }
  /* Every value of an erased key goes. */
  for (i = 0; i < cm->n; ++i) {
    if (!tu_ref_contains(&gone, cm->pairs[i].key)) cm->pairs[kept++] = cm->pairs[i];
  }
  cm->n = kept;
  tu_ref_erase(&cm->keys, keys, n);
  tu_ref_free(&gone);
}

void tu_multi_erase(tu_multi *cm, const uint64_t *keys, uint64_t n) {
  void *pk = tu_pack(keys, n, cm->key_bits);
  uint8_t *erased = (uint8_t *)tu_xmalloc((size_t)n + 1);
  uint64_t count = 0xBADC0FFEEull, expected, i;
  tu_ref present, flagged;
  tu_ref_init(&present, cm->key_bits, 0);
  tu_ref_init(&flagged, cm->key_bits, 0);
  for (i = 0; i < n; ++i) {
    if (tu_ref_contains(&cm->keys, keys[i]))
      tu_ref_insert(&present, &keys[i], NULL, 1, GH_KEEP_FIRST, NULL);
  }
  expected = tu_ref_size(&present);
  memset(erased, TU_CANARY, (size_t)n);
  if (CHECK_OK(cm->table, gh_erase(cm->table, pk, n, erased, &count, NULL))) {
    tu_check_no_error_text(cm->table, "gh_erase");
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
    tu_multi_note_erase(cm, keys, n);
  }
  tu_ref_free(&flagged);
  tu_ref_free(&present);
  free(erased);
  free(pk);
}

/* The pairs sorted by (key, value), malloc'd. */
static tu_kv *tu_multi_sorted(const tu_multi *cm) {
  tu_kv *s = (tu_kv *)tu_xmalloc((size_t)(cm->n + 1) * sizeof *s);
  if (cm->n > 0) memcpy(s, cm->pairs, (size_t)cm->n * sizeof *s);
  qsort(s, (size_t)cm->n, sizeof *s, tu_kv_cmp);
  return s;
}

/* [*lo, *hi): the pairs of key in sorted. */
static void tu_kv_range(const tu_kv *sorted, uint64_t n, uint64_t key, uint64_t *lo, uint64_t *hi) {
  uint64_t a = 0, b = n;
  while (a < b) {
    uint64_t m = a + (b - a) / 2;
    if (sorted[m].key < key)
      a = m + 1;
    else
      b = m;
  }
  *lo = a;
  b = n;
  while (a < b) {
    uint64_t m = a + (b - a) / 2;
    if (sorted[m].key <= key)
      a = m + 1;
    else
      b = m;
  }
  *hi = a;
}

/* gh_count, gh_find_all (values compared as multisets per key), gh_find and gh_contains for the
 * query keys q[0, nq), which may repeat and include absent keys. */
void tu_multi_query(tu_multi *cm, const uint64_t *q, uint64_t nq) {
  tu_kv *sorted = tu_multi_sorted(cm);
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
    tu_kv_range(sorted, cm->n, q[i], &lo, &hi);
    starts[i] = lo;
    want[i] = hi - lo;
    total_want += want[i];
  }

  tu_set_phase("%s", "multivalue query: gh_count");
  memset(counts, TU_CANARY, (size_t)nq * sizeof *counts);
  if (CHECK_OK(cm->table, gh_count(cm->table, pk, nq, counts, &total, NULL))) {
    tu_check_no_error_text(cm->table, "gh_count");
    for (i = 0; i < nq; ++i) {
      if (!CHECK(counts[i] == want[i],
                 "gh_count: key 0x%llx (position %llu) has %llu values, "
                 "expected %llu",
                 (unsigned long long)q[i], (unsigned long long)i, (unsigned long long)counts[i],
                 (unsigned long long)want[i]))
        break;
    }
    CHECK(total == total_want, "gh_count total %llu, expected %llu", (unsigned long long)total,
          (unsigned long long)total_want);
  }
  /* Each output is optional: the total alone (a join's count; designs may sum it without the
   * counts) and the counts alone. */
  tu_set_phase("%s", "multivalue query: gh_count of the total alone, then of the counts alone");
  total = ~0ull;
  if (CHECK_OK(cm->table, gh_count(cm->table, pk, nq, NULL, &total, NULL)))
    CHECK(total == total_want, "gh_count (counts_out NULL) total %llu, expected %llu", (unsigned long long)total,
          (unsigned long long)total_want);
  memset(counts, TU_CANARY, (size_t)nq * sizeof *counts);
  if (CHECK_OK(cm->table, gh_count(cm->table, pk, nq, counts, NULL, NULL))) {
    for (i = 0; i < nq; ++i) {
      if (!CHECK(counts[i] == want[i], "gh_count (total NULL): key 0x%llx has %llu values, expected %llu",
                 (unsigned long long)q[i], (unsigned long long)counts[i], (unsigned long long)want[i]))
        break;
    }
  }

  tu_set_phase("%s", "multivalue query: gh_find_all");
  values_out = tu_xmalloc((size_t)(total_want + 2) * vb);
  memset(values_out, TU_CANARY, (size_t)(total_want + 2) * vb);
  memset(offsets, TU_CANARY, (size_t)(nq + 2) * sizeof *offsets);
  values = (uint64_t *)tu_xmalloc((size_t)(total_want + 2) * sizeof *values);
  if (CHECK_OK(cm->table, gh_find_all(cm->table, pk, nq, offsets, values_out, total_want, NULL))) {
    int offsets_ok =
        CHECK(offsets[0] == 0, "find_all offsets[0] = %llu", (unsigned long long)offsets[0]);
    tu_check_no_error_text(cm->table, "gh_find_all");
    for (i = 0; i < nq && offsets_ok; ++i) {
      offsets_ok = CHECK(offsets[i + 1] >= offsets[i] && offsets[i + 1] - offsets[i] == want[i],
                         "find_all offsets[%llu] = %llu, offsets[%llu] = %llu: key 0x%llx has "
                         "%llu values",
                         (unsigned long long)i, (unsigned long long)offsets[i],
                         (unsigned long long)(i + 1), (unsigned long long)offsets[i + 1],
                         (unsigned long long)q[i], (unsigned long long)want[i]);
    }
    CHECK(offsets[nq + 1] == 0xA5A5A5A5A5A5A5A5ull, "find_all wrote offsets past n + 1 entries");
    if (offsets_ok) {
      tu_unpack(values_out, total_want, cm->value_bits, values);
      for (i = 0; i < nq; ++i) {
        uint64_t *slice = values + offsets[i];
        qsort(slice, (size_t)want[i], sizeof *slice, tu_u64_cmp);
        for (j = 0; j < want[i]; ++j) {
          if (!CHECK(slice[j] == sorted[starts[i] + j].value,
                     "find_all: the values of key 0x%llx (position %llu) differ from the "
                     "inserted multiset at sorted index %llu: %llu, expected %llu",
                     (unsigned long long)q[i], (unsigned long long)i, (unsigned long long)j,
                     (unsigned long long)slice[j], (unsigned long long)sorted[starts[i] + j].value))
            break;
        }
      }
      for (i = total_want * vb; i < (total_want + 2) * vb; ++i) {
        if (!CHECK(((unsigned char *)values_out)[i] == TU_CANARY,
                   "find_all wrote values past values_capacity"))
          break;
      }
    }
  }

  if (total_want > 0 && vb > 0) {
    /* One value short: the same offsets, and not one value written. */
    uint64_t *short_offsets = (uint64_t *)tu_xmalloc((size_t)(nq + 1) * sizeof *short_offsets);
    tu_set_phase("%s", "multivalue query: gh_find_all one value short");
    memset(values_out, TU_CANARY, (size_t)(total_want + 2) * vb);
    if (CHECK_STATUS(cm->table, gh_find_all(cm->table, pk, nq, short_offsets, values_out, total_want - 1, NULL),
                     GH_ERR_BUFFER_TOO_SMALL)) {
      CHECK(memcmp(short_offsets, offsets, (size_t)(nq + 1) * sizeof *offsets) == 0,
            "find_all one value short: other offsets than with room for all");
      for (i = 0; i < (total_want + 2) * vb; ++i)
        if (!CHECK(((unsigned char *)values_out)[i] == TU_CANARY, "find_all one value short wrote a value (byte %llu)",
                   (unsigned long long)i))
          break;
    }
    free(short_offsets);
  }

  tu_set_phase("%s", "multivalue query: gh_find and gh_contains");
  packed_default = tu_pack(&default_value, 1, cm->value_bits);
  free(values_out);
  values_out = tu_xmalloc((size_t)(nq + 1) * vb);
  memset(found, TU_CANARY, (size_t)nq);
  if (CHECK_OK(cm->table, gh_find(cm->table, pk, nq, values_out, found, packed_default, NULL))) {
    uint64_t *v = (uint64_t *)tu_xmalloc((size_t)(nq + 1) * sizeof *v);
    tu_unpack(values_out, nq, cm->value_bits, v);
    for (i = 0; i < nq; ++i) {
      int ok = found[i] == (want[i] > 0);
      if (ok && want[i] > 0) {
        tu_kv probe;
        probe.key = q[i];
        probe.value = v[i];
        ok = bsearch(&probe, sorted + starts[i], (size_t)want[i], sizeof probe, tu_kv_cmp) != NULL;
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
  memset(found, TU_CANARY, (size_t)nq);
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
void tu_multi_check(tu_rng *rng, tu_multi *cm) {
  uint64_t size = UINT64_MAX, count = UINT64_MAX, distinct = tu_ref_size(&cm->keys), i;
  uint64_t kb = cm->key_bits / 8, vb = cm->value_bits / 8, nq, n_absent = 32;
  unsigned char *ek = (unsigned char *)tu_xmalloc((size_t)(cm->n + 3) * kb);
  unsigned char *ev = (unsigned char *)tu_xmalloc((size_t)(cm->n + 3) * vb);
  uint64_t *q = (uint64_t *)tu_xmalloc((size_t)(distinct + 16 + n_absent + 1) * sizeof *q);
  tu_kv *sorted = tu_multi_sorted(cm);
  const char *phase_note = "multivalue: size, export, counters, validate";
  tu_set_phase("%s", phase_note);
  if (CHECK_OK(cm->table, gh_size(cm->table, &size)))
    CHECK(size == cm->n, "gh_size %llu, %llu pairs inserted", (unsigned long long)size,
          (unsigned long long)cm->n);
  tu_check_counts(cm->table, cm->n, distinct);

  memset(ek, TU_CANARY, (size_t)(cm->n + 3) * kb);
  memset(ev, TU_CANARY, (size_t)(cm->n + 3) * vb);
  if (CHECK_OK(cm->table, gh_export(cm->table, ek, ev, cm->n + 3, &count, NULL)) &&
      CHECK(count == cm->n, "export wrote %llu pairs, %llu inserted", (unsigned long long)count,
            (unsigned long long)cm->n)) {
    tu_kv *got = (tu_kv *)tu_xmalloc((size_t)(count + 1) * sizeof *got);
    uint64_t *xk = (uint64_t *)tu_xmalloc((size_t)(count + 1) * sizeof *xk);
    uint64_t *xv = (uint64_t *)tu_xmalloc((size_t)(count + 1) * sizeof *xv);
    tu_unpack(ek, count, cm->key_bits, xk);
    tu_unpack(ev, count, cm->value_bits, xv);
    for (i = 0; i < count; ++i) {
      got[i].key = xk[i];
      got[i].value = xv[i];
    }
    qsort(got, (size_t)count, sizeof *got, tu_kv_cmp);
    for (i = 0; i < count; ++i) {
      if (!CHECK(got[i].key == sorted[i].key && got[i].value == sorted[i].value,
                 "export differs from the inserted pairs at sorted index %llu: (0x%llx, %llu), "
                 "expected (0x%llx, %llu)",
                 (unsigned long long)i, (unsigned long long)got[i].key,
                 (unsigned long long)got[i].value, (unsigned long long)sorted[i].key,
                 (unsigned long long)sorted[i].value))
        break;
    }
    for (i = count * kb; i < (count + 3) * kb; ++i) {
      if (!CHECK(ek[i] == TU_CANARY, "export wrote keys_out past count")) break;
    }
    free(xv);
    free(xk);
    free(got);
  }
  if (CHECK_OK(cm->table, gh_validate(cm->table))) tu_check_no_error_text(cm->table, "gh_validate");

  nq = tu_ref_keys(&cm->keys, q);
  for (i = 0; i < 16 && distinct > 0; ++i) q[nq++] = q[tu_below(rng, distinct)];
  tu_gen_unique_keys(rng, cm->key_bits, n_absent, &cm->keys, q + nq);
  nq += n_absent;
  tu_shuffle(rng, q, nq);
  tu_multi_query(cm, q, nq);
  tu_set_phase("%s", "");
  free(sorted);
  free(q);
  free(ev);
  free(ek);
}

/* Values for multi-value inserts: often tiny (so identical pairs occur), sometimes any. */
void tu_multi_values(tu_rng *rng, unsigned value_bits, uint64_t n, uint64_t *out) {
  uint64_t i;
  for (i = 0; i < n; ++i) {
    out[i] = tu_below(rng, 3) == 0 ? tu_next(rng) & tu_mask(value_bits) : tu_below(rng, 3);
  }
}

/* ---------------------------------------------------------------------------------------- */
/* A table of any variant with its model                                                     */
/* ---------------------------------------------------------------------------------------- */

int tu_model_create(tu_model *m, const gh_config *cfg) {
  memset(m, 0, sizeof *m);
  m->variant = cfg->variant;
  switch (cfg->variant) {
    case GH_VARIANT_MAP:
      return tu_table_create(&m->map, cfg);
    case GH_VARIANT_COMPACTING:
      return tu_compact_create(&m->compact, cfg);
    case GH_VARIANT_MULTIVALUE:
      return tu_multi_create(&m->multi, cfg);
  }
  return 0;
}

void tu_model_destroy(tu_model *m) {
  switch (m->variant) {
    case GH_VARIANT_MAP:
      tu_table_destroy(&m->map);
      break;
    case GH_VARIANT_COMPACTING:
      tu_compact_destroy(&m->compact);
      break;
    case GH_VARIANT_MULTIVALUE:
      tu_multi_destroy(&m->multi);
      break;
  }
}

gh_table *tu_model_table(const tu_model *m) {
  switch (m->variant) {
    case GH_VARIANT_MAP:
      return m->map.table;
    case GH_VARIANT_COMPACTING:
      return m->compact.table;
    case GH_VARIANT_MULTIVALUE:
      return m->multi.table;
  }
  return NULL;
}

unsigned tu_model_key_bits(const tu_model *m) {
  switch (m->variant) {
    case GH_VARIANT_MAP:
      return m->map.key_bits;
    case GH_VARIANT_COMPACTING:
      return m->compact.key_bits;
    case GH_VARIANT_MULTIVALUE:
      return m->multi.key_bits;
  }
  return 0;
}

unsigned tu_model_value_bits(const tu_model *m) {
  switch (m->variant) {
    case GH_VARIANT_MAP:
      return m->map.value_bits;
    case GH_VARIANT_COMPACTING:
      return m->compact.id_bits;
    case GH_VARIANT_MULTIVALUE:
      return m->multi.value_bits;
  }
  return 0;
}

uint64_t tu_model_size(const tu_model *m) {
  switch (m->variant) {
    case GH_VARIANT_MAP:
      return tu_ref_size(&m->map.ref);
    case GH_VARIANT_COMPACTING:
      return m->compact.size;
    case GH_VARIANT_MULTIVALUE:
      return m->multi.n;
  }
  return 0;
}

int tu_model_contains(const tu_model *m, uint64_t key) {
  switch (m->variant) {
    case GH_VARIANT_MAP:
      return tu_ref_contains(&m->map.ref, key);
    case GH_VARIANT_COMPACTING:
      return tu_ref_contains(&m->compact.ids, key);
    case GH_VARIANT_MULTIVALUE:
      return tu_ref_contains(&m->multi.keys, key);
  }
  return 0;
}

void tu_model_check(tu_rng *rng, tu_model *m) {
  switch (m->variant) {
    case GH_VARIANT_MAP: {
      uint64_t n = tu_ref_size(&m->map.ref);
      uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *keys);
      tu_ref_keys(&m->map.ref, keys);
      tu_check_all(&m->map);
      if (n > 0) tu_check_find(&m->map, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
      free(keys);
      break;
    }
    case GH_VARIANT_COMPACTING:
      tu_compact_check(rng, &m->compact);
      break;
    case GH_VARIANT_MULTIVALUE:
      tu_multi_check(rng, &m->multi);
      break;
  }
}

void tu_model_note_insert(tu_model *m, const uint64_t *keys, const uint64_t *values, uint64_t n,
                          gh_dup_policy policy, const uint8_t *skip, const uint64_t *fresh,
                          uint64_t nfresh) {
  switch (m->variant) {
    case GH_VARIANT_MAP:
      tu_ref_insert(&m->map.ref, keys, values, n, policy, skip);
      break;
    case GH_VARIANT_COMPACTING:
      tu_compact_learn(&m->compact, fresh, nfresh);
      break;
    case GH_VARIANT_MULTIVALUE:
      tu_multi_note_insert(&m->multi, keys, values, n);
      break;
  }
}

void tu_model_note_erase(tu_model *m, const uint64_t *keys, uint64_t n) {
  switch (m->variant) {
    case GH_VARIANT_MAP:
      tu_ref_erase(&m->map.ref, keys, n);
      break;
    case GH_VARIANT_COMPACTING:
      break; /* compacting tables do not erase */
    case GH_VARIANT_MULTIVALUE:
      tu_multi_note_erase(&m->multi, keys, n);
      break;
  }
}

void tu_model_note_clear(tu_model *m) {
  switch (m->variant) {
    case GH_VARIANT_MAP:
      tu_ref_clear(&m->map.ref);
      break;
    case GH_VARIANT_COMPACTING:
      tu_ref_clear(&m->compact.ids);
      m->compact.size = 0;
      break;
    case GH_VARIANT_MULTIVALUE:
      m->multi.n = 0;
      tu_ref_clear(&m->multi.keys);
      break;
  }
}

void tu_model_insert(tu_model *m, const uint64_t *keys, const uint64_t *values, uint64_t n,
                     gh_dup_policy policy, int allow_full) {
  switch (m->variant) {
    case GH_VARIANT_MAP:
      tu_insert(&m->map, keys, values, n, policy, allow_full, NULL);
      break;
    case GH_VARIANT_COMPACTING:
      tu_compact_insert(&m->compact, keys, n);
      break;
    case GH_VARIANT_MULTIVALUE:
      tu_multi_insert(&m->multi, keys, values, n);
      break;
  }
}

void tu_model_erase(tu_model *m, const uint64_t *keys, uint64_t n) {
  switch (m->variant) {
    case GH_VARIANT_MAP:
      tu_erase(&m->map, keys, n);
      break;
    case GH_VARIANT_COMPACTING:
      break; /* compacting tables do not erase */
    case GH_VARIANT_MULTIVALUE:
      tu_multi_erase(&m->multi, keys, n);
      break;
  }
}

void tu_model_clear(tu_model *m) {
  switch (m->variant) {
    case GH_VARIANT_MAP:
      tu_clear(&m->map);
      break;
    case GH_VARIANT_COMPACTING:
      tu_compact_clear(&m->compact);
      break;
    case GH_VARIANT_MULTIVALUE:
      tu_multi_clear(&m->multi);
      break;
  }
}
