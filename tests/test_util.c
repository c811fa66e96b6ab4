/* test_util.c - see test_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpuhash/detail/hash.h"

/* ---------------------------------------------------------------------------------------- */
/* Failure reporting                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* After this many printed failures the rest are only counted: one broken invariant inside a
 * loop over 60,000 keys must not bury the first, most useful messages. */
#define TU_MAX_PRINTED_FAILURES 40

static char tu_context[768] = "(no case set)";
static char tu_phase[256] = "";
/* Atomic: helpers (tu_pack, tu_xmalloc, ...) count their REQUIREs from test threads too (threads.c). */
static _Atomic unsigned long tu_failures = 0;
static _Atomic unsigned long tu_checks = 0;

void tu_set_context(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(tu_context, sizeof tu_context, fmt, args);
  va_end(args);
  tu_phase[0] = '\0';
}

void tu_set_phase(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(tu_phase, sizeof tu_phase, fmt, args);
  va_end(args);
}

static unsigned long tu_print_limit = TU_MAX_PRINTED_FAILURES;

/* Returns 1 when the failure should be printed. */
static int tu_note_failure(void) {
  ++tu_failures;
  if (tu_failures == tu_print_limit + 1) {
    fprintf(stderr, "(more than %lu failures: the rest are counted, not printed)\n",
            tu_print_limit);
  }
  return tu_failures <= tu_print_limit;
}

void tu_set_print_budget(unsigned long failures) { tu_print_limit = tu_failures + failures; }

static void tu_print_case(void) {
  fprintf(stderr, "  case:  %s\n", tu_context);
  if (tu_phase[0] != '\0') fprintf(stderr, "  phase: %s\n", tu_phase);
  fflush(stderr);
}

/* Prints one failed check: where, what, the message, and the case being run. */
static void tu_report(const char *file, int line, const char *kind, const char *expr, const char *fmt,
                      va_list args) {
  fflush(stdout);
  fprintf(stderr, "%s:%d: %s failed: %s\n  ", file, line, kind, expr);
  vfprintf(stderr, fmt, args);
  fputc('\n', stderr);
  tu_print_case();
}

int tu_check_impl(int ok, const char *file, int line, const char *expr, const char *fmt, ...) {
  ++tu_checks;
  if (ok) return 1;
  if (tu_note_failure()) {
    va_list args;
    va_start(args, fmt);
    tu_report(file, line, "CHECK", expr, fmt, args);
    va_end(args);
  }
  return 0;
}

int tu_check_status_impl(const gh_table *table, gh_status got, gh_status want, const char *file,
                         int line, const char *expr) {
  ++tu_checks;
  if (got == want) return 1;
  if (tu_note_failure()) {
    fflush(stdout);
    fprintf(stderr, "%s:%d: CHECK failed: %s\n  returned %s (%d), expected %s\n", file, line,
            expr, gh_status_name(got), (int)got, gh_status_name(want));
    if (table != NULL) fprintf(stderr, "  gh_last_error: \"%s\"\n", gh_last_error(table));
    tu_print_case();
  }
  return 0;
}

void tu_require_impl(int ok, const char *file, int line, const char *expr, const char *fmt, ...) {
  va_list args;
  ++tu_checks;
  if (ok) return;
  ++tu_failures;
  va_start(args, fmt);
  tu_report(file, line, "REQUIRE (fatal)", expr, fmt, args);
  va_end(args);
  exit(1);
}

/* Signal handlers may only write(): the case and phase are plain NUL-terminated arrays. */
static void tu_write_text(const char *text) {
  size_t len = strlen(text);
  while (len > 0) {
    ssize_t written = write(2, text, len);
    if (written <= 0) return;
    text += written;
    len -= (size_t)written;
  }
}

static void tu_write_case(void) {
  tu_write_text("  case:  ");
  tu_write_text(tu_context);
  tu_write_text("\n  phase: ");
  tu_write_text(tu_phase);
  tu_write_text("\n");
}

static const int tu_crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define TU_CRASH_SIGNAL_COUNT (sizeof tu_crash_signals / sizeof tu_crash_signals[0])
static struct sigaction tu_previous_actions[TU_CRASH_SIGNAL_COUNT];

static void tu_crash_handler(int signal_number) {
  size_t i;
  const char *name = signal_number == SIGSEGV  ? "SIGSEGV"
                     : signal_number == SIGBUS ? "SIGBUS"
                     : signal_number == SIGILL ? "SIGILL"
                     : signal_number == SIGFPE ? "SIGFPE"
                                               : "SIGABRT";
  tu_write_text("\nCRASH: ");
  tu_write_text(name);
  tu_write_text(" inside the call of the phase below (the API must return a status instead)\n");
  tu_write_case();
  /* Hand the signal to whoever had it before (a sanitizer, or the default action): returning
   * re-executes the faulting instruction, abort() re-raises by itself. */
  for (i = 0; i < TU_CRASH_SIGNAL_COUNT; ++i) {
    if (tu_crash_signals[i] == signal_number)
      sigaction(signal_number, &tu_previous_actions[i], NULL);
  }
}

void tu_install_crash_handler(void) {
  struct sigaction action;
  size_t i;
  memset(&action, 0, sizeof action);
  action.sa_handler = tu_crash_handler;
  sigemptyset(&action.sa_mask);
  for (i = 0; i < TU_CRASH_SIGNAL_COUNT; ++i) {
    sigaction(tu_crash_signals[i], &action, &tu_previous_actions[i]);
  }
}

static unsigned tu_alarm_seconds = 0;

static void tu_alarm_handler(int signal_number) {
  char seconds[24];
  unsigned v = tu_alarm_seconds, n = 0, i;
  (void)signal_number;
  do {
    seconds[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0 && n < sizeof seconds - 1);
  for (i = 0; i < n / 2; ++i) {
    char c = seconds[i];
    seconds[i] = seconds[n - 1 - i];
    seconds[n - 1 - i] = c;
  }
  seconds[n] = '\0';
  tu_write_text("\nTIMEOUT: the case below ran past its wall-clock bound of ");
  tu_write_text(seconds);
  tu_write_text(" s (a build that never ends, or a hang)\n");
  tu_write_case();
  _exit(1);
}

void tu_set_alarm(unsigned seconds) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = tu_alarm_handler;
  sigemptyset(&action.sa_mask);
  sigaction(SIGALRM, &action, NULL);
  tu_alarm_seconds = seconds;
  alarm(seconds);
}

double tu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

unsigned long tu_failure_count(void) { return tu_failures; }

