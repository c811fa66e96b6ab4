/* cuda_runtime.h - the part of the CUDA runtime the C code of the library needs, behind plain C
 * functions (core/cuda_runtime.cu). Built without CUDA, core/cuda_absent.c answers that no
 * device exists. cuda_error receives the CUDA error name and text when a call fails. */
#ifndef GH_CORE_CUDA_RUNTIME_H
#define GH_CORE_CUDA_RUNTIME_H

#include <stddef.h>

#include "gpuhash.h"

typedef enum gh_pointer_location {
  GH_POINTER_HOST = 0,    /* pageable or pinned host memory: the device cannot use it directly */
  GH_POINTER_DEVICE = 1,  /* device memory: the host cannot use it directly */
  GH_POINTER_MANAGED = 2  /* managed memory: both can (after synchronisation) */
} gh_pointer_location;

int gh__cuda_device_count(void);
gh_pointer_location gh__cuda_pointer_location(const void *ptr);
gh_status gh__cuda_use_device(int device, char *cuda_error, size_t size);
void *gh__cuda_malloc(size_t bytes);
void gh__cuda_free(void *ptr);
/* Stream-ordered scratch from gpuhash's memory pool of the current device (created on first use,
 * keeping what is freed into it: its release threshold is unlimited): NULL when out of memory;
 * *pool_missing set (and NULL) when the device has no pool for it, for the caller to allocate
 * otherwise (also when the pool failed for another reason than memory: it is made again next
 * time). Freed on the stream it was allocated on. trim gives every pool's unused memory back
 * (gh_destroy, and gh__cuda_malloc before its second try when the device ran out). */
void *gh__cuda_pool_alloc(size_t bytes, void *stream, int *pool_missing);
void gh__cuda_pool_free(void *ptr, void *stream);
void gh__cuda_pool_trim(void);
/* Stream-ordered copy between any two locations (cudaMemcpyDefault). */
gh_status gh__cuda_copy(void *dst, const void *src, size_t bytes, void *stream, char *cuda_error,
                        size_t size);
/* Stream-ordered memset of device memory. */
gh_status gh__cuda_fill(void *dst, int byte, size_t bytes, void *stream, char *cuda_error, size_t size);
/* Waits for the stream's work, or for all work of the current device. */
gh_status gh__cuda_sync(void *stream, char *cuda_error, size_t size);
gh_status gh__cuda_device_sync(char *cuda_error, size_t size);
/* Device time between two points of a stream: mark_start records an event there (NULL when none
 * could be made), mark_stop another, waits for it and returns the milliseconds between them (0 when
 * start is NULL or timing failed: a stopwatch never fails the work it times); both events go. */
void *gh__cuda_mark_start(void *stream);
double gh__cuda_mark_stop(void *start, void *stream);

#endif /* GH_CORE_CUDA_RUNTIME_H */
