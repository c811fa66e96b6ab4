/* threads.c - the header's promises about threads, for one design on one backend:
 *   "Different tables are independent": several threads, each with a table of its own, insert,
 *   find, erase and validate at the same time, each checked against the keys it gave its table;
 *   gh_last_create_error() is "this thread's": threads whose gh_create fails for different reasons
 *   (and one whose gh_create succeeds) each read their own reason once all of them have created.
 * The threads record what they find; the main thread checks it (the test's CHECK is not made for
 * several threads at once).
 * Usage: threads host|cuda --design NAME [--seed S] */
#define _POSIX_C_SOURCE 200809L /* (pthread barriers) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuhash.h"
#include "test_util.h"

#define THREADS 4
#define ROUNDS 3
#define KEYS 4096

static gh_backend th_backend;
static const tu_design *th_design;
static uint64_t th_seed = 0x7472656164730001ull;
static pthread_barrier_t created;

typedef struct th_worker {
  int index;
  char problem[512]; /* the first thing found wrong ("" when none) */
  char create_error[256];
} th_worker;

static void note(th_worker *w, const char *what, gh_table *t, gh_status st) {
  if (w->problem[0] == '\0')
    snprintf(w->problem, sizeof w->problem, "thread %d: %s: %s (%s)", w->index, what, gh_status_name(st),
             t ? gh_last_error(t) : gh_last_create_error());
}

/* The reasons the threads' first gh_create fails for: each names its own field (the last thread's
 * create succeeds, and its reason must stay ""). */
static const char *const bad_fields[THREADS - 1] = {"key_bits", "value_bits", "variant"};

static void make_bad(gh_config *c, int index) {
  if (index == 0) c->key_bits = 7;
  if (index == 1) c->value_bits = 5;
  if (index == 2) c->variant = (gh_variant)99;
}

/* One round: KEYS keys of this thread's own, inserted, found, half erased (designs with erase),
 * found again; the table validated after each step. */
static void one_round(th_worker *w, gh_table *t, tu_rng *rng, int round) {
  uint64_t keys[KEYS], values[KEYS], got[KEYS];
  uint8_t found[KEYS];
  tu_gen_unique_keys(rng, 32, KEYS, NULL, keys);
  for (int i = 0; i < KEYS; ++i) values[i] = (uint64_t)(w->index * 1000003 + round * KEYS + i) & 0xFFFFFFFFu;
  void *pk = tu_pack(keys, KEYS, 32), *pv = tu_pack(values, KEYS, 32), *out = tu_xmalloc(KEYS * 4);
  const int erases = tu_design_has(th_design, GH_CAP_ERASE);
  gh_status st = gh_clear(t, NULL);
  if (st == GH_OK) st = gh_insert(t, pk, pv, KEYS, GH_OVERWRITE, NULL, NULL);
  if (st != GH_OK) note(w, "gh_clear + gh_insert", t, st);
  if (st == GH_OK && (st = gh_validate(t)) != GH_OK) note(w, "gh_validate after the insert", t, st);
  if (st == GH_OK && (st = gh_find(t, pk, KEYS, out, found, NULL, NULL)) != GH_OK) note(w, "gh_find", t, st);
  if (st == GH_OK) {
    tu_unpack(out, KEYS, 32, got);
    for (int i = 0; i < KEYS && w->problem[0] == '\0'; ++i)
      if (!found[i] || got[i] != values[i])
        snprintf(w->problem, sizeof w->problem, "thread %d round %d: key 0x%llx found %u with 0x%llx, it holds 0x%llx",
                 w->index, round, (unsigned long long)keys[i], found[i], (unsigned long long)got[i],
                 (unsigned long long)values[i]);
  }
  if (st == GH_OK && erases) {
    uint64_t erased = 0, size = 0;
    if ((st = gh_erase(t, pk, KEYS / 2, NULL, &erased, NULL)) != GH_OK) note(w, "gh_erase", t, st);
    if (st == GH_OK && (st = gh_validate(t)) != GH_OK) note(w, "gh_validate after the erase", t, st);
    if (st == GH_OK && (st = gh_size(t, &size)) == GH_OK && (erased != KEYS / 2 || size != KEYS - KEYS / 2) &&
        w->problem[0] == '\0')
      snprintf(w->problem, sizeof w->problem, "thread %d round %d: erased %llu of %d keys, size %llu after", w->index,
               round, (unsigned long long)erased, KEYS / 2, (unsigned long long)size);
    if (st == GH_OK && (st = gh_contains(t, pk, KEYS, found, NULL)) != GH_OK) note(w, "gh_contains", t, st);
    for (int i = 0; st == GH_OK && i < KEYS && w->problem[0] == '\0'; ++i)
      if (found[i] != (i >= KEYS / 2))
        snprintf(w->problem, sizeof w->problem, "thread %d round %d: key %d (of %d, the first half erased) found %u",
                 w->index, round, i, KEYS, found[i]);
  }
  free(pk);
  free(pv);
  free(out);
}

