/* dycuckoo_table.c - what both backends of the DyCuckoo design share: config checks, sizing, the
 * subtable choice of new keys (work in progress on branch wip/dycuckoo, docs/dycuckoo-plan.md). */
#include <stdio.h>
#include <string.h>

#include "core/toolkit.h"
#include "dycuckoo/dycuckoo_table.h"

#define GH_DY_MIN_TABLES 2u

gh_dy_geometry gh__dy_geometry(const gh_config *c) {
  gh_dy_geometry g;
  memset(&g, 0, sizeof g);
  g.key_bits = c->key_bits;
  g.value_bytes = c->value_bits / 8u;
  g.tables = c->hash_functions;
  g.slots = GH_DY_LINE_BYTES / (c->key_bits / 8u);
  /* Equal subtables, enough buckets for capacity keys at fill_max (at least one each). */
  const double keys_per_table = (double)c->capacity / (double)g.tables;
  uint64_t buckets = (uint64_t)(keys_per_table / ((double)g.slots * c->fill_max)) + 1u;
  for (unsigned i = 0; i < g.tables; ++i) {
    g.buckets[i] = buckets;
    g.seed[i] = gh_fmix64(c->seed + 0x9E3779B97F4A7C15ull * (i + 1u));
  }
  g.choice_seed = gh_fmix64(c->seed ^ 0xD1B54A32D192ED03ull);
  const unsigned long long none[GH_DY_MAX_TABLES] = {0};
  gh__dy_set_choice(&g, none);
  return g;
}

void gh__dy_set_choice(gh_dy_geometry *g, const unsigned long long *keys) {
  double weight[GH_DY_MAX_TABLES], total = 0.0, sum = 0.0;
  for (unsigned i = 0; i < g->tables; ++i) {
    const double m = (double)keys[i], pairs = m * (m - 1.0) / 2.0;
    weight[i] = (double)gh_dy_table_slots(g, i) / (pairs < 1.0 ? 1.0 : pairs);
    total += weight[i];
  }
  for (unsigned i = 0; i < g->tables; ++i) {
    sum += weight[i];
    g->choose[i] = i + 1 == g->tables ? (1ull << 32) : (uint64_t)(sum / total * 4294967296.0);
  }
}

size_t gh__dy_subtable_bytes(const gh_dy_geometry *g, uint64_t buckets) {
  return (size_t)buckets * (GH_DY_LINE_BYTES + (size_t)g->slots * g->value_bytes + sizeof(uint32_t));
}

/* The fields this design reads: d (hash_functions) and the filled-factor bounds. */
gh_status gh__dy_check_config(const gh_config *c, char *message, size_t size);
gh_status gh__dy_check_config(const gh_config *c, char *message, size_t size) {
  if (c->hash_functions < GH_DY_MIN_TABLES || c->hash_functions > GH_DY_MAX_TABLES) {
    if (size) snprintf(message, size, "hash_functions = %u: dycuckoo has 2..8 subtables", c->hash_functions);
    return GH_ERR_INVALID_ARGUMENT;
  }
  const double d = (double)c->hash_functions;
  if (!(c->fill_max > 0.0 && c->fill_max <= 0.95)) {
    if (size) snprintf(message, size, "fill_max = %g must be in (0, 0.95]", c->fill_max);
    return GH_ERR_INVALID_ARGUMENT;
  }
  /* One upsize takes theta from fill_max to at least fill_max * d / (d + 1) (Li et al. 5.1): a
   * lower bound above that could never hold. */
  if (!(c->fill_min > 0.0 && c->fill_min < c->fill_max * d / (d + 1.0))) {
    if (size)
      snprintf(message, size, "fill_min = %g must be above 0 and below fill_max * d / (d + 1) = %g (fill_max %g, d %u)",
               c->fill_min, c->fill_max * d / (d + 1.0), c->fill_max, c->hash_functions);
    return GH_ERR_INVALID_ARGUMENT;
  }
  return GH_OK;
}
