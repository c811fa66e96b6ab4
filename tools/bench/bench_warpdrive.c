/*
 * bench_warpdrive.c - the single-GPU experiment of the WarpDrive paper (section V-B) on
 * gpuhash's GH_WARPDRIVE table.
 *
 * For each key distribution x group size x load factor: create a table of capacity
 * distinct / load, then time insert of the n pairs, find of the n present keys, find of n absent
 * keys and erase of the n keys, each through the public API on the benchmark's stream. Inputs
 * are generated once per distribution on the backend (bench_gen.h), on the device for CUDA.
 *
 * Every run of every operation is checked before its time is kept (a benchmark of a broken
 * table is worthless): after an insert gh_size equals the distinct keys (or, when the table
 * filled up, the missing keys are counted from failed_out); a find of the present keys finds
 * all that were stored (and, for unique keys, returns their values); a find of absent keys
 * finds none; an erase leaves the table empty.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

/* Left free on the device for the CUDA context and the library's scratch. */
#define WD_DEVICE_RESERVE_BYTES ((size_t)256 << 20)
/* Duplicates (Zipf) update the stored value, as in the paper. */
#define WD_POLICY GH_OVERWRITE
#define WD_POLICY_NAME "overwrite"

/* Which ceiling each operation is held against: an insert claims an empty slot with a CAS
 * (also shown against atomicAdd), a find reads sectors, an erase writes a tombstone by CAS. */
static const int WD_CEILING[BENCH_OP_COUNT] = {
    [BENCH_OP_INSERT] = BCU_LIMIT_CAS64,
    [BENCH_OP_FIND] = BCU_LIMIT_SECTOR_READ,
    [BENCH_OP_FIND_ABSENT] = BCU_LIMIT_SECTOR_READ,
    [BENCH_OP_ERASE] = BCU_LIMIT_CAS64,
};
static const int WD_CEILING_ALT[BENCH_OP_COUNT] = {
    [BENCH_OP_INSERT] = BCU_LIMIT_ATOMIC_ADD32,
    [BENCH_OP_FIND] = -1,
    [BENCH_OP_FIND_ABSENT] = -1,
    [BENCH_OP_ERASE] = -1,
};

/* Inputs and outputs, allocated once for the whole scenario. */
typedef struct wd_buffers {
  void *keys;       /* n present keys of the current distribution */
  void *absent;     /* n keys that are never inserted */
  void *values;     /* n values; NULL for sets */
  void *values_out; /* find output; NULL for sets */
  uint8_t *flags;   /* n bytes: found_out, failed_out of checked inserts, the Zipf rank map */
} wd_buffers;

typedef struct wd_context {
  const bench_backend *backend;
  const bench_options *opts;
  const wd_buffers *buffers;
  uint64_t n;
  unsigned key_bytes, value_bytes;
  bench_dist dist;
  uint64_t distinct; /* distinct keys among the n of this distribution */
  gh_table *table;
  char description[128]; /* "unique g=4 load=0.90" for messages */
  /* What the table holds now. */
  int filled;         /* the n keys are in (inserted, not erased since) */
  uint64_t stored;    /* gh_size after the last insert */
  uint64_t failed;    /* inputs whose key did not fit in the last insert */
  unsigned full_runs; /* runs of the insert being measured that reported GH_ERR_TABLE_FULL */
  int validated;
  gh_status insert_status; /* of the last timed insert */
  int find_present;        /* the find being measured uses the present keys */
} wd_context;

/* ---- Failures ----------------------------------------------------------------------------- */

/* A gh_* call failed: a CUDA failure ends the run, anything else skips this configuration. */
static int wd_call_failed(const wd_context *c, const char *call, gh_status status) {
  return bench_call_failed("warpdrive", c->description, c->table, call, status);
}

/* The table gave a wrong answer. */
#define wd_wrong(c, ...) bench_wrong("warpdrive", (c)->description, __VA_ARGS__)

static int wd_backend_failed(const wd_context *c, const char *what) {
  return bench_error("warpdrive %s: %s: %s", c->description, what, c->backend->error());
}

/* Non-zero bytes of the flags buffer (found or failed keys). */
static int wd_count_flags(const wd_context *c, uint64_t *count) {
  if (c->backend->count_differ(c->buffers->flags, NULL, 0, c->n, 1, count) != 0)
    return wd_backend_failed(c, "counting flags");
  return BENCH_STEP_OK;
}

/* ---- Table state -------------------------------------------------------------------------- */

