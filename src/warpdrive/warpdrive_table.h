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
  unsigned long long cursor; /* output position (export; the bulk insert's passed entries) */
  unsigned long long work;   /* the next entries to take (the bulk insert's rounds) */
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
  /* An erase has left tombstones since the last clear or compact: the bulk insert, which takes a
   * full window for a window without the key, stays off. */
  int tombstones_possible;
  /* gh_get_device_view gave the slots out: user kernels may insert into them while a gh_insert
   * runs (on another stream), and the bulk insert's CUDA rounds, which write whole regions back,
   * would lose those inserts. It stays off for the table's life. */
  int device_view_given;
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
/* gh_compact: a rebuild into fresh slots where its memory can be had, else the in-place rehash of
 * gpuhash/detail/warpdrive.h: the backend's pass (gh_wd_rehash_slot over every main slot, with the
 * windows marked by the pass before and those it marks; *changed = the slots it changed) run until
 * one changes nothing. */
typedef gh_status (*gh_wd_rehash_pass)(gh_table *t, const uint32_t *marked_before, uint32_t *marked,
                                       uint64_t *changed, void *stream);
gh_status gh__wd_compact(gh_table *t, gh_wd_rehash_pass pass, void *stream);

/* ---- The cache-partitioned bulk insert (gh_config.bulk_min_keys) --------------------------------
 * A round: the entries still pending (the batch itself in the first round) are put in runs by the
 * region of window `attempt` of their probe sequences, and each tries its windows attempt ..
 * until - 1, all in that region: the first round a sequence's local windows (gpuhash/detail/
 * warpdrive.h), a later round one window. Those that found them full without their key pass to
 * the next round at window `until`. On a table without tombstones a full window stays full, so a
 * key that reaches window a has windows 0 .. a - 1 full and keyless, as the ordinary walk would
 * have seen them. The last round walks its entries on from their window to the probe limit,
 * unsorted. warpdrive_table.c runs the rounds; each backend brings the two steps. */
typedef struct gh_wd_round {
  const void *keys, *values; /* round 0: the batch (values NULL: an erase's) */
  const void *pending;       /* later rounds: the entries (in slot format) that passed, or NULL */
  uint64_t n;
  uint32_t attempt;          /* the window number every entry of the round starts at */
  uint32_t until;            /* ... and the one it passes on at (within attempt's region) */
  unsigned regions;          /* runs of the partition: the table's windows in ranges of 2^region_shift */
  unsigned region_shift;
  int last;
  int policy;
  void *sorted;              /* the partition's output: n slots in runs by region */
  void *passed;              /* the round's output: entries whose window was full (not in the last) */
  void *work;                /* the partition's work space, work_bytes (the backend's partition_bytes) */
  size_t work_bytes;
} gh_wd_round;

typedef struct gh_wd_bulk_backend {
  size_t (*region_bytes)(gh_table *t); /* the most a region may hold */
  /* gh_config.bulk_min_keys = 0: whether the bulk insert takes a batch of n keys into `regions`
   * regions. */
  int (*takes_by_default)(gh_table *t, uint64_t n, unsigned regions);
  /* The partition's work space for up to n entries in `regions` runs: taken with the entries'
   * copies before anything changes, so that no round fails for memory. */
  size_t (*partition_bytes)(gh_table *t, uint64_t n, unsigned regions);
  /* r->sorted = the round's entries (r->pending, or the batch) in runs by the region of their
   * window r->attempt (where their windows up to r->until lie); *longest (when not NULL) = the
   * longest run (the call then waits for the partition). */
  gh_status (*partition)(gh_table *t, const gh_wd_round *r, uint64_t *longest, void *stream);
  /* Each of the r->n entries (slots) at `entries` tries its windows r->attempt .. r->until - 1 (the
   * last round: the rest of its sequence), counting into the size counter and the status flags as
   * an insert does;
   * after->failed = entries that did not fit (last round), after->cursor = entries passed on. */
  gh_status (*round)(gh_table *t, const gh_wd_round *r, const void *entries, gh_wd_call_counters *after,
                     void *stream);
  /* The bulk erase's: each of the r->n entries at `entries` (slots; only their keys matter) erases
   * its key where windows r->attempt (0) .. r->until - 1 hold it, or finds it absent at an empty
   * slot there; the others are passed on. The last round walks the whole sequence, as an ordinary
   * erase does. Counts as an erase does; after->erased = keys removed, after->cursor = entries
   * passed on. */
  gh_status (*erase_round)(gh_table *t, const gh_wd_round *r, const void *entries, gh_wd_call_counters *after,
                           void *stream);
  uint64_t max_regions; /* the most regions its partition sorts into (larger tables: no bulk calls) */
} gh_wd_bulk_backend;

/* Inserts the batch in rounds when gh_config.bulk_min_keys and the table let it (*taken = 1);
 * else *taken = 0 and nothing was done: the caller runs the ordinary insert. */
gh_status gh__wd_bulk_insert(gh_table *t, const gh_wd_bulk_backend *b, const void *keys, const void *values,
                             uint64_t n, int policy, const uint8_t *failed_out, uint64_t *failed, int *taken,
                             void *stream);

/* The bulk erase, by the same rule and knob (gh_config.bulk_min_keys): the batch in runs by the
 * region of its keys' first windows, then a round that erases each key within its sequence's local
 * windows (all in that region), and an ordinary erase of the few left undecided. Not with
 * erased_out (its per-key report follows the batch's order) or a device view given out, and only
 * on tables with locality (gpuhash/detail/warpdrive.h). *taken = 0: nothing was done. */
gh_status gh__wd_bulk_erase(gh_table *t, const gh_wd_bulk_backend *b, const void *keys, uint64_t n,
                            const uint8_t *erased_out, uint64_t *erased, int *taken, void *stream);

/* The ops of each backend (warpdrive_host.c, warpdrive_cuda.cu). */
extern const gh_table_ops gh__warpdrive_host_ops;
#if defined(GH_HAVE_CUDA)
extern const gh_table_ops gh__warpdrive_cuda_ops;
#endif

#endif /* GH_WARPDRIVE_TABLE_H */
