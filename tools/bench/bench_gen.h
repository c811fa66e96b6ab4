/*
 * bench_gen.h - the benchmark's input streams, shared by the host loop and the CUDA kernel.
 *
 * Every input element is a pure function of (kind, index, seed): no state, no counters. Host
 * and device therefore produce the same keys for the same --seed, a run can be repeated
 * exactly, and a kernel can regenerate any element without reading memory.
 *
 * Compiled by the C compiler (plain static inline functions) and by nvcc (then also
 * __host__ __device__).
 */
#ifndef GPUHASH_BENCH_GEN_H
#define GPUHASH_BENCH_GEN_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define BENCH_HD __host__ __device__
#else
#define BENCH_HD
#endif

/* Salts that make the value, Zipf and limit streams independent of the key stream under one
 * seed (any distinct odd-looking constants do). */
#define BENCH_SALT_VALUES 0x9e3779b97f4a7c15ull
#define BENCH_SALT_ZIPF 0xd1b54a32d192ed03ull
#define BENCH_SALT_LIMITS 0x8cb92ba72f3d8dd7ull

/* 2^-53: turns the top 53 bits of a 64-bit hash into a double uniform in [0, 1). */
#define BENCH_UNIT_DOUBLE (1.0 / 9007199254740992.0)

typedef enum bench_gen_kind {
  BENCH_GEN_UNIQUE_KEYS = 0, /* key(index_offset + i): distinct for distinct indices */
  BENCH_GEN_ZIPF_KEYS = 1,   /* key(rank(i)), rank Zipf distributed over [0, zipf_n) */
  BENCH_GEN_VALUES = 2,      /* a hash of i, independent of the keys */
  /* key(index_offset + i mod period): period distinct keys, each repeated n / period times
   * (+-1), the repeats spread evenly over the stream (cuckoo scenario d, key multiplicity) */
  BENCH_GEN_CYCLIC_KEYS = 3,
  /* present key(i), or absent key(index_offset + i) for absent_percent % of the i, spread
   * evenly (Bresenham): exactly n * absent_percent / 100 absent (cuckoo scenario b) */
  BENCH_GEN_MIXED_KEYS = 4
} bench_gen_kind;

/* Plain data, passed to kernels by value. */
typedef struct bench_gen_spec {
  int kind;              /* bench_gen_kind */
  unsigned bits;         /* element width: 32 or 64 */
  uint64_t seed;         /* --seed */
  uint64_t index_offset; /* unique keys: first index (n for the absent keys) */
  uint64_t zipf_n;       /* Zipf: number of ranks N (the run's n) */
  uint64_t period;       /* cyclic keys: number of distinct keys (>= 1) */
  unsigned absent_percent; /* mixed keys: 0..100 */
} bench_gen_spec;

/* Mueller's 32-bit integer hash: a bijection of the 32-bit words (each step is invertible:
 * xorshift right, multiply by an odd constant). Deliberately not murmur's fmix, which the
 * tables use to hash keys, so key generation and table hashing stay unrelated. */
static inline BENCH_HD uint32_t bench_mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x45d9f3bu;
  x ^= x >> 16;
  x *= 0x45d9f3bu;
  x ^= x >> 16;
  return x;
}

/* The splitmix64 finalizer: a bijection of the 64-bit words, for the same reasons. */
static inline BENCH_HD uint64_t bench_mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* The key of index i. i -> i ^ seed is injective on [0, 2^bits) and the mix is a bijection, so
 * distinct indices below 2^bits give distinct keys: the present keys use indices [0, n), the
 * absent keys [n, 2n), hence they can never collide. */
static inline BENCH_HD uint64_t bench_key(uint64_t index, unsigned bits, uint64_t seed) {
  if (bits == 32) return (uint64_t)bench_mix32((uint32_t)(index ^ seed));
  return bench_mix64(index ^ seed);
}

/* Zipf rank of sample i, 0-based, in [0, N - 1) (N >= 1; N = 1 gives 0).
 * For s = 1 + 1e-6 the exact inverse CDF of a power law truncated at N,
 * x = (1 - u (1 - N^(1-s)))^(1/(1-s)), differs from its s -> 1 limit x = N^u by a relative
 * 1e-6 * u (1 - u) ln(N)^2 / 2 <= 1e-6 ln(N)^2 / 8 (< 5e-5 at N = 2^27), far below one rank for
 * the ranks that repeat, so the limit is used: P(rank >= r) = 1 - ln(r) / ln(N), i.e. a density
 * proportional to 1/r. */