static void *worker(void *arg) {
  th_worker *w = (th_worker *)arg;
  gh_config c = gh_config_default(th_design->design);
  c.backend = th_backend;
  c.key_bits = 32;
  c.value_bits = 32;
  c.capacity = 2 * KEYS;
  gh_table *t = NULL;
  /* Every thread creates (the first three with a bad field), then all read their own reasons. */
  gh_config first = c;
  if (w->index < THREADS - 1) make_bad(&first, w->index);
  gh_status st = gh_create(&first, &t);
  pthread_barrier_wait(&created);
  snprintf(w->create_error, sizeof w->create_error, "%s", gh_last_create_error());
  if (w->index < THREADS - 1) {
    if (st == GH_OK || t != NULL) snprintf(w->problem, sizeof w->problem, "thread %d: a bad config was created", w->index);
    gh_destroy(t);
    t = NULL;
    st = gh_create(&c, &t);
  }
  if (st != GH_OK) {
    note(w, "gh_create", NULL, st);
    return NULL;
  }
  tu_rng rng = tu_rng_make(tu_mix_seed(th_seed, (uint64_t)w->index, 0, 0));
  for (int round = 0; round < ROUNDS && w->problem[0] == '\0'; ++round) one_round(w, t, &rng, round);
  gh_destroy(t);
  return NULL;
}

int main(int argc, char **argv) {
  if (!tu_parse_case_args(argc, argv, &th_backend, &th_design, NULL, &th_seed)) return tu_case_usage(argv[0]);
  tu_skip_unless_backend_usable(th_backend);
  tu_set_context("threads %s %s seed 0x%016llx", tu_backend_name(th_backend), th_design->name,
                 (unsigned long long)th_seed);
  if (!tu_design_accepts_variant(th_design, GH_VARIANT_MAP)) {
    printf("threads %s: no map variant; nothing to run\n", th_design->name);
    return tu_finish("threads");
  }
  th_worker workers[THREADS];
  pthread_t threads[THREADS];
  REQUIRE(pthread_barrier_init(&created, NULL, THREADS) == 0, "pthread_barrier_init");
  for (int i = 0; i < THREADS; ++i) {
    memset(&workers[i], 0, sizeof workers[i]);
    workers[i].index = i;
    REQUIRE(pthread_create(&threads[i], NULL, worker, &workers[i]) == 0, "pthread_create %d", i);
  }
  for (int i = 0; i < THREADS; ++i) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&created);
  tu_set_phase("what each thread found");
  for (int i = 0; i < THREADS; ++i) {
    CHECK(workers[i].problem[0] == '\0', "%s", workers[i].problem);
    if (i < THREADS - 1)
      CHECK(strstr(workers[i].create_error, bad_fields[i]) != NULL,
            "thread %d's gh_create failed for its %s, but its gh_last_create_error() says \"%s\"", i, bad_fields[i],
            workers[i].create_error);
    else
      CHECK(workers[i].create_error[0] == '\0',
            "thread %d's gh_create succeeded while the others' failed, but its gh_last_create_error() says \"%s\"", i,
            workers[i].create_error);
  }
  printf("threads %s %s: %d threads, a table each, %d rounds of %d keys; each thread's create error its own\n",
         tu_backend_name(th_backend), th_design->name, THREADS, ROUNDS, KEYS);
  return tu_finish("threads");
}
