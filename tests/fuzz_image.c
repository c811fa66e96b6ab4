/*
 * fuzz_image - gh_load_from_memory against arbitrary bytes: it must refuse what is not an image
 * with a status and no table, and what it loads must validate. Never a crash.
 *
 * Two builds of this file:
 *   - the suite's (tests/fuzz_image N [--seed S]): N inputs made from valid images of every design
 *     (maps, multi-value tables, records, both key widths) by random edits - bits flipped, bytes
 *     and header fields rewritten (with boundary values), truncations, extensions, copies within
 *     the image - most of them sealed again (core/image.h) so that they pass the checksums and
 *     reach the loader's later checks and the insert;
 *   - libFuzzer's (-DGH_FUZZ_LIBFUZZER, clang: scripts/fuzz-image), whose mutator seals too and
 *     starts from the same valid images.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/image.h"
#include "gpuhash.h"
#include "test_util.h"

/* ---- The target ---------------------------------------------------------------------------------- */

static unsigned long loaded_count, refused_count;

/* The loaded tables' allocator: at most 4 MiB live, so that an image naming a huge capacity
 * fails for memory at once instead of filling gigabytes (a clean refusal all the same). */
#define FUZZ_MEMORY_LIMIT ((size_t)4 << 20)
static size_t fuzz_live_bytes;

static void *fuzz_alloc(void *ctx, size_t bytes, gh_memory_kind kind) {
  (void)ctx;
  if (kind != GH_MEMORY_HOST || bytes > FUZZ_MEMORY_LIMIT - fuzz_live_bytes) return NULL;
  void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p) fuzz_live_bytes += bytes;
  return p;
}

static void fuzz_free(void *ctx, void *ptr, size_t bytes, gh_memory_kind kind) {
  (void)ctx, (void)kind;
  free(ptr);
  fuzz_live_bytes -= bytes;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gh_config runtime = gh_config_default(GH_WARPDRIVE);
  runtime.backend = GH_BACKEND_HOST;
  runtime.host_threads = 2;
  runtime.allocator.alloc = fuzz_alloc;
  runtime.allocator.free = fuzz_free;
  gh_table *t = (gh_table *)&runtime; /* the call must clear it */
  const gh_status status = gh_load_from_memory(data, size, &runtime, &t);
  if (status != GH_OK) {
    if (t != NULL || gh_last_create_error()[0] == '\0') {
      fprintf(stderr, "fuzz_image: a refused image (%s) left a table or no message\n", gh_status_name(status));
      abort();
    }
    if (fuzz_live_bytes != 0) {
      fprintf(stderr, "fuzz_image: a refused image left %zu bytes allocated\n", fuzz_live_bytes);
      abort();
    }
    refused_count += 1;
    return 0;
  }
  if (gh_validate(t) != GH_OK) {
    fprintf(stderr, "fuzz_image: a loaded image does not validate: %s\n", gh_last_error(t));
    abort();
  }
  loaded_count += 1;
  gh_destroy(t);
  if (fuzz_live_bytes != 0) {
    fprintf(stderr, "fuzz_image: %zu bytes left allocated after gh_destroy\n", fuzz_live_bytes);
    abort();
  }
  return 0;
}

/* ---- Valid images to start from ----------------------------------------------------------------- */

typedef struct seed_image {
  unsigned char *bytes;
  size_t size;
} seed_image;

static seed_image seeds[32];
static size_t seed_count;

/* An image of a small table of the design with these widths, or nothing if it refuses them. */
static void add_seed(gh_design design, gh_variant variant, unsigned key_bits, unsigned value_bits, tu_rng *rng) {
  gh_config c = gh_config_default(design);
  c.backend = GH_BACKEND_HOST;
  c.host_threads = 2;
  c.variant = variant;
  c.key_bits = key_bits;
  c.value_bits = value_bits;
  c.capacity = 256;
  gh_table *t = NULL;
  if (seed_count == sizeof seeds / sizeof seeds[0] || gh_create(&c, &t) != GH_OK) return;
  enum { N = 24 };
  uint64_t keys[N], values[N * 16]; /* 8-byte aligned for every width */
  for (size_t i = 0; i < N; ++i) keys[i] = tu_next(rng);
  for (size_t i = 0; i < N * 16; ++i) values[i] = tu_next(rng);
  const gh_dup_policy policy = variant == GH_VARIANT_MULTIVALUE ? GH_APPEND : GH_KEEP_FIRST;
  size_t size = 0;
  if (gh_insert(t, keys, value_bits ? values : NULL, N, policy, NULL, NULL) == GH_OK &&
      gh_save_to_memory(t, NULL, 0, &size, NULL) == GH_OK) {
    unsigned char *image = (unsigned char *)malloc(size);
    if (image && gh_save_to_memory(t, image, size, &size, NULL) == GH_OK) {
      seeds[seed_count].bytes = image;
      seeds[seed_count++].size = size;
    } else {
      free(image);
    }
  }
  gh_destroy(t);
}

static void make_seeds(void) {
  tu_rng rng = tu_rng_make(0x5EED1A6Eull);
  static const gh_design designs[] = {GH_WARPDRIVE, GH_CUCKOO, GH_SLAB, GH_DYCUCKOO, GH_HASHGRAPH};
  for (size_t d = 0; d < sizeof designs / sizeof designs[0]; ++d) {
    add_seed(designs[d], GH_VARIANT_MAP, 32, 32, &rng);
    add_seed(designs[d], GH_VARIANT_MAP, 64, 0, &rng);
    add_seed(designs[d], GH_VARIANT_MULTIVALUE, 64, 64, &rng);
    add_seed(designs[d], GH_VARIANT_MAP, 32, 192, &rng);
  }
}

