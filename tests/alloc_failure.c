/*
 * alloc_failure - "nothing acknowledged is ever lost": every allocation of every operation of a
 * design, variant and backend fails in turn, and each failure must leave the table exactly as
 * it was.
 *
 *   alloc_failure BACKEND --design NAME --variant map|compacting|multivalue [--seed S]
 *
 * The table runs on the tracking allocator (tests/tracking_alloc.h: host blocks and, for CUDA
 * tables, device blocks from cudaMalloc), which fails the k-th allocation of a call on request.
 * For gh_create, k = 1, 2, ... until it succeeds: each failure must return GH_ERR_OUT_OF_MEMORY
 * with *table NULL and a message, and leave no block allocated. Then, on one table, each
 * operation in turn -- insert into the empty table, into a non-empty one (present and new keys,
 * repeated), of present keys only, past the capacity (the table grows, or, for designs with a
 * fixed capacity, reports GH_ERR_TABLE_FULL), find, contains, erase, count, find_all, the joins
 * (their count, their pairs; by the intersection where the design has it), export,
 * keys_of_ids, validate, clear, insert after clear -- runs with its 1st, 2nd, ... allocation
 * failing until it completes (tests/alloc_inject.h says what is checked after each failure:
 * the status, a message that says what was kept, no output written, size, memory and the
 * allocator's live bytes unchanged, no bad free, every acknowledged key found with its value(s),
 * validate). Operations the variant does not have are left out (contract checks that they say
 * GH_ERR_UNSUPPORTED). At the end gh_destroy must return every block, each with the size it was
 * allocated with.
 *
 * A variant the design does not accept is checked to be refused; the entry then passes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_inject.h"
#include "ref_models.h"
#include "test_util.h"
#include "tracking_alloc.h"

#define AF_BASE_SEED 0xA770CFA11ull

static const char *af_program;
static uint64_t af_base_seed;

/* gh_create with each of its allocations failing in turn. */
static void create_fails(tu_tracker *tracker, const gh_config *cfg) {
  uint64_t k;
  for (k = 1; k <= 100; ++k) {
    gh_table *table = (gh_table *)&k; /* any non-NULL value: a failed gh_create resets it */
    gh_status st;
    int injected;
    tu_set_phase("gh_create with its allocation %llu failing", (unsigned long long)k);
    tu_tracker_fail_nth(tracker, k);
    st = gh_create(cfg, &table);
    injected = tu_tracker_injected(tracker);
    tu_tracker_fail_nth(tracker, 0);
    if (st == GH_OK) {
      CHECK(gh_last_create_error()[0] == '\0', "gh_last_create_error after success: \"%s\"",
            gh_last_create_error());
      gh_destroy(table);
      tu_tracker_check_clean(tracker, "gh_destroy of a new table");
      tu_tracker_reset(tracker);
      printf("    %-44s %3llu allocations failed in turn\n", "gh_create",
             (unsigned long long)(k - 1));
      return;
    }
    if (!CHECK(injected, "gh_create returned %s although no allocation failed (\"%s\")",
               gh_status_name(st), gh_last_create_error()))
      return;
    CHECK(st == GH_ERR_OUT_OF_MEMORY,
          "gh_create with an allocation failing returned %s, expected "
          "GH_ERR_OUT_OF_MEMORY",
          gh_status_name(st));
    CHECK(table == NULL, "the failed gh_create left *table non-NULL");
    CHECK(gh_last_create_error()[0] != '\0', "gh_last_create_error empty after a failed create");
    /* Whatever it allocated before the failure, it must have given back. */
    tu_tracker_check_clean(tracker, "after the failed gh_create");
    tu_tracker_reset(tracker);
  }
  CHECK(0, "gh_create still failed after 100 runs");
}

static gh_dup_policy pick_policy(tu_rng *rng, const tu_design *design, gh_variant variant) {
  if (variant == GH_VARIANT_COMPACTING) return GH_KEEP_FIRST;
  if (variant == GH_VARIANT_MULTIVALUE) return GH_APPEND;
  for (;;) {
    gh_dup_policy p = (gh_dup_policy)tu_below(rng, 5);
    if (design->traits.map_policies >> p & 1u) return p;
  }
}

