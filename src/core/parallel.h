/* parallel.h - the host backend's parallel loop: [0, n) split into contiguous chunks, one per
 * worker thread. Each chunk's function returns its counters, which are summed. */
#ifndef GH_CORE_PARALLEL_H
#define GH_CORE_PARALLEL_H

#include <stdint.h>

#define GH_PARALLEL_COUNTERS 4

typedef struct gh_counters {
  uint64_t value[GH_PARALLEL_COUNTERS];
} gh_counters;

/* Processes [begin, end) of the work described by context, returning what it counted. */
typedef gh_counters (*gh_chunk_fn)(void *context, uint64_t begin, uint64_t end);

/* Runs fn over [0, n) on up to `threads` threads (0 = one per online CPU); small n runs inline.
 * Returns the summed counters. */
gh_counters gh__parallel_for(uint64_t n, unsigned threads, gh_chunk_fn fn, void *context);

/* The number of online CPUs (at least 1). */
unsigned gh__cpu_count(void);

#endif /* GH_CORE_PARALLEL_H */
