/* table.c - the public API: argument checks at the boundary, moving arrays to the side the
 * backend runs on, and dispatch through the table's ops. Designs are known only through their
 * descriptors (core/design.h, listed in src/registry.h): nothing here names one. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cuda_runtime.h"
#include "core/design.h"
#include "core/toolkit.h"

/* ---- Errors ---------------------------------------------------------------------------------- */

static _Thread_local char create_error[GH_ERROR_CAPACITY];

const char *gh_last_create_error(void) { return create_error; }

gh_status gh__create_fail(gh_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(create_error, sizeof create_error, format, args);
  va_end(args);
  return status;
}

gh_status gh__fail(gh_table *t, gh_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(t->last_error, sizeof t->last_error, format, args);
  va_end(args);
  return status;
}

void gh__clear_error(gh_table *t) { t->last_error[0] = '\0'; }

const char *gh_last_error(const gh_table *t) {
  return t ? t->last_error : "table is NULL";
}

/* ---- Memory ---------------------------------------------------------------------------------- */

#define GH_HOST_ALIGNMENT 64u

void *gh__alloc(gh_table *t, size_t bytes, gh_memory_kind kind) {
  void *ptr;
  if (bytes == 0) bytes = 1;
  if (t->config.allocator.alloc) {
    ptr = t->config.allocator.alloc(t->config.allocator.ctx, bytes, kind);
  } else if (kind == GH_MEMORY_DEVICE) {
    ptr = gh__cuda_malloc(bytes);
  } else {
    const size_t rounded = (bytes + GH_HOST_ALIGNMENT - 1) / GH_HOST_ALIGNMENT * GH_HOST_ALIGNMENT;
    ptr = rounded < bytes ? NULL : aligned_alloc(GH_HOST_ALIGNMENT, rounded);
  }
  if (ptr) {
    if (kind == GH_MEMORY_DEVICE) t->device_bytes += bytes;
    else t->host_bytes += bytes;
  }
  return ptr;
}

void gh__free(gh_table *t, void *ptr, size_t bytes, gh_memory_kind kind) {
  if (ptr == NULL) return;
  if (bytes == 0) bytes = 1;
  if (t->config.allocator.free) t->config.allocator.free(t->config.allocator.ctx, ptr, bytes, kind);
  else if (kind == GH_MEMORY_DEVICE) gh__cuda_free(ptr);
  else free(ptr);
  if (kind == GH_MEMORY_DEVICE) t->device_bytes -= bytes;
  else t->host_bytes -= bytes;
}

/* ---- Create / destroy ------------------------------------------------------------------------ */

/* The ops a resolved config runs on, or GH_ERR_UNSUPPORTED with the reason in message. */
static gh_status design_ops(const gh_config *c, const gh_design_descriptor **design, const gh_table_ops **ops,
                            char *message, size_t size) {
  char names[128];
  const char *backend = c->backend == GH_BACKEND_CUDA ? "CUDA" : "host";
  *design = gh__design_lookup(c->design);
  *ops = gh__design_ops(*design, c->backend);
  if (*design == NULL) {
    snprintf(message, size, "design %d is not in this gpuhash (it has: %s); the others arrive with "
             "their issues", (int)c->design, gh__design_list(names, sizeof names));
    return GH_ERR_UNSUPPORTED;
  }
  if (*ops == NULL) {
    snprintf(message, size, "the %s design has no %s backend in this gpuhash", (*design)->name, backend);
    return GH_ERR_UNSUPPORTED;
  }
  if ((*ops)->init == NULL || (*ops)->release == NULL || (*ops)->size == NULL) {
    snprintf(message, size, "the %s ops lack a required entry (init, release or size)", (*ops)->name);
    return GH_ERR_INTERNAL;
  }
  return GH_OK;
}

gh_status gh_create(const gh_config *config, gh_table **table) {
  gh_config resolved;
  const gh_design_descriptor *design;
  const gh_table_ops *ops;
  gh_table *t;
  gh_status status;
  create_error[0] = '\0';
  if (table == NULL) return gh__create_fail(GH_ERR_INVALID_ARGUMENT, "gh_create: table (the output handle) is NULL");
  *table = NULL;
  status = gh__config_read(config, &resolved, create_error, sizeof create_error);
  if (status == GH_OK) status = gh__config_resolve(&resolved, create_error, sizeof create_error);
  if (status == GH_OK) status = design_ops(&resolved, &design, &ops, create_error, sizeof create_error);
  if (status != GH_OK) return status;
  t = (gh_table *)calloc(1, sizeof *t);
  if (t == NULL) return gh__create_fail(GH_ERR_OUT_OF_MEMORY, "gh_create: out of host memory for the handle");
  t->config = resolved;
  t->created_capacity = resolved.capacity;
  t->design = design;
  t->ops = ops;
  if (resolved.backend == GH_BACKEND_CUDA) {
    status = gh__cuda_use_device(resolved.device, t->last_error, sizeof t->last_error);
  }
  if (status == GH_OK) status = t->ops->init(t);
  /* init queues its clearing on the default stream: the table is ready once that has run. */
  if (status == GH_OK && (status = gh__sync(t, NULL)) != GH_OK) t->ops->release(t);
  if (status != GH_OK) {
    gh__create_fail(status, "%s", t->last_error);
    gh__release_all_deferred(t);
    free(t);
    return status;
  }
  *table = t;
  return GH_OK;
}

void gh_destroy(gh_table *t) {
  if (t == NULL) return;
  if (t->config.backend == GH_BACKEND_CUDA) gh__cuda_use_device(t->config.device, NULL, 0);
  /* Kernels of any stream (user kernels on a device view too) may still use the table. */
  gh__device_sync(t);
  t->ops->release(t);
  /* The scratch pools keep what the table's calls freed into them: given back with the table. */
  if (t->config.backend == GH_BACKEND_CUDA) gh__cuda_pool_trim();
  free(t);
}

/* ---- Moving arrays to the backend's side ----------------------------------------------------- */

