/* image.c - saving a table to an image and making one from it (gh_save / gh_load), for every
 * design through the public calls: an image is the table's defining configuration and its
 * exported pairs, so a design needs nothing of its own to be saved.
 *
 * Layout (every integer little-endian, doubles as their IEEE-754 bits):
 *   header: IMAGE_FIELDS 64-bit words (see image_field), the last one a checksum of the others
 *           (format 1, before bucket_slots: one word fewer, F_BUCKET_SLOTS missing; still read)
 *   keys:   count keys, key_bits / 8 bytes each, packed
 *   values: count values, value_bits / 8 bytes each, packed (none for sets)
 * The header names the payload's size and checksum, so a truncated, padded or altered image is
 * refused before anything is made from it. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/image.h"
#include "core/table.h"

/* "gpuhash" and a byte that is not text: an image read as text stops there. */
static const unsigned char image_magic[8] = {'g', 'p', 'u', 'h', 'a', 's', 'h', 0x1a};
#define IMAGE_FORMAT 2u

typedef enum image_field {
  F_MAGIC, F_FORMAT, F_DESIGN, F_VARIANT, F_KEY_BITS, F_VALUE_BITS, F_CAPACITY, F_GROUP_SIZE,
  F_MAX_PROBE_WINDOWS, F_SEED, F_HASH_FUNCTIONS, F_HASH_FAMILY, F_TABLE_FACTOR, F_SLAB_LOAD,
  F_SLAB_LIGHT, F_FILL_MIN, F_FILL_MAX, F_LOAD_FACTOR, F_BIN_VERTICES, F_COUNT, F_PAYLOAD_BYTES,
  F_PAYLOAD_CHECKSUM, F_BUCKET_SLOTS, F_HEADER_CHECKSUM, IMAGE_FIELDS
} image_field;
#define IMAGE_HEADER_BYTES (IMAGE_FIELDS * 8u)
_Static_assert(IMAGE_HEADER_BYTES == GH_IMAGE_HEADER_BYTES && 8u * F_FORMAT == GH_IMAGE_AT_FORMAT &&
                   8u * F_DESIGN == GH_IMAGE_AT_DESIGN && 8u * F_VARIANT == GH_IMAGE_AT_VARIANT &&
                   8u * F_KEY_BITS == GH_IMAGE_AT_KEY_BITS && 8u * F_VALUE_BITS == GH_IMAGE_AT_VALUE_BITS &&
                   8u * F_CAPACITY == GH_IMAGE_AT_CAPACITY &&
                   8u * F_GROUP_SIZE == GH_IMAGE_AT_GROUP_SIZE && 8u * F_COUNT == GH_IMAGE_AT_COUNT &&
                   8u * F_PAYLOAD_BYTES == GH_IMAGE_AT_PAYLOAD_BYTES && 8u * F_BUCKET_SLOTS == GH_IMAGE_AT_BUCKET_SLOTS,
               "core/image.h names the header's layout");

static uint64_t read_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

static void write_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i, v >>= 8) p[i] = (unsigned char)v;
}

static uint64_t double_bits(double d) {
  uint64_t v;
  memcpy(&v, &d, sizeof v);
  return v;
}

static double bits_double(uint64_t v) {
  double d;
  memcpy(&d, &v, sizeof d);
  return d;
}

/* A 64-bit checksum of bytes, eight at a time (multiply-xorshift of each word into the state):
 * any changed, missing or moved byte changes it with overwhelming odds. */
static uint64_t checksum(const unsigned char *p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    h = (h ^ read_u64(p + i)) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  uint64_t tail = 0;
  for (size_t k = 0; i + k < n; ++k) tail |= (uint64_t)p[i + k] << (8 * k);
  h = (h ^ tail) * 0x94D049BB133111EBull;
  return h ^ (h >> 29);
}

/* The header's words in an image of a format (1 or IMAGE_FORMAT); every field but the last two
 * sits at the same word in both. */
static size_t header_words(uint64_t format) { return format == 1 ? IMAGE_FIELDS - 1 : IMAGE_FIELDS; }

/* The header's checksum (its last word) over its other words. */
static void seal_header(unsigned char *p, size_t words) {
  write_u64(p + 8 * (words - 1), checksum(p, 8 * (words - 1)));
}

/* The payload's size for count pairs of the widths, or 0 with *overflow set when it does not fit
 * a size_t. */
