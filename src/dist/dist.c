/* dist.c - the distributed table (gpuhash_dist.h): WarpDrive's multisplit -> all-to-all -> local
 * operation -> all-to-all back cascade, over m partitions that are ordinary gpuhash tables.
 *
 * One call's bookkeeping is a `split`: per slice s and partition p the piece size counts[s][p];
 * each slice's keys regrouped by partition (a stable counting sort: the multisplit), piece (s, p)
 * at send_start[s][p] (a row's exclusive sum); partition p's batch the pieces of every slice in
 * slice order, piece (s, p) at recv_start[p][s] (a column's exclusive sum). Per-key results come
 * back by the same starts, and each slice's order[i] puts key i's result where the caller wants it.
 *
 * The host backend moves the pieces with memcpy. The CUDA backend (dist_cuda.cu) does the same on
 * the GPUs, with NCCL; this file checks configs and arguments for both, owns the partitions'
 * tables and runs the whole-table calls (gathering the partitions' answers over NCCL when each
 * process drives one GPU). */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cuda_runtime.h"
#include "core/words.h"
#include "dist/dist_internal.h"
#include "gpuhash/detail/hash.h"

#define GH_DIST_ERROR_CAPACITY 512
/* p(k)'s default seed: any constant unlike gh_config's default seed. */
#define GH_DIST_DEFAULT_PARTITION_SEED 0x2545F4914F6CDD1Dull
#define GH_DIST_DEFAULT_TIMEOUT_SECONDS 300.0
#define GH_DIST_DEFAULT_STAGING_BYTES (256ull << 20)

struct gh_dist {
  gh_dist_config config;
  unsigned m, local, first; /* partitions; those this process drives: first .. first + local - 1 */
  gh_table **tables;        /* local */
  gh_dist_cuda *cuda;       /* the CUDA backend; NULL on the host backend */
  char last_error[GH_DIST_ERROR_CAPACITY];
};

static _Thread_local char create_error[GH_DIST_ERROR_CAPACITY];

const char *gh_dist_last_create_error(void) { return create_error; }
const char *gh_dist_last_error(const gh_dist *d) { return d ? d->last_error : "table is NULL"; }

gh_status gh__dist_say(char *error, size_t size, gh_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(error, size, format, args);
  va_end(args);
  return status;
}

/* The table's last error, or the last create error of this thread (an invalid config). */
#define fail(d, status, ...) gh__dist_say((d)->last_error, sizeof (d)->last_error, (status), __VA_ARGS__)
#define refuse(...) gh__dist_say(create_error, sizeof create_error, GH_ERR_INVALID_ARGUMENT, __VA_ARGS__)

/* Host memory of the layer, through the tables' allocator (gh_config.allocator; aligned_alloc
 * without one), so that an allocator that fails fails the layer's allocations as it fails the
 * tables'. Each block carries its size ahead of it (frees pass the size allocated); blocks are
 * zeroed. */
#define GH_DIST_HEAD 64u /* keeps the allocator's 64-byte alignment */

static void *layer_alloc(const gh_config *c, size_t bytes) {
  const size_t total = bytes + GH_DIST_HEAD;
  if (total < bytes) return NULL;
  char *block = c->allocator.alloc ? (char *)c->allocator.alloc(c->allocator.ctx, total, GH_MEMORY_HOST)
                                   : (char *)aligned_alloc(GH_DIST_HEAD, (total + GH_DIST_HEAD - 1u) / GH_DIST_HEAD * GH_DIST_HEAD);
  if (block == NULL) return NULL;
  memset(block, 0, total);
  memcpy(block, &total, sizeof total);
  return block + GH_DIST_HEAD;
}

static void layer_free(const gh_config *c, void *p) {
  if (p == NULL) return;
  char *block = (char *)p - GH_DIST_HEAD;
  size_t total;
  memcpy(&total, block, sizeof total);
  if (c->allocator.free) c->allocator.free(c->allocator.ctx, block, total, GH_MEMORY_HOST);
  else free(block);
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
  config->timeout_seconds = GH_DIST_DEFAULT_TIMEOUT_SECONDS;
  config->staging_bytes = GH_DIST_DEFAULT_STAGING_BYTES;
  config->exchange_overlap = -1;
  return status;
}

static void free_tables(gh_dist *d) {
  const gh_config c = d->config.table;
#ifdef GH_HAVE_CUDA
  const int caller = d->config.table.backend == GH_BACKEND_CUDA ? gh__dist_cuda_current_device() : -1;
  gh__dist_cuda_destroy(d->cuda); /* (its buffers came from the tables) */
#endif
  for (unsigned i = 0; d->tables && i < d->local; ++i) gh_destroy(d->tables[i]);
#ifdef GH_HAVE_CUDA
  if (caller >= 0) gh__dist_cuda_set_device(caller); /* (every GPU was visited) */
#endif
  layer_free(&c, d->tables);
  layer_free(&c, d);
}

#ifdef GH_HAVE_CUDA
/* The CUDA backend's own checks: the rank, the devices (each usable, none twice). Writes the
 * local partitions' devices. */
