/* gpuhash/detail/slab.h - the slab hash's layout and the logic the host backend, the CUDA kernels
 * and the device-side API (include/gpuhash/slab.cuh) share (GH_HD): slab geometry per key / value
 * width, lane roles, the bucket hash, SlabAlloc's 32-bit slab addresses and bitmap math
 * (Ashkiani, Farach-Colton and Owens, "A Dynamic Hash Table for the GPU", IPDPS 2018).
 * Internal: not part of the stable API, it may change with any release.
 *
 * A slab is 128 bytes: 32 lanes of 4 bytes, one coalesced read for a warp.
 *
 *   lanes 0..29   data: entries in the shared slot format (gpuhash/detail/slot.h), 4, 8 or 16
 *                 bytes each, so one CAS publishes a (key, value) pair: 30 keys (32-bit sets),
 *                 15 entries (32-bit key + 32-bit value, or 64-bit sets), 7 entries (16-byte
 *                 slots; lanes 28 and 29 stay all ones)
 *   lane 30       auxiliary, all ones (reserved, as in the paper)
 *   lane 31       the next slab's address, GH_SLAB_NULL at a list's end
 *
 * An EMPTY entry is all ones; a TOMBSTONE entry has the key all ones minus one (its value bits
 * are left as they were: an erase swaps the key field only, so a concurrent find never reads a
 * half-erased value). The two keys that equal these patterns live in two side buckets after the
 * B main buckets (bucket B for all ones, B + 1 for all ones minus one), stored there under the
 * stand-in key 0; the side buckets are slab lists like any other, so the multivalue variant keeps
 * any number of values for them.
 *
 * SlabAlloc address: super block (5 bits) | memory block (17 bits) | unit (10 bits). A memory
 * block is 1024 slabs with a 1024-bit occupancy bitmap (32 words: one word per lane of a warp).
 * GH_SLAB_NULL (all ones) is never a valid address: super block 31 is never allocated. */
#ifndef GH_DETAIL_SLAB_H
#define GH_DETAIL_SLAB_H

#include "gpuhash/detail/hash.h"
#include "gpuhash/detail/hd.h"
#include "gpuhash/detail/slot.h"

#define GH_SLAB_LANES 32u
#define GH_SLAB_BYTES 128u
#define GH_SLAB_DATA_BYTES 120u /* lanes 0..29 */
#define GH_SLAB_AUX_LANE 30u
#define GH_SLAB_NEXT_LANE 31u
#define GH_SLAB_NULL 0xFFFFFFFFu

#define GH_SLAB_UNIT_BITS 10u
#define GH_SLAB_BLOCK_BITS 17u
#define GH_SLAB_SUPER_BITS 5u
#define GH_SLAB_BLOCK_SLABS (1u << GH_SLAB_UNIT_BITS)     /* slabs per memory block */
#define GH_SLAB_BLOCK_WORDS (GH_SLAB_BLOCK_SLABS / 32u)    /* bitmap words per memory block */
#define GH_SLAB_MAX_BLOCKS (1u << GH_SLAB_BLOCK_BITS)     /* memory blocks per super block */
#define GH_SLAB_MAX_SUPERS ((1u << GH_SLAB_SUPER_BITS) - 1u) /* 31: the 32nd would hold NULL */
/* Growth: a new super block doubles the slabs, up to this many at once (more only when a batch's
 * reservation needs it). */
#define GH_SLAB_SUPER_CAP_SLABS (1u << 20)
/* SlabAlloc grows when more than 3/4 of its slabs would be in use after a batch. */
#define GH_SLAB_GROW_NUM 3u
#define GH_SLAB_GROW_DEN 4u
/* Base buckets a table may have (the bucket hash takes 64-bit ranges; this keeps the base slabs
 * within 8 TiB). */
#define GH_SLAB_MAX_BUCKETS (1ull << 36)
/* Resident-block changes before an allocation falls back to a full scan of the bitmaps. */
#define GH_SLAB_ALLOC_ATTEMPTS 16u

