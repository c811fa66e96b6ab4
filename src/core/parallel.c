/* parallel.c - a fork-join loop over POSIX threads for the host backend. Threads are started per
 * call: bulk operations are large enough that thread start-up (tens of microseconds) is noise,
 * and no pool outlives the caller's table. */
#define _POSIX_C_SOURCE 200809L
#include "core/parallel.h"

#include <pthread.h>
#include <unistd.h>

/* Below this many items per thread, extra threads cost more than they save. */
#define GH_PARALLEL_MIN_ITEMS_PER_THREAD 4096u
#define GH_PARALLEL_MAX_THREADS 256u

typedef struct gh_chunk {
  gh_chunk_fn fn;
  void *context;
  uint64_t begin, end;
  gh_counters result;
} gh_chunk;

static void *run_chunk(void *arg) {
  gh_chunk *chunk = (gh_chunk *)arg;
  chunk->result = chunk->fn(chunk->context, chunk->begin, chunk->end);
  return NULL;
}

unsigned gh__cpu_count(void) {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? (unsigned)online : 1u;
}

gh_counters gh__parallel_for(uint64_t n, unsigned threads, gh_chunk_fn fn, void *context) {
  gh_chunk chunks[GH_PARALLEL_MAX_THREADS];
  pthread_t handles[GH_PARALLEL_MAX_THREADS];
  int started[GH_PARALLEL_MAX_THREADS] = {0};
  gh_counters total = {{0}};
  uint64_t wanted = threads ? threads : gh__cpu_count();
  const uint64_t useful = n / GH_PARALLEL_MIN_ITEMS_PER_THREAD;
  if (wanted > useful) wanted = useful;
  if (wanted > GH_PARALLEL_MAX_THREADS) wanted = GH_PARALLEL_MAX_THREADS;
  if (wanted <= 1) return n ? fn(context, 0, n) : total;

  for (uint64_t i = 0; i < wanted; ++i) {
    chunks[i].fn = fn;
    chunks[i].context = context;
    chunks[i].begin = n * i / wanted;
    chunks[i].end = n * (i + 1) / wanted;
  }
  /* Chunk 0 runs on the calling thread; a chunk whose thread cannot start runs here too, so a
   * thread shortage slows the call down but never loses work. */
  for (uint64_t i = 1; i < wanted; ++i)
    started[i] = pthread_create(&handles[i], NULL, run_chunk, &chunks[i]) == 0;
  run_chunk(&chunks[0]);
  for (uint64_t i = 1; i < wanted; ++i) {
    if (started[i]) pthread_join(handles[i], NULL);
    else run_chunk(&chunks[i]);
  }
  for (uint64_t i = 0; i < wanted; ++i)
    for (int c = 0; c < GH_PARALLEL_COUNTERS; ++c) total.value[c] += chunks[i].result.value[c];
  return total;
}
