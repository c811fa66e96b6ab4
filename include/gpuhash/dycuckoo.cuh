/*
 * gpuhash/dycuckoo.cuh - use a dycuckoo table from your own CUDA kernels.
 *
 * On the host: gh_get_device_view(table, &view) for a dycuckoo table on the CUDA backend; pass the
 * view to your kernel by value. Each call below is one thread's own operation on one key: the
 * other lanes of its warp need not take part, and calls may diverge.
 *
 *   gh_dycuckoo_device_find(view, key, value_out)        1 found (its value copied to value_out),
 *                                                        0 absent (value_out untouched)
 *   gh_dycuckoo_device_insert(view, key, value, policy)  GH_DYCUCKOO_INSERTED   a new key stored
 *                                                        GH_DYCUCKOO_MERGED     merged into the stored
 *                                                                               key's value by policy
 *                                                        GH_DYCUCKOO_NEEDS_RESIZE  not stored, nothing
 *                                                                               changed: see below
 *   gh_dycuckoo_device_erase(view, key)                  1 erased, 0 absent
 *
 * Values: `value` and `value_out` point to one value of value_bits / 8 bytes (any alignment, any
 * memory the thread can read or write); NULL for a set (value_out may be NULL for a map too). The
 * policies are those of gh_insert (records: GH_KEEP_FIRST or GH_OVERWRITE).
 *
 * Resizing stays on the host. An insert returns GH_DYCUCKOO_NEEDS_RESIZE when storing a new key
 * would take theta past fill_max (the view carries the room left when the last host call ended) or
 * when the key's bucket in every subtable is full (the device API moves no key); insert those keys
 * with gh_insert, which doubles subtables as needed and places them. The room is shared by the
 * kernel's threads (an insert may also say so while others hold room they end up not using). Erases
 * give no room back and halve nothing until the next gh_insert or gh_erase of at least one key:
 * theta may stay below fill_min until then (gh_validate accepts that).
 *
 * Concurrency: the operations of a kernel (and of kernels running at the same time) are concurrent
 * and each is atomic, as in one gh_mixed batch: inserts of one key are serialised by the lock of the
 * key's first bucket, so a key is never stored twice; a find racing with an insert or an erase of
 * its key sees it before or after (a find racing with a GH_OVERWRITE of a record may read part of
 * each: records other than 4 and 8 bytes are not written atomically); an erase racing with an
 * insert of the key removes it or not. The table's counters (gh_size, view.size) follow every
 * operation. No host call may run on the table while a kernel uses the view; the view stays valid
 * across host calls (every call that changes the table refreshes the record it points to).
 */
#ifndef GPUHASH_DYCUCKOO_CUH
#define GPUHASH_DYCUCKOO_CUH

#include "gpuhash_device.cuh"
#include "gpuhash/detail/dycuckoo.h"

/** Outcomes of gh_dycuckoo_device_insert. */
#define GH_DYCUCKOO_MERGED 0
#define GH_DYCUCKOO_INSERTED 1
#define GH_DYCUCKOO_NEEDS_RESIZE 2

/* ---- Helpers (internal) ------------------------------------------------------------------------- */

static __device__ __forceinline__ gh_dy_device *gh_dycuckoo_table(gh_device_view view) {
  return (gh_dy_device *)view.slots;
}

/* Tries a bucket's lock once: a read first, so that threads queueing for one lock (a small table
 * under a large kernel) send no atomics to it while it is held. */
static __device__ __forceinline__ bool gh_dycuckoo_try_lock(uint32_t *lock) {
  if (__ldcg(lock) != GH_DY_LOCK_FREE || atomicCAS(lock, GH_DY_LOCK_FREE, GH_DY_LOCK_HELD) != GH_DY_LOCK_FREE)
    return false;
  __threadfence(); /* the bucket is read after the lock is ours */
  return true;
}

static __device__ __forceinline__ void gh_dycuckoo_unlock(uint32_t *lock) {
  __threadfence(); /* the bucket's writes are seen before the lock is free */
  atomicExch(lock, GH_DY_LOCK_FREE);
}

/* The slot of `wanted` in the bucket's line, or g->slots: the line's eight 16-byte parts are read
 * at once (one thread per operation: one round trip to L2 per line, not one per key). */