/* The special key patterns and the stand-in key their side buckets store. */
#define GH_SLAB_SIDE_KEY 0ull

/* How an insert chooses its entry (see "No duplicate keys" in docs/architecture.md). */
typedef enum gh_slab_insert_mode {
  GH_SLAB_FRONTIER = 0, /* map in a mixed batch: the first EMPTY entry of the list only */
  GH_SLAB_REUSE = 1,    /* map in an insert-only batch: the first free entry (tombstone or EMPTY) */
  GH_SLAB_APPEND = 2    /* multivalue: the first free entry, duplicates allowed */
} gh_slab_insert_mode;

/* The mode of an insert: erases may race with it only in a mixed batch, and only there must a map
 * insert keep to the EMPTY frontier. */
GH_HD gh_slab_insert_mode gh_slab_insert_mode_for(int multivalue, int mixed_batch) {
  if (multivalue) return GH_SLAB_APPEND;
  return mixed_batch ? GH_SLAB_FRONTIER : GH_SLAB_REUSE;
}

typedef struct gh_slab_geometry {
  gh_slot_format format;
  unsigned per_slab; /* entries per slab: 120 / slot bytes */
  uint64_t buckets;  /* B main buckets; the side buckets are B and B + 1 */
  uint64_t seed;
} gh_slab_geometry;

GH_HD unsigned gh_slab_per_slab(unsigned key_bits, unsigned value_bits) {
  return GH_SLAB_DATA_BYTES / gh_slot_bytes(key_bits, value_bits);
}

GH_HD uint64_t gh_slab_empty_key(const gh_slab_geometry *g) { return gh_slot_empty_key(g->format.key_bits); }
GH_HD uint64_t gh_slab_tombstone_key(const gh_slab_geometry *g) { return gh_slab_empty_key(g) - 1u; }

/* Where a key lives: its bucket (a side bucket for the two special patterns) and the key stored
 * there (the stand-in 0 in a side bucket). */
GH_HD uint64_t gh_slab_bucket(const gh_slab_geometry *g, uint64_t key, uint64_t *stored) {
  const uint64_t empty = gh_slab_empty_key(g);
  *stored = key;
  if (key >= empty - 1u) {
    *stored = GH_SLAB_SIDE_KEY;
    return g->buckets + (key == empty ? 0u : 1u);
  }
  if (g->format.key_bits == 32) return gh_range32(gh_fmix32((uint32_t)key ^ (uint32_t)g->seed), g->buckets);
  return gh_range64(gh_fmix64(key ^ g->seed), g->buckets);
}

/* The key an entry of bucket b stands for. */
GH_HD uint64_t gh_slab_user_key(const gh_slab_geometry *g, uint64_t bucket, uint64_t stored) {
  if (bucket < g->buckets) return stored;
  return bucket == g->buckets ? gh_slab_empty_key(g) : gh_slab_tombstone_key(g);
}

/* ---- SlabAlloc addresses and bitmaps ----------------------------------------------------------- */

GH_HD uint32_t gh_slab_address(uint32_t super, uint32_t block, uint32_t unit) {
  return (super << (GH_SLAB_BLOCK_BITS + GH_SLAB_UNIT_BITS)) | (block << GH_SLAB_UNIT_BITS) | unit;
}
GH_HD uint32_t gh_slab_address_super(uint32_t a) { return a >> (GH_SLAB_BLOCK_BITS + GH_SLAB_UNIT_BITS); }
GH_HD uint32_t gh_slab_address_block(uint32_t a) { return (a >> GH_SLAB_UNIT_BITS) & (GH_SLAB_MAX_BLOCKS - 1u); }
GH_HD uint32_t gh_slab_address_unit(uint32_t a) { return a & (GH_SLAB_BLOCK_SLABS - 1u); }
/* Index of a slab inside its super block (block * 1024 + unit), which is also its bit index in
 * the super block's bitmap (word index / 32, bit index % 32). */
