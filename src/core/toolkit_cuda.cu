/* toolkit_cuda.cu - the CUDA half of core/toolkit.h (CUB's scan, radix sort and run-length
 * encode, queued on the caller's stream) and the launch helpers of core/kernels.cuh. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <limits.h>

#include "core/kernels.cuh"

extern "C" {
#include "core/toolkit.h"
}

/* ---- Launching ---------------------------------------------------------------------------------- */

gh_status gh__cuda_launch(gh_table *t, const void *kernel, uint64_t threads, int block_threads, void **args,
                          void *stream) {
  if (kernel == NULL)
    return gh__fail(t, GH_ERR_INTERNAL, "%s: no kernel for key_bits %u, value_bits %u", t->ops->name,
                    t->config.key_bits, t->config.value_bits);
  const dim3 grid(gh_cuda_resident_grid(threads, kernel, block_threads));
  GH_CUDA_TRY(t, cudaLaunchKernel(kernel, grid, dim3(block_threads), args, 0, (cudaStream_t)stream),
              "kernel launch");
  return GH_OK;
}

gh_status gh__cuda_launch_counted(gh_table *t, const void *kernel, uint64_t threads, int block_threads,
                                  void **args, void *counters, void *counters_host, size_t counter_bytes,
                                  void *stream) {
  gh_status status = gh__fill(t, counters, 0, counter_bytes, stream);
  if (status == GH_OK) status = gh__cuda_launch(t, kernel, threads, block_threads, args, stream);
  return status == GH_OK ? gh__to_host(t, counters_host, counters, counter_bytes, stream) : status;
}

gh_status gh__cuda_launch_regions(gh_table *t, const void *kernel, uint64_t regions, int block_threads,
                                  size_t shared_bytes, void **args, void *stream) {
  if (kernel == NULL)
    return gh__fail(t, GH_ERR_INTERNAL, "%s: no region kernel for key_bits %u, value_bits %u", t->ops->name,
                    t->config.key_bits, t->config.value_bits);
  GH_CUDA_TRY(t, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared_bytes),
              "cudaFuncSetAttribute (the region kernel's shared memory)");
  GH_CUDA_TRY(t, cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared),
              "cudaFuncSetAttribute (the region kernel's shared memory carveout)");
  GH_CUDA_TRY(t, cudaLaunchKernel(kernel, dim3((unsigned)regions), dim3(block_threads), args, shared_bytes,
                                  (cudaStream_t)stream),
              "the region kernel's launch");
  return GH_OK;
}

/* ---- CUB ----------------------------------------------------------------------------------------- */

/* CUB's two-phase call: ask for the temporary storage, take it as scratch, run. The scratch is
 * released at the table's next synchronisation point, after the queued algorithm has run. */
template <typename Call>
static gh_status cub_run(gh_table *t, const char *what, void *stream, Call call) {
  size_t bytes = 0;
  cudaError_t err = call(NULL, bytes);
  if (err == cudaSuccess) {
    gh_scratch temp;
    const gh_status status = gh__scratch_alloc_on(t, &temp, bytes, stream);
    if (status != GH_OK) return status;
    err = call(temp.ptr, bytes);
    gh__scratch_free(t, &temp, stream);
  }
  GH_CUDA_TRY(t, err, what);
  return GH_OK;
}

/* The element type of a width. */
template <unsigned BITS>
struct gh_word_of {
  typedef uint32_t type;
};
template <>
struct gh_word_of<64> {
  typedef uint64_t type;
};

extern "C" gh_status gh__cuda_exclusive_sum_u64(gh_table *t, const uint64_t *in, uint64_t *out, uint64_t count,
                                                void *stream) {
  return cub_run(t, "CUB exclusive scan", stream, [&](void *temp, size_t &bytes) {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, in, out, (int64_t)count, (cudaStream_t)stream);
  });
}

/* ---- Sorting records by a small digit (the bulk insert's rounds) ---------------------------------- */

/* A 16-byte record moved as one value. */
struct gh_record16 {
  unsigned long long lo, hi;
};

