/*
 * gpuhash.h - GPU hash tables behind one C API.
 *
 * Plain C11; usable from C and C++; needs no CUDA header. Sections go from simple to advanced:
 *   1. version               5. bulk operations
 *   2. status codes          6. introspection and maintenance
 *   3. configuration         7. device-side view (include/gpuhash/<design>.cuh)
 *   4. create / destroy
 *
 * Conventions that hold for every function below:
 *   - Array arguments may live in host memory (pageable or pinned) or in device memory
 *     (cudaMalloc or managed); the library detects which and copies when it must.
 *   - Bulk operations take the stream last (a cudaStream_t passed as gh_stream, NULL = the
 *     default stream). All their work - copies of arrays that live on the other side included -
 *     is queued on that stream, and they SYNCHRONISE it once, before returning, because the
 *     status they return (keys that did not fit, say) is only known once the work has finished.
 *     Where a design needs a count on the host in the middle (the keys an insert could not place,
 *     the keys an erase removed, the keys an export wrote) that read is a wait on the same
 *     stream. The host backend runs the work on CPU threads and only uses the stream for
 *     copies of device arrays. Which calls wait for what:
 *       gh_insert, gh_find, gh_contains, gh_erase, gh_count, gh_find_all, gh_export,
 *       gh_keys_of_ids, gh_clear, gh_join_count, gh_join, gh_semi_join
 *                                          the stream passed, once, before returning
 *       gh_create ........................ the device's default stream (the table is cleared there)
 *       gh_destroy, gh_take_status_flags . the whole device (user kernels on a device view too)
 *       gh_size, gh_get_stats, gh_validate  read the table on the default stream (synchronous)
 *       gh_capacity, gh_memory_usage, gh_get_config, gh_get_device_view, gh_design_info, ...
 *                                          no device work
 *   - A table is not thread-safe: calls on one table must not overlap. Different tables are
 *     independent.
 *   - Every operation is all-or-nothing. A call that fails (bad argument, allocation failure,
 *     CUDA error) returns a status other than GH_OK, leaves the table exactly as it was (valid,
 *     holding every key it held before, with the same values) and says what happened and what
 *     was kept in gh_last_error(). The one partial result is GH_ERR_TABLE_FULL from gh_insert
 *     (designs that report it, see gh_design_info): the keys that fit are in, the others are
 *     flagged, nothing else changed.
 *   - Outputs on failure: a failed call writes no output array and no output count, except where
 *     its entry below says otherwise (gh_insert's failed_out on GH_ERR_TABLE_FULL, gh_find_all's
 *     offsets_out on GH_ERR_BUFFER_TOO_SMALL, gh_keys_of_ids on ids out of range). Output
 *     counts the call zeroes first (gh_erase's *erased_count, gh_export's *count) say so.
 *   - gh_last_error() is "" after every call that returns GH_OK.
 *   - The allocator (gh_config.allocator) may fail at any call; every allocation an operation
 *     needs is made before it changes the table, and frees always pass the size allocated.
 *   - Keys and values are unsigned integers of the configured width. Every key value is
 *     usable, including the all-ones patterns the tables use internally (stored out of band).
 */
#ifndef GPUHASH_H
#define GPUHASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* 1. Version                                                                                */
/* ---------------------------------------------------------------------------------------- */

#define GH_VERSION_MAJOR 0
#define GH_VERSION_MINOR 2
#define GH_VERSION_PATCH 0
#define GH_VERSION_NUMBER (GH_VERSION_MAJOR * 10000 + GH_VERSION_MINOR * 100 + GH_VERSION_PATCH)

/** Returns GH_VERSION_NUMBER of the library actually linked. */
unsigned gh_version_number(void);

/* ---------------------------------------------------------------------------------------- */
/* 2. Status codes                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* One list generates the enum, gh_status_name() and gh_status_str(). Values never change once
 * released; new codes are appended. */
#define GH_STATUS_LIST(X)                                                                      \
  X(GH_OK, 0, "success")                                                                      \
  X(GH_ERR_INVALID_ARGUMENT, 1, "an argument is invalid (NULL, zero, out of range)")         \
  X(GH_ERR_OUT_OF_MEMORY, 2, "a host or device allocation failed")                            \
  X(GH_ERR_TABLE_FULL, 3, "some keys did not fit: table full or probe limit reached")         \
  X(GH_ERR_UNSUPPORTED, 4, "the design or backend does not support this operation")          \
  X(GH_ERR_NO_DEVICE, 5, "no usable CUDA device, or the library was built without CUDA")     \
  X(GH_ERR_CUDA, 6, "a CUDA runtime call failed")                                            \
  X(GH_ERR_CORRUPT, 7, "validation found a broken invariant")                                \
  X(GH_ERR_BUFFER_TOO_SMALL, 8, "an output buffer is smaller than the result")               \
  X(GH_ERR_INTERNAL, 9, "internal error (a bug: please report it)")                         \
  X(GH_ERR_PEER, 10, "a peer failed: an NCCL error, a timeout, a rank that left")            \
  X(GH_ERR_BAD_IMAGE, 11, "not a table image this gpuhash can load: format, version, size, checksum")

typedef enum gh_status {
#define GH_STATUS_ENUM_ENTRY(name, value, text) name = value,
  GH_STATUS_LIST(GH_STATUS_ENUM_ENTRY)
#undef GH_STATUS_ENUM_ENTRY
} gh_status;

/** The enumerator's name ("GH_ERR_TABLE_FULL"); "GH_UNKNOWN_STATUS" for other values. */
const char *gh_status_name(gh_status status);
/** A one-line description of the status; never NULL. */
const char *gh_status_str(gh_status status);

/* ---------------------------------------------------------------------------------------- */
/* 3. Configuration                                                                          */
/* ---------------------------------------------------------------------------------------- */

