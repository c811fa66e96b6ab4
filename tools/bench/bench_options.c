/*
 * bench_options.c - gpuhash-bench's command line and the defaults of each mode.
 *
 * One table lists the options; --help is printed from it, so the two cannot drift apart.
 * Options given on the command line always win over the defaults of --quick, whatever their
 * order: parsing records what was given, bench_options_finish() fills the rest once the
 * backend that runs is known (the host backend gets smaller defaults).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

const char *const bench_op_names[BENCH_OP_COUNT] = {"insert", "find", "find_absent", "erase"};
const char *const bench_dist_names[BENCH_DIST_COUNT] = {"unique", "zipf"};

/* ---- Defaults ----------------------------------------------------------------------------- */

#define BENCH_DEFAULT_JSON "gpuhash-bench.jsonl"
#define BENCH_DEFAULT_SEED 0x5eedULL
#define BENCH_DEFAULT_WARMUP 1u
#define BENCH_DEFAULT_KEY_BITS 32u
#define BENCH_DEFAULT_VALUE_BITS 32u
#define BENCH_MAX_LOG2_N 40 /* 2^40 pairs: far beyond any device memory */

/* What a mode runs when the command line does not say. */
typedef struct bench_mode_defaults {
  const char *name;
  uint64_t n;
  unsigned reps;
  unsigned group_sizes[BENCH_MAX_LIST];
  unsigned group_size_count;
  double loads[BENCH_MAX_LIST];
  unsigned load_count;
} bench_mode_defaults;

/* The cuckoo scenarios' lists: the full ones, and those of --quick. */
#define CUCKOO_FACTORS_FULL {1.05, 1.1, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0}, 8
#define CUCKOO_FACTORS_QUICK {1.1, 1.25, 2.5}, 3
#define CUCKOO_ABSENT_FULL {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 11
#define CUCKOO_ABSENT_QUICK {0, 50, 100}, 3
#define CUCKOO_MULTIPLICITY_FULL {1, 2, 4, 8, 16, 32, 64, 128, 256, 512}, 10
#define CUCKOO_MULTIPLICITY_QUICK {1, 8, 64, 512}, 4

/* The cuckoo scenarios of each mode: the chapter's sizes on the GPU (a up to 2^27, d 10 million
 * pairs, b and c at 2^24); --quick and the host backend smaller (host quick: about a second). */
static const bench_cuckoo_grid CUCKOO_FULL_CUDA = {
    1ull << 16, 1ull << 27,          1ull << 24,         10000000,
    3,          CUCKOO_FACTORS_FULL, CUCKOO_ABSENT_FULL, CUCKOO_MULTIPLICITY_FULL};
static const bench_cuckoo_grid CUCKOO_QUICK_CUDA = {
    1ull << 16, 1ull << 24,           1ull << 22,          1ull << 21,
    3,          CUCKOO_FACTORS_QUICK, CUCKOO_ABSENT_QUICK, CUCKOO_MULTIPLICITY_QUICK};
static const bench_cuckoo_grid CUCKOO_FULL_HOST = {
    1ull << 16, 1ull << 20,          1ull << 18,         1ull << 18,
    3,          CUCKOO_FACTORS_FULL, CUCKOO_ABSENT_FULL, CUCKOO_MULTIPLICITY_FULL};
static const bench_cuckoo_grid CUCKOO_QUICK_HOST = {
    1ull << 14, 1ull << 16,           1ull << 15,          1ull << 15,
    3,          CUCKOO_FACTORS_QUICK, CUCKOO_ABSENT_QUICK, CUCKOO_MULTIPLICITY_QUICK};

/* The paper's grid: n = 2^27 pairs (1 GB), every group size, loads 0.4 .. 0.99. */
static const bench_mode_defaults BENCH_FULL_CUDA = {
    "full", 1ull << 27, 5, {1, 2, 4, 8, 16, 32}, 6, {0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99}, 8};
/* Under a minute on an H100: 2^24 pairs, every group size, three loads. */
static const bench_mode_defaults BENCH_QUICK_CUDA = {
    "quick", 1ull << 24, 3, {1, 2, 4, 8, 16, 32}, 6, {0.5, 0.9, 0.99}, 3};
