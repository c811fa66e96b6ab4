/* dycuckoo_cuda.cu - the DyCuckoo design on the GPU.
 *
 * Find, erase and the claim pass (the first pass of an insert batch) work on a key line with groups of
 * DY_GROUP_LANES = 4 lanes, 32 bytes each, so a warp runs eight of them side by side in lock step:
 * each group holds the operations of its lanes and takes them one at a time (a ballot among its
 * lanes names the next), one coalesced line read per step. (Measured on an H200 at n = 2^27, d = 4:
 * 4-lane groups find 15.4 G keys/s where 8-lane groups find 12.7 and a warp per key 3.5.)
 *  - find: the key's buckets in its insert order (the chosen subtable first), stopping at a hit;
 *    the value is read only then.
 *  - claim (voter coordination, Li et al. 4.2, at the width of a group): every pending lane tries
 *    the lock word of its operation's bucket with one CAS, all at once; the group then updates the
 *    buckets its lanes locked one after another (a ballot names the next) and frees them after one
 *    fence. A lost lock is tried again next round instead of spinning; after DY_REVOTES lost locks
 *    an operation waits for it (no lane of the warp holds one then, so waiting closes no cycle).
 *    A key's first round takes the lock of its first bucket while the group looks for a copy
 *    stored before the pass (only in subtables that held keys then).
 *  - place (keys known to be absent, few): a whole warp per operation, the operations spread over
 *    every resident warp; free slot first, else a resident moved to a later subtable while both
 *    buckets are locked. Buckets read full without their locks are passed over unlocked (in a
 *    place pass slots only fill).
 *  - erase: find's walk; at the hit the lane holding the key CASes it to EMPTY. (A warp per key, one
 *    operation after another, took 56 ms of erases in the dynamic workload where groups take 31:
 *    bench/results/2026-11-23-h200-dycuckoo-c-erase-groups.txt.)
 * Per-subtable key counts stay in registers and reach the counters once per warp. The bulk steps
 * run dycuckoo_bulk.h, the host backend's code: collecting flagged keys into the flagged set one
 * thread per element, resizing a warp per bucket. */
#include <cuda_runtime.h>

#include "core/kernels.cuh"

extern "C" {
#include "core/toolkit.h"
#include "dycuckoo/dycuckoo_table.h"
}

static const int kBlockThreads = 256;

static gh_dy_table *state(gh_table *t) { return (gh_dy_table *)t->impl; }

typedef gh_dy_device dy_device;

/* The value width a kernel is instantiated for: 0 (a set), 32 and 64 are integers (VB = their bits);
 * DY_RECORD stands for values of any other size (g.value_bytes at run time), copied as bytes and
 * never combined: lanes pass a record's address, not its bytes. */
#define DY_RECORD 1u

/* The arguments of one pass. */
typedef struct dy_pass {
  const void *keys;
  const void *values;
  uint64_t n;
  int policy;
  uint8_t *flags;            /* place: failed per key; erase / find: erased / found per key */
  const uint8_t *skip_flags; /* erase: keys to leave alone */
  int rerun;
  unsigned skip_table;
  int one_by_one;
  unsigned span;             /* place: the operations a warp takes a round (1..32) */
  unsigned look_tables;      /* claim: the subtables its lookup reads (bit i: subtable i) */
  void *values_out;          /* find */
  uint64_t default_value;    /* find, integer values */
  unsigned char default_record[GH_DY_MAX_VALUE_BYTES]; /* find, records */
} dy_pass;

template <unsigned KB>
static __device__ __forceinline__ uint64_t line_word(const void *line, unsigned lane) {
  return KB == 32 ? (uint64_t)__ldcg((const unsigned int *)line + lane)
                  : (uint64_t)__ldcg((const unsigned long long *)line + lane);
}

/* Whether a key line has an empty slot, read by one lane alone (8 loads of 16 bytes, all in flight). */
template <unsigned KB>
static __device__ __forceinline__ bool line_has_room(const void *line) {
  bool room = false;
#pragma unroll
  for (unsigned q = 0; q < GH_DY_LINE_BYTES / 16u; ++q) {
    const uint4 v = __ldcg((const uint4 *)line + q);
    room |= KB == 32 ? (v.x == 0xFFFFFFFFu || v.y == 0xFFFFFFFFu || v.z == 0xFFFFFFFFu || v.w == 0xFFFFFFFFu)
                     : ((v.x & v.y) == 0xFFFFFFFFu || (v.z & v.w) == 0xFFFFFFFFu);
  }
  return room;
}

template <unsigned KB>
static __device__ __forceinline__ void store_key(void *line, unsigned k, uint64_t key) {
  if (KB == 32) __stcg((unsigned int *)line + k, (unsigned int)key);
  else __stcg((unsigned long long *)line + k, (unsigned long long)key);
}

template <unsigned VB>
static __device__ __forceinline__ uint64_t load_value(const void *v) {
  return VB == 32 ? (uint64_t)__ldcg((const unsigned int *)v) : (VB == 64 ? (uint64_t)__ldcg((const unsigned long long *)v) : 0u);
}

template <unsigned VB>
static __device__ __forceinline__ void store_value(void *v, uint64_t value) {
  if (VB == 32) __stcg((unsigned int *)v, (unsigned int)value);
  else if (VB == 64) __stcg((unsigned long long *)v, (unsigned long long)value);
}

/* An operation's value: an integer in a register, or for a record the address of its bytes. */
typedef struct dy_value {
  uint64_t word;
  const void *record;
} dy_value;

/* The value of input position i of a pass (nothing for a set). */
template <unsigned VB>
static __device__ __forceinline__ dy_value input_value(const gh_dy_geometry *g, const void *values, uint64_t i) {
  dy_value v = {0u, NULL};
  if (values == NULL) return v;
  if (VB == DY_RECORD) v.record = (const char *)values + i * g->value_bytes;
  else if (VB) v.word = gh__read_word(values, i, VB);
  return v;
}

/* A value from lane src of the warp (for a record, its address). */
template <unsigned VB>
static __device__ __forceinline__ dy_value shuffle_value(dy_value v, unsigned src) {
  if (VB == DY_RECORD) v.record = (const void *)__shfl_sync(0xFFFFFFFFu, (unsigned long long)v.record, src);
  else if (VB) v.word = __shfl_sync(0xFFFFFFFFu, v.word, src);
  return v;
}

/* Stores an operation's value into a slot's value. */
template <unsigned VB>
static __device__ __forceinline__ void put_value(const gh_dy_geometry *g, void *to, dy_value v) {
  if (VB == DY_RECORD) {
    if (v.record) gh_dy_value_copy(g, to, v.record);
  } else {
    store_value<VB>(to, v.word);
  }
}

/* Copies one slot's value to another slot (a move). */
template <unsigned VB>
static __device__ __forceinline__ void move_value(const gh_dy_geometry *g, void *to, const void *from) {
  if (VB == DY_RECORD) gh_dy_value_copy(g, to, from);
  else store_value<VB>(to, load_value<VB>(from));
}

/* Merges an operation's value into a stored one by the policy (the caller holds the bucket). */
template <unsigned VB>
static __device__ __forceinline__ void merge_value(const gh_dy_geometry *g, int policy, void *stored, dy_value v) {
  if (VB == DY_RECORD) {
    if (v.record) gh_dy_value_merge(g, policy, stored, v.record);
  } else if (VB) {
    store_value<VB>(stored, gh_policy_combine(policy, VB, load_value<VB>(stored), v.word));
  }
}

/* L2 eviction priorities (createpolicy): the claim pass marks what it writes in key lines and values
 * evict-first and the lock words evict-last, so that the lock words (4 bytes a bucket) tend to stay
 * in L2 while the lines stream through it. Measured on an H200 at n = 2^27: insert 3.32 -> 3.94 G
 * keys/s at d = 4, 3.14 -> 3.66 at d = 2 (bench/results/2026-11-23-h200-dycuckoo-l2-hints.txt). */
