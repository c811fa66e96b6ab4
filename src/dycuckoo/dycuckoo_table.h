/* dycuckoo_table.h - the DyCuckoo design's state both backends share (work in progress on branch
 * wip/dycuckoo, see docs/dycuckoo-plan.md: not in the registry until both backends exist). */
#ifndef GH_DYCUCKOO_TABLE_H
#define GH_DYCUCKOO_TABLE_H

#include "core/table.h"
#include "gpuhash/detail/dycuckoo.h"

/* Counters kept beside the subtables (device memory for CUDA). */
typedef struct gh_dy_counters {
  unsigned long long keys[GH_DY_MAX_TABLES]; /* keys stored in each subtable */
  unsigned long long side;                   /* 1 while the all-ones key is stored */
  unsigned long long evictions;              /* forward moves made by inserts */
  unsigned long long failed;                 /* inserts of the last batch that found no room */
} gh_dy_counters;

/* One subtable: its key lines, values and lock words. */
typedef struct gh_dy_subtable {
  void *keys;       /* buckets x 128 bytes */
  void *values;     /* buckets x slots x value_bytes (NULL for a set) */
  uint32_t *locks;  /* buckets */
} gh_dy_subtable;

typedef struct gh_dy_table {
  gh_dy_geometry geometry;
  gh_memory_kind kind;
  gh_dy_subtable sub[GH_DY_MAX_TABLES];
  void *side_slot;  /* the all-ones key's value (slot.h's side slot) */
  gh_dy_counters *counters;
  uint64_t upsizes, downsizes;
} gh_dy_table;

/* The geometry a config gives: d subtables of equal size holding capacity keys at fill_max. */
gh_dy_geometry gh__dy_geometry(const gh_config *config);

/* The balancing rule of Li et al. (section 5.2): a new key goes to subtable i with probability
 * proportional to slots_i / C(keys_i, 2); sets g->choose from the keys each subtable holds. */
void gh__dy_set_choice(gh_dy_geometry *g, const unsigned long long *keys);

/* Memory of one subtable of `buckets` buckets. */
size_t gh__dy_subtable_bytes(const gh_dy_geometry *g, uint64_t buckets);

#endif /* GH_DYCUCKOO_TABLE_H */