#ifndef GH_FUZZ_LIBFUZZER

/* ---- Edits (the suite's build; libFuzzer makes its own) ------------------------------------------ */

/* Values a header field is set to: boundaries and near misses of real ones. */
static uint64_t field_value(tu_rng *rng) {
  static const uint64_t values[] = {0, 1, 2, 3, 4, 5, 7, 8, 16, 31, 32, 33, 63, 64, 65, 128, 192, 1024, 1025,
                                    0xFFFFFFFFull, 0x100000000ull, ~0ull, ~0ull - 1, 1ull << 62, 1ull << 63};
  const uint64_t pick = tu_next(rng);
  return pick % 4 == 0 ? tu_next(rng) : values[pick % (sizeof values / sizeof values[0])];
}

/* A few random edits of data (size bytes of max_size), sealed again most of the time; the new size. */
static size_t mutate(unsigned char *data, size_t size, size_t max_size, tu_rng *rng) {
  const unsigned edits = 1u + (unsigned)(tu_next(rng) % 4u);
  for (unsigned e = 0; e < edits && size > 0; ++e) {
    const uint64_t kind = tu_next(rng) % 6u, at = tu_next(rng) % size;
    if (kind == 0) {
      data[at] ^= (unsigned char)(1u << (tu_next(rng) % 8u));
    } else if (kind == 1) {
      data[at] = (unsigned char)tu_next(rng);
    } else if (kind == 2 && size >= GH_IMAGE_HEADER_BYTES) {
      const size_t field = 8u * (size_t)(tu_next(rng) % (GH_IMAGE_HEADER_BYTES / 8u));
      uint64_t v = field_value(rng);
      for (int b = 0; b < 8; ++b, v >>= 8) data[field + (size_t)b] = (unsigned char)v;
    } else if (kind == 3) {
      size = (size_t)(tu_next(rng) % (size + 1u));
    } else if (kind == 4 && size < max_size) {
      const size_t more = (size_t)(tu_next(rng) % (max_size - size + 1u));
      for (size_t i = 0; i < more; ++i) data[size + i] = (unsigned char)tu_next(rng);
      size += more;
    } else if (kind == 5) {
      const size_t from = (size_t)(tu_next(rng) % size), to = (size_t)(tu_next(rng) % size);
      const size_t n = (size_t)(tu_next(rng) % 16u);
      if (from + n <= size && to + n <= size) memmove(data + to, data + from, n);
    }
  }
  if (tu_next(rng) % 4u != 0) gh__image_seal(data, size);
  return size;
}

#else

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* libFuzzer's mutations, then most often sealed; a seed image now and then (and instead of any
 * input too short to be one), since random bytes almost never make a header. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  tu_rng rng = tu_rng_make(seed);
  if (seed_count == 0) make_seeds();
  if (seed_count > 0 && (size < GH_IMAGE_HEADER_BYTES || tu_next(&rng) % 8u == 0)) {
    const seed_image *s = &seeds[tu_next(&rng) % seed_count];
    if (s->size <= max_size) {
      memcpy(data, s->bytes, s->size);
      size = s->size;
    }
  }
  size = LLVMFuzzerMutate(data, size, max_size);
  if (tu_next(&rng) % 4u != 0) gh__image_seal(data, size);
  return size;
}

#endif

#ifndef GH_FUZZ_LIBFUZZER

int main(int argc, char **argv) {
  unsigned long inputs = 0;
  uint64_t seed = 0xF022ull;
  if (argc < 2 || sscanf(argv[1], "%lu", &inputs) != 1 ||
      (argc == 4 && (strcmp(argv[2], "--seed") != 0 || !tu_parse_u64(argv[3], &seed))) || (argc != 2 && argc != 4)) {
    fprintf(stderr, "usage: %s INPUTS [--seed S]\n", argv[0]);
    return 2;
  }
  printf("fuzz_image: %lu inputs, seed 0x%llx\n", inputs, (unsigned long long)seed);
  tu_rng rng = tu_rng_make(seed);
  make_seeds();
  if (seed_count == 0) {
    fprintf(stderr, "fuzz_image: no design made a seed image\n");
    return 1;
  }
  size_t largest = 0;
  for (size_t s = 0; s < seed_count; ++s) largest = seeds[s].size > largest ? seeds[s].size : largest;
  const size_t max_size = 2 * largest;
  unsigned char *data = (unsigned char *)malloc(max_size);
  if (data == NULL) return 1;
  for (unsigned long i = 0; i < inputs; ++i) {
    const seed_image *s = &seeds[tu_next(&rng) % seed_count];
    memcpy(data, s->bytes, s->size);
    LLVMFuzzerTestOneInput(data, mutate(data, s->size, max_size, &rng));
  }
  /* The seeds themselves load. */
  const unsigned long refused_before = refused_count;
  for (size_t s = 0; s < seed_count; ++s) LLVMFuzzerTestOneInput(seeds[s].bytes, seeds[s].size);
  if (refused_count != refused_before) {
    fprintf(stderr, "fuzz_image: a valid seed image was refused\n");
    return 1;
  }
  printf("fuzz_image: PASSED (%zu seed images; of the edited inputs %lu refused, %lu loaded and validated)\n",
         seed_count, refused_before, loaded_count - seed_count);
  for (size_t s = 0; s < seed_count; ++s) free(seeds[s].bytes);
  free(data);
  return 0;
}

#endif
