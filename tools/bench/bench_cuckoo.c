/*
 * bench_cuckoo.c - the experiments of Alcantara et al., "Building an Efficient Hash Table on the
 * GPU" (section 4.5), on gpuhash's GH_CUCKOO table, next to the chapter's baseline: the pairs
 * radix-sorted (CUB) and searched by binary search (bench_sorted.h).
 *
 *   a  build and find of n = 2^16 .. 2^27 unique pairs, d = 4, table 1.25 n; the sorted array
 *      built (sort) and searched (one binary search per query) from the same pairs
 *   b  find in a table of n pairs (d = 3 and 4) vs the fraction of absent queries, 0 .. 100 %
 *   c  build, find and find of absent keys vs table factor (1.05 .. 4) x d (2 .. 5), with the
 *      restarts of each build; factors below d's minimum are reported as skipped
 *   d  compacting and multivalue tables vs average key multiplicity (1 .. 512), against the
 *      sorted structure (sort, run-length encoding, scan; binary search)
 *
 * Every timed build inserts into a table created just before (untimed) with its own seed, so
 * each build draws fresh hash constants and its restart count is an independent trial. Every
 * run is checked before its time is kept, as in bench_warpdrive.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

/* Left free on the device for the CUDA context and the library's scratch. */
#define CK_DEVICE_RESERVE_BYTES ((size_t)256 << 20)
#define CK_D 4         /* the chapter's defaults: 4 hash functions, */
#define CK_FACTOR 1.25 /* 1.25 N slots */
#define CK_MIN_D 2
#define CK_MAX_D 5
#define CK_ID_BYTES 4u /* compacting: ids are 32-bit values */
#define CK_MAX_RUNS (BENCH_MAX_WARMUP + BENCH_MAX_REPS)

/* The smallest table factor gh_create accepts for d hash functions (gpuhash.h). */
static const double CK_MIN_FACTOR[CK_MAX_D + 1] = {0.0, 0.0, 2.1, 1.1, 1.03, 1.02};
/* Scenario b's numbers of hash functions. */
static const unsigned CK_B_D[] = {3, 4};

/* Inputs and outputs, allocated once for all the cuckoo scenarios. */
typedef struct ck_buffers {
  uint64_t n;          /* elements of the n-sized buffers: the largest n of the scenarios run */
  void *keys;          /* present keys (scenario d: keys with repeats) */
  void *queries;       /* absent or mixed query keys; compacting: gh_keys_of_ids output */
  void *values;        /* values of the pairs */
  void *values_out;    /* find output: values, ids, or a multivalue lookup's values */
  uint8_t *flags;      /* found_out */
  uint64_t d_n;        /* elements of the multivalue buffers (scenario d's n, or 0) */
  uint64_t *offsets;   /* d_n + 1: gh_find_all's CSR offsets */
  uint64_t *counts;    /* d_n: gh_count's counts; the sorted lookup's run starts */
  bench_sorted sorted; /* keys / values n, unique keys and runs d_n, CUB temp */
} ck_buffers;

/* What one measured configuration is. */
typedef struct ck_cell {
  const char *scenario;
  gh_variant variant;
  unsigned d;
  double factor;
  double absent_fraction; /* NAN: not applicable */
  double multiplicity;    /* NAN: not applicable */
} ck_cell;

typedef struct ck_context {
  bench_run *run;
  const bench_backend *backend;
  const bench_options *opts;
  ck_buffers *b;
  unsigned key_bytes, value_bytes;
  ck_cell cell;
  uint64_t n;        /* pairs inserted / sorted */
  uint64_t distinct; /* distinct keys among them */
  /* The lookup being measured. */
  const void *query_keys;
  uint64_t queries;
  uint64_t expected_found;
  int check_values; /* every query is present: values_out must equal the values */
  uint64_t total;   /* values the last multivalue lookup returned */
  /* The table. */
  gh_config config;
  gh_table *table;
  unsigned build_runs; /* builds of the measurement so far, warm-ups included */
  uint32_t restarts[CK_MAX_RUNS];
  uint64_t grows[CK_MAX_RUNS];
  gh_stats stats; /* after the last build */
  char description[192];
} ck_context;

static const char *ck_variant_name(gh_variant variant) {
  return variant == GH_VARIANT_COMPACTING   ? "compacting"
         : variant == GH_VARIANT_MULTIVALUE ? "multivalue"
                                            : "map";
}

/* ---- Failures (as in bench_warpdrive.c) --------------------------------------------------- */

static int ck_call_failed(const ck_context *c, const char *call, gh_status status) {
  return bench_call_failed("cuckoo", c->description, c->table, call, status);
}

#define ck_wrong(c, ...) bench_wrong("cuckoo", (c)->description, __VA_ARGS__)

static int ck_backend_failed(const ck_context *c, const char *what) {
  return bench_error("cuckoo %s: %s: %s", c->description, what, c->backend->error());
}

/* *count = elements of a[0, n) (elem_bytes wide) that differ from b[i], or from value if b is
 * NULL. */