GH_HD uint64_t gh_slab_address_index(uint32_t a) { return a & ((1u << (GH_SLAB_BLOCK_BITS + GH_SLAB_UNIT_BITS)) - 1u); }

/* The pool as operations see it during a batch: super blocks are published between batches
 * only, so this by-value copy stays valid for a whole call. */
typedef struct gh_slab_pool {
  uint32_t *slabs[GH_SLAB_MAX_SUPERS];  /* 32 words per slab */
  uint32_t *bitmap[GH_SLAB_MAX_SUPERS]; /* 32 words per memory block */
  uint32_t blocks[GH_SLAB_MAX_SUPERS];  /* memory blocks in each super block */
  uint32_t supers;
  uint32_t total_blocks;
} gh_slab_pool;

/* What an operation on the device reads of a table. The library's kernels get it by value; a
 * device view points at a copy in device memory that the library keeps current (the base slabs
 * move when the buckets grow, and SlabAlloc gains super blocks), so that a view stays valid. */
typedef struct gh_slab_device_table {
  gh_slab_geometry g;
  uint32_t *base;                   /* (buckets + 2) slabs */
  gh_slab_pool pool;
  unsigned long long *size;         /* keys (multivalue: pairs) stored */
  unsigned long long *slabs_in_use; /* slabs SlabAlloc has handed out */
} gh_slab_device_table;

/* 1 when a names a slab that exists in the pool. */
GH_HD int gh_slab_address_valid(const gh_slab_pool *p, uint32_t a) {
  const uint32_t s = gh_slab_address_super(a);
  return a != GH_SLAB_NULL && s < p->supers && gh_slab_address_block(a) < p->blocks[s];
}

GH_HD uint32_t *gh_slab_at(const gh_slab_pool *p, uint32_t a) {
  return p->slabs[gh_slab_address_super(a)] + gh_slab_address_index(a) * GH_SLAB_LANES;
}

/* The hashed choice of a resident memory block (global block number over all super blocks):
 * attempt i of a thread (or warp) with id `who`. */
GH_HD uint32_t gh_slab_resident_block(const gh_slab_pool *p, uint32_t who, uint32_t attempt) {
  return (uint32_t)gh_range32(gh_fmix32(who * 0x9E3779B9u + attempt * 0x85EBCA6Bu + 1u), p->total_blocks);
}

/* A global block number as (super block, block). */
GH_HD void gh_slab_block_locate(const gh_slab_pool *p, uint32_t global, uint32_t *super, uint32_t *block) {
  uint32_t s = 0;
  while (s + 1 < p->supers && global >= p->blocks[s]) global -= p->blocks[s++];
  *super = s;
  *block = global;
}

/* Gives a slab back: clears its bitmap bit (atomically: other bits of the word are being set by
 * concurrent allocations) and decrements the in-use counter. */
GH_HD void gh_slab_free(const gh_slab_pool *p, unsigned long long *in_use, uint32_t address) {
  const uint64_t index = gh_slab_address_index(address);
  uint32_t *word = &p->bitmap[gh_slab_address_super(address)][index / 32];
#if defined(__CUDA_ARCH__)
  atomicAnd((unsigned int *)word, ~(1u << (index % 32)));
  atomicAdd(in_use, ~0ull); /* - 1 */
#else
  __atomic_fetch_and(word, ~(1u << (index % 32)), __ATOMIC_ACQ_REL);
  __atomic_fetch_sub(in_use, 1ull, __ATOMIC_RELAXED);
#endif
}

/* Replaces an entry's key field by the tombstone (its value bits stay, so a racing find never reads
 * half an erase); 1 when this caller removed it. */
