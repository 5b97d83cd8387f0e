#!/bin/sh
# check_room_symbols.sh LIB: fails if LIB (libgk_room.a) names an I/O
# library's symbol: libuv (uv_), ENet (enet_), libmicrohttpd (MHD_),
# libcurl (curl_) or wslay (wslay_). A room is sans-I/O: time and bytes
# are its arguments, and everything else goes through its environment
# (gk_room_env).
set -eu
lib=$1
io=$(nm --format=posix "$lib" | awk 'NF >= 2 && $1 !~ /:$/ {print $1}' |
  grep -E '^(uv_|enet_|MHD_|curl_|wslay_)' | sort -u || true)
if [ -n "$io" ]; then
  echo "$(basename "$lib") names I/O symbols: $io"
  exit 1
fi
echo "$(basename "$lib"): no uv_, enet_, MHD_, curl_ or wslay_ symbol"
