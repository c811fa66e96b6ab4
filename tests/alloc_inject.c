/* alloc_inject.c - see alloc_inject.h. */
#include "alloc_inject.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An operation that still fails after this many runs never completes. */
#define TU_MAX_ATTEMPTS 400
/* After this many failed checks within one operation the rest are not worth printing. */
#define TU_FAILURES_PER_OP 40
/* Failures printed per run: the first few say what is wrong (the most telling are checked
 * first: validate, size, the keys, memory; then the message and the outputs). */
#define TU_PRINTED_PER_RUN 4

int tu_says_what_was_kept(const char *text) {
  static const char *const phrases[] = {"nothing",   "kept",        "unchanged", "intact",
                                        "as it was", "still holds", "no key",    "not changed"};
  char lower[1024];
  size_t i;
  if (text == NULL) return 0;
  for (i = 0; text[i] != '\0' && i < sizeof lower - 1; ++i)
    lower[i] = (char)tolower((unsigned char)text[i]);
  lower[i] = '\0';
  for (i = 0; i < sizeof phrases / sizeof phrases[0]; ++i) {
    if (strstr(lower, phrases[i]) != NULL) return 1;
  }
  return 0;
}

/* The buffers of one call, all pre-filled with the canary. */
typedef struct op_buffers {
  void *keys, *values, *default_value;
  unsigned char *out_a, *out_b; /* per kind: failed / found / erased flags, values, keys, ... */
  size_t a_bytes, b_bytes;
  uint64_t scalar_a, scalar_b; /* erased_count, total, export count */
  uint64_t *fresh;             /* compacting inserts: the keys new to the table */
  uint64_t nfresh;
  uint64_t expected_total; /* find_all / count: values of the keys, by the model */
} op_buffers;

static size_t bytes_of(unsigned bits) { return bits / 8; }

static int takes_values(const tu_model *m) {
  return tu_model_value_bits(m) > 0 && m->variant != GH_VARIANT_COMPACTING;
}

/* Values of the query keys in a multi-value model (a repeated key counts again). */
static uint64_t multi_total(const tu_multi *cm, const uint64_t *keys, uint64_t n) {
  uint64_t total = 0, i, j;
  for (i = 0; i < n; ++i) {
    for (j = 0; j < cm->n; ++j) total += cm->pairs[j].key == keys[i];
  }
  return total;
}

static void prepare_buffers(const tu_op *op, tu_model *m, op_buffers *b) {
  const unsigned kbits = tu_model_key_bits(m), vbits = tu_model_value_bits(m);
  const size_t kb = bytes_of(kbits), vb = bytes_of(vbits);
  const uint64_t n = op->n;
  memset(b, 0, sizeof *b);
  switch (op->kind) {
    case TU_OP_INSERT:
      b->keys = tu_pack(op->keys, n, kbits);
      if (takes_values(m)) b->values = tu_pack(op->values, n, vbits);
      b->a_bytes = (size_t)n;
      if (m->variant == GH_VARIANT_COMPACTING) {
        b->fresh = (uint64_t *)tu_xmalloc((size_t)(n + 1) * sizeof *b->fresh);
        b->nfresh = tu_compact_fresh(&m->compact, op->keys, n, b->fresh);
      }
      break;
    case TU_OP_FIND: {
      uint64_t fallback = 0x5A5A5A5A5A5A5A5Aull & tu_mask(vbits);
      b->keys = tu_pack(op->keys, n, kbits);
      b->a_bytes = (size_t)n;      /* found_out */
      b->b_bytes = (size_t)n * vb; /* values_out (none for sets) */
      if (vb > 0) b->default_value = tu_pack(&fallback, 1, vbits);
      break;
    }
    case TU_OP_CONTAINS:
    case TU_OP_ERASE:
      b->keys = tu_pack(op->keys, n, kbits);
      b->a_bytes = (size_t)n;
      break;
    case TU_OP_JOIN:
    case TU_OP_JOIN_INTERSECT:
      b->keys = tu_pack(op->keys, n, kbits);
      b->expected_total = multi_total(&m->multi, op->keys, n);
      b->a_bytes = (size_t)b->expected_total * sizeof(uint64_t); /* left rows */
      b->b_bytes = (size_t)b->expected_total * vb;               /* right values */
      break;
    case TU_OP_SEMI_INTERSECT:
      b->keys = tu_pack(op->keys, n, kbits);
      b->a_bytes = (size_t)n;
      break;
    case TU_OP_JOIN_COUNT:
      b->keys = tu_pack(op->keys, n, kbits);
      b->expected_total = multi_total(&m->multi, op->keys, n);
      break;
    case TU_OP_COUNT:
    case TU_OP_FIND_ALL:
      b->keys = tu_pack(op->keys, n, kbits);
      b->expected_total = multi_total(&m->multi, op->keys, n);
      b->a_bytes = (size_t)(n + 1) * sizeof(uint64_t); /* counts / offsets */
      b->b_bytes = op->kind == TU_OP_FIND_ALL ? (size_t)b->expected_total * vb : 0;
      break;
    case TU_OP_EXPORT:
      b->a_bytes = (size_t)tu_model_size(m) * kb;
      b->b_bytes = (size_t)tu_model_size(m) * vb;
      break;
    case TU_OP_KEYS_OF_IDS:
      b->keys = tu_pack(op->keys, n, vbits); /* ids are value_bits wide */
      b->a_bytes = (size_t)n * kb;
      break;
    case TU_OP_CLEAR:
    case TU_OP_VALIDATE:
      break;
  }
  b->out_a = (unsigned char *)tu_xmalloc(b->a_bytes + 1);
  b->out_b = (unsigned char *)tu_xmalloc(b->b_bytes + 1);
}

