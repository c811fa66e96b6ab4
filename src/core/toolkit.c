/* toolkit.c - the backend dispatch of core/toolkit.h, and the memory helpers both backends share
 * (scratch arrays, deferred frees, growth). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cuda_runtime.h"
#include "core/toolkit.h"

static int on_device(const gh_table *t) { return t->config.backend == GH_BACKEND_CUDA; }

gh_memory_kind gh__backend_memory(const gh_table *t) {
  return on_device(t) ? GH_MEMORY_DEVICE : GH_MEMORY_HOST;
}

/* ---- Memory ------------------------------------------------------------------------------------ */

gh_status gh__fill(gh_table *t, void *dst, int byte, size_t bytes, void *stream) {
  if (on_device(t)) return gh__cuda_fill(dst, byte, bytes, stream, t->last_error, sizeof t->last_error);
  if (bytes) memset(dst, byte, bytes);
  return GH_OK;
}

gh_status gh__copy(gh_table *t, void *dst, const void *src, size_t bytes, void *stream) {
  if (on_device(t)) return gh__cuda_copy(dst, src, bytes, stream, t->last_error, sizeof t->last_error);
  if (bytes) memmove(dst, src, bytes);
  return GH_OK;
}

gh_status gh__to_host(gh_table *t, void *host_dst, const void *src, size_t bytes, void *stream) {
  const gh_status status = gh__copy(t, host_dst, src, bytes, stream);
  return status == GH_OK ? gh__sync(t, stream) : status;
}

gh_status gh__sync(gh_table *t, void *stream) {
  const gh_status status = on_device(t) ? gh__cuda_sync(stream, t->last_error, sizeof t->last_error) : GH_OK;
  gh__release_deferred(t, stream);
  return status;
}

gh_status gh__device_sync(gh_table *t) {
  const gh_status status = on_device(t) ? gh__cuda_device_sync(t->last_error, sizeof t->last_error) : GH_OK;
  gh__release_all_deferred(t);
  return status;
}

static double host_clock(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

void gh__stopwatch_start(gh_table *t, gh_stopwatch *w, void *stream) {
  w->event = on_device(t) ? gh__cuda_mark_start(stream) : NULL;
  w->host_seconds = on_device(t) ? 0.0 : host_clock();
}

double gh__stopwatch_seconds(gh_table *t, gh_stopwatch *w, void *stream) {
  if (!on_device(t)) return host_clock() - w->host_seconds;
  const double ms = gh__cuda_mark_stop(w->event, stream);
  w->event = NULL;
  return 1e-3 * ms;
}

gh_status gh__scratch_alloc(gh_table *t, gh_scratch *s, size_t bytes) {
  s->kind = gh__backend_memory(t);
  s->bytes = bytes ? bytes : 1;
  s->pooled = 0;
  s->stream = NULL;
  s->ptr = gh__alloc(t, s->bytes, s->kind);
  if (s->ptr != NULL) return GH_OK;
  return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no %s memory for %zu bytes of scratch; nothing was changed",
                  s->kind == GH_MEMORY_DEVICE ? "device" : "host", bytes);
}

gh_status gh__scratch_alloc_on(gh_table *t, gh_scratch *s, size_t bytes, void *stream) {
  if (!on_device(t) || t->config.allocator.alloc != NULL) return gh__scratch_alloc(t, s, bytes);
  s->kind = GH_MEMORY_DEVICE;
  s->bytes = bytes ? bytes : 1;
  s->stream = stream;
  int pool_missing = 0;
  s->ptr = gh__cuda_pool_alloc(s->bytes, stream, &pool_missing);
  if (pool_missing) return gh__scratch_alloc(t, s, bytes);
  s->pooled = 1;
  if (s->ptr != NULL) {
    t->device_bytes += s->bytes;
    return GH_OK;
  }
  return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no device memory for %zu bytes of scratch; nothing was changed", bytes);
}

void gh__scratch_free(gh_table *t, gh_scratch *s, void *stream) {
  if (s->pooled && s->ptr != NULL) {
    gh__cuda_pool_free(s->ptr, s->stream);
    t->device_bytes -= s->bytes;
  } else {
    gh__free_after(t, s->ptr, s->bytes, s->kind, stream);
  }
  s->ptr = NULL;
}

/* A free that waits until the work queued on its stream has run. */
struct gh_deferred {
  void *ptr;
  size_t bytes;
  gh_memory_kind kind;
  void *stream;
  struct gh_deferred *next;
};

void gh__free_after(gh_table *t, void *ptr, size_t bytes, gh_memory_kind kind, void *stream) {
  if (ptr == NULL) return;
  /* Host backend: nothing is queued anywhere, the memory is free to go. */
  if (!on_device(t)) {
    gh__free(t, ptr, bytes, kind);
    return;
  }
  struct gh_deferred *node = (struct gh_deferred *)malloc(sizeof *node);
  if (node == NULL) {
    /* No room to remember it: wait for the device instead, then free. */
    gh__cuda_device_sync(NULL, 0);
    gh__free(t, ptr, bytes, kind);
    return;
  }
  node->ptr = ptr;
  node->bytes = bytes;
  node->kind = kind;
  node->stream = stream;
  node->next = t->deferred;
  t->deferred = node;
}

