/* libgh-find-call-time: gh_find called from C in a timed loop, the baseline of the Python package's
 * call overhead. scripts/python-overhead loads it into the Python process and hands it the very
 * table, keys and output arrays its Table.find calls use, and the gh_find of the library the
 * package loaded (so there is one copy of the library, and the comparison is the same call on the
 * same memory, round after round, with only the binding in between). A separate C process had its
 * own table at other addresses, and its calls differed from the Python process's by as much as
 * the 5 % being measured. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <stdint.h>
#include <time.h>

#include "gpuhash.h"

typedef gh_status (*find_call)(gh_table *table, const void *keys, uint64_t n, void *values_out,
                               uint8_t *found_out, const void *default_value, gh_stream stream);

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* 10 unrecorded calls, then `reps` calls of find(table, keys, n, values_out, found_out, NULL, NULL),
 * each call's wall time (microseconds) into us[i]. Returns the first failing call's status. */
__attribute__((visibility("default"))) int gh_time_find_calls(find_call find, gh_table *table, const void *keys,
                                                              uint64_t n, void *values_out, uint8_t *found_out,
                                                              int reps, double *us) {
  for (int r = -10; r < reps; ++r) {
    const double start = now_us();
    const gh_status status = find(table, keys, n, values_out, found_out, NULL, NULL);
    if (status != GH_OK) return (int)status;
    if (r >= 0) us[r] = now_us() - start;
  }
  return GH_OK;
}