static gh_status check_cuda_config(const gh_dist_config *config, int *devices, unsigned local) {
  const unsigned m = config->partitions;
  if (config->id && config->rank >= m)
    return refuse("gh_dist_create: rank = %u of %u partitions: ranks are 0 .. %u", config->rank, m, m - 1u);
  const int count = gh__cuda_device_count();
  if (count == 0) {
    snprintf(create_error, sizeof create_error, "gh_dist_create: table.backend = GH_BACKEND_CUDA but no usable CUDA "
             "device is here%s", gh_cuda_available() ? "" : " (or the library was built without CUDA)");
    return GH_ERR_NO_DEVICE;
  }
  for (unsigned i = 0; i < local; ++i) {
    devices[i] = config->devices ? config->devices[i] : config->id ? config->table.device : (int)i;
    if (devices[i] < 0 || devices[i] >= count)
      return refuse("gh_dist_create: partition %u's device %d: this machine has devices 0 .. %d", config->id ? config->rank : i,
                    devices[i], count - 1);
    for (unsigned j = 0; j < i; ++j)
      if (devices[j] == devices[i])
        return refuse("gh_dist_create: devices[%u] = devices[%u] = %d: each partition needs its own GPU", j, i, devices[i]);
  }
  return GH_OK;
}
#endif

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
  if (config->table.variant != GH_VARIANT_MAP)
    return refuse("gh_dist_create: table.variant = %d: a distributed table is a map (GH_VARIANT_MAP)",
                  (int)config->table.variant);
  if (!(config->timeout_seconds > 0.0))
    return refuse("gh_dist_create: timeout_seconds = %g must be above 0", config->timeout_seconds);
  if (config->staging_bytes == 0) return refuse("gh_dist_create: staging_bytes is 0");
  if (config->exchange_overlap < -1 || config->exchange_overlap > 1)
    return refuse("gh_dist_create: exchange_overlap = %d must be -1 (by the partitions), 0 or 1", config->exchange_overlap);
  gh_config part = config->table;
  if (part.backend == GH_BACKEND_AUTO) part.backend = gh_cuda_available() ? GH_BACKEND_CUDA : GH_BACKEND_HOST;
  const int cuda = part.backend == GH_BACKEND_CUDA;
  const unsigned local = cuda && config->id ? 1u : config->partitions;
  int devices[GH_DIST_MAX_PARTITIONS];
  if (cuda) {
#ifdef GH_HAVE_CUDA
    const gh_status status = check_cuda_config(config, devices, local);
    if (status != GH_OK) return status;
#else
    snprintf(create_error, sizeof create_error,
             "gh_dist_create: table.backend = GH_BACKEND_CUDA but this library was built without CUDA");
    return GH_ERR_NO_DEVICE;
#endif
  }
  char message[256];
  if (gh_config_validate(&part, message, sizeof message) != GH_OK) return refuse("gh_dist_create: table.%s", message);
  gh_dist *d = (gh_dist *)layer_alloc(&part, sizeof *d);
  if (d) {
    d->config = *config;
    d->config.table = part;
    d->config.devices = NULL, d->config.id = NULL; /* (the caller's arrays are not kept) */
    d->m = config->partitions;
    d->local = local;
    d->first = cuda && config->id ? config->rank : 0;
    d->tables = (gh_table **)layer_alloc(&part, local * sizeof *d->tables);
  }
  if (d == NULL || d->tables == NULL) {
    layer_free(&part, d);
    snprintf(create_error, sizeof create_error, "gh_dist_create: out of host memory");
    return GH_ERR_OUT_OF_MEMORY;
  }
#ifdef GH_HAVE_CUDA
  /* Creating visits every GPU; the caller's current device is set back before returning. */
  const int caller = cuda ? gh__dist_cuda_current_device() : -1;
#endif
  for (unsigned i = 0; i < d->local; ++i) {
    gh_config one = part;
    if (cuda) one.device = devices[i];
    const gh_status status = gh_create(&one, &d->tables[i]);
    if (status != GH_OK) {
      snprintf(create_error, sizeof create_error, "gh_dist_create: partition %u of %u: %s", d->first + i, d->m,
               gh_last_create_error());
      free_tables(d);
      return status;
    }
  }
#ifdef GH_HAVE_CUDA
  if (cuda) {
    const gh_status status = gh__dist_cuda_create(config, d->tables, devices, local, &d->cuda, create_error,
                                                  sizeof create_error);
    gh__dist_cuda_set_device(caller);
    if (status != GH_OK) {
      free_tables(d);
      return status;
    }
  }
#endif
  *table = d;
  return GH_OK;
}

/* ---- The communicator's id ------------------------------------------------------------------- */

gh_status gh_dist_id_new(gh_dist_id *id) {
  create_error[0] = '\0';
  if (id == NULL) return refuse("gh_dist_id_new: id is NULL");
#ifdef GH_HAVE_CUDA
  if (!gh_cuda_available()) {
    snprintf(create_error, sizeof create_error, "gh_dist_id_new: no usable CUDA device here (an id is for the CUDA "
             "backend)");
    return GH_ERR_NO_DEVICE;
  }
  return gh__dist_cuda_id_new(id, create_error, sizeof create_error);
#else
  snprintf(create_error, sizeof create_error, "gh_dist_id_new: this library was built without CUDA (and NCCL)");
  return GH_ERR_NO_DEVICE;
#endif
}