/** The table designs. Values are stable. */
typedef enum gh_design {
  GH_WARPDRIVE = 1, /* open addressing, cooperative-group probing (Juenger et al.) */
  GH_CUCKOO = 2,    /* static cuckoo hashing (Alcantara et al.) */
  GH_SLAB = 3,      /* dynamic chaining with SlabAlloc (Ashkiani et al.) */
  GH_DYCUCKOO = 4,  /* dynamic cuckoo with resizing (Li et al.) */
  GH_HASHGRAPH = 5  /* CSR multi-value table (Green) */
} gh_design;

/** Where the table lives and its operations run. */
typedef enum gh_backend {
  GH_BACKEND_AUTO = 0, /* CUDA when a device is usable, the host otherwise */
  GH_BACKEND_HOST = 1, /* multi-threaded CPU, same layout and semantics */
  GH_BACKEND_CUDA = 2  /* the GPU */
} gh_backend;

/** What insert does with a key that is already present (also within one batch). Values are
 * treated as unsigned integers of the configured width; ADD wraps around. */
typedef enum gh_dup_policy {
  GH_KEEP_FIRST = 0, /* the stored value stays; within one batch an arbitrary one wins */
  GH_OVERWRITE = 1,  /* the new value replaces it; within one batch an arbitrary one wins */
  GH_ADD = 2,        /* stored += new (sums every duplicate of the batch) */
  GH_MIN = 3,        /* stored = min(stored, new) */
  GH_MAX = 4,        /* stored = max(stored, new) */
  GH_APPEND = 5      /* multi-value tables (and only they): the value joins the key's values */
} gh_dup_policy;

/** What a table stores per key. Values are stable. */
typedef enum gh_variant {
  GH_VARIANT_MAP = 0,        /* one value per key; a set when value_bits = 0 */
  /* cuckoo: a set that gives each distinct key a dense id 0..u-1 (its value, value_bits wide)
   * and keeps the keys in id order, so key -> id (gh_find) and id -> key (gh_keys_of_ids) are
   * both O(1). Ids never change; new keys get the next ones. Insert takes keys only. */
  GH_VARIANT_COMPACTING = 1,
  /* cuckoo, slab, hashgraph: any number of values per key (policy GH_APPEND): gh_count and gh_find_all read
   * them; gh_size counts (key, value) pairs; gh_erase removes every value of a key. */
  GH_VARIANT_MULTIVALUE = 2
} gh_variant;

/** Cuckoo hash function families (Alcantara et al. section 4.3.1.1); a and b are random per
 * function and per build attempt, p is a prime above the key range. */
typedef enum gh_hash_family {
  GH_HASH_MULTIPLY = 0, /* h_i(k) = (a_i * k + b_i) mod p mod slots */
  GH_HASH_XOR = 1       /* h_i(k) = ((a_i xor k) + b_i) mod p mod slots */
} gh_hash_family;

/** Where an allocation must live. */
typedef enum gh_memory_kind { GH_MEMORY_HOST = 0, GH_MEMORY_DEVICE = 1 } gh_memory_kind;

/** A pluggable allocator. alloc returns NULL on failure; device allocations must be usable by
 * the table's CUDA device and aligned to at least 16 bytes (tables read and swap slots in 16-byte
 * units; cudaMalloc gives 256). Host allocations must be aligned to at least 64 bytes. All fields
 * NULL selects the built-in allocator (aligned malloc / cudaMalloc), whose large per-call scratch
 * on the device comes from a stream-ordered memory pool of gpuhash's own: memory a call frees
 * stays in that pool for the next call (not free for other cudaMalloc) until a table is destroyed
 * or a table's own cudaMalloc runs out, which give the pool's unused memory back. A given
 * allocator takes every allocation. */
typedef struct gh_allocator {
  void *(*alloc)(void *ctx, size_t bytes, gh_memory_kind kind);
  void (*free)(void *ctx, void *ptr, size_t bytes, gh_memory_kind kind);
  void *ctx;
} gh_allocator;

/** The largest value_bits (128-byte values), for designs with GH_CAP_VALUE_RECORDS. */
#define GH_MAX_VALUE_BITS 1024u

/** Table configuration. Always start from gh_config_default(design), then change fields.
 *
 * The struct can grow without breaking programs built against an older gpuhash.h: its first two
 * fields record the size and version of the header the caller compiled with (gh_config_default
 * fills them), and gh_create, gh_config_validate and gh_memory_estimate read only struct_size
 * bytes, giving every field added since then its default. New design knobs are appended at the
 * end; fields are never removed or reordered. A struct_size smaller than any released gh_config,
 * or larger than the linked library's (a program built against a newer header than the library
 * it runs with), is refused with GH_ERR_INVALID_ARGUMENT and a message that says which. */
