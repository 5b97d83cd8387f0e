/* gk_server_link.c: the connection table's ids, connections by id, and
 * the backends' listeners (the interface is gk_server_link.h).
 *
 * The table s->conns has one entry per slot of s->ids; a connection id
 * names a slot and a generation, so an id kept by a room, a spectator or
 * a desync examination after its connection went finds nothing
 * (sv_conn_get returns NULL) even once the slot serves another link.
 */
#include <stdlib.h>
#include <string.h>

#include "gk_err.h"
#include "gk_server_internal.h"

#define SLOT_BITS 16u
#define SLOT_MASK 0xffffu

/* --- ids ------------------------------------------------------------------ */

int sv_ids_init(sv_ids *t, uint32_t cap) {
  memset(t, 0, sizeof(*t));
  if (cap == 0 || cap > SV_IDS_MAX) return GK_EINVAL;
  t->gen = calloc(cap, sizeof(*t->gen));
  t->used = calloc(cap, sizeof(*t->used));
  t->fifo = calloc(cap, sizeof(*t->fifo));
  if (!t->gen || !t->used || !t->fifo) {
    sv_ids_free(t);
    return GK_ENOMEM;
  }
  t->cap = cap;
  for (uint32_t i = 0; i < cap; i++) t->fifo[i] = i; /* slot 0 first */
  t->nfree = cap;
  return 0;
}

void sv_ids_free(sv_ids *t) {
  free(t->gen);
  free(t->used);
  free(t->fifo);
  memset(t, 0, sizeof(*t));
}

int sv_ids_take(sv_ids *t, uint32_t *id) {
  if (t->nfree == 0) return GK_EFULL;
  uint32_t slot = t->fifo[t->head];
  t->head = (t->head + 1u) % t->cap;
  t->nfree--;
  uint16_t g = (uint16_t)(t->gen[slot] + 1u);
  t->gen[slot] = g != 0 ? g : 1u; /* 65535 wraps to 1: id 0 is never given */
  t->used[slot] = 1;
  *id = (uint32_t)t->gen[slot] << SLOT_BITS | slot;
  return 0;
}

uint32_t sv_ids_find(const sv_ids *t, uint32_t id) {
  uint32_t slot = id & SLOT_MASK;
  if (slot >= t->cap || !t->used[slot] || t->gen[slot] != id >> SLOT_BITS)
    return SV_IDS_MAX;
  return slot;
}

void sv_ids_give(sv_ids *t, uint32_t id) {
  uint32_t slot = sv_ids_find(t, id);
  if (slot == SV_IDS_MAX) return;
  t->used[slot] = 0;
  t->fifo[(t->head + t->nfree) % t->cap] = slot; /* at the back */
  t->nfree++;
}

/* --- connections by id ---------------------------------------------------- */

int sv_conns_init(gk_server *s) {
  s->conns = calloc(s->cfg->max_peers, sizeof(*s->conns));
  if (!s->conns) return GK_ENOMEM;
  int rc = sv_ids_init(&s->ids, s->cfg->max_peers);
  if (rc) {
    free(s->conns);
    s->conns = NULL;
  }
  return rc;
}

void sv_conns_free(gk_server *s) {
  free(s->conns);
  s->conns = NULL;
  sv_ids_free(&s->ids);
}

sv_conn *sv_conn_get(const gk_server *s, uint32_t id) {
  if (s->conns == NULL) return NULL;
  uint32_t slot = sv_ids_find(&s->ids, id);
  return slot != SV_IDS_MAX ? &s->conns[slot] : NULL;
}

void sv_conn_close(gk_server *s, uint32_t id, int at_once) {
  sv_conn *c = sv_conn_get(s, id);
  if (c) sv_link_close(c->link, at_once);
}

int sv_send_bytes(gk_server *s, uint32_t id, const uint8_t *bytes, size_t len,
                  int reliable) {
  sv_conn *c = sv_conn_get(s, id);
  if (!c) return GK_ENOTFOUND;
  return sv_link_send(c->link, bytes, len, reliable);
}

uint32_t sv_conn_rtt(const gk_server *s, uint32_t id) {
  const sv_conn *c = sv_conn_get(s, id);
  return c ? sv_link_rtt(c->link) : 0;
}

uint32_t sv_conn_rtt_var(const gk_server *s, uint32_t id) {
  const sv_conn *c = sv_conn_get(s, id);
  return c ? sv_link_rtt_var(c->link) : 0;
}

const char *sv_conn_kind(const gk_server *s, uint32_t id) {
  const sv_conn *c = sv_conn_get(s, id);
  return c ? sv_link_kind(c->link) : NULL;
}

/* --- the backends' listeners ---------------------------------------------- */

int sv_link_host_add(gk_server *s, sv_link_host *h) {
  if (s->nhosts >= SV_LINK_HOSTS_MAX) return GK_EFULL;
  h->srv = s;
  h->open = 1;
  s->hosts[s->nhosts++] = h;
  s->hosts_open++;
  return 0;
}

void sv_link_host_closed(sv_link_host *h) {
  gk_server *s = h->srv;
  if (!h->open) return;
  h->open = 0;
  s->hosts_open--;
  sv_maybe_free(s);
}

void sv_links_close(gk_server *s) {
  for (uint32_t i = 0; i < s->nhosts; i++) {
    sv_link_host *h = s->hosts[i];
    h->links = 0; /* the server has forgotten them */
    if (h->open) h->ops->close(h);
  }
}

void sv_links_free(gk_server *s) {
  for (uint32_t i = 0; i < s->nhosts; i++) s->hosts[i]->ops->free(s->hosts[i]);
  s->nhosts = 0;
}

void sv_links_totals(const gk_server *s, sv_link_host_stats *out) {
  memset(out, 0, sizeof(*out));
  for (uint32_t i = 0; i < s->nhosts; i++) {
    sv_link_host_stats one;
    s->hosts[i]->ops->stats(s->hosts[i], &one);
    out->packets_in += one.packets_in;
    out->bytes_in += one.bytes_in;
    out->packets_out += one.packets_out;
    out->bytes_out += one.bytes_out;
    out->drop_oversize += one.drop_oversize;
    out->drains += one.drains;
    out->drain_ns += one.drain_ns;
    out->send_calls += one.send_calls;
    out->read_calls += one.read_calls;
    if (one.drain_ns_max > out->drain_ns_max)
      out->drain_ns_max = one.drain_ns_max;
  }
}
