/* slab_cuda.cu - the slab hash on the GPU: cooperative work sharing (Ashkiani et al. section IV),
 * by tiles of 8 lanes instead of the paper's whole warps. Every thread holds one operation; its
 * tile forms a work queue with a ballot and runs the queued operations one at a time, all 8 lanes
 * together: one slab is one coalesced 128-byte read (lane r reads words 4r .. 4r + 3 in one 16-byte
 * load, lane 7 the next address), and the decisions are OR-reductions of per-word masks (match,
 * EMPTY, TOMBSTONE). Why tiles: an operation is a chain of dependent slab reads, so a warp that
 * runs one at a time waits a full memory latency per operation; four tiles per warp keep four
 * reads in flight, and the 16-byte loads bring each entry's value with its key (no second read).
 * One kernel serves every operation (insert, erase, find, count, fill, and the two phases of a
 * multivalue erase), so a mixed batch is one kernel. SlabAlloc is per tile too: a tile keeps a
 * resident memory block whose 32 bitmap words are four per lane; a free bit is taken by ballot +
 * atomicCAS, a full block is replaced by a hashed choice, and after GH_SLAB_ALLOC_ATTEMPTS blocks
 * every block is scanned, so the host's reservation always suffices.
 *
 * The same decisions as the host backend (slab_host.c): EMPTY entries are the tail of a list,
 * map inserts of mixed batches claim only the first EMPTY entry, gh_insert also reuses tombstones
 * (first free entry after a scan to the first EMPTY one, re-decided after a lost CAS), erases swap
 * the key field for the tombstone. */
#include <cuda_runtime.h>

#include "core/kernels.cuh"
#include "gpuhash/slab.cuh"

extern "C" {
#include "core/toolkit.h"
#include "slab/slab_table.h"
}

/* Launch shape. Each tile of GH_SLAB_TILE lanes may hold one spare slab: the host reserves one per
 * resident tile on top of a batch's estimate. */
static const int kBlockThreads = 128;

static gh_slab_table *state(gh_table *t) { return (gh_slab_table *)t->impl; }

/* Internal operation codes: the public three, then the passes of count / find_all / erase. */
enum slab_op {
  SLAB_INSERT = GH_OP_INSERT,
  SLAB_ERASE = GH_OP_ERASE,
  SLAB_FIND = GH_OP_FIND,
  SLAB_COUNT = 4, /* values of the key: numbers[i] */
  SLAB_FILL = 5,  /* its values to values_out[numbers[i] ...] */
  SLAB_FIRST = 6, /* multivalue erase, phase 1: the key's first entry to first[i] */
  SLAB_ELECT = 7, /* phase 2: tombstone first[i] (the one op that does wins), then erase the rest */
  SLAB_ANY = -1   /* a kernel for every operation (slab_ops_kernel's ONLY) */
};

/* One kernel launch's arguments (by value, read in place as a __grid_constant__). */
typedef struct slab_args {
  gh_slab_device_table T;
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
  int insert_failed_only;
  uint32_t *retry_bits;  /* see gh_slab_batch, or NULL */
  int rerun;
} slab_args;

/* The result code of an insert gh_insert's head pass leaves to the walk (never returned). */
#define SLAB_LEFT 3u

/* What an operation leaves: code, removed and count on every lane; a find's value on lane `owner`
 * (the lane that read it: it writes the value out, no exchange). */
typedef struct op_result {
  uint8_t code;       /* the result byte (gh_mixed's meaning) */
  unsigned owner;     /* find: the lane holding the value */
  uint64_t removed;   /* entries erased */
  uint64_t value;     /* find: the value, on lane owner */
  uint64_t count;     /* count: values */
} op_result;

/* The sum of x over the lanes of the tile before this one. */
static __device__ __forceinline__ unsigned lanes_before(const gh_device_group &tile, unsigned x) {
  unsigned sum = x;
#pragma unroll
  for (unsigned d = 1; d < GH_SLAB_TILE; d <<= 1) {
    const unsigned below = __shfl_up_sync(tile.mask, sum, d, GH_SLAB_TILE);
    if (tile.rank >= d) sum += below;
  }
  return sum - x;
}

/* COUNT and FILL: every entry of the key, in list order (ahead: the head's words). */
template <unsigned KB, unsigned VB>
static __device__ uint64_t tile_each_value(const gh_device_group &tile, const slab_args &A, int op, uint32_t *head,
                                           uint64_t stored, uint64_t index, gh_slab_ahead ahead) {
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  const uint64_t at = op == SLAB_FILL ? A.numbers[index] : 0;
  uint64_t count = 0;
  for (uint32_t *slab = head; slab != NULL;) {
    const gh_slab_view v = slab == head ? gh_slab_read_first<KB, VB>(tile, head, stored, ahead)
                                        : gh_slab_read<KB, VB>(tile, slab, stored);
    const unsigned here = __reduce_add_sync(tile.mask, (unsigned)__popc((int)v.my_match));
    if (op == SLAB_FILL && A.values_out && v.match) {
      /* Values in list order: those of the lanes before this one come first. */
      const uint64_t first = at + count + lanes_before(tile, (unsigned)__popc((int)v.my_match));
      for (unsigned mine = v.my_match; mine; mine &= mine - 1u) {
        const unsigned k = gh_slab_lowest(mine);
        const uint64_t position = first + (uint64_t)__popc((int)(v.my_match & ((1u << k) - 1u)));
        gh__write_word(A.values_out, position, VB, gh_slot_bits_value(f, gh_slab_entry_in<KB, VB>(v.mine, k)));
      }
    }
    count += here;
    if (v.empties) break;
    slab = gh_slab_after(tile, &A.T.pool, v);
  }
  return count;
}

