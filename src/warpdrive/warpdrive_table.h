/* warpdrive_table.h - the warpdrive state both backends share: geometry, where the slots and
 * counters live, the ops that are the same on both backends (written once over core/toolkit.h),
 * and the checks that run on a host copy (validate). */
#ifndef GH_WARPDRIVE_TABLE_H
#define GH_WARPDRIVE_TABLE_H

#include "core/table.h"
#include "gpuhash/detail/warpdrive.h"

/* What one bulk call counts; zeroed before the call's kernel, read back after it. */
typedef struct gh_wd_call_counters {
  unsigned long long failed; /* keys that did not fit (insert) */
  unsigned long long erased; /* keys erased (erase) */
  unsigned long long cursor; /* output position (export) */
} gh_wd_call_counters;

/* Counters kept beside the slots (device memory for CUDA). */
typedef struct gh_wd_counters {
  unsigned long long size;  /* distinct keys stored */
  gh_wd_call_counters call; /* of the current call */
  unsigned status;          /* GH_FLAG_* bits, until taken */
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

/* The ops both backends share (warpdrive_table.c): allocation on the backend's side and clearing
 * (queued on the default stream), release, the size counter, validate, the status word. */
gh_status gh__wd_init(gh_table *t);
void gh__wd_release(gh_table *t);
gh_status gh__wd_clear(gh_table *t, void *stream);
gh_status gh__wd_size(gh_table *t, uint64_t *size);
gh_status gh__wd_validate(gh_table *t);
gh_status gh__wd_take_flags(gh_table *t, unsigned *flags);
gh_status gh__wd_compact(gh_table *t, void *stream);

/* The ops of each backend (warpdrive_host.c, warpdrive_cuda.cu). */
extern const gh_table_ops gh__warpdrive_host_ops;
#if defined(GH_HAVE_CUDA)
extern const gh_table_ops gh__warpdrive_cuda_ops;
#endif

#endif /* GH_WARPDRIVE_TABLE_H */