/* n keys absent from the model and none of the special patterns, into out. */
static void new_keys(tu_rng *rng, const tu_model *m, uint64_t n, uint64_t *out) {
  tu_ref avoid;
  uint64_t special[8], i, kept = 0;
  uint64_t *drawn = (uint64_t *)tu_xmalloc((size_t)(n + 64) * sizeof *drawn);
  size_t n_special = tu_special_keys(tu_model_key_bits(m), special);
  tu_ref_init(&avoid, tu_model_key_bits(m), 0);
  tu_ref_insert(&avoid, special, NULL, n_special, GH_KEEP_FIRST, NULL);
  tu_gen_unique_keys(rng, tu_model_key_bits(m), n + 64, &avoid, drawn);
  /* the generator knows only the special patterns: drop the keys the model holds */
  for (i = 0; i < n + 64 && kept < n; ++i) {
    if (!tu_model_contains(m, drawn[i])) out[kept++] = drawn[i];
  }
  REQUIRE(kept == n, "could not draw %llu new keys", (unsigned long long)n);
  tu_ref_free(&avoid);
  free(drawn);
}

/* The keys the model holds (distinct), into a fresh array; their number in *n. */
static uint64_t *present_keys(const tu_model *m, uint64_t *n) {
  const tu_ref *ref = m->variant == GH_VARIANT_MAP          ? &m->map.ref
                      : m->variant == GH_VARIANT_COMPACTING ? &m->compact.ids
                                                            : &m->multi.keys;
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)(tu_ref_size(ref) + 1) * sizeof *keys);
  *n = tu_ref_keys(ref, keys);
  return keys;
}

/* The state an operation starts from: each runs on a table of its own, set up without failures,
 * so that a broken promise in one operation does not cascade into the next. */
typedef enum setup_kind {
  SETUP_EMPTY,  /* a new table */
  SETUP_FILLED, /* the first batch (the special patterns and new keys, repeated) */
  SETUP_GROWN,  /* the first batch and a second one (past the capacity of a design that grows) */
  SETUP_ERASED, /* the first batch, a third of it erased again */
  SETUP_CLEARED /* the first batch, then gh_clear */
} setup_kind;

typedef struct af_case {
  const tu_design *design;
  gh_config cfg;
  tu_tracker *tracker;
  tu_rng rng;
  int grows, full, erase_ok;
  uint64_t *first; /* the first batch's distinct keys */
  uint64_t n_first;
  uint64_t *erased; /* SETUP_ERASED: the keys erased */
  uint64_t n_erased;
} af_case;

enum { FIRST = 150, MORE = 100, QUERIES = 120 };

static gh_dup_policy case_policy(af_case *c) {
  return pick_policy(&c->rng, c->design, c->cfg.variant);
}

/* The values an insert of n keys passes (drawn for the table's width; ignored by tables that take
 * none). */
static uint64_t *draw_values(af_case *c, uint64_t n) {
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *values);
  tu_gen_values(&c->rng, c->cfg.value_bits, n, values);
  return values;
}

static void insert_repeats(af_case *c, tu_model *m, const uint64_t *pool, uint64_t pool_n) {
  uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)(3 * pool_n + 1) * sizeof *keys);
  uint64_t n = tu_gen_repeats(&c->rng, pool, pool_n, 3, keys);
  uint64_t *values = draw_values(c, n);
  tu_model_insert(m, keys, values, n, case_policy(c), c->full);
  free(values);
  free(keys);
}

static int set_up(af_case *c, tu_model *m, setup_kind setup) {
  if (!tu_model_create(m, &c->cfg)) return 0;
  if (setup == SETUP_EMPTY) return 1;
  tu_set_phase("set up: the first batch");
  insert_repeats(c, m, c->first, c->n_first);
  if (setup == SETUP_GROWN) {
    uint64_t more[MORE];
    tu_set_phase("set up: a second batch of new keys");
    new_keys(&c->rng, m, MORE, more);
    insert_repeats(c, m, more, MORE);
  } else if (setup == SETUP_ERASED) {
    uint64_t i;
    c->n_erased = c->n_first / 3;
    for (i = 0; i < c->n_erased; ++i) c->erased[i] = c->first[3 * i];
    tu_set_phase("set up: erase a third");
    tu_model_erase(m, c->erased, c->n_erased);
  } else if (setup == SETUP_CLEARED) {
    tu_set_phase("set up: clear");
    tu_model_clear(m);
  }
  tu_model_check(&c->rng, m);
  return 1;
}