/* One operation, the whole tile: the key `stored` of list `bucket`, whose head slab the tile has
 * read into `ahead`. */
template <unsigned KB, unsigned VB>
static __device__ op_result tile_op(const gh_device_group &tile, const slab_args &A, gh_slab_tile_alloc *ta, int op,
                                    uint64_t bucket, uint64_t stored, uint64_t value, uint64_t index,
                                    gh_slab_ahead ahead) {
  uint32_t *head = A.T.base + bucket * GH_SLAB_LANES;
  op_result r = {0, 0, 0, 0, 0};
  if (op == SLAB_INSERT) {
    r.code = (uint8_t)gh_slab_tile_insert<KB, VB>(tile, A.T, ta, (gh_slab_insert_mode)A.mode, A.policy, head, stored,
                                                  value, ahead);
  } else if (op == SLAB_FIND || op == SLAB_FIRST) {
    void *entry = NULL;
    r.code = (uint8_t)gh_slab_tile_find<KB, VB>(tile, A.T, head, stored, &r.owner, &r.value, &entry, ahead);
    if (op == SLAB_FIRST && tile.rank == (r.code ? r.owner : 0u)) A.first[index] = entry;
  } else if (op == SLAB_ERASE) {
    r.removed = gh_slab_tile_erase<KB, VB>(tile, A.T, head, stored, A.erase_all, ahead);
    r.code = r.removed > 0;
  } else if (op == SLAB_ELECT) {
    int won = 0;
    if (tile.rank == 0) won = A.first[index] != NULL && gh_slab_tombstone_entry(&A.T.g, A.first[index], stored);
    won = gh_device_group_ballot(tile, won) != 0;
    r.code = (uint8_t)won;
    /* The head was read before the tombstone went in: the walk's CAS on that entry fails. */
    r.removed = (uint64_t)won + gh_slab_tile_erase<KB, VB>(tile, A.T, head, stored, true, ahead);
  } else { /* SLAB_COUNT, SLAB_FILL */
    r.count = tile_each_value<KB, VB>(tile, A, op, head, stored, index, ahead);
  }
  return r;
}

/* Head reads a tile keeps in flight in the general kernel: the heads of this many queued
 * operations are loaded together before the first of them is decided (an operation is mostly one
 * read, so a tile that loaded one head at a time would wait a full memory latency per operation). */
#define SLAB_AHEAD 2u
/* gh_find's and gh_insert's kernels: 8 blocks of 128 per SM (64 registers: a tile's eight slabs
 * in flight take 32 of them). */
#define SLAB_ONE_OP_MIN_BLOCKS 8

/* The tile of a warp whose lanes all call together (the tiles in step, no branch between them):
 * its exchanges sync the whole warp. A constant mask spares the convergence checks (a match and a
 * reduction per exchange) that the compiler adds for the computed mask of a tile. */
static __device__ __forceinline__ gh_device_group warp_converged(gh_device_group tile) {
  tile.mask = 0xFFFFFFFFu;
  return tile;
}

/* gh_find: the tile runs its whole queue at once, in rounds. Round r loads the r-th slab of every
 * list not decided yet (eight 16-byte loads per lane in flight together) and decides each without a
 * branch: the key found, or the list ends (an EMPTY entry or no next slab); otherwise the lane of
 * that operation keeps the next slab's address for the next round. At the table's usual load a
 * list is mostly one slab, so most warps need one round. `tile` is warp-converged. */
template <unsigned KB, unsigned VB>
static __device__ void tile_find_rounds(const gh_device_group &tile, const slab_args &A, unsigned queue,
                                        uint64_t my_bucket, uint64_t my_stored, op_result *mine) {
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  const uint32_t *my_slab = A.T.base + my_bucket * GH_SLAB_LANES; /* of this lane's operation */
  for (unsigned pending = queue; __any_sync(0xFFFFFFFFu, pending != 0);) {
    uint4 words[GH_SLAB_TILE];
#pragma unroll
    for (unsigned j = 0; j < GH_SLAB_TILE; ++j) {
      const uint32_t *slab = (const uint32_t *)gh_device_group_broadcast(tile, (uint64_t)my_slab, j);
      words[j] = (pending >> j) & 1u ? gh_slab_load(tile, slab) : make_uint4(0u, 0u, 0u, 0u);
    }
    unsigned ended = 0;
#pragma unroll
    for (unsigned j = 0; j < GH_SLAB_TILE; ++j) {
      const gh_slab_view v = gh_slab_classify<KB, VB, false>(tile, words[j], gh_slab_broadcast_word<KB>(tile, my_stored, j));
      uint64_t value = VB ? gh_slot_bits_value(f, gh_slab_entry_in<KB, VB>(v.mine, gh_slab_lowest(v.my_match))) : 0;
      if (VB) value = gh_slab_broadcast_word<VB == 0 ? 32 : VB>(tile, value, gh_slab_lowest(v.match) % GH_SLAB_TILE);
      const uint32_t next = (uint32_t)gh_slab_broadcast_word<32>(tile, words[j].w, GH_SLAB_TILE - 1u);
      const bool ends = v.match || v.empties || next == GH_SLAB_NULL;
      if (tile.rank == j && ((pending >> j) & 1u)) {
        mine->code = v.match != 0;
        mine->value = value;
        if (!ends) my_slab = gh_slab_at(&A.T.pool, next);
      }
      ended |= (unsigned)ends << j;
    }
    pending &= ~ended;
  }
}

/* gh_insert: what the tile decides from the head slabs of its whole queue, loaded together: an
 * insert whose head holds the key (merged by the policy), or whose list ends in its head with an
 * EMPTY entry first among the free ones (one CAS on it, as the walk would make). Every CAS is issued
 * before any outcome is read. Returns the operations left to the walk (a longer list, a lost CAS, a
 * tombstone to reuse), which decides them afresh. `tile` is warp-converged. */
