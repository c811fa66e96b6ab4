/*
 * bench_limits.c - the ceilings every result is compared with, measured on the same GPU in the
 * same run (design.md section 4): coalesced copy, random 32-byte sector reads, random 64-bit CAS
 * into distinct slots, random 32-bit atomicAdd. The kernels are in bench_cuda.cu; this file
 * sizes the buffer, times them through bench_measure() and reports them.
 */
#include <math.h>
#include <stdio.h>

#include "bench.h"

/* 2 GiB: 40x the 50 MB L2 of an H100, so random accesses miss the cache, and the copy moves
 * enough bytes (1 GiB each way) that launch overhead is noise. */
#define BENCH_LIMIT_BUFFER_BYTES ((size_t)1 << 31)
/* Left free for the CUDA context and the library's own scratch. */
#define BENCH_DEVICE_RESERVE_BYTES ((size_t)256 << 20)
/* Ceilings always get at least this many warm-up launches, even with --warmup 0. */
#define BENCH_LIMIT_MIN_WARMUP 1u

typedef struct limit_context {
  bcu_limit which;
  void *buffer;
  size_t bytes;
  uint64_t seed;
} limit_context;

static int limit_fail(const char *what, bcu_limit which) {
  return bench_error("%s of %s: %s", what, bench_limit_names[which], bcu_error());
}

static int limit_setup(void *context) {
  limit_context *c = context;
  return bcu_limit_reset(c->which, c->buffer, c->bytes) == 0 ? BENCH_STEP_OK
                                                             : limit_fail("reset", c->which);
}

static int limit_launch(void *context) {
  limit_context *c = context;
  return bcu_limit_launch(c->which, c->buffer, c->bytes, c->seed) == 0
             ? BENCH_STEP_OK
             : limit_fail("launch", c->which);
}

static int limit_verify(void *context) {
  limit_context *c = context;
  return bcu_limit_verify(c->which, c->buffer, c->bytes) == 0 ? BENCH_STEP_OK
                                                              : limit_fail("check", c->which);
}

static const bench_steps LIMIT_STEPS = {limit_setup, limit_launch, limit_verify};

int bench_limits_run(bench_run *run, const bench_backend *backend, const bench_options *opts) {
  const unsigned warmup =
      opts->warmup > BENCH_LIMIT_MIN_WARMUP ? opts->warmup : BENCH_LIMIT_MIN_WARMUP;
  limit_context context = {BCU_LIMIT_COPY, NULL, BENCH_LIMIT_BUFFER_BYTES, opts->seed};
  size_t free_bytes = 0;
  char title[512];
  int result = BENCH_STEP_OK;

  if (backend->gh_kind != GH_BACKEND_CUDA) {
    printf(
        "\nceilings: not measured: they need a GPU (this is the host backend), so results "
        "carry no fraction of ceiling\n");
    return BENCH_STEP_OK;
  }
  if (backend->memory(&free_bytes) != 0)
    return bench_error("reading free device memory: %s", backend->error());
  if (free_bytes < context.bytes + BENCH_DEVICE_RESERVE_BYTES)
    return bench_error("the ceilings need %zu MiB of free device memory; %zu MiB are free",
                       (context.bytes + BENCH_DEVICE_RESERVE_BYTES) >> 20, free_bytes >> 20);
  if (bench_alloc(backend, &context.buffer, context.bytes, "the ceiling buffer") != 0)
    return BENCH_STEP_FATAL;

  snprintf(title, sizeof title,
           "ceilings on %s, measured now: %zu MiB buffer, median of %u after %u warm-up",
           backend->device, context.bytes >> 20, opts->reps, warmup);
  bench_report_header(title);
  for (int which = 0; which < BCU_LIMIT_COUNT && result == BENCH_STEP_OK; ++which) {
    bcu_limit_plan plan;
    bench_record record = {0};
    context.which = (bcu_limit)which;
    if (bcu_limit_prepare(context.which, context.buffer, context.bytes, opts->seed, &plan) != 0) {
      result = limit_fail("preparation", context.which);
      break;
    }
    result = bench_measure(backend, &LIMIT_STEPS, &context, warmup, opts->reps, &record.stats);
    if (result != BENCH_STEP_OK) break;
    record.design = "limits";
    record.op = bench_limit_names[which];
    record.n = plan.ops;
    record.key_bits = record.value_bits = -1;
    record.load_factor = NAN;
    record.rate = (double)plan.ops / (record.stats.ms_median * 1e-3) / 1e9;
    record.unit = which == BCU_LIMIT_COPY ? "GB/s" : "Gops/s";
    record.ceiling = record.ceiling_alt = -1;
    record.table_bytes = plan.table_bytes;
    run->ceilings.value[which] = record.rate;
    if (bench_report_add(run, &record) != 0) result = BENCH_STEP_FATAL;
  }
  run->ceilings.measured = result == BENCH_STEP_OK;
  if (backend->release(context.buffer) != 0 && result == BENCH_STEP_OK)
    result = bench_error("freeing the ceiling buffer: %s", backend->error());
  /* A ceiling that fails is a device problem, never a table's: the run cannot go on. */
  return result == BENCH_STEP_OK ? BENCH_STEP_OK : BENCH_STEP_FATAL;
}
