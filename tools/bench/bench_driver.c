/* bench_driver.c - gpuhash-bench's one driver: per scenario the product of its axes; per state the
 * inputs, the table (shared by the states alike up to AX_ABSENT), the design's steps timed (median
 * after warm-up), a row on stdout and a state of the JSON document, flushed: a cut run keeps it. */
#define _POSIX_C_SOURCE 200809L /* gmtime_r, getpid, sysconf, clock_gettime */

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#define TARGET_COUNT 34 /* the issues' targets the summary reports (TARGETS below) */

#include "gh_commit.h" /* GH_GIT_COMMIT, written at each build (cmake/commit_stamp.cmake) */
#define RESERVE_BYTES ((size_t)256 << 20) /* left free for the CUDA context, the library */
enum { SKIPPED = 2 }; /* a state not measured by design: the rest of its table goes too */

/* A scenario's axes for the mode and the command line: the states are their product. */
typedef struct bench_plan {
  const bench_scenario *sc;
  unsigned naxes, reps, count[AX_COUNT];
  int axis[AX_COUNT];
  double v[AX_COUNT][BENCH_MAX_VALUES];
  size_t states;
} bench_plan;

typedef struct bench_result {
  const bench_scenario *scenario;
  double ax[AX_COUNT]; /* the state; -1 where an axis does not apply */
  unsigned key_bits, value_bits, reps, warmup, full_runs, builds;
  double ms_median, ms_min, ms_max, rate; /* rate: n / median seconds / 1e9 */
  double ratio; /* slab-c's warpdrive: its time over the slab table's */
  const char *skipped, *family; /* family: the cuckoo hash family */
  uint64_t n, pairs; /* operations per run (the copy: bytes moved); pairs inserted */
  uint64_t distinct, capacity, stored, failed, slots, eviction_limit, table_bytes, grows;
  uint32_t restarts[BENCH_MAX_REPS]; /* of each timed build (`builds` of them) */
  double phase_ms[PHASE_COUNT];      /* dynamic: each phase's median over the timed runs */
  const bench_dynamic *dynamic;      /* dynamic: the series of the last run */
  const bench_dynamic *aging;        /* aging: the last run's finds, compaction and series */
} bench_result;

typedef struct bench_run {
  const bench_options *opts;
  const bench_backend *be;
  double ceiling[4]; /* measured in this run; 0: not measured */
  FILE *json;
  unsigned benchmarks, states, broken; /* states: of the benchmark being written */
  size_t count;
  struct bench_best { uint64_t n; double rate, g, d, bucket, base; } best[TARGET_COUNT]; /* for the issues' targets */
  /* --peers: the peers measured on this GPU by bench/peers (config, op, load, G ops/s at n = 2^27) */
  struct peer_figure { char config[40], op[24]; double alpha, gops; } peers[256];
  unsigned peer_count;
  double batches_ms; /* slab-c: the slab table's last */
  /* summary (--summary, make run): each design's build and find rate, for the table at the end */
  struct glance { int design; uint64_t n; double rate[2]; } glance[D_COUNT];
} bench_run;

int bench_error(const char *format, ...) {
  va_list args;
  fflush(stdout); /* keep the order of the table and the error on a shared terminal */
  fprintf(stderr, "gpuhash-bench: error: ");
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fputc('\n', stderr);
  return BENCH_FATAL;
}
int bench_call_failed(const bench_ctx *c, const char *call, gh_status status) {
  if (status == GH_OK) return BENCH_OK;
  bench_error("%s: %.*s returned %s (%s): %s", c->desc, (int)strcspn(call, "("), call,
              gh_status_name(status), gh_status_str(status),
              c->table ? gh_last_error(c->table) : gh_last_create_error());
  return status == GH_ERR_CUDA || status == GH_ERR_NO_DEVICE ? BENCH_FATAL : BENCH_BROKEN;
}
int bench_backend_failed(const bench_ctx *c, int failed, const char *what) {
  return failed ? bench_error("%s: %s: %s", c->desc, what, c->be->error()) : BENCH_OK;
}

/* ---- Axes and states ---------------------------------------------------------------------- */
/* The row that gives an axis its values in this mode: the command line's before bench_rows. */
static const bench_row *row_for(const bench_options *o, const char *sc, int axis, int *given) {
  for (size_t i = 0; i < o->override_count + bench_row_count; ++i) {
    const bench_row *r = (*given = i < o->override_count) ? &o->overrides[i]
                                                          : &bench_rows[i - o->override_count];
    if (r->axis == axis && (r->modes & o->mode) && strcmp(r->scenario, sc) == 0) return r;
  }
  return NULL;
}
static void resolve(const bench_options *o, const bench_scenario *sc, bench_plan *p) {
  const unsigned mode = (unsigned)log2(o->mode); /* where a PER_MODE or SWEEP value is */
  *p = (bench_plan){.sc = sc, .states = 1};
  p->reps = o->reps_given || sc->reps == 0 ? o->reps : sc->reps;
  for (size_t i = 0; i < bench_row_count; ++i) {
    const int id = bench_rows[i].axis;
    unsigned a = 0, k = 0;
    int given = 0;
    while (a < p->naxes && p->axis[a] != id) ++a;
    const bench_row *r = row_for(o, sc->name, id, &given);
    if (strcmp(bench_rows[i].scenario, sc->name) != 0 || a < p->naxes || r == NULL) continue;
    double lo = r->v[r->count == 1 ? 0 : mode], hi = r->count == SWEEP ? r->v[4 + mode] : lo;
    if (id == AX_N && o->n != 0 && !given) /* --n: the value, or where the sweep ends */
      lo = r->count == SWEEP ? fmin(lo, (double)o->n) : (double)o->n, hi = (double)o->n;
    if (r->count > 1 && r->count != PER_MODE) /* a list */
      for (k = 0; k < r->count; ++k) p->v[a][k] = r->v[k];
    else /* one value, or a doubling sweep whose last value is exactly hi */
      for (double x = lo; k == 0 || (p->v[a][k - 1] < hi && k < BENCH_MAX_VALUES); x *= 2)
        p->v[a][k++] = fmin(x, hi);
    p->axis[p->naxes] = id, p->count[p->naxes++] = k, p->states *= k;
  }
}

/* State k of the product, the last axis fastest; then the defaults of the design's other axes. */
static void state_at(const bench_plan *p, size_t k, bench_ctx *c) {
  for (int i = 0; i < AX_COUNT; ++i) c->ax[i] = -1;
  for (unsigned a = p->naxes; a-- > 0; k /= p->count[a])
    c->ax[p->axis[a]] = p->v[a][k % p->count[a]];
  for (int a = 0; a < AX_COUNT; ++a)
    if (c->ax[a] < 0 && (bench_designs[(int)c->ax[AX_DESIGN]].axes & (1u << a)))
      c->ax[a] = isnan(bench_defaults[a]) ? -1 : bench_defaults[a];
  /* The lookup of a multivalue structure returns every value of each key. */
  if (c->ax[AX_OP] == OP_FIND && c->ax[AX_VARIANT] == GH_VARIANT_MULTIVALUE)
    c->ax[AX_OP] = OP_FIND_ALL;
  c->kb = c->opts->key_bits / 8, c->vb = c->opts->value_bits / 8;
  /* Only warpdrive can be a set: the cuckoo maps and the sorted pairs take 0 bits as 32. */
  if (c->vb == 0 && c->ax[AX_DESIGN] != D_WARPDRIVE) c->vb = 4;
  c->n = c->ax[AX_N] > 0 ? (uint64_t)c->ax[AX_N] : 0;
}
/* The text of axis value x ("unique", "2^20", "0.9"), and a state's name: its axes. */
static const char *axis_text(int axis, double x, char *buffer, size_t size) {
  const uint64_t n = (uint64_t)x;
  if (bench_axes[axis].names) snprintf(buffer, size, "%s", bench_axes[axis].names[(int)x]);
  else if (axis == AX_N && n && !(n & (n - 1))) snprintf(buffer, size, "2^%d", (int)log2(x));
  else snprintf(buffer, size, "%.15g", x);
  return buffer;
}
static void describe(const double ax[AX_COUNT], char *out, size_t size) {
  char value[32];
  size_t used = 0;
  out[0] = 0;
  for (int a = 0; a < AX_COUNT && used < size; ++a)
    if (ax[a] >= 0 && (bench_designs[(int)ax[AX_DESIGN]].axes & (1u << a)))
      used += (size_t)snprintf(out + used, size - used, "%s%s=%s", used ? " " : "",
                               bench_axes[a].name, axis_text(a, ax[a], value, sizeof value));
}