template <unsigned KB, unsigned VB>
static __device__ unsigned tile_insert_heads(const gh_device_group &tile, const slab_args &A, unsigned queue,
                                             uint64_t my_bucket, uint64_t my_stored, uint64_t my_value,
                                             op_result *mine) {
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  const gh_slot_bits blank = gh_slot_pack(f, gh_slot_empty_key(KB), ~0ull);
  const gh_slab_insert_mode mode = (gh_slab_insert_mode)A.mode;
  const bool reuse = mode != GH_SLAB_FRONTIER;
  /* Lanes without an operation hash to bucket 0: their loads read a real slab and are ignored. */
  uint4 heads[GH_SLAB_TILE];
#pragma unroll
  for (unsigned j = 0; j < GH_SLAB_TILE; ++j)
    heads[j] = gh_slab_load(tile, A.T.base + gh_device_group_broadcast(tile, my_bucket, j) * GH_SLAB_LANES);
  unsigned merged = 0, tried = 0;
  gh_slot_bits before[GH_SLAB_TILE];
#pragma unroll
  for (unsigned j = 0; j < GH_SLAB_TILE; ++j) {
    const bool live = (queue >> j) & 1u;
    const uint64_t stored = gh_slab_broadcast_word<KB>(tile, my_stored, j);
    const uint64_t value = VB ? gh_slab_broadcast_word<VB == 0 ? 32 : VB>(tile, my_value, j) : 0;
    uint32_t *head = A.T.base + gh_device_group_broadcast(tile, my_bucket, j) * GH_SLAB_LANES;
    const gh_slab_view v = gh_slab_classify<KB, VB>(tile, heads[j], stored);
    const bool merge = live && mode != GH_SLAB_APPEND && v.match;
    if (merge && tile.rank == gh_slab_lowest(v.match))
      gh_slot_update_value(f, gh_slab_own_word(tile, head, gh_slab_lowest(v.my_match)), A.policy, value);
    const unsigned candidates = v.empties | (reuse ? v.tombs : 0u);
    const unsigned entry = gh_slab_lowest(v.my_empties | (reuse ? v.my_tombs : 0u));
    const bool place = live && !merge && candidates && (mode == GH_SLAB_APPEND || v.empties) &&
                       tile.rank == gh_slab_lowest(candidates) && ((v.my_empties >> entry) & 1u);
    before[j] = blank;
    if (place) {
      before[j] = gh_slot_cas(f, gh_slab_own_word(tile, head, entry), blank, gh_slot_pack(f, stored, value));
      tried |= 1u << j;
    }
    merged |= (unsigned)merge << j;
    if (tile.rank == j) mine->code = (uint8_t)(merge ? GH_SLAB_MERGED : GH_SLAB_INSERTED);
  }
  unsigned won = 0;
#pragma unroll
  for (unsigned j = 0; j < GH_SLAB_TILE; ++j)
    won |= (unsigned)(((tried >> j) & 1u) && gh_slot_bits_equal(before[j], blank)) << j;
  /* The tile's wins: each tile's byte of one warp-wide OR. */
  won = (__reduce_or_sync(0xFFFFFFFFu, won << tile.first_lane) >> tile.first_lane) & 0xFFu;
  return queue & ~(merged | won);
}

/* What a thread's operations add to the call's counters. */
typedef struct op_tally {
  unsigned long long inserted, failed, removed, erased, total;
} op_tally;

/* One operation per lane (operation i of the batch with its key and value, or none: active = 0)
 * through its tile's queue, and its results written. Every lane of the warp calls. ONLY is SLAB_ANY
 * (operations from A.ops or A.op: the queue SLAB_AHEAD operations at a time, their head slabs loaded
 * together, then each decided by the whole tile) or the one operation of a gh_find
 * (tile_find_rounds) or of gh_insert's head pass (tile_insert_heads): those instantiations leave the
 * other operations' code and registers out. */