typedef struct gh_config {
  size_t struct_size;  /* sizeof(gh_config) as the caller compiled it: set by gh_config_default */
  unsigned version;    /* GH_VERSION_NUMBER the caller compiled with: set by gh_config_default */
  gh_design design;
  gh_backend backend;  /* default GH_BACKEND_AUTO */
  int device;          /* CUDA device ordinal for the CUDA backend; default 0 */
  unsigned key_bits;   /* 32 or 64; default 32 */
  /* 0 (a set), 32 or 64; default 32. Designs with GH_CAP_VALUE_RECORDS (dycuckoo) also take any
   * multiple of 8 up to GH_MAX_VALUE_BITS: values of value_bits / 8 bytes (a 24-byte record is
   * value_bits 192). Values of 32 and 64 bits are unsigned integers; values of any other size are
   * opaque records, copied in and out as bytes (every values array of the API then holds
   * value_bits / 8 bytes per entry, packed, at any alignment), which take the policies GH_KEEP_FIRST
   * and GH_OVERWRITE only. The other designs refuse other sizes with GH_ERR_INVALID_ARGUMENT. */
  unsigned value_bits;
  /* warpdrive: slots wanted (>= 1), rounded up. cuckoo: keys the table is sized for; it holds
   * capacity * table_factor slots and grows by itself when more keys arrive. slab: keys the base
   * slabs are sized for at first (with slab_load); chains grow beyond it, and so do the buckets
   * (see slab_load). See gh_capacity().
   * Default 1<<20. */
  uint64_t capacity;
  /* warpdrive: lanes per cooperative group and slots per probing window: 1, 2, 4, 8, 16 or 32.
   * The probe sequence depends on it, so it is fixed for the table's life. Default 4. */
  unsigned group_size;
  /* warpdrive: most probing windows visited per key before the key is reported as not fitting;
   * 0 = the default, min(W, 4096 * 32 / group_size); larger values are cut to W. W = the windows
   * in the table plus the windows a key's sequence keeps in one region of the table: tables of
   * 2048 windows or more fall into a prime number (>= 1024) of regions of at most 64 KB of slots,
   * and a sequence's first min(16, windows of a region) windows stay in the region of its first;
   * after them, it visits every window. Smaller tables: plain double hashing, W = their windows. */
  uint64_t max_probe_windows;
  uint64_t seed;       /* hash seed; tables with equal seeds and configs lay out keys alike */
  gh_variant variant;  /* default GH_VARIANT_MAP; the others: see gh_design_traits.variants */
  /* cuckoo: number of hash functions d, 2..5 (default 4); a key lives in one of its d slots, so
   * a lookup reads at most d slots. dycuckoo: the number of subtables d, 2..8 (default 4); a key
   * lives in its bucket (one 128-byte line of keys) of one of them. */
  unsigned hash_functions;
  gh_hash_family hash_family; /* cuckoo: default GH_HASH_MULTIPLY */
  /* cuckoo: slots per key, default 1.25. Near what d functions can hold at all, builds fail
   * again and again, so smaller factors are rejected: d = 2 needs >= 2.1, 3 >= 1.1, 4 >= 1.03,
   * 5 >= 1.02 (the smallest practical sizes the chapter reports); with buckets (bucket_slots)
   * >= 1.05 (4 slots) or 1.02 (8, 16) for every d. At most 16. */
  double table_factor;
  unsigned host_threads; /* host backend worker threads; 0 = one per online CPU */
  gh_allocator allocator;
  /* ---- appended after 0.2.0 ---- */
  /* slab: the wanted average fill of the base slabs; base buckets = ceil(capacity /
   * (entries per slab * slab_load)). 0.05..16; default 0.6. Larger values mean longer chains.
   * The base buckets grow: before an insert or mixed batch that would take the average fill past
   * 1.1 * slab_load, their number doubles (every list split in two in place), and doubles again
   * while the fill would still pass slab_load; without memory for that the table goes on in the
   * buckets it has. */
  double slab_load;
  /* slab: 0 (default) = SlabAlloc with super blocks added as the table grows; 1 = SlabAlloc-light,
   * one contiguous array of slabs that is reallocated (doubled) as it grows: for small tables. */
  int slab_light;
  /* ---- appended after 0.3 ---- */
  /* dycuckoo: the filled factor theta = keys / slots is kept within [fill_min, fill_max] (the
   * paper's alpha and beta): a batch that would take it above fill_max doubles the smallest
   * subtable first (as often as needed), one that leaves it below fill_min halves the largest.
   * 0 < fill_min < fill_max * d / (d + 1), fill_max <= 0.95; defaults 0.4 and 0.9. capacity
   * sizes the subtables at creation (for capacity keys at fill_max) and is their floor: a table
   * never halves below it, so one sized ahead for its peak never shrinks (1 = start from one
   * bucket per subtable). gh_clear returns to that size. */
  double fill_min;
  double fill_max;
  /* ---- appended after 0.4 ---- */
  /* hashgraph: keys per vertex (hash value) of the CSR table, 0.25..4 (default 1): a build of E
   * entries uses ceil(E / load_factor) vertices. Larger values mean fewer vertices and longer
   * lists; the table's size in edges is always the number of entries. */
  double load_factor;
  /* ---- appended after 0.5 ---- */
  /* hashgraph: vertices per bin of the CUDA backend's build V2, a power of two from 1024 to 32768,
   * or 0 (default): chosen per build, bins of about 8192 entries (1024 .. 32768 vertices at load
   * factors 4 .. 0.25), larger when there would be more than 32768 bins. A block builds a bin's
   * part of the table with a 32-bit counter per vertex in shared memory (32768 vertices: 128 KB,
   * one block an SM). V2 takes up to 32768 bins (2^30 vertices with the largest); beyond, or with
   * a fixed size that makes more bins, the slower build V1 runs. Tables are the same whatever the
   * value (up to the order of a vertex's edges). The host backend builds with V1 and ignores it. */
  unsigned bin_vertices;
  /* ---- appended after 0.6 ---- */
  /* warpdrive: batches of at least this many keys take the cache-partitioned bulk insert and
   * erase. The batch is sorted by the region of the table (a run of windows: 64 KB on the CUDA
   * backend, built in a block's shared memory where slots take 4 or 8 bytes, a quarter of the L2
   * where they take 16; 256 KB on the host) that holds the first window of each key's probe
   * sequence; each key then walks the windows of its sequence that lie in that region (the first
   * 16 in tables large enough to have locality regions: see max_probe_windows), region after
   * region. Keys left over go on in further rounds and at last the ordinary way. The table is one
   * the ordinary insert could have built (every key on its probe sequence with no empty slot
   * before it, once), and the erase removes what the ordinary erase would; the call's results,
   * counts, flags and failures are the same. It needs scratch for two copies of the batch's
   * entries (without it the ordinary call runs), and it is not taken for a batch with failed_out
   * or erased_out (whose per-key reports follow the batch's order), for an insert into a table
   * with tombstones (from an erase, until gh_compact or gh_clear), for an erase from a table
   * without locality regions or of 16-byte slots on the CUDA backend, or for a table whose device
   * view was taken (gh_get_device_view: kernels of the caller's may change it alongside, and a
   * region written back whole would lose their changes).
   * 0 = the default: on the CUDA backend, tables of 4- or 8-byte slots and at least four regions,
   * batches of at least 2^20 keys and one key per window; never on the host backend. 1 = every
   * batch it can take; UINT64_MAX = never. A batch whose keys repeat so often that one region
   * would take more entries than four regions have slots goes the ordinary way whatever the value
   * (a block would apply the repeats one after another: 2^27 Zipf keys took 1.46 s on an H100
   * before this rule, about 21 ms with it; docs/benchmarks.md).
   * dycuckoo: an insert of at least this many keys into a table whose subtables hold no keys (a
   * new or cleared table; a batch larger than the room below fill_max: its first chunk) builds by
   * regions: the batch is sorted by region (64 KB of slots, a key and its value in one word: 32-bit
   * keys with values of 0 or 4 bytes, sets of 64-bit keys), each region built in a block's shared
   * memory (on the host, a thread's buffer) with every key in its bucket of the subtable the
   * balancing rule chose, and written out whole; the keys whose bucket was full then go the
   * ordinary way. The table holds the keys the ordinary insert's would, with the values its
   * policy gives (of copies of a key in one batch, an arbitrary one's under GH_KEEP_FIRST and
   * GH_OVERWRITE, as there). Scratch: two copies of the batch as 8-byte words and the sort's
   * (without it the ordinary insert runs), one copy held while the passed keys go in. Not
   * taken for a batch with failed_out, for other widths, or for a table whose device view was
   * taken. 0 = the default: on the CUDA backend, batches of at least 2^20 keys and one key per 16
   * slots into a table of at least four regions; never on the host backend. 1 and UINT64_MAX and
   * the rule for skewed batches as for warpdrive.
   * cuckoo (bucket_slots 4, 8 or 16; 4- or 8-byte slots: 32-bit keys with 32-bit values or none,
   * sets of 64-bit keys): an insert of at least this many keys not stored yet (copies counted) into a
   * table whose slots hold no keys (new or cleared; also the multivalue table's rebuild of its key
   * map on new slots) puts them in their first buckets a region at a time (64 KB of
   * slots, in a block's shared memory; on the host, a thread's buffer), each region written out
   * whole; the keys whose first bucket was full then go the ordinary way. The table holds the keys
   * and values the ordinary insert's would (of copies of a key in one batch, an arbitrary one's
   * under GH_KEEP_FIRST and GH_OVERWRITE). Scratch: a copy of the batch and the sort's (without it
   * the ordinary insert runs). 0 = the default: on the CUDA backend, batches of at least 2^20 keys
   * and one key per 16 slots; never on the host backend. 1 and UINT64_MAX and the rule for skewed
   * batches as for warpdrive. */
  uint64_t bulk_min_keys;
  /* ---- appended after 0.7 ---- */
  /* cuckoo: slots per bucket: 1 (default: the chapter's layout, a key in one of its d slots), 4, 8
   * or 16: bucketed cuckoo hashing, a key in any slot of one of its d buckets of consecutive slots,
   * which a lookup reads whole (4 slots of 8 bytes are one 32-byte sector, 8 two, 16 a 128-byte
   * line); d = 2 is the usual choice (a lookup reads at most two buckets). Buckets hold a table far
   * fuller than single slots: table_factor may go down to 1.05 with 4 slots a bucket and to 1.02
   * with 8 or 16, whatever d. The slots are capacity * table_factor rounded up to whole buckets.
   * Other designs ignore it. */
  unsigned bucket_slots;
  /* ---- appended after 0.8 ---- */
  /* warpdrive: the most scratch memory gh_compact may take, in bytes; 0 = the default, no limit.
   * gh_compact rebuilds the table when the rebuild's scratch (a second slot array and a copy of
   * the pairs) fits under it and can be had, and rehashes in place otherwise, with two bitmaps of a
   * bit a window when they fit, else with none (slower, the same table). The rebuild is the
   * faster; the rehash leaves the table that finds faster (docs/benchmarks.md, Aging). 1 = always
   * in place, with no scratch at all. Other designs ignore it. */
  uint64_t compact_scratch_bytes;
} gh_config;