static int ck_count_differ(const ck_context *c, const void *a, const void *b, uint64_t value,
                           uint64_t n, unsigned elem_bytes, uint64_t *count) {
  if (c->backend->count_differ(a, b, value, n, elem_bytes, count) != 0)
    return ck_backend_failed(c, "verifying");
  return BENCH_STEP_OK;
}

/* Checks that a[0, queries) equals b[0, queries) (elem_bytes wide); what names the elements
 * that differ in the message. */
static int ck_expect_same(const ck_context *c, const void *a, const void *b, unsigned elem_bytes,
                          const char *what) {
  uint64_t wrong = 0;
  int result = ck_count_differ(c, a, b, 0, c->queries, elem_bytes, &wrong);
  if (result == BENCH_STEP_OK && wrong != 0)
    return ck_wrong(c, "%llu %s", (unsigned long long)wrong, what);
  return result;
}

/* Checks a lookup's found flags: *found must be c->expected_found. */
static int ck_check_found(const ck_context *c, const char *what) {
  uint64_t found = 0;
  int result = ck_count_differ(c, c->b->flags, NULL, 0, c->queries, 1, &found);
  if (result == BENCH_STEP_OK && found != c->expected_found)
    return ck_wrong(c, "%s found %llu of %llu queries, expected %llu", what,
                    (unsigned long long)found, (unsigned long long)c->queries,
                    (unsigned long long)c->expected_found);
  return result;
}

/* Checks that a multivalue lookup returned every one of the n values: offsets[queries] = n. */
static int ck_check_total(const ck_context *c, const char *what, uint64_t total) {
  uint64_t differ = 0;
  int result =
      ck_count_differ(c, c->b->offsets + c->queries, NULL, c->n, 1, sizeof(uint64_t), &differ);
  if (result == BENCH_STEP_OK && (total != c->n || differ != 0))
    return ck_wrong(c,
                    "%s of the %llu distinct keys returned %llu values (offsets end %s), "
                    "expected %llu",
                    what, (unsigned long long)c->queries, (unsigned long long)total,
                    differ ? "differs" : "agrees", (unsigned long long)c->n);
  return result;
}

/* ---- The hash table's steps --------------------------------------------------------------- */

/* Untimed, before each build: a new empty table with its own seed (fresh hash constants). */
static int ck_table_setup(void *context) {
  ck_context *c = context;
  gh_destroy(c->table);
  c->table = NULL;
  c->config.seed = c->opts->seed + c->build_runs;
  gh_status s = gh_create(&c->config, &c->table);
  return s == GH_OK ? BENCH_STEP_OK : ck_call_failed(c, "gh_create", s);
}

static int ck_table_build(void *context) {
  ck_context *c = context;
  const gh_variant variant = c->config.variant;
  gh_status s = gh_insert(
      c->table, c->b->keys, variant == GH_VARIANT_COMPACTING ? NULL : c->b->values, c->n,
      variant == GH_VARIANT_MULTIVALUE ? GH_APPEND : GH_KEEP_FIRST, NULL, c->backend->stream);
  return s == GH_OK ? BENCH_STEP_OK : ck_call_failed(c, "gh_insert", s);
}

/* After each build: the size, and this build's restarts and growths. */
static int ck_table_build_check(void *context) {
  ck_context *c = context;
  const uint64_t expected = c->config.variant == GH_VARIANT_MULTIVALUE ? c->n : c->distinct;
  gh_status s = gh_get_stats(c->table, &c->stats);
  if (s != GH_OK) return ck_call_failed(c, "gh_get_stats", s);
  if (c->stats.size != expected ||
      (c->config.variant == GH_VARIANT_MULTIVALUE && c->stats.distinct_keys != c->distinct))
    return ck_wrong(c,
                    "after the build gh_stats says %llu entries / %llu distinct keys, "
                    "expected %llu / %llu",
                    (unsigned long long)c->stats.size, (unsigned long long)c->stats.distinct_keys,
                    (unsigned long long)expected, (unsigned long long)c->distinct);
  if (c->build_runs < CK_MAX_RUNS) {
    c->restarts[c->build_runs] = (uint32_t)c->stats.restarts;
    c->grows[c->build_runs] = c->stats.grows;
  }
  ++c->build_runs;
  if (c->opts->validate && c->build_runs == 1 && (s = gh_validate(c->table)) != GH_OK)
    return ck_call_failed(c, "gh_validate", s);
  return BENCH_STEP_OK;
}

static int ck_table_find(void *context) {
  ck_context *c = context;
  gh_status s = gh_find(c->table, c->query_keys, c->queries, c->b->values_out, c->b->flags, NULL,
                        c->backend->stream);
  return s == GH_OK ? BENCH_STEP_OK : ck_call_failed(c, "gh_find", s);
}

static int ck_find_check(void *context) {
  ck_context *c = context;
  int result = ck_check_found(c, "find");
  if (result != BENCH_STEP_OK || !c->check_values) return result;
  return ck_expect_same(c, c->b->values_out, c->b->values, c->value_bytes,
                        "wrong values returned by find");
}

