/* dycuckoo_cuda.cu - the DyCuckoo design on the GPU.
 *
 * Warp-cooperative work sharing: each lane of a warp holds one operation; the warp takes them one
 * at a time (a ballot names the next) and works on one 128-byte key line per step, each lane
 * reading one key of it (lane k: slot k), so every line is one coalesced read.
 *  - find: the key's line in every subtable is read at once (a read-only batch), then a ballot per
 *    line; the value is read only on a hit.
 *  - insert (voter coordination, Li et al. 4.2): lane 0 tries the bucket's lock word with one CAS;
 *    a lost lock puts the operation back (the warp votes for the next one) instead of spinning.
 *    The lookup before an insert reads the subtables in order with a fence between lines: moves
 *    copy a key to a later subtable before they free its old slot, so that order never misses a
 *    key being moved.
 *  - erase: the lane holding the key CASes it to EMPTY.
 * Per-subtable key counts stay in registers and reach the counters once per warp. The bulk steps
 * (merging a batch's duplicates, resizing) are one thread per element running gpuhash/detail/
 * dycuckoo.h, the host backend's code. */
#include <cuda_runtime.h>

#include "core/kernels.cuh"

extern "C" {
#include "core/toolkit.h"
#include "dycuckoo/dycuckoo_table.h"
}

static const int kBlockThreads = 256;

static gh_dy_table *state(gh_table *t) { return (gh_dy_table *)t->impl; }

/* What a kernel needs of the table. */
typedef struct dy_device {
  gh_dy_geometry g;
  void *keys[GH_DY_MAX_TABLES];
  void *values[GH_DY_MAX_TABLES];
  uint32_t *locks[GH_DY_MAX_TABLES];
  void *side_slot;
  gh_dy_counters *counters;
} dy_device;

static dy_device device_of(gh_table *t) {
  gh_dy_table *s = state(t);
  dy_device d;
  memset(&d, 0, sizeof d);
  d.g = s->geometry;
  for (unsigned i = 0; i < s->geometry.tables; ++i) {
    d.keys[i] = s->sub[i].keys;
    d.values[i] = s->sub[i].values;
    d.locks[i] = s->sub[i].locks;
  }
  d.side_slot = s->side_slot;
  d.counters = s->counters;
  return d;
}

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
  int known_absent;
  void *values_out;          /* find */
  uint64_t default_value;
} dy_pass;