template <typename Digit, typename Record>
static cudaError_t sort_by_digit_typed(void *temp, size_t &bytes, const void *digits_in, void *digits_out,
                                       const void *records_in, void *records_out, uint64_t n, unsigned digit_bits,
                                       cudaStream_t stream) {
  return cub::DeviceRadixSort::SortPairs(temp, bytes, (const Digit *)digits_in, (Digit *)digits_out,
                                         (const Record *)records_in, (Record *)records_out, (int64_t)n, 0,
                                         (int)digit_bits, stream);
}

template <typename Digit>
static cudaError_t sort_by_digit_of(void *temp, size_t &bytes, const void *digits_in, void *digits_out,
                                    const void *records_in, void *records_out, uint64_t n, unsigned record_bytes,
                                    unsigned digit_bits, cudaStream_t stream) {
  if (record_bytes == 4)
    return sort_by_digit_typed<Digit, uint32_t>(temp, bytes, digits_in, digits_out, records_in, records_out, n,
                                                digit_bits, stream);
  if (record_bytes == 8)
    return sort_by_digit_typed<Digit, uint64_t>(temp, bytes, digits_in, digits_out, records_in, records_out, n,
                                                digit_bits, stream);
  return sort_by_digit_typed<Digit, gh_record16>(temp, bytes, digits_in, digits_out, records_in, records_out, n,
                                                 digit_bits, stream);
}

static cudaError_t sort_by_digit(void *temp, size_t &bytes, const void *digits_in, void *digits_out,
                                 unsigned digit_bytes, const void *records_in, void *records_out, uint64_t n,
                                 unsigned record_bytes, unsigned digit_bits, cudaStream_t stream) {
  return digit_bytes == 2 ? sort_by_digit_of<uint16_t>(temp, bytes, digits_in, digits_out, records_in, records_out, n,
                                                       record_bytes, digit_bits, stream)
                          : sort_by_digit_of<uint32_t>(temp, bytes, digits_in, digits_out, records_in, records_out, n,
                                                       record_bytes, digit_bits, stream);
}

extern "C" size_t gh__cuda_sort_by_digit_temp_bytes(uint64_t n, unsigned record_bytes, unsigned digit_bytes) {
  size_t bytes = 0;
  sort_by_digit(NULL, bytes, NULL, NULL, digit_bytes, NULL, NULL, n, record_bytes, 8u * digit_bytes, 0);
  return bytes;
}

extern "C" gh_status gh__cuda_sort_by_digit(gh_table *t, const void *digits_in, void *digits_out, unsigned digit_bytes,
                                            const void *records_in, void *records_out, uint64_t n,
                                            unsigned record_bytes, unsigned digit_bits, void *temp, size_t temp_bytes,
                                            void *stream) {
  size_t bytes = temp_bytes;
  GH_CUDA_TRY(t, sort_by_digit(temp, bytes, digits_in, digits_out, digit_bytes, records_in, records_out, n,
                               record_bytes, digit_bits, (cudaStream_t)stream),
              "CUB radix sort by digit");
  return GH_OK;
}

/* ---- Partitions into runs by digit (toolkit.h) ---------------------------------------------------- */

static unsigned partition_digit_bytes(unsigned digits) { return digits > 65536u ? 4u : 2u; }
static size_t rounded_to_256(size_t bytes) { return (bytes + 255u) / 256u * 256u; }

/* The work space: digits before and after the sort, the runs' starts and the longest run, the sort's
 * temporary storage. */
extern "C" size_t gh__cuda_partition_bytes(uint64_t n, unsigned record_bytes, unsigned digits) {
  const unsigned id = partition_digit_bytes(digits);
  return 2u * rounded_to_256((size_t)n * id) + rounded_to_256(((size_t)digits + 2u) * sizeof(uint64_t)) +
         gh__cuda_sort_by_digit_temp_bytes(n, record_bytes, id);
}

extern "C" gh_partition_work gh__cuda_partition_work(void *work, size_t work_bytes, uint64_t n, unsigned digits) {
  const unsigned id = partition_digit_bytes(digits);
  const size_t digits_bytes = rounded_to_256((size_t)n * id);
  const size_t starts_bytes = rounded_to_256(((size_t)digits + 2u) * sizeof(uint64_t));
  char *at = (char *)work;
  uint64_t *starts = (uint64_t *)(at + 2u * digits_bytes);
  gh_partition_work w = {at, at + digits_bytes, id, starts, (unsigned long long *)(starts + digits + 1u),
                         at + 2u * digits_bytes + starts_bytes, work_bytes - 2u * digits_bytes - starts_bytes};
  return w;
}

