/* cuckoo_table.h - the cuckoo design's state and the primitives each backend provides.
 *
 * The build logic (phases, restarts, growth, the four variants) is written once, in
 * cuckoo_table.c, over a small set of bulk primitives (gh_ck_backend) that the host backend
 * (cuckoo_host.c, CPU threads) and the CUDA backend (cuckoo_cuda.cu, kernels and CUB) implement
 * with the same shared logic of cuckoo.h. Arrays handed to a primitive live on its side. */
#ifndef GH_CUCKOO_TABLE_H
#define GH_CUCKOO_TABLE_H

#include "core/table.h"
#include "cuckoo/cuckoo.h"

/* Where a prepared entry's value comes from. */
typedef enum gh_ck_value_source {
  GH_CK_VALUE_GIVEN = 0, /* values[i] */
  GH_CK_VALUE_INDEX = 1, /* i (the multivalue table's ids of its sorted unique keys) */
  GH_CK_VALUE_NO_ID = 2  /* GH_CK_NO_ID (compacting: ids are assigned after placement) */
} gh_ck_value_source;

/* One multivalue key's values: sorted_values[first, first + count). */
typedef struct gh_ck_key_info {
  uint64_t first;
  uint64_t count;
} gh_ck_key_info;

/* Counters the primitives accumulate in (device or host) memory beside the slots. */
typedef struct gh_ck_counters {
  unsigned long long placed;    /* chains that ended in an empty slot */
  unsigned long long gave_up;   /* chains that hit the eviction limit */
  unsigned long long count;     /* general-purpose result of one primitive */
  unsigned long long side;      /* the all-ones key was newly stored / erased */
  unsigned long long stash;     /* keys erased from the stash */
} gh_ck_counters;

/* Keys one erase removed, by where they were. */
typedef struct gh_ck_erase_counts {
  uint64_t main, side, stash;
} gh_ck_erase_counts;

/* Memory, sorting and scans come from the core toolkit (core/toolkit.h); these are the cuckoo
 * design's own passes. Counting passes read their counters back (the operation waits there). */
typedef struct gh_ck_backend {
  /* Phase 1 of an insert: the all-ones key goes to the side slot (policy applies; counters->
   * side_new); when check_present, keys already in the table get the policy; every other key is
   * packed with its value into entries. *entry_count = how many. */
  gh_status (*prepare)(gh_table *t, const gh_ck_geometry *g, const void *keys, const void *values,
                       gh_ck_value_source source, uint64_t n, int policy, int check_present,
                       void *entries, uint64_t *entry_count, uint64_t *side_new, void *stream);
  /* Phase 2: one eviction chain per entry. A chain that gives up writes the entry it still holds
   * back to entries[i] and sets failed[i]; others clear failed[i]. Bucketed chains mark the slots
   * they move entries into in `moved` (a bitmap of slot_count bits, or NULL; cuckoo.h); *marks =
   * how many marks they made. */
  gh_status (*place)(gh_table *t, const gh_ck_geometry *g, void *entries, uint64_t m, int policy,
                     uint8_t *failed, uint32_t *moved, uint64_t *placed, uint64_t *gave_up, uint64_t *marks,
                     void *stream);
  /* After a pass that gave up: a flagged entry whose key the table holds merges into it by the
   * policy and loses its flag (nothing moves meanwhile). *remaining = entries still flagged. */
  gh_status (*absorb)(gh_table *t, const gh_ck_geometry *g, const void *entries, uint8_t *failed, uint64_t m,
                      int policy, uint64_t *remaining, void *stream);
  /* Phase 3: removes later copies of keys present twice (merging values); *removed copies. */
  gh_status (*dedupe)(gh_table *t, const gh_ck_geometry *g, int policy, uint64_t *removed, void *stream);
  /* The same, reading only the keys of the slots marked in `moved` (gh_ck_resolve_copies). */
  gh_status (*dedupe_moved)(gh_table *t, const gh_ck_geometry *g, const uint32_t *moved, int policy,
                            uint64_t *removed, void *stream);
  /* The same for the stash g->stash (gh_ck_dedupe_stash_entry); *removed copies. */
  gh_status (*dedupe_stash)(gh_table *t, const gh_ck_geometry *g, int policy, uint64_t *removed, void *stream);
  /* Empties entries[i] where flags[i] is 0, in place (what is left is a stash with holes). */
  gh_status (*clear_unflagged)(gh_table *t, const gh_ck_geometry *g, void *entries, const uint8_t *flags,
                               uint64_t m, void *stream);
  /* Every entry in the main slots (when include_slots), then entries[i] with failed[i] (all when
   * failed is NULL) that hold a key, into out; *count = how many. */
  gh_status (*gather)(gh_table *t, const gh_ck_geometry *g, int include_slots, const void *entries,
                      const uint8_t *failed, uint64_t m, void *out, uint64_t *count, void *stream);
  /* Lookups in the map (values of the slot format's width). */
  gh_status (*find)(gh_table *t, const gh_ck_geometry *g, const void *keys, uint64_t n, void *values_out,
                    uint8_t *found_out, uint64_t default_value, void *stream);
  /* *erased: the keys this call removed, by where they were. */
  gh_status (*erase)(gh_table *t, const gh_ck_geometry *g, const void *keys, uint64_t n, uint8_t *erased_out,
                     gh_ck_erase_counts *erased, void *stream);
  /* Every (key, value) of the main slots, the side slot and the stash; *count = how many. */
  gh_status (*export_pairs)(gh_table *t, const gh_ck_geometry *g, void *keys_out, void *values_out,
                            uint64_t *count, void *stream);
  /* Compacting: positions holding a key whose value is GH_CK_NO_ID get the ids first_id,
   * first_id + 1, ... (in any order), and keys_by_id[id] = key. *assigned = how many. */
  gh_status (*assign_ids)(gh_table *t, const gh_ck_geometry *g, uint64_t first_id, void *keys_by_id,
                          uint64_t *assigned, void *stream);
  /* Compacting: keys_out[i] = keys_by_id[ids[i]] for ids below id_count; *bad = the others. */
  gh_status (*keys_of_ids)(gh_table *t, const void *keys_by_id, uint64_t id_count, const void *ids,
                           uint64_t n, void *keys_out, uint64_t *bad, void *stream);
  /* Multivalue build: info[r] = {firsts[r], counts[r]} for r < unique. */
  gh_status (*key_info)(gh_table *t, const uint64_t *firsts, const uint64_t *counts, uint64_t unique,
                        gh_ck_key_info *info, void *stream);
  /* counts[i] = info[ids[i]].count where found[i] (0 otherwise; found NULL = all found) for i < n,
   * and counts[n] = 0 (so that one exclusive scan of n + 1 gives offsets and the total). */
  gh_status (*value_counts)(gh_table *t, const gh_ck_key_info *info, const uint32_t *ids, const uint8_t *found,
                            uint64_t n, uint64_t *counts, void *stream);
  /* *total = the sum of info[ids[i]].count over the i with removed[i]: what a multivalue erase
   * took out. It allocates nothing, so that an erase, once done, cannot fail at counting. */
  gh_status (*removed_values)(gh_table *t, const gh_ck_key_info *info, const uint32_t *ids, const uint8_t *removed,
                              uint64_t n, uint64_t *total, void *stream);
  /* values_out[offsets[i] + j] = j-th value of ids[i] (found ones only); when keys_out is given,
   * keys_out[offsets[i] + j] = keys[i] too. With offsets NULL instead: values_out[i] = the first
   * value of ids[i], or default_value where not found. */
  gh_status (*gather_values)(gh_table *t, const gh_ck_key_info *info, const void *sorted_values,
                             const uint32_t *ids, const uint8_t *found, const uint64_t *offsets, uint64_t n,
                             uint64_t default_value, const void *keys, void *keys_out, void *values_out,
                             void *stream);
  /* First buckets by regions (cuckoo.h), for m entries of a batch into a table that holds no keys.
   * The work space partition_first takes beside the sorted copy (m entries); then the entries put
   * in runs by the region of their first bucket into `sorted` (*longest: the longest run); then
   * place_first builds every region that has a run and writes it over its slots (the others stay
   * as they are: empty, in a table that holds no keys), the entries whose
   * first bucket was full to entries[0, *passed) (copies merged, but for *spilled of them, which
   * found their region's set of passed entries full), *placed = keys added. */
  size_t (*first_work_bytes)(gh_table *t, uint64_t m, uint64_t regions);
  gh_status (*partition_first)(gh_table *t, const gh_ck_geometry *g, const void *entries, uint64_t m, void *sorted,
                               void *work, size_t work_bytes, uint64_t *longest, void *stream);
  gh_status (*place_first)(gh_table *t, const gh_ck_geometry *g, const void *sorted, void *work, size_t work_bytes,
                           uint64_t m, int policy, void *entries, uint64_t *placed, uint64_t *passed,
                           uint64_t *spilled, void *stream);
  /* Whether large batches go by regions when gh_config.bulk_min_keys is 0: where a region is built
   * in fast memory of its own (the GPU's shared memory), not on the host. */
  int first_by_default;
  uint64_t max_regions;
} gh_ck_backend;

