/* hash.h - the integer hash functions shared by every design and both backends. */
#ifndef GH_DETAIL_HASH_H
#define GH_DETAIL_HASH_H

#include "gpuhash/detail/hd.h"

/* MurmurHash3's 32-bit finaliser: a bijection on 32-bit integers with full avalanche (the hash
 * the WarpDrive paper uses). Being a bijection, it also turns distinct indices into distinct
 * keys for benchmarks. */
GH_HD uint32_t gh_fmix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  x ^= x >> 16;
  return x;
}

/* MurmurHash3's 64-bit finaliser, likewise a bijection. */
GH_HD uint64_t gh_fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

#endif /* GH_DETAIL_HASH_H */
