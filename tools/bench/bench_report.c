/*
 * bench_report.c - what gpuhash-bench prints and records.
 *
 * Every measurement goes through bench_report_add(): one row of the table on stdout, one JSON
 * line appended (and flushed, so an interrupted run keeps what it measured) to --json, and a
 * copy kept for the acceptance summary at the end. The fraction of ceiling is computed here and
 * only here.
 */
#define _POSIX_C_SOURCE 200809L /* gmtime_r, getpid */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#ifndef GH_GIT_COMMIT
#define GH_GIT_COMMIT "unknown"
#endif

/* The acceptance criterion for unique 32/32-bit keys at load 0.9 (information only). */
#define BENCH_ACCEPT_LOAD 0.9
#define BENCH_ACCEPT_INSERT_VS_CAS 0.65
#define BENCH_ACCEPT_FIND_VS_SECTOR 0.35
#define BENCH_LOAD_EPSILON 1e-9
/* The cuckoo issue's criterion: at n = 2^27, d = 4, table 1.25 n, finding present keys at least
 * 3x faster than binary search over the sorted array of the same pairs. */
#define BENCH_ACCEPT_CUCKOO_N (1ull << 27)
#define BENCH_ACCEPT_CUCKOO_VS_SORTED 3.0

const char *const bench_limit_names[BCU_LIMIT_COUNT] = {
    [BCU_LIMIT_COPY] = "limit_copy",
    [BCU_LIMIT_SECTOR_READ] = "limit_sector_read",
    [BCU_LIMIT_CAS64] = "limit_cas64",
    [BCU_LIMIT_ATOMIC_ADD32] = "limit_atomic_add32",
};

/* ---- Small formatting helpers ------------------------------------------------------------- */

const char *bench_format_count(uint64_t n, char *buffer, size_t size) {
  if (n != 0 && (n & (n - 1)) == 0) {
    int log2 = 0;
    while ((1ull << log2) != n) ++log2;
    snprintf(buffer, size, "2^%d", log2);
  } else {
    snprintf(buffer, size, "%llu", (unsigned long long)n);
  }
  return buffer;
}

static void format_utc_now(char *buffer, size_t size) {
  struct tm utc;
  time_t now = time(NULL);
  gmtime_r(&now, &utc);
  strftime(buffer, size, "%Y-%m-%dT%H:%M:%SZ", &utc);
}

static double record_fraction(const bench_run *run, const bench_record *r, int ceiling) {
  if (ceiling < 0 || !run->ceilings.measured || !(run->ceilings.value[ceiling] > 0.0)) return NAN;
  return r->rate / run->ceilings.value[ceiling];
}

/* ---- JSON lines --------------------------------------------------------------------------- */

typedef struct json_line {
  FILE *out;
  int fields;
} json_line;

static void json_key(json_line *j, const char *key) {
  fprintf(j->out, "%s\"%s\":", j->fields++ ? "," : "{", key);
}

