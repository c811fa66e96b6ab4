/* bench_scenarios.c - what gpuhash-bench measures (bench/README.md), as data: a scenario is axes
 * (bench_rows) whose product the driver runs, as nvbench's; and the steps the designs differ in. */
#include "bench.h"

static const char *const DESIGNS[] = {"limits", "warpdrive", "cuckoo", "sorted", "slab", "dycuckoo", "hashgraph", NULL};
static const char *const VARIANTS[] = {"map", "compacting", "multivalue", NULL};
static const char *const DISTS[] = {"unique", "zipf", "cyclic", NULL};
static const char *const PATHS[] = {"auto", "ordinary", NULL};
static const char *const COMPACTS[] = {"auto", "in_place", NULL};
static const char *const OPS[] = {"insert", "build", "find", "find_absent", "erase", "find_all",
                                  "batches", "mixed", "slab_alloc", "dynamic", "upsize", "downsize",
                                  "rehash_by_insert", "join", "join_intersect", "find_first", "aging", "limit_copy",
                                  "limit_sector_read", "limit_cas64", "limit_atomic_add32", NULL};
const bench_axis_def bench_axes[AX_COUNT] = {
    [AX_DESIGN] = {"design", DESIGNS, 's', 0, 0}, [AX_VARIANT] = {"variant", VARIANTS, 's', 0, 0},
    [AX_N] = {"n", NULL, 'i', 1, 0x1p40}, [AX_DIST] = {"dist", DISTS, 's', 0, 0},
    [AX_MULT] = {"multiplicity", NULL, 'i', 1, 0x1p32}, [AX_G] = {"group_size", NULL, 'i', 1, 32},
    [AX_LOAD] = {"load_factor", NULL, 'f', 1e-9, 4}, /* (hashgraph: keys per vertex, up to 4) */
    [AX_D] = {"hash_functions", NULL, 'i', 2, 8, "d=%.0f "},
    [AX_FACTOR] = {"table_factor", NULL, 'f', 1, 16, "x%.2f; "},
    [AX_BUCKET] = {"bucket_slots", NULL, 'i', 1, 16, "%.0f slots a bucket; "},
    [AX_SLABS] = {"slab_load", NULL, 'f', 0.05, 16, "%.2f slabs/bucket; "},
    [AX_START] = {"initial_buckets", NULL, 'i', 0, 0x1p36, "initial_buckets %.0f; "},
    [AX_BATCH] = {"batch", NULL, 'i', 1, 0x1p40, "batches of %.0f; "},
    [AX_UPDATES] = {"update_percent", NULL, 'i', 0, 100, "updates %.0f%%; "},
    [AX_DELETES] = {"delete_percent", NULL, 'i', 0, 50, "deletes %.0f%% of a batch; "},
    [AX_FILL_MIN] = {"fill_min", NULL, 'f', 0.01, 0.9, "fill_min %.2f; "},
    [AX_BINS] = {"bin_vertices", NULL, 'i', 1024, 32768, "bins of %.0f; "},
    [AX_PATH] = {"insert_path", PATHS, 's', 0, 0},
    [AX_COMPACT] = {"compact", COMPACTS, 's', 0, 0},
    [AX_ABSENT] = {"absent_percent", NULL, 'i', 0, 100, "absent %.0f%%; "},
    [AX_OP] = {"op", OPS, 's', 0, 0}};
/* Where a design uses an axis its scenario lacks: unique keys, a map, the chapter's d = 4 and
 * table 1.25 n, warpdrive's g = 4, the slab paper's 0.7 slabs per bucket (60 % memory used). */
const double bench_defaults[AX_COUNT] = {
    [AX_DESIGN] = NAN, [AX_VARIANT] = 0, [AX_N] = NAN, [AX_DIST] = 0, [AX_MULT] = NAN, [AX_G] = 4,
    [AX_LOAD] = NAN, [AX_D] = 4, [AX_FACTOR] = 1.25, [AX_BUCKET] = 1, [AX_SLABS] = 0.7, [AX_START] = NAN,
    [AX_BATCH] = NAN, [AX_UPDATES] = NAN, [AX_DELETES] = NAN, [AX_FILL_MIN] = NAN, [AX_BINS] = NAN,
    [AX_PATH] = PATH_AUTO, [AX_COMPACT] = COMPACT_AUTO, [AX_ABSENT] = NAN, [AX_OP] = NAN};
#define BIT(axis) (1u << (axis))
#define COMMON (BIT(AX_DESIGN) | BIT(AX_N) | BIT(AX_DIST) | BIT(AX_OP))
#define DYNAMIC (BIT(AX_BATCH) | BIT(AX_DELETES)) /* the dynamic workload's */
/* Duplicates update the value in warpdrive, as in the paper; cuckoo builds keep the first. */
const bench_design_def bench_designs[D_COUNT] = {
    [D_LIMITS] = {0, 0, 0, 1, BIT(AX_DESIGN) | BIT(AX_OP)},
    [D_WARPDRIVE] = {GH_WARPDRIVE, GH_OVERWRITE, 0, 0, COMMON | BIT(AX_G) | BIT(AX_LOAD) |
                                                          DYNAMIC | BIT(AX_FILL_MIN) | BIT(AX_PATH) |
                                                          BIT(AX_COMPACT)},
    [D_CUCKOO] = {GH_CUCKOO, GH_KEEP_FIRST, 1, 0, COMMON | BIT(AX_VARIANT) | BIT(AX_MULT) | BIT(AX_D) |
                                                      BIT(AX_FACTOR) | BIT(AX_BUCKET) | BIT(AX_ABSENT) | BIT(AX_PATH)},
    [D_SORTED] = {0, 0, 0, 0, COMMON | BIT(AX_VARIANT) | BIT(AX_MULT) | BIT(AX_ABSENT)},
    [D_SLAB] = {GH_SLAB, GH_OVERWRITE, 0, 0,
                COMMON | BIT(AX_VARIANT) | BIT(AX_MULT) | BIT(AX_SLABS) | BIT(AX_START) | DYNAMIC | BIT(AX_UPDATES)},
    [D_DYCUCKOO] = {GH_DYCUCKOO, GH_OVERWRITE, 0, 0, COMMON | BIT(AX_D) | DYNAMIC | BIT(AX_FILL_MIN) | BIT(AX_PATH)},
    [D_HASHGRAPH] = {GH_HASHGRAPH, GH_OVERWRITE, 0, 0,
                     COMMON | BIT(AX_VARIANT) | BIT(AX_MULT) | BIT(AX_LOAD) | BIT(AX_BINS) | BIT(AX_ABSENT)}};
/* An insert claims a slot by CAS (also shown against atomicAdd), an erase writes a tombstone by
 * CAS, a lookup reads sectors: ceilings 1 sector reads, 2 CAS, 3 atomicAdd (0: the copy). */
const bench_op_def bench_ops[OP_COUNT] = {
    [OP_INSERT] = {2, 3}, [OP_BUILD] = {2, 3}, [OP_FIND] = {1, -1}, [OP_FIND_ABSENT] = {1, -1},
    [OP_ERASE] = {2, -1}, [OP_FIND_ALL] = {1, -1}, [OP_BATCHES] = {2, 3}, [OP_MIXED] = {2, 1},
    [OP_ALLOC] = {-1, -1}, [OP_DYNAMIC] = {-1, -1}, [OP_UPSIZE] = {-1, -1},
    [OP_DOWNSIZE] = {-1, -1}, [OP_REINSERT] = {2, 3}, [OP_JOIN] = {1, -1}, [OP_JOIN_INTERSECT] = {1, -1},
    [OP_FIND_FIRST] = {1, -1}, [OP_AGING] = {-1, -1}};
const bench_scenario bench_scenarios[] = {
    {"limits", "ceilings: coalesced copy, random sector reads, random CAS and atomicAdd", 0, 0, 0},
    {"summary", "summary (make run): every design's build and find, GPU 2^24 keys, host 2^16", 0, 0, 0},
    {"warpdrive", "warpdrive (paper V-B): insert, find, find of absent keys, erase", 0, 1, NULL},
    {"cuckoo-a", "cuckoo-a (4.5.1): build, find vs n; d 4, table 1.25 n; vs sort+search", 0, 0, 0},
    {"cuckoo-b", "cuckoo-b (4.5.1): find vs the fraction of absent queries, d = 3 and 4", 3, 0, 0},
    {"cuckoo-c", "cuckoo-c (4.3.1.1): build, find vs table factor x d, restarts per build", 3, 0,
     "below d's minimum"},
    {"cuckoo-d", "cuckoo-d (4.5.2): compacting and multivalue vs key multiplicity, vs sorted", 3,
     0, NULL},
    {"cuckoo-e", "cuckoo-e (issue 15): the bucketed table: build, find, find of absent keys at loads 0.8, "
     "0.9, 0.95; d 2, 3; 4, 8 and 16 slots a bucket", 0, 0, NULL},
    {"slab-a", "slab-a (VI-A, fig. 4): build, find, find absent vs slabs per bucket", 0, 0, 0},
    {"slab-b", "slab-b (VI-A, fig. 5): build, find vs n at 0.7 slabs per bucket (60 %)", 0, 0, 0},
    {"slab-c", "slab-c (VI-B, fig. 6): batches into slab vs warpdrive rebuilt per batch", 3, 0, 0},
    {"slab-d", "slab-d (VI-C, fig. 7a): gh_mixed vs initial slabs per bucket x updates", 0, 0, 0},
    {"slab-e", "slab-e (SlabAlloc): slabs a build takes from SlabAlloc per second", 0, 0, 0},
    {"slab-growth", "slab-growth: build (whole, and in batches) into 16 base buckets vs a table sized for n", 3, 0, 0},
    {"aging", "aging (WarpSpeed, ALENEX '26): a warpdrive table held at load 0.85 while slices of keys are "
     "erased and inserted in turn; finds vs a fresh table, and after gh_compact", 3, 0, 0},
    {"dycuckoo-a", "dycuckoo-a (paper 6.2): insert, find vs d; subtables sized for n at theta 0.9", 0, 0, 0},
    {"dycuckoo-b", "dycuckoo-b (paper 6.3): one upsize from theta = beta, one downsize from theta = "
     "alpha, vs inserting a subtable's keys", 0, 0, 0},
    {"dycuckoo-c", "dycuckoo-c (paper 6.4): batches of inserts, finds, deletes, then replayed "
     "swapped; vs warpdrive doubling + rehashing, vs slab", 3, 0, 0},
    {"dycuckoo-d", "dycuckoo-d (paper 6.4): the dynamic workload vs fill_min (alpha) and batch size",
     3, 0, 0},
    {"hashgraph-a", "hashgraph-a (paper 5.1, 5.3): build (GPU: V2) and the standard probe vs load factor; vs CUB's "
     "radix sort of the pairs", 0, 0, 0},
    {"hashgraph-b", "hashgraph-b (paper 5.1): build (GPU: V2) and the standard probe vs the keys' multiplicity; vs "
     "CUB's radix sort of the pairs", 0, 1, 0},
    {"hashgraph-c", "hashgraph-c (paper 5.1): build V2 vs its bin size (gh_config.bin_vertices) and load factor", 0,
     0, 0},
    {"hashgraph-d", "hashgraph-d (paper 5.3): inner join of n left and n right rows, build + count + pairs, by "
     "the standard probe and by the intersection probe vs load factor", 0, 0, 0},
    {"hashgraph-e", "hashgraph-e: inner join of n left and n right rows (build + count + pairs) vs match rate; vs a "
     "sort-merge join on CUB (both sides sorted, runs found by binary search, count, fill)", 0, 0, 0},
    {"hashgraph-f", "hashgraph-f: the multi-value designs on one input (build, gh_find_all) vs the keys' "
     "multiplicity: hashgraph, cuckoo, slab, sorted pairs", 0, 1, 0}};