template <unsigned KB, unsigned VB, int ONLY>
static __device__ __forceinline__ void slab_ops_step(const gh_device_group &tile, const slab_args &A,
                                                     gh_slab_tile_alloc *ta, uint64_t i, bool active,
                                                     uint64_t my_key, uint64_t my_value, op_tally *tally) {
  const int my_op = ONLY != SLAB_ANY ? ONLY : (active ? (A.ops ? (int)A.ops[i] : A.op) : 0);
  uint64_t my_stored = 0;
  const uint64_t my_bucket = active ? gh_slab_bucket(&A.T.g, my_key, &my_stored) : 0;
  const unsigned queue = gh_device_group_ballot(tile, active);
  const gh_device_group warp = warp_converged(tile);
  op_result mine = {0, 0, 0, 0, 0};
  if (ONLY == SLAB_FIND) {
    tile_find_rounds<KB, VB>(warp, A, queue, my_bucket, my_stored, &mine);
  } else if (ONLY == SLAB_INSERT) {
    /* What the heads left is walked by a second launch (run_batch): a walk here would part the
     * tiles of the warp, and its rare long chains would hold up the other three. */
    const unsigned left = tile_insert_heads<KB, VB>(warp, A, queue, my_bucket, my_stored, my_value, &mine);
    if ((left >> tile.rank) & 1u) mine.code = SLAB_LEFT;
  } else {
    /* The tiles of a warp step through their queues together and meet at the end of every step: a
     * warp whose tiles drifted apart would run them one after the other. */
    for (unsigned first = 0; first < GH_SLAB_TILE; first += SLAB_AHEAD) {
      if (!__any_sync(0xFFFFFFFFu, (queue >> first) != 0)) break; /* a rerun's sparse queues end early */
      uint64_t bucket[SLAB_AHEAD];
      gh_slab_ahead ahead[SLAB_AHEAD];
#pragma unroll
      for (unsigned j = 0; j < SLAB_AHEAD; ++j) {
        bucket[j] = gh_device_group_broadcast(warp, my_bucket, first + j);
        ahead[j].have = (queue >> (first + j)) & 1u;
        if (ahead[j].have) ahead[j].words = gh_slab_load(tile, A.T.base + bucket[j] * GH_SLAB_LANES);
      }
#pragma unroll
      for (unsigned j = 0; j < SLAB_AHEAD; ++j) {
        const unsigned src = first + j;
        const int op = (int)gh_slab_broadcast_word<32>(warp, (uint32_t)my_op, src);
        const uint64_t stored = gh_slab_broadcast_word<KB>(warp, my_stored, src);
        const uint64_t value = VB ? gh_slab_broadcast_word<VB == 0 ? 32 : VB>(warp, my_value, src) : 0;
        const uint64_t index = gh_device_group_broadcast(warp, i, src);
        if ((queue >> src) & 1u) {
          op_result r = tile_op<KB, VB>(tile, A, ta, op, bucket[j], stored, value, index, ahead[j]);
          if (op == SLAB_FIND && VB) r.value = gh_slab_broadcast_word<VB == 0 ? 32 : VB>(tile, r.value, r.owner);
          if (tile.rank == src) mine = r;
        }
        __syncwarp();
      }
    }
  }
  if (ONLY == SLAB_INSERT) {
    /* The operations left for the walk: the warp's 32 operations are one word of the bits, which
     * the host cleared and no other warp writes. */
    const unsigned left = __ballot_sync(0xFFFFFFFFu, active && mine.code == SLAB_LEFT);
    if (left && gh_device_lane() == 0) A.retry_bits[i / 32] = left;
  }
  if (!active || mine.code == SLAB_LEFT) return;
  if (my_op == SLAB_INSERT) {
    tally->inserted += mine.code == GH_SLAB_INSERTED;
    tally->failed += mine.code == GH_SLAB_NO_MEMORY;
    /* The retry bit: set when the insert found no slab, cleared when a rerun placed it. */
    const uint32_t bit = 1u << (i % 32);
    if (A.retry_bits && !A.rerun && mine.code == GH_SLAB_NO_MEMORY) atomicOr(&A.retry_bits[i / 32], bit);
    if (A.retry_bits && A.rerun && mine.code != GH_SLAB_NO_MEMORY) atomicAnd(&A.retry_bits[i / 32], ~bit);
  }
  if (my_op == SLAB_ERASE || my_op == SLAB_ELECT) tally->erased += mine.code;
  tally->removed += mine.removed;
  tally->total += mine.count;
  if (my_op == SLAB_FIND && VB && A.values_out)
    gh__write_word(A.values_out, i, VB, mine.code ? mine.value : A.default_value);
  if (my_op == SLAB_COUNT && A.numbers) A.numbers[i] = mine.count;
  if (A.results_out && (my_op <= SLAB_FIND || my_op == SLAB_ELECT))
    A.results_out[i] =
        (uint8_t)(my_op == SLAB_INSERT && A.insert_failed_only ? mine.code == GH_SLAB_NO_MEMORY : mine.code);
}

/* Operation i's key and value (i < n). */
template <unsigned KB, unsigned VB>
static __device__ __forceinline__ void read_op(const slab_args &A, uint64_t i, uint64_t *key, uint64_t *value) {
  *key = gh__read_word(A.keys, i, KB);
  *value = VB && A.values ? gh__read_word(A.values, i, VB) : 0;
}

/* Operations per warp gathered at a time by a rerun: at most 32 words of the retry bits, one per
 * lane. */
#define SLAB_GATHER_OPS 1024u

/* The work queue: each lane brings one operation (operation i of a grid-stride loop) and hashes its
 * key; its tile runs the queue (slab_ops_step), and every lane writes its own results at the end
 * (coalesced). gh_find's and gh_insert's instantiations load the next iteration's keys and values
 * one iteration ahead, so that waiting for them overlaps this iteration's slab reads. A rerun (the
 * flagged operations only, few and scattered) gathers them first: each warp collects the set bits
 * of its share of the words (spread evenly over the grid's warps, at most one per lane) into shared
 * memory and runs them 32 at a time, in full warps, the k-th dealt to tile k % 4: a rerun is mostly
 * latency (a walk past the head, a CAS), so it pays to have every warp of the grid and every tile
 * of a warp take a few of them rather than some warps, or the first tile, take them all. */