gh_status gh_dist_id_to_text(const gh_dist_id *id, char *text, size_t text_size) {
  if (id == NULL || text == NULL || text_size < GH_DIST_ID_TEXT_SIZE) return GH_ERR_INVALID_ARGUMENT;
  static const char digits[] = "0123456789abcdef";
  for (unsigned i = 0; i < GH_DIST_ID_BYTES; ++i) {
    text[2u * i] = digits[id->bytes[i] >> 4];
    text[2u * i + 1u] = digits[id->bytes[i] & 15u];
  }
  text[2u * GH_DIST_ID_BYTES] = '\0';
  return GH_OK;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

gh_status gh_dist_id_from_text(const char *text, gh_dist_id *id) {
  if (text == NULL || id == NULL) return GH_ERR_INVALID_ARGUMENT;
  gh_dist_id parsed;
  for (unsigned i = 0; i < GH_DIST_ID_BYTES; ++i) {
    if (text[2u * i] == '\0' || text[2u * i + 1u] == '\0') return GH_ERR_INVALID_ARGUMENT;
    const int high = hex_digit(text[2u * i]), low = hex_digit(text[2u * i + 1u]);
    if (high < 0 || low < 0) return GH_ERR_INVALID_ARGUMENT;
    parsed.bytes[i] = (unsigned char)(high * 16 + low);
  }
  if (text[2u * GH_DIST_ID_BYTES] != '\0') return GH_ERR_INVALID_ARGUMENT;
  *id = parsed;
  return GH_OK;
}

void gh_dist_destroy(gh_dist *d) {
  if (d) free_tables(d);
}

unsigned gh_dist_partitions(const gh_dist *d) { return d ? d->m : 0; }
unsigned gh_dist_local_partitions(const gh_dist *d) { return d ? d->local : 0; }

/* The low word of a 64-bit mix, modulo m: the tables use the high bits of their own mix. */
static unsigned partition_of(const gh_dist *d, uint64_t key) {
  return (unsigned)((uint32_t)gh_fmix64(key ^ d->config.partition_seed) % d->m);
}

unsigned gh_dist_partition_of(const gh_dist *d, uint64_t key) { return d ? partition_of(d, key) : 0; }

/* ---- The split of one call ------------------------------------------------------------------- */

typedef struct split {
  const gh_config *memory; /* whose allocator */
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
  const gh_config *c = x->memory;
  for (unsigned i = 0; i < x->m; ++i) {
    if (x->order) layer_free(c, x->order[i]);
    if (x->send_keys) layer_free(c, x->send_keys[i]);
    if (x->send_values) layer_free(c, x->send_values[i]);
    if (x->recv_keys) layer_free(c, x->recv_keys[i]);
    if (x->recv_values) layer_free(c, x->recv_values[i]);
  }
  layer_free(c, x->counts), layer_free(c, x->send_start), layer_free(c, x->recv_start), layer_free(c, x->recv_n);
  layer_free(c, x->order), layer_free(c, x->send_keys), layer_free(c, x->send_values);
  layer_free(c, x->recv_keys), layer_free(c, x->recv_values);
  memset(x, 0, sizeof *x);
}

/* A block of the layer, failed set when there is none. */
static void *alloc_bytes(const gh_config *c, size_t bytes, int *failed) {
  void *p = layer_alloc(c, bytes);
  if (p == NULL) *failed = 1;
  return p;
}

/* Multisplit of every slice and the exchange of the pieces: afterwards partition p's batch is
 * recv_keys[p] (recv_n[p] keys) and recv_values[p]. */
static gh_status split_and_exchange(gh_dist *d, split *x, const void *const *keys, const void *const *values,
                                    const uint64_t *n) {
  const unsigned m = d->m;
  int failed = 0;
  const gh_config *c = &d->config.table;
  memset(x, 0, sizeof *x);
  x->memory = c;
  x->m = m;
  x->kb = d->config.table.key_bits / 8u;
  x->vb = values ? d->config.table.value_bits / 8u : 0u;
  x->counts = (uint64_t *)alloc_bytes(c, (size_t)m * m * sizeof(uint64_t), &failed);
  x->send_start = (uint64_t *)alloc_bytes(c, (size_t)m * m * sizeof(uint64_t), &failed);
  x->recv_start = (uint64_t *)alloc_bytes(c, (size_t)m * m * sizeof(uint64_t), &failed);
  x->recv_n = (uint64_t *)alloc_bytes(c, m * sizeof(uint64_t), &failed);
  x->order = (uint64_t **)alloc_bytes(c, m * sizeof(uint64_t *), &failed);
  x->send_keys = (char **)alloc_bytes(c, m * sizeof(char *), &failed);
  x->send_values = (char **)alloc_bytes(c, m * sizeof(char *), &failed);
  x->recv_keys = (char **)alloc_bytes(c, m * sizeof(char *), &failed);
  x->recv_values = (char **)alloc_bytes(c, m * sizeof(char *), &failed);
  if (failed) {
    free_split(x);
    return fail(d, GH_ERR_OUT_OF_MEMORY, "out of host memory for the split of %u partitions; nothing was changed", m);
  }
  const unsigned key_bits = d->config.table.key_bits;
  /* Multisplit: count, row sums, stable placement. */
  for (unsigned s = 0; s < m && !failed; ++s) {
    uint64_t *counts = x->counts + (size_t)s * m, *start = x->send_start + (size_t)s * m;
    for (uint64_t i = 0; i < n[s]; ++i) counts[partition_of(d, gh__read_word(keys[s], i, key_bits))] += 1u;
    for (unsigned p = 1; p < m; ++p) start[p] = start[p - 1] + counts[p - 1];
    x->order[s] = (uint64_t *)alloc_bytes(c, n[s] * sizeof(uint64_t), &failed);
    x->send_keys[s] = (char *)alloc_bytes(c, n[s] * x->kb, &failed);
    if (x->vb) x->send_values[s] = (char *)alloc_bytes(c, n[s] * x->vb, &failed);
    uint64_t *next = (uint64_t *)alloc_bytes(c, m * sizeof(uint64_t), &failed);
    if (failed) {
      layer_free(c, next);
      break;
    }
    for (uint64_t i = 0; i < n[s]; ++i) {
      const unsigned p = partition_of(d, gh__read_word(keys[s], i, key_bits));
      const uint64_t at = start[p] + next[p]++;
      x->order[s][i] = at;
      memcpy(x->send_keys[s] + at * x->kb, (const char *)keys[s] + i * x->kb, x->kb);
      if (x->vb) memcpy(x->send_values[s] + at * x->vb, (const char *)values[s] + i * x->vb, x->vb);
    }
    layer_free(c, next);
  }
  /* The exchange: column sums give each piece's place in its partition's batch. */
  for (unsigned p = 0; p < m && !failed; ++p) {
    for (unsigned s = 0; s < m; ++s) {
      x->recv_start[(size_t)p * m + s] = x->recv_n[p];
      x->recv_n[p] += x->counts[(size_t)s * m + p];
    }
    x->recv_keys[p] = (char *)alloc_bytes(c, x->recv_n[p] * x->kb, &failed);
    if (x->vb) x->recv_values[p] = (char *)alloc_bytes(c, x->recv_n[p] * x->vb, &failed);
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
 * callers' slices in their order (out[s], NULL: not wanted). Key i of slice s went to partition
 * p(k), at its regrouped place order[s][i]; nothing is allocated, so the results always arrive. */
static void send_back(const gh_dist *d, const split *x, const void *const *keys, char *const *results, size_t width,
                      void *const *out) {
  const unsigned m = x->m, key_bits = d->config.table.key_bits;
  for (unsigned s = 0; s < m; ++s) {
    if (out[s] == NULL) continue;
    uint64_t slice_n = 0;
    for (unsigned p = 0; p < m; ++p) slice_n += x->counts[(size_t)s * m + p];
    for (uint64_t i = 0; i < slice_n; ++i) {
      const unsigned p = partition_of(d, gh__read_word(keys[s], i, key_bits));
      const uint64_t at = x->recv_start[(size_t)p * m + s] + x->order[s][i] - x->send_start[(size_t)s * m + p];
      memcpy((char *)out[s] + i * width, results[p] + at * width, width);
    }
  }
}

/* The byte `byte` for each key of each slice into out[s] (NULL: not wanted). */
static void fill_slices(const gh_dist *d, const uint64_t *n, uint8_t *const *out, int byte) {
  for (unsigned s = 0; out && s < d->m; ++s)
    if (out[s]) memset(out[s], byte, n[s]);
}

static void free_results(const split *x, char **results) {
  for (unsigned p = 0; results && p < x->m; ++p) layer_free(x->memory, results[p]);
  layer_free(x->memory, results);
}

static char **alloc_results(const split *x, size_t width) {
  int failed = 0;
  char **results = (char **)alloc_bytes(x->memory, x->m * sizeof(char *), &failed);
  for (unsigned p = 0; !failed && p < x->m; ++p) results[p] = (char *)alloc_bytes(x->memory, x->recv_n[p] * width, &failed);
  if (!failed) return results;
  free_results(x, results);
  return NULL;
}

/* The split of a call that returns a flag per key, and the partitions' flag arrays; on failure
 * (out of memory: nothing changed) no split is left. */
static gh_status split_with_flags(gh_dist *d, const char *fn, split *x, const void *const *keys,
                                  const void *const *values, const uint64_t *n, char ***flags) {
  const gh_status status = split_and_exchange(d, x, keys, values, n);
  *flags = status == GH_OK ? alloc_results(x, 1) : NULL;
  if (status != GH_OK || *flags != NULL) return status;
  free_split(x);
  return fail(d, GH_ERR_OUT_OF_MEMORY, "%s: out of host memory; nothing was changed", fn);
}

/* The checks every slice call starts with. */
static gh_status check_slices(gh_dist *d, const char *fn, const void *const *keys, const uint64_t *n) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  if (keys == NULL || n == NULL) return fail(d, GH_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, keys ? "n" : "keys");
  for (unsigned s = 0; s < d->local; ++s)
    if (n[s] && keys[s] == NULL)
      return fail(d, GH_ERR_INVALID_ARGUMENT, "%s: keys[%u] is NULL for %llu keys", fn, s, (unsigned long long)n[s]);
  return GH_OK;
}

/* The checks of a call on partition p with the output out. */
static gh_status check_partition(gh_dist *d, const char *fn, unsigned p, const void *out) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  if (out == NULL) return fail(d, GH_ERR_INVALID_ARGUMENT, "%s: the output is NULL", fn);
  if (p >= d->m) return fail(d, GH_ERR_INVALID_ARGUMENT, "%s: partition %u of %u", fn, p, d->m);
  return GH_OK;
}
/* The status of fn's call on local table i; a failure's message names the call and the partition
 * and gives the table's own. */
static gh_status partition_status(gh_dist *d, const char *fn, unsigned i, gh_status status) {
  return status == GH_OK ? GH_OK
                         : fail(d, status, "%s: partition %u of %u: %s", fn, d->first + i, d->m,
                                gh_last_error(d->tables[i]));
}

/* Some partitions live in other processes (one process per GPU). */
static int remote_partitions(const gh_dist *d) { return d->local < d->m; }

/* The other processes can be reached: no communicator of this process has failed. */
static int connected(const gh_dist *d) {
#ifdef GH_HAVE_CUDA
  return d->cuda == NULL || gh__dist_cuda_connected(d->cuda);
#else
  (void)d;
  return 1;
#endif
}

/* Whole-table calls gather over the processes while they can be reached; after a communicator
 * failed they answer for this process's partitions alone. */
static int gathers(const gh_dist *d) { return remote_partitions(d) && connected(d); }

/* A slice or host-sided call on the CUDA backend; *count (optional) gets the call's count. */
static gh_status cuda_call(gh_dist *d, gh_dist_call *call, int host_sided, uint64_t *count) {
#ifdef GH_HAVE_CUDA
  const gh_status status = host_sided ? gh__dist_cuda_host(d->cuda, call, d->last_error, sizeof d->last_error)
                                      : gh__dist_cuda_slices(d->cuda, call, d->last_error, sizeof d->last_error);
  if (count) *count = call->count;
  return status;
#else
  (void)call, (void)host_sided, (void)count;
  return fail(d, GH_ERR_INTERNAL, "a CUDA distributed table in a library without CUDA");
#endif
}

/* ---- The id through a file -------------------------------------------------------------------- */

gh_status gh_dist_id_save(const gh_dist_id *id, const char *path) {
  create_error[0] = '\0';
  if (id == NULL || path == NULL) return refuse("gh_dist_id_save: %s is NULL", id ? "path" : "id");
  char text[GH_DIST_ID_TEXT_SIZE], partial[4096];
  gh_dist_id_to_text(id, text, sizeof text);
  if ((size_t)snprintf(partial, sizeof partial, "%s.partial", path) >= sizeof partial)
    return refuse("gh_dist_id_save: the path is too long");
  FILE *f = fopen(partial, "w");
  int ok = f != NULL && fputs(text, f) >= 0;
  if (f != NULL && fclose(f) != 0) ok = 0;
  if (ok && rename(partial, path) == 0) return GH_OK;
  remove(partial);
  return refuse("gh_dist_id_save: could not write %s", path);
}

gh_status gh_dist_id_load(const char *path, double wait_seconds, gh_dist_id *id) {
  create_error[0] = '\0';
  if (id == NULL || path == NULL) return refuse("gh_dist_id_load: %s is NULL", id ? "path" : "id");
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    FILE *f = fopen(path, "r");
    if (f != NULL) {
      char text[GH_DIST_ID_TEXT_SIZE + 1];
      const size_t got = fread(text, 1, sizeof text - 1, f);
      fclose(f);
      text[got] = '\0';
      return gh_dist_id_from_text(text, id) == GH_OK ? GH_OK
                                                     : refuse("gh_dist_id_load: %s does not hold an id", path);
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((double)(now.tv_sec - start.tv_sec) + 1e-9 * (double)(now.tv_nsec - start.tv_nsec) > wait_seconds) {
      snprintf(create_error, sizeof create_error, "gh_dist_id_load: no file %s after %g s", path, wait_seconds);
      return GH_ERR_PEER;
    }
    const struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL);
  }
}

