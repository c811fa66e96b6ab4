/* slot.h - the slot format every open table design shares (warpdrive, cuckoo): one (key, value)
 * pair in 4, 8 or 16 bytes, so that one atomic operation publishes or moves both.
 *
 *   key 32, no value   4 bytes   [key]
 *   key 64, no value   8 bytes   [key]
 *   key 32, value 32   8 bytes   [key | value]            (value in the high half)
 *   key 32, value 64  16 bytes   [key | pad] [value]
 *   key 64, value 32  16 bytes   [key] [value | pad]
 *   key 64, value 64  16 bytes   [key] [value]
 *
 * The key always sits in the first key_bits of the slot; padding bits are all ones. An empty slot
 * is all ones, so clearing a table is one memset to 0xFF and the all-ones key is stored out of
 * band by each design. Logic here compiles for the host backend and for device code alike. */
#ifndef GH_DETAIL_SLOT_H
#define GH_DETAIL_SLOT_H

#include "gpuhash.h"
#include "gpuhash/detail/atomics.h"

/* The widths of a table's slots. Kernels build it from compile-time constants so the layout
 * branches below fold away. */
typedef struct gh_slot_format {
  unsigned key_bits;
  unsigned value_bits;
  unsigned slot_bytes;
} gh_slot_format;

/* The raw bits of one slot: lo holds the first 8 bytes (or 4 for 4-byte slots), hi the rest. */
typedef struct gh_slot_bits {
  uint64_t lo, hi;
} gh_slot_bits;

GH_HD unsigned gh_slot_bytes(unsigned key_bits, unsigned value_bits) {
  return key_bits + value_bits <= 32 ? 4u : (key_bits + value_bits <= 64 ? 8u : 16u);
}
GH_HD gh_slot_format gh_slot_format_make(unsigned key_bits, unsigned value_bits) {
  gh_slot_format f;
  f.key_bits = key_bits;
  f.value_bits = value_bits;
  f.slot_bytes = gh_slot_bytes(key_bits, value_bits);
  return f;
}
GH_HD uint64_t gh_slot_key_mask(unsigned key_bits) { return key_bits == 32 ? 0xFFFFFFFFull : ~0ull; }
GH_HD uint64_t gh_slot_empty_key(unsigned key_bits) { return gh_slot_key_mask(key_bits); }
GH_HD uint64_t gh_slot_value_mask(unsigned value_bits) {
  return value_bits == 64 ? ~0ull : (value_bits == 32 ? 0xFFFFFFFFull : 0ull);
}
/* Byte offset of the value inside a slot. */
GH_HD unsigned gh_slot_value_offset(unsigned slot_bytes) { return slot_bytes == 8 ? 4u : 8u; }

/* The slot bits of (key, value) with all padding set to ones. */
GH_HD gh_slot_bits gh_slot_pack(gh_slot_format f, uint64_t key, uint64_t value) {
  gh_slot_bits b;
  const uint64_t ones = ~0ull;
  if (f.slot_bytes == 4) {
    b.lo = key;
    b.hi = ones;
  } else if (f.slot_bytes == 8) {
    b.lo = f.key_bits == 64 ? key : (key | (value << 32));
    b.hi = ones;
  } else {
    b.lo = f.key_bits == 64 ? key : (key | (ones << 32));
    b.hi = f.value_bits == 64 ? value : (value | (ones << 32));
  }
  return b;
}
GH_HD uint64_t gh_slot_bits_key(gh_slot_format f, gh_slot_bits b) { return b.lo & gh_slot_key_mask(f.key_bits); }
GH_HD uint64_t gh_slot_bits_value(gh_slot_format f, gh_slot_bits b) {
  if (f.slot_bytes == 8) return f.value_bits ? b.lo >> 32 : 0;
  return b.hi & gh_slot_value_mask(f.value_bits);
}
GH_HD int gh_slot_bits_equal(gh_slot_bits a, gh_slot_bits b) { return a.lo == b.lo && a.hi == b.hi; }

GH_HD void *gh_slot_at(gh_slot_format f, void *slots, uint64_t index) {
  return (char *)slots + index * f.slot_bytes;
}
GH_HD uint64_t gh_slot_load_key(gh_slot_format f, const void *slot) {
  return f.key_bits == 32 ? gh_load_u32(slot) : gh_load_u64(slot);
}
GH_HD uint64_t gh_slot_load_value(gh_slot_format f, const void *slot) {
  const char *v = (const char *)slot + gh_slot_value_offset(f.slot_bytes);
  if (f.value_bits == 0) return 0;
  return f.value_bits == 32 ? gh_load_u32(v) : gh_load_u64(v);
}