typedef struct gh_ck_table {
  gh_ck_geometry geometry; /* geometry.stash / stash_slots: the stash array, if any */
  const gh_ck_backend *backend;
  void *slots;            /* slot_count + 1 slots */
  size_t slots_bytes;
  size_t stash_bytes;     /* as allocated (geometry.stash may hold fewer slots) */
  gh_ck_counters *counters;
  uint64_t main_keys;     /* keys in the main slots */
  uint64_t side_keys;     /* 1 when the all-ones key is stored */
  uint64_t stash_keys;    /* keys in the stash */
  uint64_t capacity;      /* keys the slots are sized for */
  uint64_t attempts;      /* constants drawn so far (each build attempt draws fresh ones) */
  uint64_t restarts;
  uint64_t grows;
  uint64_t region_builds; /* batches whose first buckets were built by regions (tests read these) */
  uint64_t region_passed; /* their entries whose first bucket was full */
  uint64_t region_spilled; /* of those, passed on unmerged (a region's set of passed entries full) */
  unsigned forced_failures; /* test hook: attempts still to use degenerate constants */
  int forced_attempt;       /* the constants in force are such an attempt's: its chains give up at once */
  /* compacting: keys in id order */
  void *keys_by_id;
  uint64_t keys_by_id_capacity;
  /* multivalue: the map stores key -> id; the values of id are sorted_values[info[id]] */
  void *sorted_values;
  uint64_t value_count;   /* entries of sorted_values */
  gh_ck_key_info *info;
  uint64_t id_count;      /* entries of info (allocated) */
  uint64_t id_used;       /* ids given: 0..id_used-1 */
  uint64_t pairs;         /* pairs of keys still present */
} gh_ck_table;

/* The ops of each backend; they share everything but the primitives. */
extern const gh_ck_backend gh__cuckoo_host_backend;
#if defined(GH_HAVE_CUDA)
extern const gh_ck_backend gh__cuckoo_cuda_backend;
#endif

/* Test hook: the next `attempts` build attempts of this cuckoo table use degenerate constants
 * (every function sends a key to the same bucket) and chains that give up at once, so they fail
 * and restart. */
void gh__cuckoo_force_failures(gh_table *table, unsigned attempts);

#endif /* GH_CUCKOO_TABLE_H */
