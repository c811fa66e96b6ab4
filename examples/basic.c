/* basic.c - the README's example: count words of a tiny "document" with a GH_ADD map, then look
 * some up. Runs on the GPU when there is one, otherwise on the host backend. */
#include <stdint.h>
#include <stdio.h>

#include "gpuhash.h"

int main(void) {
  const uint32_t words[] = {7, 3, 7, 42, 3, 7, 0xFFFFFFFFu}; /* any 32-bit key is fine */
  const uint32_t ones[] = {1, 1, 1, 1, 1, 1, 1};
  const uint32_t queries[] = {7, 3, 42, 5, 0xFFFFFFFFu};
  uint32_t counts[5];
  uint8_t found[5];
  const uint32_t missing = 0;

  gh_config config = gh_config_default(GH_WARPDRIVE);
  config.capacity = 1024;
  gh_table *table = NULL;
  gh_status status = gh_create(&config, &table);
  if (status != GH_OK) {
    fprintf(stderr, "gh_create: %s: %s\n", gh_status_name(status), gh_last_create_error());
    return 1;
  }
  status = gh_insert(table, words, ones, 7, GH_ADD, NULL, NULL);
  if (status == GH_OK) status = gh_find(table, queries, 5, counts, found, &missing, NULL);
  if (status != GH_OK) {
    fprintf(stderr, "%s: %s\n", gh_status_name(status), gh_last_error(table));
    gh_destroy(table);
    return 1;
  }
  printf("backend: %s\n", gh_table_backend(table) == GH_BACKEND_CUDA ? "CUDA" : "host");
  for (int i = 0; i < 5; ++i) printf("word %u: count %u (found %d)\n", queries[i], counts[i], found[i]);
  gh_destroy(table);
  /* The expected counts, so that this example is also a test. */
  const uint32_t expected[] = {3, 2, 1, 0, 1};
  for (int i = 0; i < 5; ++i)
    if (counts[i] != expected[i] || found[i] != (expected[i] != 0)) return 1;
  return 0;
}