/* The whole slot in one load (one 16-byte load on the device; two 8-byte atomic loads on the
 * host, used only where no writer runs concurrently or a CAS verifies what was read). */
GH_HD gh_slot_bits gh_slot_load(gh_slot_format f, const void *slot) {
  gh_slot_bits b;
  b.hi = ~0ull;
#if defined(__CUDA_ARCH__)
  if (f.slot_bytes == 4) {
    b.lo = __ldcg((const unsigned int *)slot);
  } else if (f.slot_bytes == 8) {
    b.lo = __ldcg((const unsigned long long *)slot);
  } else {
    const ulonglong2 v = __ldcg((const ulonglong2 *)slot);
    b.lo = v.x;
    b.hi = v.y;
  }
#else
  if (f.slot_bytes == 4) {
    b.lo = gh_load_u32(slot);
  } else {
    b.lo = gh_load_u64(slot);
    if (f.slot_bytes == 16) b.hi = gh_load_u64((const char *)slot + 8);
  }
#endif
  return b;
}

/* Plain (non-atomic) copies of slot bits to and from private arrays (staged entries). */
GH_HD gh_slot_bits gh_slot_read(gh_slot_format f, const void *src) {
  gh_slot_bits b;
  b.hi = ~0ull;
  if (f.slot_bytes == 4) {
    b.lo = *(const uint32_t *)src;
  } else {
    b.lo = *(const uint64_t *)src;
    if (f.slot_bytes == 16) b.hi = ((const uint64_t *)src)[1];
  }
  return b;
}
GH_HD void gh_slot_write(gh_slot_format f, void *dst, gh_slot_bits b) {
  if (f.slot_bytes == 4) {
    *(uint32_t *)dst = (uint32_t)b.lo;
  } else {
    *(uint64_t *)dst = b.lo;
    if (f.slot_bytes == 16) ((uint64_t *)dst)[1] = b.hi;
  }
}

GH_HD unsigned __int128 gh_slot_wide(gh_slot_bits b) { return ((unsigned __int128)b.hi << 64) | b.lo; }

/* One CAS of a whole slot; returns the key field the slot held before (== expected's key field
 * when the CAS succeeded). */
GH_HD uint64_t gh_slot_cas_key(gh_slot_format f, void *slot, gh_slot_bits expected, gh_slot_bits desired) {
  const uint64_t key_mask = gh_slot_key_mask(f.key_bits);
  if (f.slot_bytes == 4) return gh_cas_u32(slot, (uint32_t)expected.lo, (uint32_t)desired.lo);
  if (f.slot_bytes == 8) return gh_cas_u64(slot, expected.lo, desired.lo) & key_mask;
  return (uint64_t)gh_cas_u128(slot, gh_slot_wide(expected), gh_slot_wide(desired)) & key_mask;
}

/* One CAS of a whole slot; returns every bit the slot held before. */
GH_HD gh_slot_bits gh_slot_cas(gh_slot_format f, void *slot, gh_slot_bits expected, gh_slot_bits desired) {
  gh_slot_bits old;
  old.hi = ~0ull;
  if (f.slot_bytes == 4) {
    old.lo = gh_cas_u32(slot, (uint32_t)expected.lo, (uint32_t)desired.lo);
  } else if (f.slot_bytes == 8) {
    old.lo = gh_cas_u64(slot, expected.lo, desired.lo);
  } else {
    const unsigned __int128 w = gh_cas_u128(slot, gh_slot_wide(expected), gh_slot_wide(desired));
    old.lo = (uint64_t)w;
    old.hi = (uint64_t)(w >> 64);
  }
  return old;
}

/* Swaps a whole slot atomically; returns what it held (the cuckoo eviction step). */
GH_HD gh_slot_bits gh_slot_exchange(gh_slot_format f, void *slot, gh_slot_bits desired) {
  gh_slot_bits old;
  old.hi = ~0ull;
  if (f.slot_bytes == 4) {
    old.lo = gh_exchange_u32(slot, (uint32_t)desired.lo);
  } else if (f.slot_bytes == 8) {
    old.lo = gh_exchange_u64(slot, desired.lo);
  } else {
    const unsigned __int128 w = gh_exchange_u128(slot, gh_slot_wide(desired));
    old.lo = (uint64_t)w;
    old.hi = (uint64_t)(w >> 64);
  }
  return old;
}

/* A duplicate policy applied to two values (unsigned, value_bits wide; ADD wraps). */
GH_HD uint64_t gh_policy_combine(int policy, unsigned value_bits, uint64_t stored, uint64_t incoming) {
  switch (policy) {
    case GH_OVERWRITE: return incoming;
    case GH_ADD: return (stored + incoming) & gh_slot_value_mask(value_bits);
    case GH_MIN: return incoming < stored ? incoming : stored;
    case GH_MAX: return incoming > stored ? incoming : stored;
    default: return stored; /* GH_KEEP_FIRST */
  }
}

