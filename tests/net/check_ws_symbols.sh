#!/bin/sh
# check_ws_symbols.sh LIB: fails if LIB (libgk_ws.a, the WebSocket
# listener) needs a symbol of the server, the rooms, the fleet, cJSON or
# hiredis: the listener is below the server, which reaches it only through
# the callbacks it hands over (gk_net_ws_callbacks, json_get included).
set -eu
lib=$1
up=$(nm --format=posix --undefined-only "$lib" |
  awk 'NF >= 2 && $1 !~ /:$/ {print $1}' |
  grep -E '^(sv_|gk_server|gk_room|gk_fleet|cJSON_|redis)' | sort -u |
  tr '\n' ' ' || true)
if [ -n "$up" ]; then
  echo "$(basename "$lib") needs symbols of the layers above it: $up"
  exit 1
fi
echo "ok: $(basename "$lib") needs nothing of the server, rooms, fleet or cJSON"
