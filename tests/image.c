/*
 * image - gh_save / gh_load on every design, on either backend.
 *
 *   image host|cuda --design NAME [--seed S]
 *
 * Round trips: for every variant the design takes (compacting excepted) and every key / value
 * width it accepts (values of any size for GH_CAP_VALUE_RECORDS), random pairs with the sentinel
 * keys among them (duplicated keys for multi-value tables) are saved to memory (the size asked
 * first; a buffer one byte short refused, untouched) and to a file, and loaded on this backend and
 * on the host: the same pairs, size, configuration and validate, with the call knobs
 * (bulk_min_keys, compact_scratch_bytes) of the runtime config. An empty table round-trips too.
 * A compacting table cannot be saved (GH_ERR_UNSUPPORTED).
 * Bad images, from one valid image: NULL arguments, a missing file, an unwritable path, every
 * truncation, trailing bytes, every byte flipped, and crafted images sealed with correct
 * checksums (core/image.h): another magic, format, design, key or value width, a configuration
 * the design refuses, a count that does not match the payload, a map key stored twice, a
 * compacting table. Each gives its status, a message and no table.
 * Allocation failures: the loaded table's allocator fails its k-th allocation for every k until
 * the load gets through (the status, no table, nothing leaked), and the saved table's fails
 * during gh_save_to_memory (the status, the buffer untouched, the table unchanged).
 * Every failure prints the case, the phase and the seed.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/image.h"
#include "gpuhash.h"
#include "test_util.h"
#include "tracking_alloc.h"

#define IMAGE_BASE_SEED 0x1A6E5EEDull

static uint64_t image_seed;
static char image_path[256];
static unsigned round_trips; /* cases run (a combination the design refuses is skipped) */

/* ---- A table's pairs, as sortable byte strings ------------------------------------------------- */

/* Each pair as key (8 bytes, big-endian: byte order = numeric order) then its value bytes. */
typedef struct pair_list {
  unsigned char *bytes;
  uint64_t n;
  size_t width;
} pair_list;

static size_t sort_width;
static int by_bytes(const void *a, const void *b) { return memcmp(a, b, sort_width); }

static pair_list pairs_of(gh_table *t) {
  pair_list p = {NULL, 0, 0};
  gh_config c;
  uint64_t size = 0, count = 0;
  if (!CHECK_OK(t, gh_get_config(t, &c)) || !CHECK_OK(t, gh_size(t, &size))) return p;
  const size_t kb = c.key_bits / 8u, vb = c.value_bits / 8u;
  unsigned char *keys = (unsigned char *)tu_xmalloc(size * kb + 8), *values = (unsigned char *)tu_xmalloc(size * vb + 8);
  p.width = 8 + vb;
  p.bytes = (unsigned char *)tu_xmalloc(size * p.width + 8);
  if (CHECK_OK(t, gh_export(t, keys, vb ? values : NULL, size, &count, NULL))) {
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t key = 0;
      memcpy(&key, keys + i * kb, kb); /* little-endian host */
      for (int b = 0; b < 8; ++b) p.bytes[i * p.width + (size_t)b] = (unsigned char)(key >> (56 - 8 * b));
      memcpy(p.bytes + i * p.width + 8, values + i * vb, vb);
    }
    p.n = count;
    sort_width = p.width;
    qsort(p.bytes, count, p.width, by_bytes);
  }
  free(keys);
  free(values);
  return p;
}

static int same_pairs(const pair_list *a, const pair_list *b) {
  return a->n == b->n && a->width == b->width && memcmp(a->bytes, b->bytes, a->n * a->width) == 0;
}

/* The table's image (its size asked first), or NULL. */
static unsigned char *image_of(gh_table *t, size_t *bytes) {
  *bytes = 0;
  if (!CHECK_OK(t, gh_save_to_memory(t, NULL, 0, bytes, NULL))) return NULL;
  unsigned char *image = (unsigned char *)tu_xmalloc(*bytes + 1);
  size_t again = 0;
  if (!CHECK_OK(t, gh_save_to_memory(t, image, *bytes, &again, NULL)) || !CHECK(again == *bytes, "sizes differ")) {
    free(image);
    return NULL;
  }
  return image;
}

