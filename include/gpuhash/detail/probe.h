/* probe.h - the probing iterator shared by host and device code: windows of consecutive slots
 * chained by double hashing, with a hard cap so that a full table ends in a status instead of
 * a hang (WarpCore's habit).
 *
 * The windows are grouped into regions of 2^shift consecutive windows, and the number of regions
 * is a prime (shift 0: a region is one window, and this is plain double hashing over a prime
 * number of windows). A sequence's step has two parts: an odd offset step inside a region (its low
 * shift bits) and a region step in [1, regions - 1] (the bits above). For its first
 * `local_windows` windows a sequence moves by the offset step alone and stays in the region of its
 * first window; from then on both parts move. An odd prime number of regions and a power of two of
 * windows per region are coprime, so any window_count consecutive windows of that second part are
 * all distinct: the whole table is reachable. The iterator holds only what changes along a
 * sequence; the window count and the locality are the table's, passed in, which keeps kernels'
 * register use (and so the number of resident threads hiding memory latency) in check. */
#ifndef GH_DETAIL_PROBE_H
#define GH_DETAIL_PROBE_H

#include "gpuhash/detail/hd.h"

typedef struct gh_probe {
  uint64_t window;  /* current window index in [0, window_count) */
  uint64_t step;    /* (region step << shift) | offset step */
  uint32_t attempt; /* windows visited before the current one */
} gh_probe;

/* The caller reduces the hashes to their ranges: first_window in [0, window_count), region_step in
 * [1, regions - 1] (1 when there is one region) and offset_step odd and below 2^shift (0 when
 * shift is 0). */
GH_HD gh_probe gh_probe_begin(uint64_t first_window, uint64_t region_step, uint64_t offset_step, unsigned shift) {
  gh_probe p;
  p.window = first_window;
  p.step = (region_step << shift) | offset_step;
  p.attempt = 0;
  return p;
}

GH_HD int gh_probe_done(const gh_probe *p, uint64_t max_attempts) { return p->attempt >= max_attempts; }

/* The offset moves in 32-bit arithmetic (a region has fewer than 2^32 windows); the region part
 * only once the local windows are behind. */
GH_HD void gh_probe_next(gh_probe *p, uint64_t window_count, unsigned shift, uint32_t local_windows) {
  const uint32_t mask = (1u << shift) - 1u;
  const uint32_t offset = ((uint32_t)p->window + (uint32_t)p->step) & mask;
  uint64_t region = p->window & ~(uint64_t)mask;
  p->attempt += 1u;
  if (p->attempt >= local_windows) {
    region += p->step & ~(uint64_t)mask;
    if (region >= window_count) region -= window_count;
  }
  p->window = region | offset;
}

#endif /* GH_DETAIL_PROBE_H */