template <unsigned KB, unsigned VB, int ONLY>
__global__ void __launch_bounds__(kBlockThreads, ONLY == SLAB_ANY ? 1 : SLAB_ONE_OP_MIN_BLOCKS)
    slab_ops_kernel(const __grid_constant__ slab_args A) {
  const gh_device_group tile = gh_device_group_make(GH_SLAB_TILE);
  gh_slab_tile_alloc ta = gh_slab_tile_alloc_make((uint32_t)(gh_thread_index() / GH_SLAB_TILE));
  op_tally tally = {0, 0, 0, 0, 0};
  if (ONLY == SLAB_ANY && A.rerun) {
    __shared__ uint16_t gathered[kBlockThreads / 32][SLAB_GATHER_OPS];
    uint16_t *order = gathered[threadIdx.x / 32];
    const unsigned lane = gh_device_lane();
    const uint64_t words = (A.n + 31) / 32, warps = gh_grid_threads() / 32;
    const uint64_t share = min((words + warps - 1) / warps, (uint64_t)SLAB_GATHER_OPS / 32);
    /* Where this lane's operation stands in a run of 32 gathered: dealt round-robin to the tiles. */
    const unsigned dealt = lane % GH_SLAB_TILE * (32u / GH_SLAB_TILE) + lane / GH_SLAB_TILE;
    for (uint64_t first = gh_thread_index() / 32 * share; first < words; first += warps * share) {
      uint32_t bits = lane < share && first + lane < words ? A.retry_bits[first + lane] : 0u;
      /* This lane's place in the warp's order: the set bits of the lanes before it. */
      const unsigned count = (unsigned)__popc(bits);
      unsigned before = count;
#pragma unroll
      for (unsigned d = 1; d < 32; d <<= 1) {
        const unsigned below = __shfl_up_sync(0xFFFFFFFFu, before, d);
        if (lane >= d) before += below;
      }
      const unsigned gathered_n = __shfl_sync(0xFFFFFFFFu, before, 31);
      before -= count;
      for (; bits; bits &= bits - 1u) order[before++] = (uint16_t)(lane * 32u + gh_slab_lowest(bits));
      __syncwarp();
      for (unsigned at = 0; at < gathered_n; at += 32) {
        const bool active = at + dealt < gathered_n;
        const uint64_t i = first * 32 + (active ? order[at + dealt] : 0u);
        uint64_t key = 0, value = 0;
        if (active) read_op<KB, VB>(A, i, &key, &value);
        slab_ops_step<KB, VB, ONLY>(tile, A, &ta, i, active, key, value, &tally);
      }
      __syncwarp();
    }
  } else if (A.n > 0) {
    /* The loads ahead read operation min(i, n - 1): unconditional, so that the load lands in its
     * register with no select that would wait for it at once. */
    const uint64_t stride = gh_grid_threads(), last = A.n - 1;
    uint64_t next_key = 0, next_value = 0;
    if (ONLY != SLAB_ANY) read_op<KB, VB>(A, min(gh_thread_index(), last), &next_key, &next_value);
    for (uint64_t i = gh_thread_index(); i < gh_warp_rounded(A.n); i += stride) {
      const bool active = i < A.n;
      uint64_t key = next_key, value = next_value;
      if (ONLY != SLAB_ANY) read_op<KB, VB>(A, min(i + stride, last), &next_key, &next_value);
      else if (active) read_op<KB, VB>(A, i, &key, &value);
      slab_ops_step<KB, VB, ONLY>(tile, A, &ta, i, active, key, value, &tally);
    }
  }
  gh_warp_add(&A.counters->call.inserted, tally.inserted);
  gh_warp_add(&A.counters->call.failed, tally.failed);
  gh_warp_add(&A.counters->call.removed, tally.removed);
  gh_warp_add(&A.counters->call.erased, tally.erased);
  gh_warp_add(&A.counters->call.total, tally.total);
  gh_warp_add(&A.counters->size, tally.inserted - tally.removed);
}

/* FLUSH: one thread per list. */
__global__ void slab_compact_kernel(gh_slab_geometry g, uint32_t *base, gh_slab_pool pool, gh_slab_counters *counters) {
  for (uint64_t b = gh_thread_index(); b < g.buckets + 2; b += gh_grid_threads())
    gh_slab_compact_list(&g, &pool, &counters->slabs_in_use, base + b * GH_SLAB_LANES);
}

/* Doubling the buckets: gh_slab_split_list's split (the host's), a tile per list. The tile reads a
 * slab at once, ranks the live entries bound for each half with a scan over its lanes and writes
 * them straight to their places; an output that fills continues in the oldest old slab not taken
 * yet, which the tile has always read already (it holds the slab it reads in its registers). */

/* Empties a slab's words from word `from` to the auxiliary lane and sets its next address, the
 * tile together (a lane its four words, one 16-byte store where all four are emptied). */
static __device__ void tile_seal(const gh_device_group &tile, uint32_t *slab, unsigned from, uint32_t next) {
  const unsigned w0 = tile.rank * GH_SLAB_TILE_WORDS;
  const uint32_t last = tile.rank == GH_SLAB_TILE - 1u ? next : GH_SLAB_NULL;
  if (w0 >= from) {
    ((uint4 *)slab)[tile.rank] = make_uint4(GH_SLAB_NULL, GH_SLAB_NULL, GH_SLAB_NULL, last);
  } else {
    for (unsigned k = 0; k < GH_SLAB_TILE_WORDS; ++k)
      if (w0 + k >= from) slab[w0 + k] = k == GH_SLAB_TILE_WORDS - 1u ? last : GH_SLAB_NULL;
  }
}

/* One output list of a split: its slab being filled and the entries in it. */
typedef struct split_output {
  uint32_t *slab;
  unsigned fill;
} split_output;

/* Makes room for `incoming` more entries in out: a full slab is sealed and linked to the oldest old
 * slab not taken yet (*reusable), which the output continues in (returned; out->slab otherwise). */
static __device__ uint32_t *split_room(const gh_device_group &tile, const gh_slab_pool &pool, unsigned per_slab,
                                       unsigned full_words, split_output *out, unsigned incoming, uint32_t *reusable) {
  if (out->fill + incoming <= per_slab) return out->slab;
  uint32_t *taken = gh_slab_at(&pool, *reusable);
  const uint32_t after = __shfl_sync(tile.mask, __ldcg(taken + GH_SLAB_NEXT_LANE), (int)tile.first_lane);
  tile_seal(tile, out->slab, full_words, *reusable);
  *reusable = after;
  return taken;
}