static void json_string(json_line *j, const char *key, const char *value) {
  json_key(j, key);
  if (value == NULL) {
    fputs("null", j->out);
    return;
  }
  fputc('"', j->out);
  for (const unsigned char *p = (const unsigned char *)value; *p; ++p) {
    if (*p == '"' || *p == '\\')
      fprintf(j->out, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(j->out, "\\u%04x", *p);
    else
      fputc(*p, j->out);
  }
  fputc('"', j->out);
}

static void json_u64(json_line *j, const char *key, uint64_t value) {
  json_key(j, key);
  fprintf(j->out, "%llu", (unsigned long long)value);
}

/* Negative means "not applicable": null. */
static void json_int_or_null(json_line *j, const char *key, long long value) {
  json_key(j, key);
  if (value < 0)
    fputs("null", j->out);
  else
    fprintf(j->out, "%lld", value);
}

/* NaN and infinities are not JSON: null. */
static void json_double(json_line *j, const char *key, double value) {
  json_key(j, key);
  if (isfinite(value))
    fprintf(j->out, "%.9g", value);
  else
    fputs("null", j->out);
}

static void json_end(json_line *j) { fputs("}\n", j->out); }

static void json_u32_array(json_line *j, const char *key, const uint32_t *values, unsigned count) {
  json_key(j, key);
  fputc('[', j->out);
  for (unsigned i = 0; i < count; ++i) fprintf(j->out, "%s%u", i ? "," : "", values[i]);
  fputc(']', j->out);
}

/* The cuckoo scenarios' fields; null in every other record. */
static void report_json_cuckoo(json_line *j, const bench_record *r) {
  const int cuckoo = r->scenario != NULL;
  const int build = cuckoo && r->build_runs > 0;
  unsigned long long restarts_total = 0;
  for (unsigned i = 0; i < r->build_runs; ++i) restarts_total += r->restarts[i];
  json_string(j, "scenario", r->scenario);
  json_string(j, "variant", r->variant);
  json_int_or_null(j, "hash_functions", r->hash_functions ? (long long)r->hash_functions : -1);
  json_string(j, "hash_family", r->hash_family);
  json_double(j, "table_factor", cuckoo ? r->table_factor : NAN);
  json_double(j, "absent_fraction", cuckoo ? r->absent_fraction : NAN);
  json_double(j, "multiplicity", cuckoo ? r->multiplicity : NAN);
  json_int_or_null(j, "pairs", cuckoo ? (long long)r->pairs : -1);
  json_int_or_null(j, "slots", r->hash_functions ? (long long)r->slots : -1);
  json_int_or_null(j, "eviction_limit", r->hash_functions ? (long long)r->eviction_limit : -1);
  if (build)
    json_u32_array(j, "restarts", r->restarts, r->build_runs);
  else
    json_string(j, "restarts", NULL);
  json_int_or_null(j, "restarts_total", build ? (long long)restarts_total : -1);
  json_int_or_null(j, "grows", build ? (long long)r->grows : -1);
  json_string(j, "skipped", r->skipped);
}

static void report_json(bench_run *run, const bench_record *r) {
  const int is_copy = strcmp(r->unit, "GB/s") == 0; /* bytes, not operations */
  const double fraction = record_fraction(run, r, r->ceiling);
  const double fraction_alt = record_fraction(run, r, r->ceiling_alt);
  char timestamp[32];
  json_line j = {run->json, 0};
  format_utc_now(timestamp, sizeof timestamp);

  json_string(&j, "design", r->design);
  json_string(&j, "backend", run->backend->name);
  json_string(&j, "op", r->op);
  json_u64(&j, "n", r->n);
  json_int_or_null(&j, "key_bits", r->key_bits);
  json_int_or_null(&j, "value_bits", r->value_bits);
  json_double(&j, "load_factor", r->load_factor);
  json_string(&j, "dist", r->dist);
  json_int_or_null(&j, "group_size", r->group_size ? (long long)r->group_size : -1);
  json_u64(&j, "reps", r->stats.reps);
  json_u64(&j, "warmup", run->opts->warmup);
  json_double(&j, "ms_median", r->stats.ms_median);
  json_double(&j, "ms_min", r->stats.ms_min);
  json_double(&j, "ms_max", r->stats.ms_max);
  json_double(&j, "gops", is_copy ? NAN : r->rate);
  json_double(&j, "gbps", is_copy ? r->rate : NAN);
  json_string(&j, "ceiling", r->ceiling >= 0 ? bench_limit_names[r->ceiling] : NULL);
  json_double(&j, "ceiling_value",
              r->ceiling >= 0 && run->ceilings.measured ? run->ceilings.value[r->ceiling] : NAN);
  json_double(&j, "fraction", fraction);
  json_string(&j, "ceiling_alt", r->ceiling_alt >= 0 ? bench_limit_names[r->ceiling_alt] : NULL);
  json_double(
      &j, "ceiling_alt_value",
      r->ceiling_alt >= 0 && run->ceilings.measured ? run->ceilings.value[r->ceiling_alt] : NAN);
  json_double(&j, "fraction_alt", fraction_alt);
  json_u64(&j, "distinct", r->distinct);
  json_u64(&j, "capacity", r->capacity);
  json_u64(&j, "stored", r->stored);
  /* Cuckoo tables: entries per slot (their capacity counts keys, not slots). */
  json_double(&j, "achieved_load",
              r->slots      ? (double)r->stored / (double)r->slots
              : r->capacity ? (double)r->stored / (double)r->capacity
                            : NAN);
  json_u64(&j, "failed", r->failed);
  json_u64(&j, "full_runs", r->full_runs);
  json_u64(&j, "table_bytes", r->table_bytes);
  json_string(&j, "policy", r->policy);
  report_json_cuckoo(&j, r);
  json_u64(&j, "seed", run->opts->seed);
  json_string(&j, "mode", run->opts->mode_name);
  json_string(&j, "gpu", run->backend->gh_kind == GH_BACKEND_CUDA ? run->backend->device : NULL);
  json_string(&j, "commit", run->commit);
  json_string(&j, "run_id", run->run_id);
  json_string(&j, "timestamp", timestamp);
  json_end(&j);
  fflush(run->json);
}

/* ---- The table on stdout ------------------------------------------------------------------ */

#define BENCH_ROW_FORMAT "%-9s %-18s %-6s %3s %5s %6s %10s %10s %-7s %-18s %6s  %s\n"

void bench_report_header(const char *title) {
  printf("\n%s\n", title);
  printf(BENCH_ROW_FORMAT, "design", "op", "dist", "g", "load", "n", "ms_median", "rate", "unit",
         "ceiling", "frac", "notes");
}

/* The cuckoo columns that do not fit the table's: d, table factor, variant, absent fraction,
 * multiplicity, restarts of each timed build, or why the cell was skipped. Returns the length. */
static size_t report_cuckoo_notes(const bench_record *r, char *notes, size_t size) {
  size_t used = 0;
#define CUCKOO_NOTE(...)                                                               \
  do {                                                                                 \
    if (used < size) used += (size_t)snprintf(notes + used, size - used, __VA_ARGS__); \
  } while (0)
  if (r->variant != NULL && strcmp(r->variant, "map") != 0) CUCKOO_NOTE("%s; ", r->variant);
  if (r->hash_functions) CUCKOO_NOTE("d=%u x%.2f; ", r->hash_functions, r->table_factor);
  if (!isnan(r->absent_fraction)) CUCKOO_NOTE("absent %.0f%%; ", 100.0 * r->absent_fraction);
  if (!isnan(r->multiplicity))
    CUCKOO_NOTE("multiplicity %.1f (%llu keys); ", r->multiplicity,
                (unsigned long long)r->distinct);
  if (r->build_runs > 0) {
    CUCKOO_NOTE("restarts");
    for (unsigned i = 0; i < r->build_runs; ++i) CUCKOO_NOTE("%s%u", i ? "," : " ", r->restarts[i]);
    CUCKOO_NOTE("; ");
  }
  if (r->grows) CUCKOO_NOTE("grew %llu times; ", (unsigned long long)r->grows);
  if (r->skipped != NULL) CUCKOO_NOTE("skipped: %s", r->skipped);
#undef CUCKOO_NOTE
  return used < size ? used : size;
}

static void report_row(const bench_run *run, const bench_record *r) {
  char g[16] = "-", load[16] = "-", n[32], ms[32], rate[32], frac[16] = "-", notes[256] = "";
  const double fraction = record_fraction(run, r, r->ceiling);
  const double fraction_alt = record_fraction(run, r, r->ceiling_alt);
  size_t used = 0;
  if (r->group_size) snprintf(g, sizeof g, "%u", r->group_size);
  if (!isnan(r->load_factor)) snprintf(load, sizeof load, "%.2f", r->load_factor);
  snprintf(ms, sizeof ms, "%.3f", r->stats.ms_median);
  snprintf(rate, sizeof rate, r->rate >= 100.0 ? "%.1f" : "%.3f", r->rate);
  if (!isnan(fraction)) snprintf(frac, sizeof frac, "%.3f", fraction);
  if (r->scenario != NULL) used = report_cuckoo_notes(r, notes, sizeof notes);
  if (r->skipped != NULL) {
    snprintf(ms, sizeof ms, "-");
    snprintf(rate, sizeof rate, "-");
  }
  if (!isnan(fraction_alt))
    used += (size_t)snprintf(notes + used, sizeof notes - used, "%.3f of %s; ", fraction_alt,
                             bench_limit_names[r->ceiling_alt]);
  if (r->full_runs && used < sizeof notes)
    used += (size_t)snprintf(notes + used, sizeof notes - used,
                             "TABLE FULL in %u of %u runs: %llu inputs (%llu keys) did not fit; ",
                             r->full_runs, run->opts->warmup + r->stats.reps,
                             (unsigned long long)r->failed,
                             (unsigned long long)(r->distinct - r->stored));
  if (r->stats.reps > 1 && r->skipped == NULL && used < sizeof notes)
    snprintf(notes + used, sizeof notes - used, "spread %.1f%%",
             100.0 * (r->stats.ms_max - r->stats.ms_min) / r->stats.ms_median);
  printf(BENCH_ROW_FORMAT, r->design, r->op, r->dist ? r->dist : "-", g, load,
         bench_format_count(r->n, n, sizeof n), ms, rate, r->unit,
         r->ceiling >= 0 ? bench_limit_names[r->ceiling] : "-", frac, notes);
  fflush(stdout);
}

/* ---- Run ---------------------------------------------------------------------------------- */

int bench_report_begin(bench_run *run, const bench_options *opts, const bench_backend *backend) {
  char started[32];
  const char *commit = getenv("GH_COMMIT");
  memset(run, 0, sizeof *run);
  run->opts = opts;
  run->backend = backend;
  run->json_path = opts->json_path;
  snprintf(run->commit, sizeof run->commit, "%s",
           commit != NULL && commit[0] != '\0' ? commit : GH_GIT_COMMIT);
  format_utc_now(started, sizeof started);
  snprintf(run->run_id, sizeof run->run_id, "%s-%ld", started, (long)getpid());
  run->json = fopen(opts->json_path, "a");
  if (run->json == NULL)
    return bench_error("cannot open --json file '%s' for appending", opts->json_path);
  return 0;
}

int bench_report_add(bench_run *run, const bench_record *record) {
  if (run->record_count == run->record_capacity) {
    size_t capacity = run->record_capacity ? 2 * run->record_capacity : 64;
    bench_record *grown = realloc(run->records, capacity * sizeof *grown);
    if (grown == NULL) return bench_error("out of host memory for the results");
    run->records = grown;
    run->record_capacity = capacity;
  }
  run->records[run->record_count++] = *record;
  report_row(run, record);
  report_json(run, record);
  if (ferror(run->json)) return bench_error("writing to '%s' failed", run->json_path);
  return 0;
}

/* The fastest group size for op among unique 32/32-bit keys at the acceptance load and the
 * largest n measured; NULL if there is none. */
static const bench_record *best_record(const bench_run *run, const char *op) {
  const bench_record *best = NULL;
  uint64_t largest_n = 0;
  for (size_t pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < run->record_count; ++i) {
      const bench_record *r = &run->records[i];
      if (strcmp(r->design, "warpdrive") != 0 || strcmp(r->op, op) != 0 || r->dist == NULL ||
          strcmp(r->dist, "unique") != 0 || r->key_bits != 32 || r->value_bits != 32 ||
          fabs(r->load_factor - BENCH_ACCEPT_LOAD) > BENCH_LOAD_EPSILON)
        continue;
      if (pass == 0 && r->n > largest_n) largest_n = r->n;
      if (pass == 1 && r->n == largest_n && (best == NULL || r->rate > best->rate)) best = r;
    }
  }
  return best;
}