static __device__ __forceinline__ unsigned gh_dycuckoo_slot_of(const gh_dy_geometry *g, const void *line, uint64_t wanted) {
  uint4 part[GH_DY_LINE_BYTES / 16u];
#pragma unroll
  for (unsigned j = 0; j < GH_DY_LINE_BYTES / 16u; ++j) part[j] = __ldcg((const uint4 *)line + j);
#pragma unroll
  for (unsigned j = 0; j < GH_DY_LINE_BYTES / 16u; ++j) {
    if (g->key_bits == 32) {
      const unsigned w = (unsigned)wanted;
      if (part[j].x == w) return 4u * j;
      if (part[j].y == w) return 4u * j + 1u;
      if (part[j].z == w) return 4u * j + 2u;
      if (part[j].w == w) return 4u * j + 3u;
    } else {
      if (((unsigned long long)part[j].y << 32 | part[j].x) == wanted) return 2u * j;
      if (((unsigned long long)part[j].w << 32 | part[j].z) == wanted) return 2u * j + 1u;
    }
  }
  return g->slots;
}

/* Where key is stored: 1 with its subtable, bucket and slot. */
static __device__ __forceinline__ int gh_dycuckoo_locate(const gh_dy_device *d, uint64_t key, unsigned *table,
                                                         uint64_t *bucket, unsigned *slot) {
  const gh_dy_geometry *g = &d->g;
  for (unsigned i = 0; i < g->tables; ++i) {
    const uint64_t b = gh_dy_bucket(g, i, key);
    const unsigned k = gh_dycuckoo_slot_of(g, gh_dy_line(g, d->keys[i], b), key);
    if (k < g->slots) {
      *table = i;
      *bucket = b;
      *slot = k;
      return 1;
    }
  }
  return 0;
}

/* Copies a value read through L2 (the key that names it was seen first, with a fence between). */
static __device__ __forceinline__ void gh_dycuckoo_read_value(const gh_dy_geometry *g, void *to, const void *from) {
  for (unsigned j = 0; j < g->value_bytes; ++j) ((unsigned char *)to)[j] = __ldcg((const unsigned char *)from + j);
}

/* Merges a value into a stored one by the policy, the stored one read through L2 (its last writer
 * may have run on another SM). The caller holds the bucket's lock. */
static __device__ __forceinline__ void gh_dycuckoo_merge_value(const gh_dy_geometry *g, int policy, void *stored,
                                                               const void *value) {
  unsigned char merged[GH_DY_MAX_VALUE_BYTES];
  gh_dycuckoo_read_value(g, merged, stored);
  gh_dy_value_merge(g, policy, merged, value);
  gh_dy_value_copy(g, stored, merged);
}

/* ---- The operations ----------------------------------------------------------------------------- */

/** Looks key up; copies its value to value_out (when not NULL) and returns 1 when it is stored. */
static __device__ int gh_dycuckoo_device_find(gh_device_view view, uint64_t key, void *value_out) {
  const gh_dy_device *d = gh_dycuckoo_table(view);
  const gh_dy_geometry *g = &d->g;
  if (key == gh_dy_empty_key(g)) {
    if (!gh_dy_side_present(d->side)) return 0;
    __threadfence(); /* the value is read after the presence word: an insert writes it before */
    if (value_out && g->value_bytes) gh_dycuckoo_read_value(g, value_out, gh_dy_side_value(d->side));
    return 1;
  }
  for (;;) {
    unsigned i, k;
    uint64_t b;
    if (!gh_dycuckoo_locate(d, key, &i, &b, &k)) return 0;
    __threadfence(); /* the value is read after the key: an insert writes it before the key */
    if (value_out && g->value_bytes) gh_dycuckoo_read_value(g, value_out, gh_dy_value_at(g, d->values[i], b, k));
    __threadfence();
    /* The key still in its slot: the value read is its (an erase and another key's insert may have
     * reused the slot meanwhile; then look again). */
    if (gh_dycuckoo_slot_of(g, gh_dy_line(g, d->keys[i], b), key) == k) return 1;
  }
}

/** Inserts key with the value at `value` (NULL for a set) under policy: GH_DYCUCKOO_INSERTED,
 * GH_DYCUCKOO_MERGED, or GH_DYCUCKOO_NEEDS_RESIZE (nothing changed; insert it with gh_insert). */
