/* bench.h - what bench_scenarios.c, bench_driver.c and the backends (bench_host.c, bench_cuda.cu)
 * share. Plain C, also for nvcc: the inline streams and searches run in host loops and kernels. */
#ifndef GPUHASH_BENCH_H
#define GPUHASH_BENCH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuhash.h"
#ifdef __CUDACC__ /* bench_cuda.cu: C++, its bench_cuda_open() and _close() with C linkage */
#define BENCH_HD __host__ __device__
#define BENCH_C extern "C"
#else
#define BENCH_HD
#define BENCH_C
#endif

/* Salts that make the value, Zipf and ceiling streams independent of the keys under one seed. */
#define BENCH_SALT_VALUES 0x9e3779b97f4a7c15ull
#define BENCH_SALT_ZIPF 0xd1b54a32d192ed03ull
#define BENCH_SALT_LIMITS 0x8cb92ba72f3d8dd7ull
/* The streams (bench/README.md, Inputs), element i of each in bench_gen_element. A spec is plain
 * data, passed to kernels by value, without padding (the driver compares specs bytewise). */
enum { GEN_UNIQUE_KEYS, GEN_ZIPF_KEYS, GEN_VALUES, GEN_CYCLIC_KEYS, GEN_MIXED_KEYS, GEN_OPS };
typedef struct bench_gen_spec {
  unsigned kind, bits; /* bits: 32 or 64; 8: GEN_OPS's op codes */
  uint64_t seed, index_offset, zipf_n, period;
  unsigned absent_percent, unused;
} bench_gen_spec;

/* Mueller's 32-bit hash and the splitmix64 finalizer: bijections, not the tables' murmur fmix. */
static inline BENCH_HD uint32_t bench_mix32(uint32_t x) {
  x = (x ^ (x >> 16)) * 0x45d9f3bu;
  x = (x ^ (x >> 16)) * 0x45d9f3bu;
  return x ^ (x >> 16);
}
static inline BENCH_HD uint64_t bench_mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
/* Indices below 2^bits give distinct keys: present keys use [0, n), absent ones [n, 2n). */
static inline BENCH_HD uint64_t bench_key(uint64_t index, unsigned bits, uint64_t seed) {
  return bits == 32 ? (uint64_t)bench_mix32((uint32_t)(index ^ seed)) : bench_mix64(index ^ seed);
}
/* Zipf rank of sample i in [0, N - 1), s = 1 + 1e-6, by the s -> 1 limit N^u of the inverse CDF:
 * a relative error < 5e-5 at N = 2^27, far below one rank where ranks repeat (bench/README.md). */
static inline BENCH_HD uint64_t bench_zipf_rank(uint64_t i, uint64_t zipf_n, uint64_t seed) {
  double u = (double)(bench_mix64(i ^ seed ^ BENCH_SALT_ZIPF) >> 11) * 0x1p-53; /* [0, 1) */
  double x = exp(u * log((double)zipf_n)); /* N^u in [1, N) */
  uint64_t rank = (uint64_t)x;             /* floor, >= 1 */
  if (rank >= zipf_n) rank = zipf_n - 1;   /* rounding of exp() near u -> 1 */
  if (rank < 1) rank = 1;
  return rank - 1;
}
/* Element i of a stream; for Zipf keys *rank receives the rank. GEN_OPS, p % updates, h a hash of
 * i mod 200: INSERT of a new key (h < p), ERASE (h < 2p), FIND, of a new key if h >= 100 + p. */
static inline BENCH_HD uint64_t bench_gen_element(const bench_gen_spec *s, uint64_t i,
                                                  uint64_t *rank) {
  const uint64_t p = s->absent_percent, value = bench_mix64(i ^ s->seed ^ BENCH_SALT_VALUES) | 1;
  const uint64_t h = (value >> 8) % 200;
  switch (s->kind) {
    case GEN_UNIQUE_KEYS: return bench_key(s->index_offset + i, s->bits, s->seed);
    case GEN_ZIPF_KEYS:
      return bench_key(*rank = bench_zipf_rank(i, s->zipf_n, s->seed), s->bits, s->seed);
    case GEN_CYCLIC_KEYS: return bench_key(s->index_offset + i % s->period, s->bits, s->seed);
    case GEN_MIXED_KEYS: /* i absent when floor((i + 1) p / 100) > floor(i p / 100) */
      return bench_key((i + 1) * p / 100 != i * p / 100 ? s->index_offset + i : i, s->bits,
                       s->seed);
    case GEN_OPS: /* 8 bits: the op; else its key */
      if (s->bits == 8) return h < p ? GH_OP_INSERT : h < 2 * p ? GH_OP_ERASE : GH_OP_FIND;
      return bench_key(h < p || h >= 100 + p ? s->index_offset + i : i, s->bits, s->seed);
    default: return s->bits == 32 ? (value & 0xffffffffull) : value;
  }
}