/* Compacting: every query found, and each id maps back to its key (gh_keys_of_ids). */
static int ck_table_ids_check(void *context) {
  ck_context *c = context;
  int result = ck_check_found(c, "find");
  if (result != BENCH_STEP_OK) return result;
  gh_status s =
      gh_keys_of_ids(c->table, c->b->values_out, c->queries, c->b->queries, c->backend->stream);
  if (s != GH_OK) return ck_call_failed(c, "gh_keys_of_ids", s);
  return ck_expect_same(c, c->b->queries, c->query_keys, c->key_bytes,
                        "ids that do not map back to their key");
}

/* Multivalue lookup in the shape of the API: gh_count, then gh_find_all. */
static int ck_table_find_all(void *context) {
  ck_context *c = context;
  gh_status s =
      gh_count(c->table, c->query_keys, c->queries, c->b->counts, &c->total, c->backend->stream);
  if (s != GH_OK) return ck_call_failed(c, "gh_count", s);
  s = gh_find_all(c->table, c->query_keys, c->queries, c->b->offsets, c->b->values_out, c->total,
                  c->backend->stream);
  return s == GH_OK ? BENCH_STEP_OK : ck_call_failed(c, "gh_find_all", s);
}

/* Either multivalue lookup returned each of the n values once: total and offsets[queries]. */
static int ck_find_all_check(void *context) {
  ck_context *c = context;
  return ck_check_total(c, "the multivalue lookup", c->total);
}

static const bench_steps CK_TABLE_BUILD = {ck_table_setup, ck_table_build, ck_table_build_check};
static const bench_steps CK_TABLE_FIND = {NULL, ck_table_find, ck_find_check};
static const bench_steps CK_TABLE_FIND_IDS = {NULL, ck_table_find, ck_table_ids_check};
static const bench_steps CK_TABLE_FIND_ALL = {NULL, ck_table_find_all, ck_find_all_check};

/* ---- The sorted structure's steps --------------------------------------------------------- */

/* Map and multivalue: sort the pairs; compacting: sort the keys. Then for compacting and
 * multivalue the distinct keys and their runs (multivalue: with the offsets). */
static int ck_sorted_build(void *context) {
  ck_context *c = context;
  bench_sorted *s = &c->b->sorted;
  if (c->backend->sorted_build(s, c->b->keys, c->b->values) != 0)
    return ck_backend_failed(c, "sorting");
  if (c->cell.variant != GH_VARIANT_MAP &&
      c->backend->sorted_runs(s, c->cell.variant == GH_VARIANT_MULTIVALUE) != 0)
    return ck_backend_failed(c, "run-length encoding");
  return BENCH_STEP_OK;
}

static int ck_sorted_build_check(void *context) {
  ck_context *c = context;
  if (c->cell.variant != GH_VARIANT_MAP && c->b->sorted.unique != c->distinct)
    return ck_wrong(c, "the sorted structure has %llu distinct keys, expected %llu",
                    (unsigned long long)c->b->sorted.unique, (unsigned long long)c->distinct);
  return BENCH_STEP_OK;
}

/* Map: search the sorted pairs; compacting: the distinct keys, the id being the position. */
static int ck_sorted_find(void *context) {
  ck_context *c = context;
  const bench_sorted *s = &c->b->sorted;
  const int ids = c->cell.variant == GH_VARIANT_COMPACTING;
  if (c->backend->sorted_find(ids ? s->unique_keys : s->keys, ids ? NULL : s->values,
                              ids ? s->unique : s->n, c->key_bytes,
                              ids ? CK_ID_BYTES : c->value_bytes, c->query_keys, c->queries,
                              c->b->values_out, c->b->flags) != 0)
    return ck_backend_failed(c, "binary search");
  return BENCH_STEP_OK;
}

static int ck_sorted_find_all(void *context) {
  ck_context *c = context;
  if (c->backend->sorted_find_all(&c->b->sorted, c->query_keys, c->queries, c->b->offsets,
                                  c->b->counts, c->b->values_out, c->n, &c->total) != 0)
    return ck_backend_failed(c, "binary search (multivalue)");
  return BENCH_STEP_OK;
}

static const bench_steps CK_SORTED_BUILD = {NULL, ck_sorted_build, ck_sorted_build_check};
static const bench_steps CK_SORTED_FIND = {NULL, ck_sorted_find, ck_find_check};
static const bench_steps CK_SORTED_FIND_ALL = {NULL, ck_sorted_find_all, ck_find_all_check};

/* ---- Records ------------------------------------------------------------------------------ */

static void ck_describe(ck_context *c, const char *design) {
  const ck_cell *cell = &c->cell;
  int used = snprintf(c->description, sizeof c->description, "%s %s %s n=%llu", cell->scenario,
                      design, ck_variant_name(cell->variant), (unsigned long long)c->n);
  if (cell->d != 0 && used > 0 && (size_t)used < sizeof c->description)
    used += snprintf(c->description + used, sizeof c->description - (size_t)used,
                     " d=%u factor=%.2f", cell->d, cell->factor);
  if (!isnan(cell->multiplicity) && used > 0 && (size_t)used < sizeof c->description)
    snprintf(c->description + used, sizeof c->description - (size_t)used, " multiplicity=%g",
             cell->multiplicity);
}

