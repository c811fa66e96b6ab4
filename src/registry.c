/* registry.c - the table of design descriptors, generated from the one list in registry.h. */
#include "registry.h"

#include "core/design.h"

#define GH_DESIGN_DECLARE(name, id) extern const gh_design_descriptor gh__design_##name;
GH_DESIGNS(GH_DESIGN_DECLARE)
#undef GH_DESIGN_DECLARE

/* Each entry pairs the list's gh_design value with the design's descriptor, so that a descriptor
 * filed under another design's value is caught (gh__design_lookup answers NULL for it). */
typedef struct gh_registry_entry {
  gh_design id;
  const gh_design_descriptor *descriptor;
} gh_registry_entry;

static const gh_registry_entry registry[] = {
#define GH_DESIGN_ENTRY(name, id) {id, &gh__design_##name},
    GH_DESIGNS(GH_DESIGN_ENTRY)
#undef GH_DESIGN_ENTRY
};

#define GH_REGISTRY_SIZE (sizeof registry / sizeof registry[0])

const gh_design_descriptor *gh__design_lookup(gh_design id) {
  for (size_t i = 0; i < GH_REGISTRY_SIZE; ++i)
    if (registry[i].id == id && registry[i].descriptor->id == id) return registry[i].descriptor;
  return NULL;
}

size_t gh__design_count(void) { return GH_REGISTRY_SIZE; }

const gh_design_descriptor *gh__design_at(size_t index) {
  return index < GH_REGISTRY_SIZE ? registry[index].descriptor : NULL;
}

const gh_table_ops *gh__design_ops(const gh_design_descriptor *design, gh_backend backend) {
  if (design == NULL) return NULL;
  switch (backend) {
    case GH_BACKEND_HOST: return design->host_ops;
    case GH_BACKEND_CUDA: return design->cuda_ops;
    default: return NULL;
  }
}
