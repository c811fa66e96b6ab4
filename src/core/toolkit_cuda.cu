/* toolkit_cuda.cu - the CUDA half of core/toolkit.h (CUB's scan, radix sort, run-length
 * encode and select, queued on the caller's stream) and the launch helpers of core/kernels.cuh. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
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

template <typename Index>
static gh_status select_typed(gh_table *t, const uint8_t *flags, uint64_t n, uint64_t base, void *positions_out,
                              uint64_t *count_out, cudaStream_t stream) {
  const thrust::counting_iterator<Index> positions((Index)base);
  return cub_run(t, "CUB select", stream, [&](void *temp, size_t &bytes) {
    return cub::DeviceSelect::Flagged(temp, bytes, positions, flags, (Index *)positions_out, count_out, (int64_t)n,
                                      stream);
  });
}

extern "C" gh_status gh__cuda_select_flagged(gh_table *t, const uint8_t *flags, uint64_t n, uint64_t base,
                                             void *positions_out, unsigned index_bits, uint64_t *count_out,
                                             void *stream) {
  if (index_bits == 64) return select_typed<uint64_t>(t, flags, n, base, positions_out, count_out, (cudaStream_t)stream);
  return select_typed<uint32_t>(t, flags, n, base, positions_out, count_out, (cudaStream_t)stream);
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
