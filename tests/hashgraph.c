/*
 * hashgraph - the HashGraph table's own promises (Green), beyond the registry-driven matrix:
 *
 *   hashgraph BACKEND [--part multiplicity|skew|load|positions|builds|sized|config|find_all] [--seed S]
 *
 *   multiplicity  multi-value tables whose keys come 1, 8 and 1024 times each, at load factors
 *                 0.25, 1 and 4, 32- and 64-bit keys: two insert batches (the second builds the
 *                 table again from its edges and the new entries), then a quarter of the keys
 *                 erased; after every phase gh_count, gh_find_all (values as multisets per key),
 *                 gh_find, gh_contains, the size, the export and validate against a model
 *   skew          keys drawn with a heavy skew (a few keys hold most entries), the same checks
 *   load          a map at load factors 0.25 and 4 under every policy, against the reference
 *   positions     inserts without values (GH_CAP_INDEX_PAYLOADS): each entry's value is its position
 *                 in the call's keys, 32- and 64-bit values, two calls (positions restart at 0),
 *                 more than 2^32 positions into 32-bit values refused,
 *                 against the model; a map refuses values NULL
 *   builds        build V2 (the CUDA backend's, from 2^16 entries) gives the table build V1 (the host
 *                 backend's) gives: the same entries built on both backends, 2^20, 1000003,
 *                 2^20 + 4097 and 2^12 of them (V1 on both), load factors 0.25, 1 and 4, 32- and 64-bit keys, V2's bins of the
 *                 default size, the smallest (1024 vertices) and the largest (32768); both validate
 *                 (every edge under its key's vertex, offsets from 0 to the edge count) and export
 *                 the same multiset of (key, value), so their offsets agree and the tables differ
 *                 at most in the order inside a vertex. On the host backend: nothing to compare
 *   sized         a table created for n entries is built with them in place: through an allocator
 *                 that refuses more live memory than the table as created and the build's scratch
 *                 (a build into new arrays needs the table twice), the build, gh_clear and a second
 *                 build of other keys succeed, each checked against its entries, with
 *                 gh_memory_usage as created; past n (the limit lifted) the table grows, and
 *                 gh_clear takes it back to the created size; nothing left after gh_destroy
 *   find_all      one gh_find_all over keys of 0, 1, 2 and 12 values, interleaved, at load factor 4
 *                 (keys of one value in vertices the warp scans): each query's values at its
 *                 offsets, 32- and 64-bit values and positions; values_out NULL gives the offsets,
 *                 and so does a buffer one value short (GH_ERR_BUFFER_TOO_SMALL)
 *   config        load_factor out of [0.25, 4] and bin_vertices not 0 or a power of two in
 *                 [1024, 32768] refused naming the field, nothing created; the bounds accepted and
 *                 given back by gh_get_config
 *
 * Every failure prints the case, the phase and the seed.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_models.h"
#include "test_util.h"
#include "tracking_alloc.h"

#define HG_BASE_SEED 0x4A5A6A7Aull

static gh_backend hg_backend;
static uint64_t hg_seed;

static gh_config hg_config(gh_variant variant, unsigned key_bits, unsigned value_bits, double load_factor) {
  gh_config cfg = gh_config_default(GH_HASHGRAPH);
  cfg.backend = hg_backend;
  cfg.variant = variant;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  cfg.capacity = 1000;
  cfg.load_factor = load_factor;
  cfg.seed = hg_seed;
  return cfg;
}

/* Entries on the device: 2^20 (2^15 on the host). */
static uint64_t entries(void) { return hg_backend == GH_BACKEND_CUDA ? (1u << 20) : (1u << 15); }

/* Inserts keys[0, n) in two batches, checks, erases a quarter of the distinct keys, checks. */
static void multi_phases(tu_rng *rng, tu_multi *cm, const uint64_t *keys, const uint64_t *values, uint64_t n,
                         const uint64_t *distinct, uint64_t n_distinct) {
  tu_set_phase("first insert batch (%llu entries)", (unsigned long long)(n / 2));
  tu_multi_insert(cm, keys, values, n / 2);
  tu_multi_check(rng, cm);
  tu_set_phase("second insert batch (a rebuild with the stored edges)");
  tu_multi_insert(cm, keys + n / 2, values + n / 2, n - n / 2);
  tu_multi_check(rng, cm);
  tu_set_phase("erase a quarter of the keys");
  tu_multi_erase(cm, distinct, n_distinct / 4);
  tu_multi_check(rng, cm);
}