const size_t bench_scenario_count = sizeof bench_scenarios / sizeof bench_scenarios[0];

#define P2(k) ((double)(1ull << (k)))
#define QUICK (M_QUICK_GPU | M_QUICK_HOST)
/* count PER_MODE: v[mode], one per mode (M_* order); SWEEP: n doubling v[mode] .. v[4 + mode]. */
const bench_row bench_rows[] = {
    {"limits", AX_DESIGN, ALL, 1, {D_LIMITS}},
    {"limits", AX_OP, ALL, 4, {OP_LIMIT_COPY, OP_LIMIT_SECTOR, OP_LIMIT_CAS, OP_LIMIT_ADD}},
    /* The main job's glance: each design at its defaults (warpdrive at load 0.8, hashgraph 0.8 keys
     * a vertex, slab 0.7 slabs a bucket), built from unique keys then probed with them. */
    {"summary", AX_DESIGN, ALL, 5, {D_WARPDRIVE, D_CUCKOO, D_SLAB, D_DYCUCKOO, D_HASHGRAPH}},
    {"summary", AX_N, ALL, PER_MODE, {P2(24), P2(24), P2(16), P2(16)}},
    {"summary", AX_LOAD, ALL, 1, {0.8}},
    {"summary", AX_OP, ALL, 2, {OP_BUILD, OP_FIND}},
    /* The paper's grid: 2^27 pairs (1 GB); --quick under a minute on an H100. */
    {"warpdrive", AX_DESIGN, ALL, 1, {D_WARPDRIVE}},
    {"warpdrive", AX_N, ALL, PER_MODE, {P2(27), P2(24), P2(20), P2(20)}},
    {"warpdrive", AX_DIST, ALL, 2, {DIST_UNIQUE, DIST_ZIPF}},
    {"warpdrive", AX_G, M_QUICK_HOST, 2, {4, 32}},
    {"warpdrive", AX_G, ALL, 6, {1, 2, 4, 8, 16, 32}},
    {"warpdrive", AX_LOAD, M_QUICK_GPU, 3, {0.5, 0.9, 0.99}},
    /* Host --quick leaves out 0.99: there a find of absent keys probes ~100 windows. */
    {"warpdrive", AX_LOAD, M_QUICK_HOST, 2, {0.5, 0.9}},
    {"warpdrive", AX_LOAD, ALL, 8, {0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99}},
    {"warpdrive", AX_PATH, ALL, 1, {PATH_AUTO}},
    {"warpdrive", AX_OP, ALL, 4, {OP_INSERT, OP_FIND, OP_FIND_ABSENT, OP_ERASE}},
    /* The chapter's sizes on the GPU (a: up to 2^27, d: 10M pairs); smaller elsewhere. */
    {"cuckoo-a", AX_N, ALL, SWEEP,
     {P2(16), P2(16), P2(16), P2(14), P2(27), P2(24), P2(20), P2(16)}},
    {"cuckoo-a", AX_DESIGN, ALL, 2, {D_CUCKOO, D_SORTED}},
    {"cuckoo-a", AX_OP, ALL, 2, {OP_BUILD, OP_FIND}},
    /* b: a table per d, built untimed, then lookups with p % absent queries spread evenly */
    {"cuckoo-b", AX_DESIGN, ALL, 1, {D_CUCKOO}},
    {"cuckoo-b", AX_N, ALL, PER_MODE, {P2(24), P2(22), P2(18), P2(15)}},
    {"cuckoo-b", AX_D, ALL, 2, {3, 4}},
    {"cuckoo-b", AX_ABSENT, QUICK, 3, {0, 50, 100}},
    {"cuckoo-b", AX_ABSENT, ALL, 11, {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}},
    {"cuckoo-b", AX_OP, ALL, 1, {OP_FIND}},
    /* c: factors below d's minimum are rejected by gh_config_validate: skipped states */
    {"cuckoo-c", AX_DESIGN, ALL, 1, {D_CUCKOO}},
    {"cuckoo-c", AX_N, ALL, PER_MODE, {P2(24), P2(22), P2(18), P2(15)}},
    {"cuckoo-c", AX_D, ALL, 4, {2, 3, 4, 5}},
    {"cuckoo-c", AX_FACTOR, QUICK, 3, {1.1, 1.25, 2.5}},
    {"cuckoo-c", AX_FACTOR, ALL, 8, {1.05, 1.1, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0}},
    {"cuckoo-c", AX_OP, ALL, 3, {OP_BUILD, OP_FIND, OP_FIND_ABSENT}},
    /* e: table factors 1 / load for the loads of issue 15's table */
    {"cuckoo-e", AX_DESIGN, ALL, 1, {D_CUCKOO}},
    {"cuckoo-e", AX_N, ALL, PER_MODE, {P2(27), P2(22), P2(18), P2(15)}},
    {"cuckoo-e", AX_D, QUICK, 1, {2}},
    {"cuckoo-e", AX_D, ALL, 2, {2, 3}},
    {"cuckoo-e", AX_BUCKET, QUICK, 1, {8}},
    {"cuckoo-e", AX_BUCKET, ALL, 3, {4, 8, 16}},
    {"cuckoo-e", AX_FACTOR, ALL, 3, {1.0 / 0.8, 1.0 / 0.9, 1.0 / 0.95}},
    {"cuckoo-e", AX_OP, ALL, 3, {OP_BUILD, OP_FIND, OP_FIND_ABSENT}},
    {"cuckoo-e", AX_PATH, ALL, 1, {PATH_AUTO}},
    /* d: key(i mod u), u = ceil(n / multiplicity); a compacting find looks up the n keys (ids),
     * a multivalue one (gh_find_all) each distinct key once */
    {"cuckoo-d", AX_N, ALL, PER_MODE, {10000000, P2(21), P2(18), P2(15)}},
    {"cuckoo-d", AX_DIST, ALL, 1, {DIST_CYCLIC}},
    {"cuckoo-d", AX_MULT, QUICK, 4, {1, 8, 64, 512}},
    {"cuckoo-d", AX_MULT, ALL, 10, {1, 2, 4, 8, 16, 32, 64, 128, 256, 512}},
    {"cuckoo-d", AX_VARIANT, ALL, 2, {GH_VARIANT_COMPACTING, GH_VARIANT_MULTIVALUE}},
    {"cuckoo-d", AX_DESIGN, ALL, 2, {D_CUCKOO, D_SORTED}},
    {"cuckoo-d", AX_OP, ALL, 2, {OP_BUILD, OP_FIND}},
    /* The slab paper's figures at its 2^22 and at the 2^27 of the targets. */
    {"slab-a", AX_DESIGN, ALL, 1, {D_SLAB}},
    {"slab-a", AX_N, M_FULL_GPU, 2, {P2(22), P2(27)}},
    {"slab-a", AX_N, ALL, PER_MODE, {0, P2(22), P2(20), P2(16)}},
    {"slab-a", AX_SLABS, QUICK, 3, {0.2, 0.7, 4}},
    {"slab-a", AX_SLABS, ALL, 12, {0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.5, 2, 4}},
    {"slab-a", AX_OP, ALL, 3, {OP_BUILD, OP_FIND, OP_FIND_ABSENT}},
    {"slab-b", AX_N, ALL, SWEEP, {P2(16), P2(16), P2(16), P2(14), P2(27), P2(24), P2(20), P2(17)}},
    {"slab-b", AX_DESIGN, ALL, 1, {D_SLAB}},
    {"slab-b", AX_OP, ALL, 3, {OP_BUILD, OP_FIND, OP_FIND_ABSENT}},
    /* c: the paper's 2M keys, and 2^26; warpdrive: clear + insert of all keys so far per batch */
    {"slab-c", AX_N, M_FULL_GPU, 2, {P2(21), P2(26)}},
    {"slab-c", AX_N, ALL, PER_MODE, {0, P2(21), P2(19), P2(16)}},
    {"slab-c", AX_BATCH, M_QUICK_HOST, 3, {P2(11), P2(12), P2(13)}},
    {"slab-c", AX_BATCH, M_FULL_HOST, 3, {P2(12), P2(13), P2(14)}},
    {"slab-c", AX_BATCH, ALL, 3, {P2(15), P2(16), P2(17)}},
    {"slab-c", AX_DESIGN, ALL, 2, {D_SLAB, D_WARPDRIVE}},
    {"slab-c", AX_LOAD, ALL, 1, {0.65}},
    {"slab-c", AX_OP, ALL, 1, {OP_BATCHES}},
    {"slab-d", AX_DESIGN, ALL, 1, {D_SLAB}},
    {"slab-d", AX_N, ALL, PER_MODE, {P2(22), P2(20), P2(20), P2(16)}},
    {"slab-d", AX_SLABS, QUICK, 2, {0.3, 1.0}},
    {"slab-d", AX_SLABS, ALL, 8, {0.2, 0.3, 0.5, 0.7, 0.9, 1.0, 1.5, 2}},
    {"slab-d", AX_UPDATES, ALL, 3, {100, 40, 20}},
    {"slab-d", AX_OP, ALL, 1, {OP_MIXED}},
    {"slab-e", AX_DESIGN, ALL, 1, {D_SLAB}},
    {"slab-e", AX_N, ALL, PER_MODE, {P2(24), P2(20), P2(20), P2(16)}},
    {"slab-e", AX_SLABS, ALL, 2, {4, 16}},
    {"slab-e", AX_OP, ALL, 1, {OP_ALLOC}},
    /* The done criterion: < 30 % lost from 16 base buckets at 2^27, in one build and in
     * batches (the buckets grow by rehashing between batches). */
    {"slab-growth", AX_DESIGN, ALL, 1, {D_SLAB}},
    {"slab-growth", AX_N, ALL, PER_MODE, {P2(27), P2(22), P2(18), P2(14)}},
    {"slab-growth", AX_SLABS, ALL, 1, {0.6}},
    {"slab-growth", AX_START, ALL, 2, {16, 0}},
    {"slab-growth", AX_BATCH, ALL, PER_MODE, {P2(20), P2(17), P2(14), P2(11)}},
    {"slab-growth", AX_OP, ALL, 2, {OP_BUILD, OP_BATCHES}},
    /* aging: n key ids, half of them resident at a time (a ring: slice j erases the oldest slice and
     * inserts the next), 1000 slices of n / 128 keys (on the GPU: 2^23 resident, 128 Ki a slice). */
    {"aging", AX_DESIGN, ALL, 1, {D_WARPDRIVE}},
    {"aging", AX_N, ALL, PER_MODE, {P2(24), P2(21), P2(18), P2(16)}},
    {"aging", AX_G, ALL, 1, {4}},
    {"aging", AX_LOAD, ALL, 1, {0.85}},
    {"aging", AX_BATCH, ALL, PER_MODE, {P2(17), P2(14), P2(11), P2(9)}},
    {"aging", AX_COMPACT, ALL, 2, {COMPACT_AUTO, COMPACT_IN_PLACE}},
    {"aging", AX_OP, ALL, 1, {OP_AGING}},
    {"dycuckoo-a", AX_DESIGN, ALL, 1, {D_DYCUCKOO}},
    {"dycuckoo-a", AX_N, ALL, PER_MODE, {P2(27), P2(22), P2(20), P2(16)}},
    {"dycuckoo-a", AX_D, QUICK, 2, {2, 4}},
    {"dycuckoo-a", AX_D, ALL, 7, {2, 3, 4, 5, 6, 7, 8}},
    {"dycuckoo-a", AX_PATH, ALL, 1, {PATH_AUTO}},
    {"dycuckoo-a", AX_OP, ALL, 3, {OP_BUILD, OP_FIND, OP_FIND_ABSENT}},
    {"dycuckoo-b", AX_DESIGN, ALL, 1, {D_DYCUCKOO}},
    {"dycuckoo-b", AX_N, ALL, PER_MODE, {P2(27), P2(22), P2(18), P2(14)}},
    {"dycuckoo-b", AX_OP, ALL, 3, {OP_UPSIZE, OP_DOWNSIZE, OP_REINSERT}},
    /* The workload: 10^8 keys, batches of 10^6 inserts + 10^6 finds + 0.4 x 10^6 deletes;
     * [alpha, beta] = [0.4, 0.9]. */
    {"dycuckoo-c", AX_DESIGN, ALL, 3, {D_DYCUCKOO, D_WARPDRIVE, D_SLAB}},
    {"dycuckoo-c", AX_N, ALL, PER_MODE, {1e8, P2(22), P2(20), P2(16)}},
    {"dycuckoo-c", AX_BATCH, ALL, PER_MODE, {1e6, P2(16), P2(14), P2(10)}},
    {"dycuckoo-c", AX_D, ALL, 1, {4}},
    {"dycuckoo-c", AX_DELETES, QUICK, 1, {40}},
    {"dycuckoo-c", AX_DELETES, ALL, 5, {10, 20, 30, 40, 50}},
    {"dycuckoo-c", AX_FILL_MIN, ALL, 1, {0.4}},
    {"dycuckoo-c", AX_OP, ALL, 1, {OP_DYNAMIC}},
    {"dycuckoo-d", AX_DESIGN, ALL, 1, {D_DYCUCKOO}},
    {"dycuckoo-d", AX_N, ALL, PER_MODE, {1e8, P2(22), P2(20), P2(16)}},
    {"dycuckoo-d", AX_FILL_MIN, QUICK, 2, {0.25, 0.45}},
    {"dycuckoo-d", AX_FILL_MIN, ALL, 5, {0.25, 0.3, 0.35, 0.4, 0.45}},
    {"dycuckoo-d", AX_BATCH, M_FULL_GPU, 4, {2.5e5, 5e5, 1e6, 2e6}},
    {"dycuckoo-d", AX_BATCH, ALL, PER_MODE, {0, P2(14), P2(14), P2(10)}},
    {"dycuckoo-d", AX_DELETES, ALL, 1, {40}},
    {"dycuckoo-d", AX_OP, ALL, 1, {OP_DYNAMIC}},
    /* The grid: unique keys (multiplicity 1) as (key, index) pairs; the probe (gh_find_all)
     * looks up every key once. */
    {"hashgraph-a", AX_DESIGN, ALL, 2, {D_HASHGRAPH, D_SORTED}},
    {"hashgraph-a", AX_N, M_FULL_GPU, 2, {P2(24), P2(27)}},
    {"hashgraph-a", AX_N, ALL, PER_MODE, {0, P2(22), P2(20), P2(16)}},
    {"hashgraph-a", AX_DIST, ALL, 1, {DIST_CYCLIC}},
    {"hashgraph-a", AX_MULT, ALL, 1, {1}},
    {"hashgraph-a", AX_VARIANT, ALL, 1, {GH_VARIANT_MULTIVALUE}},
    {"hashgraph-a", AX_LOAD, QUICK, 2, {1, 4}},
    {"hashgraph-a", AX_LOAD, ALL, 5, {0.25, 0.5, 1, 2, 4}},
    /* find_first: gh_find, each key's first value; find (multivalue: find_all): gh_find_all */
    {"hashgraph-a", AX_OP, ALL, 3, {OP_BUILD, OP_FIND_FIRST, OP_FIND}},
    /* b: key(i mod u), u = n / multiplicity, as cuckoo-d; the probe looks up each distinct key once */
    {"hashgraph-b", AX_DESIGN, ALL, 2, {D_HASHGRAPH, D_SORTED}},
    {"hashgraph-b", AX_N, ALL, PER_MODE, {P2(27), P2(24), P2(20), P2(16)}},
    {"hashgraph-b", AX_DIST, ALL, 1, {DIST_CYCLIC}},
    {"hashgraph-b", AX_MULT, QUICK, 3, {1, 16, 1024}},
    {"hashgraph-b", AX_MULT, ALL, 6, {1, 4, 16, 64, 256, 1024}},
    {"hashgraph-b", AX_VARIANT, ALL, 1, {GH_VARIANT_MULTIVALUE}},
    {"hashgraph-b", AX_LOAD, ALL, 1, {1}},
    {"hashgraph-b", AX_OP, ALL, 2, {OP_BUILD, OP_FIND}},
    /* c: V2's bins of 1024 .. 32768 vertices (the host's V1 has no bins: the axis changes nothing there) */
    {"hashgraph-c", AX_DESIGN, ALL, 1, {D_HASHGRAPH}},
    {"hashgraph-c", AX_N, ALL, PER_MODE, {P2(27), P2(24), P2(20), P2(16)}},
    {"hashgraph-c", AX_DIST, ALL, 1, {DIST_CYCLIC}},
    {"hashgraph-c", AX_MULT, ALL, 1, {1}},
    {"hashgraph-c", AX_VARIANT, ALL, 1, {GH_VARIANT_MULTIVALUE}},
    {"hashgraph-c", AX_LOAD, QUICK, 2, {1, 4}},
    {"hashgraph-c", AX_LOAD, ALL, 3, {0.25, 1, 4}},
    {"hashgraph-c", AX_BINS, QUICK, 3, {1024, 4096, 16384}},
    {"hashgraph-c", AX_BINS, ALL, 6, {1024, 2048, 4096, 8192, 16384, 32768}},
    {"hashgraph-c", AX_OP, ALL, 1, {OP_BUILD}},
    /* f: the same inputs into each multi-value design (cuckoo d = 4, table 1.25 x the distinct keys;
     * slab sized for the n entries at 0.7 slabs a bucket; hashgraph load 1) */
    {"hashgraph-f", AX_DESIGN, ALL, 4, {D_HASHGRAPH, D_CUCKOO, D_SLAB, D_SORTED}},
    {"hashgraph-f", AX_N, ALL, PER_MODE, {P2(26), P2(24), P2(20), P2(16)}},
    {"hashgraph-f", AX_DIST, ALL, 1, {DIST_CYCLIC}},
    {"hashgraph-f", AX_MULT, QUICK, 3, {1, 16, 256}},
    {"hashgraph-f", AX_MULT, ALL, 5, {1, 4, 16, 64, 256}},
    {"hashgraph-f", AX_VARIANT, ALL, 1, {GH_VARIANT_MULTIVALUE}},
    {"hashgraph-f", AX_LOAD, ALL, 1, {1}},
    {"hashgraph-f", AX_OP, ALL, 2, {OP_BUILD, OP_FIND}},
    /* d, e: the 2^26 rows a side, unique keys; the left rows of a match rate of p % are the
     * right keys but 100 - p % of them (absent_percent), in the right rows' order. */
    {"hashgraph-d", AX_DESIGN, ALL, 1, {D_HASHGRAPH}},
    {"hashgraph-d", AX_N, ALL, PER_MODE, {P2(26), P2(26), P2(18), P2(14)}},
    {"hashgraph-d", AX_VARIANT, ALL, 1, {GH_VARIANT_MULTIVALUE}},
    {"hashgraph-d", AX_LOAD, QUICK, 2, {1, 4}},
    {"hashgraph-d", AX_LOAD, ALL, 5, {0.25, 0.5, 1, 2, 4}},
    {"hashgraph-d", AX_ABSENT, ALL, 1, {0}},
    {"hashgraph-d", AX_OP, ALL, 2, {OP_JOIN, OP_JOIN_INTERSECT}},
    {"hashgraph-e", AX_DESIGN, ALL, 2, {D_HASHGRAPH, D_SORTED}},
    {"hashgraph-e", AX_N, ALL, PER_MODE, {P2(26), P2(26), P2(18), P2(14)}},
    {"hashgraph-e", AX_VARIANT, ALL, 1, {GH_VARIANT_MULTIVALUE}},
    {"hashgraph-e", AX_LOAD, ALL, 1, {1}},
    {"hashgraph-e", AX_ABSENT, ALL, 3, {99, 50, 0}},
    {"hashgraph-e", AX_OP, ALL, 1, {OP_JOIN}}};
