/*
 * hostile_keys - key sets that every hash function of a family sends to the same slot, whatever
 * its random constants: a table with d hash functions cannot place d + 1 such keys in its slots,
 * however often it restarts or grows. The table must still take them, quickly: every key
 * findable, gh_validate OK, a few growths at most, done in well under a second.
 *
 *   hostile_keys BACKEND --design NAME [--seed S]
 *
 * For designs whose traits have GH_CAP_HASH_FUNCTIONS (d = 2..5 functions of the multiply or the
 * XOR family); the others pass with a note: they have no hash functions to attack.
 *
 * How the sets are built, from the family definitions of gpuhash.h and their implementation
 * (src/cuckoo/cuckoo.h): 64-bit keys are first mixed by the bijection fmix64 (MurmurHash3's
 * finaliser), then hashed modulo the prime p = 2^61 - 1.
 *   - multiply family, h(k) = (a * fmix64(k) + b) mod p: keys whose images are congruent modulo p
 *     collide under every (a, b). Images x, x + p, x + 2p, ... (below 2^64) give up to 8 keys.
 *   - XOR family, h(k) = (((a xor fmix64(k)) >> 3) + b) mod p: images that differ only in their
 *     low 3 bits collide under every (a, b); 8 keys.
 *   The keys are the images run backwards through fmix64 (its inverse is written out below: the
 *   multiplicative inverses of its two constants modulo 2^64, and xorshift inverses).
 *   - 32-bit keys are hashed modulo p = 2^32 - 5 directly: under the multiply family k and
 *     k + (2^32 - 5) collide for k = 0..3.
 * The test checks its own construction against a model of each family with random constants.
 *
 * Each case (d = 2..5 x family of the table x hostile set x key width; the variant cycles through
 * those the design accepts) inserts a hostile set of d + 1 keys, or of 8, in one batch, then
 * random keys, then a second hostile set one key per batch; after each step every key must be
 * found with its value and the table validate. A case must finish within CASE_SECONDS (checked)
 * and is killed after ALARM_SECONDS (a build that never ends fails the entry instead of running
 * until memory is exhausted); the tracking allocator refuses to hold more than MEMORY_LIMIT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_models.h"
#include "test_util.h"
#include "tracking_alloc.h"

#define HK_BASE_SEED 0x405711E5ull
#define CASE_SECONDS 5.0
#define ALARM_SECONDS 30u
#define MEMORY_LIMIT ((size_t)32 << 20)
/* More growths than this for a handful of keys means the table grew because it could not
 * place them. */
#define MAX_GROWS 3u

#define P61 0x1FFFFFFFFFFFFFFFull /* 2^61 - 1 */
#define P32 4294967291ull         /* 2^32 - 5 */
#define FMIX_C1 0xff51afd7ed558ccdull
#define FMIX_C2 0xc4ceb9fe1a85ec53ull

static uint64_t fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= FMIX_C1;
  x ^= x >> 33;
  x *= FMIX_C2;
  x ^= x >> 33;
  return x;
}

/* The inverse of an odd number modulo 2^64 (Newton's iteration doubles the correct bits). */
static uint64_t inverse_mod_2_64(uint64_t c) {
  uint64_t inv = c; /* correct to 3 bits for odd c */
  int i;
  for (i = 0; i < 6; ++i) inv *= 2 - c * inv;
  return inv;
}

/* x ^= x >> 33 is its own inverse: the shifted part (the top 31 bits) is untouched by it. */
static uint64_t unfmix64(uint64_t x) {
  static uint64_t inv1 = 0, inv2 = 0;
  if (inv1 == 0) {
    inv1 = inverse_mod_2_64(FMIX_C1);
    inv2 = inverse_mod_2_64(FMIX_C2);
    REQUIRE(inv1 * FMIX_C1 == 1 && inv2 * FMIX_C2 == 1, "modular inverses of the fmix constants");
  }
  x ^= x >> 33;
  x *= inv2;
  x ^= x >> 33;
  x *= inv1;
  x ^= x >> 33;
  return x;
}

