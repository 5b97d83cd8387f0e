#!/bin/sh
# scripts/run.sh: the main command. Installs the Debian 12 packages that are
# missing, builds the project (once configured, only what changed), and
# starts gk-server with configs/server.json. Extra arguments go to gk-server
# (e.g. `sh scripts/run.sh --port 7000 --log-level debug`). Stop it with
# Ctrl-C (SIGINT): running matches end with a notice, their replays are
# finalised under replays/, and it exits 0.
# configs/server.json also opens the WebSocket listener on port 7779 and
# serves the tree's web/ there: the play page (web/index.html) is its /,
# printed before the server starts and in the "web" log line's url.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
# shellcheck disable=SC2086
gk_install $GK_PACKAGES $GK_PLAY_PACKAGES
gk_build build
# the play page's client (a build configured before emscripten was there
# has no gamekit-web target)
[ -f web/gamekit/dist/gamekit.wasm ] || sh web/gamekit/build.sh
port=$(sed -n 's/.*"websocket".*"port": *\([0-9]*\).*/\1/p' configs/server.json)
echo "gamekit: to play, open http://127.0.0.1:${port:-7779}/ in a browser"
exec build/src/server/gk-server --config configs/server.json "$@"