static void multiplicity_case(unsigned key_bits, double load_factor, uint64_t copies) {
  const uint64_t n = entries(), n_distinct = n / copies;
  tu_rng rng = tu_rng_make(tu_mix_seed(hg_seed, key_bits, (uint64_t)(load_factor * 4), copies));
  uint64_t *distinct = (uint64_t *)tu_xmalloc(n_distinct * 8), *keys = (uint64_t *)tu_xmalloc(n * 8),
           *values = (uint64_t *)tu_xmalloc(n * 8);
  tu_gen_unique_keys(&rng, key_bits, n_distinct, NULL, distinct);
  for (uint64_t i = 0; i < n; ++i) keys[i] = distinct[i % n_distinct];
  tu_shuffle(&rng, keys, n);
  tu_multi_values(&rng, 32, n, values);
  tu_set_context("hashgraph multiplicity %s k%u load %g copies %llu seed 0x%016llx", tu_backend_name(hg_backend), key_bits,
                 load_factor, (unsigned long long)copies, (unsigned long long)hg_seed);
  const gh_config cfg = hg_config(GH_VARIANT_MULTIVALUE, key_bits, 32, load_factor);
  tu_multi cm;
  if (tu_multi_create(&cm, &cfg)) {
    multi_phases(&rng, &cm, keys, values, n, distinct, n_distinct);
    tu_multi_destroy(&cm);
  }
  printf("  multiplicity k%u load %-4g copies %4llu: %s\n", key_bits, load_factor, (unsigned long long)copies,
         tu_failure_count() ? "FAILED" : "ok");
  free(distinct);
  free(keys);
  free(values);
}

static void part_multiplicity(void) {
  static const double loads[] = {0.25, 1.0, 4.0};
  static const uint64_t copies[] = {1, 8, 1024};
  for (unsigned kb = 32; kb <= 64; kb += 32)
    for (size_t l = 0; l < sizeof loads / sizeof loads[0]; ++l)
      for (size_t c = 0; c < sizeof copies / sizeof copies[0]; ++c) multiplicity_case(kb, loads[l], copies[c]);
}

/* Key j of 4096 drawn with probability falling as j^-1.5 (by inverting u^2.5): a few keys hold most
 * entries, most keys a few. */
static void part_skew(void) {
  const uint64_t n = entries(), pool = 4096;
  tu_rng rng = tu_rng_make(tu_mix_seed(hg_seed, 7, 7, 7));
  uint64_t *distinct = (uint64_t *)tu_xmalloc(pool * 8), *keys = (uint64_t *)tu_xmalloc(n * 8),
           *values = (uint64_t *)tu_xmalloc(n * 8);
  tu_gen_unique_keys(&rng, 64, pool, NULL, distinct);
  for (uint64_t i = 0; i < n; ++i) {
    const double u = (double)tu_below(&rng, 1u << 30) / (double)(1u << 30);
    keys[i] = distinct[(uint64_t)((double)pool * pow(u, 2.5)) % pool];
  }
  tu_multi_values(&rng, 64, n, values);
  tu_set_context("hashgraph skew %s seed 0x%016llx", tu_backend_name(hg_backend), (unsigned long long)hg_seed);
  const gh_config cfg = hg_config(GH_VARIANT_MULTIVALUE, 64, 64, 1.0);
  tu_multi cm;
  if (tu_multi_create(&cm, &cfg)) {
    multi_phases(&rng, &cm, keys, values, n, distinct, pool);
    tu_multi_destroy(&cm);
  }
  printf("  skew: %s\n", tu_failure_count() ? "FAILED" : "ok");
  free(distinct);
  free(keys);
  free(values);
}