/* The host backend has a few cores, not a GPU: n = 2^20. Its quick grid is cut to what runs
 * in about 25 s on 2 busy cores: load 0.99 is left out because there a find of absent keys
 * probes ~100 windows (1 / (1 - load)) and alone took seconds per call. */
static const bench_mode_defaults BENCH_FULL_HOST = {
    "full", 1ull << 20, 5, {1, 2, 4, 8, 16, 32}, 6, {0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99}, 8};
static const bench_mode_defaults BENCH_QUICK_HOST = {"quick", 1ull << 20, 3, {4, 32},
                                                     2,       {0.5, 0.9}, 2};

/* The cuckoo scenarios' grid of each mode, by [backend is CUDA][--quick]. */
static const bench_cuckoo_grid *const CUCKOO_GRIDS[2][2] = {
    {&CUCKOO_FULL_HOST, &CUCKOO_QUICK_HOST}, {&CUCKOO_FULL_CUDA, &CUCKOO_QUICK_CUDA}};

/* ---- The option table --------------------------------------------------------------------- */

typedef enum bench_flag_id {
  FLAG_HELP,
  FLAG_QUICK,
  FLAG_LIMITS,
  FLAG_BACKEND,
  FLAG_DEVICE,
  FLAG_N,
  FLAG_REPS,
  FLAG_WARMUP,
  FLAG_KEY_BITS,
  FLAG_VALUE_BITS,
  FLAG_GROUP_SIZES,
  FLAG_LOADS,
  FLAG_DISTS,
  FLAG_OPS,
  FLAG_VALIDATE,
  FLAG_JSON,
  FLAG_SEED,
  FLAG_SCENARIO,
  FLAG_COUNT
} bench_flag_id;

typedef struct bench_flag {
  const char *name; /* without the leading "--" */
  const char *arg;  /* NULL: takes no value */
  const char *help;
} bench_flag;

static const bench_flag BENCH_FLAGS[FLAG_COUNT] = {
    [FLAG_HELP] = {"help", NULL, "print this help and exit"},
    [FLAG_QUICK] = {"quick", NULL,
                    "small grid, under a minute: GPU n=2^24, g 1..32, loads 0.5,0.9,0.99, "
                    "reps 3; host n=2^20, g 4,32, loads 0.5,0.9"},
    [FLAG_LIMITS] = {"limits", NULL,
                     "measure only the ceilings (copy, random sector reads, random CAS, "
                     "random atomicAdd); needs a GPU"},
    [FLAG_BACKEND] = {"backend", "host|cuda|auto",
                      "where tables run; auto (default) = cuda if gh_cuda_available()"},
    [FLAG_DEVICE] = {"device", "N", "CUDA device ordinal (default 0)"},
    [FLAG_N] = {"n", "N", "pairs per operation, decimal or 2^K (default 2^27; see --quick)"},
    [FLAG_REPS] = {"reps", "R", "timed repetitions per measurement, median reported (default 5)"},
    [FLAG_WARMUP] = {"warmup", "W", "untimed runs before the timed ones (default 1)"},
    [FLAG_KEY_BITS] = {"key-bits", "32|64", "key width (default 32)"},
    [FLAG_VALUE_BITS] = {"value-bits", "0|32|64", "value width, 0 = a set (default 32)"},
    [FLAG_GROUP_SIZES] = {"group-sizes", "LIST", "warpdrive group sizes, e.g. 1,4,8 (of 1..32)"},
    [FLAG_LOADS] = {"loads", "LIST", "load factors in (0,1], e.g. 0.5,0.9"},
    [FLAG_DISTS] = {"dists", "LIST", "key distributions: unique,zipf"},
    [FLAG_OPS] = {"ops", "LIST", "operations: insert,find,find_absent,erase"},
    [FLAG_VALIDATE] = {"validate", NULL,
                       "also run gh_validate() on each table after its first insert (slow)"},
    [FLAG_JSON] = {"json", "FILE", "append JSON lines here (default " BENCH_DEFAULT_JSON ")"},
    [FLAG_SEED] = {"seed", "S", "seed of the generated keys and values (default 0x5eed)"},
    [FLAG_SCENARIO] = {"scenario", "LIST",
                       "what to run: all (default), warpdrive, cuckoo (= cuckoo-a,cuckoo-b,"
                       "cuckoo-c,cuckoo-d) or single cuckoo-a .. cuckoo-d"},
};