/* ---- The table on stdout ------------------------------------------------------------------ */
#define ROW "%-9s %-18s %-6s %3s %5s %6s %10s %10s %-7s %-18s %6s  %s\n"
static const char *name_of(int axis, const double *ax) {
  return ax[axis] >= 0 ? bench_axes[axis].names[(int)ax[axis]] : "-";
}
static const char *limit_name(int c) { return bench_axes[AX_OP].names[OP_LIMIT_COPY + c]; }
/* The ceiling a result is held against (-1: none), and its value (NAN: not measured). */
static int ceiling_of(const bench_result *r, int alt) {
  const bench_op_def *op = &bench_ops[(int)r->ax[AX_OP]];
  return bench_designs[(int)r->ax[AX_DESIGN]].gh ? (alt ? op->ceiling_alt : op->ceiling) : -1;
}
static double ceiling_value(const bench_run *run, int ceiling) {
  return ceiling >= 0 && run->ceiling[ceiling] > 0 ? run->ceiling[ceiling] : NAN;
}
static void print_row(const bench_run *run, const bench_result *r) {
  const double *ax = r->ax;
  const int ceiling = ceiling_of(r, 0), alt = ceiling_of(r, 1);
  const double frac = r->rate / ceiling_value(run, ceiling);
  const double alt_frac = r->rate / ceiling_value(run, alt);
  char g[16] = "-", load[16] = "-", n[32], ms[32] = "-", rate[32] = "-", f[16] = "-";
  char notes[512] = "";
  size_t used = 0;
#define NOTE(...)                                                                               \
  (used += (size_t)snprintf(notes + used, used < sizeof notes ? sizeof notes - used : 0, \
                            __VA_ARGS__))
  if (ax[AX_DESIGN] == D_WARPDRIVE) snprintf(g, sizeof g, "%.0f", ax[AX_G]);
  if ((ax[AX_DESIGN] == D_WARPDRIVE || ax[AX_DESIGN] == D_HASHGRAPH) && ax[AX_LOAD] > 0)
    snprintf(load, sizeof load, "%.2f", ax[AX_LOAD]);
  if (!r->skipped) snprintf(ms, sizeof ms, "%.3f", r->ms_median);
  if (!r->skipped) snprintf(rate, sizeof rate, r->rate >= 100.0 ? "%.1f" : "%.3f", r->rate);
  if (!isnan(frac)) snprintf(f, sizeof f, "%.3f", frac);
  if (ax[AX_VARIANT] > GH_VARIANT_MAP) NOTE("%s; ", name_of(AX_VARIANT, ax));
  if ((ax[AX_DESIGN] == D_WARPDRIVE || ax[AX_DESIGN] == D_CUCKOO) && ax[AX_PATH] == PATH_ORDINARY)
    NOTE("ordinary calls; ");
  if (ax[AX_DESIGN] == D_WARPDRIVE && ax[AX_COMPACT] == COMPACT_IN_PLACE) NOTE("gh_compact in place; ");
  for (int a = 0; a < AX_COUNT; ++a)
    if (ax[a] >= 0 && bench_axes[a].note && (bench_designs[(int)ax[0]].axes & (1u << a)) &&
        !(a == AX_BUCKET && ax[a] == 1)) /* (the chapter's layout says nothing) */
      NOTE(bench_axes[a].note, ax[a]);
  if (ax[AX_DESIGN] == D_SLAB && r->slots && !r->dynamic) NOTE("%.3f used; ", (double)r->stored / r->slots);
  if (!isnan(r->ratio)) NOTE("rebuilt: %.2fx the slab table's time; ", r->ratio);
  if (ax[AX_OP] == OP_ALLOC) NOTE("allocated by %llu inserts; ", (unsigned long long)r->pairs);
  if (r->dynamic && !r->skipped)
    NOTE("ms insert %.1f find %.1f erase %.1f resize %.1f (%.1f%%); theta >= %.3f where "
         "possible; peak %.1f MiB; ", r->phase_ms[PHASE_INSERT], r->phase_ms[PHASE_FIND],
         r->phase_ms[PHASE_ERASE], r->phase_ms[PHASE_RESIZE],
         100.0 * r->phase_ms[PHASE_RESIZE] / r->ms_median, r->dynamic->theta_min,
         r->dynamic->peak_bytes / 1048576.0);
  if (r->aging && !r->skipped) {
    const bench_dynamic *a = r->aging;
    const double resident = (double)r->pairs / 2, fresh = resident / a->fresh_find_ms * 1e-6;
    NOTE("slices: insert %.2f, erase %.2f, find %.2f G/s; finds of the %.0f resident keys: fresh %.2f G/s, "
         "aged %.2f (%.3f of fresh), after gh_compact %.2f (%.3f), gh_compact %.1f ms; tombstones %.0f after the "
         "last slice; %llu compactions during the slices (%.1f ms); ", r->n / 3.0 / r->phase_ms[PHASE_INSERT] * 1e-6, r->n / 3.0 / r->phase_ms[PHASE_ERASE] * 1e-6,
         r->n / 3.0 / r->phase_ms[PHASE_FIND] * 1e-6, resident, fresh, resident / a->aged_find_ms * 1e-6,
         a->fresh_find_ms / a->aged_find_ms, resident / a->compacted_find_ms * 1e-6,
         a->fresh_find_ms / a->compacted_find_ms, a->compact_ms, a->points ? a->tombstones[a->points - 1] : 0.0,
         (unsigned long long)a->compactions, r->phase_ms[PHASE_RESIZE]);
  }
  if (ax[AX_MULT] >= 0)
    NOTE("multiplicity %.1f (%llu keys); ", (double)r->pairs / (double)r->distinct,
         (unsigned long long)r->distinct);
  for (unsigned i = 0; i < r->builds; ++i)
    NOTE("%s%u%s", i ? "," : "restarts ", r->restarts[i], i + 1 == r->builds ? "; " : "");
  if (r->grows) NOTE("grew %llu times; ", (unsigned long long)r->grows);
  if (r->skipped) NOTE("skipped: %s", r->skipped);
  if (!isnan(alt_frac)) NOTE("%.3f of %s; ", alt_frac, limit_name(alt));
  if (r->full_runs)
    NOTE("TABLE FULL in %u of %u runs: %llu inputs (%llu keys) did not fit; ", r->full_runs,
         r->warmup + r->reps, (unsigned long long)r->failed,
         (unsigned long long)(r->distinct - r->stored));
  if (r->reps > 1 && !r->skipped)
    NOTE("spread %.1f%%", 100.0 * (r->ms_max - r->ms_min) / r->ms_median);
  printf(ROW, name_of(AX_DESIGN, ax), name_of(AX_OP, ax), name_of(AX_DIST, ax), g, load,
         axis_text(AX_N, (double)r->n, n, sizeof n), ms, rate,
         ax[AX_OP] == OP_LIMIT_COPY ? "GB/s" : ax[AX_OP] == OP_ALLOC ? "Gslab/s" : "Gops/s",
         ceiling >= 0 ? limit_name(ceiling) : "-", f, notes);
  fflush(stdout);
}

/* ---- The JSON document, in nvbench's shape (bench/README.md, Output) ---------------------- */
static void jstr(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; ++p)
    fprintf(f, *p == '"' || *p == '\\' ? "\\%c" : *p < 0x20 ? "\\u%04x" : "%c", *p);
  fputc('"', f);
}
/* A named value of type 's' (s), 'i' or 'f' (x, null unless finite), 'l' or 'L' (a list of
 * integers or reals, in s), 0 (none). */
typedef struct nv { const char *name; char type; double x; const char *s; } nv;
static const char *type_name(char type) {
  return type == 's'   ? "string"
         : type == 'i' ? "int64"
         : type == 'l' ? "int64[]"
         : type == 'L' ? "float64[]"
                       : "float64";
}
static void jvalue(FILE *f, nv v) {
  if (v.type == 's') jstr(f, v.s);
  if (v.type == 'l' || v.type == 'L') fputs(v.s, f);
  if (v.type != 's' && v.type != 'l' && v.type != 'L') fprintf(f, isfinite(v.x) ? "%.9g" : "null", v.x);
}
static void jnamed(FILE *f, const nv *v, size_t count) { /* [{"name", "type", "value"}, ...] */
  for (const char *sep = "["; count-- > 0 || (fputs(*sep == '[' ? "[]" : "]", f), 0); ++v) {
    if (!v->type) continue;
    fprintf(f, "%s{\"name\":\"%s\",\"type\":\"%s\",\"value\":", sep, v->name, type_name(v->type));
    jvalue(f, *v);
    fputc('}', f);
    sep = ",";
  }
}
static nv axis_value(int axis, double x) {
  const bench_axis_def *d = &bench_axes[axis];
  return (nv){d->name, d->type, x, d->names ? d->names[(int)x] : NULL};
}

/* A JSON list of count reals with `decimals` decimals. */
static void series(char *out, const double *x, unsigned count, int decimals) {
  char *at = out;
  *at++ = '[';
  for (unsigned i = 0; i < count; ++i) {
    if (i) *at++ = ',';
    at += isfinite(x[i]) ? sprintf(at, "%.*f", decimals, x[i]) : sprintf(at, "null");
  }
  strcpy(at, "]");
}