static void free_buffers(op_buffers *b) {
  free(b->keys);
  free(b->values);
  free(b->default_value);
  free(b->out_a);
  free(b->out_b);
  free(b->fresh);
}

static void fill_canaries(op_buffers *b) {
  memset(b->out_a, TU_CANARY, b->a_bytes);
  memset(b->out_b, TU_CANARY, b->b_bytes);
  memset(&b->scalar_a, TU_CANARY, sizeof b->scalar_a);
  memset(&b->scalar_b, TU_CANARY, sizeof b->scalar_b);
}

static gh_status call_op(const tu_op *op, tu_model *m, op_buffers *b) {
  gh_table *t = tu_model_table(m);
  const int set = tu_model_value_bits(m) == 0;
  switch (op->kind) {
    case TU_OP_INSERT:
      return gh_insert(t, b->keys, b->values, op->n, op->policy, b->out_a, NULL);
    case TU_OP_FIND:
      return gh_find(t, b->keys, op->n, set ? NULL : b->out_b, b->out_a, b->default_value, NULL);
    case TU_OP_CONTAINS:
      return gh_contains(t, b->keys, op->n, b->out_a, NULL);
    case TU_OP_ERASE:
      return gh_erase(t, b->keys, op->n, b->out_a, &b->scalar_a, NULL);
    case TU_OP_COUNT:
      return gh_count(t, b->keys, op->n, (uint64_t *)(void *)b->out_a, &b->scalar_a, NULL);
    case TU_OP_FIND_ALL:
      return gh_find_all(t, b->keys, op->n, (uint64_t *)(void *)b->out_a, b->out_b,
                         b->expected_total, NULL);
    case TU_OP_EXPORT:
      return gh_export(t, b->out_a, set ? NULL : b->out_b, tu_model_size(m), &b->scalar_a, NULL);
    case TU_OP_KEYS_OF_IDS:
      return gh_keys_of_ids(t, b->keys, op->n, b->out_a, NULL);
    case TU_OP_CLEAR:
      return gh_clear(t, NULL);
    case TU_OP_VALIDATE:
      return gh_validate(t);
    case TU_OP_JOIN:
    case TU_OP_JOIN_INTERSECT:
      return gh_join(t, b->keys, op->n, op->kind == TU_OP_JOIN ? GH_JOIN_PROBE : GH_JOIN_INTERSECT,
                     (uint64_t *)(void *)b->out_a, set ? NULL : b->out_b, b->expected_total, &b->scalar_a, NULL);
    case TU_OP_SEMI_INTERSECT:
      return gh_semi_join(t, b->keys, op->n, GH_JOIN_INTERSECT, b->out_a, NULL);
    case TU_OP_JOIN_COUNT:
      return gh_join_count(t, b->keys, op->n, GH_JOIN_PROBE, &b->scalar_a, NULL);
  }
  return GH_ERR_INTERNAL;
}