/* Checks the table after an insert that returned `status`, `failed` inputs not fitting. */
static int wd_after_insert(wd_context *c, gh_status status, uint64_t failed) {
  uint64_t size = 0;
  gh_status s = gh_size(c->table, &size);
  if (s != GH_OK) return wd_call_failed(c, "gh_size", s);
  if (status == GH_OK && size != c->distinct)
    return wd_wrong(c, "gh_size is %llu after inserting %llu distinct keys",
                    (unsigned long long)size, (unsigned long long)c->distinct);
  if (status == GH_ERR_TABLE_FULL && size >= c->distinct)
    return wd_wrong(c, "insert said GH_ERR_TABLE_FULL but gh_size is %llu of %llu keys",
                    (unsigned long long)size, (unsigned long long)c->distinct);
  c->stored = size;
  c->failed = failed;
  c->filled = 1;
  if (c->opts->validate && !c->validated) {
    s = gh_validate(c->table);
    if (s != GH_OK) return wd_call_failed(c, "gh_validate", s);
    c->validated = 1;
  }
  return BENCH_STEP_OK;
}

/* Untimed: clears the table and inserts the n pairs with failed_out, so that the inputs that
 * did not fit (load 0.99 may overflow the probe limit) are known exactly. */
static int wd_fill(wd_context *c) {
  uint64_t failed = 0;
  gh_status s = gh_clear(c->table, c->backend->stream);
  if (s != GH_OK) return wd_call_failed(c, "gh_clear", s);
  c->filled = 0;
  s = gh_insert(c->table, c->buffers->keys, c->buffers->values, c->n, WD_POLICY, c->buffers->flags,
                c->backend->stream);
  if (s != GH_OK && s != GH_ERR_TABLE_FULL) return wd_call_failed(c, "gh_insert", s);
  int result = wd_count_flags(c, &failed);
  if (result != BENCH_STEP_OK) return result;
  if (s == GH_OK && failed != 0)
    return wd_wrong(c, "insert returned GH_OK but flagged %llu inputs as not fitting",
                    (unsigned long long)failed);
  if (s == GH_ERR_TABLE_FULL && failed == 0)
    return wd_wrong(c, "insert returned GH_ERR_TABLE_FULL but flagged no input");
  return wd_after_insert(c, s, failed);
}

static int wd_ensure_filled(void *context) {
  wd_context *c = context;
  return c->filled ? BENCH_STEP_OK : wd_fill(c);
}

/* ---- The steps of each measurement -------------------------------------------------------- */

static int wd_insert_setup(void *context) {
  wd_context *c = context;
  gh_status s = gh_clear(c->table, c->backend->stream);
  c->filled = 0;
  return s == GH_OK ? BENCH_STEP_OK : wd_call_failed(c, "gh_clear", s);
}

static int wd_insert_op(void *context) {
  wd_context *c = context;
  c->insert_status = gh_insert(c->table, c->buffers->keys, c->buffers->values, c->n, WD_POLICY,
                               NULL, c->backend->stream);
  if (c->insert_status != GH_OK && c->insert_status != GH_ERR_TABLE_FULL)
    return wd_call_failed(c, "gh_insert", c->insert_status);
  return BENCH_STEP_OK;
}

static int wd_insert_check(void *context) {
  wd_context *c = context;
  if (c->insert_status == GH_OK) return wd_after_insert(c, GH_OK, 0);
  /* The timed call had no failed_out (it would add a write per key to the time): redo the
   * insert untimed with it to count what did not fit. */
  ++c->full_runs;
  return wd_fill(c);
}

static int wd_find_op(void *context) {
  wd_context *c = context;
  gh_status s = gh_find(c->table, c->find_present ? c->buffers->keys : c->buffers->absent, c->n,
                        c->buffers->values_out, c->buffers->flags, NULL, c->backend->stream);
  return s == GH_OK ? BENCH_STEP_OK : wd_call_failed(c, "gh_find", s);
}

