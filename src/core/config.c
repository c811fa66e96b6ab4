/* config.c - every built-in default in one place, and the checks of a config. */
#include <stdio.h>

#include "core/cuda_runtime.h"
#include "core/table.h"

#define GH_DEFAULT_CAPACITY (1ull << 20)
#define GH_DEFAULT_GROUP_SIZE 4u
#define GH_DEFAULT_SEED 0x5eed0f6f1a5e0ull
/* Alcantara et al.'s base configuration: 4 hash functions, 1.25 N slots. */
#define GH_DEFAULT_HASH_FUNCTIONS 4u
#define GH_DEFAULT_TABLE_FACTOR 1.25
#define GH_MAX_TABLE_FACTOR 16.0
/* A table never needs more windows than a 32-bit hash can address. */
#define GH_MAX_CAPACITY (1ull << 40)

gh_status gh_config_init(gh_config *out, size_t struct_size, unsigned version, gh_design design) {
  gh_config c;
  if (out == NULL || struct_size < sizeof(gh_config)) return GH_ERR_INVALID_ARGUMENT;
  c.struct_size = sizeof c;
  c.version = version;
  c.design = design;
  c.backend = GH_BACKEND_AUTO;
  c.device = 0;
  c.key_bits = 32;
  c.value_bits = 32;
  c.capacity = GH_DEFAULT_CAPACITY;
  c.group_size = GH_DEFAULT_GROUP_SIZE;
  c.max_probe_windows = 0;
  c.seed = GH_DEFAULT_SEED;
  c.variant = GH_VARIANT_MAP;
  c.hash_functions = GH_DEFAULT_HASH_FUNCTIONS;
  c.hash_family = GH_HASH_MULTIPLY;
  c.table_factor = GH_DEFAULT_TABLE_FACTOR;
  c.host_threads = 0;
  c.allocator.alloc = NULL;
  c.allocator.free = NULL;
  c.allocator.ctx = NULL;
  *out = c;
  return GH_OK;
}

static gh_status invalid(char *message, size_t size, const char *format, unsigned long long value) {
  if (size > 0) snprintf(message, size, format, value);
  return GH_ERR_INVALID_ARGUMENT;
}

gh_status gh_config_validate(const gh_config *c, char *message, size_t size) {
  if (size > 0) message[0] = '\0';
  if (c == NULL) {
    if (size > 0) snprintf(message, size, "config is NULL");
    return GH_ERR_INVALID_ARGUMENT;
  }
  if (c->design < GH_WARPDRIVE || c->design > GH_HASHGRAPH)
    return invalid(message, size, "design = %llu is not a gh_design value", (unsigned long long)c->design);
  if (c->backend < GH_BACKEND_AUTO || c->backend > GH_BACKEND_CUDA)
    return invalid(message, size, "backend = %llu is not a gh_backend value", (unsigned long long)c->backend);
  if (c->device < 0)
    return invalid(message, size, "device = %lld must be >= 0", (unsigned long long)(long long)c->device);
  if (c->key_bits != 32 && c->key_bits != 64)
    return invalid(message, size, "key_bits = %llu must be 32 or 64", c->key_bits);
  if (c->value_bits != 0 && c->value_bits != 32 && c->value_bits != 64)
    return invalid(message, size, "value_bits = %llu must be 0 (a set), 32 or 64", c->value_bits);
  if (c->capacity == 0) return invalid(message, size, "capacity = %llu must be at least 1", 0);
  if (c->capacity > GH_MAX_CAPACITY)
    return invalid(message, size, "capacity = %llu exceeds the limit of 2^40 slots",
                   (unsigned long long)c->capacity);
  if (c->group_size == 0 || c->group_size > 32 || (c->group_size & (c->group_size - 1)) != 0)
    return invalid(message, size, "group_size = %llu must be 1, 2, 4, 8, 16 or 32", c->group_size);
  if (c->variant < GH_VARIANT_MAP || c->variant > GH_VARIANT_MULTIVALUE)
    return invalid(message, size, "variant = %llu is not a gh_variant value", (unsigned long long)c->variant);
  if (c->variant != GH_VARIANT_MAP && c->design != GH_CUCKOO)
    return invalid(message, size, "variant = %llu (compacting / multivalue) is only available for the cuckoo design",
                   (unsigned long long)c->variant);
  if (c->variant != GH_VARIANT_MAP && c->value_bits == 0)
    return invalid(message, size, "value_bits = %llu: compacting and multivalue tables store 32- or 64-bit values (ids or the values themselves)", 0);
  if (c->design == GH_CUCKOO) {
    gh_status status = gh__cuckoo_check_config(c, message, size);
    if (status != GH_OK) return status;
  }
  if ((c->allocator.alloc == NULL) != (c->allocator.free == NULL))
    return invalid(message, size, "allocator: alloc and free must both be set or both be NULL (%llu set)",
                   (unsigned long long)(c->allocator.alloc != NULL) + (c->allocator.free != NULL));
  return GH_OK;
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