/** Fills the first struct_size bytes of *config with the defaults for the design (struct_size
 * and version included); use gh_config_default, which passes this header's size and version.
 * Returns GH_ERR_INVALID_ARGUMENT when config is NULL or struct_size is smaller than any released
 * gh_config or not the size of one (nothing written), and when struct_size is larger than this
 * library's gh_config: the fields the library knows are then filled, the rest zeroed, and
 * gh_create / gh_config_validate refuse the struct with a message that says the header is newer
 * than the library. */
gh_status gh_config_init(gh_config *config, size_t struct_size, unsigned version, gh_design design);

/** Every field with its default for the design (an inline wrapper: the struct is the caller's). */
static inline gh_config gh_config_default(gh_design design) {
  gh_config config;
  gh_config_init(&config, sizeof config, GH_VERSION_NUMBER, design);
  return config;
}

/** Checks every field; returns GH_OK or GH_ERR_INVALID_ARGUMENT and writes a message naming the
 * first field out of range into message (if message_size > 0; always NUL-terminated). */
gh_status gh_config_validate(const gh_config *config, char *message, size_t message_size);

/** Bytes of host and device memory a table with this config would take; either out may be NULL. */
gh_status gh_memory_estimate(const gh_config *config, size_t *host_bytes, size_t *device_bytes);

/** What a design can do (gh_design_info). */
#define GH_CAP_ERASE 0x1u          /* gh_erase works on its map / set variant */
#define GH_CAP_REPORTS_FULL 0x2u   /* gh_insert may report GH_ERR_TABLE_FULL (fixed capacity) */
#define GH_CAP_GROWS 0x4u          /* the table enlarges itself; gh_insert never reports full */
#define GH_CAP_DEVICE_VIEW 0x8u    /* gh_get_device_view on the CUDA backend */
#define GH_CAP_STATUS_FLAGS 0x10u  /* operations record GH_FLAG_* bits (gh_take_status_flags) */
#define GH_CAP_GROUP_SIZE 0x20u    /* config.group_size shapes the table */
#define GH_CAP_HASH_FUNCTIONS 0x40u /* config.hash_functions, hash_family, table_factor apply */
#define GH_CAP_MIXED 0x80u         /* gh_mixed (insert, erase and find in one batch) */
#define GH_CAP_VALUE_RECORDS 0x100u /* value_bits may be any multiple of 8 up to GH_MAX_VALUE_BITS */
/* Multi-value tables: gh_insert with values NULL stores each entry's position in the call's keys
 * array (0 .. n - 1) as its value (a join's row index); value_bits 32 takes n <= 2^32. */
