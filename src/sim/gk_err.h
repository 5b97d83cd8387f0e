/* gk_err.h: the project's one table of error codes.
 *
 * Every function that can fail returns 0 or one of these negative codes, the
 * way libuv does. gk_strerror() turns a code into a short English phrase.
 * A code names a kind of failure; the detail (file, offset, key) travels in
 * the caller-supplied message buffer where a function takes one.
 */
#ifndef GK_ERR_H
#define GK_ERR_H

#define GK_ERRNO_MAP(X)                                                        \
  X(EINVAL, -1, "invalid argument")                                            \
  X(ENOMEM, -2, "out of memory")                                               \
  X(EBUSY, -3, "not allowed while an event or sample is being delivered")      \
  X(ENORUN, -4, "no run has been started")                                     \
  X(ENOTKEPT, -5, "step hash is no longer kept")                               \
  X(ERANGE, -6, "value out of range")                                          \
  X(EPROTO, -7, "malformed message")                                           \
  X(ETRUNC, -8, "input is truncated")                                          \
  X(ECORRUPT, -9, "checksum mismatch: data is corrupt")                        \
  X(EIO, -10, "input/output error")                                            \
  X(EFULL, -11, "buffer or table is full")                                     \
  X(EVERSION, -12, "unsupported version")                                      \
  X(ENOTFOUND, -13, "not found")                                               \
  X(EPARSE, -14, "parse error")                                                \
  X(EMISMATCH, -15, "mismatch")                                                \
  X(ESTATE, -16, "operation not valid in the current state")                   \
  X(ETOOBIG, -17, "input exceeds the size limit")                              \
  X(EAHEAD, -18, "step is too far ahead")                                      \
  X(ESTALE, -19, "step is already confirmed or released")                      \
  X(EPERM, -20, "not permitted")                                               \
  X(EEXIST, -21, "already exists")                                             \
  X(ECLOSED, -22, "closed")                                                    \
  X(EINPUT, -23, "input source failed to produce the step's input")            \
  X(EEXPIRED, -24, "expired")                                                  \
  X(ENOTYET, -25, "not valid yet (issued in the future)")                      \
  X(EAUTH, -26, "authentication failed (wrong key or tampered data)")          \
  X(ENOTOKEN, -27, "a connect token is required")                              \
  X(EGRANT, -28, "the token does not grant this request")                      \
  X(EROLE, -29, "the token grants another role")                               \
  X(ELIMIT, -30, "rate or connection limit reached")                           \
  X(ETIMEDOUT, -31, "timed out")                                               \
  X(EREFUSED, -32, "refused by the other side")                                \
  X(EUNAVAILABLE, -33, "a service this needs is unreachable")

enum {
#define GK__ERR_ENUM(name, code, msg) GK_##name = (code),
  GK_ERRNO_MAP(GK__ERR_ENUM)
#undef GK__ERR_ENUM
};

/* Returns a static string for a code from GK_ERRNO_MAP, "success" for 0, and
 * "unknown error" for anything else. Never returns NULL. */
const char *gk_strerror(int err);

/* Returns the symbolic name ("GK_EINVAL") of a code, or "GK_UNKNOWN". */
const char *gk_err_name(int err);

/* GK_PRINTF(fmt, args) marks a printf-like function (the ones that write
 * the messages above): parameter `fmt` (1-based) is its format, `args` its
 * first variadic argument, or 0 if it takes a va_list. The compiler then
 * checks every caller's format against its arguments, and the function
 * may hand its format on to vsnprintf (which -Wformat=2 refuses, under
 * clang, for a format that is neither a literal nor such a parameter). */
#if defined(__GNUC__)
#define GK_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define GK_PRINTF(fmt, args)
#endif

#endif
