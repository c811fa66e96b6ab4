/* dist.c - the distributed table (gpuhash_dist.h): WarpDrive's multisplit -> all-to-all -> local
 * operation -> all-to-all back cascade, over m partitions that are ordinary gpuhash tables.
 *
 * One call's bookkeeping is a `split`: per slice s and partition p the piece size counts[s][p];
 * each slice's keys regrouped by partition (a stable counting sort: the multisplit), piece (s, p)
 * at send_start[s][p] (a row's exclusive sum); partition p's batch the pieces of every slice in
 * slice order, piece (s, p) at recv_start[p][s] (a column's exclusive sum). Per-key results come
 * back by the same starts, and each slice's order[i] puts key i's result where the caller wants it.
 *
 * The host backend moves the pieces with memcpy. The CUDA backend (not yet) moves them with one
 * grouped ncclSend / ncclRecv per exchange and keeps this bookkeeping. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/words.h"
#include "gpuhash/detail/hash.h"
#include "gpuhash_dist.h"

#define GH_DIST_ERROR_CAPACITY 512
/* p(k)'s default seed: any constant unlike gh_config's default seed. */
#define GH_DIST_DEFAULT_PARTITION_SEED 0x2545F4914F6CDD1Dull

struct gh_dist {
  gh_dist_config config;
  unsigned m;
  gh_table **tables; /* m */
  char last_error[GH_DIST_ERROR_CAPACITY];
};

static _Thread_local char create_error[GH_DIST_ERROR_CAPACITY];

const char *gh_dist_last_create_error(void) { return create_error; }
const char *gh_dist_last_error(const gh_dist *d) { return d ? d->last_error : "table is NULL"; }

static gh_status fail(gh_dist *d, gh_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(d->last_error, sizeof d->last_error, format, args);
  va_end(args);
  return status;
}

/* ---- Config, create, destroy ----------------------------------------------------------------- */

gh_status gh_dist_config_init(gh_dist_config *config, size_t struct_size, unsigned version, gh_design design) {
  if (config == NULL || struct_size != sizeof *config) return GH_ERR_INVALID_ARGUMENT;
  memset(config, 0, sizeof *config);
  config->struct_size = sizeof *config;
  config->version = version;
  const gh_status status = gh_config_init(&config->table, sizeof config->table, version, design);
  config->partitions = 1;
  config->partition_seed = GH_DIST_DEFAULT_PARTITION_SEED;
  return status;
}

static gh_status refuse(const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(create_error, sizeof create_error, format, args);
  va_end(args);
  return GH_ERR_INVALID_ARGUMENT;
}

static void free_tables(gh_dist *d) {
  for (unsigned p = 0; d->tables && p < d->m; ++p) gh_destroy(d->tables[p]);
  free(d->tables);
  free(d);
}

gh_status gh_dist_create(const gh_dist_config *config, gh_dist **table) {
  create_error[0] = '\0';
  if (table == NULL) return refuse("gh_dist_create: table is NULL");
  *table = NULL;
  if (config == NULL) return refuse("gh_dist_create: config is NULL");
  if (config->struct_size != sizeof *config)
    return refuse("gh_dist_create: config.struct_size = %zu, this library's gh_dist_config has %zu bytes: start "
                  "from gh_dist_config_default()", config->struct_size, sizeof *config);
  if (config->partitions < 1 || config->partitions > GH_DIST_MAX_PARTITIONS)
    return refuse("gh_dist_create: partitions = %u must be in 1 .. %u", config->partitions, GH_DIST_MAX_PARTITIONS);
  if (config->table.backend == GH_BACKEND_CUDA) {
    snprintf(create_error, sizeof create_error,
             "gh_dist_create: the distributed table runs on the host backend only so far (its CUDA backend over "
             "NCCL is not built yet): set table.backend = GH_BACKEND_HOST");
    return GH_ERR_UNSUPPORTED;
  }
  if (config->table.variant != GH_VARIANT_MAP)
    return refuse("gh_dist_create: table.variant = %d: a distributed table is a map (GH_VARIANT_MAP)",
                  (int)config->table.variant);
  char message[256];
  gh_config part = config->table;
  part.backend = GH_BACKEND_HOST;
  if (gh_config_validate(&part, message, sizeof message) != GH_OK) return refuse("gh_dist_create: table.%s", message);
  gh_dist *d = (gh_dist *)calloc(1, sizeof *d);
  if (d == NULL || (d->tables = (gh_table **)calloc(config->partitions, sizeof *d->tables)) == NULL) {
    free(d);
    snprintf(create_error, sizeof create_error, "gh_dist_create: out of host memory");
    return GH_ERR_OUT_OF_MEMORY;
  }
  d->config = *config;
  d->config.table = part;
  d->m = config->partitions;
  for (unsigned p = 0; p < d->m; ++p) {
    const gh_status status = gh_create(&part, &d->tables[p]);
    if (status != GH_OK) {
      snprintf(create_error, sizeof create_error, "gh_dist_create: partition %u of %u: %s", p, d->m,
               gh_last_create_error());
      free_tables(d);
      return status;
    }
  }
  *table = d;
  return GH_OK;
}