/* A bijection of [0, 2^bits) (xor, odd multiply, xorshift): each CAS of the CAS ceiling, a slot. */
static inline BENCH_HD uint64_t bench_permute(uint64_t x, unsigned bits, uint64_t seed) {
  const uint64_t mask = (1ull << bits) - 1;
  const unsigned shift = (bits + 1) / 2;
  x = (x ^ seed) & mask;
  x = (x * 0x9e3779b97f4a7c15ull) & mask;
  x ^= x >> shift;
  x = (x * 0xbf58476d1ce4e5b9ull) & mask;
  return x ^ (x >> shift);
}
/* Element i of an array of 1-, 4- or 8-byte elements, and a store into one. */
static inline BENCH_HD uint64_t bench_load(const void *base, uint64_t i, unsigned bytes) {
  if (bytes == 1) return ((const uint8_t *)base)[i];
  return bytes == 4 ? ((const uint32_t *)base)[i] : ((const uint64_t *)base)[i];
}
static inline BENCH_HD void bench_store(void *base, uint64_t i, unsigned bytes, uint64_t v) {
  if (bytes == 1) ((uint8_t *)base)[i] = (uint8_t)v;
  if (bytes == 4) ((uint32_t *)base)[i] = (uint32_t)v;
  if (bytes == 8) ((uint64_t *)base)[i] = v;
}
/* Element i of a stream into out, and 1 at its Zipf rank in rank_map if given (races write 1s). */
static inline BENCH_HD void bench_gen_store(void *out, uint64_t i, const bench_gen_spec *spec,
                                            uint8_t *rank_map) {
  uint64_t rank = 0;
  bench_store(out, i, spec->bits / 8, bench_gen_element(spec, i, &rank));
  if (rank_map != NULL) rank_map[rank] = 1;
}

/* The sorted baseline (Alcantara et al., 4.5): the pairs sorted by key for binary searches, and for
 * compacting / multivalue the keys' run-length encoding. Plain data, passed to kernels by value. */
typedef struct bench_sorted {
  unsigned key_bytes, value_bytes; /* value_bytes 0: keys only (compacting) */
  uint64_t n, unique;              /* pairs sorted; distinct keys (after the encoding) */
  void *keys, *values, *unique_keys, *temp; /* temp: the sort's and scans' scratch (CUB's) */
  uint64_t *run_counts, *run_offsets;
  size_t temp_bytes;
} bench_sorted;

/* Where key lies in sorted keys[0, m) (the lower bound), or all ones when it is absent. */
static inline BENCH_HD uint64_t bench_sorted_position(const void *keys, uint64_t m, uint64_t key,
                                                      unsigned key_bytes) {
  uint64_t first = 0, count = m;
  while (count > 0) {
    const uint64_t half = count / 2;
    if (bench_load(keys, first + half, key_bytes) < key) first += half + 1, count -= half + 1;
    else count = half;
  }
  return first < m && bench_load(keys, first, key_bytes) == key ? first : ~0ull;
}
/* Query i: a hit writes values[pos] (values NULL: pos, the key's id) and found 1, a miss 0, 0. */
static inline BENCH_HD void bench_sorted_find_one(const void *keys, const void *values, uint64_t m,
                                                  unsigned key_bytes, unsigned out_bytes,
                                                  const void *queries, uint64_t i,
                                                  void *values_out, uint8_t *found_out) {
  const uint64_t pos = bench_sorted_position(keys, m, bench_load(queries, i, key_bytes), key_bytes);
  const int found = pos != ~0ull;
  const uint64_t value = !found ? 0 : values ? bench_load(values, pos, out_bytes) : pos;
  bench_store(values_out, i, out_bytes, value);
  found_out[i] = (uint8_t)found;
}
/* Query i of a multivalue lookup's count pass: its values' count (0 if absent) and start. */
static inline BENCH_HD void bench_sorted_count_one(const bench_sorted *s, const void *queries,
                                                   uint64_t i, uint64_t *counts,
                                                   uint64_t *positions) {
  const uint64_t run = bench_sorted_position(s->unique_keys, s->unique,
                                             bench_load(queries, i, s->key_bytes), s->key_bytes);
  counts[i] = run != ~0ull ? s->run_counts[run] : 0;
  positions[i] = run != ~0ull ? s->run_offsets[run] : 0;
}