const size_t bench_row_count = sizeof bench_rows / sizeof bench_rows[0];

/* ---- gpuhash tables ----------------------------------------------------------------------- */
static int variant(const bench_ctx *c) { return (int)fmax(c->ax[AX_VARIANT], 0); } /* -1: a map */
static const bench_design_def *design(const bench_ctx *c) { return &bench_designs[(int)c->ax[0]]; }
/* Entries per 120 data bytes of a slab: slots of 4, 8 or 16 bytes (gpuhash/detail/slab.h). */
static unsigned per_slab(const bench_ctx *c) {
  return 120 / (c->kb + c->vb > 8 ? 16 : c->kb + c->vb);
}

/* The dynamic workload's beta: DyCuckoo's default fill_max, also where warpdrive doubles. */
static double dynamic_fill_max(void) { return gh_config_default(GH_DYCUCKOO).fill_max; }
/* Its alpha: the axis (slab has none: the scenario's value all the same, for theta reported). */
static double dynamic_fill_min(const bench_ctx *c) { return c->ax[AX_FILL_MIN]; }

gh_config bench_table_config(const bench_ctx *c) {
  gh_config config = gh_config_default(design(c)->gh);
  config.backend = c->be->kind, config.device = (int)c->opts->device;
  config.key_bits = c->kb * 8;
  config.value_bits = variant(c) == GH_VARIANT_COMPACTING ? 32 : c->vb * 8; /* ids */
  config.variant = (gh_variant)variant(c); /* a map where the design has no variant axis */
  if (config.design == GH_WARPDRIVE) {
    config.group_size = (unsigned)c->ax[AX_G];
    config.capacity = (uint64_t)ceil((double)c->distinct / c->ax[AX_LOAD]);
    config.bulk_min_keys = c->ax[AX_PATH] == PATH_ORDINARY ? UINT64_MAX : 0;
  } else if (config.design == GH_SLAB) { /* initial_buckets: the capacity of that many */
    config.slab_load = c->ax[AX_SLABS];
    config.capacity = c->ax[AX_START] > 0 ? (uint64_t)(c->ax[AX_START] * per_slab(c) * config.slab_load)
                      : config.variant == GH_VARIANT_MULTIVALUE ? c->n : c->distinct; /* the entries */
  } else if (config.design == GH_HASHGRAPH) { /* room for the entries; keys per vertex */
    config.capacity = c->n;
    config.load_factor = c->ax[AX_LOAD];
    config.bin_vertices = c->ax[AX_BINS] > 0 ? (unsigned)c->ax[AX_BINS] : 0; /* 0: the default */
  } else if (config.design == GH_DYCUCKOO) { /* subtables sized for the keys at fill_max */
    config.capacity = c->distinct;
    config.hash_functions = (unsigned)c->ax[AX_D];
    config.bulk_min_keys = c->ax[AX_PATH] == PATH_ORDINARY ? UINT64_MAX : 0;
  } else { /* the keys; the table holds capacity x table_factor slots */
    config.capacity = c->distinct;
    config.hash_functions = (unsigned)c->ax[AX_D];
    config.bulk_min_keys = c->ax[AX_PATH] == PATH_ORDINARY ? UINT64_MAX : 0;
    config.table_factor = c->ax[AX_FACTOR];
    config.bucket_slots = (unsigned)c->ax[AX_BUCKET];
  }
  if (c->ax[AX_OP] == OP_AGING) /* half the key ids are resident at a time */
    config.capacity = (uint64_t)ceil((double)(c->n / 2) / c->ax[AX_LOAD]);
  if (c->ax[AX_OP] == OP_DYNAMIC) { /* room for one batch at first; the tables grow from there */
    const double batch = c->ax[AX_BATCH];
    config.capacity = (uint64_t)(config.design == GH_WARPDRIVE ? ceil(batch / dynamic_fill_max()) : batch);
    if (config.design == GH_DYCUCKOO) config.fill_min = c->ax[AX_FILL_MIN];
  }
  config.capacity += config.capacity == 0;
  /* in place: a budget that holds the rehash's bitmaps (a bit a window each: at most a quarter byte
   * a slot) and not the rebuild's copies (more than a slot's bytes a slot) */
  if (config.design == GH_WARPDRIVE && c->ax[AX_COMPACT] == COMPACT_IN_PLACE)
    config.compact_scratch_bytes = config.capacity / 4 + 64;
  return config;
}
/* Untimed, before an insert: a clear, or a new table: cuckoo's seeded by the run, so that each build
 * draws fresh hash constants (its restarts are independent trials), and slab-growth's. */
