/* gk_err.c: names and messages for the codes in gk_err.h. */
#include "gk_err.h"

const char *gk_strerror(int err) {
  switch (err) {
  case 0:
    return "success";
#define GK__ERR_MSG(name, code, msg)                                           \
  case GK_##name:                                                              \
    return msg;
    GK_ERRNO_MAP(GK__ERR_MSG)
#undef GK__ERR_MSG
  default:
    return "unknown error";
  }
}

const char *gk_err_name(int err) {
  switch (err) {
  case 0:
    return "GK_OK";
#define GK__ERR_NAME(name, code, msg)                                          \
  case GK_##name:                                                              \
    return "GK_" #name;
    GK_ERRNO_MAP(GK__ERR_NAME)
#undef GK__ERR_NAME
  default:
    return "GK_UNKNOWN";
  }
}
