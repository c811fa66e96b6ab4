/* bench_cuda_stub.c - bench_cuda_open() when gpuhash is built without CUDA (GH_HAVE_CUDA OFF):
 * it fails with one clear message, so the tool links and runs the host backend unchanged. */
#include "bench.h"

int bench_cuda_open(int device, bench_backend *b, char *about, size_t about_size) {
  (void)device, (void)b;
  return snprintf(about, about_size, "gpuhash was built without CUDA (GH_HAVE_CUDA OFF)"), -1;
}
void bench_cuda_close(void) {}
