/*
 * alloc_inject.h - allocation-failure injection: one operation on a table, run again and again
 * with its 1st, 2nd, 3rd, ... allocation failing, until it completes without meeting the failure.
 *
 * After each failed run (the allocator disarmed again) the header's promise is checked: the call
 * returned GH_ERR_OUT_OF_MEMORY, gh_last_error says what happened and what was kept, no output
 * was written (canaries), and the table is exactly as it was: gh_size, gh_memory_usage and the
 * allocator's live bytes unchanged, no bad free, and every acknowledged key found with its
 * value(s) against the reference model (tu_model_check, which validates too). The run that
 * completes is checked like any call and brings the model up to date.
 *
 * Used by alloc_failure (every design, variant and operation) and by design-specific tests
 * that add a twist through before_attempt (tests/cuckoo.c forces hash-function restarts).
 */
#ifndef GH_ALLOC_INJECT_H
#define GH_ALLOC_INJECT_H

#include <stdint.h>

#include "ref_models.h"
#include "test_util.h"
#include "tracking_alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tu_op_kind {
  TU_OP_INSERT,   /* keys, values (NULL for sets and compacting tables), policy */
  TU_OP_FIND,     /* keys: values_out (maps), found_out, a default value */
  TU_OP_CONTAINS, /* keys */
  TU_OP_ERASE,    /* keys */
  TU_OP_COUNT,    /* keys (multi-value tables) */
  TU_OP_FIND_ALL, /* keys (multi-value tables), into a buffer of exactly the values' count */
  TU_OP_EXPORT,
  TU_OP_KEYS_OF_IDS, /* keys[i] are ids (compacting tables) */
  TU_OP_CLEAR,
  TU_OP_VALIDATE,
  TU_OP_JOIN,           /* keys as the left rows (multi-value tables), GH_JOIN_PROBE, exact capacity */
  TU_OP_JOIN_INTERSECT, /* the same by GH_JOIN_INTERSECT (designs with GH_CAP_JOIN_INTERSECT) */
  TU_OP_SEMI_INTERSECT, /* gh_semi_join by GH_JOIN_INTERSECT */
  TU_OP_JOIN_COUNT      /* gh_join_count by GH_JOIN_PROBE (multi-value tables): the total alone */
} tu_op_kind;

typedef struct tu_op {
  tu_op_kind kind;
  const char *name;     /* for messages: "insert into a non-empty table" */
  const uint64_t *keys; /* or ids */
  const uint64_t *values;
  uint64_t n;
  gh_dup_policy policy;
  /* GH_ERR_TABLE_FULL is a (partial) success: for designs with GH_CAP_REPORTS_FULL */
  int allow_full;
  /* Called before every attempt, with the allocator not yet armed (may be NULL). */
  void (*before_attempt)(gh_table *table, void *arg);
  void *arg;
} tu_op;

/* Runs op with allocation k = 1, 2, ... failing, as described above. Returns the number of runs
 * that failed (the allocations the operation makes before its last one). */
uint64_t tu_fail_each_allocation(tu_tracker *tracker, tu_model *model, tu_rng *rng,
                                 const tu_op *op);

/* Whether a failure message says what was kept ("nothing was changed", "every key kept", "the
 * table is unchanged", ...). */
int tu_says_what_was_kept(const char *text);

#ifdef __cplusplus
}
#endif

#endif /* GH_ALLOC_INJECT_H */
