/* config.c - every built-in default in one place, reading a caller's gh_config of any released
 * size, and the checks of a config. Which variants, policies and extra fields a design accepts
 * comes from its descriptor (core/design.h); nothing here names a design. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/cuda_runtime.h"
#include "core/design.h"
#include "registry.h"

#define GH_DEFAULT_CAPACITY (1ull << 20)
#define GH_DEFAULT_GROUP_SIZE 4u
#define GH_DEFAULT_SEED 0x5eed0f6f1a5e0ull
/* Alcantara et al.'s base configuration: 4 hash functions, 1.25 N slots. */
#define GH_DEFAULT_HASH_FUNCTIONS 4u
#define GH_DEFAULT_TABLE_FACTOR 1.25
/* Ashkiani et al. measure the best throughput around a 60 % average fill of the base slabs. */
#define GH_DEFAULT_SLAB_LOAD 0.6
/* Li et al.'s default filled-factor bounds (alpha, beta). */
#define GH_DEFAULT_FILL_MIN 0.4
#define GH_DEFAULT_FILL_MAX 0.9
#define GH_DEFAULT_LOAD_FACTOR 1.0
/* A table never needs more windows than a 32-bit hash can address. */
#define GH_MAX_CAPACITY (1ull << 40)

/* gh_config's size in the first release that had struct_size (0.2.0): every caller's struct is at
 * least this large. Fields appended later start at or after the previous release's size (insert
 * explicit padding if alignment would put one inside it), so that the first struct_size bytes of
 * a caller's config hold exactly the fields its header had. */
#define GH_CONFIG_FIRST_SIZE (offsetof(gh_config, allocator) + sizeof(gh_allocator))
/* After 0.2.0: slab_load and slab_light appended (the slab design); the struct's size then, with
 * its padding. */
#define GH_CONFIG_0_3_SIZE ((offsetof(gh_config, slab_light) + sizeof(int) + 7u) / 8u * 8u)
/* After 0.3: fill_min and fill_max (the dycuckoo design). */
#define GH_CONFIG_0_4_SIZE (offsetof(gh_config, fill_max) + sizeof(double))
/* After 0.4: load_factor (the hashgraph design). */
#define GH_CONFIG_0_5_SIZE (offsetof(gh_config, load_factor) + sizeof(double))
/* After 0.5: bin_vertices (the hashgraph design's build V2). */
#define GH_CONFIG_0_6_SIZE (offsetof(gh_config, bin_vertices) + sizeof(unsigned))
/* After 0.6: bulk_min_keys (warpdrive's cache-partitioned bulk insert). 0.6's struct ended with
 * bin_vertices and its padding. */
#define GH_CONFIG_0_6_PADDED_SIZE ((GH_CONFIG_0_6_SIZE + 7u) / 8u * 8u)
#define GH_CONFIG_0_7_SIZE (offsetof(gh_config, bulk_min_keys) + sizeof(uint64_t))
/* After 0.7: bucket_slots (the bucketed cuckoo table), and the struct's padding after it. */
#define GH_CONFIG_0_8_PADDED_SIZE ((offsetof(gh_config, bucket_slots) + sizeof(unsigned) + 7u) / 8u * 8u)
/* After 0.8: compact_scratch_bytes (warpdrive's gh_compact). */
#define GH_CONFIG_0_9_SIZE (offsetof(gh_config, compact_scratch_bytes) + sizeof(uint64_t))
/* When a field is appended, record the new release's size next to the others and assert on that
 * one instead. */
_Static_assert(offsetof(gh_config, slab_load) >= GH_CONFIG_FIRST_SIZE, "slab_load must follow 0.2's fields");
_Static_assert(offsetof(gh_config, fill_min) >= GH_CONFIG_0_3_SIZE, "fill_min must follow 0.3's fields");
_Static_assert(offsetof(gh_config, load_factor) >= GH_CONFIG_0_4_SIZE, "load_factor must follow 0.4's fields");
_Static_assert(offsetof(gh_config, bin_vertices) >= GH_CONFIG_0_5_SIZE, "bin_vertices must follow 0.5's fields");
_Static_assert(offsetof(gh_config, bulk_min_keys) >= GH_CONFIG_0_6_PADDED_SIZE, "bulk_min_keys must follow 0.6's fields");
_Static_assert(offsetof(gh_config, bucket_slots) >= GH_CONFIG_0_7_SIZE, "bucket_slots must follow 0.7's fields");
_Static_assert(offsetof(gh_config, compact_scratch_bytes) >= GH_CONFIG_0_8_PADDED_SIZE,
               "compact_scratch_bytes must follow 0.8's fields");