static void summary_line(const bench_run *run, const char *label, const char *op, int ceiling,
                         double threshold) {
  const bench_record *best = best_record(run, op);
  char n[32];
  if (best == NULL) {
    printf("  %-12s not measured (needs --ops %s, --dists unique, --loads 0.9, 32/32-bit keys)\n",
           label, op);
    return;
  }
  const double fraction = record_fraction(run, best, ceiling);
  printf("  %-12s best g = %-2u at n = %s: %.3f Gops/s", label, best->group_size,
         bench_format_count(best->n, n, sizeof n), best->rate);
  if (isnan(fraction)) {
    printf("; no ceiling measured (needs a GPU): no verdict\n");
    return;
  }
  printf(" = %.3f x %s (%.3f Gops/s), target >= %.2f: %s\n", fraction, bench_limit_names[ceiling],
         run->ceilings.value[ceiling], threshold, fraction >= threshold ? "PASS" : "MISS");
}

/* Scenario a's record of design and op at n; NULL if there is none. */
static const bench_record *cuckoo_a_record(const bench_run *run, const char *design, const char *op,
                                           uint64_t n) {
  for (size_t i = 0; i < run->record_count; ++i) {
    const bench_record *r = &run->records[i];
    if (r->scenario != NULL && strcmp(r->scenario, "cuckoo-a") == 0 &&
        strcmp(r->design, design) == 0 && strcmp(r->op, op) == 0 && r->n == n && r->skipped == NULL)
      return r;
  }
  return NULL;
}