/* One state: its name, axis values, and summaries (the times in seconds, as nvbench's). */
#define NV(name, type, format) "{\"name\":\"" name "\",\"type\":\"" type "\",\"value\":" format "}"
static void json_state(bench_run *run, const bench_result *r) {
  static const char *const POLICY[] = {"keep_first", "overwrite", "add", "min", "max", "append"};
  static const char *const STAT[] = {"median", "min", "max"};
  FILE *f = run->json;
  const bench_design_def *def = &bench_designs[(int)r->ax[AX_DESIGN]];
  const int op = (int)r->ax[AX_OP], insert = bench_ops[op].ceiling_alt == 3;
  const char gh = def->gh ? 'i' : 0, table = op < OP_LIMIT_COPY ? 'i' : 0;
  const char built = r->builds ? 'i' : 0;
  const double ms[] = {r->ms_median, r->ms_min, r->ms_max};
  char name[256], restarts[BENCH_MAX_REPS * 11 + 2] = "[";
  static char theta[BENCH_MAX_SERIES * 12 + 3], bytes[BENCH_MAX_SERIES * 16 + 3];
  static char finds[BENCH_MAX_SERIES * 12 + 3], tombs[BENCH_MAX_SERIES * 16 + 3];
  const bench_dynamic *d = r->skipped ? NULL : r->dynamic, *ag = r->skipped ? NULL : r->aging;
  const char dyn = d ? 'f' : 0, aged = ag ? 'f' : 0;
  unsigned long long total = 0;
  series(theta, d ? d->theta : NULL, d ? d->points : 0, 4);
  series(bytes, d ? d->bytes : NULL, d ? d->points : 0, 0);
  series(finds, ag ? ag->find_rate : NULL, ag ? ag->points : 0, 3);
  series(tombs, ag ? ag->tombstones : NULL, ag ? ag->points : 0, 0);
  nv axes[AX_COUNT] = {{0}};
  describe(r->ax, name, sizeof name);
  fprintf(f, "%s\n{\"name\":\"%s\",\"device\":0,\"axis_values\":", run->states++ ? "," : "", name);
  for (int a = 0; a < AX_COUNT; ++a)
    if (r->ax[a] >= 0 && (def->axes & (1u << a))) axes[a] = axis_value(a, r->ax[a]);
  jnamed(f, axes, AX_COUNT);
  fputs(",\"summaries\":[", f);
  for (int i = 0; i < 3 && !r->skipped; ++i)
    fprintf(f, "{\"tag\":\"nv/cold/time/%s/%s\",\"name\":\"%s\",\"hint\":\"duration\",\"data\":["
            NV("value", "float64", "%.9g") "]},", run->be->stream ? "gpu" : "cpu", STAT[i],
            STAT[i], ms[i] * 1e-3);
  if (!r->skipped)
    fprintf(f, "{\"tag\":\"nv/cold/sample_size\",\"name\":\"samples\",\"data\":["
            NV("value", "int64", "%u") "," NV("warmup", "int64", "%u") "]},{\"tag\":\"nv/cold/"
            "bw/%s\",\"name\":\"rate\",\"data\":[" NV("value", "float64", "%.9g") ","
            NV("giga", "float64", "%.9g") "]},", r->reps, r->warmup,
            op == OP_LIMIT_COPY ? "global/bytes_per_second" : "item_rate", r->rate * 1e9, r->rate);
  for (int alt = 0, c; alt < 2 && !r->skipped && (c = ceiling_of(r, alt)) >= 0; ++alt) {
    const nv v[] = {{"name", 's', 0, limit_name(c)}, {"value", 'f', ceiling_value(run, c), NULL},
                    {"fraction", 'f', r->rate / ceiling_value(run, c), NULL}};
    fprintf(f, "{\"tag\":\"gh/ceiling%s\",\"name\":\"ceiling\",\"data\":", alt ? "_alt" : "");
    jnamed(f, v, 3);
    fputs("},", f);
  }
  for (unsigned i = 0; i < r->builds; ++i) {
    total += r->restarts[i];
    snprintf(strchr(restarts, 0), 12, "%u%s", r->restarts[i], i + 1 < r->builds ? "," : "]");
  }
  const nv facts[] = { /* a type 0 leaves a fact out */
      {"key_bits", table, r->key_bits, 0}, {"value_bits", table, r->value_bits, 0},
      {"pairs", table, r->pairs, 0}, {"distinct", table, r->distinct, 0},
      {"capacity", gh, r->capacity, 0}, {"slots", gh, r->slots, 0}, {"stored", table, r->stored, 0},
      {"achieved_load", gh ? 'f' : 0, (double)r->stored / r->slots, 0},
      {"failed", gh, r->failed, 0}, {"full_runs", gh, r->full_runs, 0},
      {"table_bytes", 'i', r->table_bytes, 0},
      {"eviction_limit", def->fresh_per_insert ? 'i' : 0, r->eviction_limit, 0},
      {"hash_family", def->fresh_per_insert ? 's' : 0, 0, r->family},
      {"policy", gh && insert ? 's' : 0, 0,
       POLICY[r->ax[AX_VARIANT] == GH_VARIANT_MULTIVALUE ? GH_APPEND : def->policy]},
      {"restarts", built ? 'l' : 0, 0, restarts}, {"restarts_total", built, total, 0},
      {"grows", built, r->grows, 0}, {"slabs_allocated", op == OP_ALLOC ? 'i' : 0, r->n, 0},
      {"time_over_slab", isnan(r->ratio) ? 0 : 'f', r->ratio, 0},
      {"insert_ms", dyn, r->phase_ms[PHASE_INSERT], 0}, {"find_ms", dyn, r->phase_ms[PHASE_FIND], 0},
      {"erase_ms", dyn, r->phase_ms[PHASE_ERASE], 0}, {"resize_ms", dyn, r->phase_ms[PHASE_RESIZE], 0},
      {"resize_fraction", dyn, r->phase_ms[PHASE_RESIZE] / r->ms_median, 0},
      {"batches", dyn ? 'i' : 0, d ? (double)d->batches : 0, 0},
      {"theta_min_where_possible", dyn, d ? d->theta_min : 0, 0},
      {"peak_bytes", dyn ? 'i' : 0, d ? d->peak_bytes : 0, 0},
      {"series_every_batches", dyn ? 'i' : 0, d ? (double)d->stride : 0, 0},
      {"theta_per_batch", dyn ? 'L' : 0, 0, theta}, {"bytes_per_batch", dyn ? 'L' : 0, 0, bytes},
      {"slice_insert_ms", aged, r->phase_ms[PHASE_INSERT], 0}, {"slice_erase_ms", aged, r->phase_ms[PHASE_ERASE], 0},
      {"slice_find_ms", aged, r->phase_ms[PHASE_FIND], 0}, {"slices", aged ? 'i' : 0, ag ? (double)ag->batches : 0, 0},
      {"fresh_find_ms", aged, ag ? ag->fresh_find_ms : 0, 0}, {"aged_find_ms", aged, ag ? ag->aged_find_ms : 0, 0},
      {"compacted_find_ms", aged, ag ? ag->compacted_find_ms : 0, 0}, {"compact_ms", aged, ag ? ag->compact_ms : 0, 0},
      {"compactions", aged ? 'i' : 0, ag ? (double)ag->compactions : 0, 0},
      {"compactions_ms", aged, r->phase_ms[PHASE_RESIZE], 0},
      {"series_every_slices", aged ? 'i' : 0, ag ? (double)ag->stride : 0, 0},
      {"find_gops_per_slice", aged ? 'L' : 0, 0, finds}, {"tombstones_per_slice", aged ? 'L' : 0, 0, tombs}};
  fputs("{\"tag\":\"gh/table\",\"name\":\"table\",\"data\":", f);
  jnamed(f, facts, sizeof facts / sizeof facts[0]);
  fprintf(f, "}],\"is_skipped\":%s", r->skipped ? "true,\"skip_reason\":" : "false");
  if (r->skipped) jstr(f, r->skipped);
  fputc('}', f);
  fflush(f);
}

/* A benchmark: its title and the table's header on stdout; its name and axes in the JSON. */
static int report_benchmark(bench_run *run, const bench_plan *p) {
  FILE *f = run->json;
  char text[32];
  printf("\n%s\n  on the %s backend (%s): %u-bit keys, %u-bit values, median of %u after %u "
         "warm-up\n" ROW, p->sc->title, run->be->name, run->be->device, run->opts->key_bits,
         run->opts->value_bits, p->reps, run->opts->warmup, "design", "op", "dist", "g", "load",
         "n", "ms_median", "rate", "unit", "ceiling", "frac", "notes");
  fprintf(f, "%s\n{\"name\":\"%s\",\"index\":%u,\"axes\":[", run->benchmarks ? "]}," : "",
          p->sc->name, run->benchmarks);
  run->benchmarks++, run->states = 0;
  for (unsigned a = 0; a < p->naxes; ++a) {
    const nv axis = axis_value(p->axis[a], 0);
    fprintf(f, "%s{\"name\":\"%s\",\"type\":\"%s\",\"flags\":\"\",\"values\":[", a ? "," : "",
            axis.name, type_name(axis.type));
    for (unsigned k = 0; k < p->count[a]; ++k) {
      fprintf(f, "%s{\"input_string\":\"%s\",\"description\":\"\",\"value\":", k ? "," : "",
              axis_text(p->axis[a], p->v[a][k], text, sizeof text)); /* plain text: no escapes */
      jvalue(f, axis_value(p->axis[a], p->v[a][k]));
      fputc('}', f);
    }
    fputs("]}", f);
  }
  fputs("],\"states\":[", f);
  return ferror(f) ? bench_error("writing to '%s' failed", run->opts->json_path) : 0;
}

/* The issues' targets (information only): the best rate of a design and op at the largest n
 * (among the states with axis = at; warpdrive: unique 32/32-bit keys, the best g) over a ceiling,
 * over the state with base_axis = base_at at that n, over a peer library's figure (peer, in Gops/s,
 * measured on an H200 at n = 2^27 and quoted by issue #15: compare on an H200), or in Gops/s. */
