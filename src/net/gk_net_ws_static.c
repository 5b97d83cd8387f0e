/* gk_net_ws_static.c: static files beside the WebSocket path (the
 * listener's opts.static_dir; gk_net_ws.h says what is served).
 *
 * A request for any path but the WebSocket one lands here when a
 * directory is set. Checks, in order, each with its status and counter:
 *   405  not GET or HEAD (Allow: GET, HEAD)                 http_method
 *   414  a decoded path over GK_NET_WS_URL_MAX bytes        http_long
 *   400  a body (Content-Length other than 0, Transfer-Encoding), a byte
 *        outside [A-Za-z0-9._~-/] (bad or NUL %-escapes are made such a
 *        byte by gk__ws_unescape), an empty, "." or ".." segment
 *                                                          http_bad
 *   404  a segment beginning with '.', no such file, a symlink that
 *        resolves outside the directory, not a regular file or directory
 *                                                          http_missing
 *   403  a file over opts.static_max bytes                 http_big
 *   301  a directory without its '/' (Location: path + '/')
 *   304  If-None-Match equal to the file's ETag            http_304
 *   200  the file (sendfile through libmicrohttpd)         http_ok
 * A path ending in '/' means its index.html; no directory is ever
 * listed. The file is resolved with realpath() and must lie under the
 * directory's own realpath (taken at init), then opened O_NOFOLLOW and
 * checked with fstat: a symlink inside the tree that points inside it
 * works, one that leaves it is a 404. Every answer has Cache-Control:
 * no-cache (revalidate: the ETag makes that a 304) and
 * X-Content-Type-Options: nosniff; the MIME type is from the extension
 * (unknown: application/octet-stream).
 *
 * The file is opened and fstat'ed on the loop thread (two metadata
 * calls); its bytes are read on libuv's thread pool, FILE_BLOCK at a
 * time (uv_fs_read), never on the loop: libmicrohttpd asks for bytes
 * (file_reader), gets those of the block in hand, and while the next one
 * is being read its connection is suspended and resumed when the block
 * is there. So a slow disk or a large file delays that answer only, not
 * the rooms. opts.static_max (gk-server: websocket.static_max_bytes) caps
 * a file's size all the same.
 */
#define _XOPEN_SOURCE 700 /* realpath (XSI); st_mtim comes with it */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>
#include <uv.h>

#include "gk_err.h"
#include "gk_net_ws_internal.h"

#define BAD_BYTE ((char)1) /* what a NUL or malformed %-escape decodes to */

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

size_t gk__ws_unescape(void *cls, struct MHD_Connection *mc, char *s) {
  (void)cls;
  (void)mc;
  char *out = s;
  for (const char *p = s; *p != '\0'; p++) {
    if (*p != '%') {
      *out++ = *p;
      continue;
    }
    int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
    if (hi < 0 || lo < 0) {
      *out++ = BAD_BYTE; /* the '%' only; what follows is read as is */
      continue;
    }
    char c = (char)(hi << 4 | lo);
    if (c == '\0') c = BAD_BYTE;
    *out++ = c;
    p += 2;
  }
  *out = '\0';
  return (size_t)(out - s);
}

static const struct {
  const char *ext, *type;
} mime_table[] = {
    {"html", "text/html; charset=utf-8"},
    {"htm", "text/html; charset=utf-8"},
    {"js", "text/javascript; charset=utf-8"},
    {"mjs", "text/javascript; charset=utf-8"},
    {"wasm", "application/wasm"},
    {"css", "text/css; charset=utf-8"},
    {"json", "application/json"},
    {"map", "application/json"},
    {"png", "image/png"},
    {"svg", "image/svg+xml"},
    {"ico", "image/x-icon"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"webp", "image/webp"},
    {"txt", "text/plain; charset=utf-8"},
    {"md", "text/plain; charset=utf-8"},
};

const char *gk__ws_mime(const char *name) {
  const char *slash = strrchr(name, '/');
  const char *dot = strrchr(slash != NULL ? slash : name, '.');
  if (dot != NULL)
    for (size_t i = 0; i < sizeof mime_table / sizeof mime_table[0]; i++)
      if (strcasecmp(dot + 1, mime_table[i].ext) == 0)
        return mime_table[i].type;
  return "application/octet-stream";
}

static int url_char_ok(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
         c == '~' || c == '/';
}

/* 0: a clean path; 400 or 404 (a hidden segment) if not. */
static unsigned path_check(const char *url) {
  if (url[0] != '/') return MHD_HTTP_BAD_REQUEST;
  for (const char *p = url; *p != '\0'; p++)
    if (!url_char_ok((unsigned char)*p)) return MHD_HTTP_BAD_REQUEST;
  unsigned hidden = 0;
  for (const char *seg = url + 1;; seg++) {
    const char *end = strchr(seg, '/');
    size_t n = end != NULL ? (size_t)(end - seg) : strlen(seg);
    if (n == 0 && end != NULL) return MHD_HTTP_BAD_REQUEST; /* "//" */
    if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
      return MHD_HTTP_BAD_REQUEST;
    if (n > 0 && seg[0] == '.') hidden = MHD_HTTP_NOT_FOUND;
    if (end == NULL) break;
    seg = end;
  }
  return hidden;
}

