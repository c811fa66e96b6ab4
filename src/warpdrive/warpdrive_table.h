/* warpdrive_table.h - the warpdrive state both backends share: geometry, where the slots and
 * counters live, and the checks that run on a host copy (validate). */
#ifndef GH_WARPDRIVE_TABLE_H
#define GH_WARPDRIVE_TABLE_H

#include "core/table.h"
#include "gpuhash/detail/warpdrive.h"

/* Counters a bulk operation accumulates, kept beside the slots (device memory for CUDA). */
typedef struct gh_wd_counters {
  unsigned long long size;   /* distinct keys stored */
  unsigned long long failed; /* keys of the current call that did not fit */
  unsigned long long erased; /* keys the current call erased */
  unsigned long long cursor; /* output position of the current call (export) */
  unsigned status;           /* GH_FLAG_* bits, until taken */
  unsigned reserved;
} gh_wd_counters;

typedef struct gh_wd_table {
  gh_wd_geometry geometry;
  void *slots;              /* window_count * window_width + GH_WD_SIDE_SLOTS slots */
  size_t slots_bytes;
  gh_wd_counters *counters;
  gh_memory_kind kind;      /* where slots and counters live */
} gh_wd_table;

/* The geometry a config gives: prime window count, probe limit, slot size. */
gh_wd_geometry gh__wd_geometry(const gh_config *config);

/* Allocates slots and counters on the given side and rounds t->config.capacity. The caller
 * clears them (a backend-specific fill). */
gh_status gh__wd_allocate(gh_table *t, gh_memory_kind kind);
void gh__wd_release(gh_table *t);

/* Checks every invariant on a host copy of the slots; recorded_size is the size counter. */
gh_status gh__wd_validate_snapshot(gh_table *t, const void *host_slots, uint64_t recorded_size);

/* The ops of each backend (warpdrive_host.c, warpdrive_cuda.cu). */
extern const gh_table_ops gh__warpdrive_host_ops;
#if defined(GH_HAVE_CUDA)
extern const gh_table_ops gh__warpdrive_cuda_ops;
#endif

#endif /* GH_WARPDRIVE_TABLE_H */
