/* hashgraph_host.c - the HashGraph design on CPU threads: the steps of hashgraph_bulk.h over
 * contiguous chunks of the elements (the counts and cursors with atomic adds, as on the GPU). */
#include "core/parallel.h"
#include "hashgraph/hashgraph_table.h"

/* value[0]: the matches a PROBE_COUNT counted in the chunk. */
static gh_counters bulk_chunk(void *context, uint64_t begin, uint64_t end) {
  const gh_hg_bulk *a = (const gh_hg_bulk *)context;
  gh_counters counted = {{0}};
  for (uint64_t i = begin; i < end; ++i) counted.value[0] += gh_hg_bulk_one(a, i);
  return counted;
}

static gh_status host_bulk(gh_table *t, const gh_hg_bulk *a, uint64_t n, void *stream) {
  (void)stream;
  const gh_counters counted = gh__parallel_for(n, t->config.host_threads, bulk_chunk, (void *)a);
  if (a->kind == GH_HG_PROBE_COUNT && a->counters) a->counters[0] += counted.value[0];
  return GH_OK;
}

static const gh_hg_backend host_backend = {host_bulk, NULL}; /* (V2 is a GPU cache layout: V1 here) */

static gh_status host_init(gh_table *t) { return gh__hg_init(t, &host_backend); }

const gh_table_ops gh__hashgraph_host_ops = GH_HG_OPS("hashgraph/host", host_init);
