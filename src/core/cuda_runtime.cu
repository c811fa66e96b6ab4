/* cuda_runtime.cu - plain C functions over the CUDA runtime for the library's C code. */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

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

extern "C" void gh__cuda_free(void *ptr) { cudaFree(ptr); }

/* gpuhash's scratch pools, one a device, made on first use (under the mutex) and kept for the
 * process: cudaMemPoolCreate's pool of the device's memory with no release threshold, so memory
 * freed into it stays there for the next call's scratch (the default pool's threshold of 0 would
 * give it back at every synchronisation, and setting the default pool's would change it for every
 * library in the process). */
static const int kMaxPoolDevices = 64;
static cudaMemPool_t scratch_pools[kMaxPoolDevices];
static int scratch_pool_state[kMaxPoolDevices]; /* 0 not tried, 1 made, -1 none to be had */
static pthread_mutex_t scratch_pool_lock = PTHREAD_MUTEX_INITIALIZER;

static cudaMemPool_t scratch_pool(int device) {
  if (device < 0 || device >= kMaxPoolDevices) return NULL;
  pthread_mutex_lock(&scratch_pool_lock);
  if (scratch_pool_state[device] == 0) {
    int supported = 0;
    cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device);
    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    unsigned long long unlimited = ~0ull;
    const int created = supported && cudaMemPoolCreate(&scratch_pools[device], &props) == cudaSuccess;
    const int made =
        created && cudaMemPoolSetAttribute(scratch_pools[device], cudaMemPoolAttrReleaseThreshold, &unlimited) == cudaSuccess;
    if (created && !made) cudaMemPoolDestroy(scratch_pools[device]);
    if (!made) cudaGetLastError();
    scratch_pool_state[device] = made ? 1 : -1;
  }
  const cudaMemPool_t pool = scratch_pool_state[device] == 1 ? scratch_pools[device] : NULL;
  pthread_mutex_unlock(&scratch_pool_lock);
  return pool;
}

extern "C" void *gh__cuda_pool_alloc(size_t bytes, void *stream, int *pool_missing) {
  int device = 0;
  cudaGetDevice(&device);
  const cudaMemPool_t pool = scratch_pool(device);
  *pool_missing = pool == NULL;
  void *ptr = NULL;
  if (pool == NULL) return NULL;
  const cudaError_t err = cudaMallocFromPoolAsync(&ptr, bytes, pool, (cudaStream_t)stream);
  if (err == cudaSuccess) return ptr;
  cudaGetLastError();
  if (err != cudaErrorMemoryAllocation) {
    /* Not a want of memory: a pool no longer valid (a cudaDeviceReset, say). Made again next
     * time; this call's scratch comes from the allocator. */
    pthread_mutex_lock(&scratch_pool_lock);
    scratch_pool_state[device] = 0;
    pthread_mutex_unlock(&scratch_pool_lock);
    *pool_missing = 1;
  }
  return NULL;
}

extern "C" void gh__cuda_pool_free(void *ptr, void *stream) { cudaFreeAsync(ptr, (cudaStream_t)stream); }

extern "C" void gh__cuda_pool_trim(void) {
  pthread_mutex_lock(&scratch_pool_lock);
  for (int device = 0; device < kMaxPoolDevices; ++device)
    if (scratch_pool_state[device] == 1) cudaMemPoolTrimTo(scratch_pools[device], 0);
  pthread_mutex_unlock(&scratch_pool_lock);
}

/* A table's arrays come from cudaMalloc, which cannot use what the scratch pools keep: when it runs
 * out, the pools give back what they hold unused (frees still queued behind work stay; no wait
 * for the device here: a distributed table's thread may be inside a collective) and it tries once
 * more. */
extern "C" void *gh__cuda_malloc(size_t bytes) {
  void *ptr = NULL;
  if (cudaMalloc(&ptr, bytes) == cudaSuccess) return ptr;
  cudaGetLastError();
  gh__cuda_pool_trim();
  if (cudaMalloc(&ptr, bytes) == cudaSuccess) return ptr;
  cudaGetLastError();
  return NULL;
}

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
