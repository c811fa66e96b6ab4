/* slab_cuda.cu - the slab hash on the GPU: warp-cooperative work sharing (WCWS, Ashkiani et al.
 * section IV). Every thread of a warp holds one operation; the warp forms a work queue with
 * __ballot_sync and runs the queued operations one at a time, all 32 lanes together: one slab is
 * one coalesced 128-byte read (lane l reads its entry's key, lane 31 the next address), and the
 * decisions are ballots over the entry lanes (match, EMPTY, TOMBSTONE). One kernel serves every
 * operation (insert, erase, find, count, fill, and the two phases of a multivalue erase), so a
 * mixed batch is one kernel. SlabAlloc is warp-cooperative too: a warp keeps a resident memory
 * block whose 32 bitmap words are one per lane; a free bit is taken by ballot + atomicCAS, a full
 * block is replaced by a hashed choice, and after GH_SLAB_ALLOC_ATTEMPTS blocks every block is
 * scanned, so the host's reservation always suffices.
 *
 * The same decisions as the host backend (slab_host.c): EMPTY entries are the tail of a list,
 * map inserts of mixed batches claim only the first EMPTY entry, gh_insert also reuses tombstones
 * (first free entry after a scan to the first EMPTY one, re-decided after a lost CAS), erases swap
 * the key field for the tombstone. */
#include <cuda_runtime.h>

#include "core/kernels.cuh"

extern "C" {
#include "core/toolkit.h"
#include "slab/slab_table.h"
}

/* Launch shape and what the host reserves for it: each resident warp may hold one spare slab. */
typedef struct slab_launch_policy {
  int block_threads;
} slab_launch_policy;
static const slab_launch_policy kLaunch = {128};

#define FULL_WARP 0xFFFFFFFFu

static gh_slab_table *state(gh_table *t) { return (gh_slab_table *)t->impl; }

/* Internal operation codes: the public three, then the passes of count / find_all / erase. */
enum slab_op {
  SLAB_INSERT = GH_OP_INSERT,
  SLAB_ERASE = GH_OP_ERASE,
  SLAB_FIND = GH_OP_FIND,
  SLAB_COUNT = 4, /* values of the key: numbers[i] */
  SLAB_FILL = 5,  /* its values to values_out[numbers[i] ...] */
  SLAB_FIRST = 6, /* multivalue erase, phase 1: the key's first entry to first[i] */
  SLAB_ELECT = 7  /* phase 2: tombstone first[i] (the one op that does wins), then erase the rest */
};

/* One kernel launch's arguments (by value). */
typedef struct slab_args {
  gh_slab_geometry g;
  uint32_t *base;
  gh_slab_pool pool;
  gh_slab_counters *counters;
  const uint8_t *ops; /* per operation, or NULL: every operation is `op` */
  int op;
  const void *keys;
  const void *values;
  uint64_t n;
  void *values_out;      /* finds: the value or default_value; fill: the values */
  uint8_t *results_out;  /* per operation: the result byte (or, insert_failed_only, result == 2) */
  uint64_t *numbers;     /* count: counts out; fill: offsets in */
  void **first;          /* multivalue erase */
  uint64_t default_value;
  int policy;
  int mode;
  int erase_all;         /* multivalue: an erase removes every value */
  int recheck;           /* mixed: a find reads the key again after the value */
  int insert_failed_only;
} slab_args;

template <unsigned KB, unsigned VB>
struct slab_shape {
  static const unsigned bytes = KB + VB <= 32 ? 4u : (KB + VB <= 64 ? 8u : 16u);
  static const unsigned lanes = bytes / 4u;       /* lanes per entry */
  static const unsigned per_slab = 120u / bytes;  /* entries per slab */
};

/* What a warp learns from one read of a slab. */
typedef struct slab_view {
  unsigned match, empties, tombs; /* lanes that start an entry holding the key / EMPTY / TOMBSTONE */
  uint32_t next;
} slab_view;