static __device__ __forceinline__ uint64_t digit_at(const void *sorted, unsigned digit_bytes, uint64_t i) {
  return digit_bytes == 2 ? ((const uint16_t *)sorted)[i] : ((const uint32_t *)sorted)[i];
}

/* The first position of sorted[0, n) holding a digit >= target (n if none), found by a warp (every
 * lane calls it): each step splits the range in 32 and keeps the part where the digits cross, so
 * 2^27 records take 6 dependent loads, where a binary search takes 27. */
static __device__ uint64_t first_at_least(const void *sorted, unsigned digit_bytes, uint64_t n, uint64_t target) {
  const unsigned lane = threadIdx.x % 32u;
  uint64_t low = 0, high = n; /* the answer lies in [low, high] */
  while (high - low > 32u) {
    const uint64_t probe = low + (high - low) * lane / 32u;
    const unsigned below = __popc(__ballot_sync(0xFFFFFFFFu, digit_at(sorted, digit_bytes, probe) < target));
    const uint64_t next_low = below == 0 ? low : __shfl_sync(0xFFFFFFFFu, probe, below - 1u) + 1u;
    if (below < 32u) high = __shfl_sync(0xFFFFFFFFu, probe, below);
    low = next_low;
  }
  return low + __popc(__ballot_sync(0xFFFFFFFFu, low + lane < high && digit_at(sorted, digit_bytes, low + lane) < target));
}

/* starts[r] for r = 0 .. digits, a warp each. */
__global__ void gh_run_starts_kernel(const void *sorted, unsigned digit_bytes, uint64_t n, unsigned digits,
                                     uint64_t *starts) {
  for (uint64_t r = gh_thread_index() / 32u; r <= digits; r += gh_grid_threads() / 32u) {
    const uint64_t at = first_at_least(sorted, digit_bytes, n, r);
    if (threadIdx.x % 32u == 0) starts[r] = at;
  }
}

/* *longest = the longest run (every lane reaches the warp's reduction). */
__global__ void gh_longest_run_kernel(const uint64_t *starts, unsigned digits, unsigned long long *longest) {
  unsigned long long most = 0;
  for (uint64_t r = gh_thread_index(); r < digits; r += gh_grid_threads()) {
    const unsigned long long run = starts[r + 1u] - starts[r];
    most = run > most ? run : most;
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const unsigned long long other = __shfl_down_sync(0xFFFFFFFFu, most, offset);
    most = other > most ? other : most;
  }
  if (threadIdx.x % 32u == 0 && most) atomicMax(longest, most);
}

extern "C" gh_status gh__cuda_partition(gh_table *t, const gh_partition_work *w, const void *records_in,
                                        void *records_out, uint64_t n, unsigned record_bytes, unsigned digits,
                                        uint64_t *longest, void *stream) {
  unsigned bits = 1;
  while ((1ull << bits) < digits) ++bits;
  gh_status status = gh__cuda_sort_by_digit(t, w->digits_in, w->digits_out, w->digit_bytes, records_in, records_out, n,
                                            record_bytes, bits, w->sort_temp, w->sort_bytes, stream);
  const void *sorted = w->digits_out;
  unsigned digit_bytes = w->digit_bytes;
  uint64_t *starts = w->starts;
  void *args[] = {(void *)&sorted, &digit_bytes, &n, &digits, &starts};
  if (status == GH_OK)
    status = gh__cuda_launch(t, (const void *)gh_run_starts_kernel, ((uint64_t)digits + 1u) * 32u, 256, args, stream);
  if (status != GH_OK || longest == NULL) return status;
  unsigned long long *most = w->longest;
  void *longest_args[] = {&starts, &digits, &most};
  status = gh__fill(t, most, 0, sizeof *most, stream);
  if (status == GH_OK) status = gh__cuda_launch(t, (const void *)gh_longest_run_kernel, digits, 256, longest_args, stream);
  if (status == GH_OK) status = gh__to_host(t, longest, most, sizeof *longest, stream);
  return status;
}

