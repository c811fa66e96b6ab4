/* table.h - what every design and backend shares inside the library: the table object, the ops
 * table each (design, backend) pair provides, error reporting and memory accounting.
 *
 * Public functions (core/table.c) check their arguments once, move host/device arrays to where
 * the backend runs, and call t->ops->X. init, release and size are required; every other entry
 * may be NULL, and the public call then answers GH_ERR_UNSUPPORTED naming itself (one check in
 * core/table.c, for every optional entry). Ops tables are written with designated initializers
 * only, so that adding an entry never shifts the others. Backend functions receive arrays already
 * resident on their side (device pointers for CUDA, host pointers for the host backend) and a
 * stream, and must leave the table valid whatever happens. */
#ifndef GH_CORE_TABLE_H
#define GH_CORE_TABLE_H

#include <stdarg.h>
#include <stddef.h>

#include "gpuhash.h"

#define GH_ERROR_CAPACITY 512

/* What a design's own join (ops->join) is asked for. */
typedef enum gh_join_kind { GH_JOIN_KIND_COUNT, GH_JOIN_KIND_PAIRS, GH_JOIN_KIND_SEMI } gh_join_kind;
typedef struct gh_join_request {
  gh_join_kind kind;
  uint64_t *left_out;  /* PAIRS: capacity positions */
  void *right_out;     /* PAIRS: capacity values (NULL for a set) */
  uint64_t capacity;   /* PAIRS */
  uint8_t *match_out;  /* SEMI: one byte per key */
  uint64_t *pairs;     /* COUNT, PAIRS (host): the pairs (PAIRS: also when they do not fit) */
} gh_join_request;

typedef struct gh_table_ops {
  const char *name; /* "<design>/<backend>": names the table in messages */
  /* Allocates the table's storage from t->config (already validated and resolved). */
  gh_status (*init)(gh_table *t);
  void (*release)(gh_table *t);
  gh_status (*insert)(gh_table *t, const void *keys, const void *values, uint64_t n,
                      gh_dup_policy policy, uint8_t *failed_out, uint64_t *failed, void *stream);
  /* values_out and found_out may each be NULL; default_value: the value of absent keys, on the host
   * (value_bits / 8 bytes; designs of integer values read it with gh__value_word). */
  gh_status (*find)(gh_table *t, const void *keys, uint64_t n, void *values_out,
                    uint8_t *found_out, const void *default_value, void *stream);
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
  /* gh_mixed (every op code already checked by core). *failed = inserts that found no memory. */
  gh_status (*mixed)(gh_table *t, const uint8_t *ops, const void *keys, const void *values, uint64_t n,
                     gh_dup_policy policy, void *values_out, uint8_t *results_out, uint64_t *failed,
                     void *stream);
  gh_status (*compact)(gh_table *t, void *stream);
  /* The joins by the design's own method (GH_JOIN_INTERSECT; core runs GH_JOIN_PROBE through
   * count, find_all and find). PAIRS with more pairs than capacity: GH_ERR_BUFFER_TOO_SMALL, *pairs
   * set, nothing written. */
  gh_status (*join)(gh_table *t, const void *keys, uint64_t n, const gh_join_request *request, void *stream);
} gh_table_ops;

struct gh_design_descriptor;

struct gh_table {
  gh_config config;      /* resolved: backend and capacity final; struct_size = the library's */
  uint64_t created_capacity; /* config.capacity at gh_create (designs that grow raise the other) */
  const struct gh_design_descriptor *design; /* its registry entry (core/design.h) */
  const gh_table_ops *ops;
  void *impl;            /* the design's state */
  size_t host_bytes;     /* held now, through gh__alloc */
  size_t device_bytes;
  struct gh_deferred *deferred; /* frees waiting for the next synchronisation (core/toolkit.h) */
  char last_error[GH_ERROR_CAPACITY];
};

/* Formats the message gh_last_create_error() gives (a call that makes a table and failed, so has
 * none to hold it); returns status. */
gh_status gh__create_fail(gh_status status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Formats the table's last-error message; returns status so callers can `return gh__fail(...)`. */
gh_status gh__fail(gh_table *t, gh_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
void gh__clear_error(gh_table *t);
/* A value of the table's width (value_bits 32 or 64) read from host memory as an integer; 0 for a set. */
uint64_t gh__value_word(const gh_table *t, const void *value);

/* Sorts n keys (host memory) ascending and returns how many distinct keys they are; *repeated (when
 * not NULL) gets the smallest key held more than once, and 1 comes back in *has_repeat if there is
 * one. The check of validate that no key of a map is stored twice. */
uint64_t gh__distinct_keys_host(uint64_t *keys, uint64_t n, int *has_repeat, uint64_t *repeated);

/* Allocations through the table's allocator, counted in host_bytes / device_bytes. */
void *gh__alloc(gh_table *t, size_t bytes, gh_memory_kind kind);
void gh__free(gh_table *t, void *ptr, size_t bytes, gh_memory_kind kind);

/* Reads a caller's config (only its first config->struct_size bytes) into *full, a gh_config of
 * this library with the design's defaults in every field the caller's struct does not have, and
 * checks every field. Writes a message naming the first field out of range. */
gh_status gh__config_read(const gh_config *config, gh_config *full, char *message, size_t message_size);

/* 1 when struct_size is the size of a released gh_config no larger than this library's. */
int gh__config_size_known(size_t struct_size);

/* Resolves defaults (AUTO backend) in a read config; writes a message on failure. */
gh_status gh__config_resolve(gh_config *config, char *message, size_t message_size);

#endif /* GH_CORE_TABLE_H */