static __device__ __forceinline__ uint64_t policy_evict_first(void) {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
static __device__ __forceinline__ uint64_t policy_evict_last(void) {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

/* A word of BITS (32 or 64; 0 stores nothing) stored under an L2 policy. */
template <unsigned BITS>
static __device__ __forceinline__ void store_hinted(void *at, uint64_t word, uint64_t policy) {
  static_assert(BITS == 0 || BITS == 32 || BITS == 64, "store_hinted stores words");
  if (BITS == 32)
    asm volatile("st.global.cg.L2::cache_hint.u32 [%0], %1, %2;" ::"l"(at), "r"((unsigned)word), "l"(policy) : "memory");
  else if (BITS == 64)
    asm volatile("st.global.cg.L2::cache_hint.u64 [%0], %1, %2;" ::"l"(at), "l"((unsigned long long)word), "l"(policy)
                 : "memory");
}

/* The geometry with the widths as compile-time constants. */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ gh_dy_geometry constant_geometry(gh_dy_geometry g) {
  g.key_bits = KB;
  if (VB != DY_RECORD) g.value_bytes = VB / 8u;
  g.slots = GH_DY_LINE_BYTES / (KB / 8u);
  return g;
}

/* Lane 0 tries the lock (or, with wait, waits for it); every lane learns whether it was taken.
 * A warp waits only for a lock of a later subtable than any it holds, so waiting never closes a
 * cycle. */
static __device__ __forceinline__ bool warp_try_lock(uint32_t *lock, bool wait) {
  unsigned taken = 0;
  if ((threadIdx.x & 31u) == 0) {
    for (unsigned pause = 32;; pause = pause < 1024u ? 2u * pause : pause) {
      taken = atomicCAS(lock, GH_DY_LOCK_FREE, GH_DY_LOCK_HELD) == GH_DY_LOCK_FREE;
      if (taken || !wait) break;
      __nanosleep(pause);
    }
  }
  taken = __shfl_sync(0xFFFFFFFFu, taken, 0);
  if (taken) __threadfence(); /* the line is read after the lock is ours */
  return taken != 0;
}

static __device__ __forceinline__ void warp_unlock(uint32_t *lock) {
  __threadfence(); /* the bucket's writes are seen before the lock is free */
  __syncwarp();
  if ((threadIdx.x & 31u) == 0) atomicExch(lock, GH_DY_LOCK_FREE);
}

/* Per-lane tallies that reach the counters once per warp, at the end of a kernel. */
typedef struct dy_tally {
  int keys[GH_DY_MAX_TABLES]; /* a lane's own count: far from overflowing */
  unsigned long long evictions, failed, erased;
  unsigned longest;
} dy_tally;

static __device__ __forceinline__ void tally_key(dy_tally *c, unsigned table, int delta) {
#pragma unroll
  for (unsigned i = 0; i < GH_DY_MAX_TABLES; ++i)
    if (i == table) c->keys[i] += delta;
}

static __device__ __forceinline__ void tally_flush(dy_tally *c, gh_dy_counters *counters) {
  long long added = 0;
#pragma unroll
  for (unsigned i = 0; i < GH_DY_MAX_TABLES; ++i) {
    gh_warp_add(&counters->keys[i], (unsigned long long)(long long)c->keys[i]);
    added += c->keys[i];
  }
  gh_warp_add(&counters->size, (unsigned long long)added);
  gh_warp_add(&counters->evictions, c->evictions);
  gh_warp_add(&counters->failed, c->failed);
  gh_warp_add(&counters->erased, c->erased);
  const unsigned longest = __reduce_max_sync(0xFFFFFFFFu, c->longest);
  if ((threadIdx.x & 31u) == 0 && longest) atomicMax(&counters->longest_search, (unsigned long long)longest);
}

enum { DY_DONE = 0, DY_NO_ROOM = 1, DY_BUSY = 2 };

/* Stores an absent key (the whole warp): a free slot in one of its buckets, the chosen subtable
 * first; else a resident of one of them moved to its bucket in a later subtable.
 * In a place pass slots only fill (nothing is erased meanwhile, and a move fills the slot it
 * empties with the key it makes room for), so a bucket read full without its lock is full: the
 * first round passes over full buckets without locking them, and while a full bucket is held for
 * a move, every lane reads its resident's bucket in the later subtable at once, unlocked, and only
 * those that showed room are locked. (Locking each in turn kept a key's steps one after another.) */
template <unsigned KB, unsigned VB>
static __device__ int warp_place_absent(const dy_device *d, const gh_dy_geometry *g, uint64_t key, dy_value value,
                                        unsigned skip, bool wait, dy_tally *c) {
  const unsigned lane = threadIdx.x & 31u;
  const uint64_t empty = gh_dy_empty_key(g);
  const unsigned first = gh_dy_target(g, key);
  const unsigned slot_lanes = g->slots == 32u ? 0xFFFFFFFFu : (1u << g->slots) - 1u;
  bool busy = false;
  unsigned locked = 0;
  for (unsigned pass = 0; pass < 2u; ++pass)
    for (unsigned step = 0; step < g->tables; ++step) {
      const unsigned i = (first + step) % g->tables;
      if (i == skip || (pass == 1u && i + 1u == g->tables)) continue;
      const uint64_t b = gh_dy_bucket(g, i, key);
      void *line = gh_dy_line(g, d->keys[i], b);
      if (pass == 0u && !__ballot_sync(0xFFFFFFFFu, lane < g->slots && line_word<KB>(line, lane) == empty)) continue;
      if (!warp_try_lock(&d->locks[i][b], wait)) {
        busy = true;
        continue;
      }
      locked += 1;
      const uint64_t word = lane < g->slots ? line_word<KB>(line, lane) : empty;
      const unsigned free_lanes = __ballot_sync(0xFFFFFFFFu, word == empty) & slot_lanes;
      /* A free slot (in pass 1 too: pass 0 may have found this bucket's lock taken). */
      if (free_lanes) {
        const unsigned k = __ffs(free_lanes) - 1u;
        if (lane == k) {
          put_value<VB>(g, gh_dy_value_at(g, d->values[i], b, k), value);
          __threadfence();
          store_key<KB>(line, k, key);
        }
        if (lane == 0) {
          tally_key(c, i, 1);
          c->longest = max(c->longest, locked);
        }
        warp_unlock(&d->locks[i][b]);
        return DY_DONE;
      }
      if (pass == 0u) {
        warp_unlock(&d->locks[i][b]);
        continue;
      }
      /* Pass 1: the bucket is full; move one of its residents forward. */
      for (unsigned j = i + 1u; j < g->tables; ++j) {
        if (j == skip) continue;
        const uint64_t my_target = lane < g->slots ? gh_dy_bucket(g, j, word) : 0u;
        const bool target_room = lane < g->slots && line_has_room<KB>(gh_dy_line(g, d->keys[j], my_target));
        for (unsigned movable = __ballot_sync(0xFFFFFFFFu, target_room); movable; movable &= movable - 1u) {
          const unsigned r = __ffs(movable) - 1u;
          const uint64_t y = __shfl_sync(0xFFFFFFFFu, my_target, r);
          if (!warp_try_lock(&d->locks[j][y], wait)) {
            busy = true;
            continue;
          }
          locked += 1;
          void *to = gh_dy_line(g, d->keys[j], y);
          const uint64_t there = lane < g->slots ? line_word<KB>(to, lane) : 0u;
          const unsigned room = __ballot_sync(0xFFFFFFFFu, there == empty) & slot_lanes;
          if (room) {
            const unsigned u = __ffs(room) - 1u;
            const uint64_t resident = __shfl_sync(0xFFFFFFFFu, word, r);
            if (lane == u) {
              move_value<VB>(g, gh_dy_value_at(g, d->values[j], y, u), gh_dy_value_at(g, d->values[i], b, r));
              __threadfence();
              store_key<KB>(to, u, resident);
            }
            /* The copy is visible before the old slot is reused (finds never miss the key). */
            __threadfence();
            __syncwarp();
            if (lane == r) {
              put_value<VB>(g, gh_dy_value_at(g, d->values[i], b, r), value);
              __threadfence();
              store_key<KB>(line, r, key);
            }
            if (lane == 0) {
              tally_key(c, j, 1);
              c->evictions += 1;
              c->longest = max(c->longest, locked);
            }
            warp_unlock(&d->locks[j][y]);
            warp_unlock(&d->locks[i][b]);
            return DY_DONE;
          }
          warp_unlock(&d->locks[j][y]);
        }
      }
      warp_unlock(&d->locks[i][b]);
    }
  if (lane == 0) c->longest = max(c->longest, locked);
  return busy ? DY_BUSY : DY_NO_ROOM;
}

/* Merges value into key's stored copy (the whole warp, in a one-by-one pass: nothing else runs);
 * true when the key was there. */
template <unsigned KB, unsigned VB>
static __device__ bool warp_merge_stored(const dy_device *d, const gh_dy_geometry *g, const dy_pass *p, uint64_t key,
                                         dy_value value) {
  const unsigned lane = threadIdx.x & 31u;
  for (unsigned i = 0; i < g->tables; ++i) {
    if (i == p->skip_table) continue;
    const uint64_t b = gh_dy_bucket(g, i, key);
    const uint64_t word = lane < g->slots ? line_word<KB>(gh_dy_line(g, d->keys[i], b), lane) : ~key;
    const unsigned hit = __ballot_sync(0xFFFFFFFFu, word == key);
    if (!hit) continue;
    if (VB && lane == __ffs(hit) - 1u) merge_value<VB>(g, p->policy, gh_dy_value_at(g, d->values[i], b, lane), value);
    return true;
  }
  return false;
}

/* The warp-cooperative loop of a place pass: lanes below pass.span hold operations i = base + lane;
 * the warp takes the pending ones in turn (a ballot), and those that lost a lock go round again. Revoting alone
 * does not guarantee progress (warps crowding a few buckets can keep taking each other's locks),
 * so after DY_REVOTES rounds the warp waits for the locks of what is left, in subtable order. */
#define DY_REVOTES 4u
template <unsigned KB, unsigned VB>
__global__ void dy_place_kernel(dy_device device, dy_pass pass) {
  const gh_dy_geometry g = constant_geometry<KB, VB>(device.g);
  const unsigned lane = threadIdx.x & 31u;
  const uint64_t warps = gh_grid_threads() / 32u;
  dy_tally c;
  memset(&c, 0, sizeof c);
  for (uint64_t base = gh_thread_index() / 32u * pass.span; base < pass.n; base += warps * pass.span) {
    const uint64_t i = base + lane;
    const bool taken = lane < pass.span && i < pass.n && (!pass.rerun || pass.flags[i]);
    const uint64_t my_key = taken ? gh__read_word(pass.keys, i, KB) : 0u;
    const bool mine = taken && my_key != gh_dy_empty_key(&g); /* (a flagged set's free entries) */
    const dy_value my_value = input_value<VB>(&g, mine ? pass.values : NULL, i);
    unsigned pending = __ballot_sync(0xFFFFFFFFu, mine);
    for (unsigned round = 0; pending; ++round) {
      unsigned again = 0;
      for (unsigned todo = pending; todo; todo &= todo - 1u) {
        const unsigned src = __ffs(todo) - 1u;
        const uint64_t key = __shfl_sync(0xFFFFFFFFu, my_key, src);
        const dy_value value = shuffle_value<VB>(my_value, src);
        const int outcome = pass.one_by_one && warp_merge_stored<KB, VB>(&device, &g, &pass, key, value)
                                ? DY_DONE
                                : warp_place_absent<KB, VB>(&device, &g, key, value, pass.skip_table, round >= DY_REVOTES, &c);
        if (outcome == DY_BUSY) {
          again |= 1u << src;
        } else if (lane == src) {
          pass.flags[i] = outcome == DY_NO_ROOM;
          c.failed += outcome == DY_NO_ROOM;
        }
      }
      pending = again;
    }
  }
  tally_flush(&c, device.counters);
}

/* ---- Key lines in groups of DY_GROUP_LANES lanes (find, claim) ------------------------------------ */

#define DY_GROUP_LANES 4u
/* The 16-byte vectors of a line each lane reads. */
#define DY_LANE_VECTORS (GH_DY_LINE_BYTES / 16u / DY_GROUP_LANES)

/* This lane's part of a key line (lane k of its group: the line's k-th 128 / DY_GROUP_LANES bytes). */
typedef struct dy_chunk {
  uint4 v[DY_LANE_VECTORS];
} dy_chunk;

/* Brings this lane's part of a line to L2. */
static __device__ __forceinline__ void prefetch_chunk(const void *line, unsigned group_lane) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"((const char *)line + group_lane * 16u * DY_LANE_VECTORS));
}

static __device__ __forceinline__ dy_chunk load_chunk(const void *line, unsigned group_lane) {
  dy_chunk c;
#pragma unroll
  for (unsigned j = 0; j < DY_LANE_VECTORS; ++j) c.v[j] = __ldcg((const uint4 *)line + group_lane * DY_LANE_VECTORS + j);
  return c;
}

/* load_chunk under an L2 policy. */
static __device__ __forceinline__ dy_chunk load_chunk_hinted(const void *line, unsigned group_lane, uint64_t policy) {
  dy_chunk c;
#pragma unroll
  for (unsigned j = 0; j < DY_LANE_VECTORS; ++j)
    asm volatile("ld.global.cg.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(c.v[j].x), "=r"(c.v[j].y), "=r"(c.v[j].z), "=r"(c.v[j].w)
                 : "l"((const uint4 *)line + group_lane * DY_LANE_VECTORS + j), "l"(policy));
  return c;
}

/* Which of a vector's keys (bit j: the j-th) equal key. */
template <unsigned KB>
static __device__ __forceinline__ unsigned vector_matches(uint4 v, uint64_t key) {
  if (KB == 32) {
    const unsigned k = (unsigned)key;
    return (unsigned)(v.x == k) | (unsigned)(v.y == k) << 1 | (unsigned)(v.z == k) << 2 | (unsigned)(v.w == k) << 3;
  }
  const unsigned long long low = (unsigned long long)v.y << 32 | v.x;
  const unsigned long long high = (unsigned long long)v.w << 32 | v.z;
  return (unsigned)(low == key) | (unsigned)(high == key) << 1;
}

/* Which of the chunk's keys (bit j: the j-th) equal key. */
template <unsigned KB>
static __device__ __forceinline__ unsigned chunk_matches(const dy_chunk &c, uint64_t key) {
  unsigned bits = 0;
#pragma unroll
  for (unsigned j = 0; j < DY_LANE_VECTORS; ++j) bits |= vector_matches<KB>(c.v[j], key) << (j * (128u / KB));
  return bits;
}

/* A record copied by the 4 lanes of a group together (every lane calls, with the same addresses):
 * 8-byte words where both ends and the size allow, lane k taking words k, k + 4, ...; else lane 0
 * alone, byte by byte. (Measured on an H200 at n = 2^27: one lane copying a 128-byte record found
 * 3.0 G keys/s.) */
static __device__ __forceinline__ void group_copy_record(const gh_dy_geometry *g, void *to, const void *from,
                                                         unsigned group_lane) {
  const unsigned bytes = g->value_bytes;
  if ((((uintptr_t)to | (uintptr_t)from | bytes) & 7u) == 0) {
    for (unsigned w = group_lane; w < bytes / 8u; w += DY_GROUP_LANES)
      __stcg((unsigned long long *)to + w, __ldcg((const unsigned long long *)from + w));
  } else if (group_lane == 0) {
    gh_dy_value_copy(g, to, from);
  }
}

/* The first lane of this lane's group. */
static __device__ __forceinline__ unsigned group_first_lane(void) { return threadIdx.x & 31u & ~(DY_GROUP_LANES - 1u); }

/* The lanes of this lane's group (bit k: its lane k) for which pred holds; every lane calls it. */
static __device__ __forceinline__ unsigned group_ballot(bool pred) {
  return (__ballot_sync(0xFFFFFFFFu, pred) >> group_first_lane()) & ((1u << DY_GROUP_LANES) - 1u);
}

/* The first slot of a line where matches (this lane's chunk bits) is set, over the group: the
 * group lane holding it in *holder (DY_GROUP_LANES when none). */
template <unsigned KB>
static __device__ __forceinline__ unsigned group_first_slot(unsigned matches, unsigned *holder) {
  const unsigned lanes = group_ballot(matches != 0u);
  *holder = lanes ? __ffs(lanes) - 1u : DY_GROUP_LANES;
  const unsigned bits = __shfl_sync(0xFFFFFFFFu, matches, group_first_lane() + (lanes ? *holder : 0u));
  return *holder * (GH_DY_LINE_BYTES / DY_GROUP_LANES / (KB / 8u)) + (bits ? __ffs(bits) - 1u : 0u);
}

/* What find and claim read of the table: straight from the kernel's parameters (__grid_constant__:
 * no per-thread copy, subtables indexed at run time), the widths as constants. */
template <unsigned KB>
static __device__ __forceinline__ uint64_t bucket_in(const dy_device &d, unsigned table, uint64_t key) {
  return gh_dy_bucket_with(KB, d.g.seed[table], d.g.buckets[table], key);
}

template <unsigned KB, unsigned VB>
static __device__ __forceinline__ void *value_in(const dy_device &d, unsigned table, uint64_t b, unsigned k) {
  return gh_dy_value_with(GH_DY_LINE_BYTES / (KB / 8u), VB == DY_RECORD ? d.g.value_bytes : VB / 8u, d.values[table], b, k);
}

static __device__ __forceinline__ void *line_in(const dy_device &d, unsigned table, uint64_t b) {
  return (char *)d.keys[table] + b * GH_DY_LINE_BYTES;
}

/* Find and erase (batches of one kind: no key moves meanwhile): each group walks its keys' buckets
 * in insert order, a line per step, up to the hit. Find reads the value there; erase (ERASE, VB 0)
 * has the lane holding the key CAS it to EMPTY (of copies of one key in the batch, one wins) and
 * leaves out pass.skip_table and the positions pass.skip_flags marks. */
template <unsigned KB, unsigned VB, bool ERASE>
__global__ void dy_lookup_kernel(const __grid_constant__ dy_device device, dy_pass pass) {
  const gh_dy_geometry *g = &device.g;
  const uint64_t empty = KB == 32 ? 0xFFFFFFFFull : ~0ull;
  const unsigned lane = threadIdx.x & 31u, group_lane = lane & (DY_GROUP_LANES - 1u), group_first = group_first_lane();
  const uint64_t warps = gh_grid_threads() / 32u;
  dy_tally c;
  memset(&c, 0, sizeof c);
  for (uint64_t base = gh_thread_index() / 32u * 32u; base < pass.n; base += warps * 32u) {
    const uint64_t i = base + lane;
    const uint64_t my_key = i < pass.n ? gh__read_word(pass.keys, i, KB) : 0u;
    uint64_t my_value = pass.default_value;
    const void *my_record = NULL; /* a record found beside the subtables (the all-ones key's) */
    bool my_found = false;
    bool pending = i < pass.n && !(ERASE && pass.skip_flags && pass.skip_flags[i]);
    if (pending && my_key == empty) {
      if (ERASE) {
        my_found = gh_dy_side_erase(device.side);
        if (my_found) gh_dy_count_side(device.counters, ~0ull); /* minus one */
        c.erased += my_found;
      } else {
        my_found = gh_dy_side_present(device.side);
        if (my_found && VB == DY_RECORD) my_record = gh_dy_side_value(device.side);
        else if (my_found && VB) my_value = gh__read_word(gh_dy_side_value(device.side), 0, VB);
      }
      pending = false;
    }
    unsigned my_step = 0;
    while (__any_sync(0xFFFFFFFFu, pending)) {
      const unsigned candidates = group_ballot(pending);
      const bool active = candidates != 0u;
      const unsigned leader = group_first + (active ? __ffs(candidates) - 1u : 0u);
      const uint64_t key = __shfl_sync(0xFFFFFFFFu, my_key, leader);
      const unsigned step = __shfl_sync(0xFFFFFFFFu, my_step, leader);
      /* (the first subtable recomputed per step: computing it once per lane and passing it round
       * measured 3% slower, 15.0 against 15.4 G/s on H200s of the same ceilings) */
      const unsigned table = (gh_dy_target(g, key) + step) % g->tables;
      const uint64_t b = bucket_in<KB>(device, table, key);
      const bool look = active && !(ERASE && table == pass.skip_table);
      const unsigned matches = look ? chunk_matches<KB>(load_chunk(line_in(device, table, b), group_lane), key) : 0u;
      unsigned holder;
      const unsigned slot = group_first_slot<KB>(matches, &holder);
      uint64_t value = 0;
      bool won = false;
      if (ERASE) {
        if (holder == group_lane) {
          void *at = (char *)line_in(device, table, b) + slot * (KB / 8u);
          won = KB == 32 ? atomicCAS((unsigned int *)at, (unsigned int)key, 0xFFFFFFFFu) == (unsigned int)key
                         : atomicCAS((unsigned long long *)at, (unsigned long long)key, ~0ull) == key;
        }
        won = __shfl_sync(0xFFFFFFFFu, won, group_first + (holder < DY_GROUP_LANES ? holder : 0u));
      } else if (VB == DY_RECORD) {
        /* The group copies the record straight to the leader's output. */
        if (holder < DY_GROUP_LANES && pass.values_out)
          group_copy_record(g, (char *)pass.values_out + (base + leader) * g->value_bytes,
                            value_in<KB, VB>(device, table, b, slot), group_lane);
      } else if (VB) {
        if (holder == group_lane) value = load_value<VB>(value_in<KB, VB>(device, table, b, slot));
        value = __shfl_sync(0xFFFFFFFFu, value, group_first + (holder < DY_GROUP_LANES ? holder : 0u));
      }
      if (active && lane == leader) {
        const bool hit = holder < DY_GROUP_LANES;
        if (hit && ERASE) {
          my_found = won; /* a lost CAS: another copy of the key erased it */
          if (won) tally_key(&c, table, -1);
          c.erased += won;
        } else if (hit) {
          my_found = true;
          if (VB) my_value = value;
        }
        my_step = step + 1u;
        pending = !hit && my_step < g->tables;
      }
    }
    if (ERASE) {
      if (i < pass.n && !(pass.skip_flags && pass.skip_flags[i]) && pass.flags) pass.flags[i] = my_found;
    } else if (i < pass.n) {
      if (VB == DY_RECORD && pass.values_out && (!my_found || my_record))
        gh_dy_value_copy(g, (char *)pass.values_out + i * g->value_bytes, my_found ? my_record : pass.default_record);
      else if (VB && VB != DY_RECORD && pass.values_out)
        gh__write_word(pass.values_out, i, VB, my_value);
      if (pass.flags) pass.flags[i] = my_found;
    }
  }
  if (ERASE) tally_flush(&c, device.counters);
}

/* Acquire and release at GPU scope, lighter than __threadfence (a sequentially consistent fence). */
static __device__ __forceinline__ unsigned cas_acquire(uint32_t *word, unsigned expected, unsigned desired) {
  unsigned old;
  asm volatile("atom.acquire.gpu.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(word), "r"(expected), "r"(desired) : "memory");
  return old;
}
static __device__ __forceinline__ void fence_release(void) { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
/* A lock word freed by a plain store other threads see (after fence_release: a release; no atomic
 * unit involved), under an L2 policy (evict-last). */
static __device__ __forceinline__ void unlock_store(uint32_t *word, uint64_t policy) {
  asm volatile("st.relaxed.gpu.global.L2::cache_hint.u32 [%0], %1, %2;" ::"l"(word), "r"(GH_DY_LOCK_FREE), "l"(policy)
               : "memory");
}

/* Lock words stay in L2 (evict-last); the CAS cannot carry the hint, so a prefetch gives it. */
static __device__ __forceinline__ void hint_lock(uint32_t *lock) {
  asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(lock));
}

/* One lane waits for a lock word; what it reads afterwards is read after the lock is its. */
static __device__ __forceinline__ void lane_wait_lock(uint32_t *lock) {
  hint_lock(lock);
  for (unsigned pause = 32; cas_acquire(lock, GH_DY_LOCK_FREE, GH_DY_LOCK_HELD) != GH_DY_LOCK_FREE;
       pause = pause < 1024u ? 2u * pause : pause)
    __nanosleep(pause);
}

/* The subtables whose lines a claim pass's lookup reads at once (the rest, one at a time). Two: with
 * four the kernel spilled registers under its cap (ncu: 14.6 sectors written to L2 per key, L2 80 %
 * busy), and two took the insert from 4.0 to 4.8 G keys/s at n = 2^27, d = 4 in one A/B run on an
 * H200 (bench/results/2026-11-23-h200-dycuckoo-claim-batched.txt). */
#define DY_LOOK_LINES 2u

/* Where an operation of a claim pass stands: DY_LOOK (not yet searched for), a step of its walk
 * (0..d-1: its bucket in subtable (target + step) % d) or DY_STORED + the subtable it was found
 * in. */
#define DY_LOOK 64u
#define DY_STORED 32u

/* The subtable in which a key stored before the pass lies (of those in look_tables; g->tables when
 * none): the group looks its lines up together, DY_LOOK_LINES at once. Every lane calls it; active
 * says whether the group has a key to look up. */
template <unsigned KB>
static __device__ unsigned group_stored_table(const dy_device &device, unsigned look_tables, uint64_t key, bool active,
                                              unsigned group_lane) {
  const gh_dy_geometry *g = &device.g;
  dy_chunk chunks[DY_LOOK_LINES];
#pragma unroll
  for (unsigned t = 0; t < DY_LOOK_LINES; ++t)
    if (active && (look_tables >> t & 1u)) chunks[t] = load_chunk(line_in(device, t, bucket_in<KB>(device, t, key)), group_lane);
  unsigned found = g->tables;
#pragma unroll
  for (unsigned t = 0; t < DY_LOOK_LINES; ++t) {
    const bool hit = group_ballot(active && (look_tables >> t & 1u) && chunk_matches<KB>(chunks[t], key) != 0u) != 0u;
    if (hit && found == g->tables) found = t;
  }
#pragma unroll 1
  for (unsigned t = DY_LOOK_LINES; t < g->tables; ++t) {
    const bool hit = active && (look_tables >> t & 1u) &&
                     chunk_matches<KB>(load_chunk(line_in(device, t, bucket_in<KB>(device, t, key)), group_lane), key) != 0u;
    if (group_ballot(hit) != 0u && found == g->tables) found = t;
  }
  return found;
}

/* One locked bucket a group updates in a claim pass: the operation of lane `owner` of the warp. */
typedef struct dy_locked {
  bool active;
  unsigned owner;
  unsigned table;
  uint64_t bucket;
} dy_locked;

/* The next of a group's locked buckets (its lanes in `todo`, which loses it); every lane calls it. */
static __device__ __forceinline__ dy_locked next_locked(unsigned *todo, unsigned my_table, uint64_t my_bucket) {
  dy_locked l;
  l.active = *todo != 0u;
  l.owner = group_first_lane() + (l.active ? __ffs(*todo) - 1u : 0u);
  *todo &= *todo - 1u;
  l.table = __shfl_sync(0xFFFFFFFFu, my_table, l.owner);
  l.bucket = __shfl_sync(0xFFFFFFFFu, my_bucket, l.owner);
  return l;
}

/* What a claim pass's update of a locked bucket found for the owner's operation. */
enum {
  DY_CLAIM_NONE = 0,   /* not updated this round */
  DY_CLAIM_MERGED = 1, /* the key was there: its value merged */
  DY_CLAIM_STORED = 2, /* stored in a free slot */
  DY_CLAIM_NEXT = 3,   /* the bucket is full: the walk's next step */
  DY_CLAIM_LOOK = 4    /* not where the lookup found it: look again */
};

/* The claim pass (gh_dy_backend.claim): voter coordination, with a group's operations locked
 * together. In a round every pending lane tries the lock of its operation's current bucket (one
 * CAS each, all in flight at once) and brings the bucket's line to L2; meanwhile the group looks up
 * the keys not yet looked up; then the group updates the buckets its lanes locked one after another
 * (a ballot names the next; the 4 lanes read its line together, the next line already loading),
 * and after one fence every lane frees its lock. A lost lock is tried again next round (the
 * operation keeps its place in its walk); after DY_REVOTES losses the operation waits for it, one
 * lane of a warp at most and before the others try theirs, so a warp never waits while it holds a
 * lock. (A round per operation of a group, a lock, a line and a fence each, inserted 4.85 G keys/s
 * where this does 5.06, at n = 2^27, d = 4, in the A/B run of DY_LOOK_LINES.) Registers capped for
 * three blocks an SM (a few words spilled; capped for two, 5.19 G keys/s on the static build but
 * no better on the dynamic workload). */
template <unsigned KB, unsigned VB>
__global__ void __launch_bounds__(kBlockThreads, 3) dy_claim_kernel(const __grid_constant__ dy_device device, dy_pass pass) {
  const gh_dy_geometry *g = &device.g;
  const unsigned lane = threadIdx.x & 31u, group_lane = lane & (DY_GROUP_LANES - 1u);
  const uint64_t empty = KB == 32 ? 0xFFFFFFFFull : ~0ull;
  const uint64_t warps = gh_grid_threads() / 32u;
  const uint64_t streaming = policy_evict_first(), kept = policy_evict_last();
  dy_tally c;
  memset(&c, 0, sizeof c);
  for (uint64_t base = gh_thread_index() / 32u * 32u; base < pass.n; base += warps * 32u) {
    const uint64_t i = base + lane;
    bool pending = i < pass.n;
    const uint64_t my_key = pending ? gh__read_word(pass.keys, i, KB) : 0u;
    const dy_value my_value = input_value<VB>(g, pending ? pass.values : NULL, i);
    if (pending && my_key == empty) {
      const void *side_value = pass.values ? (const char *)pass.values + i * g->value_bytes : NULL;
      if (gh_dy_side_insert(g, device.side, side_value, pass.policy)) gh_dy_count_side(device.counters, 1u);
      pending = false;
    }
    const unsigned my_first = pending ? gh_dy_target(g, my_key) : 0u;
    unsigned my_step = DY_LOOK, my_losses = 0;
    while (__any_sync(0xFFFFFFFFu, pending)) {
      /* This lane's bucket this round: its walk's current step, or for an operation not yet looked
       * up, its first step (most keys of a batch are new: they keep it). */
      const bool looking = pending && my_step == DY_LOOK;
      const unsigned locked_step = looking ? 0u : my_step;
      const unsigned my_table =
          !pending ? 0u : locked_step >= DY_STORED ? locked_step - DY_STORED : (my_first + locked_step) % g->tables;
      const uint64_t my_bucket = pending ? bucket_in<KB>(device, my_table, my_key) : 0u;
      uint32_t *lock = &device.locks[my_table][my_bucket];
      if (pending) {
#pragma unroll
        for (unsigned part = 0; part < DY_GROUP_LANES; ++part) prefetch_chunk(line_in(device, my_table, my_bucket), part);
      }
      const unsigned waiters = __ballot_sync(0xFFFFFFFFu, pending && my_losses >= DY_REVOTES);
      const unsigned waiter = waiters ? __ffs(waiters) - 1u : 32u;
      if (lane == waiter) lane_wait_lock(lock);
      __syncwarp();
      /* The others' CAS results are needed only after the lookup. */
      if (pending && lane != waiter) hint_lock(lock);
      const unsigned tried = pending && lane != waiter ? cas_acquire(lock, GH_DY_LOCK_FREE, GH_DY_LOCK_HELD) : GH_DY_LOCK_HELD;
      /* The lookup: a copy stored before the pass, in a subtable that held keys then. */
      if (pass.look_tables) {
        for (unsigned lookers = group_ballot(looking); __any_sync(0xFFFFFFFFu, lookers != 0u); lookers &= lookers - 1u) {
          const bool active = lookers != 0u;
          const unsigned owner = group_first_lane() + (active ? __ffs(lookers) - 1u : 0u);
          const uint64_t key = __shfl_sync(0xFFFFFFFFu, my_key, owner);
          const unsigned found = group_stored_table<KB>(device, pass.look_tables, key, active, group_lane);
          if (active && lane == owner) my_step = found == g->tables ? 0u : DY_STORED + found;
        }
      } else if (looking) {
        my_step = 0u;
      }
      const bool taken = lane == waiter || tried == GH_DY_LOCK_FREE;
      /* Found in another bucket than the one locked: that one is next round's. */
      const bool usable = taken && (my_step == locked_step || my_step == DY_STORED + my_table);
      unsigned outcome = DY_CLAIM_NONE;
      unsigned todo = group_ballot(usable);
      dy_locked now = next_locked(&todo, my_table, my_bucket);
      dy_chunk now_chunk;
      if (now.active) now_chunk = load_chunk_hinted(line_in(device, now.table, now.bucket), group_lane, streaming);
      while (__any_sync(0xFFFFFFFFu, now.active)) {
        const dy_locked next = next_locked(&todo, my_table, my_bucket);
        dy_chunk next_chunk;
        if (next.active) next_chunk = load_chunk_hinted(line_in(device, next.table, next.bucket), group_lane, streaming);
        const uint64_t key = __shfl_sync(0xFFFFFFFFu, my_key, now.owner);
        const dy_value value = shuffle_value<VB>(my_value, now.owner);
        const unsigned step = __shfl_sync(0xFFFFFFFFu, my_step, now.owner);
        unsigned holder, free_holder;
        const unsigned slot = group_first_slot<KB>(now.active ? chunk_matches<KB>(now_chunk, key) : 0u, &holder);
        const unsigned free_slot = group_first_slot<KB>(now.active ? chunk_matches<KB>(now_chunk, empty) : 0u, &free_holder);
        unsigned result = DY_CLAIM_NEXT;
        if (now.active && holder < DY_GROUP_LANES) {
          result = DY_CLAIM_MERGED;
          if (VB == DY_RECORD) {
            if (pass.policy == GH_OVERWRITE && value.record)
              group_copy_record(g, value_in<KB, VB>(device, now.table, now.bucket, slot), value.record, group_lane);
          } else if (VB && group_lane == holder) {
            merge_value<VB>(g, pass.policy, value_in<KB, VB>(device, now.table, now.bucket, slot), value);
          }
        } else if (now.active && step >= DY_STORED) {
          result = DY_CLAIM_LOOK; /* cannot happen in a claim pass (nothing moves); look again */
        } else if (now.active && free_holder < DY_GROUP_LANES) {
          result = DY_CLAIM_STORED;
          if (VB == DY_RECORD && value.record)
            group_copy_record(g, value_in<KB, VB>(device, now.table, now.bucket, free_slot), value.record, group_lane);
          if (group_lane == free_holder) {
            if (VB != DY_RECORD)
              store_hinted<VB == DY_RECORD ? 0u : VB>(value_in<KB, VB>(device, now.table, now.bucket, free_slot), value.word,
                                                      streaming);
            store_hinted<KB>((char *)line_in(device, now.table, now.bucket) + free_slot * (KB / 8u), key, streaming);
          }
        }
        if (now.active && lane == now.owner) outcome = result;
        now = next;
        now_chunk = next_chunk;
      }
      if (__any_sync(0xFFFFFFFFu, taken)) {
        fence_release(); /* the buckets' writes are seen before their locks are free */
        __syncwarp();
        if (taken) unlock_store(lock, kept);
      }
      if (pending) {
        my_losses += !taken;
        if (outcome == DY_CLAIM_LOOK) {
          my_step = DY_LOOK;
        } else if (outcome != DY_CLAIM_NONE) {
          const bool done = outcome != DY_CLAIM_NEXT;
          if (outcome == DY_CLAIM_STORED) tally_key(&c, my_table, 1);
          if (!done) my_step += 1u;
          const bool no_room = !done && my_step == g->tables;
          if (done || no_room) {
            pending = false;
            c.longest = max(c.longest, my_step >= DY_STORED ? 1u : my_step + (done ? 1u : 0u));
          }
          if (no_room) {
            pass.flags[i] = 1;
            c.failed += 1;
          }
        }
      }
    }
  }
  tally_flush(&c, device.counters);
}

/* Export of one subtable: a thread per slot, output positions reserved once per warp. */
template <unsigned KB, unsigned VB>
__global__ void dy_export_kernel(dy_device device, unsigned table, void *keys_out, void *values_out) {
  const gh_dy_geometry g = constant_geometry<KB, VB>(device.g);
  const uint64_t slots = g.buckets[table] * g.slots;
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(slots); i += gh_grid_threads()) {
    const uint64_t b = i / g.slots;
    const unsigned k = (unsigned)(i % g.slots);
    const uint64_t key = i < slots ? gh_dy_line_key(&g, gh_dy_line(&g, device.keys[table], b), k) : gh_dy_empty_key(&g);
    const bool keep = key != gh_dy_empty_key(&g);
    const uint64_t at = gh_warp_reserve(&device.counters->cursor, keep);
    if (!keep) continue;
    gh__write_word(keys_out, at, KB, key);
    if (VB && values_out) gh_dy_value_copy(&g, (char *)values_out + at * g.value_bytes, gh_dy_value_at(&g, device.values[table], b, k));
  }
}

__global__ void dy_bulk_kernel(gh_dy_bulk a, uint64_t n) {
  for (uint64_t i = gh_thread_index(); i < n; i += gh_grid_threads()) gh_dy_bulk_one(&a, i);
}

/* Doubling and halving (GH_DY_UPSIZE, GH_DY_MERGE_COUNT, GH_DY_MERGE): a warp per bucket and a lane
 * per slot, so a key line is read and written in one go; a lane's place among the live keys comes
 * from ballots, giving the host loop's order. (A thread per bucket, each walking its line alone,
 * doubled a subtable of 30 M keys in 4.4 ms on an H200:
 * bench/results/2026-11-23-h200-dycuckoo-resize-warps.txt.) */
__global__ void dy_resize_kernel(gh_dy_bulk a, uint64_t n) {
  const gh_dy_geometry *g = &a.g;
  const unsigned lane = threadIdx.x & 31u, below = (1u << lane) - 1u;
  const uint64_t empty = gh_dy_empty_key(g);
  const bool slot = lane < g->slots;
  for (uint64_t b = gh_thread_index() / 32u; b < n; b += gh_grid_threads() / 32u) {
    if (a.kind == GH_DY_UPSIZE) {
      const uint64_t key = slot ? gh_dy_line_key(g, gh_dy_line(g, (void *)a.old_keys, b), lane) : empty;
      const bool live = key != empty;
      const unsigned half = live ? gh_dy_upsize_half(&a, b, key) : 0u;
      const unsigned first = __ballot_sync(0xFFFFFFFFu, live && half == 0u);
      const unsigned second = __ballot_sync(0xFFFFFFFFu, live && half == 1u);
      if (live) gh_dy_upsize_slot(&a, b, lane, half, __popc((half ? second : first) & below));
      continue;
    }
    const uint64_t low = slot ? gh_dy_line_key(g, gh_dy_line(g, (void *)a.old_keys, 2u * b), lane) : empty;
    const uint64_t high = slot ? gh_dy_line_key(g, gh_dy_line(g, (void *)a.old_keys, 2u * b + 1u), lane) : empty;
    const unsigned lows = __ballot_sync(0xFFFFFFFFu, low != empty), highs = __ballot_sync(0xFFFFFFFFu, high != empty);
    if (a.kind == GH_DY_MERGE_COUNT) {
      if (lane == 0) a.residuals[b] = gh_dy_merge_residuals(g, __popc(lows) + __popc(highs));
      continue;
    }
    if (low != empty) gh_dy_merge_slot(&a, b, 0u, lane, __popc(lows & below));
    if (high != empty) gh_dy_merge_slot(&a, b, 1u, lane, __popc(lows) + __popc(highs & below));
  }
}

/* ---- The build by regions (dycuckoo_bulk.h) --------------------------------------------------------- */

/* The partition's input: the chunk's keys and values packed into words, each with its region's number
 * (the digit the partition sorts by, digit_bytes wide). */
__global__ void dy_region_words_kernel(gh_dy_geometry g, gh_dy_by_regions r, void *digits, unsigned digit_bytes) {
  for (uint64_t i = gh_thread_index(); i < r.n; i += gh_grid_threads()) {
    const uint64_t key = gh__read_word(r.keys, i, g.key_bits);
    ((uint64_t *)r.words)[i] = gh_region_word(g.key_bits, key, r.values ? ((const uint32_t *)r.values)[i] : 0u);
    gh_partition_digit(digits, digit_bytes, i, gh_dy_region_of(&g, &r.map, key));
  }
}

/* A block a region, in shared memory: 512 threads, three blocks an SM (64 KB each, and the warps'
 * held words). */
static const int kRegionThreads = 512;
static const int kRegionBlocksPerSM = 3;
/* Words a warp holds back before it appends them to the passed ones (about 3 % of the words at
 * theta 0.9: one append per warp and region, at its end). */
static const unsigned kRegionHeld = 64;

/* Writes a passed word into the passed keys and values (core/kernels.cuh's held buffers). */
struct dy_pass_on {
  const gh_dy_geometry *g;
  const gh_dy_by_regions *r;
  __device__ void operator()(uint64_t at, const uint64_t &word) const { gh_dy_region_pass_on(g, r, at, word); }
};

/* Block r builds region r: its words start empty (the subtables held no keys); each warp puts its
 * share of the region's run of sorted words in (a lane's next word loaded while it puts one), its
 * warps apart (no barrier until the region is done), holding back the words whose bucket was full;
 * then the block writes the region out whole, key line by key line and value by value, coalesced.
 * A region without words keeps its empty lines. */
template <unsigned KB, unsigned VB>
__global__ void __launch_bounds__(kRegionThreads, kRegionBlocksPerSM)
    dy_region_kernel(const __grid_constant__ dy_device device, const __grid_constant__ gh_dy_by_regions r,
                     const uint64_t *starts) {
  extern __shared__ unsigned long long dy_region_words[];
  __shared__ uint64_t held_words[kRegionThreads / 32][kRegionHeld];
  const uint64_t region = blockIdx.x, begin = starts[region], end = starts[region + 1u];
  if (begin == end) return;
  /* (the subtable's hash and size from the parameters: g's arrays indexed at run time would go to
   * local memory) */
  const gh_dy_geometry g = constant_geometry<KB, VB>(device.g);
  const unsigned table = gh_dy_region_table(&g, &r.map, region);
  const uint64_t seed = device.g.seed[table], buckets = device.g.buckets[table];
  const uint64_t first = gh_dy_region_bucket(&r.map, table, region);
  const uint64_t slots = gh_dy_region_buckets(&device.g, &r.map, table, region) * g.slots;
  uint64_t *words = (uint64_t *)dy_region_words;
  for (uint64_t j = threadIdx.x; j < slots; j += blockDim.x) words[j] = GH_REGION_EMPTY;
  __syncthreads();
  const uint64_t *sorted = (const uint64_t *)r.sorted;
  const unsigned lane = threadIdx.x % 32u;
  uint64_t *held = held_words[threadIdx.x / 32u];
  unsigned holding = 0;
  const dy_pass_on pass_on = {&g, &r};
  unsigned long long inserted = 0;
  const uint64_t warp_first = begin + (threadIdx.x - lane);
  uint64_t next = warp_first + lane < end ? sorted[warp_first + lane] : 0u;
  for (uint64_t step = warp_first; step < end; step += blockDim.x) {
    const uint64_t i = step + lane, word = next;
    if (i + blockDim.x < end) next = sorted[i + blockDim.x];
    gh_dy_region_outcome outcome = GH_DY_REGION_SIDE;
    if (i < end) {
      const uint64_t b = gh_dy_bucket_with(KB, seed, buckets, gh_region_word_key(KB, word)) - first;
      outcome = gh_dy_region_put(&g, words, b, device.side, device.counters, word, r.policy);
    }
    inserted += outcome == GH_DY_REGION_INSERTED;
    gh_warp_hold(held, kRegionHeld, &holding, outcome == GH_DY_REGION_FULL, word, &device.counters->cursor, pass_on);
  }
  gh_warp_append_held(held, holding, &device.counters->cursor, pass_on);
  gh_warp_add(&device.counters->keys[table], inserted);
  gh_warp_add(&device.counters->size, inserted);
  __syncthreads();
  for (uint64_t j = threadIdx.x; j < slots; j += blockDim.x)
    gh_dy_region_store(&g, device.keys[table], device.values[table], first, j, words[j]);
}

/* ---- Host side ---------------------------------------------------------------------------------- */

typedef struct dy_kernels {
  const void *claim, *place, *find, *erase, *export_keys, *region;
} dy_kernels;

/* The region kernel of a width pair, or NULL where a key and its value take more than a word. */
template <unsigned KB, unsigned VB, bool ONE_WORD = (VB == 0u || (KB == 32u && VB == 32u))>
struct dy_region_kernel_of {
  static const void *get(void) { return (const void *)dy_region_kernel<KB, VB>; }
};
template <unsigned KB, unsigned VB>
struct dy_region_kernel_of<KB, VB, false> {
  static const void *get(void) { return NULL; }
};

static dy_kernels kernels_for(const gh_dy_geometry *g) {
  dy_kernels k = {NULL, NULL, NULL, NULL, NULL, NULL};
  const unsigned vb = g->value_bytes == 0 || gh_dy_values_are_words(g) ? g->value_bytes * 8u : DY_RECORD;
#define GH_DY_KERNELS_CASE(kb, vbits)                   \
  if (g->key_bits == kb && vb == vbits) {              \
    k.claim = (const void *)dy_claim_kernel<kb, vbits>; \
    k.place = (const void *)dy_place_kernel<kb, vbits>; \
    k.find = (const void *)dy_lookup_kernel<kb, vbits, false>; \
    k.erase = (const void *)dy_lookup_kernel<kb, 0, true>; \
    k.export_keys = (const void *)dy_export_kernel<kb, vbits>; \
    k.region = dy_region_kernel_of<kb, vbits>::get(); \
  }
  GH_WIDTHS(GH_DY_KERNELS_CASE)
  GH_DY_KERNELS_CASE(32, DY_RECORD)
  GH_DY_KERNELS_CASE(64, DY_RECORD)
#undef GH_DY_KERNELS_CASE
  return k;
}

static gh_status launch_pass(gh_table *t, const void *kernel, dy_pass *pass, void *stream) {
  dy_device device = gh__dy_device(t);
  void *args[] = {&device, pass};
  /* One operation per lane, whole warps. */
  return gh__cuda_launch(t, kernel, (pass->n + 31u) / 32u * 32u, kBlockThreads, args, stream);
}

/* A place pass's operations a warp: a key goes through locks and line reads one step after another,
 * and a warp's keys one after another, so a pass of a few keys (those a claim pass flagged)
 * spreads them over every warp that fits on the GPU, down to one each, instead of queuing them 32
 * deep in a few warps (32 a warp, a pass took 0.65 ms on an H100:
 * bench/results/2026-12-07-h100-dycuckoo-c-ncu.txt). A pass with work for every warp keeps 32, a
 * lane each. */
static unsigned place_span(const void *kernel, uint64_t n) {
  const uint64_t warps = (uint64_t)gh_cuda_resident_grid(UINT64_MAX / 2u, kernel, kBlockThreads) * (kBlockThreads / 32u);
  const uint64_t span = (n + warps - 1u) / warps;
  return span < 1u ? 1u : span > 32u ? 32u : (unsigned)span;
}

/* A claim or place pass (spread: a place pass, its operations spread by place_span). */
static gh_status launch_place(gh_table *t, const void *kernel, const gh_dy_place *p, int spread, void *stream) {
  dy_pass pass;
  memset(&pass, 0, sizeof pass);
  pass.keys = p->keys;
  pass.values = p->values;
  pass.n = p->n;
  pass.policy = p->policy;
  pass.flags = p->failed;
  pass.rerun = p->rerun;
  pass.skip_table = p->skip_table;
  pass.one_by_one = p->one_by_one;
  pass.look_tables = p->look_tables;
  pass.span = spread && !p->one_by_one ? place_span(kernel, p->n) : 32u;
  dy_device device = gh__dy_device(t);
  void *args[] = {&device, &pass};
  /* One warp when one_by_one: its operations go one at a time. */
  const uint64_t warps = p->one_by_one ? 1u : (p->n + pass.span - 1u) / pass.span;
  return gh__cuda_launch(t, kernel, warps * 32u, p->one_by_one ? 32 : kBlockThreads, args, stream);
}

static gh_status cuda_claim(gh_table *t, const gh_dy_place *p, void *stream) {
  return launch_place(t, kernels_for(&state(t)->geometry).claim, p, 0, stream);
}

static gh_status cuda_place(gh_table *t, const gh_dy_place *p, void *stream) {
  return launch_place(t, kernels_for(&state(t)->geometry).place, p, 1, stream);
}

static gh_status cuda_erase_pass(gh_table *t, const void *keys, uint64_t n, const uint8_t *skip_flags,
                                 unsigned skip_table, uint8_t *erased_out, void *stream) {
  dy_pass pass;
  memset(&pass, 0, sizeof pass);
  pass.keys = keys;
  pass.n = n;
  pass.flags = erased_out;
  pass.skip_flags = skip_flags;
  pass.skip_table = skip_table;
  return launch_pass(t, kernels_for(&state(t)->geometry).erase, &pass, stream);
}

static gh_status cuda_bulk(gh_table *t, const gh_dy_bulk *a, uint64_t n, void *stream) {
  gh_dy_bulk copy = *a;
  void *args[] = {&copy, &n};
  const bool resize = a->kind == GH_DY_UPSIZE || a->kind == GH_DY_MERGE_COUNT || a->kind == GH_DY_MERGE;
  if (resize) return gh__cuda_launch(t, (const void *)dy_resize_kernel, n * 32u, kBlockThreads, args, stream);
  return gh__cuda_launch(t, (const void *)dy_bulk_kernel, n, kBlockThreads, args, stream);
}

/* The default: a chunk of at least 2^20 keys and one key per 16 slots (the build writes out every
 * region with a key in it; the claim pass costs a key a line read and write) into a table of at
 * least four regions (smaller ones sit in the cache anyway). */
static int cuda_regions_by_default(gh_table *t, uint64_t n, uint64_t regions, uint64_t slots) {
  (void)t;
  return n >= (1ull << 20) && n >= slots / 16u && regions >= 4u;
}

static size_t cuda_regions_partition_bytes(gh_table *t, uint64_t n, uint64_t regions) {
  (void)t;
  return gh__cuda_partition_bytes(n, sizeof(uint64_t), (unsigned)regions);
}

static gh_status cuda_regions_partition(gh_table *t, const gh_dy_by_regions *r, uint64_t *longest, void *stream) {
  gh_partition_work w = gh__cuda_partition_work(r->work, r->work_bytes, r->n, (unsigned)r->regions);
  gh_dy_geometry g = state(t)->geometry;
  gh_dy_by_regions copy = *r;
  void *args[] = {&g, &copy, &w.digits_in, &w.digit_bytes};
  gh_status status = gh__cuda_launch(t, (const void *)dy_region_words_kernel, r->n, kBlockThreads, args, stream);
  if (status == GH_OK)
    status = gh__cuda_partition(t, &w, r->words, r->sorted, r->n, sizeof(uint64_t), (unsigned)r->regions, longest, stream);
  return status;
}

static gh_status cuda_regions_build(gh_table *t, const gh_dy_by_regions *r, void *stream) {
  const gh_partition_work w = gh__cuda_partition_work(r->work, r->work_bytes, r->n, (unsigned)r->regions);
  dy_device device = gh__dy_device(t);
  gh_dy_by_regions copy = *r;
  const uint64_t *starts = w.starts;
  void *args[] = {&device, &copy, (void *)&starts};
  const size_t shared = ((size_t)1u << r->map.shift) * device.g.slots * sizeof(uint64_t);
  return gh__cuda_launch_regions(t, kernels_for(&device.g).region, r->regions, kRegionThreads, shared, args, stream);
}

/* (regions: a block each, up to the grid's 2^31 - 1; region numbers of 4 bytes beyond 65536) */
static const gh_dy_backend cuda_backend = {cuda_bulk,
                                           cuda_claim,
                                           cuda_place,
                                           cuda_erase_pass,
                                           cuda_regions_by_default,
                                           cuda_regions_partition_bytes,
                                           cuda_regions_partition,
                                           cuda_regions_build,
                                           0x7FFFFFFFu};

static gh_status cuda_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                           const void *default_value, void *stream) {
  dy_pass pass;
  memset(&pass, 0, sizeof pass);
  pass.keys = keys;
  pass.n = n;
  pass.flags = found_out;
  pass.values_out = values_out;
  const gh_dy_geometry *g = &state(t)->geometry;
  if (gh_dy_values_are_words(g)) pass.default_value = gh__value_word(t, default_value);
  else gh_dy_value_copy(g, pass.default_record, default_value);
  return launch_pass(t, kernels_for(&state(t)->geometry).find, &pass, stream);
}