static inline BENCH_HD uint64_t bench_zipf_rank(uint64_t i, uint64_t zipf_n, uint64_t seed) {
  double u = (double)(bench_mix64(i ^ seed ^ BENCH_SALT_ZIPF) >> 11) * BENCH_UNIT_DOUBLE;
  double x = exp(u * log((double)zipf_n)); /* N^u in [1, N) */
  uint64_t rank = (uint64_t)x;             /* floor, >= 1 */
  if (rank >= zipf_n) rank = zipf_n - 1;   /* rounding of exp() near u -> 1 */
  if (rank < 1) rank = 1;
  return rank - 1;
}

static inline BENCH_HD uint64_t bench_value(uint64_t i, unsigned bits, uint64_t seed) {
  uint64_t v = bench_mix64(i ^ seed ^ BENCH_SALT_VALUES);
  return bits == 32 ? (v & 0xffffffffull) : v;
}

/* 1 when query i of a mixed stream is an absent key: floor((i + 1) p / 100) > floor(i p / 100)
 * marks exactly floor(n p / 100) of the first n indices, evenly spread. */
static inline BENCH_HD int bench_mixed_is_absent(uint64_t i, unsigned absent_percent) {
  return ((i + 1) * absent_percent) / 100 != (i * absent_percent) / 100;
}

/* Element i of the stream described by spec. For Zipf keys *rank_out receives the rank (so the
 * caller can count distinct keys); it is left alone otherwise. */
static inline BENCH_HD uint64_t bench_gen_element(const bench_gen_spec *spec, uint64_t i,
                                                  uint64_t *rank_out) {
  switch (spec->kind) {
    case BENCH_GEN_UNIQUE_KEYS:
      return bench_key(spec->index_offset + i, spec->bits, spec->seed);
    case BENCH_GEN_ZIPF_KEYS: {
      uint64_t rank = bench_zipf_rank(i, spec->zipf_n, spec->seed);
      *rank_out = rank;
      return bench_key(rank, spec->bits, spec->seed);
    }
    case BENCH_GEN_CYCLIC_KEYS:
      return bench_key(spec->index_offset + i % spec->period, spec->bits, spec->seed);
    case BENCH_GEN_MIXED_KEYS:
      return bench_key(bench_mixed_is_absent(i, spec->absent_percent) ? spec->index_offset + i : i,
                       spec->bits, spec->seed);
    default:
      return bench_value(i, spec->bits, spec->seed);
  }
}

/* A bijection of [0, 2^bits) (1 <= bits <= 63): xor with a constant, multiply by an odd
 * constant and xorshift right are each invertible modulo 2^bits. The random-CAS ceiling uses
 * it so that every operation hits a distinct slot, like inserts into an empty table. */
static inline BENCH_HD uint64_t bench_permute(uint64_t x, unsigned bits, uint64_t seed) {
  const uint64_t mask = (1ull << bits) - 1;
  const unsigned shift = (bits + 1) / 2;
  x = (x ^ seed) & mask;
  x = (x * 0x9e3779b97f4a7c15ull) & mask;
  x ^= x >> shift;
  x = (x * 0xbf58476d1ce4e5b9ull) & mask;
  x ^= x >> shift;
  return x;
}

/* Element i of an array of 1-, 4- or 8-byte elements (flags, 32- or 64-bit words). */
static inline BENCH_HD uint64_t bench_load_element(const void *base, uint64_t i, unsigned elem_bytes) {
  switch (elem_bytes) {
    case 1:
      return ((const uint8_t *)base)[i];
    case 4:
      return ((const uint32_t *)base)[i];
    default:
      return ((const uint64_t *)base)[i];
  }
}

/* Generates element i into out (32- or 64-bit elements) and marks its Zipf rank in rank_map
 * (if given): the body of both the host loop and the device kernel. Every writer of a rank stores
 * the same 1, so concurrent duplicates are benign. */
static inline BENCH_HD void bench_gen_store(void *out, uint64_t i, const bench_gen_spec *spec, uint8_t *rank_map) {
  uint64_t rank = 0;
  const uint64_t x = bench_gen_element(spec, i, &rank);
  if (spec->bits == 32)
    ((uint32_t *)out)[i] = (uint32_t)x;
  else
    ((uint64_t *)out)[i] = x;
  if (rank_map != NULL) rank_map[rank] = 1;
}

#endif /* GPUHASH_BENCH_GEN_H */
