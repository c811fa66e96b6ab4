/* cuda_absent.c - the CUDA runtime interface of a build without CUDA: no device, every pointer is
 * a host pointer. Compiled only when the CUDA backend is not built (see CMakeLists.txt). */
#include <stdio.h>

#include "core/cuda_runtime.h"

static gh_status no_cuda(char *cuda_error, size_t size) {
  if (size > 0) snprintf(cuda_error, size, "this gpuhash was built without CUDA");
  return GH_ERR_NO_DEVICE;
}

int gh__cuda_device_count(void) { return 0; }
gh_pointer_location gh__cuda_pointer_location(const void *ptr) {
  (void)ptr;
  return GH_POINTER_HOST;
}
gh_status gh__cuda_use_device(int device, char *cuda_error, size_t size) {
  (void)device;
  return no_cuda(cuda_error, size);
}
void *gh__cuda_malloc(size_t bytes) {
  (void)bytes;
  return NULL;
}
void gh__cuda_free(void *ptr) { (void)ptr; }
void *gh__cuda_pool_alloc(size_t bytes, void *stream, int *pool_missing) {
  (void)bytes, (void)stream;
  *pool_missing = 1;
  return NULL;
}
void gh__cuda_pool_free(void *ptr, void *stream) { (void)ptr, (void)stream; }
void gh__cuda_pool_trim(void) {}
gh_status gh__cuda_copy(void *dst, const void *src, size_t bytes, void *stream, char *cuda_error,
                        size_t size) {
  (void)dst, (void)src, (void)bytes, (void)stream;
  return no_cuda(cuda_error, size);
}
gh_status gh__cuda_sync(void *stream, char *cuda_error, size_t size) {
  (void)stream;
  return no_cuda(cuda_error, size);
}
gh_status gh__cuda_fill(void *dst, int byte, size_t bytes, void *stream, char *cuda_error, size_t size) {
  (void)dst, (void)byte, (void)bytes, (void)stream;
  return no_cuda(cuda_error, size);
}
gh_status gh__cuda_device_sync(char *cuda_error, size_t size) { return no_cuda(cuda_error, size); }
void *gh__cuda_mark_start(void *stream) {
  (void)stream;
  return NULL;
}
double gh__cuda_mark_stop(void *start, void *stream) {
  (void)start, (void)stream;
  return 0.0;
}