#define PEER_TARGET 1.15 /* issue #15: gpuhash's best >= 1.15x the best peer's figure */
static const struct target {
  const char *scenario, *label;
  int design, op, ceiling, axis, base_axis;
  double at, base_at, least, at_n;
  double peer;
  const char *peer_name;
} TARGETS[TARGET_COUNT] = {
    {"warpdrive", "warpdrive insert", D_WARPDRIVE, OP_INSERT, 2, AX_LOAD, -1, 0.9, 0, 0.65, 0, 0, NULL},
    {"warpdrive", "warpdrive find", D_WARPDRIVE, OP_FIND, 1, AX_LOAD, -1, 0.9, 0, 0.35, 0, 0, NULL},
    {"cuckoo-a", "cuckoo find", D_CUCKOO, OP_FIND, -1, -1, AX_DESIGN, 0, D_SORTED, 3.0, 0x1p27, 0, NULL},
    {"cuckoo-a", "cuckoo build", D_CUCKOO, OP_BUILD, -1, -1, AX_DESIGN, 0, D_SORTED, 0, 0, 0, NULL},
    {"slab-b", "slab build", D_SLAB, OP_BUILD, -1, -1, -1, 0, 0, 11.0, 0x1p27, 0, NULL},
    {"slab-b", "slab find", D_SLAB, OP_FIND, -1, -1, -1, 0, 0, 19.0, 0x1p27, 0, NULL},
    {"slab-c", "slab batches 32k", D_SLAB, OP_BATCHES, -1, AX_BATCH, AX_DESIGN, 32768, D_WARPDRIVE,
     5.0, 0, 0, NULL},
    {"slab-growth", "slab grown", D_SLAB, OP_BUILD, -1, AX_START, AX_START, 16, 0, 0.7, 0x1p27, 0, NULL},
    {"slab-growth", "slab grown in batches", D_SLAB, OP_BATCHES, -1, AX_START, AX_START, 16, 0, 0.7, 0x1p27, 0, NULL},
    {"dycuckoo-a", "dycuckoo insert", D_DYCUCKOO, OP_BUILD, -1, AX_D, -1, 4, 0, 8.0, 0x1p27, 0, NULL},
    {"dycuckoo-a", "dycuckoo find", D_DYCUCKOO, OP_FIND, -1, AX_D, -1, 4, 0, 14.0, 0x1p27, 0, NULL},
    {"dycuckoo-c", "dycuckoo dynamic", D_DYCUCKOO, OP_DYNAMIC, -1, AX_DELETES, -1, 40, 0, 5.2, 0, 0, NULL},
    {"dycuckoo-c", "dynamic vs wd", D_DYCUCKOO, OP_DYNAMIC, -1, AX_DELETES, AX_DESIGN, 40,
     D_WARPDRIVE, 3.0, 0, 0, NULL},
    {"hashgraph-a", "hashgraph build vs sort", D_HASHGRAPH, OP_BUILD, -1, AX_LOAD, AX_DESIGN, 1, D_SORTED, 1.0, 0x1p27, 0, NULL},
    {"hashgraph-a", "hashgraph probe first", D_HASHGRAPH, OP_FIND_FIRST, -1, AX_LOAD, -1, 1, 0, 15.0, 0x1p27, 0, NULL},
    {"hashgraph-a", "hashgraph probe all", D_HASHGRAPH, OP_FIND_ALL, -1, AX_LOAD, -1, 1, 0, 15.0, 0x1p27, 0, NULL},
    {"hashgraph-e", "join 1% vs merge", D_HASHGRAPH, OP_JOIN, -1, AX_ABSENT, AX_DESIGN, 99, D_SORTED, 1.0, 0x1p26, 0, NULL},
    {"hashgraph-e", "join 50% vs merge", D_HASHGRAPH, OP_JOIN, -1, AX_ABSENT, AX_DESIGN, 50, D_SORTED, 1.0, 0x1p26, 0, NULL},
    {"hashgraph-e", "join 100% vs merge", D_HASHGRAPH, OP_JOIN, -1, AX_ABSENT, AX_DESIGN, 0, D_SORTED, 1.0, 0x1p26, 0, NULL},
    /* Issue #15's table: the best peer figure of each row (cuCollections at dc0f9fc, BGHT at
     * 7584547), and the cuckoo build's own target. */
    {"warpdrive", "insert 0.50 vs peer", D_WARPDRIVE, OP_INSERT, -1, AX_LOAD, -1, 0.5, 0, PEER_TARGET, 0x1p27, 13.6, "cuco insert_async"},
    {"warpdrive", "insert 0.80 vs peer", D_WARPDRIVE, OP_INSERT, -1, AX_LOAD, -1, 0.8, 0, PEER_TARGET, 0x1p27, 12.3, "cuco insert_async"},
    {"warpdrive", "insert 0.90 vs peer", D_WARPDRIVE, OP_INSERT, -1, AX_LOAD, -1, 0.9, 0, PEER_TARGET, 0x1p27, 10.9, "cuco insert_async"},
    {"warpdrive", "insert 0.95 vs peer", D_WARPDRIVE, OP_INSERT, -1, AX_LOAD, -1, 0.95, 0, PEER_TARGET, 0x1p27, 9.8, "cuco insert_async"},
    {"warpdrive", "find 0.80 vs peer", D_WARPDRIVE, OP_FIND, -1, AX_LOAD, -1, 0.8, 0, PEER_TARGET, 0x1p27, 17.7, "cuco dh cg4"},
    {"warpdrive", "find 0.90 vs peer", D_WARPDRIVE, OP_FIND, -1, AX_LOAD, -1, 0.9, 0, PEER_TARGET, 0x1p27, 14.8, "cuco dh cg4"},
    {"warpdrive", "find 0.95 vs peer", D_WARPDRIVE, OP_FIND, -1, AX_LOAD, -1, 0.95, 0, PEER_TARGET, 0x1p27, 12.4, "cuco dh cg4"},
    {"warpdrive", "absent 0.50 vs peer", D_WARPDRIVE, OP_FIND_ABSENT, -1, AX_LOAD, -1, 0.5, 0, PEER_TARGET, 0x1p27, 31.2, "cuco lp cg1"},
    {"warpdrive", "absent 0.95 vs peer", D_WARPDRIVE, OP_FIND_ABSENT, -1, AX_LOAD, -1, 0.95, 0, PEER_TARGET, 0x1p27, 6.3, "BGHT bcht"},
    {"warpdrive", "erase 0.90 vs peer", D_WARPDRIVE, OP_ERASE, -1, AX_LOAD, -1, 0.9, 0, PEER_TARGET, 0x1p27, 11.2, "cuco dh cg4"},
    /* (the best insert of a whole batch at load 0.9: the bulk insert where the table takes it) */
    {"warpdrive", "build 0.90", D_WARPDRIVE, OP_INSERT, -1, AX_LOAD, -1, 0.9, 0, 20.0, 0x1p27, 0, NULL},
    /* The bucketed cuckoo table's rows (cuckoo-e, the best d and bucket): its own targets, and
     * BGHT's bucketed cuckoo for absent keys at load 0.95. */
    {"cuckoo-e", "cuckoo build 0.8", D_CUCKOO, OP_BUILD, -1, AX_FACTOR, -1, 1.0 / 0.8, 0, 10.0, 0x1p27, 0, NULL},
    {"cuckoo-e", "cuckoo build 0.95", D_CUCKOO, OP_BUILD, -1, AX_FACTOR, -1, 1.0 / 0.95, 0, 7.0, 0x1p27, 0, NULL},
    {"cuckoo-e", "cuckoo find 0.9", D_CUCKOO, OP_FIND, -1, AX_FACTOR, -1, 1.0 / 0.9, 0, 16.0, 0x1p27, 0, NULL},
    {"cuckoo-e", "cuckoo absent 0.95 vs peer", D_CUCKOO, OP_FIND_ABSENT, -1, AX_FACTOR, -1, 1.0 / 0.95, 0,
     PEER_TARGET, 0x1p27, 6.3, "BGHT bcht"}};
static void track(bench_run *run, const bench_result *r) {
  for (int i = 0; i < TARGET_COUNT; ++i) {
    const struct target *t = &TARGETS[i];
    struct bench_best *b = &run->best[i];
    if (r->skipped || strcmp(r->scenario->name, t->scenario) || r->ax[AX_OP] != t->op ||
        (t->axis >= 0 && t->axis != t->base_axis && fabs(r->ax[t->axis] - t->at) > 1e-9) ||
        (t->design == D_WARPDRIVE &&
         (r->ax[AX_DIST] != DIST_UNIQUE || r->key_bits != 32 || r->value_bits != 32)))
      continue;
    if (t->base_axis >= 0 && r->ax[t->base_axis] == t->base_at && r->n == b->n) b->base = r->rate;
    if (r->ax[AX_DESIGN] != t->design || (t->axis >= 0 && r->ax[t->axis] != t->at) ||
        r->n < b->n || (r->n == b->n && r->rate <= b->rate))
      continue;
    b->base = r->n > b->n ? NAN : b->base;
    b->n = r->n, b->rate = r->rate, b->g = r->ax[AX_G], b->d = r->ax[AX_D], b->bucket = r->ax[AX_BUCKET];
  }
}
/* The figure --peers gives for a row (this GPU, n = 2^27), or NAN: its peer's configuration in
 * bench/peers' lines, and the op's name there. */
