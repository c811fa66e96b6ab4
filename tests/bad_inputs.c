/*
 * bad_inputs - every argument the API must refuse, and the promise that comes with refusing:
 * "a call that fails on a bad argument changes nothing and says why in gh_last_error()".
 *
 *   bad_inputs BACKEND [--design NAME]
 *
 * After each rejected call on a table the test checks the status, that gh_last_error() is not
 * empty, and that the table still holds exactly what it held (size, full export against the
 * reference, validate). Also: configuration fields out of range (gh_config_validate names the
 * field), status names and strings, NULL handling of destroy and create, operations a design
 * does not support, and the CUDA backend requested where there is no GPU. Which fields and
 * operations apply comes from the design's traits (gh_design_info); every design runs it.
 *
 * A call that succeeds must leave gh_last_error() empty, also right after a refused call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define BAD_SEED 0xBAD1A2B3ull

static const tu_design *bad_design;

/* The call was refused with `want`, said why, and left the table as it was. */
static void expect_refused(tu_table *h, gh_status got, gh_status want, const char *call,
                           const char *file, int line) {
  const char *text = gh_last_error(h->table);
  tu_set_phase("refused call: %s", call);
  tu_check_impl(got == want, file, line, call, "returned %s, expected %s (gh_last_error \"%s\")",
                gh_status_name(got), gh_status_name(want), text ? text : "(NULL)");
  tu_check_impl(text != NULL && text[0] != '\0', file, line, call,
                "gh_last_error is empty after a refused call");
  tu_check_all(h);
}
#define EXPECT_REFUSED(h, call, want) expect_refused((h), (call), (want), #call, __FILE__, __LINE__)

/* A call that must succeed although it is unusual (n == 0, optional outputs left out). */
static void expect_ok_unchanged(tu_table *h, gh_status got, const char *call, const char *file,
                                int line) {
  const char *text = gh_last_error(h->table);
  tu_set_phase("accepted call: %s", call);
  tu_check_impl(got == GH_OK, file, line, call,
                "returned %s, expected GH_OK (gh_last_error \"%s\")", gh_status_name(got), text);
  if (got == GH_OK) {
    tu_check_impl(text != NULL && text[0] == '\0', file, line, call,
                  "returned GH_OK after a refused call but gh_last_error still says \"%s\" (it "
                  "must be \"\" after every call that returns GH_OK)",
                  text ? text : "(NULL)");
  }
  tu_check_all(h);
}
#define EXPECT_OK_UNCHANGED(h, call) expect_ok_unchanged((h), (call), #call, __FILE__, __LINE__)

static gh_config small_config(gh_backend backend, unsigned value_bits) {
  gh_config c = gh_config_default(bad_design->design);
  c.backend = backend;
  c.key_bits = 32;
  c.value_bits = value_bits;
  c.capacity = 1000;
  c.group_size = 4;
  c.seed = 42;
  return c;
}