/* --scenario names and the bits they select. */
static const struct {
  const char *name;
  unsigned bits;
} BENCH_SCENARIO_NAMES[] = {
    {"all", BENCH_SCENARIO_ALL},           {"warpdrive", BENCH_SCENARIO_WARPDRIVE},
    {"cuckoo", BENCH_SCENARIO_CUCKOO},     {"cuckoo-a", BENCH_SCENARIO_CUCKOO_A},
    {"cuckoo-b", BENCH_SCENARIO_CUCKOO_B}, {"cuckoo-c", BENCH_SCENARIO_CUCKOO_C},
    {"cuckoo-d", BENCH_SCENARIO_CUCKOO_D},
};

static void bench_print_help(FILE *out) {
  fprintf(out,
          "usage: gpuhash-bench [options]\n"
          "\n"
          "Reproduces the single-GPU experiment of the WarpDrive paper (section V-B) on gpuhash's\n"
          "warpdrive table: insert, find (present and absent keys) and erase of n pairs for each\n"
          "key distribution x group size x load factor, each timed as the median of repetitions\n"
          "and shown as a fraction of ceilings measured on the same GPU in the same run; and the\n"
          "cuckoo experiments of Alcantara et al. (section 4.5) against a radix-sorted array:\n"
          "  cuckoo-a  build and find vs n, d = 4, table 1.25 n, vs sort + binary search\n"
          "  cuckoo-b  find vs the fraction of absent queries, d = 3 and 4\n"
          "  cuckoo-c  build and find vs table factor x d = 2..5, with restarts\n"
          "  cuckoo-d  compacting and multivalue vs key multiplicity, vs the sorted structure\n"
          "\n"
          "options:\n");
  for (int i = 0; i < FLAG_COUNT; ++i) {
    char left[48];
    snprintf(left, sizeof left, "--%s%s%s", BENCH_FLAGS[i].name, BENCH_FLAGS[i].arg ? " " : "",
             BENCH_FLAGS[i].arg ? BENCH_FLAGS[i].arg : "");
    fprintf(out, "  %-26s %s\n", left, BENCH_FLAGS[i].help);
  }
  fprintf(out,
          "\n"
          "Full grid (no --quick): GPU n=2^27, g 1,2,4,8,16,32, loads 0.4,0.5,0.6,0.7,0.8,0.9,\n"
          "0.95,0.99, unique and zipf, reps 5; on the host backend n=2^20. Cuckoo (GPU): a at\n"
          "n=2^16..2^27, b and c at 2^24, d at 10M pairs, reps 3 for b-d; --n N makes a\n"
          "sweep up to N and b-d use N; --quick: a up to 2^24, smaller lists (host: 2^14..2^16).\n"
          "Output: a table on stdout, one JSON line per measurement appended to --json.\n"
          "Exit status: 0 success, 1 a measurement failed or a table gave a wrong answer,\n"
          "2 bad options.\n");
}

static int bench_usage_error(const char *format, ...) {
  va_list args;
  fprintf(stderr, "gpuhash-bench: ");
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fprintf(stderr, " (try --help)\n");
  return BENCH_EXIT_USAGE;
}

/* ---- Value parsers: each returns 0 or -1 ---------------------------------------------------- */

static int parse_u64_decimal(const char *text, uint64_t *out) {
  char *end = NULL;
  if (text[0] < '0' || text[0] > '9') return -1; /* strtoull would accept "-1" and " 1" */
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return -1;
  *out = (uint64_t)v;
  return 0;
}

/* Decimal, or 2^K. */
static int parse_count(const char *text, uint64_t *out) {
  if (strncmp(text, "2^", 2) == 0) {
    uint64_t exponent = 0;
    if (parse_u64_decimal(text + 2, &exponent) != 0 || exponent > BENCH_MAX_LOG2_N) return -1;
    *out = 1ull << exponent;
    return 0;
  }
  return parse_u64_decimal(text, out);
}

