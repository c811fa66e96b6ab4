/* region_words.h - a region of a bucketed table built apart from the table, then written out
 * whole: in shared memory on the GPU (a block a region), in a buffer of its own on the host (a
 * thread a region). DyCuckoo builds an empty table this way, the cuckoo design its first buckets.
 *
 * A region holds a key and its value in one 8-byte word (a 32-bit key in the low half and its
 * 32-bit value, if any, in the high half; or a 64-bit key alone), so that a slot is claimed, and a
 * duplicate merged, with one CAS. Slots fill in order and never empty while a region is built: a
 * key is either in the filled slots of its bucket before the first empty one or absent, and two
 * copies of a key meet in the same slot. (GH_HD: host code and kernels alike.) */
#ifndef GH_CORE_REGION_WORDS_H
#define GH_CORE_REGION_WORDS_H

#include "gpuhash/detail/slot.h"

/* A region's slots: 64 KB of words, three blocks an SM with their threads' registers. */
#define GH_REGION_WORDS 8192u
/* An empty word: the key all ones, which never enters a bucket (both designs keep it beside the
 * buckets). */
#define GH_REGION_EMPTY (~0ull)

typedef enum gh_region_outcome {
  GH_REGION_INSERTED, /* the key took a slot */
  GH_REGION_MERGED,   /* the key was there: its value merged by the policy */
  GH_REGION_FULL      /* the bucket is full without the key */
} gh_region_outcome;

GH_HD uint64_t gh_region_word(unsigned key_bits, uint64_t key, uint64_t value) {
  return key_bits == 64 ? key : key | value << 32;
}
GH_HD uint64_t gh_region_word_key(unsigned key_bits, uint64_t word) {
  return key_bits == 64 ? word : word & 0xFFFFFFFFull;
}

/* Slot k of bucket b (of `slots` words, a power of two) lies at word k ^ flip of it. Without the
 * flip the threads of a warp, each reading slot k of its own bucket, would meet in a few banks of
 * shared memory (buckets 64 bytes apart: 2 of the 16 8-byte positions of a 128-byte row; DyCuckoo's
 * buckets of 16 or 32 words: 1). The flip takes the bucket's bits above those that fix where it starts in
 * a row, so that lanes of random buckets spread over every position. */
GH_HD unsigned gh_region_flip(uint64_t b, unsigned slots) {
  unsigned row_shift = 0; /* log2 of the buckets a 128-byte row holds */
  for (unsigned row = slots; row < 16u; row *= 2u) row_shift += 1u;
  return (unsigned)((b >> row_shift) & (slots - 1u));
}

/* A word (not the empty key) into its bucket of the region, whose other threads may claim slots at
 * the same time: a thread reads on until it finds the key or claims the first empty slot, and a
 * lost claim reads that slot again. with_value: the high half is a 32-bit value, merged by the
 * policy (by CAS on the whole word); a set has nothing to merge. Reads are plain volatile loads: on
 * the GPU the words are in shared memory, which the L2 loads of gpuhash/detail/atomics.h cannot
 * address. */
GH_HD gh_region_outcome gh_region_insert(uint64_t *bucket, unsigned slots, unsigned flip, unsigned key_bits,
                                         int with_value, uint64_t word, int policy) {
  const volatile uint64_t *seen_at = bucket;
  const uint64_t key = gh_region_word_key(key_bits, word);
  for (unsigned k = 0; k < slots; ++k) {
    uint64_t seen = seen_at[k ^ flip];
    if (seen == GH_REGION_EMPTY) {
      seen = gh_cas_u64(&bucket[k ^ flip], GH_REGION_EMPTY, word);
      if (seen == GH_REGION_EMPTY) return GH_REGION_INSERTED;
    }
    if (gh_region_word_key(key_bits, seen) != key) continue;
    while (with_value) {
      const uint64_t stored = seen >> 32, merged = gh_policy_combine(policy, 32u, stored, word >> 32);
      if (merged == stored) break;
      const uint64_t before = gh_cas_u64(&bucket[k ^ flip], seen, gh_region_word(key_bits, key, merged));
      if (before == seen) break;
      seen = before;
    }
    return GH_REGION_MERGED;
  }
  return GH_REGION_FULL;
}

/* A small set of words beside a region, for the entries a region passes on (their bucket full):
 * copies of a key meet and merge there too, so that what leaves the region repeats no key. The
 * same insert, over GH_REGION_SET_WORDS words in the order k ^ start, start from the key's bits:
 * positions never empty while the region is built, so a key is found along its order before the
 * first empty word or is absent. */
#define GH_REGION_SET_WORDS 1024u
GH_HD gh_region_outcome gh_region_set_insert(uint64_t *set, unsigned key_bits, int with_value, uint64_t word,
                                             int policy) {
  const uint64_t start = (gh_region_word_key(key_bits, word) * 0x9E3779B97F4A7C15ull) >> 54; /* 10 bits */
  return gh_region_insert(set, GH_REGION_SET_WORDS, (unsigned)start, key_bits, with_value, word, policy);
}

#endif /* GH_CORE_REGION_WORDS_H */
