/* cuda_kernels.cuh - what the CUDA backends of all designs share: turning a failed runtime call
 * into a status and a table message, and the size of a resident grid for grid-stride kernels. */
#ifndef GH_CORE_CUDA_KERNELS_CUH
#define GH_CORE_CUDA_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

/* Returns from the enclosing function when call fails; an allocation failure maps to
 * GH_ERR_OUT_OF_MEMORY, everything else to GH_ERR_CUDA. */
#define GH_CUDA_TRY(t, call, what)                                                                       \
  do {                                                                                                   \
    const cudaError_t gh_err_ = (call);                                                                  \
    if (gh_err_ != cudaSuccess)                                                                          \
      return gh__fail((t), gh_err_ == cudaErrorMemoryAllocation ? GH_ERR_OUT_OF_MEMORY : GH_ERR_CUDA,   \
                      "%s failed: %s (%s)", (what), cudaGetErrorName(gh_err_), cudaGetErrorString(gh_err_)); \
  } while (0)

/* Blocks for a grid-stride kernel over threads_wanted threads: no more than fit on the device at
 * once (so every block stays resident and loops), at least one. */
static inline int gh_cuda_resident_grid(uint64_t threads_wanted, const void *kernel, int block_threads) {
  int device = 0, sms = 0, per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads, 0);
  const uint64_t resident = (uint64_t)(sms > 0 ? sms : 1) * (uint64_t)(per_sm > 0 ? per_sm : 1);
  const uint64_t blocks = (threads_wanted + block_threads - 1) / block_threads;
  return (int)(blocks < resident ? (blocks ? blocks : 1) : resident);
}

#endif /* GH_CORE_CUDA_KERNELS_CUH */