/* A record with the cell's fields; the caller adds the timing. */
static bench_record ck_record(const ck_context *c, const char *design, const char *op,
                              uint64_t ops) {
  bench_record r = {0};
  const int hashed = strcmp(design, "cuckoo") == 0;
  r.design = design;
  r.op = op;
  r.dist = c->cell.variant == GH_VARIANT_MAP ? "unique" : "cyclic";
  r.n = ops;
  r.key_bits = (int)c->key_bytes * 8;
  r.value_bits =
      c->cell.variant == GH_VARIANT_COMPACTING ? (int)CK_ID_BYTES * 8 : (int)c->value_bytes * 8;
  r.load_factor = NAN;
  r.unit = "Gops/s";
  r.ceiling = r.ceiling_alt = -1;
  r.distinct = c->distinct;
  r.scenario = c->cell.scenario;
  r.variant = ck_variant_name(c->cell.variant);
  r.hash_family = hashed ? (c->config.hash_family == GH_HASH_XOR ? "xor" : "multiply") : NULL;
  r.hash_functions = hashed ? c->cell.d : 0;
  r.table_factor = hashed ? c->cell.factor : NAN;
  r.absent_fraction = c->cell.absent_fraction;
  r.multiplicity = c->cell.multiplicity;
  r.pairs = c->n;
  r.policy = strcmp(op, "build") != 0                   ? NULL
             : c->cell.variant == GH_VARIANT_MULTIVALUE ? "append"
                                                        : "keep_first";
  return r;
}

/* Times steps on the current cell and reports it: hash builds against the CAS ceiling (and
 * atomicAdd), hash lookups against random sector reads; the sorted structure has none. */
static int ck_measure(ck_context *c, const char *design, const char *op, const bench_steps *steps,
                      uint64_t ops, unsigned reps) {
  const int hashed = strcmp(design, "cuckoo") == 0;
  const int build = strcmp(op, "build") == 0;
  bench_record r = ck_record(c, design, op, ops);
  ck_describe(c, design);
  c->build_runs = 0;
  int result = bench_measure(c->backend, steps, c, c->opts->warmup, reps, &r.stats);
  if (result != BENCH_STEP_OK) return result;
  r.rate = (double)ops / (r.stats.ms_median * 1e-3) / 1e9;
  if (hashed) {
    size_t host_bytes = 0, device_bytes = 0;
    r.ceiling = build ? BCU_LIMIT_CAS64 : BCU_LIMIT_SECTOR_READ;
    r.ceiling_alt = build ? BCU_LIMIT_ATOMIC_ADD32 : -1;
    gh_status s = gh_capacity(c->table, &r.capacity);
    if (s == GH_OK) s = gh_memory_usage(c->table, &host_bytes, &device_bytes);
    if (s != GH_OK) return ck_call_failed(c, "gh_capacity / gh_memory_usage", s);
    r.table_bytes = c->backend->gh_kind == GH_BACKEND_CUDA ? device_bytes : host_bytes;
    r.stored = c->stats.size;
    r.slots = c->stats.slots;
    r.eviction_limit = c->stats.eviction_limit;
  } else {
    const bench_sorted *s = &c->b->sorted;
    r.stored = c->cell.variant == GH_VARIANT_MAP ? c->n : s->unique;
    r.table_bytes =
        c->n * (c->key_bytes + (c->cell.variant == GH_VARIANT_COMPACTING ? 0 : c->value_bytes));
    if (c->cell.variant != GH_VARIANT_MAP)
      r.table_bytes +=
          s->unique *
          (c->key_bytes + sizeof(uint64_t) * (c->cell.variant == GH_VARIANT_MULTIVALUE ? 2 : 1));
  }
  if (hashed && build) {
    r.build_runs = reps;
    for (unsigned k = 0; k < reps; ++k) {
      r.restarts[k] = c->restarts[c->opts->warmup + k];
      r.grows += c->grows[c->opts->warmup + k];
    }
  }
  return bench_report_add(c->run, &r) == 0 ? BENCH_STEP_OK : BENCH_STEP_FATAL;
}

/* ---- Configurations ----------------------------------------------------------------------- */

static gh_config ck_config(const ck_context *c, gh_variant variant, unsigned d, double factor,
                           uint64_t keys) {
  gh_config config = gh_config_default(GH_CUCKOO);
  config.backend = c->backend->gh_kind;
  config.device = c->opts->device;
  config.key_bits = c->key_bytes * 8;
  config.value_bits = variant == GH_VARIANT_COMPACTING ? CK_ID_BYTES * 8 : c->value_bytes * 8;
  config.variant = variant;
  config.capacity = keys > 0 ? keys : 1;
  config.hash_functions = d;
  config.table_factor = factor;
  return config;
}