#define GH_CAP_INDEX_PAYLOADS 0x200u
#define GH_CAP_JOIN_INTERSECT 0x400u /* the joins take GH_JOIN_INTERSECT */
#define GH_CAP_COMPACT 0x800u      /* gh_compact removes deleted entries */

/** A design's traits, from the library's registry of designs. */
typedef struct gh_design_traits {
  gh_design design;
  const char *name;       /* "warpdrive", "cuckoo", ...: static storage */
  unsigned backends;      /* bits (1u << GH_BACKEND_HOST), (1u << GH_BACKEND_CUDA) built here */
  unsigned variants;      /* bits (1u << gh_variant) it accepts */
  unsigned map_policies;  /* bits (1u << gh_dup_policy) its map / set variant accepts */
  unsigned capabilities;  /* GH_CAP_* */
} gh_design_traits;

/** Fills *traits for a design of this library; GH_ERR_UNSUPPORTED for a design value it does not
 * have (not written then), GH_ERR_INVALID_ARGUMENT for NULL. */
gh_status gh_design_info(gh_design design, gh_design_traits *traits);
/** The design called name ("cuckoo"); GH_ERR_UNSUPPORTED when there is none. */
gh_status gh_design_by_name(const char *name, gh_design *design);

/* ---------------------------------------------------------------------------------------- */
/* 4. Create / destroy                                                                       */
/* ---------------------------------------------------------------------------------------- */

typedef struct gh_table gh_table;
/** A CUDA stream (cudaStream_t) passed without needing cuda_runtime.h; NULL = default stream. */
typedef void *gh_stream;

/** Creates an empty table. On failure *table is set to NULL and the reason is available from
 * gh_last_create_error() (this thread). */
gh_status gh_create(const gh_config *config, gh_table **table);

/** The reason the last gh_create() on this thread failed; "" if it succeeded. */
const char *gh_last_create_error(void);

/** Frees everything the table owns. Accepts NULL. Synchronises the table's device. */
void gh_destroy(gh_table *table);

/* ---------------------------------------------------------------------------------------- */
/* 5. Bulk operations (stream last; work queued on it, waited for once before returning)    */
/* ---------------------------------------------------------------------------------------- */

/** Inserts n keys (and values, unless the table is a set: then values must be NULL; multi-value
 * tables of designs with GH_CAP_INDEX_PAYLOADS take values NULL to mean "each key's position").
 * keys/values: in, host or device, key_bits / value_bits wide elements.
 * policy: what happens to keys already present, or repeated within the batch.
 * failed_out: optional out (host or device), n bytes: 1 where the key did not fit, else 0.
 * Returns GH_ERR_TABLE_FULL when some keys did not fit; every other key was inserted, the
 * message says how many did not, and the table stays valid. n == 0 is a no-op.
 * On failure: GH_ERR_TABLE_FULL writes failed_out; any other failure (GH_ERR_OUT_OF_MEMORY, ...)
 * writes nothing and changes nothing. Designs that grow (GH_CAP_GROWS) never report full. cuckoo:
 * when memory for growing runs out mid-way it finishes with GH_OK, parking what it could not place
 * in a stash that lookups also scan (gh_stats.stash_keys). slab: the slabs a batch is estimated to
 * need are reserved before it runs (when they cannot be had: GH_ERR_OUT_OF_MEMORY, nothing
 * changed); keys that found no slab all the same (many keys in few lists) are inserted again
 * once SlabAlloc has grown, and only if it cannot grow does the call return GH_ERR_OUT_OF_MEMORY
 * with those keys flagged in failed_out, every other key inserted. */
gh_status gh_insert(gh_table *table, const void *keys, const void *values, uint64_t n,
                    gh_dup_policy policy, uint8_t *failed_out, gh_stream stream);

/** Looks up n keys. values_out (out, optional for maps, must be NULL for sets): the stored value,
 * or *default_value (host pointer to one value, value_bits / 8 bytes; NULL means 0, all bytes
 * zero for a record) for absent keys. found_out (out, optional): 1 or
 * 0 per key. At least one of values_out and found_out must be given.
 * On failure: writes neither output. */
gh_status gh_find(gh_table *table, const void *keys, uint64_t n, void *values_out,
                  uint8_t *found_out, const void *default_value, gh_stream stream);

/** found_out[i] = 1 when keys[i] is present (out, required). On failure: writes nothing. */
gh_status gh_contains(gh_table *table, const void *keys, uint64_t n, uint8_t *found_out,
                      gh_stream stream);

/** Erases n keys; absent keys are ignored. erased_out (optional out): 1 where this call removed
 * the key (for a key repeated in the batch exactly one of its positions gets the 1).
 * *erased_count (optional, host): how many keys were removed.
 * On failure: *erased_count is 0, erased_out is not written, and no key was erased. */
gh_status gh_erase(gh_table *table, const void *keys, uint64_t n, uint8_t *erased_out,
                   uint64_t *erased_count, gh_stream stream);

/** Multi-value tables: counts_out[i] = number of values of keys[i]; *total = their sum. Tables
 * holding one value per key return GH_ERR_UNSUPPORTED. On failure: writes neither output. */
gh_status gh_count(gh_table *table, const void *keys, uint64_t n, uint64_t *counts_out,
                   uint64_t *total, gh_stream stream);

/** Multi-value tables: offsets_out (n + 1 entries, CSR) and values_out (capacity values_capacity).
 * It counts the keys' values itself: gh_count first is needed only to size values_out (a caller
 * who knows a bound, or retries after GH_ERR_BUFFER_TOO_SMALL, calls gh_find_all alone). A
 * design may take scratch for the call (hashgraph: n values, so that keys of one value are not
 * probed twice); without memory for it the call fails with GH_ERR_OUT_OF_MEMORY.
 * Tables holding one value per key return GH_ERR_UNSUPPORTED.
 * On failure: GH_ERR_BUFFER_TOO_SMALL (the keys have more values than values_capacity) writes
 * offsets_out, so offsets_out[n] says how many are needed, and no value; any other failure writes
 * nothing. */
