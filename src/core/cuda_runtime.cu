/* cuda_runtime.cu - plain C functions over the CUDA runtime for the library's C code. */
#include <cuda_runtime.h>
#include <stdio.h>

extern "C" {
#include "core/cuda_runtime.h"
}

static gh_status cuda_failure(cudaError_t err, const char *what, char *cuda_error, size_t size) {
  if (size > 0)
    snprintf(cuda_error, size, "%s failed: %s (%s)", what, cudaGetErrorName(err),
             cudaGetErrorString(err));
  return err == cudaErrorMemoryAllocation ? GH_ERR_OUT_OF_MEMORY : GH_ERR_CUDA;
}

extern "C" int gh__cuda_device_count(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError(); /* a missing driver is an answer ("none"), not a sticky error */
    return 0;
  }
  return count;
}

extern "C" gh_pointer_location gh__cuda_pointer_location(const void *ptr) {
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();
    return GH_POINTER_HOST;
  }
  switch (attributes.type) {
    case cudaMemoryTypeDevice: return GH_POINTER_DEVICE;
    case cudaMemoryTypeManaged: return GH_POINTER_MANAGED;
    default: return GH_POINTER_HOST; /* unregistered or pinned host memory */
  }
}

extern "C" gh_status gh__cuda_use_device(int device, char *cuda_error, size_t size) {
  const cudaError_t err = cudaSetDevice(device);
  return err == cudaSuccess ? GH_OK : cuda_failure(err, "cudaSetDevice", cuda_error, size);
}

extern "C" void *gh__cuda_malloc(size_t bytes) {
  void *ptr = NULL;
  if (cudaMalloc(&ptr, bytes) != cudaSuccess) {
    cudaGetLastError();
    return NULL;
  }
  return ptr;
}

extern "C" void gh__cuda_free(void *ptr) { cudaFree(ptr); }

extern "C" gh_status gh__cuda_copy(void *dst, const void *src, size_t bytes, void *stream,
                                   char *cuda_error, size_t size) {
  if (bytes == 0) return GH_OK;
  const cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)stream);
  return err == cudaSuccess ? GH_OK : cuda_failure(err, "cudaMemcpyAsync", cuda_error, size);
}

extern "C" gh_status gh__cuda_sync(void *stream, char *cuda_error, size_t size) {
  const cudaError_t err = cudaStreamSynchronize((cudaStream_t)stream);
  return err == cudaSuccess ? GH_OK : cuda_failure(err, "cudaStreamSynchronize", cuda_error, size);
}

extern "C" gh_status gh__cuda_fill(void *dst, int byte, size_t bytes, void *stream, char *cuda_error, size_t size) {
  if (bytes == 0) return GH_OK;
  const cudaError_t err = cudaMemsetAsync(dst, byte, bytes, (cudaStream_t)stream);
  return err == cudaSuccess ? GH_OK : cuda_failure(err, "cudaMemsetAsync", cuda_error, size);
}

extern "C" gh_status gh__cuda_device_sync(char *cuda_error, size_t size) {
  const cudaError_t err = cudaDeviceSynchronize();
  return err == cudaSuccess ? GH_OK : cuda_failure(err, "cudaDeviceSynchronize", cuda_error, size);
}

extern "C" void *gh__cuda_mark_start(void *stream) {
  cudaEvent_t start = NULL;
  if (cudaEventCreate(&start) != cudaSuccess) return NULL;
  if (cudaEventRecord(start, (cudaStream_t)stream) == cudaSuccess) return start;
  cudaEventDestroy(start);
  return NULL;
}

extern "C" double gh__cuda_mark_stop(void *start, void *stream) {
  cudaEvent_t stop = NULL;
  float ms = 0.0f;
  if (start == NULL) return 0.0;
  if (cudaEventCreate(&stop) == cudaSuccess) {
    if (cudaEventRecord(stop, (cudaStream_t)stream) != cudaSuccess || cudaEventSynchronize(stop) != cudaSuccess ||
        cudaEventElapsedTime(&ms, (cudaEvent_t)start, stop) != cudaSuccess)
      ms = 0.0f;
    cudaEventDestroy(stop);
  }
  cudaEventDestroy((cudaEvent_t)start);
  return ms;
}