void gh_dist_destroy(gh_dist *d) {
  if (d) free_tables(d);
}

unsigned gh_dist_partitions(const gh_dist *d) { return d ? d->m : 0; }
/* (The host backend drives every partition from this process.) */
unsigned gh_dist_local_partitions(const gh_dist *d) { return d ? d->m : 0; }

/* The low word of a 64-bit mix, modulo m: the tables use the high bits of their own mix. */
static unsigned partition_of(const gh_dist *d, uint64_t key) {
  return (unsigned)((uint32_t)gh_fmix64(key ^ d->config.partition_seed) % d->m);
}

unsigned gh_dist_partition_of(const gh_dist *d, uint64_t key) { return d ? partition_of(d, key) : 0; }

/* ---- The split of one call ------------------------------------------------------------------- */

typedef struct split {
  unsigned m;
  size_t kb, vb;           /* key and value bytes; vb 0 when the call moves no values */
  uint64_t *counts;        /* [s * m + p]: slice s's keys of partition p */
  uint64_t *send_start;    /* [s * m + p]: where piece (s, p) starts in slice s's regrouped keys */
  uint64_t *recv_start;    /* [p * m + s]: where piece (s, p) starts in partition p's batch */
  uint64_t *recv_n;        /* [p]: partition p's batch */
  uint64_t **order;        /* [s][i]: where slice s's key i went in its regrouped keys */
  char **send_keys, **send_values; /* [s] */
  char **recv_keys, **recv_values; /* [p] */
} split;

static void free_split(split *x) {
  for (unsigned i = 0; i < x->m; ++i) {
    if (x->order) free(x->order[i]);
    if (x->send_keys) free(x->send_keys[i]);
    if (x->send_values) free(x->send_values[i]);
    if (x->recv_keys) free(x->recv_keys[i]);
    if (x->recv_values) free(x->recv_values[i]);
  }
  free(x->counts), free(x->send_start), free(x->recv_start), free(x->recv_n);
  free(x->order), free(x->send_keys), free(x->send_values), free(x->recv_keys), free(x->recv_values);
  memset(x, 0, sizeof *x);
}

/* malloc of at least one byte (a zero-key piece still gets a pointer). */
static void *alloc_bytes(size_t bytes, int *failed) {
  void *p = malloc(bytes ? bytes : 1u);
  if (p == NULL) *failed = 1;
  return p;
}

/* Multisplit of every slice and the exchange of the pieces: afterwards partition p's batch is
 * recv_keys[p] (recv_n[p] keys) and recv_values[p]. */
