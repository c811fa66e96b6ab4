/*
 * bench_cuda_stub.c - bench_cuda.h for builds without CUDA (GH_HAVE_CUDA OFF): every function
 * fails with one clear message, so the host backend links and runs unchanged.
 */
#include <string.h>

#include "bench_cuda.h"

static const char BCU_STUB_MESSAGE[] =
    "gpuhash was built without CUDA (GH_HAVE_CUDA OFF): the CUDA backend is not available";

static int bcu_stub_fail(void) { return -1; }

int bcu_init(int device, bcu_device_info *info) {
  (void)device;
  memset(info, 0, sizeof *info);
  return bcu_stub_fail();
}

void bcu_shutdown(void) {}

const char *bcu_error(void) { return BCU_STUB_MESSAGE; }

void *bcu_stream(void) { return NULL; }

int bcu_memory(size_t *free_bytes, size_t *total_bytes) {
  *free_bytes = 0;
  *total_bytes = 0;
  return bcu_stub_fail();
}

int bcu_alloc(void **ptr, size_t bytes) {
  (void)bytes;
  *ptr = NULL;
  return bcu_stub_fail();
}

int bcu_free(void *ptr) { return ptr == NULL ? 0 : bcu_stub_fail(); }

int bcu_memset(void *ptr, int byte, size_t bytes) {
  (void)ptr, (void)byte, (void)bytes;
  return bcu_stub_fail();
}

int bcu_timer_start(void) { return bcu_stub_fail(); }

int bcu_timer_stop(double *ms) {
  *ms = 0.0;
  return bcu_stub_fail();
}

int bcu_generate(void *out, uint64_t n, bench_gen_spec spec, uint8_t *rank_map) {
  (void)out, (void)n, (void)spec, (void)rank_map;
  return bcu_stub_fail();
}

int bcu_count_differ(const void *a, const void *b, uint64_t value, uint64_t n, unsigned elem_bytes,
                     uint64_t *count) {
  (void)a, (void)b, (void)value, (void)n, (void)elem_bytes;
  *count = 0;
  return bcu_stub_fail();
}

int bcu_sorted_temp_bytes(uint64_t n, unsigned key_bytes, unsigned value_bytes, size_t *bytes) {
  (void)n, (void)key_bytes, (void)value_bytes;
  *bytes = 0;
  return bcu_stub_fail();
}

int bcu_sorted_build(bench_sorted *s, const void *keys_in, const void *values_in) {
  (void)s, (void)keys_in, (void)values_in;
  return bcu_stub_fail();
}

int bcu_sorted_runs(bench_sorted *s, int with_offsets) {
  (void)s, (void)with_offsets;
  return bcu_stub_fail();
}

int bcu_sorted_find(const void *keys, const void *values, uint64_t m, unsigned key_bytes,
                    unsigned out_bytes, const void *queries, uint64_t n, void *values_out,
                    uint8_t *found_out) {
  (void)keys, (void)values, (void)m, (void)key_bytes, (void)out_bytes, (void)queries, (void)n,
      (void)values_out, (void)found_out;
  return bcu_stub_fail();
}

int bcu_sorted_find_all(const bench_sorted *s, const void *queries, uint64_t n,
                        uint64_t *offsets_out, uint64_t *positions, void *values_out,
                        uint64_t values_capacity, uint64_t *total) {
  (void)s, (void)queries, (void)n, (void)offsets_out, (void)positions, (void)values_out,
      (void)values_capacity;
  *total = 0;
  return bcu_stub_fail();
}

int bcu_limit_prepare(bcu_limit which, void *buffer, size_t bytes, uint64_t seed,
                      bcu_limit_plan *plan) {
  (void)which, (void)buffer, (void)bytes, (void)seed;
  memset(plan, 0, sizeof *plan);
  return bcu_stub_fail();
}

int bcu_limit_reset(bcu_limit which, void *buffer, size_t bytes) {
  (void)which, (void)buffer, (void)bytes;
  return bcu_stub_fail();
}

int bcu_limit_launch(bcu_limit which, void *buffer, size_t bytes, uint64_t seed) {
  (void)which, (void)buffer, (void)bytes, (void)seed;
  return bcu_stub_fail();
}

int bcu_limit_verify(bcu_limit which, void *buffer, size_t bytes) {
  (void)which, (void)buffer, (void)bytes;
  return bcu_stub_fail();
}