/* The all-ones key (side slot) first, from the host; then every subtable's keys. */
static gh_status cuda_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_dy_table *s = state(t);
  const gh_dy_geometry *g = &s->geometry;
  uint64_t side[(GH_DY_SIDE_HEADER + GH_DY_MAX_VALUE_BYTES) / 8u];
  const uint64_t side_key = gh_dy_empty_key(g);
  gh_status status = gh__to_host(t, side, s->side, gh_dy_side_bytes(g), stream);
  if (status != GH_OK) return status;
  const unsigned long long first = (unsigned long long)gh_dy_side_present(side);
  if (first) {
    status = gh__copy(t, keys_out, &side_key, g->key_bits / 8u, stream);
    if (status == GH_OK && values_out) status = gh__copy(t, values_out, gh_dy_side_value(side), g->value_bytes, stream);
  }
  if (status == GH_OK) status = gh__copy(t, &s->counters->cursor, &first, sizeof first, stream);
  dy_device device = gh__dy_device(t);
  for (unsigned i = 0; status == GH_OK && i < g->tables; ++i) {
    void *args[] = {&device, &i, &keys_out, &values_out};
    status = gh__cuda_launch(t, kernels_for(g).export_keys, g->buckets[i] * g->slots, kBlockThreads, args, stream);
  }
  unsigned long long written = 0;
  if (status == GH_OK) status = gh__to_host(t, &written, &s->counters->cursor, sizeof written, stream);
  if (status == GH_OK) *count = written;
  return status;
}