/* ---- Operations ------------------------------------------------------------------------------ */

gh_status gh_dist_insert(gh_dist *d, const void *const *keys, const void *const *values, const uint64_t *n,
                         gh_dup_policy policy, uint8_t *const *failed_out, uint64_t *failed) {
  gh_status status = check_slices(d, "gh_dist_insert", keys, n);
  if (failed) *failed = 0;
  if (status != GH_OK) return status;
  const int has_values = d->config.table.value_bits != 0;
  if (has_values && values == NULL) return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_insert: values is NULL");
  for (unsigned s = 0; has_values && s < d->local; ++s)
    if (n[s] && values[s] == NULL)
      return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_insert: values[%u] is NULL for %llu keys", s,
                  (unsigned long long)n[s]);
  if (d->cuda) {
    gh_dist_call call = {GH_DIST_INSERT, keys, has_values ? values : NULL, n, policy, failed_out, NULL, NULL, 0};
    return cuda_call(d, &call, 0, failed);
  }
  /* From here on failed_out and *failed always say which keys are not in the table. */
  split x;
  char **flags;
  status = split_with_flags(d, "gh_dist_insert", &x, keys, has_values ? values : NULL, n, &flags);
  if (status != GH_OK) {
    fill_slices(d, n, failed_out, 1);
    for (unsigned s = 0; failed && s < d->m; ++s) *failed += n[s];
    return status;
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
    if (first == GH_OK) first = partition_status(d, "gh_dist_insert", p, got);
  }
  if (failed_out) send_back(d, &x, keys, flags, 1, (void *const *)failed_out);
  if (failed) *failed = not_in;
  free_results(&x, flags);
  free_split(&x);
  return first;
}