/* Cuckoo against the sorted array at the largest n of scenario a. */
static void cuckoo_summary(const bench_run *run) {
  uint64_t n = 0;
  char n_text[32];
  for (size_t i = 0; i < run->record_count; ++i) {
    const bench_record *r = &run->records[i];
    if (r->scenario != NULL && strcmp(r->scenario, "cuckoo-a") == 0 && r->n > n) n = r->n;
  }
  printf(
      "\ncuckoo acceptance (information only): d = 4, table 1.25 n, n = %s, present keys,\n"
      "  find vs binary search over the sorted array of the same pairs, target >= %.0fx\n",
      bench_format_count(BENCH_ACCEPT_CUCKOO_N, n_text, sizeof n_text),
      BENCH_ACCEPT_CUCKOO_VS_SORTED);
  const bench_record *find = cuckoo_a_record(run, "cuckoo", "find", n);
  const bench_record *search = cuckoo_a_record(run, "sorted", "find", n);
  const bench_record *build = cuckoo_a_record(run, "cuckoo", "build", n);
  const bench_record *sort = cuckoo_a_record(run, "sorted", "build", n);
  bench_format_count(n, n_text, sizeof n_text);
  if (find == NULL || search == NULL) {
    printf("  find:        not measured (needs --scenario cuckoo-a to complete)\n");
    return;
  }
  const double ratio = find->rate / search->rate;
  printf("  find:        n = %s: cuckoo %.3f Gops/s vs binary search %.3f Gops/s = %.2fx: %s\n",
         n_text, find->rate, search->rate, ratio,
         n != BENCH_ACCEPT_CUCKOO_N               ? "no verdict (the target is at n = 2^27)"
         : ratio >= BENCH_ACCEPT_CUCKOO_VS_SORTED ? "PASS"
                                                  : "MISS");
  if (build != NULL && sort != NULL)
    printf(
        "  build:       n = %s: cuckoo %.3f Gops/s vs sort %.3f Gops/s = %.2fx (no "
        "target)\n",
        n_text, build->rate, sort->rate, build->rate / sort->rate);
}

void bench_report_summary(const bench_run *run) {
  if (run->opts->scenarios & BENCH_SCENARIO_WARPDRIVE) {
    printf("\nacceptance (information only): unique 32/32-bit keys, load %.2f, largest n\n",
           BENCH_ACCEPT_LOAD);
    summary_line(run, "insert:", bench_op_names[BENCH_OP_INSERT], BCU_LIMIT_CAS64,
                 BENCH_ACCEPT_INSERT_VS_CAS);
    summary_line(run, "find:", bench_op_names[BENCH_OP_FIND], BCU_LIMIT_SECTOR_READ,
                 BENCH_ACCEPT_FIND_VS_SECTOR);
  }
  if (run->opts->scenarios & BENCH_SCENARIO_CUCKOO_A) cuckoo_summary(run);
}

void bench_report_end(bench_run *run) {
  if (run->json != NULL) fclose(run->json);
  free(run->records);
  run->json = NULL;
  run->records = NULL;
}