/* The loaded table against the saved one: pairs, size, defining configuration, validate. */
static void check_same(gh_table *loaded, gh_table *saved, const pair_list *want, const char *how) {
  tu_set_phase("%s: contents", how);
  pair_list got = pairs_of(loaded);
  CHECK(same_pairs(&got, want), "the loaded table holds %llu pairs, the saved %llu, or others",
        (unsigned long long)got.n, (unsigned long long)want->n);
  free(got.bytes);
  gh_config a, b;
  /* Saved again, the loaded table makes the same image: same pairs aside, the same header (the
   * capacity the table was made with, not a grown one). */
  size_t first = 0, second = 0;
  unsigned char *image_a = image_of(saved, &first), *image_b = image_of(loaded, &second);
  if (image_a && image_b && CHECK(first == second, "the loaded table's image has %zu bytes, the saved %zu", second, first))
    CHECK(memcmp(image_a, image_b, GH_IMAGE_AT_COUNT) == 0, "the loaded table's image header differs (configuration)");
  free(image_a);
  free(image_b);
  if (CHECK_OK(loaded, gh_get_config(loaded, &a)) && CHECK_OK(saved, gh_get_config(saved, &b)))
    CHECK(a.design == b.design && a.variant == b.variant && a.key_bits == b.key_bits && a.value_bits == b.value_bits &&
              a.seed == b.seed && a.group_size == b.group_size && a.hash_functions == b.hash_functions &&
              a.table_factor == b.table_factor && a.slab_load == b.slab_load && a.fill_max == b.fill_max &&
              a.load_factor == b.load_factor,
          "the loaded table's configuration differs from the saved one's");
  CHECK_OK(loaded, gh_validate(loaded));
}

/* ---- Tables -------------------------------------------------------------------------------------- */

/* Slots a bucket of the cuckoo tables made (1, or 16 for the bucketed round trips). */
static unsigned image_bucket_slots = 1;
/* The capacity the tables are made with (small for the round trips of tables that grew). */
static uint64_t image_capacity = 4096;

static gh_config config_for(const tu_design *design, gh_backend backend, gh_variant variant, unsigned key_bits,
                            unsigned value_bits) {
  gh_config c = gh_config_default(design->design);
  c.backend = backend;
  c.variant = variant;
  c.key_bits = key_bits;
  c.value_bits = value_bits;
  c.capacity = image_capacity;
  c.seed = image_seed;
  c.bucket_slots = image_bucket_slots;
  return c;
}

/* n random keys (the sentinel patterns among them), each with 1 value, or 1..3 for a multi-value
 * table, inserted. */
static gh_table *filled_table(const gh_config *c, uint64_t n, tu_rng *rng) {
  gh_table *t = NULL;
  if (!CHECK(gh_create(c, &t) == GH_OK, "gh_create: %s", gh_last_create_error())) return NULL;
  const int multi = c->variant == GH_VARIANT_MULTIVALUE;
  const size_t kb = c->key_bits / 8u, vb = c->value_bits / 8u;
  uint64_t *unique = (uint64_t *)tu_xmalloc(n * 8 + 8);
  tu_gen_unique_keys(rng, c->key_bits, n, NULL, unique);
  const uint64_t all_ones = c->key_bits == 32 ? 0xFFFFFFFFull : ~0ull;
  if (n >= 3) unique[0] = all_ones, unique[1] = all_ones - 1u, unique[2] = 0;
  unsigned char *keys = (unsigned char *)tu_xmalloc(3 * n * kb + 8), *values = (unsigned char *)tu_xmalloc(3 * n * vb + 8);
  uint64_t m = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const unsigned copies = multi ? 1u + (unsigned)(tu_below(rng, 3)) : 1u;
    for (unsigned k = 0; k < copies; ++k, ++m) {
      memcpy(keys + m * kb, &unique[i], kb);
      for (size_t b = 0; b < vb; ++b) values[m * vb + b] = (unsigned char)tu_next(rng);
    }
  }
  CHECK_OK(t, gh_insert(t, keys, vb ? values : NULL, m, multi ? GH_APPEND : GH_KEEP_FIRST, NULL, NULL));
  free(unique);
  free(keys);
  free(values);
  return t;
}


/* gh_load_from_memory expected to refuse the image with `want`: no table, a message. */
static void check_refused(const void *image, size_t bytes, gh_status want, const char *what) {
  gh_table *t = (gh_table *)image; /* anything but NULL: the call must clear it */
  const gh_status got = gh_load_from_memory(image, bytes, NULL, &t);
  if (!CHECK(got == want && t == NULL && gh_last_create_error()[0] != '\0',
             "%s: gh_load_from_memory gave %s (%s), table %p; expected %s", what, gh_status_name(got),
             gh_last_create_error(), (void *)t, gh_status_name(want)))
    if (t != NULL && got == GH_OK) gh_destroy(t);
}

/* ---- Cases --------------------------------------------------------------------------------------- */