static int parse_unsigned_in(const char *text, unsigned lo, unsigned hi, unsigned *out) {
  uint64_t v = 0;
  if (parse_u64_decimal(text, &v) != 0 || v < lo || v > hi) return -1;
  *out = (unsigned)v;
  return 0;
}

/* Splits a comma list into at most BENCH_MAX_LIST items and calls item() on each; rejects
 * empty items. */
typedef int (*bench_item_fn)(const char *item, unsigned index, void *out);

static int parse_list(const char *text, bench_item_fn item, void *out, unsigned *count) {
  char buffer[256];
  unsigned n = 0;
  if (strlen(text) >= sizeof buffer) return -1;
  strcpy(buffer, text);
  for (char *start = buffer;;) {
    char *comma = strchr(start, ',');
    if (comma != NULL) *comma = '\0';
    if (*start == '\0' || n == BENCH_MAX_LIST || item(start, n, out) != 0) return -1;
    ++n;
    if (comma == NULL) break;
    start = comma + 1;
  }
  *count = n;
  return 0;
}

static int item_group_size(const char *text, unsigned index, void *out) {
  unsigned g = 0;
  if (parse_unsigned_in(text, 1, 32, &g) != 0 || (g & (g - 1)) != 0) return -1;
  ((unsigned *)out)[index] = g;
  return 0;
}

static int item_load(const char *text, unsigned index, void *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(v > 0.0 && v <= 1.0)) return -1;
  ((double *)out)[index] = v;
  return 0;
}

static int item_dist(const char *text, unsigned index, void *out) {
  for (int d = 0; d < BENCH_DIST_COUNT; ++d) {
    if (strcmp(text, bench_dist_names[d]) == 0) {
      ((bench_dist *)out)[index] = (bench_dist)d;
      return 0;
    }
  }
  return -1;
}

static int item_scenario(const char *text, unsigned index, void *out) {
  for (size_t i = 0; i < sizeof BENCH_SCENARIO_NAMES / sizeof BENCH_SCENARIO_NAMES[0]; ++i) {
    if (strcmp(text, BENCH_SCENARIO_NAMES[i].name) == 0) {
      ((unsigned *)out)[index] = BENCH_SCENARIO_NAMES[i].bits;
      return 0;
    }
  }
  return -1;
}

static int item_op(const char *text, unsigned index, void *out) {
  for (int op = 0; op < BENCH_OP_COUNT; ++op) {
    if (strcmp(text, bench_op_names[op]) == 0) {
      ((bench_op *)out)[index] = (bench_op)op;
      return 0;
    }
  }
  return -1;
}

/* 1 if the first count entries of a list of element_size-byte items repeat one. */
static int list_has_duplicate(const void *items, unsigned count, size_t element_size) {
  const unsigned char *bytes = items;
  for (unsigned i = 0; i < count; ++i)
    for (unsigned j = i + 1; j < count; ++j)
      if (memcmp(bytes + i * element_size, bytes + j * element_size, element_size) == 0) return 1;
  return 0;
}

/* ---- Parsing ------------------------------------------------------------------------------ */

