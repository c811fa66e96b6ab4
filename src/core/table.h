/* table.h - what every design and backend shares inside the library: the table object, the ops
 * table each (design, backend) pair provides, error reporting and memory accounting.
 *
 * Public functions (core/table.c) check their arguments once, move host/device arrays to where
 * the backend runs, and call t->ops->X. A NULL entry means GH_ERR_UNSUPPORTED. Backend functions
 * receive arrays already resident on their side (device pointers for CUDA, host pointers for the
 * host backend) and a stream, and must leave the table valid whatever happens. */
#ifndef GH_CORE_TABLE_H
#define GH_CORE_TABLE_H

#include <stdarg.h>
#include <stddef.h>

#include "gpuhash.h"

#define GH_ERROR_CAPACITY 512

typedef struct gh_table_ops {
  const char *name; /* "warpdrive/host" */
  /* Allocates the table's storage from t->config (already validated and resolved). */
  gh_status (*init)(gh_table *t);
  void (*release)(gh_table *t);
  gh_status (*insert)(gh_table *t, const void *keys, const void *values, uint64_t n,
                      gh_dup_policy policy, uint8_t *failed_out, uint64_t *failed, void *stream);
  /* values_out and found_out may each be NULL; *default_value is on the host. */
  gh_status (*find)(gh_table *t, const void *keys, uint64_t n, void *values_out,
                    uint8_t *found_out, uint64_t default_value, void *stream);
  gh_status (*erase)(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out,
                     uint64_t *erased, void *stream);
  gh_status (*count)(gh_table *t, const void *keys, uint64_t n, uint64_t *counts_out,
                     uint64_t *total, void *stream);
  gh_status (*find_all)(gh_table *t, const void *keys, uint64_t n, uint64_t *offsets_out,
                        void *values_out, uint64_t values_capacity, void *stream);
  /* keys_out / values_out have room for gh_size() entries. */
  gh_status (*export_all)(gh_table *t, void *keys_out, void *values_out, uint64_t *count,
                          void *stream);
  gh_status (*clear)(gh_table *t, void *stream);
  gh_status (*size)(gh_table *t, uint64_t *size);
  gh_status (*validate)(gh_table *t);
  /* Compacting tables: keys of dense ids; *bad = ids out of range (their keys_out untouched). */
  gh_status (*keys_of_ids)(gh_table *t, const void *ids, uint64_t n, void *keys_out, uint64_t *bad,
                           void *stream);
  /* Fills the design's counters; NULL: the generic fields only (size, distinct_keys, slots). */
  gh_status (*stats)(gh_table *t, gh_stats *stats);
  gh_status (*device_view)(gh_table *t, gh_device_view *view);
  gh_status (*take_flags)(gh_table *t, unsigned *flags);
} gh_table_ops;

struct gh_table {
  gh_config config;      /* resolved: backend and capacity final */
  const gh_table_ops *ops;
  void *impl;            /* the design's state */
  size_t host_bytes;     /* held now, through gh__alloc */
  size_t device_bytes;
  char last_error[GH_ERROR_CAPACITY];
};

/* Formats the table's last-error message; returns status so callers can `return gh__fail(...)`. */
gh_status gh__fail(gh_table *t, gh_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
void gh__clear_error(gh_table *t);

/* Allocations through the table's allocator, counted in host_bytes / device_bytes. */
void *gh__alloc(gh_table *t, size_t bytes, gh_memory_kind kind);
void gh__free(gh_table *t, void *ptr, size_t bytes, gh_memory_kind kind);

/* The ops of each (design, backend) pair; NULL when that backend is not built. */
const gh_table_ops *gh__warpdrive_ops(gh_backend backend);

const gh_table_ops *gh__cuckoo_ops(gh_backend backend);

/* Memory a design would take for a config (gh_memory_estimate). */
gh_status gh__warpdrive_estimate(const gh_config *config, size_t *host_bytes, size_t *device_bytes);
gh_status gh__cuckoo_estimate(const gh_config *config, size_t *host_bytes, size_t *device_bytes);

/* The cuckoo-only fields of a config (hash functions, family, table factor, slot limit). */
gh_status gh__cuckoo_check_config(const gh_config *config, char *message, size_t message_size);

/* Resolves defaults (AUTO backend) in a validated config; writes a message on failure. */
gh_status gh__config_resolve(gh_config *config, char *message, size_t message_size);

#endif /* GH_CORE_TABLE_H */