/* A bulk call stages its arrays (copies queued on the call's stream), runs the op (which queues
 * its work on the same stream), copies outputs back (queued too) and waits for the stream ONCE, at
 * the end (call_end). The one earlier wait is the host backend's: its CPU threads read staged
 * inputs directly, so those copies must have landed before the op runs (call_ready). */

/* How a staged array travels. IN is copied in. OUT goes back to the caller after success only (a
 * failed call writes no output), or also after the one partial result its call names (failed_out
 * on GH_ERR_TABLE_FULL, say). INOUT is an output the backend writes only in part: it is copied in
 * first, so that the positions the backend leaves alone keep the caller's bytes. */
typedef enum gh_stage_role { GH_STAGE_IN = 0, GH_STAGE_OUT = 1, GH_STAGE_INOUT = 2 } gh_stage_role;

/* One array argument of a bulk call, as the backend sees it. */
typedef struct gh_staged {
  void *resident;      /* what the backend gets */
  void *user;          /* what the caller passed */
  size_t bytes;
  gh_memory_kind kind; /* of the copy, when owned */
  int owned;           /* resident is a temporary copy */
  gh_stage_role role;
  gh_status partial;   /* an output also goes back after this status (GH_OK: none) */
} gh_staged;

static int backend_can_use(const gh_table *t, gh_pointer_location where) {
  if (where == GH_POINTER_MANAGED) return 1;
  return (t->config.backend == GH_BACKEND_CUDA) == (where == GH_POINTER_DEVICE);
}

/* Makes user (NULL allowed) usable by the backend: directly, or through a temporary copy (inputs
 * are copied in; outputs are copied back by call_end). */
static gh_status stage(gh_table *t, gh_staged *s, const void *user, size_t bytes, gh_stage_role role,
                       gh_status partial, void *stream) {
  memset(s, 0, sizeof *s);
  s->user = (void *)user;
  s->resident = (void *)user;
  s->bytes = bytes;
  s->role = role;
  s->partial = partial;
  if (user == NULL || bytes == 0 || backend_can_use(t, gh__cuda_pointer_location(user)))
    return GH_OK;
  s->kind = gh__backend_memory(t);
  s->resident = gh__alloc(t, bytes, s->kind);
  if (s->resident == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "could not allocate %zu bytes to stage an array for "
                    "the %s backend; nothing was changed", bytes,
                    s->kind == GH_MEMORY_DEVICE ? "CUDA" : "host");
  s->owned = 1;
  return role == GH_STAGE_OUT ? GH_OK
                              : gh__cuda_copy(s->resident, user, bytes, stream, t->last_error, sizeof t->last_error);
}

#define GH_MAX_STAGED 5

/* The staged arrays of one call. */
typedef struct gh_call {
  gh_table *t;
  void *stream;
  gh_staged arrays[GH_MAX_STAGED];
  int count;
} gh_call;

static void *call_stage_as(gh_call *c, const void *user, size_t bytes, gh_stage_role role, gh_status partial,
                           gh_status *status) {
  gh_staged *s = &c->arrays[c->count++];
  if (*status != GH_OK) {
    memset(s, 0, sizeof *s);
    return NULL;
  }
  *status = stage(c->t, s, user, bytes, role, partial, c->stream);
  return s->resident;
}

/* An input (is_output 0) or an output written in full on success (is_output 1). */
static void *call_stage(gh_call *c, const void *user, size_t bytes, int is_output, gh_status *status) {
  return call_stage_as(c, user, bytes, is_output ? GH_STAGE_OUT : GH_STAGE_IN, GH_OK, status);
}

/* After staging: status, once the host backend's copied inputs have landed (see above). */
static gh_status call_ready(gh_call *c, gh_status status) {
  if (status != GH_OK || c->t->config.backend == GH_BACKEND_CUDA) return status;
  for (int i = 0; i < c->count; ++i)
    if (c->arrays[i].owned && c->arrays[i].role != GH_STAGE_OUT)
      return gh__cuda_sync(c->stream, c->t->last_error, sizeof c->t->last_error);
  return GH_OK;
}

/* Ends a call: queues the copies of outputs back when the backend ran (ran = 1) and succeeded, or
 * ended in the partial result an output names (GH_ERR_TABLE_FULL: failed_out); waits for the stream
 * (the call's one synchronisation: its kernels, its copies, and the inputs they read); then frees
 * the temporaries and what the op deferred. */
static gh_status call_end(gh_call *c, gh_status status, int ran) {
  gh_table *t = c->t;
  char copy_error[GH_ERROR_CAPACITY] = "", wait_error[GH_ERROR_CAPACITY] = "";
  gh_status copied = GH_OK, waited = GH_OK;
  int staged = 0, gave_back = status == GH_OK;
  for (int i = 0; i < c->count; ++i) {
    gh_staged *s = &c->arrays[i];
    if (!s->owned) continue;
    staged = 1;
    const int returned = status == GH_OK || (s->partial != GH_OK && status == s->partial);
    gave_back |= ran && s->role != GH_STAGE_IN && returned;
    if (ran && s->role != GH_STAGE_IN && returned && copied == GH_OK)
      copied = gh__cuda_copy(s->user, s->resident, s->bytes, c->stream, copy_error, sizeof copy_error);
  }
  if (staged || t->config.backend == GH_BACKEND_CUDA)
    waited = gh__cuda_sync(c->stream, wait_error, sizeof wait_error);
  gh__release_deferred(t, c->stream);
  /* Deferred on another stream (the default one, say): wait for the device before freeing. */
  if (t->deferred != NULL) {
    gh__cuda_device_sync(NULL, 0);
    gh__release_all_deferred(t);
  }
  for (int i = 0; i < c->count; ++i) {
    gh_staged *s = &c->arrays[i];
    if (s->owned) gh__free(t, s->resident, s->bytes, s->kind);
    s->owned = 0;
  }
  /* A result the caller is handed (a success, or a partial one such as GH_ERR_TABLE_FULL) is only
   * as good as the copies and the wait behind it. */
  if (gave_back || status == GH_ERR_TABLE_FULL) {
    if (copied != GH_OK) status = gh__fail(t, copied, "copying results back failed: %s", copy_error);
    else if (waited != GH_OK) status = gh__fail(t, waited, "the operation failed on the device: %s", wait_error);
  }
  /* A backend that recovered from a step it first reported leaves no message behind. */
  if (status == GH_OK) gh__clear_error(t);
  return status;
}