static double same_gpu_peer(const bench_run *run, const struct target *t) {
  static const char *const PEER_CONFIGS[][2] = {{"cuco insert_async", "double_hashing_cg4"},
                                                {"cuco dh cg4", "double_hashing_cg4"},
                                                {"cuco lp cg1", "linear_probing_cg1"},
                                                {"BGHT bcht", "B16_3hash"}};
  const char *config = NULL;
  const char *op = t->op == OP_INSERT ? "insert" : t->op == OP_FIND ? "find_present"
                   : t->op == OP_FIND_ABSENT ? "find_absent" : "erase";
  for (size_t k = 0; t->peer_name && k < sizeof PEER_CONFIGS / sizeof PEER_CONFIGS[0]; ++k)
    if (!strcmp(t->peer_name, PEER_CONFIGS[k][0])) config = PEER_CONFIGS[k][1];
  for (unsigned i = 0; config && i < run->peer_count; ++i)
    if (!strcmp(run->peers[i].config, config) && !strcmp(run->peers[i].op, op) &&
        fabs(run->peers[i].alpha - t->at) < 1e-6)
      return run->peers[i].gops;
  return NAN;
}
/* Reads --peers: JSON lines of bench/peers (one measurement a line); only lines measured on this
 * GPU at n = 2^27 count. Returns 0, or 1 with the error printed. */
static int load_peers(bench_run *run, const char *path) {
  char line[1024], gpu[128];
  FILE *f = fopen(path, "r");
  if (f == NULL) return bench_error("--peers: cannot open '%s'", path), 1;
  while (fgets(line, sizeof line, f) && run->peer_count < sizeof run->peers / sizeof run->peers[0]) {
    struct peer_figure *p = &run->peers[run->peer_count];
    const char *config = strstr(line, "\"config\":\""), *op = strstr(line, "\"op\":\"");
    const char *alpha = strstr(line, "\"alpha\":"), *gops = strstr(line, "\"gops\":");
    const char *n = strstr(line, "\"n\":"), *at = strstr(line, "\"gpu\":\"");
    if (!config || !op || !alpha || !gops || !n || !at || sscanf(config + 10, "%39[^\"]", p->config) != 1 ||
        sscanf(op + 6, "%23[^\"]", p->op) != 1 || sscanf(alpha + 8, "%lf", &p->alpha) != 1 ||
        sscanf(gops + 7, "%lf", &p->gops) != 1 || sscanf(at + 7, "%127[^\"]", gpu) != 1)
      continue;
    if (strtod(n + 4, NULL) == 0x1p27 && !strcmp(run->be->device, gpu)) ++run->peer_count;
  }
  fclose(f);
  printf("--peers %s: %u measurements on this GPU (%s) at n = 2^27\n", path, run->peer_count, run->be->device);
  return 0;
}
static void summary(const bench_run *run) {
  char n_text[32], g[32], base_text[64];
  printf("\nacceptance (information only; warpdrive: unique 32/32-bit keys at load 0.90, the best"
         " g;\n  cuckoo: d = 4, table 1.25 n, vs binary search over the sorted pairs; slab: 0.7 "
         "slabs per bucket,\n  vs warpdrive rebuilt per batch, vs a table sized for n)\n");
  for (int i = 0; i < TARGET_COUNT; ++i) {
    const struct target *t = &TARGETS[i];
    const struct bench_best *b = &run->best[i];
    const int absolute = t->ceiling < 0 && t->base_axis < 0 && t->peer == 0;
    /* (The peers' figures are GPU figures: no ratio on the host backend. With --peers, the peer
     * measured on this GPU replaces the H200 figure.) */
    const double same = same_gpu_peer(run, t);
    const double peer = run->be->kind != GH_BACKEND_CUDA ? NAN : isnan(same) ? t->peer : same;
    const double base = absolute ? 1 : t->peer > 0 ? peer : t->ceiling >= 0 ? ceiling_value(run, t->ceiling) : b->base;
    if (b->n == 0) continue;
    /* (the best row's parameters where the target takes the best of several) */
    if (t->design == D_WARPDRIVE) snprintf(g, sizeof g, " g = %.0f", b->g);
    else if (!strcmp(t->scenario, "cuckoo-e")) snprintf(g, sizeof g, " d = %.0f, b = %.0f", b->d, b->bucket);
    else g[0] = '\0';
    printf("  %-16s%s at n = %s: %.3f Gops/s", t->label, g,
           axis_text(AX_N, (double)b->n, n_text, sizeof n_text), b->rate);
    if (t->base_axis >= 0)
      snprintf(base_text, sizeof base_text, "%s%s%s %s", bench_axes[t->base_axis].names ? ""
               : bench_axes[t->base_axis].name, bench_axes[t->base_axis].names ? "" : "=",
               axis_text(t->base_axis, t->base_at, n_text, sizeof n_text),
               bench_axes[AX_OP].names[t->op]);
    if (!isnan(base) && !absolute)
      printf(" = %.3f x %s (%.3f Gops/s%s)", b->rate / base,
             t->peer > 0 ? t->peer_name : t->ceiling >= 0 ? limit_name(t->ceiling) : base_text, base,
             t->peer == 0 ? "" : isnan(same) ? ", H200" : ", this GPU, --peers");
    if (isnan(base) || !t->least || (t->at_n && (double)b->n != t->at_n))
      printf(", %s%s%s\n", isnan(base) ? t->peer > 0 ? "a peer's GPU figure (on the host backend): no verdict"
                                   : t->ceiling < 0 ? "no baseline at this n: no verdict"
                                                    : "no ceiling (it needs a GPU): no verdict"
                           : !t->least ? "no target"
                           : "no verdict (the target is at n = ",
             isnan(base) || !t->least ? "" : axis_text(AX_N, t->at_n, n_text, sizeof n_text),
             isnan(base) || !t->least ? "" : ")");
    else
      printf(", target >= %.2f%s: %s\n", t->least, absolute ? " Gops/s" : "",
             b->rate / base >= t->least ? "PASS" : "MISS");
  }
}
static int report_state(bench_run *run, bench_result *r) {
  ++run->count;
  if (r->ax[AX_OP] == OP_BATCHES && r->ax[AX_DESIGN] == D_SLAB) run->batches_ms = r->ms_median;
  else if (r->ax[AX_OP] == OP_BATCHES) r->ratio = r->ms_median / run->batches_ms;
  if (r->ax[AX_DESIGN] == D_LIMITS) run->ceiling[(int)r->ax[AX_OP] - OP_LIMIT_COPY] = r->rate;
  track(run, r);
  if (!strcmp(r->scenario->name, "summary") && !r->skipped) {
    struct glance *g = &run->glance[(int)r->ax[AX_DESIGN]];
    g->design = (int)r->ax[AX_DESIGN];
    g->n = r->n;
    g->rate[r->ax[AX_OP] == OP_FIND] = r->rate;
  }
  print_row(run, r);
  json_state(run, r);
  return ferror(run->json) ? bench_error("writing to '%s' failed", run->opts->json_path) : 0;
}

/* ---- Buffers: planned over the scenario's states, allocated once -------------------------- */
#define SLOT(field) offsetof(bench_ctx, field)
static const size_t BUFFERS[] = {
    SLOT(keys), SLOT(queries), SLOT(values), SLOT(values_out), SLOT(flags), SLOT(keys_out),
    SLOT(counts), SLOT(offsets), SLOT(sorted.keys), SLOT(sorted.values), SLOT(sorted.unique_keys),
    SLOT(sorted.run_counts), SLOT(sorted.run_offsets), SLOT(sorted.temp), SLOT(limit_buffer)};
#define BUFFER_COUNT (sizeof BUFFERS / sizeof BUFFERS[0])
#define BUFFER(c, i) ((void **)((char *)(c) + BUFFERS[i]))

/* Each buffer at the states' largest n; they and the largest table must fit in free memory. */
static int allocate(bench_ctx *c, const bench_plan *p) {
  uint64_t n = 0;
  size_t vb = 0, table = 0, temp = 0, need = RESERVE_BYTES, free_bytes = 0;
  unsigned designs = 0, runs = 0;
  for (size_t k = 0; k < p->states; ++k) {
    state_at(p, k, c);
    designs |= 1u << (int)c->ax[AX_DESIGN];
    /* (dynamic: keys_out takes warpdrive's entries when it rehashes; aging: the resident keys) */
    runs |= c->ax[AX_VARIANT] > GH_VARIANT_MAP || c->ax[AX_OP] == OP_MIXED ||
            c->ax[AX_OP] == OP_DYNAMIC || c->ax[AX_OP] == OP_AGING;
    n = c->n > n ? c->n : n, vb = c->vb > vb ? c->vb : vb;
    c->distinct = c->n; /* an upper bound for every distribution */
    const gh_config config = bench_table_config(c);
    size_t host = 0, device = 0, *on_backend = c->be->stream ? &device : &host;
    if (bench_designs[(int)c->ax[AX_DESIGN]].gh) gh_memory_estimate(&config, &host, &device);
    table = *on_backend > table ? *on_backend : table;
  }
  const size_t kb = c->kb, ns = designs & (1u << D_SORTED) ? n : 0, nr = runs ? n : 0;
  if (ns && c->be->sorted_temp_bytes(n, c->kb, (unsigned)vb, &temp) != 0)
    return bench_backend_failed(c, 1, "sizing the sort's scratch");
  const size_t bytes[BUFFER_COUNT] = {
      n * kb, n * kb, n * vb, n * (vb > 4 ? vb : 4), n, nr * kb, nr * 8, nr ? nr * 8 + 8 : 0,
      ns * kb, ns * vb, (ns ? nr : 0) * kb, (ns ? nr : 0) * 8, (ns ? nr : 0) * 8, temp,
      designs & (1u << D_LIMITS) ? BENCH_LIMIT_BYTES : 0};
  for (size_t i = 0; i < BUFFER_COUNT; ++i) need += bytes[i];
  if (c->be->memory(&free_bytes) != 0) return bench_backend_failed(c, 1, "reading free memory");
  if (need + table > free_bytes)
    return bench_error("%s needs %zu MiB (inputs %zu MiB + largest table %zu MiB + %zu MiB "
                       "reserve), %zu MiB are free: use a smaller --n", p->sc->name,
                       (need + table) >> 20, (need - RESERVE_BYTES) >> 20, table >> 20,
                       RESERVE_BYTES >> 20, free_bytes >> 20);
  c->sorted.key_bytes = c->kb, c->sorted.temp_bytes = temp;
  for (size_t i = 0; i < BUFFER_COUNT; ++i)
    if (bytes[i] != 0 && c->be->alloc(BUFFER(c, i), bytes[i]) != 0)
      return bench_error("allocating %zu bytes: %s", bytes[i], c->be->error());
  return BENCH_OK;
}