static void round_trip(const tu_design *design, gh_backend backend, gh_variant variant, unsigned key_bits,
                       unsigned value_bits, uint64_t n) {
  gh_config c = config_for(design, backend, variant, key_bits, value_bits);
  char message[512];
  if (gh_config_validate(&c, message, sizeof message) != GH_OK) return; /* a combination the design refuses */
  tu_set_context("image round trip %s %s %s k%u v%u n=%llu seed 0x%016llx", tu_backend_name(backend), design->name,
                 tu_variant_name(variant, value_bits), key_bits, value_bits, (unsigned long long)n,
                 (unsigned long long)image_seed);
  tu_rng rng = tu_rng_make(tu_mix_seed(image_seed, key_bits, value_bits, (uint64_t)variant * 1000u + n));
  tu_set_phase("fill");
  round_trips += 1;
  gh_table *t = filled_table(&c, n, &rng);
  if (t == NULL) return;
  pair_list want = pairs_of(t);
  size_t bytes = 0;
  tu_set_phase("save to memory");
  unsigned char *image = image_of(t, &bytes);
  if (image != NULL) {
    CHECK(bytes == GH_IMAGE_HEADER_BYTES + want.n * (key_bits + value_bits) / 8u, "an image of %zu bytes", bytes);
    /* A buffer one byte short: refused, untouched. */
    unsigned char *short_buffer = (unsigned char *)tu_xmalloc(bytes);
    memset(short_buffer, 0xA5, bytes);
    size_t said = 0;
    CHECK_STATUS(t, gh_save_to_memory(t, short_buffer, bytes - 1, &said, NULL), GH_ERR_BUFFER_TOO_SMALL);
    int untouched = said == bytes;
    for (size_t i = 0; i + 1 < bytes; ++i) untouched &= short_buffer[i] == 0xA5;
    CHECK(untouched, "a refused gh_save_to_memory wrote into the buffer or did not say the size");
    free(short_buffer);
    gh_config host = gh_config_default(design->design);
    host.backend = GH_BACKEND_HOST;
    const gh_config *runtimes[2] = {&c, &host};
    for (int r = 0; r < (backend == GH_BACKEND_HOST ? 1 : 2); ++r) {
      gh_table *back = NULL;
      /* The knobs of the calls are the runtime config's, not the image's. */
      gh_config runtime = *runtimes[r];
      runtime.bulk_min_keys = UINT64_MAX, runtime.compact_scratch_bytes = 12345;
      tu_set_phase("load from memory on the %s backend", r ? "host" : tu_backend_name(backend));
      if (CHECK(gh_load_from_memory(image, bytes, &runtime, &back) == GH_OK, "gh_load_from_memory: %s",
                gh_last_create_error())) {
        check_same(back, t, &want, r ? "loaded on the host" : "loaded");
        gh_config got;
        if (CHECK_OK(back, gh_get_config(back, &got))) {
          CHECK(got.bulk_min_keys == UINT64_MAX && got.compact_scratch_bytes == 12345,
                "loaded with bulk_min_keys %llu, compact_scratch_bytes %llu: not the runtime config's",
                (unsigned long long)got.bulk_min_keys, (unsigned long long)got.compact_scratch_bytes);
          /* "The capacity saved is the one the table was created with (a table that grew grows
           * again)": so the image of a loaded table loads into a table of the same capacity (a
           * grown table's capacity saved would make a larger table each cycle). */
          size_t again_bytes = 0;
          unsigned char *again = r == 0 ? image_of(back, &again_bytes) : NULL;
          gh_table *cycled = NULL;
          gh_config cycled_config;
          if (again != NULL &&
              CHECK(gh_load_from_memory(again, again_bytes, &c, &cycled) == GH_OK, "gh_load_from_memory of a loaded "
                    "table's image: %s", gh_last_create_error()) &&
              CHECK_OK(cycled, gh_get_config(cycled, &cycled_config)))
            CHECK(cycled_config.capacity == got.capacity, "a table made with capacity %llu, saved and loaded, had "
                  "capacity %llu; saved and loaded again, %llu", (unsigned long long)c.capacity,
                  (unsigned long long)got.capacity, (unsigned long long)cycled_config.capacity);
          gh_destroy(cycled);
          free(again);
        }
        gh_destroy(back);
      }
    }
    /* "its other fields are ignored: the image says them": a runtime config of another design,
     * widths, variant, capacity and seed loads the image as it was saved. */
    tu_set_phase("load with the runtime config of another layout");
    const tu_design *other = tu_design_by_name(strcmp(design->name, "warpdrive") == 0 ? "cuckoo" : "warpdrive");
    gh_config foreign = gh_config_default(other != NULL ? other->design : design->design);
    foreign.backend = backend;
    foreign.key_bits = key_bits == 32 ? 64 : 32, foreign.value_bits = 0, foreign.variant = GH_VARIANT_MAP;
    foreign.capacity = 1, foreign.seed = c.seed + 1u;
    gh_table *back = NULL;
    gh_config got;
    if (CHECK(gh_load_from_memory(image, bytes, &foreign, &back) == GH_OK, "gh_load_from_memory: %s",
              gh_last_create_error()) &&
        CHECK_OK(back, gh_get_config(back, &got))) {
      check_same(back, t, &want, "loaded with another layout's runtime config");
      CHECK(got.design == c.design && got.key_bits == c.key_bits && got.value_bits == c.value_bits &&
                got.variant == c.variant && got.seed == c.seed && got.capacity >= c.capacity,
            "loaded as design %d k%u v%u variant %d seed %llu capacity %llu: not the image's (%d k%u v%u %d %llu %llu)",
            (int)got.design, got.key_bits, got.value_bits, (int)got.variant, (unsigned long long)got.seed,
            (unsigned long long)got.capacity, (int)c.design, c.key_bits, c.value_bits, (int)c.variant,
            (unsigned long long)c.seed, (unsigned long long)c.capacity);
    }
    gh_destroy(back);
    free(image);
  }
  tu_set_phase("save to a file, load it");
  gh_table *back = NULL;
  if (CHECK_OK(t, gh_save(t, image_path, NULL)) &&
      CHECK(gh_load(image_path, &c, &back) == GH_OK, "gh_load: %s", gh_last_create_error())) {
    check_same(back, t, &want, "loaded from a file");
    gh_destroy(back);
  }
  remove(image_path);
  free(want.bytes);
  gh_destroy(t);
}