static size_t payload_bytes(uint64_t count, unsigned key_bits, unsigned value_bits, int *overflow) {
  const uint64_t pair = (uint64_t)(key_bits + value_bits) / 8u;
  *overflow = pair != 0 && count > (SIZE_MAX - IMAGE_HEADER_BYTES) / pair;
  return *overflow ? 0 : (size_t)(count * pair);
}

/* ---- Saving -------------------------------------------------------------------------------------- */

gh_status gh_save_to_memory(gh_table *t, void *buffer, size_t capacity, size_t *bytes, gh_stream stream) {
  if (t == NULL) return GH_ERR_INVALID_ARGUMENT;
  if (bytes == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_save_to_memory: bytes is NULL");
  *bytes = 0;
  gh_config c;
  uint64_t count = 0;
  gh_status status = gh_get_config(t, &c);
  if (status == GH_OK && c.variant == GH_VARIANT_COMPACTING)
    return gh__fail(t, GH_ERR_UNSUPPORTED, "gh_save: a compacting table's ids would not survive re-insertion");
  if (status == GH_OK) status = gh_size(t, &count);
  if (status != GH_OK) return status;
  int overflow;
  const size_t payload = payload_bytes(count, c.key_bits, c.value_bits, &overflow);
  if (overflow) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_save: %llu pairs do not fit an image in memory",
                                (unsigned long long)count);
  *bytes = IMAGE_HEADER_BYTES + payload;
  if (buffer == NULL) return GH_OK;
  if (capacity < *bytes)
    return gh__fail(t, GH_ERR_BUFFER_TOO_SMALL, "gh_save_to_memory: the image takes %zu bytes, the buffer has %zu",
                    *bytes, capacity);
  /* Exported into aligned scratch, keys and values apart (the caller's buffer need not be aligned
   * for the widths, nor would the values be behind an odd number of 32-bit keys). */
  const size_t key_bytes = (size_t)count * (c.key_bits / 8u), value_bytes = payload - key_bytes;
  unsigned char *keys = (unsigned char *)malloc(key_bytes ? key_bytes : 1);
  unsigned char *values = (unsigned char *)malloc(value_bytes ? value_bytes : 1);
  if (keys == NULL || values == NULL) {
    free(keys);
    free(values);
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "gh_save: out of host memory for %zu bytes", payload);
  }
  uint64_t exported = 0;
  status = gh_export(t, keys, c.value_bits ? values : NULL, count, &exported, stream);
  if (status == GH_OK && exported != count)
    status = gh__fail(t, GH_ERR_INTERNAL, "gh_save: gh_size said %llu pairs, gh_export gave %llu",
                      (unsigned long long)count, (unsigned long long)exported);
  if (status == GH_OK) {
    unsigned char *out = (unsigned char *)buffer;
    memcpy(out + IMAGE_HEADER_BYTES, keys, key_bytes);
    memcpy(out + IMAGE_HEADER_BYTES + key_bytes, values, value_bytes);
    uint64_t h[IMAGE_FIELDS] = {0};
    h[F_MAGIC] = read_u64(image_magic);
    h[F_FORMAT] = IMAGE_FORMAT;
    h[F_DESIGN] = (uint64_t)c.design;
    h[F_VARIANT] = (uint64_t)c.variant;
    h[F_KEY_BITS] = c.key_bits;
    h[F_VALUE_BITS] = c.value_bits;
    /* The capacity the table was made with: a grown one's would make a bigger table each cycle. */
    h[F_CAPACITY] = t->created_capacity;
    h[F_GROUP_SIZE] = c.group_size;
    h[F_MAX_PROBE_WINDOWS] = c.max_probe_windows;
    h[F_SEED] = c.seed;
    h[F_HASH_FUNCTIONS] = c.hash_functions;
    h[F_HASH_FAMILY] = (uint64_t)c.hash_family;
    h[F_TABLE_FACTOR] = double_bits(c.table_factor);
    h[F_SLAB_LOAD] = double_bits(c.slab_load);
    h[F_SLAB_LIGHT] = (uint64_t)c.slab_light;
    h[F_FILL_MIN] = double_bits(c.fill_min);
    h[F_FILL_MAX] = double_bits(c.fill_max);
    h[F_LOAD_FACTOR] = double_bits(c.load_factor);
    h[F_BIN_VERTICES] = c.bin_vertices;
    h[F_BUCKET_SLOTS] = c.bucket_slots;
    h[F_COUNT] = count;
    h[F_PAYLOAD_BYTES] = payload;
    h[F_PAYLOAD_CHECKSUM] = checksum(out + IMAGE_HEADER_BYTES, payload);
    for (int f = 0; f < F_HEADER_CHECKSUM; ++f) write_u64(out + 8 * f, h[f]);
    seal_header(out, IMAGE_FIELDS);
  }
  free(keys);
  free(values);
  return status;
}