static int release(bench_ctx *c) {
  int result = BENCH_OK;
  for (size_t i = 0; i < BUFFER_COUNT; *BUFFER(c, i++) = NULL)
    if (c->be->release(*BUFFER(c, i)) != 0 && result == BENCH_OK)
      result = bench_error("freeing the inputs: %s", c->be->error());
  return result;
}

/* ---- Inputs ------------------------------------------------------------------------------- */
/* Makes buffer `slot` (keys, queries, values) hold a stream's n elements unless it does: *made. */
static int make(bench_ctx *c, int slot, void *out, unsigned kind, uint64_t offset, int *made) {
  const uint64_t m = c->ax[AX_MULT] > 0 ? (uint64_t)c->ax[AX_MULT] : 1;
  uint8_t *ranks = kind == GEN_ZIPF_KEYS ? c->flags : NULL;
  /* (records, values above 8 bytes: their 8-byte words, vb / 8 per value) */
  const int record = slot == 2 && c->vb > 8;
  const bench_gen_spec spec = {kind, record ? 64u : 8 * (slot == 2 ? c->vb : c->kb), c->opts->seed, offset,
                               kind == GEN_ZIPF_KEYS ? c->n : 0,
                               kind == GEN_CYCLIC_KEYS ? (c->n + m - 1) / m : 0,
                               kind == GEN_MIXED_KEYS ? (unsigned)c->ax[AX_ABSENT] : 0, 0};
  *made = c->have_n[slot] != c->n || memcmp(&c->have[slot], &spec, sizeof spec) != 0;
  if (!*made) return BENCH_OK;
  /* Zipf's distinct keys are the distinct ranks, counted exactly from a byte map of them. */
  if (bench_backend_failed(c, c->be->generate(out, record ? c->n * (c->vb / 8) : c->n, spec, ranks),
                           "generating inputs"))
    return BENCH_FATAL;
  c->have[slot] = spec, c->have_n[slot] = c->n;
  if (slot == 0) c->distinct = kind == GEN_CYCLIC_KEYS ? spec.period : c->n;
  return ranks ? bench_count(c, ranks, NULL, 0, c->n, 1, &c->distinct) : BENCH_OK;
}
static int inputs(bench_ctx *c, const bench_scenario *sc) {
  static const unsigned KIND[] = {GEN_UNIQUE_KEYS, GEN_ZIPF_KEYS, GEN_CYCLIC_KEYS};
  const int op = (int)c->ax[AX_OP], dist = (int)c->ax[AX_DIST];
  int made = 0, result;
  c->q = c->keys, c->nq = c->n, c->absent = 0; /* the inputs, none absent */
  if (c->ax[AX_DESIGN] == D_LIMITS) return BENCH_OK;
  result = make(c, 0, c->keys, KIND[dist], 0, &made);
  if (result == BENCH_OK && made && sc->show_inputs)
    printf("%s keys: %llu distinct among %llu (%.1f%%)\n", bench_axes[AX_DIST].names[dist],
           (unsigned long long)c->distinct, (unsigned long long)c->n,
           100.0 * (double)c->distinct / (double)c->n);
  if (result == BENCH_OK && c->vb) result = make(c, 2, c->values, GEN_VALUES, 0, &made);
  if (op == OP_FIND_ALL) c->nq = c->distinct; /* each distinct key once: the first ones */
  const int lookup = op == OP_FIND || op == OP_FIND_FIRST || op == OP_JOIN || op == OP_JOIN_INTERSECT;
  if (result != BENCH_OK || (op != OP_FIND_ABSENT && (!lookup || c->ax[AX_ABSENT] < 0))) return result;
  /* Absent keys are key(i) of the disjoint index range [n, 2n). */
  c->q = c->queries;
  c->absent = op == OP_FIND_ABSENT ? c->n : c->n * (uint64_t)c->ax[AX_ABSENT] / 100;
  return make(c, 1, c->queries, op == OP_FIND_ABSENT ? GEN_UNIQUE_KEYS : GEN_MIXED_KEYS, c->n,
              &made);
}

/* ---- Tables, timing, states --------------------------------------------------------------- */
static void drop_table(bench_ctx *c) {
  gh_destroy(c->table), c->table = NULL;
  c->filled = c->validated = 0, c->failed = c->stored = 0;
  memset(&c->stats, 0, sizeof c->stats);
}
/* A new table's config, checked; warpdrive's table made now (cuckoo's before each insert). A
 * design this build has no backend for (slab on CUDA, for now) is skipped, not failed. */
static int open_table(bench_ctx *c, const bench_scenario *sc) {
  char message[256];
  gh_design_traits traits;
  c->config = bench_table_config(c);
  c->skipped = "this build has no such backend for the design";
  if (gh_design_info(c->config.design, &traits) || !(traits.backends & (1u << c->be->kind)))
    return SKIPPED;
  const gh_status valid = gh_config_validate(&c->config, message, sizeof message);
  if (valid != GH_OK && (c->skipped = sc->rejected) != NULL) return SKIPPED;
  if (valid != GH_OK) return bench_error("%s: %s", c->desc, message), BENCH_BROKEN;
  if (bench_designs[(int)c->ax[AX_DESIGN]].fresh_per_insert) return BENCH_OK;
  return GH_CALL(c, gh_create(&c->config, &c->table));
}
static int compare_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
/* The one timing loop; the timer: CUDA events on the stream, or CLOCK_MONOTONIC. */
static int measure(bench_ctx *c, const bench_steps *steps, bench_result *r) {
  double samples[BENCH_MAX_REPS];
  for (unsigned run = 0; run < r->warmup + r->reps; ++run) {
    double ms = 0.0;
    int result;
    if (steps->setup != NULL && (result = steps->setup(c)) != BENCH_OK) return result;
    if (c->be->timer_start() != 0) return bench_error("starting the timer: %s", c->be->error());
    c->own_ms = NAN;
    result = steps->op(c);
    /* Stop the timer even when the op failed, so the events are left in a clean state. */
    const int timer = c->be->timer_stop(&ms);
    if (result != BENCH_OK) return result;
    if (timer != 0) return bench_error("stopping the timer: %s", c->be->error());
    if (steps->check != NULL && (result = steps->check(c)) != BENCH_OK) return result;
    if (!isnan(c->own_ms)) ms = c->own_ms;
    if (run >= r->warmup) samples[run - r->warmup] = ms;
  }
  qsort(samples, r->reps, sizeof samples[0], compare_double);
  r->ms_min = samples[0], r->ms_max = samples[r->reps - 1];
  r->ms_median = (samples[(r->reps - 1) / 2] + samples[r->reps / 2]) / 2;
  return BENCH_OK;
}

