/* gk_net_lobby.c: a room's setup as its players see it (see
 * gk_net_lobby.h). */
#include "gk_net_lobby.h"

#include <string.h>

#include "gk_err.h"

int gk_net_lobby_init(gk_net_lobby *l, const gk_net_lobby_room *room) {
  if (l == NULL || room == NULL || room->genre == NULL) return GK_EINVAL;
  size_t glen = strlen(room->genre);
  if (glen == 0 || glen > GK_WIRE_GENRE_MAX || room->players < 1 ||
      room->players > GK_PLAYERS_MAX || room->starters > room->players ||
      room->input_delay > 255 ||
      (room->config != NULL && strlen(room->config) > GK_WIRE_CONFIG_MAX))
    return GK_EINVAL;
  memset(l, 0, sizeof *l);
  l->room = *room;
  if (l->room.starters == 0) l->room.starters = room->players;
  return 0;
}

int gk_net_lobby_init_join(gk_net_lobby *l, const char *code,
                           uint32_t players) {
  if (l == NULL || code == NULL || !gk_wire_code_valid(code) || players < 1 ||
      players > GK_PLAYERS_MAX)
    return GK_EINVAL;
  memset(l, 0, sizeof *l);
  l->room.players = l->room.starters = players;
  memcpy(l->code, code, GK_WIRE_CODE_LEN);
  l->created = l->joining = 1;
  return 0;
}

int gk_net_lobby_request(const gk_net_lobby *l, uint32_t index,
                         gk_wire_msg *m) {
  memset(m, 0, sizeof *m);
  if (index == 0 && !l->joining) {
    m->type = GK_MSG_CREATE_ROOM;
    gk_wire_create_room *c = &m->u.create_room;
    c->max_players = (uint8_t)l->room.players;
    c->input_delay = (uint8_t)l->room.input_delay;
    memcpy(c->genre, l->room.genre, strlen(l->room.genre));
    if (l->room.config != NULL)
      memcpy(c->config, l->room.config, strlen(l->room.config));
    return 0;
  }
  if (!l->created) return GK_ESTATE;
  m->type = GK_MSG_JOIN_ROOM;
  memcpy(m->u.room.code, l->code, sizeof m->u.room.code);
  m->u.room.role = GK_WIRE_ROLE_PLAYER;
  return 0;
}

int gk_net_lobby_is_in(const gk_net_lobby *l, uint32_t index) {
  return index < l->room.players && (l->in >> index & 1u);
}

gk_net_lobby_event gk_net_lobby_on_msg(gk_net_lobby *l, uint32_t index,
                                       const gk_wire_msg *m) {
  switch (m->type) {
  case GK_MSG_ROOM_CREATED:
    if (index != 0 || l->created || l->joining) return GK_NET_LOBBY_NONE;
    memcpy(l->code, m->u.room.code, sizeof l->code);
    l->created = 1;
    l->in |= 1u;
    return GK_NET_LOBBY_CREATED;
  case GK_MSG_JOINED:
    if (index < l->room.players) l->in |= 1u << index;
    return GK_NET_LOBBY_JOINED;
  case GK_MSG_ERROR:
    return GK_NET_LOBBY_ERROR;
  case GK_MSG_SHUTDOWN:
    return GK_NET_LOBBY_SHUTDOWN;
  default:
    return GK_NET_LOBBY_NONE;
  }
}

int gk_net_lobby_start(gk_net_lobby *l, gk_wire_msg *m) {
  uint32_t all = gk_all_players(l->room.starters);
  if (!l->created || l->joining || l->start_sent || (l->in & all) != all)
    return 0;
  memset(m, 0, sizeof *m);
  m->type = GK_MSG_START_MATCH;
  l->start_sent = 1;
  return 1;
}

const char *gk_net_lobby_error_text(const gk_wire_error *e) {
  return e->text[0] != '\0' ? e->text : gk_strerror(e->code);
}
