/*
 * test_util.h - what every gpuhash test shares: failure reporting that names the case, a seeded
 * PRNG, key generators, a trivially correct reference map, and wrappers that run one operation
 * on a table and on the reference and compare the two.
 *
 * Keys and values are handled as uint64_t arrays inside the tests and packed to the table's
 * width (32 or 64 bits) only at the API call, so one test body covers every width.
 *
 * Plain C11; also compiles as C++ so that a .cu test can use it.
 */
#ifndef GH_TEST_UTIL_H
#define GH_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "gpuhash.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TU_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#define TU_NORETURN __attribute__((noreturn))
#else
#define TU_PRINTF(fmt_index, first_arg)
#define TU_NORETURN
#endif

/* ctest's SKIP_RETURN_CODE for the CUDA entries: used for "no GPU here" and nothing else. */
#define TU_SKIP_EXIT_CODE 77

/* ---------------------------------------------------------------------------------------- */
/* Failure reporting                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* The case being run ("backend=host key_bits=32 ... seed=0x..."), printed with every failure so
 * that a failing line can be reproduced without reading the test. */
void tu_set_context(const char *fmt, ...) TU_PRINTF(1, 2);
/* The phase or step within the case ("erase half", "step 1234 op insert"). */
void tu_set_phase(const char *fmt, ...) TU_PRINTF(1, 2);

int tu_check_impl(int ok, const char *file, int line, const char *expr, const char *fmt, ...)
    TU_PRINTF(5, 6);
int tu_check_status_impl(const gh_table *table, gh_status got, gh_status want, const char *file,
                         int line, const char *expr);
void tu_require_impl(int ok, const char *file, int line, const char *expr, const char *fmt, ...)
    TU_PRINTF(5, 6);

/* Non-fatal: prints file:line, the expression, the message and the case, counts the failure and
 * evaluates to 1 when cond held, else 0 (so `if (!CHECK(...)) goto out;` stops a case early). */