/* Step results: BROKEN skips the rest of a table's states (a wrong answer or a failed call:
 * their timings would be worthless), FATAL ends the run (the device is unusable). */
enum { BENCH_OK = 0, BENCH_BROKEN = 1, BENCH_FATAL = -1 };
enum { BENCH_PREPARE, BENCH_RESET, BENCH_LAUNCH, BENCH_VERIFY }; /* steps of a ceiling */
/* The ceilings' buffer, a power of two (they mask with it): 40x the 50 MB L2 of an H100, so random
 * accesses miss the cache, and the copy moves 1 GiB each way: launch overhead is noise. */
#define BENCH_LIMIT_BYTES ((size_t)1 << 31)
enum { BENCH_MAX_LIST = 16, BENCH_MAX_VALUES = 48, BENCH_MAX_REPS = 101, BENCH_MAX_RUNS = 111,
       BENCH_LAPS = 8 };
/* A backend, filled by bench_host_open() or bench_cuda_open() (about: "NAME (device 0, sm_90,
 * ...)", or why CUDA did not start). Its int functions return 0, or -1 with error() saying why. */
typedef struct bench_backend {
  const char *name; /* "cuda" or "host" */
  gh_backend kind;
  gh_stream stream; /* passed to every gh_* call; NULL on the host */
  char device[256]; /* the GPU's name, or "host" */
  int sm_version, sm_count;
  size_t memory_bytes, l2_bytes;
  int (*memory)(size_t *free_bytes), (*alloc)(void **ptr, size_t bytes);
  int (*release)(void *ptr); /* accepts NULL */
  /* out[i] = element i of spec's stream; rank_map (zipf_n bytes, cleared first): 1 per rank. */
  int (*generate)(void *out, uint64_t n, bench_gen_spec spec, uint8_t *rank_map);
  /* *count = elements i < n (1, 4 or 8 bytes) with a[i] != (b ? b[i] : value). */
  int (*count_differ)(const void *a, const void *b, uint64_t value, uint64_t n, unsigned bytes,
                      uint64_t *count);
  int (*timer_start)(void), (*timer_stop)(double *ms); /* stop waits for the work since start */
  /* Laps within an op: lap_start(k) and lap_stop(k) mark the two ends of lap k < BENCH_LAPS on the
   * stream; lap_ms(k) waits for its end and gives the time between them. */
  int (*lap_start)(unsigned lap), (*lap_stop)(unsigned lap), (*lap_ms)(unsigned lap, double *ms);
  /* The sorted baseline: scratch for n pairs; sort, then unless a map run-length encode (and for
   * multivalue scan the counts); per-query binary search; gh_find_all's shape. */
  int (*sorted_temp_bytes)(uint64_t n, unsigned key_bytes, unsigned value_bytes, size_t *bytes);
  int (*sorted_build)(bench_sorted *s, const void *keys_in, const void *values_in, gh_variant v);
  int (*sorted_find)(const void *keys, const void *values, uint64_t m, unsigned key_bytes,
                     unsigned out_bytes, const void *queries, uint64_t n, void *values_out,
                     uint8_t *found_out);
  int (*sorted_find_all)(const bench_sorted *s, const void *queries, uint64_t n,
                         uint64_t *offsets_out, uint64_t *positions, void *values_out,
                         uint64_t values_capacity, uint64_t *total);
  /* The sort-merge join with s (the right side, built as a multivalue structure): the n left keys
   * sorted with their rows, each sorted key's run in s found by binary search (sorted, the keys
   * walk s in order), the counts summed, the pairs filled: left_out the left rows, right_out s's
   * values. *pairs: how many; -1 when more than capacity. */
  int (*sorted_join)(const bench_sorted *s, const void *left_keys, uint64_t n, uint64_t *left_out,
                     void *right_out, uint64_t capacity, uint64_t *pairs);
  /* Step of ceiling `which` (bench_op - OP_LIMIT_COPY; NULL on the host) over BENCH_LIMIT_BYTES:
   * PREPARE (*ops = a launch's work; the copy's: bytes), RESET (what it used), LAUNCH, VERIFY. */
  int (*limit)(int step, int which, void *buffer, uint64_t seed, uint64_t *ops);
  const char *(*error)(void);
} bench_backend;
BENCH_C int bench_cuda_open(int device, bench_backend *b, char *about, size_t about_size);
BENCH_C void bench_cuda_close(void);
void bench_host_open(bench_backend *b);

