/* probe.h - the probing iterator shared by host and device code: windows of consecutive slots
 * chained by double hashing, with a hard cap so that a full table ends in a status instead of
 * a hang (WarpCore's habit). The window count is a prime, so every step size in [1, count-1]
 * visits every window before repeating. */
#ifndef GH_CORE_PROBE_H
#define GH_CORE_PROBE_H

#include "core/hd.h"

typedef struct gh_probe {
  uint64_t window;       /* current window index in [0, window_count) */
  uint64_t step;         /* distance between successive windows (double hashing) */
  uint64_t window_count; /* number of windows */
  uint64_t attempt;      /* windows visited before the current one */
  uint64_t max_attempts; /* probe limit */
} gh_probe;

/* first_hash chooses the first window and step_hash the step; both uniformly distributed and
 * already reduced to their ranges by the caller's choice of gh_range32/gh_range64. */
GH_HD gh_probe gh_probe_begin(uint64_t first_window, uint64_t step_minus_one,
                              uint64_t window_count, uint64_t max_attempts) {
  gh_probe p;
  p.window = first_window;
  p.step = window_count > 1 ? step_minus_one + 1 : 0;
  p.window_count = window_count;
  p.attempt = 0;
  p.max_attempts = max_attempts;
  return p;
}

GH_HD int gh_probe_done(const gh_probe *p) { return p->attempt >= p->max_attempts; }

GH_HD void gh_probe_next(gh_probe *p) {
  p->window += p->step;
  if (p->window >= p->window_count) p->window -= p->window_count;
  p->attempt += 1;
}

#endif /* GH_CORE_PROBE_H */