gh_status gh_save(gh_table *t, const char *path, gh_stream stream) {
  if (t == NULL) return GH_ERR_INVALID_ARGUMENT;
  if (path == NULL) return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_save: path is NULL");
  /* Only a regular file is replaced (never a device, a directory or what a symlink points at). */
  struct stat there;
  if (lstat(path, &there) == 0 && !S_ISREG(there.st_mode))
    return gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_save: %s exists and is not a regular file", path);
  size_t bytes = 0;
  gh_status status = gh_save_to_memory(t, NULL, 0, &bytes, stream);
  if (status != GH_OK) return status;
  void *image = malloc(bytes);
  if (image == NULL) return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "gh_save: out of host memory for a %zu-byte image", bytes);
  status = gh_save_to_memory(t, image, bytes, &bytes, stream);
  /* Written to a new file beside it, then renamed over it: a failed save leaves what was there. */
  char *temporary = status == GH_OK ? (char *)malloc(strlen(path) + 16) : NULL;
  if (status == GH_OK && temporary == NULL)
    status = gh__fail(t, GH_ERR_OUT_OF_MEMORY, "gh_save: out of host memory for a file name");
  if (status == GH_OK) {
    sprintf(temporary, "%s.tmp-XXXXXX", path);
    const int fd = mkstemp(temporary);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
    if (f == NULL) {
      if (fd >= 0) close(fd), remove(temporary);
      status = gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_save: cannot create a file beside %s: %s", path, strerror(errno));
    } else {
      const int written = fwrite(image, 1, bytes, f) == bytes && fflush(f) == 0 && fsync(fd) == 0;
      const int closed = fclose(f) == 0;
      if (!written || !closed || rename(temporary, path) != 0) {
        status = gh__fail(t, GH_ERR_INVALID_ARGUMENT, "gh_save: writing %zu bytes to %s failed: %s", bytes, path,
                          strerror(errno));
        remove(temporary);
      }
    }
  }
  free(temporary);
  free(image);
  return status;
}

void gh__image_seal(void *image, size_t bytes) {
  unsigned char *p = (unsigned char *)image;
  if (bytes < 16) return;
  const size_t words = header_words(read_u64(p + 8 * F_FORMAT)), header = 8 * words;
  if (bytes < header) return;
  const uint64_t named = read_u64(p + 8 * F_PAYLOAD_BYTES), there = bytes - header;
  write_u64(p + 8 * F_PAYLOAD_CHECKSUM, checksum(p + header, (size_t)(named < there ? named : there)));
  seal_header(p, words);
}

/* ---- Loading ------------------------------------------------------------------------------------- */

/* The image's header checked against the bytes it came in; the fields into h (a format-1 image's
 * bucket_slots: 1, the only layout then), its size into *header. */
static gh_status check_header(const unsigned char *p, size_t bytes, uint64_t h[IMAGE_FIELDS], size_t *header) {
  const uint64_t format = bytes >= 16 ? read_u64(p + 8 * F_FORMAT) : IMAGE_FORMAT;
  const size_t words = header_words(format);
  *header = 8 * words;
  if (bytes < *header)
    return gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: %zu bytes, shorter than an image's %zu-byte header", bytes,
                           *header);
  for (size_t f = 0; f + 1 < words; ++f) h[f] = read_u64(p + 8 * f);
  h[F_HEADER_CHECKSUM] = read_u64(p + 8 * (words - 1));
  if (format == 1) h[F_BUCKET_SLOTS] = 1;
  if (h[F_MAGIC] != read_u64(image_magic)) return gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: not a gpuhash table image");
  if (format != 1 && format != IMAGE_FORMAT)
    return gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: image format %llu; this gpuhash reads formats 1 and %u",
                           (unsigned long long)format, IMAGE_FORMAT);
  if (h[F_HEADER_CHECKSUM] != checksum(p, 8 * (words - 1)))
    return gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: the image's header is corrupted (checksum)");
  const int widths_ok = (h[F_KEY_BITS] == 32 || h[F_KEY_BITS] == 64) && h[F_VALUE_BITS] <= GH_MAX_VALUE_BITS &&
                        h[F_VALUE_BITS] % 8 == 0;
  if (!widths_ok)
    return gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: key_bits %llu / value_bits %llu are no table's",
                           (unsigned long long)h[F_KEY_BITS], (unsigned long long)h[F_VALUE_BITS]);
  int overflow;
  const size_t payload = payload_bytes(h[F_COUNT], (unsigned)h[F_KEY_BITS], (unsigned)h[F_VALUE_BITS], &overflow);
  if (overflow || payload != h[F_PAYLOAD_BYTES])
    return gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: %llu pairs cannot take %llu bytes",
                           (unsigned long long)h[F_COUNT], (unsigned long long)h[F_PAYLOAD_BYTES]);
  if (bytes != *header + payload)
    return gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: the image has %zu bytes, its header says %zu (%s)", bytes,
                           *header + payload, bytes < *header + payload ? "truncated" : "trailing bytes");
  if (h[F_PAYLOAD_CHECKSUM] != checksum(p + *header, payload))
    return gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: the image's pairs are corrupted (checksum)");
  return GH_OK;
}