template <unsigned KB>
static __device__ __forceinline__ uint64_t line_word(const void *line, unsigned lane) {
  return KB == 32 ? (uint64_t)__ldcg((const unsigned int *)line + lane)
                  : (uint64_t)__ldcg((const unsigned long long *)line + lane);
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

/* The geometry with the widths as compile-time constants. */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ gh_dy_geometry constant_geometry(gh_dy_geometry g) {
  g.key_bits = KB;
  g.value_bytes = VB / 8u;
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
  long long keys[GH_DY_MAX_TABLES];
  unsigned long long evictions, failed, erased;
  unsigned longest;
} dy_tally;

static __device__ __forceinline__ void tally_key(dy_tally *c, unsigned table, long long delta) {
#pragma unroll
  for (unsigned i = 0; i < GH_DY_MAX_TABLES; ++i)
    if (i == table) c->keys[i] += delta;
}

static __device__ __forceinline__ void tally_flush(dy_tally *c, gh_dy_counters *counters) {
#pragma unroll
  for (unsigned i = 0; i < GH_DY_MAX_TABLES; ++i) gh_warp_add(&counters->keys[i], (unsigned long long)c->keys[i]);
  gh_warp_add(&counters->evictions, c->evictions);
  gh_warp_add(&counters->failed, c->failed);
  gh_warp_add(&counters->erased, c->erased);
  const unsigned longest = __reduce_max_sync(0xFFFFFFFFu, c->longest);
  if ((threadIdx.x & 31u) == 0 && longest) atomicMax(&counters->longest_search, (unsigned long long)longest);
}

enum { DY_DONE = 0, DY_NO_ROOM = 1, DY_BUSY = 2 };

/* Where key is (the whole warp, subtables in order with a fence between lines): the subtable, or
 * g.tables when absent; *bucket and *slot where found. */
template <unsigned KB>
static __device__ unsigned warp_locate(const dy_device *d, const gh_dy_geometry *g, uint64_t key, unsigned skip,
                                       uint64_t *bucket, unsigned *slot) {
  const unsigned lane = threadIdx.x & 31u;
  for (unsigned i = 0; i < g->tables; ++i) {
    if (i == skip) continue;
    const uint64_t b = gh_dy_bucket(g, i, key);
    const uint64_t word = lane < g->slots ? line_word<KB>(gh_dy_line(g, d->keys[i], b), lane) : ~key;
    const unsigned hit = __ballot_sync(0xFFFFFFFFu, word == key);
    if (hit) {
      *bucket = b;
      *slot = __ffs(hit) - 1u;
      return i;
    }
    __threadfence();
  }
  return g->tables;
}

/* Stores an absent key (the whole warp): a free slot in one of its buckets, the chosen subtable
 * first; else a resident of one of them moved to its bucket in a later subtable. */
template <unsigned KB, unsigned VB>
static __device__ int warp_place_absent(const dy_device *d, const gh_dy_geometry *g, uint64_t key, uint64_t value,
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
      if (!warp_try_lock(&d->locks[i][b], wait)) {
        busy = true;
        continue;
      }
      locked += 1;
      void *line = gh_dy_line(g, d->keys[i], b);
      const uint64_t word = lane < g->slots ? line_word<KB>(line, lane) : empty;
      const unsigned free_lanes = __ballot_sync(0xFFFFFFFFu, word == empty) & slot_lanes;
      /* A free slot (in pass 1 too: pass 0 may have found this bucket's lock taken). */
      if (free_lanes) {
        const unsigned k = __ffs(free_lanes) - 1u;
        if (lane == k) {
          store_value<VB>(gh_dy_value_at(g, d->values[i], b, k), value);
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
        for (unsigned r = 0; r < g->slots; ++r) {
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
              store_value<VB>(gh_dy_value_at(g, d->values[j], y, u), load_value<VB>(gh_dy_value_at(g, d->values[i], b, r)));
              __threadfence();
              store_key<KB>(to, u, resident);
            }
            /* The copy is visible before the old slot is reused (finds never miss the key). */
            __threadfence();
            __syncwarp();
            if (lane == r) {
              store_value<VB>(gh_dy_value_at(g, d->values[i], b, r), value);
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

/* One insert of a pass over distinct keys (the whole warp). */
template <unsigned KB, unsigned VB>
static __device__ int warp_insert(const dy_device *d, const gh_dy_geometry *g, const dy_pass *p, uint64_t key,
                                  uint64_t value, bool wait, dy_tally *c) {
  const unsigned lane = threadIdx.x & 31u;
  if (key == gh_dy_empty_key(g)) {
    if (lane == 0 && gh_side_insert(gh_dy_side_format(g), d->side_slot, value, p->policy))
      atomicAdd(&d->counters->side, 1ull);
    return DY_DONE;
  }
  for (;;) {
    uint64_t b = 0;
    unsigned k = 0;
    const unsigned i = p->known_absent ? g->tables : warp_locate<KB>(d, g, key, p->skip_table, &b, &k);
    if (i == g->tables) return warp_place_absent<KB, VB>(d, g, key, value, p->skip_table, wait, c);
    if (!warp_try_lock(&d->locks[i][b], wait)) return DY_BUSY;
    void *line = gh_dy_line(g, d->keys[i], b);
    const bool still = __shfl_sync(0xFFFFFFFFu, lane == k ? line_word<KB>(line, k) == key : 0, k);
    if (still && VB && lane == 0) {
      void *v = gh_dy_value_at(g, d->values[i], b, k);
      store_value<VB>(v, gh_policy_combine(p->policy, VB, load_value<VB>(v), value));
    }
    warp_unlock(&d->locks[i][b]);
    if (still) return DY_DONE;
    /* Moved meanwhile: look again. */
  }
}

/* The warp-cooperative loop: lanes hold operations i = base + lane; the warp takes the pending
 * ones in turn (a ballot), and those that lost a lock go round again. Revoting alone does not
 * guarantee progress (warps crowding a few buckets can keep taking each other's locks), so after
 * DY_REVOTES rounds the warp waits for the locks of what is left, in subtable order. */
#define DY_REVOTES 4u
template <unsigned KB, unsigned VB>
__global__ void dy_place_kernel(dy_device device, dy_pass pass) {
  const gh_dy_geometry g = constant_geometry<KB, VB>(device.g);
  const unsigned lane = threadIdx.x & 31u;
  const uint64_t warps = gh_grid_threads() / 32u;
  dy_tally c;
  memset(&c, 0, sizeof c);
  for (uint64_t base = gh_thread_index() / 32u * 32u; base < pass.n; base += warps * 32u) {
    const uint64_t i = base + lane;
    const bool mine = i < pass.n && (!pass.rerun || pass.flags[i]);
    const uint64_t my_key = mine ? gh__read_word(pass.keys, i, KB) : 0u;
    const uint64_t my_value = mine && VB && pass.values ? gh__read_word(pass.values, i, VB) : 0u;
    unsigned pending = __ballot_sync(0xFFFFFFFFu, mine);
    for (unsigned round = 0; pending; ++round) {
      unsigned again = 0;
      for (unsigned todo = pending; todo; todo &= todo - 1u) {
        const unsigned src = __ffs(todo) - 1u;
        const uint64_t key = __shfl_sync(0xFFFFFFFFu, my_key, src);
        const uint64_t value = __shfl_sync(0xFFFFFFFFu, my_value, src);
        const int outcome = warp_insert<KB, VB>(&device, &g, &pass, key, value, round >= DY_REVOTES, &c);
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

/* Find (read-only batch): the key's line in every subtable at once. */
template <unsigned KB, unsigned VB>
__global__ void dy_find_kernel(dy_device device, dy_pass pass) {
  const gh_dy_geometry g = constant_geometry<KB, VB>(device.g);
  const unsigned lane = threadIdx.x & 31u;
  const uint64_t warps = gh_grid_threads() / 32u;
  for (uint64_t base = gh_thread_index() / 32u * 32u; base < pass.n; base += warps * 32u) {
    const uint64_t i = base + lane;
    const uint64_t my_key = i < pass.n ? gh__read_word(pass.keys, i, KB) : 0u;
    uint64_t my_value = pass.default_value;
    bool my_found = false;
    for (unsigned pending = __ballot_sync(0xFFFFFFFFu, i < pass.n); pending; pending &= pending - 1u) {
      const unsigned src = __ffs(pending) - 1u;
      const uint64_t key = __shfl_sync(0xFFFFFFFFu, my_key, src);
      if (key == gh_dy_empty_key(&g)) {
        uint64_t v = pass.default_value;
        if (lane == src) {
          my_found = gh_side_find(gh_dy_side_format(&g), device.side_slot, &v);
          if (my_found) my_value = v;
        }
        continue;
      }
      uint64_t words[GH_DY_MAX_TABLES];
#pragma unroll
      for (unsigned t = 0; t < GH_DY_MAX_TABLES; ++t)
        words[t] = t < g.tables && lane < g.slots
                       ? line_word<KB>(gh_dy_line(&g, device.keys[t], gh_dy_bucket(&g, t, key)), lane)
                       : ~key;
#pragma unroll
      for (unsigned t = 0; t < GH_DY_MAX_TABLES; ++t) {
        const unsigned hit = __ballot_sync(0xFFFFFFFFu, words[t] == key);
        if (!hit) continue;
        if (lane == src) {
          my_found = true;
          if (VB) my_value = load_value<VB>(gh_dy_value_at(&g, device.values[t], gh_dy_bucket(&g, t, key), __ffs(hit) - 1u));
        }
        break;
      }
    }
    if (i < pass.n) {
      if (VB && pass.values_out) gh__write_word(pass.values_out, i, VB, my_value);
      if (pass.flags) pass.flags[i] = my_found;
    }
  }
}

template <unsigned KB, unsigned VB>
__global__ void dy_erase_kernel(dy_device device, dy_pass pass) {
  const gh_dy_geometry g = constant_geometry<KB, VB>(device.g);
  const unsigned lane = threadIdx.x & 31u;
  const uint64_t warps = gh_grid_threads() / 32u;
  dy_tally c;
  memset(&c, 0, sizeof c);
  for (uint64_t base = gh_thread_index() / 32u * 32u; base < pass.n; base += warps * 32u) {
    const uint64_t i = base + lane;
    const bool mine = i < pass.n && !(pass.skip_flags && pass.skip_flags[i]);
    const uint64_t my_key = mine ? gh__read_word(pass.keys, i, KB) : 0u;
    bool my_erased = false;
    for (unsigned pending = __ballot_sync(0xFFFFFFFFu, mine); pending; pending &= pending - 1u) {
      const unsigned src = __ffs(pending) - 1u;
      const uint64_t key = __shfl_sync(0xFFFFFFFFu, my_key, src);
      if (key == gh_dy_empty_key(&g)) {
        if (lane == src && gh_side_erase(gh_dy_side_format(&g), device.side_slot)) {
          my_erased = true;
          atomicAdd(&device.counters->side, ~0ull); /* minus one */
          c.erased += 1;
        }
        continue;
      }
      for (unsigned t = 0; t < g.tables; ++t) {
        if (t == pass.skip_table) continue;
        const uint64_t b = gh_dy_bucket(&g, t, key);
        void *line = gh_dy_line(&g, device.keys[t], b);
        const uint64_t word = lane < g.slots ? line_word<KB>(line, lane) : ~key;
        const unsigned hit = __ballot_sync(0xFFFFFFFFu, word == key);
        if (!hit) continue;
        const unsigned k = __ffs(hit) - 1u;
        bool won = false;
        if (lane == k)
          won = KB == 32 ? atomicCAS((unsigned int *)line + k, (unsigned int)key, 0xFFFFFFFFu) == (unsigned int)key
                         : atomicCAS((unsigned long long *)line + k, (unsigned long long)key, ~0ull) == key;
        won = __shfl_sync(0xFFFFFFFFu, won, k);
        if (won && lane == src) {
          my_erased = true;
          tally_key(&c, t, -1);
          c.erased += 1;
        }
        break;
      }
    }
    if (mine && pass.flags) pass.flags[i] = my_erased;
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
    if (VB && values_out) gh__write_word(values_out, at, VB, gh_dy_value_read(&g, gh_dy_value_at(&g, device.values[table], b, k)));
  }
}

__global__ void dy_bulk_kernel(gh_dy_bulk a, uint64_t n) {
  for (uint64_t i = gh_thread_index(); i < n; i += gh_grid_threads()) gh_dy_bulk_one(&a, i);
}

/* ---- Host side ---------------------------------------------------------------------------------- */

typedef struct dy_kernels {
  const void *place, *find, *erase, *export_keys;
} dy_kernels;

static dy_kernels kernels_for(const gh_dy_geometry *g) {
  dy_kernels k = {NULL, NULL, NULL, NULL};
  const unsigned vb = g->value_bytes * 8u;
#define GH_DY_KERNELS_CASE(kb, vbits)                   \
  if (g->key_bits == kb && vb == vbits) {              \
    k.place = (const void *)dy_place_kernel<kb, vbits>; \
    k.find = (const void *)dy_find_kernel<kb, vbits>;   \
    k.erase = (const void *)dy_erase_kernel<kb, vbits>; \
    k.export_keys = (const void *)dy_export_kernel<kb, vbits>; \
  }
  GH_WIDTHS(GH_DY_KERNELS_CASE)
#undef GH_DY_KERNELS_CASE
  return k;
}

static gh_status launch_pass(gh_table *t, const void *kernel, dy_pass *pass, void *stream) {
  dy_device device = device_of(t);
  void *args[] = {&device, pass};
  /* One operation per lane, whole warps. */
  return gh__cuda_launch(t, kernel, (pass->n + 31u) / 32u * 32u, kBlockThreads, args, stream);
}

static gh_status cuda_place(gh_table *t, const gh_dy_place *p, void *stream) {
  dy_pass pass;
  memset(&pass, 0, sizeof pass);
  pass.keys = p->keys;
  pass.values = p->values;
  pass.n = p->n;
  pass.policy = p->policy;
  pass.flags = p->failed;
  pass.rerun = p->rerun;
  pass.skip_table = p->skip_table;
  pass.known_absent = p->known_absent;
  return launch_pass(t, kernels_for(&state(t)->geometry).place, &pass, stream);
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
  return gh__cuda_launch(t, (const void *)dy_bulk_kernel, n, kBlockThreads, args, stream);
}

static const gh_dy_backend cuda_backend = {cuda_bulk, cuda_place, cuda_erase_pass};

static gh_status cuda_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                           uint64_t default_value, void *stream) {
  dy_pass pass;
  memset(&pass, 0, sizeof pass);
  pass.keys = keys;
  pass.n = n;
  pass.flags = found_out;
  pass.values_out = values_out;
  pass.default_value = default_value;
  return launch_pass(t, kernels_for(&state(t)->geometry).find, &pass, stream);
}

/* The all-ones key (side slot) first, from the host; then every subtable's keys. */
static gh_status cuda_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_dy_table *s = state(t);
  const gh_dy_geometry *g = &s->geometry;
  const gh_slot_format side = gh_dy_side_format(g);
  unsigned char slot[16];
  uint64_t side_value = 0, side_key = gh_dy_empty_key(g);
  gh_status status = gh__to_host(t, slot, s->side_slot, side.slot_bytes, stream);
  if (status != GH_OK) return status;
  const unsigned long long first = (unsigned long long)gh_side_find(side, slot, &side_value);
  if (first) {
    status = gh__copy(t, keys_out, &side_key, g->key_bits / 8u, stream);
    if (status == GH_OK && values_out) status = gh__copy(t, values_out, &side_value, g->value_bytes, stream);
  }
  if (status == GH_OK) status = gh__copy(t, &s->counters->cursor, &first, sizeof first, stream);
  dy_device device = device_of(t);
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
    .device_view = NULL,
    .take_flags = NULL,
    .mixed = NULL,
    .compact = NULL,
};