int tu_finish(const char *test_name) {
  fflush(stderr);
  if (tu_failures == 0) {
    printf("%s: PASSED (%lu checks)\n", test_name, (unsigned long)tu_checks);
    fflush(stdout);
    return 0;
  }
  printf("%s: FAILED (%lu of %lu checks failed)\n", test_name, (unsigned long)tu_failures, (unsigned long)tu_checks);
  fflush(stdout);
  return 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Command line and environment                                                              */
/* ---------------------------------------------------------------------------------------- */

int tu_parse_backend(const char *word, gh_backend *backend) {
  if (word == NULL) return 0;
  if (strcmp(word, "host") == 0) {
    *backend = GH_BACKEND_HOST;
    return 1;
  }
  if (strcmp(word, "cuda") == 0) {
    *backend = GH_BACKEND_CUDA;
    return 1;
  }
  return 0;
}

const char *tu_backend_name(gh_backend backend) {
  switch (backend) {
    case GH_BACKEND_AUTO: return "auto";
    case GH_BACKEND_HOST: return "host";
    case GH_BACKEND_CUDA: return "cuda";
  }
  return "invalid";
}

void tu_skip_unless_backend_usable(gh_backend backend) {
  if (backend == GH_BACKEND_CUDA && !gh_cuda_available()) {
    printf("SKIPPED: no GPU here\n");
    fflush(stdout);
    exit(TU_SKIP_EXIT_CODE);
  }
}

int tu_parse_bits(const char *word, int allow_zero, unsigned *bits) {
  if (word == NULL) return 0;
  if (strcmp(word, "32") == 0) *bits = 32;
  else if (strcmp(word, "64") == 0) *bits = 64;
  else if (allow_zero && strcmp(word, "0") == 0) *bits = 0;
  else return 0;
  return 1;
}

int tu_parse_u64(const char *word, uint64_t *value) {
  char *end = NULL;
  if (word == NULL || word[0] == '\0' || word[0] == '-') return 0;
  *value = (uint64_t)strtoull(word, &end, 0);
  return end != NULL && *end == '\0';
}

/* Designs looked up so far (the library has a handful). */
#define TU_MAX_DESIGNS 32
static tu_design tu_known_designs[TU_MAX_DESIGNS];
static size_t tu_known_count = 0;

const tu_design *tu_design_of(gh_design design) {
  gh_design_traits traits;
  size_t i;
  for (i = 0; i < tu_known_count; ++i) {
    if (tu_known_designs[i].design == design) return &tu_known_designs[i];
  }
  memset(&traits, 0, sizeof traits);
  if (gh_design_info(design, &traits) != GH_OK || tu_known_count == TU_MAX_DESIGNS) return NULL;
  REQUIRE(traits.design == design && traits.name != NULL,
          "gh_design_info(%d) describes design %d named %s", (int)design, (int)traits.design,
          traits.name ? traits.name : "(NULL)");
  tu_known_designs[tu_known_count].design = design;
  tu_known_designs[tu_known_count].name = traits.name;
  tu_known_designs[tu_known_count].traits = traits;
  return &tu_known_designs[tu_known_count++];
}

const tu_design *tu_design_by_name(const char *name) {
  gh_design design;
  if (name == NULL || gh_design_by_name(name, &design) != GH_OK) return NULL;
  return tu_design_of(design);
}

int tu_design_has(const tu_design *design, unsigned capabilities) {
  return (design->traits.capabilities & capabilities) == capabilities;
}

int tu_design_accepts_variant(const tu_design *design, gh_variant variant) {
  return (unsigned)variant < 32u && (design->traits.variants >> (unsigned)variant & 1u) != 0;
}

const char *tu_variant_name(gh_variant variant, unsigned value_bits) {
  switch (variant) {
    case GH_VARIANT_MAP:
      return value_bits == 0 ? "set" : "map";
    case GH_VARIANT_COMPACTING:
      return "compacting";
    case GH_VARIANT_MULTIVALUE:
      return "multivalue";
  }
  return "invalid";
}

int tu_parse_case_args(int argc, char **argv, gh_backend *backend, const tu_design **design,
                       gh_variant *variant, uint64_t *seed) {
  int have_variant = 0;
  *design = NULL;
  if (argc < 2 || !tu_parse_backend(argv[1], backend)) return 0;
  for (int i = 2; i < argc; i += 2) {
    if (i + 1 >= argc) return 0;
    if (strcmp(argv[i], "--design") == 0 && (*design = tu_design_by_name(argv[i + 1])) != NULL) continue;
    if (variant != NULL && strcmp(argv[i], "--variant") == 0 && tu_parse_variant(argv[i + 1], variant)) {
      have_variant = 1;
      continue;
    }
    if (strcmp(argv[i], "--seed") == 0 && tu_parse_u64(argv[i + 1], seed)) continue;
    return 0;
  }
  return *design != NULL && (variant == NULL || have_variant);
}

void tu_run_widths(const unsigned (*map_widths)[2], size_t map_count, const unsigned (*other_widths)[2],
                   size_t other_count, tu_width_case run, const tu_design *design, gh_variant variant,
                   gh_backend backend, uint64_t base) {
  const unsigned(*widths)[2] = variant == GH_VARIANT_MAP ? map_widths : other_widths;
  const size_t count = variant == GH_VARIANT_MAP ? map_count : other_count;
  for (size_t w = 0; w < count; ++w)
    run(design, variant, backend, widths[w][0], widths[w][1],
        tu_mix_seed(base, widths[w][0], widths[w][1], (uint64_t)variant));
}

int tu_case_usage(const char *program) {
  fprintf(stderr, "usage: %s host|cuda --design NAME --variant map|compacting|multivalue [--seed S]\n", program);
  return 2;
}

int tu_parse_variant(const char *word, gh_variant *variant) {
  if (word == NULL) return 0;
  if (strcmp(word, "map") == 0)
    *variant = GH_VARIANT_MAP;
  else if (strcmp(word, "compacting") == 0)
    *variant = GH_VARIANT_COMPACTING;
  else if (strcmp(word, "multivalue") == 0)
    *variant = GH_VARIANT_MULTIVALUE;
  else
    return 0;
  return 1;
}

const unsigned tu_group_sizes[6] = {1, 2, 4, 8, 16, 32};

const double tu_cuckoo_min_factor[4] = {2.1, 1.1, 1.03, 1.02};

void tu_random_cuckoo_params(tu_rng *rng, gh_config *cfg, const double *extra, size_t extra_n, char *params,
                             size_t params_size) {
  cfg->hash_functions = 2 + (unsigned)tu_below(rng, 4);
  cfg->hash_family = (gh_hash_family)tu_below(rng, 2);
  cfg->table_factor = tu_cuckoo_min_factor[cfg->hash_functions - 2] + extra[tu_below(rng, extra_n)];
  snprintf(params, params_size, " hash_functions=%u hash_family=%s table_factor=%.2f", cfg->hash_functions,
           cfg->hash_family == GH_HASH_XOR ? "xor" : "multiply", cfg->table_factor);
}

/* ---------------------------------------------------------------------------------------- */
/* PRNG and key generators                                                                   */
/* ---------------------------------------------------------------------------------------- */

tu_rng tu_rng_make(uint64_t seed) {
  tu_rng rng;
  rng.state = seed;
  return rng;
}

uint64_t tu_next(tu_rng *rng) {
  uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The modulo bias is below 2^-40 for the small n the tests use: irrelevant here. */
uint64_t tu_below(tu_rng *rng, uint64_t n) { return tu_next(rng) % n; }

uint64_t tu_mix_seed(uint64_t base, uint64_t a, uint64_t b, uint64_t c) {
  tu_rng rng = tu_rng_make(base);
  uint64_t x = tu_next(&rng) ^ a;
  rng.state ^= x;
  x = tu_next(&rng) ^ b;
  rng.state ^= x;
  x = tu_next(&rng) ^ c;
  rng.state ^= x;
  return tu_next(&rng);
}

uint64_t tu_mask(unsigned bits) {
  if (bits == 0) return 0;
  if (bits >= 64) return ~(uint64_t)0;
  return ((uint64_t)1 << bits) - 1;
}

void tu_shuffle(tu_rng *rng, uint64_t *array, uint64_t n) {
  uint64_t i;
  for (i = n; i > 1; --i) {
    uint64_t j = tu_below(rng, i);
    uint64_t tmp = array[i - 1];
    array[i - 1] = array[j];
    array[j] = tmp;
  }
}

void tu_gen_unique_keys(tu_rng *rng, unsigned key_bits, uint64_t n, const struct tu_ref *avoid,
                        uint64_t *out) {
  tu_ref seen;
  uint64_t mask = tu_mask(key_bits), i = 0;
  tu_ref_init(&seen, key_bits, 0);
  while (i < n) {
    uint64_t key = tu_next(rng) & mask;
    if ((avoid != NULL && tu_ref_contains(avoid, key)) || tu_ref_contains(&seen, key)) continue;
    tu_ref_insert(&seen, &key, NULL, 1, GH_KEEP_FIRST, NULL);
    out[i++] = key;
  }
  tu_ref_free(&seen);
}

void tu_gen_from_pool(tu_rng *rng, const uint64_t *pool, uint64_t pool_n, uint64_t n,
                      uint64_t *out) {
  uint64_t i;
  REQUIRE(pool_n > 0 || n == 0, "empty key pool");
  for (i = 0; i < n; ++i) out[i] = pool[tu_below(rng, pool_n)];
}

uint64_t tu_gen_repeats(tu_rng *rng, const uint64_t *pool, uint64_t pool_n, unsigned max_copies,
                        uint64_t *out) {
  uint64_t n = 0, i, copies;
  for (i = 0; i < pool_n; ++i) {
    for (copies = 1 + tu_below(rng, max_copies); copies > 0; --copies) out[n++] = pool[i];
  }
  tu_shuffle(rng, out, n);
  return n;
}

void tu_gen_values(tu_rng *rng, unsigned value_bits, uint64_t n, uint64_t *out) {
  uint64_t mask = tu_mask(value_bits), i;
  for (i = 0; i < n; ++i) {
    uint64_t pick = tu_below(rng, 10);
    if (pick < 4) out[i] = tu_below(rng, 16) & mask;
    else if (pick < 8) out[i] = tu_next(rng) & mask;
    else out[i] = (mask - tu_below(rng, 16)) & mask;
  }
}

size_t tu_special_keys(unsigned key_bits, uint64_t out[8]) {
  size_t n = 0;
  uint64_t mask = tu_mask(key_bits);
  out[n++] = 0;
  out[n++] = mask;
  out[n++] = mask - 1;
  if (key_bits == 64) {
    /* A 64-bit table that compared against 32-bit sentinels would break on these. */
    out[n++] = 0xFFFFFFFFull;
    out[n++] = 0xFFFFFFFEull;
    out[n++] = (uint64_t)1 << 63;
  }
  return n;
}

void *tu_xmalloc(size_t bytes) {
  void *p = malloc(bytes == 0 ? 1 : bytes);
  REQUIRE(p != NULL, "out of host memory allocating %zu bytes", bytes);
  return p;
}

void *tu_pack(const uint64_t *src, uint64_t n, unsigned bits) {
  uint64_t i;
  REQUIRE(bits == 32 || bits == 64, "tu_pack: bits %u", bits);
  if (bits == 64) {
    uint64_t *out = (uint64_t *)tu_xmalloc((size_t)n * sizeof *out);
    if (n > 0) memcpy(out, src, (size_t)n * sizeof *out);
    return out;
  } else {
    uint32_t *out = (uint32_t *)tu_xmalloc((size_t)n * sizeof *out);
    for (i = 0; i < n; ++i) {
      REQUIRE(src[i] <= 0xFFFFFFFFull, "tu_pack: %llu does not fit 32 bits",
              (unsigned long long)src[i]);
      out[i] = (uint32_t)src[i];
    }
    return out;
  }
}

void tu_unpack(const void *src, uint64_t n, unsigned bits, uint64_t *dst) {
  uint64_t i;
  if (bits == 64) {
    if (n > 0) memcpy(dst, src, (size_t)n * sizeof *dst);
  } else {
    const uint32_t *in = (const uint32_t *)src;
    for (i = 0; i < n; ++i) dst[i] = in[i];
  }
}

static int tu_is_digit(char c) { return c >= '0' && c <= '9'; }

/* Whether needle occurs in text as a whole number (no digit or digit group glued to it). */
static int tu_contains_number(const char *text, const char *needle) {
  size_t len = strlen(needle);
  const char *p = text;
  while ((p = strstr(p, needle)) != NULL) {
    int left_ok = p == text || (!tu_is_digit(p[-1]) && !(p[-1] == ',' && p - 1 > text &&
                                                          tu_is_digit(p[-2])));
    const char *end = p + len;
    int right_ok = !tu_is_digit(*end) && !(*end == ',' && tu_is_digit(end[1]));
    if (left_ok && right_ok) return 1;
    ++p;
  }
  return 0;
}

int tu_mentions_count(const char *text, uint64_t count) {
  char plain[32], grouped[48];
  size_t len, i, o = 0;
  if (text == NULL) return 0;
  snprintf(plain, sizeof plain, "%llu", (unsigned long long)count);
  len = strlen(plain);
  for (i = 0; i < len; ++i) {
    if (i > 0 && (len - i) % 3 == 0) grouped[o++] = ',';
    grouped[o++] = plain[i];
  }
  grouped[o] = '\0';
  return tu_contains_number(text, plain) || tu_contains_number(text, grouped);
}

/* ---------------------------------------------------------------------------------------- */
/* Reference map                                                                             */
/* ---------------------------------------------------------------------------------------- */

enum { TU_REF_EMPTY = 0, TU_REF_FULL = 1, TU_REF_ERASED = 2 };

/* Any well-mixing hash will do for the reference's own (linear-probing) layout. */
static uint64_t tu_ref_hash(uint64_t key) { return gh_fmix64(key); }

static void tu_ref_alloc(tu_ref *ref, uint64_t slot_count) {
  ref->slots = (tu_ref_entry *)calloc((size_t)slot_count, sizeof *ref->slots);
  REQUIRE(ref->slots != NULL, "reference map: out of memory (%llu slots)",
          (unsigned long long)slot_count);
  ref->slot_count = slot_count;
  ref->size = 0;
  ref->used = 0;
}

void tu_ref_init(tu_ref *ref, unsigned key_bits, unsigned value_bits) {
  memset(ref, 0, sizeof *ref);
  ref->key_bits = key_bits;
  ref->value_bits = value_bits;
  tu_ref_alloc(ref, 16);
}

static void tu_ref_free_values(tu_ref_entry *e) {
  free(e->many);
  e->many = NULL;
  e->nvals = 0;
}

void tu_ref_free(tu_ref *ref) {
  uint64_t i;
  if (ref->slots == NULL) return;
  for (i = 0; i < ref->slot_count; ++i) tu_ref_free_values(&ref->slots[i]);
  free(ref->slots);
  ref->slots = NULL;
  ref->slot_count = ref->size = ref->used = 0;
}

void tu_ref_clear(tu_ref *ref) {
  unsigned key_bits = ref->key_bits, value_bits = ref->value_bits;
  tu_ref_free(ref);
  tu_ref_init(ref, key_bits, value_bits);
}

uint64_t tu_ref_size(const tu_ref *ref) { return ref->size; }

/* The slot holding key, or NULL. Terminates because at most half the slots are used. */
static tu_ref_entry *tu_ref_lookup(const tu_ref *ref, uint64_t key) {
  uint64_t mask = ref->slot_count - 1, i = tu_ref_hash(key) & mask;
  for (;;) {
    tu_ref_entry *e = &ref->slots[i];
    if (e->state == TU_REF_EMPTY) return NULL;
    if (e->state == TU_REF_FULL && e->key == key) return e;
    i = (i + 1) & mask;
  }
}

/* Rebuilds into a table of at least 4 * (size + 1) slots, dropping erased slots. Entries move
 * with their value arrays. */
static void tu_ref_rebuild(tu_ref *ref) {
  tu_ref_entry *old = ref->slots;
  uint64_t old_count = ref->slot_count, count = 16, i;
  while (count < (ref->size + 1) * 4) count *= 2;
  tu_ref_alloc(ref, count);
  for (i = 0; i < old_count; ++i) {
    if (old[i].state == TU_REF_FULL) {
      uint64_t j = tu_ref_hash(old[i].key) & (count - 1);
      while (ref->slots[j].state != TU_REF_EMPTY) j = (j + 1) & (count - 1);
      ref->slots[j] = old[i];
      ++ref->size;
      ++ref->used;
    } else {
      free(old[i].many);
    }
  }
  free(old);
}

/* A new entry for a key that is absent. */
static tu_ref_entry *tu_ref_claim(tu_ref *ref, uint64_t key) {
  uint64_t mask, i;
  tu_ref_entry *reuse = NULL, *e;
  if ((ref->used + 1) * 2 > ref->slot_count) tu_ref_rebuild(ref);
  mask = ref->slot_count - 1;
  i = tu_ref_hash(key) & mask;
  for (;;) {
    e = &ref->slots[i];
    if (e->state == TU_REF_EMPTY) break;
    if (e->state == TU_REF_ERASED && reuse == NULL) reuse = e;
    i = (i + 1) & mask;
  }
  if (reuse != NULL) {
    e = reuse;
  } else {
    ++ref->used;
  }
  ++ref->size;
  memset(e, 0, sizeof *e);
  e->state = TU_REF_FULL;
  e->key = key;
  return e;
}

int tu_ref_contains(const tu_ref *ref, uint64_t key) { return tu_ref_lookup(ref, key) != NULL; }

static int tu_entry_has(const tu_ref_entry *e, uint64_t value) {
  uint32_t i;
  if (e->nvals == 1) return e->one == value;
  for (i = 0; i < e->nvals; ++i) {
    if (e->many[i] == value) return 1;
  }
  return 0;
}

static void tu_entry_set_single(tu_ref_entry *e, uint64_t value) {
  tu_ref_free_values(e);
  e->one = value;
  e->nvals = 1;
}

static void tu_entry_add_allowed(tu_ref_entry *e, uint64_t value) {
  uint64_t *grown;
  if (tu_entry_has(e, value)) return;
  if (e->nvals == 1) {
    grown = (uint64_t *)tu_xmalloc(2 * sizeof *grown);
    grown[0] = e->one;
  } else {
    grown = (uint64_t *)realloc(e->many, ((size_t)e->nvals + 1) * sizeof *grown);
    REQUIRE(grown != NULL, "reference map: out of memory");
  }
  grown[e->nvals] = value;
  e->many = grown;
  ++e->nvals;
}

static uint64_t tu_apply_policy(gh_dup_policy policy, uint64_t stored, uint64_t incoming,
                                uint64_t mask) {
  switch (policy) {
    case GH_ADD: return (stored + incoming) & mask;
    case GH_MIN: return stored < incoming ? stored : incoming;
    case GH_MAX: return stored > incoming ? stored : incoming;
    case GH_KEEP_FIRST: return stored;
    case GH_OVERWRITE: return incoming;
    case GH_APPEND: break; /* multi-value tables: not modelled by this one-value reference */
  }
  return stored;
}

/* Applies ADD / MIN / MAX to every allowed value, then drops repeats (MIN / MAX can merge). */
static void tu_entry_apply(tu_ref_entry *e, gh_dup_policy policy, uint64_t incoming,
                           uint64_t mask) {
  uint32_t i, j, kept = 0;
  if (e->nvals == 1) {
    e->one = tu_apply_policy(policy, e->one, incoming, mask);
    return;
  }
  for (i = 0; i < e->nvals; ++i) {
    uint64_t v = tu_apply_policy(policy, e->many[i], incoming, mask);
    for (j = 0; j < kept && e->many[j] != v; ++j) {
    }
    if (j == kept) e->many[kept++] = v;
  }
  if (kept == 1) {
    tu_entry_set_single(e, e->many[0]);
  } else {
    e->nvals = kept;
  }
}

void tu_ref_insert(tu_ref *ref, const uint64_t *keys, const uint64_t *values, uint64_t n,
                   gh_dup_policy policy, const uint8_t *skip) {
  uint64_t mask = tu_mask(ref->value_bits), i;
  ++ref->epoch;
  for (i = 0; i < n; ++i) {
    uint64_t key = keys[i] & tu_mask(ref->key_bits);
    uint64_t value = (values != NULL && ref->value_bits > 0) ? values[i] & mask : 0;
    tu_ref_entry *e;
    int repeat;
    if (skip != NULL && skip[i]) continue;
    e = tu_ref_lookup(ref, key);
    if (e == NULL) {
      /* Every policy stores the first value of a new key (ADD adds to nothing). */
      e = tu_ref_claim(ref, key);
      tu_entry_set_single(e, value);
      e->epoch = ref->epoch;
      e->fresh = 1;
      continue;
    }
    repeat = e->epoch == ref->epoch;
    if (ref->value_bits > 0) {
      switch (policy) {
        case GH_KEEP_FIRST:
          /* A key new to this batch may end up with any of its batch values. */
          if (repeat && e->fresh) tu_entry_add_allowed(e, value);
          break;
        case GH_OVERWRITE:
          if (repeat) tu_entry_add_allowed(e, value);
          else tu_entry_set_single(e, value);
          break;
        case GH_ADD:
        case GH_MIN:
        case GH_MAX: tu_entry_apply(e, policy, value, mask); break;
        case GH_APPEND: break; /* multi-value tables keep their own model (tests/cuckoo.c) */
      }
    }
    if (!repeat) {
      e->epoch = ref->epoch;
      e->fresh = 0;
    }
  }
}

uint64_t tu_ref_erase(tu_ref *ref, const uint64_t *keys, uint64_t n) {
  uint64_t removed = 0, i;
  for (i = 0; i < n; ++i) {
    tu_ref_entry *e = tu_ref_lookup(ref, keys[i]);
    if (e == NULL) continue;
    tu_ref_free_values(e);
    e->state = TU_REF_ERASED;
    --ref->size;
    ++removed;
  }
  return removed;
}

int tu_ref_value_allowed(const tu_ref *ref, uint64_t key, uint64_t value) {
  const tu_ref_entry *e = tu_ref_lookup(ref, key);
  if (e == NULL) return 0;
  if (ref->value_bits == 0) return 1;
  return tu_entry_has(e, value);
}

int tu_ref_observe(tu_ref *ref, uint64_t key, uint64_t value) {
  tu_ref_entry *e = tu_ref_lookup(ref, key);
  if (e == NULL) return 0;
  if (ref->value_bits == 0) return 1;
  if (!tu_entry_has(e, value)) return 0;
  if (e->nvals > 1) tu_entry_set_single(e, value);
  return 1;
}

void tu_ref_describe(const tu_ref *ref, uint64_t key, char *buf, size_t size) {
  const tu_ref_entry *e = tu_ref_lookup(ref, key);
  size_t used;
  uint32_t i;
  if (size == 0) return;
  if (e == NULL) {
    snprintf(buf, size, "absent");
    return;
  }
  if (ref->value_bits == 0) {
    snprintf(buf, size, "present (set)");
    return;
  }
  if (e->nvals == 1) {
    snprintf(buf, size, "{%llu}", (unsigned long long)e->one);
    return;
  }
  used = (size_t)snprintf(buf, size, "one of {");
  for (i = 0; i < e->nvals && used < size; ++i) {
    used += (size_t)snprintf(buf + used, size - used, "%s%llu", i ? ", " : "",
                             (unsigned long long)e->many[i]);
  }
  if (used < size) snprintf(buf + used, size - used, "}");
}

uint64_t tu_ref_keys(const tu_ref *ref, uint64_t *out) {
  uint64_t n = 0, i;
  for (i = 0; i < ref->slot_count; ++i) {
    if (ref->slots[i].state == TU_REF_FULL) out[n++] = ref->slots[i].key;
  }
  return n;
}

/* ---------------------------------------------------------------------------------------- */
/* A table under test                                                                        */
/* ---------------------------------------------------------------------------------------- */

static size_t tu_bytes(unsigned bits) { return bits / 8; }

size_t tu_first_non_canary(const void *buf, size_t bytes) {
  const unsigned char *p = (const unsigned char *)buf;
  size_t i;
  for (i = 0; i < bytes; ++i) {
    if (p[i] != TU_CANARY) return i;
  }
  return bytes;
}

/* After a successful call the per-table message must be empty. */
void tu_check_no_error_text(const gh_table *table, const char *call) {
  const char *text = gh_last_error(table);
  CHECK(text != NULL && text[0] == '\0', "gh_last_error after a successful %s: \"%s\"", call,
        text ? text : "(NULL)");
}

void tu_check_memory_estimate(gh_table *table, const gh_config *config) {
  gh_config asked = *config;
  size_t host_bytes = 0, device_bytes = 0, estimate_host = 0, estimate_device = 0;
  asked.backend = gh_table_backend(table); /* (GH_BACKEND_AUTO resolved as gh_create resolved it) */
  if (CHECK_OK(table, gh_memory_usage(table, &host_bytes, &device_bytes)) &&
      CHECK_OK(NULL, gh_memory_estimate(&asked, &estimate_host, &estimate_device)))
    CHECK(estimate_host == host_bytes && estimate_device == device_bytes,
          "gh_memory_estimate said %zu host + %zu device bytes; the new table takes %zu + %zu", estimate_host,
          estimate_device, host_bytes, device_bytes);
}

int tu_table_create(tu_table *h, const gh_config *config) {
  const tu_design *design;
  gh_status st;
  uint64_t cap = 0, size = 1;
  size_t host_bytes = 0, device_bytes = 0;
  gh_config eff;
  memset(h, 0, sizeof *h);
  st = gh_create(config, &h->table);
  if (!CHECK(st == GH_OK && h->table != NULL, "gh_create returned %s: \"%s\"",
             gh_status_name(st), gh_last_create_error())) {
    if (st == GH_OK) h->table = NULL;
    return 0;
  }
  CHECK(gh_last_create_error()[0] == '\0', "gh_last_create_error after success: \"%s\"",
        gh_last_create_error());
  memset(&eff, 0, sizeof eff);
  CHECK_OK(h->table, gh_get_config(h->table, &eff));
  h->config = eff;
  h->key_bits = eff.key_bits;
  h->value_bits = eff.value_bits;
  CHECK(eff.design == config->design, "effective design %d, configured %d", (int)eff.design,
        (int)config->design);
  CHECK(eff.key_bits == config->key_bits && eff.value_bits == config->value_bits,
        "effective widths k%u v%u, configured k%u v%u", eff.key_bits, eff.value_bits,
        config->key_bits, config->value_bits);
  CHECK(eff.capacity >= config->capacity, "effective capacity %llu < configured %llu",
        (unsigned long long)eff.capacity, (unsigned long long)config->capacity);
  CHECK(eff.seed == config->seed, "effective seed differs from the configured one");
  design = tu_design_of(config->design);
  REQUIRE(design != NULL, "gh_create accepted design %d, which gh_design_info does not know",
          (int)config->design);
  /* Group-size probing: the window width is fixed for the table's life and its probe limit
   * (in windows) resolved from 0 = default. */
  if (tu_design_has(design, GH_CAP_GROUP_SIZE)) {
    CHECK(eff.group_size == config->group_size, "effective group_size %u, configured %u",
          eff.group_size, config->group_size);
    CHECK(eff.max_probe_windows > 0, "max_probe_windows not resolved (0)");
    if (config->max_probe_windows != 0) { /* (a value above the table's W is cut to W) */
      CHECK(eff.max_probe_windows == config->max_probe_windows ||
                (eff.max_probe_windows < config->max_probe_windows && eff.max_probe_windows > 0),
            "effective max_probe_windows %llu, configured %llu",
            (unsigned long long)eff.max_probe_windows,
            (unsigned long long)config->max_probe_windows);
    }
  }
  CHECK(eff.variant == config->variant, "effective variant %d, configured %d", (int)eff.variant,
        (int)config->variant);
  if (tu_design_has(design, GH_CAP_HASH_FUNCTIONS)) {
    CHECK(eff.hash_functions == config->hash_functions && eff.hash_family == config->hash_family &&
              eff.table_factor == config->table_factor,
          "effective cuckoo parameters d=%u family=%d factor=%g, configured d=%u family=%d "
          "factor=%g",
          eff.hash_functions, (int)eff.hash_family, eff.table_factor, config->hash_functions,
          (int)config->hash_family, config->table_factor);
  }
  if (config->backend == GH_BACKEND_AUTO) {
    CHECK(eff.backend == GH_BACKEND_HOST || eff.backend == GH_BACKEND_CUDA,
          "AUTO not resolved: %d", (int)eff.backend);
  } else {
    CHECK(eff.backend == config->backend, "effective backend %d, configured %d",
          (int)eff.backend, (int)config->backend);
  }
  CHECK(gh_table_backend(h->table) == eff.backend, "gh_table_backend %d, config %d",
        (int)gh_table_backend(h->table), (int)eff.backend);
  CHECK_OK(h->table, gh_capacity(h->table, &cap));
  CHECK(cap == eff.capacity, "gh_capacity %llu, effective config %llu", (unsigned long long)cap,
        (unsigned long long)eff.capacity);
  h->capacity = cap;
  CHECK_OK(h->table, gh_size(h->table, &size));
  CHECK(size == 0, "new table has size %llu", (unsigned long long)size);
  CHECK_OK(h->table, gh_memory_usage(h->table, &host_bytes, &device_bytes));
  CHECK(host_bytes + device_bytes > 0, "gh_memory_usage reports 0 bytes for a live table");
  /* (On the GPU the contract test checks it, once per design and variant.) */
  if (eff.backend == GH_BACKEND_HOST) tu_check_memory_estimate(h->table, config);
  if (eff.backend == GH_BACKEND_HOST) {
    CHECK(device_bytes == 0, "host table holds %zu device bytes", device_bytes);
  }
  CHECK_OK(h->table, gh_validate(h->table));
  tu_ref_init(&h->ref, h->key_bits, h->value_bits);
  return 1;
}

void tu_table_destroy(tu_table *h) {
  gh_destroy(h->table);
  h->table = NULL;
  tu_ref_free(&h->ref);
}

void tu_check_status_flags(tu_table *h, int keys_failed) {
  unsigned flags = 0;
  /* The status word: what the operations of designs with GH_CAP_STATUS_FLAGS record, on either
   * backend ("GH_FLAG_* bits set by its operations"). */
  const tu_design *design = tu_design_of(h->config.design);
  if (design == NULL || !tu_design_has(design, GH_CAP_STATUS_FLAGS)) return;
  if (!CHECK_OK(h->table, gh_take_status_flags(h->table, &flags))) return;
  CHECK((flags & GH_FLAG_BAD_GROUP) == 0, "status word has GH_FLAG_BAD_GROUP (0x%x)",
        flags);
  if (keys_failed) {
    CHECK((flags & GH_FLAG_PROBE_LIMIT) != 0,
          "keys did not fit but the status word lacks GH_FLAG_PROBE_LIMIT (0x%x)", flags);
  } else {
    CHECK((flags & GH_FLAG_PROBE_LIMIT) == 0,
          "status word has GH_FLAG_PROBE_LIMIT (0x%x) but no key failed", flags);
  }
}

uint64_t tu_insert(tu_table *h, const uint64_t *keys, const uint64_t *values, uint64_t n,
                   gh_dup_policy policy, int allow_full, uint8_t *failed_copy) {
  void *packed_keys, *packed_values;
  uint8_t *failed;
  uint64_t nfailed = 0, i;
  gh_status st;
  REQUIRE(h->value_bits == 0 || values != NULL, "tu_insert on a map needs values");
  packed_keys = tu_pack(keys, n, h->key_bits);
  packed_values = h->value_bits > 0 ? tu_pack(values, n, h->value_bits) : NULL;
  failed = (uint8_t *)tu_xmalloc((size_t)n);
  memset(failed, TU_CANARY, (size_t)n);
  st = gh_insert(h->table, packed_keys, packed_values, n, policy, failed, NULL);
  if (st == GH_OK) {
    for (i = 0; i < n; ++i) {
      if (!CHECK(failed[i] == 0, "insert returned GH_OK but failed_out[%llu] = %u (key 0x%llx)",
                 (unsigned long long)i, failed[i], (unsigned long long)keys[i]))
        break;
    }
    tu_check_no_error_text(h->table, "gh_insert");
    tu_ref_insert(&h->ref, keys, values, n, policy, NULL);
  } else if (st == GH_ERR_TABLE_FULL && allow_full) {
    const char *text = gh_last_error(h->table);
    for (i = 0; i < n; ++i) {
      CHECK(failed[i] <= 1, "failed_out[%llu] = %u: not written", (unsigned long long)i,
            failed[i]);
      if (failed[i] == 1) {
        ++nfailed;
        CHECK(!tu_ref_contains(&h->ref, keys[i]),
              "failed_out flags key 0x%llx (position %llu), which was already present: an "
              "update of a present key must not fail",
              (unsigned long long)keys[i], (unsigned long long)i);
      }
    }
    CHECK(nfailed > 0, "GH_ERR_TABLE_FULL but failed_out flags no key");
    CHECK(tu_mentions_count(text, nfailed), "gh_last_error does not give the count %llu: \"%s\"",
          (unsigned long long)nfailed, text);
    /* The flags of this insert, before the lookups below clear them; after reading the message,
     * which the next call on the table replaces. */
    tu_check_status_flags(h, nfailed > 0);
    tu_ref_insert(&h->ref, keys, values, n, policy, failed);
    /* A flagged key must be absent afterwards, in the table as in the reference: no other
     * occurrence of it in the batch may have been stored. */
    for (i = 0; i < n; ++i) {
      if (failed[i] == 1) {
        CHECK(!tu_ref_contains(&h->ref, keys[i]),
              "key 0x%llx is flagged at position %llu and stored from another position",
              (unsigned long long)keys[i], (unsigned long long)i);
      }
    }
    tu_check_contains(h, keys, n);
  } else {
    CHECK_STATUS(h->table, st, allow_full ? GH_ERR_TABLE_FULL : GH_OK);
  }
  if (st == GH_OK) tu_check_status_flags(h, 0);
  if (failed_copy != NULL) memcpy(failed_copy, failed, (size_t)n);
  free(failed);
  free(packed_values);
  free(packed_keys);
  return nfailed;
}

uint64_t tu_erase(tu_table *h, const uint64_t *keys, uint64_t n) {
  void *packed_keys = tu_pack(keys, n, h->key_bits);
  uint8_t *erased = (uint8_t *)tu_xmalloc((size_t)n);
  uint64_t count = 0xBADC0FFEEull, i, expected;
  tu_ref present, flagged;
  tu_ref_init(&present, h->key_bits, 0);
  tu_ref_init(&flagged, h->key_bits, 0);
  for (i = 0; i < n; ++i) {
    if (tu_ref_contains(&h->ref, keys[i])) tu_ref_insert(&present, &keys[i], NULL, 1, GH_KEEP_FIRST, NULL);
  }
  expected = tu_ref_size(&present);
  memset(erased, TU_CANARY, (size_t)n);
  if (CHECK_OK(h->table, gh_erase(h->table, packed_keys, n, erased, &count, NULL))) {
    tu_check_no_error_text(h->table, "gh_erase");
    for (i = 0; i < n; ++i) {
      if (erased[i] == 1) {
        CHECK(tu_ref_contains(&present, keys[i]),
              "erased_out flags key 0x%llx (position %llu), which was absent",
              (unsigned long long)keys[i], (unsigned long long)i);
        CHECK(!tu_ref_contains(&flagged, keys[i]),
              "erased_out flags key 0x%llx twice (again at position %llu)",
              (unsigned long long)keys[i], (unsigned long long)i);
        tu_ref_insert(&flagged, &keys[i], NULL, 1, GH_KEEP_FIRST, NULL);
      } else {
        CHECK(erased[i] == 0, "erased_out[%llu] = %u: not written", (unsigned long long)i,
              erased[i]);
      }
    }
    CHECK(tu_ref_size(&flagged) == expected,
          "erased_out flags %llu distinct keys, %llu were present",
          (unsigned long long)tu_ref_size(&flagged), (unsigned long long)expected);
    CHECK(count == expected, "erased_count %llu, %llu keys were present",
          (unsigned long long)count, (unsigned long long)expected);
    tu_ref_erase(&h->ref, keys, n);
  }
  tu_check_status_flags(h, 0);
  tu_ref_free(&flagged);
  tu_ref_free(&present);
  free(erased);
  free(packed_keys);
  return expected;
}

void tu_check_find(tu_table *h, const uint64_t *keys, uint64_t n, unsigned mode) {
  uint64_t vmask = tu_mask(h->value_bits), i;
  uint64_t default_value = 0x5A5A5A5A5A5A5A5Aull & vmask;
  void *packed_keys = tu_pack(keys, n, h->key_bits);
  void *packed_default = NULL, *values_out = NULL;
  uint64_t *values = NULL;
  uint8_t *found = NULL;
  char allowed[160];
  if (h->value_bits == 0) mode = TU_FIND_FOUND;
  if ((mode & (TU_FIND_VALUES | TU_FIND_FOUND)) == 0) mode |= TU_FIND_FOUND;
  if (mode & TU_FIND_VALUES) {
    values_out = tu_xmalloc((size_t)n * tu_bytes(h->value_bits));
    memset(values_out, TU_CANARY, (size_t)n * tu_bytes(h->value_bits));
    values = (uint64_t *)tu_xmalloc((size_t)n * sizeof *values);
    if (mode & TU_FIND_DEFAULT) packed_default = tu_pack(&default_value, 1, h->value_bits);
  }
  if (mode & TU_FIND_FOUND) {
    found = (uint8_t *)tu_xmalloc((size_t)n);
    memset(found, TU_CANARY, (size_t)n);
  }
  if (!(mode & TU_FIND_DEFAULT)) default_value = 0;
  if (CHECK_OK(h->table, gh_find(h->table, packed_keys, n, values_out, found, packed_default,
                                 NULL))) {
    tu_check_no_error_text(h->table, "gh_find");
    if (values != NULL) tu_unpack(values_out, n, h->value_bits, values);
    for (i = 0; i < n; ++i) {
      int present = tu_ref_contains(&h->ref, keys[i]);
      if (found != NULL) {
        CHECK(found[i] == (uint8_t)present, "find: found_out[%llu] = %u for key 0x%llx, expected %d",
              (unsigned long long)i, found[i], (unsigned long long)keys[i], present);
      }
      if (values == NULL) continue;
      if (present) {
        const int value_allowed = tu_ref_value_allowed(&h->ref, keys[i], values[i]);
        if (!value_allowed) tu_ref_describe(&h->ref, keys[i], allowed, sizeof allowed);
        if (CHECK(value_allowed, "find: key 0x%llx (position %llu) has value %llu, expected %s",
                  (unsigned long long)keys[i], (unsigned long long)i,
                  (unsigned long long)values[i], allowed))
          tu_ref_observe(&h->ref, keys[i], values[i]);
      } else {
        CHECK(values[i] == default_value,
              "find: absent key 0x%llx (position %llu) got value %llu, expected the default %llu",
              (unsigned long long)keys[i], (unsigned long long)i, (unsigned long long)values[i],
              (unsigned long long)default_value);
      }
    }
  }
  tu_check_status_flags(h, 0);
  free(found);
  free(values);
  free(packed_default);
  free(values_out);
  free(packed_keys);
}

void tu_check_contains(tu_table *h, const uint64_t *keys, uint64_t n) {
  void *packed_keys = tu_pack(keys, n, h->key_bits);
  uint8_t *found = (uint8_t *)tu_xmalloc((size_t)n);
  uint64_t i;
  memset(found, TU_CANARY, (size_t)n);
  if (CHECK_OK(h->table, gh_contains(h->table, packed_keys, n, found, NULL))) {
    tu_check_no_error_text(h->table, "gh_contains");
    for (i = 0; i < n; ++i) {
      int present = tu_ref_contains(&h->ref, keys[i]);
      CHECK(found[i] == (uint8_t)present, "contains: found_out[%llu] = %u for key 0x%llx, expected %d",
            (unsigned long long)i, found[i], (unsigned long long)keys[i], present);
    }
  }
  tu_check_status_flags(h, 0);
  free(found);
  free(packed_keys);
}

void tu_check_size(tu_table *h) {
  uint64_t size = UINT64_MAX;
  if (CHECK_OK(h->table, gh_size(h->table, &size))) {
    CHECK(size == tu_ref_size(&h->ref), "gh_size %llu, reference %llu", (unsigned long long)size,
          (unsigned long long)tu_ref_size(&h->ref));
  }
}

void tu_check_valid(tu_table *h) {
  if (CHECK_OK(h->table, gh_validate(h->table))) tu_check_no_error_text(h->table, "gh_validate");
}

void tu_clear(tu_table *h) {
  size_t host_before = 0, device_before = 0, host_after = 0, device_after = 0;
  uint64_t capacity = 0;
  CHECK_OK(h->table, gh_memory_usage(h->table, &host_before, &device_before));
  if (CHECK_OK(h->table, gh_clear(h->table, NULL))) {
    tu_check_no_error_text(h->table, "gh_clear");
    tu_ref_clear(&h->ref);
    /* "keeps its memory, or gives back what it grew by": never more than before, never below the
     * capacity it was created with. */
    if (CHECK_OK(h->table, gh_memory_usage(h->table, &host_after, &device_after)) &&
        CHECK_OK(h->table, gh_capacity(h->table, &capacity)))
      CHECK(host_after <= host_before && device_after <= device_before && capacity >= h->capacity,
            "gh_clear: %zu + %zu bytes before, %zu + %zu after; capacity %llu after, %llu at creation", host_before,
            device_before, host_after, device_after, (unsigned long long)capacity, (unsigned long long)h->capacity);
  }
  tu_check_status_flags(h, 0);
}

typedef struct tu_pair {
  uint64_t key;
  uint64_t value;
} tu_pair;

static int tu_pair_cmp(const void *a, const void *b) {
  uint64_t x = ((const tu_pair *)a)->key, y = ((const tu_pair *)b)->key;
  return x < y ? -1 : x > y;
}

/* gh_export into buffers of exactly out_capacity elements, pre-filled with the canary. Returns
 * the pairs sorted by key (malloc'd) and their number, or NULL after reporting a failure. When
 * the count fits, checks that nothing was written past it. */
static tu_pair *tu_export_pairs(gh_table *table, unsigned key_bits, unsigned value_bits,
                                uint64_t out_capacity, uint64_t *count_out) {
  size_t kb = tu_bytes(key_bits), vb = tu_bytes(value_bits);
  unsigned char *keys = (unsigned char *)tu_xmalloc((size_t)out_capacity * kb);
  unsigned char *values = vb ? (unsigned char *)tu_xmalloc((size_t)out_capacity * vb) : NULL;
  uint64_t count = UINT64_MAX, i;
  uint64_t *wide_keys, *wide_values;
  tu_pair *pairs = NULL;
  memset(keys, TU_CANARY, (size_t)out_capacity * kb);
  if (values != NULL) memset(values, TU_CANARY, (size_t)out_capacity * vb);
  if (!CHECK_OK(table, gh_export(table, keys, values, out_capacity, &count, NULL))) goto out;
  if (!CHECK(count <= out_capacity, "export count %llu exceeds out_capacity %llu",
             (unsigned long long)count, (unsigned long long)out_capacity))
    goto out;
  for (i = count * kb; i < out_capacity * kb; ++i) {
    if (!CHECK(keys[i] == TU_CANARY, "export wrote keys_out past count %llu (byte %llu)",
               (unsigned long long)count, (unsigned long long)i))
      break;
  }
  for (i = count * vb; values != NULL && i < out_capacity * vb; ++i) {
    if (!CHECK(values[i] == TU_CANARY, "export wrote values_out past count %llu (byte %llu)",
               (unsigned long long)count, (unsigned long long)i))
      break;
  }
  wide_keys = (uint64_t *)tu_xmalloc((size_t)count * sizeof *wide_keys);
  wide_values = (uint64_t *)tu_xmalloc((size_t)count * sizeof *wide_values);
  tu_unpack(keys, count, key_bits, wide_keys);
  if (values != NULL) tu_unpack(values, count, value_bits, wide_values);
  pairs = (tu_pair *)tu_xmalloc((size_t)count * sizeof *pairs);
  for (i = 0; i < count; ++i) {
    pairs[i].key = wide_keys[i];
    pairs[i].value = values != NULL ? wide_values[i] : 0;
  }
  qsort(pairs, (size_t)count, sizeof *pairs, tu_pair_cmp);
  free(wide_values);
  free(wide_keys);
  *count_out = count;
out:
  free(values);
  free(keys);
  return pairs;
}

/* Checks sorted pairs against the reference: their number, no key twice, every key present,
 * every value allowed (and observed). */
static void tu_check_sorted_pairs(tu_table *h, const tu_pair *pairs, uint64_t count,
                                  const char *source) {
  uint64_t expected = tu_ref_size(&h->ref), i;
  char allowed[160];
  CHECK(count == expected, "%s: %llu pairs, the table should hold %llu", source,
        (unsigned long long)count, (unsigned long long)expected);
  for (i = 0; i < count; ++i) {
    const int key_repeated = i > 0 && pairs[i].key == pairs[i - 1].key;
    int value_allowed;
    if (!CHECK(!key_repeated, "%s holds key 0x%llx twice (a key stored in two slots: cuco #606)",
               source, (unsigned long long)pairs[i].key))
      continue;
    if (!CHECK(tu_ref_contains(&h->ref, pairs[i].key), "%s holds key 0x%llx, which is absent",
               source, (unsigned long long)pairs[i].key))
      continue;
    value_allowed = tu_ref_observe(&h->ref, pairs[i].key, pairs[i].value);
    if (!value_allowed) tu_ref_describe(&h->ref, pairs[i].key, allowed, sizeof allowed);
    CHECK(value_allowed, "%s: key 0x%llx has value %llu, expected %s", source,
          (unsigned long long)pairs[i].key, (unsigned long long)pairs[i].value, allowed);
  }
}

void tu_check_export(tu_table *h, uint64_t slack) {
  uint64_t count = 0, table_size = 0, room = tu_ref_size(&h->ref);
  tu_pair *pairs;
  /* Room for what the table says it holds when that is more than the reference: a key stored
   * twice then shows up as such instead of as GH_ERR_BUFFER_TOO_SMALL (the size mismatch itself
   * is reported by tu_check_size). */
  if (gh_size(h->table, &table_size) == GH_OK && table_size > room && table_size < (1u << 30))
    room = table_size;
  pairs = tu_export_pairs(h->table, h->key_bits, h->value_bits, room + slack, &count);
  if (pairs == NULL) return;
  tu_check_no_error_text(h->table, "gh_export");
  tu_check_sorted_pairs(h, pairs, count, "export");
  tu_check_status_flags(h, 0);
  free(pairs);
}

void tu_check_pairs(tu_table *h, const uint64_t *keys, const uint64_t *values, uint64_t count) {
  tu_pair *pairs = (tu_pair *)tu_xmalloc((size_t)count * sizeof *pairs);
  uint64_t i;
  for (i = 0; i < count; ++i) {
    pairs[i].key = keys[i];
    pairs[i].value = values != NULL ? values[i] : 0;
  }
  qsort(pairs, (size_t)count, sizeof *pairs, tu_pair_cmp);
  tu_check_sorted_pairs(h, pairs, count, "exported pairs");
  free(pairs);
}

void tu_check_stats(tu_table *h) {
  gh_stats s;
  uint64_t capacity = 0, size = tu_ref_size(&h->ref);
  memset(&s, TU_CANARY, sizeof s);
  if (!CHECK_OK(h->table, gh_get_stats(h->table, &s))) return;
  tu_check_no_error_text(h->table, "gh_get_stats");
  if (!CHECK_OK(h->table, gh_capacity(h->table, &capacity))) return;
  CHECK(s.size == size, "gh_stats.size %llu, reference %llu", (unsigned long long)s.size,
        (unsigned long long)size);
  CHECK(s.distinct_keys == s.size, "gh_stats.distinct_keys %llu differs from size %llu in a "
        "table holding one value per key", (unsigned long long)s.distinct_keys,
        (unsigned long long)s.size);
  /* Up to two keys (the all-ones patterns) live out of band, beside the slots, and stashed keys
   * beside them. */
  CHECK(s.slots + 2 + s.stash_keys >= s.size, "gh_stats.slots %llu, stash_keys %llu, size %llu",
        (unsigned long long)s.slots, (unsigned long long)s.stash_keys, (unsigned long long)s.size);
  tu_check_stats_rules(h->table, &s, capacity, h->config.table_factor);
}

void tu_check_stats_rules(gh_table *table, const gh_stats *s, uint64_t capacity,
                          double table_factor) {
  gh_config config;
  const tu_design *design;
  memset(&config, 0, sizeof config);
  if (!CHECK_OK(table, gh_get_config(table, &config))) return;
  design = tu_design_of(config.design);
  if (!CHECK(design != NULL, "table of design %d, which gh_design_info does not know",
             (int)config.design))
    return;
  CHECK(s->stash_keys <= s->distinct_keys, "gh_stats.stash_keys %llu > distinct keys %llu",
        (unsigned long long)s->stash_keys, (unsigned long long)s->distinct_keys);
  if (tu_design_has(design, GH_CAP_GROWS)) {
    /* Its capacity counts keys: it holds them all before it grows, on at least that many slots
     * (the keys that live out of band, in the stash or the side slots, aside). */
    CHECK(s->distinct_keys - s->stash_keys <= capacity,
          "%s holds %llu distinct keys (%llu of them in the stash) but gh_capacity says it "
          "holds %llu before it grows",
          design->name, (unsigned long long)s->distinct_keys, (unsigned long long)s->stash_keys,
          (unsigned long long)capacity);
    CHECK(s->slots + 2 >= capacity, "%s gh_stats.slots %llu (+ 2 side slots) < key capacity %llu (table_factor %g)",
          design->name, (unsigned long long)s->slots, (unsigned long long)capacity, table_factor);
  } else {
    CHECK(s->grows == 0, "%s does not grow (no GH_CAP_GROWS) but gh_stats.grows = %llu",
          design->name, (unsigned long long)s->grows);
  }
  if (tu_design_has(design, GH_CAP_REPORTS_FULL)) {
    /* A fixed-capacity table: its capacity is its slot count. */
    CHECK(s->slots == capacity, "%s gh_stats.slots %llu, gh_capacity %llu", design->name,
          (unsigned long long)s->slots, (unsigned long long)capacity);
  }
  if (tu_design_has(design, GH_CAP_HASH_FUNCTIONS)) {
    /* d hash functions: cuckoo eviction chains, with a limit. */
    CHECK(s->eviction_limit > 0, "%s (hash functions) gh_stats.eviction_limit is 0", design->name);
  } else {
    CHECK(s->restarts == 0 && s->eviction_limit == 0 && s->stash_keys == 0,
          "%s has no hash functions to restart with, yet gh_stats has restarts %llu "
          "eviction_limit %llu stash_keys %llu",
          design->name, (unsigned long long)s->restarts, (unsigned long long)s->eviction_limit,
          (unsigned long long)s->stash_keys);
  }
}

void tu_check_all(tu_table *h) {
  tu_check_size(h);
  tu_check_export(h, 3);
  tu_check_stats(h);
  tu_check_valid(h);
}

uint64_t tu_export_sorted(gh_table *table, unsigned key_bits, unsigned value_bits,
                          uint64_t **keys_out, uint64_t **values_out) {
  uint64_t size = 0, count = 0, i;
  tu_pair *pairs;
  *keys_out = NULL;
  if (values_out != NULL) *values_out = NULL;
  if (!CHECK_OK(table, gh_size(table, &size))) return UINT64_MAX;
  pairs = tu_export_pairs(table, key_bits, value_bits, size, &count);
  if (pairs == NULL) return UINT64_MAX;
  *keys_out = (uint64_t *)tu_xmalloc((size_t)count * sizeof **keys_out);
  for (i = 0; i < count; ++i) (*keys_out)[i] = pairs[i].key;
  if (values_out != NULL && value_bits > 0) {
    *values_out = (uint64_t *)tu_xmalloc((size_t)count * sizeof **values_out);
    for (i = 0; i < count; ++i) (*values_out)[i] = pairs[i].value;
  }
  free(pairs);
  return count;
}

/* ---- Batches without per-key reports (the bulk paths take only those) ------------------------ */

/* gh_insert without failed_out (a batch the bulk insert takes), then the reference. Returns the
 * call's status; GH_ERR_TABLE_FULL only where allow_full. */
gh_status tu_insert_unreported(tu_table *h, const uint64_t *keys, const uint64_t *values, uint64_t n,
                                   gh_dup_policy policy, int allow_full) {
  void *packed_keys = tu_pack(keys, n, h->key_bits);
  void *packed_values = h->value_bits ? tu_pack(values, n, h->value_bits) : NULL;
  const gh_status status = gh_insert(h->table, packed_keys, packed_values, n, policy, NULL, NULL);
  if (status == GH_OK) {
    tu_check_no_error_text(h->table, "gh_insert");
    tu_ref_insert(&h->ref, keys, values, n, policy, NULL);
  } else if (!(allow_full && status == GH_ERR_TABLE_FULL)) {
    CHECK_STATUS(h->table, status, GH_OK);
  }
  free(packed_keys);
  free(packed_values);
  return status;
}

/* gh_erase without erased_out (a batch the bulk erase takes): the count it gives is the number of
 * distinct keys the reference holds, and the reference follows. */
void tu_erase_unreported(tu_table *h, const uint64_t *keys, uint64_t n) {
  void *packed_keys = tu_pack(keys, n, h->key_bits);
  uint64_t count = 0xBADC0FFEEull;
  if (CHECK_OK(h->table, gh_erase(h->table, packed_keys, n, NULL, &count, NULL))) {
    tu_check_no_error_text(h->table, "gh_erase");
    const uint64_t expected = tu_ref_erase(&h->ref, keys, n);
    CHECK(count == expected, "gh_erase counts %llu keys erased, %llu were present", (unsigned long long)count,
          (unsigned long long)expected);
  }
  free(packed_keys);
}

/* The bulk table holds the ordinary table's keys; under GH_ADD also its values. */
void tu_check_same_contents(tu_table *plain, tu_table *bulk, int same_values) {
  uint64_t *a_keys = NULL, *a_values = NULL, *b_keys = NULL, *b_values = NULL;
  const uint64_t a = tu_export_sorted(plain->table, plain->key_bits, plain->value_bits, &a_keys, &a_values);
  const uint64_t b = tu_export_sorted(bulk->table, bulk->key_bits, bulk->value_bits, &b_keys, &b_values);
  if (a != UINT64_MAX && b != UINT64_MAX &&
      CHECK(a == b, "the ordinary table exports %llu keys, the bulk one %llu", (unsigned long long)a,
            (unsigned long long)b)) {
    for (uint64_t i = 0; i < a; ++i) {
      if (!CHECK(a_keys[i] == b_keys[i], "export position %llu (sorted): key 0x%llx in the ordinary table, 0x%llx in "
                 "the bulk one", (unsigned long long)i, (unsigned long long)a_keys[i], (unsigned long long)b_keys[i]))
        break;
      if (same_values && a_values && !CHECK(a_values[i] == b_values[i], "key 0x%llx: value %llu in the ordinary table, "
                                            "%llu in the bulk one", (unsigned long long)a_keys[i],
                                            (unsigned long long)a_values[i], (unsigned long long)b_values[i]))
        break;
    }
  }
  free(a_keys), free(a_values), free(b_keys), free(b_values);
}

void tu_check_table(tu_table *h, const uint64_t *keys, uint64_t n) {
  tu_check_valid(h);
  tu_check_size(h);
  tu_check_find(h, keys, n, TU_FIND_VALUES | TU_FIND_FOUND);
  tu_check_contains(h, keys, n);
  tu_check_export(h, 4);
}

/* A batch of n keys: drawn from a pool of distinct keys (so that keys repeat inside and across
 * batches), with the special keys spread over it. */
void tu_gen_batch(tu_rng *rng, unsigned key_bits, unsigned value_bits, const uint64_t *pool, uint64_t pool_n,
                       uint64_t n, uint64_t *keys, uint64_t *values) {
  tu_gen_from_pool(rng, pool, pool_n, n, keys);
  uint64_t special[8];
  const size_t specials = tu_special_keys(key_bits, special);
  for (size_t s = 0; s < specials && s < n; ++s) keys[tu_below(rng, n)] = special[s];
  tu_gen_values(rng, value_bits, n, values);
}

void tu_gen_skewed_batch(tu_rng *rng, unsigned key_bits, uint64_t distinct, uint64_t hot, uint64_t *keys,
                         uint64_t *values) {
  const uint64_t n = distinct + hot;
  tu_gen_unique_keys(rng, key_bits, distinct + 1u, NULL, keys);
  for (uint64_t i = distinct + 1u; i < n; ++i) keys[i] = keys[distinct];
  tu_shuffle(rng, keys, n);
  tu_gen_values(rng, 32, n, values);
}