template <unsigned KB, unsigned VB>
static __device__ __forceinline__ slab_view read_slab(const uint32_t *slab, uint64_t stored, unsigned lane) {
  typedef slab_shape<KB, VB> S;
  const bool first = lane % S::lanes == 0 && lane / S::lanes < S::per_slab;
  const uint64_t empty = KB == 64 ? ~0ull : 0xFFFFFFFFull;
  uint64_t key = 0;
  uint32_t next = 0;
  /* The whole key in one load (64-bit keys too): a key is never seen half written. */
  if (first) key = KB == 64 ? gh_load_u64(slab + lane) : gh_load_u32(slab + lane);
  if (lane == GH_SLAB_NEXT_LANE) next = gh_load_u32(slab + lane);
  slab_view v;
  v.match = __ballot_sync(FULL_WARP, first && key == stored);
  v.empties = __ballot_sync(FULL_WARP, first && key == empty);
  v.tombs = __ballot_sync(FULL_WARP, first && key == empty - 1u);
  v.next = __shfl_sync(FULL_WARP, next, GH_SLAB_NEXT_LANE);
  return v;
}

/* Word j (lane j of entry 0) of an entry's bits. */
static __device__ __forceinline__ uint32_t slot_word(gh_slot_bits b, unsigned j) {
  return j < 2 ? (uint32_t)(b.lo >> (32u * j)) : (uint32_t)(b.hi >> (32u * (j - 2u)));
}

/* ---- Warp-cooperative SlabAlloc ------------------------------------------------------------------- */

typedef struct warp_alloc {
  uint32_t who, attempt, resident; /* warp-uniform */
} warp_alloc;

static __device__ uint32_t warp_slab_alloc(const gh_slab_pool *p, unsigned long long *in_use, warp_alloc *a,
                                           unsigned lane) {
  if (p->total_blocks == 0) return GH_SLAB_NULL;
  const uint32_t tries = GH_SLAB_ALLOC_ATTEMPTS + p->total_blocks;
  for (uint32_t attempt = 0; attempt < tries; ++attempt) {
    uint32_t global;
    if (attempt < GH_SLAB_ALLOC_ATTEMPTS) {
      if (a->resident == GH_SLAB_NULL) a->resident = gh_slab_resident_block(p, a->who, a->attempt++);
      global = a->resident;
    } else {
      global = attempt - GH_SLAB_ALLOC_ATTEMPTS; /* the full scan */
    }
    uint32_t super, block;
    gh_slab_block_locate(p, global, &super, &block);
    uint32_t *words = p->bitmap[super] + (uint64_t)block * GH_SLAB_BLOCK_WORDS;
    uint32_t w = gh_load_u32(words + lane);
    unsigned free_lanes = __ballot_sync(FULL_WARP, w != 0xFFFFFFFFu);
    while (free_lanes) {
      const unsigned src = (unsigned)__ffs((int)free_lanes) - 1u;
      int ok = 0;
      unsigned bit = 0;
      if (lane == src) {
        bit = (unsigned)__ffs((int)~w) - 1u;
        const uint32_t before = atomicCAS(words + lane, w, w | (1u << bit));
        ok = before == w;
        w = ok ? (w | (1u << bit)) : before;
      }
      ok = __shfl_sync(FULL_WARP, ok, src);
      bit = __shfl_sync(FULL_WARP, bit, src);
      if (ok) {
        if (lane == 0) atomicAdd(in_use, 1ull);
        a->resident = global;
        return gh_slab_address(super, block, src * 32u + bit);
      }
      free_lanes = __ballot_sync(FULL_WARP, w != 0xFFFFFFFFu);
    }
    if (attempt < GH_SLAB_ALLOC_ATTEMPTS) a->resident = GH_SLAB_NULL;
  }
  return GH_SLAB_NULL;
}

/* ---- One operation, the whole warp ------------------------------------------------------------------ */

/* What an operation leaves for the lane that owns it. */
typedef struct op_result {
  uint8_t code;       /* the result byte (gh_mixed's meaning) */
  uint64_t removed;   /* entries erased */
  uint64_t value;     /* find: the value */
  uint64_t count;     /* count: values */
} op_result;

static __device__ __forceinline__ int tombstone(gh_slot_format f, void *e, uint64_t stored) {
  const uint64_t tomb = gh_slot_empty_key(f.key_bits) - 1u;
  if (f.key_bits == 32) return gh_cas_u32(e, (uint32_t)stored, (uint32_t)tomb) == (uint32_t)stored;
  return gh_cas_u64(e, stored, tomb) == stored;
}