gh_status gh_find_all(gh_table *table, const void *keys, uint64_t n, uint64_t *offsets_out,
                      void *values_out, uint64_t values_capacity, gh_stream stream);

/* ---- Joins ---------------------------------------------------------------------------------
 * The table is the build side of a join: a multi-value table of the right rows, each entry's value
 * that row's payload (its row index: gh_insert with values NULL on designs with
 * GH_CAP_INDEX_PAYLOADS, or values 0 .. n - 1 given). The keys of a join call are the left rows;
 * a pair is (left row, matching entry), for every entry of the table whose key equals the left
 * row's key. Each call waits for the stream once, like the bulk operations above. */

/** How a join finds its matches. Values are stable. */
typedef enum gh_join_method {
  GH_JOIN_AUTO = 0,      /* the design's choice: GH_JOIN_PROBE on every design today */
  GH_JOIN_PROBE = 1,     /* each left key looked up in the table (the probe of gh_count / gh_find_all) */
  /* designs with GH_CAP_JOIN_INTERSECT (hashgraph): the left keys built into a second table over
   * the same hash range, the two then intersected vertex by vertex (Green's intersection probe) */
  GH_JOIN_INTERSECT = 2
} gh_join_method;

/** Multi-value tables: *pairs (host, required) = the number of pairs of the inner join of keys
 * (n left rows) with the table. Tables holding one value per key return GH_ERR_UNSUPPORTED, and
 * GH_JOIN_INTERSECT on a design without GH_CAP_JOIN_INTERSECT too. On failure: *pairs is 0. */
gh_status gh_join_count(gh_table *table, const void *keys, uint64_t n, gh_join_method method, uint64_t *pairs,
                        gh_stream stream);

/** Multi-value tables: the inner join's pairs, the fill pass after gh_join_count. Pair j is
 * left_out[j] (the left row: its position in keys, 64-bit) and right_out[j] (the entry's value,
 * value_bits wide; right_out must be NULL for a set, is required otherwise); both arrays have room
 * for `capacity` pairs (out, host or device; left_out required when n > 0). *pairs (host,
 * required) = the number of pairs. Order: GH_JOIN_PROBE lists the pairs by left row, ascending,
 * each row's entries in gh_find_all's order; GH_JOIN_INTERSECT in no particular order.
 * On failure: GH_ERR_BUFFER_TOO_SMALL (more pairs than capacity) sets *pairs to the number needed
 * and writes neither array; any other failure sets *pairs to 0 and writes nothing. */
gh_status gh_join(gh_table *table, const void *keys, uint64_t n, gh_join_method method, uint64_t *left_out,
                  void *right_out, uint64_t capacity, uint64_t *pairs, gh_stream stream);

/** The semi-join: match_out[i] (out, required, n bytes) = 1 when keys[i] is in the table (any
 * table: maps and sets too; GH_JOIN_INTERSECT only on designs with GH_CAP_JOIN_INTERSECT).
 * On failure: writes nothing. */
gh_status gh_semi_join(gh_table *table, const void *keys, uint64_t n, gh_join_method method, uint8_t *match_out,
                       gh_stream stream);

/** Writes every (key, value) into keys_out / values_out (values_out NULL for sets; host or
 * device), in unspecified order. *count (host, required) receives the number written. Fails
 * with GH_ERR_BUFFER_TOO_SMALL, writing nothing, if out_capacity < gh_size().
 * On any failure: *count is 0 and neither array is written. */
gh_status gh_export(gh_table *table, void *keys_out, void *values_out, uint64_t out_capacity,
                    uint64_t *count, gh_stream stream);

/** Compacting tables: keys_out[i] (key_bits wide) = the key whose dense id is ids[i] (value_bits
 * wide). Ids at or above gh_size() give GH_ERR_INVALID_ARGUMENT with their count: their
 * positions of keys_out keep what the caller had there, every other position is written. Other
 * tables return GH_ERR_UNSUPPORTED; any other failure writes nothing. */
gh_status gh_keys_of_ids(gh_table *table, const void *ids, uint64_t n, void *keys_out,
                         gh_stream stream);

/** Saving and loading. A table image holds the table's configuration (the fields that define it:
 * design, variant, widths, capacity, seed and the design's knobs; not the backend, device, worker
 * threads or allocator) and every (key, value) pair gh_export gives, behind a versioned header
 * with checksums of itself and of the pairs. Images are portable between backends and devices: a
 * table saved on the GPU loads on the host and back. Loading re-inserts the pairs into a table
 * made from the image's configuration, so it holds the same pairs (a multi-value key's values may
 * come back in another order) but not necessarily the same layout. The pairs are stored in
 * gh_export's order, which a GPU's export does not fix: two saves of one CUDA table may differ in
 * their bytes, never in what they load. Compacting tables cannot be
 * saved yet (GH_ERR_UNSUPPORTED): their ids would not survive the re-insertion.
 *
 * The capacity saved is the one the table was created with (a table that grew grows again).
 *
 * gh_save_to_memory: *bytes (host, required) receives the image's size; with buffer NULL nothing
 * else happens (ask first, then allocate). A capacity below it gives GH_ERR_BUFFER_TOO_SMALL and
 * writes nothing. gh_save writes the image to a new file beside path and renames it over path, so
 * a failed save leaves what was there; a path that exists and is not a regular file (a device, a
 * directory, a symlink) is refused with GH_ERR_INVALID_ARGUMENT. */
gh_status gh_save_to_memory(gh_table *table, void *buffer, size_t capacity, size_t *bytes, gh_stream stream);
gh_status gh_save(gh_table *table, const char *path, gh_stream stream);

