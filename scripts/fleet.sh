#!/bin/sh
# scripts/fleet.sh N: a local fleet for trying it: one redis-server on a
# unix socket and N gk-server nodes (1..16) sharing its room directory
# (the `fleet` config section, src/fleet/README.md). Node i listens for
# ENet on 127.0.0.1:(7700+i), WebSocket (and the play page) on 7800+i,
# admin on 7900+i; its config, log and replays are in fleet-run/node-i/.
# A room made on one node is joined at any other: that node answers
# REDIRECT and the client goes to the room's node, e.g.
#   build/tools/bot/gk-bot --server 127.0.0.1:7702 --genre survivors \
#     --join CODE --players 1
# for a CODE made at 127.0.0.1:7701. Ctrl-C (or SIGTERM) stops them all.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
n=${1:-2}
case $n in '' | *[!0-9]*) echo "usage: sh scripts/fleet.sh N (1..16)" >&2; exit 2 ;; esac
[ "$n" -ge 1 ] && [ "$n" -le 16 ] || { echo "fleet.sh: N must be 1..16" >&2; exit 2; }
# shellcheck disable=SC2086
gk_install $GK_PACKAGES redis-server
gk_build build
run=$(pwd)/fleet-run
mkdir -p "$run"
sock=$run/redis.sock
pids=""
stop() {
  trap - INT TERM EXIT
  for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
  wait
}
trap stop INT TERM EXIT
redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no \
  --dir "$run" > "$run/redis.log" 2>&1 &
pids="$!"
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -S "$sock" ] || { echo "fleet.sh: redis-server did not start ($run/redis.log)" >&2; exit 1; }
i=1
while [ "$i" -le "$n" ]; do
  d=$run/node-$i
  mkdir -p "$d"
  cat > "$d/server.json" <<JSON
{"listen": {"host": "127.0.0.1", "port": $((7700 + i))},
 "replays": {"dir": "$d/replays"},
 "websocket": {"enabled": true, "host": "127.0.0.1", "port": $((7800 + i)),
               "static_dir": "web"},
 "admin": {"enabled": true, "listen": "127.0.0.1:$((7900 + i))"},
 "fleet": {"enabled": true, "redis": "unix:$sock", "node": "node-$i",
           "enet": "127.0.0.1:$((7700 + i))",
           "ws_url": "ws://127.0.0.1:$((7800 + i))/play"}}
JSON
  build/src/server/gk-server --config "$d/server.json" > "$d/server.log" 2>&1 &
  pids="$pids $!"
  echo "node-$i: ENet 127.0.0.1:$((7700 + i)), page http://127.0.0.1:$((7800 + i))/, admin http://127.0.0.1:$((7900 + i))/ (log $d/server.log)"
  i=$((i + 1))
done
echo "fleet.sh: $n nodes on $sock; Ctrl-C stops them"
wait
