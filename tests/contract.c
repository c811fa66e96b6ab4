/*
 * contract - every public function of gpuhash.h, on one design, variant and backend, with valid
 * and invalid arguments: whatever it is given, a function returns a status (no crash, no abort),
 * and the header's conventions hold.
 *
 *   contract BACKEND --design NAME --variant map|compacting|multivalue [--seed S]
 *
 * The conventions (the block at the top of gpuhash.h):
 *   - A call that fails returns a status other than GH_OK (the one its entry names), says what
 *     happened in gh_last_error(), writes no output (every output is pre-filled with a canary
 *     byte pattern and must keep it, except where an entry says otherwise: the valid positions
 *     of gh_keys_of_ids, gh_find_all's offsets on GH_ERR_BUFFER_TOO_SMALL, the counts a call
 *     zeroes first), and leaves the table exactly as it was (size, every (key, value) pair,
 *     gh_memory_usage, the allocator's live blocks, gh_validate).
 *   - A call that succeeds leaves gh_last_error() == "", also right after a failed call: each
 *     succeeding form of each function is called straight after a refused call.
 *   - An operation the design or variant does not have returns GH_ERR_UNSUPPORTED (what applies
 *     comes from gh_design_info: capabilities, variants, map policies).
 *   - The allocator's free always gets the size that was allocated, memory in use does not grow
 *     when present keys are inserted again, and gh_destroy returns every block (the tables run
 *     on the tracking allocator of tests/tracking_alloc.h).
 * Also the functions without a table (version, status texts, config init / validate / estimate,
 * design info and lookup by name, gh_create's refusals and gh_last_create_error) and every
 * table function on a NULL table.
 *
 * A variant the design does not accept (gh_design_info's variants) is checked to be refused by
 * gh_config_validate, gh_create and gh_memory_estimate; the entry then passes. The calls that
 * crashed before (gh_take_status_flags on a design without status flags) come last, under a
 * crash handler that names the call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tracking_alloc.h"

#define CT_BASE_SEED 0xC0417AC7ull
/* Keys in the table, keys per query batch, and the size of every output buffer (elements). */
#define CT_KEYS 256
#define CT_QUERIES 32
#define CT_BUF 2048

/* What the expected-failure check lets a refused call write. */
enum {
  CT_ZEROES_COUNT = 1,      /* gh_export's *count: "on any failure: *count is 0" */
  CT_MAY_WRITE_OFFSETS = 2, /* gh_find_all's offsets_out on GH_ERR_BUFFER_TOO_SMALL */
  CT_SKIP_KEYS_OUT = 4,     /* gh_keys_of_ids: the caller checks keys_out position by position */
  CT_ZEROES_ERASED = 8      /* gh_erase's *erased_count: "on failure: *erased_count is 0" */
};
/* Any status but GH_OK. */
#define CT_ANY_FAILURE ((gh_status)-1)

typedef struct ct_pair {
  uint64_t key;
  uint64_t value;
} ct_pair;

/* One table under test, its expected content, and the output buffers every call writes to. */
typedef struct ct {
  const tu_design *design;
  gh_variant variant;
  gh_backend backend;
  unsigned key_bits, value_bits;
  gh_table *table;
  tu_tracker *tracker;
  int erase_ok; /* gh_erase is supported on this table */
  /* the keys inserted (present) and absent ones, packed to the widths */
  uint64_t keys64[CT_KEYS], absent64[CT_QUERIES];
  void *keys, *values, *absent, *query; /* query: CT_QUERIES keys, half present */
  /* outputs */
  unsigned char keys_out[CT_BUF * 8], values_out[CT_BUF * 8], flags[CT_BUF];
  uint64_t counts[CT_BUF], offsets[CT_BUF + 1];
  uint64_t count, total, erased_count, size, capacity;
  size_t host_bytes, device_bytes;
  gh_config config;
  gh_stats stats;
  gh_device_view view;
  unsigned status_flags;
  /* the state before a refused call, and its message after */
  char last_text[600];
  const char *call;
  int line;
  uint64_t before_size;
  size_t before_host, before_device, before_live_host, before_live_device;
  uint64_t before_bad_frees;
  ct_pair *before_pairs;
  uint64_t before_n;
} ct;

static const char *ct_program;
static uint64_t ct_base_seed;

/* Every output buffer, for the canary fill and check. */
typedef struct ct_buffer {
  const char *name;
  void *ptr;
  size_t bytes;
  unsigned exempt; /* CT_MAY_* flag that excuses a write to it */
} ct_buffer;

static size_t ct_buffers(ct *c, ct_buffer *out) {
  size_t n = 0;
#define CT_BUFFER(field, flag)      \
  do {                              \
    out[n].name = #field;           \
    out[n].ptr = (void *)&c->field; \
    out[n].bytes = sizeof c->field; \
    out[n].exempt = (flag);         \
    ++n;                            \
  } while (0)
  CT_BUFFER(keys_out, CT_SKIP_KEYS_OUT);
  CT_BUFFER(values_out, 0);
  CT_BUFFER(flags, 0);
  CT_BUFFER(counts, 0);
  CT_BUFFER(offsets, CT_MAY_WRITE_OFFSETS);
  CT_BUFFER(count, CT_ZEROES_COUNT);
  CT_BUFFER(total, 0);
  CT_BUFFER(erased_count, CT_ZEROES_ERASED);
  CT_BUFFER(size, 0);
  CT_BUFFER(capacity, 0);
  CT_BUFFER(host_bytes, 0);
  CT_BUFFER(device_bytes, 0);
  CT_BUFFER(config, 0);
  CT_BUFFER(stats, 0);
  CT_BUFFER(view, 0);
  CT_BUFFER(status_flags, 0);
#undef CT_BUFFER
  return n;
}

static void ct_fill_canaries(ct *c) {
  ct_buffer b[16];
  size_t n = ct_buffers(c, b), i;
  for (i = 0; i < n; ++i) memset(b[i].ptr, TU_CANARY, b[i].bytes);
}

static int ct_pair_cmp(const void *a, const void *b) {
  const ct_pair *x = (const ct_pair *)a, *y = (const ct_pair *)b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->value < y->value ? -1 : x->value > y->value;
}

/* The table's content as sorted (key, value) pairs (values 0 for sets), through gh_size and
 * gh_export into private buffers; NULL after reporting a failure. */
static ct_pair *ct_content(ct *c, uint64_t *n_out) {
  uint64_t size = 0, count = 0, i;
  size_t kb = c->key_bits / 8, vb = c->value_bits / 8;
  unsigned char *k, *v = NULL;
  ct_pair *pairs;
  uint64_t *wide_k, *wide_v;
  if (!CHECK_OK(c->table, gh_size(c->table, &size))) return NULL;
  k = (unsigned char *)tu_xmalloc((size_t)(size + 1) * kb);
  if (vb > 0) v = (unsigned char *)tu_xmalloc((size_t)(size + 1) * vb);
  if (!CHECK_OK(c->table, gh_export(c->table, k, v, size, &count, NULL)) ||
      !CHECK(count == size, "gh_export wrote %llu entries, gh_size says %llu",
             (unsigned long long)count, (unsigned long long)size)) {
    free(v);
    free(k);
    return NULL;
  }
  wide_k = (uint64_t *)tu_xmalloc((size_t)(size + 1) * sizeof *wide_k);
  wide_v = (uint64_t *)tu_xmalloc((size_t)(size + 1) * sizeof *wide_v);
  tu_unpack(k, size, c->key_bits, wide_k);
  if (vb > 0) tu_unpack(v, size, c->value_bits, wide_v);
  pairs = (ct_pair *)tu_xmalloc((size_t)(size + 1) * sizeof *pairs);
  for (i = 0; i < size; ++i) {
    pairs[i].key = wide_k[i];
    pairs[i].value = vb > 0 ? wide_v[i] : 0;
  }
  qsort(pairs, (size_t)size, sizeof *pairs, ct_pair_cmp);
  free(wide_v);
  free(wide_k);
  free(v);
  free(k);
  *n_out = size;
  return pairs;
}