static void part_load(void) {
  static const double loads[] = {0.25, 4.0};
  static const gh_dup_policy policies[] = {GH_KEEP_FIRST, GH_OVERWRITE, GH_ADD, GH_MIN, GH_MAX};
  const uint64_t n = entries() / 4;
  for (size_t l = 0; l < sizeof loads / sizeof loads[0]; ++l)
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; ++p) {
      tu_rng rng = tu_rng_make(tu_mix_seed(hg_seed, l, p, 3));
      uint64_t *pool = (uint64_t *)tu_xmalloc(n * 8), *keys = (uint64_t *)tu_xmalloc(n * 8),
               *values = (uint64_t *)tu_xmalloc(n * 8);
      tu_gen_unique_keys(&rng, 32, n / 2, NULL, pool);
      tu_set_context("hashgraph load %s load %g policy %d seed 0x%016llx", tu_backend_name(hg_backend), loads[l],
                     (int)policies[p], (unsigned long long)hg_seed);
      const gh_config cfg = hg_config(GH_VARIANT_MAP, 32, 32, loads[l]);
      tu_table h;
      if (tu_table_create(&h, &cfg)) {
        for (unsigned batch = 0; batch < 3 && tu_failure_count() == 0; ++batch) {
          tu_set_phase("batch %u: keys from a pool of %llu, repeated", batch, (unsigned long long)(n / 2));
          tu_gen_from_pool(&rng, pool, n / 2, n, keys);
          tu_gen_values(&rng, 32, n, values);
          tu_insert(&h, keys, values, n, policies[p], 0, NULL);
          tu_check_find(&h, pool, n / 2, TU_FIND_FOUND | TU_FIND_VALUES);
          tu_check_valid(&h);
        }
        tu_set_phase("erase half the pool");
        tu_erase(&h, pool, n / 4);
        tu_check_find(&h, pool, n / 2, TU_FIND_FOUND | TU_FIND_VALUES);
        tu_check_export(&h, 3);
        tu_check_valid(&h);
        tu_table_destroy(&h);
      }
      free(pool);
      free(keys);
      free(values);
    }
  printf("  load: %s\n", tu_failure_count() ? "FAILED" : "ok");
}