gh_status gh_dist_find(gh_dist *d, const void *const *keys, const uint64_t *n, void *const *values_out,
                       uint8_t *const *found_out, const void *default_value) {
  gh_status status = check_slices(d, "gh_dist_find", keys, n);
  if (status != GH_OK) return status;
  if (d->cuda) {
    gh_dist_call call = {GH_DIST_FIND, keys, NULL, n, GH_KEEP_FIRST, found_out, values_out, default_value, 0};
    return cuda_call(d, &call, 0, NULL);
  }
  const size_t vb = d->config.table.value_bits / 8u;
  split x;
  status = split_and_exchange(d, &x, keys, NULL, n);
  if (status != GH_OK) return status;
  char **values = values_out && vb ? alloc_results(&x, vb) : NULL, **found = found_out ? alloc_results(&x, 1) : NULL;
  if ((values_out && vb && values == NULL) || (found_out && found == NULL))
    status = fail(d, GH_ERR_OUT_OF_MEMORY, "gh_dist_find: out of host memory");
  for (unsigned p = 0; status == GH_OK && p < d->m; ++p) {
    status = partition_status(d, "gh_dist_find", p,
                              gh_find(d->tables[p], x.recv_keys[p], x.recv_n[p], values ? values[p] : NULL,
                                      found ? (uint8_t *)found[p] : NULL, default_value, NULL));
  }
  if (status == GH_OK && values) send_back(d, &x, keys, values, vb, values_out);
  if (status == GH_OK && found) send_back(d, &x, keys, found, 1, (void *const *)found_out);
  free_results(&x, values);
  free_results(&x, found);
  free_split(&x);
  return status;
}

gh_status gh_dist_erase(gh_dist *d, const void *const *keys, const uint64_t *n, uint8_t *const *erased_out,
                        uint64_t *erased) {
  gh_status status = check_slices(d, "gh_dist_erase", keys, n);
  if (erased) *erased = 0;
  if (status != GH_OK) return status;
  if (d->cuda) {
    gh_dist_call call = {GH_DIST_ERASE, keys, NULL, n, GH_KEEP_FIRST, erased_out, NULL, NULL, 0};
    return cuda_call(d, &call, 0, erased);
  }
  /* From here on erased_out and *erased always say which keys this call removed. */
  split x;
  char **flags;
  status = split_with_flags(d, "gh_dist_erase", &x, keys, NULL, n, &flags);
  if (status != GH_OK) {
    fill_slices(d, n, erased_out, 0);
    return status;
  }
  /* Every partition runs, also after one failed (a failed gh_erase erases nothing). */
  uint64_t total = 0;
  for (unsigned p = 0; p < d->m; ++p) {
    uint64_t count = 0;
    const gh_status got = gh_erase(d->tables[p], x.recv_keys[p], x.recv_n[p], (uint8_t *)flags[p], &count, NULL);
    if (got != GH_OK) memset(flags[p], 0, x.recv_n[p]);
    total += count;
    if (status == GH_OK) status = partition_status(d, "gh_dist_erase", p, got);
  }
  if (erased_out) send_back(d, &x, keys, flags, 1, (void *const *)erased_out);
  if (erased) *erased = total;
  free_results(&x, flags);
  free_split(&x);
  return status;
}

/* ---- Host-sided operations ------------------------------------------------------------------- */