template <unsigned KB, unsigned VB>
static __device__ op_result warp_insert(const slab_args &A, warp_alloc *wa, uint32_t *head, uint64_t stored,
                                        uint64_t value, unsigned lane) {
  typedef slab_shape<KB, VB> S;
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  const uint64_t empty = gh_slot_empty_key(KB);
  const gh_slot_bits desired = gh_slot_pack(f, stored, value);
  op_result r = {2, 0, 0, 0};
  uint32_t spare = GH_SLAB_NULL;
  for (;;) {
    uint32_t *slab = head, *tail = head, *target = NULL;
    bool merged = false;
    for (;;) {
      const slab_view v = read_slab<KB, VB>(slab, stored, lane);
      if (A.mode != GH_SLAB_APPEND && v.match) {
        if (lane == 0) gh_slot_update_value(f, slab + (__ffs((int)v.match) - 1), A.policy, value);
        merged = true;
        break;
      }
      const unsigned candidates = v.empties | (A.mode != GH_SLAB_FRONTIER ? v.tombs : 0u);
      if (target == NULL && candidates) target = slab + (__ffs((int)candidates) - 1);
      /* EMPTY entries are the tail of the list; multivalue takes the first free entry. */
      if (v.empties || (A.mode == GH_SLAB_APPEND && target != NULL)) break;
      tail = slab;
      if (v.next == GH_SLAB_NULL) break;
      slab = gh_slab_at(&A.pool, v.next);
    }
    if (merged) {
      r.code = 0;
      break;
    }
    if (target != NULL) {
      int ok = 0;
      if (lane == 0) {
        const gh_slot_bits seen = gh_slot_load(f, target);
        const uint64_t k = gh_slot_bits_key(f, seen);
        if (k == empty || (A.mode != GH_SLAB_FRONTIER && k == empty - 1u))
          ok = gh_slot_bits_equal(gh_slot_cas(f, target, seen, desired), seen);
      }
      if (__shfl_sync(FULL_WARP, ok, 0)) {
        r.code = 1;
        break;
      }
      continue; /* lost the entry: decide again from the list's start */
    }
    /* No free entry: link a new slab that already holds the entry. */
    if (spare == GH_SLAB_NULL) spare = warp_slab_alloc(&A.pool, &A.counters->slabs_in_use, wa, lane);
    if (spare == GH_SLAB_NULL) break; /* r.code 2: no memory */
    uint32_t *fresh = gh_slab_at(&A.pool, spare);
    fresh[lane] = lane < S::lanes ? slot_word(desired, lane) : 0xFFFFFFFFu;
    __threadfence();
    __syncwarp();
    int linked = 0;
    if (lane == 0) linked = atomicCAS(&tail[GH_SLAB_NEXT_LANE], GH_SLAB_NULL, spare) == GH_SLAB_NULL;
    if (__shfl_sync(FULL_WARP, linked, 0)) {
      spare = GH_SLAB_NULL;
      r.code = 1;
      break;
    }
    /* Another warp linked first: its slab may hold the key now; ours is kept for the next try. */
  }
  if (spare != GH_SLAB_NULL && lane == 0) gh_slab_free(&A.pool, &A.counters->slabs_in_use, spare);
  __syncwarp();
  return r;
}