/* The config the image describes, with the runtime fields of runtime (or the defaults). */
static gh_status image_config(const uint64_t h[IMAGE_FIELDS], const gh_config *runtime, gh_config *c) {
  const uint64_t design = h[F_DESIGN];
  gh_design_traits traits;
  if (design > 1000 || gh_design_info((gh_design)design, &traits) != GH_OK)
    return gh__create_fail(GH_ERR_UNSUPPORTED, "gh_load: the image holds a table of design %llu, not in this gpuhash",
                           (unsigned long long)design);
  *c = gh_config_default((gh_design)design);
  if (runtime != NULL) {
    if (runtime->struct_size < offsetof(gh_config, allocator) + sizeof runtime->allocator)
      return gh__create_fail(GH_ERR_INVALID_ARGUMENT, "gh_load: runtime config of %zu bytes is older than any release",
                             runtime->struct_size);
    c->backend = runtime->backend;
    c->device = runtime->device;
    c->host_threads = runtime->host_threads;
    c->allocator = runtime->allocator;
    /* (knobs of the inserts and of gh_compact, not of the layout: not in the image) */
    if (runtime->struct_size >= offsetof(gh_config, bulk_min_keys) + sizeof runtime->bulk_min_keys)
      c->bulk_min_keys = runtime->bulk_min_keys;
    if (runtime->struct_size >= offsetof(gh_config, compact_scratch_bytes) + sizeof runtime->compact_scratch_bytes)
      c->compact_scratch_bytes = runtime->compact_scratch_bytes;
  }
  /* Every field is range-checked here before its narrowing (gh_create checks the values). */
  const uint64_t small[] = {h[F_VARIANT], h[F_GROUP_SIZE], h[F_HASH_FUNCTIONS], h[F_HASH_FAMILY], h[F_SLAB_LIGHT],
                            h[F_BIN_VERTICES], h[F_BUCKET_SLOTS]};
  for (size_t i = 0; i < sizeof small / sizeof small[0]; ++i)
    if (small[i] > (1u << 20)) return gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: a configuration field is out of range");
  c->variant = (gh_variant)h[F_VARIANT];
  c->key_bits = (unsigned)h[F_KEY_BITS];
  c->value_bits = (unsigned)h[F_VALUE_BITS];
  c->capacity = h[F_CAPACITY];
  c->group_size = (unsigned)h[F_GROUP_SIZE];
  c->max_probe_windows = h[F_MAX_PROBE_WINDOWS];
  c->seed = h[F_SEED];
  c->hash_functions = (unsigned)h[F_HASH_FUNCTIONS];
  c->hash_family = (gh_hash_family)h[F_HASH_FAMILY];
  c->table_factor = bits_double(h[F_TABLE_FACTOR]);
  c->slab_load = bits_double(h[F_SLAB_LOAD]);
  c->slab_light = (int)h[F_SLAB_LIGHT];
  c->fill_min = bits_double(h[F_FILL_MIN]);
  c->fill_max = bits_double(h[F_FILL_MAX]);
  c->load_factor = bits_double(h[F_LOAD_FACTOR]);
  c->bin_vertices = (unsigned)h[F_BIN_VERTICES];
  c->bucket_slots = (unsigned)h[F_BUCKET_SLOTS];
  if (c->variant == GH_VARIANT_COMPACTING)
    return gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: compacting tables are never saved");
  char message[GH_ERROR_CAPACITY];
  if (gh_config_validate(c, message, sizeof message) != GH_OK)
    return gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: the image's configuration is refused: %s", message);
  return GH_OK;
}