/* The checks of a host-sided call: one host array each. */
static gh_status check_host_arrays(gh_dist *d, const char *fn, const void *keys, const void *values, uint64_t n) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  if (n && keys == NULL) return fail(d, GH_ERR_INVALID_ARGUMENT, "%s: keys is NULL for %llu keys", fn, (unsigned long long)n);
  if (n && values == NULL && d->config.table.value_bits && strcmp(fn, "gh_dist_insert_host") == 0)
    return fail(d, GH_ERR_INVALID_ARGUMENT, "%s: values is NULL", fn);
  if (n && (gh__cuda_pointer_location(keys) == GH_POINTER_DEVICE || (values && gh__cuda_pointer_location(values) == GH_POINTER_DEVICE)))
    return fail(d, GH_ERR_INVALID_ARGUMENT, "%s: the arrays must be in host memory (device slices: the slice calls)", fn);
  return GH_OK;
}

/* A host-sided call on the host backend: batch after batch of m * B keys (B the keys of
 * staging_bytes), each cut into m slices in array order and run as a slice call. Insert and
 * erase run every batch; a find stops at its first failure. The first failure's message stays. */
static gh_status host_batches(gh_dist *d, gh_dist_call *c, uint64_t *count) {
  const unsigned m = d->m;
  const size_t kb = d->config.table.key_bits / 8u, vb = d->config.table.value_bits / 8u;
  const size_t vb_in = c->op == GH_DIST_INSERT ? vb : 0;
  const uint64_t per_slice = d->config.staging_bytes / (kb + vb_in) ? d->config.staging_bytes / (kb + vb_in) : 1u;
  const uint64_t n = c->n[0];
  const void *keys[GH_DIST_MAX_PARTITIONS], *values[GH_DIST_MAX_PARTITIONS];
  uint64_t sizes[GH_DIST_MAX_PARTITIONS];
  uint8_t *flags[GH_DIST_MAX_PARTITIONS];
  void *found_values[GH_DIST_MAX_PARTITIONS];
  char first_error[GH_DIST_ERROR_CAPACITY] = "";
  gh_status first = GH_OK;
  if (count) *count = 0;
  for (uint64_t lo = 0; lo < n; lo += (uint64_t)m * per_slice) {
    const uint64_t len = n - lo < (uint64_t)m * per_slice ? n - lo : (uint64_t)m * per_slice;
    for (unsigned s = 0; s < m; ++s) {
      const uint64_t begin = lo + len * s / m;
      sizes[s] = lo + len * (s + 1u) / m - begin;
      keys[s] = (const char *)c->keys[0] + begin * kb;
      values[s] = vb_in ? (const char *)c->values[0] + begin * vb : NULL;
      flags[s] = c->flags_out && c->flags_out[0] ? c->flags_out[0] + begin : NULL;
      found_values[s] = c->values_out && c->values_out[0] ? (char *)c->values_out[0] + begin * vb : NULL;
    }
    uint64_t batch_count = 0;
    gh_status got;
    if (c->op == GH_DIST_INSERT)
      got = gh_dist_insert(d, keys, values, sizes, c->policy, flags[0] ? flags : NULL, &batch_count);
    else if (c->op == GH_DIST_ERASE)
      got = gh_dist_erase(d, keys, sizes, flags[0] ? flags : NULL, &batch_count);
    else
      got = gh_dist_find(d, keys, sizes, found_values[0] ? found_values : NULL, flags[0] ? flags : NULL,
                         c->default_value);
    if (count) *count += batch_count;
    if (got != GH_OK && first == GH_OK) {
      first = got;
      memcpy(first_error, d->last_error, sizeof first_error);
    }
    if (got != GH_OK && c->op == GH_DIST_FIND) break;
  }
  memcpy(d->last_error, first_error, sizeof first_error);
  return first;
}

gh_status gh_dist_insert_host(gh_dist *d, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                              uint8_t *failed_out, uint64_t *failed) {
  const gh_status status = check_host_arrays(d, "gh_dist_insert_host", keys, values, n);
  if (failed) *failed = 0;
  if (status != GH_OK) return status;
  const void *const key_array[1] = {keys}, *const value_array[1] = {values};
  uint8_t *const flag_array[1] = {failed_out};
  gh_dist_call call = {GH_DIST_INSERT, key_array, value_array, &n, policy, flag_array, NULL, NULL, 0};
  return d->cuda ? cuda_call(d, &call, 1, failed) : host_batches(d, &call, failed);
}

gh_status gh_dist_find_host(gh_dist *d, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                            const void *default_value) {
  const gh_status status = check_host_arrays(d, "gh_dist_find_host", keys, NULL, n);
  if (status != GH_OK) return status;
  if ((values_out && gh__cuda_pointer_location(values_out) == GH_POINTER_DEVICE) ||
      (found_out && gh__cuda_pointer_location(found_out) == GH_POINTER_DEVICE))
    return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_find_host: the outputs must be in host memory");
  const void *const key_array[1] = {keys};
  uint8_t *const flag_array[1] = {found_out};
  void *const value_array[1] = {values_out};
  gh_dist_call call = {GH_DIST_FIND, key_array, NULL, &n, GH_KEEP_FIRST, flag_array, value_array, default_value, 0};
  return d->cuda ? cuda_call(d, &call, 1, NULL) : host_batches(d, &call, NULL);
}

/* ---- Timings and the exchange's ceiling ------------------------------------------------------ */

gh_status gh_dist_last_times(const gh_dist *d, gh_dist_times *times) {
  if (d == NULL || times == NULL) return GH_ERR_INVALID_ARGUMENT;
  memset(times, 0, sizeof *times);
#ifdef GH_HAVE_CUDA
  if (d->cuda) gh__dist_cuda_times(d->cuda, times);
#endif
  return GH_OK;
}

gh_status gh_dist_measure_exchange(gh_dist *d, uint64_t bytes_per_gpu, unsigned repeats, double *gb_per_s) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  if (gb_per_s == NULL || repeats == 0 || bytes_per_gpu < d->m)
    return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_measure_exchange: gb_per_s NULL, no repeats, or fewer bytes than "
                "partitions");
  if (d->cuda == NULL)
    return fail(d, GH_ERR_UNSUPPORTED, "gh_dist_measure_exchange: the host backend has no communicator to measure");
#ifdef GH_HAVE_CUDA
  return gh__dist_cuda_measure_exchange(d->cuda, bytes_per_gpu, repeats, gb_per_s, d->last_error, sizeof d->last_error);
