/* hashgraph_host.c - the HashGraph design on CPU threads: the steps of hashgraph_bulk.h over
 * contiguous chunks of the elements (the counts and cursors with atomic adds, as on the GPU). */
#include "core/parallel.h"
#include "hashgraph/hashgraph_table.h"

static gh_counters bulk_chunk(void *context, uint64_t begin, uint64_t end) {
  const gh_hg_bulk *a = (const gh_hg_bulk *)context;
  for (uint64_t i = begin; i < end; ++i) gh_hg_bulk_one(a, i);
  const gh_counters none = {{0}};
  return none;
}

static gh_status host_bulk(gh_table *t, const gh_hg_bulk *a, uint64_t n, void *stream) {
  (void)stream;
  gh__parallel_for(n, t->config.host_threads, bulk_chunk, (void *)a);
  return GH_OK;
}

static const gh_hg_backend host_backend = {host_bulk, NULL}; /* (V2 is a GPU cache layout: V1 here) */

static gh_status host_init(gh_table *t) { return gh__hg_init(t, &host_backend); }

const gh_table_ops gh__hashgraph_host_ops = GH_HG_OPS("hashgraph/host", host_init);