static int run_state(bench_run *run, bench_ctx *c, const bench_plan *p, int new_table) {
  const int design = (int)c->ax[AX_DESIGN], op = (int)c->ax[AX_OP];
  const int v = c->ax[AX_VARIANT] > 0 ? (int)c->ax[AX_VARIANT] : GH_VARIANT_MAP;
  const bench_design_def *def = &bench_designs[design];
  const bench_steps *steps = bench_steps_for(design, op);
  char desc[256];
  size_t host = 0, device = 0;
  describe(c->ax, desc, sizeof desc), c->desc = desc;
  if (steps->op == NULL) return bench_error("%s: no such operation", desc), BENCH_BROKEN;
  int result = inputs(c, p->sc);
  if (result == BENCH_OK && new_table && def->gh) result = open_table(c, p->sc);
  bench_result r = {.scenario = p->sc, .key_bits = c->kb * 8, .reps = p->reps, .n = c->n,
                    .value_bits = v == GH_VARIANT_COMPACTING ? 32 : c->vb * 8, /* ids */
                    .warmup = c->opts->warmup > def->min_warmup ? c->opts->warmup : def->min_warmup,
                    .pairs = c->n, .distinct = c->distinct, .ms_median = NAN, .ms_min = NAN,
                    .ms_max = NAN, .rate = NAN, .ratio = NAN,
                    .family = c->config.hash_family == GH_HASH_XOR ? "xor" : "multiply",
                    .skipped = result == SKIPPED ? c->skipped : NULL};
  memcpy(r.ax, c->ax, sizeof r.ax);
  if (result == SKIPPED) return report_state(run, &r) == 0 ? SKIPPED : BENCH_FATAL;
  if (result == BENCH_OK && steps->prepare) result = steps->prepare(c);
  c->runs = c->full_runs = 0;
  if (result == BENCH_OK) result = measure(c, steps, &r);
  if (result != BENCH_OK) return result;
  r.n = op == OP_FIND || op == OP_FIND_ABSENT || op == OP_FIND_ALL || op == OP_FIND_FIRST ? c->nq
        : op == OP_ALLOC ? c->slabs : op == OP_DYNAMIC || op == OP_AGING ? c->dynamic.ops
        : op == OP_UPSIZE || op == OP_DOWNSIZE ? c->moved
        : op == OP_REINSERT ? c->n - c->stored : c->n;
  for (int phase = 0; (op == OP_DYNAMIC || op == OP_AGING) && phase < PHASE_COUNT; ++phase) {
    double samples[BENCH_MAX_REPS];
    for (unsigned k = 0; k < r.reps; ++k) samples[k] = c->dynamic.phase_ms[r.warmup + k][phase];
    qsort(samples, r.reps, sizeof samples[0], compare_double);
    r.phase_ms[phase] = (samples[(r.reps - 1) / 2] + samples[r.reps / 2]) / 2;
  }
  if (op == OP_DYNAMIC) r.dynamic = &c->dynamic;
  if (op == OP_AGING) r.aging = &c->dynamic;
  r.rate = (double)r.n / (r.ms_median * 1e-3) / 1e9;
  r.stored = c->stored, r.failed = c->failed, r.full_runs = c->full_runs;
  r.slots = c->stats.slots, r.eviction_limit = c->stats.eviction_limit;
  if (c->table != NULL &&
      ((result = GH_CALL(c, gh_capacity(c->table, &r.capacity))) != BENCH_OK ||
       (result = GH_CALL(c, gh_memory_usage(c->table, &host, &device))) != BENCH_OK))
    return result;
  /* The sorted structure: keys (and values), then the distinct keys, counts (and offsets). */
  r.table_bytes = c->table ? (c->be->stream ? device : host)
                  : design == D_LIMITS ? BENCH_LIMIT_BYTES
                  : c->n * (c->kb + (v == GH_VARIANT_COMPACTING ? 0 : c->vb)) +
                        (v ? c->sorted.unique * (c->kb + 8 * (v == GH_VARIANT_MULTIVALUE ? 2 : 1))
                           : 0);
  for (unsigned k = r.warmup; def->fresh_per_insert && (op == OP_INSERT || op == OP_BUILD) &&
                              k < r.warmup + r.reps; ++k)
    r.restarts[r.builds++] = c->restarts[k], r.grows += c->grows[k];
  return report_state(run, &r) == 0 ? BENCH_OK : BENCH_FATAL;
}

static int run_scenario(bench_run *run, const bench_scenario *sc) {
  bench_plan p;
  bench_ctx c = {.opts = run->opts, .be = run->be, .desc = sc->name};
  double previous[AX_COUNT];
  int result, skip = 0;
  resolve(run->opts, sc, &p);
  result = allocate(&c, &p);
  if (result == BENCH_OK && report_benchmark(run, &p) != 0) result = BENCH_FATAL;
  for (size_t k = 0; k < p.states && result != BENCH_FATAL; ++k) {
    state_at(&p, k, &c);
    const int new_table = k == 0 || memcmp(previous, c.ax, AX_ABSENT * sizeof(double)) != 0;
    memcpy(previous, c.ax, sizeof previous);
    if (new_table) drop_table(&c), skip = 0;
    if (skip) continue;
    result = run_state(run, &c, &p, new_table);
    if (result == BENCH_BROKEN) ++run->broken;
    skip = result != BENCH_OK; /* a broken or skipped table: the rest of its states go too */
    if (result != BENCH_FATAL) result = BENCH_OK;
  }
  drop_table(&c);
  return release(&c) == BENCH_OK ? result : BENCH_FATAL;
}

/* ---- Command line ------------------------------------------------------------------------- */
#define usage(...) (bench_error(__VA_ARGS__), 2) /* a bad command line: exit 2 */
/* Decimal, or 2^K. */
static int parse_number(const char *text, double *out) {
  char *end = NULL;
  errno = 0;
  if (strncmp(text, "2^", 2) == 0) {
    const long k = strtol(text + 2, &end, 10);
    *out = ldexp(1.0, (int)k);
    return end == text + 2 || *end || k < 0 || k > 62 ? -1 : 0;
  }
  *out = strtod(text, &end);
  return *text < '0' || *text > '9' || errno || *end ? -1 : 0;
}
/* Copies the next item of a comma list into item; NULL at the end of the list. */
static const char *next_item(const char *list, char *item, size_t size) {
  const size_t length = strcspn(list, ",");
  if (*list == 0) return NULL;
  snprintf(item, size, "%.*s", (int)length, list);
  return list + length + (list[length] == ',');
}
/* A name selects the scenario of that name, or those named name-x; "all" all of them. */
static int selects(const char *name, const char *scenario) {
  const size_t n = strlen(name);
  return !strcmp(name, "all") || (!strncmp(scenario, name, n) && strchr("-", scenario[n]));
}
static int selected(const bench_options *o, const char *scenario) {
  char item[32];
  if (strcmp(scenario, "limits") == 0) return 1;
  for (const char *l = o->scenarios; !o->limits_only && (l = next_item(l, item, sizeof item));)
    if (selects(item, scenario)) return 1;
  return 0;
}

/* --axis S.A=LIST: a row with the values of axis A of scenario S, before those of bench_rows. */
static int parse_axis(bench_options *o, const char *spec) {
  const char *list = strchr(spec, '=');
  bench_row *r = &o->overrides[o->override_count];
  char scenario[32] = "", axis[32] = "", text[256] = "";
  size_t s = 0;
  int a = 0;
  sscanf(spec, "%31[^.=].%31[^=]", scenario, axis);
  while (s < bench_scenario_count && strcmp(bench_scenarios[s].name, scenario)) ++s;
  while (a < AX_COUNT && strcmp(bench_axes[a].name, axis)) ++a;
  for (int k = 0; k < AX_COUNT; ++k)
    snprintf(strchr(text, 0), 20, "%s%s", k ? ", " : "", bench_axes[k].name);
  if (s == bench_scenario_count || a == AX_COUNT || !list || o->override_count == BENCH_MAX_LIST)
    return usage("--axis: '%s' is not SCENARIO.AXIS=LIST (axes: %s)", spec, text);
  *r = (bench_row){.scenario = bench_scenarios[s].name, .axis = a, .modes = ALL};
  for (const bench_axis_def *d = &bench_axes[a]; (list = next_item(list + 1, text, 64)); --list) {
    double v = -1;
    for (int k = 0; d->names && d->names[k]; ++k) v = strcmp(d->names[k], text) ? v : k;
    if (d->names ? v < 0 : parse_number(text, &v) || v < d->min || v > d->max ||
                               (d->type == 'i' && v != floor(v)) ||
                               (a == AX_G && ((int)v & ((int)v - 1))))
      return usage("%s: '%s' is not a value of the axis", spec, text);
    for (unsigned k = 0; k <= r->count; ++k)
      if (k == BENCH_MAX_LIST || (k < r->count && r->v[k] == v))
        return usage("%s: '%s' is one value too many", spec, text);
    r->v[r->count++] = v;
  }
  return r->count ? (++o->override_count, 0) : usage("%s: no values", spec);
}

static int parse(int argc, char **argv, bench_options *o) {
#define AT(field) offsetof(bench_options, field)
  static const struct { const char *name; double min, max, step; size_t at, size; } NUMBERS[] = {
      {"device", 0, 1023, 1, AT(device), 4}, {"n", 1, 0x1p40, 1, AT(n), 8},
      {"reps", 1, BENCH_MAX_REPS, 1, AT(reps), 4}, {"warmup", 0, 10, 1, AT(warmup), 4},
      {"key-bits", 32, 64, 32, AT(key_bits), 4}, {"seed", 0, 0x1p53, 1, AT(seed), 8},
      {"value-bits", 0, 1024, 32, AT(value_bits), 4}};
  static const char *const OTHERS[] = {"axis", "backend", "scenario", "json", "group-sizes",
                                       "loads", "dists", "ops", "peers"};
  static const char *const AXES[] = {"group_size", "load_factor", "dist", "op"};
  static const char *const BACKENDS[] = {"auto", "host", "cuda"}; /* as gh_backend */
  *o = (bench_options){.warmup = 1, .key_bits = 32, .value_bits = 32, .seed = 0x5eed,
                       .scenarios = "all", .json_path = "gpuhash-bench.json"};
  for (int i = 1, result = 0; i < argc; ++i) {
    const char *value = strchr(argv[i], '=');
    char key[32], item[96];
    size_t k = 0, s = 0;
    double v = 0;
    snprintf(key, sizeof key, "%.*s", (int)(value ? value - argv[i] - 2 : 31), argv[i] + 2);
    int *flag = !strcmp(key, "quick") ? &o->quick : !strcmp(key, "limits") ? &o->limits_only
                : !strcmp(key, "validate") ? &o->validate : !strcmp(key, "summary") ? &o->summary : NULL;
    if (strncmp(argv[i], "--", 2)) return usage("unexpected argument '%s'", argv[i]);
    if (!strcmp(key, "help"))
      return puts("gpuhash-bench [--quick --limits --validate --summary] [--OPTION VALUE] for OPTION in "
                  "scenario, backend,\n  device, n, reps, warmup, key-bits, value-bits, axis, "
                  "group-sizes, loads, dists, ops,\n  json, seed, peers: bench/README.md says what they "
                  "do."), -1;
    if (flag && value) return usage("--%s takes no value", key);
    if (flag && (*flag = 1)) continue;
    while (k < 7 && strcmp(key, NUMBERS[k].name)) ++k;
    while (s < 9 && strcmp(key, OTHERS[s])) ++s;
    if (k == 7 && s == 9) return usage("unknown option '%s'", argv[i]);
    if (!value && (i + 1 == argc || !strncmp(argv[i + 1], "--", 2)))
      return usage("--%s needs a value", key);
    value = value ? value + 1 : argv[++i];
    if (k < 7 && (parse_number(value, &v) || v < NUMBERS[k].min || v > NUMBERS[k].max ||
                  fmod(v, NUMBERS[k].step)))
      return usage("--%s: '%s' is out of range", key, value);
    if (k < 7 && NUMBERS[k].size == 8) *(uint64_t *)((char *)o + NUMBERS[k].at) = (uint64_t)v;
    if (k < 7 && NUMBERS[k].size == 4) *(unsigned *)((char *)o + NUMBERS[k].at) = (unsigned)v;
    /* Values wider than 64 bits are records (dycuckoo): whole 8-byte words, generated and checked
     * as such. */
    if (k == 6 && v > 64 && fmod(v, 64))
      return usage("--value-bits: '%s': above 64 bits, values are records of whole 8-byte words "
                   "(128, 192, ... 1024)", value);
    o->reps_given |= k == 2;
    snprintf(item, sizeof item, "warpdrive.%s=%s", s > 3 && s < 8 ? AXES[s - 4] : "", value);
    if (s == 0 || (s > 3 && s < 8)) result = parse_axis(o, s ? item : value);
    for (k = 0; s == 1 && k < 3 && strcmp(value, BACKENDS[k]);) ++k;
    if (s == 1 && k == 3) return usage("--backend: '%s' is not auto, host or cuda", value);
    if (s == 1) o->backend = (gh_backend)k;
    for (const char *l = value; s == 2 && (l = next_item(l, item, 32)); o->scenarios = value)
      for (k = 0; !selects(item, bench_scenarios[k].name);)
        if (++k == bench_scenario_count) return usage("--scenario: '%s' names none", item);
    if (s == 3) o->json_path = value;
    if (s == 8) o->peers_path = value;
    if (result != 0) return result;
  }
  return 0;
}