template <unsigned KB, unsigned VB>
__global__ void slab_split_kernel(gh_slab_geometry g, uint32_t *old_base, gh_slab_pool pool,
                                  unsigned long long *in_use, uint32_t *new_base) {
  typedef gh_slab_shape<KB, VB> S;
  const gh_device_group tile = gh_device_group_make(GH_SLAB_TILE);
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  const uint64_t empty = gh_slot_empty_key(KB);
  const unsigned full_words = S::per_slab * S::words;
  gh_slab_geometry doubled = g;
  doubled.buckets *= 2u;
  const uint64_t tiles = gh_grid_threads() / GH_SLAB_TILE;
  for (uint64_t b = gh_thread_index() / GH_SLAB_TILE; b < g.buckets + 2; b += tiles) {
    const uint64_t first = b >= g.buckets ? b + g.buckets : 2u * b;
    /* The two halves as scalars (a GPU would index arrays of them in local memory). */
    split_output out0 = {new_base + first * GH_SLAB_LANES, 0}, out1 = {out0.slab + GH_SLAB_LANES, 0};
    uint32_t *slab = old_base + b * GH_SLAB_LANES;
    uint32_t reusable = GH_SLAB_NULL;
    for (bool at_base = true; slab != NULL; at_base = false) {
      const uint4 w = gh_slab_load(tile, slab);
      const uint32_t next = __shfl_sync(tile.mask, w.w, (int)(tile.first_lane + GH_SLAB_TILE - 1u));
      if (at_base) reusable = next;
      /* This lane's live entries, and which go to the second half (bit k: the entry at word k). */
      unsigned live = 0, second = 0;
#pragma unroll
      for (unsigned k = 0; k < GH_SLAB_TILE_WORDS; k += S::words) {
        const uint64_t key = gh_slot_bits_key(f, gh_slab_entry_in<KB, VB>(w, k));
        const bool here = key != empty && key != empty - 1u;
        live |= (unsigned)here << k;
        second |= (unsigned)(here && gh_slab_split_half(&doubled, b, first, key)) << k;
      }
      live &= gh_slab_entry_words<KB, VB>(tile);
      second &= live;
      /* Ranks per half: the counts of both, 8 bits each, scanned over the lanes at once. */
      const unsigned mine = (unsigned)__popc((int)(live & ~second)) | (unsigned)__popc((int)second) << 8;
      const unsigned before = lanes_before(tile, mine);
      const unsigned total = __shfl_sync(tile.mask, before + mine, (int)(tile.first_lane + GH_SLAB_TILE - 1u));
      const unsigned total0 = total & 0xFFu, total1 = total >> 8;
      uint32_t *spill0 = split_room(tile, pool, S::per_slab, full_words, &out0, total0, &reusable);
      uint32_t *spill1 = split_room(tile, pool, S::per_slab, full_words, &out1, total1, &reusable);
      unsigned at0 = out0.fill + (before & 0xFFu), at1 = out1.fill + (before >> 8);
#pragma unroll
      for (unsigned k = 0; k < GH_SLAB_TILE_WORDS; k += S::words) {
        if (!((live >> k) & 1u)) continue;
        const bool upper = (second >> k) & 1u;
        const unsigned at = upper ? at1++ : at0++;
        uint32_t *to = at < S::per_slab ? (upper ? out1.slab : out0.slab) : (upper ? spill1 : spill0);
        gh_slot_write(f, gh_slab_entry(f, to, at % S::per_slab), gh_slab_entry_in<KB, VB>(w, k));
      }
      out0.fill += total0;
      out1.fill += total1;
      if (out0.fill > S::per_slab) out0.slab = spill0, out0.fill -= S::per_slab;
      if (out1.fill > S::per_slab) out1.slab = spill1, out1.fill -= S::per_slab;
      slab = next == GH_SLAB_NULL ? NULL : gh_slab_at(&pool, next);
    }
    tile_seal(tile, out0.slab, out0.fill * S::words, GH_SLAB_NULL);
    if (b < g.buckets) tile_seal(tile, out1.slab, out1.fill * S::words, GH_SLAB_NULL);
    /* The old slabs the split did not need go back to SlabAlloc. */
    for (; tile.rank == 0 && reusable != GH_SLAB_NULL;) {
      const uint32_t after = __ldcg(gh_slab_at(&pool, reusable) + GH_SLAB_NEXT_LANE);
      gh_slab_free(&pool, in_use, reusable);
      reusable = after;
    }
    __syncwarp(tile.mask);
  }
}

/* Export: one thread per list; the threads of a warp step through their lists together, one slab
 * each per step, and take output positions with one atomic per warp and step. */
template <unsigned KB, unsigned VB>
__global__ void slab_export_kernel(gh_slab_geometry g, uint32_t *base, gh_slab_pool pool, void *keys_out,
                                   void *values_out, gh_slab_counters *counters) {
  const gh_slot_format f = gh_slot_format_make(KB, VB);
  const uint64_t empty = gh_slot_empty_key(KB), lists = g.buckets + 2;
  for (uint64_t b = gh_thread_index(); b < gh_warp_rounded(lists); b += gh_grid_threads()) {
    uint32_t *slab = b < lists ? base + b * GH_SLAB_LANES : NULL;
    while (__any_sync(0xFFFFFFFFu, slab != NULL)) {
      unsigned live = 0; /* entries of this slab that hold a key */
      for (unsigned i = 0; slab != NULL && i < g.per_slab; ++i) {
        const uint64_t k = gh_slot_load_key(f, gh_slab_entry(f, slab, i));
        live |= (unsigned)(k != empty && k != empty - 1u) << i;
      }
      uint64_t at = gh_warp_reserve_n(&counters->call.total, (unsigned)__popc((int)live));
      for (; live; live &= live - 1u, ++at) {
        const void *e = gh_slab_entry(f, slab, gh_slab_lowest(live));
        gh__write_word(keys_out, at, KB, gh_slab_user_key(&g, b, gh_slot_load_key(f, e)));
        if (VB && values_out) gh__write_word(values_out, at, VB, gh_slot_load_value(f, e));
      }
      if (slab != NULL) slab = gh_slab_next(&pool, slab);
    }
  }
}