/* ---- Argument checks ------------------------------------------------------------------------- */

uint64_t gh__value_word(const gh_table *t, const void *value) {
  if (t->config.value_bits == 0) return 0;
  return t->config.value_bits == 64 ? *(const uint64_t *)value : *(const uint32_t *)value;
}

static int compare_keys(const void *x, const void *y) {
  const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

uint64_t gh__distinct_keys_host(uint64_t *keys, uint64_t n, int *has_repeat, uint64_t *repeated) {
  qsort(keys, (size_t)n, sizeof *keys, compare_keys);
  uint64_t distinct = n ? 1u : 0u;
  *has_repeat = 0;
  for (uint64_t i = 1; i < n; ++i) {
    if (keys[i] != keys[i - 1]) {
      distinct += 1;
    } else if (!*has_repeat) {
      *has_repeat = 1;
      if (repeated) *repeated = keys[i];
    }
  }
  return distinct;
}

static size_t key_bytes(const gh_table *t) { return t->config.key_bits / 8u; }
static size_t value_bytes(const gh_table *t) { return t->config.value_bits / 8u; }

/* The checks every bulk call starts with (after GH_ENTER). Returns GH_OK when the call should
 * proceed. */
static gh_status begin_bulk(gh_table *t, const char *fn, const void *keys, uint64_t n) {
  if (n > 0 && keys == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "%s: keys is NULL with n = %llu", fn, (unsigned long long)n);
  if (n > (uint64_t)(SIZE_MAX / 8u))
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "%s: n = %llu is larger than any array can be", fn, (unsigned long long)n);
  if (t->config.backend == GH_BACKEND_CUDA)
    return gh__cuda_use_device(t->config.device, t->last_error, sizeof t->last_error);
  return GH_OK;
}

/* How every public call on a table starts: a NULL table is refused, and the last error is cleared,
 * so that gh_last_error() is "" after every call that returns GH_OK. */
#define GH_ENTER(t)                                                                         \
  do {                                                                                      \
    if ((t) == NULL) return GH_ERR_INVALID_ARGUMENT;                                        \
    gh__clear_error(t);                                                                     \
  } while (0)

static gh_status unsupported(gh_table *t, const char *call, const char *offered_by) {
  return gh__fail(t, GH_ERR_UNSUPPORTED, "%s is not supported by the %s table: %s; nothing was changed",
                  call, t->ops->name, offered_by);
}

/* The one check of an optional op: a NULL entry of the table's ops answers GH_ERR_UNSUPPORTED,
 * naming the public call and what offers it. Every optional op goes through it. */
#define GH_REQUIRE_OP(t, op, call, offered_by)                                              \
  do {                                                                                      \
    if ((t)->ops->op == NULL) return unsupported((t), (call), (offered_by));                \
  } while (0)

#define GH_OFFERED_BY_DESIGN "see gh_design_info() for what each design offers"

/* ---- Bulk operations ------------------------------------------------------------------------- */

/* The checks of values and policy that gh_insert and gh_mixed share. */
static gh_status check_insert_args(gh_table *t, const char *fn, const void *values, uint64_t n, gh_dup_policy policy) {
  const gh_variant variant = t->config.variant;
  const int takes_values = t->config.value_bits != 0 && variant != GH_VARIANT_COMPACTING;
  if (!takes_values && values != NULL)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "%s: values must be NULL: %s", fn,
                    variant == GH_VARIANT_COMPACTING ? "a compacting table assigns the ids itself"
                                                     : "the table is a set (value_bits = 0)");
  const int index_payloads = variant == GH_VARIANT_MULTIVALUE && (t->design->capabilities & GH_CAP_INDEX_PAYLOADS);
  if (takes_values && values == NULL && n > 0 && !index_payloads)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "%s: values is NULL but the table stores %u-bit values", fn, t->config.value_bits);
  if (takes_values && values == NULL && index_payloads && t->config.value_bits == 32 && n > (1ull << 32))
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "%s: values is NULL, so each entry's value is its position, and %llu "
                    "positions do not fit the table's 32-bit values (value_bits 64 holds them); nothing was changed", fn,
                    (unsigned long long)n);
  if ((int)policy < GH_KEEP_FIRST || (int)policy > GH_APPEND)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "%s: policy = %d is not a gh_dup_policy value", fn, (int)policy);
  if (variant == GH_VARIANT_MULTIVALUE && policy != GH_APPEND)
    return gh__fail(t, GH_ERR_UNSUPPORTED, "%s: a multi-value table keeps every value of a key, so it "
                    "takes only GH_APPEND (policy %d would drop or merge values); nothing was changed", fn, (int)policy);
  if (variant != GH_VARIANT_MULTIVALUE && policy == GH_APPEND)
    return gh__fail(t, GH_ERR_UNSUPPORTED, "%s: GH_APPEND needs a multi-value table (variant "
                    "GH_VARIANT_MULTIVALUE); this one holds one value per key; nothing was changed", fn);
  if (variant == GH_VARIANT_COMPACTING && policy != GH_KEEP_FIRST)
    return gh__fail(t, GH_ERR_UNSUPPORTED, "%s: a compacting table gives each key one id for life, "
                    "so it takes only GH_KEEP_FIRST (policy %d would change ids); nothing was changed", fn, (int)policy);
  const unsigned value_bits = t->config.value_bits;
  if (value_bits != 0 && value_bits != 32 && value_bits != 64 && policy != GH_KEEP_FIRST && policy != GH_OVERWRITE)
    return gh__fail(t, GH_ERR_UNSUPPORTED, "%s: policy %s combines integer values; this table's values are "
                    "%u-byte records, which take GH_KEEP_FIRST or GH_OVERWRITE only; nothing was changed", fn,
                    gh__policy_name(policy), value_bits / 8u);
  if (variant == GH_VARIANT_MAP && !(t->design->map_policies & (1u << policy))) {
    char offered[96];
    return gh__fail(t, GH_ERR_UNSUPPORTED, "%s: %s tables do not take policy %s; they take %s; "
                    "nothing was changed", fn, t->design->name, gh__policy_name(policy),
                    gh__policy_list(offered, sizeof offered, t->design->map_policies));
  }
  return GH_OK;
}