static gh_status split_and_exchange(gh_dist *d, split *x, const void *const *keys, const void *const *values,
                                    const uint64_t *n) {
  const unsigned m = d->m;
  int failed = 0;
  memset(x, 0, sizeof *x);
  x->m = m;
  x->kb = d->config.table.key_bits / 8u;
  x->vb = values ? d->config.table.value_bits / 8u : 0u;
  x->counts = (uint64_t *)calloc((size_t)m * m, sizeof(uint64_t));
  x->send_start = (uint64_t *)calloc((size_t)m * m, sizeof(uint64_t));
  x->recv_start = (uint64_t *)calloc((size_t)m * m, sizeof(uint64_t));
  x->recv_n = (uint64_t *)calloc(m, sizeof(uint64_t));
  x->order = (uint64_t **)calloc(m, sizeof(uint64_t *));
  x->send_keys = (char **)calloc(m, sizeof(char *));
  x->send_values = (char **)calloc(m, sizeof(char *));
  x->recv_keys = (char **)calloc(m, sizeof(char *));
  x->recv_values = (char **)calloc(m, sizeof(char *));
  if (!x->counts || !x->send_start || !x->recv_start || !x->recv_n || !x->order || !x->send_keys ||
      !x->send_values || !x->recv_keys || !x->recv_values) {
    free_split(x);
    return fail(d, GH_ERR_OUT_OF_MEMORY, "out of host memory for the split of %u partitions; nothing was changed", m);
  }
  const unsigned key_bits = d->config.table.key_bits;
  /* Multisplit: count, row sums, stable placement. */
  for (unsigned s = 0; s < m && !failed; ++s) {
    uint64_t *counts = x->counts + (size_t)s * m, *start = x->send_start + (size_t)s * m;
    for (uint64_t i = 0; i < n[s]; ++i) counts[partition_of(d, gh__read_word(keys[s], i, key_bits))] += 1u;
    for (unsigned p = 1; p < m; ++p) start[p] = start[p - 1] + counts[p - 1];
    x->order[s] = (uint64_t *)alloc_bytes(n[s] * sizeof(uint64_t), &failed);
    x->send_keys[s] = (char *)alloc_bytes(n[s] * x->kb, &failed);
    if (x->vb) x->send_values[s] = (char *)alloc_bytes(n[s] * x->vb, &failed);
    if (failed) break;
    uint64_t *next = (uint64_t *)calloc(m, sizeof(uint64_t));
    if (next == NULL) {
      failed = 1;
      break;
    }
    for (uint64_t i = 0; i < n[s]; ++i) {
      const unsigned p = partition_of(d, gh__read_word(keys[s], i, key_bits));
      const uint64_t at = start[p] + next[p]++;
      x->order[s][i] = at;
      memcpy(x->send_keys[s] + at * x->kb, (const char *)keys[s] + i * x->kb, x->kb);
      if (x->vb) memcpy(x->send_values[s] + at * x->vb, (const char *)values[s] + i * x->vb, x->vb);
    }
    free(next);
  }
  /* The exchange: column sums give each piece's place in its partition's batch. */
  for (unsigned p = 0; p < m && !failed; ++p) {
    for (unsigned s = 0; s < m; ++s) {
      x->recv_start[(size_t)p * m + s] = x->recv_n[p];
      x->recv_n[p] += x->counts[(size_t)s * m + p];
    }
    x->recv_keys[p] = (char *)alloc_bytes(x->recv_n[p] * x->kb, &failed);
    if (x->vb) x->recv_values[p] = (char *)alloc_bytes(x->recv_n[p] * x->vb, &failed);
    for (unsigned s = 0; s < m && !failed; ++s) {
      const uint64_t count = x->counts[(size_t)s * m + p], from = x->send_start[(size_t)s * m + p];
      const uint64_t to = x->recv_start[(size_t)p * m + s];
      memcpy(x->recv_keys[p] + to * x->kb, x->send_keys[s] + from * x->kb, count * x->kb);
      if (x->vb) memcpy(x->recv_values[p] + to * x->vb, x->send_values[s] + from * x->vb, count * x->vb);
    }
  }
  if (!failed) return GH_OK;
  free_split(x);
  return fail(d, GH_ERR_OUT_OF_MEMORY, "out of host memory for the exchange buffers; nothing was changed");
}

/* Per-key results of width bytes, partition p's in batch order in results[p], back to the
 * callers' slices in their order (out[s], NULL: not wanted). */