/* After a failed run: no output written, and the counts the header zeroes on failure are 0. */
static void check_untouched(const tu_op *op, const op_buffers *b) {
  size_t at = tu_first_non_canary(b->out_a, b->a_bytes);
  CHECK(at == b->a_bytes,
        "%s failed but wrote its first output array (byte %zu of %zu): a "
        "failed call writes no output",
        op->name, at, b->a_bytes);
  at = tu_first_non_canary(b->out_b, b->b_bytes);
  CHECK(at == b->b_bytes, "%s failed but wrote its second output array (byte %zu of %zu)", op->name,
        at, b->b_bytes);
  if (op->kind == TU_OP_ERASE || op->kind == TU_OP_EXPORT || op->kind == TU_OP_JOIN ||
      op->kind == TU_OP_JOIN_INTERSECT || op->kind == TU_OP_JOIN_COUNT) {
    /* ("On failure: *erased_count / *count / *pairs is 0": exactly 0, as the header says.) */
    CHECK(b->scalar_a == 0, "%s failed and left its count at %llu: the header promises 0", op->name,
          (unsigned long long)b->scalar_a);
  } else {
    CHECK(tu_first_non_canary(&b->scalar_a, sizeof b->scalar_a) == sizeof b->scalar_a,
          "%s failed but wrote its count output (%llu)", op->name, (unsigned long long)b->scalar_a);
  }
}