/** Makes a table from an image (of gh_save / gh_save_to_memory). runtime: NULL for the defaults,
 * or a config whose backend, device, host_threads and allocator the table takes, and the knobs of
 * its calls that are not part of the layout, bulk_min_keys and compact_scratch_bytes (its other
 * fields are ignored: the image says them). An image that is not one (wrong magic, format
 * version, sizes, a truncated or corrupted file, a configuration this library refuses, pairs that
 * do not fit it or a map key stored twice) gives GH_ERR_BAD_IMAGE; a design this library does not
 * have, GH_ERR_UNSUPPORTED; a path that is not a regular file, GH_ERR_INVALID_ARGUMENT. On any
 * failure *table is NULL and gh_last_create_error() says why. An image names its table's
 * capacity, and loading allocates that table: load an untrusted image with a runtime allocator
 * that limits memory. */
gh_status gh_load_from_memory(const void *buffer, size_t bytes, const gh_config *runtime, gh_table **table);
gh_status gh_load(const char *path, const gh_config *runtime, gh_table **table);

/** Operation codes of gh_mixed. Values are stable. */
typedef enum gh_op_code { GH_OP_INSERT = 1, GH_OP_ERASE = 2, GH_OP_FIND = 3 } gh_op_code;

/** Runs a mixed batch: n operations ops[i] (one byte each: a gh_op_code) on keys[i], inserts,
 * erases and finds together, in one pass (one kernel on the GPU). Designs that cannot mix
 * operations (those without GH_CAP_MIXED) return GH_ERR_UNSUPPORTED.
 * ops, keys: in, host or device. values: in, required when the table stores values (read at
 * GH_OP_INSERT positions only), NULL for sets. policy: as gh_insert's, for the inserts.
 * values_out (optional out, NULL for sets): at GH_OP_FIND positions the value found, or 0 when
 * the key is absent; other positions are not written. results_out (optional out, n bytes):
 *   GH_OP_FIND   1 found, 0 absent
 *   GH_OP_ERASE  1 erased by this operation, 0 absent (a multi-value table erases every value)
 *   GH_OP_INSERT 1 stored a new key (or pair), 0 merged into the present key by the policy,
 *                2 did not fit (memory for new slabs ran out; see below)
 * Concurrency: the operations of one batch run concurrently and each is atomic. A find racing
 * with an insert or an erase of the same key sees the key either before or after that operation;
 * an erase racing with an insert of the same key removes it or not; after the batch a map holds
 * each key at most once. Order the batch yourself (two calls) where order matters.
 * Errors: an op code other than the three gives GH_ERR_INVALID_ARGUMENT, nothing executed, and
 * the message names the first bad position. Memory the batch is expected to need is reserved before
 * anything runs (GH_ERR_OUT_OF_MEMORY: nothing executed, nothing written). Inserts that find no
 * memory all the same are flagged 2 in results_out with every other operation executed and its
 * outputs written: the call returns GH_ERR_TABLE_FULL (a design of fixed capacity) or, for a
 * design that grows (slab, which first runs those inserts again once its allocator has grown),
 * GH_ERR_OUT_OF_MEMORY.
 * n == 0 is a no-op. */
gh_status gh_mixed(gh_table *table, const uint8_t *ops, const void *keys, const void *values, uint64_t n,
                   gh_dup_policy policy, void *values_out, uint8_t *results_out, gh_stream stream);

/** Removes deleted entries (tombstones) and returns emptied memory to the design's allocator
 * (designs with GH_CAP_COMPACT). slab: the FLUSH of Ashkiani et al., which packs every bucket's
 * entries to the front of its list and frees the slabs left empty; gh_get_stats' slots drop
 * accordingly. warpdrive: the table is rebuilt without its tombstones when the memory for that can
 * be had within gh_config.compact_scratch_bytes (the pairs exported to scratch, inserted into fresh
 * slots, which are copied over the old ones: a second slot array and the pairs' size of scratch
 * while it runs); otherwise it is rehashed in place, in about 3x the rebuild's time, with two bits
 * a window of scratch or none: tombstones become empty slots, and every key that then has an empty
 * slot before it on its probe sequence moves up into one, pass after pass over the slots until a
 * pass changes nothing. Either way device views stay valid, and afterwards finds and inserts stop
 * at empty slots as in a table that never erased (gh_get_stats' tombstones: 0). Keys, values and
 * gh_size are unchanged. Other designs answer GH_ERR_UNSUPPORTED. Waits for the stream. On failure:
 * the table is unchanged, except where a warpdrive rehash pass failed part-way on the device: every
 * key is still stored but some may lie out of a lookup's reach until a gh_compact completes
 * (gh_last_error says so). */
gh_status gh_compact(gh_table *table, gh_stream stream);

/** Removes every key. warpdrive, cuckoo and slab keep their memory (a cuckoo table's stash is
 * released); dycuckoo and hashgraph give back what they grew by, returning to the size they were
 * created with. On failure: the table is unchanged. */
gh_status gh_clear(gh_table *table, gh_stream stream);

/* ---------------------------------------------------------------------------------------- */
/* 6. Introspection and maintenance (synchronous)                                            */
/* ---------------------------------------------------------------------------------------- */

/** Number of distinct keys stored (multi-value tables: (key, value) pairs). */
gh_status gh_size(gh_table *table, uint64_t *size);
/** warpdrive: number of key slots (the configured capacity after rounding up). hashgraph: the entries
 * (edges) its arrays hold before an insert must build them larger (at least the configured capacity).
 * cuckoo: keys the
 * table's slots hold before it grows (the configured capacity, or more after growth); keys in the
 * stash (gh_stats.stash_keys) come on top. slab: entries its slabs hold now, (base buckets + 2 side
 * buckets + slabs taken from SlabAlloc) x entries per slab; it grows as chains grow, and inserts
 * fail only when memory for new slabs runs out. */
gh_status gh_capacity(gh_table *table, uint64_t *capacity);
/** Bytes the table holds now, on the host and on the device; either out may be NULL. */
gh_status gh_memory_usage(gh_table *table, size_t *host_bytes, size_t *device_bytes);
/** The table's effective configuration (defaults resolved, capacity rounded): the first
 * struct_size bytes of it, with config->struct_size = struct_size. Call gh_get_config, which
 * passes this header's sizeof(gh_config); struct_size must be a released size no larger than the
 * library's (GH_ERR_INVALID_ARGUMENT otherwise). */