/* ---- Models of the two families, to check the construction ------------------------------------
 */

static uint64_t mulmod61(uint64_t a, uint64_t k) {
  unsigned __int128 product = (unsigned __int128)a * k;
  uint64_t lo = (uint64_t)product & P61, hi = (uint64_t)(product >> 61);
  uint64_t r = lo + (hi & P61) + (hi >> 61);
  while (r >= P61) r -= P61;
  return r;
}

static uint64_t model_hash(unsigned key_bits, int xor_family, uint64_t a, uint64_t b, uint64_t k) {
  if (key_bits == 32) {
    uint64_t x = xor_family ? (a ^ k) + b : (uint64_t)(((unsigned __int128)a * k + b) % P32);
    return x % P32;
  }
  k = fmix64(k);
  if (xor_family) return (((a ^ k) >> 3) + b) % P61;
  return (mulmod61(a % P61, k) + b % P61) % P61;
}

/* Every key of the set gets one hash value under random constants of the family. */
static void check_collides(tu_rng *rng, unsigned key_bits, int xor_family, const uint64_t *keys,
                           size_t n, const char *what) {
  int trial;
  size_t i;
  for (trial = 0; trial < 64; ++trial) {
    uint64_t prime = key_bits == 32 ? P32 : P61;
    uint64_t a = 1 + tu_next(rng) % (prime - 1), b = tu_next(rng) % prime;
    uint64_t h0 = model_hash(key_bits, xor_family, a, b, keys[0]);
    for (i = 1; i < n; ++i) {
      REQUIRE(model_hash(key_bits, xor_family, a, b, keys[i]) == h0,
              "the %s key set does not collide: key 0x%llx and 0x%llx differ under a = 0x%llx",
              what, (unsigned long long)keys[0], (unsigned long long)keys[i],
              (unsigned long long)a);
    }
  }
}

/* ---- The hostile sets -------------------------------------------------------------------------
 */

typedef enum hostile_kind { HOSTILE_MULTIPLY64, HOSTILE_XOR64, HOSTILE_PAIRS32 } hostile_kind;
static const char *const hostile_names[] = {"64-bit keys congruent mod 2^61-1 after fmix64",
                                            "64-bit keys equal but for 3 low bits after fmix64",
                                            "32-bit pairs k, k + 2^32 - 5"};

/* n keys (n <= 8) that collide under every constant of the family the kind attacks. */
static size_t hostile_set(tu_rng *rng, hostile_kind kind, size_t n, uint64_t *out) {
  size_t i;
  if (kind == HOSTILE_PAIRS32) {
    /* 0..3 and p..p+3: four pairs (the only 32-bit keys the multiply family cannot tell apart). */
    for (i = 0; i < 4; ++i) {
      out[2 * i] = i;
      out[2 * i + 1] = P32 + i;
    }
    return 8;
  }
  {
    const uint64_t x = kind == HOSTILE_MULTIPLY64 ? tu_next(rng) % P61 : tu_next(rng) & ~7ull;
    for (i = 0; i < n; ++i) {
      /* x + 7p < 2^64 for x < p */
      const uint64_t image = kind == HOSTILE_MULTIPLY64 ? x + (uint64_t)i * P61 : x | (uint64_t)i;
      out[i] = unfmix64(image);
      REQUIRE(fmix64(out[i]) == image, "unfmix64 is not the inverse of fmix64 at 0x%llx",
              (unsigned long long)image);
    }
  }
  return n;
}

/* ---- One case ---------------------------------------------------------------------------------
 */

static const char *hk_program;
static uint64_t hk_base_seed;