/* ---- Launching --------------------------------------------------------------------------------------- */

typedef struct slab_kernels {
  const void *ops, *insert, *find, *export_all, *split;
} slab_kernels;

static slab_kernels kernels_for(const gh_slab_geometry &g) {
  slab_kernels k = {NULL, NULL, NULL, NULL, NULL};
#define GH_SLAB_KERNELS_CASE(kb, vb)                                                   \
  if (g.format.key_bits == kb && g.format.value_bits == vb) {                          \
    k.ops = (const void *)slab_ops_kernel<kb, vb, SLAB_ANY>;                           \
    k.insert = (const void *)slab_ops_kernel<kb, vb, SLAB_INSERT>;                     \
    k.find = (const void *)slab_ops_kernel<kb, vb, SLAB_FIND>;                         \
    k.export_all = (const void *)slab_export_kernel<kb, vb>;                           \
    k.split = (const void *)slab_split_kernel<kb, vb>;                                 \
  }
  GH_WIDTHS(GH_SLAB_KERNELS_CASE)
#undef GH_SLAB_KERNELS_CASE
  return k;
}

/* A launch's arguments: operation `op` on n keys (a kernel's other inputs and outputs unset). */
static slab_args args_for(gh_table *t, int op, const void *keys, uint64_t n) {
  gh_slab_table *s = state(t);
  slab_args a;
  memset(&a, 0, sizeof a);
  a.T = gh__slab_device_table(s);
  a.counters = s->counters;
  a.op = op;
  a.keys = keys;
  a.n = n;
  return a;
}

/* The instantiation that runs a launch: gh_find's own, the general one otherwise (gh_insert's head
 * pass is launched by run_batch before it). */
static const void *ops_kernel(const slab_args *a) {
  const slab_kernels k = kernels_for(a->T.g);
  return a->ops == NULL && a->op == SLAB_FIND ? k.find : k.ops;
}

/* Runs the operations kernel; reads the call's counters back (the op's one wait). */
static gh_status run_ops(gh_table *t, slab_args *a, gh_slab_call_counters *after, void *stream) {
  void *args[] = {a};
  return gh__cuda_launch_counted(t, ops_kernel(a), a->n, kBlockThreads, args, &state(t)->counters->call,
                                 after, sizeof *after, stream);
}

/* The arguments of an update batch's kernel. */
static slab_args batch_args(gh_table *t, const gh_slab_batch *b) {
  slab_args a = args_for(t, SLAB_INSERT, b->keys, b->n);
  a.ops = b->ops;
  a.values = b->values;
  a.values_out = b->values_out;
  a.results_out = b->results_out;
  a.insert_failed_only = b->ops == NULL;
  a.retry_bits = b->retry_bits;
  a.rerun = b->rerun;
  a.policy = b->policy;
  a.mode = (int)b->mode;
  a.erase_all = b->ops != NULL && t->config.variant == GH_VARIANT_MULTIVALUE;
  return a;
}

/* One spare slab per resident tile of the kernel that runs the batch. */
static uint64_t spares(gh_table *t, const gh_slab_batch *b) {
  const slab_args a = batch_args(t, b);
  return (uint64_t)gh_cuda_resident_grid(b->n, ops_kernel(&a), kBlockThreads) * (kBlockThreads / GH_SLAB_TILE) + 1;
}

/* A batch's kernels. gh_insert's first run is two: its head pass (which takes no slab), then the
 * general kernel on the operations the pass left, flagged in the retry bits (a rerun of those). */
static gh_status run_batch(gh_table *t, const gh_slab_batch *b, uint64_t *failed, void *stream) {
  slab_args a = batch_args(t, b); /* after the reservation: the pool may have grown */
  gh_slab_call_counters after;
  gh_status status = GH_OK;
  if (a.ops == NULL && !a.rerun && a.retry_bits != NULL) {
    void *args[] = {&a};
    status = gh__cuda_launch(t, kernels_for(a.T.g).insert, a.n, kBlockThreads, args, stream);
    a.rerun = 1;
  }
  if (status == GH_OK) status = run_ops(t, &a, &after, stream);
  if (status == GH_OK) *failed = after.failed;
  return status;
}

static gh_status split_lists(gh_table *t, uint32_t *new_base, void *stream) {
  gh_slab_table *s = state(t);
  gh_slab_geometry g = s->geometry;
  gh_slab_pool pool = s->pool;
  unsigned long long *in_use = &s->counters->slabs_in_use;
  void *args[] = {&g, &s->base, &pool, &in_use, &new_base};
  return gh__cuda_launch(t, kernels_for(g).split, (g.buckets + 2) * GH_SLAB_TILE, kBlockThreads, args, stream);
}

static const gh_slab_batch_runner cuda_runner = {spares, run_batch, split_lists};

/* ---- Ops ----------------------------------------------------------------------------------------------- */

static gh_status cuda_insert(gh_table *t, const void *keys, const void *values, uint64_t n, gh_dup_policy policy,
                             uint8_t *failed_out, uint64_t *failed, void *stream) {
  const gh_slab_batch b = {NULL, keys, values, n, NULL, failed_out, (int)policy,
                           gh_slab_insert_mode_for(t->config.variant == GH_VARIANT_MULTIVALUE, 0), NULL, 0};
  return gh__slab_run_batch(t, &cuda_runner, &b, failed, stream);
}

