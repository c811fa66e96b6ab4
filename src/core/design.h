/* design.h - what a design tells the library about itself: one descriptor per design, listed once
 * in src/registry.h. Core (config checks, gh_create, dispatch, gh_design_info) reads only
 * descriptors and never names a design; a design's folder defines its descriptor
 * (`const gh_design_descriptor gh__design_<name>`) next to its ops tables.
 *
 * Adding a design: its folder under src/ (ops of each backend, the descriptor) and one line in
 * src/registry.h. Nothing else in core, the public API or the build changes. */
#ifndef GH_CORE_DESIGN_H
#define GH_CORE_DESIGN_H

#include <stddef.h>

#include "core/table.h"

typedef struct gh_design_descriptor {
  gh_design id;     /* the design's gh_design value */
  const char *name; /* "name" of its registry line: gh_design_by_name, messages */
  /* The ops of each backend. host_ops is required; cuda_ops is NULL where the CUDA backend is not
   * built (or the design has no CUDA backend yet). In each ops table init, release and size are
   * required; every other entry may be NULL (the public call then returns GH_ERR_UNSUPPORTED). */
  const gh_table_ops *host_ops;
  const gh_table_ops *cuda_ops;
  /* Checks the config fields only this design reads, after core checked the common ones (widths,
   * capacity, group size, variant and policy sets); writes a message naming the field. NULL: the
   * design reads no field of its own. */
  gh_status (*check_config)(const gh_config *config, char *message, size_t message_size);
  /* Memory a table with this (checked, backend-resolved) config would take. Required. */
  gh_status (*estimate)(const gh_config *config, size_t *host_bytes, size_t *device_bytes);
  unsigned variants;     /* bits (1u << gh_variant) the design offers */
  unsigned map_policies; /* bits (1u << gh_dup_policy) its map / set variant takes */
  unsigned capabilities; /* GH_CAP_* (gpuhash.h) */
  /* Why keys did not fit, for GH_ERR_TABLE_FULL: "N of M keys did not fit: <did_not_fit> (table
   * load L); ...". Designs that grow instead of reporting full say what would stop them. */
  const char *did_not_fit;
} gh_design_descriptor;

/* What a design's estimate returns for a table whose arrays take table_bytes and whose state (the
 * design's struct) state_bytes: the arrays on the backend's side (device memory for CUDA), the
 * table object and the state on the host. */
gh_status gh__estimate_split(const gh_config *config, size_t state_bytes, size_t table_bytes, size_t *host_bytes,
                             size_t *device_bytes);

/* A descriptor's cuda_ops: the design's CUDA ops table where the CUDA backend is built, else NULL
 * (the table is then not even declared). */
#if defined(GH_HAVE_CUDA)
#define GH_CUDA_OPS(ops) (&(ops))
#else
#define GH_CUDA_OPS(ops) NULL
#endif

/* map_policies of a design whose map / set variant takes every single-value policy. */
#define GH_MAP_POLICIES_ALL \
  ((1u << GH_KEEP_FIRST) | (1u << GH_OVERWRITE) | (1u << GH_ADD) | (1u << GH_MIN) | (1u << GH_MAX))

/* The descriptor of a design of this library; NULL when it has none (not built, or not a design). */
const gh_design_descriptor *gh__design_lookup(gh_design id);
/* The designs of this library, in registry order: index 0 .. gh__design_count() - 1. */
size_t gh__design_count(void);
const gh_design_descriptor *gh__design_at(size_t index);
/* The ops of a design on a backend (HOST or CUDA); NULL when that backend is not available. */
const gh_table_ops *gh__design_ops(const gh_design_descriptor *design, gh_backend backend);

/* Names for messages (core/config.c): "compacting", "GH_ADD", and comma-separated lists of the
 * variants / policies whose bits are set, or of the designs of this library. */
const char *gh__variant_name(gh_variant variant);
const char *gh__policy_name(gh_dup_policy policy);
const char *gh__variant_list(char *out, size_t size, unsigned variant_bits);
const char *gh__policy_list(char *out, size_t size, unsigned policy_bits);
const char *gh__design_list(char *out, size_t size);

#endif /* GH_CORE_DESIGN_H */
