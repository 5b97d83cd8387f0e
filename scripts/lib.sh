# scripts/lib.sh: shared by scripts/run.sh and scripts/test.sh (sourced).
# Debian 12 only: what the project needs comes from Debian's packages.

GK_PACKAGES="meson ninja-build pkg-config gcc libc6-dev binutils python3
  libuv1-dev libenet-dev libcjson-dev libcriterion-dev libxxhash-dev libsodium-dev
  libmicrohttpd-dev libcurl4-openssl-dev python3-prometheus-client chromium"

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

# gk_build DIR [MESON_OPTION...]: configures DIR once, then builds it.
gk_build() {
  dir=$1
  shift
  [ -f "$dir/build.ninja" ] || meson setup "$dir" "$@"
  meson compile -C "$dir"
}