static void ck_set_cell(ck_context *c, const char *scenario, gh_variant variant, unsigned d,
                        double factor) {
  c->cell.scenario = scenario;
  c->cell.variant = variant;
  c->cell.d = d;
  c->cell.factor = factor;
  c->cell.absent_fraction = NAN;
  c->cell.multiplicity = NAN;
  c->config = ck_config(c, variant, d, factor, c->distinct);
}

/* The lookup to measure next. */
static void ck_set_queries(ck_context *c, const void *keys, uint64_t queries, uint64_t found,
                           int check_values) {
  c->query_keys = keys;
  c->queries = queries;
  c->expected_found = found;
  c->check_values = check_values;
}

static void ck_drop_table(ck_context *c) {
  gh_destroy(c->table);
  c->table = NULL;
}

/* A cell the library rejects by design (table factor below d's minimum): one record saying so. */
static int ck_skip(ck_context *c, const char *reason) {
  bench_record r = ck_record(c, "cuckoo", "build", c->n);
  r.stats.ms_median = r.stats.ms_min = r.stats.ms_max = NAN;
  r.rate = NAN;
  r.skipped = reason;
  return bench_report_add(c->run, &r) == 0 ? BENCH_STEP_OK : BENCH_STEP_FATAL;
}

/* Builds the cell's table once, untimed and checked (for lookups measured without a build). */
static int ck_build_once(ck_context *c) {
  int result;
  c->build_runs = 0;
  if ((result = ck_table_setup(c)) != BENCH_STEP_OK ||
      (result = ck_table_build(c)) != BENCH_STEP_OK)
    return result;
  return ck_table_build_check(c);
}

static bench_gen_spec ck_spec(const ck_context *c, bench_gen_kind kind, unsigned bits,
                              uint64_t index_offset) {
  bench_gen_spec spec = {
      .kind = kind, .bits = bits, .seed = c->opts->seed, .index_offset = index_offset, .period = 1};
  return spec;
}

static int ck_generate(ck_context *c, void *out, uint64_t n, bench_gen_spec spec) {
  if (c->backend->generate(out, n, spec, NULL) != 0)
    return ck_backend_failed(c, "generating inputs");
  return BENCH_STEP_OK;
}

/* ---- The scenarios ------------------------------------------------------------------------ */

/* a: build and find vs n, d = 4 at 1.25 n, against sort + binary search. */
static int ck_scenario_a(ck_context *c) {
  int result = BENCH_STEP_OK;
  const bench_cuckoo_grid *g = &c->opts->cuckoo;
  for (uint64_t n = g->a_min_n; result != BENCH_STEP_FATAL;
       n = n * 2 < g->a_max_n ? n * 2 : g->a_max_n) {
    c->n = c->distinct = n;
    c->b->sorted.n = n;
    c->b->sorted.value_bytes = c->value_bytes;
    ck_set_cell(c, "cuckoo-a", GH_VARIANT_MAP, CK_D, CK_FACTOR);
    ck_set_queries(c, c->b->keys, n, n, 1);
    result = ck_measure(c, "cuckoo", "build", &CK_TABLE_BUILD, n, c->opts->reps);
    if (result == BENCH_STEP_OK)
      result = ck_measure(c, "cuckoo", "find", &CK_TABLE_FIND, n, c->opts->reps);
    ck_drop_table(c);
    if (result == BENCH_STEP_BROKEN) ++c->run->broken;
    if (result == BENCH_STEP_FATAL) break;
    result = ck_measure(c, "sorted", "build", &CK_SORTED_BUILD, n, c->opts->reps);
    if (result == BENCH_STEP_OK)
      result = ck_measure(c, "sorted", "find", &CK_SORTED_FIND, n, c->opts->reps);
    if (result == BENCH_STEP_BROKEN) ++c->run->broken;
    if (n == g->a_max_n) break;
  }
  return result;
}

/* b: find vs the fraction of absent queries, d = 3 and 4. */
static int ck_scenario_b(ck_context *c) {
  int result = BENCH_STEP_OK;
  const bench_cuckoo_grid *g = &c->opts->cuckoo;
  c->n = c->distinct = g->bc_n;
  for (size_t di = 0; di < sizeof CK_B_D / sizeof CK_B_D[0] && result != BENCH_STEP_FATAL; ++di) {
    ck_set_cell(c, "cuckoo-b", GH_VARIANT_MAP, CK_B_D[di], CK_FACTOR);
    ck_describe(c, "cuckoo");
    result = ck_build_once(c);
    for (unsigned pi = 0; pi < g->absent_count && result == BENCH_STEP_OK; ++pi) {
      const unsigned percent = g->absent_percents[pi];
      bench_gen_spec spec = ck_spec(c, BENCH_GEN_MIXED_KEYS, c->key_bytes * 8, c->n);
      spec.absent_percent = percent;
      result = ck_generate(c, c->b->queries, c->n, spec);
      if (result != BENCH_STEP_OK) break;
      c->cell.absent_fraction = percent / 100.0;
      ck_set_queries(c, c->b->queries, c->n, c->n - c->n * percent / 100, percent == 0);
      result = ck_measure(c, "cuckoo", "find", &CK_TABLE_FIND, c->n, g->sweep_reps);
    }
    ck_drop_table(c);
    if (result == BENCH_STEP_BROKEN) ++c->run->broken, result = BENCH_STEP_OK;
  }
  return result;
}

