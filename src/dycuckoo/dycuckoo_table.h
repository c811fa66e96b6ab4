/* dycuckoo_table.h - the DyCuckoo design's state and the logic both backends share: sizing, the
 * insert and erase drivers (a claim pass, then the keys it could not place with their duplicates
 * merged; resizing before and between passes),
 * upsize and downsize, export, validate and statistics. A backend supplies the per-key passes and
 * the bulk steps of gpuhash/detail/dycuckoo.h (gh_dy_backend). */
#ifndef GH_DYCUCKOO_TABLE_H
#define GH_DYCUCKOO_TABLE_H

#include "core/table.h"
#include "dycuckoo/dycuckoo_bulk.h"

/* One subtable: its key lines, values and lock words. */
typedef struct gh_dy_subtable {
  void *keys;      /* buckets x 128 bytes */
  void *values;    /* buckets x slots x value_bytes (NULL for a set) */
  uint32_t *locks; /* buckets */
} gh_dy_subtable;

typedef struct gh_dy_table {
  gh_dy_geometry geometry;
  gh_memory_kind kind;
  gh_dy_subtable sub[GH_DY_MAX_TABLES];
  void *side; /* the all-ones key's side entry (gpuhash/detail/dycuckoo.h) */
  gh_dy_counters *counters;
  gh_dy_device *published; /* CUDA: the device views' copy of the table, or NULL before the first view */
  uint64_t published_keys; /* the keys when it was last copied: fewer now means device-side erases */
  uint64_t upsizes, downsizes;
  double resize_seconds; /* spent in upsizes and downsizes, ever */
  uint64_t insert_failures; /* keys reported as not inserted (out of memory), ever */
  /* Why theta may be out of [fill_min, fill_max] now (validate): the last growth found no memory
   * (inserts go on filling the subtables there are), or the last halving found no room (or no
   * memory) for the keys it would have moved. */
  int growth_starved, shrink_blocked;
  uint64_t floor_buckets; /* the subtables' size at creation: halving stops there */
} gh_dy_table;

/* One pass of inserts: a batch's keys (claim) or distinct absent keys (place). */
typedef struct gh_dy_place {
  const void *keys;
  const void *values;  /* value_bytes each, or NULL for a set */
  uint64_t n;
  int policy;
  uint8_t *failed;     /* per key: 1 when it found no room (nothing changed for it) */
  int rerun;           /* place: run only the keys failed[] flags (and clear their flag first) */
  unsigned skip_table; /* place: never store into this subtable (geometry.tables: none) */
  int one_by_one;      /* place: the keys may repeat and be stored already: one at a time, each
                        * looked up first (no scratch needed to merge them: the fallback) */
  unsigned look_tables; /* claim: the subtables that held keys when it began (bit i: subtable i),
                         * the only ones a key stored before the pass can be in */
} gh_dy_place;

/* What a backend runs for the shared drivers. Each queues its work on stream; counters->failed
 * and counters->erased count what a pass did.
 *  - claim: the first pass of an insert batch, in which no key moves. Each key's value merges into
 *    its stored copy, or the key takes a free slot in the first of its buckets with one (the chosen
 *    subtable first, then the others in turn), each bucket under its lock and searched for the key
 *    again there. Copies of one key in the batch visit the same buckets in the same order, and a
 *    bucket only fills meanwhile, so they meet: no key is stored twice. A key whose buckets are all
 *    full is flagged in failed[] (zeroed by the caller) and left alone.
 *  - place: stores distinct keys known to be absent (those claim flagged, each once in a flagged set
 *    whose free entries, holding the empty key, it passes over; a halving's residuals): a free
 *    slot, else a resident moved to its bucket in a later subtable. */
typedef struct gh_dy_backend {
  gh_status (*bulk)(gh_table *t, const gh_dy_bulk *a, uint64_t n, void *stream);
  gh_status (*claim)(gh_table *t, const gh_dy_place *p, void *stream);
  gh_status (*place)(gh_table *t, const gh_dy_place *p, void *stream);
  /* Erases keys (skipping those skip_flags marks, when given) from every subtable but
   * skip_table; erased_out per key may be NULL. */
  gh_status (*erase)(gh_table *t, const void *keys, uint64_t n, const uint8_t *skip_flags, unsigned skip_table,
                     uint8_t *erased_out, void *stream);
  /* The build by regions. gh_config.bulk_min_keys = 0: whether a chunk of n keys into an empty table
   * of `regions` regions and `slots` slots goes by regions. */
  int (*regions_by_default)(gh_table *t, uint64_t n, uint64_t regions, uint64_t slots);
  size_t (*regions_partition_bytes)(gh_table *t, uint64_t n, uint64_t regions);
  /* r->sorted = the chunk's words in runs by region; *longest = the longest run (the call waits). */
  gh_status (*regions_partition)(gh_table *t, const gh_dy_by_regions *r, uint64_t *longest, void *stream);
  /* Builds each region with keys (the all-ones key goes to the side entry), counting into the
   * subtables' and the side's counters as a claim pass does, and appends the keys whose bucket was
   * full to r->passed_keys / passed_values (counters->cursor: how many). */
  gh_status (*regions_build)(gh_table *t, const gh_dy_by_regions *r, void *stream);
  uint64_t max_regions; /* the most regions its partition sorts into (larger tables: claim passes) */
} gh_dy_backend;

/* The geometry a config gives: d subtables of equal size holding capacity keys at fill_max (at
 * least one bucket each). */
gh_dy_geometry gh__dy_geometry(const gh_config *config);

/* The balancing rule of Li et al. (section 5.2): a new key goes to subtable i with probability
 * proportional to slots_i / C(keys_i, 2); sets g->choose from the keys each subtable holds. */
void gh__dy_set_choice(gh_dy_geometry *g, const unsigned long long *keys);

/* The ops both backends share (dycuckoo_table.c). */
gh_status gh__dy_init(gh_table *t);
void gh__dy_release(gh_table *t);
gh_status gh__dy_size(gh_table *t, uint64_t *size);
gh_status gh__dy_clear(gh_table *t, void *stream);
gh_status gh__dy_validate(gh_table *t);
gh_status gh__dy_stats(gh_table *t, gh_stats *stats);
/* Export from the table's own arrays (host backend). */
gh_status gh__dy_export_host(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream);
/* Zeroes the counters of one pass (failed, erased, flagged, cursor). */
gh_status gh__dy_reset_pass(gh_table *t, void *stream);
gh_status gh__dy_insert(gh_table *t, const gh_dy_backend *be, const void *keys, const void *values, uint64_t n,
                        gh_dup_policy policy, uint8_t *failed_out, uint64_t *failed, void *stream);
gh_status gh__dy_erase(gh_table *t, const gh_dy_backend *be, const void *keys, uint64_t n, uint8_t *erased_out,
                       uint64_t *erased, void *stream);

/* The table as kernels see it (room and claimed zero). */
gh_dy_device gh__dy_device(gh_table *t);
/* Copies gh__dy_device, with the room left below fill_max, to t's published record when a device view
 * asked for one (queued on stream; nothing to do otherwise). Every call that changes the table ends
 * with it. */
gh_status gh__dy_publish(gh_table *t, void *stream);

/* The ops of each backend (dycuckoo_host.c, dycuckoo_cuda.cu). */
extern const gh_table_ops gh__dycuckoo_host_ops;
#if defined(GH_HAVE_CUDA)
extern const gh_table_ops gh__dycuckoo_cuda_ops;
#endif

#endif /* GH_DYCUCKOO_TABLE_H */