static gh_status cuda_insert(gh_table *t, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                             uint8_t *failed_out, uint64_t *failed, void *stream) {
  return gh__dy_insert(t, &cuda_backend, keys, values, n, policy, failed_out, failed, stream);
}

static gh_status cuda_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out, uint64_t *erased,
                            void *stream) {
  return gh__dy_erase(t, &cuda_backend, keys, n, erased_out, erased, stream);
}

/* The view points at a copy of the table's device record in device memory, made on the first call
 * and refreshed by every call that changes the table after it (gh__dy_publish). */
static gh_status cuda_device_view(gh_table *t, gh_device_view *view) {
  gh_dy_table *s = state(t);
  const gh_status status = gh__view_record(t, (void **)&s->published, sizeof *s->published, gh__dy_publish);
  if (status != GH_OK) return status;
  view->design = GH_DYCUCKOO;
  view->key_bits = t->config.key_bits;
  view->value_bits = t->config.value_bits;
  view->slot_bytes = t->config.key_bits / 8u;
  view->slots = s->published;
  view->size = &s->counters->size;
  view->status_word = NULL;
  view->seed = t->config.seed;
  view->layout[0] = s->geometry.tables;
  return gh__sync(t, NULL);
}

extern "C" const gh_table_ops gh__dycuckoo_cuda_ops = {
    .name = "dycuckoo/cuda",
    .init = gh__dy_init,
    .release = gh__dy_release,
    .insert = cuda_insert,
    .find = cuda_find,
    .erase = cuda_erase,
    .count = NULL,
    .find_all = NULL,
    .export_all = cuda_export,
    .clear = gh__dy_clear,
    .size = gh__dy_size,
    .validate = gh__dy_validate,
    .keys_of_ids = NULL,
    .stats = gh__dy_stats,
    .device_view = cuda_device_view,
    .take_flags = NULL,
    .mixed = NULL,
    .compact = NULL,
    .join = NULL,
};