static void release_matching(gh_table *t, int all, void *stream) {
  struct gh_deferred **link = &t->deferred;
  while (*link != NULL) {
    struct gh_deferred *node = *link;
    if (!all && node->stream != stream) {
      link = &node->next;
      continue;
    }
    *link = node->next;
    gh__free(t, node->ptr, node->bytes, node->kind);
    free(node);
  }
}

void gh__release_deferred(gh_table *t, void *stream) { release_matching(t, 0, stream); }
void gh__release_all_deferred(gh_table *t) { release_matching(t, 1, NULL); }

gh_status gh__realloc_array(gh_table *t, void **ptr, size_t *bytes, size_t new_bytes, size_t keep_bytes,
                            int fill, gh_memory_kind kind, void *stream) {
  void *fresh = gh__alloc(t, new_bytes, kind);
  if (fresh == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "no %s memory to grow an array of %zu bytes to %zu; nothing was "
                    "changed", kind == GH_MEMORY_DEVICE ? "device" : "host", *bytes, new_bytes);
  size_t keep = keep_bytes < *bytes ? keep_bytes : *bytes;
  if (keep > new_bytes) keep = new_bytes;
  gh_status status = gh__copy(t, fresh, *ptr, keep, stream);
  if (status == GH_OK && fill >= 0 && new_bytes > keep) {
    /* Nothing is queued on the fresh block's tail: host memory is filled right here. */
    if (kind == GH_MEMORY_DEVICE) status = gh__fill(t, (char *)fresh + keep, fill, new_bytes - keep, stream);
    else memset((char *)fresh + keep, fill, new_bytes - keep);
  }
  if (status != GH_OK) {
    gh__free_after(t, fresh, new_bytes, kind, stream);
    return status;
  }
  gh__free_after(t, *ptr, *bytes, kind, stream);
  *ptr = fresh;
  *bytes = new_bytes;
  return GH_OK;
}

/* ---- Parallel primitives ------------------------------------------------------------------------ */

gh_status gh__exclusive_sum_u64(gh_table *t, const uint64_t *in, uint64_t *out, uint64_t count, void *stream) {
#if defined(GH_HAVE_CUDA)
  if (on_device(t)) return gh__cuda_exclusive_sum_u64(t, in, out, count, stream);
#endif
  (void)stream;
  return gh__host_exclusive_sum_u64(t, in, out, count);
}

gh_status gh__sort_pairs(gh_table *t, const void *keys_in, void *keys_out, const void *values_in, void *values_out,
                         uint64_t n, unsigned key_bits, unsigned value_bits, void *stream) {
#if defined(GH_HAVE_CUDA)
  if (on_device(t))
    return gh__cuda_sort_pairs(t, keys_in, keys_out, values_in, values_out, n, key_bits, value_bits, stream);
#endif
  (void)stream;
  return gh__host_sort_pairs(t, keys_in, keys_out, values_in, values_out, n, key_bits, value_bits);
}

gh_status gh__run_length_encode(gh_table *t, const void *keys_in, uint64_t n, unsigned key_bits, void *unique_out,
                                uint64_t *counts_out, uint64_t *runs_out, void *stream) {
#if defined(GH_HAVE_CUDA)
  if (on_device(t)) return gh__cuda_run_length_encode(t, keys_in, n, key_bits, unique_out, counts_out, runs_out, stream);
#endif
  (void)stream;
  return gh__host_run_length_encode(t, keys_in, n, key_bits, unique_out, counts_out, runs_out);
}

gh_status gh__expand_offsets(gh_table *t, const uint64_t *offsets, uint64_t n, uint64_t total, uint64_t *rows_out,
                             void *stream) {
  if (total == 0) return GH_OK;
#if defined(GH_HAVE_CUDA)
  if (on_device(t)) return gh__cuda_expand_offsets(t, offsets, n, total, rows_out, stream);
#endif
  (void)stream;
  return gh__host_expand_offsets(t, offsets, n, rows_out);
}

gh_status gh__view_record(gh_table *t, void **record, size_t bytes, gh_status (*publish)(gh_table *t, void *stream)) {
  if (*record != NULL) return GH_OK;
  *record = gh__alloc(t, bytes, GH_MEMORY_DEVICE);
  if (*record == NULL)
    return gh__fail(t, GH_ERR_OUT_OF_MEMORY, "gh_get_device_view: no device memory for the view's %zu-byte table "
                    "record; the table is unchanged", bytes);
  const gh_status status = publish(t, NULL);
  if (status != GH_OK) {
    gh__free_after(t, *record, bytes, GH_MEMORY_DEVICE, NULL);
    *record = NULL;
  }
  return status;
}

gh_status gh__find_all_offsets(gh_table *t, uint64_t *offsets, uint64_t n, uint64_t values_capacity, void *stream) {
  uint64_t needed = 0;
  gh_status status = gh__fill(t, offsets + n, 0, sizeof(uint64_t), stream);
  if (status == GH_OK) status = gh__exclusive_sum_u64(t, offsets, offsets, n + 1u, stream);
  if (status == GH_OK) status = gh__to_host(t, &needed, offsets + n, sizeof needed, stream);
  if (status == GH_OK && needed > values_capacity)
    status = gh__fail(t, GH_ERR_BUFFER_TOO_SMALL, "gh_find_all: the keys have %llu values but values_capacity is %llu; "
                      "offsets_out says where each key's values would go, no value was written",
                      (unsigned long long)needed, (unsigned long long)values_capacity);
  return status;
}
