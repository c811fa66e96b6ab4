/* registry.h - THE list of the designs this library has: one line per design, nothing else names
 * them. Adding a design = its folder under src/ (defining `gh__design_<name>`, see
 * src/core/design.h) + one line here.
 *
 * Line shape: every entry stands on its own line exactly as `  X(name, ENUM) \` (two spaces, the
 * design's folder name, a comma and one space, its gh_design constant, a space and the line
 * continuation). Build scripts read the list with CMake's file(STRINGS ... REGEX) - the tests'
 * CMakeLists.txt generates its per-design cases from it - so keep that exact shape, one entry per
 * line, and end the list with the comment line below it. (A line that ends in a backslash escapes
 * CMake's list separator: take the names from what file(STRINGS) returns with
 * string(REGEX MATCHALL "X\\([a-z0-9_]+," ...), not by iterating over it.) */
#ifndef GH_REGISTRY_H
#define GH_REGISTRY_H

#define GH_DESIGNS(X) \
  X(warpdrive, GH_WARPDRIVE) \
  X(cuckoo, GH_CUCKOO) \
  X(slab, GH_SLAB) \
  X(dycuckoo, GH_DYCUCKOO) \
  X(hashgraph, GH_HASHGRAPH) \
  /* end of the list */

/* The largest gh_design value of gpuhash.h. Values 1..GH_DESIGN_VALUE_MAX are designs (those not
 * listed above are not built: gh_create answers GH_ERR_UNSUPPORTED); other values are not
 * gh_design values at all (GH_ERR_INVALID_ARGUMENT). */
#define GH_DESIGN_VALUE_MAX GH_HASHGRAPH

#endif /* GH_REGISTRY_H */