template <unsigned KB, unsigned VB>
static __device__ op_result warp_op(const slab_args &A, warp_alloc *wa, int op, uint64_t key, uint64_t value,
                                    uint64_t index, unsigned lane) {
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  uint64_t stored;
  uint32_t *head = A.base + gh_slab_bucket(&A.g, key, &stored) * GH_SLAB_LANES;
  op_result r = {0, 0, 0, 0};
  if (op == SLAB_INSERT) return warp_insert<KB, VB>(A, wa, head, stored, value, lane);
  if (op == SLAB_ELECT) {
    int won = 0;
    if (lane == 0) won = A.first[index] != NULL && tombstone(f, A.first[index], stored);
    won = __shfl_sync(FULL_WARP, won, 0);
    r.code = (uint8_t)won;
    r.removed = (uint64_t)won;
  }
  const uint64_t at = op == SLAB_FILL ? A.numbers[index] : 0;
  for (uint32_t *slab = head; slab != NULL;) {
    const slab_view v = read_slab<KB, VB>(slab, stored, lane);
    const bool mine = (v.match >> lane) & 1u;
    if (op == SLAB_ERASE || op == SLAB_ELECT) {
      const bool all = A.erase_all || op == SLAB_ELECT;
      const bool tries = all ? mine : (mine && lane == (unsigned)__ffs((int)v.match) - 1u);
      const unsigned removed = __ballot_sync(FULL_WARP, tries && tombstone(f, slab + lane, stored));
      r.removed += (uint64_t)__popc((int)removed);
      if (op == SLAB_ERASE) r.code = r.removed > 0;
      if (!all && removed) break;
    } else if (op == SLAB_FIND || op == SLAB_FIRST) {
      if (v.match) {
        const unsigned leader = (unsigned)__ffs((int)v.match) - 1u;
        int found = 1;
        uint64_t got = 0;
        if (lane == 0 && op == SLAB_FIND) {
          got = gh_slot_load_value(f, slab + leader);
          /* Mixed batches: an entry erased between the two reads counts as absent. */
          if (A.recheck) found = gh_slot_load_key(f, slab + leader) == stored;
        }
        if (lane == 0 && op == SLAB_FIRST) A.first[index] = slab + leader;
        r.code = (uint8_t)__shfl_sync(FULL_WARP, found, 0);
        r.value = __shfl_sync(FULL_WARP, (unsigned long long)got, 0);
        return r;
      }
    } else { /* SLAB_COUNT, SLAB_FILL */
      if (op == SLAB_FILL && mine && A.values_out)
        gh__write_word(A.values_out, at + r.count + (uint64_t)__popc((int)(v.match & ((1u << lane) - 1u))), VB,
                       gh_slot_load_value(f, slab + lane));
      r.count += (uint64_t)__popc((int)v.match);
    }
    if (v.empties || v.next == GH_SLAB_NULL) break;
    slab = gh_slab_at(&A.pool, v.next);
  }
  if (op == SLAB_FIRST && lane == 0) A.first[index] = NULL;
  return r;
}

/* The work queue: each lane brings one operation; the warp runs them one after the other. */
template <unsigned KB, unsigned VB>
__global__ void __launch_bounds__(128) slab_ops_kernel(slab_args A) {
  const unsigned lane = threadIdx.x & 31u;
  warp_alloc wa = {(uint32_t)(gh_thread_index() / 32u), 0u, GH_SLAB_NULL};
  unsigned long long inserted = 0, failed = 0, removed = 0, erased = 0, total = 0;
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(A.n); i += gh_grid_threads()) {
    const bool active = i < A.n;
    const int my_op = active ? (A.ops ? (int)A.ops[i] : A.op) : 0;
    const uint64_t my_key = active ? gh__read_word(A.keys, i, KB) : 0;
    const uint64_t my_value = active && VB && A.values ? gh__read_word(A.values, i, VB) : 0;
    unsigned queue = __ballot_sync(FULL_WARP, active);
    while (queue) {
      const unsigned src = (unsigned)__ffs((int)queue) - 1u;
      queue &= queue - 1u;
      const int op = __shfl_sync(FULL_WARP, my_op, src);
      const uint64_t key = __shfl_sync(FULL_WARP, (unsigned long long)my_key, src);
      const uint64_t value = __shfl_sync(FULL_WARP, (unsigned long long)my_value, src);
      const uint64_t index = __shfl_sync(FULL_WARP, (unsigned long long)i, src);
      const op_result r = warp_op<KB, VB>(A, &wa, op, key, value, index, lane);
      if (lane != src) continue;
      if (op == SLAB_INSERT) {
        inserted += r.code == 1;
        failed += r.code == 2;
      }
      if (op == SLAB_ERASE || op == SLAB_ELECT) erased += r.code;
      removed += r.removed;
      total += r.count;
      if (op == SLAB_COUNT && A.numbers) A.numbers[i] = r.count;
      if (op == SLAB_FIND && VB && A.values_out) gh__write_word(A.values_out, i, VB, r.code ? r.value : A.default_value);
      if (A.results_out && (op <= SLAB_FIND || op == SLAB_ELECT))
        A.results_out[i] = (uint8_t)(op == SLAB_INSERT && A.insert_failed_only ? r.code == 2 : r.code);
    }
  }
  gh_warp_add(&A.counters->call.inserted, inserted);
  gh_warp_add(&A.counters->call.failed, failed);
  gh_warp_add(&A.counters->call.removed, removed);
  gh_warp_add(&A.counters->call.erased, erased);
  gh_warp_add(&A.counters->call.total, total);
  gh_warp_add(&A.counters->size, inserted - removed);
}

