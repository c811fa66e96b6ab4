/*
 * gpuhash-bench - reproduces the papers' headline experiments on gpuhash's tables, next to
 * ceilings measured on the same GPU in the same run. See bench/README.md.
 *
 * The first line printed says which backend runs and why. Exit status: 0 success, 1 a
 * measurement failed or a table gave a wrong answer, 2 bad options.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <stdio.h>
#include <time.h>

#include "bench.h"

static double seconds_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  bench_options opts;
  bench_backend backend;
  bench_run run;
  char announce[512];
  int result;

  result = bench_options_parse(argc, argv, &opts);
  if (result < 0) return BENCH_EXIT_OK; /* --help */
  if (result != BENCH_EXIT_OK) return result;
  if (bench_backend_open(&opts, &backend, announce, sizeof announce) != 0) return BENCH_EXIT_FAILED;
  printf("%s\n", announce);
  fflush(stdout);
  if (bench_options_finish(&opts, backend.gh_kind) != BENCH_EXIT_OK) {
    bench_backend_close(&backend);
    return BENCH_EXIT_USAGE;
  }
  if (bench_report_begin(&run, &opts, &backend) != 0) {
    bench_backend_close(&backend);
    return BENCH_EXIT_FAILED;
  }
  printf("gpuhash %u, commit %s, %s run, seed %llu, JSON appended to %s\n", gh_version_number(),
         run.commit, opts.mode_name,
         (unsigned long long)opts.seed, opts.json_path);

  const double started = seconds_now();
  /* Timings are always shown next to ceilings measured in the same run. */
  result = bench_limits_run(&run, &backend, &opts);
  if (result == BENCH_STEP_OK && !opts.limits_only) {
    if (opts.scenarios & BENCH_SCENARIO_WARPDRIVE)
      result = bench_warpdrive_run(&run, &backend, &opts);
    if (result == BENCH_STEP_OK) result = bench_cuckoo_run(&run, &backend, &opts);
    bench_report_summary(&run);
  }
  printf("\n%zu measurements in %.1f s on the %s backend; JSON appended to %s\n", run.record_count,
         seconds_now() - started, backend.name, opts.json_path);
  if (run.broken != 0)
    printf("%u configuration(s) FAILED verification or could not run: see the errors above\n",
           run.broken);
  if (result != BENCH_STEP_OK) printf("the run stopped early on an error: see above\n");

  bench_report_end(&run);
  bench_backend_close(&backend);
  return result == BENCH_STEP_OK && run.broken == 0 ? BENCH_EXIT_OK : BENCH_EXIT_FAILED;
}