/* c: build, find and find of absent keys vs table factor x d. */
static int ck_scenario_c(ck_context *c) {
  const bench_cuckoo_grid *g = &c->opts->cuckoo;
  c->n = c->distinct = g->bc_n;
  int result = ck_generate(c, c->b->queries, c->n,
                           ck_spec(c, BENCH_GEN_UNIQUE_KEYS, c->key_bytes * 8, c->n));
  for (unsigned d = CK_MIN_D; d <= CK_MAX_D && result != BENCH_STEP_FATAL; ++d)
    for (unsigned fi = 0; fi < g->factor_count && result != BENCH_STEP_FATAL; ++fi) {
      char message[256];
      ck_set_cell(c, "cuckoo-c", GH_VARIANT_MAP, d, g->factors[fi]);
      ck_describe(c, "cuckoo");
      if (gh_config_validate(&c->config, message, sizeof message) != GH_OK) {
        if (c->cell.factor < CK_MIN_FACTOR[d]) {
          result = ck_skip(c, "below d's minimum");
          continue;
        }
        bench_error("cuckoo %s: config rejected: %s", c->description, message);
        result = BENCH_STEP_BROKEN;
      }
      if (result == BENCH_STEP_OK)
        result = ck_measure(c, "cuckoo", "build", &CK_TABLE_BUILD, c->n, g->sweep_reps);
      ck_set_queries(c, c->b->keys, c->n, c->n, 1);
      if (result == BENCH_STEP_OK)
        result = ck_measure(c, "cuckoo", "find", &CK_TABLE_FIND, c->n, g->sweep_reps);
      ck_set_queries(c, c->b->queries, c->n, 0, 0);
      if (result == BENCH_STEP_OK)
        result = ck_measure(c, "cuckoo", "find_absent", &CK_TABLE_FIND, c->n, g->sweep_reps);
      ck_drop_table(c);
      if (result == BENCH_STEP_BROKEN) ++c->run->broken, result = BENCH_STEP_OK;
    }
  return result;
}

/* d, one variant at one multiplicity: the table (build; lookups), then the sorted structure. */
static int ck_variant_pair(ck_context *c, gh_variant variant) {
  const unsigned reps = c->opts->cuckoo.sweep_reps;
  const int multi = variant == GH_VARIANT_MULTIVALUE;
  const char *lookup = multi ? "find_all" : "find";
  const double multiplicity = c->cell.multiplicity;
  ck_set_cell(c, "cuckoo-d", variant, CK_D, CK_FACTOR);
  c->cell.multiplicity = multiplicity;
  /* Compacting: each key looked up once per occurrence, as in the chapter; multivalue: each
   * distinct key once (the first `distinct` keys of the cyclic stream), so that the values
   * returned are the n values once, not n x multiplicity. */
  if (multi)
    ck_set_queries(c, c->b->keys, c->distinct, c->distinct, 0);
  else
    ck_set_queries(c, c->b->keys, c->n, c->n, 0);
  c->b->sorted.n = c->n;
  c->b->sorted.value_bytes = multi ? c->value_bytes : 0;
  int result = ck_measure(c, "cuckoo", "build", &CK_TABLE_BUILD, c->n, reps);
  if (result == BENCH_STEP_OK)
    result = ck_measure(c, "cuckoo", lookup, multi ? &CK_TABLE_FIND_ALL : &CK_TABLE_FIND_IDS,
                        c->queries, reps);
  ck_drop_table(c);
  if (result == BENCH_STEP_BROKEN) ++c->run->broken, result = BENCH_STEP_OK;
  if (result == BENCH_STEP_FATAL) return result;
  result = ck_measure(c, "sorted", "build", &CK_SORTED_BUILD, c->n, reps);
  if (result == BENCH_STEP_OK)
    result = ck_measure(c, "sorted", lookup, multi ? &CK_SORTED_FIND_ALL : &CK_SORTED_FIND,
                        c->queries, reps);
  if (result == BENCH_STEP_BROKEN) ++c->run->broken, result = BENCH_STEP_OK;
  return result;
}

/* d: compacting and multivalue vs average key multiplicity, against the sorted structure. */
static int ck_scenario_d(ck_context *c) {
  const bench_cuckoo_grid *g = &c->opts->cuckoo;
  int result = BENCH_STEP_OK;
  c->n = g->d_n;
  for (unsigned mi = 0; mi < g->multiplicity_count && result != BENCH_STEP_FATAL; ++mi) {
    const uint64_t m = g->multiplicities[mi];
    bench_gen_spec spec = ck_spec(c, BENCH_GEN_CYCLIC_KEYS, c->key_bytes * 8, 0);
    c->distinct = spec.period = (c->n + m - 1) / m;
    result = ck_generate(c, c->b->keys, c->n, spec);
    if (result != BENCH_STEP_OK) break;
    c->cell.multiplicity = (double)c->n / (double)c->distinct;
    result = ck_variant_pair(c, GH_VARIANT_COMPACTING);
    if (result == BENCH_STEP_OK) result = ck_variant_pair(c, GH_VARIANT_MULTIVALUE);
  }
  return result;
}

