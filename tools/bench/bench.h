/*
 * bench.h - the parts of gpuhash-bench shared between its C files.
 *
 *   bench_options.c   command line, defaults of each mode
 *   bench_backend.c   the two backends behind one ops struct, the timing helper
 *   bench_report.c    the stdout table, the JSON lines, the acceptance summary
 *   bench_limits.c    the ceilings (--limits)
 *   bench_warpdrive.c the WarpDrive scenario (paper section V-B)
 *   bench_cuckoo.c    the cuckoo scenarios (Alcantara et al., section 4.5), a to d
 *   bench_sorted_host.c  the cuckoo scenarios' sorted-array baseline on the host (bench_sorted.h)
 *   bench_main.c      glue
 */
#ifndef GPUHASH_BENCH_H
#define GPUHASH_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench_cuda.h"
#include "bench_gen.h"
#include "gpuhash.h"

/* ---- Exit codes and step results ---------------------------------------------------------- */

enum {
  BENCH_EXIT_OK = 0,
  BENCH_EXIT_FAILED = 1, /* a measurement could not run or a table failed verification */
  BENCH_EXIT_USAGE = 2   /* bad command line */
};

/* What a step of a measurement returns. BROKEN skips the rest of one configuration (the table
 * gave a wrong answer: its timings would be worthless); FATAL ends the run (the device or the
 * library is unusable). */
enum { BENCH_STEP_OK = 0, BENCH_STEP_BROKEN = 1, BENCH_STEP_FATAL = -1 };

/* Prints "gpuhash-bench: error: ..." on stderr; returns BENCH_STEP_FATAL for convenience. */
int bench_error(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* A gh_* call of a scenario failed: prints "<design> <description>: <call> returned ..." with the
 * table's (or gh_create's) last error. Returns BENCH_STEP_FATAL when the device is unusable
 * (GH_ERR_CUDA, GH_ERR_NO_DEVICE), BENCH_STEP_BROKEN otherwise (the configuration is skipped). */
int bench_call_failed(const char *design, const char *description, const gh_table *table,
                      const char *call, gh_status status);