static int table_reset(bench_ctx *c) {
  c->filled = 0;
  /* slab-growth's tables are new each run, the grown one and the one sized for n alike: a grown
   * table stays grown when cleared, and a cleared table keeps the slabs SlabAlloc took, which a new
   * one takes (and pays for) while it fills. */
  if (!design(c)->fresh_per_insert && !(c->ax[AX_START] >= 0)) return GH_CALL(c, gh_clear(c->table, c->be->stream));
  gh_destroy(c->table), c->table = NULL;
  c->config.seed = c->opts->seed + c->runs;
  return GH_CALL(c, gh_create(&c->config, &c->table));
}
/* Inputs [from, from + n) */
static int insert(bench_ctx *c, uint8_t *failed_out, uint64_t from, uint64_t n) {
  const int v = variant(c), values = v != GH_VARIANT_COMPACTING && c->vb;
  c->insert_status = gh_insert(
      c->table, (char *)c->keys + from * c->kb, values ? (char *)c->values + from * c->vb : NULL, n,
      v == GH_VARIANT_MULTIVALUE ? GH_APPEND : design(c)->policy, failed_out, c->be->stream);
  if (c->insert_status == GH_ERR_TABLE_FULL) return BENCH_OK;
  return bench_call_failed(c, "gh_insert", c->insert_status);
}
static int table_insert(bench_ctx *c) { return insert(c, NULL, 0, c->n); }
/* slab-c: slab inserts batch by batch; warpdrive rebuilds (clear, insert all so far) per batch. */
static int table_batches(bench_ctx *c) {
  const uint64_t b = (uint64_t)c->ax[AX_BATCH], rebuild = design(c)->gh == GH_WARPDRIVE;
  int result = BENCH_OK;
  for (uint64_t done = 0, m; done < c->n && result == BENCH_OK; done += m) {
    m = done + b < c->n ? b : c->n - done;
    if (rebuild && done) result = GH_CALL(c, gh_clear(c->table, c->be->stream));
    if (result == BENCH_OK) result = insert(c, NULL, rebuild ? 0 : done, rebuild ? done + m : m);
  }
  return result;
}

/* After each insert: the entries (multivalue: every pair), and this insert's restarts. */
static int after_insert(bench_ctx *c, uint64_t failed) {
  const int multi = variant(c) == GH_VARIANT_MULTIVALUE, full = c->insert_status != GH_OK;
  const uint64_t expected = multi ? c->n : c->distinct;
  int result = GH_CALL(c, gh_get_stats(c->table, &c->stats));
  if (result != BENCH_OK) return result;
  if (full ? c->stats.size >= expected
           : c->stats.size != expected || (multi && c->stats.distinct_keys != c->distinct))
    return bench_wrong(c, "after an insert that returned %s: %llu entries (%llu keys), not %llu",
                       gh_status_name(c->insert_status), (unsigned long long)c->stats.size,
                       (unsigned long long)c->stats.distinct_keys, (unsigned long long)expected);
  c->stored = c->stats.size, c->failed = failed, c->filled = 1;
  c->restarts[c->runs % BENCH_MAX_RUNS] = (uint32_t)c->stats.restarts;
  c->grows[c->runs++ % BENCH_MAX_RUNS] = c->stats.grows;
  if (!c->opts->validate || c->validated++) return BENCH_OK;
  return GH_CALL(c, gh_validate(c->table));
}
/* Untimed: the inputs into the emptied table with failed_out, to know exactly what did not fit. */
static int table_fill(bench_ctx *c) {
  uint64_t failed = 0;
  int result = table_reset(c);
  if (result == BENCH_OK) result = insert(c, c->flags, 0, c->n);
  if (result == BENCH_OK) result = bench_count(c, c->flags, NULL, 0, c->n, 1, &failed);
  if (result != BENCH_OK) return result;
  if ((c->insert_status == GH_OK) != (failed == 0))
    return bench_wrong(c, "insert returned %s but flagged %llu inputs as not fitting",
                       gh_status_name(c->insert_status), (unsigned long long)failed);
  return after_insert(c, failed);
}
/* The timed insert had no failed_out (a write per key would add to its time): when the table
 * filled up, the insert is redone untimed with it to count what did not fit. */
