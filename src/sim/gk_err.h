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

/* What each code says to a person using the browser pages, as one whole
 * sentence (web/gamekit/gen_constants.py turns this list into the pages'
 * one table, web/gamekit/constants.js; it refuses a code without one).
 * The pages meet these in a server's ERROR reply or a client call, so
 * they speak of rooms, matches, tokens and files. */
#define GK_ERRNO_SAY(X)                                                        \
  X(EINVAL, "That request was not valid: a setting or value is wrong.")        \
  X(ENOMEM, "The server ran out of memory; try again later.")                  \
  X(EBUSY, "The server was busy with something else; try again.")              \
  X(ENORUN, "No match is running yet.")                                        \
  X(ENOTKEPT, "That step is too old: it is no longer kept.")                   \
  X(ERANGE, "A value is outside its allowed range.")                           \
  X(EPROTO, "A message could not be read: the page and the server may be "     \
            "different versions (reload the page).")                           \
  X(ETRUNC, "A message or file was cut short.")                                \
  X(ECORRUPT, "The data is damaged: its checksum does not match.")             \
  X(EIO, "A file could not be read or written.")                               \
  X(EFULL, "It is full: the room has no free seat, or the server no free "     \
           "room.")                                                            \
  X(EVERSION, "The page and the server speak different versions; reload "      \
              "the page.")                                                     \
  X(ENOTFOUND, "No room has that code: check it, or its match may have "       \
               "ended.")                                                       \
  X(EPARSE, "A setting or file could not be read.")                            \
  X(EMISMATCH, "Two things that must agree do not (a hash, genre or "          \
               "version).")                                                    \
  X(ESTATE, "That cannot be done now: the room has started already, or this "  \
            "page is in a room already.")                                      \
  X(ETOOBIG, "The request is larger than the server accepts.")                 \
  X(EAHEAD, "An input came for a step too far ahead.")                         \
  X(ESTALE, "An input came for a step that is over already.")                  \
  X(EPERM, "That is not allowed here: only the host may do it, or this "       \
           "server does not offer it.")                                        \
  X(EEXIST, "That exists already, or the token was used already.")             \
  X(ECLOSED, "The match has ended, or the server is shutting down.")           \
  X(EINPUT, "No input could be made for a step.")                              \
  X(EEXPIRED, "The token or link has expired.")                                \
  X(ENOTYET, "The token is not valid yet: check the clocks.")                  \
  X(EAUTH, "The token is not from this server, or it was changed.")            \
  X(ENOTOKEN, "This server needs a connect token.")                            \
  X(EGRANT, "The token does not grant this (another room or request).")        \
  X(EROLE, "The token is for another role (a player's or a spectator's).")     \
  X(ELIMIT, "Too many requests or connections: wait a moment and try "         \
            "again.")                                                          \
  X(ETIMEDOUT, "The server did not answer in time.")                           \
  X(EREFUSED, "The other side refused the request.")                           \
  X(EUNAVAILABLE, "The room directory cannot be reached right now; rooms on "  \
                  "this server still work. Try again in a moment.")

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