/* Reservation pass: one count per bucket; a new slab is needed for every per_slab inserts. */
template <unsigned KB>
__global__ void slab_count_kernel(gh_slab_geometry g, const uint8_t *ops, const void *keys, uint64_t n,
                                  uint32_t *bucket_counts, gh_slab_counters *counters) {
  unsigned long long needed = 0;
  for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(n); i += gh_grid_threads()) {
    if (i >= n || (ops && ops[i] != GH_OP_INSERT)) continue;
    uint64_t stored;
    const uint64_t b = gh_slab_bucket(&g, gh__read_word(keys, i, KB), &stored);
    needed += atomicAdd(&bucket_counts[b], 1u) % g.per_slab == 0;
  }
  gh_warp_add(&counters->call.total, needed);
}

/* FLUSH: one thread per list. */
__global__ void slab_compact_kernel(gh_slab_geometry g, uint32_t *base, gh_slab_pool pool, gh_slab_counters *counters) {
  for (uint64_t b = gh_thread_index(); b < g.buckets + 2; b += gh_grid_threads())
    gh_slab_compact_list(&g, &pool, &counters->slabs_in_use, base + b * GH_SLAB_LANES);
}

/* Export: one thread per list, positions from the call's cursor. */
template <unsigned KB, unsigned VB>
__global__ void slab_export_kernel(gh_slab_geometry g, uint32_t *base, gh_slab_pool pool, void *keys_out,
                                   void *values_out, gh_slab_counters *counters) {
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  const uint64_t empty = gh_slot_empty_key(KB);
  for (uint64_t b = gh_thread_index(); b < g.buckets + 2; b += gh_grid_threads()) {
    for (uint32_t *slab = base + b * GH_SLAB_LANES; slab != NULL; slab = gh_slab_next(&pool, slab)) {
      for (unsigned i = 0; i < g.per_slab; ++i) {
        const void *e = gh_slab_entry(f, slab, i);
        const uint64_t k = gh_slot_load_key(f, e);
        if (k == empty || k == empty - 1u) continue; /* as the host backend: every entry is looked at */
        const uint64_t at = atomicAdd(&counters->call.total, 1ull);
        gh__write_word(keys_out, at, KB, gh_slab_user_key(&g, b, k));
        if (VB && values_out) gh__write_word(values_out, at, VB, gh_slot_load_value(f, e));
      }
    }
  }
}

/* ---- Launching --------------------------------------------------------------------------------------- */

typedef struct slab_kernels {
  const void *ops, *count, *export_all;
} slab_kernels;

static slab_kernels kernels_for(const gh_slab_geometry &g) {
  slab_kernels k = {NULL, NULL, NULL};
#define GH_SLAB_KERNELS_CASE(kb, vb)                                                   \
  if (g.format.key_bits == kb && g.format.value_bits == vb) {                          \
    k.ops = (const void *)slab_ops_kernel<kb, vb>;                                     \
    k.count = (const void *)slab_count_kernel<kb>;                                     \
    k.export_all = (const void *)slab_export_kernel<kb, vb>;                           \
  }
  GH_WIDTHS(GH_SLAB_KERNELS_CASE)
#undef GH_SLAB_KERNELS_CASE
  return k;
}

static slab_args args_for(gh_table *t) {
  gh_slab_table *s = state(t);
  slab_args a;
  memset(&a, 0, sizeof a);
  a.g = s->geometry;
  a.base = s->base;
  a.pool = s->pool;
  a.counters = s->counters;
  return a;
}

/* Runs the operations kernel; reads the call's counters back (the op's one wait). */
static gh_status run_ops(gh_table *t, slab_args *a, gh_slab_call_counters *after, void *stream) {
  void *args[] = {a};
  return gh__cuda_launch_counted(t, kernels_for(a->g).ops, a->n, kLaunch.block_threads, args, &state(t)->counters->call,
                                 after, sizeof *after, stream);
}

typedef struct count_context {
  const uint8_t *ops;
  const void *keys;
  uint64_t n;
  void *stream;
} count_context;