static gh_status send_back(gh_dist *d, const split *x, char *const *results, size_t width, void *const *out) {
  for (unsigned s = 0; s < x->m; ++s) {
    if (out[s] == NULL) continue;
    uint64_t slice_n = 0;
    for (unsigned p = 0; p < x->m; ++p) slice_n += x->counts[(size_t)s * x->m + p];
    char *regrouped = (char *)malloc(slice_n ? slice_n * width : 1u);
    if (regrouped == NULL) return fail(d, GH_ERR_OUT_OF_MEMORY, "out of host memory carrying results back");
    for (unsigned p = 0; p < x->m; ++p)
      memcpy(regrouped + x->send_start[(size_t)s * x->m + p] * width,
             results[p] + x->recv_start[(size_t)p * x->m + s] * width, x->counts[(size_t)s * x->m + p] * width);
    for (uint64_t i = 0; i < slice_n; ++i) memcpy((char *)out[s] + i * width, regrouped + x->order[s][i] * width, width);
    free(regrouped);
  }
  return GH_OK;
}

/* Per-partition result arrays of width bytes for the batches of x (all or none). */
static char **alloc_results(const split *x, size_t width) {
  char **results = (char **)calloc(x->m, sizeof(char *));
  int failed = results == NULL;
  for (unsigned p = 0; !failed && p < x->m; ++p) results[p] = (char *)alloc_bytes(x->recv_n[p] * width, &failed);
  if (!failed) return results;
  for (unsigned p = 0; results && p < x->m; ++p) free(results[p]);
  free(results);
  return NULL;
}

static void free_results(char **results, unsigned m) {
  for (unsigned p = 0; results && p < m; ++p) free(results[p]);
  free(results);
}

/* The checks every slice call starts with. */
static gh_status check_slices(gh_dist *d, const char *fn, const void *const *keys, const uint64_t *n) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  if (keys == NULL || n == NULL) return fail(d, GH_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, keys ? "n" : "keys");
  for (unsigned s = 0; s < d->m; ++s)
    if (n[s] && keys[s] == NULL)
      return fail(d, GH_ERR_INVALID_ARGUMENT, "%s: keys[%u] is NULL for %llu keys", fn, s, (unsigned long long)n[s]);
  return GH_OK;
}

/* ---- Operations ------------------------------------------------------------------------------ */

gh_status gh_dist_insert(gh_dist *d, const void *const *keys, const void *const *values, const uint64_t *n,
                         gh_dup_policy policy, uint8_t *const *failed_out, uint64_t *failed) {
  gh_status status = check_slices(d, "gh_dist_insert", keys, n);
  if (failed) *failed = 0;
  if (status != GH_OK) return status;
  const int has_values = d->config.table.value_bits != 0;
  if (has_values && values == NULL) return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_insert: values is NULL");
  for (unsigned s = 0; has_values && s < d->m; ++s)
    if (n[s] && values[s] == NULL)
      return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_insert: values[%u] is NULL for %llu keys", s,
                  (unsigned long long)n[s]);
  split x;
  status = split_and_exchange(d, &x, keys, has_values ? values : NULL, n);
  if (status != GH_OK) return status;
  char **flags = alloc_results(&x, 1);
  if (flags == NULL) {
    free_split(&x);
    return fail(d, GH_ERR_OUT_OF_MEMORY, "gh_dist_insert: out of host memory; nothing was changed");
  }
  /* Every partition runs, also after one failed: what went in is flagged either way. */
  gh_status first = GH_OK;
  uint64_t not_in = 0;
  for (unsigned p = 0; p < d->m; ++p) {
    /* A failure that changed nothing writes no flags: all of the partition's keys stay marked.
     * One that inserted some (a full table; slab out of slabs) flags the others itself. */
    memset(flags[p], 1, x.recv_n[p]);
    const gh_status got = gh_insert(d->tables[p], x.recv_keys[p], has_values ? x.recv_values[p] : NULL, x.recv_n[p],
                                    policy, (uint8_t *)flags[p], NULL);
    if (got == GH_OK) memset(flags[p], 0, x.recv_n[p]);
    for (uint64_t i = 0; i < x.recv_n[p]; ++i) not_in += (uint8_t)flags[p][i];
    if (got != GH_OK && first == GH_OK) {
      first = got;
      fail(d, got, "gh_dist_insert: partition %u of %u: %s; the keys not in the table are flagged in failed_out", p,
           d->m, gh_last_error(d->tables[p]));
    }
  }
  if (failed_out) {
    const gh_status back = send_back(d, &x, flags, 1, (void *const *)failed_out);
    if (first == GH_OK) first = back;
  }
  if (failed) *failed = not_in;
  free_results(flags, d->m);
  free_split(&x);
  return first;
}

