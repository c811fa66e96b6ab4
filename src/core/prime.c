/* prime.c - deterministic Miller-Rabin over 64-bit integers. */
#include "core/prime.h"

static uint64_t mul_mod(uint64_t a, uint64_t b, uint64_t m) {
  return (uint64_t)((unsigned __int128)a * b % m);
}

static uint64_t pow_mod(uint64_t base, uint64_t exponent, uint64_t m) {
  uint64_t result = 1;
  base %= m;
  while (exponent) {
    if (exponent & 1u) result = mul_mod(result, base, m);
    base = mul_mod(base, base, m);
    exponent >>= 1;
  }
  return result;
}

static int is_prime(uint64_t n) {
  /* These witnesses decide primality exactly for every n < 2^64. */
  static const uint64_t witnesses[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
  if (n < 2) return 0;
  for (unsigned i = 0; i < sizeof witnesses / sizeof witnesses[0]; ++i) {
    if (n == witnesses[i]) return 1;
    if (n % witnesses[i] == 0) return 0;
  }
  uint64_t d = n - 1;
  unsigned r = 0;
  while ((d & 1u) == 0) d >>= 1, ++r;
  for (unsigned i = 0; i < sizeof witnesses / sizeof witnesses[0]; ++i) {
    uint64_t x = pow_mod(witnesses[i], d, n);
    if (x == 1 || x == n - 1) continue;
    unsigned j = 1;
    for (; j < r; ++j) {
      x = mul_mod(x, x, n);
      if (x == n - 1) break;
    }
    if (j == r) return 0;
  }
  return 1;
}

uint64_t gh__next_prime(uint64_t n) {
  if (n <= 2) return 2;
  n |= 1u;
  while (!is_prime(n)) n += 2;
  return n;
}