/* ---- The scenarios' vocabulary (bench_scenarios.c) ---------------------------------------- */
typedef enum { D_LIMITS, D_WARPDRIVE, D_CUCKOO, D_SORTED, D_SLAB, D_DYCUCKOO, D_HASHGRAPH, D_COUNT } bench_design;
typedef enum {
  OP_INSERT, OP_BUILD, OP_FIND, OP_FIND_ABSENT, OP_ERASE, OP_FIND_ALL, OP_BATCHES, OP_MIXED,
  OP_ALLOC, OP_DYNAMIC, OP_UPSIZE, OP_DOWNSIZE, OP_REINSERT, OP_JOIN, OP_JOIN_INTERSECT, OP_FIND_FIRST, OP_AGING, OP_LIMIT_COPY, OP_LIMIT_SECTOR, OP_LIMIT_CAS, OP_LIMIT_ADD, OP_COUNT
} bench_op;
enum { DIST_UNIQUE, DIST_ZIPF, DIST_CYCLIC };
/* warpdrive's insert: as gh_config.bulk_min_keys = 0 picks it, or the ordinary one always. */
enum { PATH_AUTO, PATH_ORDINARY };
/* warpdrive's gh_compact: as gh_config.compact_scratch_bytes = 0 picks it, or in place always. */
enum { COMPACT_AUTO, COMPACT_IN_PLACE };
/* Every parameter of a state is an axis; consecutive states alike up to AX_ABSENT share a table. */
typedef enum {
  AX_DESIGN, AX_VARIANT, AX_N, AX_DIST, AX_MULT, AX_G, AX_LOAD, AX_D, AX_FACTOR, AX_BUCKET, AX_SLABS,
  AX_START, AX_BATCH, AX_UPDATES, AX_DELETES, AX_FILL_MIN, AX_BINS, AX_PATH, AX_COMPACT, AX_ABSENT, AX_OP,
  AX_COUNT
} bench_axis_id;
typedef struct bench_axis_def {
  const char *name, *const *names; /* names: a string axis's values index this list */
  char type;                       /* 's' string, 'i' integer, 'f' real */
  double min, max;                 /* of a numeric axis */
  const char *note;                /* its value in a row's notes (a printf format), or none */
} bench_axis_def;

/* A row of the scenario table: the values of one axis of one scenario in some modes (M_* bits).
 * An axis takes the values of its first row that names the mode; axes nest in the order of
 * their first rows, the last innermost. count: of v, or SWEEP or PER_MODE (bench_rows). */
typedef struct bench_row {
  const char *scenario;
  int axis;
  unsigned modes, count;
  double v[BENCH_MAX_LIST];
} bench_row;
enum { M_FULL_GPU = 1, M_QUICK_GPU = 2, M_FULL_HOST = 4, M_QUICK_HOST = 8, ALL = 15 };
enum { SWEEP = 0, PER_MODE = 99 };
typedef struct bench_scenario {
  const char *name, *title;
  unsigned reps;        /* unless --reps; 0: the mode's (5, --quick 3) */
  int show_inputs;      /* print each key stream's distinct keys */
  const char *rejected; /* configs gh_config_validate rejects are skipped, for this reason */
} bench_scenario;

typedef struct bench_design_def {
  gh_design gh; /* 0: not a gpuhash table */
  gh_dup_policy policy;
  int fresh_per_insert; /* each insert gets a new table, seeded by the run (else gh_clear) */
  unsigned min_warmup;  /* warm-up runs even with --warmup 0 */
  unsigned axes;        /* bits of the axes that apply (the JSON lists those) */
} bench_design_def;

/* The ceilings (bench_op - OP_LIMIT_COPY) a gpuhash table's result is held against; -1 none. */
typedef struct bench_op_def { int ceiling, ceiling_alt; } bench_op_def;

extern const bench_axis_def bench_axes[AX_COUNT];
extern const double bench_defaults[AX_COUNT];
extern const bench_row bench_rows[];
extern const bench_scenario bench_scenarios[];
extern const size_t bench_row_count, bench_scenario_count;
extern const bench_design_def bench_designs[D_COUNT];
extern const bench_op_def bench_ops[OP_COUNT];

/* ---- A run -------------------------------------------------------------------------------- */
typedef struct bench_options {
  int quick, limits_only, validate, summary, reps_given; /* summary: the main job (make run) */
  unsigned device, mode, reps, warmup, key_bits, value_bits; /* mode: the M_* bit that runs */
  gh_backend backend;
  uint64_t n, seed; /* n: 0 unless --n */
  const char *scenarios, *json_path, *mode_name;
  const char *peers_path; /* --peers: bench/peers' JSON lines from this GPU, or NULL */
  bench_row overrides[BENCH_MAX_LIST]; /* --axis and its aliases: before bench_rows */
  unsigned override_count;
} bench_options;