static int bench_apply_flag(bench_flag_id id, const char *value, bench_options *opts) {
  const char *name = BENCH_FLAGS[id].name;
  switch (id) {
    case FLAG_HELP:
      bench_print_help(stdout);
      return -1;
    case FLAG_QUICK:
      opts->quick = 1;
      return 0;
    case FLAG_LIMITS:
      opts->limits_only = 1;
      return 0;
    case FLAG_VALIDATE:
      opts->validate = 1;
      return 0;
    case FLAG_BACKEND:
      if (strcmp(value, "auto") == 0)
        opts->backend = GH_BACKEND_AUTO;
      else if (strcmp(value, "host") == 0)
        opts->backend = GH_BACKEND_HOST;
      else if (strcmp(value, "cuda") == 0)
        opts->backend = GH_BACKEND_CUDA;
      else
        return bench_usage_error("--backend: '%s' is not host, cuda or auto", value);
      return 0;
    case FLAG_DEVICE: {
      unsigned device = 0;
      if (parse_unsigned_in(value, 0, 1023, &device) != 0)
        return bench_usage_error("--device: '%s' is not a device ordinal", value);
      opts->device = (int)device;
      return 0;
    }
    case FLAG_N:
      if (parse_count(value, &opts->n) != 0 || opts->n == 0)
        return bench_usage_error("--n: '%s' is not a count in 1..2^%d (decimal or 2^K)", value,
                                 BENCH_MAX_LOG2_N);
      return 0;
    case FLAG_REPS:
      if (parse_unsigned_in(value, 1, BENCH_MAX_REPS, &opts->reps) != 0)
        return bench_usage_error("--reps: '%s' is not in 1..%d", value, BENCH_MAX_REPS);
      return 0;
    case FLAG_WARMUP:
      if (parse_unsigned_in(value, 0, BENCH_MAX_WARMUP, &opts->warmup) != 0)
        return bench_usage_error("--warmup: '%s' is not in 0..%d", value, BENCH_MAX_WARMUP);
      return 0;
    case FLAG_KEY_BITS:
      if (parse_unsigned_in(value, 32, 64, &opts->key_bits) != 0 ||
          (opts->key_bits != 32 && opts->key_bits != 64))
        return bench_usage_error("--key-bits: '%s' is not 32 or 64", value);
      return 0;
    case FLAG_VALUE_BITS:
      if (parse_unsigned_in(value, 0, 64, &opts->value_bits) != 0 ||
          (opts->value_bits != 0 && opts->value_bits != 32 && opts->value_bits != 64))
        return bench_usage_error("--value-bits: '%s' is not 0, 32 or 64", value);
      return 0;
    case FLAG_GROUP_SIZES:
      if (parse_list(value, item_group_size, opts->group_sizes, &opts->group_size_count) != 0 ||
          list_has_duplicate(opts->group_sizes, opts->group_size_count, sizeof(unsigned)))
        return bench_usage_error("--%s: '%s' is not a list of distinct sizes from 1,2,4,8,16,32",
                                 name, value);
      return 0;
    case FLAG_LOADS:
      if (parse_list(value, item_load, opts->loads, &opts->load_count) != 0 ||
          list_has_duplicate(opts->loads, opts->load_count, sizeof(double)))
        return bench_usage_error("--%s: '%s' is not a list of distinct load factors in (0,1]", name,
                                 value);
      return 0;
    case FLAG_DISTS:
      if (parse_list(value, item_dist, opts->dists, &opts->dist_count) != 0 ||
          list_has_duplicate(opts->dists, opts->dist_count, sizeof(bench_dist)))
        return bench_usage_error("--%s: '%s' is not a list of distinct names from unique,zipf",
                                 name, value);
      return 0;
    case FLAG_OPS: {
      bench_op ops[BENCH_MAX_LIST];
      unsigned count = 0;
      if (parse_list(value, item_op, ops, &count) != 0 ||
          list_has_duplicate(ops, count, sizeof(bench_op)))
        return bench_usage_error(
            "--%s: '%s' is not a list of distinct names from insert,find,find_absent,erase", name,
            value);
      memset(opts->ops, 0, sizeof opts->ops);
      for (unsigned i = 0; i < count; ++i) opts->ops[ops[i]] = 1;
      return 0;
    }
    case FLAG_JSON:
      if (value[0] == '\0') return bench_usage_error("--json: empty file name");
      opts->json_path = value;
      return 0;
    case FLAG_SEED:
      if (parse_u64_decimal(value, &opts->seed) != 0)
        return bench_usage_error("--seed: '%s' is not a decimal number", value);
      return 0;
    case FLAG_SCENARIO: {
      unsigned bits[BENCH_MAX_LIST];
      unsigned count = 0;
      if (parse_list(value, item_scenario, bits, &count) != 0)
        return bench_usage_error(
            "--%s: '%s' is not a list of names from all,warpdrive,cuckoo,cuckoo-a,cuckoo-b,"
            "cuckoo-c,cuckoo-d",
            name, value);
      opts->scenarios = 0;
      for (unsigned i = 0; i < count; ++i) opts->scenarios |= bits[i];
      return 0;
    }
    case FLAG_COUNT:
      break;
  }
  return bench_usage_error("internal: unhandled option");
}