_Static_assert(sizeof(gh_config) == GH_CONFIG_0_9_SIZE,
               "gh_config changed size: append fields after the last release's size and record it");

static void set_defaults(gh_config *c, gh_design design) {
  memset(c, 0, sizeof *c);
  c->struct_size = sizeof *c;
  c->version = GH_VERSION_NUMBER;
  c->design = design;
  c->backend = GH_BACKEND_AUTO;
  c->device = 0;
  c->key_bits = 32;
  c->value_bits = 32;
  c->capacity = GH_DEFAULT_CAPACITY;
  c->group_size = GH_DEFAULT_GROUP_SIZE;
  c->max_probe_windows = 0;
  c->seed = GH_DEFAULT_SEED;
  c->variant = GH_VARIANT_MAP;
  c->hash_functions = GH_DEFAULT_HASH_FUNCTIONS;
  c->hash_family = GH_HASH_MULTIPLY;
  c->table_factor = GH_DEFAULT_TABLE_FACTOR;
  c->host_threads = 0;
  c->allocator.alloc = NULL;
  c->allocator.free = NULL;
  c->allocator.ctx = NULL;
  c->slab_load = GH_DEFAULT_SLAB_LOAD;
  c->slab_light = 0;
  c->fill_min = GH_DEFAULT_FILL_MIN;
  c->fill_max = GH_DEFAULT_FILL_MAX;
  c->load_factor = GH_DEFAULT_LOAD_FACTOR;
  c->bucket_slots = 1;
}

/* The sizes gh_config had in releases, oldest first; a caller's struct_size must be one of them
 * (or larger than this library's: a newer header). */
static const size_t released_sizes[] = {GH_CONFIG_FIRST_SIZE, GH_CONFIG_0_3_SIZE, GH_CONFIG_0_4_SIZE,
                                        GH_CONFIG_0_5_SIZE, GH_CONFIG_0_6_PADDED_SIZE, GH_CONFIG_0_7_SIZE,
                                        GH_CONFIG_0_8_PADDED_SIZE, sizeof(gh_config)};

int gh__config_size_known(size_t struct_size) {
  for (size_t i = 0; i < sizeof released_sizes / sizeof released_sizes[0]; ++i)
    if (struct_size == released_sizes[i]) return 1;
  return 0;
}

gh_status gh_config_init(gh_config *out, size_t struct_size, unsigned version, gh_design design) {
  gh_config c;
  if (out == NULL || struct_size < GH_CONFIG_FIRST_SIZE) return GH_ERR_INVALID_ARGUMENT;
  if (struct_size <= sizeof c && !gh__config_size_known(struct_size)) return GH_ERR_INVALID_ARGUMENT;
  set_defaults(&c, design);
  c.struct_size = struct_size;
  c.version = version;
  if (struct_size > sizeof c) {
    /* A newer header than this library: the fields it added have no default here. The struct is
     * still filled (the rest zeroed) so that gh_create / gh_config_validate can say so. */
    memcpy(out, &c, sizeof c);
    memset((char *)out + sizeof c, 0, struct_size - sizeof c);
    return GH_ERR_INVALID_ARGUMENT;
  }
  memcpy(out, &c, struct_size);
  return GH_OK;
}

/* ---- Names for messages ---------------------------------------------------------------------- */

static const char *const variant_names[] = {"map", "compacting", "multivalue"};
static const char *const policy_names[] = {"GH_KEEP_FIRST", "GH_OVERWRITE", "GH_ADD",
                                           "GH_MIN",        "GH_MAX",       "GH_APPEND"};
#define GH_COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

static const char *name_of(unsigned value, const char *const *names, size_t count) {
  return value < count ? names[value] : "?";
}
const char *gh__variant_name(gh_variant variant) {
  return name_of((unsigned)variant, variant_names, GH_COUNT_OF(variant_names));
}
const char *gh__policy_name(gh_dup_policy policy) {
  return name_of((unsigned)policy, policy_names, GH_COUNT_OF(policy_names));
}