static void check_keys(tu_rng *rng, tu_model *m, const char *step) {
  gh_stats stats;
  tu_set_phase("%s: every key found with its value, validate", step);
  tu_model_check(rng, m);
  memset(&stats, 0, sizeof stats);
  if (CHECK_OK(tu_model_table(m), gh_get_stats(tu_model_table(m), &stats))) {
    CHECK(stats.grows <= MAX_GROWS,
          "%s: the table grew %llu times (restarts %llu, stash %llu) "
          "for a few keys: it grows because it cannot place them",
          step, (unsigned long long)stats.grows, (unsigned long long)stats.restarts,
          (unsigned long long)stats.stash_keys);
  }
}

static void insert_keys(tu_rng *rng, tu_model *m, const uint64_t *keys, uint64_t n,
                        gh_dup_policy policy) {
  uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *values);
  tu_gen_values(rng, tu_model_value_bits(m), n, values);
  tu_model_insert(m, keys, values, n, policy, 0);
  free(values);
}

static void run_case(const tu_design *design, gh_backend backend, gh_variant variant,
                     unsigned key_bits, unsigned d, gh_hash_family family, hostile_kind kind,
                     size_t set_size, uint64_t seed) {
  tu_rng rng = tu_rng_make(seed);
  tu_tracker *tracker = tu_tracker_new();
  gh_config cfg = gh_config_default(design->design);
  const unsigned value_bits = variant == GH_VARIANT_MAP ? key_bits : 32;
  const gh_dup_policy policy = variant == GH_VARIANT_MULTIVALUE   ? GH_APPEND
                               : variant == GH_VARIANT_COMPACTING ? GH_KEEP_FIRST
                                                                  : GH_OVERWRITE;
  const double start = tu_seconds();
  const unsigned long failures_before = tu_failure_count();
  uint64_t first[8], second[8], random_keys[200], i;
  double seconds;
  gh_stats stats;
  tu_model m;
  size_t n_first, n_second;

  cfg.backend = backend;
  cfg.variant = variant;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  /* Room for every key of the case: growth would only come from keys that cannot be placed. */
  cfg.capacity = 256;
  cfg.hash_functions = d;
  cfg.hash_family = family;
  cfg.table_factor = tu_cuckoo_min_factor[d - 2] + 0.5;
  cfg.seed = tu_next(&rng);
  cfg.host_threads = 2;
  tu_tracker_set_limit(tracker, MEMORY_LIMIT);
  tu_tracker_attach(tracker, &cfg);
  tu_set_context(
      "hostile_keys design=%s backend=%s variant=%s key_bits=%u hash_functions=%u "
      "hash_family=%s set=\"%s\" (%zu keys) case_seed=0x%016llx\n"
      "  rerun: %s %s --design %s --seed 0x%016llx",
      design->name, tu_backend_name(backend), tu_variant_name(variant, value_bits), key_bits, d,
      family == GH_HASH_XOR ? "xor" : "multiply", hostile_names[kind], set_size,
      (unsigned long long)seed, hk_program, tu_backend_name(backend), design->name,
      (unsigned long long)hk_base_seed);
  tu_set_alarm(ALARM_SECONDS);
  tu_set_phase("create");
  if (!tu_model_create(&m, &cfg)) goto out;

  n_first = hostile_set(&rng, kind, set_size, first);
  n_second = hostile_set(&rng, kind, set_size, second);
  if (kind == HOSTILE_PAIRS32) n_second = 0; /* there is only one such set */
  check_collides(&rng, key_bits, kind == HOSTILE_XOR64, first,
                 kind == HOSTILE_PAIRS32 ? 2 : n_first, hostile_names[kind]);

  tu_set_phase("insert the hostile set in one batch");
  insert_keys(&rng, &m, first, n_first, policy);
  check_keys(&rng, &m, "after the hostile set");

  {
    tu_ref avoid;
    tu_ref_init(&avoid, key_bits, 0);
    tu_ref_insert(&avoid, first, NULL, n_first, GH_KEEP_FIRST, NULL);
    tu_ref_insert(&avoid, second, NULL, n_second, GH_KEEP_FIRST, NULL);
    tu_gen_unique_keys(&rng, key_bits, 200, &avoid, random_keys);
    tu_ref_free(&avoid);
  }
  tu_set_phase("insert 200 random keys beside it");
  insert_keys(&rng, &m, random_keys, 200, policy);
  check_keys(&rng, &m, "after the random keys");

  for (i = 0; i < n_second; ++i) {
    tu_set_phase("a second hostile set, one key per batch: key %llu", (unsigned long long)i);
    insert_keys(&rng, &m, &second[i], 1, policy);
  }
  if (n_second > 0) check_keys(&rng, &m, "after the second set, one key at a time");

  seconds = tu_seconds() - start;
  memset(&stats, 0, sizeof stats);
  CHECK_OK(tu_model_table(&m), gh_get_stats(tu_model_table(&m), &stats));
  CHECK(seconds <= CASE_SECONDS,
        "the case took %.1f s; a handful of hostile keys must not take "
        "more than %.0f s (restarts %llu, grows %llu)",
        seconds, CASE_SECONDS, (unsigned long long)stats.restarts, (unsigned long long)stats.grows);
  printf(
      "  %-4s %-10s k%u d=%u %-8s %-50s %zu keys: restarts %3llu grows %llu stash %llu "
      "%.3f s: %s\n",
      tu_backend_name(backend), tu_variant_name(variant, value_bits), key_bits, d,
      family == GH_HASH_XOR ? "xor" : "multiply", hostile_names[kind], n_first,
      (unsigned long long)stats.restarts, (unsigned long long)stats.grows,
      (unsigned long long)stats.stash_keys, seconds,
      tu_failure_count() == failures_before ? "ok" : "FAILED");
  fflush(stdout);
  tu_set_phase("destroy");
  tu_model_destroy(&m);
  tu_tracker_check_clean(tracker, "after gh_destroy");
out:
  tu_set_alarm(0);
  tu_tracker_delete(tracker);
}