/* ---- Buffers ------------------------------------------------------------------------------ */

static uint64_t ck_largest_n(const bench_options *opts) {
  const bench_cuckoo_grid *g = &opts->cuckoo;
  uint64_t n = 0;
  if ((opts->scenarios & BENCH_SCENARIO_CUCKOO_A) && g->a_max_n > n) n = g->a_max_n;
  if ((opts->scenarios & (BENCH_SCENARIO_CUCKOO_B | BENCH_SCENARIO_CUCKOO_C)) && g->bc_n > n)
    n = g->bc_n;
  if ((opts->scenarios & BENCH_SCENARIO_CUCKOO_D) && g->d_n > n) n = g->d_n;
  return n;
}

/* Bytes of every buffer, and of the largest table, for the preflight check. */
static size_t ck_plan_bytes(const ck_context *c, const ck_buffers *b, size_t temp_bytes,
                            size_t *table_bytes) {
  const size_t n = b->n, kb = c->key_bytes, vb = c->value_bytes;
  const size_t out = vb > CK_ID_BYTES ? vb : CK_ID_BYTES;
  const bench_cuckoo_grid *g = &c->opts->cuckoo;
  size_t host_bytes = 0, device_bytes = 0, largest = 0;
  /* The largest table: factor 4 (or the largest) at b/c's n, or 1.25 at the largest n. */
  double factor = CK_FACTOR;
  for (unsigned i = 0; i < g->factor_count; ++i)
    if (g->factors[i] > factor) factor = g->factors[i];
  gh_config big = ck_config(c, GH_VARIANT_MAP, CK_MIN_D, factor, g->bc_n);
  gh_config wide = ck_config(c, GH_VARIANT_MAP, CK_D, CK_FACTOR, n);
  if (gh_memory_estimate(&big, &host_bytes, &device_bytes) == GH_OK)
    largest = c->backend->gh_kind == GH_BACKEND_CUDA ? device_bytes : host_bytes;
  if (gh_memory_estimate(&wide, &host_bytes, &device_bytes) == GH_OK) {
    const size_t bytes = c->backend->gh_kind == GH_BACKEND_CUDA ? device_bytes : host_bytes;
    if (bytes > largest) largest = bytes;
  }
  *table_bytes = largest;
  return n * (3 * kb + 2 * vb + out + 1) + b->d_n * (kb + 4 * sizeof(uint64_t)) + sizeof(uint64_t) +
         temp_bytes;
}

static int ck_allocate(ck_context *c, ck_buffers *b) {
  const size_t n = b->n, kb = c->key_bytes, vb = c->value_bytes;
  const size_t out = vb > CK_ID_BYTES ? vb : CK_ID_BYTES;
  const bench_backend *be = c->backend;
  size_t temp_bytes = 0, free_bytes = 0, table_bytes = 0;
  if (be->sorted_temp_bytes(n, c->key_bytes, c->value_bytes, &temp_bytes) != 0)
    return ck_backend_failed(c, "sizing the sort's scratch");
  const size_t need = ck_plan_bytes(c, b, temp_bytes, &table_bytes);
  if (be->memory(&free_bytes) != 0) return ck_backend_failed(c, "reading free memory");
  if (need + table_bytes + CK_DEVICE_RESERVE_BYTES > free_bytes)
    return bench_error(
        "cuckoo scenarios at n = %llu need %zu MiB (buffers %zu MiB + largest "
        "table %zu MiB + %zu MiB reserve); only %zu MiB are free: use a smaller --n",
        (unsigned long long)n, (need + table_bytes + CK_DEVICE_RESERVE_BYTES) >> 20, need >> 20,
        table_bytes >> 20, CK_DEVICE_RESERVE_BYTES >> 20, free_bytes >> 20);
  b->sorted.key_bytes = c->key_bytes;
  b->sorted.value_bytes = c->value_bytes;
  b->sorted.temp_bytes = temp_bytes;
  if (bench_alloc(be, &b->keys, n * kb, "cuckoo keys") != 0 ||
      bench_alloc(be, &b->queries, n * kb, "cuckoo queries") != 0 ||
      bench_alloc(be, &b->values, n * vb, "cuckoo values") != 0 ||
      bench_alloc(be, &b->values_out, n * out, "cuckoo lookup output") != 0 ||
      bench_alloc(be, (void **)&b->flags, n, "cuckoo found flags") != 0 ||
      bench_alloc(be, &b->sorted.keys, n * kb, "sorted keys") != 0 ||
      bench_alloc(be, &b->sorted.values, n * vb, "sorted values") != 0 ||
      bench_alloc(be, &b->sorted.temp, temp_bytes, "sort scratch") != 0)
    return BENCH_STEP_FATAL;
  if (b->d_n != 0 &&
      (bench_alloc(be, &b->sorted.unique_keys, b->d_n * kb, "sorted distinct keys") != 0 ||
       bench_alloc(be, (void **)&b->sorted.run_counts, b->d_n * sizeof(uint64_t), "run counts") !=
           0 ||
       bench_alloc(be, (void **)&b->sorted.run_offsets, b->d_n * sizeof(uint64_t), "run offsets") !=
           0 ||
       bench_alloc(be, (void **)&b->counts, b->d_n * sizeof(uint64_t), "lookup counts") != 0 ||
       bench_alloc(be, (void **)&b->offsets, (b->d_n + 1) * sizeof(uint64_t), "lookup offsets") !=
           0))
    return BENCH_STEP_FATAL;
  return BENCH_STEP_OK;
}