static void case_round_trips(const tu_design *design, gh_backend backend) {
  static const unsigned key_widths[] = {32, 64}, value_widths[] = {0, 32, 64, 192};
  static const gh_variant variants[] = {GH_VARIANT_MAP, GH_VARIANT_MULTIVALUE};
  for (size_t v = 0; v < 2; ++v) {
    if (!tu_design_accepts_variant(design, variants[v])) continue;
    for (size_t k = 0; k < 2; ++k)
      for (size_t w = 0; w < 4; ++w) round_trip(design, backend, variants[v], key_widths[k], value_widths[w], 1500);
  }
  round_trip(design, backend, GH_VARIANT_MAP, 32, 32, 0);
  if (design->design == GH_CUCKOO) { /* the bucketed layout survives the round trip */
    image_bucket_slots = 16;
    round_trip(design, backend, GH_VARIANT_MAP, 64, 32, 1500);
    round_trip(design, backend, GH_VARIANT_MULTIVALUE, 32, 64, 1500);
    image_bucket_slots = 1;
  }
  if (design->traits.capabilities & GH_CAP_GROWS) { /* a table that grew past its capacity */
    image_capacity = 64;
    round_trip(design, backend, GH_VARIANT_MAP, 32, 32, 1500);
    if (tu_design_accepts_variant(design, GH_VARIANT_MULTIVALUE))
      round_trip(design, backend, GH_VARIANT_MULTIVALUE, 64, 32, 1500);
    image_capacity = 4096;
  }
  printf("image %s %s: %u round trips (memory, file%s)\n", tu_backend_name(backend), design->name, round_trips,
         backend == GH_BACKEND_HOST ? "" : ", and onto the host");
  if (tu_design_accepts_variant(design, GH_VARIANT_COMPACTING)) {
    gh_config c = config_for(design, backend, GH_VARIANT_COMPACTING, 32, 32);
    gh_table *t = NULL;
    tu_set_context("image compacting %s %s", tu_backend_name(backend), design->name);
    if (CHECK(gh_create(&c, &t) == GH_OK, "gh_create: %s", gh_last_create_error())) {
      size_t bytes = 0;
      CHECK_STATUS(t, gh_save_to_memory(t, NULL, 0, &bytes, NULL), GH_ERR_UNSUPPORTED);
      CHECK_STATUS(t, gh_save(t, image_path, NULL), GH_ERR_UNSUPPORTED);
      gh_destroy(t);
    }
  }
}

/* A copy of image with the 64-bit field at `at` set to value, sealed. */
static unsigned char *crafted(const unsigned char *image, size_t bytes, size_t at, uint64_t value) {
  unsigned char *copy = (unsigned char *)tu_xmalloc(bytes);
  memcpy(copy, image, bytes);
  for (int b = 0; b < 8; ++b) copy[at + (size_t)b] = (unsigned char)(value >> (8 * b));
  gh__image_seal(copy, bytes);
  return copy;
}

/* Whether a file named path.tmp-* (gh_save's temporary) is in the directory (path is relative). */
static int file_left_beside(const char *path) {
  char prefix[300];
  snprintf(prefix, sizeof prefix, "%s.tmp-", path);
  DIR *dir = opendir(".");
  int found = 0;
  if (!CHECK(dir != NULL, "opendir(.): %s", strerror(errno))) return 0;
  for (struct dirent *e = readdir(dir); e != NULL && !found; e = readdir(dir))
    found = strncmp(e->d_name, prefix, strlen(prefix)) == 0;
  closedir(dir);
  return found;
}

/* "A path that exists and is not a regular file (... a symlink) is refused": and what the link
 * points at is left as it was. */