/* The status of a bulk call whose inserts partly did not fit (flagged, every other operation
 * done): a design with a fixed capacity is full; one that grows (GH_CAP_GROWS) ran out of memory. */
static gh_status did_not_fit_status(const gh_table *t) {
  return (t->design->capabilities & GH_CAP_GROWS) ? GH_ERR_OUT_OF_MEMORY : GH_ERR_TABLE_FULL;
}

gh_status gh_insert(gh_table *t, const void *keys, const void *values, uint64_t n,
                    gh_dup_policy policy, uint8_t *failed_out, gh_stream stream) {
  GH_ENTER(t);
  GH_REQUIRE_OP(t, insert, "gh_insert", GH_OFFERED_BY_DESIGN);
  gh_status status = begin_bulk(t, "gh_insert", keys, n);
  if (status != GH_OK) return status;
  status = check_insert_args(t, "gh_insert", values, n, policy);
  if (status != GH_OK) return status;
  if (n == 0) return GH_OK;

  gh_call c = {t, stream, {{0}}, 0};
  const void *k = call_stage(&c, keys, n * key_bytes(t), 0, &status);
  const void *v = call_stage(&c, values, values ? n * value_bytes(t) : 0, 0, &status);
  const gh_status partial = did_not_fit_status(t);
  uint8_t *f = (uint8_t *)call_stage_as(&c, failed_out, failed_out ? n : 0, GH_STAGE_OUT, partial, &status);
  status = call_ready(&c, status);
  if (status != GH_OK) return call_end(&c, status, 0);
  uint64_t failed = 0;
  status = t->ops->insert(t, k, v, n, policy, f, &failed, stream);
  /* Outputs go back only from an op that ran to its end (a failed op wrote nothing worth having). */
  const int ran = status == GH_OK;
  if (ran && failed > 0) {
    uint64_t size = 0;
    t->ops->size(t, &size);
    status = gh__fail(t, partial,
                      "%llu of %llu keys did not fit: %s (table load %.4f); every other key was "
                      "inserted, nothing else changed%s",
                      (unsigned long long)failed, (unsigned long long)n, t->design->did_not_fit,
                      (double)size / (double)t->config.capacity,
                      failed_out ? "; failed keys are flagged in failed_out" : "");
  }
  return call_end(&c, status, ran);
}

gh_status gh_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                  const void *default_value, gh_stream stream) {
  GH_ENTER(t);
  GH_REQUIRE_OP(t, find, "gh_find", GH_OFFERED_BY_DESIGN);
  gh_status status = begin_bulk(t, "gh_find", keys, n);
  if (status != GH_OK) return status;
  if (t->config.value_bits == 0 && values_out != NULL)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_find: the table is a set (value_bits = 0): values_out must be NULL; use found_out");
  if (values_out == NULL && found_out == NULL)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_find: values_out and found_out are both NULL");
  if (n == 0) return GH_OK;
  static const uint64_t zero_value[GH_MAX_VALUE_BITS / 64u] = {0};
  const void *fallback = default_value != NULL ? default_value : zero_value;

  gh_call c = {t, stream, {{0}}, 0};
  const void *k = call_stage(&c, keys, n * key_bytes(t), 0, &status);
  void *v = call_stage(&c, values_out, values_out ? n * value_bytes(t) : 0, 1, &status);
  uint8_t *f = (uint8_t *)call_stage(&c, found_out, found_out ? n : 0, 1, &status);
  status = call_ready(&c, status);
  if (status != GH_OK) return call_end(&c, status, 0);
  status = t->ops->find(t, k, n, v, f, fallback, stream);
  return call_end(&c, status, 1);
}

gh_status gh_contains(gh_table *t, const void *keys, uint64_t n, uint8_t *found_out, gh_stream stream) {
  GH_ENTER(t);
  if (found_out == NULL && n > 0)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_contains: found_out is NULL");
  if (found_out == NULL) return GH_OK;
  return gh_find(t, keys, n, NULL, found_out, NULL, stream);
}

gh_status gh_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out,
                   uint64_t *erased_count, gh_stream stream) {
  GH_ENTER(t);
  if (erased_count) *erased_count = 0;
  GH_REQUIRE_OP(t, erase, "gh_erase", "the design does not erase keys (GH_CAP_ERASE in gh_design_info())");
  gh_status status = begin_bulk(t, "gh_erase", keys, n);
  if (status != GH_OK || n == 0) return status;
  gh_call c = {t, stream, {{0}}, 0};
  const void *k = call_stage(&c, keys, n * key_bytes(t), 0, &status);
  uint8_t *e = (uint8_t *)call_stage(&c, erased_out, erased_out ? n : 0, 1, &status);
  status = call_ready(&c, status);
  if (status != GH_OK) return call_end(&c, status, 0);
  uint64_t erased = 0;
  status = t->ops->erase(t, k, n, e, &erased, stream);
  if (erased_count) *erased_count = erased;
  return call_end(&c, status, 1);
}

#define GH_OFFERED_BY_MULTIVALUE "only multi-value tables (GH_VARIANT_MULTIVALUE) hold several values per key"

/* gh_count and gh_find_all read the values of multi-value tables only. */
static gh_status require_multivalue(gh_table *t, const char *fn) {
  if (t->config.variant == GH_VARIANT_MULTIVALUE) return GH_OK;
  return gh__fail(t, GH_ERR_UNSUPPORTED, "%s: this %s table holds one value per key (variant %s); create it with "
                  "variant GH_VARIANT_MULTIVALUE to store several; nothing was changed", fn, t->design->name,
                  gh__variant_name(t->config.variant));
}

