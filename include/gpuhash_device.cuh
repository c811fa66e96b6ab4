/*
 * gpuhash_device.cuh - what every design's device-side API shares: cooperative groups of run-time
 * size and the bookkeeping a device operation does on a gh_device_view (size counter, status
 * word). It names no design; the operations of a design are in its own header:
 *
 *   #include "gpuhash/warpdrive.cuh"   gh_device_insert / gh_device_find (per thread or per group)
 *                                      on the view of a warpdrive table
 *
 * Get a by-value view on the host with gh_get_device_view() (designs with GH_CAP_DEVICE_VIEW, on
 * the CUDA backend) and pass it to your kernel. view.design says which design's header reads it;
 * view.layout holds that design's geometry.
 *
 * A group is gh_device_group_make(size): `size` consecutive lanes of a warp (1, 2, 4, ... 32) that
 * call together with the same key; every lane gets the same result. All lanes of a group must be
 * active and call with the same arguments.
 *
 * Include paths: only <prefix>/include (the CMake package and pkg-config add it). Headers under
 * gpuhash/detail/ hold the logic shared with the library's host code; they are internal and may
 * change with any release. Needs sm_90 (16-byte CAS) for tables with 16-byte slots.
 */
#ifndef GPUHASH_DEVICE_CUH
#define GPUHASH_DEVICE_CUH

#include "gpuhash.h"

/* ---- Cooperative groups of runtime size ----------------------------------------------------- */

/** `size` consecutive lanes of a warp working on one key. */
typedef struct gh_device_group {
  unsigned mask;       /* lanes of the group in the warp */
  unsigned first_lane; /* lane index of rank 0 */
  unsigned size;       /* 1, 2, 4, 8, 16 or 32 */
  unsigned rank;       /* this thread's index in the group */
} gh_device_group;

static __device__ __forceinline__ unsigned gh_device_lane(void) {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

/** The group of `size` lanes this thread belongs to (size a power of two <= 32). */
static __device__ __forceinline__ gh_device_group gh_device_group_make(unsigned size) {
  gh_device_group g;
  const unsigned lane = gh_device_lane();
  g.size = size;
  g.rank = lane & (size - 1u);
  g.first_lane = lane - g.rank;
  g.mask = size == 32u ? 0xFFFFFFFFu : ((1u << size) - 1u) << g.first_lane;
  return g;
}

static __device__ __forceinline__ uint32_t gh_device_group_ballot(gh_device_group g, int predicate) {
  const uint32_t warp_bits = __ballot_sync(g.mask, predicate);
  return g.size == 32u ? warp_bits : (warp_bits >> g.first_lane) & ((1u << g.size) - 1u);
}

static __device__ __forceinline__ uint64_t gh_device_group_broadcast(gh_device_group g, uint64_t value,
                                                                     unsigned from_rank) {
  return __shfl_sync(g.mask, (unsigned long long)value, (int)(g.first_lane + from_rank));
}

/* ---- Bookkeeping on a view ----------------------------------------------------------------- */

/* Counts a new key and records flags; aggregated over the active lanes of the warp so that a
 * kernel of inserts does not hammer one counter. */
static __device__ __forceinline__ void gh_device_record(const gh_device_view *v, int counts_as_new, unsigned flags) {
  const unsigned active = __activemask();
  const unsigned new_keys = __popc(__ballot_sync(active, counts_as_new));
  const unsigned all_flags = __reduce_or_sync(active, flags);
  if (gh_device_lane() == (unsigned)(__ffs((int)active) - 1)) {
    if (new_keys) atomicAdd(v->size, (unsigned long long)new_keys);
    if (all_flags) atomicOr(v->status_word, all_flags);
  }
}

#endif /* GPUHASH_DEVICE_CUH */