gh_status gh_load_from_memory(const void *buffer, size_t bytes, const gh_config *runtime, gh_table **table) {
  if (table == NULL) return gh__create_fail(GH_ERR_INVALID_ARGUMENT, "gh_load: table (the output handle) is NULL");
  *table = NULL;
  if (buffer == NULL) return gh__create_fail(GH_ERR_INVALID_ARGUMENT, "gh_load: buffer is NULL");
  const unsigned char *p = (const unsigned char *)buffer;
  uint64_t h[IMAGE_FIELDS];
  size_t header = 0;
  gh_config c;
  gh_status status = check_header(p, bytes, h, &header);
  if (status == GH_OK) status = image_config(h, runtime, &c);
  if (status != GH_OK) return status;
  const uint64_t count = h[F_COUNT];
  const size_t payload = (size_t)h[F_PAYLOAD_BYTES], key_bytes = (size_t)count * (c.key_bits / 8u);
  /* Aligned copies of the keys and the values for the insert (the image's sit at any address). */
  unsigned char *keys = (unsigned char *)malloc(key_bytes ? key_bytes : 1);
  unsigned char *values = (unsigned char *)malloc(payload - key_bytes ? payload - key_bytes : 1);
  if (keys == NULL || values == NULL) {
    free(keys);
    free(values);
    return gh__create_fail(GH_ERR_OUT_OF_MEMORY, "gh_load: out of host memory for %zu bytes", payload);
  }
  memcpy(keys, p + header, key_bytes);
  memcpy(values, p + header + key_bytes, payload - key_bytes);
  gh_table *t = NULL;
  status = gh_create(&c, &t);
  if (status == GH_OK && count > 0) {
    const gh_dup_policy policy = c.variant == GH_VARIANT_MULTIVALUE ? GH_APPEND : GH_KEEP_FIRST;
    status = gh_insert(t, keys, c.value_bits ? values : NULL, count, policy, NULL, NULL);
    /* Pairs that do not fit the image's own configuration: not an image gh_save made. */
    if (status == GH_ERR_TABLE_FULL) status = GH_ERR_BAD_IMAGE;
    if (status != GH_OK) gh__create_fail(status, "gh_load: inserting the image's %llu pairs: %s",
                                         (unsigned long long)count, gh_last_error(t));
  }
  uint64_t size = 0;
  if (status == GH_OK && (status = gh_size(t, &size)) != GH_OK)
    gh__create_fail(status, "gh_load: %s", gh_last_error(t));
  if (status == GH_OK && size != count)
    status = gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: the image's %llu pairs make a table of %llu (a key twice)",
                             (unsigned long long)count, (unsigned long long)size);
  free(keys);
  free(values);
  if (status != GH_OK) {
    gh_destroy(t);
    return status;
  }
  *table = t;
  return GH_OK;
}

gh_status gh_load(const char *path, const gh_config *runtime, gh_table **table) {
  if (table == NULL) return gh__create_fail(GH_ERR_INVALID_ARGUMENT, "gh_load: table (the output handle) is NULL");
  *table = NULL;
  if (path == NULL) return gh__create_fail(GH_ERR_INVALID_ARGUMENT, "gh_load: path is NULL");
  FILE *f = fopen(path, "rb");
  if (f == NULL) return gh__create_fail(GH_ERR_INVALID_ARGUMENT, "gh_load: cannot open %s: %s", path, strerror(errno));
  /* A regular file's size, then its bytes (a file that changes meanwhile fails the checks). */
  struct stat info;
  if (fstat(fileno(f), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size < 0) {
    fclose(f);
    return gh__create_fail(GH_ERR_INVALID_ARGUMENT, "gh_load: %s is not a regular file", path);
  }
  const size_t bytes = (size_t)info.st_size;
  void *image = malloc(bytes ? bytes : 1);
  if (image == NULL) {
    fclose(f);
    return gh__create_fail(GH_ERR_OUT_OF_MEMORY, "gh_load: out of host memory for %s's %zu bytes", path, bytes);
  }
  const int read_all = fread(image, 1, bytes, f) == bytes;
  fclose(f);
  gh_status status = read_all ? gh_load_from_memory(image, bytes, runtime, table)
                              : gh__create_fail(GH_ERR_BAD_IMAGE, "gh_load: %s ended before its %zu bytes", path, bytes);
  free(image);
  return status;
}