/* One operation on a table of its own, its allocations failing in turn. The keys of the
 * operation come from `make` (given the set-up table), or none. */
typedef uint64_t (*make_keys_fn)(af_case *c, const tu_model *m, uint64_t *out);

static void op_case(af_case *c, setup_kind setup, tu_op_kind kind, const char *name,
                    make_keys_fn make, int allow_full) {
  const unsigned long failures_before = tu_failure_count();
  tu_model m;
  tu_op op;
  uint64_t *keys = (uint64_t *)tu_xmalloc(16 * 1024 * sizeof *keys), *values = NULL;
  memset(&op, 0, sizeof op);
  if (set_up(c, &m, setup)) {
    op.kind = kind;
    op.name = name;
    op.keys = keys;
    op.n = make != NULL ? make(c, &m, keys) : 0;
    values = draw_values(c, op.n);
    op.values = values;
    op.policy = kind == TU_OP_INSERT ? case_policy(c) : GH_KEEP_FIRST;
    op.allow_full = allow_full;
    if (tu_failure_count() == failures_before)
      tu_fail_each_allocation(c->tracker, &m, &c->rng, &op);
    tu_set_phase("%s: destroy", name);
    tu_model_destroy(&m);
  }
  tu_tracker_check_clean(c->tracker, "after gh_destroy");
  tu_tracker_reset(c->tracker);
  free(values);
  free(keys);
}

/* ---- The keys of each operation -------------------------------------------------------------- */

static uint64_t keys_first_batch(af_case *c, const tu_model *m, uint64_t *out) {
  (void)m;
  return tu_gen_repeats(&c->rng, c->first, c->n_first, 3, out);
}

static uint64_t keys_present_and_new(af_case *c, const tu_model *m, uint64_t *out) {
  uint64_t n_present, i, pool[2 * MORE];
  uint64_t *present = present_keys(m, &n_present);
  for (i = 0; i < MORE; ++i) pool[i] = present[tu_below(&c->rng, n_present)];
  new_keys(&c->rng, m, MORE, pool + MORE);
  free(present);
  return tu_gen_repeats(&c->rng, pool, 2 * MORE, 3, out);
}

static uint64_t keys_present(af_case *c, const tu_model *m, uint64_t *out) {
  uint64_t n;
  uint64_t *present = present_keys(m, &n);
  (void)c;
  memcpy(out, present, (size_t)n * sizeof *out);
  free(present);
  return n;
}

static uint64_t keys_past_capacity(af_case *c, const tu_model *m, uint64_t *out) {
  uint64_t capacity = 0, n;
  CHECK_OK(tu_model_table(m), gh_capacity(tu_model_table(m), &capacity));
  n = c->grows ? 3 * capacity : capacity + 100;
  REQUIRE(n <= 16 * 1024, "capacity %llu too large for the test", (unsigned long long)capacity);
  new_keys(&c->rng, m, n, out);
  return n;
}

/* Present keys (some twice), absent keys and the special patterns, shuffled. */
static uint64_t keys_queries(af_case *c, const tu_model *m, uint64_t *out) {
  uint64_t n_present, i, special[8], n = 0;
  uint64_t *present = present_keys(m, &n_present);
  size_t n_special = tu_special_keys(tu_model_key_bits(m), special);
  for (i = 0; i < QUERIES; ++i) out[n++] = present[tu_below(&c->rng, n_present)];
  new_keys(&c->rng, m, QUERIES / 2, out + n);
  n += QUERIES / 2;
  for (i = 0; i < n_special; ++i) out[n++] = special[i];
  tu_shuffle(&c->rng, out, n);
  free(present);
  return n;
}

/* A third of the present keys, some twice, and absent keys. */
static uint64_t keys_to_erase(af_case *c, const tu_model *m, uint64_t *out) {
  uint64_t n_present, i, n = 0;
  uint64_t *present = present_keys(m, &n_present);
  for (i = 0; i < n_present / 3; ++i) out[n++] = present[i];
  for (i = 0; i < 20; ++i) out[n++] = present[tu_below(&c->rng, n_present)];
  new_keys(&c->rng, m, 20, out + n);
  n += 20;
  tu_shuffle(&c->rng, out, n);
  free(present);
  return n;
}