static __device__ int gh_dycuckoo_device_insert(gh_device_view view, uint64_t key, const void *value,
                                                gh_dup_policy policy) {
  gh_dy_device *d = gh_dycuckoo_table(view);
  const gh_dy_geometry *g = &d->g;
  if (key == gh_dy_empty_key(g)) {
    if (!gh_dy_side_insert(g, d->side, value, (int)policy)) return GH_DYCUCKOO_MERGED;
    gh_dy_count_side(d->counters, 1u);
    return GH_DYCUCKOO_INSERTED;
  }
  const unsigned first = gh_dy_target(g, key);
  uint32_t *home = &d->locks[first][gh_dy_bucket(g, first, key)];
  for (unsigned pause = 32;; pause = pause < 1024u ? 2u * pause : pause) {
    /* Every insert of this key holds its first bucket's lock throughout: no copy of the key can be
     * stored by another thread while this one looks for it and stores it. While it waits, a key
     * found absent once the room is used up needs a resize: no use waiting for that. */
    unsigned i, k;
    uint64_t b;
    while (!gh_dycuckoo_try_lock(home)) {
      if (__ldcg(&d->claimed) >= d->room && !gh_dycuckoo_locate(d, key, &i, &b, &k)) return GH_DYCUCKOO_NEEDS_RESIZE;
      __nanosleep(pause);
      pause = pause < 1024u ? 2u * pause : pause;
    }
    if (gh_dycuckoo_locate(d, key, &i, &b, &k)) {
      /* The merge holds the lock of the key's bucket too (tried: this thread holds one), and finds
       * the key still there: an erase may empty the slot meanwhile, and an insert of another key
       * may only fill it under that lock, after this merge. */
      uint32_t *where = &d->locks[i][b];
      const bool own = where == home;
      if (own || gh_dycuckoo_try_lock(where)) {
        const bool still = gh_dycuckoo_slot_of(g, gh_dy_line(g, d->keys[i], b), key) == k;
        if (still && value) gh_dycuckoo_merge_value(g, (int)policy, gh_dy_value_at(g, d->values[i], b, k), value);
        if (!own) gh_dycuckoo_unlock(where);
        if (still) {
          gh_dycuckoo_unlock(home);
          return GH_DYCUCKOO_MERGED;
        }
      }
      gh_dycuckoo_unlock(home);
      __nanosleep(pause); /* busy, or erased meanwhile: all again */
      continue;
    }
    /* A new key: room below fill_max first. */
    if (atomicAdd(&d->claimed, 1ull) >= d->room) {
      atomicAdd(&d->claimed, ~0ull); /* minus one */
      gh_dycuckoo_unlock(home);
      return GH_DYCUCKOO_NEEDS_RESIZE;
    }
    /* A free slot in its buckets, the first one (locked) first. The others are only tried, and only
     * when they show a free slot (this thread holds a lock: waiting could close a cycle). */
    bool busy = false;
    for (unsigned step = 0; step < g->tables; ++step) {
      i = (first + step) % g->tables;
      b = gh_dy_bucket(g, i, key);
      uint32_t *lock = &d->locks[i][b];
      void *line = gh_dy_line(g, d->keys[i], b);
      if (step > 0 && gh_dycuckoo_slot_of(g, line, gh_dy_empty_key(g)) == g->slots) continue;
      if (step > 0 && !gh_dycuckoo_try_lock(lock)) {
        busy = true;
        continue;
      }
      k = gh_dycuckoo_slot_of(g, line, gh_dy_empty_key(g));
      if (k < g->slots) {
        if (value) gh_dy_value_copy(g, gh_dy_value_at(g, d->values[i], b, k), value);
        __threadfence(); /* a find that sees the key sees its value */
        if (g->key_bits == 32) atomicExch((unsigned int *)line + k, (unsigned int)key);
        else atomicExch((unsigned long long *)line + k, (unsigned long long)key);
        gh_dy_count_key(d->counters, i, 1u);
      }
      if (step > 0) gh_dycuckoo_unlock(lock);
      if (k < g->slots) {
        gh_dycuckoo_unlock(home);
        return GH_DYCUCKOO_INSERTED;
      }
    }
    atomicAdd(&d->claimed, ~0ull); /* the room is not used */
    gh_dycuckoo_unlock(home);
    if (!busy) return GH_DYCUCKOO_NEEDS_RESIZE;
    __nanosleep(pause); /* a bucket with room was busy: all again, holding nothing meanwhile */
  }
}

/** Erases key; returns 1 when this call removed it. */
static __device__ int gh_dycuckoo_device_erase(gh_device_view view, uint64_t key) {
  gh_dy_device *d = gh_dycuckoo_table(view);
  const gh_dy_geometry *g = &d->g;
  if (key == gh_dy_empty_key(g)) {
    if (!gh_dy_side_erase(d->side)) return 0;
    gh_dy_count_side(d->counters, ~0ull); /* minus one */
    return 1;
  }
  for (;;) {
    unsigned i, k;
    uint64_t b;
    if (!gh_dycuckoo_locate(d, key, &i, &b, &k)) return 0;
    void *line = gh_dy_line(g, d->keys[i], b);
    /* One CAS decides between erases of the key; a lost one looks again. */
    const bool won = g->key_bits == 32
                         ? atomicCAS((unsigned int *)line + k, (unsigned int)key, 0xFFFFFFFFu) == (unsigned int)key
                         : atomicCAS((unsigned long long *)line + k, (unsigned long long)key, ~0ull) == key;
    if (won) {
      gh_dy_count_key(d->counters, i, ~0ull); /* minus one */
      return 1;
    }
  }
}

#endif /* GPUHASH_DYCUCKOO_CUH */
