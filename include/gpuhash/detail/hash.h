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

/* A key (key_bits wide) hashed with seed into [0, n) by multiply-high, so that ranges of the result
 * are ranges of hash values: doubling n sends h to 2h or 2h + 1 (dycuckoo's resizes), and n / bins
 * consecutive values form a bin (hashgraph's binned build). 32-bit keys use the 32-bit mix while n
 * fits its range. */
GH_HD uint64_t gh_hash_to_range(unsigned key_bits, uint64_t seed, uint64_t n, uint64_t key) {
  if (key_bits == 32 && n <= (1ull << 32)) return gh_range32(gh_fmix32((uint32_t)key ^ (uint32_t)seed), n);
  return gh_range64(gh_fmix64(key ^ seed), n);
}

#endif /* GH_DETAIL_HASH_H */
