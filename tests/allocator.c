/*
 * allocator - a table created with a user allocator takes its memory from it and gives all of
 * it back, with the sizes and kinds it was allocated with; a failing allocator makes gh_create
 * fail cleanly (GH_ERR_OUT_OF_MEMORY, nothing leaked), whichever allocation fails.
 *
 *   allocator host
 *
 * Host backend only: a device allocator needs the CUDA runtime, which these C tests do not use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define MAX_LIVE 1024

typedef struct live_block {
  void *ptr;
  size_t bytes;
  gh_memory_kind kind;
} live_block;

typedef struct counting_allocator {
  live_block live[MAX_LIVE];
  size_t n_live;
  size_t calls;           /* alloc calls so far */
  size_t fail_from;       /* alloc call index from which allocations fail; SIZE_MAX = never */
  size_t bad_frees;       /* frees of unknown pointers or with another size or kind */
  size_t device_requests; /* device allocations asked of a host table's allocator */
} counting_allocator;

static void *counting_alloc(void *ctx, size_t bytes, gh_memory_kind kind) {
  counting_allocator *a = (counting_allocator *)ctx;
  size_t rounded = (bytes + 63) / 64 * 64;
  void *p;
  if (kind != GH_MEMORY_HOST) ++a->device_requests;
  if (a->calls++ >= a->fail_from || kind != GH_MEMORY_HOST || a->n_live == MAX_LIVE) return NULL;
  /* The header asks for 64-byte alignment; aligned_alloc wants a multiple of it. */
  p = aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (p == NULL) return NULL;
  a->live[a->n_live].ptr = p;
  a->live[a->n_live].bytes = bytes;
  a->live[a->n_live].kind = kind;
  ++a->n_live;
  return p;
}

static void counting_free(void *ctx, void *ptr, size_t bytes, gh_memory_kind kind) {
  counting_allocator *a = (counting_allocator *)ctx;
  size_t i;
  if (ptr == NULL) return;
  for (i = 0; i < a->n_live; ++i) {
    if (a->live[i].ptr == ptr) {
      if (a->live[i].bytes != bytes || a->live[i].kind != kind) ++a->bad_frees;
      free(ptr);
      a->live[i] = a->live[--a->n_live];
      return;
    }
  }
  ++a->bad_frees;
}

static gh_config config_with(counting_allocator *a) {
  gh_config c = gh_config_default(GH_WARPDRIVE);
  memset(a, 0, sizeof *a);
  a->fail_from = (size_t)-1;
  c.backend = GH_BACKEND_HOST;
  c.capacity = 5000;
  c.host_threads = 2;
  c.allocator.alloc = counting_alloc;
  c.allocator.free = counting_free;
  c.allocator.ctx = a;
  return c;
}

int main(int argc, char **argv) {
  static counting_allocator a;
  gh_config cfg;
  tu_table h;
  tu_rng rng = tu_rng_make(0xA110C);
  uint64_t keys[2000], values[2000];
  size_t allocs_for_create, k;
  if (argc != 2 || strcmp(argv[1], "host") != 0) {
    fprintf(stderr, "usage: %s host\n", argv[0]);
    return 2;
  }
  cfg = config_with(&a);
  tu_set_context("allocator backend=host capacity=5000");

  tu_set_phase("count the allocations of gh_create");
  {
    gh_table *table = NULL;
    if (!CHECK_STATUS(NULL, gh_create(&cfg, &table), GH_OK)) return tu_finish("allocator");
    allocs_for_create = a.calls;
    gh_destroy(table);
    CHECK(a.n_live == 0, "%zu blocks still allocated after gh_destroy", a.n_live);
  }

  tu_set_phase("a table's life with a counting allocator");
  cfg = config_with(&a);
  if (tu_table_create(&h, &cfg)) {
    CHECK(a.n_live > 0, "the table allocated nothing through the user allocator");
    tu_gen_unique_keys(&rng, 32, 2000, NULL, keys);
    tu_gen_values(&rng, 32, 2000, values);
    tu_insert(&h, keys, values, 2000, GH_ADD, 0, NULL);
    tu_erase(&h, keys, 700);
    tu_check_find(&h, keys, 2000, TU_FIND_VALUES | TU_FIND_FOUND);
    tu_check_all(&h);
    tu_clear(&h);
    tu_check_all(&h);
    tu_table_destroy(&h);
    CHECK(a.n_live == 0, "%zu blocks still allocated after gh_destroy", a.n_live);
    CHECK(a.bad_frees == 0, "%zu frees with a wrong pointer, size or kind", a.bad_frees);
    CHECK(a.device_requests == 0, "a host table asked for %zu device blocks", a.device_requests);

    /* Fail each allocation of gh_create in turn. */
    for (k = 0; k < allocs_for_create; ++k) {
      gh_table *table = (gh_table *)&a;
      gh_status st;
      cfg = config_with(&a);
      a.fail_from = k;
      tu_set_phase("gh_create with allocation %zu of %zu failing", k, allocs_for_create);
      st = gh_create(&cfg, &table);
      CHECK_STATUS(NULL, st, GH_ERR_OUT_OF_MEMORY);
      CHECK(table == NULL, "failed gh_create left *table non-NULL");
      CHECK(gh_last_create_error()[0] != '\0', "no message for GH_ERR_OUT_OF_MEMORY");
      if (st == GH_OK && table != NULL) gh_destroy(table);
      CHECK(a.n_live == 0, "%zu blocks leaked by the failed gh_create", a.n_live);
      CHECK(a.bad_frees == 0, "%zu bad frees in the failed gh_create", a.bad_frees);
    }
  }
  return tu_finish("allocator");
}