GH_HD int gh_slab_tombstone_entry(const gh_slab_geometry *g, void *e, uint64_t stored) {
  const uint64_t tomb = gh_slab_tombstone_key(g);
  if (g->format.key_bits == 32) return gh_cas_u32(e, (uint32_t)stored, (uint32_t)tomb) == (uint32_t)stored;
  return gh_cas_u64(e, stored, tomb) == stored;
}

GH_HD uint32_t *gh_slab_next(const gh_slab_pool *p, const uint32_t *slab) {
  const uint32_t next = gh_load_u32(&slab[GH_SLAB_NEXT_LANE]);
  return next == GH_SLAB_NULL ? (uint32_t *)0 : gh_slab_at(p, next);
}

GH_HD void *gh_slab_entry(gh_slot_format f, uint32_t *slab, unsigned i) { return (char *)slab + i * f.slot_bytes; }

/* FLUSH of one list (the compaction of Ashkiani et al.): packs its live entries, in list order, to
 * the front of the list, empties the rest of the last slab written and gives the slabs behind it
 * back to SlabAlloc. The write position never passes the read position, so it works in place. Runs
 * with no other operation on the table (one thread per list on either backend). Returns the slabs
 * freed. */
GH_HD uint64_t gh_slab_compact_list(const gh_slab_geometry *g, const gh_slab_pool *p, unsigned long long *in_use,
                                     uint32_t *head) {
  const gh_slot_format f = g->format;
  const uint64_t empty = gh_slab_empty_key(g), tomb = gh_slab_tombstone_key(g);
  uint32_t *wslab = head, *wprev = (uint32_t *)0;
  unsigned wi = 0;
  uint64_t freed = 0;
  for (uint32_t *rslab = head; rslab != (uint32_t *)0; rslab = gh_slab_next(p, rslab)) {
    for (unsigned i = 0; i < g->per_slab; ++i) {
      const gh_slot_bits bits = gh_slot_read(f, gh_slab_entry(f, rslab, i));
      const uint64_t k = gh_slot_bits_key(f, bits);
      if (k == empty || k == tomb) continue;
      if (wi == g->per_slab) {
        wprev = wslab;
        wslab = gh_slab_next(p, wslab);
        wi = 0;
      }
      gh_slot_write(f, gh_slab_entry(f, wslab, wi++), bits);
    }
  }
  const gh_slot_bits blank = gh_slot_pack(f, empty, ~0ull);
  for (unsigned i = wi; i < g->per_slab; ++i) gh_slot_write(f, gh_slab_entry(f, wslab, i), blank);
  /* The last slab written keeps the list's end, unless it received nothing and is not the base. */
  uint32_t *keep = wi == 0 && wprev != (uint32_t *)0 ? wprev : wslab;
  uint32_t next = keep[GH_SLAB_NEXT_LANE];
  keep[GH_SLAB_NEXT_LANE] = GH_SLAB_NULL;
  while (next != GH_SLAB_NULL) {
    uint32_t *slab = gh_slab_at(p, next);
    const uint32_t after = slab[GH_SLAB_NEXT_LANE];
    gh_slab_free(p, in_use, next);
    freed += 1;
    next = after;
  }
  return freed;
}

/* ---- Doubling the buckets: each list split in two ------------------------------------------------ */

/* Empties the words of a slab from word `from` to the auxiliary lane and sets its next address. */
GH_HD void gh_slab_seal(uint32_t *slab, unsigned from, uint32_t next) {
  for (unsigned w = from; w < GH_SLAB_NEXT_LANE; ++w) slab[w] = GH_SLAB_NULL;
  slab[GH_SLAB_NEXT_LANE] = next;
}

/* Which of the two lists of a doubled table (0: bucket `first`, 1: first + 1) the live entry with
 * stored key k of list b goes to; a side bucket's entries all stay together. */
GH_HD unsigned gh_slab_split_half(const gh_slab_geometry *doubled, uint64_t b, uint64_t first, uint64_t k) {
  uint64_t stored;
  return b < doubled->buckets / 2u && gh_slab_bucket(doubled, k, &stored) != first;
}