gh_status gh_get_config_sized(gh_table *table, gh_config *config, size_t struct_size);
static inline gh_status gh_get_config(gh_table *table, gh_config *config) {
  return gh_get_config_sized(table, config, sizeof *config);
}
/** Counters of a table's life; fields that do not apply to the design are 0. */
typedef struct gh_stats {
  uint64_t size;          /* as gh_size() */
  uint64_t distinct_keys; /* distinct keys (multi-value tables: fewer than size) */
  uint64_t slots;         /* slots allocated now */
  /* cuckoo: builds that hit the eviction chain limit and were restarted with fresh hash
   * constants (each keeps every key; the caller never sees a failure) */
  uint64_t restarts;
  uint64_t grows;         /* cuckoo: times the table was enlarged (after repeated restarts, or
                             because more keys arrived than it was sized for); slab: times its
                             base buckets were enlarged (a rehash between batches) */
  uint64_t eviction_limit; /* cuckoo: the eviction chain limit in force (about 7 lg N; bucketed: 28 lg N steps) */
  /* cuckoo: keys kept in the overflow stash, which every lookup also scans: keys that failed
   * together across restarts, or that a rebuild could not place when memory ran out */
  uint64_t stash_keys;
  /* ---- appended after 0.3.0 ---- */
  /* dycuckoo: the subtables (d) and the buckets (128-byte key lines) of each, indices 0..d-1 */
  uint64_t subtables;
  uint64_t subtable_buckets[8];
  uint64_t upsizes;          /* dycuckoo: subtables doubled */
  uint64_t downsizes;        /* dycuckoo: subtables halved */
  uint64_t evictions;        /* dycuckoo: residents an insert moved to a later subtable */
  uint64_t longest_search;   /* dycuckoo: most buckets a single insert locked */
  uint64_t insert_failures;  /* dycuckoo: keys reported as not inserted (0 unless out of memory) */
  /* dycuckoo: time spent doubling and halving subtables; slab: enlarging its base buckets. Device
   * time (CUDA events on the call's stream; the clock on the host backend), in seconds, ever. */
  double resize_seconds;
  uint64_t subtable_keys[8]; /* dycuckoo: the keys each subtable holds, indices 0..d-1 */
  /* ---- appended after 0.6 ---- */
  uint64_t tombstones;       /* warpdrive: slots of erased keys not reused yet (gh_compact clears them) */
} gh_stats;

/** Fills the first struct_size bytes of *stats (the caller's sizeof(gh_stats), so that fields a
 * newer library appends never overrun an older program's struct). Call gh_get_stats. On failure
 * writes nothing. */
gh_status gh_get_stats_sized(gh_table *table, gh_stats *stats, size_t struct_size);
static inline gh_status gh_get_stats(gh_table *table, gh_stats *stats) {
  return gh_get_stats_sized(table, stats, sizeof *stats);
}

/** The backend the table runs on (AUTO resolved). */
gh_backend gh_table_backend(const gh_table *table);

/** Copies the table to the host and checks every invariant of its design (for warpdrive: each
 * key lies on its probe sequence within the probe limit and before any empty slot, no key twice,
 * the size counter equals the keys found, the sentinel side store is well formed). Returns
 * GH_OK, GH_ERR_CORRUPT with the first violation in gh_last_error(), or GH_ERR_OUT_OF_MEMORY when
 * the host memory for the copy (or a sort of its keys) cannot be had. */
gh_status gh_validate(gh_table *table);

/** What the last failed (or partly failed) call on this table did and kept; "" after success.
 * The text stays valid until the next call on the table. */
const char *gh_last_error(const gh_table *table);

/** 1 when the library was built with CUDA and at least one device is usable, else 0. */
int gh_cuda_available(void);
/** The CUDA devices the library can use (0 without CUDA): the ordinals 0 .. count - 1 of
 * gh_config.device and of a distributed table's devices. */
int gh_cuda_device_count(void);

/* ---------------------------------------------------------------------------------------- */
/* 7. Device-side view                                                                       */
/* ---------------------------------------------------------------------------------------- */

/** Statistics flags that a table's operations OR into its status word (on either backend; user
 * kernels on a device view too). */
#define GH_FLAG_PROBE_LIMIT 0x1u      /* a key did not fit within the probe limit */
#define GH_FLAG_DUPLICATE 0x2u        /* an insert met a key that was already present */
#define GH_FLAG_BAD_GROUP 0x4u        /* a device call used a group size the table cannot use */

/** A by-value description of a table on the device, for user kernels. The fields below are the
 * same for every design; `layout` holds the design's geometry, which that design's device header
 * (include/gpuhash/<design>.cuh) reads. Valid until the table is destroyed; reflects later changes.
 * Plain data: pass it to kernels by value. */
typedef struct gh_device_view {
  gh_design design;
  unsigned key_bits;
  unsigned value_bits;
  unsigned slot_bytes;
  void *slots;                 /* device: the design's slot array */
  unsigned long long *size;    /* device: number of distinct keys */
  unsigned *status_word;       /* device: GH_FLAG_* bits; NULL without GH_CAP_STATUS_FLAGS */
  uint64_t seed;
  uint64_t layout[6];          /* design-specific geometry */
} gh_device_view;

/** Fills *view for a table on the CUDA backend of a design with GH_CAP_DEVICE_VIEW;
 * GH_ERR_UNSUPPORTED otherwise. */
gh_status gh_get_device_view(gh_table *table, gh_device_view *view);

/** Reads and clears the table's status word (GH_FLAG_* bits set by its operations) for designs
 * with GH_CAP_STATUS_FLAGS; GH_ERR_UNSUPPORTED (and *flags untouched) for the others. */
gh_status gh_take_status_flags(gh_table *table, unsigned *flags);

#ifdef __cplusplus
}
#endif

#endif /* GPUHASH_H */
