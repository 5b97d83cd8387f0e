#!/bin/sh
# scripts/run.sh: the main command. Installs the Debian 12 packages that are
# missing, builds the project (once configured, only what changed), and
# starts gk-server with configs/server.json. Extra arguments go to gk-server
# (e.g. `sh scripts/run.sh --port 7000 --log-level debug`). Stop it with
# Ctrl-C (SIGINT): running matches end with a notice, their replays are
# finalised under replays/, and it exits 0.
# configs/server.json also opens the WebSocket listener on port 7779 and
# serves the tree's web/ there: the "web" log line gives the URL to open
# in a browser (http://127.0.0.1:7779/), e.g. .../test/protocol.html.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
# shellcheck disable=SC2086
gk_install $GK_PACKAGES
gk_build build
exec build/src/server/gk-server --config configs/server.json "$@"