/* Before a call expected to fail: where we are, canaries in every output, the state to keep. */
static void ct_before(ct *c, const char *call, int line) {
  c->call = call;
  c->line = line;
  tu_set_phase("refused call (line %d): %s", line, call);
  free(c->before_pairs);
  c->before_pairs = ct_content(c, &c->before_n);
  c->before_size = c->before_n;
  c->before_host = c->before_device = 0;
  CHECK_OK(c->table, gh_memory_usage(c->table, &c->before_host, &c->before_device));
  c->before_live_host = tu_tracker_live_bytes(c->tracker, GH_MEMORY_HOST);
  c->before_live_device = tu_tracker_live_bytes(c->tracker, GH_MEMORY_DEVICE);
  c->before_bad_frees = tu_tracker_bad_frees(c->tracker);
  ct_fill_canaries(c);
}

/* The outputs a refused call must not have written. */
static void ct_check_canaries(ct *c, unsigned allowed) {
  ct_buffer b[16];
  size_t n = ct_buffers(c, b), i;
  for (i = 0; i < n; ++i) {
    size_t at = tu_first_non_canary(b[i].ptr, b[i].bytes);
    if (b[i].exempt & allowed) continue;
    CHECK(at == b[i].bytes,
          "line %d: %s failed but wrote its output %s (byte %zu of %zu): a "
          "failed call writes no output",
          c->line, c->call, b[i].name, at, b[i].bytes);
  }
  /* (The header promises 0, not "0 or untouched": a caller may read the count without the status.) */
  if (allowed & CT_ZEROES_COUNT)
    CHECK(c->count == 0, "line %d: %s failed and left *count at %llu: the header promises 0", c->line, c->call,
          (unsigned long long)c->count);
  if (allowed & CT_ZEROES_ERASED)
    CHECK(c->erased_count == 0, "line %d: %s failed and left *erased_count at %llu: the header promises 0", c->line,
          c->call, (unsigned long long)c->erased_count);
}

/* The table as it was before the call. */
static void ct_check_unchanged(ct *c) {
  uint64_t n = 0, i;
  size_t host = 0, device = 0;
  ct_pair *now = ct_content(c, &n);
  if (now != NULL && c->before_pairs != NULL) {
    CHECK(n == c->before_n,
          "line %d: after the refused %s the table holds %llu entries, before "
          "it held %llu",
          c->line, c->call, (unsigned long long)n, (unsigned long long)c->before_n);
    for (i = 0; i < n && i < c->before_n; ++i) {
      if (!CHECK(now[i].key == c->before_pairs[i].key && now[i].value == c->before_pairs[i].value,
                 "line %d: after the refused %s the table's entry %llu (sorted) is (0x%llx, %llu), "
                 "before it was (0x%llx, %llu)",
                 c->line, c->call, (unsigned long long)i, (unsigned long long)now[i].key,
                 (unsigned long long)now[i].value, (unsigned long long)c->before_pairs[i].key,
                 (unsigned long long)c->before_pairs[i].value))
        break;
    }
  }
  free(now);
  if (CHECK_OK(c->table, gh_memory_usage(c->table, &host, &device))) {
    CHECK(host == c->before_host && device == c->before_device,
          "line %d: the refused %s changed gh_memory_usage from %zu host + %zu device bytes to "
          "%zu + %zu",
          c->line, c->call, c->before_host, c->before_device, host, device);
  }
  CHECK(tu_tracker_live_bytes(c->tracker, GH_MEMORY_HOST) == c->before_live_host &&
            tu_tracker_live_bytes(c->tracker, GH_MEMORY_DEVICE) == c->before_live_device,
        "line %d: the refused %s changed the allocator's live bytes from %zu host + %zu device "
        "to %zu + %zu",
        c->line, c->call, c->before_live_host, c->before_live_device,
        tu_tracker_live_bytes(c->tracker, GH_MEMORY_HOST),
        tu_tracker_live_bytes(c->tracker, GH_MEMORY_DEVICE));
  CHECK_OK(c->table, gh_validate(c->table));
  CHECK(tu_tracker_bad_frees(c->tracker) == c->before_bad_frees,
        "line %d: the refused %s made %llu bad frees through the allocator (the latest: %s)",
        c->line, c->call,
        (unsigned long long)(tu_tracker_bad_frees(c->tracker) - c->before_bad_frees),
        tu_tracker_last_problem(c->tracker));
}

static void ct_after(ct *c, gh_status want, gh_status got, unsigned allowed) {
  char *text = c->last_text;
  const char *message = gh_last_error(c->table);
  snprintf(text, sizeof c->last_text, "%s", message ? message : "(NULL)");
  if (want == CT_ANY_FAILURE) {
    CHECK(got != GH_OK, "line %d: %s returned GH_OK; it must fail", c->line, c->call);
  } else {
    CHECK(got == want, "line %d: %s returned %s, expected %s (gh_last_error \"%s\")", c->line,
          c->call, gh_status_name(got), gh_status_name(want), text);
  }
  if (got != GH_OK) {
    CHECK(message != NULL && text[0] != '\0',
          "line %d: %s returned %s with gh_last_error empty: "
          "a failed call says what happened",
          c->line, c->call, gh_status_name(got));
  }
  ct_check_canaries(c, allowed);
  ct_check_unchanged(c);
}

