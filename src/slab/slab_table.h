/* slab_table.h - the slab hash's state both backends share: the base slabs (one per bucket plus
 * the two side buckets), SlabAlloc's super blocks and bitmaps, the counters; the ops written once
 * (slab_table.c) and what each backend provides. */
#ifndef GH_SLAB_TABLE_H
#define GH_SLAB_TABLE_H

#include "core/table.h"
#include "slab/slab.h"

/* Counters kept beside the slabs (device memory for CUDA). */
/* What one bulk call of the CUDA backend counts; zeroed before its kernel, read back after. */
typedef struct gh_slab_call_counters {
  unsigned long long inserted; /* new keys (pairs) */
  unsigned long long failed;   /* inserts that found no slab */
  unsigned long long removed;  /* entries erased */
  unsigned long long erased;   /* erase operations that removed something */
  unsigned long long total;    /* values counted (gh_count), or the export cursor */
} gh_slab_call_counters;

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
  uint64_t grows;             /* super blocks added (light: times the array was enlarged) */
  int light;
} gh_slab_table;

/* The geometry a config gives: buckets from capacity and slab_load. */
gh_slab_geometry gh__slab_geometry(const gh_config *config);

/* Makes sure SlabAlloc has at least `needed` free slabs (growing it, all or nothing), and grows it
 * past the 3/4 threshold when memory allows. Host-side, between batches; new memory is cleared on
 * the call's stream, ahead of the batch's kernel. GH_ERR_OUT_OF_MEMORY with
 * the table unchanged when the needed slabs cannot be had. */
gh_status gh__slab_reserve(gh_table *t, uint64_t needed, void *stream);
/* Counts, for a batch, the new slabs it can need: for each bucket b, ceil(k_b / per_slab) where k_b
 * of its inserts hash to b; bucket_counts (buckets + 2 zeroed words, backend memory) is scratch. */
typedef gh_status (*gh_slab_count_fn)(gh_table *t, void *context, uint32_t *bucket_counts, uint64_t *needed);
/* Reserves what a batch of n operations can need before it runs: the count above (or n itself for a
 * batch small against the table, where counting costs more than it saves) plus `spares`, the slabs
 * that concurrent workers may hold at once. GH_ERR_OUT_OF_MEMORY (nothing changed) when it cannot. */
gh_status gh__slab_reserve_batch(gh_table *t, uint64_t n, uint64_t spares, gh_slab_count_fn count, void *context,
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

/* gh_count / gh_find_all on a table holding one value per key: GH_ERR_UNSUPPORTED naming the call. */
gh_status gh__slab_single_value(gh_table *t, const char *call);

/* The ops of each backend. */
extern const gh_table_ops gh__slab_host_ops;
#if defined(GH_HAVE_CUDA)
extern const gh_table_ops gh__slab_cuda_ops;
#endif

#endif /* GH_SLAB_TABLE_H */