static int ck_release(const bench_backend *backend, ck_buffers *b) {
  void *all[] = {b->keys,
                 b->queries,
                 b->values,
                 b->values_out,
                 b->flags,
                 b->counts,
                 b->offsets,
                 b->sorted.keys,
                 b->sorted.values,
                 b->sorted.unique_keys,
                 b->sorted.run_counts,
                 b->sorted.run_offsets,
                 b->sorted.temp};
  const int result =
      bench_release_all(backend, all, sizeof all / sizeof all[0], "the cuckoo inputs");
  memset(b, 0, sizeof *b);
  return result;
}

/* ---- The scenarios' entry point ----------------------------------------------------------- */

int bench_cuckoo_run(bench_run *run, const bench_backend *backend, const bench_options *opts) {
  static const struct {
    unsigned bit;
    int (*run)(ck_context *c);
    const char *title;
  } SCENARIOS[] = {
      {BENCH_SCENARIO_CUCKOO_A, ck_scenario_a,
       "cuckoo-a (chapter 4.5.1): build and find vs n, d = 4, table 1.25 n, vs sort + binary "
       "search"},
      {BENCH_SCENARIO_CUCKOO_B, ck_scenario_b,
       "cuckoo-b (chapter 4.5.1): find vs the fraction of absent queries, d = 3 and 4"},
      {BENCH_SCENARIO_CUCKOO_C, ck_scenario_c,
       "cuckoo-c (chapter 4.3.1.1): build and find vs table factor x d, restarts per build"},
      {BENCH_SCENARIO_CUCKOO_D, ck_scenario_d,
       "cuckoo-d (chapter 4.5.2): compacting and multivalue vs key multiplicity, vs the sorted "
       "structure"},
  };
  ck_buffers buffers = {0};
  ck_context c = {0};
  char title[512], n_text[32];
  int result;

  if (!(opts->scenarios & BENCH_SCENARIO_CUCKOO)) return BENCH_STEP_OK;
  c.run = run;
  c.backend = backend;
  c.opts = opts;
  c.b = &buffers;
  c.key_bytes = opts->key_bits / 8;
  c.value_bytes = opts->value_bits != 0 ? opts->value_bits / 8 : 4; /* maps need values */
  snprintf(c.description, sizeof c.description, "inputs");
  buffers.n = ck_largest_n(opts);
  buffers.d_n = opts->scenarios & BENCH_SCENARIO_CUCKOO_D ? opts->cuckoo.d_n : 0;

  result = ck_allocate(&c, &buffers);
  /* The unique keys and values of the largest n: every smaller n uses a prefix. */
  if (result == BENCH_STEP_OK)
    result = ck_generate(&c, buffers.keys, buffers.n,
                         ck_spec(&c, BENCH_GEN_UNIQUE_KEYS, c.key_bytes * 8, 0));
  if (result == BENCH_STEP_OK)
    result = ck_generate(&c, buffers.values, buffers.n,
                         ck_spec(&c, BENCH_GEN_VALUES, c.value_bytes * 8, 0));

  for (size_t i = 0; i < sizeof SCENARIOS / sizeof SCENARIOS[0] && result != BENCH_STEP_FATAL;
       ++i) {
    if (!(opts->scenarios & SCENARIOS[i].bit)) continue;
    snprintf(title, sizeof title,
             "%s\n  on the %s backend: %u-bit keys, %u-bit values, largest n = %s, median of %u "
             "(a) / %u (b-d) after %u warm-up",
             SCENARIOS[i].title, backend->name, c.key_bytes * 8, c.value_bytes * 8,
             bench_format_count(buffers.n, n_text, sizeof n_text), opts->reps,
             opts->cuckoo.sweep_reps, opts->warmup);
    bench_report_header(title);
    result = SCENARIOS[i].run(&c);
    if (result == BENCH_STEP_BROKEN) result = BENCH_STEP_OK; /* counted where it happened */
  }
  ck_drop_table(&c);
  if (ck_release(backend, &buffers) != BENCH_STEP_OK) result = BENCH_STEP_FATAL;
  return result == BENCH_STEP_FATAL ? BENCH_STEP_FATAL : BENCH_STEP_OK;
}