template <unsigned KB, unsigned VB>
static gh_status sort_typed(gh_table *t, const void *keys_in, void *keys_out, const void *values_in,
                            void *values_out, uint64_t n, cudaStream_t stream) {
  typedef typename gh_word_of<KB>::type K;
  typedef typename gh_word_of<VB>::type V;
  const int end_bit = (int)KB;
  return cub_run(t, "CUB radix sort", stream, [&](void *temp, size_t &bytes) {
    if (VB == 0)
      return cub::DeviceRadixSort::SortKeys(temp, bytes, (const K *)keys_in, (K *)keys_out, (int64_t)n, 0, end_bit,
                                            stream);
    return cub::DeviceRadixSort::SortPairs(temp, bytes, (const K *)keys_in, (K *)keys_out, (const V *)values_in,
                                           (V *)values_out, (int64_t)n, 0, end_bit, stream);
  });
}

extern "C" gh_status gh__cuda_sort_pairs(gh_table *t, const void *keys_in, void *keys_out, const void *values_in,
                                         void *values_out, uint64_t n, unsigned key_bits, unsigned value_bits,
                                         void *stream) {
#define GH_SORT_CASE(kb, vb)                                                                                 \
  if (key_bits == kb && value_bits == vb)                                                                    \
    return sort_typed<kb, vb>(t, keys_in, keys_out, values_in, values_out, n, (cudaStream_t)stream);
  GH_WIDTHS(GH_SORT_CASE)
#undef GH_SORT_CASE
  return gh__fail(t, GH_ERR_INTERNAL, "sort: no instantiation for key_bits %u, value_bits %u", key_bits, value_bits);
}

template <unsigned KB>
static gh_status encode_typed(gh_table *t, const void *keys_in, uint64_t n, void *unique_out, uint64_t *counts_out,
                              uint64_t *runs_out, cudaStream_t stream) {
  typedef typename gh_word_of<KB>::type K;
  /* CUB's run-length encode counts items in an int (CCCL 3.0): refuse what it would truncate. */
  if (n > (uint64_t)INT_MAX)
    return gh__fail(t, GH_ERR_UNSUPPORTED, "run-length encode of %llu keys: CUB counts at most %d items; nothing "
                    "was changed", (unsigned long long)n, INT_MAX);
  return cub_run(t, "CUB run-length encode", stream, [&](void *temp, size_t &bytes) {
    return cub::DeviceRunLengthEncode::Encode(temp, bytes, (const K *)keys_in, (K *)unique_out, counts_out, runs_out,
                                              (int64_t)n, stream);
  });
}

extern "C" gh_status gh__cuda_run_length_encode(gh_table *t, const void *keys_in, uint64_t n, unsigned key_bits,
                                                void *unique_out, uint64_t *counts_out, uint64_t *runs_out,
                                                void *stream) {
  if (key_bits == 64)
    return encode_typed<64>(t, keys_in, n, unique_out, counts_out, runs_out, (cudaStream_t)stream);
  return encode_typed<32>(t, keys_in, n, unique_out, counts_out, runs_out, (cudaStream_t)stream);
}

/* Each non-empty row's index at its first entry (the rest zero), then a running maximum carries it
 * over the row's other entries: the work follows the entries, however unevenly the rows share them. */
__global__ void gh_mark_row_starts_kernel(const uint64_t *offsets, uint64_t n, uint64_t *rows_out) {
  for (uint64_t i = gh_thread_index(); i < n; i += gh_grid_threads())
    if (offsets[i] < offsets[i + 1u]) rows_out[offsets[i]] = i;
}

struct gh_max_u64 {
  __device__ uint64_t operator()(uint64_t a, uint64_t b) const { return a > b ? a : b; }
};

extern "C" gh_status gh__cuda_expand_offsets(gh_table *t, const uint64_t *offsets, uint64_t n, uint64_t total,
                                             uint64_t *rows_out, void *stream) {
  gh_status status = gh__fill(t, rows_out, 0, total * sizeof(uint64_t), stream);
  void *args[] = {&offsets, &n, &rows_out};
  if (status == GH_OK) status = gh__cuda_launch(t, (const void *)gh_mark_row_starts_kernel, n, 256, args, stream);
  if (status != GH_OK) return status;
  return cub_run(t, "CUB inclusive scan", stream, [&](void *temp, size_t &bytes) {
    return cub::DeviceScan::InclusiveScan(temp, bytes, rows_out, rows_out, gh_max_u64(), (int64_t)total,
                                          (cudaStream_t)stream);
  });
}