/* A call that must fail with `want`; `allowed`: what it may write anyway. */
#define REFUSED_ALLOWING(c, want, allowed, call) \
  do {                                           \
    ct_before((c), #call, __LINE__);             \
    ct_after((c), (want), (call), (allowed));    \
  } while (0)
#define REFUSED(c, want, call)         \
  do {                                 \
    ct_before((c), #call, __LINE__);   \
    ct_after((c), (want), (call), 0u); \
  } while (0)

/* gh_find_all refused with GH_ERR_BUFFER_TOO_SMALL: "writes offsets_out, so offsets_out[n] says how
 * many are needed" (each key's values where they would go: gh_count's counts, summed). */
static void ct_check_offsets_say_needed(const ct *c, const uint64_t *counts, uint64_t total) {
  uint64_t at = 0;
  for (int i = 0; i <= CT_QUERIES; ++i) {
    if (!CHECK(c->offsets[i] == at, "gh_find_all refused for want of room: offsets_out[%d] = %llu, the counts say %llu", i,
               (unsigned long long)c->offsets[i], (unsigned long long)at))
      return;
    if (i < CT_QUERIES) at += counts[i];
  }
  CHECK(at == total, "gh_count's counts add up to %llu, its total says %llu", (unsigned long long)at,
        (unsigned long long)total);
}

/* Something refused first, so that gh_last_error holds a message before the call under test. */
static void ct_provoke(ct *c) {
  gh_status st = gh_size(c->table, NULL);
  CHECK(st == GH_ERR_INVALID_ARGUMENT, "gh_size(table, NULL) returned %s", gh_status_name(st));
  CHECK(gh_last_error(c->table)[0] != '\0', "gh_size(table, NULL) left gh_last_error empty");
}

/* A call that must succeed, straight after a refused one: GH_OK and gh_last_error "". */
static int ct_succeeded(ct *c, gh_status got, const char *call, int line) {
  const char *message = gh_last_error(c->table);
  tu_set_phase("call that must succeed (line %d): %s", line, call);
  if (!CHECK(got == GH_OK, "line %d: %s returned %s (gh_last_error \"%s\")", line, call,
             gh_status_name(got), message ? message : "(NULL)"))
    return 0;
  return CHECK(message != NULL && message[0] == '\0',
               "line %d: %s returned GH_OK right after a refused call, but gh_last_error still "
               "says \"%s\" (it must be \"\" after every call that returns GH_OK)",
               line, call, message ? message : "(NULL)");
}
#define SUCCEEDS(c, call) \
  (ct_provoke(c), tu_set_phase("%s", #call), ct_succeeded((c), (call), #call, __LINE__))

/* ---------------------------------------------------------------------------------------- */
/* Functions without a table                                                                 */
/* ---------------------------------------------------------------------------------------- */

static void test_tableless(const tu_design *design, gh_variant variant, gh_backend backend) {
  static const gh_status unknown[] = {(gh_status)(GH_ERR_BAD_IMAGE + 1), (gh_status)1000, (gh_status)-1}; /* GH_ERR_BAD_IMAGE: the last */
  gh_config c, canary;
  gh_design_traits traits;
  gh_design found;
  size_t i, hb = 0, db = 0;
  char message[256];
  tu_set_context("contract functions without a table: design=%s variant=%s backend=%s",
                 design->name, tu_variant_name(variant, 32), tu_backend_name(backend));

  tu_set_phase("gh_version_number, gh_status_name, gh_status_str");
  CHECK(gh_version_number() == GH_VERSION_NUMBER, "linked version %u, header %d",
        gh_version_number(), GH_VERSION_NUMBER);
#define CT_STATUS_TEXT(name, value, text)                                                   \
  CHECK(strcmp(gh_status_name(name), #name) == 0 && strcmp(gh_status_str(name), text) == 0, \
        "status %d: name \"%s\", text \"%s\"", value, gh_status_name(name), gh_status_str(name));
  GH_STATUS_LIST(CT_STATUS_TEXT)
#undef CT_STATUS_TEXT
  for (i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
    CHECK(strcmp(gh_status_name(unknown[i]), "GH_UNKNOWN_STATUS") == 0 &&
              gh_status_str(unknown[i]) != NULL && gh_status_str(unknown[i])[0] != '\0',
          "status %d outside the list: name \"%s\"", (int)unknown[i], gh_status_name(unknown[i]));
  }

  tu_set_phase("gh_config_init and gh_config_default");
  c = gh_config_default(design->design);
  CHECK(c.struct_size == sizeof(gh_config) && c.version == GH_VERSION_NUMBER &&
            c.design == design->design,
        "gh_config_default: struct_size %zu version %u design %d", c.struct_size, c.version,
        (int)c.design);
  CHECK_STATUS(NULL, gh_config_init(NULL, sizeof c, GH_VERSION_NUMBER, design->design),
               GH_ERR_INVALID_ARGUMENT);
  memset(&canary, TU_CANARY, sizeof canary);
  CHECK_STATUS(NULL, gh_config_init(&canary, sizeof canary - 1, GH_VERSION_NUMBER, design->design),
               GH_ERR_INVALID_ARGUMENT);
  CHECK(tu_first_non_canary(&canary, sizeof canary) == sizeof canary,
        "gh_config_init refused a struct_size below the first release's gh_config but wrote it");
  memset(&canary, TU_CANARY, sizeof canary);
  CHECK_STATUS(NULL, gh_config_init(&canary, 0, GH_VERSION_NUMBER, design->design),
               GH_ERR_INVALID_ARGUMENT);
  CHECK(tu_first_non_canary(&canary, sizeof canary) == sizeof canary,
        "gh_config_init(struct_size 0) refused but wrote the config");
  if (CHECK_OK(NULL, gh_config_init(&canary, sizeof canary, GH_VERSION_NUMBER, design->design))) {
    CHECK(canary.struct_size == sizeof canary && canary.version == GH_VERSION_NUMBER &&
              canary.design == design->design && canary.allocator.alloc == NULL,
          "gh_config_init: struct_size %zu version %u design %d", canary.struct_size,
          canary.version, (int)canary.design);
  }

  tu_set_phase("a gh_config of a newer header than the library's");
  {
    /* A program built against a newer header than this library: the fields the library knows are
     * filled, the rest zeroed, and the struct refused by gh_create and gh_config_validate with a
     * message that says so. */
    struct {
      gh_config known;
      unsigned char newer[16];
    } newer;
    gh_table *refused = NULL;
    memset(&newer, TU_CANARY, sizeof newer);
    CHECK_STATUS(NULL, gh_config_init(&newer.known, sizeof newer, GH_VERSION_NUMBER, design->design),
                 GH_ERR_INVALID_ARGUMENT);
    gh_config want = gh_config_default(design->design);
    int zeroed = 1;
    for (size_t b = 0; b < sizeof newer.newer; ++b) zeroed &= newer.newer[b] == 0;
    CHECK(newer.known.struct_size == sizeof newer && newer.known.design == want.design &&
              newer.known.capacity == want.capacity && newer.known.key_bits == want.key_bits && zeroed,
          "gh_config_init with a newer header's size: struct_size %zu, design %d, capacity %llu, the bytes after "
          "the library's fields %s",
          newer.known.struct_size, (int)newer.known.design, (unsigned long long)newer.known.capacity,
          zeroed ? "zeroed" : "not zeroed");
    CHECK_STATUS(NULL, gh_create(&newer.known, &refused), GH_ERR_INVALID_ARGUMENT);
    CHECK(refused == NULL && strstr(gh_last_create_error(), "newer") != NULL,
          "gh_create of a newer header's config: \"%s\" does not say the header is newer", gh_last_create_error());
    memset(message, 0, sizeof message);
    CHECK_STATUS(NULL, gh_config_validate(&newer.known, message, sizeof message), GH_ERR_INVALID_ARGUMENT);
    CHECK(strstr(message, "newer") != NULL, "gh_config_validate of a newer header's config: \"%s\"", message);
  }

  tu_set_phase("gh_config_validate and gh_memory_estimate");
  CHECK_OK(NULL, gh_config_validate(&c, NULL, 0));
  memset(message, 'x', sizeof message);
  CHECK_STATUS(NULL, gh_config_validate(NULL, message, sizeof message), GH_ERR_INVALID_ARGUMENT);
  CHECK(memchr(message, '\0', sizeof message) != NULL && message[0] != '\0',
        "gh_config_validate(NULL) gave no NUL-terminated message");
  CHECK_STATUS(NULL, gh_memory_estimate(NULL, &hb, &db), GH_ERR_INVALID_ARGUMENT);
  c.backend = GH_BACKEND_HOST;
  c.capacity = 1000;
  c.variant = tu_design_accepts_variant(design, variant) ? variant : GH_VARIANT_MAP;
  hb = db = 0;
  if (CHECK_OK(NULL, gh_memory_estimate(&c, &hb, &db))) {
    CHECK(hb > 0 && db == 0, "gh_memory_estimate of a host table: %zu host, %zu device bytes", hb,
          db);
  }
  CHECK_OK(NULL, gh_memory_estimate(&c, NULL, NULL));

  tu_set_phase("gh_design_info and gh_design_by_name");
  memset(&traits, TU_CANARY, sizeof traits);
  if (CHECK_OK(NULL, gh_design_info(design->design, &traits))) {
    CHECK(traits.design == design->design && traits.name != NULL &&
              strcmp(traits.name, design->name) == 0,
          "gh_design_info(%d): design %d name %s", (int)design->design, (int)traits.design,
          traits.name ? traits.name : "(NULL)");
    CHECK(traits.backends & (1u << GH_BACKEND_HOST),
          "%s: traits.backends 0x%x lacks the host "
          "backend, which every design has",
          design->name, traits.backends);
#if defined(GH_TEST_HAVE_CUDART)
    CHECK(traits.backends & (1u << GH_BACKEND_CUDA),
          "%s: built with CUDA but traits.backends "
          "0x%x lacks the CUDA backend",
          design->name, traits.backends);
#else
    CHECK(!(traits.backends & (1u << GH_BACKEND_CUDA)),
          "%s: built without CUDA but "
          "traits.backends 0x%x has the CUDA backend (\"bits ... built here\")",
          design->name, traits.backends);
#endif
    CHECK(traits.variants & (1u << GH_VARIANT_MAP), "%s: traits.variants 0x%x lacks the map",
          design->name, traits.variants);
    CHECK((traits.map_policies & ~0x1Fu) == 0 && traits.map_policies != 0,
          "%s: traits.map_policies 0x%x (bits of KEEP_FIRST..MAX only: GH_APPEND is for "
          "multi-value tables)",
          design->name, traits.map_policies);
    CHECK(!((traits.capabilities & GH_CAP_GROWS) && (traits.capabilities & GH_CAP_REPORTS_FULL)),
          "%s: capabilities 0x%x claim both GH_CAP_GROWS and GH_CAP_REPORTS_FULL", design->name,
          traits.capabilities);
  }
  CHECK_STATUS(NULL, gh_design_info(design->design, NULL), GH_ERR_INVALID_ARGUMENT);
  for (i = 0; i < 3; ++i) {
    static const int missing[] = {0, 99, -1};
    memset(&traits, TU_CANARY, sizeof traits);
    CHECK_STATUS(NULL, gh_design_info((gh_design)missing[i], &traits), GH_ERR_UNSUPPORTED);
    CHECK(tu_first_non_canary(&traits, sizeof traits) == sizeof traits,
          "gh_design_info(%d) refused but wrote traits", missing[i]);
  }
  found = (gh_design)0;
  if (CHECK_OK(NULL, gh_design_by_name(design->name, &found)))
    CHECK(found == design->design, "gh_design_by_name(\"%s\") = %d, gh_design_info says %d",
          design->name, (int)found, (int)design->design);
  memset(&found, TU_CANARY, sizeof found);
  CHECK_STATUS(NULL, gh_design_by_name("no-such-design", &found), GH_ERR_UNSUPPORTED);
  CHECK(tu_first_non_canary(&found, sizeof found) == sizeof found,
        "gh_design_by_name refused an unknown name but wrote *design");
  CHECK_STATUS(NULL, gh_design_by_name(NULL, &found), GH_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(NULL, gh_design_by_name(design->name, NULL), GH_ERR_INVALID_ARGUMENT);
  CHECK(gh_cuda_available() == 0 || gh_cuda_available() == 1, "gh_cuda_available() = %d",
        gh_cuda_available());

  tu_set_phase("gh_create refusals and gh_last_create_error");
  {
    gh_table *table = (gh_table *)&c;
    CHECK_STATUS(NULL, gh_create(NULL, &table), GH_ERR_INVALID_ARGUMENT);
    CHECK(table == NULL, "gh_create(NULL config) left *table non-NULL");
    CHECK(gh_last_create_error()[0] != '\0', "gh_last_create_error empty after a failed create");
    CHECK_STATUS(NULL, gh_create(&c, NULL), GH_ERR_INVALID_ARGUMENT);
    CHECK(gh_last_create_error()[0] != '\0', "gh_last_create_error empty after a failed create");
    if (CHECK_OK(NULL, gh_create(&c, &table))) {
      CHECK(gh_last_create_error()[0] == '\0',
            "gh_last_create_error after a successful create "
            "that followed a failed one: \"%s\"",
            gh_last_create_error());
      gh_destroy(table);
    }
  }
}

/* A program built against an older header passes a smaller gh_config. Every size gh_config_init
 * takes (those of the releases) must make a table of the variant; the fields the caller's struct
 * lacks are the library's defaults (as in a table made from this header's gh_config_default), and
 * the caller's bytes past struct_size are never read or written. */
static void test_released_sizes(const tu_design *design, gh_variant variant, gh_backend backend) {
  tu_set_context("contract design=%s variant=%s backend=%s: a gh_config of every released size", design->name,
                 tu_variant_name(variant, 32), tu_backend_name(backend));
  gh_config full = gh_config_default(design->design), full_got;
  full.backend = backend, full.variant = variant, full.capacity = 1000;
  gh_table *reference = NULL;
  if (!CHECK(gh_create(&full, &reference) == GH_OK, "gh_create: %s", gh_last_create_error())) return;
  CHECK_OK(reference, gh_get_config(reference, &full_got));
  unsigned accepted = 0;
  for (size_t size = 4; size <= sizeof(gh_config); size += 4) {
    struct {
      gh_config config;
      unsigned char past[8];
    } old;
    memset(&old, TU_CANARY, sizeof old);
    tu_set_phase("struct_size %zu", size);
    if (gh_config_init(&old.config, size, GH_VERSION_NUMBER, design->design) != GH_OK) {
      CHECK(tu_first_non_canary(&old, sizeof old) == sizeof old, "gh_config_init refused struct_size %zu but wrote", size);
      continue;
    }
    accepted += 1;
    CHECK(old.config.struct_size == size, "gh_config_init(%zu) set struct_size %zu", size, old.config.struct_size);
    CHECK(tu_first_non_canary((unsigned char *)&old + size, sizeof old - size) == sizeof old - size,
          "gh_config_init(%zu) wrote past struct_size", size);
    old.config.backend = backend, old.config.variant = variant, old.config.capacity = 1000;
    char message[256];
    gh_table *t = NULL;
    gh_config got;
    if (CHECK_OK(NULL, gh_config_validate(&old.config, message, sizeof message)) &&
        CHECK_OK(NULL, gh_memory_estimate(&old.config, NULL, NULL)) &&
        CHECK(gh_create(&old.config, &t) == GH_OK, "gh_create with struct_size %zu: %s", size, gh_last_create_error()) &&
        CHECK_OK(t, gh_get_config(t, &got)))
      CHECK(memcmp((const char *)&got + size, (const char *)&full_got + size, sizeof got - size) == 0 &&
                got.struct_size == sizeof got,
            "a table made with struct_size %zu: its fields after those bytes differ from a table made with "
            "gh_config_default's (struct_size %zu read back)", size, got.struct_size);
    gh_destroy(t);
    CHECK(tu_first_non_canary((unsigned char *)&old + size, sizeof old - size) == sizeof old - size,
          "a call with struct_size %zu wrote past it", size);
  }
  /* (every release since 0.2, which brought struct_size, with a size of its own: eight so far) */
  CHECK(accepted >= 8, "gh_config_init took %u sizes; the releases had eight", accepted);
  gh_destroy(reference);
}

/* A variant the design does not accept: refused everywhere it can be asked for. */
static void test_refused_variant(const tu_design *design, gh_variant variant, gh_backend backend) {
  gh_config c = gh_config_default(design->design);
  gh_table *table = (gh_table *)&c;
  char message[256];
  size_t hb = 0, db = 0;
  tu_set_context("contract design=%s variant=%s backend=%s: a variant the design does not have",
                 design->name, tu_variant_name(variant, 32), tu_backend_name(backend));
  tu_set_phase("gh_config_validate, gh_create, gh_memory_estimate refuse it");
  c.backend = backend;
  c.capacity = 1000;
  c.variant = variant;
  CHECK_STATUS(NULL, gh_config_validate(&c, message, sizeof message), GH_ERR_INVALID_ARGUMENT);
  CHECK(strstr(message, "variant") != NULL,
        "gh_config_validate message does not name the "
        "variant: \"%s\"",
        message);
  CHECK_STATUS(NULL, gh_create(&c, &table), GH_ERR_INVALID_ARGUMENT);
  CHECK(table == NULL, "failed gh_create left *table non-NULL");
  CHECK(strstr(gh_last_create_error(), "variant") != NULL,
        "gh_last_create_error does not name the variant: \"%s\"", gh_last_create_error());
  CHECK_STATUS(NULL, gh_memory_estimate(&c, &hb, &db), GH_ERR_INVALID_ARGUMENT);
  printf(
      "%s does not accept the %s variant (gh_design_info variants 0x%x): refused as it must "
      "be\n",
      design->name, tu_variant_name(variant, 32), design->traits.variants);
}

/* ---------------------------------------------------------------------------------------- */
/* Every table function on a NULL table                                                     */
/* ---------------------------------------------------------------------------------------- */

static void test_null_table(ct *c) {
  uint32_t key = 1, value = 2;
  uint64_t u = 0;
  size_t bytes = 0;
  unsigned flags = 0;
  uint8_t flag = 0;
  const char *text;
  tu_set_phase("every table function on a NULL table");
#define CT_NULL(call) CHECK_STATUS(NULL, (call), GH_ERR_INVALID_ARGUMENT)
  CT_NULL(gh_insert(NULL, &key, &value, 1, GH_OVERWRITE, NULL, NULL));
  CT_NULL(gh_find(NULL, &key, 1, &value, &flag, NULL, NULL));
  CT_NULL(gh_contains(NULL, &key, 1, &flag, NULL));
  CT_NULL(gh_erase(NULL, &key, 1, &flag, &u, NULL));
  CT_NULL(gh_count(NULL, &key, 1, &u, &u, NULL));
  CT_NULL(gh_find_all(NULL, &key, 1, &u, &value, 1, NULL));
  CT_NULL(gh_export(NULL, &key, &value, 1, &u, NULL));
  CT_NULL(gh_keys_of_ids(NULL, &key, 1, &value, NULL));
  CT_NULL(gh_clear(NULL, NULL));
  CT_NULL(gh_size(NULL, &u));
  CT_NULL(gh_capacity(NULL, &u));
  CT_NULL(gh_memory_usage(NULL, &bytes, &bytes));
  CT_NULL(gh_get_config(NULL, &c->config));
  CT_NULL(gh_get_stats(NULL, &c->stats));
  CT_NULL(gh_validate(NULL));
  CT_NULL(gh_get_device_view(NULL, &c->view));
  CT_NULL(gh_take_status_flags(NULL, &flags));
  CT_NULL(gh_get_config_sized(NULL, &c->config, sizeof c->config));
  CT_NULL(gh_get_stats_sized(NULL, &c->stats, sizeof c->stats));
  CT_NULL(gh_mixed(NULL, &flag, &key, &value, 1, GH_OVERWRITE, &value, &flag, NULL));
  CT_NULL(gh_compact(NULL, NULL));
  CT_NULL(gh_join_count(NULL, &key, 1, GH_JOIN_PROBE, &u, NULL));
  CT_NULL(gh_join(NULL, &key, 1, GH_JOIN_PROBE, &u, &value, 1, &u, NULL));
  CT_NULL(gh_semi_join(NULL, &key, 1, GH_JOIN_PROBE, &flag, NULL));
  CT_NULL(gh_save_to_memory(NULL, &value, sizeof value, &bytes, NULL));
  CT_NULL(gh_save(NULL, "gpuhash-contract-null-table.image", NULL));
#undef CT_NULL
  text = gh_last_error(NULL);
  CHECK(text != NULL, "gh_last_error(NULL) returned NULL");
  (void)gh_table_backend(NULL);
  gh_destroy(NULL);
}

/* ---------------------------------------------------------------------------------------- */
/* One table                                                                                 */
/* ---------------------------------------------------------------------------------------- */

static int ct_policy_accepted(const ct *c, gh_dup_policy p) {
  switch (c->variant) {
    case GH_VARIANT_MAP:
      return (int)p <= GH_MAX && (c->design->traits.map_policies >> p & 1u);
    case GH_VARIANT_COMPACTING:
      return p == GH_KEEP_FIRST; /* one id per key, for life */
    case GH_VARIANT_MULTIVALUE:
      return p == GH_APPEND; /* every value stays */
  }
  return 0;
}

/* The policy inserts use on this table. */
static gh_dup_policy ct_policy(const ct *c) {
  int p;
  if (c->variant == GH_VARIANT_MULTIVALUE) return GH_APPEND;
  for (p = GH_OVERWRITE; p >= GH_KEEP_FIRST; --p)
    if (ct_policy_accepted(c, (gh_dup_policy)p)) return (gh_dup_policy)p;
  for (p = GH_ADD; p <= GH_MAX; ++p)
    if (ct_policy_accepted(c, (gh_dup_policy)p)) return (gh_dup_policy)p;
  return GH_KEEP_FIRST;
}

/* Whether the table takes values on insert (maps and multi-value tables do; sets and compacting
 * tables, which assign ids, do not). */
static int ct_takes_values(const ct *c) {
  return c->value_bits > 0 && c->variant != GH_VARIANT_COMPACTING;
}

/* Present keys inserted again: nothing changes, not even the memory held (a free of another size
 * than allocated shows up as a growing gh_memory_usage and as a bad free). */
static void test_reinsert_present(ct *c) {
  size_t host0 = 0, device0 = 0, host1 = 0, device1 = 0;
  size_t live_host0 = tu_tracker_live_bytes(c->tracker, GH_MEMORY_HOST);
  size_t live_device0 = tu_tracker_live_bytes(c->tracker, GH_MEMORY_DEVICE);
  uint64_t before_n = 0, after_n = 0, i, round;
  ct_pair *before, *after;
  if (c->variant == GH_VARIANT_MULTIVALUE) return; /* there a re-insert appends values */
  tu_set_phase("insert the present keys again (3 times): memory in use stays the same");
  before = ct_content(c, &before_n);
  CHECK_OK(c->table, gh_memory_usage(c->table, &host0, &device0));
  for (round = 0; round < 3; ++round) {
    CHECK_OK(c->table, gh_insert(c->table, c->keys, ct_takes_values(c) ? c->values : NULL, CT_KEYS,
                                 ct_policy(c), NULL, NULL));
  }
  CHECK_OK(c->table, gh_memory_usage(c->table, &host1, &device1));
  CHECK(host1 == host0 && device1 == device0,
        "re-inserting %d present keys 3 times changed gh_memory_usage from %zu host + %zu device "
        "bytes to %zu + %zu, though the table did not change",
        CT_KEYS, host0, device0, host1, device1);
  CHECK(tu_tracker_live_bytes(c->tracker, GH_MEMORY_HOST) == live_host0 &&
            tu_tracker_live_bytes(c->tracker, GH_MEMORY_DEVICE) == live_device0,
        "re-inserting present keys changed the allocator's live bytes from %zu + %zu to %zu + %zu",
        live_host0, live_device0, tu_tracker_live_bytes(c->tracker, GH_MEMORY_HOST),
        tu_tracker_live_bytes(c->tracker, GH_MEMORY_DEVICE));
  tu_tracker_check_frees(c->tracker, "re-inserting present keys");
  /* What gh_memory_usage reports is what the table holds through its allocator (the host side
   * may add the handle, which is not allocated through it). */
  CHECK(device1 == tu_tracker_live_bytes(c->tracker, GH_MEMORY_DEVICE) &&
            host1 >= tu_tracker_live_bytes(c->tracker, GH_MEMORY_HOST),
        "gh_memory_usage says %zu host + %zu device bytes; the allocator has %zu + %zu live", host1,
        device1, tu_tracker_live_bytes(c->tracker, GH_MEMORY_HOST),
        tu_tracker_live_bytes(c->tracker, GH_MEMORY_DEVICE));
  after = ct_content(c, &after_n);
  if (before != NULL && after != NULL) {
    CHECK(after_n == before_n, "re-inserting present keys changed the size from %llu to %llu",
          (unsigned long long)before_n, (unsigned long long)after_n);
    for (i = 0; i < after_n && i < before_n; ++i) {
      if (!CHECK(after[i].key == before[i].key && after[i].value == before[i].value,
                 "re-inserting present keys (same values) changed entry %llu",
                 (unsigned long long)i))
        break;
    }
  }
  free(after);
  free(before);
}

/* Every call that must be refused, with what it must not touch. */
static void test_refused_calls(ct *c) {
  const int set = c->value_bits == 0;
  void *vals = ct_takes_values(c) ? c->values : NULL;
  /* values of the wrong kind: given to a table that takes none, missing where it takes some */
  void *wrong_vals = ct_takes_values(c) ? NULL : c->keys;
  const gh_dup_policy policy = ct_policy(c);
  int p;

  /* insert */
  REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_insert(c->table, NULL, vals, 5, policy, c->flags, NULL));
  /* (missing values on a multi-value table of a design with GH_CAP_INDEX_PAYLOADS mean positions) */
  if (!(ct_takes_values(c) && c->variant == GH_VARIANT_MULTIVALUE && tu_design_has(c->design, GH_CAP_INDEX_PAYLOADS)))
    REFUSED(c, GH_ERR_INVALID_ARGUMENT,
            gh_insert(c->table, c->absent, wrong_vals, 5, policy, c->flags, NULL));
  REFUSED(c, GH_ERR_INVALID_ARGUMENT,
          gh_insert(c->table, c->absent, vals, 5, (gh_dup_policy)6, c->flags, NULL));
  REFUSED(c, GH_ERR_INVALID_ARGUMENT,
          gh_insert(c->table, c->absent, vals, 5, (gh_dup_policy)-1, c->flags, NULL));
  for (p = GH_KEEP_FIRST; p <= GH_APPEND; ++p) {
    if (ct_policy_accepted(c, (gh_dup_policy)p)) continue;
    REFUSED(c, GH_ERR_UNSUPPORTED,
            gh_insert(c->table, c->absent, vals, 5, (gh_dup_policy)p, c->flags, NULL));
  }

  /* find / contains */
  REFUSED(c, GH_ERR_INVALID_ARGUMENT,
          gh_find(c->table, NULL, 5, set ? NULL : c->values_out, c->flags, NULL, NULL));
  REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_find(c->table, c->query, 5, NULL, NULL, NULL, NULL));
  if (set) {
    REFUSED(c, GH_ERR_INVALID_ARGUMENT,
            gh_find(c->table, c->query, 5, c->values_out, c->flags, NULL, NULL));
  }
  REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_contains(c->table, c->query, 5, NULL, NULL));
  REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_contains(c->table, NULL, 5, c->flags, NULL));

  /* erase */
  if (c->erase_ok) {
    REFUSED_ALLOWING(c, GH_ERR_INVALID_ARGUMENT, CT_ZEROES_ERASED,
                     gh_erase(c->table, NULL, 5, c->flags, &c->erased_count, NULL));
  } else {
    REFUSED_ALLOWING(c, GH_ERR_UNSUPPORTED, CT_ZEROES_ERASED,
                     gh_erase(c->table, c->keys, 5, c->flags, &c->erased_count, NULL));
  }

  /* count / find_all: multi-value tables only */
  if (c->variant != GH_VARIANT_MULTIVALUE) {
    REFUSED(c, GH_ERR_UNSUPPORTED,
            gh_count(c->table, c->query, CT_QUERIES, c->counts, &c->total, NULL));
    REFUSED(c, GH_ERR_UNSUPPORTED,
            gh_find_all(c->table, c->query, CT_QUERIES, c->offsets, c->values_out, CT_BUF, NULL));
  } else {
    uint64_t total = 0, counts[CT_QUERIES];
    REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_count(c->table, NULL, 5, c->counts, &c->total, NULL));
    REFUSED(c, GH_ERR_INVALID_ARGUMENT,
            gh_find_all(c->table, c->query, CT_QUERIES, NULL, c->values_out, CT_BUF, NULL));
    tu_set_phase("gh_count before gh_find_all into a buffer one value too small");
    if (CHECK_OK(c->table, gh_count(c->table, c->query, CT_QUERIES, counts, &total, NULL)) &&
        CHECK(total > 1, "the query keys have %llu values", (unsigned long long)total)) {
      /* "a failed call writes no output array ... except gh_find_all's offsets_out on
       * GH_ERR_BUFFER_TOO_SMALL": no value may be written (as gh_export writes none). */
      REFUSED_ALLOWING(
          c, GH_ERR_BUFFER_TOO_SMALL, CT_MAY_WRITE_OFFSETS,
          gh_find_all(c->table, c->query, CT_QUERIES, c->offsets, c->values_out, total - 1, NULL));
      ct_check_offsets_say_needed(c, counts, total);
      REFUSED_ALLOWING(
          c, GH_ERR_BUFFER_TOO_SMALL, CT_MAY_WRITE_OFFSETS,
          gh_find_all(c->table, c->query, CT_QUERIES, c->offsets, c->values_out, 0, NULL));
      ct_check_offsets_say_needed(c, counts, total);
    }
  }

  /* export */
  REFUSED(c, GH_ERR_INVALID_ARGUMENT,
          gh_export(c->table, c->keys_out, set ? NULL : c->values_out, CT_BUF, NULL, NULL));
  REFUSED_ALLOWING(c, GH_ERR_INVALID_ARGUMENT, CT_ZEROES_COUNT,
                   gh_export(c->table, NULL, set ? NULL : c->values_out, CT_BUF, &c->count, NULL));
  if (set) {
    REFUSED_ALLOWING(c, GH_ERR_INVALID_ARGUMENT, CT_ZEROES_COUNT,
                     gh_export(c->table, c->keys_out, c->values_out, CT_BUF, &c->count, NULL));
  }
  {
    uint64_t size = 0;
    CHECK_OK(c->table, gh_size(c->table, &size));
    REFUSED_ALLOWING(
        c, GH_ERR_BUFFER_TOO_SMALL, CT_ZEROES_COUNT,
        gh_export(c->table, c->keys_out, set ? NULL : c->values_out, size - 1, &c->count, NULL));
  }

  /* keys_of_ids: compacting tables only */
  if (c->variant != GH_VARIANT_COMPACTING) {
    REFUSED(c, GH_ERR_UNSUPPORTED, gh_keys_of_ids(c->table, c->query, 5, c->keys_out, NULL));
  } else {
    /* Ids past the size among valid ones: GH_ERR_INVALID_ARGUMENT with their count, every valid
     * position written, every other position untouched. */
    uint64_t ids64[8], size = 0, i, bad = 0;
    void *ids;
    size_t kb = c->key_bits / 8;
    CHECK_OK(c->table, gh_size(c->table, &size));
    ids64[0] = 0;
    ids64[1] = size;
    ids64[2] = size - 1;
    ids64[3] = size + 7;
    ids64[4] = 1;
    ids64[5] = tu_mask(c->value_bits);
    ids64[6] = size / 2;
    ids64[7] = size + 1;
    ids = tu_pack(ids64, 8, c->value_bits);
    REFUSED_ALLOWING(c, GH_ERR_INVALID_ARGUMENT, CT_SKIP_KEYS_OUT,
                     gh_keys_of_ids(c->table, ids, 8, c->keys_out, NULL));
    for (i = 0; i < 8; ++i) bad += ids64[i] >= size;
    CHECK(tu_mentions_count(c->last_text, bad),
          "gh_keys_of_ids with %llu ids out of range: the "
          "message does not give their count: \"%s\"",
          (unsigned long long)bad, c->last_text);
    for (i = 0; i < 8; ++i) {
      size_t at = tu_first_non_canary(c->keys_out + i * kb, kb);
      if (ids64[i] >= size) {
        CHECK(at == kb,
              "gh_keys_of_ids: id %llu is out of range (size %llu), yet keys_out[%llu] "
              "was written (positions of out-of-range ids stay untouched)",
              (unsigned long long)ids64[i], (unsigned long long)size, (unsigned long long)i);
      } else {
        CHECK(at < kb, "gh_keys_of_ids: keys_out[%llu] (id %llu, in range) was not written",
              (unsigned long long)i, (unsigned long long)ids64[i]);
      }
    }
    /* The valid positions hold the keys of their ids (found again through gh_find). */
    {
      uint64_t back[8], ids_found[8];
      void *found_ids_out = tu_xmalloc(8 * 8);
      uint8_t found[8];
      tu_unpack(c->keys_out, 8, c->key_bits, back);
      for (i = 0; i < 8; ++i) {
        if (ids64[i] >= size) back[i] = c->keys64[0];
      }
      {
        void *packed = tu_pack(back, 8, c->key_bits);
        tu_set_phase("gh_keys_of_ids: the keys of the valid ids map back to them");
        if (CHECK_OK(c->table, gh_find(c->table, packed, 8, found_ids_out, found, NULL, NULL))) {
          tu_unpack(found_ids_out, 8, c->value_bits, ids_found);
          for (i = 0; i < 8; ++i) {
            if (ids64[i] >= size) continue;
            CHECK(found[i] == 1 && ids_found[i] == ids64[i],
                  "gh_keys_of_ids gave key 0x%llx for id %llu, whose id is %llu (found %u)",
                  (unsigned long long)back[i], (unsigned long long)ids64[i],
                  (unsigned long long)ids_found[i], found[i]);
          }
        }
        free(packed);
      }
      free(found_ids_out);
    }
    REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_keys_of_ids(c->table, ids, 8, NULL, NULL));
    REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_keys_of_ids(c->table, NULL, 8, c->keys_out, NULL));
    free(ids);
  }

  /* introspection outputs are required */
  REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_size(c->table, NULL));
  REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_capacity(c->table, NULL));
  REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_get_config(c->table, NULL));
  REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_get_stats(c->table, NULL));
  /* the sized forms refuse a size no release had (too small, or larger than this library's)
   * and write nothing then */
  {
    gh_stats stats_canary;
    gh_config config_canary;
    unsigned char pattern[sizeof(gh_config) > sizeof(gh_stats) ? sizeof(gh_config) : sizeof(gh_stats)];
    memset(pattern, 0xA5, sizeof pattern);
    memset(&stats_canary, 0xA5, sizeof stats_canary);
    memset(&config_canary, 0xA5, sizeof config_canary);
    REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_get_stats_sized(c->table, &stats_canary, 8));
    REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_get_stats_sized(c->table, &stats_canary, sizeof stats_canary + 8));
    REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_get_config_sized(c->table, &config_canary, 8));
    REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_get_config_sized(c->table, &config_canary, sizeof config_canary + 8));
    CHECK(memcmp(&stats_canary, pattern, sizeof stats_canary) == 0, "a refused gh_get_stats_sized wrote the stats");
    CHECK(memcmp(&config_canary, pattern, sizeof config_canary) == 0, "a refused gh_get_config_sized wrote the config");
    /* A program built against an older release passes its smaller struct: the prefix it knows is
     * written (struct_size = its size), not a byte after it. */
    gh_config config_now;
    gh_stats stats_now;
    const size_t config_0_2 = offsetof(gh_config, slab_load), stats_0_3 = offsetof(gh_stats, subtables);
    memset(&config_canary, 0xA5, sizeof config_canary);
    memset(&stats_canary, 0xA5, sizeof stats_canary);
    if (CHECK_OK(c->table, gh_get_config(c->table, &config_now)) &&
        CHECK_OK(c->table, gh_get_config_sized(c->table, &config_canary, config_0_2))) {
      CHECK(config_canary.struct_size == config_0_2 &&
                memcmp((char *)&config_canary + sizeof(size_t), (char *)&config_now + sizeof(size_t),
                       config_0_2 - sizeof(size_t)) == 0,
            "gh_get_config_sized with 0.2's size: struct_size %zu, or its fields unlike gh_get_config's",
            config_canary.struct_size);
      CHECK(memcmp((char *)&config_canary + config_0_2, pattern, sizeof config_canary - config_0_2) == 0,
            "gh_get_config_sized with 0.2's size wrote past it");
    }
    if (CHECK_OK(c->table, gh_get_stats(c->table, &stats_now)) &&
        CHECK_OK(c->table, gh_get_stats_sized(c->table, &stats_canary, stats_0_3))) {
      CHECK(memcmp(&stats_canary, &stats_now, stats_0_3) == 0,
            "gh_get_stats_sized with 0.3's size: its fields unlike gh_get_stats's");
      CHECK(memcmp((char *)&stats_canary + stats_0_3, pattern, sizeof stats_canary - stats_0_3) == 0,
            "gh_get_stats_sized with 0.3's size wrote past it");
    }
  }

  /* the device view: CUDA tables of designs that have one */
  if (c->backend == GH_BACKEND_CUDA && tu_design_has(c->design, GH_CAP_DEVICE_VIEW)) {
    REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_get_device_view(c->table, NULL));
  } else {
    REFUSED(c, GH_ERR_UNSUPPORTED, gh_get_device_view(c->table, &c->view));
  }
}