static int table_insert_check(bench_ctx *c) {
  if (c->insert_status == GH_OK) return after_insert(c, 0);
  ++c->full_runs;
  return table_fill(c);
}
static int table_find(bench_ctx *c) {
  void *values_out = c->vb ? c->values_out : NULL;
  return GH_CALL(c, gh_find(c->table, c->q, c->nq, values_out, c->flags, NULL, c->be->stream));
}
/* Multivalue lookup: gh_find_all into a buffer of n values (it counts, sums and fills; a caller
 * who cannot size the buffer calls gh_count first, or again after GH_ERR_BUFFER_TOO_SMALL), as
 * the sorted baseline's find_all does. */
static int table_find_all(bench_ctx *c) {
  return GH_CALL(c, gh_find_all(c->table, c->q, c->nq, c->offsets, c->values_out, c->n, c->be->stream));
}
/* A join as a user runs it: the right rows built (the inputs, with their values), the pairs
 * counted, then filled into buffers of that size (left rows: offsets; right values: values_out). */
static int table_join(bench_ctx *c) {
  const gh_join_method method = c->ax[AX_OP] == OP_JOIN_INTERSECT ? GH_JOIN_INTERSECT : GH_JOIN_PROBE;
  int result = insert(c, NULL, 0, c->n);
  if (result == BENCH_OK) result = GH_CALL(c, gh_join_count(c->table, c->q, c->nq, method, &c->total, c->be->stream));
  if (result != BENCH_OK) return result;
  return GH_CALL(c, gh_join(c->table, c->q, c->nq, method, c->offsets, c->values_out, c->total, &c->total,
                            c->be->stream));
}
/* Unique keys: a pair for every left row that is not absent. */
static int join_check(bench_ctx *c) {
  c->filled = 0;
  if (c->total == c->nq - c->absent) return BENCH_OK;
  return bench_wrong(c, "the join has %llu pairs, expected %llu", (unsigned long long)c->total,
                     (unsigned long long)(c->nq - c->absent));
}
/* No erased_out / erased_count: counting could add work; gh_size == 0 proves every key went. */
static int table_erase(bench_ctx *c) {
  c->filled = 0;
  return GH_CALL(c, gh_erase(c->table, c->keys, c->n, NULL, NULL, c->be->stream));
}
static int table_erase_check(bench_ctx *c) {
  uint64_t size = 0;
  const int result = GH_CALL(c, gh_size(c->table, &size));
  if (result != BENCH_OK || size == 0) return result;
  return bench_wrong(c, "gh_size is %llu after erasing all %llu stored keys",
                     (unsigned long long)size, (unsigned long long)c->stored);
}

/* ---- The sorted structure ----------------------------------------------------------------- */
/* Map and multivalue sort the pairs, compacting the keys; then the backend encodes the runs. */
static int sorted_build(bench_ctx *c) {
  const gh_variant v = (gh_variant)variant(c);
  c->sorted.n = c->n;
  c->sorted.value_bytes = v == GH_VARIANT_COMPACTING ? 0 : c->vb;
  return bench_backend_failed(c, c->be->sorted_build(&c->sorted, c->keys, c->values, v), "sorting");
}
static int sorted_build_check(bench_ctx *c) {
  if (variant(c) != GH_VARIANT_MAP && c->sorted.unique != c->distinct)
    return bench_wrong(c, "the sorted structure has %llu distinct keys, expected %llu",
                       (unsigned long long)c->sorted.unique, (unsigned long long)c->distinct);
  c->stored = variant(c) == GH_VARIANT_MAP ? c->n : c->sorted.unique, c->filled = 1;
  return BENCH_OK;
}
/* Map: search the sorted pairs; compacting: the distinct keys, the id being the position. */
static int sorted_find(bench_ctx *c) {
  const bench_sorted *s = &c->sorted;
  const int ids = variant(c) == GH_VARIANT_COMPACTING;
  return bench_backend_failed(
      c, c->be->sorted_find(ids ? s->unique_keys : s->keys, ids ? NULL : s->values,
                            ids ? s->unique : s->n, c->kb, ids ? 4 : c->vb, c->q, c->nq,
                            c->values_out, c->flags), "binary search");
}
static int sorted_find_all(bench_ctx *c) {
  const int failed = c->be->sorted_find_all(&c->sorted, c->q, c->nq, c->offsets, c->counts,
                                            c->values_out, c->n, &c->total);
  return bench_backend_failed(c, failed, "binary search");
}

/* The sort-merge join: the right side sorted and encoded, then joined with the left keys. */
static int sorted_join(bench_ctx *c) {
  int result = sorted_build(c);
  if (result != BENCH_OK) return result;
  const int failed = c->be->sorted_join(&c->sorted, c->q, c->nq, c->offsets, c->values_out, c->n, &c->total);
  return bench_backend_failed(c, failed, "the sort-merge join");
}

/* ---- Both structures ---------------------------------------------------------------------- */
/* Untimed, before a lookup or an erase: the structure must hold the inputs (it does not before
 * cuckoo-b's first lookup, or after an erase). */
static int ready(bench_ctx *c) {
  int result;
  if (c->filled) return BENCH_OK;
  if (design(c)->gh) return table_fill(c);
  return (result = sorted_build(c)) == BENCH_OK ? sorted_build_check(c) : result;
}
/* n values returned against n expected (want NULL: all zero): *wrong counts those that differ;
 * records (values above 8 bytes) are compared by their 8-byte words, each wrong one counted. */
static int values_differ(bench_ctx *c, const void *got, const void *want, uint64_t n, uint64_t *wrong) {
  const unsigned word = c->vb > 8 ? 8u : c->vb;
  return bench_count(c, got, want, 0, n * (c->vb / word), word, wrong);
}

/* Found flags count the present queries; the values are those inserted where all are present
 * (unique keys, all stored), 0 where none is; compacting ids map back to their keys. */
static int find_check(bench_ctx *c) {
  const uint64_t expect = c->absent ? c->nq - c->absent : c->nq - c->failed;
  /* (A multivalue structure of unique keys returns each key's one value.) */
  const int one_value = variant(c) == GH_VARIANT_MAP || (variant(c) == GH_VARIANT_MULTIVALUE && c->distinct == c->n);
  const int map = one_value && c->vb, none = c->absent == c->nq;
  const int all = !c->absent && !c->failed && c->ax[AX_DIST] == DIST_UNIQUE;
  uint64_t found = 0, wrong = 0;
  int result = bench_count(c, c->flags, NULL, 0, c->nq, 1, &found);
  if (result == BENCH_OK && found != expect)
    return bench_wrong(c, "found %llu of %llu queries, expected %llu", (unsigned long long)found,
                       (unsigned long long)c->nq, (unsigned long long)expect);
  if (result == BENCH_OK && map && (none || all))
    result = values_differ(c, c->values_out, none ? NULL : c->values, c->nq, &wrong);
  if (result == BENCH_OK && wrong != 0)
    return bench_wrong(c, "%llu wrong values returned", (unsigned long long)wrong);
  if (result != BENCH_OK || variant(c) != GH_VARIANT_COMPACTING || c->table == NULL) return result;
  result = GH_CALL(c, gh_keys_of_ids(c->table, c->values_out, c->nq, c->keys_out, c->be->stream));
  if (result == BENCH_OK) result = bench_count(c, c->keys_out, c->q, 0, c->nq, c->kb, &wrong);
  if (result != BENCH_OK || wrong == 0) return result;
  return bench_wrong(c, "%llu ids do not map back to their key", (unsigned long long)wrong);
}

/* A multivalue lookup of each distinct key once returns each of the n values once: the offsets
 * end at n; with unique keys (each key's one value at its query's offset, i) they are the values
 * inserted, in the queries' order. */
static int find_all_check(bench_ctx *c) {
  uint64_t differ = 0, wrong = 0;
  int result = bench_count(c, c->offsets + c->nq, NULL, c->n, 1, sizeof(uint64_t), &differ);
  if (result == BENCH_OK && differ != 0)
    return bench_wrong(c, "the offsets do not end at %llu: not every value was returned once", (unsigned long long)c->n);
  if (result == BENCH_OK && c->distinct == c->n && c->vb)
    result = values_differ(c, c->values_out, c->values, c->nq, &wrong);
  if (result == BENCH_OK && wrong != 0)
    return bench_wrong(c, "%llu wrong values returned", (unsigned long long)wrong);
  return result;
}

/* slab-d (its checks: bench/README.md): the batch (ops in counts, keys in keys_out) and how many
 * of each op it has (an absent find's or an insert's key is not key(i)). */
