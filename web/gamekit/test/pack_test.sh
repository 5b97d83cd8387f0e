#!/bin/sh
# web/gamekit/test/pack_test.sh: `npm pack` of web/gamekit works offline
# and gives a tarball a game can depend on: a fresh project installs it
# (npm install --offline, from the file), imports @gamekit/client, loads
# gamekit.wasm through it and creates a peer. dist/ must be built (the
# gamekit-web target); the pack skips its prepack build for that reason.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here" && npm pack --offline --ignore-scripts --pack-destination "$tmp" \
  > "$tmp/pack.log" 2>&1) || { cat "$tmp/pack.log"; exit 1; }
tgz=$(ls "$tmp"/gamekit-client-*.tgz)
for f in package/gamekit.js package/gamekit.d.ts package/constants.js package/dist/gamekit.mjs \
    package/dist/gamekit.wasm package/README.md; do
  tar -tzf "$tgz" | grep -qx "$f" || { echo "tarball lacks $f"; exit 1; }
done
mkdir "$tmp/game"
cd "$tmp/game"
printf '{"name":"game","version":"1.0.0","type":"module",%s}\n' \
  "\"dependencies\":{\"@gamekit/client\":\"file:$tgz\"}" > package.json
npm install --offline --no-audit --no-fund > install.log 2>&1 \
  || { cat install.log; exit 1; }
cat > game.mjs <<'JS'
import { load, BUTTONS } from "@gamekit/client";
const m = await load();
const w = m._gk_webx_new(1, 7, 0);
if (!w || Object.keys(BUTTONS).length !== 10) process.exit(1);
m._gk_webx_free(w);
console.log("ok: the installed package loads gamekit.wasm and makes a peer");
JS
node game.mjs