/* Each succeeding form of each function, straight after a refused call. */
static void test_succeeding_calls(ct *c) {
  const int set = c->value_bits == 0;
  void *vals = ct_takes_values(c) ? c->values : NULL;
  const gh_dup_policy policy = ct_policy(c);
  uint64_t size = 0;
  size_t hb = 0, db = 0;

  SUCCEEDS(c, gh_insert(c->table, c->keys, vals, 16, policy, c->flags, NULL));
  SUCCEEDS(c, gh_insert(c->table, c->keys, vals, 16, policy, NULL, NULL));
  SUCCEEDS(c, gh_insert(c->table, NULL, NULL, 0, policy, NULL, NULL));
  SUCCEEDS(c, gh_find(c->table, c->query, CT_QUERIES, NULL, c->flags, NULL, NULL));
  if (!set) {
    uint64_t default_value = 7;
    void *packed_default = tu_pack(&default_value, 1, c->value_bits);
    SUCCEEDS(c, gh_find(c->table, c->query, CT_QUERIES, c->values_out, NULL, NULL, NULL));
    SUCCEEDS(
        c, gh_find(c->table, c->query, CT_QUERIES, c->values_out, c->flags, packed_default, NULL));
    free(packed_default);
  }
  SUCCEEDS(c, gh_find(c->table, NULL, 0, NULL, c->flags, NULL, NULL));
  SUCCEEDS(c, gh_contains(c->table, c->query, CT_QUERIES, c->flags, NULL));
  SUCCEEDS(c, gh_contains(c->table, NULL, 0, c->flags, NULL));
  SUCCEEDS(c, gh_contains(c->table, NULL, 0, NULL, NULL));
  if (c->erase_ok) {
    SUCCEEDS(c, gh_erase(c->table, c->absent, CT_QUERIES, c->flags, &c->erased_count, NULL));
    SUCCEEDS(c, gh_erase(c->table, c->absent, CT_QUERIES, NULL, NULL, NULL));
    SUCCEEDS(c, gh_erase(c->table, NULL, 0, NULL, &c->erased_count, NULL));
  }
  if (c->variant == GH_VARIANT_MULTIVALUE) {
    SUCCEEDS(c, gh_count(c->table, c->query, CT_QUERIES, c->counts, &c->total, NULL));
    SUCCEEDS(c,
             gh_find_all(c->table, c->query, CT_QUERIES, c->offsets, c->values_out, CT_BUF, NULL));
    SUCCEEDS(c, gh_count(c->table, NULL, 0, c->counts, &c->total, NULL));
  }
  if (c->variant == GH_VARIANT_COMPACTING) {
    uint64_t ids64[4] = {0, 1, 2, 0};
    void *ids = tu_pack(ids64, 4, c->value_bits);
    SUCCEEDS(c, gh_keys_of_ids(c->table, ids, 4, c->keys_out, NULL));
    SUCCEEDS(c, gh_keys_of_ids(c->table, NULL, 0, c->keys_out, NULL));
    free(ids);
  }
  SUCCEEDS(c,
           gh_export(c->table, c->keys_out, set ? NULL : c->values_out, CT_BUF, &c->count, NULL));
  SUCCEEDS(c, gh_size(c->table, &size));
  SUCCEEDS(c, gh_capacity(c->table, &c->capacity));
  SUCCEEDS(c, gh_memory_usage(c->table, &hb, &db));
  SUCCEEDS(c, gh_memory_usage(c->table, NULL, NULL));
  SUCCEEDS(c, gh_get_config(c->table, &c->config));
  SUCCEEDS(c, gh_get_stats(c->table, &c->stats));
  SUCCEEDS(c, gh_validate(c->table));
  if (c->backend == GH_BACKEND_CUDA && tu_design_has(c->design, GH_CAP_DEVICE_VIEW))
    SUCCEEDS(c, gh_get_device_view(c->table, &c->view));
  if (tu_design_has(c->design, GH_CAP_STATUS_FLAGS))
    SUCCEEDS(c, gh_take_status_flags(c->table, &c->status_flags));
  SUCCEEDS(c, gh_clear(c->table, NULL));
  if (SUCCEEDS(c, gh_size(c->table, &size)))
    CHECK(size == 0, "gh_size %llu after gh_clear", (unsigned long long)size);
  /* The table works after all that. */
  SUCCEEDS(c, gh_insert(c->table, c->keys, vals, CT_KEYS, policy, NULL, NULL));
  SUCCEEDS(c, gh_validate(c->table));
}