gh_status gh_count(gh_table *t, const void *keys, uint64_t n, uint64_t *counts_out, uint64_t *total,
                   gh_stream stream) {
  GH_ENTER(t);
  GH_REQUIRE_OP(t, count, "gh_count", GH_OFFERED_BY_MULTIVALUE);
  if (require_multivalue(t, "gh_count") != GH_OK) return GH_ERR_UNSUPPORTED;
  gh_status status = begin_bulk(t, "gh_count", keys, n);
  if (status != GH_OK || n == 0) return status;
  gh_call c = {t, stream, {{0}}, 0};
  const void *k = call_stage(&c, keys, n * key_bytes(t), 0, &status);
  uint64_t *o = (uint64_t *)call_stage(&c, counts_out, counts_out ? n * sizeof(uint64_t) : 0, 1, &status);
  status = call_ready(&c, status);
  if (status != GH_OK) return call_end(&c, status, 0);
  status = t->ops->count(t, k, n, o, total, stream);
  return call_end(&c, status, 1);
}

gh_status gh_find_all(gh_table *t, const void *keys, uint64_t n, uint64_t *offsets_out,
                      void *values_out, uint64_t values_capacity, gh_stream stream) {
  GH_ENTER(t);
  GH_REQUIRE_OP(t, find_all, "gh_find_all", GH_OFFERED_BY_MULTIVALUE);
  if (require_multivalue(t, "gh_find_all") != GH_OK) return GH_ERR_UNSUPPORTED;
  gh_status status = begin_bulk(t, "gh_find_all", keys, n);
  if (status != GH_OK || n == 0) return status;
  if (offsets_out == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_find_all: offsets_out is NULL");
  gh_call c = {t, stream, {{0}}, 0};
  const void *k = call_stage(&c, keys, n * key_bytes(t), 0, &status);
  uint64_t *o = (uint64_t *)call_stage_as(&c, offsets_out, (n + 1) * sizeof(uint64_t), GH_STAGE_OUT,
                                          GH_ERR_BUFFER_TOO_SMALL, &status);
  /* values_out is written only up to the keys' total: staged in/out, the rest keeps the caller's bytes. */
  void *v = call_stage_as(&c, values_out, values_out ? values_capacity * value_bytes(t) : 0, GH_STAGE_INOUT, GH_OK,
                          &status);
  status = call_ready(&c, status);
  if (status != GH_OK) return call_end(&c, status, 0);
  status = t->ops->find_all(t, k, n, o, v, values_capacity, stream);
  return call_end(&c, status, 1);
}

/* ---- Joins ------------------------------------------------------------------------------------ */

#define GH_OFFERED_BY_INTERSECT "only designs with GH_CAP_JOIN_INTERSECT (hashgraph) intersect; use GH_JOIN_PROBE"

/* The method's checks every join starts with: a known method, and one the design offers. */
static gh_status check_join_method(gh_table *t, const char *fn, gh_join_method method) {
  if (method != GH_JOIN_AUTO && method != GH_JOIN_PROBE && method != GH_JOIN_INTERSECT)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "%s: method = %d is not a gh_join_method (GH_JOIN_AUTO, "
                    "GH_JOIN_PROBE or GH_JOIN_INTERSECT)", fn, (int)method);
  if (method == GH_JOIN_INTERSECT && t->ops->join == NULL) return unsupported(t, fn, GH_OFFERED_BY_INTERSECT);
  return GH_OK;
}

/* What the pair joins check after their op: a multi-value table, a method it offers, the keys. */
static gh_status begin_pair_join(gh_table *t, const char *fn, const void *keys, uint64_t n, gh_join_method method) {
  if (require_multivalue(t, fn) != GH_OK) return GH_ERR_UNSUPPORTED;
  const gh_status status = check_join_method(t, fn, method);
  return status == GH_OK ? begin_bulk(t, fn, keys, n) : status;
}