/* A table gave a wrong answer: prints it; returns BENCH_STEP_BROKEN. */
int bench_wrong(const char *design, const char *description, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- Options ------------------------------------------------------------------------------ */

enum {
  BENCH_MAX_LIST = 16,  /* most items of a list option (--loads ...) */
  BENCH_MAX_REPS = 101, /* most timed repetitions of one measurement */
  BENCH_MAX_WARMUP = 10
};

typedef enum bench_op {
  BENCH_OP_INSERT = 0,
  BENCH_OP_FIND = 1,        /* the n present keys */
  BENCH_OP_FIND_ABSENT = 2, /* n keys never inserted */
  BENCH_OP_ERASE = 3
} bench_op;
#define BENCH_OP_COUNT 4

typedef enum bench_dist { BENCH_DIST_UNIQUE = 0, BENCH_DIST_ZIPF = 1 } bench_dist;

/* The scenarios (--scenario): bits of bench_options.scenarios. */
typedef enum bench_scenario {
  BENCH_SCENARIO_WARPDRIVE = 1u << 0,
  BENCH_SCENARIO_CUCKOO_A = 1u << 1, /* build / find vs n, against the sorted array */
  BENCH_SCENARIO_CUCKOO_B = 1u << 2, /* find vs the fraction of absent queries, d = 3, 4 */
  BENCH_SCENARIO_CUCKOO_C = 1u << 3, /* build / find vs table factor x d, restarts */
  BENCH_SCENARIO_CUCKOO_D = 1u << 4  /* compacting and multivalue vs key multiplicity */
} bench_scenario;
#define BENCH_SCENARIO_CUCKOO                                                    \
  (BENCH_SCENARIO_CUCKOO_A | BENCH_SCENARIO_CUCKOO_B | BENCH_SCENARIO_CUCKOO_C | \
   BENCH_SCENARIO_CUCKOO_D)
#define BENCH_SCENARIO_ALL (BENCH_SCENARIO_WARPDRIVE | BENCH_SCENARIO_CUCKOO)

/* What the cuckoo scenarios run (bench_options_finish() fills it from the mode unless --n
 * says otherwise; bench_cuckoo.c reads it). */
typedef struct bench_cuckoo_grid {
  uint64_t a_min_n, a_max_n;      /* scenario a: n = a_min_n, 2 a_min_n, ... up to a_max_n */
  uint64_t bc_n;                  /* scenarios b and c */
  uint64_t d_n;                   /* scenario d: pairs */
  unsigned sweep_reps;            /* repetitions of b, c and d (a uses --reps) */
  double factors[BENCH_MAX_LIST]; /* scenario c: table factors */
  unsigned factor_count;
  unsigned absent_percents[BENCH_MAX_LIST]; /* scenario b */
  unsigned absent_count;
  unsigned multiplicities[BENCH_MAX_LIST]; /* scenario d: average key multiplicity */
  unsigned multiplicity_count;
} bench_cuckoo_grid;
#define BENCH_DIST_COUNT 2

extern const char *const bench_op_names[BENCH_OP_COUNT];
extern const char *const bench_dist_names[BENCH_DIST_COUNT];

typedef struct bench_options {
  int quick;          /* --quick: the small grid that finishes in under a minute */
  int limits_only;    /* --limits: the ceilings and nothing else */
  int validate;       /* --validate: gh_validate() once per table after its first insert */
  gh_backend backend; /* as asked: AUTO, HOST or CUDA */
  int device;
  uint64_t n;
  unsigned reps, warmup;
  unsigned key_bits, value_bits;
  unsigned group_sizes[BENCH_MAX_LIST];
  unsigned group_size_count;
  double loads[BENCH_MAX_LIST];
  unsigned load_count;
  bench_dist dists[BENCH_DIST_COUNT];
  unsigned dist_count;
  int ops[BENCH_OP_COUNT]; /* non-zero: measure it */
  unsigned scenarios;      /* bench_scenario bits; default BENCH_SCENARIO_ALL */
  bench_cuckoo_grid cuckoo;
  const char *json_path;
  uint64_t seed;
  unsigned given;        /* bench_options.c: bit per option present on the command line */
  const char *mode_name; /* "full", "quick" or "limits", set by bench_options_finish() */
} bench_options;

/* Parses argv into *opts (defaults not yet applied). Returns BENCH_EXIT_OK to go on, -1 after
 * printing --help (exit 0), BENCH_EXIT_USAGE after printing why. */
int bench_options_parse(int argc, char **argv, bench_options *opts);
/* Fills what the command line left out with the defaults of the mode (full or --quick) on the
 * backend that will run, then checks the combination. Returns BENCH_EXIT_OK or
 * BENCH_EXIT_USAGE (after printing why). */
int bench_options_finish(bench_options *opts, gh_backend resolved);

/* ---- Backends ----------------------------------------------------------------------------- */

/* One struct of functions per backend, so the scenarios never ask which one runs. Every int
 * function returns 0 on success, -1 on failure with error() saying why. */
typedef struct bench_backend {
  const char *name;   /* "cuda" or "host": the JSON's backend field */
  gh_backend gh_kind; /* what the tables are created with */
  gh_stream stream;   /* passed to every gh_* call (NULL on the host) */
  char device[256];   /* the GPU's name, or "host" */
  int (*memory)(size_t *free_bytes);
  int (*alloc)(void **ptr, size_t bytes);
  int (*release)(void *ptr);
  int (*fill)(void *ptr, int byte, size_t bytes);
  int (*generate)(void *out, uint64_t n, bench_gen_spec spec, uint8_t *rank_map);
  int (*count_differ)(const void *a, const void *b, uint64_t value, uint64_t n, unsigned elem_bytes,
                      uint64_t *count);
  /* The sorted-array baseline of the cuckoo scenarios: see bcu_sorted_* in bench_cuda.h. */
  bench_sorted_temp_bytes_fn *sorted_temp_bytes;
  bench_sorted_build_fn *sorted_build;
  bench_sorted_runs_fn *sorted_runs;
  bench_sorted_find_fn *sorted_find;
  bench_sorted_find_all_fn *sorted_find_all;
  int (*timer_start)(void);
  int (*timer_stop)(double *ms);
  const char *(*error)(void);
} bench_backend;

/* Picks the backend the options ask for and starts it. *announce receives the first line the
 * tool prints ("CUDA backend on ...", "host backend: no GPU here"). */
int bench_backend_open(const bench_options *opts, bench_backend *backend, char *announce,
                       size_t announce_size);
void bench_backend_close(bench_backend *backend);
/* The host backend's sorted-array baseline (bench_sorted_host.c); contracts as bcu_sorted_*. */
bench_sorted_temp_bytes_fn bench_host_sorted_temp_bytes;
bench_sorted_build_fn bench_host_sorted_build;
bench_sorted_runs_fn bench_host_sorted_runs;
bench_sorted_find_fn bench_host_sorted_find;
bench_sorted_find_all_fn bench_host_sorted_find_all;
/* Sets the host backend's error() text; returns -1. */
int bench_host_fail(const char *message);
/* Releases count buffers (NULL ones are skipped by the backend); reports the first failure
 * through bench_error() naming what, and returns BENCH_STEP_FATAL then, else BENCH_STEP_OK. */
int bench_release_all(const bench_backend *backend, void *const *buffers, size_t count,
                      const char *what);
/* Allocates on the backend and reports a failure through bench_error(); *ptr NULL on failure. */
int bench_alloc(const bench_backend *backend, void **ptr, size_t bytes, const char *what);

/* ---- Timing ------------------------------------------------------------------------------- */

/* A step of a measurement; returns a BENCH_STEP_* value. */
typedef int (*bench_step_fn)(void *context);

typedef struct bench_steps {
  bench_step_fn setup; /* untimed, before each run (NULL: none), e.g. gh_clear before insert */
  bench_step_fn op;    /* the timed call */
  bench_step_fn check; /* untimed, after each run (NULL: none): verification */
} bench_steps;

typedef struct bench_stats {
  double ms_median, ms_min, ms_max;
  unsigned reps;
} bench_stats;

/* The one timing loop of the tool: `warmup` untimed runs, then `reps` runs each timed by the
 * backend's timer (CUDA events on the stream, or CLOCK_MONOTONIC), every run preceded by setup
 * and followed by check. Returns the first non-OK step result. */
int bench_measure(const bench_backend *backend, const bench_steps *steps, void *context,
                  unsigned warmup, unsigned reps, bench_stats *stats);

/* ---- Ceilings ----------------------------------------------------------------------------- */

extern const char *const bench_limit_names[BCU_LIMIT_COUNT]; /* "limit_copy", ... */

typedef struct bench_ceilings {
  int measured;
  double value[BCU_LIMIT_COUNT]; /* G ops/s; the copy in GB/s */
} bench_ceilings;

/* ---- Report ------------------------------------------------------------------------------- */

typedef struct bench_record {
  const char *design;       /* "warpdrive", or "limits" */
  const char *op;           /* bench_op_names[...] or bench_limit_names[...] */
  const char *dist;         /* NULL: not applicable */
  uint64_t n;               /* operations per repetition (the copy: bytes moved) */
  int key_bits, value_bits; /* -1: not applicable */
  double load_factor;       /* target load; NAN: not applicable */
  unsigned group_size;      /* 0: not applicable */
  bench_stats stats;
  double rate;      /* n / median seconds / 1e9 */
  const char *unit; /* "Gops/s" or "GB/s" */
  int ceiling;      /* bcu_limit the result is compared with; -1: none */
  int ceiling_alt;  /* a second one (insert: atomicAdd); -1: none */
  /* Scenario details (zero for the ceilings). */
  uint64_t distinct;    /* distinct keys among the n */
  uint64_t capacity;    /* the table's slots (gh_capacity) */
  uint64_t stored;      /* keys in the table after the insert (gh_size) */
  uint64_t failed;      /* input elements whose key did not fit (0 unless the table filled) */
  unsigned full_runs;   /* insert runs (warm-up included) that returned GH_ERR_TABLE_FULL */
  uint64_t table_bytes; /* memory the table (or the ceiling's buffer) occupies */
  const char *policy;   /* insert duplicate policy; NULL: not applicable */
  /* Cuckoo scenarios (zero / NULL / NAN elsewhere). */
  const char *scenario;              /* "cuckoo-a" .. "cuckoo-d" */
  const char *variant;               /* "map", "compacting", "multivalue" */
  const char *hash_family;           /* "multiply" or "xor" */
  unsigned hash_functions;           /* d */
  double table_factor;               /* slots per key asked for */
  double absent_fraction;            /* of the queries (scenario b) */
  double multiplicity;               /* average key multiplicity (scenario d) */
  uint64_t pairs;                    /* pairs (keys) the structure holds; n counts the lookups */
  uint64_t slots;                    /* gh_stats.slots after the last build */
  uint64_t eviction_limit;           /* gh_stats.eviction_limit */
  uint64_t grows;                    /* gh_stats.grows summed over the timed builds */
  unsigned build_runs;               /* timed builds whose restarts are listed below */
  uint32_t restarts[BENCH_MAX_REPS]; /* gh_stats.restarts of each timed build */
  const char *skipped;               /* not measured, and why; every timing is then NAN */
} bench_record;

typedef struct bench_run {
  const bench_options *opts;
  const bench_backend *backend;
  bench_ceilings ceilings;
  char commit[64];
  char run_id[64];
  FILE *json;
  const char *json_path;
  bench_record *records; /* kept for the summary */
  size_t record_count, record_capacity;
  unsigned broken; /* configurations that failed verification */
} bench_run;

int bench_report_begin(bench_run *run, const bench_options *opts, const bench_backend *backend);
/* Prints the row, appends the JSON line, keeps the record. */
int bench_report_add(bench_run *run, const bench_record *record);
/* "2^27" for powers of two, the decimal number otherwise; returns buffer. */
const char *bench_format_count(uint64_t n, char *buffer, size_t size);
/* Prints the header of the table of results (before the first row of a section). */
void bench_report_header(const char *title);
/* The acceptance criteria of the issues (warpdrive ceilings, cuckoo vs binary search),
 * information only. */
void bench_report_summary(const bench_run *run);
void bench_report_end(bench_run *run);

/* ---- Scenarios ---------------------------------------------------------------------------- */

/* Measures the ceilings, reports them and stores them in run->ceilings. */
int bench_limits_run(bench_run *run, const bench_backend *backend, const bench_options *opts);
/* The WarpDrive experiment; BENCH_STEP_FATAL ends the run, broken tables are counted in run. */
int bench_warpdrive_run(bench_run *run, const bench_backend *backend, const bench_options *opts);
/* The cuckoo scenarios opts->scenarios selects; same contract. */
int bench_cuckoo_run(bench_run *run, const bench_backend *backend, const bench_options *opts);

#endif /* GPUHASH_BENCH_H */