static uint64_t keys_erased_again(af_case *c, const tu_model *m, uint64_t *out) {
  (void)m;
  return tu_gen_repeats(&c->rng, c->erased, c->n_erased, 2, out);
}

static uint64_t ids_some(af_case *c, const tu_model *m, uint64_t *out) {
  uint64_t i;
  for (i = 0; i < 64; ++i) out[i] = tu_below(&c->rng, m->compact.size);
  return 64;
}

static void run_case(const tu_design *design, gh_variant variant, gh_backend backend,
                     unsigned key_bits, unsigned value_bits, uint64_t seed) {
  af_case c;
  char params[160] = "";
  uint64_t special[8];
  size_t n_special = tu_special_keys(key_bits, special);
  const unsigned long failures_before = tu_failure_count();
  const int multi = variant == GH_VARIANT_MULTIVALUE;

  memset(&c, 0, sizeof c);
  c.design = design;
  c.rng = tu_rng_make(seed);
  c.tracker = tu_tracker_new();
  c.grows = tu_design_has(design, GH_CAP_GROWS);
  c.full = tu_design_has(design, GH_CAP_REPORTS_FULL);
  c.erase_ok = variant != GH_VARIANT_COMPACTING && tu_design_has(design, GH_CAP_ERASE);
  c.cfg = gh_config_default(design->design);
  c.cfg.backend = backend;
  c.cfg.variant = variant;
  c.cfg.key_bits = key_bits;
  c.cfg.value_bits = value_bits;
  /* A design that grows counts keys: a small capacity, so the second batch already grows it. */
  c.cfg.capacity = c.grows ? 200 : 1024;
  c.cfg.seed = tu_next(&c.rng);
  c.cfg.host_threads = 1 + (unsigned)tu_below(&c.rng, 3);
  if (tu_design_has(design, GH_CAP_HASH_FUNCTIONS)) {
    static const double extra[] = {0.05, 0.25, 1.0};
    tu_random_cuckoo_params(&c.rng, &c.cfg, extra, 3, params, sizeof params);
  }
  tu_tracker_attach(c.tracker, &c.cfg);
  tu_set_context(
      "alloc_failure design=%s variant=%s backend=%s key_bits=%u value_bits=%u "
      "capacity=%llu host_threads=%u%s case_seed=0x%016llx\n"
      "  rerun: %s %s --design %s --variant %s --seed 0x%016llx",
      design->name, tu_variant_name(variant, value_bits), tu_backend_name(backend), key_bits,
      value_bits, (unsigned long long)c.cfg.capacity, c.cfg.host_threads, params,
      (unsigned long long)seed, af_program, tu_backend_name(backend), design->name,
      tu_variant_name(variant, 32), (unsigned long long)af_base_seed);
  printf("  %s %s k%u v%u%s\n", design->name, tu_variant_name(variant, value_bits), key_bits,
         value_bits, params);

  /* The first batch: the special patterns and new keys. */
  c.first = (uint64_t *)tu_xmalloc(FIRST * sizeof *c.first);
  c.erased = (uint64_t *)tu_xmalloc(FIRST * sizeof *c.erased);
  c.n_first = FIRST;
  memcpy(c.first, special, n_special * sizeof *c.first);
  {
    tu_ref avoid;
    tu_ref_init(&avoid, key_bits, 0);
    tu_ref_insert(&avoid, special, NULL, n_special, GH_KEEP_FIRST, NULL);
    tu_gen_unique_keys(&c.rng, key_bits, FIRST - n_special, &avoid, c.first + n_special);
    tu_ref_free(&avoid);
  }

  create_fails(c.tracker, &c.cfg);
  op_case(&c, SETUP_EMPTY, TU_OP_INSERT, "insert into the empty table", keys_first_batch, 0);
  op_case(&c, SETUP_FILLED, TU_OP_INSERT, "insert present and new keys", keys_present_and_new,
          c.full);
  op_case(&c, SETUP_FILLED, TU_OP_INSERT, "insert present keys only", keys_present, c.full);
  if (c.grows || c.full) {
    op_case(&c, SETUP_FILLED, TU_OP_INSERT,
            c.grows ? "insert past the capacity (the table grows)"
                    : "insert past the capacity (GH_ERR_TABLE_FULL)",
            keys_past_capacity, c.full);
  }
  op_case(&c, SETUP_GROWN, TU_OP_FIND, "find", keys_queries, 0);
  op_case(&c, SETUP_GROWN, TU_OP_CONTAINS, "contains", keys_queries, 0);
  if (multi) {
    op_case(&c, SETUP_GROWN, TU_OP_COUNT, "count", keys_queries, 0);
    op_case(&c, SETUP_GROWN, TU_OP_FIND_ALL, "find_all", keys_queries, 0);
    op_case(&c, SETUP_GROWN, TU_OP_JOIN_COUNT, "join count (probe)", keys_queries, 0);
    op_case(&c, SETUP_GROWN, TU_OP_JOIN, "join (probe)", keys_queries, 0);
    if (tu_design_has(design, GH_CAP_JOIN_INTERSECT)) {
      op_case(&c, SETUP_GROWN, TU_OP_JOIN_INTERSECT, "join (intersect)", keys_queries, 0);
      op_case(&c, SETUP_GROWN, TU_OP_SEMI_INTERSECT, "semi-join (intersect)", keys_queries, 0);
    }
  }
  op_case(&c, SETUP_GROWN, TU_OP_EXPORT, "export", NULL, 0);
  if (variant == GH_VARIANT_COMPACTING)
    op_case(&c, SETUP_GROWN, TU_OP_KEYS_OF_IDS, "keys_of_ids", ids_some, 0);
  op_case(&c, SETUP_GROWN, TU_OP_VALIDATE, "validate", NULL, 0);
  if (c.erase_ok) {
    op_case(&c, SETUP_GROWN, TU_OP_ERASE, "erase", keys_to_erase, 0);
    op_case(&c, SETUP_ERASED, TU_OP_INSERT, "insert erased keys again", keys_erased_again, c.full);
  }
  op_case(&c, SETUP_GROWN, TU_OP_CLEAR, "clear", NULL, 0);
  op_case(&c, SETUP_CLEARED, TU_OP_INSERT, "insert after clear", keys_first_batch, 0);

  free(c.erased);
  free(c.first);
  tu_tracker_delete(c.tracker);
  printf("  %s %s k%u v%u: %s\n", design->name, tu_variant_name(variant, value_bits), key_bits,
         value_bits, tu_failure_count() == failures_before ? "ok" : "FAILED");
  fflush(stdout);
}

