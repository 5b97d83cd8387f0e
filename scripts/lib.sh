# scripts/lib.sh: shared by scripts/run.sh and scripts/test.sh (sourced).
# Debian 12 only: what the project needs comes from Debian's packages.

# What building and running needs (scripts/run.sh, the Dockerfile).
GK_PACKAGES="meson ninja-build pkg-config gcc libc6-dev binutils python3
  libuv1-dev libenet-dev libcjson-dev libcriterion-dev libxxhash-dev libsodium-dev
  libmicrohttpd-dev libcurl4-openssl-dev libwslay-dev nettle-dev
  libhiredis-dev"
# What the play page (web/index.html) needs on top: the browser client's
# gamekit.wasm is built with Debian's emscripten (scripts/run.sh).
GK_PLAY_PACKAGES="emscripten"
# What the tests need on top (scripts/test.sh; the Dockerfile's build stage
# takes GK_TEST_PACKAGES and leaves the browser out: the browser tests,
# tests/web and the admin page's, then skip, saying so).
# emscripten (which brings nodejs) builds and runs the browser client's
# tests (web/gamekit, suite web); node 20's WebSocket is needed for the
# game tests (an older node skips them), npm for the pack test (nodesource
# ships it with node; Debian's own is the npm package). nftables, iproute2
# and util-linux (unshare) put TCP loss in a network namespace
# (tests/server/netns_loss.py; that test fails without them).
# redis-server is the fleet tests' room directory (tests/fleet: each test
# starts its own on a temp unix socket).
GK_TEST_PACKAGES="python3-prometheus-client python3-websockets emscripten
  nftables iproute2 util-linux redis-server"
# The browser suite (tests/web): Debian's chromium, driven headless; nginx
# and openssl for its wss:// test (deploy/nginx/gamekit.conf in front of
# gk-server, a throwaway certificate). Installing nginx starts no service
# where policy-rc.d forbids it (containers); the test runs its own.
GK_BROWSER_PACKAGES="chromium nginx openssl"
# scripts/test.sh's clang leg (the whole project, -Werror, at -O0) and
# its clang-tidy (scripts/lint.sh --tidy, which installs clang-format
# too: installed here, so nothing installs in the background);
# scripts/fuzz.sh adds the sanitizer runtimes (libclang-rt-14-dev).
GK_CLANG_PACKAGES="clang clang-tidy clang-format"

# gk_install PKG...: installs the packages that are not installed yet.
gk_install() {
  missing=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" \
      || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "installing:$missing"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends $missing
}

# gk_npm_ci DIR: installs the npm test packages DIR's package-lock.json
# pins (web/gamekit/test/types: typescript) into DIR/node_modules, when
# missing or older than the lockfile. npm comes with nodesource's node;
# Debian's is the npm package, installed if no npm is found.
gk_npm_ci() {
  command -v npm >/dev/null 2>&1 || gk_install npm
  [ -f "$1/node_modules/.package-lock.json" ] &&
    [ ! "$1/package-lock.json" -nt "$1/node_modules/.package-lock.json" ] &&
    return 0
  npm ci --prefix "$1" --no-audit --no-fund --loglevel=error
}

# gk_build DIR [MESON_OPTION...]: configures DIR once, then builds it.
gk_build() {
  gk_setup "$@"
  meson compile -C "$1"
}

# gk_setup DIR [MESON_OPTION...]: configures DIR once (a later call keeps
# its options); `meson test -C DIR` then builds only what its tests need.
gk_setup() {
  dir=$1
  shift
  [ -f "$dir/build.ninja" ] || meson setup "$dir" "$@"
}

# gk_batches FUNC ITEM...: runs `FUNC ITEM` for every ITEM in the
# background, as many at once as the machine has cores, a batch at a time
# (each batch waited for whole: the callers' items take about as long as
# each other). FUNC reports through files, not its exit status.
gk_batches() {
  f=$1
  shift
  n=$(nproc)
  while [ $# -gt 0 ]; do
    i=0
    while [ $# -gt 0 ] && [ "$i" -lt "$n" ]; do
      "$f" "$1" &
      shift
      i=$((i + 1))
    done
    wait
  done
}
