# gk-server image: multi-stage on debian:bookworm-slim.
#   build:   the same commands as the README (scripts/lib.sh's package list,
#            meson setup + compile), then the tests (not suite netns:
#            unshare -n needs a privilege a build does not have)
#   runtime: only the runtime libraries, a non-root user, tini as PID 1
# Build and run:
#   docker build -t gk-server .
#   docker run --rm -p 7777:7777/udp gk-server
# or with Debian's podman where builds may not make namespaces:
#   podman build --isolation=chroot --network=host -t gk-server .
#   podman --runtime runc --cgroup-manager=cgroupfs run --rm --network=host gk-server
# (a sandbox that refuses setrlimit also needs `default_ulimits = []` under
# [containers] in a CONTAINERS_CONF file). The build runs every test suite
# but netns; those needing Chromium or node 20 skip (Debian 12 has 18).
FROM debian:bookworm-slim AS build
WORKDIR /src
COPY scripts/lib.sh scripts/lib.sh
RUN . scripts/lib.sh && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends $GK_PACKAGES $GK_TEST_PACKAGES \
 && rm -rf /var/lib/apt/lists/*
COPY . .
RUN . scripts/lib.sh && gk_build build --buildtype=release \
 && meson test -C build --print-errorlogs --no-suite netns

FROM debian:bookworm-slim AS runtime
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends libuv1 libenet7 libcjson1 libsodium23 \
      libmicrohttpd12 libcurl4 libwslay1 libnettle8 libhiredis0.14 tini \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /srv/gk --shell /usr/sbin/nologin gk
COPY --from=build /src/build/src/server/gk-server /usr/local/bin/gk-server
COPY --from=build /src/build/tools/bot/gk-bot /usr/local/bin/gk-bot
COPY --from=build /src/build/tools/replay/gk-replay /usr/local/bin/gk-replay
COPY --from=build /src/build/tools/token/gk-token /usr/local/bin/gk-token
COPY configs/ /srv/gk/configs/
# the browser pages, websocket.static_dir "web" in configs/server.json
COPY web/ /srv/gk/web/
# and the browser client's gamekit.wasm, built in the build stage
# (emscripten is among the test packages; web/gamekit/dist is not in git)
COPY --from=build /src/web/gamekit/dist/ /srv/gk/web/gamekit/dist/
RUN mkdir -p /srv/gk/replays && chown -R gk:gk /srv/gk
USER gk
WORKDIR /srv/gk
VOLUME ["/srv/gk/replays"]
EXPOSE 7777/udp
# the admin listener (configs/server.json: loopback only unless a token
# file is configured; see configs/README.md)
EXPOSE 7778/tcp
# the WebSocket listener for browser players and their pages
# (websocket.port; configs/server.json enables it, with static_dir "web":
# see configs/README.md; put TLS in front as deploy/nginx/ shows)
EXPOSE 7779/tcp
# The config is re-checked, so a mounted config that went bad turns the
# container unhealthy (the process itself is PID 1's only child: if it
# exits, tini exits and the container stops).
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 \
  CMD ["gk-server", "--check-config", "--config", "configs/server.json"]
# tini forwards SIGTERM to gk-server, which ends matches, finalises the
# replays and exits 0 within shutdown_grace_ms (keep docker stop -t above it)
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["gk-server", "--config", "configs/server.json"]
