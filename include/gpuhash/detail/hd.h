/* hd.h - portability macros for logic compiled both by the C compiler (host backend) and by nvcc
 * (device code): GH_HD marks such functions, and the small bit helpers below have one meaning on
 * both sides. */
#ifndef GH_DETAIL_HD_H
#define GH_DETAIL_HD_H

#include <stdint.h>

#if defined(__CUDACC__)
#define GH_HD static __host__ __device__ __forceinline__
#else
#define GH_HD static inline
#endif

/* Index of the lowest set bit of a non-zero mask. */
GH_HD unsigned gh_lowest_bit(uint32_t mask) {
#if defined(__CUDA_ARCH__)
  return (unsigned)(__ffs((int)mask) - 1);
#else
  return (unsigned)__builtin_ctz(mask);
#endif
}

/* Maps a uniformly distributed 64-bit hash onto [0, n) without a division: the high half of the
 * 128-bit product (Lemire's range reduction). */
GH_HD uint64_t gh_range64(uint64_t hash, uint64_t n) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(hash, n);
#else
  return (uint64_t)(((unsigned __int128)hash * n) >> 64);
#endif
}

/* The same for a 32-bit hash and n <= 2^32: one 32x32 multiply, cheaper on the GPU. */
GH_HD uint64_t gh_range32(uint32_t hash, uint64_t n) {
  return ((uint64_t)hash * n) >> 32;
}

#endif /* GH_DETAIL_HD_H */