/* Applies a duplicate policy to the value field of an occupied slot with one atomic on the value
 * alone. Only for designs whose keys never move while values are updated (warpdrive); a design
 * that swaps whole slots concurrently merges with gh_slot_merge_if_key instead. */
GH_HD void gh_slot_update_value(gh_slot_format f, void *slot, int policy, uint64_t value) {
  void *v = (char *)slot + gh_slot_value_offset(f.slot_bytes);
  const int wide = f.value_bits == 64;
  if (f.value_bits == 0) return;
  switch (policy) {
    case GH_OVERWRITE:
      if (wide) gh_store_u64(v, value); else gh_store_u32(v, (uint32_t)value);
      break;
    case GH_ADD:
      if (wide) gh_add_u64(v, value); else gh_add_u32(v, (uint32_t)value);
      break;
    case GH_MIN:
      if (wide) gh_min_u64(v, value); else gh_min_u32(v, (uint32_t)value);
      break;
    case GH_MAX:
      if (wide) gh_max_u64(v, value); else gh_max_u32(v, (uint32_t)value);
      break;
    default: /* GH_KEEP_FIRST: the stored value stays */
      break;
  }
}

/* Merges value into the slot under the policy with a CAS of the whole slot, as long as the slot
 * holds key; returns 0 (nothing changed) once it holds another key. Whole-slot CAS keeps the merge
 * atomic with respect to concurrent whole-slot exchanges. */
GH_HD int gh_slot_merge_if_key(gh_slot_format f, void *slot, uint64_t key, int policy, uint64_t value) {
  gh_slot_bits seen = gh_slot_load(f, slot);
  for (;;) {
    if (gh_slot_bits_key(f, seen) != key) return 0;
    const uint64_t stored = gh_slot_bits_value(f, seen);
    const uint64_t merged = gh_policy_combine(policy, f.value_bits, stored, value);
    if (merged == stored || f.value_bits == 0) return 1;
    const gh_slot_bits before = gh_slot_cas(f, slot, seen, gh_slot_pack(f, key, merged));
    if (gh_slot_bits_equal(before, seen)) return 1;
    seen = before;
  }
}

/* ---- The out-of-band slot of the all-ones key ----------------------------------------------- */

/* A side slot holds a sentinel key's value; its key field is GH_SIDE_PRESENT while the key is
 * present and all ones (canonically empty) otherwise. Side slots never move, so values are
 * updated with value-only atomics. */
#define GH_SIDE_PRESENT 0ull

/* Returns 1 when the key was absent (now stored), 0 when present (the policy was applied). */
GH_HD int gh_side_insert(gh_slot_format f, void *slot, uint64_t value, int policy) {
  const uint64_t empty = gh_slot_empty_key(f.key_bits);
  const uint64_t before = gh_slot_cas_key(f, slot, gh_slot_pack(f, empty, ~0ull), gh_slot_pack(f, GH_SIDE_PRESENT, value));
  if (before == empty) return 1;
  gh_slot_update_value(f, slot, policy, value);
  return 0;
}

GH_HD int gh_side_find(gh_slot_format f, const void *slot, uint64_t *value) {
  if (gh_slot_load_key(f, slot) != GH_SIDE_PRESENT) return 0;
  *value = gh_slot_load_value(f, slot);
  return 1;
}

/* Replaces key in a slot by new_marker with padding and value set to all ones; returns 1 if this
 * caller removed it (another erase of the same key may have won). The key field is swapped first
 * so exactly one eraser wins; erase batches never overlap inserts or finds, so the value reset
 * that follows cannot be observed half done. */
GH_HD int gh_slot_erase(gh_slot_format f, void *slot, uint64_t key, uint64_t new_marker) {
  const uint64_t old = f.key_bits == 32 ? gh_cas_u32(slot, (uint32_t)key, (uint32_t)new_marker)
                                        : gh_cas_u64(slot, key, new_marker);
  if (old != key) return 0;
  if (f.slot_bytes == 8 && f.key_bits == 32) {
    gh_store_u32((char *)slot + 4, 0xFFFFFFFFu);
  } else if (f.slot_bytes == 16) {
    if (f.key_bits == 32) gh_store_u32((char *)slot + 4, 0xFFFFFFFFu);
    gh_store_u64((char *)slot + 8, ~0ull);
  }
  return 1;
}

GH_HD int gh_side_erase(gh_slot_format f, void *slot) {
  return gh_slot_erase(f, slot, GH_SIDE_PRESENT, gh_slot_empty_key(f.key_bits));
}

#endif /* GH_DETAIL_SLOT_H */