#else
  return GH_ERR_INTERNAL;
#endif
}

/* ---- The whole table ------------------------------------------------------------------------- */

/* What one partition says about itself; one process per GPU gathers every partition's. */
typedef struct partition_record {
  int64_t status;
  uint64_t size, capacity;
  gh_stats stats;
} partition_record;

/* Every partition's record (all: m entries); a failure's message names the first failing
 * partition. */
/* A local table's record. */
static gh_status fill_record(gh_table *t, partition_record *record) {
  gh_status status = gh_size(t, &record->size);
  if (status == GH_OK) status = gh_capacity(t, &record->capacity);
  if (status == GH_OK) status = gh_get_stats(t, &record->stats);
  record->status = status;
  return status;
}

static gh_status gather_records(gh_dist *d, const char *fn, partition_record *all) {
  partition_record *mine = (partition_record *)layer_alloc(&d->config.table, d->local * sizeof *mine);
  if (mine == NULL) return fail(d, GH_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  unsigned failed_here = d->m;
  for (unsigned i = 0; i < d->local; ++i) {
    const gh_status status = fill_record(d->tables[i], &mine[i]);
    if (status != GH_OK && failed_here == d->m) failed_here = i, partition_status(d, fn, i, status);
  }
  gh_status status = GH_OK;
#ifdef GH_HAVE_CUDA
  if (d->cuda) status = gh__dist_cuda_allgather(d->cuda, mine, sizeof *mine, all, d->last_error, sizeof d->last_error);
#endif
  if (d->cuda == NULL) memcpy(all, mine, d->m * sizeof *mine);
  layer_free(&d->config.table, mine);
  for (unsigned p = 0; status == GH_OK && p < d->m; ++p) {
    if (all[p].status == GH_OK) continue;
    status = (gh_status)all[p].status;
    if (p < d->first || p >= d->first + d->local)
      fail(d, status, "%s: partition %u of %u failed (%s: see that rank's gh_dist_last_error)", fn, p, d->m,
           gh_status_name(status));
  }
  return status;
}

/* A whole-table count: the sum over the partitions of the local tables' counts, gathered over
 * the processes when some partitions are elsewhere. */
static gh_status sum_over(gh_dist *d, const char *fn, gh_status (*count)(gh_table *, uint64_t *),
                          size_t record_field, uint64_t *sum) {
  gh_status status = check_partition(d, fn, 0, sum);
  uint64_t total = 0;
  if (status == GH_OK && remote_partitions(d)) {
    partition_record *all = (partition_record *)layer_alloc(&d->config.table, d->m * sizeof *all);
    status = all ? gather_records(d, fn, all) : fail(d, GH_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    for (unsigned p = 0; status == GH_OK && p < d->m; ++p) {
      uint64_t one;
      memcpy(&one, (const char *)&all[p] + record_field, sizeof one);
      total += one;
    }
    layer_free(&d->config.table, all);
  }
  for (unsigned i = 0; status == GH_OK && !remote_partitions(d) && i < d->local; ++i) {
    uint64_t one = 0;
    status = partition_status(d, fn, i, count(d->tables[i], &one));
    total += one;
  }
  if (status != GH_OK) return status;
  *sum = total;
  return GH_OK;
}

gh_status gh_dist_size(gh_dist *d, uint64_t *size) {
  return sum_over(d, "gh_dist_size", gh_size, offsetof(partition_record, size), size);
}
gh_status gh_dist_capacity(gh_dist *d, uint64_t *capacity) {
  return sum_over(d, "gh_dist_capacity", gh_capacity, offsetof(partition_record, capacity), capacity);
}

/* Partition p's local table when the call answers without gathering (the table is local, or the
 * other processes cannot be reached); NULL, with the failure in the message, when p is elsewhere. */
static gh_table *answering_table(gh_dist *d, const char *fn, unsigned p) {
  if (p >= d->first && p < d->first + d->local) return d->tables[p - d->first];
  fail(d, GH_ERR_PEER, "%s: partition %u is in another process, which cannot be reached (a communicator failed)", fn, p);
  return NULL;
}

/* Partition p's record: from its local table when the call answers alone, else gathered. */
static gh_status partition_record_of(gh_dist *d, const char *fn, unsigned p, partition_record *record) {
  if (!gathers(d)) {
    gh_table *t = answering_table(d, fn, p);
    return t ? partition_status(d, fn, p - d->first, fill_record(t, record)) : GH_ERR_PEER;
  }
  partition_record *all = (partition_record *)layer_alloc(&d->config.table, d->m * sizeof *all);
  const gh_status status = all ? gather_records(d, fn, all) : fail(d, GH_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  if (status == GH_OK) *record = all[p];
  layer_free(&d->config.table, all);
  return status;
}

gh_status gh_dist_partition_size(gh_dist *d, unsigned p, uint64_t *size) {
  partition_record record;
  gh_status status = check_partition(d, "gh_dist_partition_size", p, size);
  if (status == GH_OK) status = partition_record_of(d, "gh_dist_partition_size", p, &record);
  if (status == GH_OK) *size = record.size;
  return status;
}

gh_status gh_dist_partition_stats(gh_dist *d, unsigned p, gh_stats *stats) {
  partition_record record;
  gh_status status = check_partition(d, "gh_dist_partition_stats", p, stats);
  if (status == GH_OK) status = partition_record_of(d, "gh_dist_partition_stats", p, &record);
  if (status == GH_OK) *stats = record.stats;
  return status;
}

static uint64_t larger(uint64_t a, uint64_t b) { return a > b ? a : b; }

gh_status gh_dist_get_stats(gh_dist *d, gh_stats *stats) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  if (stats == NULL) return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_get_stats: stats is NULL");
  partition_record *all = (partition_record *)layer_alloc(&d->config.table, d->m * sizeof *all);
  if (all == NULL) return fail(d, GH_ERR_OUT_OF_MEMORY, "gh_dist_get_stats: out of host memory");
  gh_status status = GH_OK;
  if (remote_partitions(d)) status = gather_records(d, "gh_dist_get_stats", all);
  for (unsigned p = 0; status == GH_OK && !remote_partitions(d) && p < d->m; ++p)
    status = gh_dist_partition_stats(d, p, &all[p].stats);
  gh_stats sum;
  memset(&sum, 0, sizeof sum);
  for (unsigned p = 0; status == GH_OK && p < d->m; ++p) {
    const gh_stats *one = &all[p].stats;
    sum.size += one->size, sum.distinct_keys += one->distinct_keys, sum.slots += one->slots;
    sum.restarts += one->restarts, sum.grows += one->grows, sum.stash_keys += one->stash_keys;
    sum.eviction_limit = larger(sum.eviction_limit, one->eviction_limit);
    sum.subtables = one->subtables;
    for (size_t i = 0; i < sizeof sum.subtable_keys / sizeof sum.subtable_keys[0]; ++i)
      sum.subtable_buckets[i] += one->subtable_buckets[i], sum.subtable_keys[i] += one->subtable_keys[i];
    sum.upsizes += one->upsizes, sum.downsizes += one->downsizes, sum.evictions += one->evictions;
    sum.longest_search = larger(sum.longest_search, one->longest_search);
    sum.insert_failures += one->insert_failures, sum.resize_seconds += one->resize_seconds;
    sum.tombstones += one->tombstones;
  }
  layer_free(&d->config.table, all);
  if (status == GH_OK) *stats = sum;
  return status;
}

/* One process per GPU: every rank learns the first partition's failure of a call that each ran
 * on its own partitions (status: this process's). */
static gh_status agree(gh_dist *d, const char *fn, gh_status status) {
  if (!gathers(d)) return status;
#ifdef GH_HAVE_CUDA
  int64_t mine = status, all[GH_DIST_MAX_PARTITIONS];
  char own_error[GH_DIST_ERROR_CAPACITY];
  memcpy(own_error, d->last_error, sizeof own_error);
  const gh_status gathered = gh__dist_cuda_allgather(d->cuda, &mine, sizeof mine, all, d->last_error,
                                                     sizeof d->last_error);
  if (gathered != GH_OK) return gathered;
  memcpy(d->last_error, own_error, sizeof own_error);
  for (unsigned p = 0; p < d->m; ++p) {
    if (all[p] == GH_OK) continue;
    if (p < d->first || p >= d->first + d->local)
      fail(d, (gh_status)all[p], "%s: partition %u of %u failed (%s: see that rank's gh_dist_last_error)", fn, p, d->m,
           gh_status_name((gh_status)all[p]));
    return (gh_status)all[p];
  }
#else
  (void)fn;
#endif
  return GH_OK;
}

gh_status gh_dist_clear(gh_dist *d) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  if (remote_partitions(d) && !connected(d))
    return fail(d, GH_ERR_PEER, "gh_dist_clear: the other processes cannot be reached (a communicator failed); "
                "nothing was cleared");
  gh_status status = GH_OK;
  for (unsigned i = 0; status == GH_OK && i < d->local; ++i)
    status = partition_status(d, "gh_dist_clear", i, gh_clear(d->tables[i], NULL));
  return agree(d, "gh_dist_clear", status);
}

/* This process's partitions, one by one: entries (up to out_capacity - at) exported at keys_out + at. */
gh_status gh_dist_export(gh_dist *d, void *keys_out, void *values_out, uint64_t out_capacity, uint64_t *count) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  if (count == NULL) return fail(d, GH_ERR_INVALID_ARGUMENT, "gh_dist_export: count is NULL");
  *count = 0;
  uint64_t size = 0;
  gh_status status = GH_OK;
  for (unsigned i = 0; status == GH_OK && i < d->local; ++i) {
    uint64_t one = 0;
    status = partition_status(d, "gh_dist_export", i, gh_size(d->tables[i], &one));
    size += one;
  }
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
  for (unsigned i = 0; i < d->local; ++i) {
    uint64_t got = 0;
    status = partition_status(d, "gh_dist_export", i,
                              gh_export(d->tables[i], (char *)keys_out + at * kb,
                                        values_out ? (char *)values_out + at * vb : NULL, out_capacity - at, &got, NULL));
    if (status != GH_OK) return status;
    at += got;
  }
  *count = at;
  return GH_OK;
}