int main(int argc, char **argv) {
  static const unsigned map_widths[][2] = {{32, 32}, {64, 0}, {64, 64}};
  static const unsigned other_widths[][2] = {{32, 64}, {64, 32}};
  const tu_design *design = NULL;
  gh_variant variant = GH_VARIANT_MAP;
  gh_backend backend;
  uint64_t seed = AF_BASE_SEED;
  af_program = argv[0];
  if (!tu_parse_case_args(argc, argv, &backend, &design, &variant, &seed)) goto usage;
  af_base_seed = seed;
  tu_skip_unless_backend_usable(backend);
  tu_install_crash_handler();
  if (!tu_design_accepts_variant(design, variant)) {
    gh_config c = gh_config_default(design->design);
    gh_table *table = (gh_table *)&c;
    tu_set_context("alloc_failure design=%s variant=%s backend=%s", design->name,
                   tu_variant_name(variant, 32), tu_backend_name(backend));
    tu_set_phase("a variant the design does not have is refused");
    c.backend = backend;
    c.variant = variant;
    c.capacity = 100;
    CHECK_STATUS(NULL, gh_create(&c, &table), GH_ERR_INVALID_ARGUMENT);
    CHECK(table == NULL, "failed gh_create left *table non-NULL");
    printf("%s does not accept the %s variant: nothing to allocate\n", design->name,
           tu_variant_name(variant, 32));
    return tu_finish("alloc_failure");
  }
  printf("alloc_failure %s %s %s (seed 0x%016llx)\n", tu_backend_name(backend), design->name,
         tu_variant_name(variant, 32), (unsigned long long)seed);
  tu_run_widths(map_widths, sizeof map_widths / sizeof map_widths[0], other_widths,
                sizeof other_widths / sizeof other_widths[0], run_case, design, variant, backend, seed);
  return tu_finish("alloc_failure");
usage:
  return tu_case_usage(argv[0]);
}