static int wd_find_check(void *context) {
  wd_context *c = context;
  uint64_t found = 0, wrong = 0;
  const uint64_t expected = c->find_present ? c->n - c->failed : 0;
  int result = wd_count_flags(c, &found);
  if (result != BENCH_STEP_OK) return result;
  if (found != expected)
    return wd_wrong(c, "find of %s keys found %llu of %llu, expected %llu",
                    c->find_present ? "present" : "absent", (unsigned long long)found,
                    (unsigned long long)c->n, (unsigned long long)expected);
  if (c->value_bytes == 0) return BENCH_STEP_OK;
  /* Values: each unique key's own; absent keys get the default, 0. (A Zipf key's value is
   * that of one of its duplicates, whichever wrote last: not checked.) */
  if (!c->find_present) {
    if (c->backend->count_differ(c->buffers->values_out, NULL, 0, c->n, c->value_bytes, &wrong))
      return wd_backend_failed(c, "checking values");
  } else if (c->dist == BENCH_DIST_UNIQUE && c->failed == 0) {
    if (c->backend->count_differ(c->buffers->values_out, c->buffers->values, 0, c->n,
                                 c->value_bytes, &wrong))
      return wd_backend_failed(c, "checking values");
  }
  if (wrong != 0)
    return wd_wrong(c, "find of %s keys returned %llu wrong values",
                    c->find_present ? "present" : "absent", (unsigned long long)wrong);
  return BENCH_STEP_OK;
}

static int wd_erase_op(void *context) {
  wd_context *c = context;
  /* No erased_out / erased_count: counting could add work to the timed call; gh_size == 0
   * afterwards proves every key went. */
  gh_status s = gh_erase(c->table, c->buffers->keys, c->n, NULL, NULL, c->backend->stream);
  c->filled = 0;
  return s == GH_OK ? BENCH_STEP_OK : wd_call_failed(c, "gh_erase", s);
}

static int wd_erase_check(void *context) {
  wd_context *c = context;
  uint64_t size = 0;
  gh_status s = gh_size(c->table, &size);
  if (s != GH_OK) return wd_call_failed(c, "gh_size", s);
  if (size != 0)
    return wd_wrong(c, "gh_size is %llu after erasing all %llu stored keys",
                    (unsigned long long)size, (unsigned long long)c->stored);
  return BENCH_STEP_OK;
}

static const bench_steps WD_STEPS[BENCH_OP_COUNT] = {
    [BENCH_OP_INSERT] = {wd_insert_setup, wd_insert_op, wd_insert_check},
    [BENCH_OP_FIND] = {wd_ensure_filled, wd_find_op, wd_find_check},
    [BENCH_OP_FIND_ABSENT] = {wd_ensure_filled, wd_find_op, wd_find_check},
    [BENCH_OP_ERASE] = {wd_ensure_filled, wd_erase_op, wd_erase_check},
};

/* ---- One configuration -------------------------------------------------------------------- */

static gh_config wd_config(const wd_context *c, unsigned group_size, double load) {
  gh_config config = gh_config_default(GH_WARPDRIVE);
  config.backend = c->backend->gh_kind;
  config.device = c->opts->device;
  config.key_bits = c->opts->key_bits;
  config.value_bits = c->opts->value_bits;
  config.group_size = group_size;
  config.capacity = (uint64_t)ceil((double)c->distinct / load);
  if (config.capacity == 0) config.capacity = 1;
  return config;
}

/* Bytes the table would take on the memory the backend uses. */
static size_t wd_table_bytes(const wd_context *c, const gh_config *config) {
  size_t host_bytes = 0, device_bytes = 0;
  if (gh_memory_estimate(config, &host_bytes, &device_bytes) != GH_OK) return 0;
  return c->backend->gh_kind == GH_BACKEND_CUDA ? device_bytes : host_bytes;
}