static gh_status cuda_find(gh_table *t, const void *keys, uint64_t n, void *values_out, uint8_t *found_out,
                           const void *default_value, void *stream) {
  slab_args a = args_for(t, SLAB_FIND, keys, n);
  a.values_out = values_out;
  a.results_out = found_out;
  a.default_value = gh__value_word(t, default_value);
  void *args[] = {&a};
  return gh__cuda_launch(t, ops_kernel(&a), n, kBlockThreads, args, stream);
}

static gh_status cuda_erase(gh_table *t, const void *keys, uint64_t n, uint8_t *erased_out, uint64_t *erased,
                            void *stream) {
  slab_args a = args_for(t, SLAB_ERASE, keys, n);
  gh_scratch first = {NULL, 0, GH_MEMORY_DEVICE, 0, NULL};
  gh_status status = GH_OK;
  a.results_out = erased_out;
  if (t->config.variant == GH_VARIANT_MULTIVALUE) {
    /* Two phases: every op finds its key's first entry, then the op whose CAS tombstones it is the
     * one position flagged, and all remove what is left. */
    status = gh__scratch_alloc(t, &first, (size_t)n * sizeof(void *));
    if (status != GH_OK) return status;
    a.first = (void **)first.ptr;
    a.op = SLAB_FIRST;
    void *args[] = {&a};
    status = gh__cuda_launch(t, kernels_for(a.T.g).ops, n, kBlockThreads, args, stream);
    a.op = SLAB_ELECT;
  }
  gh_slab_call_counters after;
  if (status == GH_OK) status = run_ops(t, &a, &after, stream);
  gh__scratch_free(t, &first, stream);
  if (status == GH_OK) *erased = after.erased;
  return status;
}

/* Every key's number of values into numbers (one COUNT run), and their total. */
static gh_status count_values(gh_table *t, const void *keys, uint64_t n, uint64_t *numbers, uint64_t *total,
                              void *stream) {
  slab_args a = args_for(t, SLAB_COUNT, keys, n);
  a.numbers = numbers;
  gh_slab_call_counters after;
  const gh_status status = run_ops(t, &a, &after, stream);
  if (status == GH_OK && total) *total = after.total;
  return status;
}

static gh_status cuda_count(gh_table *t, const void *keys, uint64_t n, uint64_t *counts_out, uint64_t *total,
                            void *stream) {
  return count_values(t, keys, n, counts_out, total, stream);
}

static gh_status cuda_find_all(gh_table *t, const void *keys, uint64_t n, uint64_t *offsets_out, void *values_out,
                               uint64_t values_capacity, void *stream) {
  gh_status status = count_values(t, keys, n, offsets_out, NULL, stream);
  if (status == GH_OK) status = gh__find_all_offsets(t, offsets_out, n, values_capacity, stream);
  if (status != GH_OK || values_out == NULL) return status;
  slab_args a = args_for(t, SLAB_FILL, keys, n);
  a.numbers = offsets_out;
  a.values_out = values_out;
  void *args[] = {&a};
  return gh__cuda_launch(t, kernels_for(a.T.g).ops, n, kBlockThreads, args, stream);
}

static gh_status cuda_export(gh_table *t, void *keys_out, void *values_out, uint64_t *count, void *stream) {
  gh_slab_table *s = state(t);
  gh_slab_geometry g = s->geometry;
  gh_slab_pool pool = s->pool;
  void *args[] = {&g, &s->base, &pool, &keys_out, &values_out, &s->counters};
  gh_slab_call_counters after;
  const gh_status status = gh__cuda_launch_counted(t, kernels_for(g).export_all, g.buckets + 2, kBlockThreads,
                                                   args, &s->counters->call, &after, sizeof after, stream);
  if (status == GH_OK) *count = after.total;
  return status;
}

static gh_status cuda_mixed(gh_table *t, const uint8_t *ops, const void *keys, const void *values, uint64_t n,
                            gh_dup_policy policy, void *values_out, uint8_t *results_out, uint64_t *failed,
                            void *stream) {
  const gh_slab_batch b = {ops, keys, values, n, values_out, results_out, (int)policy,
                           gh_slab_insert_mode_for(t->config.variant == GH_VARIANT_MULTIVALUE, 1), NULL, 0};
  return gh__slab_run_batch(t, &cuda_runner, &b, failed, stream);
}

static gh_status cuda_compact(gh_table *t, void *stream) {
  gh_slab_table *s = state(t);
  gh_slab_geometry g = s->geometry;
  gh_slab_pool pool = s->pool;
  void *args[] = {&g, &s->base, &pool, &s->counters};
  const gh_status status =
      gh__cuda_launch(t, (const void *)slab_compact_kernel, g.buckets + 2, kBlockThreads, args, stream);
  return status == GH_OK ? gh__slab_refresh(t, stream) : status;
}

/* The view points at a copy of the device table in device memory, made on the first call and kept
 * current by every batch after it (gh__slab_run_batch). */
static gh_status cuda_device_view(gh_table *t, gh_device_view *view) {
  gh_slab_table *s = state(t);
  const gh_status status = gh__view_record(t, (void **)&s->published, sizeof *s->published, gh__slab_publish);
  if (status != GH_OK) return status;
  memset(view, 0, sizeof *view);
  view->design = GH_SLAB;
  view->key_bits = s->geometry.format.key_bits;
  view->value_bits = s->geometry.format.value_bits;
  view->slot_bytes = s->geometry.format.slot_bytes;
  view->slots = s->published;
  view->size = &s->counters->size;
  view->status_word = NULL;
  view->seed = s->geometry.seed;
  view->layout[0] = (uint64_t)t->config.variant;
  return gh__sync(t, NULL);
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
    .device_view = cuda_device_view,
    .take_flags = NULL,
    .mixed = cuda_mixed,
    .compact = cuda_compact,
    .join = NULL,
};
