/* tracking_alloc.c - see tracking_alloc.h. */
#define _POSIX_C_SOURCE 200809L
#include "tracking_alloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(GH_TEST_HAVE_CUDART)
#include <cuda_runtime_api.h>
#endif

#include "test_util.h"

/* Freed blocks held back before they are really freed: a second free of one of them is
 * recognised as a double free, and their memory is not handed out again meanwhile. */
#define TU_QUARANTINE 64
/* Freed host memory is overwritten with this, so that a use after free reads garbage. */
#define TU_FREED_BYTE 0xDD

typedef struct tu_block {
  void *ptr;
  size_t bytes;
  gh_memory_kind kind;
} tu_block;

struct tu_tracker {
  pthread_mutex_t lock;
  tu_block *live;
  size_t n_live, room;
  tu_block quarantine[TU_QUARANTINE];
  size_t n_quarantine, next_quarantine;
  size_t live_bytes[2];
  size_t limit;
  uint64_t calls, fail_at, injected, limit_refusals, requests[2], bad_frees;
  char first_problem[256];
  char last_problem[256];
};

static int tu_kind_index(gh_memory_kind kind) { return kind == GH_MEMORY_DEVICE ? 1 : 0; }

static const char *tu_kind_name(gh_memory_kind kind) {
  return kind == GH_MEMORY_DEVICE ? "device" : kind == GH_MEMORY_HOST ? "host" : "invalid kind";
}

static void *tu_raw_alloc(size_t bytes, gh_memory_kind kind) {
  if (bytes == 0) bytes = 1;
  if (kind == GH_MEMORY_HOST) {
    size_t rounded = (bytes + 63) / 64 * 64;
    return rounded < bytes ? NULL : aligned_alloc(64, rounded);
  }
#if defined(GH_TEST_HAVE_CUDART)
  if (kind == GH_MEMORY_DEVICE) {
    void *p = NULL;
    return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
  }
#endif
  return NULL;
}

static void tu_raw_free(const tu_block *b) {
  if (b->kind == GH_MEMORY_HOST) {
    free(b->ptr);
    return;
  }
#if defined(GH_TEST_HAVE_CUDART)
  cudaFree(b->ptr);
#endif
}

static void tu_note_problem(tu_tracker *t, const char *text) {
  ++t->bad_frees;
  if (t->first_problem[0] == '\0') snprintf(t->first_problem, sizeof t->first_problem, "%s", text);
  snprintf(t->last_problem, sizeof t->last_problem, "%s", text);
}

static void *tu_tracker_alloc(void *ctx, size_t bytes, gh_memory_kind kind) {
  tu_tracker *t = (tu_tracker *)ctx;
  void *p = NULL;
  int k = tu_kind_index(kind);
  pthread_mutex_lock(&t->lock);
  ++t->calls;
  ++t->requests[k];
  if (t->fail_at != 0 && t->calls == t->fail_at) {
    ++t->injected;
  } else if (t->limit != 0 && t->live_bytes[0] + t->live_bytes[1] + bytes > t->limit) {
    ++t->limit_refusals;
  } else if (kind != GH_MEMORY_HOST && kind != GH_MEMORY_DEVICE) {
    char text[128];
    snprintf(text, sizeof text, "allocation of %zu bytes of memory kind %d", bytes, (int)kind);
    tu_note_problem(t, text);
  } else {
    p = tu_raw_alloc(bytes, kind);
    if (p != NULL) {
      if (t->n_live == t->room) {
        size_t room = t->room ? 2 * t->room : 64;
        tu_block *grown = (tu_block *)realloc(t->live, room * sizeof *grown);
        if (grown == NULL) {
          tu_block b;
          b.ptr = p;
          b.kind = kind;
          tu_raw_free(&b);
          pthread_mutex_unlock(&t->lock);
          return NULL;
        }
        t->live = grown;
        t->room = room;
      }
      t->live[t->n_live].ptr = p;
      t->live[t->n_live].bytes = bytes;
      t->live[t->n_live].kind = kind;
      ++t->n_live;
      t->live_bytes[k] += bytes;
    }
  }
  pthread_mutex_unlock(&t->lock);
  return p;
}

