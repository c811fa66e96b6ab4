/* words.h - reading and writing elements of key and value arrays whose width (32 or 64 bits) is
 * only known at run time (the host backends). */
#ifndef GH_CORE_WORDS_H
#define GH_CORE_WORDS_H

#include <stdint.h>

static inline uint64_t gh__read_word(const void *array, uint64_t i, unsigned bits) {
  return bits == 64 ? ((const uint64_t *)array)[i] : ((const uint32_t *)array)[i];
}

static inline void gh__write_word(void *array, uint64_t i, unsigned bits, uint64_t value) {
  if (bits == 64) ((uint64_t *)array)[i] = value;
  else ((uint32_t *)array)[i] = (uint32_t)value;
}

#endif /* GH_CORE_WORDS_H */