static gh_status count_slabs(gh_table *t, void *context, uint32_t *bucket_counts, uint64_t *needed) {
  count_context *c = (count_context *)context;
  gh_slab_table *s = state(t);
  gh_slab_geometry g = s->geometry;
  void *args[] = {&g, (void *)&c->ops, (void *)&c->keys, &c->n, &bucket_counts, &s->counters};
  gh_slab_call_counters after;
  const gh_status status = gh__cuda_launch_counted(t, kernels_for(g).count, c->n, kLaunch.block_threads, args,
                                                   &s->counters->call, &after, sizeof after, c->stream);
  if (status == GH_OK) *needed = after.total;
  return status;
}

/* Reserves a batch's slabs: one spare per resident warp on top of the count. */
static gh_status reserve_for(gh_table *t, const uint8_t *ops, const void *keys, uint64_t n, void *stream) {
  count_context c = {ops, keys, n, stream};
  const uint64_t warps =
      (uint64_t)gh_cuda_resident_grid(n, kernels_for(state(t)->geometry).ops, kLaunch.block_threads) *
      (uint64_t)(kLaunch.block_threads / 32);
  return gh__slab_reserve_batch(t, n, warps + 1, count_slabs, &c, stream);
}

/* ---- Ops ----------------------------------------------------------------------------------------------- */

static gh_status cuda_insert(gh_table *t, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                             uint8_t *failed_out, uint64_t *failed, void *stream) {
  gh_status status = reserve_for(t, NULL, keys, n, stream);
  if (status != GH_OK) return status;
  slab_args a = args_for(t);
  a.op = SLAB_INSERT;
  a.keys = keys;
  a.values = values;
  a.n = n;
  a.results_out = failed_out;
  a.insert_failed_only = 1;
  a.policy = (int)policy;
  a.mode = gh_slab_insert_mode_for(t->config.variant == GH_VARIANT_MULTIVALUE, 0);
  gh_slab_call_counters after;
  status = run_ops(t, &a, &after, stream);
  if (status == GH_OK) *failed = after.failed;
  return status == GH_OK ? gh__slab_refresh(t, stream) : status;
}

static gh_status cuda_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                           uint64_t default_value, void *stream) {
  slab_args a = args_for(t);
  a.op = SLAB_FIND;
  a.keys = keys;
  a.n = n;
  a.values_out = values_out;
  a.results_out = found_out;
  a.default_value = default_value;
  void *args[] = {&a};
  return gh__cuda_launch(t, kernels_for(a.g).ops, n, kLaunch.block_threads, args, stream);
}

static gh_status cuda_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out, uint64_t *erased,
                            void *stream) {
  slab_args a = args_for(t);
  gh_scratch first = {NULL, 0, GH_MEMORY_DEVICE};
  gh_status status = GH_OK;
  a.keys = keys;
  a.n = n;
  a.results_out = erased_out;
  a.op = SLAB_ERASE;
  if (t->config.variant == GH_VARIANT_MULTIVALUE) {
    /* Two phases: every op finds its key's first entry, then the op whose CAS tombstones it is the
     * one position flagged, and all remove what is left. */
    status = gh__scratch_alloc(t, &first, (size_t)n * sizeof(void *));
    if (status != GH_OK) return status;
    a.first = (void **)first.ptr;
    a.op = SLAB_FIRST;
    void *args[] = {&a};
    status = gh__cuda_launch(t, kernels_for(a.g).ops, n, kLaunch.block_threads, args, stream);
    a.op = SLAB_ELECT;
  }
  gh_slab_call_counters after;
  if (status == GH_OK) status = run_ops(t, &a, &after, stream);
  gh__scratch_free(t, &first, stream);
  if (status == GH_OK) *erased = after.erased;
  return status;
}

static gh_status cuda_count(gh_table *t, const void *keys, uint64_t n, uint64_t *counts_out, uint64_t *total,
                            void *stream) {
  if (t->config.variant != GH_VARIANT_MULTIVALUE) return gh__slab_single_value(t, "gh_count");
  slab_args a = args_for(t);
  a.op = SLAB_COUNT;
  a.keys = keys;
  a.n = n;
  a.numbers = counts_out;
  gh_slab_call_counters after;
  const gh_status status = run_ops(t, &a, &after, stream);
  if (status == GH_OK && total) *total = after.total;
  return status;
}