/* Adds the headers every answer of this file has. */
static void common_headers(struct MHD_Response *r) {
  MHD_add_response_header(r, "Cache-Control", "no-cache");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
}

static enum MHD_Result answer(struct MHD_Connection *mc, unsigned status,
                              const char *text, uint64_t *counter) {
  (*counter)++;
  struct MHD_Response *r = MHD_create_response_from_buffer(
      strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
  if (r == NULL) return MHD_NO;
  common_headers(r);
  MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
    MHD_add_response_header(r, "Allow", "GET, HEAD");
  enum MHD_Result rc = MHD_queue_response(mc, status, r);
  MHD_destroy_response(r);
  return rc;
}

static enum MHD_Result redirect(struct MHD_Connection *mc, const char *url,
                                uint64_t *counter) {
  char loc[GK_NET_WS_URL_MAX + 2];
  snprintf(loc, sizeof loc, "%s/", url); /* clean bytes only: no escaping */
  (*counter)++;
  struct MHD_Response *r =
      MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
  if (r == NULL) return MHD_NO;
  common_headers(r);
  MHD_add_response_header(r, "Location", loc);
  enum MHD_Result rc = MHD_queue_response(mc, MHD_HTTP_MOVED_PERMANENTLY, r);
  MHD_destroy_response(r);
  return rc;
}

/* The file's realpath under the root into `real`; 0, or 404. */
static unsigned resolve(const gk_net_ws *w, const char *url, char *real) {
  char path[PATH_MAX];
  size_t ulen = strlen(url);
  int n = snprintf(path, sizeof path, "%s%s%s", w->static_root, url,
                   url[ulen - 1] == '/' ? "index.html" : "");
  if (n < 0 || (size_t)n >= sizeof path || realpath(path, real) == NULL)
    return MHD_HTTP_NOT_FOUND;
  size_t rl = w->static_len;
  if (strncmp(real, w->static_root, rl) != 0 ||
      (real[rl] != '/' && !(real[rl] == '\0' && url[ulen - 1] != '/')))
    return MHD_HTTP_NOT_FOUND; /* a symlink out of the tree */
  return 0;
}

/* --- a file's bytes, from the thread pool --------------------------------
 */

#define FILE_BLOCK (64u << 10)

struct gk__ws_file {
  uv_fs_t req;
  gk_net_ws *w;
  struct MHD_Connection *mc;
  struct gk__ws_file *next, **prev; /* in w->files while MHD holds it */
  int fd;
  uint64_t size;
  uint64_t at;   /* the file offset of buf[0] */
  size_t have;   /* bytes of buf read from `at` */
  int reading;   /* a read is on the pool (it owns buf) */
  int suspended; /* the connection waits for that read */
  int gone;      /* libmicrohttpd let the answer go: free on the read's end */
  int failed;
  char buf[FILE_BLOCK];
};

static void file_free(struct gk__ws_file *f) {
  close(f->fd);
  free(f);
}

static void on_read(uv_fs_t *req) {
  struct gk__ws_file *f = (struct gk__ws_file *)req; /* req is first */
  ssize_t r = req->result;
  uv_fs_req_cleanup(req);
  f->reading = 0;
  if (f->gone) {
    file_free(f);
    return;
  }
  if (r <= 0)
    f->failed = 1; /* an error, or the file shrank: the answer is cut */
  else
    f->have = (size_t)r;
  if (f->suspended) {
    f->suspended = 0;
    MHD_resume_connection(f->mc);
    gk__ws_kick_mhd(f->w);
  }
}

/* Starts the read of the block at `pos` into buf. */
static void file_read(struct gk__ws_file *f, uint64_t pos) {
  uint64_t left = f->size - pos;
  uv_buf_t b =
      uv_buf_init(f->buf, left < FILE_BLOCK ? (unsigned)left : FILE_BLOCK);
  f->at = pos;
  f->have = 0;
  f->reading = 1;
  if (uv_fs_read(f->w->loop, &f->req, f->fd, &b, 1, (int64_t)pos, on_read) !=
      0) {
    f->reading = 0;
    f->failed = 1;
  }
}

/* libmicrohttpd's content reader: bytes from `pos`, or none yet (the
 * connection suspended until the block is read). */
static ssize_t file_reader(void *cls, uint64_t pos, char *out, size_t max) {
  struct gk__ws_file *f = cls;
  if (f->failed) return MHD_CONTENT_READER_END_WITH_ERROR;
  if (!f->reading && pos >= f->at && pos < f->at + f->have) {
    size_t off = (size_t)(pos - f->at), n = f->have - off;
    if (n > max) n = max;
    memcpy(out, f->buf + off, n);
    if (off + n == f->have && f->at + f->have < f->size)
      file_read(f, f->at + f->have); /* the next block, meanwhile */
    return (ssize_t)n;
  }
  if (!f->reading) file_read(f, pos);
  if (f->failed) return MHD_CONTENT_READER_END_WITH_ERROR;
  f->suspended = 1;
  MHD_suspend_connection(f->mc);
  return 0;
}

static void file_done(void *cls) {
  struct gk__ws_file *f = cls;
  *f->prev = f->next;
  if (f->next) f->next->prev = f->prev;
  f->gone = 1;
  if (!f->reading) file_free(f);
}

void gk__ws_static_close(gk_net_ws *w) {
  for (struct gk__ws_file *f = w->files; f != NULL; f = f->next) {
    if (!f->suspended) continue;
    f->suspended = 0;
    f->failed = 1; /* resumed only to be closed */
    MHD_resume_connection(f->mc);
  }
}

/* An answer of the file's bytes, read off the loop; NULL if out of
 * memory (fd closed). */
static struct MHD_Response *
file_response(gk_net_ws *w, struct MHD_Connection *mc, int fd, uint64_t size) {
  struct gk__ws_file *f = malloc(sizeof *f);
  struct MHD_Response *r = f ? MHD_create_response_from_callback(
                                   size, FILE_BLOCK, file_reader, f, file_done)
                             : NULL;
  if (r == NULL) {
    free(f);
    close(fd);
    return NULL;
  }
  memset(f, 0, offsetof(struct gk__ws_file, buf));
  f->w = w;
  f->mc = mc;
  f->fd = fd;
  f->size = size;
  f->next = w->files;
  f->prev = &w->files;
  if (w->files) w->files->prev = &f->next;
  w->files = f;
  return r;
}

static enum MHD_Result send_file(gk_net_ws *w, struct MHD_Connection *mc,
                                 int fd, const struct stat *st,
                                 const char *name) {
  gk_net_ws_stats *s = &w->stats;
  char etag[64];
  snprintf(etag, sizeof etag, "\"%llx-%llx-%lx\"",
           (unsigned long long)st->st_size,
           (unsigned long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec);
  const char *inm =
      MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "If-None-Match");
  struct MHD_Response *r;
  unsigned status = MHD_HTTP_OK;
  if (inm != NULL && strcmp(inm, etag) == 0) {
    close(fd);
    status = MHD_HTTP_NOT_MODIFIED;
    s->http_304++;
    r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
  } else {
    s->http_ok++;
    r = file_response(w, mc, fd, (uint64_t)st->st_size);
  }
  if (r == NULL) return MHD_NO;
  common_headers(r);
  MHD_add_response_header(r, "ETag", etag);
  if (status == MHD_HTTP_OK)
    MHD_add_response_header(r, "Content-Type", gk__ws_mime(name));
  enum MHD_Result rc = MHD_queue_response(mc, status, r);
  MHD_destroy_response(r);
  return rc;
}

int gk__ws_has_body(struct MHD_Connection *mc) {
  const char *cl =
      MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Content-Length");
  return (cl != NULL && strcmp(cl, "0") != 0) ||
         MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
                                     "Transfer-Encoding") != NULL;
}