/* "a, b, c" of the names whose bit is set; "none" when no bit is. */
static const char *list_names(char *out, size_t size, unsigned bits, const char *const *names, size_t count) {
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < count && used < size; ++i) {
    if (!(bits & (1u << i))) continue;
    const int n = snprintf(out + used, size - used, "%s%s", used ? ", " : "", names[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
  if (out[0] == '\0') snprintf(out, size, "none");
  return out;
}
const char *gh__variant_list(char *out, size_t size, unsigned bits) {
  return list_names(out, size, bits, variant_names, GH_COUNT_OF(variant_names));
}
const char *gh__policy_list(char *out, size_t size, unsigned bits) {
  return list_names(out, size, bits, policy_names, GH_COUNT_OF(policy_names));
}

gh_status gh__estimate_split(const gh_config *config, size_t state_bytes, size_t table_bytes, size_t *host_bytes,
                             size_t *device_bytes) {
  const int on_device = config->backend == GH_BACKEND_CUDA;
  if (host_bytes) *host_bytes = sizeof(gh_table) + state_bytes + (on_device ? 0 : table_bytes);
  if (device_bytes) *device_bytes = on_device ? table_bytes : 0;
  return GH_OK;
}

const char *gh__design_list(char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < gh__design_count() && used < size; ++i) {
    const int n = snprintf(out + used, size - used, "%s%s", i ? ", " : "", gh__design_at(i)->name);
    if (n < 0) break;
    used += (size_t)n;
  }
  return out;
}

/* ---- Checks ---------------------------------------------------------------------------------- */

static gh_status invalid(char *message, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static gh_status invalid(char *message, size_t size, const char *format, ...) {
  if (size > 0) {
    va_list args;
    va_start(args, format);
    vsnprintf(message, size, format, args);
    va_end(args);
  }
  return GH_ERR_INVALID_ARGUMENT;
}

/* Checks every field of a whole config of this library; the first one out of range is named. */
static gh_status check_fields(const gh_config *c, char *message, size_t size) {
  if ((int)c->design < 1 || (int)c->design > GH_DESIGN_VALUE_MAX)
    return invalid(message, size, "design = %d is not a gh_design value", (int)c->design);
  if ((int)c->backend < GH_BACKEND_AUTO || (int)c->backend > GH_BACKEND_CUDA)
    return invalid(message, size, "backend = %d is not a gh_backend value", (int)c->backend);
  if (c->device < 0) return invalid(message, size, "device = %d must be >= 0", c->device);
  if (c->key_bits != 32 && c->key_bits != 64)
    return invalid(message, size, "key_bits = %u must be 32 or 64", c->key_bits);
  if (c->value_bits % 8u != 0 || c->value_bits > GH_MAX_VALUE_BITS)
    return invalid(message, size, "value_bits = %u must be 0 (a set), 32 or 64 (or, for designs with "
                   "GH_CAP_VALUE_RECORDS, a multiple of 8 up to %u)", c->value_bits, GH_MAX_VALUE_BITS);
  if (c->capacity == 0) return invalid(message, size, "capacity = 0 must be at least 1");
  if (c->capacity > GH_MAX_CAPACITY)
    return invalid(message, size, "capacity = %llu exceeds the limit of 2^40 slots",
                   (unsigned long long)c->capacity);
  if (c->group_size == 0 || c->group_size > 32 || (c->group_size & (c->group_size - 1)) != 0)
    return invalid(message, size, "group_size = %u must be 1, 2, 4, 8, 16 or 32", c->group_size);
  if ((int)c->variant < GH_VARIANT_MAP || (int)c->variant > GH_VARIANT_MULTIVALUE)
    return invalid(message, size, "variant = %d is not a gh_variant value", (int)c->variant);
  const gh_design_descriptor *design = gh__design_lookup(c->design);
  /* A design this build lacks is refused by gh_create (GH_ERR_UNSUPPORTED); its own fields
   * cannot be checked here. */
  if (design != NULL && !(design->variants & (1u << c->variant))) {
    char offered[64];
    return invalid(message, size, "variant = %s is not offered by the %s design, which offers: %s",
                   gh__variant_name(c->variant), design->name,
                   gh__variant_list(offered, sizeof offered, design->variants));
  }
  const int integer_values = c->value_bits == 0 || c->value_bits == 32 || c->value_bits == 64;
  if (design != NULL && !integer_values && !(design->capabilities & GH_CAP_VALUE_RECORDS))
    return invalid(message, size, "value_bits = %u: the %s design stores values of 32 or 64 bits (or none, a "
                   "set); values of other sizes (records of value_bits / 8 bytes) need a design with "
                   "GH_CAP_VALUE_RECORDS, such as dycuckoo", c->value_bits, design->name);
  if (!integer_values && c->variant != GH_VARIANT_MAP)
    return invalid(message, size, "value_bits = %u: compacting and multivalue tables store 32- or 64-bit values",
                   c->value_bits);
  if (c->variant != GH_VARIANT_MAP && c->value_bits == 0)
    return invalid(message, size, "value_bits = 0: compacting and multivalue tables store 32- or 64-bit "
                   "values (ids or the values themselves)");
  if (design != NULL && design->check_config != NULL) {
    const gh_status status = design->check_config(c, message, size);
    if (status != GH_OK) return status;
  }
  if ((c->allocator.alloc == NULL) != (c->allocator.free == NULL))
    return invalid(message, size, "allocator: alloc and free must both be set or both be NULL (%d set)",
                   (c->allocator.alloc != NULL) + (c->allocator.free != NULL));
  return GH_OK;
}

gh_status gh__config_read(const gh_config *c, gh_config *full, char *message, size_t size) {
  if (size > 0) message[0] = '\0';
  if (c == NULL) return invalid(message, size, "config is NULL");
  if (c->struct_size < GH_CONFIG_FIRST_SIZE)
    return invalid(message, size, "config.struct_size = %zu is smaller than any released gh_config (%zu "
                   "bytes): start from gh_config_default(), which sets it", c->struct_size,
                   (size_t)GH_CONFIG_FIRST_SIZE);
  if (c->struct_size > sizeof *full) {
    const unsigned v = c->version, mine = GH_VERSION_NUMBER;
    if (v > mine)
      return invalid(message, size, "config.struct_size = %zu is larger than this library's gh_config (%zu "
                     "bytes): the program was built with gpuhash.h %u.%u.%u, newer than the linked gpuhash "
                     "%u.%u.%u; link a gpuhash at least as new as the header", c->struct_size, sizeof *full,
                     v / 10000, v / 100 % 100, v % 100, mine / 10000, mine / 100 % 100, mine % 100);
    return invalid(message, size, "config.struct_size = %zu is larger than this library's gh_config (%zu "
                   "bytes) although config.version = %u is not newer: start from gh_config_default()",
                   c->struct_size, sizeof *full, v);
  }
  if (!gh__config_size_known(c->struct_size)) {
    char sizes[160];
    size_t used = 0;
    for (size_t i = 0; i < sizeof released_sizes / sizeof released_sizes[0] && used < sizeof sizes; ++i) {
      const int n = snprintf(sizes + used, sizeof sizes - used, "%s%zu", i ? ", " : "", released_sizes[i]);
      if (n < 0) break;
      used += (size_t)n;
    }
    return invalid(message, size, "config.struct_size = %zu is not the size of a released gh_config (%s bytes): "
                   "start from gh_config_default(), which sets it", c->struct_size, sizes);
  }
  /* The fields the caller's header has come from the caller; the ones added since, defaults. */
  set_defaults(full, c->design);
  memcpy(full, c, c->struct_size);
  full->struct_size = sizeof *full;
  return check_fields(full, message, size);
}

gh_status gh_config_validate(const gh_config *c, char *message, size_t size) {
  gh_config full;
  return gh__config_read(c, &full, message, size);
}

gh_status gh__config_resolve(gh_config *c, char *message, size_t size) {
  if (c->backend == GH_BACKEND_AUTO)
    c->backend = gh__cuda_device_count() > 0 ? GH_BACKEND_CUDA : GH_BACKEND_HOST;
  if (c->backend == GH_BACKEND_CUDA && gh__cuda_device_count() <= c->device) {
    if (size > 0)
      snprintf(message, size, "backend CUDA asked for device %d but %d CUDA device(s) are usable%s",
               c->device, gh__cuda_device_count(),
#if defined(GH_HAVE_CUDA)
               ""
#else
               " (this gpuhash was built without CUDA)"
#endif
      );
    return GH_ERR_NO_DEVICE;
  }
  return GH_OK;
}

gh_status gh_memory_estimate(const gh_config *config, size_t *host_bytes, size_t *device_bytes) {
  gh_config c;
  gh_status status = gh__config_read(config, &c, NULL, 0);
  if (status != GH_OK) return status;
  if (c.backend == GH_BACKEND_AUTO) c.backend = gh__cuda_device_count() > 0 ? GH_BACKEND_CUDA : GH_BACKEND_HOST;
  const gh_design_descriptor *design = gh__design_lookup(c.design);
  if (design == NULL) return GH_ERR_UNSUPPORTED;
  return design->estimate(&c, host_bytes, device_bytes);
}