gh_status gh_dist_find(gh_dist *d, const void *const *keys, const uint64_t *n, void *const *values_out,
                       uint8_t *const *found_out, const void *default_value) {
  gh_status status = check_slices(d, "gh_dist_find", keys, n);
  if (status != GH_OK) return status;
  const size_t vb = d->config.table.value_bits / 8u;
  split x;
  status = split_and_exchange(d, &x, keys, NULL, n);
  if (status != GH_OK) return status;
  char **values = values_out && vb ? alloc_results(&x, vb) : NULL, **found = found_out ? alloc_results(&x, 1) : NULL;
  if ((values_out && vb && values == NULL) || (found_out && found == NULL))
    status = fail(d, GH_ERR_OUT_OF_MEMORY, "gh_dist_find: out of host memory");
  for (unsigned p = 0; status == GH_OK && p < d->m; ++p) {
    status = gh_find(d->tables[p], x.recv_keys[p], x.recv_n[p], values ? values[p] : NULL,
                     found ? (uint8_t *)found[p] : NULL, default_value, NULL);
    if (status != GH_OK) fail(d, status, "gh_dist_find: partition %u: %s", p, gh_last_error(d->tables[p]));
  }
  if (status == GH_OK && values) status = send_back(d, &x, values, vb, values_out);
  if (status == GH_OK && found) status = send_back(d, &x, found, 1, (void *const *)found_out);
  free_results(values, d->m);
  free_results(found, d->m);
  free_split(&x);
  return status;
}

gh_status gh_dist_erase(gh_dist *d, const void *const *keys, const uint64_t *n, uint8_t *const *erased_out,
                        uint64_t *erased) {
  gh_status status = check_slices(d, "gh_dist_erase", keys, n);
  if (erased) *erased = 0;
  if (status != GH_OK) return status;
  split x;
  status = split_and_exchange(d, &x, keys, NULL, n);
  if (status != GH_OK) return status;
  char **flags = erased_out ? alloc_results(&x, 1) : NULL;
  if (erased_out && flags == NULL) status = fail(d, GH_ERR_OUT_OF_MEMORY, "gh_dist_erase: out of host memory");
  uint64_t total = 0;
  for (unsigned p = 0; status == GH_OK && p < d->m; ++p) {
    uint64_t count = 0;
    status = gh_erase(d->tables[p], x.recv_keys[p], x.recv_n[p], flags ? (uint8_t *)flags[p] : NULL, &count, NULL);
    if (status != GH_OK) fail(d, status, "gh_dist_erase: partition %u: %s", p, gh_last_error(d->tables[p]));
    total += count;
  }
  if (status == GH_OK && flags) status = send_back(d, &x, flags, 1, (void *const *)erased_out);
  if (erased) *erased = total;
  free_results(flags, d->m);
  free_split(&x);
  return status;
}

/* ---- The whole table ------------------------------------------------------------------------- */

/* The sum over partitions of a per-table count. */
static gh_status sum_over(gh_dist *d, gh_status (*count)(gh_table *, uint64_t *), uint64_t *sum) {
  if (d == NULL || sum == NULL) return d ? fail(d, GH_ERR_INVALID_ARGUMENT, "the output is NULL") : GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  uint64_t total = 0;
  for (unsigned p = 0; p < d->m; ++p) {
    uint64_t one = 0;
    const gh_status status = count(d->tables[p], &one);
    if (status != GH_OK) return fail(d, status, "partition %u: %s", p, gh_last_error(d->tables[p]));
    total += one;
  }
  *sum = total;
  return GH_OK;
}

gh_status gh_dist_size(gh_dist *d, uint64_t *size) { return sum_over(d, gh_size, size); }
gh_status gh_dist_capacity(gh_dist *d, uint64_t *capacity) { return sum_over(d, gh_capacity, capacity); }