int gk__ws_static(gk_net_ws *w, struct MHD_Connection *mc, const char *url,
                  const char *method) {
  gk_net_ws_stats *s = &w->stats;
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
      strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
    return answer(mc, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n",
                  &s->http_method);
  if (strlen(url) > GK_NET_WS_URL_MAX)
    return answer(mc, MHD_HTTP_URI_TOO_LONG, "path too long\n", &s->http_long);
  unsigned bad = gk__ws_has_body(mc) ? MHD_HTTP_BAD_REQUEST : path_check(url);
  if (bad == MHD_HTTP_BAD_REQUEST)
    return answer(mc, bad, "bad request\n", &s->http_bad);
  char real[PATH_MAX];
  if (bad == 0) bad = resolve(w, url, real);
  int fd = bad == 0 ? open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
                    : -1;
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) != 0) {
    close(fd);
    fd = -1;
  }
  if (fd >= 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    if (url[strlen(url) - 1] != '/') return redirect(mc, url, &s->http_301);
    fd = -1;
  }
  if (fd >= 0 && !S_ISREG(st.st_mode)) {
    close(fd);
    fd = -1;
  }
  if (fd < 0)
    return answer(mc, MHD_HTTP_NOT_FOUND, "not found\n", &s->http_missing);
  if ((uint64_t)st.st_size > w->opts.static_max) {
    close(fd);
    return answer(mc, MHD_HTTP_FORBIDDEN, "file too large\n", &s->http_big);
  }
  return send_file(w, mc, fd, &st, real);
}

int gk__ws_static_init(gk_net_ws *w, const char *dir) {
  w->static_root = NULL;
  w->static_len = 0;
  if (dir == NULL || dir[0] == '\0') return 0;
  char *real = realpath(dir, NULL);
  struct stat st;
  if (real == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
    free(real);
    return GK_ENOTFOUND;
  }
  size_t n = strlen(real);
  if (n == 1) n = 0; /* "/": every path is under it, '/' included */
  if (n >= PATH_MAX - GK_NET_WS_URL_MAX - 16) {
    free(real);
    return GK_EINVAL;
  }
  real[n] = '\0';
  w->static_root = real;
  w->static_len = n;
  return 0;
}