/* Each local partition validated, and each of its keys against p(k); one process per GPU: every
 * rank returns the first failing partition's status. */
gh_status gh_dist_validate(gh_dist *d) {
  if (d == NULL) return GH_ERR_INVALID_ARGUMENT;
  d->last_error[0] = '\0';
  const gh_config *c = &d->config.table;
  const size_t kb = c->key_bits / 8u, vb = c->value_bits / 8u;
  gh_status status = GH_OK;
  for (unsigned i = 0; status == GH_OK && i < d->local; ++i) {
    const unsigned p = d->first + i;
    uint64_t size = 0, got = 0;
    status = partition_status(d, "gh_dist_validate", i, gh_validate(d->tables[i]));
    if (status == GH_OK) status = partition_status(d, "gh_dist_validate", i, gh_size(d->tables[i], &size));
    if (status != GH_OK) break;
    /* The partition's keys (with its values, which gh_export wants), each against p(k). */
    void *keys = layer_alloc(c, size * kb), *values = vb ? layer_alloc(c, size * vb) : NULL;
    if (keys == NULL || (vb && values == NULL))
      status = fail(d, GH_ERR_OUT_OF_MEMORY, "gh_dist_validate: out of host memory");
    else
      status = partition_status(d, "gh_dist_validate", i, gh_export(d->tables[i], keys, values, size, &got, NULL));
    for (uint64_t k = 0; status == GH_OK && k < got; ++k) {
      const uint64_t key = gh__read_word(keys, k, c->key_bits);
      if (partition_of(d, key) != p)
        status = fail(d, GH_ERR_CORRUPT, "gh_dist_validate: key %llu is stored in partition %u, p(k) = %u",
                      (unsigned long long)key, p, partition_of(d, key));
    }
    layer_free(c, keys), layer_free(c, values);
  }
  return agree(d, "gh_dist_validate", status);
}