gh_status gh_dist_partition_size(gh_dist *d, unsigned p, uint64_t *size) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  if (size == NULL) return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_partition_size: size is NULL");
  if (p >= d->m) return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_partition_size: partition %u of %u", p, d->m);
  const gh_status status = gh_size(d->tables[p], size);
  return status == GH_OK ? GH_OK : fail(d, status, "partition %u: %s", p, gh_last_error(d->tables[p]));
}

gh_status gh_dist_clear(gh_dist *d) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  for (unsigned p = 0; p < d->m; ++p) {
    const gh_status status = gh_clear(d->tables[p], NULL);
    if (status != GH_OK) return fail(d, status, "gh_dist_clear: partition %u: %s", p, gh_last_error(d->tables[p]));
  }
  return GH_OK;
}

/* Partition by partition: its entries (up to out_capacity - at) exported at keys_out + at. */
gh_status gh_dist_export(gh_dist *d, void *keys_out, void *values_out, uint64_t out_capacity, uint64_t *count) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  if (count == NULL) return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_export: count is NULL");
  *count = 0;
  uint64_t size = 0;
  gh_status status = gh_dist_size(d, &size);
  if (status != GH_OK) return status;
  if (size > out_capacity) {
    *count = size;
    return fail(d, GH_ERR_BUFFER_TOO_SMALL, "gh_dist_export: the table holds %llu keys, out_capacity is %llu; nothing "
                "was written", (unsigned long long)size, (unsigned long long)out_capacity);
  }
  const size_t kb = d->config.table.key_bits / 8u, vb = d->config.table.value_bits / 8u;
  /* gh_export's argument checks, here, so that no partition's export fails after another wrote. */
  if (vb == 0 && values_out != NULL)
    return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_export: the table is a set: values_out must be NULL");
  if (size && (keys_out == NULL || (vb && values_out == NULL)))
    return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_export: %s is NULL", keys_out ? "values_out" : "keys_out");
  uint64_t at = 0;
  for (unsigned p = 0; p < d->m; ++p) {
    uint64_t got = 0;
    status = gh_export(d->tables[p], (char *)keys_out + at * kb, values_out ? (char *)values_out + at * vb : NULL,
                       out_capacity - at, &got, NULL);
    if (status != GH_OK) return fail(d, status, "gh_dist_export: partition %u: %s", p, gh_last_error(d->tables[p]));
    at += got;
  }
  *count = at;
  return GH_OK;
}

gh_status gh_dist_validate(gh_dist *d) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  const unsigned key_bits = d->config.table.key_bits;
  for (unsigned p = 0; p < d->m; ++p) {
    gh_status status = gh_validate(d->tables[p]);
    if (status != GH_OK) return fail(d, status, "gh_dist_validate: partition %u: %s", p, gh_last_error(d->tables[p]));
    uint64_t size = 0, got = 0;
    status = gh_size(d->tables[p], &size);
    const size_t vb = d->config.table.value_bits / 8u;
    void *keys = status == GH_OK ? malloc(size ? size * (key_bits / 8u) : 1u) : NULL;
    void *values = status == GH_OK && vb ? malloc(size ? size * vb : 1u) : NULL;
    if (status == GH_OK && (keys == NULL || (vb && values == NULL))) {
      free(keys), free(values);
      return fail(d, GH_ERR_OUT_OF_MEMORY, "gh_dist_validate: out of host memory");
    }
    if (status == GH_OK) status = gh_export(d->tables[p], keys, values, size, &got, NULL);
    for (uint64_t i = 0; status == GH_OK && i < got; ++i) {
      const uint64_t key = gh__read_word(keys, i, key_bits);
      if (partition_of(d, key) != p)
        status = fail(d, GH_ERR_CORRUPT, "gh_dist_validate: key %llu is stored in partition %u, p(k) = %u",
                      (unsigned long long)key, p, partition_of(d, key));
    }
    free(keys), free(values);
    if (status != GH_OK)
      return d->last_error[0] ? status : fail(d, status, "gh_dist_validate: partition %u: %s", p, gh_last_error(d->tables[p]));
  }
  return GH_OK;
}