/* After the run that completed: its outputs against the model, then the model updated. */
static void check_success(const tu_op *op, tu_model *m, op_buffers *b, gh_status st) {
  const unsigned kbits = tu_model_key_bits(m), vbits = tu_model_value_bits(m);
  uint64_t i;
  if (st == GH_OK) tu_check_no_error_text(tu_model_table(m), op->name);
  switch (op->kind) {
    case TU_OP_INSERT: {
      uint8_t *skip = NULL;
      for (i = 0; i < op->n; ++i) {
        if (!CHECK(b->out_a[i] == 0 || (st == GH_ERR_TABLE_FULL && b->out_a[i] == 1),
                   "%s returned %s but failed_out[%llu] = %u", op->name, gh_status_name(st),
                   (unsigned long long)i, b->out_a[i]))
          break;
      }
      if (st == GH_ERR_TABLE_FULL) skip = b->out_a;
      /* The status word records the keys that did not fit (designs with status flags). */
      if (m->variant == GH_VARIANT_MAP) tu_check_status_flags(&m->map, st == GH_ERR_TABLE_FULL);
      tu_model_note_insert(m, op->keys, op->values, op->n, op->policy, skip, b->fresh, b->nfresh);
      break;
    }
    case TU_OP_FIND:
    case TU_OP_CONTAINS:
    case TU_OP_SEMI_INTERSECT:
      for (i = 0; i < op->n; ++i) {
        if (!CHECK(b->out_a[i] == (uint8_t)tu_model_contains(m, op->keys[i]),
                   "%s: found_out[%llu] = %u for key 0x%llx, the model says %d", op->name,
                   (unsigned long long)i, b->out_a[i], (unsigned long long)op->keys[i],
                   tu_model_contains(m, op->keys[i])))
          break;
      }
      if (op->kind == TU_OP_FIND && m->variant == GH_VARIANT_MAP && vbits > 0) {
        uint64_t *values = (uint64_t *)tu_xmalloc((size_t)(op->n + 1) * sizeof *values);
        tu_unpack(b->out_b, op->n, vbits, values);
        for (i = 0; i < op->n; ++i) {
          int ok = tu_model_contains(m, op->keys[i])
                       ? tu_ref_value_allowed(&m->map.ref, op->keys[i], values[i])
                       : values[i] == (0x5A5A5A5A5A5A5A5Aull & tu_mask(vbits));
          if (!CHECK(ok, "%s: key 0x%llx got value %llu, not what the model allows", op->name,
                     (unsigned long long)op->keys[i], (unsigned long long)values[i]))
            break;
        }
        free(values);
      }
      break;
    case TU_OP_ERASE: {
      tu_ref present;
      tu_ref_init(&present, kbits, 0);
      for (i = 0; i < op->n; ++i) {
        if (tu_model_contains(m, op->keys[i]))
          tu_ref_insert(&present, &op->keys[i], NULL, 1, GH_KEEP_FIRST, NULL);
      }
      CHECK(b->scalar_a == tu_ref_size(&present), "%s: erased_count %llu, %llu keys were present",
            op->name, (unsigned long long)b->scalar_a, (unsigned long long)tu_ref_size(&present));
      tu_ref_free(&present);
      tu_model_note_erase(m, op->keys, op->n);
      break;
    }
    case TU_OP_JOIN:
    case TU_OP_JOIN_INTERSECT:
    case TU_OP_JOIN_COUNT:
    case TU_OP_COUNT:
      CHECK(b->scalar_a == b->expected_total, "%s: total %llu, the model has %llu", op->name,
            (unsigned long long)b->scalar_a, (unsigned long long)b->expected_total);
      break;
    case TU_OP_FIND_ALL: {
      uint64_t last;
      memcpy(&last, b->out_a + op->n * sizeof(uint64_t), sizeof last);
      CHECK(last == b->expected_total, "%s: offsets[n] = %llu, the model has %llu values", op->name,
            (unsigned long long)last, (unsigned long long)b->expected_total);
      break;
    }
    case TU_OP_EXPORT:
      CHECK(b->scalar_a == tu_model_size(m), "%s: count %llu, the model has %llu entries", op->name,
            (unsigned long long)b->scalar_a, (unsigned long long)tu_model_size(m));
      break;
    case TU_OP_KEYS_OF_IDS: {
      uint64_t *keys = (uint64_t *)tu_xmalloc((size_t)(op->n + 1) * sizeof *keys);
      tu_unpack(b->out_a, op->n, kbits, keys);
      for (i = 0; i < op->n && !m->compact.broken; ++i) {
        if (!CHECK(op->keys[i] < m->compact.size && keys[i] == m->compact.keys_by_id[op->keys[i]],
                   "%s: id %llu gave key 0x%llx", op->name, (unsigned long long)op->keys[i],
                   (unsigned long long)keys[i]))
          break;
      }
      free(keys);
      break;
    }
    case TU_OP_CLEAR:
      tu_model_note_clear(m);
      break;
    case TU_OP_VALIDATE:
      break;
  }
}

