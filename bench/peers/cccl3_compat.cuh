// Compatibility shim: cuCollections @dc0f9fc (Oct 2024) targets CCCL 2.x and uses
// thrust::identity, which CCCL 3.0 (shipped with CUDA 13.0) removed. Re-provide it.
#pragma once
#include <cuda/std/utility>
#include <thrust/functional.h>
#if defined(CCCL_VERSION) && CCCL_VERSION >= 3000000
namespace thrust {
template <class T = void>
struct identity {
  using argument_type = T;
  using result_type   = T;
  __host__ __device__ constexpr T const& operator()(T const& x) const noexcept { return x; }
};
template <>
struct identity<void> {
  template <class U>
  __host__ __device__ constexpr U&& operator()(U&& x) const noexcept { return ::cuda::std::forward<U>(x); }
};
}  // namespace thrust
#endif