/* The dynamic workload (dycuckoo-c, bench/README.md): time per phase of each run, and after every
 * stride-th batch of the last run the filled factor and the table's bytes. */
enum { PHASE_INSERT, PHASE_FIND, PHASE_ERASE, PHASE_RESIZE, PHASE_COUNT };
enum { BENCH_MAX_SERIES = 400 };
typedef struct bench_dynamic {
  double phase_ms[BENCH_MAX_RUNS][PHASE_COUNT];
  uint64_t ops, batches, stride, first_slots; /* first_slots: the table's slots when created */
  unsigned points;                            /* of the series */
  double theta[BENCH_MAX_SERIES], bytes[BENCH_MAX_SERIES];
  /* theta_min: over the batches whose keys would fill the first table to fill_min (a table that
   * shrinks no further than its first size can hold theta >= fill_min there) */
  double theta_min, peak_bytes;
  /* The aging workload (aging, bench/README.md), of the last run: finds of every resident key in a
   * fresh table, in the aged one and after gh_compact, the compaction; per series point the
   * slice's find rate (G/s) and the table's tombstones after it. */
  double fresh_find_ms, aged_find_ms, compacted_find_ms, compact_ms;
  uint64_t compactions; /* gh_compact calls during the slices (above 5 % tombstones) */
  double find_rate[BENCH_MAX_SERIES], tombstones[BENCH_MAX_SERIES];
} bench_dynamic;

/* What the steps of a state work on: its inputs, its table and its lookup. */
typedef struct bench_ctx {
  const bench_options *opts;
  const bench_backend *be;
  double ax[AX_COUNT];
  const char *desc; /* the state, for messages */
  unsigned kb, vb;  /* key and value bytes */
  uint64_t n, distinct;
  void *keys, *queries, *keys_out, *values, *values_out, *limit_buffer;
  uint8_t *flags;
  uint64_t *counts, *offsets;
  bench_sorted sorted;
  bench_gen_spec have[3]; /* what keys, queries and values hold */
  uint64_t have_n[3];
  gh_config config;
  gh_table *table;
  int filled, validated;
  const char *skipped; /* why the table was not made (SKIPPED) */
  gh_status insert_status;
  gh_stats stats; /* after the last insert */
  uint64_t stored, failed;
  unsigned full_runs, runs; /* runs: inserts so far in this measurement, warm-up included */
  uint32_t restarts[BENCH_MAX_RUNS];
  uint64_t grows[BENCH_MAX_RUNS];
  const void *q; /* the lookup: nq queries, `absent` of them never inserted */
  uint64_t nq, absent, total;
  uint64_t mix[3], slabs; /* [GH_OP_INSERT], [GH_OP_ERASE] of a mixed batch; slabs allocated */
  double own_ms;          /* an op that times itself (dynamic, upsize, downsize), else NAN */
  uint64_t moved;         /* upsize, downsize: the keys of the subtable resized */
  bench_dynamic dynamic;
} bench_ctx;

/* prepare: once per state; then per run setup (untimed), op (timed), check (untimed). */
typedef struct bench_steps {
  int (*prepare)(bench_ctx *), (*setup)(bench_ctx *), (*op)(bench_ctx *), (*check)(bench_ctx *);
} bench_steps;
const bench_steps *bench_steps_for(int design, int op);
gh_config bench_table_config(const bench_ctx *c);

int bench_error(const char *format, ...) __attribute__((format(printf, 1, 2))); /* FATAL */
/* A check's failure: reported, BENCH_BROKEN. */
#define bench_wrong(c, format, ...)                                                    \
  (bench_error("%s gave a WRONG ANSWER: " format "; configuration skipped", (c)->desc, \
               __VA_ARGS__), BENCH_BROKEN)
/* A gh_* call's status: BENCH_OK, or reported: BENCH_BROKEN (FATAL when the device is gone). */
int bench_call_failed(const bench_ctx *c, const char *call, gh_status status);
#define GH_CALL(c, call) bench_call_failed(c, #call, call)
int bench_backend_failed(const bench_ctx *c, int failed, const char *what); /* OK if !failed */
/* The backend's count_differ(a, b, value, n, bytes, count), a failure reported as fatal. */
#define bench_count(c, ...) bench_backend_failed(c, (c)->be->count_differ(__VA_ARGS__), "verifying")
#endif /* GPUHASH_BENCH_H */
