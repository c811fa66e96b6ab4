/* prime.h - primes for table geometry (probe sequences over a prime count cover every window). */
#ifndef GH_CORE_PRIME_H
#define GH_CORE_PRIME_H

#include <stdint.h>

/* The smallest prime >= n (n >= 2); deterministic Miller-Rabin, exact for all 64-bit n. */
uint64_t gh__next_prime(uint64_t n);

#endif /* GH_CORE_PRIME_H */
