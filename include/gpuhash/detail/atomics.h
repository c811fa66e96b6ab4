/* atomics.h - the few atomic operations the tables need, with one name on both backends: CUDA
 * atomics in device code, GCC/Clang __atomic builtins (the C11 memory model) on the host.
 * Loads that may race with CAS from other threads read through L2 on the device (__ldcg), so a
 * reloaded window never shows a stale L1 copy. */
#ifndef GH_DETAIL_ATOMICS_H
#define GH_DETAIL_ATOMICS_H

#include "gpuhash/detail/hd.h"

#if defined(__CUDA_ARCH__)

GH_HD uint32_t gh_load_u32(const void *p) { return __ldcg((const unsigned int *)p); }
GH_HD uint64_t gh_load_u64(const void *p) { return __ldcg((const unsigned long long *)p); }
GH_HD uint32_t gh_cas_u32(void *p, uint32_t expected, uint32_t desired) {
  return atomicCAS((unsigned int *)p, expected, desired);
}
GH_HD uint64_t gh_cas_u64(void *p, uint64_t expected, uint64_t desired) {
  return atomicCAS((unsigned long long *)p, (unsigned long long)expected,
                   (unsigned long long)desired);
}
/* Hopper (sm_90) has a native 16-byte CAS. */
GH_HD unsigned __int128 gh_cas_u128(void *p, unsigned __int128 expected, unsigned __int128 desired) {
  return atomicCAS((unsigned __int128 *)p, expected, desired);
}
GH_HD uint32_t gh_exchange_u32(void *p, uint32_t v) { return atomicExch((unsigned int *)p, v); }
GH_HD uint64_t gh_exchange_u64(void *p, uint64_t v) {
  return atomicExch((unsigned long long *)p, (unsigned long long)v);
}
/* Hopper (sm_90) also exchanges 16 bytes natively. */
GH_HD unsigned __int128 gh_exchange_u128(void *p, unsigned __int128 v) {
  return atomicExch((unsigned __int128 *)p, v);
}
GH_HD void gh_store_u32(void *p, uint32_t v) { atomicExch((unsigned int *)p, v); }
GH_HD void gh_store_u64(void *p, uint64_t v) { atomicExch((unsigned long long *)p, (unsigned long long)v); }
GH_HD void gh_add_u32(void *p, uint32_t v) { atomicAdd((unsigned int *)p, v); }
GH_HD void gh_add_u64(void *p, uint64_t v) { atomicAdd((unsigned long long *)p, (unsigned long long)v); }
GH_HD void gh_or_u32(void *p, uint32_t v) { atomicOr((unsigned int *)p, v); }
/* The value before the addition. */
GH_HD uint64_t gh_fetch_add_u64(void *p, uint64_t v) { return atomicAdd((unsigned long long *)p, (unsigned long long)v); }
GH_HD void gh_min_u32(void *p, uint32_t v) { atomicMin((unsigned int *)p, v); }
GH_HD void gh_min_u64(void *p, uint64_t v) { atomicMin((unsigned long long *)p, (unsigned long long)v); }
GH_HD void gh_max_u32(void *p, uint32_t v) { atomicMax((unsigned int *)p, v); }
GH_HD void gh_max_u64(void *p, uint64_t v) { atomicMax((unsigned long long *)p, (unsigned long long)v); }
/* Orders this thread's memory accesses before and after it, device-wide (CUDA atomics are relaxed). */
GH_HD void gh_fence(void) { __threadfence(); }

#else /* host */

GH_HD uint32_t gh_load_u32(const void *p) { return __atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE); }
GH_HD uint64_t gh_load_u64(const void *p) { return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE); }
/* Each CAS returns the value the word held before: the desired value's old image on success. */
GH_HD uint32_t gh_cas_u32(void *p, uint32_t expected, uint32_t desired) {
  __atomic_compare_exchange_n((uint32_t *)p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return expected;
}
GH_HD uint64_t gh_cas_u64(void *p, uint64_t expected, uint64_t desired) {
  __atomic_compare_exchange_n((uint64_t *)p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return expected;
}
/* 16-byte CAS goes through libatomic (cmpxchg16b on x86-64). */
GH_HD unsigned __int128 gh_cas_u128(void *p, unsigned __int128 expected, unsigned __int128 desired) {
  __atomic_compare_exchange_n((unsigned __int128 *)p, &expected, desired, 0, __ATOMIC_ACQ_REL,
                              __ATOMIC_ACQUIRE);
  return expected;
}
GH_HD uint32_t gh_exchange_u32(void *p, uint32_t v) { return __atomic_exchange_n((uint32_t *)p, v, __ATOMIC_ACQ_REL); }
GH_HD uint64_t gh_exchange_u64(void *p, uint64_t v) { return __atomic_exchange_n((uint64_t *)p, v, __ATOMIC_ACQ_REL); }
GH_HD unsigned __int128 gh_exchange_u128(void *p, unsigned __int128 v) {
  return __atomic_exchange_n((unsigned __int128 *)p, v, __ATOMIC_ACQ_REL);
}
GH_HD void gh_store_u32(void *p, uint32_t v) { __atomic_store_n((uint32_t *)p, v, __ATOMIC_RELEASE); }
GH_HD void gh_store_u64(void *p, uint64_t v) { __atomic_store_n((uint64_t *)p, v, __ATOMIC_RELEASE); }
GH_HD void gh_add_u32(void *p, uint32_t v) { __atomic_fetch_add((uint32_t *)p, v, __ATOMIC_ACQ_REL); }
GH_HD void gh_add_u64(void *p, uint64_t v) { __atomic_fetch_add((uint64_t *)p, v, __ATOMIC_ACQ_REL); }
GH_HD void gh_or_u32(void *p, uint32_t v) { __atomic_fetch_or((uint32_t *)p, v, __ATOMIC_ACQ_REL); }
GH_HD uint64_t gh_fetch_add_u64(void *p, uint64_t v) { return __atomic_fetch_add((uint64_t *)p, v, __ATOMIC_ACQ_REL); }
/* No fetch-min/max builtin in C11: a CAS loop that stops as soon as the stored value wins. */
GH_HD void gh_min_u32(void *p, uint32_t v) {
  uint32_t old = gh_load_u32(p);
  while (v < old && !__atomic_compare_exchange_n((uint32_t *)p, &old, v, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
  }
}
GH_HD void gh_min_u64(void *p, uint64_t v) {
  uint64_t old = gh_load_u64(p);
  while (v < old && !__atomic_compare_exchange_n((uint64_t *)p, &old, v, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
  }
}
GH_HD void gh_max_u32(void *p, uint32_t v) {
  uint32_t old = gh_load_u32(p);
  while (v > old && !__atomic_compare_exchange_n((uint32_t *)p, &old, v, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
  }
}
GH_HD void gh_max_u64(void *p, uint64_t v) {
  uint64_t old = gh_load_u64(p);
  while (v > old && !__atomic_compare_exchange_n((uint64_t *)p, &old, v, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
  }
}

GH_HD void gh_fence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

#endif

/* Bit i of a bitmap of 32-bit words that threads set concurrently (slots or windows to revisit). */
GH_HD void gh_bitmap_set(uint32_t *bits, uint64_t i) { gh_or_u32(bits + i / 32u, 1u << (i % 32u)); }
GH_HD int gh_bitmap_test(const uint32_t *bits, uint64_t i) {
  return (int)(gh_load_u32(bits + i / 32u) >> (i % 32u) & 1u);
}

#endif /* GH_DETAIL_ATOMICS_H */