int bench_options_parse(int argc, char **argv, bench_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->backend = GH_BACKEND_AUTO;
  opts->warmup = BENCH_DEFAULT_WARMUP;
  opts->key_bits = BENCH_DEFAULT_KEY_BITS;
  opts->value_bits = BENCH_DEFAULT_VALUE_BITS;
  opts->json_path = BENCH_DEFAULT_JSON;
  opts->seed = BENCH_DEFAULT_SEED;
  opts->dist_count = BENCH_DIST_COUNT;
  for (int d = 0; d < BENCH_DIST_COUNT; ++d) opts->dists[d] = (bench_dist)d;
  for (int op = 0; op < BENCH_OP_COUNT; ++op) opts->ops[op] = 1;
  opts->scenarios = BENCH_SCENARIO_ALL;

  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    const char *value = NULL;
    size_t name_length;
    int id = -1;
    if (strncmp(arg, "--", 2) != 0)
      return bench_usage_error("unexpected argument '%s': options start with --", arg);
    arg += 2;
    const char *equals = strchr(arg, '=');
    name_length = equals != NULL ? (size_t)(equals - arg) : strlen(arg);
    for (int f = 0; f < FLAG_COUNT; ++f) {
      if (strlen(BENCH_FLAGS[f].name) == name_length &&
          strncmp(BENCH_FLAGS[f].name, arg, name_length) == 0) {
        id = f;
        break;
      }
    }
    if (id < 0) return bench_usage_error("unknown option '%s'", argv[i]);
    if (BENCH_FLAGS[id].arg == NULL) {
      if (equals != NULL) return bench_usage_error("--%s takes no value", BENCH_FLAGS[id].name);
    } else if (equals != NULL) {
      value = equals + 1;
    } else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
      value = argv[++i];
    } else {
      return bench_usage_error("--%s needs a value (%s)", BENCH_FLAGS[id].name,
                               BENCH_FLAGS[id].arg);
    }
    int result = bench_apply_flag((bench_flag_id)id, value, opts);
    if (result != 0) return result;
    opts->given |= 1u << id;
  }
  return BENCH_EXIT_OK;
}

int bench_options_finish(bench_options *opts, gh_backend resolved) {
  const int cuda = resolved == GH_BACKEND_CUDA;
  const bench_mode_defaults *mode = opts->quick ? (cuda ? &BENCH_QUICK_CUDA : &BENCH_QUICK_HOST)
                                                : (cuda ? &BENCH_FULL_CUDA : &BENCH_FULL_HOST);
  opts->mode_name = opts->limits_only ? "limits" : mode->name;
  if (!(opts->given & (1u << FLAG_N))) opts->n = mode->n;
  if (!(opts->given & (1u << FLAG_REPS))) opts->reps = mode->reps;
  if (!(opts->given & (1u << FLAG_GROUP_SIZES))) {
    memcpy(opts->group_sizes, mode->group_sizes, sizeof opts->group_sizes);
    opts->group_size_count = mode->group_size_count;
  }
  if (!(opts->given & (1u << FLAG_LOADS))) {
    memcpy(opts->loads, mode->loads, sizeof opts->loads);
    opts->load_count = mode->load_count;
  }
  opts->cuckoo = *CUCKOO_GRIDS[cuda][opts->quick != 0];
  if (opts->given & (1u << FLAG_N)) {
    if (opts->cuckoo.a_min_n > opts->n) opts->cuckoo.a_min_n = opts->n;
    opts->cuckoo.a_max_n = opts->cuckoo.bc_n = opts->cuckoo.d_n = opts->n;
  }
  if (opts->given & (1u << FLAG_REPS)) opts->cuckoo.sweep_reps = opts->reps;
  /* The absent keys use indices [n, 2n): with 32-bit keys they must stay below 2^32 to remain
   * distinct from the present ones. */
  if (opts->key_bits == 32 && opts->n > (1ull << 31))
    return bench_usage_error("--n %llu is too large for 32-bit keys (at most 2^31)",
                             (unsigned long long)opts->n);
  return BENCH_EXIT_OK;
}