/* Operations on a NULL table: no table to change, nothing to crash on. */
static void test_null_table(void) {
  uint32_t key = 1, value = 2;
  uint8_t flag = 0;
  uint64_t u = 0;
  size_t bytes = 0;
  gh_config c;
  gh_device_view view;
  unsigned flags = 0;
  tu_set_context("bad_inputs NULL table");
  tu_set_phase("operations on a NULL table");
  CHECK_STATUS(NULL, gh_insert(NULL, &key, &value, 1, GH_OVERWRITE, NULL, NULL),
               GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_find(NULL, &key, 1, &value, &flag, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_contains(NULL, &key, 1, &flag, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_erase(NULL, &key, 1, &flag, &u, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_count(NULL, &key, 1, &u, &u, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_find_all(NULL, &key, 1, &u, &value, 1, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_export(NULL, &key, &value, 1, &u, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_clear(NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_size(NULL, &u), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_capacity(NULL, &u), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_memory_usage(NULL, &bytes, &bytes), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_get_config(NULL, &c), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_validate(NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_get_device_view(NULL, &view), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_take_status_flags(NULL, &flags), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_keys_of_ids(NULL, &key, 1, &value, NULL), GH_ERR_INVALID_ARGUMENT);
  {
    gh_stats stats;
    CHECK_STATUS(NULL, gh_get_stats(NULL, &stats), GH_ERR_INVALID_ARGUMENT);
  }
  gh_destroy(NULL); /* accepted, does nothing */
}

/* Bulk-operation arguments, on a table holding 200 keys. */
static void test_bulk_arguments(gh_backend backend, unsigned value_bits) {
  gh_config cfg = small_config(backend, value_bits);
  tu_rng rng = tu_rng_make(BAD_SEED + value_bits);
  tu_table h;
  uint64_t keys64[200], values64[200], counts[200], u = 7, size = 0;
  uint32_t keys[200], values[200], out_values[200], out_keys[200];
  uint8_t flags[200];
  int is_set = value_bits == 0, i;
  void *vals = is_set ? NULL : values;       /* what insert takes for this table */
  void *vals_out = is_set ? NULL : out_values;
  tu_set_context("bad_inputs bulk arguments design=%s backend=%s key_bits=32 value_bits=%u",
                 bad_design->name, tu_backend_name(backend), value_bits);
  if (!tu_table_create(&h, &cfg)) return;
  tu_gen_unique_keys(&rng, 32, 200, NULL, keys64);
  tu_gen_values(&rng, 32, 200, values64);
  tu_insert(&h, keys64, values64, 200, GH_OVERWRITE, 0, NULL);
  for (i = 0; i < 200; ++i) {
    keys[i] = (uint32_t)keys64[i];
    values[i] = (uint32_t)(values64[i] + 1);
  }

  /* NULL keys with n > 0. */
  EXPECT_REFUSED(&h, gh_insert(h.table, NULL, vals, 5, GH_OVERWRITE, flags, NULL),
                 GH_ERR_INVALID_ARGUMENT);
  EXPECT_REFUSED(&h, gh_find(h.table, NULL, 5, vals_out, flags, NULL, NULL),
                 GH_ERR_INVALID_ARGUMENT);
  EXPECT_REFUSED(&h, gh_contains(h.table, NULL, 5, flags, NULL), GH_ERR_INVALID_ARGUMENT);
  if (tu_design_has(bad_design, GH_CAP_ERASE))
    EXPECT_REFUSED(&h, gh_erase(h.table, NULL, 5, flags, &u, NULL), GH_ERR_INVALID_ARGUMENT);

  /* n larger than any array can be (a length in bytes passed as a count, a negative count cast):
   * refused before anything is read. */
  {
    const uint64_t huge = (uint64_t)1 << 62;
    EXPECT_REFUSED(&h, gh_insert(h.table, keys, vals, huge, GH_OVERWRITE, flags, NULL), GH_ERR_INVALID_ARGUMENT);
    EXPECT_REFUSED(&h, gh_find(h.table, keys, huge, vals_out, flags, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
    EXPECT_REFUSED(&h, gh_contains(h.table, keys, (uint64_t)-5, flags, NULL), GH_ERR_INVALID_ARGUMENT);
    if (tu_design_has(bad_design, GH_CAP_ERASE))
      EXPECT_REFUSED(&h, gh_erase(h.table, keys, huge, flags, &u, NULL), GH_ERR_INVALID_ARGUMENT);
  }

  /* n == 0 is a no-op, whatever the pointers (an empty std::vector's data() may be NULL). */
  EXPECT_OK_UNCHANGED(&h, gh_insert(h.table, keys, vals, 0, GH_OVERWRITE, flags, NULL));
  EXPECT_OK_UNCHANGED(&h, gh_insert(h.table, NULL, NULL, 0, GH_OVERWRITE, NULL, NULL));
  EXPECT_OK_UNCHANGED(&h, gh_find(h.table, keys, 0, vals_out, flags, NULL, NULL));
  EXPECT_OK_UNCHANGED(&h, gh_find(h.table, NULL, 0, vals_out, flags, NULL, NULL));
  EXPECT_OK_UNCHANGED(&h, gh_contains(h.table, keys, 0, flags, NULL));
  EXPECT_OK_UNCHANGED(&h, gh_contains(h.table, NULL, 0, flags, NULL));
  if (tu_design_has(bad_design, GH_CAP_ERASE)) {
    u = 7;
    EXPECT_OK_UNCHANGED(&h, gh_erase(h.table, keys, 0, flags, &u, NULL));
    CHECK(u == 0, "erase of 0 keys reports erased_count %llu", (unsigned long long)u);
    EXPECT_OK_UNCHANGED(&h, gh_erase(h.table, NULL, 0, NULL, NULL, NULL));
  } else {
    EXPECT_REFUSED(&h, gh_erase(h.table, keys, 5, flags, &u, NULL), GH_ERR_UNSUPPORTED);
  }

  /* find needs somewhere to write; contains needs found_out. */
  EXPECT_REFUSED(&h, gh_find(h.table, keys, 5, NULL, NULL, NULL, NULL), GH_ERR_INVALID_ARGUMENT);
  EXPECT_REFUSED(&h, gh_contains(h.table, keys, 5, NULL, NULL), GH_ERR_INVALID_ARGUMENT);

  /* Values must match the kind of table: NULL for a set, given for a map. */
  if (is_set) {
    EXPECT_REFUSED(&h, gh_insert(h.table, keys, values, 5, GH_OVERWRITE, flags, NULL),
                   GH_ERR_INVALID_ARGUMENT);
    EXPECT_REFUSED(&h, gh_find(h.table, keys, 5, out_values, flags, NULL, NULL),
                   GH_ERR_INVALID_ARGUMENT);
  } else {
    EXPECT_REFUSED(&h, gh_insert(h.table, keys, NULL, 5, GH_OVERWRITE, flags, NULL),
                   GH_ERR_INVALID_ARGUMENT);
  }

  /* GH_APPEND is for multi-value tables only. */
  EXPECT_REFUSED(&h, gh_insert(h.table, keys, vals, 5, GH_APPEND, flags, NULL),
                 GH_ERR_UNSUPPORTED);
  /* Policies outside the enum. */
  EXPECT_REFUSED(&h, gh_insert(h.table, keys, vals, 5, (gh_dup_policy)6, flags, NULL),
                 GH_ERR_INVALID_ARGUMENT);
  EXPECT_REFUSED(&h, gh_insert(h.table, keys, vals, 5, (gh_dup_policy)-1, flags, NULL),
                 GH_ERR_INVALID_ARGUMENT);
  EXPECT_REFUSED(&h, gh_insert(h.table, keys, vals, 5, (gh_dup_policy)1000, flags, NULL),
                 GH_ERR_INVALID_ARGUMENT);
  /* Policies the design's map does not take. */
  for (i = GH_KEEP_FIRST; i <= GH_MAX; ++i) {
    if (bad_design->traits.map_policies >> i & 1u) continue;
    EXPECT_REFUSED(&h, gh_insert(h.table, keys, vals, 5, (gh_dup_policy)i, flags, NULL),
                   GH_ERR_UNSUPPORTED);
  }

  /* Optional outputs may be left out. */
  tu_set_phase("insert without failed_out, erase without outputs");
  CHECK_OK(h.table, gh_insert(h.table, keys, vals, 10, GH_OVERWRITE, NULL, NULL));
  for (i = 0; i < 10; ++i) values64[i] = values[i];
  tu_ref_insert(&h.ref, keys64, values64, 10, GH_OVERWRITE, NULL);
  tu_check_all(&h);
  if (tu_design_has(bad_design, GH_CAP_ERASE)) {
    CHECK_OK(h.table, gh_erase(h.table, keys, 3, NULL, NULL, NULL));
    tu_ref_erase(&h.ref, keys64, 3);
    tu_check_all(&h);
  }
  CHECK_OK(h.table, gh_memory_usage(h.table, NULL, NULL));

  /* Introspection outputs are required. */
  EXPECT_REFUSED(&h, gh_size(h.table, NULL), GH_ERR_INVALID_ARGUMENT);
  EXPECT_REFUSED(&h, gh_capacity(h.table, NULL), GH_ERR_INVALID_ARGUMENT);
  EXPECT_REFUSED(&h, gh_get_config(h.table, NULL), GH_ERR_INVALID_ARGUMENT);

  /* Export: count is required, keys_out too; a set takes no values_out, a map needs one; a buffer
   * smaller than the table is refused before anything is written. */
  CHECK_OK(h.table, gh_size(h.table, &size));
  EXPECT_REFUSED(&h, gh_export(h.table, out_keys, vals_out, 200, NULL, NULL),
                 GH_ERR_INVALID_ARGUMENT);
  EXPECT_REFUSED(&h, gh_export(h.table, NULL, vals_out, 200, &u, NULL), GH_ERR_INVALID_ARGUMENT);
  if (is_set) {
    EXPECT_REFUSED(&h, gh_export(h.table, out_keys, out_values, 200, &u, NULL),
                   GH_ERR_INVALID_ARGUMENT);
  } else {
    EXPECT_REFUSED(&h, gh_export(h.table, out_keys, NULL, 200, &u, NULL), GH_ERR_INVALID_ARGUMENT);
  }
  memset(out_keys, 0xA5, sizeof out_keys);
  memset(out_values, 0xA5, sizeof out_values);
  EXPECT_REFUSED(&h, gh_export(h.table, out_keys, vals_out, size - 1, &u, NULL),
                 GH_ERR_BUFFER_TOO_SMALL);
  EXPECT_REFUSED(&h, gh_export(h.table, out_keys, vals_out, 0, &u, NULL),
                 GH_ERR_BUFFER_TOO_SMALL);
  for (i = 0; i < 200; ++i) {
    if (!CHECK(out_keys[i] == 0xA5A5A5A5u && out_values[i] == 0xA5A5A5A5u,
               "export refused with GH_ERR_BUFFER_TOO_SMALL but wrote element %d", i))
      break;
  }

  /* Multi-value operations on a single-value design. */
  EXPECT_REFUSED(&h, gh_count(h.table, keys, 5, counts, &u, NULL), GH_ERR_UNSUPPORTED);
  EXPECT_REFUSED(&h, gh_find_all(h.table, keys, 5, counts, out_values, 10, NULL),
                 GH_ERR_UNSUPPORTED);
  /* Dense ids belong to compacting tables. */
  EXPECT_REFUSED(&h, gh_keys_of_ids(h.table, keys, 5, out_keys, NULL), GH_ERR_UNSUPPORTED);
  EXPECT_REFUSED(&h, gh_get_stats(h.table, NULL), GH_ERR_INVALID_ARGUMENT);

  /* The device view exists for CUDA tables of designs with GH_CAP_DEVICE_VIEW. */
  {
    gh_device_view view;
    memset(&view, 0, sizeof view);
    if (h.config.backend == GH_BACKEND_CUDA && tu_design_has(bad_design, GH_CAP_DEVICE_VIEW)) {
      tu_set_phase("device view of a CUDA table");
      if (CHECK_OK(h.table, gh_get_device_view(h.table, &view))) {
        CHECK(view.design == bad_design->design, "view of design %d, the table's is %d",
              (int)view.design, (int)bad_design->design);
        CHECK(view.key_bits == 32 && view.value_bits == value_bits, "view widths k%u v%u",
              view.key_bits, view.value_bits);
        /* The status word exists where the design records GH_FLAG_* bits. */
        CHECK(view.slots != NULL && view.size != NULL &&
                  (view.status_word != NULL) == tu_design_has(bad_design, GH_CAP_STATUS_FLAGS),
              "view pointers missing (status word %p)", (void *)view.status_word);
        CHECK(view.seed == h.config.seed, "view seed differs from the table's");
        if (tu_design_has(bad_design, GH_CAP_GROUP_SIZE)) {
          /* Group-size probing: layout = (windows, probe limit in windows, window width). */
          CHECK((unsigned)view.layout[2] == h.config.group_size,
                "view window_width %u, group_size %u", (unsigned)view.layout[2],
                h.config.group_size);
          CHECK(view.layout[0] * (unsigned)view.layout[2] == h.capacity,
                "view has %llu windows of %u slots, capacity is %llu",
                (unsigned long long)view.layout[0], (unsigned)view.layout[2],
                (unsigned long long)h.capacity);
          CHECK(view.layout[1] == h.config.max_probe_windows, "view probe limit %llu, config %llu",
                (unsigned long long)view.layout[1], (unsigned long long)h.config.max_probe_windows);
        }
      }
      EXPECT_REFUSED(&h, gh_get_device_view(h.table, NULL), GH_ERR_INVALID_ARGUMENT);
    } else {
      EXPECT_REFUSED(&h, gh_get_device_view(h.table, &view), GH_ERR_UNSUPPORTED);
    }
  }
  tu_table_destroy(&h);
}

/* A stand-in allocator half: a config with only one of alloc / free is refused. */
static void *lone_alloc(void *ctx, size_t bytes, gh_memory_kind kind) {
  (void)ctx, (void)bytes, (void)kind;
  return NULL;
}

/* Mutation `index` of a valid configuration into one with a field out of range; returns the
 * field's name, "" for a mutation that does not apply to the design (a field it ignores, a
 * variant it accepts), or NULL past the last mutation. */
static const char *break_config(int index, gh_config *c) {
  const int group = tu_design_has(bad_design, GH_CAP_GROUP_SIZE);
  const int hashing = tu_design_has(bad_design, GH_CAP_HASH_FUNCTIONS);
  const int records = tu_design_has(bad_design, GH_CAP_VALUE_RECORDS);
  switch (index) {
    case 0: c->key_bits = 16; return "key_bits";
    case 1: c->key_bits = 48; return "key_bits";
    case 2: c->key_bits = 0; return "key_bits";
    /* Widths a design of integer values cannot hold; for one of records too (not whole bytes, above
     * 128 bytes). */
    case 3: c->value_bits = records ? 12 : 8; return "value_bits";
    case 4: c->value_bits = records ? 1032 : 16; return "value_bits";
    case 5: c->value_bits = records ? 4 : 48; return "value_bits";
    case 6: c->capacity = 0; return "capacity";
    case 7:
      c->group_size = 3;
      return group ? "group_size" : "";
    case 8:
      c->group_size = 64;
      return group ? "group_size" : "";
    case 9:
      c->group_size = 0;
      return group ? "group_size" : "";
    case 10: c->backend = (gh_backend)3; return "backend";
    case 11: c->backend = (gh_backend)-1; return "backend";
    case 12: c->design = (gh_design)0; return "design";
    case 13: c->design = (gh_design)99; return "design";
    /* Variants the design does not have (gh_design_info's variants). */
    case 14:
      c->variant = GH_VARIANT_COMPACTING;
      return tu_design_accepts_variant(bad_design, GH_VARIANT_COMPACTING) ? "" : "variant";
    case 15:
      c->variant = GH_VARIANT_MULTIVALUE;
      return tu_design_accepts_variant(bad_design, GH_VARIANT_MULTIVALUE) ? "" : "variant";
    case 16: c->variant = (gh_variant)3; return "variant";
    case 17: c->variant = (gh_variant)-1; return "variant";
    case 18:
      c->hash_functions = 1;
      return hashing ? "hash_functions" : "";
    case 19:
      c->hash_functions = 6;
      return hashing ? "hash_functions" : "";
    case 20:
      c->hash_family = (gh_hash_family)2;
      return hashing ? "hash_family" : "";
    case 21:
      c->table_factor = 0.5;
      return hashing ? "table_factor" : "";
    case 22:
      c->allocator.alloc = lone_alloc;
      return "allocator";
    case 23:
      c->device = -1;
      return "device";
    /* A gh_config not made by gh_config_default (garbage, or another library's struct): sizes of
     * no release, below the first, or beyond this library's (from a newer header or not). */
    case 24: c->struct_size = 8; return "struct_size";
    case 25: c->struct_size = sizeof *c - 4u; return "struct_size";
    case 26: c->struct_size = sizeof *c + 64u; return "struct_size";
    case 27:
      c->struct_size = sizeof *c + 64u;
      c->version = GH_VERSION_NUMBER + 1u;
      return "struct_size";
    default: return NULL;
  }
}

static void test_config(gh_backend backend) {
  char message[256];
  int i;
  gh_config good = small_config(backend, 32);
  size_t host_bytes = 0, device_bytes = 0;
  tu_set_context("bad_inputs configuration design=%s backend=%s", bad_design->name,
                 tu_backend_name(backend));

  tu_set_phase("a valid configuration");
  memset(message, 'x', sizeof message);
  CHECK_OK(NULL, gh_config_validate(&good, message, sizeof message));
  CHECK(memchr(message, '\0', sizeof message) != NULL, "message not NUL-terminated");
  CHECK_OK(NULL, gh_config_validate(&good, NULL, 0));
  CHECK_OK(NULL, gh_memory_estimate(&good, &host_bytes, &device_bytes));
  CHECK(host_bytes + device_bytes > 0, "gh_memory_estimate gives 0 bytes");
  CHECK_OK(NULL, gh_memory_estimate(&good, NULL, NULL));
  {
    gh_config d = gh_config_default(bad_design->design);
    CHECK(d.struct_size == sizeof(gh_config) && d.version == GH_VERSION_NUMBER,
          "gh_config_default(%s): struct_size %zu version %u, expected %zu and %d",
          bad_design->name, d.struct_size, d.version, sizeof(gh_config), GH_VERSION_NUMBER);
    CHECK(d.design == bad_design->design && d.backend == GH_BACKEND_AUTO && d.key_bits == 32 &&
              d.value_bits == 32 && d.device == 0 && d.capacity == ((uint64_t)1 << 20) &&
              d.variant == GH_VARIANT_MAP && d.allocator.alloc == NULL && d.allocator.free == NULL,
          "gh_config_default(%s) differs from the documented defaults", bad_design->name);
    if (tu_design_has(bad_design, GH_CAP_GROUP_SIZE)) {
      CHECK(d.group_size == 4 && d.max_probe_windows == 0,
            "gh_config_default(%s): group_size %u max_probe_windows %llu, documented 4 and 0",
            bad_design->name, d.group_size, (unsigned long long)d.max_probe_windows);
    }
    if (tu_design_has(bad_design, GH_CAP_HASH_FUNCTIONS)) {
      CHECK(d.hash_functions == 4 && d.hash_family == GH_HASH_MULTIPLY && d.table_factor == 1.25,
            "gh_config_default(%s): d=%u family=%d factor=%g, documented 4, multiply, 1.25",
            bad_design->name, d.hash_functions, (int)d.hash_family, d.table_factor);
    }
    CHECK_OK(NULL, gh_config_validate(&d, NULL, 0));
  }

  for (i = 0;; ++i) {
    gh_config bad = good;
    const char *field = break_config(i, &bad);
    gh_table *table = (gh_table *)&bad; /* any non-NULL value: gh_create must reset it */
    if (field == NULL) break;
    if (field[0] == '\0') continue;
    tu_set_phase("configuration with %s out of range (mutation %d)", field, i);
    memset(message, 'x', sizeof message);
    CHECK_STATUS(NULL, gh_config_validate(&bad, message, sizeof message),
                 GH_ERR_INVALID_ARGUMENT);
    CHECK(memchr(message, '\0', sizeof message) != NULL, "message not NUL-terminated");
    message[sizeof message - 1] = '\0';
    CHECK(strstr(message, field) != NULL, "gh_config_validate message does not name %s: \"%s\"",
          field, message);
    CHECK_STATUS(NULL, gh_create(&bad, &table), GH_ERR_INVALID_ARGUMENT);
    CHECK(table == NULL, "failed gh_create left *table non-NULL");
    CHECK(strstr(gh_last_create_error(), field) != NULL,
          "gh_last_create_error does not name %s: \"%s\"", field, gh_last_create_error());
    CHECK_STATUS(NULL, gh_memory_estimate(&bad, &host_bytes, &device_bytes),
                 GH_ERR_INVALID_ARGUMENT);
    if (table != NULL && table != (gh_table *)&bad) gh_destroy(table);
  }

  tu_set_phase("a message buffer too small for the message");
  {
    gh_config bad = good;
    char small[16];
    memset(small, 'x', sizeof small);
    break_config(0, &bad);
    CHECK_STATUS(NULL, gh_config_validate(&bad, small, 8), GH_ERR_INVALID_ARGUMENT);
    CHECK(memchr(small, '\0', 8) != NULL, "truncated message not NUL-terminated within 8 bytes");
    for (i = 8; i < 16; ++i) {
      if (!CHECK(small[i] == 'x', "gh_config_validate wrote past message_size (byte %d)", i)) break;
    }
    CHECK_STATUS(NULL, gh_config_validate(&bad, NULL, 0), GH_ERR_INVALID_ARGUMENT);
  }

  tu_set_phase("NULL configuration and NULL table pointer");
  {
    gh_table *table = (gh_table *)&good;
    CHECK_STATUS(NULL, gh_config_validate(NULL, message, sizeof message), GH_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(NULL, gh_create(NULL, &table), GH_ERR_INVALID_ARGUMENT);
    CHECK(table == NULL, "gh_create(NULL config) left *table non-NULL");
    CHECK(gh_last_create_error()[0] != '\0', "gh_last_create_error empty after a failed create");
    CHECK_STATUS(NULL, gh_create(&good, NULL), GH_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(NULL, gh_memory_estimate(NULL, &host_bytes, &device_bytes),
                 GH_ERR_INVALID_ARGUMENT);
  }
}

/* What the backends do where there is no GPU (and where there is one). */
static void test_backend_choice(void) {
  gh_config c = small_config(GH_BACKEND_CUDA, 32);
  gh_table *table = (gh_table *)&c;
  gh_status st;
  tu_set_context("bad_inputs backend choice design=%s (gh_cuda_available() = %d)", bad_design->name,
                 gh_cuda_available());
  CHECK((gh_cuda_device_count() > 0) == (gh_cuda_available() != 0), "gh_cuda_device_count() = %d, gh_cuda_available() = %d",
        gh_cuda_device_count(), gh_cuda_available());
  tu_set_phase("create on device gh_cuda_device_count() (one past the last)");
  c.device = gh_cuda_device_count();
  st = gh_create(&c, &table);
  CHECK(st != GH_OK && table == NULL, "a table on device %d of %d: %s", c.device, gh_cuda_device_count(),
        gh_status_name(st));
  c.device = 0;
  table = (gh_table *)&c;
  tu_set_phase("create with GH_BACKEND_CUDA");
  st = gh_create(&c, &table);
  if (gh_cuda_available()) {
    CHECK_STATUS(NULL, st, GH_OK);
    if (st == GH_OK) {
      CHECK(gh_table_backend(table) == GH_BACKEND_CUDA, "CUDA table reports backend %d",
            (int)gh_table_backend(table));
      gh_destroy(table);
    }
  } else {
    CHECK_STATUS(NULL, st, GH_ERR_NO_DEVICE);
    CHECK(table == NULL, "failed gh_create left *table non-NULL");
    CHECK(gh_last_create_error()[0] != '\0', "no message for GH_ERR_NO_DEVICE");
    if (st == GH_OK && table != NULL) gh_destroy(table);
  }

  tu_set_phase("create with GH_BACKEND_AUTO");
  c.backend = GH_BACKEND_AUTO;
  table = NULL;
  if (CHECK_STATUS(NULL, gh_create(&c, &table), GH_OK)) {
    gh_backend want = gh_cuda_available() ? GH_BACKEND_CUDA : GH_BACKEND_HOST;
    CHECK(gh_table_backend(table) == want, "AUTO chose backend %d, expected %d",
          (int)gh_table_backend(table), (int)want);
    if (want == GH_BACKEND_HOST) {
      gh_device_view view;
      CHECK_STATUS(table, gh_get_device_view(table, &view), GH_ERR_UNSUPPORTED);
      CHECK(gh_last_error(table)[0] != '\0', "no message for GH_ERR_UNSUPPORTED");
    }
    gh_destroy(table);
  }
}

static void test_status_texts(void) {
  static const gh_status unknown[] = {(gh_status)(GH_ERR_BAD_IMAGE + 1), (gh_status)1000, (gh_status)-1}; /* GH_ERR_BAD_IMAGE: the last */
  size_t i;
  tu_set_context("bad_inputs status names and strings");
  tu_set_phase("every status of GH_STATUS_LIST");
#define CHECK_STATUS_TEXT(name, value, text)                                                    \
  CHECK(name == value, "%s has value %d, the list says %d", #name, (int)name, value);            \
  CHECK(strcmp(gh_status_name(name), #name) == 0, "gh_status_name(%d) = \"%s\"", value,         \
        gh_status_name(name));                                                                  \
  CHECK(strcmp(gh_status_str(name), text) == 0, "gh_status_str(%d) = \"%s\"", value,            \
        gh_status_str(name));
  GH_STATUS_LIST(CHECK_STATUS_TEXT)
#undef CHECK_STATUS_TEXT
  tu_set_phase("values outside the list");
  for (i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
    const char *str = gh_status_str(unknown[i]);
    CHECK(strcmp(gh_status_name(unknown[i]), "GH_UNKNOWN_STATUS") == 0,
          "gh_status_name(%d) = \"%s\"", (int)unknown[i], gh_status_name(unknown[i]));
    CHECK(str != NULL && str[0] != '\0', "gh_status_str(%d) is NULL or empty", (int)unknown[i]);
  }
  CHECK(gh_version_number() == GH_VERSION_NUMBER, "linked library version %u, header %d",
        gh_version_number(), GH_VERSION_NUMBER);
}

int main(int argc, char **argv) {
  gh_backend backend;
  bad_design = tu_design_by_name("warpdrive");
  if ((argc != 2 && argc != 4) || !tu_parse_backend(argv[1], &backend) ||
      (argc == 4 &&
       (strcmp(argv[2], "--design") != 0 || (bad_design = tu_design_by_name(argv[3])) == NULL)) ||
      bad_design == NULL) {
    fprintf(stderr, "usage: %s host|cuda [--design NAME]\n", argv[0]);
    return 2;
  }
  /* The host entries also check what happens to CUDA requests without a GPU. */
  if (backend == GH_BACKEND_HOST) {
    test_status_texts();
    test_null_table();
    test_backend_choice();
  }
  tu_skip_unless_backend_usable(backend);
  test_config(backend);
  test_bulk_arguments(backend, 32);
  test_bulk_arguments(backend, 0);
  return tu_finish("bad_inputs");
}