/* With the multiply-high bucket hash, bucket b of B buckets is exactly buckets 2b and 2b + 1 of
 * 2B, so the table doubles list by list, each on its own and in order (a side bucket b >= B
 * becomes side bucket b + B). The split of list b writes every word of the new base slabs it
 * owns in new_base (2B + 2 slabs), keeps its live entries in list order (tombstones are dropped),
 * and takes the further slabs it needs from its own old list, in list order: an entry that finds
 * its output slab full moves on to the oldest old slab the split has already begun to read, which
 * never runs out (after r live entries read from s slabs, the two outputs used at most
 * ceil(r / per_slab) - 1 <= s - 1 further slabs) and never overwrites an entry not yet read (a
 * slab taken while being read receives at most the entries read from it since). The old slabs it
 * did not need go back to SlabAlloc. No other operation may run on the table. Returns the slabs
 * freed. */
GH_HD uint64_t gh_slab_split_list(const gh_slab_geometry *g, const gh_slab_pool *p, unsigned long long *in_use,
                                  uint32_t *old_base, uint64_t b, uint32_t *new_base) {
  const gh_slot_format f = g->format;
  const uint64_t empty = gh_slab_empty_key(g), tomb = gh_slab_tombstone_key(g);
  gh_slab_geometry doubled = *g;
  doubled.buckets = 2u * g->buckets;
  const int side = b >= g->buckets;
  const uint64_t first = side ? b + g->buckets : 2u * b;
  /* The two outputs' current slabs and fills (scalars, not arrays: a GPU would index those in local
   * memory). */
  uint32_t *out0 = new_base + first * GH_SLAB_LANES, *out1 = out0 + GH_SLAB_LANES;
  unsigned fill0 = 0, fill1 = 0;
  const unsigned full_words = g->per_slab * f.slot_bytes / 4u;
  uint32_t *slab = old_base + b * GH_SLAB_LANES;
  uint32_t next = slab[GH_SLAB_NEXT_LANE];
  uint32_t reusable = next; /* the oldest old slab not taken yet */
  uint64_t freed = 0;
  for (;;) {
    for (unsigned i = 0; i < g->per_slab; ++i) {
      const gh_slot_bits bits = gh_slot_read(f, gh_slab_entry(f, slab, i));
      const uint64_t k = gh_slot_bits_key(f, bits);
      if (k == empty || k == tomb) continue;
      const unsigned second = gh_slab_split_half(&doubled, b, first, k);
      uint32_t *o = second ? out1 : out0;
      unsigned fill = second ? fill1 : fill0;
      if (fill == g->per_slab) {
        uint32_t *taken = gh_slab_at(p, reusable);
        const uint32_t after = taken[GH_SLAB_NEXT_LANE];
        gh_slab_seal(o, full_words, reusable);
        reusable = after;
        o = taken;
        fill = 0;
      }
      gh_slot_write(f, gh_slab_entry(f, o, fill), bits);
      fill += 1;
      if (second) out1 = o, fill1 = fill;
      else out0 = o, fill0 = fill;
    }
    if (next == GH_SLAB_NULL) break;
    slab = gh_slab_at(p, next);
    next = slab[GH_SLAB_NEXT_LANE];
  }
  gh_slab_seal(out0, fill0 * f.slot_bytes / 4u, GH_SLAB_NULL);
  if (!side) gh_slab_seal(out1, fill1 * f.slot_bytes / 4u, GH_SLAB_NULL);
  while (reusable != GH_SLAB_NULL) {
    const uint32_t after = gh_slab_at(p, reusable)[GH_SLAB_NEXT_LANE];
    gh_slab_free(p, in_use, reusable);
    freed += 1;
    reusable = after;
  }
  return freed;
}

#endif /* GH_DETAIL_SLAB_H */