/* Last: calls that have crashed before (a design without status flags reached a missing op). */
static void test_status_flags(ct *c) {
  if (tu_design_has(c->design, GH_CAP_STATUS_FLAGS)) {
    REFUSED(c, GH_ERR_INVALID_ARGUMENT, gh_take_status_flags(c->table, NULL));
  } else {
    /* GH_ERR_UNSUPPORTED and *flags untouched. */
    REFUSED(c, GH_ERR_UNSUPPORTED, gh_take_status_flags(c->table, &c->status_flags));
    REFUSED(c, CT_ANY_FAILURE, gh_take_status_flags(c->table, NULL));
  }
}

static void run_table(const tu_design *design, gh_variant variant, gh_backend backend,
                      unsigned key_bits, unsigned value_bits, uint64_t seed) {
  static ct c; /* large buffers: not on the stack */
  tu_rng rng = tu_rng_make(seed);
  gh_config cfg = gh_config_default(design->design);
  uint64_t values64[CT_KEYS], query64[CT_QUERIES], special[8], i;
  size_t n_special;
  gh_status st;
  const unsigned long failures_before = tu_failure_count();

  memset(&c, 0, sizeof c);
  c.design = design;
  c.variant = variant;
  c.backend = backend;
  c.key_bits = key_bits;
  c.value_bits = value_bits;
  c.tracker = tu_tracker_new();
  c.erase_ok = variant != GH_VARIANT_COMPACTING && tu_design_has(design, GH_CAP_ERASE);
  cfg.backend = backend;
  cfg.variant = variant;
  cfg.key_bits = key_bits;
  cfg.value_bits = value_bits;
  cfg.capacity = 4 * CT_KEYS;
  cfg.seed = tu_next(&rng);
  cfg.host_threads = 2;
  tu_tracker_attach(c.tracker, &cfg);
  tu_set_context(
      "contract design=%s variant=%s backend=%s key_bits=%u value_bits=%u "
      "case_seed=0x%016llx\n  rerun: %s %s --design %s --variant %s --seed 0x%016llx",
      design->name, tu_variant_name(variant, value_bits), tu_backend_name(backend), key_bits,
      value_bits, (unsigned long long)seed, ct_program, tu_backend_name(backend), design->name,
      tu_variant_name(variant, 32), (unsigned long long)ct_base_seed);
  tu_set_phase("create");
  st = gh_create(&cfg, &c.table);
  if (!CHECK(st == GH_OK && c.table != NULL, "gh_create returned %s: \"%s\"", gh_status_name(st),
             gh_last_create_error()))
    goto out;
  CHECK(gh_last_create_error()[0] == '\0', "gh_last_create_error after success: \"%s\"",
        gh_last_create_error());
  CHECK(gh_last_error(c.table) != NULL && gh_last_error(c.table)[0] == '\0',
        "a new table's gh_last_error is \"%s\"", gh_last_error(c.table));
  CHECK(gh_table_backend(c.table) == backend, "gh_table_backend %d, asked for %d",
        (int)gh_table_backend(c.table), (int)backend);
  tu_check_memory_estimate(c.table, &cfg);

  /* Keys (the all-ones patterns among them), values, absent keys, and queries half present. */
  n_special = tu_special_keys(key_bits, special);
  tu_gen_unique_keys(&rng, key_bits, CT_KEYS, NULL, c.keys64);
  for (i = 0; i < n_special; ++i) c.keys64[3 * i + 1] = special[i];
  {
    tu_ref present;
    tu_ref_init(&present, key_bits, 0);
    tu_ref_insert(&present, c.keys64, NULL, CT_KEYS, GH_KEEP_FIRST, NULL);
    REQUIRE(tu_ref_size(&present) == CT_KEYS, "the keys repeat");
    tu_gen_unique_keys(&rng, key_bits, CT_QUERIES, &present, c.absent64);
    tu_ref_free(&present);
  }
  tu_gen_values(&rng, value_bits ? value_bits : 32, CT_KEYS, values64);
  for (i = 0; i < CT_QUERIES; ++i) query64[i] = i % 2 ? c.keys64[5 * i] : c.absent64[i];
  c.keys = tu_pack(c.keys64, CT_KEYS, key_bits);
  c.values = tu_pack(values64, CT_KEYS, value_bits ? value_bits : 32);
  c.absent = tu_pack(c.absent64, CT_QUERIES, key_bits);
  c.query = tu_pack(query64, CT_QUERIES, key_bits);

  tu_set_phase("fill with %d keys", CT_KEYS);
  CHECK_OK(c.table, gh_insert(c.table, c.keys, ct_takes_values(&c) ? c.values : NULL, CT_KEYS,
                              ct_policy(&c), NULL, NULL));
  if (variant == GH_VARIANT_MULTIVALUE) {
    /* A second value for every key, and a third for some. */
    void *more = NULL;
    for (i = 0; i < CT_KEYS; ++i) values64[i] ^= 1;
    more = tu_pack(values64, CT_KEYS, value_bits);
    CHECK_OK(c.table, gh_insert(c.table, c.keys, more, CT_KEYS, GH_APPEND, NULL, NULL));
    free(more);
    CHECK_OK(c.table, gh_insert(c.table, c.query, c.values, CT_QUERIES, GH_APPEND, NULL, NULL));
  }
  CHECK_OK(c.table, gh_validate(c.table));

  test_reinsert_present(&c);
  test_refused_calls(&c);
  test_succeeding_calls(&c);
  test_null_table(&c);
  test_status_flags(&c);

  tu_set_phase("destroy");
  gh_destroy(c.table);
  c.table = NULL;
  tu_tracker_check_clean(c.tracker, "after gh_destroy");
out:
  free(c.before_pairs);
  free(c.query);
  free(c.absent);
  free(c.values);
  free(c.keys);
  tu_tracker_delete(c.tracker);
  printf("%-4s %s %s k%u v%u: %s\n", tu_backend_name(backend), design->name,
         tu_variant_name(variant, value_bits), key_bits, value_bits,
         tu_failure_count() == failures_before ? "ok" : "FAILED");
  fflush(stdout);
}

int main(int argc, char **argv) {
  /* key bits, value bits per case: a set and two maps, or two widths of ids / values */
  static const unsigned map_widths[][2] = {{32, 32}, {64, 0}, {64, 64}, {32, 0}};
  static const unsigned other_widths[][2] = {{32, 32}, {64, 64}, {64, 32}};
  const tu_design *design = NULL;
  gh_variant variant = GH_VARIANT_MAP;
  gh_backend backend;
  uint64_t seed = CT_BASE_SEED;
  ct_program = argv[0];
  if (!tu_parse_case_args(argc, argv, &backend, &design, &variant, &seed)) goto usage;
  ct_base_seed = seed;
  tu_skip_unless_backend_usable(backend);
  tu_install_crash_handler();
  test_tableless(design, variant, backend);
  if (!tu_design_accepts_variant(design, variant)) {
    test_refused_variant(design, variant, backend);
    return tu_finish("contract");
  }
  test_released_sizes(design, variant, backend);
  tu_run_widths(map_widths, sizeof map_widths / sizeof map_widths[0], other_widths,
                sizeof other_widths / sizeof other_widths[0], run_table, design, variant, backend, seed);
  return tu_finish("contract");
usage:
  return tu_case_usage(argv[0]);
}