static int wd_run_config(bench_run *run, wd_context *c, unsigned group_size, double load) {
  char message[256];
  size_t free_bytes = 0, host_bytes = 0, device_bytes = 0;
  uint64_t capacity = 0;
  int result = BENCH_STEP_OK;
  gh_config config = wd_config(c, group_size, load);

  snprintf(c->description, sizeof c->description, "%s g=%u load=%.2f", bench_dist_names[c->dist],
           group_size, load);
  c->table = NULL;
  c->filled = 0;
  c->validated = 0;
  if (gh_config_validate(&config, message, sizeof message) != GH_OK) {
    bench_error("warpdrive %s: config rejected: %s", c->description, message);
    return BENCH_STEP_BROKEN;
  }
  const size_t table_bytes = wd_table_bytes(c, &config);
  if (c->backend->memory(&free_bytes) != 0) return wd_backend_failed(c, "reading free memory");
  if (table_bytes + WD_DEVICE_RESERVE_BYTES > free_bytes) {
    bench_error("warpdrive %s: the table needs %zu MiB, only %zu MiB are free; skipped",
                c->description, table_bytes >> 20, free_bytes >> 20);
    return BENCH_STEP_BROKEN;
  }
  gh_status s = gh_create(&config, &c->table);
  if (s != GH_OK) return wd_call_failed(c, "gh_create", s);
  s = gh_capacity(c->table, &capacity);
  if (s == GH_OK) s = gh_memory_usage(c->table, &host_bytes, &device_bytes);
  if (s != GH_OK) result = wd_call_failed(c, "gh_capacity/gh_memory_usage", s);

  for (int op = 0; op < BENCH_OP_COUNT && result == BENCH_STEP_OK; ++op) {
    bench_record record = {0};
    if (!c->opts->ops[op]) continue;
    c->full_runs = 0;
    c->find_present = op == BENCH_OP_FIND;
    result =
        bench_measure(c->backend, &WD_STEPS[op], c, c->opts->warmup, c->opts->reps, &record.stats);
    if (result != BENCH_STEP_OK) break;
    record.design = "warpdrive";
    record.op = bench_op_names[op];
    record.dist = bench_dist_names[c->dist];
    record.n = c->n;
    record.key_bits = (int)c->opts->key_bits;
    record.value_bits = (int)c->opts->value_bits;
    record.load_factor = load;
    record.group_size = group_size;
    record.rate = (double)c->n / (record.stats.ms_median * 1e-3) / 1e9;
    record.unit = "Gops/s";
    record.ceiling = WD_CEILING[op];
    record.ceiling_alt = WD_CEILING_ALT[op];
    record.distinct = c->distinct;
    record.capacity = capacity;
    record.stored = c->stored;
    record.failed = c->failed;
    record.full_runs = c->full_runs;
    record.table_bytes = c->backend->gh_kind == GH_BACKEND_CUDA ? device_bytes : host_bytes;
    record.policy = op == BENCH_OP_INSERT ? WD_POLICY_NAME : NULL;
    if (bench_report_add(run, &record) != 0) result = BENCH_STEP_FATAL;
  }
  gh_destroy(c->table);
  c->table = NULL;
  return result;
}

/* ---- Inputs ------------------------------------------------------------------------------- */

static bench_gen_spec wd_spec(const bench_options *opts, bench_gen_kind kind, unsigned bits,
                              uint64_t index_offset) {
  bench_gen_spec spec = {.kind = kind,
                         .bits = bits,
                         .seed = opts->seed,
                         .index_offset = index_offset,
                         .zipf_n = opts->n};
  return spec;
}

/* Generates the present keys of c->dist and counts their distinct keys. */
static int wd_generate_keys(wd_context *c) {
  const bench_gen_spec unique = wd_spec(c->opts, BENCH_GEN_UNIQUE_KEYS, c->opts->key_bits, 0);
  const bench_gen_spec zipf = wd_spec(c->opts, BENCH_GEN_ZIPF_KEYS, c->opts->key_bits, 0);
  if (c->dist == BENCH_DIST_UNIQUE) {
    if (c->backend->generate(c->buffers->keys, c->n, unique, NULL) != 0)
      return wd_backend_failed(c, "generating unique keys");
    c->distinct = c->n;
    return BENCH_STEP_OK;
  }
  /* Zipf keys are key(rank) with distinct ranks giving distinct keys, so the distinct keys are
   * the distinct ranks: counted exactly from a byte map, independently of the table. */
  if (c->backend->fill(c->buffers->flags, 0, c->n) != 0 ||
      c->backend->generate(c->buffers->keys, c->n, zipf, c->buffers->flags) != 0)
    return wd_backend_failed(c, "generating Zipf keys");
  return wd_count_flags(c, &c->distinct);
}

/* The caller has checked that the inputs and the largest table fit. */
static int wd_allocate(const bench_backend *backend, const bench_options *opts, wd_buffers *b) {
  const uint64_t n = opts->n;
  const size_t key_bytes = opts->key_bits / 8, value_bytes = opts->value_bits / 8;
  if (bench_alloc(backend, &b->keys, n * key_bytes, "present keys") != 0 ||
      bench_alloc(backend, &b->absent, n * key_bytes, "absent keys") != 0 ||
      bench_alloc(backend, (void **)&b->flags, n, "flags") != 0)
    return BENCH_STEP_FATAL;
  if (value_bytes != 0 &&
      (bench_alloc(backend, &b->values, n * value_bytes, "values") != 0 ||
       bench_alloc(backend, &b->values_out, n * value_bytes, "values out") != 0))
    return BENCH_STEP_FATAL;
  return BENCH_STEP_OK;
}