gh_status gh_join_count(gh_table *t, const void *keys, uint64_t n, gh_join_method method, uint64_t *pairs,
                        gh_stream stream) {
  GH_ENTER(t);
  if (pairs == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_join_count: pairs is NULL");
  *pairs = 0;
  GH_REQUIRE_OP(t, count, "gh_join_count", GH_OFFERED_BY_MULTIVALUE);
  gh_status status = begin_pair_join(t, "gh_join_count", keys, n, method);
  if (status != GH_OK || n == 0) return status;
  gh_call c = {t, stream, {{0}}, 0};
  const void *k = call_stage(&c, keys, n * key_bytes(t), 0, &status);
  status = call_ready(&c, status);
  if (status != GH_OK) return call_end(&c, status, 0);
  uint64_t total = 0;
  const gh_join_request request = {GH_JOIN_KIND_COUNT, NULL, NULL, 0, NULL, &total};
  status = method == GH_JOIN_INTERSECT ? t->ops->join(t, k, n, &request, stream) : t->ops->count(t, k, n, NULL, &total, stream);
  status = call_end(&c, status, 1);
  if (status == GH_OK) *pairs = total;
  return status;
}

/* The probe join's pairs: gh_find_all's offsets (in scratch) and values (the right side), the
 * offsets then expanded into each pair's left row. */
static gh_status probe_join(gh_table *t, const void *keys, uint64_t n, uint64_t *left_out, void *right_out,
                            uint64_t capacity, uint64_t *pairs, void *stream) {
  gh_scratch offsets = {NULL, 0, gh__backend_memory(t), 0, NULL};
  gh_status status = gh__scratch_alloc_on(t, &offsets, (n + 1u) * sizeof(uint64_t), stream);
  if (status == GH_OK) status = t->ops->find_all(t, keys, n, (uint64_t *)offsets.ptr, right_out, capacity, stream);
  if (status == GH_OK || status == GH_ERR_BUFFER_TOO_SMALL) {
    const gh_status fill = status;
    status = gh__to_host(t, pairs, (uint64_t *)offsets.ptr + n, sizeof *pairs, stream);
    if (status == GH_OK && fill == GH_ERR_BUFFER_TOO_SMALL)
      status = gh__fail(t, GH_ERR_BUFFER_TOO_SMALL, "gh_join: the join has %llu pairs but capacity is %llu; "
                        "*pairs says how many, nothing was written", (unsigned long long)*pairs,
                        (unsigned long long)capacity);
  }
  if (status == GH_OK) status = gh__expand_offsets(t, (const uint64_t *)offsets.ptr, n, *pairs, left_out, stream);
  gh__scratch_free(t, &offsets, stream);
  return status;
}

gh_status gh_join(gh_table *t, const void *keys, uint64_t n, gh_join_method method, uint64_t *left_out,
                  void *right_out, uint64_t capacity, uint64_t *pairs, gh_stream stream) {
  GH_ENTER(t);
  if (pairs == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_join: pairs is NULL");
  *pairs = 0;
  GH_REQUIRE_OP(t, find_all, "gh_join", GH_OFFERED_BY_MULTIVALUE);
  gh_status status = begin_pair_join(t, "gh_join", keys, n, method);
  if (status != GH_OK) return status;
  if (t->config.value_bits == 0 && right_out != NULL)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_join: the table is a set (value_bits = 0): right_out must be NULL");
  if (n == 0) return GH_OK;
  if (left_out == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_join: left_out is NULL");
  if (t->config.value_bits != 0 && right_out == NULL)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_join: right_out is NULL but the table stores values");
  if (capacity > (uint64_t)(SIZE_MAX / 8u))
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_join: capacity = %llu is larger than any array can be",
                    (unsigned long long)capacity);
  gh_call c = {t, stream, {{0}}, 0};
  const void *k = call_stage(&c, keys, n * key_bytes(t), 0, &status);
  /* Written only up to the pairs' count: staged in/out, the rest keeps the caller's bytes. */
  uint64_t *l = (uint64_t *)call_stage_as(&c, left_out, capacity * sizeof(uint64_t), GH_STAGE_INOUT, GH_OK, &status);
  void *r = call_stage_as(&c, right_out, right_out ? capacity * value_bytes(t) : 0, GH_STAGE_INOUT, GH_OK, &status);
  status = call_ready(&c, status);
  if (status != GH_OK) return call_end(&c, status, 0);
  uint64_t total = 0;
  if (method == GH_JOIN_INTERSECT) {
    const gh_join_request request = {GH_JOIN_KIND_PAIRS, l, r, capacity, NULL, &total};
    status = t->ops->join(t, k, n, &request, stream);
  } else {
    status = probe_join(t, k, n, l, r, capacity, &total, stream);
  }
  status = call_end(&c, status, 1);
  if (status == GH_OK || status == GH_ERR_BUFFER_TOO_SMALL) *pairs = total;
  return status;
}

gh_status gh_semi_join(gh_table *t, const void *keys, uint64_t n, gh_join_method method, uint8_t *match_out,
                       gh_stream stream) {
  GH_ENTER(t);
  GH_REQUIRE_OP(t, find, "gh_semi_join", GH_OFFERED_BY_DESIGN);
  gh_status status = check_join_method(t, "gh_semi_join", method);
  if (status == GH_OK) status = begin_bulk(t, "gh_semi_join", keys, n);
  if (status != GH_OK || n == 0) return status;
  if (match_out == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_semi_join: match_out is NULL");
  if (method != GH_JOIN_INTERSECT) return gh_find(t, keys, n, NULL, match_out, NULL, stream);
  gh_call c = {t, stream, {{0}}, 0};
  const void *k = call_stage(&c, keys, n * key_bytes(t), 0, &status);
  uint8_t *m = (uint8_t *)call_stage(&c, match_out, n, 1, &status);
  status = call_ready(&c, status);
  if (status != GH_OK) return call_end(&c, status, 0);
  const gh_join_request request = {GH_JOIN_KIND_SEMI, NULL, NULL, 0, m, NULL};
  return call_end(&c, t->ops->join(t, k, n, &request, stream), 1);
}

gh_status gh_export(gh_table *t, void *keys_out, void *values_out, uint64_t out_capacity,
                    uint64_t *count, gh_stream stream) {
  GH_ENTER(t);
  if (count == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_export: count is NULL");
  *count = 0;
  GH_REQUIRE_OP(t, export_all, "gh_export", GH_OFFERED_BY_DESIGN);
  if (t->config.value_bits == 0 && values_out != NULL)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_export: the table is a set: values_out must be NULL");
  gh_status status = begin_bulk(t, "gh_export", NULL, 0);
  if (status != GH_OK) return status;
  uint64_t size = 0;
  status = t->ops->size(t, &size);
  if (status != GH_OK) return status;
  if (out_capacity < size)
    return gh__fail(t, GH_ERR_BUFFER_TOO_SMALL, "gh_export: out_capacity = %llu but the table holds %llu keys; nothing was written",
                    (unsigned long long)out_capacity, (unsigned long long)size);
  if (size > 0 && keys_out == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_export: keys_out is NULL");
  if (size > 0 && t->config.value_bits != 0 && values_out == NULL)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_export: values_out is NULL but the table stores values");
  if (size == 0) return GH_OK;
  gh_call c = {t, stream, {{0}}, 0};
  void *k = call_stage(&c, keys_out, size * key_bytes(t), 1, &status);
  void *v = call_stage(&c, values_out, values_out ? size * value_bytes(t) : 0, 1, &status);
  status = call_ready(&c, status);
  if (status != GH_OK) return call_end(&c, status, 0);
  status = t->ops->export_all(t, k, v, count, stream);
  return call_end(&c, status, 1);
}

/* *bad = the first position of ops that holds no gh_op_code (UINT64_MAX: none), read where ops
 * lives (device op codes are copied to the host for it), before anything runs. */
static gh_status first_bad_op(gh_table *t, const uint8_t *ops, uint64_t n, void *stream, uint64_t *bad) {
  const uint8_t *readable = ops;
  uint8_t *copy = NULL;
  gh_status status = GH_OK;
  if (gh__cuda_pointer_location(ops) == GH_POINTER_DEVICE) {
    copy = (uint8_t *)gh__alloc(t, (size_t)n, GH_MEMORY_HOST);
    if (copy == NULL)
      return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "gh_mixed: no host memory to check %llu op codes; nothing was "
                      "executed", (unsigned long long)n);
    status = gh__cuda_copy(copy, ops, (size_t)n, stream, t->last_error, sizeof t->last_error);
    if (status == GH_OK) status = gh__cuda_sync(stream, t->last_error, sizeof t->last_error);
    readable = copy;
  }
  *bad = UINT64_MAX;
  for (uint64_t i = 0; status == GH_OK && i < n; ++i)
    if (readable[i] < GH_OP_INSERT || readable[i] > GH_OP_FIND) {
      *bad = i;
      break;
    }
  gh__free(t, copy, (size_t)n, GH_MEMORY_HOST);
  return status;
}

gh_status gh_mixed(gh_table *t, const uint8_t *ops, const void *keys, const void *values, uint64_t n,
                   gh_dup_policy policy, void *values_out, uint8_t *results_out, gh_stream stream) {
  GH_ENTER(t);
  GH_REQUIRE_OP(t, mixed, "gh_mixed", "mixed batches need a dynamic design (GH_CAP_MIXED in gh_design_info())");
  gh_status status = begin_bulk(t, "gh_mixed", keys, n);
  if (status != GH_OK) return status;
  if (n > 0 && ops == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_mixed: ops is NULL with n = %llu", (unsigned long long)n);
  if (t->config.value_bits == 0 && values_out != NULL)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_mixed: the table is a set (value_bits = 0): values_out must be NULL; use results_out");
  status = check_insert_args(t, "gh_mixed", values, n, policy);
  if (status != GH_OK || n == 0) return status;
  uint64_t bad = UINT64_MAX, failed = 0;
  status = first_bad_op(t, ops, n, stream, &bad);
  if (status != GH_OK) return status;
  if (bad != UINT64_MAX)
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_mixed: ops[%llu] is not a gh_op_code (1 insert, 2 erase, 3 find); "
                    "nothing was executed", (unsigned long long)bad);
  gh_call c = {t, stream, {{0}}, 0};
  const uint8_t *o = (const uint8_t *)call_stage(&c, ops, n, 0, &status);
  const void *k = call_stage(&c, keys, n * key_bytes(t), 0, &status);
  const void *v = call_stage(&c, values, values ? n * value_bytes(t) : 0, 0, &status);
  /* Outputs are written at some positions only (values_out at finds): copied in first so that the
   * others keep the caller's bytes; they go back on success and with the did-not-fit status. */
  const gh_status partial = did_not_fit_status(t);
  void *vo = call_stage_as(&c, values_out, values_out ? n * value_bytes(t) : 0, GH_STAGE_INOUT, partial, &status);
  uint8_t *r = (uint8_t *)call_stage_as(&c, results_out, results_out ? n : 0, GH_STAGE_OUT, partial, &status);
  status = call_ready(&c, status);
  if (status != GH_OK) return call_end(&c, status, 0);
  status = t->ops->mixed(t, o, k, v, n, policy, vo, r, &failed, stream);
  const int ran = status == GH_OK;
  if (ran && failed > 0)
    status = gh__fail(t, partial, "gh_mixed: %llu of %llu inserts did not fit: %s; every other "
                      "operation was executed%s", (unsigned long long)failed, (unsigned long long)n,
                      t->design->did_not_fit, results_out ? "; they are marked 2 in results_out" : "");
  return call_end(&c, status, ran);
}

gh_status gh_compact(gh_table *t, gh_stream stream) {
  GH_ENTER(t);
  GH_REQUIRE_OP(t, compact, "gh_compact", "only designs that remove deleted entries compact (GH_CAP_COMPACT in gh_design_info())");
  gh_status status = begin_bulk(t, "gh_compact", NULL, 0);
  if (status != GH_OK) return status;
  gh_call c = {t, stream, {{0}}, 0};
  return call_end(&c, t->ops->compact(t, stream), 1);
}

gh_status gh_keys_of_ids(gh_table *t, const void *ids, uint64_t n, void *keys_out, gh_stream stream) {
  static const char offered_by[] = "only compacting tables (GH_VARIANT_COMPACTING) give keys dense ids";
  GH_ENTER(t);
  GH_REQUIRE_OP(t, keys_of_ids, "gh_keys_of_ids", offered_by);
  if (t->config.variant != GH_VARIANT_COMPACTING) return unsupported(t, "gh_keys_of_ids", offered_by);
  gh_status status = begin_bulk(t, "gh_keys_of_ids", ids, n);
  if (status != GH_OK || n == 0) return status;
  if (keys_out == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_keys_of_ids: keys_out is NULL");
  gh_call c = {t, stream, {{0}}, 0};
  const void *i = call_stage(&c, ids, n * value_bytes(t), 0, &status);
  /* Ids out of range leave their keys_out untouched; the others are written (partial result). */
  void *k = call_stage_as(&c, keys_out, n * key_bytes(t), GH_STAGE_INOUT, GH_ERR_INVALID_ARGUMENT, &status);
  status = call_ready(&c, status);
  if (status != GH_OK) return call_end(&c, status, 0);
  uint64_t bad = 0;
  status = t->ops->keys_of_ids(t, i, n, k, &bad, stream);
  if (status == GH_OK && bad > 0) {
    uint64_t size = 0;
    t->ops->size(t, &size);
    status = gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_keys_of_ids: %llu of %llu ids are not below the "
                      "number of keys (%llu); their keys_out entries were not written, all others were",
                      (unsigned long long)bad, (unsigned long long)n, (unsigned long long)size);
  }
  return call_end(&c, status, 1);
}

gh_status gh_clear(gh_table *t, gh_stream stream) {
  GH_ENTER(t);
  GH_REQUIRE_OP(t, clear, "gh_clear", "destroy the table and create a new one instead");
  gh_status status = begin_bulk(t, "gh_clear", NULL, 0);
  if (status != GH_OK) return status;
  gh_call c = {t, stream, {{0}}, 0};
  return call_end(&c, t->ops->clear(t, stream), 1);
}

/* ---- Introspection --------------------------------------------------------------------------- */

gh_status gh_size(gh_table *t, uint64_t *size) {
  GH_ENTER(t);
  if (size == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_size: size is NULL");
  gh_status status = begin_bulk(t, "gh_size", NULL, 0);
  return status != GH_OK ? status : t->ops->size(t, size);
}

gh_status gh_capacity(gh_table *t, uint64_t *capacity) {
  GH_ENTER(t);
  if (capacity == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_capacity: capacity is NULL");
  *capacity = t->config.capacity;
  return GH_OK;
}

gh_status gh_memory_usage(gh_table *t, size_t *host_bytes, size_t *device_bytes) {
  GH_ENTER(t);
  if (host_bytes) *host_bytes = t->host_bytes + sizeof *t;
  if (device_bytes) *device_bytes = t->device_bytes;
  return GH_OK;
}

gh_status gh_get_config_sized(gh_table *t, gh_config *config, size_t struct_size) {
  GH_ENTER(t);
  if (config == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_get_config: config is NULL");
  if (!gh__config_size_known(struct_size))
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_get_config: struct_size = %zu is not the size of a "
                    "released gh_config up to this library's (%zu bytes)", struct_size, sizeof t->config);
  memcpy(config, &t->config, struct_size);
  config->struct_size = struct_size;
  return GH_OK;
}

/* sizeof(gh_stats) in 0.2.0, the first release that passes the caller's size; fields are only
 * appended after it (and the newest size is recorded here). */
#define GH_STATS_FIRST_SIZE (offsetof(gh_stats, stash_keys) + sizeof(uint64_t))
#define GH_STATS_NEWEST_SIZE (offsetof(gh_stats, tombstones) + sizeof(uint64_t))
_Static_assert(sizeof(gh_stats) == GH_STATS_NEWEST_SIZE,
               "gh_stats grew: fields are appended only; record the new release's size for gh_get_stats_sized");

gh_status gh_get_stats_sized(gh_table *t, gh_stats *stats, size_t struct_size) {
  GH_ENTER(t);
  if (stats == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_get_stats: stats is NULL");
  if (struct_size < GH_STATS_FIRST_SIZE || struct_size > sizeof(gh_stats))
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_get_stats: struct_size = %zu is not the size of a released "
                    "gh_stats up to this library's (%zu bytes)", struct_size, sizeof(gh_stats));
  gh_status status = begin_bulk(t, "gh_get_stats", NULL, 0);
  if (status != GH_OK) return status;
  gh_stats all;
  memset(&all, 0, sizeof all);
  status = t->ops->size(t, &all.size);
  if (status != GH_OK) return status;
  all.distinct_keys = all.size;
  all.slots = t->config.capacity;
  /* stats is optional on purpose: without it the generic fields above are the answer. */
  if (t->ops->stats) status = t->ops->stats(t, &all);
  if (status == GH_OK) memcpy(stats, &all, struct_size);
  return status;
}

gh_backend gh_table_backend(const gh_table *t) { return t ? t->config.backend : GH_BACKEND_AUTO; }

gh_status gh_validate(gh_table *t) {
  GH_ENTER(t);
  GH_REQUIRE_OP(t, validate, "gh_validate", GH_OFFERED_BY_DESIGN);
  gh_status status = begin_bulk(t, "gh_validate", NULL, 0);
  return status != GH_OK ? status : t->ops->validate(t);
}

int gh_cuda_available(void) { return gh__cuda_device_count() > 0; }

int gh_cuda_device_count(void) { return gh__cuda_device_count(); }

gh_status gh_get_device_view(gh_table *t, gh_device_view *view) {
  GH_ENTER(t);
  GH_REQUIRE_OP(t, device_view, "gh_get_device_view",
                "device views exist for CUDA tables of designs with GH_CAP_DEVICE_VIEW (gh_design_info())");
  if (view == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_get_device_view: view is NULL");
  memset(view, 0, sizeof *view);
  return t->ops->device_view(t, view);
}

gh_status gh_take_status_flags(gh_table *t, unsigned *flags) {
  GH_ENTER(t);
  GH_REQUIRE_OP(t, take_flags, "gh_take_status_flags",
                "the design records no status flags (GH_CAP_STATUS_FLAGS in gh_design_info())");
  if (flags == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_take_status_flags: flags is NULL");
  gh_status status = begin_bulk(t, "gh_take_status_flags", NULL, 0);
  return status != GH_OK ? status : t->ops->take_flags(t, flags);
}

/* ---- The registry, as the public API shows it ------------------------------------------------ */

gh_status gh_design_info(gh_design id, gh_design_traits *traits) {
  if (traits == NULL) return GH_ERR_INVALID_ARGUMENT;
  const gh_design_descriptor *design = gh__design_lookup(id);
  if (design == NULL) return GH_ERR_UNSUPPORTED;
  traits->design = design->id;
  traits->name = design->name;
  traits->backends = (design->host_ops ? 1u << GH_BACKEND_HOST : 0u) | (design->cuda_ops ? 1u << GH_BACKEND_CUDA : 0u);
  traits->variants = design->variants;
  traits->map_policies = design->map_policies;
  traits->capabilities = design->capabilities;
  return GH_OK;
}

gh_status gh_design_by_name(const char *name, gh_design *id) {
  if (name == NULL || id == NULL) return GH_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; i < gh__design_count(); ++i) {
    if (strcmp(name, gh__design_at(i)->name) == 0) {
      *id = gh__design_at(i)->id;
      return GH_OK;
    }
  }
  return GH_ERR_UNSUPPORTED;
}
