/* hashgraph_cuda.cu - the HashGraph design on the GPU: the steps of hashgraph_bulk.h, one thread
 * per element (the counts and cursors with global atomics: Green's build V1). */
#include <cuda_runtime.h>

#include "core/kernels.cuh"

extern "C" {
#include "core/toolkit.h"
#include "hashgraph/hashgraph_table.h"
}

static const int kBlockThreads = 256;

__global__ void hg_bulk_kernel(gh_hg_bulk a, uint64_t n) {
  for (uint64_t i = gh_thread_index(); i < n; i += gh_grid_threads()) gh_hg_bulk_one(&a, i);
}

static gh_status cuda_bulk(gh_table *t, const gh_hg_bulk *a, uint64_t n, void *stream) {
  gh_hg_bulk copy = *a;
  void *args[] = {&copy, &n};
  return gh__cuda_launch(t, (const void *)hg_bulk_kernel, n, kBlockThreads, args, stream);
}

static const gh_hg_backend cuda_backend = {cuda_bulk};

static gh_status cuda_init(gh_table *t) { return gh__hg_init(t, &cuda_backend); }

extern "C" const gh_table_ops gh__hashgraph_cuda_ops = GH_HG_OPS("hashgraph/cuda", cuda_init);
