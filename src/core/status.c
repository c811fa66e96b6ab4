/* status.c - names and texts of gh_status, generated from GH_STATUS_LIST. */
#include "gpuhash.h"

const char *gh_status_name(gh_status status) {
  switch (status) {
#define GH_STATUS_NAME_CASE(name, value, text) \
  case name:                                   \
    return #name;
    GH_STATUS_LIST(GH_STATUS_NAME_CASE)
#undef GH_STATUS_NAME_CASE
  }
  return "GH_UNKNOWN_STATUS";
}

const char *gh_status_str(gh_status status) {
  switch (status) {
#define GH_STATUS_TEXT_CASE(name, value, text) \
  case name:                                   \
    return text;
    GH_STATUS_LIST(GH_STATUS_TEXT_CASE)
#undef GH_STATUS_TEXT_CASE
  }
  return "unknown status code";
}

unsigned gh_version_number(void) { return GH_VERSION_NUMBER; }
