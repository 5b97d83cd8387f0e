#!/bin/sh
# web/gamekit/build.sh [BUILDDIR [STAMP]]: builds gamekit.wasm and its loader with
# Debian's emscripten (offline: the package's prebuilt sysroot) into
# BUILDDIR (default build-web), copies them to web/gamekit/dist/ and prints
# the .wasm's size in bytes. Fails if it is over GK_WASM_MAX (200 KiB).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$root/build-web}
max=${GK_WASM_MAX:-204800}
# nodesource's node does not see Debian's acorn, which emcc -Os needs.
NODE_PATH=${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs
export NODE_PATH
if [ ! -f "$dir/build.ninja" ]; then
  # xxHash is header-only here; emcc does not search /usr/include.
  # -msimd128 -msse2: the genres' SSE2 integer paths (survivors' candidate
  # test) compile to wasm SIMD, exact like the scalar path (the determinism
  # matrix's wasm32-simd-Os variant); every browser since 2021 has it.
  mkdir -p "$dir.xxinc"
  cp /usr/include/xxhash.h "$dir.xxinc/"
  meson setup "$dir" "$root" --cross-file "$root/web/gamekit/wasm32-web.ini" \
    -Dweb=true -Dbuildtype=release -Dc_args="-I$dir.xxinc -msimd128 -msse2" \
    > "$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; exit 1; }
fi
ninja -C "$dir" -j"${GK_JOBS:-2}" web/gamekit/gamekit.mjs > "$dir.build.log" \
  2>&1 || { cat "$dir.build.log"; exit 1; }
mkdir -p "$root/web/gamekit/dist"
cp "$dir/web/gamekit/gamekit.mjs" "$dir/web/gamekit/gamekit.wasm" \
  "$root/web/gamekit/dist/"
size=$(wc -c < "$root/web/gamekit/dist/gamekit.wasm")
echo "gamekit.wasm: $size bytes"
# a native build's custom target (web/gamekit/test) names a stamp file
[ -z "${2:-}" ] || echo "$size" > "$2"
if [ "$size" -gt "$max" ]; then
  echo "gamekit.wasm is over $max bytes" >&2
  exit 1
fi