static int mixed_prepare(bench_ctx *c) {
  bench_gen_spec spec = {GEN_OPS, 8, c->opts->seed, c->n, 0, 0, (unsigned)c->ax[AX_UPDATES], 0};
  int result = bench_backend_failed(c, c->be->generate(c->counts, c->n, spec, NULL), "ops");
  spec.bits = c->kb * 8;
  if (result == BENCH_OK)
    result = bench_backend_failed(c, c->be->generate(c->keys_out, c->n, spec, NULL), "op keys");
  for (int op = GH_OP_INSERT; op <= GH_OP_ERASE && result == BENCH_OK; ++op)
    result = bench_count(c, c->counts, NULL, (uint64_t)op, c->n, 1, &c->mix[op]);
  if (result == BENCH_OK) result = bench_count(c, c->keys_out, c->keys, 0, c->n, c->kb, &c->mix[0]);
  for (int op = GH_OP_INSERT; op <= GH_OP_ERASE; ++op) c->mix[op] = c->n - c->mix[op];
  c->absent = c->mix[0] - c->mix[GH_OP_INSERT];
  return result;
}
static int mixed_setup(bench_ctx *c) {
  const bench_gen_spec values = {GEN_VALUES, c->vb * 8, c->opts->seed, 0, 0, 0, 0, 0};
  const int result = ready(c);
  if (result != BENCH_OK) return result;
  return bench_backend_failed(c, c->be->generate(c->values_out, c->n, values, NULL), "values");
}
static int table_mixed(bench_ctx *c) {
  c->filled = 0;
  return GH_CALL(c, gh_mixed(c->table, (const uint8_t *)c->counts, c->keys_out, c->values, c->n,
                             design(c)->policy, c->values_out, c->flags, c->be->stream));
}
/* 1 for every insert, erase and present find; the size; the values of the present finds. */
static int mixed_check(bench_ctx *c) {
  const uint64_t size_expected = c->n + c->mix[GH_OP_INSERT] - c->mix[GH_OP_ERASE];
  uint64_t zeros = 0, wrong = 0, size = 0;
  int result = bench_count(c, c->flags, NULL, 1, c->n, 1, &zeros);
  if (result == BENCH_OK) result = bench_count(c, c->values_out, c->values, 0, c->n, c->vb, &wrong);
  if (result == BENCH_OK) result = GH_CALL(c, gh_size(c->table, &size));
  if (result != BENCH_OK || (zeros == c->absent && wrong == c->absent && size == size_expected))
    return result;
  return bench_wrong(c, "%llu results not 1, %llu values not the stored ones (expected %llu), "
                     "size %llu (expected %llu)", (unsigned long long)zeros,
                     (unsigned long long)wrong, (unsigned long long)c->absent,
                     (unsigned long long)size, (unsigned long long)size_expected);
}
/* slab-e: what gh_capacity says after the clear (base slabs), then the slabs the build took. */
static int alloc_reset(bench_ctx *c) {
  const int result = table_reset(c);
  return result != BENCH_OK ? result : GH_CALL(c, gh_capacity(c->table, &c->slabs));
}
static int alloc_check(bench_ctx *c) {
  const int result = table_insert_check(c);
  c->slabs = (c->stats.slots - c->slabs) / per_slab(c);
  return result;
}

/* ---- The dynamic workload (dycuckoo-c and -d; bench/README.md) ---------------------------- */
/* Batch j of the inputs in order inserts [j b, j b + inserts), then finds `finds` of the keys
 * present (a window at a place the seed picks), then erases the oldest: [j per, j per + erases),
 * per = b x delete_percent / 100 (at most half a batch, so these keys are always in). The replay
 * runs the batches from last to first with inserts and erases swapped: each takes the table back
 * to the state before its batch, down to empty. */
typedef struct dynamic_batch {
  uint64_t insert_at, inserts, find_at, finds, erase_at, erases;
} dynamic_batch;

static dynamic_batch batch_of(const bench_ctx *c, uint64_t j) {
  const uint64_t b = (uint64_t)c->ax[AX_BATCH], per = b * (uint64_t)c->ax[AX_DELETES] / 100;
  dynamic_batch x;
  x.insert_at = j * b;
  x.inserts = c->n - x.insert_at < b ? c->n - x.insert_at : b;
  x.erase_at = j * per;
  const uint64_t present = x.insert_at + x.inserts - x.erase_at; /* before the erase */
  x.erases = per < present ? per : present;
  x.finds = present < b ? present : b;
  x.find_at = x.erase_at + bench_mix64(j ^ c->opts->seed) % (present - x.finds + 1);
  return x;
}
static uint64_t batches(const bench_ctx *c) {
  const uint64_t b = (uint64_t)c->ax[AX_BATCH];
  return (c->n + b - 1) / b;
}

/* Untimed, before each run: the table as created (warpdrive's was replaced by rehashing). */
static int dynamic_setup(bench_ctx *c) {
  bench_dynamic *d = &c->dynamic;
  gh_destroy(c->table), c->table = NULL, c->stored = 0;
  int result = GH_CALL(c, gh_create(&c->config, &c->table));
  if (result == BENCH_OK) result = GH_CALL(c, gh_get_stats(c->table, &c->stats));
  d->first_slots = c->stats.slots, d->points = 0, d->theta_min = 1.0, d->peak_bytes = 0;
  d->stride = (2 * batches(c) + BENCH_MAX_SERIES - 1) / BENCH_MAX_SERIES;
  return result;
}

/* warpdrive's resize (lap `lap`): when `keys` would leave [fill_min, fill_max] of its slots, the
 * slots double (or halve, not below the first table's) until they fit, and every entry is
 * exported and inserted into a new table of that size. */
static int warpdrive_rehash(bench_ctx *c, uint64_t keys, unsigned lap, int *timed) {
  const double fill_max = dynamic_fill_max(), fill_min = dynamic_fill_min(c);
  uint64_t slots = 0, target, count = 0;
  int result = GH_CALL(c, gh_capacity(c->table, &slots));
  for (target = slots; (double)keys > fill_max * (double)target;) target *= 2;
  while (target / 2 >= c->dynamic.first_slots && (double)keys < fill_min * (double)target) target /= 2;
  if (result != BENCH_OK || target == slots) return result;
  gh_config config = c->config;
  gh_table *grown = NULL;
  config.capacity = target;
  if (bench_backend_failed(c, c->be->lap_start(lap) != 0, "timing") != BENCH_OK) return BENCH_FATAL;
  result = GH_CALL(c, gh_export(c->table, c->keys_out, c->values_out, c->n, &count, c->be->stream));
  if (result == BENCH_OK) result = GH_CALL(c, gh_create(&config, &grown));
  if (result == BENCH_OK)
    result = GH_CALL(c, gh_insert(grown, c->keys_out, c->values_out, count, design(c)->policy, NULL,
                                  c->be->stream));
  if (result == BENCH_OK) gh_destroy(c->table), c->table = grown, grown = NULL;
  gh_destroy(grown);
  *timed = 1;
  return result != BENCH_OK ? result : bench_backend_failed(c, c->be->lap_stop(lap) != 0, "timing");
}

