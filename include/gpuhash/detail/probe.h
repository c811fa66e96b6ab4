/* probe.h - the probing iterator shared by host and device code: windows of consecutive slots
 * chained by double hashing, with a hard cap so that a full table ends in a status instead of
 * a hang (WarpCore's habit). The window count is a prime, so every step size in [1, count-1]
 * visits every window before repeating. The iterator holds only what changes along a sequence;
 * the window count and the cap are the table's, passed in, which keeps kernels' register use
 * (and so the number of resident threads hiding memory latency) in check. */
#ifndef GH_DETAIL_PROBE_H
#define GH_DETAIL_PROBE_H

#include "gpuhash/detail/hd.h"

typedef struct gh_probe {
  uint64_t window;  /* current window index in [0, window_count) */
  uint64_t step;    /* distance between successive windows (double hashing) */
  uint32_t attempt; /* windows visited before the current one */
} gh_probe;

/* The caller reduces the two hashes to their ranges: first_window in [0, window_count) and
 * step_minus_one in [0, window_count - 1). */
GH_HD gh_probe gh_probe_begin(uint64_t first_window, uint64_t step_minus_one, uint64_t window_count) {
  gh_probe p;
  p.window = first_window;
  p.step = window_count > 1 ? step_minus_one + 1 : 0;
  p.attempt = 0;
  return p;
}

GH_HD int gh_probe_done(const gh_probe *p, uint64_t max_attempts) { return p->attempt >= max_attempts; }

GH_HD void gh_probe_next(gh_probe *p, uint64_t window_count) {
  p->window += p->step;
  if (p->window >= window_count) p->window -= window_count;
  p->attempt += 1;
}

#endif /* GH_DETAIL_PROBE_H */
