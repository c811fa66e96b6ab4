/* words.h - reading and writing elements of key and value arrays of 32- or 64-bit elements, one
 * function for host code and kernels alike (GH_HD). With the width a compile-time constant (a
 * kernel's template parameter) the branch folds away; with a run-time width it is one select. */
#ifndef GH_CORE_WORDS_H
#define GH_CORE_WORDS_H

#include "gpuhash/detail/hd.h"

GH_HD uint64_t gh__read_word(const void *array, uint64_t i, unsigned bits) {
  return bits == 64 ? ((const uint64_t *)array)[i] : ((const uint32_t *)array)[i];
}

GH_HD void gh__write_word(void *array, uint64_t i, unsigned bits, uint64_t value) {
  if (bits == 64) ((uint64_t *)array)[i] = value;
  else ((uint32_t *)array)[i] = (uint32_t)value;
}

#endif /* GH_CORE_WORDS_H */