/* The main job's table: each design's build and find rate and, on a GPU, the fraction of the
 * ceiling that bounds each (random CAS for a build, random sector reads for a find). */
static void print_glance(const bench_run *run) {
  const double cas = ceiling_value(run, bench_ops[OP_BUILD].ceiling);
  const double reads = ceiling_value(run, bench_ops[OP_FIND].ceiling);
  double n = NAN;
  char n_text[32];
  for (int d = 0; d < D_COUNT; ++d)
    if (run->glance[d].design == d && d != D_LIMITS) n = (double)run->glance[d].n;
  printf("\n%s, %s unique 32-bit keys and values, G ops/s%s:\n",
         run->be->kind == GH_BACKEND_CUDA ? run->be->device : "host backend", axis_text(AX_N, n, n_text, sizeof n_text),
         isnan(cas) ? "" : " (in brackets: the fraction of the ceiling measured above)");
  printf("  %-10s %-18s %-18s\n", "design", "build", "find");
  for (int d = 0; d < D_COUNT; ++d) {
    const struct glance *g = &run->glance[d];
    char build[32], find[32];
    if (g->design != d || d == D_LIMITS) continue;
    snprintf(build, sizeof build, isnan(cas) ? "%.3f" : "%.2f (%.2f)", g->rate[0], g->rate[0] / cas);
    snprintf(find, sizeof find, isnan(reads) ? "%.3f" : "%.2f (%.2f)", g->rate[1], g->rate[1] / reads);
    printf("  %-10s %-18s %-18s\n", bench_axes[AX_DESIGN].names[d], build, find);
  }
  printf("Every scenario of the papers and issues: gpuhash-bench without --summary (bench/README.md).\n");
}

/* ---- main --------------------------------------------------------------------------------- */
static double seconds_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}
/* Opens the backend asked for; *why (printed) says which and why. */
static int open_backend(const bench_options *o, bench_backend *be, char *why, size_t size) {
  char about[512];
  const int gpu = gh_cuda_available();
  if (o->backend == GH_BACKEND_HOST || (o->backend == GH_BACKEND_AUTO && !gpu)) {
    bench_host_open(be);
    snprintf(why, size, o->backend ? "asked for with --backend host (%s)" : "no GPU here (%s)",
             gpu ? "a GPU is present" : "gh_cuda_available() = 0");
    return printf("host backend: %s, %ld CPUs\n", why, sysconf(_SC_NPROCESSORS_ONLN)) < 0;
  }
  if (!gpu) return bench_error("--backend cuda: no usable CUDA device (gh_cuda_available() = 0)");
  if (bench_cuda_open((int)o->device, be, about, sizeof about)) return bench_error("%s", about);
  snprintf(why, size, o->backend ? "asked for with --backend cuda" : "gh_cuda_available() = 1");
  return printf("CUDA backend on %s: %s\n", about, why) < 0;
}
int main(int argc, char **argv) {
  bench_options o;
  bench_backend be;
  bench_run run = {.opts = &o, .be = &be};
  char why[128], started[32];
  const char *commit = getenv("GH_COMMIT");
  const time_t now = time(NULL);
  struct tm utc;
  int result = parse(argc, argv, &o);
  double largest = (double)o.n; /* absent keys are key(i), i in [n, 2n): 2n <= 2^32 for 32 bits */
  for (unsigned i = 0; result == 0 && i < o.override_count; ++i)
    for (unsigned k = 0; o.overrides[i].axis == AX_N && k < o.overrides[i].count; ++k)
      largest = fmax(largest, o.overrides[i].v[k]);
  if (result == 0 && o.key_bits == 32 && largest > 0x1p31)
    result = usage("n = %.0f is too large for 32-bit keys (at most 2^31)", largest);
  if (result != 0) return result < 0 ? 0 : result;
  if (o.summary) o.scenarios = "summary";
  if (open_backend(&o, &be, why, sizeof why) != 0) return 1;
  if (o.peers_path && load_peers(&run, o.peers_path)) {
    if (be.stream) bench_cuda_close();
    return 1;
  }
  o.mode = be.stream ? (o.quick ? M_QUICK_GPU : M_FULL_GPU)
                    : (o.quick ? M_QUICK_HOST : M_FULL_HOST);
  o.mode_name = o.limits_only ? "limits" : o.quick ? "quick" : "full";
  o.reps = o.reps_given ? o.reps : o.quick ? 3 : 5;
  commit = commit && *commit ? commit : GH_GIT_COMMIT;
  printf("gpuhash %u, commit %s, %s run, seed %llu, JSON written to %s\n", gh_version_number(),
         commit, o.mode_name, (unsigned long long)o.seed, o.json_path);
  if ((run.json = fopen(o.json_path, "w")) == NULL) {
    if (be.stream) bench_cuda_close();
    return bench_error("cannot open --json file '%s' for writing", o.json_path), 1;
  }
  strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &utc));
  fputs("{\"meta\":{\"argv\":[", run.json);
  for (int i = 0; i < argc; ++i) fputs(i ? "," : "", run.json), jstr(run.json, argv[i]);
  fprintf(run.json, "],\"version\":{\"json\":{\"major\":1,\"minor\":0,\"patch\":0,\"string\":"
          "\"1.0.0\"},\"gpuhash\":{\"number\":%u,\"git_sha\":\"%s\"}},\"gpuhash\":{\"backend\":"
          "\"%s\",\"backend_reason\":\"%s\",\"mode\":\"%s\",\"seed\":%llu,\"run_id\":\"%s-%ld\","
          "\"started\":\"%s\"}},\"devices\":[", gh_version_number(), commit, be.name, why,
          o.mode_name, (unsigned long long)o.seed, started, (long)getpid(), started);
  if (be.stream)
    fprintf(run.json, "{\"id\":%u,\"name\":\"%s\",\"sm_version\":%d,\"number_of_sms\":%d,"
            "\"global_memory_size\":%zu,\"l2_cache_size\":%zu}", o.device, be.device,
            be.sm_version, be.sm_count, be.memory_bytes, be.l2_bytes);
  fputs("],\"benchmarks\":[", run.json);
  const double start = seconds_now();
  for (size_t i = 0; i < bench_scenario_count && result == BENCH_OK; ++i)
    if (selected(&o, bench_scenarios[i].name) && (i > 0 || be.stream)) /* 0: the ceilings */
      result = run_scenario(&run, &bench_scenarios[i]);
    else if (i == 0)
      printf("\nceilings: not measured: they need a GPU (this is the host backend), so results "
             "carry no fraction of ceiling\n");
  if (o.summary) print_glance(&run);
  else if (!o.limits_only) summary(&run);
  printf("\n%zu measurements in %.1f s on the %s backend; JSON written to %s\n", run.count,
         seconds_now() - start, be.name, o.json_path);
  if (run.broken)
    printf("%u configuration(s) FAILED verification or could not run: see the errors above\n",
           run.broken);
  if (result != BENCH_OK) printf("the run stopped early on an error: see above\n");
  fprintf(run.json, "%s],\"run\":{\"states\":%zu,\"failed_configurations\":%u,\"seconds\":%.1f,"
          "\"complete\":%s}}\n", run.benchmarks ? "]}" : "", run.count, run.broken,
          seconds_now() - start, result ? "false" : "true");
  fclose(run.json);
  if (be.stream) bench_cuda_close();
  return result == BENCH_OK && run.broken == 0 ? 0 : 1;
}