static void part_positions(void) {
  const uint64_t n = entries(), n_distinct = n / 4;
  gh_design_traits traits;
  CHECK_OK(NULL, gh_design_info(GH_HASHGRAPH, &traits));
  CHECK(traits.capabilities & GH_CAP_INDEX_PAYLOADS, "hashgraph lacks GH_CAP_INDEX_PAYLOADS");
  for (unsigned vb = 32; vb <= 64; vb += 32) {
    tu_rng rng = tu_rng_make(tu_mix_seed(hg_seed, vb, 5, 5));
    uint64_t *distinct = (uint64_t *)tu_xmalloc(n_distinct * 8), *keys = (uint64_t *)tu_xmalloc(n * 8),
             *positions = (uint64_t *)tu_xmalloc(n * 8);
    tu_gen_unique_keys(&rng, 32, n_distinct, NULL, distinct);
    tu_gen_from_pool(&rng, distinct, n_distinct, n, keys);
    for (uint64_t i = 0; i < n; ++i) positions[i] = i < n / 2 ? i : i - n / 2;
    tu_set_context("hashgraph positions %s v%u seed 0x%016llx", tu_backend_name(hg_backend), vb, (unsigned long long)hg_seed);
    const gh_config cfg = hg_config(GH_VARIANT_MULTIVALUE, 32, vb, 1.0);
    tu_multi cm;
    if (tu_multi_create(&cm, &cfg)) {
      for (unsigned call = 0; call < 2 && tu_failure_count() == 0; ++call) {
        tu_set_phase("insert call %u without values", call);
        void *packed = tu_pack(keys + call * (n / 2), n / 2, 32);
        if (CHECK_OK(cm.table, gh_insert(cm.table, packed, NULL, n / 2, GH_APPEND, NULL, NULL)))
          tu_multi_note_insert(&cm, keys + call * (n / 2), positions + call * (n / 2), n / 2);
        free(packed);
        tu_multi_check(&rng, &cm);
      }
      tu_multi_destroy(&cm);
    }
    free(distinct);
    free(keys);
    free(positions);
  }
  tu_set_phase("more positions than 32-bit values hold: refused before a key is read");
  {
    const gh_config narrow = hg_config(GH_VARIANT_MULTIVALUE, 32, 32, 1.0);
    gh_table *t = NULL;
    if (CHECK_OK(NULL, gh_create(&narrow, &t))) {
      const uint32_t key = 7; /* (n says 2^32 + 1 keys: none may be read) */
      CHECK_STATUS(t, gh_insert(t, &key, NULL, (1ull << 32) + 1u, GH_APPEND, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
      CHECK(strstr(gh_last_error(t), "value_bits 64") != NULL, "the message does not point at value_bits 64: %s",
            gh_last_error(t));
      uint64_t size = 1;
      CHECK(gh_size(t, &size) == GH_OK && size == 0, "a refused insert left %llu entries", (unsigned long long)size);
      gh_destroy(t);
    }
  }
  tu_set_phase("a map keeps its values: values NULL refused");
  const gh_config map_cfg = hg_config(GH_VARIANT_MAP, 32, 32, 1.0);
  gh_table *t = NULL;
  if (CHECK_OK(NULL, gh_create(&map_cfg, &t))) {
    const uint32_t key = 7;
    CHECK_STATUS(t, gh_insert(t, &key, NULL, 1, GH_OVERWRITE, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
    uint64_t size = 1;
    CHECK(gh_size(t, &size) == GH_OK && size == 0, "a refused insert left %llu keys", (unsigned long long)size);
    gh_destroy(t);
  }
  printf("  positions: %s\n", tu_failure_count() ? "FAILED" : "ok");
}

static int compare_kv(const void *a, const void *b) {
  const tu_kv *x = (const tu_kv *)a, *y = (const tu_kv *)b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->value < y->value ? -1 : (x->value > y->value);
}

/* The table's entries, sorted; NULL when the export failed. */
static tu_kv *sorted_export(gh_table *t, unsigned key_bits, uint64_t n) {
  void *keys = tu_xmalloc(n * (key_bits / 8u)), *values = tu_xmalloc(n * 4u);
  uint64_t count = 0, *k = (uint64_t *)tu_xmalloc(n * 8u), *v = (uint64_t *)tu_xmalloc(n * 8u);
  tu_kv *out = NULL;
  if (CHECK_OK(t, gh_export(t, keys, values, n, &count, NULL)) &&
      CHECK(count == n, "exported %llu entries of %llu", (unsigned long long)count, (unsigned long long)n)) {
    tu_unpack(keys, n, key_bits, k);
    tu_unpack(values, n, 32, v);
    out = (tu_kv *)tu_xmalloc(n * sizeof *out);
    for (uint64_t i = 0; i < n; ++i) out[i] = (tu_kv){k[i], v[i]};
    qsort(out, n, sizeof *out, compare_kv);
  }
  free(keys);
  free(values);
  free(k);
  free(v);
  return out;
}

static void part_builds(void) {
  if (hg_backend != GH_BACKEND_CUDA) {
    printf("  builds: build V2 is the CUDA backend's; the comparison runs there\n");
    return;
  }
  static const double loads[] = {0.25, 1.0, 4.0};
  /* Entries and V2's bin size (0: the default); 2^12 entries build with V1 on both backends. Up to
   * 256 bins V2 sorts the entries into bins in one pass, more in two (the default bins at 2^20
   * entries: 256; bins of 1024 vertices: 256 .. 4096); 1000003 entries in bins of 1024 vertices
   * leave the last coarse range of bins and the last tile of every range partly filled. */
  static const struct {
    uint64_t n;
    unsigned bin_vertices;
  } cases[] = {{1u << 20, 0}, {1u << 20, 1024}, {1u << 20, 32768}, {1000003, 1024}, {(1u << 20) + 4097, 0}, {1u << 12, 0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
    for (unsigned kb = 32; kb <= 64; kb += 32)
      for (size_t l = 0; l < sizeof loads / sizeof loads[0]; ++l) {
        const uint64_t n = cases[c].n, n_distinct = n / 4;
        tu_rng rng = tu_rng_make(tu_mix_seed(hg_seed, kb, l, n + cases[c].bin_vertices));
        uint64_t *distinct = (uint64_t *)tu_xmalloc(n_distinct * 8), *keys = (uint64_t *)tu_xmalloc(n * 8),
                 *values = (uint64_t *)tu_xmalloc(n * 8);
        tu_gen_unique_keys(&rng, kb, n_distinct, NULL, distinct);
        tu_gen_from_pool(&rng, distinct, n_distinct, n, keys);
        tu_multi_values(&rng, 32, n, values);
        tu_set_context("hashgraph builds %llu entries k%u load %g bin_vertices %u seed 0x%016llx", (unsigned long long)n,
                       kb, loads[l], cases[c].bin_vertices, (unsigned long long)hg_seed);
        void *packed_keys = tu_pack(keys, n, kb), *packed_values = tu_pack(values, n, 32);
        gh_table *tables[2] = {NULL, NULL};
        tu_kv *exports[2] = {NULL, NULL};
        for (int b = 0; b < 2; ++b) {
          gh_config cfg = hg_config(GH_VARIANT_MULTIVALUE, kb, 32, loads[l]);
          cfg.backend = b == 0 ? GH_BACKEND_CUDA : GH_BACKEND_HOST;
          cfg.bin_vertices = cases[c].bin_vertices;
          tu_set_phase("the build on the %s backend", tu_backend_name(cfg.backend));
          if (!CHECK_OK(NULL, gh_create(&cfg, &tables[b]))) continue;
          if (CHECK_OK(tables[b], gh_insert(tables[b], packed_keys, packed_values, n, GH_APPEND, NULL, NULL)) &&
              CHECK_OK(tables[b], gh_validate(tables[b])))
            exports[b] = sorted_export(tables[b], kb, n);
        }
        tu_set_phase("the two tables' entries");
        if (exports[0] && exports[1])
          for (uint64_t i = 0; i < n; ++i)
            if (!CHECK(exports[0][i].key == exports[1][i].key && exports[0][i].value == exports[1][i].value,
                       "sorted entry %llu: (%llu, %llu) built on the GPU, (%llu, %llu) on the host",
                       (unsigned long long)i, (unsigned long long)exports[0][i].key,
                       (unsigned long long)exports[0][i].value, (unsigned long long)exports[1][i].key,
                       (unsigned long long)exports[1][i].value))
              break;
        for (int b = 0; b < 2; ++b) {
          gh_destroy(tables[b]);
          free(exports[b]);
        }
        free(packed_keys);
        free(packed_values);
        free(distinct);
        free(keys);
        free(values);
      }
  printf("  builds: %s\n", tu_failure_count() ? "FAILED" : "ok");
}

/* The table's memory as gh_memory_usage gives it (host + device bytes). */
static size_t memory_of(gh_table *t) {
  size_t host = 0, device = 0;
  CHECK_OK(t, gh_memory_usage(t, &host, &device));
  return host + device;
}

/* Inserts n entries of fresh keys (each twice: a multi-value table) and checks the table holds
 * exactly them. */
static void insert_checked(gh_table *t, tu_rng *rng, uint64_t n) {
  uint64_t *distinct = (uint64_t *)tu_xmalloc(n / 2u * 8u), *keys = (uint64_t *)tu_xmalloc(n * 8u),
           *values = (uint64_t *)tu_xmalloc(n * 8u);
  tu_gen_unique_keys(rng, 32, n / 2u, NULL, distinct);
  for (uint64_t i = 0; i < n; ++i) keys[i] = distinct[i / 2u], values[i] = i;
  void *packed_keys = tu_pack(keys, n, 32), *packed_values = tu_pack(values, n, 32);
  uint64_t size = 0;
  if (CHECK_OK(t, gh_insert(t, packed_keys, packed_values, n, GH_APPEND, NULL, NULL)) && CHECK_OK(t, gh_validate(t)) &&
      CHECK_OK(t, gh_size(t, &size)) && CHECK(size == n, "%llu entries after inserting %llu into an empty table",
                                               (unsigned long long)size, (unsigned long long)n)) {
    tu_kv *stored = sorted_export(t, 32, n), *given = (tu_kv *)tu_xmalloc(n * sizeof *given);
    for (uint64_t i = 0; i < n; ++i) given[i] = (tu_kv){keys[i], values[i]};
    qsort(given, n, sizeof *given, compare_kv);
    for (uint64_t i = 0; stored && i < n; ++i)
      if (!CHECK(stored[i].key == given[i].key && stored[i].value == given[i].value,
                 "sorted entry %llu: (%llu, %llu) stored, (%llu, %llu) inserted", (unsigned long long)i,
                 (unsigned long long)stored[i].key, (unsigned long long)stored[i].value,
                 (unsigned long long)given[i].key, (unsigned long long)given[i].value))
        break;
    free(stored);
    free(given);
  }
  free(packed_keys);
  free(packed_values);
  free(distinct);
  free(keys);
  free(values);
}

static void part_sized(void) {
  const uint64_t n = entries();
  tu_rng rng = tu_rng_make(tu_mix_seed(hg_seed, 7, 0, n));
  gh_config cfg = hg_config(GH_VARIANT_MULTIVALUE, 32, 32, 1.0);
  cfg.capacity = n;
  tu_tracker *tracker = tu_tracker_new();
  tu_tracker_attach(tracker, &cfg);
  gh_table *t = NULL;
  tu_set_context("hashgraph sized: capacity %llu seed 0x%016llx", (unsigned long long)n, (unsigned long long)hg_seed);
  tu_set_phase("gh_create");
  if (!CHECK_OK(NULL, gh_create(&cfg, &t))) {
    tu_tracker_delete(tracker);
    return;
  }
  const size_t created = memory_of(t);
  /* The table as created (16 bytes an entry: offsets and edges) and what a build in place takes
   * besides: its scratch (V1's cursor or V2's binned entries, 8 bytes an entry, and CUB's few
   * kilobytes) and, on the GPU, the staged host arrays (8 bytes an entry, and as much for the
   * export's), with room to spare there; not a second table (16 bytes an entry more). */
  const uint64_t besides = n * (hg_backend == GH_BACKEND_CUDA ? 24u : 8u) + (64u << 10);
  tu_tracker_set_limit(tracker, tu_tracker_live_bytes(tracker, GH_MEMORY_HOST) +
                                    tu_tracker_live_bytes(tracker, GH_MEMORY_DEVICE) + besides);
  tu_set_phase("the first build, of n entries (in place)");
  insert_checked(t, &rng, n);
  CHECK(memory_of(t) == created, "%zu bytes after the build, %zu as created", memory_of(t), created);
  tu_set_phase("gh_clear");
  uint64_t size = 1;
  if (CHECK_OK(t, gh_clear(t, NULL)) && CHECK_OK(t, gh_validate(t)) && CHECK_OK(t, gh_size(t, &size)))
    CHECK(size == 0, "%llu entries after gh_clear", (unsigned long long)size);
  CHECK(memory_of(t) == created, "%zu bytes after gh_clear, %zu as created", memory_of(t), created);
  tu_set_phase("a second build, of other keys, after gh_clear");
  insert_checked(t, &rng, n);
  CHECK(memory_of(t) == created, "%zu bytes after the second build, %zu as created", memory_of(t), created);
  tu_set_phase("past the capacity: the table grows");
  tu_tracker_set_limit(tracker, 0);
  if (CHECK_OK(t, gh_clear(t, NULL))) insert_checked(t, &rng, 2u * n);
  CHECK(memory_of(t) > created, "%zu bytes holding 2n entries, %zu as created for n", memory_of(t), created);
  tu_set_phase("gh_clear of the grown table");
  if (CHECK_OK(t, gh_clear(t, NULL))) CHECK_OK(t, gh_validate(t));
  CHECK(memory_of(t) == created, "%zu bytes after clearing the grown table, %zu as created", memory_of(t), created);
  tu_set_phase("a build after that");
  insert_checked(t, &rng, n);
  gh_destroy(t);
  tu_tracker_check_clean(tracker, "after gh_destroy");
  tu_tracker_delete(tracker);
  printf("  sized: %s\n", tu_failure_count() ? "FAILED" : "ok");
}

static void expect_refused(double load_factor, unsigned bin_vertices) {
  gh_config cfg = hg_config(GH_VARIANT_MULTIVALUE, 32, 32, load_factor);
  cfg.bin_vertices = bin_vertices;
  const char *field = bin_vertices ? "bin_vertices" : "load_factor";
  char message[256] = "";
  gh_table *t = (gh_table *)1;
  CHECK_STATUS(NULL, gh_config_validate(&cfg, message, sizeof message), GH_ERR_INVALID_ARGUMENT);
  CHECK(strstr(message, field) != NULL, "load_factor %g, bin_vertices %u: the message does not name %s: \"%s\"",
        load_factor, bin_vertices, field, message);
  CHECK_STATUS(NULL, gh_create(&cfg, &t), GH_ERR_INVALID_ARGUMENT);
  CHECK(t == NULL, "load_factor %g, bin_vertices %u: gh_create left a table behind a refusal", load_factor,
        bin_vertices);
}

static void part_config(void) {
  tu_set_context("hashgraph config %s", tu_backend_name(hg_backend));
  tu_set_phase("load factors out of [0.25, 4]");
  expect_refused(0.2, 0);
  expect_refused(4.5, 0);
  expect_refused(0.0, 0);
  expect_refused(NAN, 0);
  tu_set_phase("bin_vertices not a power of two in [1024, 32768]");
  expect_refused(1.0, 512);
  expect_refused(1.0, 3000);
  expect_refused(1.0, 65536);
  expect_refused(1.0, 0xFFFFFFFFu);
  tu_set_phase("the bounds themselves");
  for (int k = 0; k < 2; ++k) {
    const double load = k ? 4.0 : 0.25;
    const unsigned bins = k ? 32768u : 1024u;
    gh_config cfg = hg_config(GH_VARIANT_MULTIVALUE, 32, 32, load);
    cfg.bin_vertices = bins;
    gh_table *t = NULL;
    if (!CHECK_OK(NULL, gh_create(&cfg, &t))) continue;
    gh_config got;
    if (CHECK_OK(t, gh_get_config(t, &got)))
      CHECK(got.load_factor == load && got.bin_vertices == bins,
            "gh_get_config gives load_factor %g, bin_vertices %u for %g, %u", got.load_factor, got.bin_vertices, load,
            bins);
    gh_destroy(t);
  }
  /* A program built against the header before bin_vertices: its struct ends there, and whatever
   * lies beyond it is not read (the default bins). */
  tu_set_phase("a config of the size before bin_vertices");
  gh_config old;
  memset(&old, 0x5A, sizeof old);
  if (CHECK_OK(NULL, gh_config_init(&old, offsetof(gh_config, bin_vertices), GH_VERSION_NUMBER, GH_HASHGRAPH))) {
    old.backend = hg_backend;
    gh_table *t = NULL;
    if (CHECK_OK(NULL, gh_create(&old, &t))) {
      gh_config got;
      if (CHECK_OK(t, gh_get_config(t, &got)))
        CHECK(got.bin_vertices == 0 && got.load_factor == 1.0, "bin_vertices %u, load_factor %g", got.bin_vertices,
              got.load_factor);
      gh_destroy(t);
    }
  }
  printf("  config: %s\n", tu_failure_count() ? "FAILED" : "ok");
}

/* gh_find_all over keys of 0, 1, 2 and 12 values in one call, query kinds interleaved so that a
 * warp holds all of them, at load factor 4 over few vertices (keys of one value then share
 * vertices of more than 8 edges, which the CUDA backend scans with the whole warp): the count
 * pass keeps each key's first value and the fill copies it for keys of one value and probes the
 * others again, so every kind is checked at its own offsets. Values given (32 and 64 bits) and
 * positions (no values); then values_out NULL: the offsets alone. */
static void find_all_mix_case(unsigned value_bits, int positions) {
  enum { SINGLE = 24, DOUBLE = 6, HEAVY = 2, HEAVY_COPIES = 12, ABSENT = 8 };
  const uint64_t n = SINGLE + 2 * DOUBLE + HEAVY * HEAVY_COPIES, queries = SINGLE + DOUBLE + HEAVY + ABSENT;
  tu_rng rng = tu_rng_make(tu_mix_seed(hg_seed, value_bits, (uint64_t)positions, 11));
  uint64_t distinct[SINGLE + DOUBLE + HEAVY + ABSENT], keys[SINGLE + 2 * DOUBLE + HEAVY * HEAVY_COPIES],
      values[SINGLE + 2 * DOUBLE + HEAVY * HEAVY_COPIES], query[SINGLE + DOUBLE + HEAVY + ABSENT];
  tu_gen_unique_keys(&rng, 32, queries, NULL, distinct);
  uint64_t at = 0;
  for (unsigned k = 0; k < SINGLE + DOUBLE + HEAVY; ++k) {
    const unsigned copies = k < SINGLE ? 1 : k < SINGLE + DOUBLE ? 2 : HEAVY_COPIES;
    for (unsigned c = 0; c < copies; ++c, ++at) keys[at] = distinct[k];
  }
  tu_shuffle(&rng, keys, n);
  for (uint64_t i = 0; i < n; ++i) values[i] = positions ? i : tu_next(&rng) >> (64 - value_bits);
  /* Queries: the kinds dealt in turn (one, two, heavy, absent, one, ...), each key once. */
  unsigned next[4] = {0, SINGLE, SINGLE + DOUBLE, SINGLE + DOUBLE + HEAVY}, ends[4] = {SINGLE, SINGLE + DOUBLE,
                                                                                     SINGLE + DOUBLE + HEAVY, queries};
  for (uint64_t q = 0, kind = 0; q < queries; kind = (kind + 1) % 4)
    if (next[kind] < ends[kind]) query[q++] = distinct[next[kind]++];
  tu_set_context("hashgraph find_all mix %s v%u%s seed 0x%016llx", tu_backend_name(hg_backend), value_bits,
                 positions ? " positions" : "", (unsigned long long)hg_seed);
  gh_config cfg = hg_config(GH_VARIANT_MULTIVALUE, 32, value_bits, 4.0);
  cfg.capacity = n;
  gh_table *t = NULL;
  if (!CHECK_OK(NULL, gh_create(&cfg, &t))) return;
  void *packed_keys = tu_pack(keys, n, 32), *packed_values = tu_pack(values, n, value_bits);
  void *packed_query = tu_pack(query, queries, 32);
  uint64_t offsets[SINGLE + DOUBLE + HEAVY + ABSENT + 1], bare[SINGLE + DOUBLE + HEAVY + ABSENT + 1];
  void *out = tu_xmalloc(n * 8);
  tu_set_phase("insert %llu entries", (unsigned long long)n);
  if (CHECK_OK(t, gh_insert(t, packed_keys, positions ? NULL : packed_values, n, GH_APPEND, NULL, NULL))) {
    tu_set_phase("gh_find_all of %llu queries of 1, 2, 12 and 0 values, interleaved", (unsigned long long)queries);
    if (CHECK_OK(t, gh_find_all(t, packed_query, queries, offsets, out, n, NULL))) {
      CHECK(offsets[0] == 0 && offsets[queries] == n, "offsets run from %llu to %llu, expected 0 to %llu",
            (unsigned long long)offsets[0], (unsigned long long)offsets[queries], (unsigned long long)n);
      for (uint64_t q = 0; q < queries && tu_failure_count() == 0; ++q) {
        uint64_t want[HEAVY_COPIES], got[HEAVY_COPIES], count = 0;
        for (uint64_t i = 0; i < n; ++i)
          if (keys[i] == query[q] && count < HEAVY_COPIES) want[count++] = values[i];
        const uint64_t have = offsets[q + 1] - offsets[q];
        if (!CHECK(have == count, "query %llu (key 0x%llx): %llu values, expected %llu", (unsigned long long)q,
                   (unsigned long long)query[q], (unsigned long long)have, (unsigned long long)count))
          break;
        tu_unpack((const char *)out + offsets[q] * (value_bits / 8), have, value_bits, got);
        qsort(want, count, sizeof want[0], tu_u64_cmp);
        qsort(got, have, sizeof got[0], tu_u64_cmp);
        CHECK(memcmp(want, got, count * sizeof want[0]) == 0, "query %llu (key 0x%llx): other values than inserted",
              (unsigned long long)q, (unsigned long long)query[q]);
      }
    }
    tu_set_phase("gh_find_all with values_out NULL: the offsets alone");
    if (CHECK_OK(t, gh_find_all(t, packed_query, queries, bare, NULL, n, NULL)))
      CHECK(memcmp(bare, offsets, sizeof bare) == 0, "offsets without values_out differ from those with it");
    tu_set_phase("gh_find_all into no room: GH_ERR_BUFFER_TOO_SMALL with the offsets");
    memset(bare, 0, sizeof bare);
    if (CHECK_STATUS(t, gh_find_all(t, packed_query, queries, bare, out, n - 1, NULL), GH_ERR_BUFFER_TOO_SMALL))
      CHECK(memcmp(bare, offsets, sizeof bare) == 0, "the offsets of a too small buffer differ");
  }
  CHECK_OK(t, gh_validate(t));
  gh_destroy(t);
  free(packed_keys);
  free(packed_values);
  free(packed_query);
  free(out);
}

static void part_find_all(void) {
  find_all_mix_case(32, 0);
  find_all_mix_case(64, 0);
  find_all_mix_case(32, 1);
  printf("  find_all mix: %s\n", tu_failure_count() ? "FAILED" : "ok");
}

typedef struct hg_part {
  const char *name;
  void (*run)(void);
} hg_part;

static const hg_part hg_parts[] = {
    {"multiplicity", part_multiplicity}, {"skew", part_skew},       {"load", part_load},
    {"positions", part_positions},       {"builds", part_builds},   {"sized", part_sized},
    {"config", part_config},             {"find_all", part_find_all}};

int main(int argc, char **argv) {
  const hg_part *part = NULL;
  hg_seed = HG_BASE_SEED;
  if (argc < 2 || !tu_parse_backend(argv[1], &hg_backend)) goto usage;
  for (int a = 2; a < argc; a += 2) {
    if (a + 1 >= argc) goto usage;
    if (strcmp(argv[a], "--part") == 0) {
      for (size_t i = 0; i < sizeof hg_parts / sizeof hg_parts[0]; ++i)
        if (strcmp(argv[a + 1], hg_parts[i].name) == 0) part = &hg_parts[i];
      if (part == NULL) goto usage;
    } else if (strcmp(argv[a], "--seed") == 0) {
      if (!tu_parse_u64(argv[a + 1], &hg_seed)) goto usage;
    } else {
      goto usage;
    }
  }
  tu_skip_unless_backend_usable(hg_backend);
  for (size_t i = 0; i < sizeof hg_parts / sizeof hg_parts[0]; ++i) {
    if (part != NULL && part != &hg_parts[i]) continue;
    printf("hashgraph %s %s (seed 0x%016llx)\n", tu_backend_name(hg_backend), hg_parts[i].name, (unsigned long long)hg_seed);
    fflush(stdout);
    hg_parts[i].run();
  }
  return tu_finish("hashgraph");
usage:
  fprintf(stderr, "usage: %s host|cuda [--part multiplicity|skew|load|positions|builds|sized|config|find_all] [--seed S]\n", argv[0]);
  return 2;
}