static void case_save_through_symlink(gh_table *t) {
  static const char kept[] = "not an image: must stay";
  char target[300], link_path[300], read_back[sizeof kept] = {0};
  snprintf(target, sizeof target, "%s.target", image_path);
  snprintf(link_path, sizeof link_path, "%s.link", image_path);
  remove(link_path);
  FILE *f = fopen(target, "wb");
  if (!CHECK(f != NULL && fwrite(kept, 1, sizeof kept, f) == sizeof kept, "writing %s", target)) {
    if (f) fclose(f);
    return;
  }
  fclose(f);
  if (CHECK(symlink(target, link_path) == 0, "symlink %s -> %s: %s", link_path, target, strerror(errno))) {
    CHECK_STATUS(t, gh_save(t, link_path, NULL), GH_ERR_INVALID_ARGUMENT);
    f = fopen(target, "rb");
    CHECK(f != NULL && fread(read_back, 1, sizeof read_back, f) == sizeof kept && memcmp(read_back, kept, sizeof kept) == 0,
          "gh_save refused a symlink but changed the file it points at");
    if (f) fclose(f);
    CHECK(!file_left_beside(link_path), "a refused gh_save left a temporary file");
  }
  remove(link_path);
  remove(target);
}

static void case_bad_images(const tu_design *design, gh_backend backend) {
  tu_set_context("image bad inputs %s %s seed 0x%016llx", tu_backend_name(backend), design->name,
                 (unsigned long long)image_seed);
  tu_rng rng = tu_rng_make(tu_mix_seed(image_seed, 7, 7, 7));
  gh_config c = config_for(design, backend, GH_VARIANT_MAP, 32, 32);
  gh_table *t = filled_table(&c, 40, &rng);
  if (t == NULL) return;
  size_t bytes = 0;
  unsigned char *image = image_of(t, &bytes);
  if (image == NULL) {
    gh_destroy(t);
    return;
  }
  tu_set_phase("NULL arguments, files");
  gh_table *out = t;
  CHECK(gh_load_from_memory(NULL, bytes, NULL, &out) == GH_ERR_INVALID_ARGUMENT && out == NULL, "buffer NULL");
  CHECK(gh_load_from_memory(image, bytes, NULL, NULL) == GH_ERR_INVALID_ARGUMENT, "table handle NULL");
  {
    /* a runtime config not made by gh_config_default: smaller than any release's */
    gh_config runtime = c;
    runtime.struct_size = 8;
    out = t;
    CHECK(gh_load_from_memory(image, bytes, &runtime, &out) == GH_ERR_INVALID_ARGUMENT && out == NULL &&
              strstr(gh_last_create_error(), "runtime") != NULL,
          "a runtime config of 8 bytes: %s", gh_last_create_error());
  }
  out = t;
  CHECK(gh_load(NULL, NULL, &out) == GH_ERR_INVALID_ARGUMENT && out == NULL, "path NULL");
  out = t;
  CHECK(gh_load("/nonexistent-gpuhash-dir/table.image", NULL, &out) == GH_ERR_INVALID_ARGUMENT && out == NULL,
        "a missing file");
  CHECK(gh_load(image_path, NULL, NULL) == GH_ERR_INVALID_ARGUMENT, "gh_load: table handle NULL");
  CHECK_STATUS(t, gh_save(t, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(t, gh_save(t, "/nonexistent-gpuhash-dir/table.image", NULL), GH_ERR_INVALID_ARGUMENT);
  /* Not regular files: refused, left as they were. */
  CHECK_STATUS(t, gh_save(t, "/dev/null", NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(t, gh_save(t, ".", NULL), GH_ERR_INVALID_ARGUMENT);
  out = t;
  CHECK(gh_load(".", NULL, &out) == GH_ERR_INVALID_ARGUMENT && out == NULL, "gh_load of a directory");
  out = t;
  CHECK(gh_load("/dev/null", NULL, &out) == GH_ERR_INVALID_ARGUMENT && out == NULL, "gh_load of a device");
  /* A save leaves exactly the image (written beside the path, then renamed over it). */
  CHECK_OK(t, gh_save(t, image_path, NULL));
  FILE *f = fopen(image_path, "rb");
  long saved_size = -1;
  if (CHECK(f != NULL, "the saved file is there")) {
    fseek(f, 0, SEEK_END);
    saved_size = ftell(f);
    fclose(f);
  }
  CHECK(saved_size == (long)bytes, "the saved file has %ld bytes, the image %zu", saved_size, bytes);
  CHECK_OK(t, gh_save(t, image_path, NULL)); /* (over the file just saved) */
  CHECK(!file_left_beside(image_path), "gh_save over an existing file left its temporary file beside it");
  remove(image_path);
  case_save_through_symlink(t);
  CHECK_STATUS(t, gh_save_to_memory(t, image, bytes, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK(gh_save(NULL, image_path, NULL) == GH_ERR_INVALID_ARGUMENT, "gh_save: table NULL");
  tu_set_phase("every truncation, trailing bytes");
  for (size_t len = 0; len < bytes; ++len) check_refused(image, len, GH_ERR_BAD_IMAGE, "a truncated image");
  unsigned char *longer = (unsigned char *)tu_xmalloc(bytes + 1);
  memcpy(longer, image, bytes);
  longer[bytes] = 0;
  check_refused(longer, bytes + 1, GH_ERR_BAD_IMAGE, "an image with a trailing byte");
  free(longer);
  tu_set_phase("every byte flipped");
  for (size_t i = 0; i < bytes; ++i) {
    image[i] ^= 0x01;
    check_refused(image, bytes, GH_ERR_BAD_IMAGE, "an image with a bit flipped");
    image[i] ^= 0x81;
    check_refused(image, bytes, GH_ERR_BAD_IMAGE, "an image with a byte changed");
    image[i] ^= 0x80;
  }
  tu_set_phase("crafted images with correct checksums");
  static const struct {
    size_t at;
    uint64_t value;
    gh_status want;
    const char *what;
  } crafts[] = {{0, 0x1234, GH_ERR_BAD_IMAGE, "another magic"},
                {GH_IMAGE_AT_FORMAT, 3, GH_ERR_BAD_IMAGE, "format 3"},
                {GH_IMAGE_AT_FORMAT, 1, GH_ERR_BAD_IMAGE, "format 1 with format 2's header"},
                {GH_IMAGE_AT_DESIGN, 99, GH_ERR_UNSUPPORTED, "design 99"},
                {GH_IMAGE_AT_DESIGN, ~0ull, GH_ERR_UNSUPPORTED, "design 2^64 - 1"},
                {GH_IMAGE_AT_KEY_BITS, 48, GH_ERR_BAD_IMAGE, "48-bit keys"},
                {GH_IMAGE_AT_VALUE_BITS, 12, GH_ERR_BAD_IMAGE, "12-bit values"},
                {GH_IMAGE_AT_VALUE_BITS, 64, GH_ERR_BAD_IMAGE, "a value width that does not match the payload"},
                {GH_IMAGE_AT_VARIANT, GH_VARIANT_COMPACTING, GH_ERR_BAD_IMAGE, "a compacting table"},
                {GH_IMAGE_AT_VARIANT, 77, GH_ERR_BAD_IMAGE, "variant 77"},
                {GH_IMAGE_AT_COUNT, 41, GH_ERR_BAD_IMAGE, "a count the payload does not hold"},
                {GH_IMAGE_AT_COUNT, ~0ull / 4u, GH_ERR_BAD_IMAGE, "a count of 2^62"},
                {GH_IMAGE_AT_PAYLOAD_BYTES, 0, GH_ERR_BAD_IMAGE, "a payload size that does not match"}};
  for (size_t i = 0; i < sizeof crafts / sizeof crafts[0]; ++i) {
    unsigned char *copy = crafted(image, bytes, crafts[i].at, crafts[i].value);
    check_refused(copy, bytes, crafts[i].want, crafts[i].what);
    free(copy);
  }
  if (design->design == GH_CUCKOO) {
    unsigned char *copy = crafted(image, bytes, GH_IMAGE_AT_BUCKET_SLOTS, 3);
    check_refused(copy, bytes, GH_ERR_BAD_IMAGE, "cuckoo with buckets of 3 slots");
    free(copy);
  }
  if (tu_design_has(design, GH_CAP_REPORTS_FULL)) { /* "pairs that do not fit it" */
    unsigned char *copy = crafted(image, bytes, GH_IMAGE_AT_CAPACITY, 1);
    check_refused(copy, bytes, GH_ERR_BAD_IMAGE, "40 pairs in an image naming a table of fixed capacity 1");
    free(copy);
  }
  if (design->design == GH_WARPDRIVE) {
    unsigned char *copy = crafted(image, bytes, GH_IMAGE_AT_GROUP_SIZE, 3);
    check_refused(copy, bytes, GH_ERR_BAD_IMAGE, "warpdrive with groups of 3 lanes");
    free(copy);
  }
  /* The second key made a copy of the first: a map cannot hold it. */
  unsigned char *twice = (unsigned char *)tu_xmalloc(bytes);
  memcpy(twice, image, bytes);
  memcpy(twice + GH_IMAGE_HEADER_BYTES + 4, twice + GH_IMAGE_HEADER_BYTES, 4);
  gh__image_seal(twice, bytes);
  check_refused(twice, bytes, GH_ERR_BAD_IMAGE, "a map image with a key twice");
  free(twice);
  tu_set_phase("the image still loads");
  out = NULL;
  if (CHECK(gh_load_from_memory(image, bytes, &c, &out) == GH_OK, "%s", gh_last_create_error())) gh_destroy(out);
  /* The same image as the format before bucket_slots wrote it (no bucket word, format 1): it loads,
   * with one slot a bucket, and holds the same pairs. */
  tu_set_phase("a format-1 image");
  unsigned char *old_format = (unsigned char *)tu_xmalloc(bytes);
  memcpy(old_format, image, GH_IMAGE_AT_BUCKET_SLOTS);
  memcpy(old_format + GH_IMAGE_AT_BUCKET_SLOTS + 8, image + GH_IMAGE_HEADER_BYTES, bytes - GH_IMAGE_HEADER_BYTES);
  old_format[GH_IMAGE_AT_FORMAT] = 1;
  gh__image_seal(old_format, bytes - 8);
  out = NULL;
  if (CHECK(gh_load_from_memory(old_format, bytes - 8, &c, &out) == GH_OK, "a format-1 image: %s",
            gh_last_create_error())) {
    gh_config loaded;
    uint64_t size = 0, table_size = 0;
    CHECK_OK(out, gh_get_config(out, &loaded));
    CHECK(loaded.bucket_slots == 1, "a format-1 image loaded with bucket_slots %u", loaded.bucket_slots);
    CHECK_OK(out, gh_size(out, &size));
    CHECK_OK(t, gh_size(t, &table_size));
    CHECK(size == table_size, "a format-1 image loaded %llu pairs of %llu", (unsigned long long)size,
          (unsigned long long)table_size);
    gh_destroy(out);
  }
  free(old_format);
  free(image);
  gh_destroy(t);
}

/* The bytes of the file at path (NULL when it cannot be read); *bytes its size. */
static unsigned char *file_bytes(const char *path, size_t *bytes) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  unsigned char *data = NULL;
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    data = (unsigned char *)tu_xmalloc((size_t)size + 1u);
    if (fread(data, 1, (size_t)size, f) != (size_t)size) free(data), data = NULL;
  }
  fclose(f);
  *bytes = size >= 0 ? (size_t)size : 0;
  return data;
}

/* "gh_save ... renames it over path, so a failed save leaves what was there": an image of table
 * `kept` on disk, then gh_save of `other` (whose allocations go through tracker) over it with each
 * allocation failing in turn (the CUDA backend's staging; the host backend's save takes none), and
 * with the write failing (a file size limit): the file keeps kept's bytes and no temporary file is
 * left; then the save that gets through, whose file loads as `other`. */
static void check_failed_saves_keep_the_file(gh_table *kept, gh_table *other, tu_tracker *tracker) {
  tu_set_phase("gh_save over an existing image, each allocation failing in turn");
  size_t before_bytes = 0, now_bytes = 0;
  unsigned char *before = CHECK_OK(kept, gh_save(kept, image_path, NULL)) ? file_bytes(image_path, &before_bytes) : NULL;
  if (!CHECK(before != NULL, "reading back %s", image_path)) return;
  const pair_list want = pairs_of(other);
  gh_status got = GH_ERR_OUT_OF_MEMORY;
  for (uint64_t k = 1; got != GH_OK && k < 10000 && tu_failure_count() == 0; ++k) {
    tu_tracker_fail_nth(tracker, k);
    got = gh_save(other, image_path, NULL);
    tu_tracker_fail_nth(tracker, 0);
    if (got == GH_OK) break;
    unsigned char *now = file_bytes(image_path, &now_bytes);
    CHECK(got == GH_ERR_OUT_OF_MEMORY && now != NULL && now_bytes == before_bytes && memcmp(now, before, now_bytes) == 0,
          "allocation %llu failing: gh_save returned %s and the file %s", (unsigned long long)k, gh_status_name(got),
          now == NULL ? "is gone" : "changed");
    CHECK(!file_left_beside(image_path), "allocation %llu failing: a temporary file was left", (unsigned long long)k);
    free(now);
  }
  /* The write itself failing (the file size limit below the image's: EFBIG): the old file stays. */
  tu_set_phase("gh_save over an existing image, the write failing");
  CHECK_OK(kept, gh_save(kept, image_path, NULL));
  free(before);
  before = file_bytes(image_path, &before_bytes);
  struct rlimit limit, small;
  void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
  if (CHECK(before != NULL && getrlimit(RLIMIT_FSIZE, &limit) == 0, "reading %s and the file size limit", image_path)) {
    small = limit;
    small.rlim_cur = before_bytes / 2u;
    if (CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0, "setrlimit: %s", strerror(errno))) {
      const gh_status failed = gh_save(other, image_path, NULL);
      setrlimit(RLIMIT_FSIZE, &limit);
      unsigned char *now = file_bytes(image_path, &now_bytes);
      CHECK(failed != GH_OK && strstr(gh_last_error(other), image_path) != NULL,
            "a save past the file size limit returned %s (%s)", gh_status_name(failed), gh_last_error(other));
      CHECK(now != NULL && now_bytes == before_bytes && memcmp(now, before, now_bytes) == 0,
            "a failed write changed the file it was to replace");
      CHECK(!file_left_beside(image_path), "a failed write left its temporary file");
      free(now);
    }
  }
  signal(SIGXFSZ, was);
  tu_set_phase("gh_save over an existing image");
  got = gh_save(other, image_path, NULL);
  gh_table *back = NULL;
  if (CHECK(got == GH_OK, "the save never got through") &&
      CHECK(gh_load(image_path, NULL, &back) == GH_OK, "gh_load: %s", gh_last_create_error()))
    check_same(back, other, &want, "saved over the old image after the failures");
  gh_destroy(back);
  free(want.bytes);
  free(before);
}

/* Loads and saves with each allocation failing in turn. */
static void case_alloc(const tu_design *design, gh_backend backend) {
  tu_set_context("image alloc %s %s seed 0x%016llx", tu_backend_name(backend), design->name,
                 (unsigned long long)image_seed);
  tu_rng rng = tu_rng_make(tu_mix_seed(image_seed, 9, 9, 9));
  gh_config c = config_for(design, backend, GH_VARIANT_MAP, 32, 32);
  tu_tracker *tracker = tu_tracker_new();
  tu_tracker_attach(tracker, &c);
  gh_table *t = filled_table(&c, 300, &rng);
  size_t bytes = 0;
  unsigned char *image = t ? image_of(t, &bytes) : NULL;
  if (image == NULL) {
    gh_destroy(t);
    tu_tracker_delete(tracker);
    return;
  }
  pair_list want = pairs_of(t);
  tu_set_phase("gh_load_from_memory, each allocation failing in turn");
  tu_tracker *loads = tu_tracker_new();
  gh_config runtime = c;
  tu_tracker_attach(loads, &runtime);
  gh_status got = GH_ERR_OUT_OF_MEMORY;
  uint64_t k = 1;
  for (; got != GH_OK && k < 10000 && tu_failure_count() == 0; ++k) {
    tu_tracker_fail_nth(loads, k);
    gh_table *back = (gh_table *)image;
    got = gh_load_from_memory(image, bytes, &runtime, &back);
    if (got == GH_OK) {
      /* The checks' own calls allocate too (a CUDA table stages the host arrays they fill). */
      tu_tracker_fail_nth(loads, 0);
      check_same(back, t, &want, "loaded after the failures");
      gh_destroy(back);
    } else {
      CHECK(got == GH_ERR_OUT_OF_MEMORY && back == NULL && tu_tracker_injected(loads),
            "allocation %llu failing: %s, table %p", (unsigned long long)k, gh_status_name(got), (void *)back);
    }
    CHECK(tu_tracker_live_bytes(loads, GH_MEMORY_HOST) == 0 && tu_tracker_live_bytes(loads, GH_MEMORY_DEVICE) == 0,
          "allocation %llu failing: memory left behind", (unsigned long long)k);
  }
  CHECK(got == GH_OK, "the load never got through");
  tu_set_phase("gh_save_to_memory, each allocation failing in turn");
  unsigned char *buffer = (unsigned char *)tu_xmalloc(bytes);
  got = GH_ERR_OUT_OF_MEMORY;
  for (k = 1; got != GH_OK && k < 10000 && tu_failure_count() == 0; ++k) {
    tu_tracker_fail_nth(tracker, k);
    memset(buffer, 0xA5, bytes);
    size_t said = 0;
    got = gh_save_to_memory(t, buffer, bytes, &said, NULL);
    tu_tracker_fail_nth(tracker, 0);
    if (got == GH_OK) {
      /* The pairs come in gh_export's order, which a GPU's export does not fix: the image is
       * checked by what it loads. */
      gh_table *again = NULL;
      CHECK(said == bytes && gh_load_from_memory(buffer, bytes, NULL, &again) == GH_OK,
            "the image after the failures (%zu bytes, %zu expected) does not load: %s", said, bytes,
            gh_last_create_error());
      if (again) check_same(again, t, &want, "saved after the failures");
      gh_destroy(again);
    } else {
      int untouched = 1;
      for (size_t i = 0; i < bytes; ++i) untouched &= buffer[i] == 0xA5;
      CHECK(got == GH_ERR_OUT_OF_MEMORY && untouched, "allocation %llu failing: %s, buffer %s",
            (unsigned long long)k, gh_status_name(got), untouched ? "untouched" : "written");
      pair_list now = pairs_of(t);
      CHECK(same_pairs(&now, &want), "a failed save changed the table");
      free(now.bytes);
    }
  }
  tu_tracker_fail_nth(tracker, 0);
  {
    gh_config other_config = c;
    other_config.allocator.alloc = NULL, other_config.allocator.free = NULL;
    gh_table *kept = filled_table(&other_config, 200, &rng);
    if (kept != NULL) check_failed_saves_keep_the_file(kept, t, tracker);
    gh_destroy(kept);
  }
  free(buffer);
  free(want.bytes);
  free(image);
  gh_destroy(t);
  tu_tracker_delete(loads);
  tu_tracker_delete(tracker);
}

int main(int argc, char **argv) {
  const tu_design *design;
  gh_backend backend;
  image_seed = IMAGE_BASE_SEED;
  if (!tu_parse_case_args(argc, argv, &backend, &design, NULL, &image_seed)) return tu_case_usage(argv[0]);
  tu_skip_unless_backend_usable(backend);
  snprintf(image_path, sizeof image_path, "gh_test_image_%s_%s_%ld.image", design->name, tu_backend_name(backend),
           (long)getpid());
  case_round_trips(design, backend);
  case_bad_images(design, backend);
  case_alloc(design, backend);
  remove(image_path);
  return tu_finish("image");
}
