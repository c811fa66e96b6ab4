/*
 * tracking_alloc.h - a gh_allocator for tests that keeps the library honest about memory.
 *
 * It records every block it hands out (pointer -> size and kind) and checks every free against
 * that record: a free of an unknown pointer, a second free of a block (freed blocks are held back
 * in a quarantine for a while, so that a double free is recognised as one), or a free with another
 * size or kind than the block was allocated with is a "bad free", counted and described. At the
 * end of a table's life nothing may be left (tu_tracker_check_clean).
 *
 * It also fails allocations on request: the n-th allocation after tu_tracker_fail_nth(n) returns
 * NULL (once), and allocations that would take the live total past a limit return NULL, so that
 * a runaway (a table that grows without end) fails instead of exhausting the machine.
 *
 * Host blocks come from aligned_alloc (64-byte aligned, as gpuhash.h asks); device blocks from
 * cudaMalloc when the test is built with the CUDA runtime (GH_TEST_HAVE_CUDART), so the allocator
 * serves CUDA tables too. Thread-safe. Plain C11.
 */
#ifndef GH_TRACKING_ALLOC_H
#define GH_TRACKING_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "gpuhash.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tu_tracker tu_tracker;

tu_tracker *tu_tracker_new(void);
/* Frees the tracker and whatever blocks are still recorded (after tu_tracker_check_clean has
 * reported them). */
void tu_tracker_delete(tu_tracker *tracker);
/* Frees every block still recorded (leaks already reported) and zeroes the counters, so that one
 * leak is reported once, not again by every later check. Keeps the limit. */
void tu_tracker_reset(tu_tracker *tracker);
/* Makes config use the tracker. */
void tu_tracker_attach(tu_tracker *tracker, gh_config *config);

/* The n-th allocation from now (1-based) fails; n = 0 disarms. Resets the counters below. */
void tu_tracker_fail_nth(tu_tracker *tracker, uint64_t n);
/* Allocations asked for since the last tu_tracker_fail_nth (failed ones included). */
uint64_t tu_tracker_calls(const tu_tracker *tracker);
/* Whether the armed failure has happened since the last tu_tracker_fail_nth. */
int tu_tracker_injected(const tu_tracker *tracker);
/* Live bytes may not exceed limit (0 = no limit): allocations past it fail. */
void tu_tracker_set_limit(tu_tracker *tracker, size_t limit);
/* Allocations refused by the limit so far. */
uint64_t tu_tracker_limit_refusals(const tu_tracker *tracker);

size_t tu_tracker_live_bytes(const tu_tracker *tracker, gh_memory_kind kind);
size_t tu_tracker_live_blocks(const tu_tracker *tracker);
/* Allocations of the kind asked for over the tracker's life. */
uint64_t tu_tracker_requests(const tu_tracker *tracker, gh_memory_kind kind);
/* Bad frees so far, and the first and the latest one described (or ""). */
uint64_t tu_tracker_bad_frees(const tu_tracker *tracker);
const char *tu_tracker_first_problem(const tu_tracker *tracker);
const char *tu_tracker_last_problem(const tu_tracker *tracker);

/* CHECKs that no block is live (describing the first few leaked ones) and no free was bad;
 * `when` names the moment ("after gh_destroy"). Returns 1 when clean. */
int tu_tracker_check_clean(tu_tracker *tracker, const char *when);
/* CHECKs that no free was bad so far. Returns 1 when none was. */
int tu_tracker_check_frees(tu_tracker *tracker, const char *when);

#ifdef __cplusplus
}
#endif

#endif /* GH_TRACKING_ALLOC_H */