/* One call as lap `lap` (its start marked before the call is made). */
static int lap_end(bench_ctx *c, unsigned lap, const char *call, gh_status status) {
  const int result = bench_call_failed(c, call, status);
  return result != BENCH_OK ? result : bench_backend_failed(c, c->be->lap_stop(lap) != 0, "timing");
}
#define LAP(c, lap, call)                                                                   \
  (bench_backend_failed(c, (c)->be->lap_start(lap) != 0, "timing") != BENCH_OK ? BENCH_FATAL \
                                                                                : lap_end(c, lap, #call, call))
enum { LAP_GROW, LAP_INSERT, LAP_FIND, LAP_ERASE, LAP_SHRINK };

/* The finds of a batch all hit, with the values inserted (untimed). */
static int dynamic_find_check(bench_ctx *c, const dynamic_batch *x) {
  uint64_t misses = 0, wrong = 0;
  int result = bench_count(c, c->flags, NULL, 1, x->finds, 1, &misses);
  if (result == BENCH_OK && c->vb)
    result = values_differ(c, c->values_out, (char *)c->values + x->find_at * c->vb, x->finds, &wrong);
  if (result != BENCH_OK || (misses == 0 && wrong == 0)) return result;
  return bench_wrong(c, "%llu of %llu finds of present keys missed, %llu values wrong",
                     (unsigned long long)misses, (unsigned long long)x->finds,
                     (unsigned long long)wrong);
}

/* Batch k of the run (the replay's are k >= batches), into ms[PHASE_*]; after it, the size is
 * checked and the filled factor and the table's bytes recorded. */
static int run_batch(bench_ctx *c, uint64_t k, double *ms) {
  const uint64_t j = k < batches(c) ? k : 2 * batches(c) - 1 - k;
  const dynamic_batch x = batch_of(c, j);
  const int replay = k >= batches(c), rehash = design(c)->gh == GH_WARPDRIVE;
  const uint64_t in_at = replay ? x.erase_at : x.insert_at, in = replay ? x.erases : x.inserts;
  const uint64_t out_at = replay ? x.insert_at : x.erase_at, out = replay ? x.inserts : x.erases;
  const double resized_before = c->stats.resize_seconds;
  gh_stats inserted;
  int grew = 0, shrank = 0, result = BENCH_OK;
  size_t host = 0, device = 0;
  if (rehash) result = warpdrive_rehash(c, c->stored + in, LAP_GROW, &grew);
  if (result == BENCH_OK)
    result = LAP(c, LAP_INSERT, gh_insert(c->table, (char *)c->keys + in_at * c->kb,
                                          c->vb ? (char *)c->values + in_at * c->vb : NULL, in,
                                          design(c)->policy, NULL, c->be->stream));
  if (result == BENCH_OK) result = GH_CALL(c, gh_get_stats(c->table, &inserted));
  if (result == BENCH_OK)
    result = LAP(c, LAP_FIND, gh_find(c->table, (char *)c->keys + x.find_at * c->kb, x.finds,
                                      c->vb ? c->values_out : NULL, c->flags, NULL, c->be->stream));
  if (result == BENCH_OK) result = dynamic_find_check(c, &x);
  if (result == BENCH_OK)
    result = LAP(c, LAP_ERASE, gh_erase(c->table, (char *)c->keys + out_at * c->kb, out, NULL, NULL,
                                        c->be->stream));
  c->stored += in - out;
  if (result == BENCH_OK && rehash) result = warpdrive_rehash(c, c->stored, LAP_SHRINK, &shrank);
  double lap[LAP_SHRINK + 1] = {0};
  for (unsigned l = 0; l <= LAP_SHRINK && result == BENCH_OK; ++l)
    if ((l != LAP_GROW || grew) && (l != LAP_SHRINK || shrank))
      result = bench_backend_failed(c, c->be->lap_ms(l, &lap[l]) != 0, "timing");
  if (result == BENCH_OK) result = GH_CALL(c, gh_get_stats(c->table, &c->stats));
  if (result == BENCH_OK) result = GH_CALL(c, gh_memory_usage(c->table, &host, &device));
  if (result != BENCH_OK) return result;
  if (c->stats.size != c->stored)
    return bench_wrong(c, "%llu keys after batch %llu, expected %llu",
                       (unsigned long long)c->stats.size, (unsigned long long)k,
                       (unsigned long long)c->stored);
  /* dycuckoo and slab resize inside their calls and say for how long: not their insert's time */
  const double in_resize = 1e3 * (inserted.resize_seconds - resized_before);
  const double out_resize = 1e3 * (c->stats.resize_seconds - inserted.resize_seconds);
  ms[PHASE_INSERT] += lap[LAP_INSERT] - in_resize;
  ms[PHASE_FIND] += lap[LAP_FIND];
  ms[PHASE_ERASE] += lap[LAP_ERASE] - out_resize;
  ms[PHASE_RESIZE] += lap[LAP_GROW] + lap[LAP_SHRINK] + in_resize + out_resize;
  bench_dynamic *d = &c->dynamic;
  const double theta = (double)c->stats.size / (double)c->stats.slots;
  const double bytes = (double)(c->be->stream ? device : host);
  const int possible = (double)c->stats.size >= dynamic_fill_min(c) * (double)d->first_slots;
  if (possible && theta < d->theta_min) d->theta_min = theta;
  if (bytes > d->peak_bytes) d->peak_bytes = bytes;
  if (k % d->stride == 0 && d->points < BENCH_MAX_SERIES)
    d->theta[d->points] = theta, d->bytes[d->points++] = bytes;
  return BENCH_OK;
}

/* The whole workload; its time is the sum of the laps (the checks between them are not in it). */
static int table_dynamic(bench_ctx *c) {
  double *ms = c->dynamic.phase_ms[c->runs++ % BENCH_MAX_RUNS];
  int result = BENCH_OK;
  c->dynamic.ops = 0, c->dynamic.batches = 2 * batches(c);
  for (int p = 0; p < PHASE_COUNT; ++p) ms[p] = 0;
  for (uint64_t k = 0; k < c->dynamic.batches && result == BENCH_OK; ++k)
    result = run_batch(c, k, ms);
  for (uint64_t j = 0; j < batches(c); ++j) {
    const dynamic_batch x = batch_of(c, j);
    c->dynamic.ops += 2 * (x.inserts + x.finds + x.erases);
  }
  c->own_ms = ms[PHASE_INSERT] + ms[PHASE_FIND] + ms[PHASE_ERASE] + ms[PHASE_RESIZE];
  return result;
}

/* ---- The aging workload (aging; bench/README.md) -------------------------------------------- */
/* Key ids [0, n) in a ring, m = n / 2 of them resident: slice j erases ids [j s, j s + s) mod n
 * (the oldest) and inserts [m + j s, m + j s + s) mod n, so the table stays at its load while
 * erased slots pile up as tombstones; then it finds s resident keys (a slice the seed picks).
 * Tombstones take the place of empty slots, and an insert probes on to an empty slot (to know its
 * key absent): without a clean-up the inserts end up walking to the probe limit. So after a slice
 * that leaves more than AGING_TOMBSTONES of the slots as tombstones the table is compacted
 * (gh_compact, timed as the run's "resize" phase), as a user would from gh_get_stats. */
enum { AGING_SLICES = 1000 };
#define AGING_TOMBSTONES 0.05
static uint64_t aging_resident(const bench_ctx *c) { return c->n / 2; }

/* One of the ring's operations on ids [at, at + count) mod n, in one call or two where the range
 * wraps, timed as lap `lap`: an insert, an erase, or a find (into values_out, flags). */
enum { AGING_INSERT, AGING_ERASE, AGING_FIND };
static int aging_apply(bench_ctx *c, int what, uint64_t at, uint64_t count, unsigned lap) {
  int result = bench_backend_failed(c, c->be->lap_start(lap) != 0, "timing");
  for (uint64_t done = 0, k; done < count && result == BENCH_OK; done += k) {
    const uint64_t from = (at + done) % c->n;
    const void *keys = (char *)c->keys + from * c->kb;
    k = c->n - from < count - done ? c->n - from : count - done;
    result = what == AGING_INSERT ? insert(c, NULL, from, k)
             : what == AGING_ERASE ? GH_CALL(c, gh_erase(c->table, keys, k, NULL, NULL, c->be->stream))
             : GH_CALL(c, gh_find(c->table, keys, k, c->vb ? (char *)c->values_out + done * c->vb : NULL,
                                  c->flags + done, NULL, c->be->stream));
  }
  return result != BENCH_OK ? result : bench_backend_failed(c, c->be->lap_stop(lap) != 0, "timing");
}

/* Every one of the last find's count keys (all resident) was found. */
static int aging_all_found(bench_ctx *c, uint64_t count) {
  uint64_t misses = 0;
  const int result = bench_count(c, c->flags, NULL, 1, count, 1, &misses);
  if (result != BENCH_OK || misses == 0) return result;
  return bench_wrong(c, "%llu of %llu resident keys not found", (unsigned long long)misses,
                     (unsigned long long)count);
}

/* Finds ids [at, at + count) mod n (lap `lap`); every one must be found. */
static int aging_find(bench_ctx *c, uint64_t at, uint64_t count, unsigned lap) {
  const int result = aging_apply(c, AGING_FIND, at, count, lap);
  return result != BENCH_OK ? result : aging_all_found(c, count);
}

/* Untimed, before each run: a fresh table holding ids [0, m). */
static int aging_setup(bench_ctx *c) {
  gh_destroy(c->table), c->table = NULL;
  int result = GH_CALL(c, gh_create(&c->config, &c->table));
  if (result == BENCH_OK) result = aging_apply(c, AGING_INSERT, 0, aging_resident(c), LAP_INSERT);
  c->stored = aging_resident(c);
  return result;
}

/* Untimed: a find of the m resident keys as gh_export gave them (keys_out), its time in *ms. The
 * order matters: in a table filled in one pass the keys inserted last are the ones displaced from
 * their first window, so queries in insertion order meet them together, a warp at a time, and run
 * faster than in gh_export's order (0.38 against 0.43 ms on an H200 at 2^23 resident keys).
 * gh_export's order is the slots'. */
static int aging_find_exported(bench_ctx *c, uint64_t m, double *ms) {
  int result = LAP(c, LAP_FIND, gh_find(c->table, c->keys_out, m, c->vb ? c->values_out : NULL, c->flags, NULL,
                                         c->be->stream));
  if (result == BENCH_OK) result = bench_backend_failed(c, c->be->lap_ms(LAP_FIND, ms) != 0, "timing");
  return result != BENCH_OK ? result : aging_all_found(c, m);
}

/* The slices (their inserts, erases and finds are the run's time), then untimed in the run's
 * figures: the resident keys exported, found in the aged table, after gh_compact, and in a fresh
 * table of them (cleared, then the keys inserted in their order). */
static int table_aging(bench_ctx *c) {
  bench_dynamic *d = &c->dynamic;
  double *ms = d->phase_ms[c->runs++ % BENCH_MAX_RUNS];
  const uint64_t m = aging_resident(c), s = (uint64_t)c->ax[AX_BATCH];
  int result = BENCH_OK;
  d->ops = 0, d->batches = AGING_SLICES, d->points = 0, d->compactions = 0;
  d->stride = (AGING_SLICES + BENCH_MAX_SERIES - 1) / BENCH_MAX_SERIES;
  for (int p = 0; p < PHASE_COUNT; ++p) ms[p] = 0;
  if (s > m)
    return bench_error("%s: slices of %llu keys, only %llu resident: give a batch of at most n / 2", c->desc,
                       (unsigned long long)s, (unsigned long long)m), BENCH_BROKEN;
  for (uint64_t j = 0; j < AGING_SLICES && result == BENCH_OK; ++j) {
    const uint64_t out_at = j * s % c->n, in_at = (m + j * s) % c->n;
    /* resident after the slice: ids [out_at + s, out_at + s + m) mod n; find a slice of them */
    const uint64_t find_at = (out_at + s + bench_mix64(j ^ c->opts->seed) % (m - s + 1)) % c->n;
    double lap[LAP_SHRINK + 1] = {0};
    result = aging_apply(c, AGING_ERASE, out_at, s, LAP_ERASE);
    if (result == BENCH_OK) result = aging_apply(c, AGING_INSERT, in_at, s, LAP_INSERT);
    if (result == BENCH_OK) result = aging_find(c, find_at, s, LAP_FIND);
    for (unsigned l = LAP_INSERT; l <= LAP_ERASE && result == BENCH_OK; ++l)
      result = bench_backend_failed(c, c->be->lap_ms(l, &lap[l]) != 0, "timing");
    if (result == BENCH_OK) result = GH_CALL(c, gh_get_stats(c->table, &c->stats));
    if (result != BENCH_OK) return result;
    if (c->stats.size != m)
      return bench_wrong(c, "%llu keys after slice %llu, expected %llu", (unsigned long long)c->stats.size,
                         (unsigned long long)j, (unsigned long long)m);
    ms[PHASE_INSERT] += lap[LAP_INSERT], ms[PHASE_FIND] += lap[LAP_FIND], ms[PHASE_ERASE] += lap[LAP_ERASE];
    d->ops += 3 * s;
    if (j % d->stride == 0 && d->points < BENCH_MAX_SERIES)
      d->find_rate[d->points] = (double)s / (lap[LAP_FIND] * 1e-3) / 1e9,
      d->tombstones[d->points++] = (double)c->stats.tombstones;
    if ((double)c->stats.tombstones > AGING_TOMBSTONES * (double)c->stats.slots) {
      result = LAP(c, LAP_GROW, gh_compact(c->table, c->be->stream));
      if (result == BENCH_OK) result = bench_backend_failed(c, c->be->lap_ms(LAP_GROW, &lap[LAP_GROW]) != 0, "timing");
      ms[PHASE_RESIZE] += lap[LAP_GROW], d->compactions += 1;
    }
  }
  c->own_ms = ms[PHASE_INSERT] + ms[PHASE_FIND] + ms[PHASE_ERASE] + ms[PHASE_RESIZE];
  const uint64_t resident_at = AGING_SLICES * s % c->n;
  uint64_t exported = 0;
  if (result == BENCH_OK)
    result = GH_CALL(c, gh_export(c->table, c->keys_out, c->vb ? c->values_out : NULL, m, &exported, c->be->stream));
  if (result == BENCH_OK && exported != m)
    return bench_wrong(c, "gh_export gave %llu keys, %llu resident", (unsigned long long)exported, (unsigned long long)m);
  if (result == BENCH_OK) result = aging_find_exported(c, m, &d->aged_find_ms);
  if (result == BENCH_OK) result = LAP(c, LAP_GROW, gh_compact(c->table, c->be->stream));
  if (result == BENCH_OK) result = bench_backend_failed(c, c->be->lap_ms(LAP_GROW, &d->compact_ms) != 0, "timing");
  if (result == BENCH_OK) result = aging_find_exported(c, m, &d->compacted_find_ms);
  if (result == BENCH_OK) result = GH_CALL(c, gh_clear(c->table, c->be->stream));
  if (result == BENCH_OK) result = aging_apply(c, AGING_INSERT, resident_at, m, LAP_INSERT);
  if (result == BENCH_OK) result = aging_find_exported(c, m, &d->fresh_find_ms);
  return result;
}

/* ---- One resize (dycuckoo-b; bench/README.md) ---------------------------------------------- */
/* Untimed: a new table brought to the edge. upsize: sized for 0.9 n keys (about n slots), filled
 * to fill_max; downsize: grown from one bucket per subtable by the n keys, then erased down to
 * fill_min; rehash_by_insert: sized for n, holding all keys but the last n / d. */
static int resize_setup(bench_ctx *c) {
  const int op = (int)c->ax[AX_OP];
  const uint64_t d = (uint64_t)c->ax[AX_D];
  gh_config config = c->config;
  config.capacity = op == OP_UPSIZE ? c->n / 10 * 9 : op == OP_DOWNSIZE ? 1 : c->n;
  gh_destroy(c->table), c->table = NULL;
  int result = GH_CALL(c, gh_create(&config, &c->table));
  if (result == BENCH_OK) result = GH_CALL(c, gh_get_stats(c->table, &c->stats));
  uint64_t fill = op == OP_REINSERT ? c->n - c->n / d : c->n;
  if (op == OP_UPSIZE) fill = (uint64_t)(config.fill_max * (double)c->stats.slots);
  if (result == BENCH_OK && fill > c->n)
    return bench_wrong(c, "a table for %llu keys has room for %llu", (unsigned long long)config.capacity,
                       (unsigned long long)fill);
  if (result == BENCH_OK) result = insert(c, NULL, 0, fill);
  if (result == BENCH_OK) result = GH_CALL(c, gh_get_stats(c->table, &c->stats));
  const uint64_t keep = (uint64_t)ceil(config.fill_min * (double)c->stats.slots);
  if (result == BENCH_OK && op == OP_DOWNSIZE)
    result = GH_CALL(c, gh_erase(c->table, c->keys, c->n - keep, NULL, NULL, c->be->stream));
  if (result == BENCH_OK) result = GH_CALL(c, gh_get_stats(c->table, &c->stats));
  c->stored = op == OP_DOWNSIZE ? keep : fill;
  return result;
}
/* upsize: one more key; downsize: one key fewer; each a call that resizes once. The time is the
 * resize's (gh_stats.resize_seconds), the rate the keys of the subtable resized per second. */
static int resize_op(bench_ctx *c) {
  const int op = (int)c->ax[AX_OP];
  if (op == OP_REINSERT) return insert(c, NULL, c->stored, c->n - c->stored);
  const gh_stats before = c->stats;
  int result = op == OP_UPSIZE ? insert(c, NULL, c->stored, 1)
               : GH_CALL(c, gh_erase(c->table, (char *)c->keys + (c->n - c->stored) * c->kb, 1, NULL,
                                     NULL, c->be->stream));
  if (result == BENCH_OK) result = GH_CALL(c, gh_get_stats(c->table, &c->stats));
  if (result != BENCH_OK) return result;
  unsigned resized = 0, count = 0;
  for (unsigned i = 0; i < c->stats.subtables; ++i)
    if (c->stats.subtable_buckets[i] != before.subtable_buckets[i]) resized = i, ++count;
  const uint64_t resizes = c->stats.upsizes + c->stats.downsizes - before.upsizes - before.downsizes;
  if (count != 1 || resizes != 1)
    return bench_wrong(c, "%llu resizes changed %u subtables, expected one", (unsigned long long)resizes, count);
  c->moved = before.subtable_keys[resized];
  c->own_ms = 1e3 * (c->stats.resize_seconds - before.resize_seconds);
  return BENCH_OK;
}
/* Every key present (the first `stored`, or all after rehash_by_insert), the size as expected. */
static int resize_check(bench_ctx *c) {
  const int op = (int)c->ax[AX_OP];
  const uint64_t expected = op == OP_UPSIZE ? c->stored + 1 : op == OP_DOWNSIZE ? c->stored - 1 : c->n;
  if (c->stats.size != expected && op != OP_REINSERT)
    return bench_wrong(c, "%llu keys after the resize, expected %llu", (unsigned long long)c->stats.size,
                       (unsigned long long)expected);
  const uint64_t from = op == OP_DOWNSIZE ? c->n - c->stored + 1 : 0;
  uint64_t missing = 0;
  int result = GH_CALL(c, gh_find(c->table, (char *)c->keys + from * c->kb, expected, NULL, c->flags, NULL,
                                  c->be->stream));
  if (result == BENCH_OK) result = bench_count(c, c->flags, NULL, 1, expected, 1, &missing);
  if (result != BENCH_OK || missing == 0) return result;
  return bench_wrong(c, "%llu of %llu keys lost by the resize", (unsigned long long)missing, (unsigned long long)expected);
}

/* ---- Ceilings: a failure is the device's, never a table's, so fatal ---------------------- */
static int limit(bench_ctx *c, int step) {
  const int which = (int)c->ax[AX_OP] - OP_LIMIT_COPY;
  return bench_backend_failed(c, c->be->limit(step, which, c->limit_buffer, c->opts->seed, &c->n),
                              "limit");
}
static int limit_prepare(bench_ctx *c) { return limit(c, BENCH_PREPARE); }
static int limit_reset(bench_ctx *c) { return limit(c, BENCH_RESET); }
static int limit_launch(bench_ctx *c) { return limit(c, BENCH_LAUNCH); }
static int limit_verify(bench_ctx *c) { return limit(c, BENCH_VERIFY); }

/* The steps of each design and op: prepare, then per run setup, the timed op, check. */
const bench_steps *bench_steps_for(int design, int op) {
  static const bench_steps LIMIT = {limit_prepare, limit_reset, limit_launch, limit_verify};
  static const bench_steps TABLE[OP_COUNT] = {
      [OP_INSERT] = {NULL, table_reset, table_insert, table_insert_check},
      [OP_BUILD] = {NULL, table_reset, table_insert, table_insert_check},
      [OP_FIND] = {NULL, ready, table_find, find_check},
      [OP_FIND_ABSENT] = {NULL, ready, table_find, find_check},
      [OP_ERASE] = {NULL, ready, table_erase, table_erase_check},
      [OP_FIND_ALL] = {NULL, ready, table_find_all, find_all_check},
      [OP_JOIN] = {NULL, table_reset, table_join, join_check},
      [OP_JOIN_INTERSECT] = {NULL, table_reset, table_join, join_check},
      [OP_FIND_FIRST] = {NULL, ready, table_find, find_check},
      [OP_BATCHES] = {NULL, table_reset, table_batches, table_insert_check},
      [OP_MIXED] = {mixed_prepare, mixed_setup, table_mixed, mixed_check},
      [OP_ALLOC] = {NULL, alloc_reset, table_insert, alloc_check},
      [OP_DYNAMIC] = {NULL, dynamic_setup, table_dynamic, NULL},
      [OP_AGING] = {NULL, aging_setup, table_aging, NULL},
      [OP_UPSIZE] = {NULL, resize_setup, resize_op, resize_check},
      [OP_DOWNSIZE] = {NULL, resize_setup, resize_op, resize_check},
      [OP_REINSERT] = {NULL, resize_setup, resize_op, resize_check}};
  static const bench_steps SORTED[OP_COUNT] = {
      [OP_BUILD] = {NULL, NULL, sorted_build, sorted_build_check},
      [OP_FIND] = {NULL, ready, sorted_find, find_check},
      [OP_FIND_ALL] = {NULL, ready, sorted_find_all, find_all_check},
      [OP_JOIN] = {NULL, NULL, sorted_join, join_check},
      [OP_FIND_FIRST] = {NULL, ready, sorted_find, find_check}};
  return design == D_LIMITS ? &LIMIT : design == D_SORTED ? &SORTED[op] : &TABLE[op];
}