#define CHECK(cond, ...) tu_check_impl((cond) ? 1 : 0, __FILE__, __LINE__, #cond, __VA_ARGS__)
/* The call's status must be `want`; on mismatch also prints gh_last_error(table). */
#define CHECK_STATUS(table, call, want) \
  tu_check_status_impl((table), (call), (want), __FILE__, __LINE__, #call)
#define CHECK_OK(table, call) CHECK_STATUS(table, call, GH_OK)
/* Fatal: for preconditions without which the rest of the program makes no sense. */
#define REQUIRE(cond, ...) tu_require_impl((cond) ? 1 : 0, __FILE__, __LINE__, #cond, __VA_ARGS__)

/* Turns a crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) into a report that names the case and
 * the phase it happened in, then lets the signal take its course (the sanitizers' handlers, when
 * present, still report it; the process still dies of it, so ctest reports the entry failed). For
 * tests that call into code expected to crash on today's bugs. */
void tu_install_crash_handler(void);
/* A wall-clock bound: after `seconds` the process prints the case and phase with "TIMEOUT" and
 * exits 1. tu_set_alarm(0) cancels it. A case that hangs fails instead of stalling CI. */
void tu_set_alarm(unsigned seconds);
/* Seconds since an arbitrary start (monotonic clock). */
double tu_seconds(void);

/* Failures from now on that are printed (the rest are counted); by default the first 40 of the
 * run. A test of many independent parts gives each part a budget of its own. */
void tu_set_print_budget(unsigned long failures);

/* Number of failed checks so far. */
unsigned long tu_failure_count(void);
/* Prints the summary line and returns the process exit code (0 = every check passed). */
int tu_finish(const char *test_name);

/* ---------------------------------------------------------------------------------------- */
/* Command line and environment                                                              */
/* ---------------------------------------------------------------------------------------- */

/* "host" / "cuda" -> backend; 0 when the word is neither. */
int tu_parse_backend(const char *word, gh_backend *backend);
const char *tu_backend_name(gh_backend backend);
/* For the CUDA backend without a usable GPU: prints "SKIPPED: no GPU here" and exits 77. Never
 * skips for any other reason: a GPU that is present but fails is a failure. */
void tu_skip_unless_backend_usable(gh_backend backend);
/* "32" / "64" (and "0" when allow_zero) -> bits; 0 on anything else. */
int tu_parse_bits(const char *word, int allow_zero, unsigned *bits);
/* Parses a decimal or 0x-prefixed seed; 0 on a malformed word. */
int tu_parse_u64(const char *word, uint64_t *value);

/* The table designs, so that a test can take the design as one more parameter. What a design
 * can do comes from the library itself (gh_design_by_name, gh_design_info): tests branch on
 * these traits, never on a design's enum value, so that a new design runs the whole suite. */
typedef struct tu_design {
  gh_design design;
  const char *name; /* the library's name for it (static storage) */
  gh_design_traits traits;
} tu_design;
/* The design the library calls `name`; NULL when it has none. */
const tu_design *tu_design_by_name(const char *name);
/* The design with this enum value; NULL when the library does not have it. */
const tu_design *tu_design_of(gh_design design);
/* Whether the design has every GH_CAP_* bit of `capabilities`. */
int tu_design_has(const tu_design *design, unsigned capabilities);
int tu_design_accepts_variant(const tu_design *design, gh_variant variant);

/* "map" (or "set" when value_bits is 0), "compacting", "multivalue". */
const char *tu_variant_name(gh_variant variant, unsigned value_bits);
/* "map" / "compacting" / "multivalue" -> variant; 0 on anything else. */
int tu_parse_variant(const char *word, gh_variant *variant);
/* The command line of the per-design tests: "host|cuda --design NAME [--variant V] [--seed S]"
 * (--variant required when variant is not NULL, refused otherwise). *seed keeps its value unless
 * given. Returns 0 on a malformed line. */
int tu_parse_case_args(int argc, char **argv, gh_backend *backend, const struct tu_design **design,
                       gh_variant *variant, uint64_t *seed);
/* One case of a per-design test, for a (key_bits, value_bits) pair and a seed of its own. */
typedef void (*tu_width_case)(const struct tu_design *design, gh_variant variant, gh_backend backend,
                              unsigned key_bits, unsigned value_bits, uint64_t seed);
/* Runs run for the widths a variant is tested with: map_widths for maps and sets, other_widths
 * (ids or values) for the other variants; each pair's seed is mixed from base. */
void tu_run_widths(const unsigned (*map_widths)[2], size_t map_count, const unsigned (*other_widths)[2],
                   size_t other_count, tu_width_case run, const struct tu_design *design, gh_variant variant,
                   gh_backend backend, uint64_t base);
/* The usage line of tu_parse_case_args's command line; returns 2 (the exit code for it). */
int tu_case_usage(const char *program);

/* The smallest cuckoo table factor the API accepts for d = 2..5 hash functions (index d - 2). */
extern const double tu_cuckoo_min_factor[4];
struct tu_rng;
/* Picks a random cuckoo configuration: d = 2..5, either hash family, and a table factor of the
 * minimum for d plus one of extra[0..extra_n). Describes it into params (" hash_functions=..."). */
void tu_random_cuckoo_params(struct tu_rng *rng, gh_config *cfg, const double *extra, size_t extra_n,
                             char *params, size_t params_size);

/* The warpdrive group sizes the API accepts, in increasing order. */
extern const unsigned tu_group_sizes[6];

/* ---------------------------------------------------------------------------------------- */
/* PRNG and key generators                                                                   */
/* ---------------------------------------------------------------------------------------- */

typedef struct tu_rng {
  uint64_t state;
} tu_rng;

struct tu_ref; /* the reference map, below */

tu_rng tu_rng_make(uint64_t seed);
uint64_t tu_next(tu_rng *rng);                /* splitmix64 */
uint64_t tu_below(tu_rng *rng, uint64_t n);   /* uniform in [0, n), n > 0 */
/* Derives an independent seed from a base seed and a few case parameters. */
uint64_t tu_mix_seed(uint64_t base, uint64_t a, uint64_t b, uint64_t c);

/* All-ones for bits 32 / 64, 0 for bits 0. */
uint64_t tu_mask(unsigned bits);

void tu_shuffle(tu_rng *rng, uint64_t *array, uint64_t n);
/* n distinct random keys of the width, none of them present in `avoid` (may be NULL). */
void tu_gen_unique_keys(tu_rng *rng, unsigned key_bits, uint64_t n, const struct tu_ref *avoid,
                        uint64_t *out);
/* n keys drawn uniformly with replacement from pool[0..pool_n). */
void tu_gen_from_pool(tu_rng *rng, const uint64_t *pool, uint64_t pool_n, uint64_t n,
                      uint64_t *out);
/* Each of pool[0..pool_n) repeated 1..max_copies times, shuffled, into out (room for
 * pool_n * max_copies keys); returns how many were written. */
uint64_t tu_gen_repeats(tu_rng *rng, const uint64_t *pool, uint64_t pool_n, unsigned max_copies,
                        uint64_t *out);
/* Random values of the width: mixes small values (so MIN / MAX / KEEP_FIRST meet ties and
 * order), full-range values, and values near the maximum (so ADD wraps). */
void tu_gen_values(tu_rng *rng, unsigned value_bits, uint64_t n, uint64_t *out);
/* The key patterns a table may use internally: 0, all-ones, all-ones minus 1 of the width, and
 * for 64-bit keys also the 32-bit patterns and the top bit alone. Returns how many (<= 8). */
size_t tu_special_keys(unsigned key_bits, uint64_t out[8]);

/* Copies n uint64_t to a freshly malloc'd array of `bits`-wide elements (bits 32 or 64). */
void *tu_pack(const uint64_t *src, uint64_t n, unsigned bits);
/* Widens n `bits`-wide elements to uint64_t. */
void tu_unpack(const void *src, uint64_t n, unsigned bits, uint64_t *dst);
/* malloc that never returns NULL (REQUIREs success); size 0 gives a valid pointer. */
void *tu_xmalloc(size_t bytes);

/* A byte pattern no correct output contains in every byte: outputs are pre-filled with it so
 * that a position the library forgot to write, or wrote when it must not, is noticed. */
#define TU_CANARY 0xA5
/* Index of the first byte of buf[0, bytes) that is not TU_CANARY, or bytes when all are. */
size_t tu_first_non_canary(const void *buf, size_t bytes);

/* Whether text mentions count as a number, written plainly (1523) or with thousands
 * separators (1,523). */
int tu_mentions_count(const char *text, uint64_t count);

/* ---------------------------------------------------------------------------------------- */
/* Reference map                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* A single-threaded open-addressing map (linear probing, tombstones, rebuilt when half used)
 * with a separate state byte per slot, so that every key value is usable. For each key it keeps
 * the SET of values the table may hold: KEEP_FIRST and OVERWRITE with a key repeated within one
 * batch let an arbitrary occurrence win. When a test reads a value from the table it "observes"
 * it: the value must be in the set, and the set collapses to it, since from then on the table's
 * value is known. ADD / MIN / MAX apply to every value of the set. */
typedef struct tu_ref_entry {
  uint64_t key;
  uint64_t one;    /* the allowed value when nvals == 1 */
  uint64_t *many;  /* the allowed values when nvals > 1 */
  uint32_t nvals;
  uint32_t epoch;  /* the batch that last touched the key */
  uint8_t state;   /* TU_REF_EMPTY / TU_REF_FULL / TU_REF_ERASED */
  uint8_t fresh;   /* the key was absent before batch `epoch` */
} tu_ref_entry;

typedef struct tu_ref {
  tu_ref_entry *slots;
  uint64_t slot_count; /* a power of two */
  uint64_t size;       /* keys present */
  uint64_t used;       /* present + erased slots */
  uint32_t epoch;
  unsigned key_bits;
  unsigned value_bits;
} tu_ref;

void tu_ref_init(tu_ref *ref, unsigned key_bits, unsigned value_bits);
void tu_ref_free(tu_ref *ref);
void tu_ref_clear(tu_ref *ref);
uint64_t tu_ref_size(const tu_ref *ref);
int tu_ref_contains(const tu_ref *ref, uint64_t key);
/* Applies one insert batch; positions with skip[i] != 0 (keys that did not fit) are ignored.
 * values may be NULL (sets, or value_bits 0). */
void tu_ref_insert(tu_ref *ref, const uint64_t *keys, const uint64_t *values, uint64_t n,
                   gh_dup_policy policy, const uint8_t *skip);
/* Erases keys; returns how many distinct keys were present. */
uint64_t tu_ref_erase(tu_ref *ref, const uint64_t *keys, uint64_t n);
/* 1 when key is present and value is one the table may hold for it (always 1 for sets). */
int tu_ref_value_allowed(const tu_ref *ref, uint64_t key, uint64_t value);
/* As tu_ref_value_allowed, and on success collapses the key's allowed set to {value}. */
int tu_ref_observe(tu_ref *ref, uint64_t key, uint64_t value);
/* Writes the allowed set of key as text ("absent", "{7}", "{1, 5}") into buf. */
void tu_ref_describe(const tu_ref *ref, uint64_t key, char *buf, size_t size);
/* Writes every present key into out (tu_ref_size entries); returns the count. */
uint64_t tu_ref_keys(const tu_ref *ref, uint64_t *out);

/* ---------------------------------------------------------------------------------------- */
/* A table under test, paired with its reference                                              */
/* ---------------------------------------------------------------------------------------- */

typedef struct tu_table {
  gh_table *table;
  gh_config config; /* the effective configuration (gh_get_config) */
  tu_ref ref;
  uint64_t capacity;
  unsigned key_bits;
  unsigned value_bits;
} tu_table;

/* Creates the table and checks what a new table must satisfy (effective config, capacity,
 * empty, valid). Returns 1 on success; on failure reports it and leaves h->table NULL. */
int tu_table_create(tu_table *h, const gh_config *config);
/* A new table (config: what gh_create was given) takes exactly the host and device bytes
 * gh_memory_estimate says a table of that config would take. */
void tu_check_memory_estimate(gh_table *table, const gh_config *config);
void tu_table_destroy(tu_table *h);

/* Each wrapper calls the API once, checks its status and every output against the reference,
 * then brings the reference up to date. */

/* allow_full: GH_ERR_TABLE_FULL is an acceptable outcome (then failed_out must flag exactly
 * keys absent afterwards, none present before, and gh_last_error() must give the count).
 * failed_copy (optional, n bytes) receives failed_out. values may be NULL for sets. Returns the
 * number of flagged positions. */
uint64_t tu_insert(tu_table *h, const uint64_t *keys, const uint64_t *values, uint64_t n,
                   gh_dup_policy policy, int allow_full, uint8_t *failed_copy);
/* Checks erased_out (exactly one position per present key) and *erased_count; returns it. */
uint64_t tu_erase(tu_table *h, const uint64_t *keys, uint64_t n);

/* What gh_find is asked for: values_out, found_out, and whether a (non-zero) default value is
 * passed. Sets ignore TU_FIND_VALUES and TU_FIND_DEFAULT. */
enum { TU_FIND_VALUES = 1, TU_FIND_FOUND = 2, TU_FIND_DEFAULT = 4 };
void tu_check_find(tu_table *h, const uint64_t *keys, uint64_t n, unsigned mode);
void tu_check_contains(tu_table *h, const uint64_t *keys, uint64_t n);
void tu_check_size(tu_table *h);
/* Exports into buffers of size() + slack elements: count, no key twice (cuco #606), the same
 * keys as the reference, allowed values, nothing written past count. */
void tu_check_export(tu_table *h, uint64_t slack);
/* The same comparison for pairs the caller exported itself (device buffers, say); values may
 * be NULL for sets. */
void tu_check_pairs(tu_table *h, const uint64_t *keys, const uint64_t *values, uint64_t count);
void tu_check_valid(tu_table *h);
/* After a call that returned GH_OK the table's message must be "" (the header's convention). */
void tu_check_no_error_text(const gh_table *table, const char *call);
void tu_clear(tu_table *h);
/* gh_get_stats against the reference and tu_check_stats_rules. */
void tu_check_stats(tu_table *h);
/* The rules of gh_stats every table follows, by its design's traits (GH_CAP_GROWS: keys <=
 * capacity <= slots; GH_CAP_REPORTS_FULL: slots = capacity; GH_CAP_HASH_FUNCTIONS: an eviction
 * limit; no restart counters without hash functions, no growth without GH_CAP_GROWS). */
void tu_check_stats_rules(gh_table *table, const gh_stats *stats, uint64_t capacity,
                          double table_factor);
/* size + export + stats + validate. */
void tu_check_all(tu_table *h);

/* Reads (and so clears) the status word of a table whose design has GH_CAP_STATUS_FLAGS, on
 * either backend: no operation may have seen a bad group size, and GH_FLAG_PROBE_LIMIT must be set
 * exactly when keys_failed (keys did not fit in the operation since the last read). A no-op for
 * other designs. */
void tu_check_status_flags(tu_table *h, int keys_failed);

/* Exports the whole table into freshly malloc'd arrays sorted by key (values NULL for sets);
 * returns the count, or UINT64_MAX after reporting a failure. */
uint64_t tu_export_sorted(gh_table *table, unsigned key_bits, unsigned value_bits,
                          uint64_t **keys_out, uint64_t **values_out);

/* ---- Batches without per-key reports (the bulk paths take only those) ------------------------ */

/* gh_insert without failed_out, then the reference. Returns the call's status; GH_ERR_TABLE_FULL
 * only where allow_full. */
gh_status tu_insert_unreported(tu_table *h, const uint64_t *keys, const uint64_t *values, uint64_t n,
                               gh_dup_policy policy, int allow_full);
/* gh_erase without erased_out: the count it gives is the number of distinct keys the reference
 * holds, and the reference follows. */
void tu_erase_unreported(tu_table *h, const uint64_t *keys, uint64_t n);
/* The bulk table holds the ordinary table's keys; with same_values also its values. */
void tu_check_same_contents(tu_table *plain, tu_table *bulk, int same_values);
/* validate, size, find (values and flags), contains and export of keys[0, n) against the reference. */
void tu_check_table(tu_table *h, const uint64_t *keys, uint64_t n);
/* A batch of n keys drawn from a pool of distinct keys (so that keys repeat inside and across
 * batches), with the special keys spread over it, and their values. */
void tu_gen_batch(tu_rng *rng, unsigned key_bits, unsigned value_bits, const uint64_t *pool, uint64_t pool_n,
                  uint64_t n, uint64_t *keys, uint64_t *values);
/* A skewed batch of distinct + hot keys, shuffled: distinct keys once each and one more key hot
 * times, with 32-bit values. */
void tu_gen_skewed_batch(tu_rng *rng, unsigned key_bits, uint64_t distinct, uint64_t hot, uint64_t *keys,
                         uint64_t *values);

#ifdef __cplusplus
}
#endif

#endif /* GH_TEST_UTIL_H */
