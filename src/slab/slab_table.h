/* slab_table.h - the slab hash's state both backends share: the base slabs (one per bucket plus
 * the two side buckets), SlabAlloc's super blocks and bitmaps, the counters; the ops written once
 * (slab_table.c) and what each backend provides. */
#ifndef GH_SLAB_TABLE_H
#define GH_SLAB_TABLE_H

#include "core/table.h"
#include "gpuhash/detail/slab.h"

/* Counters kept beside the slabs (device memory for CUDA). */
/* What one bulk call of the CUDA backend counts; zeroed before its kernel, read back after. */
typedef struct gh_slab_call_counters {
  unsigned long long inserted; /* new keys (pairs) */
  unsigned long long failed;   /* inserts that found no slab */
  unsigned long long removed;  /* entries erased */
  unsigned long long erased;   /* erase operations that removed something */
  unsigned long long total;    /* values counted (gh_count), or the export cursor */
} gh_slab_call_counters;

/* size and slabs_in_use stay first and adjacent: a batch reads both in one copy. */
typedef struct gh_slab_counters {
  unsigned long long size;         /* keys (multivalue: pairs) stored */
  unsigned long long slabs_in_use; /* slabs SlabAlloc has handed out */
  gh_slab_call_counters call;
} gh_slab_counters;

typedef struct gh_slab_table {
  gh_slab_geometry geometry;
  gh_memory_kind kind;        /* where slabs, bitmaps and counters live */
  uint32_t *base;             /* (buckets + 2) slabs */
  size_t base_bytes;
  gh_slab_pool pool;          /* SlabAlloc: super blocks (light: one array) */
  gh_slab_counters *counters;
  uint64_t bucket_grows;      /* rehashes into a larger base bucket array */
  double resize_seconds;      /* spent growing the base buckets, ever */
  gh_slab_device_table *published; /* CUDA: the device views' copy of the device table, or NULL */
  int light;
} gh_slab_table;

/* What device operations read of the table now. */
gh_slab_device_table gh__slab_device_table(const gh_slab_table *s);
/* Copies it to s->published (when a device view asked for one), queued on stream. */
gh_status gh__slab_publish(gh_table *t, void *stream);

/* The geometry a config gives: buckets from capacity and slab_load. */
gh_slab_geometry gh__slab_geometry(const gh_config *config);

/* The base buckets double (each list split in two, host-driven between batches) before an update
 * batch that would take the average fill of the base slabs past GH_SLAB_GROW_FILL x slab_load, and
 * double again until the fill is at most slab_load. One doubling takes a table that has just
 * passed the threshold to 0.55 x slab_load, so the fill of a growing table stays about slab_load:
 * inserts slow down steeply as lists spill into second slabs (gh_insert's first pass leaves those
 * to a second launch), which a higher threshold lets many lists do (docs/architecture.md,
 * "Growing the buckets"). */
#define GH_SLAB_GROW_FILL 1.1

/* One batch of updates: gh_insert (ops NULL: every operation an insert) or gh_mixed. */
typedef struct gh_slab_batch {
  const uint8_t *ops;
  const void *keys;
  const void *values;
  uint64_t n;
  void *values_out;     /* gh_mixed: the values of its finds */
  uint8_t *results_out; /* gh_insert: 1 where the key did not fit; gh_mixed: the result codes */
  int policy;
  gh_slab_insert_mode mode;
  /* One bit per operation: an insert that finds no slab sets its bit. A rerun (rerun = 1) runs the
   * flagged operations only and clears the bits of those that succeed. NULL: no bits. */
  uint32_t *retry_bits;
  int rerun;
} gh_slab_batch;

/* How a backend runs a batch; the order and the all-or-nothing rules are gh__slab_run_batch's. */
typedef struct gh_slab_batch_runner {
  /* The slabs its concurrent workers may hold at once (one spare each). */
  uint64_t (*spares)(gh_table *t, const gh_slab_batch *b);
  /* Runs it (the flagged operations only, on a rerun) on the slabs reserved, keeps the size counter;
   * *failed = inserts that found no slab (flagged in b->retry_bits and in the call's outputs). */
  gh_status (*run)(gh_table *t, const gh_slab_batch *b, uint64_t *failed, void *stream);
  /* Splits every list of the table into new_base (twice the buckets): gh_slab_split_list on each. */
  gh_status (*split)(gh_table *t, uint32_t *new_base, void *stream);
} gh_slab_batch_runner;

/* gh_insert and gh_mixed on either backend: reserves the slabs the batch is estimated to need
 * (GH_ERR_OUT_OF_MEMORY with nothing changed when they cannot be had), grows the base buckets when
 * the batch calls for it (an optimisation: when memory for it is short the chains just get
 * longer), runs the batch, runs the inserts that found no slab again after SlabAlloc has grown
 * (*failed: those left when it could not), and refreshes the capacity. */
gh_status gh__slab_run_batch(gh_table *t, const gh_slab_batch_runner *runner, const gh_slab_batch *b, uint64_t *failed,
                             void *stream);
/* Slabs in use, read back; sets t->config.capacity to what the slabs hold now. */
gh_status gh__slab_refresh(gh_table *t, void *stream);

/* The ops both backends share (slab_table.c): allocation (SlabAlloc starts empty), release, clear
 * (queued on the stream: base slabs emptied, every slab back in SlabAlloc), the size counter,
 * validate and stats (which walk the lists on the host). */
gh_status gh__slab_init(gh_table *t);
void gh__slab_release(gh_table *t);
gh_status gh__slab_clear(gh_table *t, void *stream);
gh_status gh__slab_size(gh_table *t, uint64_t *size);
gh_status gh__slab_validate(gh_table *t);
gh_status gh__slab_stats(gh_table *t, gh_stats *stats);

/* The ops of each backend. */
extern const gh_table_ops gh__slab_host_ops;
#if defined(GH_HAVE_CUDA)
extern const gh_table_ops gh__slab_cuda_ops;
#endif

#endif /* GH_SLAB_TABLE_H */