uint64_t tu_fail_each_allocation(tu_tracker *tracker, tu_model *m, tu_rng *rng, const tu_op *op) {
  gh_table *t = tu_model_table(m);
  const unsigned long failures_at_start = tu_failure_count();
  uint64_t size0 = 0, k, failed_runs = 0;
  size_t host0 = 0, device0 = 0;
  op_buffers b;
  int done = 0;
  prepare_buffers(op, m, &b);
  for (k = 1; k <= TU_MAX_ATTEMPTS && !done; ++k) {
    char text[1024];
    gh_status st;
    int injected;
    size_t live_host0, live_device0, host1 = 0, device1 = 0;
    uint64_t bad0, size1 = 0;
    const unsigned long failures_before_run = tu_failure_count();
    tu_set_phase("%s, with allocation %llu of the call failing", op->name, (unsigned long long)k);
    tu_set_print_budget(TU_PRINTED_PER_RUN);
    CHECK_OK(t, gh_size(t, &size0));
    CHECK_OK(t, gh_memory_usage(t, &host0, &device0));
    live_host0 = tu_tracker_live_bytes(tracker, GH_MEMORY_HOST);
    live_device0 = tu_tracker_live_bytes(tracker, GH_MEMORY_DEVICE);
    bad0 = tu_tracker_bad_frees(tracker);
    fill_canaries(&b);
    if (op->before_attempt != NULL) op->before_attempt(t, op->arg);
    tu_tracker_fail_nth(tracker, k);
    st = call_op(op, m, &b);
    injected = tu_tracker_injected(tracker);
    tu_tracker_fail_nth(tracker, 0);
    snprintf(text, sizeof text, "%s", gh_last_error(t) ? gh_last_error(t) : "(NULL)");

    if (st == GH_OK || (op->allow_full && st == GH_ERR_TABLE_FULL)) {
      /* Completed (when an allocation failed on the way, the library coped with it). */
      check_success(op, m, &b, st);
      tu_model_check(rng, m);
      done = 1;
      break;
    }
    if (!CHECK(injected, "%s returned %s although no allocation failed (\"%s\")", op->name,
               gh_status_name(st), text))
      break;
    ++failed_runs;
    CHECK(st == GH_ERR_OUT_OF_MEMORY,
          "%s with an allocation failing returned %s, expected "
          "GH_ERR_OUT_OF_MEMORY (\"%s\")",
          op->name, gh_status_name(st), text);
    /* The table exactly as it was: valid, the same size, every acknowledged key with its
     * value(s), the same memory, nothing leaked or freed twice. */
    if (CHECK_OK(t, gh_validate(t))) tu_check_no_error_text(t, "gh_validate");
    if (CHECK_OK(t, gh_size(t, &size1))) {
      CHECK(size1 == size0, "%s, failing, changed gh_size from %llu to %llu", op->name,
            (unsigned long long)size0, (unsigned long long)size1);
    }
    tu_model_check(rng, m);
    if (CHECK_OK(t, gh_memory_usage(t, &host1, &device1))) {
      CHECK(host1 == host0 && device1 == device0,
            "%s, failing, changed gh_memory_usage from %zu "
            "host + %zu device bytes to %zu + %zu",
            op->name, host0, device0, host1, device1);
    }
    CHECK(tu_tracker_live_bytes(tracker, GH_MEMORY_HOST) == live_host0 &&
              tu_tracker_live_bytes(tracker, GH_MEMORY_DEVICE) == live_device0,
          "%s, failing, changed the allocator's live bytes from %zu host + %zu device to %zu + "
          "%zu (a leak, or memory freed that the table held)",
          op->name, live_host0, live_device0, tu_tracker_live_bytes(tracker, GH_MEMORY_HOST),
          tu_tracker_live_bytes(tracker, GH_MEMORY_DEVICE));
    CHECK(tu_tracker_bad_frees(tracker) == bad0,
          "%s, failing: %llu bad frees through the "
          "allocator (the latest: %s)",
          op->name, (unsigned long long)(tu_tracker_bad_frees(tracker) - bad0),
          tu_tracker_last_problem(tracker));
    /* What it says and what it wrote. */
    CHECK(text[0] != '\0', "%s returned %s with gh_last_error empty", op->name, gh_status_name(st));
    CHECK(tu_says_what_was_kept(text),
          "%s returned %s; gh_last_error does not say what was kept "
          "(\"nothing was changed\", say): \"%s\"",
          op->name, gh_status_name(st), text);
    check_untouched(op, &b);
    if (tu_failure_count() != failures_before_run) {
      fprintf(stderr, "  (in that run, %s with allocation %llu failing returned %s: \"%s\")\n",
              op->name, (unsigned long long)k, gh_status_name(st), text);
    }
    if (tu_failure_count() > failures_at_start + TU_FAILURES_PER_OP) {
      fprintf(stderr, "(%s: stopping after %llu runs, the failures above repeat)\n", op->name,
              (unsigned long long)k);
      break;
    }
  }
  CHECK(done || tu_failure_count() > failures_at_start,
        "%s still failed after %d runs, each failing one allocation", op->name, TU_MAX_ATTEMPTS);
  printf("    %-44s %3llu allocations failed in turn: %s\n", op->name,
         (unsigned long long)failed_runs,
         tu_failure_count() == failures_at_start ? "ok" : "FAILED");
  fflush(stdout);
  free_buffers(&b);
  return failed_runs;
}