int main(int argc, char **argv) {
  const tu_design *design = NULL;
  gh_variant variants[3];
  size_t n_variants = 0, case_index = 0;
  gh_backend backend;
  uint64_t seed = HK_BASE_SEED;
  unsigned d;
  int i, family;
  hk_program = argv[0];
  if (!tu_parse_case_args(argc, argv, &backend, &design, NULL, &seed)) goto usage;
  hk_base_seed = seed;
  tu_skip_unless_backend_usable(backend);
  if (!tu_design_has(design, GH_CAP_HASH_FUNCTIONS)) {
    printf("%s has no hash functions to attack (no GH_CAP_HASH_FUNCTIONS): nothing to test\n",
           design->name);
    return tu_finish("hostile_keys");
  }
  tu_install_crash_handler();
  for (i = GH_VARIANT_MAP; i <= GH_VARIANT_MULTIVALUE; ++i) {
    if (tu_design_accepts_variant(design, (gh_variant)i)) variants[n_variants++] = (gh_variant)i;
  }
  for (d = 2; d <= 5; ++d) {
    for (family = 0; family < 2; ++family) {
      hostile_kind kind;
      for (kind = HOSTILE_MULTIPLY64; kind <= HOSTILE_PAIRS32; kind = (hostile_kind)(kind + 1)) {
        const size_t sizes[2] = {d + 1, 8};
        size_t s;
        for (s = 0; s < (kind == HOSTILE_PAIRS32 ? 1u : 2u); ++s) {
          run_case(design, backend, variants[case_index % n_variants],
                   kind == HOSTILE_PAIRS32 ? 32 : 64, d, (gh_hash_family)family, kind, sizes[s],
                   tu_mix_seed(seed, d * 16u + (unsigned)family, (uint64_t)kind, s));
          ++case_index;
        }
      }
    }
  }
  return tu_finish("hostile_keys");
usage:
  fprintf(stderr, "usage: %s host|cuda --design NAME [--seed S]\n", argv[0]);
  return 2;
}