static void tu_tracker_free(void *ctx, void *ptr, size_t bytes, gh_memory_kind kind) {
  tu_tracker *t = (tu_tracker *)ctx;
  char text[256];
  size_t i;
  if (ptr == NULL) return;
  pthread_mutex_lock(&t->lock);
  for (i = 0; i < t->n_live; ++i) {
    if (t->live[i].ptr == ptr) break;
  }
  if (i == t->n_live) {
    size_t q;
    int twice = 0;
    for (q = 0; q < t->n_quarantine; ++q) twice |= t->quarantine[q].ptr == ptr;
    snprintf(text, sizeof text, "%s of %p (%zu bytes, %s)",
             twice ? "double free" : "free of a pointer the allocator never handed out", ptr, bytes,
             tu_kind_name(kind));
    tu_note_problem(t, text);
    pthread_mutex_unlock(&t->lock);
    return;
  }
  {
    tu_block b = t->live[i];
    if (b.bytes != bytes || b.kind != kind) {
      snprintf(text, sizeof text,
               "free of %p with %zu bytes (%s), but it was allocated with %zu bytes (%s)", ptr,
               bytes, tu_kind_name(kind), b.bytes, tu_kind_name(b.kind));
      tu_note_problem(t, text);
    }
    t->live[i] = t->live[--t->n_live];
    t->live_bytes[tu_kind_index(b.kind)] -= b.bytes;
    if (b.kind == GH_MEMORY_HOST) memset(b.ptr, TU_FREED_BYTE, b.bytes);
    if (t->n_quarantine == TU_QUARANTINE) {
      tu_raw_free(&t->quarantine[t->next_quarantine]);
      t->quarantine[t->next_quarantine] = b;
      t->next_quarantine = (t->next_quarantine + 1) % TU_QUARANTINE;
    } else {
      t->quarantine[t->n_quarantine++] = b;
    }
  }
  pthread_mutex_unlock(&t->lock);
}

tu_tracker *tu_tracker_new(void) {
  tu_tracker *t = (tu_tracker *)calloc(1, sizeof *t);
  REQUIRE(t != NULL, "out of memory for the tracking allocator");
  pthread_mutex_init(&t->lock, NULL);
  return t;
}

void tu_tracker_delete(tu_tracker *t) {
  size_t i;
  if (t == NULL) return;
  for (i = 0; i < t->n_live; ++i) tu_raw_free(&t->live[i]);
  for (i = 0; i < t->n_quarantine; ++i) tu_raw_free(&t->quarantine[i]);
  free(t->live);
  pthread_mutex_destroy(&t->lock);
  free(t);
}

void tu_tracker_reset(tu_tracker *t) {
  size_t i;
  pthread_mutex_lock(&t->lock);
  for (i = 0; i < t->n_live; ++i) tu_raw_free(&t->live[i]);
  for (i = 0; i < t->n_quarantine; ++i) tu_raw_free(&t->quarantine[i]);
  t->n_live = t->n_quarantine = t->next_quarantine = 0;
  t->live_bytes[0] = t->live_bytes[1] = 0;
  t->calls = t->fail_at = t->injected = t->limit_refusals = t->bad_frees = 0;
  t->requests[0] = t->requests[1] = 0;
  t->first_problem[0] = t->last_problem[0] = '\0';
  pthread_mutex_unlock(&t->lock);
}

void tu_tracker_attach(tu_tracker *t, gh_config *config) {
  config->allocator.alloc = tu_tracker_alloc;
  config->allocator.free = tu_tracker_free;
  config->allocator.ctx = t;
}

void tu_tracker_fail_nth(tu_tracker *t, uint64_t n) {
  pthread_mutex_lock(&t->lock);
  t->fail_at = n;
  t->calls = 0;
  t->injected = 0;
  pthread_mutex_unlock(&t->lock);
}

uint64_t tu_tracker_calls(const tu_tracker *t) { return t->calls; }
int tu_tracker_injected(const tu_tracker *t) { return t->injected > 0; }

void tu_tracker_set_limit(tu_tracker *t, size_t limit) {
  pthread_mutex_lock(&t->lock);
  t->limit = limit;
  pthread_mutex_unlock(&t->lock);
}

uint64_t tu_tracker_limit_refusals(const tu_tracker *t) { return t->limit_refusals; }

size_t tu_tracker_live_bytes(const tu_tracker *t, gh_memory_kind kind) {
  return t->live_bytes[tu_kind_index(kind)];
}

size_t tu_tracker_live_blocks(const tu_tracker *t) { return t->n_live; }

uint64_t tu_tracker_requests(const tu_tracker *t, gh_memory_kind kind) {
  return t->requests[tu_kind_index(kind)];
}

uint64_t tu_tracker_bad_frees(const tu_tracker *t) { return t->bad_frees; }
const char *tu_tracker_first_problem(const tu_tracker *t) { return t->first_problem; }
const char *tu_tracker_last_problem(const tu_tracker *t) { return t->last_problem; }

int tu_tracker_check_frees(tu_tracker *t, const char *when) {
  return CHECK(t->bad_frees == 0, "%s: %llu bad frees through the allocator; the first: %s", when,
               (unsigned long long)t->bad_frees, t->first_problem);
}

int tu_tracker_check_clean(tu_tracker *t, const char *when) {
  int ok = tu_tracker_check_frees(t, when);
  if (t->n_live > 0) {
    char blocks[200] = "";
    size_t i, used = 0;
    for (i = 0; i < t->n_live && i < 4 && used < sizeof blocks; ++i) {
      used += (size_t)snprintf(blocks + used, sizeof blocks - used, "%s%zu bytes %s", i ? ", " : "",
                               t->live[i].bytes, tu_kind_name(t->live[i].kind));
    }
    ok &= CHECK(
        t->n_live == 0, "%s: %zu blocks still allocated (%zu host bytes, %zu device bytes): %s%s",
        when, t->n_live, t->live_bytes[0], t->live_bytes[1], blocks, t->n_live > 4 ? ", ..." : "");
  }
  return ok;
}