static int wd_release(const bench_backend *backend, wd_buffers *b) {
  void *all[] = {b->keys, b->absent, b->values, b->values_out, b->flags};
  const int result = bench_release_all(backend, all, sizeof all / sizeof all[0], "inputs");
  memset(b, 0, sizeof *b);
  return result;
}

/* Largest table of the grid (smallest load, every group size), for the preflight check. */
static size_t wd_largest_table(const wd_context *c) {
  size_t largest = 0;
  for (unsigned gi = 0; gi < c->opts->group_size_count; ++gi)
    for (unsigned li = 0; li < c->opts->load_count; ++li) {
      gh_config config = wd_config(c, c->opts->group_sizes[gi], c->opts->loads[li]);
      size_t bytes = wd_table_bytes(c, &config);
      if (bytes > largest) largest = bytes;
    }
  return largest;
}

/* ---- The scenario ------------------------------------------------------------------------- */

int bench_warpdrive_run(bench_run *run, const bench_backend *backend, const bench_options *opts) {
  wd_buffers buffers = {0};
  wd_context c = {0};
  char title[512], n_text[32];
  int result;

  c.backend = backend;
  c.opts = opts;
  c.buffers = &buffers;
  c.n = opts->n;
  c.key_bytes = opts->key_bits / 8;
  c.value_bytes = opts->value_bits / 8;
  snprintf(c.description, sizeof c.description, "inputs");

  /* Fail before the first allocation when the largest table and the inputs cannot fit. */
  c.distinct = c.n; /* an upper bound for every distribution */
  {
    size_t free_bytes = 0;
    const size_t inputs = c.n * (2 * c.key_bytes + 2 * c.value_bytes + 1);
    const size_t table = wd_largest_table(&c);
    if (backend->memory(&free_bytes) != 0) return wd_backend_failed(&c, "reading free memory");
    if (inputs + table + WD_DEVICE_RESERVE_BYTES > free_bytes)
      return bench_error(
          "n = %llu needs %zu MiB (inputs %zu MiB + largest table %zu MiB + "
          "%zu MiB reserve); only %zu MiB are free: use a smaller --n or higher "
          "--loads",
          (unsigned long long)c.n, (inputs + table + WD_DEVICE_RESERVE_BYTES) >> 20, inputs >> 20,
          table >> 20, WD_DEVICE_RESERVE_BYTES >> 20, free_bytes >> 20);
  }

  result = wd_allocate(backend, opts, &buffers);
  if (result == BENCH_STEP_OK &&
      (backend->generate(buffers.absent, c.n,
                         wd_spec(opts, BENCH_GEN_UNIQUE_KEYS, opts->key_bits, c.n), NULL) != 0 ||
       (buffers.values != NULL &&
        backend->generate(buffers.values, c.n, wd_spec(opts, BENCH_GEN_VALUES, opts->value_bits, 0),
                          NULL) != 0)))
    result = wd_backend_failed(&c, "generating absent keys and values");

  snprintf(title, sizeof title,
           "warpdrive (paper V-B) on the %s backend: n = %s pairs, %u-bit keys, %u-bit values, "
           "policy %s, median of %u after %u warm-up",
           backend->name, bench_format_count(c.n, n_text, sizeof n_text), opts->key_bits,
           opts->value_bits, WD_POLICY_NAME, opts->reps, opts->warmup);
  for (unsigned d = 0; d < opts->dist_count && result != BENCH_STEP_FATAL; ++d) {
    c.dist = opts->dists[d];
    snprintf(c.description, sizeof c.description, "%s inputs", bench_dist_names[c.dist]);
    result = wd_generate_keys(&c);
    if (result != BENCH_STEP_OK) break;
    if (d == 0) bench_report_header(title);
    printf("%s keys: %llu distinct among %llu (%.1f%%)\n", bench_dist_names[c.dist],
           (unsigned long long)c.distinct, (unsigned long long)c.n,
           100.0 * (double)c.distinct / (double)c.n);
    for (unsigned gi = 0; gi < opts->group_size_count && result != BENCH_STEP_FATAL; ++gi)
      for (unsigned li = 0; li < opts->load_count && result != BENCH_STEP_FATAL; ++li) {
        result = wd_run_config(run, &c, opts->group_sizes[gi], opts->loads[li]);
        if (result == BENCH_STEP_BROKEN) ++run->broken;
      }
  }
  if (wd_release(backend, &buffers) != BENCH_STEP_OK) result = BENCH_STEP_FATAL;
  return result == BENCH_STEP_FATAL ? BENCH_STEP_FATAL : BENCH_STEP_OK;
}