static gh_status cuda_find_all(gh_table *t, const void *keys, uint64_t n, uint64_t *offsets_out, void *values_out,
                               uint64_t values_capacity, void *stream) {
  if (t->config.variant != GH_VARIANT_MULTIVALUE) return gh__slab_single_value(t, "gh_find_all");
  slab_args a = args_for(t);
  a.op = SLAB_COUNT;
  a.keys = keys;
  a.n = n;
  a.numbers = offsets_out;
  gh_slab_call_counters after;
  uint64_t needed = 0;
  gh_status status = gh__fill(t, offsets_out + n, 0, sizeof(uint64_t), stream);
  if (status == GH_OK) status = run_ops(t, &a, &after, stream);
  if (status == GH_OK) status = gh__exclusive_sum_u64(t, offsets_out, offsets_out, n + 1, stream);
  if (status == GH_OK) status = gh__to_host(t, &needed, offsets_out + n, sizeof needed, stream);
  if (status != GH_OK) return status;
  if (needed > values_capacity)
    return gh__fail(t, GH_ERR_BUFFER_TOO_SMALL, "gh_find_all: the keys have %llu values but values_capacity is %llu; "
                    "offsets_out says where each key's values would go, no value was written",
                    (unsigned long long)needed, (unsigned long long)values_capacity);
  if (values_out == NULL) return GH_OK;
  a.op = SLAB_FILL;
  a.values_out = values_out;
  void *args[] = {&a};
  return gh__cuda_launch(t, kernels_for(a.g).ops, n, kLaunch.block_threads, args, stream);
}

static gh_status cuda_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_slab_table *s = state(t);
  gh_slab_geometry g = s->geometry;
  gh_slab_pool pool = s->pool;
  void *args[] = {&g, &s->base, &pool, &keys_out, &values_out, &s->counters};
  gh_slab_call_counters after;
  const gh_status status = gh__cuda_launch_counted(t, kernels_for(g).export_all, g.buckets + 2, kLaunch.block_threads,
                                                   args, &s->counters->call, &after, sizeof after, stream);
  if (status == GH_OK) *count = after.total;
  return status;
}

static gh_status cuda_mixed(gh_table *t, const uint8_t *ops, const void *keys, const void *values, uint64_t n,
                            gh_dup_policy policy, void *values_out, uint8_t *results_out, uint64_t *failed,
                            void *stream) {
  gh_status status = reserve_for(t, ops, keys, n, stream);
  if (status != GH_OK) return status;
  slab_args a = args_for(t);
  a.ops = ops;
  a.keys = keys;
  a.values = values;
  a.n = n;
  a.values_out = values_out;
  a.results_out = results_out;
  a.policy = (int)policy;
  a.mode = gh_slab_insert_mode_for(t->config.variant == GH_VARIANT_MULTIVALUE, 1);
  a.erase_all = t->config.variant == GH_VARIANT_MULTIVALUE;
  a.recheck = 1;
  gh_slab_call_counters after;
  status = run_ops(t, &a, &after, stream);
  if (status == GH_OK) *failed = after.failed;
  return status == GH_OK ? gh__slab_refresh(t, stream) : status;
}

static gh_status cuda_compact(gh_table *t, void *stream) {
  gh_slab_table *s = state(t);
  gh_slab_geometry g = s->geometry;
  gh_slab_pool pool = s->pool;
  void *args[] = {&g, &s->base, &pool, &s->counters};
  const gh_status status =
      gh__cuda_launch(t, (const void *)slab_compact_kernel, g.buckets + 2, kLaunch.block_threads, args, stream);
  return status == GH_OK ? gh__slab_refresh(t, stream) : status;
}

extern "C" const gh_table_ops gh__slab_cuda_ops = {
    .name = "slab/cuda",
    .init = gh__slab_init,
    .release = gh__slab_release,
    .insert = cuda_insert,
    .find = cuda_find,
    .erase = cuda_erase,
    .count = cuda_count,
    .find_all = cuda_find_all,
    .export_all = cuda_export,
    .clear = gh__slab_clear,
    .size = gh__slab_size,
    .validate = gh__slab_validate,
    .keys_of_ids = NULL,
    .stats = gh__slab_stats,
    .device_view = NULL,
    .take_flags = NULL,
    .mixed = cuda_mixed,
    .compact = cuda_compact,
};
