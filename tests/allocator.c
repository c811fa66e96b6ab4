/*
 * allocator - a table created with a user allocator takes its memory from it and gives all of
 * it back, with the sizes and kinds it was allocated with; a host table asks for no device
 * memory; a failing allocator makes gh_create fail cleanly (GH_ERR_OUT_OF_MEMORY, *table NULL,
 * a message, nothing leaked), whichever of its allocations fails.
 *
 *   allocator host [--design NAME]
 *
 * Host backend (CUDA tables go through the same allocator in alloc_failure and contract). The
 * allocator is the tracking allocator of tests/tracking_alloc.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tracking_alloc.h"

static gh_config config_with(const tu_design *design, tu_tracker *a) {
  gh_config c = gh_config_default(design->design);
  c.backend = GH_BACKEND_HOST;
  c.capacity = 5000;
  c.host_threads = 2;
  tu_tracker_attach(a, &c);
  return c;
}

int main(int argc, char **argv) {
  const tu_design *design = tu_design_by_name("warpdrive");
  tu_tracker *a;
  gh_config cfg;
  tu_table h;
  tu_rng rng = tu_rng_make(0xA110C);
  uint64_t keys[2000], values[2000], allocs_for_create = 0, k;
  if (argc < 2 || strcmp(argv[1], "host") != 0 ||
      (argc == 4 &&
       (strcmp(argv[2], "--design") != 0 || (design = tu_design_by_name(argv[3])) == NULL)) ||
      (argc != 2 && argc != 4) || design == NULL) {
    fprintf(stderr, "usage: %s host [--design NAME]\n", argv[0]);
    return 2;
  }
  a = tu_tracker_new();
  cfg = config_with(design, a);
  tu_set_context("allocator design=%s backend=host capacity=5000", design->name);

  tu_set_phase("count the allocations of gh_create");
  {
    gh_table *table = NULL;
    if (!CHECK_STATUS(NULL, gh_create(&cfg, &table), GH_OK)) return tu_finish("allocator");
    allocs_for_create = tu_tracker_calls(a);
    gh_destroy(table);
    tu_tracker_check_clean(a, "after gh_destroy of an empty table");
    tu_tracker_reset(a);
  }

  tu_set_phase("a table's life with a tracking allocator");
  if (tu_table_create(&h, &cfg)) {
    CHECK(tu_tracker_live_blocks(a) > 0, "the table allocated nothing through the user allocator");
    tu_gen_unique_keys(&rng, 32, 2000, NULL, keys);
    tu_gen_values(&rng, 32, 2000, values);
    tu_insert(&h, keys, values, 2000, GH_ADD, 0, NULL);
    if (tu_design_has(design, GH_CAP_ERASE)) tu_erase(&h, keys, 700);
    tu_check_find(&h, keys, 2000, TU_FIND_VALUES | TU_FIND_FOUND);
    tu_check_all(&h);
    tu_clear(&h);
    tu_check_all(&h);
    tu_table_destroy(&h);
    tu_tracker_check_clean(a, "after gh_destroy");
    CHECK(tu_tracker_requests(a, GH_MEMORY_DEVICE) == 0,
          "a host table asked for %llu device blocks",
          (unsigned long long)tu_tracker_requests(a, GH_MEMORY_DEVICE));
    tu_tracker_reset(a);
  }

  /* Fail each allocation of gh_create in turn. */
  for (k = 1; k <= allocs_for_create; ++k) {
    gh_table *table = (gh_table *)&cfg; /* any non-NULL value: gh_create must reset it */
    gh_status st;
    tu_set_phase("gh_create with allocation %llu of %llu failing", (unsigned long long)k,
                 (unsigned long long)allocs_for_create);
    tu_tracker_fail_nth(a, k);
    st = gh_create(&cfg, &table);
    CHECK_STATUS(NULL, st, GH_ERR_OUT_OF_MEMORY);
    CHECK(st != GH_OK || table == NULL, "failed gh_create left *table non-NULL");
    CHECK(st == GH_OK || gh_last_create_error()[0] != '\0', "no message for %s",
          gh_status_name(st));
    if (st == GH_OK && table != NULL) gh_destroy(table);
    tu_tracker_check_clean(a, "after the failed gh_create");
    tu_tracker_reset(a);
  }
  tu_tracker_delete(a);
  return tu_finish("allocator");
}
